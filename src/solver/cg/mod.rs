//! Conjugate gradients: pipelined (\[Rupp16\] Algorithm 2, with an optional preconditioner) and
//! classical (Algorithm 1, the baseline: two reads of the sums per iteration).
//!
//! The preconditioned pipelined form keeps z = M^-1 r and q = M^-1 Ap as recurrences, so that
//! (Alg. 2, eq. 3 generalized) gamma_{i+1} = <r_{i+1}, z_{i+1}> = alpha_i^2 <Ap_i, q_i> - gamma_i
//! and beta_i = gamma_{i+1} / gamma_i need only inner products available in the same
//! transfer: one global synchronization per iteration, as in the Chronopoulos-Gear /
//! Ghysels-Vanroose single-reduction PCG. Without a preconditioner it is exactly Algorithm 2.
//!
//! Residual replacement (van der Vorst and Ye 2000; Cools, Yetkin, Agullo, Giraud and Vanroose
//! 2018 for pipelined CG): the recursive r (and z = M^-1 r, itself a recurrence here) drift
//! from b - A x. When the recursive residual claims convergence, or when <r, z> is not
//! positive (z drifted away from M^-1 r at the attainable accuracy; with an SPD M it cannot
//! be the preconditioner's fault), r = b - A x and
//! z = M^-1 r are recomputed (one residual kernel, one application, two dots and one
//! transfer) and the next step takes the general line search and Hestenes-Stiefel coefficients
//! that do not assume r, z and p of one recurrence. A <r, z> that is still not positive after
//! that is a preconditioner that is not positive definite. Replacements are counted in the
//! report.

mod many;
mod resident;

use super::common::{check_setup, start_solve, t, Control, Monitor, Tracker};
use super::params::{Execution, Params, Variant};
use super::report::{SolveReport, StopReason};
use super::resident::{choose, state_for, Recordings};
use crate::backend::collective_result;
use crate::backend::{Backend, Buffer, DeviceMatrix, Partials, PcgStepVectors, Slot, SpmvDots};
use crate::error::Result;
use crate::precond::Preconditioner;
use crate::scalar::Scalar;
use std::time::Instant;

/// Reduction slots of one CG iteration.
mod slot {
    use crate::backend::Slot;
    /// <r, r>
    pub const RR: Slot = Slot(0);
    /// <Ap, Ap>
    pub const AP_AP: Slot = Slot(1);
    /// <p, Ap>
    pub const P_AP: Slot = Slot(2);
    /// <r, z>
    pub const RZ: Slot = Slot(3);
    /// <Ap, q>
    pub const AP_Q: Slot = Slot(4);
    /// <r, p> after a residual replacement
    pub const R_P: Slot = Slot(5);
    /// <z, Ap> after a residual replacement
    pub const Z_AP: Slot = Slot(6);
    /// <r, r> and <r, z> written by every other device-resident update (`resident`)
    pub const RR_ALT: Slot = Slot(7);
    pub const RZ_ALT: Slot = Slot(8);
    /// <Ap, Ap> and <p, Ap> written by every other fused device-resident iteration
    pub const AP_AP_ALT: Slot = Slot(9);
    pub const P_AP_ALT: Slot = Slot(10);
    pub const COUNT: usize = 11;
}

/// Put the device-resident mode's second slot set in the canonical slots of finished `sums`:
/// <r, r> and <r, z> when `rr`, <Ap, Ap> and <p, Ap> when `products` (`resident`).
fn second_set_first(sums: &mut crate::backend::Sums, rr: bool, products: bool) {
    let pairs = [
        (rr, slot::RR, slot::RR_ALT),
        (rr, slot::RZ, slot::RZ_ALT),
        (products, slot::AP_AP, slot::AP_AP_ALT),
        (products, slot::P_AP, slot::P_AP_ALT),
    ];
    for (_, canonical, second) in pairs.into_iter().filter(|p| p.0) {
        sums.0.swap(canonical.0, second.0);
    }
}

