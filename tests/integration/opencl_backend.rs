//! OpenCL backend specifics (feature `opencl`; PoCL in CI): device listing and selection,
//! program builds in both precisions, every kernel name resolving, allocation limits and
//! out-of-memory recovery, build errors with the compiler log, zero-length buffers, wrong
//! backend buffers. Kernel-by-kernel agreement with the host lives in `backend_agreement.rs`.
#![cfg(feature = "opencl")]

use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::opencl::{list_devices, status, DeviceSelector, OpenClBackend};
use pipekrylov::backend::ops::KERNELS;
use pipekrylov::backend::{BackendInfo, KrylovOps, Slot, VectorOps};
use pipekrylov::scalar::Precision;
use pipekrylov::Error;

fn backend() -> OpenClBackend {
    OpenClBackend::from_env().expect("an OpenCL device (PoCL in CI)")
}

#[test]
fn devices_are_listed_and_status_marks_the_choice() {
    let devices = list_devices().expect("at least one OpenCL device");
    assert!(!devices.is_empty());
    for d in &devices {
        assert!(!d.device_name.is_empty());
        assert!(d.compute_units >= 1 && d.max_work_group_size >= 1);
        assert!(
            d.max_alloc_bytes > 0 && d.max_alloc_bytes <= d.global_mem_bytes.max(d.max_alloc_bytes)
        );
        assert!(d
            .summary()
            .starts_with(&format!("{}:{} ", d.platform_index, d.device_index)));
    }
    let s = status();
    assert_eq!(s.name, "opencl");
    assert!(s.compiled && s.available, "{}", s.note);
    assert_eq!(s.devices.len(), devices.len());
    assert_eq!(
        s.devices
            .iter()
            .filter(|l| l.contains("<- selected"))
            .count(),
        1,
        "{:?}",
        s.devices
    );
}

#[test]
fn default_selection_prefers_a_gpu() {
    let devices = list_devices().unwrap();
    let b = OpenClBackend::new(DeviceSelector::Default).unwrap();
    let want = devices.iter().find(|d| d.is_gpu).unwrap_or(&devices[0]);
    assert_eq!(b.device_name(), want.full_name());
    assert_eq!(b.is_gpu(), want.is_gpu);
    assert_eq!(b.name(), "opencl");
    assert!(b.device_name().contains(" / "));
    let wg = b.work_group_size();
    assert!(wg.is_power_of_two() && wg <= 256 && wg <= want.max_work_group_size);
}

#[test]
fn selection_by_index_name_and_env() {
    let devices = list_devices().unwrap();
    let last = devices.last().unwrap();
    let by_index = OpenClBackend::new(DeviceSelector::Index {
        platform: last.platform_index,
        device: last.device_index,
    })
    .unwrap();
    assert_eq!(by_index.device_name(), last.full_name());

    // Case-insensitive substring of the device name.
    let needle = last.device_name.to_uppercase();
    let by_name = OpenClBackend::new(DeviceSelector::Name(needle)).unwrap();
    assert_eq!(
        by_name.device_name(),
        devices
            .iter()
            .find(|d| d
                .full_name()
                .to_lowercase()
                .contains(&last.device_name.to_lowercase()))
            .unwrap()
            .full_name()
    );

    let missing = OpenClBackend::new(DeviceSelector::Name("no such device xyz".into()));
    assert!(
        matches!(missing, Err(Error::BackendUnavailable { .. })),
        "{missing:?}"
    );
    let missing = OpenClBackend::new(DeviceSelector::Index {
        platform: 99,
        device: 0,
    });
    assert!(matches!(missing, Err(Error::BackendUnavailable { .. })));

    // The command line's device names (PIPEKRYLOV_OPENCL_DEVICE): `P:D` or a name substring.
    let named = |s: &str| OpenClBackend::new(DeviceSelector::parse(s));
    let by_env =
        named(&format!("{}:{}", last.platform_index, last.device_index)).map(|b| b.device_name());
    let by_env_name = named(&last.platform_name.to_lowercase()).map(|b| b.device_name());
    let bad = named("definitely-not-a-device");
    assert_eq!(by_env.unwrap(), last.full_name());
    let first_of_platform = devices
        .iter()
        .find(|d| {
            d.full_name()
                .to_lowercase()
                .contains(&last.platform_name.to_lowercase())
        })
        .unwrap();
    assert_eq!(by_env_name.unwrap(), first_of_platform.full_name());
    assert!(matches!(bad, Err(Error::BackendUnavailable { .. })));
}

