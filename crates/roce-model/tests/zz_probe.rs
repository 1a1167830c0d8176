#[derive(Debug)]
struct V;
impl<'de> serde::Deserialize<'de> for V { fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<V, D::Error> { d.deserialize_ignored_any(serde::de::IgnoredAny)?; Ok(V) } }
fn p(t: &str) {
    let mut o = serde_saphyr::Options::default();
    o.with_snippet = false;
    if let Some(b) = o.budget.as_mut() { b.max_depth = 32; }
    let r: Result<V, _> = serde_saphyr::from_str_with_options(t, o);
    if let Err(e) = r {
        let l = e.location();
        println!("{:?} | {:?}", e.to_string(), l.map(|l| (l.line(), l.column(), l.span().byte_offset(), l.span().byte_len())));
        println!("   {:?}", e);
    }
}
#[test]
fn probe() {
    p("name: t/x\nnccl: {ib-hca: [ibp\n");
    p("name: t/x\nnccl:\n  ib-hca: \"ibp\n");
    p("name: t/x\nnccl:\n  ib-hca: ibp\n   foo: bar\n");
    p("\u{0}\u{1}abc: [");
    p(&format!("a: {}", "[".repeat(40)));
}
