//! The OpenCL backend's pool of dropped buffers (`src/backend/opencl/pool.rs`; PoCL in CI,
//! NVIDIA's OpenCL on the GPU machine): a recycled buffer is zeroed or holds what was uploaded,
//! kernels on recycled buffers agree with the host, the pool never holds more than the buffers
//! held before, and memory objects shared with another reader (AMG's finest level reads the
//! solver's matrix) are never recycled while that reader lives.
#![cfg(feature = "opencl")]

use pipekrylov::backend::opencl::OpenClBackend;
use pipekrylov::backend::{MatrixFormat, SpmvOps, VectorOps};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::precond::{Amg, AmgOptions, AmgSetup, Preconditioner};
use pipekrylov::scalar::Precision;

fn backend() -> OpenClBackend {
    OpenClBackend::from_env().expect("an OpenCL device (PoCL in CI)")
}

#[test]
fn a_recycled_buffer_is_zeroed_or_holds_the_new_upload() {
    let b = backend();
    // Building the programs drops a buffer of its own (the address check): start empty.
    b.prepare(Precision::F64).unwrap();
    b.release_pooled_memory();
    let old: Vec<f64> = (0..1000).map(|i| i as f64 + 0.5).collect();
    drop(b.upload(&old).unwrap());
    assert_eq!(
        b.pooled_bytes(),
        8000,
        "the dropped buffer waits in the pool"
    );
    let zeroed = b.alloc::<f64>(1000).unwrap();
    assert_eq!(b.pooled_bytes(), 0, "the request of the same size took it");
    assert_eq!(b.download(&zeroed).unwrap(), vec![0.0; 1000]);
    drop(zeroed);
    let new: Vec<f64> = (0..1000).map(|i| -(i as f64)).collect();
    let mut y = b.upload(&new).unwrap();
    assert_eq!(b.pooled_bytes(), 0);
    assert_eq!(b.download(&y).unwrap(), new);
    // Kernels on recycled buffers (x recycled from `y`'s first life below).
    drop(b.upload(&old).unwrap());
    let x = b.upload(&old).unwrap();
    b.axpby(2.0, &x, 1.0, &mut y).unwrap();
    let expect: Vec<f64> = old.iter().zip(&new).map(|(o, n)| 2.0 * o + n).collect();
    assert_eq!(b.download(&y).unwrap(), expect);
    drop((x, y));
    assert_eq!(b.release_pooled_memory(), 16000);
    assert_eq!(b.pooled_bytes(), 0);
    assert_eq!(b.release_pooled_memory(), 0);
}

#[test]
fn the_pool_never_holds_more_than_the_buffers_held_before() {
    let b = backend();
    b.prepare(Precision::F64).unwrap();
    b.release_pooled_memory();
    let mut most_live = 0usize;
    let mut check = |b: &OpenClBackend| {
        let live = b.memory_use().live_bytes;
        most_live = most_live.max(live);
        assert!(
            live + b.pooled_bytes() <= most_live,
            "live {live} + pooled {} above the high-water mark {most_live}",
            b.pooled_bytes()
        );
    };
    let a = b.alloc::<f64>(1000).unwrap();
    check(&b);
    drop(a);
    check(&b);
    assert_eq!(b.pooled_bytes(), 8000);
    // A larger request than anything before: the pool gives its 8000 bytes back first.
    let big = b.alloc::<f64>(2000).unwrap();
    check(&b);
    assert_eq!(b.pooled_bytes(), 0);
    drop(big);
    // Smaller requests of other sizes fit beside the pooled 16000 bytes only while the sum
    // stays under the mark.
    let small = b.alloc::<f32>(1000).unwrap();
    check(&b);
    assert_eq!(b.pooled_bytes(), 0, "16000 + 4000 > 16000: released");
    let mut kept = vec![small];
    for len in [100usize, 200, 300, 100, 200, 300] {
        kept.push(b.alloc::<f32>(len).unwrap());
        check(&b);
        drop(kept.remove(0));
        check(&b);
    }
}