#[test]
fn programs_build_in_both_precisions_and_every_kernel_resolves() {
    let b = backend();
    let mut precisions = vec![Precision::F32];
    if b.supports_f64() {
        precisions.push(Precision::F64);
    }
    for p in precisions {
        b.prepare(p).unwrap_or_else(|e| panic!("{p} program: {e}"));
        for (family, names) in KERNELS {
            for name in names.iter() {
                b.check_kernel(p, name)
                    .unwrap_or_else(|e| panic!("{p} {family}/{name}: {e}"));
            }
        }
        let bogus = b.check_kernel(p, "no_such_kernel");
        assert!(bogus.is_err());
    }
}

#[test]
fn every_kernel_name_is_declared_in_its_family_file() {
    use pipekrylov::backend::kernel_sources::OPENCL;
    for (family, names) in KERNELS {
        let source = OPENCL.iter().find(|s| s.family == *family).unwrap();
        let (path, src) = (source.path, source.text);
        for name in names.iter() {
            let decl = format!("\npk_kernel void {name}(");
            assert!(src.contains(&decl), "{path} lacks `pk_kernel void {name}(`");
        }
    }
}

#[test]
fn f64_support_matches_the_device() {
    let b = backend();
    let fp64 = b.device().fp64;
    assert_eq!(b.supports_f64(), fp64);
    let x = b.upload(&[1.0f64, 2.0]);
    match (fp64, x) {
        (true, Ok(mut x)) => {
            b.scale(3.0, &mut x).unwrap();
            assert_eq!(b.download(&x).unwrap(), vec![3.0, 6.0]);
        }
        (false, Ok(mut x)) => {
            let e = b.scale(3.0, &mut x).unwrap_err();
            let Error::BackendUnavailable { reason, .. } = e else {
                panic!("expected BackendUnavailable, got {e:?}");
            };
            assert!(reason.contains("cl_khr_fp64"), "{reason}");
        }
        (_, Err(e)) => panic!("upload: {e}"),
    }
    let mut y = b.upload(&[1.0f32, 2.0]).unwrap();
    b.scale(3.0, &mut y).unwrap();
    assert_eq!(b.download(&y).unwrap(), vec![3.0, 6.0]);
}

#[test]
fn allocation_above_the_device_limit_is_out_of_memory_and_recoverable() {
    let b = backend();
    let max = b.device().max_alloc_bytes as usize;
    let too_many = max / 8 + 1;
    match b.alloc::<f64>(too_many) {
        Err(Error::OutOfMemory { bytes, detail, .. }) => {
            assert_eq!(bytes, too_many * 8);
            assert!(detail.contains("MAX_MEM_ALLOC_SIZE"), "{detail}");
            assert!(detail.contains(&max.to_string()), "{detail}");
        }
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    assert!(matches!(
        b.alloc::<u8>(usize::MAX),
        Err(Error::OutOfMemory { .. })
    ));
    assert!(matches!(
        b.alloc::<f64>(usize::MAX / 4),
        Err(Error::OutOfMemory { .. })
    ));
    // Still usable.
    let mut x = b.upload(&[1.0f32, 2.0, 3.0]).unwrap();
    b.axpby(2.0, &b.upload(&[1.0f32, 1.0, 1.0]).unwrap(), 1.0, &mut x)
        .unwrap();
    assert_eq!(b.download(&x).unwrap(), vec![3.0, 4.0, 5.0]);
}

#[test]
fn broken_source_reports_kernel_build_with_the_log() {
    let b = backend();
    let src = "__kernel void broken(__global SCALAR *x) { x[0] = undefined_identifier_42; }";
    match b.build_program_from_source(src, Precision::F32) {
        Err(Error::KernelBuild { backend, log }) => {
            assert_eq!(backend, "opencl");
            assert!(
                log.contains("undefined_identifier_42"),
                "log lacks the culprit:\n{log}"
            );
        }
        other => panic!("expected KernelBuild, got {other:?}"),
    }
    b.build_program_from_source(
        "__kernel void fine(__global SCALAR *x) { x[0] = (SCALAR)WG; }",
        Precision::F32,
    )
    .unwrap();
    // The library's programs still work.
    let mut x = b.upload(&[1.0f32]).unwrap();
    b.fill(&mut x, 7.0).unwrap();
    assert_eq!(b.download(&x).unwrap(), vec![7.0]);
}

#[test]
fn zero_length_buffers_and_empty_reductions() {
    let b = backend();
    let mut x = b.alloc::<f32>(0).unwrap();
    assert_eq!(x.len(), 0);
    assert!(b.download(&x).unwrap().is_empty());
    b.fill(&mut x, 1.0).unwrap();
    let y = b.upload::<f32>(&[]).unwrap();
    let mut p = b.partials::<f32>(0, 2).unwrap();
    assert_eq!(p.groups(), 1);
    b.dot_partials(&x, &y, &mut p, Slot(1)).unwrap();
    assert_eq!(b.finish(&p).unwrap().0, vec![0.0, 0.0]);
}

#[test]
fn reductions_are_deterministic_and_planned_from_the_device() {
    let b = backend();
    let cu = b.device().compute_units;
    let wg = b.work_group_size();
    assert_eq!(b.reduction_groups(0), 1);
    assert_eq!(b.reduction_groups(1), 1);
    assert_eq!(b.reduction_groups(wg + 1), 2.min(4 * cu).max(1));
    assert_eq!(b.reduction_groups(1 << 30), 4 * cu);
    let n = 100_003;
    let v: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 * 1e-3 - 0.5)
        .collect();
    let x = b.upload(&v).unwrap();
    let mut p = b.partials::<f32>(n, 1).unwrap();
    b.dot_partials(&x, &x, &mut p, Slot(0)).unwrap();
    let first = b.download(p.buffer()).unwrap();
    for _ in 0..3 {
        b.dot_partials(&x, &x, &mut p, Slot(0)).unwrap();
        assert_eq!(
            b.download(p.buffer()).unwrap(),
            first,
            "bit-identical partials"
        );
    }
    let exact: f64 = v.iter().map(|&a| (a as f64) * (a as f64)).sum();
    let got = b.finish(&p).unwrap().get(Slot(0));
    assert!((got - exact).abs() <= 1e-4 * exact, "{got} vs {exact}");
}

