//! BSR (stub, being written).
