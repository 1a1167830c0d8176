//! roce-webhook's integration tests: one binary, one module per topic file (`cargo test -p roce-webhook
//! --test tests -- server::` runs one topic). One binary links once where one per file linked three times
//! (docs/decisions.md, "(onebin)").

mod accept_backoff;
mod deploy;
mod server;

/// Helpers of several topics.
mod support;