#[test]
fn buffers_of_other_backends_are_refused() {
    let b = backend();
    let h = HostBackend::new();
    let hx = h.upload(&[1.0f32, 2.0]).unwrap();
    let mut cx = b.upload(&[1.0f32, 2.0]).unwrap();
    assert!(matches!(
        b.copy(&hx, &mut cx),
        Err(Error::WrongBackend { .. })
    ));
    let other = OpenClBackend::new(DeviceSelector::Default).unwrap();
    let ox = other.upload(&[1.0f32, 2.0]).unwrap();
    assert!(matches!(
        b.copy(&ox, &mut cx),
        Err(Error::WrongBackend { .. })
    ));
    assert!(matches!(
        b.read(&hx, &mut [0.0; 2]),
        Err(Error::WrongBackend { .. })
    ));
}

#[test]
fn argument_errors_match_the_host() {
    let b = backend();
    let h = HostBackend::new();
    fn kinds<B: KrylovOps>(be: &B) -> Vec<String> {
        let x = be.upload(&[1.0f32; 5]).unwrap();
        let mut y = be.upload(&[1.0f32; 4]).unwrap();
        let mut p = be.partials::<f32>(5, 2).unwrap();
        let mut basis = be.basis::<f32>(5, 3).unwrap();
        let mut rmat = be.alloc::<f32>(9).unwrap();
        let name = |r: pipekrylov::Result<()>| match r {
            Ok(()) => "ok".to_string(),
            Err(e) => format!("{:?}", std::mem::discriminant(&e)),
        };
        vec![
            name(be.copy(&x, &mut y)),
            name(be.dot_partials(&x, &x, &mut p, Slot(2))),
            name(be.basis_axpy(&mut basis, 1, 1, 1.0)),
            name(be.basis_scale(&mut basis, 3, 1.0)),
            name(be.multi_axpy(&mut y, &basis, 0..2, &[1.0, 2.0])),
            name(be.gmres_gram_schmidt(&mut basis, 0, &mut p, Slot(0), Slot(1), &mut rmat, 3)),
            name(be.basis_dots(&basis, 0, 0..4, &mut p, Slot(0))),
        ]
    }
    assert_eq!(kinds(&b), kinds(&h));
}

