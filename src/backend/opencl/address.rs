//! Device-address arguments: buffers passed to kernels by value as their device address
//! instead of as `cl_mem` arguments.
//!
//! Why: NVIDIA's OpenCL runtime spends about 0.25 us of host time per `cl_mem` argument of every
//! launch (measured on the H200 with `examples/probes/opencl_launch_cost.rs`: a kernel with 8 buffer
//! arguments costs 5.6 us per enqueue, with 8 by-value arguments 3.8 us; CUDA launches cost
//! ~3.1 us whatever the pointer count). With the 8 buffers of a fused SpMV that is most of the
//! gap between OpenCL and CUDA for small systems.
//!
//! How: the programs are built with `-D PK_ADDRESS_ARGS`, which turns every `PK_GLOBAL(T, x)`
//! parameter into a `ulong` that the kernel casts back to `__global T *` (see
//! `kernels/dialect/opencl.h`). A buffer's address is read once, the first time the buffer is passed
//! to a kernel, with the `buffer_address` kernel (which takes it as a normal `cl_mem`), and cached
//! in the buffer. The OpenCL specification does not promise that such an address stays valid or
//! that a kernel may use memory it did not get as an argument; NVIDIA's implementation
//! (one device per context, no migration) does both. So the mode is:
//! - on by default only for NVIDIA GPUs, and the tuning's
//!   [`opencl_address_args`](crate::backend::tuning::Tuning::opencl_address_args) forces it
//!   (`PIPEKRYLOV_OPENCL_ADDRESS_ARGS=0|1` on the command line);
//! - checked when each program is built: a kernel writes through an address and the buffer is
//!   read back through its `cl_mem`; on a mismatch the program is rebuilt without the mode;
//! - paired with a queue drain before a buffer whose address was handed out is released (the
//!   runtime does not know which queued kernels use it).

use super::cl::BACKEND;
use super::launch::{self, Arg};
use super::program::CompiledProgram;
use super::raw::RawBuffer;
use super::OpenClBackend;
use crate::error::{Error, Result};
use crate::scalar::Precision;
use ocl::ffi;
use std::sync::atomic::Ordering;

