//! The CUDA backend (feature `cuda`): cudarc 0.19 (driver API + NVRTC, libraries loaded at run
//! time), kernels from `kernels/` compiled by NVRTC for the device's own architecture.
//!
//! - One [`CudaBackend`] owns one stream on one device; every kernel and copy is queued on it
//!   asynchronously, and only `read`, `download`, `finish` and `synchronize` wait.
//! - Launch sizes come from the device: `WG` = 256 threads per block (a power of two no larger
//!   than the device's limit); reductions use
//!   [`reduction_groups(n)`](crate::backend::VectorOps::reduction_groups) = min(ceil(n / WG),
//!   4 x multiprocessors) blocks, and every kernel that writes partials runs with exactly that
//!   many blocks (grid-stride loops), so sums are reproducible bit for bit.
//! - `finish` reads a whole partials buffer through a pinned host buffer: one transfer.
//! - Errors: every driver call is checked. Out of memory is [`Error::OutOfMemory`] and leaves
//!   the backend usable; a sticky fault (illegal address, launch failure, ...) is
//!   [`Error::DeviceFault`] and poisons the backend, whose later calls fail at once.
//! - Before cudarc is touched, `libcuda` and `libnvrtc` are probed with `libloading` (cudarc
//!   panics when a library is missing): without them the backend is
//!   [`Error::BackendUnavailable`], and `--backend auto` falls back to the host.
//!
//! ```no_run
//! use pipekrylov::backend::{cuda::CudaBackend, VectorOps};
//! let cuda = CudaBackend::new(0).unwrap(); // with_tuning(0, tuning) for other knobs
//! let x = cuda.upload(&[1.0f64, 2.0, 3.0]).unwrap();
//! let mut p = cuda.partials::<f64>(3, 1).unwrap();
//! cuda.dot_partials(&x, &x, &mut p, pipekrylov::backend::Slot(0)).unwrap();
//! assert_eq!(cuda.finish(&p).unwrap().0[0], 14.0);
//! ```

mod cubin;
mod gpu_launch;
mod halo;
mod krylov;
pub(crate) mod memory;
mod module;
mod peer;
mod pool;
mod precond;
mod probe;
mod resident;
mod spmv;
mod trace;
mod vector;

pub use super::tuning::CUDA_DEVICE_ENV as DEVICE_ENV;
pub use super::tuning::CUDA_TRACE_ENV as TRACE_ENV;
pub use memory::RawBuffer;
pub use module::{compile_for_arch, kernel_registers_for_arch, source, DEFAULT_BLOCK, SOURCES};
pub use trace::write_trace;

use super::buffer::{Buffer, Storage};
use super::tuning::Tuning;
use super::{BackendInfo, BackendStatus, Counters};
use crate::error::{Error, Result};
use crate::scalar::{Precision, Scalar};
use bytemuck::Pod;
use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{result as cu, CudaContext, CudaStream, DevicePtr, DriverError};
use memory::PinnedBuffer;
use module::{Kernel, Kernels};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// Reads up to this many bytes go through the pinned staging buffer.
const PINNED_MAX: usize = 1 << 20;

/// Blocks per multiprocessor for reductions: `reduction_groups(n) <= 4 * SMs`. The kernels
/// launched on that grid must fit this many blocks of [`DEFAULT_BLOCK`] threads on one
/// multiprocessor (checked in CI from NVRTC's CUBIN, `tests/cuda_nvrtc.rs`).
pub const REDUCTION_BLOCKS_PER_SM: usize = 4;

/// Driver error codes after which the context is unusable (sticky faults).
const STICKY_ERRORS: &[u32] = &[
    214, // CUDA_ERROR_ECC_UNCORRECTABLE
    220, // CUDA_ERROR_NVLINK_UNCORRECTABLE
    226, // CUDA_ERROR_CONTAINED
    700, // CUDA_ERROR_ILLEGAL_ADDRESS
    702, // CUDA_ERROR_LAUNCH_TIMEOUT
    709, // CUDA_ERROR_CONTEXT_IS_DESTROYED
    710, // CUDA_ERROR_ASSERT
    714, // CUDA_ERROR_HARDWARE_STACK_ERROR
    715, // CUDA_ERROR_ILLEGAL_INSTRUCTION
    716, // CUDA_ERROR_MISALIGNED_ADDRESS
    717, // CUDA_ERROR_INVALID_ADDRESS_SPACE
    718, // CUDA_ERROR_INVALID_PC
    719, // CUDA_ERROR_LAUNCH_FAILED
    911, // CUDA_ERROR_EXTERNAL_DEVICE
];

/// CUDA_ERROR_OUT_OF_MEMORY.
const OUT_OF_MEMORY: u32 = 2;

/// What the backend knows about its device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Device ordinal.
    pub ordinal: usize,
    /// Device name, e.g. "NVIDIA H200".
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Number of streaming multiprocessors.
    pub multiprocessors: usize,
    /// Largest block the device allows.
    pub max_threads_per_block: usize,
    /// Resident threads per multiprocessor.
    pub max_threads_per_multiprocessor: usize,
    /// Device memory in bytes.
    pub total_memory: usize,
}