#[test]
fn launch_and_transfer_counts() {
    let b = backend();
    let before = b.counters();
    let mut x = b.upload(&[1.0f32; 10]).unwrap();
    b.scale(2.0, &mut x).unwrap();
    let basis = b.basis::<f32>(10, 2).unwrap();
    b.multi_axpy(&mut x, &basis, 0..2, &[1.0, 1.0]).unwrap();
    let _ = b.download(&x).unwrap();
    let d = b.counters() - before;
    assert_eq!(
        (d.launches, d.transfers),
        (2, 3),
        "upload + coefficients + download; scale + multi_axpy"
    );
}

/// `multi_axpy` uploads its coefficients without blocking: back-to-back calls (no wait between),
/// a call that grows the coefficient buffer, and a call with no columns must each use their own
/// coefficients, exactly as on the host.
#[test]
fn back_to_back_multi_axpy_calls_use_their_own_coefficients() {
    let b = backend();
    let host = HostBackend::new();
    let (n, cols) = (1000, 100);
    let init: Vec<f64> = (0..n * cols)
        .map(|k| ((k * 37 % 101) as f64 - 50.0) / 64.0)
        .collect();
    let calls: Vec<(std::ops::Range<usize>, Vec<f64>)> = vec![
        (0..3, vec![1.0, -2.0, 0.5]),
        (1..4, vec![0.25, 4.0, -1.0]),
        (0..100, (0..100).map(|k| (k as f64 - 50.0) / 16.0).collect()),
        (2..2, vec![]),
        (5..7, vec![-3.0, 8.0]),
    ];
    let on_opencl = {
        let basis =
            pipekrylov::backend::Basis::from_buffer(b.upload(&init).unwrap(), n, cols).unwrap();
        let mut y = b.upload(&vec![1.0f64; n]).unwrap();
        for (range, coeffs) in &calls {
            b.multi_axpy(&mut y, &basis, range.clone(), coeffs).unwrap();
        }
        b.download(&y).unwrap()
    };
    let on_host = {
        let basis =
            pipekrylov::backend::Basis::from_buffer(host.upload(&init).unwrap(), n, cols).unwrap();
        let mut y = host.upload(&vec![1.0f64; n]).unwrap();
        for (range, coeffs) in &calls {
            host.multi_axpy(&mut y, &basis, range.clone(), coeffs)
                .unwrap();
        }
        host.download(&y).unwrap()
    };
    for (k, (d, h)) in on_opencl.iter().zip(&on_host).enumerate() {
        assert!(
            (d - h).abs() <= 1e-12 * (1.0 + h.abs()),
            "element {k}: OpenCL {d} vs host {h}"
        );
    }
}

