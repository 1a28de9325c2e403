//! SELL-C-sigma and ELL (stub, being written).
