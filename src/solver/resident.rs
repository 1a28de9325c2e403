//! What the device-resident modes of the pipelined solvers share (issue 15; [`Execution`]):
//! when the mode runs, the recorded batches (CUDA graphs; GMRES records its cycles with them),
//! and the host's loop over the CG and BiCGStab batches.
//!
//! The host writes the state's header, enqueues a batch of iterations, reads the state back
//! once, records the residuals the device computed and goes on with a batch twice as long (up
//! to [`MAX_BATCH`], and no longer than the batch's convergence rate predicts is left) until the
//! device has flagged an iteration the host must decide itself. The
//! solver's update kernel sets the flag; every later update of the batch does nothing and the
//! products recompute the same vectors, so the partials of the flagged iteration are intact for
//! the host, which finishes it exactly as the synchronous mode does.

use super::common::Tracker;
use super::params::{Execution, Params};
use crate::backend::ops::resident::layout;
use crate::backend::{Backend, Recording, ResidentState};
use crate::error::{Error, Result};

/// Largest batch (iterations enqueued before the state is read back).
pub(super) const MAX_BATCH: usize = 64;
/// First batch.
const FIRST_BATCH: usize = 4;
/// Recordings kept per solver (batch lengths x solution vectors).
const MAX_RECORDINGS: usize = 16;

/// Whether the parameters may select the device-resident mode of `solver` on this backend (the
/// state is allocated at setup then).
/// `auto_allowed`: false when the preconditioner says it does not suit the resident mode
/// ([`crate::precond::Preconditioner::suits_device_resident`]), which [`Execution::Auto`] then
/// leaves.
pub(super) fn may_run<B: Backend>(
    backend: &B,
    solver: &str,
    n: usize,
    params: &Params,
    auto_allowed: bool,
) -> bool {
    params.variant.is_pipelined()
        && match params.execution {
            Execution::Synchronous => false,
            Execution::DeviceResident => true,
            Execution::Auto => {
                auto_allowed && auto_picks(backend, n, Execution::auto_max_n(solver))
            }
        }
}

fn auto_picks<B: Backend>(backend: &B, n: usize, max_n: usize) -> bool {
    backend.is_gpu() && backend.ranks() == 1 && backend.supports_f64() && n <= max_n
}

/// The state when the parameters may select the device-resident mode, else `None`.
pub(super) fn state_for<B: Backend>(
    backend: &B,
    solver: &str,
    n: usize,
    params: &Params,
    auto_allowed: bool,
) -> Result<Option<ResidentState>> {
    if may_run(backend, solver, n, params, auto_allowed) {
        Ok(Some(ResidentState::new(backend, MAX_BATCH)?))
    } else {
        Ok(None)
    }
}

/// Decide the mode of this solve (a monitor forces the synchronous mode): allocate the state
/// if the parameters changed since setup, and mark the tracker.
pub(super) fn choose<B: Backend>(
    backend: &B,
    solver: &str,
    n: usize,
    params: &Params,
    auto_allowed: bool,
    tracker: &mut Tracker,
    state: &mut Option<ResidentState>,
) -> Result<()> {
    if may_run(backend, solver, n, params, auto_allowed) && !tracker.has_monitor() {
        if state.is_none() {
            *state = Some(ResidentState::new(backend, MAX_BATCH)?);
        }
        tracker.execution = Execution::DeviceResident;
    }
    Ok(())
}

/// Recorded batches (CUDA graphs) by a key: for CG and BiCGStab the batch length and the
/// identity of the solution vector they update; for GMRES the cycle's shape and vectors.
///
/// A key is recorded the second time it is run, not the first: capturing and instantiating a
/// graph costs more than launching its kernels once (on the H200 a solve of 99 CG iterations at
/// n = 65K spent about 2.6 ms recording its batches of 4 to 64 iterations, against 2.4 ms for
/// the whole synchronous solve; `bench/results/auto-execution-small-h200.csv`), so a short solve
/// launches its batches directly, and a long one (or the next solve of the same solver) replays.
#[derive(Debug)]
pub(super) struct Recordings<K = (usize, u64)> {
    made: Vec<(K, Recording)>,
    /// Keys run once without a recording.
    seen: Vec<K>,
}

