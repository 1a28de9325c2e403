//! Status codes, the thread-local message of the last error, and [`guard`], which runs the body
//! of every entry point with panics caught.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use pipekrylov::{Error, ErrorClass};

/// Success.
pub const PK_OK: c_int = 0;
/// Bad input: sizes, NaN or infinity, a malformed CSR matrix, an unknown option or a bad option
/// value, an unsupported index or value width, a misaligned array.
pub const PK_ERR_INVALID_INPUT: c_int = 1;
/// The preconditioner could not be built (singular pivot, not applicable to this matrix, ...).
pub const PK_ERR_PRECONDITIONER: c_int = 2;
/// The backend failed or is unavailable (no device, driver error, kernel build, device fault).
pub const PK_ERR_BACKEND: c_int = 3;
/// Host or device memory exhausted.
pub const PK_ERR_OUT_OF_MEMORY: c_int = 4;
/// An internal error (a panic of the library, caught at the boundary). A solver that panicked
/// answers this code to every later call: destroy it.
pub const PK_ERR_PANIC: c_int = 5;
/// A required pointer argument was NULL.
pub const PK_ERR_NULL: c_int = 6;

/// A failed call: its status code and message.
#[derive(Debug)]
pub(crate) struct Failure {
    /// One of the `PK_ERR_*` codes.
    pub code: c_int,
    /// What went wrong, for `pk_last_error`.
    pub message: String,
}

impl Failure {
    /// A [`PK_ERR_INVALID_INPUT`] failure.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self {
            code: PK_ERR_INVALID_INPUT,
            message: message.into(),
        }
    }

    /// A [`PK_ERR_NULL`] failure naming the argument.
    pub fn null(argument: &str) -> Self {
        Self {
            code: PK_ERR_NULL,
            message: format!("{argument} is NULL"),
        }
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Self {
            code: code_of(&e),
            message: e.to_string(),
        }
    }
}

/// The status code of a crate error (the classes of the Python package's exceptions).
pub(crate) fn code_of(e: &Error) -> c_int {
    match e.class() {
        ErrorClass::InvalidInput => PK_ERR_INVALID_INPUT,
        ErrorClass::Preconditioner => PK_ERR_PRECONDITIONER,
        ErrorClass::OutOfMemory => PK_ERR_OUT_OF_MEMORY,
        ErrorClass::Backend => PK_ERR_BACKEND,
    }
}

thread_local! {
    /// The message of the last failed call on this thread ("" after a successful one).
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Record `message` as this thread's last error (NUL bytes, which C cannot hold, become '?').
fn set_last_error(message: &str) {
    let text = CString::new(message.replace('\0', "?")).unwrap_or_default();
    LAST_ERROR.with(|last| {
        if let Ok(mut last) = last.try_borrow_mut() {
            *last = text;
        }
    });
}

/// The message of the last failed call on this thread, valid until the next call of this
/// library on this thread that returns a status code.
pub(crate) fn last_error() -> *const c_char {
    LAST_ERROR.with(|last| match last.try_borrow() {
        Ok(last) => last.as_ptr(),
        Err(_) => c"".as_ptr(),
    })
}

/// Run `body` with panics caught: clears this thread's last error, returns [`PK_OK`] on success,
/// else records the failure's message and returns its code ([`PK_ERR_PANIC`] for a panic, with
/// the panic's message).
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Failure>) -> c_int {
    set_last_error("");
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => PK_OK,
        Ok(Err(failure)) => {
            set_last_error(&failure.message);
            failure.code
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_last_error(&format!("internal error (panic): {what}"));
            PK_ERR_PANIC
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn message() -> String {
        // SAFETY: `last_error` returns a NUL-terminated string owned by this thread.
        unsafe { CStr::from_ptr(last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_becomes_a_code_and_a_message() {
        let code = guard(|| panic!("boom"));
        assert_eq!(code, PK_ERR_PANIC);
        assert!(message().contains("boom"), "{}", message());
        assert_eq!(guard(|| Ok(())), PK_OK);
        assert_eq!(message(), "");
    }

    #[test]
    fn crate_errors_map_to_their_class() {
        assert_eq!(
            code_of(&Error::dims("x", 1, 2)),
            PK_ERR_INVALID_INPUT,
            "dimension mismatch"
        );
        let pivot = Error::SingularPivot {
            preconditioner: "bilu0".into(),
            block_row: 3,
            detail: "zero".into(),
        };
        assert_eq!(code_of(&pivot), PK_ERR_PRECONDITIONER);
        let oom = Error::OutOfMemory {
            device: "host".into(),
            bytes: 1,
            detail: String::new(),
        };
        assert_eq!(code_of(&oom), PK_ERR_OUT_OF_MEMORY);
        assert_eq!(code_of(&Error::Unsupported("x".into())), PK_ERR_BACKEND);
        let code = guard(|| Err(Failure::from(Error::param("rtol", "bad\0value"))));
        assert_eq!(code, PK_ERR_INVALID_INPUT);
        assert!(message().contains("bad?value"), "{}", message());
    }
}
