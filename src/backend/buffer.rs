//! Typed device buffers. The storage is backend-specific; the element type is `Pod` data only.

use crate::error::{Error, Result};
use bytemuck::Pod;

/// Backend-specific storage behind a [`Buffer`].
pub enum Storage<T> {
    /// Host memory (the host backend).
    Host(Vec<T>),
    /// An OpenCL buffer.
    #[cfg(feature = "opencl")]
    OpenCl(crate::backend::opencl::raw::RawBuffer),
    /// A CUDA device allocation.
    #[cfg(feature = "cuda")]
    Cuda(crate::backend::cuda::memory::RawBuffer),
}

/// A typed array owned by one backend. Created by the backend's `alloc` / `upload`, read back
/// with `read` / `download`. Using a buffer with another backend kind is an
/// [`Error::WrongBackend`], never undefined behaviour.
pub struct Buffer<T> {
    len: usize,
    /// The buffer's bytes in its backend's [`super::MemoryUse`] (`None`: not counted, a
    /// borrowed or shared buffer). Dropped before the storage, which a backend may keep for
    /// reuse and count again.
    _ticket: Option<super::counters::LedgerTicket>,
    pub(crate) storage: Storage<T>,
}

impl<T: Pod> Buffer<T> {
    /// Wrap storage of `len` elements (backend implementations only), counted by `ticket` in
    /// its backend's memory use while it lives.
    pub(crate) fn from_storage(
        len: usize,
        storage: Storage<T>,
        ticket: Option<super::counters::LedgerTicket>,
    ) -> Self {
        Self {
            len,
            storage,
            _ticket: ticket,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the buffer holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Identity of the storage (host or device address, OpenCL buffer id): a recording of
    /// kernel launches that used this buffer may be replayed for it.
    pub(crate) fn identity(&self) -> u64 {
        match &self.storage {
            Storage::Host(v) => v.as_ptr() as usize as u64,
            #[cfg(feature = "opencl")]
            Storage::OpenCl(r) => r.id,
            #[cfg(feature = "cuda")]
            Storage::Cuda(r) => r.ptr(),
        }
    }

    /// A second buffer on the same device memory (CUDA, OpenCL: freed when both are dropped),
    /// or `None` on the host backend. For data neither side writes while both live (the index
    /// arrays a single-precision copy of a matrix shares with the original).
    pub(crate) fn share(&self) -> Option<Self> {
        let storage = match &self.storage {
            Storage::Host(_) => None,
            #[cfg(feature = "opencl")]
            Storage::OpenCl(r) => Some(Storage::OpenCl(r.share())),
            #[cfg(feature = "cuda")]
            Storage::Cuda(r) => Some(Storage::Cuda(r.share())),
        };
        storage.map(|storage| Self {
            len: self.len,
            storage,
            _ticket: None,
        })
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// Name of the backend kind that owns the storage.
    pub fn owner(&self) -> &'static str {
        match &self.storage {
            Storage::Host(_) => "host",
            #[cfg(feature = "opencl")]
            Storage::OpenCl(_) => "opencl",
            #[cfg(feature = "cuda")]
            Storage::Cuda(_) => "cuda",
        }
    }

    /// The host slice, or [`Error::WrongBackend`].
    pub(crate) fn host(&self) -> Result<&[T]> {
        match &self.storage {
            Storage::Host(v) => Ok(v),
            #[allow(unreachable_patterns)]
            _ => Err(Error::WrongBackend {
                expected: "host".into(),
                found: self.owner().into(),
            }),
        }
    }

    /// The mutable host slice, or [`Error::WrongBackend`].
    pub(crate) fn host_mut(&mut self) -> Result<&mut [T]> {
        let owner = self.owner();
        match &mut self.storage {
            Storage::Host(v) => Ok(v),
            #[allow(unreachable_patterns)]
            _ => Err(Error::WrongBackend {
                expected: "host".into(),
                found: owner.into(),
            }),
        }
    }
}

impl<T> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buffer(len = {})", self.len)
    }
}

/// Check that a buffer has the expected length.
pub(crate) fn check_len<T: Pod>(what: &str, buf: &Buffer<T>, expected: usize) -> Result<()> {
    if buf.len() != expected {
        return Err(Error::dims(what, expected, buf.len()));
    }
    Ok(())
}

#[cfg(all(test, feature = "opencl"))]
mod tests {
    use crate::backend::host::HostBackend;
    use crate::backend::opencl::OpenClBackend;
    use crate::backend::VectorOps;

    /// A shared buffer reads the same memory, and outlives the buffer it was shared from.
    #[test]
    fn a_shared_opencl_buffer_outlives_the_original() {
        let b = OpenClBackend::from_env().expect("an OpenCL device (PoCL in CI)");
        let data: Vec<f64> = (0..1000).map(|i| i as f64 * 0.5).collect();
        let original = b.upload(&data).unwrap();
        let shared = original.share().expect("device storage is shared");
        drop(original);
        // Allocations after the drop must not reuse the shared memory.
        let mut other = b.alloc::<f64>(1000).unwrap();
        b.fill(&mut other, 7.0).unwrap();
        assert_eq!(b.download(&shared).unwrap(), data);
        assert!(HostBackend::new().upload(&data).unwrap().share().is_none());
    }
}
