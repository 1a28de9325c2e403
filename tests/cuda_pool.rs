//! The CUDA backend's device memory pool (`src/backend/cuda/pool.rs`), in a test binary of its
//! own: every CUDA backend of a process shares the pool, so the integration tests running
//! beside it would move the numbers it checks. `#[ignore]`d: run on the device with
//! `cargo test --features cuda --test cuda_pool -- --include-ignored`.
#![cfg(feature = "cuda")]

use pipekrylov::backend::cuda::CudaBackend;
use pipekrylov::backend::VectorOps;

fn gpu() -> CudaBackend {
    CudaBackend::from_env().expect("a CUDA device")
}

/// Freed device memory stays in the device's pool for the next backend, and is given back on
/// request.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn freed_memory_is_kept_for_the_next_backend_and_released_on_request() {
    const LEN: usize = 32 << 20; // 256 MiB of f64
    let most = LEN * 8 * 3 / 4;
    {
        let first = gpu();
        let mut x = first.alloc::<f64>(LEN).unwrap();
        first.fill(&mut x, 1.0).unwrap();
        drop(x);
        first.synchronize().unwrap();
        assert!(first.pooled_bytes() >= most, "{}", first.pooled_bytes());
    }
    // A second backend finds it there and takes from it (its data checked).
    let second = gpu();
    assert!(second.pooled_bytes() >= most, "{}", second.pooled_bytes());
    let mut y = second.alloc::<f64>(LEN).unwrap();
    second.fill(&mut y, 2.0).unwrap();
    assert!(second.download(&y).unwrap().iter().all(|&v| v == 2.0));
    drop(y);
    let released = second.release_pooled_memory().unwrap();
    assert!(released >= most, "{released}");
    assert!(
        second.pooled_bytes() < LEN * 8 / 4,
        "{}",
        second.pooled_bytes()
    );
    // Still usable after the release.
    let z = second.upload(&[1.0f64, 2.0]).unwrap();
    assert_eq!(second.download(&z).unwrap(), vec![1.0, 2.0]);
}