/// Conjugate gradients for symmetric positive definite systems.
///
/// Built once for a matrix (all workspace allocated here), then solves any number of
/// right-hand sides.
///
/// ```
/// use pipekrylov::backend::{host::HostBackend, MatrixFormat, SpmvOps, VectorOps};
/// use pipekrylov::matrix::generate::Generator;
/// use pipekrylov::solver::{Cg, Params};
/// let host = HostBackend::new();
/// let p = Generator::Poisson2d.generate::<f64>(100).unwrap();
/// let a = host.upload_matrix(&p.matrix, MatrixFormat::Csr).unwrap();
/// let mut cg = Cg::new(&host, &a, None, Params::default()).unwrap();
/// let b = host.upload(&vec![1.0; a.n_rows()]).unwrap();
/// let mut x = host.alloc(a.n_rows()).unwrap();
/// let report = cg.solve(&b, &mut x).unwrap();
/// assert!(report.stop_reason.converged());
/// assert!(report.relative_true_residual < 1e-8);
/// ```
pub struct Cg<'a, B: Backend, T: Scalar> {
    backend: &'a B,
    a: &'a DeviceMatrix<T>,
    precond: Option<&'a dyn Preconditioner<B, T>>,
    params: Params,
    r: Buffer<T>,
    p: Buffer<T>,
    ap: Buffer<T>,
    z: Buffer<T>,
    q: Buffer<T>,
    /// The next residual of a preconditioner that fuses the update
    /// ([`Preconditioner::fuses_pcg_update`]): its update reads r at the neighbours of every
    /// row, so it writes the new r here and the two swap; the classical variant's r' likewise
    /// (allocated by its first solve). Empty otherwise.
    r_next: Buffer<T>,
    /// Whether this solve runs the preconditioner's fused update (pipelined, host-driven).
    fused_step: bool,
    partials: Partials<T>,
    scratch: Partials<T>,
    /// State of the device-resident mode (allocated when it may run).
    resident: Option<crate::backend::ResidentState>,
    /// The other r, p and A p of the fused device-resident iterations (`resident`; empty
    /// until that mode may run without a preconditioner).
    alt: Option<[Buffer<T>; 3]>,
    /// Whether the device-resident batches run fused (set by the first batch launched).
    fused_batches: bool,
    /// Recorded batches of the device-resident mode (CUDA graphs), by batch length and the
    /// identities of x and of the r the batch starts from.
    recordings: Recordings<(usize, u64, u64)>,
    setup_seconds: f64,
}

impl<'a, B: Backend, T: Scalar> Cg<'a, B, T> {
    /// Set up the solver: validate parameters, allocate the workspace.
    pub fn new(
        backend: &'a B,
        a: &'a DeviceMatrix<T>,
        precond: Option<&'a dyn Preconditioner<B, T>>,
        params: Params,
    ) -> Result<Self> {
        let t0 = Instant::now();
        let n = a.n_rows();
        let with_m = precond.is_some();
        let params = Self::resolved(params, precond);
        // Row 25: a check or an allocation that fails on one rank fails every rank here.
        let built = (|| -> Result<Self> {
            check_setup(backend, a, precond, &params)?;
            Ok(Self {
                backend,
                a,
                precond,
                params,
                r: backend.alloc(n)?,
                p: backend.alloc(n)?,
                ap: backend.alloc(n)?,
                z: backend.alloc(if with_m { n } else { 0 })?,
                q: backend.alloc(if with_m { n } else { 0 })?,
                r_next: backend.alloc(if precond.is_some_and(|m| m.fuses_pcg_update()) {
                    n
                } else {
                    0
                })?,
                fused_step: false,
                partials: backend.spmv_partials_at_least(
                    a,
                    slot::COUNT,
                    precond.map_or(0, |m| m.fused_reduction_groups(backend)),
                )?,
                scratch: backend.partials(n, 1)?,
                resident: state_for(
                    backend,
                    "cg",
                    n,
                    &params,
                    precond.map_or(true, |m| m.suits_device_resident()),
                )?,
                alt: None,
                fused_batches: false,
                recordings: Recordings::default(),
                setup_seconds: t0.elapsed().as_secs_f64()
                    + precond.map_or(0.0, |m| m.setup_seconds()),
            })
        })();
        collective_result(backend, "the solver's setup", built)
    }

