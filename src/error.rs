//! The one error type of the crate.
//!
//! Every fallible operation returns [`Result<T>`]; library code never panics on bad input
//! (see `RELIABILITY.md`). Each variant names what went wrong and where, so a message is
//! actionable without a backtrace.

use thiserror::Error;

/// Convenient alias used throughout the crate. The error type defaults to [`Error`](enum@Error) but can be
/// named, so `Result<(), Box<dyn std::error::Error>>` still works where this alias is imported.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in pipekrylov.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// Two objects that must have matching sizes do not (A not square, b of the wrong length, ...).
    #[error("dimension mismatch: {what}: expected {expected}, got {got}")]
    DimensionMismatch {
        /// What was compared, e.g. "right-hand side length vs matrix rows".
        what: String,
        /// The size required.
        expected: usize,
        /// The size found.
        got: usize,
    },
    /// A NaN or infinite value in the input.
    #[error("non-finite value in {what} at index {index}")]
    NonFinite {
        /// Which input ("matrix", "right-hand side", "initial guess").
        what: String,
        /// Index of the first offending entry (value index for matrices).
        index: usize,
    },
    /// A parameter outside its valid range.
    #[error("invalid parameter {name}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: String,
        /// Why it is invalid.
        reason: String,
    },
    /// A sparse matrix is structurally invalid (index out of range, bad row pointer, ...).
    #[error("invalid matrix: {0}")]
    InvalidMatrix(String),
    /// The matrix does not fit the 32-bit indices used on devices.
    #[error("matrix too large for 32-bit device indices: {what} = {value} > {max}")]
    IndexOverflow {
        /// Which quantity overflowed.
        what: String,
        /// Its value.
        value: usize,
        /// The largest allowed value.
        max: usize,
    },
    /// Matrix Market parse error, with the 1-based line number.
    #[error("Matrix Market line {line}: {message}")]
    MatrixMarket {
        /// 1-based line number in the file (0 when the file is empty).
        line: usize,
        /// What was wrong and what was expected.
        message: String,
    },
    /// I/O error (file not found, permission, ...).
    #[error("I/O error on {path}: {message}")]
    Io {
        /// Path involved.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// A backend cannot be used on this machine (library, device or capability missing).
    #[error("backend {backend} unavailable: {reason}")]
    BackendUnavailable {
        /// Backend name ("cuda", "opencl", ...).
        backend: String,
        /// What is missing.
        reason: String,
    },
    /// A buffer belongs to another backend than the one asked to use it.
    #[error("buffer belongs to backend {found}, used with backend {expected}")]
    WrongBackend {
        /// The backend asked to operate.
        expected: String,
        /// The backend that owns the buffer.
        found: String,
    },
    /// Device memory exhausted or an allocation above the device limit.
    #[error("out of memory on {device}: {bytes} bytes requested ({detail})")]
    OutOfMemory {
        /// Device name.
        device: String,
        /// Bytes requested.
        bytes: usize,
        /// Driver message or the limit that was exceeded.
        detail: String,
    },
    /// A kernel failed to compile; the compiler log is included.
    #[error("kernel build failed on {backend}:\n{log}")]
    KernelBuild {
        /// Backend name.
        backend: String,
        /// The compiler's log.
        log: String,
    },
    /// A driver call failed.
    #[error("{backend} driver error in {call}: {message}")]
    Driver {
        /// Backend name.
        backend: String,
        /// The failing call.
        call: String,
        /// The driver's message.
        message: String,
    },
    /// A sticky device fault; the backend object must not be used again.
    #[error("fatal device fault on {backend}: {message}")]
    DeviceFault {
        /// Backend name.
        backend: String,
        /// The driver's message.
        message: String,
    },
    /// The operation is not supported by this backend or format.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A zero, tiny or non-finite pivot (block) met while building a preconditioner: ILU(0)
    /// and BILU(0) pivots, inverted diagonal blocks of block-Jacobi (RELIABILITY.md row 14).
    /// Nothing was changed; the solver and the matrix stay usable.
    #[error(
        "preconditioner setup failed: {preconditioner}: singular pivot in block row {block_row} \
         ({detail})"
    )]
    SingularPivot {
        /// Which preconditioner ("bilu0", "point-block-jacobi", ...).
        preconditioner: String,
        /// The block row (the scalar row when the block size is 1).
        block_row: usize,
        /// What was found (missing diagonal block, the pivot value, NaN).
        detail: String,
    },
    /// A preconditioner was built for a different matrix than the one it is used with.
    #[error("preconditioner mismatch: {0}")]
    PreconditionerMismatch(String),
    /// The preconditioner does not apply to this matrix (Incomplete Poisson on a matrix that is
    /// not symmetric with a positive diagonal and nonpositive off-diagonals, a matrix-free
    /// preconditioner without a stencil, ...). Nothing was built.
    #[error("preconditioner {preconditioner} does not apply: {reason}")]
    NotApplicable {
        /// Which preconditioner ("ip", "ip-matrix-free", ...).
        preconditioner: String,
        /// Why not.
        reason: String,
    },
    /// Preconditioner setup failed (zero pivot, singular block, ...).
    #[error("preconditioner setup failed: {0}")]
    PreconditionerSetup(String),
    /// New values for a solver set up once ([`crate::ReusableSolver::update_values`]) come
    /// with another sparsity pattern (size, nonzeros, row pointers or column indices) than the
    /// matrix it was set up for. Nothing was changed; build a new solver for a new pattern.
    #[error("pattern mismatch: {0}")]
    PatternMismatch(String),
    /// MPI ranks disagree (sizes, parameters, partition) or another rank failed a collective
    /// step; every rank gets this error, none hangs (RELIABILITY.md rows 25 and 27).
    #[error("distributed: {0}")]
    Distributed(String),
}

/// The broad class of an [`Error`](enum@Error), as the bindings report it (the Python package's exception
/// classes, the C API's status codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Bad input: sizes, values, parameters, a malformed matrix or file.
    InvalidInput,
    /// The preconditioner cannot be built or applied for this matrix.
    Preconditioner,
    /// An allocation failed (host or device).
    OutOfMemory,
    /// The backend, driver, kernels, device or distributed run failed, or the combination is
    /// unsupported.
    Backend,
}

impl Error {
    /// The broad class of this error (see [`ErrorClass`]).
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::DimensionMismatch { .. }
            | Error::NonFinite { .. }
            | Error::InvalidParameter { .. }
            | Error::InvalidMatrix(_)
            | Error::IndexOverflow { .. }
            | Error::MatrixMarket { .. }
            | Error::PatternMismatch(_)
            | Error::Io { .. } => ErrorClass::InvalidInput,
            Error::SingularPivot { .. }
            | Error::PreconditionerMismatch(_)
            | Error::NotApplicable { .. }
            | Error::PreconditionerSetup(_) => ErrorClass::Preconditioner,
            Error::OutOfMemory { .. } => ErrorClass::OutOfMemory,
            _ => ErrorClass::Backend,
        }
    }

    /// Shorthand for [`Error::DimensionMismatch`].
    pub fn dims(what: impl Into<String>, expected: usize, got: usize) -> Self {
        Error::DimensionMismatch {
            what: what.into(),
            expected,
            got,
        }
    }

    /// Shorthand for [`Error::InvalidParameter`].
    pub fn param(name: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::InvalidParameter {
            name: name.into(),
            reason: reason.into(),
        }
    }
}
