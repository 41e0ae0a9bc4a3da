//! PNG row filters (PNG spec, section 9) and the per-row choice between
//! them. Each filtered byte depends only on raw bytes (its left, upper and
//! upper-left neighbours), never on other filtered bytes, so the loops
//! vectorize and rows can be filtered in any order, on any thread.

/// A PNG filter type, as written before each row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RowFilter {
    None = 0,
    Sub = 1,
    Up = 2,
    Paeth = 4,
}

/// How the rows of an image are filtered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterChoice {
    /// Every row the same way (palette indices take `None`: differences of
    /// indices mean nothing).
    All(RowFilter),
    /// Per row, the filter whose output has the smallest sum of absolute
    /// values (the PNG spec's suggested heuristic): flat runs stay zeros,
    /// antialiased edges and gradients become small numbers.
    Adaptive,
}

/// Writes row `y` of `raw` (rows of `row_len` bytes, `bpp` bytes a pixel)
/// to `out` as its filter byte and the filtered bytes.
pub fn filter_row(
    raw: &[u8],
    row_len: usize,
    bpp: usize,
    y: usize,
    choice: FilterChoice,
    scratch: &mut Scratch,
    out: &mut Vec<u8>,
) {
    let row = &raw[y * row_len..(y + 1) * row_len];
    let above = y.checked_sub(1).map(|p| &raw[p * row_len..y * row_len]);
    let filter = match choice {
        FilterChoice::All(filter) => filter,
        FilterChoice::Adaptive => {
            return adaptive(row, above, bpp, scratch, out);
        }
    };
    out.push(filter as u8);
    let start = out.len();
    out.resize(start + row.len(), 0);
    apply(filter, row, above, bpp, &mut out[start..]);
}

/// Buffers for the adaptive choice, reused across rows.
#[derive(Default)]
pub struct Scratch {
    candidates: [Vec<u8>; 3],
}

fn adaptive(
    row: &[u8],
    above: Option<&[u8]>,
    bpp: usize,
    scratch: &mut Scratch,
    out: &mut Vec<u8>,
) {
    let filters = [RowFilter::Sub, RowFilter::Up, RowFilter::Paeth];
    let mut best = (RowFilter::None, cost(row));
    for (filter, buffer) in filters.iter().zip(scratch.candidates.iter_mut()) {
        buffer.resize(row.len(), 0);
        apply(*filter, row, above, bpp, buffer);
        let c = cost(buffer);
        if c < best.1 {
            best = (*filter, c);
        }
    }
    out.push(best.0 as u8);
    match best.0 {
        RowFilter::None => out.extend_from_slice(row),
        chosen => {
            let at = filters
                .iter()
                .position(|f| *f == chosen)
                .expect("a candidate");
            out.extend_from_slice(&scratch.candidates[at]);
        }
    }
}

/// The sum of the bytes taken as signed, in absolute value.
fn cost(filtered: &[u8]) -> u64 {
    filtered
        .chunks(4096)
        .map(|chunk| {
            chunk
                .iter()
                .map(|b| u32::from((*b as i8).unsigned_abs()))
                .sum::<u32>()
        })
        .map(u64::from)
        .sum()
}

/// Filters one row into `out` (as long as `row`).
fn apply(filter: RowFilter, row: &[u8], above: Option<&[u8]>, bpp: usize, out: &mut [u8]) {
    let n = row.len();
    match (filter, above) {
        (RowFilter::None, _) | (RowFilter::Up, None) => out.copy_from_slice(row),
        (RowFilter::Sub, _) | (RowFilter::Paeth, None) => {
            // Paeth without a row above predicts the left byte, like Sub.
            out[..bpp.min(n)].copy_from_slice(&row[..bpp.min(n)]);
            for ((o, x), a) in out[bpp.min(n)..]
                .iter_mut()
                .zip(&row[bpp.min(n)..])
                .zip(row)
            {
                *o = x.wrapping_sub(*a);
            }
        }
        (RowFilter::Up, Some(above)) => {
            for ((o, x), b) in out.iter_mut().zip(row).zip(above) {
                *o = x.wrapping_sub(*b);
            }
        }
        (RowFilter::Paeth, Some(above)) => {
            let head = bpp.min(n);
            // The first pixel has no left or upper-left: Paeth gives `above`.
            for ((o, x), b) in out[..head].iter_mut().zip(&row[..head]).zip(above) {
                *o = x.wrapping_sub(*b);
            }
            // Slices of one length, indexed alike: the loop vectorizes.
            let len = n - head;
            let (out, x, b) = (&mut out[head..], &row[head..], &above[head..]);
            let (a, c) = (&row[..len], &above[..len]);
            for i in 0..len {
                out[i] = x[i].wrapping_sub(paeth(a[i], b[i], c[i]));
            }
        }
    }
}