    /// `params` with [`Variant::Auto`] resolved for `precond`: classical when it does not suit
    /// the pipelined recurrences ([`Preconditioner::suits_pipelined`]) and the device-resident
    /// mode (which runs the pipelined ones) was not asked for, else pipelined.
    fn resolved(params: Params, precond: Option<&dyn Preconditioner<B, T>>) -> Params {
        let suits = precond.map_or(true, |m| m.suits_pipelined())
            || params.execution == Execution::DeviceResident;
        Params {
            variant: params.variant.resolve(suits),
            ..params
        }
    }

    /// The parameters ([`Variant::Auto`] resolved).
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Change the parameters (validated).
    pub fn set_params(&mut self, params: Params) -> Result<()> {
        params.validate()?;
        self.params = Self::resolved(params, self.precond);
        Ok(())
    }

    /// Solve A x = b starting from the guess in `x`; `x` holds the last iterate afterwards.
    pub fn solve(&mut self, b: &Buffer<T>, x: &mut Buffer<T>) -> Result<SolveReport> {
        self.solve_with_monitor(b, x, None)
    }

    /// [`Cg::solve`] with a callback after every iteration.
    pub fn solve_with_monitor(
        &mut self,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        monitor: Monitor<'_>,
    ) -> Result<SolveReport> {
        super::common::with_monitor(monitor, |c| self.solve_with_control(b, x, c))
    }

    /// [`Cg::solve`] with a callback after every iteration that may stop the solve
    /// ([`StopReason::Interrupted`](crate::solver::StopReason::Interrupted)).
    pub fn solve_with_control(
        &mut self,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        monitor: Control<'_>,
    ) -> Result<SolveReport> {
        let mut tracker = start_solve(
            self.backend,
            self.a,
            b,
            x,
            &mut self.scratch,
            self.params,
            monitor,
        )?;
        choose(
            self.backend,
            "cg",
            self.a.n_rows(),
            &self.params,
            self.precond.map_or(true, |m| m.suits_device_resident()),
            &mut tracker,
            &mut self.resident,
        )?;
        // The fused update keeps neither z nor q as recurrences; the device-resident kernels
        // need both, so it runs only when the host drives the iterations.
        self.fused_step = self.params.variant.is_pipelined()
            && tracker.execution != Execution::DeviceResident
            && self.precond.is_some_and(|m| m.fuses_pcg_update());
        let (iterations, reason) = match self.params.variant {
            Variant::Classical => self.classical(b, x, &mut tracker)?,
            Variant::Pipelined | Variant::Auto => self.pipelined(b, x, &mut tracker)?,
        };
        tracker.report(
            "cg",
            self.params.variant,
            iterations,
            reason,
            self.backend,
            self.a,
            b,
            x,
            &mut self.r,
            &mut self.scratch,
            self.setup_seconds,
            true,
        )
    }

