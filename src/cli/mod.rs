//! The `pipekrylov` command line: `solve`, `bench`, `export`, `info`. The binary only parses arguments;
//! the commands live here so they are tested like the rest of the library.

pub mod bench_cmd;
#[cfg(feature = "mpi")]
pub mod dist;
pub mod export;
pub mod info;
pub mod precond_flags;
pub mod problem;
pub mod solve;
pub mod watch;

/// Exit code of a solve that converged.
pub const EXIT_CONVERGED: i32 = 0;
/// Exit code of an error (message on stderr).
pub const EXIT_ERROR: i32 = 1;
/// Exit code of a solve that ended without converging (report still printed).
pub const EXIT_NOT_CONVERGED: i32 = 2;

/// The backend configuration of `solve`, `bench` and `info`: the one place the program reads
/// the environment's knobs and devices
/// ([`BackendConfig::from_env`](crate::backend::BackendConfig::from_env)), then every
/// `--tune key=value` in order ([`Tuning::set_pair`](crate::backend::tuning::Tuning::set_pair):
/// the command line wins over the environment).
pub fn backend_config(tune: &[String]) -> crate::error::Result<crate::backend::BackendConfig> {
    let mut config = crate::backend::BackendConfig::from_env()?;
    for pair in tune {
        config.tuning.set_pair(pair)?;
    }
    Ok(config)
}

/// The rank of this process under an MPI launcher, from the launcher's environment (`None`
/// without one).
pub fn world_rank() -> Option<String> {
    [
        "OMPI_COMM_WORLD_RANK",
        "PMIX_RANK",
        "PMI_RANK",
        "SLURM_PROCID",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok())
}