impl DeviceInfo {
    /// The real architecture NVRTC compiles for, e.g. `"sm_90"`.
    pub fn arch(&self) -> String {
        format!(
            "sm_{}{}",
            self.compute_capability.0, self.compute_capability.1
        )
    }

    /// One line for `pipekrylov info`.
    pub fn describe(&self) -> String {
        format!(
            "{}: {}, {:.1} GiB, compute capability {}.{} ({}), {} SMs",
            self.ordinal,
            self.name,
            self.total_memory as f64 / (1u64 << 30) as f64,
            self.compute_capability.0,
            self.compute_capability.1,
            self.arch(),
            self.multiprocessors
        )
    }
}

/// One kernel argument, passed by value with the type the kernel declares (see
/// `kernels/dialect/cuda.h`: pointers and `ulong` are 64 bit, `uint` and `int` 32 bit).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg {
    /// A device address (`SCALAR*`, `uint*`), or 0 for an unused optional vector.
    Ptr(u64),
    /// `uint`.
    U32(u32),
    /// `int` (optional slots, -1 = off).
    I32(i32),
    /// `ulong` (element offsets).
    U64(u64),
    /// `SCALAR` = float.
    F32(f32),
    /// `SCALAR` = double.
    F64(f64),
}

/// The CUDA backend: one device, one stream, kernels compiled for the device by NVRTC.
pub struct CudaBackend {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    block: u32,
    id: u64,
    counters: Counters,
    poisoned: AtomicBool,
    /// Everything else, boxed so that [`crate::backend::AnyBackend`] stays small.
    state: Box<State>,
}

impl CudaBackend {
    /// Begin a stream capture (relaxed mode: the kernels are already loaded, nothing else is
    /// called while capturing).
    pub(crate) fn begin_capture(&self) -> Result<bool> {
        self.check_alive()?;
        self.bind()?;
        let mut start = self
            .state
            .capture_start
            .lock()
            .map_err(|_| self.lock_poisoned())?;
        if start.is_some() {
            return Ok(false);
        }
        if self
            .stream
            .begin_capture(cudarc::driver::sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
            .is_err()
        {
            return Ok(false);
        }
        *start = Some(self.counters.snapshot().launches);
        Ok(true)
    }

    /// End the capture: the graph of the launches since [`CudaBackend::begin_capture`], or
    /// `None` when capturing failed. The captured launches did not run: they are uncounted.
    pub(crate) fn end_capture(&self) -> Result<Option<crate::backend::Recording>> {
        let start = self
            .state
            .capture_start
            .lock()
            .map_err(|_| self.lock_poisoned())?
            .take();
        let Some(start) = start else {
            return Ok(None);
        };
        let launches = self.counters.snapshot().launches - start;
        self.counters.uncount_launches(launches);
        let graph = self
            .stream
            .end_capture(cudarc::driver::sys::CUgraphInstantiate_flags(0));
        match graph {
            Ok(Some(g)) => {
                g.upload()
                    .map_err(|e| self.driver_error("cuGraphUpload", e, 0))?;
                Ok(Some(crate::backend::Recording {
                    graph: Box::new(g),
                    launches,
                }))
            }
            _ => Ok(None),
        }
    }

    /// Launch a graph made by [`CudaBackend::end_capture`] on this backend's stream.
    pub(crate) fn replay_graph(&self, recording: &crate::backend::Recording) -> Result<()> {
        self.check_alive()?;
        let graph = recording
            .graph
            .downcast_ref::<cudarc::driver::CudaGraph>()
            .ok_or_else(|| Error::param("recording", "not a CUDA graph"))?;
        graph
            .launch()
            .map_err(|e| self.driver_error("cuGraphLaunch", e, 0))?;
        self.counters.launches(recording.launches);
        Ok(())
    }

    fn lock_poisoned(&self) -> Error {
        Error::DeviceFault {
            backend: "cuda".into(),
            message: "capture state lock poisoned".into(),
        }
    }
}

/// The less frequently touched part of a [`CudaBackend`].
struct State {
    device: DeviceInfo,
    /// The first sticky fault, repeated by every later call.
    fault: Mutex<Option<String>>,
    kernels_f32: OnceLock<Arc<Kernels>>,
    kernels_f64: OnceLock<Arc<Kernels>>,
    /// Staging memory for reads of partials and small buffers (kept for the next backend
    /// when this one is dropped, `pool.rs`).
    pinned: Mutex<Option<PinnedBuffer>>,
    /// The device's memory pool, shared by the process's backends (`pool.rs`); `None` where
    /// the driver has no stream-ordered allocation.
    pool: Option<pool::DevicePool>,
    /// Device copy of the multi-AXPY coefficients.
    coeffs: Mutex<Option<RawBuffer>>,
    /// Launch count when the current stream capture began.
    capture_start: Mutex<Option<u64>>,
    /// Copy stream and page-locked staging of the distributed SpMV's halo exchange.
    halo: Mutex<Option<memory::HaloStaging>>,
    /// Launch kernels with programmatic stream serialization (sm_90+, unless the tuning's
    /// [`cuda_pdl`](Tuning::cuda_pdl) is off).
    pdl: bool,
    /// The knobs this backend runs with.
    tuning: Tuning,
}

impl Drop for State {
    fn drop(&mut self) {
        // The staging buffer serves the next backend, unless this one's context faulted.
        let faulted = self.fault.get_mut().map_or(true, |fault| fault.is_some());
        let pinned = self
            .pinned
            .get_mut()
            .map(Option::take)
            .unwrap_or_else(|p| p.into_inner().take());
        if let (Some(buffer), false) = (pinned, faulted) {
            pool::keep_pinned(buffer);
        }
    }
}

impl std::fmt::Debug for CudaBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaBackend")
            .field("device", &self.state.device)
            .field("block", &self.block)
            .field("poisoned", &self.poisoned.load(Ordering::Relaxed))
            .finish()
    }
}