/// The Paeth predictor: of left, above and upper-left, the one nearest to
/// left + above - upper-left; ties go in that order.
#[inline(always)]
fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let (a16, b16, c16) = (i16::from(a), i16::from(b), i16::from(c));
    let pa = (b16 - c16).abs();
    let pb = (a16 - c16).abs();
    let pc = (a16 + b16 - 2 * c16).abs();
    // Selects rather than branches, so vectors can take them.
    let b_or_c = if pb <= pc { b } else { c };
    if pa <= pb && pa <= pc {
        a
    } else {
        b_or_c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Undoes one filtered row, the way a decoder does, into `row`.
    fn unfilter(kind: u8, filtered: &[u8], above: &[u8], bpp: usize, row: &mut [u8]) {
        for i in 0..filtered.len() {
            let a = if i >= bpp { row[i - bpp] } else { 0 };
            let b = above[i];
            let c = if i >= bpp { above[i - bpp] } else { 0 };
            let predicted = match kind {
                0 => 0,
                1 => a,
                2 => b,
                4 => paeth(a, b, c),
                other => panic!("filter {other}"),
            };
            row[i] = filtered[i].wrapping_add(predicted);
        }
    }

    fn image(width: usize, height: usize, bpp: usize) -> Vec<u8> {
        (0..width * height * bpp)
            .map(|i| ((i * 37) ^ (i / 7) ^ (i * i % 251)) as u8)
            .collect()
    }

    #[test]
    fn every_choice_round_trips_through_a_decoder() {
        let (width, height) = (13, 6);
        for bpp in [1, 3] {
            let raw = image(width, height, bpp);
            let row_len = width * bpp;
            for choice in [
                FilterChoice::All(RowFilter::None),
                FilterChoice::All(RowFilter::Sub),
                FilterChoice::All(RowFilter::Up),
                FilterChoice::All(RowFilter::Paeth),
                FilterChoice::Adaptive,
            ] {
                let mut scratch = Scratch::default();
                let mut decoded = vec![0u8; raw.len()];
                let zeros = vec![0u8; row_len];
                for y in 0..height {
                    let mut out = Vec::new();
                    filter_row(&raw, row_len, bpp, y, choice, &mut scratch, &mut out);
                    assert_eq!(out.len(), row_len + 1);
                    let (done, rest) = decoded.split_at_mut(y * row_len);
                    let above = if y == 0 {
                        &zeros[..]
                    } else {
                        &done[(y - 1) * row_len..]
                    };
                    unfilter(out[0], &out[1..], above, bpp, &mut rest[..row_len]);
                }
                assert_eq!(decoded, raw, "{choice:?}, {bpp} bytes a pixel");
            }
        }
    }

    #[test]
    fn adaptive_keeps_flat_rows_unfiltered_and_filters_gradients() {
        let flat = vec![9u8; 30];
        let mut out = Vec::new();
        let mut scratch = Scratch::default();
        filter_row(
            &flat,
            30,
            3,
            0,
            FilterChoice::Adaptive,
            &mut scratch,
            &mut out,
        );
        assert_eq!(
            out[0],
            RowFilter::Sub as u8,
            "a flat first row is zeros under Sub"
        );
        let gradient: Vec<u8> = (0..60).map(|i| (i / 3 * 5 + 100) as u8).collect();
        out.clear();
        filter_row(
            &gradient,
            30,
            3,
            1,
            FilterChoice::Adaptive,
            &mut scratch,
            &mut out,
        );
        assert!(out[0] != RowFilter::None as u8);
    }
}
