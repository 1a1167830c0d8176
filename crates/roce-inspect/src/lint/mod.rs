//! `roce lint` (not implemented yet).