    /// \[Rupp16\] Algorithm 2 (2 kernels + 1 transfer per iteration without preconditioner).
    fn pipelined(
        &mut self,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        tracker: &mut Tracker<'_>,
    ) -> Result<(usize, StopReason)> {
        let (be, a) = (self.backend, self.a);
        let pc = self.precond;
        // Lines 1-2: r0 = b - A x0 (with <r0, r0>); z0 = M^-1 r0 (with <r0, z0>).
        be.residual(a, x, b, &mut self.r, &mut self.partials, Some(slot::RR))?;
        if let Some(m) = pc {
            m.apply_dot(be, &self.r, &mut self.z, &mut self.partials, slot::RZ)?;
        }
        let sums = be.finish(&self.partials)?;
        if let Some(reason) = tracker.record(0, norm(sums.get(slot::RR))) {
            return Ok((0, reason));
        }
        let mut gamma = match pc {
            Some(_) => sums.get(slot::RZ),
            None => sums.get(slot::RR),
        };
        // p0 = z0; line 3: Ap0 with <Ap0, Ap0> and <p0, Ap0>; q0 = M^-1 Ap0 with <Ap0, q0>.
        be.copy(if pc.is_some() { &self.z } else { &self.r }, &mut self.p)?;
        self.product()?;
        let mut sums = be.finish(&self.partials)?;
        tracker.start_loop(be.counters());
        let mut iteration = 0;
        let mut corrected: Option<(f64, f64)> = None;
        let (mut best_true, mut no_gain) = (f64::INFINITY, 0usize);
        loop {
            let delta = sums.get(slot::P_AP);
            let curvature = match pc {
                Some(_) => sums.get(slot::AP_Q),
                None => sums.get(slot::AP_AP),
            };
            if !(delta.is_finite() && gamma.is_finite() && curvature.is_finite()) {
                return Ok((iteration, StopReason::NanOrInf));
            }
            if pc.is_some() && gamma <= 0.0 {
                return Ok((iteration, StopReason::IndefinitePreconditioner));
            }
            if delta <= 0.0 {
                return Ok((iteration, StopReason::IndefiniteMatrix));
            }
            // Lines 4-5 and 16-17: alpha = gamma / <p, Ap>,
            // beta = alpha^2 <Ap, M^-1 Ap> / gamma - 1. Right after a residual replacement r
            // and z are no longer those of p's recurrence, so the general forms: the exact line
            // search alpha = <r, p> / <p, Ap> and Hestenes-Stiefel's
            // beta = -<z - alpha q, Ap> / <p, Ap> = (alpha <Ap, q> - <z, Ap>) / <p, Ap>.
            let corrected_step = corrected.take();
            let (alpha, beta) = match corrected_step {
                None => {
                    let alpha = gamma / delta;
                    (alpha, alpha * alpha * curvature / gamma - 1.0)
                }
                Some((r_p, z_ap)) => {
                    let alpha = r_p / delta;
                    (alpha, (alpha * curvature - z_ap) / delta)
                }
            };
            iteration += 1;
            self.host_step(alpha, beta, x)?;
            let mut second_slots = (false, false);
            if tracker.execution == Execution::DeviceResident {
                // The device decides this iteration and the ordinary ones after it, and stops at
                // the first one the host has to decide: its sums are in the partials, as after
                // the host's step.
                second_slots = self.device_batches(x, tracker, &mut iteration)?;
            }
            // The one transfer of the iteration: line 15's <r, r> and line 14's products.
            sums = be.finish(&self.partials)?;
            second_set_first(&mut sums, second_slots.0, second_slots.1);
            let mut rnorm = norm(sums.get(slot::RR));
            gamma = match pc {
                Some(_) => sums.get(slot::RZ),
                None => sums.get(slot::RR),
            };
            // Residual replacement when the recurrence claims convergence or <r, z> is not
            // positive: the claim is checked against b - A x and the iteration goes on from
            // the true residual if it does not hold.
            if rnorm.is_finite()
                && (tracker.passes(rnorm) || (pc.is_some() && gamma.is_finite() && gamma <= 0.0))
            {
                let before = be.counters();
                sums = self.replace_residual(b, x)?;
                // Its finish read the products' slots as they stand (its <r, r> is canonical).
                second_set_first(&mut sums, false, second_slots.1);
                rnorm = norm(sums.get(slot::RR));
                if tracker.passes(rnorm) {
                    // The claim holds: a final check, not counted as an iteration's work.
                    tracker.end_loop(before);
                    tracker.record(iteration, rnorm);
                    return Ok((iteration, StopReason::Converged));
                }
                tracker.residual_replacements += 1;
                // Three replacements in a row without a 10% gain on the best true residual:
                // the attainable accuracy is reached.
                if rnorm < 0.9 * best_true {
                    best_true = rnorm;
                    no_gain = 0;
                } else {
                    no_gain += 1;
                }
                if no_gain >= 3 && !tracker.passes(rnorm) {
                    tracker.record(iteration, rnorm);
                    return Ok((iteration, StopReason::Stagnated));
                }
                gamma = match pc {
                    Some(_) => sums.get(slot::RZ),
                    None => sums.get(slot::RR),
                };
                corrected = Some((sums.get(slot::R_P), sums.get(slot::Z_AP)));
            }
            if let Some(reason) = tracker.record(iteration, rnorm) {
                return Ok((iteration, reason));
            }
        }
    }

