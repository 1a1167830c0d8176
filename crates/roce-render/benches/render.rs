//! Lowering and every emitter, on the default GB300 RoCE profile.

use roce_model::{BuiltinsOnly, builtin, load};
use roce_render::{RenderOptions, Target, plan, render};

fn main() {
    divan::main();
}

fn profile() -> roce_model::Profile {
    load(
        builtin::source("coreweave/gb300-roce").unwrap(),
        &BuiltinsOnly,
    )
    .profile
    .unwrap()
}

#[divan::bench]
fn lower(bencher: divan::Bencher) {
    let p = profile();
    bencher.bench(|| plan::lower(divan::black_box(&p)));
}

#[divan::bench(args = Target::ALL)]
fn emit(bencher: divan::Bencher, target: &Target) {
    let plan = plan::lower(&profile());
    let opts = RenderOptions::default();
    bencher.bench(|| render(divan::black_box(&plan), *target, &opts).map(|a| a.len()));
}
