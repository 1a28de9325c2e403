//! One typed launch for every runtime: a kernel family whose operations are written against
//! [`KernelRuntime`] needs no per-backend file. Its operation checks the arguments once, then
//! either runs the host reference on the host backend's slices or launches the kernel of
//! `kernels/<family>.kc` by its typed name on whichever GPU runtime the backend is
//! (`src/backend/ops/sparse.rs` and `ops/amg_setup.rs` are written this way).

use super::buffer::{Buffer, Storage};
use super::ops::Kernel;
use crate::error::{Error, Result};
use crate::scalar::{Precision, Scalar};
use bytemuck::Pod;

/// The most arguments a kernel takes (the runtimes convert them on the stack).
#[cfg(any(feature = "cuda", feature = "opencl"))]
pub(crate) const MAX_KERNEL_ARGS: usize = 64;

/// [`MAX_KERNEL_ARGS`] checked for `kernel`'s `count` arguments.
#[cfg(any(feature = "cuda", feature = "opencl"))]
pub(crate) fn check_arg_count(kernel: Kernel, count: usize) -> Result<()> {
    if count > MAX_KERNEL_ARGS {
        return Err(Error::param(
            "kernel arguments",
            format!(
                "{} arguments for `{}`, at most {MAX_KERNEL_ARGS}",
                count,
                kernel.name()
            ),
        ));
    }
    Ok(())
}

/// What runs a backend's kernels ([`super::BackendInfo::kernel_runtime`]).
#[doc(hidden)]
pub enum KernelRuntime<'a> {
    /// The host backend: the operations run their host reference.
    Host(std::marker::PhantomData<&'a ()>),
    /// A GPU runtime (OpenCL, CUDA).
    Gpu(GpuRuntime<'a>),
}

/// A GPU backend as a [`KernelRuntime`] (it implements [`GpuLaunch`]).
#[doc(hidden)]
pub struct GpuRuntime<'a>(pub(crate) &'a dyn GpuLaunch);

/// What a GPU runtime does for the operations written once: the element-wise grid and one
/// launch by typed name with runtime-neutral arguments. Implemented by the OpenCL and CUDA
/// backends, so that this floor names neither.
pub(crate) trait GpuLaunch {
    /// Work-groups for an element-wise kernel over `n` items (before clamping to `1..=n`).
    fn elementwise_groups(&self, n: usize) -> usize;

    /// Work-groups of the first stage of a reduction over `n` elements (the groups of the
    /// partials the solvers allocate).
    fn reduction_groups(&self, n: usize) -> usize;

    /// Work-items per work-group of every kernel (`WG`).
    fn work_group_size(&self) -> usize;

    /// Work-groups of a product over rows that writes no partials (plain CSR over its rows
    /// times their lanes, BSR, the long-row pre-pass), over `n` items: CUDA's element-wise
    /// grid, OpenCL's reduction plan (measured 3-7% faster per CG + AMG iteration at 16.8M on
    /// NVIDIA OpenCL, whose finest products of one lane the element-wise grid gave twice the
    /// groups: `bench/log/2026-11-30-amg-jacobi-weight.md`).
    fn row_product_groups(&self, n: usize) -> usize;

    /// Whether a kernel of `groups` work-groups lets the next launch on the queue be scheduled
    /// once it has passed its own wait (CUDA's programmatic dependent launch, where both fit on
    /// separate multiprocessors); the kernels that take it read it as `uint start_next`.
    fn starts_next_early(&self, groups: usize) -> bool;

    /// Whether the tuning's per-runtime defaults are CUDA's (the `cuda` argument of
    /// [`Tuning::cg_fused_for`](crate::backend::tuning::Tuning::cg_fused_for) and its siblings).
    fn tuned_as_cuda(&self) -> bool;

    /// The `k, early` arguments of the plain CSR kernels (`spmv_dots_csr` and the resident
    /// kernels that run its rows) for a matrix of `nnz` entries in `rows` rows: the lanes per
    /// row, and CUDA's early matrix reads (`uploaded`: only copies wrote its arrays) and early
    /// start of the next kernel (`may_start_next`), 0 on OpenCL.
    fn csr_lanes_and_early(
        &self,
        nnz: usize,
        rows: usize,
        uploaded: bool,
        may_start_next: bool,
    ) -> (u32, u32);

