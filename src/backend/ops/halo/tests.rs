use super::*;
use crate::backend::host::HostBackend;

#[test]
fn invalid_halo_arrays_are_refused() {
    let h = HostBackend::new();
    assert!(GatherList::upload(&h, &[0, 3], 3).is_err());
    assert!(GatherList::upload(&h, &[0, 2, 2], 3).is_ok());
    let ok = GhostBlock::<f64>::upload(&h, &[1, 4], &[0, 1, 3], &[0, 2, 1], &[1.0; 3], 5, 3);
    assert!(ok.is_ok());
    // Rows repeated or out of range, pointers not ending at the entry count, columns out
    // of range, a NaN.
    type Arrays<'a> = (&'a [u32], &'a [u32], &'a [u32], &'a [f64]);
    let cases: [Arrays; 5] = [
        (&[1, 1], &[0, 1, 3], &[0, 2, 1], &[1.0; 3]),
        (&[1, 5], &[0, 1, 3], &[0, 2, 1], &[1.0; 3]),
        (&[1, 4], &[0, 1, 2], &[0, 2, 1], &[1.0; 3]),
        (&[1, 4], &[0, 1, 3], &[0, 3, 1], &[1.0; 3]),
        (&[1, 4], &[0, 1, 3], &[0, 2, 1], &[1.0, f64::NAN, 1.0]),
    ];
    for (rows, rp, ci, v) in cases {
        assert!(
            GhostBlock::upload(&h, rows, rp, ci, v, 5, 3).is_err(),
            "{rows:?} {rp:?} {ci:?}"
        );
    }
    assert!(GhostBlock::<f64>::upload(&h, &[], &[], &[], &[], 5, 3).is_err());
}

#[test]
fn the_one_kernel_sums_check_their_ranges() {
    // BiCGStab's globalized copy: 3 sums at stride 37 in a buffer of 116.
    assert!(check_sums_by_kernel(Some(116), 0, 37, 3, 116, (0, 37, 116)).is_ok());
    // GMRES's coefficient row, in place: 6 sums at 10, groups 1.
    assert!(check_sums_by_kernel(None, 10, 1, 6, 16, (10, 1, 6)).is_ok());
    // The partials too short, the sums too short, a stride that leaves the output.
    assert!(check_sums_by_kernel(Some(110), 0, 37, 3, 116, (0, 37, 116)).is_err());
    assert!(check_sums_by_kernel(None, 11, 1, 6, 16, (10, 1, 6)).is_err());
    assert!(check_sums_by_kernel(Some(116), 0, 37, 3, 100, (0, 37, 116)).is_err());
    assert!(check_sums_by_kernel(Some(116), 0, 37, 3, 116, (0, 60, 116)).is_err());
    assert!(check_sums_by_kernel(Some(116), 0, 37, 3, 116, (0, 0, 116)).is_err());
    // Overflowing counts are errors, not panics.
    assert!(check_sums_by_kernel(Some(8), 0, usize::MAX, 2, 8, (0, 1, 2)).is_err());
    assert!(check_sums_by_kernel(Some(8), usize::MAX, 1, 2, 8, (0, 1, 2)).is_err());
    // No sums: nothing to hold.
    assert!(check_sums_by_kernel(Some(0), 0, 0, 0, 0, (0, 1, 0)).is_ok());
}
