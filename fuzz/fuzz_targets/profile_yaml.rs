//! YAML profile: load + validate, and when it loads, lower and render every target.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roce_model::{BuiltinsOnly, Format, Source, load};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let loaded = load(
        Source::with_format("fuzz.yaml", text, Format::Yaml),
        &BuiltinsOnly,
    );
    if let Some(profile) = loaded.profile {
        let plan = roce_render::plan::lower(&profile);
        for &target in roce_render::Target::ALL {
            let _ = roce_render::render(&plan, target, &roce_render::RenderOptions::default());
        }
    }
});
