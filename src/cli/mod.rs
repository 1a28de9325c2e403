//! The `pipekrylov` command line: `solve`, `bench`, `export`, `info`. The binary only parses arguments;
//! the commands live here so they are tested like the rest of the library.

pub mod bench_cmd;
#[cfg(feature = "mpi")]
pub mod dist;
pub mod export;
pub mod info;
pub mod problem;
pub mod solve;
pub mod watch;

/// Exit code of a solve that converged.
pub const EXIT_CONVERGED: i32 = 0;
/// Exit code of an error (message on stderr).
pub const EXIT_ERROR: i32 = 1;
/// Exit code of a solve that ended without converging (report still printed).
pub const EXIT_NOT_CONVERGED: i32 = 2;