/// Map a driver error met while opening the device to [`Error::BackendUnavailable`].
fn init_error(call: &str, e: DriverError) -> Error {
    probe::unavailable(format!("{call}: {}", driver_message(e)))
}

/// "CUDA_ERROR_NAME (description)".
fn driver_message(e: DriverError) -> String {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("CUresult {}", e.0 as u32));
    match e.error_string() {
        Ok(s) => format!("{name} ({})", s.to_string_lossy()),
        Err(_) => name,
    }
}

impl CudaBackend {
    /// Open the device named by `PIPEKRYLOV_CUDA_DEVICE` (an ordinal, default 0) with the
    /// default tuning (the environment's knobs are read by
    /// [`Tuning::from_env`](crate::backend::tuning::Tuning::from_env) only, for the command
    /// line: pass them with [`CudaBackend::with_tuning`]).
    ///
    /// Errors: [`Error::BackendUnavailable`] when libcuda or libnvrtc is missing, there is no
    /// such device or the driver cannot start; [`Error::InvalidParameter`] when the variable
    /// is not a number.
    pub fn from_env() -> Result<Self> {
        let ordinal = crate::backend::tuning::cuda_device_from_env()?;
        Self::new(ordinal.unwrap_or(0))
    }

    /// Open device `ordinal` with a new stream and the default tuning.
    pub fn new(ordinal: usize) -> Result<Self> {
        Self::with_tuning(ordinal, Tuning::default())
    }

    /// Open device `ordinal` with a new stream, running with the knobs of `tuning`.
    pub fn with_tuning(ordinal: usize, tuning: Tuning) -> Result<Self> {
        probe::driver()?;
        probe::nvrtc()?;
        let ctx = probe::guarded("opening the CUDA device", || CudaContext::new(ordinal))?
            .map_err(|e| init_error(&format!("cuInit / cuDevicePrimaryCtxRetain({ordinal})"), e))?;
        // SAFETY: every allocation of this backend is made, used and freed on its one stream
        // (a buffer of another backend object is refused by `raw`), so cudarc's cross-stream
        // event tracking is not needed; it must be off before the stream and buffers exist.
        unsafe { ctx.disable_event_tracking() };
        let device = query_device(&ctx).map_err(|e| init_error("cuDeviceGetAttribute", e))?;
        let stream = ctx
            .new_stream()
            .map_err(|e| init_error("cuStreamCreate", e))?;
        let block = block_size(device.max_threads_per_block);
        let pool = pool::for_device(&ctx, device.total_memory);
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        Ok(Self {
            ctx,
            stream,
            block,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            counters: Counters::default(),
            poisoned: AtomicBool::new(false),
            state: Box::new(State {
                pdl: device.compute_capability.0 >= 9 && tuning.cuda_pdl,
                tuning,
                device,
                fault: Mutex::new(None),
                kernels_f32: OnceLock::new(),
                kernels_f64: OnceLock::new(),
                pinned: Mutex::new(None),
                pool,
                coeffs: Mutex::new(None),
                capture_start: Mutex::new(None),
                halo: Mutex::new(None),
            }),
        })
    }

    /// The knobs this backend runs with (also [`BackendInfo::tuning`]).
    pub fn tuning(&self) -> &Tuning {
        &self.state.tuning
    }

    /// The device this backend runs on.
    pub fn device(&self) -> &DeviceInfo {
        &self.state.device
    }

    /// Threads per block of every launch (`WG` in the kernels).
    pub fn block_size(&self) -> u32 {
        self.block
    }

    /// True after a sticky device fault: every later call returns [`Error::DeviceFault`].
    pub fn is_poisoned(&self) -> bool {
        self.poisoned.load(Ordering::Acquire)
    }

    /// Remember the first sticky fault and refuse every later call.
    pub(crate) fn mark_faulted(&self, detail: &str) {
        if let Ok(mut g) = self.state.fault.lock() {
            g.get_or_insert_with(|| detail.to_string());
        }
        self.poisoned.store(true, Ordering::Release);
    }

    /// Compile (NVRTC, cached per process) and load the kernels of `precision` now instead of
    /// at their first launch, e.g. before timing.
    pub fn prepare(&self, precision: Precision) -> Result<()> {
        self.kernels_for(precision).map(|_| ())
    }

    // ---- errors -------------------------------------------------------------------------

    /// Fail fast once poisoned.
    pub(crate) fn check_alive(&self) -> Result<()> {
        if !self.is_poisoned() {
            return Ok(());
        }
        let first = self
            .state
            .fault
            .lock()
            .ok()
            .and_then(|g| g.clone())
            .unwrap_or_else(|| "unknown fault".into());
        Err(Error::DeviceFault {
            backend: "cuda".into(),
            message: format!(
                "the backend is unusable after an earlier device fault ({first}); drop it and \
                 every buffer it made, then create a new one"
            ),
        })
    }