/// AMG's device setup shares the solver's CSR arrays for its finest level: dropping the
/// matrix must not hand them to the pool while the hierarchy still reads them.
#[test]
fn memory_shared_with_the_multigrid_hierarchy_is_not_recycled() {
    let b = backend();
    let a = Generator::Poisson2d.generate::<f64>(4096).unwrap().matrix;
    let m = b.upload_matrix(&a, MatrixFormat::Csr).unwrap();
    let options = AmgOptions {
        setup: AmgSetup::Device,
        ..AmgOptions::default()
    };
    let amg = Amg::new_on(&b, &a, Some(&m), options).unwrap();
    let n = a.n_rows();
    let r = b
        .upload(&(0..n).map(|i| ((i % 7) as f64) - 3.0).collect::<Vec<_>>())
        .unwrap();
    let mut z = b.alloc::<f64>(n).unwrap();
    amg.apply(&b, &r, &mut z).unwrap();
    let before = b.download(&z).unwrap();
    drop(m);
    // Requests of the sizes of A's arrays, filled with garbage: a recycled array of A's would
    // now hold it.
    let nnz = a.nnz();
    let mut junk_values = b.alloc::<f64>(nnz).unwrap();
    b.fill(&mut junk_values, 1e300).unwrap();
    let junk_cols = b.upload(&vec![u32::MAX; nnz]).unwrap();
    let junk_rows = b.upload(&vec![u32::MAX; n + 1]).unwrap();
    amg.apply(&b, &r, &mut z).unwrap();
    assert_eq!(b.download(&z).unwrap(), before);
    drop((junk_values, junk_cols, junk_rows));
}

/// Small buffers are carved out of larger ones (`src/backend/opencl/slab.rs`): many live at
/// once, each with its own data, kernels on them, none overlapping another.
#[test]
fn small_buffers_carved_from_slabs_keep_their_own_data() {
    let b = backend();
    let sizes: Vec<usize> = (0..300).map(|i| 1 + (i * 37) % 3000).collect();
    let data: Vec<Vec<f64>> = sizes
        .iter()
        .enumerate()
        .map(|(k, &n)| (0..n).map(|i| (k * 10_000 + i) as f64).collect())
        .collect();
    let mut bufs: Vec<_> = data.iter().map(|d| b.upload(d).unwrap()).collect();
    let mut zeroed: Vec<_> = sizes.iter().map(|&n| b.alloc::<f64>(n).unwrap()).collect();
    for (k, (x, z)) in bufs.iter_mut().zip(&mut zeroed).enumerate() {
        b.axpby(1.0, x, 0.5 * k as f64, z).unwrap();
        b.scale(2.0, x).unwrap();
    }
    for (k, (x, z)) in bufs.iter().zip(&zeroed).enumerate() {
        let doubled: Vec<f64> = data[k].iter().map(|v| 2.0 * v).collect();
        assert_eq!(b.download(x).unwrap(), doubled, "buffer {k}");
        assert_eq!(b.download(z).unwrap(), data[k], "zeroed buffer {k}");
    }
    drop((bufs, zeroed));
    b.release_pooled_memory();
    assert_eq!(b.pooled_bytes(), 0);
    let again = b.upload(&data[7]).unwrap();
    assert_eq!(b.download(&again).unwrap(), data[7]);
}

/// With device-address arguments (the default on NVIDIA GPUs; forced here, PoCL supports them)
/// a new memory object's fill is waited for by its address read, and the pool's releases of
/// memory whose address was handed out wait for the backend's next wait instead of one of their
/// own: the multigrid setup (a few hundred buffers, trims of the pool among them) and its cycle
/// give bit for bit what they give with `cl_mem` arguments, and the pool keeps its bound.
#[test]
fn multigrid_with_device_addresses_matches_cl_mem_arguments() {
    let with_addresses = |on: bool| {
        let mut tuning = pipekrylov::backend::Tuning::default();
        tuning.opencl_address_args = Some(on);
        let device = pipekrylov::backend::DeviceSelector::from_env();
        OpenClBackend::with_tuning(device, tuning).expect("an OpenCL device (PoCL in CI)")
    };
    let a = Generator::Poisson2d.generate::<f64>(40_000).unwrap().matrix;
    let n = a.n_rows();
    let r: Vec<f64> = (0..n).map(|i| ((i % 11) as f64) - 5.0).collect();
    let options = AmgOptions {
        setup: AmgSetup::Device,
        ..AmgOptions::default()
    };
    let cycle = |b: &OpenClBackend| {
        let amg = Amg::new_on(b, &a, None, options).unwrap();
        let r = b.upload(&r).unwrap();
        let mut z = b.alloc::<f64>(n).unwrap();
        amg.apply(b, &r, &mut z).unwrap();
        drop(amg);
        let used = b.memory_use();
        assert!(
            used.live_bytes + b.pooled_bytes() <= used.peak_bytes,
            "live {} + pooled {} above the high-water mark {}",
            used.live_bytes,
            b.pooled_bytes(),
            used.peak_bytes
        );
        b.download(&z).unwrap()
    };
    let addresses = with_addresses(true);
    let z_addresses = cycle(&addresses);
    assert_eq!(
        addresses.uses_address_args(),
        Some(true),
        "the address check failed"
    );
    let plain = with_addresses(false);
    assert_eq!(z_addresses, cycle(&plain));
    assert_eq!(plain.uses_address_args(), Some(false));
    // A second setup on the same backend: recycled and put-aside memory reused.
    assert_eq!(cycle(&addresses), z_addresses);
}
