//! OpenCL's [`HaloOps`]: the kernels (`kernels/halo.kc`) are launched by the trait's default
//! bodies, written once for both GPU runtimes (`src/backend/ops/halo/launch.rs`); OpenCL has no
//! device-to-device link (the host-staged exchange is used).

use super::OpenClBackend;
use crate::backend::HaloOps;

impl HaloOps for OpenClBackend {}

#[cfg(test)]
mod tests {
    //! `halo_sums_link` is launched only by the CUDA link; its OpenCL twin runs here on one
    //! device, with the neighbour's side of the exchange written by the test: its flags and
    //! sums set before the launch, this rank's sends and flags read after it.
    use super::*;
    use crate::backend::opencl::launch::Arg;
    use crate::backend::ops::Kernel;
    use crate::backend::{BackendInfo, VectorOps};

    /// What one launch of the twin left: the sums, this rank's sends into the "neighbour's
    /// area", and the two flags it raises there (sent, consumed).
    struct Outcome {
        sums: Vec<f64>,
        sent_to: Vec<f64>,
        flags: (u32, u32),
    }

    /// Launch the twin as rank `me` of two, exchange `k`, with the neighbour's "consumed" and
    /// "sent" flags at the given values and its finished sums `theirs`.
    #[allow(clippy::too_many_arguments)]
    fn launch(
        cl: &OpenClBackend,
        partials: &[f64],
        groups: usize,
        slots: usize,
        theirs: &[f64],
        me: u32,
        k: u32,
        (consumed, sent): (u32, u32),
        (stride, len): (usize, usize),
    ) -> Outcome {
        let p = cl.upload(partials).unwrap();
        let dst = cl.upload(&vec![-7.0f64; slots]).unwrap();
        let consumed = cl.upload(&[consumed]).unwrap();
        let sent_there = cl.upload(&[0u32]).unwrap();
        let sent = cl.upload(&[sent]).unwrap();
        let area = cl.upload(theirs).unwrap();
        let consumed_there = cl.upload(&[0u32]).unwrap();
        let sums = cl.upload(&vec![-5.0f64; len]).unwrap();
        cl.launch::<f64>(
            Kernel::HaloSumsLink,
            1,
            &[
                Arg::Mem(cl.mem(&p).unwrap()),
                Arg::ulong(0),
                Arg::uint(groups as u32),
                Arg::uint(slots as u32),
                Arg::Mem(cl.mem(&dst).unwrap()),
                Arg::Mem(cl.mem(&consumed).unwrap()),
                Arg::uint(k - 1),
                Arg::Mem(cl.mem(&sent_there).unwrap()),
                Arg::uint(k),
                Arg::Mem(cl.mem(&sent).unwrap()),
                Arg::Mem(cl.mem(&area).unwrap()),
                Arg::Mem(cl.mem(&consumed_there).unwrap()),
                Arg::uint(me),
                Arg::Mem(cl.mem(&sums).unwrap()),
                Arg::ulong(0),
                Arg::uint(stride as u32),
                Arg::uint(len as u32),
            ],
        )
        .unwrap();
        Outcome {
            sums: cl.download(&sums).unwrap(),
            sent_to: cl.download(&dst).unwrap(),
            flags: (
                cl.download(&sent_there).unwrap()[0],
                cl.download(&consumed_there).unwrap()[0],
            ),
        }
    }

    #[test]
    fn the_sums_link_twin_finishes_sends_and_adds_in_rank_order() {
        let cl = OpenClBackend::from_env().expect("an OpenCL device (PoCL in CI)");
        if !cl.supports_f64() {
            return;
        }
        let (groups, slots) = (37, 3);
        let partials: Vec<f64> = (0..groups * slots)
            .map(|i| ((i * 7919 % 1013) as f64 - 500.0) * 1e-3 + 1.0 / (i + 3) as f64)
            .collect();
        let theirs = [0.125, -3.5, 1e-9];
        // This rank's finished sums, as halo_partials_finish gives them.
        let p = cl.upload(&partials).unwrap();
        let mut finished = cl.upload(&[0.0f64; 3]).unwrap();
        cl.halo_partials_finish(&p, 0, groups, slots, &mut finished, 0)
            .unwrap();
        let own = cl.download(&finished).unwrap();
        for me in [0u32, 1] {
            // Exchange 9 with the neighbour's flags ready, into the layout (stride, length).
            let run = |layout| {
                launch(
                    &cl,
                    &partials,
                    groups,
                    slots,
                    &theirs,
                    me,
                    9,
                    (8, 9),
                    layout,
                )
            };
            // The copy's layout: sum j at j * groups, zeros elsewhere.
            let len = groups * slots + 5;
            let got = run((groups, len));
            assert_eq!(got.sent_to, own, "rank {me}: the sums sent");
            assert_eq!(got.flags, (9, 9), "rank {me}: sent and consumed raised");
            for (i, v) in got.sums.iter().enumerate() {
                let want = if i % groups == 0 && i / groups < slots {
                    let j = i / groups;
                    let (first, second) = if me == 0 {
                        (own[j], theirs[j])
                    } else {
                        (theirs[j], own[j])
                    };
                    (0.0 + first) + second
                } else {
                    0.0
                };
                assert_eq!(v.to_bits(), want.to_bits(), "rank {me}, entry {i}");
            }
            // Stride 1 and one entry more: the sums, then a 0.
            let got = run((1, 4));
            assert_eq!(got.sums[3], 0.0);
            assert!(got.sums[..3].iter().all(|v| v.is_finite()));
        }
    }

    #[test]
    fn the_sums_link_twin_gives_up_without_its_neighbour() {
        let cl = OpenClBackend::from_env().expect("an OpenCL device (PoCL in CI)");
        if !cl.supports_f64() {
            return;
        }
        let partials = vec![1.0f64; 8 * 2];
        // The neighbour never consumed exchange k - 1 nor sent exchange k: nothing is sent,
        // no flag raised, the sums are NaN (the zero entries stay zero).
        let got = launch(&cl, &partials, 8, 2, &[1.0, 2.0], 1, 4, (2, 3), (1, 3));
        assert_eq!(got.sent_to, vec![-7.0, -7.0]);
        assert_eq!(got.flags, (0, 0));
        assert!(got.sums[..2].iter().all(|v| v.is_nan()), "{:?}", got.sums);
        assert_eq!(got.sums[2], 0.0);
    }
}