    /// Map a driver error of `call`: out of memory (with `bytes` requested), sticky fault
    /// (poisons the backend) or a plain driver error.
    pub(crate) fn driver_error(&self, call: &str, e: DriverError, bytes: usize) -> Error {
        let code = e.0 as u32;
        let message = driver_message(e);
        if code == OUT_OF_MEMORY {
            return Error::OutOfMemory {
                device: self.device_label(),
                bytes,
                detail: format!("{call}: {message}"),
            };
        }
        if STICKY_ERRORS.contains(&code) {
            let detail = format!("{call}: {message}");
            self.mark_faulted(&detail);
            module::forget_device(self.state.device.ordinal);
            pool::forget_device(self.state.device.ordinal);
            return Error::DeviceFault {
                backend: "cuda".into(),
                message: detail,
            };
        }
        Error::Driver {
            backend: "cuda".into(),
            call: call.into(),
            message,
        }
    }

    fn device_label(&self) -> String {
        format!(
            "cuda device {} ({})",
            self.state.device.ordinal, self.state.device.name
        )
    }

    fn lock<'a, G>(&self, m: &'a Mutex<G>, what: &str) -> Result<MutexGuard<'a, G>> {
        m.lock().map_err(|_| Error::Driver {
            backend: "cuda".into(),
            call: what.into(),
            message: "lock poisoned by a panic in another thread".into(),
        })
    }

    /// Make the context current on the calling thread (for the raw driver calls).
    pub(crate) fn bind(&self) -> Result<()> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| self.driver_error("cuCtxSetCurrent", e, 0))
    }

    /// Wait for the stream.
    pub(crate) fn sync(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| self.driver_error("cuStreamSynchronize", e, 0))
    }

    // ---- memory -------------------------------------------------------------------------

    /// The allocation behind `b`, which must belong to this backend object.
    pub(crate) fn raw<'a, T: Pod>(&self, b: &'a Buffer<T>) -> Result<&'a RawBuffer> {
        match &b.storage {
            Storage::Cuda(r) if r.owner() == self.id => Ok(r),
            Storage::Cuda(_) => Err(Error::WrongBackend {
                expected: format!("cuda (backend object #{})", self.id),
                found: "cuda (another backend object, with its own stream)".into(),
            }),
            #[allow(unreachable_patterns)]
            _ => Err(Error::WrongBackend {
                expected: "cuda".into(),
                found: b.owner().into(),
            }),
        }
    }

    /// A runtime-neutral kernel argument ([`crate::backend::launch`]) as this runtime's.
    pub(crate) fn kernel_arg(&self, a: &crate::backend::launch::KernelArg<'_>) -> Result<Arg> {
        use crate::backend::launch::{BufferArg, KernelArg};
        Ok(match a {
            KernelArg::Buffer(BufferArg::Cuda(r)) if r.owner() == self.id => Arg::Ptr(r.ptr()),
            KernelArg::Buffer(BufferArg::Cuda(_)) => {
                return Err(Error::WrongBackend {
                    expected: format!("cuda (backend object #{})", self.id),
                    found: "cuda (another backend object, with its own stream)".into(),
                })
            }
            KernelArg::Buffer(_) => {
                return Err(Error::WrongBackend {
                    expected: "cuda".into(),
                    found: "another backend's buffer".into(),
                })
            }
            KernelArg::U32(v) => Arg::U32(*v),
            KernelArg::F32(v) => Arg::F32(*v),
            KernelArg::F64(v) => Arg::F64(*v),
            KernelArg::U64(v) => Arg::U64(*v),
            KernelArg::I32(v) => Arg::I32(*v),
            KernelArg::Unused => Arg::Ptr(0),
        })
    }

    /// `b`'s device address as a kernel argument.
    pub(crate) fn ptr<T: Pod>(&self, b: &Buffer<T>) -> Result<Arg> {
        Ok(Arg::Ptr(self.raw(b)?.ptr()))
    }

    /// Allocate `bytes` bytes (uninitialised) on the stream.
    pub(crate) fn alloc_bytes(&self, bytes: usize) -> Result<RawBuffer> {
        self.check_alive()?;
        self.counters.check_allocation("cuda", bytes)?;
        if bytes > self.state.device.total_memory {
            return Err(Error::OutOfMemory {
                device: self.device_label(),
                bytes,
                detail: format!(
                    "larger than the device memory ({} bytes)",
                    self.state.device.total_memory
                ),
            });
        }
        self.bind()?;
        // The memory is uninitialised bytes; callers fill it (memset or copy) before any read.
        let slice = match self.state.pool {
            Some(pool) => pool
                .alloc(&self.stream, bytes)
                .map_err(|e| self.driver_error("cuMemAllocFromPoolAsync", e, bytes))?,
            // SAFETY: as above.
            None => unsafe { self.stream.alloc::<u8>(bytes.max(1)) }
                .map_err(|e| self.driver_error("cuMemAllocAsync", e, bytes))?,
        };
        let ptr = {
            let (p, _no_event) = slice.device_ptr(&self.stream);
            p
        };
        Ok(RawBuffer::new(slice, ptr, bytes, self.id))
    }

    /// Bytes of `len` elements of `T`, or out of memory on overflow.
    fn bytes_of<T>(&self, len: usize) -> Result<usize> {
        len.checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| Error::OutOfMemory {
                device: self.device_label(),
                bytes: usize::MAX,
                detail: format!("{len} elements overflow the address space"),
            })
    }

    /// Queue a host-to-device copy of `data` to `dst` (one transfer).
    pub(crate) fn copy_to_device(&self, dst: &RawBuffer, data: &[u8]) -> Result<()> {
        self.check_alive()?;
        if data.len() > dst.bytes() {
            return Err(Error::dims("host-to-device copy", dst.bytes(), data.len()));
        }
        self.counters.transfer();
        if data.is_empty() {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: `dst` holds at least `data.len()` bytes (checked) and lives on this stream.
        // A copy from pageable memory returns once `data` has been staged, so `data` may be
        // dropped afterwards.
        unsafe { cu::memcpy_htod_async(dst.ptr(), data, self.stream.cu_stream()) }
            .map_err(|e| self.driver_error("cuMemcpyHtoDAsync", e, data.len()))
    }

    /// Copy `src` into `out` and wait (one transfer); small copies go through pinned memory.
    pub(crate) fn copy_to_host(&self, src: &RawBuffer, out: &mut [u8]) -> Result<()> {
        self.check_alive()?;
        if out.len() > src.bytes() {
            return Err(Error::dims("device-to-host copy", src.bytes(), out.len()));
        }
        self.counters.transfer();
        self.bind()?;
        if out.is_empty() {
            return self.sync();
        }
        if out.len() <= PINNED_MAX {
            return self.with_pinned(src, out.len(), |staged| {
                out.copy_from_slice(staged);
                Ok(())
            });
        }
        // SAFETY: `src` holds at least `out.len()` bytes (checked); `out` is borrowed until
        // the stream is synchronized below.
        unsafe { cu::memcpy_dtoh_async(out, src.ptr(), self.stream.cu_stream()) }
            .map_err(|e| self.driver_error("cuMemcpyDtoHAsync", e, 0))?;
        self.sync()
    }

    /// Copy the first `bytes` bytes of `src` into the pinned staging buffer, wait, and give
    /// them to `f` (no transfer counted here).
    pub(crate) fn with_pinned<R>(
        &self,
        src: &RawBuffer,
        bytes: usize,
        f: impl FnOnce(&[u8]) -> Result<R>,
    ) -> Result<R> {
        let mut guard = self.lock(&self.state.pinned, "pinned staging buffer")?;
        if guard.as_ref().map_or(true, |p| p.len() < bytes) {
            *guard = pool::take_pinned(&self.ctx, bytes);
        }
        if guard.is_none() {
            let size = bytes.next_power_of_two().max(64 << 10);
            *guard = Some(
                PinnedBuffer::new(&self.ctx, size)
                    .map_err(|e| self.driver_error("cuMemHostAlloc", e, size))?,
            );
        }
        let pinned = guard.as_mut().ok_or_else(|| Error::Driver {
            backend: "cuda".into(),
            call: "cuMemHostAlloc".into(),
            message: "pinned staging buffer missing".into(),
        })?;
        let staged = pinned.bytes_mut(bytes);
        // SAFETY: `src` holds at least `bytes` bytes (callers check); the staging slice is
        // `bytes` long and stays locked until the stream has been synchronized.
        unsafe { cu::memcpy_dtoh_async(&mut *staged, src.ptr(), self.stream.cu_stream()) }
            .map_err(|e| self.driver_error("cuMemcpyDtoHAsync", e, 0))?;
        self.sync()?;
        f(staged)
    }

    /// A buffer over device memory the caller allocated (a CuPy or PyTorch array, a
    /// `cudaMalloc` of the application): `len` elements of `T` at device address `ptr`, used in
    /// place by this backend's kernels and copies, never freed by it.
    ///
    /// Checked: the address is aligned for `T`, lies in an allocation of this backend's device
    /// (`cuPointerGetAttribute`) and the allocation holds the `len` elements from it
    /// (`cuMemGetAddressRange`); each failure is an [`Error::InvalidParameter`].
    ///
    /// # Safety
    /// The caller keeps the memory allocated while the buffer (and anything holding it) lives,
    /// and orders its own work on the memory with this backend's: finish writing it before a
    /// solve reads it (synchronize your stream), and read the result after the call returns
    /// (the backend's calls return with their work complete). Nothing else writes the memory
    /// while a solve uses it.
    pub unsafe fn borrow_device_memory<T: Pod>(&self, ptr: u64, len: usize) -> Result<Buffer<T>> {
        use cudarc::driver::sys;
        let bytes = self.bytes_of::<T>(len)?;
        let bad = |why: String| Error::param("device pointer", why);
        if ptr % std::mem::align_of::<T>() as u64 != 0 {
            return Err(bad(format!(
                "{ptr:#x} is not aligned to {} bytes",
                std::mem::align_of::<T>()
            )));
        }
        if len > 0 {
            self.bind()?;
            let mut ordinal: std::ffi::c_int = -1;
            // SAFETY: a query of an address (any value is allowed: an unknown address is an
            // error code, not a fault); `ordinal` is a c_int as the attribute requires.
            let r = sys::cuPointerGetAttribute(
                (&mut ordinal as *mut std::ffi::c_int).cast(),
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                ptr,
            );
            if r != sys::CUresult::CUDA_SUCCESS {
                return Err(bad(format!("{ptr:#x} is not CUDA device memory ({r:?})")));
            }
            if ordinal < 0 || ordinal as usize != self.state.device.ordinal {
                return Err(bad(format!(
                    "{ptr:#x} is memory of CUDA device {ordinal}; this backend runs on device {}",
                    self.state.device.ordinal
                )));
            }
            let (mut base, mut size): (sys::CUdeviceptr, usize) = (0, 0);
            // SAFETY: as above; the outputs are plain integers.
            let r = sys::cuMemGetAddressRange_v2(&mut base, &mut size, ptr);
            if r != sys::CUresult::CUDA_SUCCESS {
                return Err(bad(format!("{ptr:#x}: no allocation found ({r:?})")));
            }
            let end = ptr.checked_add(bytes as u64);
            if end.map_or(true, |end| end > base + size as u64) {
                return Err(bad(format!(
                    "{len} elements ({bytes} bytes) from {ptr:#x} run past the end of its \
                     allocation ({size} bytes from {base:#x})"
                )));
            }
        }
        Ok(Buffer::from_storage(
            len,
            Storage::Cuda(memory::RawBuffer::borrowed(ptr, bytes, self.id)),
            None,
        ))
    }

    /// The device address of a buffer of this backend (to hand to other CUDA code), or an
    /// error for another backend's buffer.
    pub fn device_address<T: Pod>(&self, buffer: &Buffer<T>) -> Result<u64> {
        match &buffer.storage {
            Storage::Cuda(r) if r.owner() == self.id => Ok(r.ptr()),
            _ => Err(Error::WrongBackend {
                expected: "cuda".into(),
                found: buffer.owner().into(),
            }),
        }
    }

    /// A new typed buffer of `len` elements; zeroed when `zero`.
    pub(crate) fn new_buffer<T: Pod>(&self, len: usize, zero: bool) -> Result<Buffer<T>> {
        let bytes = self.bytes_of::<T>(len)?;
        let raw = self.alloc_bytes(bytes)?;
        if zero && bytes > 0 {
            // SAFETY: `raw` holds `bytes` bytes on this stream.
            unsafe { cu::memset_d8_async(raw.ptr(), 0, bytes, self.stream.cu_stream()) }
                .map_err(|e| self.driver_error("cuMemsetD8Async", e, bytes))?;
        }
        let ticket = self.counters.track(bytes);
        Ok(Buffer::from_storage(len, Storage::Cuda(raw), Some(ticket)))
    }

    /// `f` on a device buffer holding `data` (the multi-AXPY coefficients): kept by the backend
    /// and grown when needed, one transfer per call. The lock is held from the copy to the end
    /// of `f`, so a concurrent caller cannot overwrite coefficients that a kernel `f` enqueues
    /// has not read yet (the stream is in order).
    pub(crate) fn with_coefficients<T: Scalar, R>(
        &self,
        data: &[T],
        f: impl FnOnce(&RawBuffer) -> Result<R>,
    ) -> Result<R> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let mut guard = self.lock(&self.state.coeffs, "coefficient buffer")?;
        if guard.as_ref().map_or(true, |b| b.capacity() < bytes.len()) {
            *guard = None;
            let size = bytes.len().next_power_of_two().max(1024);
            *guard = Some(self.alloc_bytes(size)?);
        }
        let Some(buf) = guard.as_ref() else {
            return Err(Error::Driver {
                backend: "cuda".into(),
                call: "coefficient buffer".into(),
                message: "allocation vanished".into(),
            });
        };
        self.copy_to_device(buf, bytes)?;
        f(buf)
    }

    // ---- kernels ------------------------------------------------------------------------

    fn kernels_for(&self, precision: Precision) -> Result<&Kernels> {
        let cell = match precision {
            Precision::F32 => &self.state.kernels_f32,
            Precision::F64 => &self.state.kernels_f64,
        };
        if let Some(k) = cell.get() {
            return Ok(k);
        }
        self.check_alive()?;
        let k = module::kernels(
            &self.ctx,
            self.state.device.ordinal,
            &self.state.device.arch(),
            precision,
            self.block,
            module::BuildOptions::of(&self.state.tuning),
            &|call, e| self.driver_error(call, e, 0),
        )?;
        Ok(cell.get_or_init(|| k))
    }

    /// Blocks of a kernel without partials over `work` work items (any grid is correct; this
    /// one fills the device once).
    pub(crate) fn grid(&self, work: usize) -> usize {
        let per_sm =
            (self.state.device.max_threads_per_multiprocessor / self.block as usize).max(1);
        work.div_ceil(self.block as usize)
            .clamp(1, self.state.device.multiprocessors.max(1) * per_sm)
    }

    /// Blocks of the first stage of a reduction over `n` elements.
    pub(crate) fn groups_for(&self, n: usize) -> usize {
        let per_sm = self
            .state
            .tuning
            .reduction_groups_per_sm
            .unwrap_or(REDUCTION_BLOCKS_PER_SM);
        n.div_ceil(self.block as usize)
            .clamp(1, per_sm * self.state.device.multiprocessors.max(1))
    }

    /// Launch `kernel` of precision `T` with `grid` blocks of `WG` threads (one counted
    /// launch).
    ///
    /// # Safety
    /// `args` must match the parameter list of `kernel` in `kernels/` in number, order and
    /// types; every pointer must be an allocation of this backend (or 0 where the kernel does
    /// not read it) covering every element the kernel touches for the sizes passed; a kernel
    /// that writes partials must get `grid` equal to the groups of that partials buffer.
    pub(crate) unsafe fn launch<T: Scalar>(
        &self,
        kernel: Kernel,
        grid: usize,
        args: &[Arg],
    ) -> Result<()> {
        self.check_alive()?;
        let kernels = self.kernels_for(T::PRECISION)?;
        let func = kernels.get(kernel);
        let grid = u32::try_from(grid.max(1)).map_err(|_| {
            Error::param("grid", format!("{grid} blocks exceed the CUDA grid limit"))
        })?;
        // SAFETY: as for this function; `args` outlives the call.
        unsafe { self.launch_ex(kernel, func, grid, args) }?;
        self.counters.launch();
        Ok(())
    }

    /// `cuLaunchKernelEx`, with programmatic stream serialization when the backend uses it
    /// (sm_90+): the kernel's blocks may be scheduled before the previous kernel on the stream
    /// has finished; every kernel waits for it first (`PDL_WAIT()` in `kernels/dialect/cuda.h`).
    /// In a stream capture the dependency becomes a programmatic edge of the graph. Without the
    /// attribute it is the classic launch.
    ///
    /// # Safety
    /// As for [`Self::launch`]; `func` is `kernel`'s function.
    unsafe fn launch_ex(
        &self,
        kernel: Kernel,
        func: &cudarc::driver::CudaFunction,
        grid: u32,
        args: &[Arg],
    ) -> Result<()> {
        use cudarc::driver::sys;
        use std::ffi::c_void;
        self.bind()?;
        let mut params: Vec<*mut c_void> = args
            .iter()
            .map(|arg| match arg {
                Arg::Ptr(v) | Arg::U64(v) => v as *const u64 as *mut c_void,
                Arg::U32(v) => v as *const u32 as *mut c_void,
                Arg::I32(v) => v as *const i32 as *mut c_void,
                Arg::F32(v) => v as *const f32 as *mut c_void,
                Arg::F64(v) => v as *const f64 as *mut c_void,
            })
            .collect();
        // SAFETY: a zeroed launch attribute is a valid value (id IGNORE); id and value set below.
        let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attr.value.programmaticStreamSerializationAllowed = 1;
        let config = sys::CUlaunchConfig {
            gridDimX: grid,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: self.block,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: 0,
            hStream: self.stream.cu_stream(),
            attrs: &mut attr,
            numAttrs: u32::from(self.state.pdl),
        };
        // SAFETY: `params` holds one pointer per kernel parameter, in order, to values of the
        // kernel's parameter types (the caller's contract); the driver copies them before
        // returning. `config` and `attr` live across the call.
        let tracing = self.state.tuning.cuda_trace.is_some();
        trace::traced(tracing, kernel.name(), self.stream.cu_stream(), || unsafe {
            sys::cuLaunchKernelEx(
                &config,
                func.cu_function(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
        .result()
        .map_err(|e| self.driver_error(&format!("cuLaunchKernelEx({})", kernel.name()), e, 0))
    }
}

impl BackendInfo for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }
    fn device_name(&self) -> String {
        format!(
            "{} ({}, {} SMs, {:.1} GiB, device {})",
            self.state.device.name,
            self.state.device.arch(),
            self.state.device.multiprocessors,
            self.state.device.total_memory as f64 / (1u64 << 30) as f64,
            self.state.device.ordinal
        )
    }
    fn supports_f64(&self) -> bool {
        true
    }
    fn is_gpu(&self) -> bool {
        true
    }
    fn kernel_runtime(&self) -> crate::backend::launch::KernelRuntime<'_> {
        crate::backend::launch::KernelRuntime::Gpu(crate::backend::launch::GpuRuntime(self))
    }
    fn prepare_kernels(&self, precision: Precision) -> Result<()> {
        self.prepare(precision)
    }
    fn tuning(&self) -> &Tuning {
        &self.state.tuning
    }
}