    /// One iteration's two kernels with host scalars: lines 10-12 and the first stage of line
    /// 15 (one kernel), then lines 13-14, Ap with the first stage of <Ap, Ap> and <p, Ap>.
    /// A preconditioner that fuses the update recomputes z = M^-1 r in it (the new r goes to
    /// `r_next`, then the two swap).
    fn host_step(&mut self, alpha: f64, beta: f64, x: &mut Buffer<T>) -> Result<()> {
        let be = self.backend;
        match self.precond {
            Some(m) if self.fused_step => {
                let vectors = PcgStepVectors {
                    alpha: t(alpha),
                    beta: t(beta),
                    x,
                    r: &self.r,
                    r_next: &mut self.r_next,
                    p: &mut self.p,
                    ap: &self.ap,
                };
                m.pcg_update(be, vectors, &mut self.partials, (slot::RR, slot::RZ))?;
                std::mem::swap(&mut self.r, &mut self.r_next);
            }
            None => be.cg_update(
                t(alpha),
                t(beta),
                x,
                &mut self.r,
                &mut self.p,
                &self.ap,
                &mut self.partials,
                slot::RR,
            )?,
            Some(_) => be.pcg_update(
                t(alpha),
                t(beta),
                x,
                &mut self.r,
                &mut self.z,
                &mut self.p,
                &self.ap,
                &self.q,
                &mut self.partials,
                slot::RR,
                slot::RZ,
            )?,
        }
        self.product()
    }

    /// Residual replacement: r = b - A x and z = M^-1 r, with <r, p> and <z, Ap> for the
    /// next step's coefficients; the partials of A p and M^-1 A p from the last product are
    /// still in their slots, so one transfer returns all. (Measured alternatives: keeping the
    /// pipelined beta made f32 CG diverge after a replacement; restarting p = z costs the
    /// superlinear convergence, 124 -> 145 iterations on poisson3d 32^3 to 1e-15; replacing
    /// whenever the residual fell by sqrt(eps), as van der Vorst and Ye do, cost 7% more
    /// iterations to 1e-8 on a 3D jump-coefficient diffusion.)
    fn replace_residual(&mut self, b: &Buffer<T>, x: &Buffer<T>) -> Result<crate::backend::Sums> {
        let be = self.backend;
        be.residual(
            self.a,
            x,
            b,
            &mut self.r,
            &mut self.partials,
            Some(slot::RR),
        )?;
        if let Some(m) = self.precond {
            m.apply_dot(be, &self.r, &mut self.z, &mut self.partials, slot::RZ)?;
        }
        be.dot_partials(&self.r, &self.p, &mut self.partials, slot::R_P)?;
        let z = if self.precond.is_some() {
            &self.z
        } else {
            &self.r
        };
        be.dot_partials(z, &self.ap, &mut self.partials, slot::Z_AP)?;
        be.finish(&self.partials)
    }

    /// Ap = A p with its first-stage products; with a preconditioner also q = M^-1 Ap (only
    /// <Ap, M^-1 Ap> when the preconditioner fuses the update, which never reads q).
    fn product(&mut self) -> Result<()> {
        let be = self.backend;
        match self.precond {
            None => be.spmv_dots(
                self.a,
                &self.p,
                &mut self.ap,
                SpmvDots {
                    yy: Some(slot::AP_AP),
                    with: [Some((&self.p, slot::P_AP)), None],
                },
                &mut self.partials,
            ),
            Some(m) => {
                be.spmv_dots(
                    self.a,
                    &self.p,
                    &mut self.ap,
                    SpmvDots {
                        yy: None,
                        with: [Some((&self.p, slot::P_AP)), None],
                    },
                    &mut self.partials,
                )?;
                if self.fused_step {
                    m.quad_dot(be, &self.ap, &mut self.partials, slot::AP_Q)
                } else {
                    m.apply_dot(be, &self.ap, &mut self.q, &mut self.partials, slot::AP_Q)
                }
            }
        }
    }

