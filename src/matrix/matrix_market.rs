//! Matrix Market (stub, being written).