/// Threads per block: 256, or the largest power of two the device allows below that.
fn block_size(max_threads: usize) -> u32 {
    let cap = max_threads.clamp(32, DEFAULT_BLOCK as usize);
    // Largest power of two <= cap.
    (1u32 << (usize::BITS - 1 - cap.leading_zeros())).max(32)
}

fn query_device(ctx: &Arc<CudaContext>) -> std::result::Result<DeviceInfo, DriverError> {
    let attr = |a| ctx.attribute(a).map(|v| v.max(0) as usize);
    Ok(DeviceInfo {
        ordinal: ctx.ordinal(),
        name: ctx.name()?,
        compute_capability: ctx.compute_capability()?,
        multiprocessors: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        max_threads_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        max_threads_per_multiprocessor: attr(
            Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
        )?,
        total_memory: ctx.total_mem()?,
    })
}

/// Describe every device without creating a context.
fn list_devices() -> std::result::Result<Vec<DeviceInfo>, (String, DriverError)> {
    cu::init().map_err(|e| ("cuInit".to_string(), e))?;
    let count = cu::device::get_count().map_err(|e| ("cuDeviceGetCount".to_string(), e))?;
    (0..count)
        .map(|i| {
            let call = |c: &str| format!("{c}({i})");
            let dev = cu::device::get(i).map_err(|e| (call("cuDeviceGet"), e))?;
            // SAFETY: `dev` is a valid device handle from cuDeviceGet.
            let attr = |a| unsafe { cu::device::get_attribute(dev, a) }.map(|v| v.max(0) as usize);
            let info = || -> std::result::Result<DeviceInfo, DriverError> {
                Ok(DeviceInfo {
                    ordinal: i as usize,
                    name: cu::device::get_name(dev)?,
                    compute_capability: (
                        attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)? as i32,
                        attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)? as i32,
                    ),
                    multiprocessors: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
                    max_threads_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
                    max_threads_per_multiprocessor: attr(
                        Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                    )?,
                    // SAFETY: as above.
                    total_memory: unsafe { cu::device::total_mem(dev) }?,
                })
            };
            info().map_err(|e| (call("cuDeviceGetAttribute"), e))
        })
        .collect()
}

