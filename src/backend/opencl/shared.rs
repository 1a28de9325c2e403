//! What the OpenCL backends of one process share per device: the context and the programs
//! built in it.
//!
//! Creating a context and building the library's programs took 70-100 ms on PoCL and about
//! 0.2 s on NVIDIA's driver, paid again by every new backend: a one-call solve from Python or
//! `pipekrylov::solve` in a loop spent that on each call. A second backend on the same device
//! now reuses the context and every program already built with the same options, as the CUDA
//! backend reuses its modules (`cuda/module.rs`). Each backend keeps its own queue, its own
//! kernel objects (a `cl_kernel` holds the arguments last set on it, so it is not shared),
//! buffers, pool and identity: a buffer of one backend is still refused by another.
//!
//! Entries live for the process (as the CUDA primary context does). A sticky device fault takes
//! the device's entry out ([`forget`]): later backends start on a fresh context, backends
//! holding the old one keep it until they are dropped.

use super::cl::{self, Context, Program};
use super::device::DeviceDescription;
use super::packed::WordKind;
use crate::error::Result;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// The context of one device and the programs built in it.
pub(crate) struct SharedDevice {
    // Field order is drop order: the programs before the context.
    /// Built programs by build options and argument packing; one slot per key, so two
    /// precisions build at the same time and a second backend waits for the first's build.
    programs: Mutex<HashMap<ProgramKey, ProgramSlot>>,
    /// Set by a sticky device fault in the context: every backend on it fails from then on.
    poisoned: std::sync::atomic::AtomicBool,
    pub(crate) context: Context,
}

/// One program's place in [`SharedDevice`]: empty until a backend built it.
type ProgramSlot = Arc<Mutex<Option<Arc<BuiltProgram>>>>;

/// What makes two builds the same program.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ProgramKey {
    options: String,
    packed_args: bool,
}

/// A program built in a [`SharedDevice`]'s context.
pub(crate) struct BuiltProgram {
    pub(crate) program: Program,
    /// The argument words of each kernel taking packed arguments (`packed.rs`; empty unless
    /// built with them).
    pub(crate) packed_words: HashMap<String, Vec<WordKind>>,
    /// Whether the kernels honour device-address arguments (the check of `address.rs`), once a
    /// backend ran it: the device's answer, so later backends skip the check.
    pub(crate) addresses_work: Mutex<Option<bool>>,
}

impl BuiltProgram {
    /// A program just built, its address check not run yet.
    pub(crate) fn new(program: Program, packed_words: HashMap<String, Vec<WordKind>>) -> Self {
        Self {
            program,
            packed_words,
            addresses_work: Mutex::new(None),
        }
    }
}

/// Every device with a context in this process: (platform, device, entry).
static DEVICES: Mutex<Vec<(usize, usize, Arc<SharedDevice>)>> = Mutex::new(Vec::new());

/// Lock a mutex whose data stays consistent if a holder panicked (every value is replaced
/// whole).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The entry of `device`, creating its context on first use.
pub(crate) fn for_device(device: &DeviceDescription) -> Result<Arc<SharedDevice>> {
    let key = (device.platform.0 as usize, device.device.0 as usize);
    let mut devices = lock(&DEVICES);
    if let Some((_, _, found)) = devices.iter().find(|(p, d, _)| (*p, *d) == key) {
        return Ok(Arc::clone(found));
    }
    let context = cl::create_context(device.platform, device.device)?;
    let entry = Arc::new(SharedDevice {
        programs: Mutex::new(HashMap::new()),
        poisoned: std::sync::atomic::AtomicBool::new(false),
        context,
    });
    devices.push((key.0, key.1, Arc::clone(&entry)));
    Ok(entry)
}

/// After a sticky fault in `entry`'s context: every backend on it fails from now on, and the
/// entry leaves the process's devices (a later backend makes a new context).
pub(crate) fn poison(entry: &Arc<SharedDevice>) {
    entry
        .poisoned
        .store(true, std::sync::atomic::Ordering::Relaxed);
    forget(entry);
}

/// Take `entry` out of the process's devices.
pub(crate) fn forget(entry: &Arc<SharedDevice>) {
    lock(&DEVICES).retain(|(_, _, e)| !Arc::ptr_eq(e, entry));
}

/// How many devices have an entry (testing).
#[cfg(test)]
pub(crate) fn device_count() -> usize {
    lock(&DEVICES).len()
}

