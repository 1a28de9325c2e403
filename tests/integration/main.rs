//! The integration tests, in one test binary: each file below is a module, as it was a binary
//! of its own before. One binary compiles the generic solvers and backends it instantiates
//! once: as 42 binaries they took 1695 s of compile time in release (each instantiating them
//! again), as one 225 s (2-core machine, 2026-11-30). Filter by module: `cargo test --test
//! integration -- backend_agreement::` runs what `--test backend_agreement` ran. The MPI tests
//! (`tests/mpi/`) are a binary of their own: mpirun starts it.

#[path = "../common/mod.rs"]
mod common;

mod afsai;
mod amg;
mod amg_device_setup;
mod approx_inverse;
mod attainable_accuracy;
mod backend_agreement;
mod bilu_device;
#[cfg(feature = "cli")]
mod cli;
#[cfg(feature = "cli")]
mod cli_defects;
mod csr_view;
mod cuda_backend;
mod cuda_nvrtc;
mod dcgs2_sell_fused;
mod dcgs2_two_kernels;
mod device_buffers;
mod device_matrix;
mod device_resident;
mod empty_system;
mod faults;
mod formats;
mod fsai;
mod generate;
mod gmres_reference;
mod gmres_restarts;
mod hostile_headers;
mod ilu;
#[cfg(all(feature = "sprs", feature = "nalgebra-sparse", feature = "faer"))]
mod interop;
mod interrupt;
mod ip_device;
mod ip_scaling;
mod matrix_market;
mod memory_use;
mod module_layering;
mod newcomer;
mod one_call;
mod opencl_backend;
mod opencl_pool;
mod precond;
mod precond_f32;
mod reorder;
mod resident_many_groups;
mod resident_sums_kernel;
mod soak;
mod solve_many;
mod solvers;
mod trsv_levels;
mod values_refresh;
mod values_refresh_amg_fsai;
