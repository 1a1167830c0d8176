//! The webhook's AdmissionReview reader: a request body through `review` (JSON, the object, `apply_object`
//! and the JSONPatch), as the server hands it every POST.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use roce_webhook::OnError;
use roce_webhook::profiles::Profiles;

fn profiles() -> &'static Profiles {
    static PROFILES: OnceLock<Profiles> = OnceLock::new();
    PROFILES.get_or_init(|| Profiles::new(None))
}

fuzz_target!(|data: &[u8]| {
    let _ = roce_webhook::admission::review(data, profiles(), OnError::Deny);
    let _ = roce_webhook::admission::review(data, profiles(), OnError::Allow);
});