/// Number of CUDA devices, or why they cannot be counted (no driver, driver error).
pub fn device_count() -> Result<usize> {
    probe::driver()?;
    match probe::guarded("counting CUDA devices", || {
        cu::init()?;
        cu::device::get_count()
    })? {
        Ok(c) => Ok(c.max(0) as usize),
        Err(e) => Err(init_error("cuInit / cuDeviceGetCount", e)),
    }
}

/// Status of the CUDA backend for `pipekrylov info`: every device with its name, memory and
/// compute capability, or why the backend cannot be used here (with device 0 chosen).
pub fn status() -> BackendStatus {
    status_for(None)
}

/// [`status`] with device `ordinal` chosen (`None`: device 0, the default of
/// [`crate::backend::BackendConfig::cuda_device`]).
pub fn status_for(ordinal: Option<usize>) -> BackendStatus {
    let mut st = BackendStatus {
        name: "cuda",
        compiled: true,
        available: false,
        devices: Vec::new(),
        note: String::new(),
    };
    if let Err(e) = probe::driver() {
        st.note = reason_of(e);
        return st;
    }
    let devices = match probe::guarded("listing CUDA devices", list_devices) {
        Err(e) => {
            st.note = reason_of(e);
            return st;
        }
        Ok(Err((call, e))) => {
            st.note = format!("{call}: {}", driver_message(e));
            return st;
        }
        Ok(Ok(d)) => d,
    };
    st.devices = devices.iter().map(DeviceInfo::describe).collect();
    if devices.is_empty() {
        st.note = "no CUDA device".into();
        return st;
    }
    if let Err(e) = probe::nvrtc() {
        st.note = reason_of(e);
        return st;
    }
    let wanted = ordinal.unwrap_or(0);
    if wanted >= devices.len() {
        st.note = format!(
            "{DEVICE_ENV}={wanted} but only {} device(s) are present",
            devices.len()
        );
        return st;
    }
    st.available = true;
    st.note = format!("auto would use device {wanted} ({DEVICE_ENV} to choose)");
    st
}

