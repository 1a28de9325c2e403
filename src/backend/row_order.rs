//! Length-sorted row order of a CSR matrix on a GPU (issue 16: power-law matrices).
//!
//! The CSR kernels give every row of a matrix the same `k` lanes and let a warp take `32 / k`
//! consecutive rows at a time, so a warp is as slow as its longest row. With power-law row
//! lengths consecutive rows differ wildly and most lanes wait. When the rows of a matrix are
//! that uneven ([`imbalance`] above [`SORT_ABOVE`]) the upload stores an order that sorts the
//! rows by length (longest first, ties by index) within windows of [`WINDOW`] consecutive rows;
//! the kernels then visit the rows in that order: the rows of one warp have similar lengths and
//! the results are written within a window of 4096 rows (cached). Rows handled by the
//! long-row path count as empty. Regular matrices keep index order (no extra traffic).

/// Rows per sorting window.
pub const WINDOW: usize = 4096;

/// Sort when [`imbalance`] exceeds this.
pub const SORT_ABOVE: f64 = 1.5;

/// Rows per group of the imbalance measure (one warp at one lane per row).
const GROUP: usize = 32;

/// Length of row `r` as the main kernel sees it (long rows are skipped: 0).
fn kernel_len(row_ptr: &[u32], r: usize, long_len: u32) -> u32 {
    let len = row_ptr[r + 1] - row_ptr[r];
    if len > long_len {
        0
    } else {
        len
    }
}

/// Work of the main kernel relative to a perfect balance when it takes the rows in `order`:
/// the sum over groups of 32 consecutive rows of 32 times the group's longest row, over the
/// total of the row lengths (1 for equal lengths; 1 for an empty matrix).
pub fn imbalance(row_ptr: &[u32], long_len: u32, order: impl Iterator<Item = usize>) -> f64 {
    let (mut padded, mut total, mut group_max, mut in_group) = (0u64, 0u64, 0u32, 0usize);
    for r in order {
        let len = kernel_len(row_ptr, r, long_len);
        total += u64::from(len);
        group_max = group_max.max(len);
        in_group += 1;
        if in_group == GROUP {
            padded += u64::from(group_max) * GROUP as u64;
            (group_max, in_group) = (0, 0);
        }
    }
    padded += u64::from(group_max) * in_group as u64;
    if total == 0 {
        1.0
    } else {
        padded as f64 / total as f64
    }
}

/// The sorted order, or `None` when index order is balanced enough (or `force` says so:
/// `Some(false)` never sorts, `Some(true)` always does).
pub fn plan(row_ptr: &[u32], long_len: u32, force: Option<bool>) -> Option<Vec<u32>> {
    let n_rows = row_ptr.len().saturating_sub(1);
    let wanted = match force {
        Some(f) => f,
        None => imbalance(row_ptr, long_len, 0..n_rows) > SORT_ABOVE,
    };
    if n_rows == 0 || !wanted {
        return None;
    }
    let mut order: Vec<u32> = (0..n_rows as u32).collect();
    for window in order.chunks_mut(WINDOW) {
        window.sort_by_key(|&r| std::cmp::Reverse(kernel_len(row_ptr, r as usize, long_len)));
    }
    Some(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row_ptr(lens: &[u32]) -> Vec<u32> {
        let mut rp = vec![0u32];
        for &l in lens {
            rp.push(rp.last().unwrap() + l);
        }
        rp
    }

    #[test]
    fn equal_rows_are_balanced_and_keep_index_order() {
        let rp = row_ptr(&[5; 1000]);
        assert!((imbalance(&rp, u32::MAX, 0..1000) - 1.0).abs() < 1e-12);
        assert_eq!(plan(&rp, u32::MAX, None), None);
        assert_eq!(plan(&row_ptr(&[]), u32::MAX, Some(true)), None);
    }

    #[test]
    fn uneven_rows_are_sorted_within_windows() {
        // One long row in every group of 32: index order pads every group to 40.
        let lens: Vec<u32> = (0..2 * WINDOW)
            .map(|i| if i % 32 == 0 { 40 } else { 2 })
            .collect();
        let rp = row_ptr(&lens);
        let before = imbalance(&rp, u32::MAX, 0..lens.len());
        assert!(before > 10.0, "{before}");
        let order = plan(&rp, u32::MAX, None).unwrap();
        // A permutation that keeps every row in its window, longest first.
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..lens.len() as u32).collect::<Vec<_>>());
        for (pos, &r) in order.iter().enumerate() {
            assert_eq!(pos / WINDOW, r as usize / WINDOW);
        }
        assert_eq!(lens[order[0] as usize], 40);
        assert_eq!(order[..3], [0, 32, 64]);
        let after = imbalance(&rp, u32::MAX, order.iter().map(|&r| r as usize));
        assert!(after < 1.1, "{after}");
        assert_eq!(plan(&rp, u32::MAX, Some(false)), None);
    }

    #[test]
    fn long_rows_count_as_empty() {
        let mut lens = vec![3u32; 64];
        lens[5] = 1000;
        let rp = row_ptr(&lens);
        assert!(imbalance(&rp, u32::MAX, 0..64) > 5.0);
        assert!((imbalance(&rp, 64, 0..64) - 1.0).abs() < 0.05);
        assert_eq!(plan(&rp, 64, None), None);
    }
}