impl<K> Default for Recordings<K> {
    fn default() -> Self {
        Self {
            made: Vec::new(),
            seen: Vec::new(),
        }
    }
}

impl<K: PartialEq> Recordings<K> {
    /// Run the work `enqueue` launches (for CG and BiCGStab: a batch of iterations that
    /// updates the vector of identity `x`, key `(count, x)`): replayed from a recording when
    /// one was made for `key`; launched by `enqueue` the first time `key` runs; recorded (where
    /// the backend records) and replayed the second time, else launched by `enqueue`.
    pub(super) fn run<B: Backend>(
        &mut self,
        be: &B,
        key: K,
        mut enqueue: impl FnMut() -> Result<()>,
    ) -> Result<()> {
        if let Some(i) = self.made.iter().position(|(k, _)| *k == key) {
            // Most recently used last: the eviction below takes the least recently used.
            let entry = self.made.remove(i);
            let replayed = be.replay(&entry.1);
            self.made.push(entry);
            return replayed;
        }
        match self.seen.iter().position(|k| *k == key) {
            Some(i) => {
                self.seen.remove(i);
            }
            None => {
                if self.seen.len() >= MAX_RECORDINGS {
                    self.seen.remove(0);
                }
                self.seen.push(key);
                return enqueue();
            }
        }
        if be.begin_recording()? {
            let enqueued = enqueue();
            let recording = be.end_recording();
            enqueued?;
            if let Some(rec) = recording? {
                be.replay(&rec)?;
                if self.made.len() >= MAX_RECORDINGS {
                    self.made.remove(0);
                }
                self.made.push((key, rec));
                return Ok(());
            }
        }
        enqueue()
    }
}

/// The host's side of the device-resident iterations after `iteration`: write the header
/// (`FLAG` = 0, `ITER`, `TARGET`, `DTOL_R0`, `MAX_ITER` and the solver's own `entries`), run
/// batches with `run_batch(state, count)` (which enqueues `count` iterations, history entries
/// 0..count) and record the residuals they computed, until the device flags an iteration.
/// Returns with `iteration` at the last ordinary iteration, that iteration's residual (or
/// `None` when the first iteration was flagged) and the batch position of the flag.
#[allow(clippy::too_many_arguments)]
pub(super) fn drive<B: Backend>(
    be: &B,
    solver: &str,
    state: &mut ResidentState,
    entries: &[(usize, f64)],
    max_iter: usize,
    tracker: &mut Tracker<'_>,
    iteration: &mut usize,
    mut run_batch: impl FnMut(&mut ResidentState, usize) -> Result<()>,
) -> Result<(Option<f64>, usize)> {
    let mut host = vec![0.0f64; state.buffer().len()];
    host[layout::FLAG] = 0.0;
    host[layout::ITER] = *iteration as f64;
    host[layout::TARGET] = tracker.target;
    host[layout::DTOL_R0] = tracker.divergence_bound();
    host[layout::MAX_ITER] = max_iter as f64;
    for &(k, v) in entries {
        host[k] = v;
    }
    be.write(state.buffer_mut(), &host)?;
    let mut last = None;
    let mut batch = FIRST_BATCH.min(state.batch());
    loop {
        // Never past the iteration limit: the device flags iteration max_iter anyway.
        let count = batch.min(max_iter.saturating_sub(*iteration).max(1));
        run_batch(state, count)?;
        be.read(state.buffer(), &mut host)?;
        let done = host[layout::ITER] as usize;
        if done < *iteration || done > *iteration + count {
            return Err(Error::Unsupported(format!(
                "device-resident {solver}: the device reports iteration {done} after a batch of \
                 {count} from iteration {}; use the synchronous mode",
                *iteration
            )));
        }
        for (k, it) in (*iteration + 1..=done).enumerate() {
            let residual = host[layout::HISTORY + k];
            last = Some(residual);
            if let Some(reason) = tracker.record(it, residual) {
                return Err(Error::Unsupported(format!(
                    "device-resident {solver} disagrees with the host's stop test at iteration \
                     {it} ({reason}); use the synchronous mode"
                )));
            }
        }
        if host[layout::FLAG] != 0.0 {
            let position = done - *iteration;
            *iteration = done;
            return Ok((last, position));
        }
        if done < *iteration + count {
            return Err(Error::Unsupported(format!(
                "device-resident {solver}: the device ran {} of {count} iterations without a \
                 stop flag; use the synchronous mode",
                done - *iteration
            )));
        }
        let history = &host[layout::HISTORY..layout::HISTORY + count];
        *iteration = done;
        batch = next_batch(batch, state.batch(), history, tracker.target);
    }
}

