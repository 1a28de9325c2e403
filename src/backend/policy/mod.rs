//! The backends' policies, together: which device format a matrix gets ([`format_choice`]),
//! which CSR kernel and row blocks ([`row_blocks`]), how long rows are split ([`long_rows`]), and
//! every tuned knob with its measured default ([`tuning`]). The kernels do what these decide;
//! each rule cites the measurement behind it.

pub mod format_choice;
pub mod long_rows;
pub mod row_blocks;
pub mod tuning;
