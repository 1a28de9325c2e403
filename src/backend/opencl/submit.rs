//! When queued work is handed to the device (`clFlush`) and how the host waits for a small
//! read.
//!
//! OpenCL lets an implementation hold enqueued commands on the host until a flush or a blocking
//! call; NVIDIA's does, so without a flush the GPU idles while the host enqueues an iteration's
//! kernels and only starts at the blocking read, paying host enqueue time and GPU time one after
//! the other (CUDA submits each launch at once and overlaps them). A flush per launch costs more
//! than it saves; [`FlushPolicy`] flushes the first launch after the queue went idle (so the GPU
//! starts while the host enqueues the rest) and then every `every`-th launch.
//!
//! [`WaitMode::Spin`] waits for a small read by polling its event instead of a blocking call, which
//! on NVIDIA's runtime may sleep and wake late.
//!
//! Defaults, from measurements on the H200 (`bench/experiments/opencl-submit-sweep.sh`): no explicit flush
//! (no policy tried beat the runtime's own submission: NVIDIA's clFlush costs about what it
//! saves) and spin waits on GPUs (CG and BiCGStab 1-2 us faster per iteration for small systems),
//! blocking waits on CPU devices. `PIPEKRYLOV_OPENCL_FLUSH` (`none`, or `KICK:EVERY` such as `1:4`)
//! and `PIPEKRYLOV_OPENCL_WAIT` (`block` or `spin`) override them, for measurements.

use crate::error::{Error, Result};

/// Environment variable overriding [`FlushPolicy`].
pub const FLUSH_ENV: &str = "PIPEKRYLOV_OPENCL_FLUSH";
/// Environment variable overriding [`WaitMode`].
pub const WAIT_ENV: &str = "PIPEKRYLOV_OPENCL_WAIT";

/// When the OpenCL backend calls `clFlush` after a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlushPolicy {
    /// Flush the first launch after the queue went idle (a wait or a blocking read).
    pub kick: bool,
    /// Also flush every `every`-th launch since then (0 = never).
    pub every: u32,
}

impl FlushPolicy {
    /// No explicit flush: the runtime decides (submission at the next blocking call).
    pub const NONE: Self = Self {
        kick: false,
        every: 0,
    };

    /// Whether the `launches`-th launch since the queue went idle (1-based) is flushed.
    pub fn flush_after(&self, launches: u32) -> bool {
        (self.kick && launches == 1) || (self.every > 0 && launches % self.every == 0)
    }

    /// Parse `none` or `KICK:EVERY` (`KICK` 0 or 1).
    pub fn parse(s: &str) -> Result<Self> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("none") {
            return Ok(Self::NONE);
        }
        let bad = || {
            Error::param(
                FLUSH_ENV,
                format!("`{s}` is not `none` or KICK:EVERY (e.g. 1:4)"),
            )
        };
        let (kick, every) = s.split_once(':').ok_or_else(bad)?;
        let kick = match kick.trim() {
            "0" => false,
            "1" => true,
            _ => return Err(bad()),
        };
        let every = every.trim().parse::<u32>().map_err(|_| bad())?;
        Ok(Self { kick, every })
    }
}

/// How the host waits for a small read of the OpenCL backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitMode {
    /// A blocking `clEnqueueReadBuffer`.
    Block,
    /// A non-blocking read, a flush, then polling the read's event status.
    Spin,
}

impl WaitMode {
    /// Parse `block` or `spin`.
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "block" => Ok(Self::Block),
            "spin" => Ok(Self::Spin),
            other => Err(Error::param(
                WAIT_ENV,
                format!("`{other}` is not `block` or `spin`"),
            )),
        }
    }
}

/// The policy and wait mode from the environment, `default_*` where a variable is unset.
pub(crate) fn from_env(
    default_flush: FlushPolicy,
    default_wait: WaitMode,
) -> Result<(FlushPolicy, WaitMode)> {
    let flush = match std::env::var(FLUSH_ENV) {
        Ok(s) => FlushPolicy::parse(&s)?,
        Err(_) => default_flush,
    };
    let wait = match std::env::var(WAIT_ENV) {
        Ok(s) => WaitMode::parse(&s)?,
        Err(_) => default_wait,
    };
    Ok((flush, wait))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_and_flush_where_they_say() {
        assert_eq!(FlushPolicy::parse("none").unwrap(), FlushPolicy::NONE);
        let p = FlushPolicy::parse("1:4").unwrap();
        assert_eq!(
            p,
            FlushPolicy {
                kick: true,
                every: 4
            }
        );
        let flushed: Vec<u32> = (1..=9).filter(|&k| p.flush_after(k)).collect();
        assert_eq!(flushed, vec![1, 4, 8]);
        let kick_only = FlushPolicy::parse("1:0").unwrap();
        assert!(kick_only.flush_after(1) && !kick_only.flush_after(2));
        assert!(!FlushPolicy::NONE.flush_after(1));
        for bad in ["", "2:1", "1", "1:x", "yes"] {
            assert!(FlushPolicy::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(WaitMode::parse("Spin").unwrap(), WaitMode::Spin);
        assert!(WaitMode::parse("poll").is_err());
    }
}