/// The next batch after one whose residuals were `history`: twice as long (up to `max`), but
/// no longer than the iterations the batch's mean convergence rate predicts are left to reach
/// `target` (plus one, rounded up to a power of two; `max` is one): after the stop, the rest of a batch still runs the products, so at large
/// n an overshoot of tens of iterations costs more than a few extra reads of the state (on the
/// H200, BiCGStab on convdiff3d n = 262K stopped 53 iterations into a batch of 64:
/// `bench/results/auto-execution-cuda-h200.csv`). Only the schedule changes: every batch
/// stops at the same iteration.
fn next_batch(batch: usize, max: usize, history: &[f64], target: f64) -> usize {
    let doubled = (batch * 2).min(max);
    let (Some(&first), Some(&last)) = (history.first(), history.last()) else {
        return doubled;
    };
    let steps = history.len().saturating_sub(1) as f64;
    if steps < 1.0 || !(first > 0.0 && last > target && target > 0.0) {
        return doubled;
    }
    let rate = (last / first).powf(1.0 / steps);
    if !(rate > 0.0 && rate < 1.0) {
        return doubled;
    }
    let left = (target / last).ln() / rate.ln();
    if !left.is_finite() {
        return doubled;
    }
    // Powers of two from 2: even (the CG update at batch position k reads the iteration count
    // its predecessor wrote at parity k % 2, and every batch starts at parity 0), and few
    // distinct lengths, so the recordings of a solver stay few and are replayed.
    let predicted = (left.ceil() as usize + 1).next_power_of_two();
    doubled.min(predicted).max(2)
}

#[cfg(test)]
mod tests {
    use super::next_batch;

    #[test]
    fn batches_double_unless_the_rate_predicts_an_earlier_stop() {
        // No history or no convergence: doubling, capped.
        assert_eq!(next_batch(4, 64, &[], 1e-8), 8);
        assert_eq!(next_batch(64, 64, &[1.0, 2.0, 3.0], 1e-8), 64);
        assert_eq!(next_batch(32, 64, &[1.0], 1e-8), 64);
        // 0.5 per iteration from 1e-3: 1e-6 is about 10 iterations away.
        let h: Vec<f64> = (0..8).map(|k| 1e-3 * 0.5f64.powi(k)).collect();
        let last = h[7];
        let left = ((1e-6 / last).ln() / 0.5f64.ln()).ceil() as usize;
        assert_eq!(next_batch(8, 64, &h, 1e-6), (left + 1).next_power_of_two());
        // Always a power of two from 2 (so even).
        for target in [1e-4, 2e-4, 3e-4, 5e-5, 1e-5, 9.9e-6] {
            let b = next_batch(64, 64, &h, target);
            assert!(b >= 2 && b.is_power_of_two(), "{target}: {b}");
        }
        // Far from the target: the doubling rule wins.
        assert_eq!(next_batch(8, 64, &h, 1e-300), 16);
        // Already below the target (the device flags it): doubling.
        assert_eq!(next_batch(8, 64, &h, 1.0), 16);
    }
}
