//! The caller's OpenCL memory: buffers over `cl_mem` objects created outside the crate (in this
//! backend's context), used in place by the kernels and copies, and the handles a caller needs
//! to create them.

use super::cl::{self, Mem};
use super::memory::raw;
use super::raw::RawBuffer;
use super::OpenClBackend;
use crate::backend::buffer::{Buffer, Storage};
use crate::error::{Error, Result};
use bytemuck::Pod;
use ocl::ffi;
use std::ffi::c_void;

impl OpenClBackend {
    /// This backend's `cl_context`, in which a caller creates the buffers it hands to
    /// [`OpenClBackend::borrow_cl_mem`] (a handle the backend keeps; retain it to keep it
    /// beyond the backend). Every backend of the process on the same device has the same
    /// context (its programs are built once, see the module documentation), but a buffer
    /// made by one backend is still refused by another.
    pub fn raw_context(&self) -> *mut c_void {
        self.shared.context.0.cast()
    }

    /// This backend's command queue: the caller's own commands on borrowed buffers go there
    /// (or the caller finishes its queue before a solve reads them).
    pub fn raw_queue(&self) -> *mut c_void {
        self.queue.0.cast()
    }

    /// The `cl_mem` of a buffer of this backend (to hand to other OpenCL code; the buffer
    /// keeps it alive), or [`Error::WrongBackend`] for another backend's buffer.
    pub fn cl_mem<T: Pod>(&self, buffer: &Buffer<T>) -> Result<*mut c_void> {
        let r = raw(buffer)?;
        if r.owner != self.owner {
            return Err(Error::WrongBackend {
                expected: "opencl (this context)".into(),
                found: "opencl (another context)".into(),
            });
        }
        Ok(r.mem.0.cast())
    }

    /// A buffer over a memory object the caller created (`clCreateBuffer` in
    /// [`OpenClBackend::raw_context`]): `len` elements of `T` from its start, used in place by
    /// this backend's kernels and copies. The buffer holds its own reference to the object
    /// (retained here, released when the buffer is dropped): the caller may release its
    /// reference whenever it likes, and the memory is freed when both are gone.
    ///
    /// Checked: `mem` is not NULL, is a buffer (not an image) of this backend's context, and
    /// holds the `len` elements; each failure is an [`Error::InvalidParameter`].
    ///
    /// # Safety
    /// `mem` is NULL or a valid `cl_mem` (OpenCL cannot tell a dangling handle from a live
    /// one). The caller orders its own work on the memory with this backend's: its commands on
    /// another queue are finished before a solve reads the buffer, and it reads the results
    /// after the call returns (the backend's calls return with their work complete). Nothing
    /// else writes the memory while a solve uses it.
    pub unsafe fn borrow_cl_mem<T: Pod>(&self, mem: *mut c_void, len: usize) -> Result<Buffer<T>> {
        let bad = |why: String| Error::param("cl_mem", why);
        if mem.is_null() {
            return Err(bad("the memory object is NULL".into()));
        }
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| bad(format!("{len} elements overflow the address space")))?;
        let mem: ffi::cl_mem = mem.cast();
        // SAFETY: a valid memory object (the caller's promise); each query writes one value of
        // the type the OpenCL specification gives it.
        let (object_type, context, size) = unsafe {
            (
                info::<ffi::cl_mem_object_type>(mem, ffi::CL_MEM_TYPE, 0),
                info::<ffi::cl_context>(mem, ffi::CL_MEM_CONTEXT, std::ptr::null_mut()),
                info::<usize>(mem, ffi::CL_MEM_SIZE, 0),
            )
        };
        let (object_type, context, size) = match (object_type, context, size) {
            (Ok(t), Ok(c), Ok(s)) => (t, c, s),
            (Err(code), _, _) | (_, Err(code), _) | (_, _, Err(code)) => {
                return Err(bad(format!(
                    "clGetMemObjectInfo failed ({}): not a memory object",
                    cl::status_name(code)
                )))
            }
        };
        if object_type != ffi::CL_MEM_OBJECT_BUFFER {
            return Err(bad("the memory object is not a buffer".into()));
        }
        if context != self.shared.context.0 {
            return Err(bad(
                "the buffer belongs to another OpenCL context than this backend's \
                 (create it in OpenClBackend::raw_context)"
                    .into(),
            ));
        }
        if bytes > size {
            return Err(bad(format!(
                "{len} elements ({bytes} bytes) do not fit in the buffer's {size} bytes"
            )));
        }
        let queue = cl::retain_queue(&self.queue).map_err(|e| self.record(e))?;
        // SAFETY: a valid memory object; the reference taken here is the one `Mem` releases.
        let code = unsafe { ffi::clRetainMemObject(mem) };
        if code != ffi::CL_SUCCESS {
            return Err(bad(format!(
                "clRetainMemObject failed ({})",
                cl::status_name(code)
            )));
        }
        let raw = RawBuffer::new(Mem(mem), size, self.owner, queue);
        Ok(Buffer::from_storage(len, Storage::OpenCl(raw), None))
    }
}

/// One `clGetMemObjectInfo` value of type `V` (written over `init`), or the status code.
///
/// # Safety
/// `mem` is a valid memory object and `V` the type of `param`'s value.
unsafe fn info<V>(
    mem: ffi::cl_mem,
    param: ffi::cl_mem_info,
    init: V,
) -> std::result::Result<V, i32> {
    let mut value = init;
    // SAFETY: the caller's promise; `value` has the size passed.
    let code = unsafe {
        ffi::clGetMemObjectInfo(
            mem,
            param,
            std::mem::size_of::<V>(),
            (&mut value as *mut V).cast(),
            std::ptr::null_mut(),
        )
    };
    if code == ffi::CL_SUCCESS {
        Ok(value)
    } else {
        Err(code)
    }
}