#[test]
fn csr_with_several_work_items_per_row_agrees_with_the_host() {
    use pipekrylov::backend::{MatrixFormat, SpmvDots, SpmvOps};
    use pipekrylov::matrix::CsrMatrix;
    let b = backend();
    let h = HostBackend::new();
    // Rows of 0 to 70 entries (empty rows included), n not a multiple of anything.
    let n = 1031usize;
    let mut rp = vec![0usize];
    let (mut ci, mut v) = (Vec::new(), Vec::new());
    for r in 0..n {
        let len = (r * 37 % 71) * usize::from(r % 9 != 4);
        let row: std::collections::BTreeMap<usize, f64> = (0..len)
            .map(|k| {
                (
                    (r * 13 + k * 29) % n,
                    ((r + 3 * k) % 17) as f64 * 0.125 - 1.0,
                )
            })
            .collect();
        ci.extend(row.keys());
        v.extend(row.values());
        rp.push(ci.len());
    }
    let a = CsrMatrix::new(n, n, rp, ci, v).unwrap();
    let x: Vec<f64> = (0..n).map(|i| (i % 11) as f64 - 5.0).collect();
    let w: Vec<f64> = (0..n).map(|i| (i % 7) as f64 * 0.5).collect();
    let host = {
        let m = h.upload_matrix(&a, MatrixFormat::Csr).unwrap();
        let (xb, wb) = (h.upload(&x).unwrap(), h.upload(&w).unwrap());
        let mut y = h.alloc::<f64>(n).unwrap();
        let mut p = h.partials::<f64>(n, 3).unwrap();
        let dots = SpmvDots {
            yy: Some(Slot(0)),
            with: [None, Some((&wb, Slot(2)))],
        };
        h.spmv_dots(&m, &xb, &mut y, dots, &mut p).unwrap();
        let s = h.finish(&p).unwrap();
        let mut r = h.alloc::<f64>(n).unwrap();
        h.residual(&m, &xb, &wb, &mut r, &mut p, Some(Slot(1)))
            .unwrap();
        let rr = h.finish(&p).unwrap().get(Slot(1));
        (
            h.download(&y).unwrap(),
            s.get(Slot(0)),
            s.get(Slot(2)),
            h.download(&r).unwrap(),
            rr,
        )
    };
    let lanes: Vec<u32> = [1u32, 2, 4, 8, 16, 32]
        .into_iter()
        .filter(|&k| k as usize <= b.work_group_size())
        .collect();
    for k in lanes {
        b.force_csr_lanes(Some(k)).unwrap();
        let m = b.upload_matrix(&a, MatrixFormat::Csr).unwrap();
        let (xb, wb) = (b.upload(&x).unwrap(), b.upload(&w).unwrap());
        let mut y = b.alloc::<f64>(n).unwrap();
        let mut p = b.partials::<f64>(n, 3).unwrap();
        let dots = SpmvDots {
            yy: Some(Slot(0)),
            with: [None, Some((&wb, Slot(2)))],
        };
        b.spmv_dots(&m, &xb, &mut y, dots, &mut p).unwrap();
        let s = b.finish(&p).unwrap();
        let mut r = b.alloc::<f64>(n).unwrap();
        b.residual(&m, &xb, &wb, &mut r, &mut p, Some(Slot(1)))
            .unwrap();
        let rr = b.finish(&p).unwrap().get(Slot(1));
        let close = |a: f64, e: f64| (a - e).abs() <= 1e-12 * e.abs().max(1.0);
        let y = b.download(&y).unwrap();
        let r = b.download(&r).unwrap();
        for i in 0..n {
            assert!(
                close(y[i], host.0[i]),
                "lanes {k}: y[{i}] = {} vs {}",
                y[i],
                host.0[i]
            );
            assert!(
                close(r[i], host.3[i]),
                "lanes {k}: r[{i}] = {} vs {}",
                r[i],
                host.3[i]
            );
        }
        assert!(
            close(s.get(Slot(0)), host.1) && close(s.get(Slot(2)), host.2),
            "lanes {k}: dots"
        );
        assert!(close(rr, host.4), "lanes {k}: <r, r>");
    }
    assert!(b.force_csr_lanes(Some(3)).is_err());
    b.force_csr_lanes(None).unwrap();
}

/// Latency of the pieces of a pipelined CG iteration on the selected device (not a check:
/// run with `--ignored --nocapture` to print them).
#[test]
#[ignore = "timing report, run explicitly"]
fn latency_report() {
    use pipekrylov::backend::{MatrixFormat, SpmvDots, SpmvOps};
    use pipekrylov::matrix::generate::Generator;
    use std::time::Instant;
    let b = backend();
    println!("device: {} (WG {})", b.device_name(), b.work_group_size());
    let time = |label: &str, reps: usize, f: &mut dyn FnMut()| {
        f();
        b.synchronize().unwrap();
        let t = Instant::now();
        for _ in 0..reps {
            f();
        }
        b.synchronize().unwrap();
        println!(
            "{label:48} {:8.2} us",
            t.elapsed().as_secs_f64() * 1e6 / reps as f64
        );
    };
    for n in [225usize, 65025, 4190209] {
        let a = Generator::Poisson2d.generate::<f64>(n).unwrap().matrix;
        let n = a.n_rows();
        let m = b.upload_matrix(&a, MatrixFormat::Csr).unwrap();
        let mut x = b.upload(&vec![1.0f64; n]).unwrap();
        let mut r = b.upload(&vec![1.0f64; n]).unwrap();
        let mut p = b.upload(&vec![1.0f64; n]).unwrap();
        let mut ap = b.alloc::<f64>(n).unwrap();
        let mut part = b.partials::<f64>(n, 4).unwrap();
        println!("-- poisson2d n = {n}, {} groups", part.groups());
        time("scale (launch throughput)", 200, &mut || {
            b.scale(1.0, &mut x).unwrap()
        });
        time("dot_partials + finish (round trip)", 100, &mut || {
            b.dot_partials(&r, &r, &mut part, Slot(0)).unwrap();
            b.finish(&part).unwrap();
        });
        time("spmv_dots (2 dots)", 100, &mut || {
            let d = SpmvDots {
                yy: Some(Slot(1)),
                with: [Some((&p, Slot(2))), None],
            };
            b.spmv_dots(&m, &p, &mut ap, d, &mut part).unwrap();
        });
        time("cg_update", 100, &mut || {
            b.cg_update(0.0, 1.0, &mut x, &mut r, &mut p, &ap, &mut part, Slot(0))
                .unwrap();
        });
        time(
            "CG iteration shape: spmv_dots + cg_update + finish",
            100,
            &mut || {
                let d = SpmvDots {
                    yy: Some(Slot(1)),
                    with: [Some((&p, Slot(2))), None],
                };
                b.spmv_dots(&m, &p, &mut ap, d, &mut part).unwrap();
                b.cg_update(0.0, 1.0, &mut x, &mut r, &mut p, &ap, &mut part, Slot(0))
                    .unwrap();
                b.finish(&part).unwrap();
            },
        );
    }
}