    /// \[Rupp16\] Algorithm 1 with two fusions that keep its arithmetic: <p, Ap> in the product
    /// and alpha finished on the device for r' = r - alpha Ap with <r', r'>, so an iteration
    /// reads the sums twice (delta and <r', r'> together, then <r', z'>) instead of three times.
    fn classical(
        &mut self,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        tracker: &mut Tracker<'_>,
    ) -> Result<(usize, StopReason)> {
        let (be, a) = (self.backend, self.a);
        let pc = self.precond;
        let n = a.n_rows();
        if self.r_next.len() != n {
            self.r_next = be.alloc(n)?;
        }
        // Line 2: r0 = b - A x0.
        be.residual(a, x, b, &mut self.r, &mut self.scratch, Some(Slot(0)))?;
        let rr = be.finish(&self.scratch)?.get(Slot(0));
        if let Some(reason) = tracker.record(0, norm(rr)) {
            return Ok((0, reason));
        }
        // gamma = <r, z> (<r, r> without a preconditioner): its partials stay in `gamma_slot`
        // of `partials` for the device's alpha; <r, r> goes to the other of slots RR and RZ.
        let (mut gamma_slot, mut rr_slot) = (slot::RZ, slot::RR);
        let mut gamma = match pc {
            Some(m) => {
                m.apply(be, &self.r, &mut self.z)?;
                be.dot_partials(&self.r, &self.z, &mut self.partials, gamma_slot)?;
                be.finish(&self.partials)?.get(gamma_slot)
            }
            None => {
                // The device's alpha reads these partials: finish them here too, so x and r
                // get the same alpha from the first iteration on.
                be.dot_partials(&self.r, &self.r, &mut self.partials, gamma_slot)?;
                be.finish(&self.partials)?.get(gamma_slot)
            }
        };
        be.copy(if pc.is_some() { &self.z } else { &self.r }, &mut self.p)?;
        tracker.start_loop(be.counters());
        let mut iteration = 0;
        loop {
            // Lines 7-8: Ap with the first stage of <p, Ap> fused.
            let dots = SpmvDots {
                yy: None,
                with: [Some((&self.p, slot::P_AP)), None],
            };
            be.spmv_dots(a, &self.p, &mut self.ap, dots, &mut self.partials)?;
            // Line 10 before the host reads delta: r' = r - alpha Ap with alpha = gamma / delta
            // finished on the device (`bicgstab_s_update`: in double, in the host's finish
            // order, so x below gets the same alpha) and the first stage of <r', r'> (line 15):
            // one read of the sums per iteration instead of two. r' is a second buffer, so a
            // breakdown found below leaves r and x as they were.
            be.bicgstab_s_update(
                &self.r,
                &self.ap,
                &mut self.r_next,
                &mut self.partials,
                gamma_slot,
                slot::P_AP,
                rr_slot,
            )?;
            let sums = be.finish(&self.partials)?;
            let (delta, rr) = (sums.get(slot::P_AP), sums.get(rr_slot));
            if !(delta.is_finite() && gamma.is_finite()) {
                return Ok((iteration, StopReason::NanOrInf));
            }
            if pc.is_some() && gamma <= 0.0 {
                return Ok((iteration, StopReason::IndefinitePreconditioner));
            }
            if delta <= 0.0 {
                return Ok((iteration, StopReason::IndefiniteMatrix));
            }
            // Lines 9-11.
            let alpha = gamma / delta;
            be.axpby(t(alpha), &self.p, T::one(), x)?;
            std::mem::swap(&mut self.r, &mut self.r_next);
            iteration += 1;
            if let Some(reason) = tracker.record(iteration, norm(rr)) {
                return Ok((iteration, reason));
            }
            // Lines 17-18 (with z = M^-1 r when preconditioned).
            let gamma_new = match pc {
                Some(m) => {
                    m.apply(be, &self.r, &mut self.z)?;
                    be.dot_partials(&self.r, &self.z, &mut self.partials, gamma_slot)?;
                    be.finish(&self.partials)?.get(gamma_slot)
                }
                None => {
                    // <r, r> is the next gamma: its slot keeps it, the other takes the next.
                    std::mem::swap(&mut gamma_slot, &mut rr_slot);
                    rr
                }
            };
            let beta = gamma_new / gamma;
            gamma = gamma_new;
            be.axpby(
                T::one(),
                if pc.is_some() { &self.z } else { &self.r },
                t(beta),
                &mut self.p,
            )?;
        }
    }
}

/// sqrt of a finished <r, r>, keeping NaN (f64::max would turn NaN into 0 and fake convergence).
pub(crate) fn norm(sq: f64) -> f64 {
    if sq.is_nan() {
        f64::NAN
    } else {
        sq.max(0.0).sqrt()
    }
}
