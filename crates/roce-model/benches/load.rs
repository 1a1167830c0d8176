//! Load + validate: parse, follow `extends`, walk, run every rule.

use roce_model::{BuiltinsOnly, Source, builtin, load};

fn main() {
    divan::main();
}

/// Every built-in profile, from its embedded KDL (frozen at build time: nothing parsed).
#[divan::bench(args = ["coreweave/gb300-roce", "coreweave/gb300-roce-nixl", "coreweave/h100-ib"])]
fn load_builtin_kdl(name: &str) -> bool {
    let source = builtin::source(divan::black_box(name)).unwrap();
    load(source, &BuiltinsOnly).has_errors()
}

/// The default profile written as YAML: a YAML file of its size, parsed.
#[divan::bench]
fn load_yaml(bencher: divan::Bencher) {
    let text = builtin::yaml("coreweave/gb300-roce").unwrap();
    let text = text.as_str();
    bencher.bench(|| {
        load(
            Source::new("gb300-roce.yaml", divan::black_box(text)),
            &BuiltinsOnly,
        )
        .has_errors()
    });
}

/// A profile with errors: the cost of collecting and resolving diagnostics.
#[divan::bench]
fn load_with_problems(bencher: divan::Bencher) {
    let text = "profile \"t/x\" extends=\"coreweave/gb300-roce\" {\n nccl ib-hca=\"mlx9\" debug=\"INFO\"\n fabirc roce\n}\n";
    bencher.bench(|| {
        load(Source::new("x.kdl", divan::black_box(text)), &BuiltinsOnly)
            .problems
            .len()
    });
}