#[test]
fn the_backend_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<OpenClBackend>();
    // And usable from several threads at once.
    let b = backend();
    std::thread::scope(|s| {
        for t in 0..4 {
            let b = &b;
            s.spawn(move || {
                let mut x = b.upload(&vec![t as f32; 1000]).unwrap();
                for _ in 0..20 {
                    b.scale(2.0, &mut x).unwrap();
                }
                let v = b.download(&x).unwrap();
                assert!(v.iter().all(|&e| e == t as f32 * 1048576.0));
            });
        }
    });
}

/// RELIABILITY row 16 on a real device: the driver runs out of memory below the per-allocation
/// limit; the error is OutOfMemory and the backend stays usable.
#[test]
#[ignore = "takes all device memory: run explicitly on a GPU"]
fn driver_out_of_memory_is_recoverable() {
    let b = backend();
    let d = b.device().clone();
    let chunk = (d.max_alloc_bytes as usize / 8).min(1 << 33);
    let tries = (d.global_mem_bytes / d.max_alloc_bytes.max(1)) as usize * 2 + 4;
    let mut held = Vec::new();
    let mut oom = None;
    for _ in 0..tries {
        match b.alloc::<f64>(chunk) {
            Ok(x) => held.push(x),
            Err(e @ Error::OutOfMemory { .. }) => {
                oom = Some(e);
                break;
            }
            Err(e) => panic!("expected OutOfMemory, got {e}"),
        }
    }
    println!("held {} x {} bytes, then: {oom:?}", held.len(), chunk * 8);
    assert!(oom.is_some(), "never ran out of memory");
    drop(held);
    let mut x = b.upload(&[1.0f64, 2.0]).unwrap();
    b.scale(2.0, &mut x).unwrap();
    assert_eq!(b.download(&x).unwrap(), vec![2.0, 4.0]);
    let big = b.alloc::<f64>(chunk).unwrap();
    assert_eq!(big.len(), chunk);
}

/// Solves of every solver (pipelined, Jacobi for CG), CSR and SELL, with buffers passed as
/// device addresses (arguments packed into one struct, and not) and as `cl_mem`: the same
/// kernels, so bit-identical residual histories and solutions. The address and packed modes
/// must really be on where the library enables them (PoCL, NVIDIA).
#[test]
fn a_refused_inline_ptx_program_leaves_its_kernels_on_the_portable_program() {
    use pipekrylov::backend::{CsrKernel, MatrixFormat, SpmvOps};
    use pipekrylov::matrix::generate::Generator;
    let mut be = backend();
    // On NVIDIA GPUs the inline-PTX program builds; elsewhere its build fails and the kernels of
    // PTX_KERNELS (the CSR stream and SELL products here) must run the portable code.
    be.attempt_inline_ptx();
    let nvidia_gpu = be
        .device()
        .platform_name
        .to_ascii_lowercase()
        .contains("nvidia")
        && be.device().is_gpu;
    let h = HostBackend::new();
    let a = Generator::Powerlaw.generate::<f64>(3000).unwrap().matrix;
    let n = a.n_rows();
    let x: Vec<f64> = (0..n).map(|i| (i % 13) as f64 * 0.25 - 1.5).collect();
    let expect = {
        let m = h.upload_matrix(&a, MatrixFormat::Csr).unwrap();
        let xb = h.upload(&x).unwrap();
        let mut y = h.alloc::<f64>(n).unwrap();
        h.spmv(&m, &xb, &mut y).unwrap();
        h.download(&y).unwrap()
    };
    for (format, kernel) in [
        (MatrixFormat::Csr, CsrKernel::Stream),
        (MatrixFormat::Sell { c: 32, sigma: 128 }, CsrKernel::Auto),
    ] {
        let m = be.upload_matrix_with(&a, format, kernel).unwrap();
        let xb = be.upload(&x).unwrap();
        let mut y = be.alloc::<f64>(n).unwrap();
        be.spmv(&m, &xb, &mut y).unwrap();
        let got = be.download(&y).unwrap();
        for (i, (g, e)) in got.iter().zip(&expect).enumerate() {
            assert!(
                (g - e).abs() <= 1e-12 * (1.0 + e.abs()),
                "{format:?} row {i}: {g} vs {e}"
            );
        }
    }
    assert_eq!(be.uses_inline_ptx(Precision::F64).unwrap(), nvidia_gpu);
}

