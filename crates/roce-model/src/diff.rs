//! Compare two profiles in fabric terms (`roce diff`) (not implemented yet).
