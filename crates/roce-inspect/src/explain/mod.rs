//! `roce explain` (not implemented yet).
