use roce_model::{BuiltinsOnly, Source, builtin, load};
use roce_render::apply::{ApplyOptions, apply};

#[test]
fn scratch() {
    let p = load(builtin::source("coreweave/gb300-roce").unwrap(), &BuiltinsOnly).profile.unwrap();
    let plan = roce_render::plan::lower(&p);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../roce-inspect/tests/fixtures/manifests/kinds");
    for f in ["pod.yaml", "mpijob.yaml", "daemonset.yaml", "deployment.yaml"] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        let opts = ApplyOptions { container: if f == "deployment.yaml" { Some("server".into()) } else { None }, ..Default::default() };
        match apply(&Source::new(f, text), &plan, &opts) {
            Ok(a) => { std::fs::write(format!("/tmp/x/{f}"), &a.text).unwrap(); eprintln!("{f}: {:?}", a.notes) }
            Err(e) => eprintln!("{f}: {e:?}"),
        }
    }
}