    /// Launch `kernel` in `precision` with `groups` work-groups, each argument converted to
    /// the runtime's (a buffer of another backend is [`Error::WrongBackend`]).
    ///
    /// # Safety
    /// As for [`KernelRuntime::launch`].
    unsafe fn launch_kernel(
        &self,
        kernel: Kernel,
        precision: Precision,
        groups: usize,
        args: &[KernelArg<'_>],
    ) -> Result<()>;
}

/// A buffer's storage as a kernel argument (type-erased).
#[derive(Clone, Copy)]
pub(crate) enum BufferArg<'a> {
    /// Host memory (never launched).
    Host(std::marker::PhantomData<&'a ()>),
    /// An OpenCL buffer.
    #[cfg(feature = "opencl")]
    OpenCl(&'a super::opencl::raw::RawBuffer),
    /// A CUDA allocation.
    #[cfg(feature = "cuda")]
    Cuda(&'a super::cuda::memory::RawBuffer),
}

/// One kernel argument, the same for every runtime.
#[derive(Clone, Copy)]
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub(crate) enum KernelArg<'a> {
    /// A `__global` buffer.
    Buffer(BufferArg<'a>),
    /// `uint`.
    U32(u32),
    /// `SCALAR` = float.
    F32(f32),
    /// `SCALAR` = double.
    F64(f64),
    /// `ulong` (an element offset).
    U64(u64),
    /// `int` (an optional slot, -1 for none).
    I32(i32),
    /// A `__global` buffer the kernel never reads (a partner vector or partials whose slot is
    /// off, absent 16-bit column offsets): a null pointer on CUDA, another buffer of the same
    /// launch on OpenCL.
    Unused,
}

impl<'a> KernelArg<'a> {
    /// `b` as a `__global` pointer.
    pub(crate) fn buffer<T: Pod>(b: &'a Buffer<T>) -> Self {
        KernelArg::Buffer(match &b.storage {
            Storage::Host(_) => BufferArg::Host(std::marker::PhantomData),
            #[cfg(feature = "opencl")]
            Storage::OpenCl(r) => BufferArg::OpenCl(r),
            #[cfg(feature = "cuda")]
            Storage::Cuda(r) => BufferArg::Cuda(r),
        })
    }

    /// `v` as the kernel's `SCALAR`.
    pub(crate) fn scalar<T: Scalar>(v: T) -> Self {
        match T::PRECISION {
            Precision::F32 => KernelArg::F32(v.to_f64() as f32),
            Precision::F64 => KernelArg::F64(v.to_f64()),
        }
    }

    /// A length or count as a `uint` below 2^31 (the kernels' loop bound).
    pub(crate) fn len(what: &str, n: usize) -> Result<Self> {
        if n > i32::MAX as usize {
            return Err(Error::IndexOverflow {
                what: format!("{what} on a GPU backend"),
                value: n,
                max: i32::MAX as usize,
            });
        }
        Ok(KernelArg::U32(n as u32))
    }

    /// An index, count or slot as a `uint` (an error above 2^32 - 1).
    pub(crate) fn index(what: &str, v: usize) -> Result<Self> {
        u32::try_from(v)
            .map(KernelArg::U32)
            .map_err(|_| Error::param(what, format!("{v} does not fit a 32-bit kernel argument")))
    }

    /// A required partials slot as a `uint`.
    pub(crate) fn slot(slot: crate::backend::partials::Slot) -> Result<Self> {
        Self::index("slot", slot.0)
    }

    /// An optional partials slot as an `int` (-1: not wanted).
    pub(crate) fn opt_slot(slot: Option<crate::backend::partials::Slot>) -> Result<Self> {
        opt_slot_value(slot).map(KernelArg::I32)
    }

    /// An element offset as a `ulong`.
    pub(crate) fn offset(off: usize) -> Self {
        KernelArg::U64(off as u64)
    }
}

/// An optional partials slot as a kernel's `int`: -1 for none, an error above `i32::MAX`.
pub(crate) fn opt_slot_value(slot: Option<crate::backend::partials::Slot>) -> Result<i32> {
    match slot {
        None => Ok(-1),
        Some(s) => i32::try_from(s.0).map_err(|_| {
            Error::param(
                "slot",
                format!("slot {} too large for a device kernel", s.0),
            )
        }),
    }
}

impl GpuRuntime<'_> {
    /// Launch `kernel` of precision `T` with `groups` work-groups.
    ///
    /// # Safety
    /// As for [`KernelRuntime::launch`].
    pub(crate) unsafe fn launch<T: Scalar>(
        &self,
        kernel: Kernel,
        groups: usize,
        args: &[KernelArg<'_>],
    ) -> Result<()> {
        // SAFETY: as for this function.
        unsafe { self.0.launch_kernel(kernel, T::PRECISION, groups, args) }
    }

    /// Work-groups for an element-wise kernel over `n` items.
    pub(crate) fn elementwise_groups(&self, n: usize) -> usize {
        self.0.elementwise_groups(n).max(1).min(n.max(1))
    }

    /// Work-groups of the first stage of a reduction over `n` elements.
    pub(crate) fn reduction_groups(&self, n: usize) -> usize {
        self.0.reduction_groups(n)
    }

    /// Work-items per work-group.
    pub(crate) fn work_group_size(&self) -> usize {
        self.0.work_group_size()
    }

    /// [`GpuLaunch::row_product_groups`].
    pub(crate) fn row_product_groups(&self, n: usize) -> usize {
        self.0.row_product_groups(n)
    }

    /// [`GpuLaunch::tuned_as_cuda`].
    pub(crate) fn tuned_as_cuda(&self) -> bool {
        self.0.tuned_as_cuda()
    }

    /// [`GpuLaunch::csr_lanes_and_early`].
    pub(crate) fn csr_lanes_and_early(
        &self,
        nnz: usize,
        rows: usize,
        uploaded: bool,
        may_start_next: bool,
    ) -> (u32, u32) {
        self.0
            .csr_lanes_and_early(nnz, rows, uploaded, may_start_next)
    }

    /// [`GpuLaunch::starts_next_early`] as the kernels' `uint start_next`.
    pub(crate) fn start_next(&self, groups: usize) -> KernelArg<'static> {
        KernelArg::U32(u32::from(self.0.starts_next_early(groups)))
    }
}

impl KernelRuntime<'_> {
    /// The GPU runtime, or [`Error::Unsupported`] naming `operation` on the host backend
    /// (for an operation that has no host reference here: the host backend implements it).
    pub(crate) fn gpu(&self, operation: &str) -> Result<&GpuRuntime<'_>> {
        match self {
            KernelRuntime::Gpu(gpu) => Ok(gpu),
            KernelRuntime::Host(_) => Err(Error::Unsupported(format!(
                "`{operation}` has no host reference: a backend whose kernels run on the host \
                 implements it"
            ))),
        }
    }

