//! How many bands of rows a piece of frame work is cut into, one per core:
//! converting, scaling and deflating a big frame all split the same way,
//! and [`in_bands`] runs such work.

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

/// Runs `work(first_row, rows)` over `out` cut into bands of whole rows
/// (`row_len` bytes each), one band per thread as [`band_count`] gives
/// for work of `size`; the first band runs on the calling thread.
pub fn in_bands(
    out: &mut [u8],
    row_len: usize,
    size: usize,
    parallel_min: usize,
    work: impl Fn(usize, &mut [u8]) + Sync,
) {
    if out.is_empty() || row_len == 0 {
        return;
    }
    let rows = out.len() / row_len;
    let bands = band_count(size, parallel_min, rows);
    if bands == 1 {
        work(0, out);
        return;
    }
    let band_rows = rows.div_ceil(bands);
    let work = &work;
    std::thread::scope(|scope| {
        let mut chunks = out.chunks_mut(band_rows * row_len).enumerate();
        let first = chunks.next();
        for (index, chunk) in chunks {
            scope.spawn(move || work(index * band_rows, chunk));
        }
        if let Some((_, chunk)) = first {
            work(0, chunk);
        }
    });
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
