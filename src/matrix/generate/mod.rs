//! Generators (stub, being written).