#[test]
fn device_address_arguments_match_cl_mem_arguments_bit_for_bit() {
    use pipekrylov::backend::{MatrixFormat, SpmvOps};
    use pipekrylov::matrix::generate::Generator;
    use pipekrylov::precond::Jacobi;
    use pipekrylov::solver::{BiCgStab, Cg, Gmres, Params};
    let mut on = backend();
    on.set_address_args(true);
    let mut off = backend();
    off.set_address_args(false);
    let mut unpacked = backend();
    unpacked.set_address_args(true);
    unpacked.set_packed_args(false);
    let p = Generator::ConvDiff3d.generate::<f64>(4000).unwrap();
    let spd = Generator::Poisson2d.generate::<f64>(4000).unwrap();
    let run = |be: &OpenClBackend| {
        let mut out: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
        for format in [MatrixFormat::Csr, MatrixFormat::Sell { c: 32, sigma: 128 }] {
            let params = Params {
                rtol: 1e-10,
                max_iter: 60,
                ..Params::default()
            };
            let a = be.upload_matrix(&spd.matrix, format).unwrap();
            let ones = vec![1.0; spd.matrix.n_rows()];
            let b = be.upload(&ones).unwrap();
            let jac = Jacobi::new(be, &spd.matrix).unwrap();
            let mut x = be.alloc::<f64>(a.n_rows()).unwrap();
            let rep = Cg::new(be, &a, Some(&jac), params)
                .unwrap()
                .solve(&b, &mut x)
                .unwrap();
            out.push((rep.residual_history, be.download(&x).unwrap()));
            let a = be.upload_matrix(&p.matrix, format).unwrap();
            let ones = vec![1.0; p.matrix.n_rows()];
            let b = be.upload(&ones).unwrap();
            let mut x = be.alloc::<f64>(a.n_rows()).unwrap();
            let rep = BiCgStab::new(be, &a, None, params)
                .unwrap()
                .solve(&b, &mut x)
                .unwrap();
            out.push((rep.residual_history, be.download(&x).unwrap()));
            be.fill(&mut x, 0.0).unwrap();
            let rep = Gmres::new(be, &a, None, params)
                .unwrap()
                .solve(&b, &mut x)
                .unwrap();
            out.push((rep.residual_history, be.download(&x).unwrap()));
        }
        out
    };
    let with_addresses = run(&on);
    let with_mem = run(&off);
    let with_unpacked_addresses = run(&unpacked);
    assert_eq!(off.uses_address_args(), Some(false));
    assert_eq!(off.uses_packed_args(), Some(false));
    let platform = on.device().platform_name.to_ascii_lowercase();
    // The inline-PTX paths build on NVIDIA GPUs and nowhere else.
    let nvidia_gpu = platform.contains("nvidia") && on.device().is_gpu;
    let ptx_wanted = on.tuning().opencl_inline_ptx;
    for precision in [Precision::F32, Precision::F64] {
        assert_eq!(
            on.uses_inline_ptx(precision).unwrap(),
            nvidia_gpu && ptx_wanted,
            "{platform} {precision:?}"
        );
    }
    if platform.contains("portable") || platform.contains("pocl") || platform.contains("nvidia") {
        assert_eq!(on.uses_address_args(), Some(true), "{platform}");
        assert_eq!(on.uses_packed_args(), Some(true), "{platform}");
        assert_eq!(unpacked.uses_address_args(), Some(true), "{platform}");
        assert_eq!(unpacked.uses_packed_args(), Some(false), "{platform}");
    }
    for (i, ((a, b), c)) in with_addresses
        .iter()
        .zip(&with_mem)
        .zip(&with_unpacked_addresses)
        .enumerate()
    {
        assert!(a.0.len() > 3, "case {i}: history {:?}", a.0);
        assert_eq!(a.0, b.0, "case {i}: residual histories differ");
        assert_eq!(a.1, b.1, "case {i}: solutions differ");
        assert_eq!(
            c.0, b.0,
            "case {i}: residual histories differ (unpacked addresses)"
        );
        assert_eq!(c.1, b.1, "case {i}: solutions differ (unpacked addresses)");
    }
}

