//! `roce doctor` (not implemented yet).
