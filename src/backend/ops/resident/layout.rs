/// 0: running, 1: the host must take over at iteration `ITER + 1`.
pub const FLAG: usize = 0;
/// alpha of the next iteration.
pub const ALPHA: usize = 1;
/// beta of the next iteration.
pub const BETA: usize = 2;
/// Iterations completed on the device.
pub const ITER: usize = 3;
/// Stop when ||r|| <= this.
pub const TARGET: usize = 4;
/// Divergence: ||r|| > this (dtol ||r_0||).
pub const DTOL_R0: usize = 5;
/// Iteration limit.
pub const MAX_ITER: usize = 6;
/// omega of the last ordinary iteration (BiCGStab; for inspection).
pub const OMEGA: usize = 7;
/// ||r|| of the last ordinary iteration (BiCGStab; written by the update).
pub const R_NORM: usize = 8;
/// ||r0*|| (BiCGStab's rho breakdown test).
pub const R0STAR_NORM: usize = 9;
/// The squared machine epsilon of the solve's precision (BiCGStab's rho breakdown test).
pub const EPS2: usize = 10;
/// rho = <r_i, r0*> of the current iteration (BiCGStab; written by the s-update).
pub const RHO: usize = 11;
/// The iteration count the current BiCGStab update reads (the s-update copies `ITER`).
pub const ITER_CUR: usize = 12;
/// ||r_i|| the current BiCGStab update reads (the s-update copies `R_NORM`).
pub const R_NORM_CUR: usize = 13;
/// The iteration count the CG update at batch position k reads: `ITER_PAR + k % 2` (it
/// writes the other entry).
pub const ITER_PAR: usize = 14;
/// <A p_i, r0*> of the current BiCGStab iteration (written by the s-update, read by the fused
/// update, whose product overwrites its partials; the entry is CG's `ITER_PAR`).
pub const AP_R0: usize = 14;
/// The CG update's sums (<r, r>, the curvature, <p, Ap>, <r, z>) when `cg_sums_resident`
/// finished them (4 entries).
pub const SUMS: usize = 16;
/// First entry of the batch's residual history.
pub const HISTORY: usize = 20;