/// Launches re-set only the kernel arguments that changed since the last launch; solvers of
/// other sizes, restart lengths and buffers in between must not leak arguments into each other:
/// each solve matches the same solve on a fresh backend bit for bit.
#[test]
fn interleaved_gmres_solvers_match_fresh_backends_bit_for_bit() {
    use pipekrylov::backend::{MatrixFormat, SpmvOps};
    use pipekrylov::matrix::generate::Generator;
    use pipekrylov::solver::{Gmres, Params};
    let small = Generator::ConvDiff3d.generate::<f64>(1000).unwrap();
    let large = Generator::ConvDiff3d.generate::<f64>(8000).unwrap();
    let solve = |be: &OpenClBackend, p: &pipekrylov::matrix::generate::Problem<f64>, m: usize| {
        let a = be.upload_matrix(&p.matrix, MatrixFormat::Csr).unwrap();
        let b = be.upload(&vec![1.0; a.n_rows()]).unwrap();
        let mut x = be.alloc::<f64>(a.n_rows()).unwrap();
        let params = Params {
            rtol: 1e-10,
            max_iter: 70,
            gmres: pipekrylov::solver::GmresParams {
                restart: m,
                ..Default::default()
            },
            ..Params::default()
        };
        let rep = Gmres::new(be, &a, None, params)
            .unwrap()
            .solve(&b, &mut x)
            .unwrap();
        (rep.residual_history, be.download(&x).unwrap())
    };
    let shared = backend();
    let cases = [
        (&small, 30),
        (&large, 20),
        (&small, 30),
        (&large, 30),
        (&small, 10),
    ];
    for (k, (p, m)) in cases.iter().enumerate() {
        let interleaved = solve(&shared, p, *m);
        let fresh = solve(&backend(), p, *m);
        assert!(interleaved.0.len() > 3, "case {k}: {:?}", interleaved.0);
        assert_eq!(
            interleaved.0, fresh.0,
            "case {k}: residual histories differ"
        );
        assert_eq!(interleaved.1, fresh.1, "case {k}: solutions differ");
    }
}

/// Single precision through packed arguments (scalars travel as the low 32 bits of a word):
/// CG and BiCGStab histories and solutions identical to `cl_mem` arguments.
#[test]
fn single_precision_packed_arguments_match_cl_mem_arguments_bit_for_bit() {
    use pipekrylov::backend::{MatrixFormat, SpmvOps};
    use pipekrylov::matrix::generate::Generator;
    use pipekrylov::solver::{BiCgStab, Cg, Params};
    let mut packed = backend();
    packed.set_address_args(true);
    packed.set_packed_args(true);
    let mut plain = backend();
    plain.set_address_args(false);
    let p = Generator::Poisson2d.generate::<f32>(3000).unwrap();
    let run = |be: &OpenClBackend| {
        let a = be.upload_matrix(&p.matrix, MatrixFormat::Csr).unwrap();
        let b = be.upload(&vec![1.0f32; a.n_rows()]).unwrap();
        let params = Params {
            rtol: 1e-5,
            max_iter: 80,
            ..Params::default()
        };
        let mut x = be.alloc::<f32>(a.n_rows()).unwrap();
        let cg = Cg::new(be, &a, None, params)
            .unwrap()
            .solve(&b, &mut x)
            .unwrap();
        let xc = be.download(&x).unwrap();
        be.fill(&mut x, 0.0).unwrap();
        let bi = BiCgStab::new(be, &a, None, params)
            .unwrap()
            .solve(&b, &mut x)
            .unwrap();
        (
            cg.residual_history,
            xc,
            bi.residual_history,
            be.download(&x).unwrap(),
        )
    };
    let (a, b) = (run(&packed), run(&plain));
    let platform = packed.device().platform_name.to_ascii_lowercase();
    if platform.contains("portable") || platform.contains("pocl") || platform.contains("nvidia") {
        assert_eq!(packed.uses_packed_args(), Some(true), "{platform}");
    }
    assert!(a.0.len() > 3 && a.2.len() > 3);
    assert_eq!(a, b);
}