fn reason_of(e: Error) -> String {
    match e {
        Error::BackendUnavailable { reason, .. } => reason,
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_is_a_power_of_two_within_the_device_limit() {
        assert_eq!(block_size(1024), 256);
        assert_eq!(block_size(256), 256);
        assert_eq!(block_size(192), 128);
        assert_eq!(block_size(64), 64);
        assert_eq!(block_size(1), 32);
    }

    #[test]
    fn status_never_panics() {
        let st = status();
        assert_eq!(st.name, "cuda");
        assert!(st.compiled);
        if !st.available {
            assert!(!st.note.is_empty());
        }
    }

    /// A sticky fault (a CSR column index far outside x) poisons the backend. Runs alone in
    /// this test binary's CUDA context: the fault breaks the device's primary context for the
    /// whole process.
    #[test]
    #[ignore = "needs an NVIDIA GPU"]
    fn illegal_address_poisons_the_backend() {
        use crate::backend::{SpmvOps, VectorOps};
        let cuda = CudaBackend::from_env().unwrap();
        let n = 1024;
        let bad = crate::backend::matrix::out_of_bounds_csr(&cuda, n);
        let x = cuda.upload(&vec![1.0f64; n]).unwrap();
        let mut y = cuda.alloc::<f64>(n).unwrap();
        // The launch itself may succeed; the fault shows at the next synchronization.
        let first = cuda.spmv(&bad, &x, &mut y).and_then(|_| cuda.synchronize());
        assert!(
            matches!(first, Err(Error::DeviceFault { .. })),
            "expected a device fault, got {first:?}"
        );
        assert!(cuda.is_poisoned());
        let later = cuda.alloc::<f64>(4);
        assert!(matches!(later, Err(Error::DeviceFault { .. })), "{later:?}");
        let later = cuda.download(&x);
        assert!(matches!(later, Err(Error::DeviceFault { .. })), "{later:?}");
    }
}