impl SharedDevice {
    /// Whether a sticky fault made the context unusable ([`poison`]).
    pub(crate) fn poisoned(&self) -> bool {
        self.poisoned.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The program built with `options` (and packed arguments if `packed_args`), built by
    /// `build` if no backend built it yet. A failed build is not kept: the next call builds
    /// again.
    pub(crate) fn program(
        &self,
        options: &str,
        packed_args: bool,
        build: impl FnOnce() -> Result<BuiltProgram>,
    ) -> Result<Arc<BuiltProgram>> {
        let key = ProgramKey {
            options: options.to_owned(),
            packed_args,
        };
        let slot = Arc::clone(lock(&self.programs).entry(key).or_default());
        let mut built = lock(&slot);
        if let Some(program) = built.as_ref() {
            return Ok(Arc::clone(program));
        }
        let program = Arc::new(build()?);
        *built = Some(Arc::clone(&program));
        Ok(program)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{DeviceSelector, OpenClBackend};
    use crate::backend::VectorOps;
    use crate::scalar::Precision;
    use std::sync::Mutex;

    /// Held by the tests that take a device's entry out, and by those that need it to stay.
    static ENTRY_TESTS: Mutex<()> = Mutex::new(());

    /// A second backend on the device takes the first one's context and programs and builds
    /// nothing; its buffers stay its own.
    #[test]
    fn a_second_backend_reuses_the_context_and_the_programs() {
        let _entry = ENTRY_TESTS.lock().unwrap_or_else(|p| p.into_inner());
        let first = OpenClBackend::new(DeviceSelector::Default).unwrap();
        first.prepare(Precision::F64).unwrap();
        let second = OpenClBackend::new(DeviceSelector::Default).unwrap();
        assert!(std::sync::Arc::ptr_eq(&first.shared, &second.shared));
        second.prepare(Precision::F64).unwrap();
        let built = |b: &OpenClBackend| {
            let guard = b.program(Precision::F64).unwrap();
            std::sync::Arc::clone(&guard.as_ref().unwrap().built)
        };
        assert!(
            std::sync::Arc::ptr_eq(&built(&first), &built(&second)),
            "the second backend's program is the first one's"
        );
        let x = second.upload(&[1.0f64, 2.0, 3.0]).unwrap();
        let mut y = second.alloc::<f64>(3).unwrap();
        second.copy(&x, &mut y).unwrap();
        assert_eq!(second.download(&y).unwrap(), vec![1.0, 2.0, 3.0]);
        assert_ne!(first.owner, second.owner);
        assert!(matches!(
            first.download(&x),
            Err(crate::Error::WrongBackend { .. })
        ));
    }

    /// A backend that takes the first one's verdict on device-address arguments (and so never
    /// ran the check that makes its address-output buffer) reads addresses with programs of
    /// both precisions built: the reading must not wait for itself.
    #[test]
    fn a_second_backend_with_address_arguments_runs_both_precisions() {
        let _entry = ENTRY_TESTS.lock().unwrap_or_else(|p| p.into_inner());
        let open = || {
            let mut b = OpenClBackend::new(DeviceSelector::Default).unwrap();
            b.set_address_args(true);
            b
        };
        let first = open();
        first.prepare(Precision::F64).unwrap();
        first.prepare(Precision::F32).unwrap();
        let second = open();
        second.prepare(Precision::F64).unwrap();
        second.prepare(Precision::F32).unwrap();
        let x = second.upload(&[1.5f32; 40]).unwrap();
        let mut y = second.alloc::<f32>(40).unwrap();
        second.copy(&x, &mut y).unwrap();
        assert_eq!(second.download(&y).unwrap(), vec![1.5f32; 40]);
        let x = second.upload(&[2.5f64; 40]).unwrap();
        let mut y = second.alloc::<f64>(40).unwrap();
        second.copy(&x, &mut y).unwrap();
        assert_eq!(second.download(&y).unwrap(), vec![2.5f64; 40]);
    }

    /// After a sticky fault the device's entry is gone: the next backend makes a new context.
    #[test]
    fn a_forgotten_device_gets_a_new_context() {
        let _entry = ENTRY_TESTS.lock().unwrap_or_else(|p| p.into_inner());
        let first = OpenClBackend::new(DeviceSelector::Default).unwrap();
        super::forget(&first.shared);
        let second = OpenClBackend::new(DeviceSelector::Default).unwrap();
        assert!(!std::sync::Arc::ptr_eq(&first.shared, &second.shared));
        assert!(super::device_count() >= 1);
        let x = first.upload(&[4.0f32]).unwrap();
        assert_eq!(first.download(&x).unwrap(), vec![4.0]);
    }
}
