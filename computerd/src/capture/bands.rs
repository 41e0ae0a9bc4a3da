//! How many bands of rows a piece of frame work is cut into, one per core:
//! converting, scaling and deflating a big frame all split the same way.

/// At most this many bands, however many cores there are: each spawn and
/// seam costs a little, and two already halve the time on this project's
/// two-core machines.
const MAX_BANDS: usize = 4;

/// Bands for work of `size` (bytes or pixels) over `rows` rows: one when
/// `size` is under `parallel_min` (a thread would cost more than it saves),
/// else one per core, at most [`MAX_BANDS`] and never more than the rows.
pub fn band_count(size: usize, parallel_min: usize, rows: usize) -> usize {
    if size < parallel_min || rows < 2 {
        return 1;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.clamp(1, MAX_BANDS).min(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_work_stays_on_one_thread_and_bands_never_outnumber_rows() {
        assert_eq!(band_count(10, 100, 50), 1);
        assert_eq!(band_count(1000, 100, 1), 1);
        let many = band_count(1000, 100, 1000);
        assert!((1..=MAX_BANDS).contains(&many));
        assert!(band_count(1000, 100, 2) <= 2);
    }
}