    /// Whether the host runs the operations (the host backend).
    pub(crate) fn is_host(&self) -> bool {
        matches!(self, KernelRuntime::Host(_))
    }

    /// Work-groups for an element-wise kernel over `n` items (no partials written).
    pub(crate) fn elementwise_groups(&self, n: usize) -> usize {
        match self {
            KernelRuntime::Gpu(gpu) => gpu.elementwise_groups(n),
            KernelRuntime::Host(_) => 1,
        }
    }

    /// Launch `kernel` of precision `T` with `groups` work-groups.
    ///
    /// # Safety
    /// `args` must match the parameter list of `kernel` in `kernels/` in number, order and
    /// types, and every buffer must cover every element the kernel touches for the sizes
    /// passed (the calling operation checks them); a kernel that writes partials must get
    /// their group count.
    #[cfg_attr(
        not(any(feature = "cuda", feature = "opencl")),
        allow(unused_variables, clippy::extra_unused_type_parameters)
    )]
    pub(crate) unsafe fn launch<T: Scalar>(
        &self,
        kernel: Kernel,
        groups: usize,
        args: &[KernelArg<'_>],
    ) -> Result<()> {
        match self {
            // SAFETY: as for this function.
            KernelRuntime::Gpu(gpu) => unsafe { gpu.launch::<T>(kernel, groups, args) },
            KernelRuntime::Host(_) => Err(Error::Unsupported(format!(
                "kernel `{}` launched on the host backend (it runs the host reference)",
                kernel.name()
            ))),
        }
    }

    /// [`Self::launch`] with the element-wise grid for `n` items.
    ///
    /// # Safety
    /// As for [`Self::launch`] (the kernel writes no partials).
    pub(crate) unsafe fn launch_items<T: Scalar>(
        &self,
        kernel: Kernel,
        n: usize,
        args: &[KernelArg<'_>],
    ) -> Result<()> {
        // SAFETY: as for this function.
        unsafe { self.launch::<T>(kernel, self.elementwise_groups(n), args) }
    }
}

/// The default body of an ops-trait method with a host reference: `launch::op(&rt, args)` on a
/// GPU backend, `reference::op(self, args)` otherwise (both modules as named where it is used).
macro_rules! launch_or_reference {
    ($self:ident, $op:ident($($arg:expr),* $(,)?)) => {
        match $self.kernel_runtime() {
            $crate::backend::launch::KernelRuntime::Gpu(rt) => launch::$op(&rt, $($arg),*),
            $crate::backend::launch::KernelRuntime::Host(_) => reference::$op($self, $($arg),*),
        }
    };
}
pub(crate) use launch_or_reference;
