//! Host-side sparse formats and I/O: COO, CSR, SELL-C-sigma / ELL, BSR, Matrix Market, generators,
//! reorderings.

pub mod bsr;
pub mod coo;
pub mod csr;
mod csr_check;
pub mod csr_view;
mod fingerprint;
pub mod generate;
pub mod matrix_market;
pub mod reorder;
pub mod sell;
pub mod spgemm;

pub use bsr::BsrMatrix;
pub use coo::CooMatrix;
pub use csr::CsrMatrix;
pub use csr_view::CsrView;
pub use sell::SellMatrix;