impl OpenClBackend {
    /// Read the device address of every buffer argument that has none yet (one
    /// `buffer_address` launch and an 8-byte read each), with the program lock held by the
    /// caller (`prog`).
    pub(crate) fn resolve_addresses(
        &self,
        prog: &mut CompiledProgram,
        args: &[Arg<'_>],
    ) -> Result<()> {
        for arg in args {
            if let Arg::Mem(buf) = arg {
                if buf.device_address() == 0 {
                    let mut out = self
                        .address_out
                        .lock()
                        .map_err(|_| Error::param("opencl", "address buffer lock poisoned"))?;
                    self.read_address(prog, buf, &mut out, false)?;
                }
            }
        }
        Ok(())
    }

    /// Read a new buffer's device address now, while the queue is idle, if a program with
    /// device-address arguments is built and free (else it is read at its first launch, which
    /// waits for the queue).
    pub(crate) fn resolve_address_early(&self, buf: &RawBuffer) -> Result<()> {
        self.address_while_idle(buf, false).map(|_| ())
    }

    /// Wait for a new memory object's first command (its fill or upload: a lazy allocation
    /// fails there, as [`Error::OutOfMemory`]) and read its device address, in one wait when a
    /// program with device-address arguments is built and free; else with a `clFinish`, the
    /// address then read at the buffer's first launch.
    pub(crate) fn wait_for_new_buffer(&self, buf: &RawBuffer) -> Result<()> {
        if self.address_while_idle(buf, true)? {
            return Ok(());
        }
        let mark = self.pool.mark();
        // SAFETY: valid queue.
        let code = unsafe { ffi::clFinish(self.queue.0) };
        if code != ffi::CL_SUCCESS {
            return Err(self.alloc_error("clFinish (after allocation)", buf.bytes, code));
        }
        self.queue_idle(mark);
        Ok(())
    }

    /// [`OpenClBackend::resolve_address_early`]; with `first_wait`, the read is the new memory
    /// object's first wait (its failure mapped as an allocation's). Whether the address was
    /// read.
    fn address_while_idle(&self, buf: &RawBuffer, first_wait: bool) -> Result<bool> {
        if buf.device_address() != 0 {
            return Ok(false);
        }
        // Not while an address is being read: `buf` may be the slab that the read's own output
        // buffer is carved from, on this thread (a blocking lock would wait for itself).
        let Ok(mut out) = self.address_out.try_lock() else {
            return Ok(false);
        };
        for slot in self.programs.iter().chain(self.ptx.programs.iter()) {
            let Ok(mut guard) = slot.try_lock() else {
                continue;
            };
            if let Some(prog) = guard.as_mut().filter(|p| p.address_args) {
                self.read_address(prog, buf, &mut out, first_wait)?;
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Launch `buffer_address` on `buf` and store the result in it, with the output buffer's
    /// lock held by the caller (`out_guard`); with `first_wait`, a failed read is reported as
    /// a failed allocation of `buf` ([`OpenClBackend::wait_for_new_buffer`]).
    fn read_address(
        &self,
        prog: &mut CompiledProgram,
        buf: &RawBuffer,
        out_guard: &mut Option<RawBuffer>,
        first_wait: bool,
    ) -> Result<u64> {
        if out_guard.is_none() {
            *out_guard = Some(self.create_raw::<u64>(1)?);
        }
        let out = out_guard.as_ref().ok_or_else(Self::not_built)?;
        let kernel = prog
            .kernels
            .get_mut("buffer_address")
            .ok_or_else(|| Error::Unsupported("OpenCL kernel `buffer_address` missing".into()))?;
        launch::enqueue(
            &self.queue,
            kernel,
            "buffer_address",
            &[Arg::Mem(buf), Arg::Mem(out)],
            (1, self.wg),
            false,
        )
        .map_err(|e| self.record(e))?;
        let mut address = [0u64];
        if first_wait {
            self.read_after_allocation(out, &mut address[0], buf.bytes)?;
        } else {
            self.read_raw(out, &mut address)?;
        }
        if address[0] == 0 {
            return Err(Error::Driver {
                backend: BACKEND.into(),
                call: "buffer_address".into(),
                message: "the device reported address 0 for a buffer".into(),
            });
        }
        buf.address.store(address[0], Ordering::Release);
        Ok(address[0])
    }

    /// Blocking read of the address `out` holds, the first wait of a new memory object of
    /// `bytes` bytes (a lazy allocation failure is reported as [`Error::OutOfMemory`]).
    fn read_after_allocation(
        &self,
        out: &RawBuffer,
        address: &mut u64,
        bytes: usize,
    ) -> Result<()> {
        let mark = self.pool.mark();
        // SAFETY: blocking read of 8 bytes into `address`, which outlives the call, from a
        // buffer of at least 8 bytes (`create_raw::<u64>(1)`).
        let code = unsafe {
            ffi::clEnqueueReadBuffer(
                self.queue.0,
                out.mem.0,
                ffi::CL_TRUE,
                0,
                std::mem::size_of::<u64>(),
                (address as *mut u64).cast(),
                0,
                std::ptr::null(),
                std::ptr::null_mut(),
            )
        };
        if code != ffi::CL_SUCCESS {
            return Err(self.alloc_error("clEnqueueReadBuffer (after allocation)", bytes, code));
        }
        self.queue_idle(mark);
        Ok(())
    }

    /// [`address_args_work`](Self::address_args_work), run once per program in the process: a
    /// later backend takes the verdict the first one found (`shared.rs`).
    pub(crate) fn address_args_checked(
        &self,
        prog: &mut CompiledProgram,
        precision: Precision,
    ) -> Result<bool> {
        let built = std::sync::Arc::clone(&prog.built);
        let mut verdict = built
            .addresses_work
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(works) = *verdict {
            return Ok(works);
        }
        let works = self.address_args_work(prog, precision)?;
        *verdict = Some(works);
        Ok(works)
    }

    /// Whether a program built with `-D PK_ADDRESS_ARGS` really writes where the address says:
    /// `fill` through the address of a fresh buffer, read back through its `cl_mem`.
    pub(crate) fn address_args_work(
        &self,
        prog: &mut CompiledProgram,
        precision: Precision,
    ) -> Result<bool> {
        const LEN: usize = 37;
        let (value, bytes): ([u8; 8], usize) = match precision {
            Precision::F32 => {
                let mut v = [0u8; 8];
                v[..4].copy_from_slice(&1.5f32.to_ne_bytes());
                (v, 4)
            }
            Precision::F64 => (1.5f64.to_ne_bytes(), 8),
        };
        let buf = self.create_raw::<u64>(LEN)?;
        self.write_raw(&buf, &[0u64; LEN])?;
        self.resolve_addresses(prog, &[Arg::Mem(&buf)])?;
        let kernel = prog
            .kernels
            .get_mut("fill")
            .ok_or_else(|| Error::Unsupported("OpenCL kernel `fill` missing".into()))?;
        launch::enqueue(
            &self.queue,
            kernel,
            "fill",
            &[
                Arg::Mem(&buf),
                Arg::uint(LEN as u32),
                Arg::Value(value, bytes),
            ],
            (1, self.wg),
            true,
        )
        .map_err(|e| self.record(e))?;
        let mut back = [0u64; LEN];
        self.read_raw(&buf, &mut back)?;
        let raw: &[u8] = bytemuck::cast_slice(&back);
        Ok(raw
            .chunks_exact(bytes)
            .take(LEN)
            .all(|c| c == &value[..bytes]))
    }

    /// Ask for device-address arguments (`true`) or plain `cl_mem` arguments (`false`),
    /// overriding the default and the tuning's `opencl_address_args`. Programs already built are
    /// dropped and rebuilt at the next launch; `true` still falls back to plain arguments when
    /// the check of the module documentation fails (see [`OpenClBackend::uses_address_args`]).
    pub fn set_address_args(&mut self, on: bool) {
        self.address_wanted.store(on, Ordering::Relaxed);
        self.drop_programs();
    }

    /// Whether the programs pass buffers as device addresses (see the module documentation):
    /// `None` before the first program was built.
    pub fn uses_address_args(&self) -> Option<bool> {
        self.built_program_property(|p| p.address_args)
    }

    /// Whether the kernels of the inline-PTX program (the SpMV kernels with load hints, the warp
    /// growth of the adaptive FSAI) really have it for `precision`, building it if needed:
    /// false on devices other than NVIDIA GPUs, with the tuning's
    /// [`opencl_inline_ptx`](crate::backend::Tuning::opencl_inline_ptx) off, or where the driver refused the
    /// inline PTX (those kernels then run the portable code).
    pub fn uses_inline_ptx(&self, precision: Precision) -> Result<bool> {
        let guard = self.program_for(precision, super::program::PTX_KERNELS[0])?;
        Ok(guard.as_ref().is_some_and(|p| p.inline_ptx))
    }

    /// Attempt the inline-PTX program whatever the device (testing: elsewhere than on NVIDIA
    /// GPUs the driver refuses it, and its kernels must then run the portable code); the
    /// programs are rebuilt at the next launch.
    #[doc(hidden)]
    pub fn attempt_inline_ptx(&mut self) {
        self.ptx.wanted = true;
        *self
            .ptx
            .refusal
            .get_mut()
            .unwrap_or_else(|p| p.into_inner()) = None;
        self.drop_programs();
    }

    /// The driver's binary of the library's portable program for `precision`, or with
    /// `inline_ptx` of the program that runs the inline-PTX kernels (built first if needed; PTX
    /// text on NVIDIA's platform), for inspecting the generated code.
    #[doc(hidden)]
    pub fn program_binary(&self, precision: Precision, inline_ptx: bool) -> Result<Vec<u8>> {
        let guard = if inline_ptx {
            self.program_for(precision, super::program::PTX_KERNELS[0])?
        } else {
            self.program(precision)?
        };
        match guard.as_ref() {
            Some(p) => super::program::program_binary(&p.built.program),
            None => Err(Self::not_built()),
        }
    }

    /// Forget the built programs (rebuilt at the next launch with the current settings).
    pub(crate) fn drop_programs(&mut self) {
        for p in self.programs.iter_mut().chain(self.ptx.programs.iter_mut()) {
            *p.get_mut().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }

    /// `property` of the first built program (portable ones first), `None` before any was
    /// built.
    pub(crate) fn built_program_property(
        &self,
        property: impl Fn(&CompiledProgram) -> bool,
    ) -> Option<bool> {
        self.programs
            .iter()
            .chain(self.ptx.programs.iter())
            .filter_map(|p| p.lock().ok().and_then(|g| g.as_ref().map(&property)))
            .next()
    }
}

impl OpenClBackend {
    /// Ask for packed arguments (`true`, the default) or one OpenCL argument per parameter
    /// (`false`), overriding the tuning's `opencl_packed_args`. Only programs with device-address
    /// arguments pack; programs already built are dropped and rebuilt at the next launch.
    pub fn set_packed_args(&mut self, on: bool) {
        self.packed_wanted.store(on, Ordering::Relaxed);
        self.drop_programs();
    }

    /// Whether the programs take packed arguments (see the module documentation): `None` before
    /// the first program was built.
    pub fn uses_packed_args(&self) -> Option<bool> {
        self.built_program_property(|p| p.packed_args)
    }
}
