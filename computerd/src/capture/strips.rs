//! One zlib stream (a PNG's image data) made of strips of rows filtered
//! and deflated on separate threads, like `pigz`: each strip is a raw
//! deflate stream primed with the 32 KB of filtered bytes before it (so
//! matches across the seam are still found), every strip but the last ends
//! on a byte boundary with a sync flush, and the strips are concatenated
//! behind one zlib header and before one Adler-32 of the whole. Any zlib
//! decoder reads the result as a single stream.

use super::bands::band_count;
use super::filter::{filter_row, FilterChoice, Scratch};
use flate2::{Compress, Compression, FlushCompress, Status};

/// The deflate window: how far back a match may reach.
const WINDOW: usize = 32 * 1024;
/// Below this many raw bytes a frame is deflated on one thread: a thread
/// costs more than it saves.
const PARALLEL_MIN_BYTES: usize = 256 * 1024;

/// Rows of raw pixels to filter and deflate.
pub struct Rows<'a> {
    pub raw: &'a [u8],
    pub row_len: usize,
    pub bpp: usize,
    pub height: usize,
    pub filter: FilterChoice,
    /// The zlib level, 1 (fastest) to 9 (smallest).
    pub level: u32,
}

/// The zlib stream of `rows`, filtered as asked.
pub fn zlib_stream(rows: &Rows<'_>) -> Result<Vec<u8>, std::io::Error> {
    let strips = strip_count(rows.raw.len(), rows.height);
    let bounds: Vec<(usize, usize)> = (0..strips)
        .map(|i| (rows.height * i / strips, rows.height * (i + 1) / strips))
        .collect();
    let parts: Vec<Result<Strip, std::io::Error>> = if strips == 1 {
        vec![deflate_strip(rows, 0, rows.height, true)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = bounds
                .iter()
                .enumerate()
                .skip(1)
                .map(|(i, &(start, end))| {
                    scope.spawn(move || deflate_strip(rows, start, end, i + 1 == strips))
                })
                .collect();
            // The first strip on this thread, the others beside it.
            let (start, end) = bounds[0];
            let mut parts = vec![deflate_strip(rows, start, end, false)];
            parts.extend(handles.into_iter().map(|h| h.join().expect("strip thread")));
            parts
        })
    };
    let total: usize = parts
        .iter()
        .map(|p| p.as_ref().map_or(0, |s| s.deflated.len()))
        .sum();
    let mut out = Vec::with_capacity(total + 6);
    out.extend_from_slice(&zlib_header(rows.level));
    let mut adler = 1u32;
    for part in parts {
        let part = part?;
        adler = zlib_rs::adler32::adler32_combine(adler, part.adler, part.filtered_len as u64);
        out.extend_from_slice(&part.deflated);
    }
    out.extend_from_slice(&adler.to_be_bytes());
    Ok(out)
}

/// How many strips a frame of `bytes` raw bytes and `height` rows is cut in.
fn strip_count(bytes: usize, height: usize) -> usize {
    band_count(bytes, PARALLEL_MIN_BYTES, height)
}

struct Strip {
    deflated: Vec<u8>,
    /// The Adler-32 and length of this strip's filtered bytes.
    adler: u32,
    filtered_len: usize,
}

/// Filters rows `start..end` and deflates them, primed with the filtered
/// rows just above (filtered again here: cheaper than waiting for the
/// thread that owns them).
fn deflate_strip(
    rows: &Rows<'_>,
    start: usize,
    end: usize,
    last: bool,
) -> Result<Strip, std::io::Error> {
    let line = rows.row_len + 1;
    let primer_rows = WINDOW.div_ceil(line).min(start);
    let mut scratch = Scratch::default();
    let mut filtered = Vec::with_capacity((end - start + primer_rows) * line);
    for y in start - primer_rows..end {
        filter_row(
            rows.raw,
            rows.row_len,
            rows.bpp,
            y,
            rows.filter,
            &mut scratch,
            &mut filtered,
        );
    }
    let (primer, own) = filtered.split_at(primer_rows * line);
    let mut compress = Compress::new(Compression::new(rows.level), false);
    if !primer.is_empty() {
        let dictionary = &primer[primer.len().saturating_sub(WINDOW)..];
        compress
            .set_dictionary(dictionary)
            .map_err(std::io::Error::other)?;
    }
    let mut deflated = Vec::with_capacity(own.len() / 8 + 64);
    let flush = if last {
        FlushCompress::Finish
    } else {
        FlushCompress::Sync
    };
    loop {
        let consumed = compress.total_in() as usize;
        let status = compress
            .compress_vec(&own[consumed..], &mut deflated, flush)
            .map_err(std::io::Error::other)?;
        let done = compress.total_in() as usize == own.len()
            && match status {
                Status::StreamEnd => true,
                // A sync flush is complete once it left output room unused.
                Status::Ok | Status::BufError => !last && deflated.len() < deflated.capacity(),
            };
        if done {
            break;
        }
        deflated.reserve(deflated.capacity().max(4096));
    }
    Ok(Strip {
        deflated,
        adler: zlib_rs::adler32::adler32(1, own),
        filtered_len: own.len(),
    })
}

/// The two zlib header bytes: deflate with a 32 KB window, no preset
/// dictionary, the level hint, and the check bits.
fn zlib_header(level: u32) -> [u8; 2] {
    let cmf = 0x78u8;
    let hint = match level {
        0 | 1 => 0u8,
        2..=5 => 1,
        6 => 2,
        _ => 3,
    };
    let flg = hint << 6;
    let check = 31 - ((u16::from(cmf) * 256 + u16::from(flg)) % 31);
    [cmf, flg | (check % 31) as u8]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::filter::RowFilter;
    use std::io::Read;

    /// Un-filtered bytes of a stream: each row's filter byte, then the row.
    fn inflate(stream: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::ZlibDecoder::new(stream)
            .read_to_end(&mut out)
            .expect("a valid zlib stream with a correct Adler-32");
        out
    }

    #[test]
    fn strips_make_one_stream_of_every_row() {
        // 600 rows of 1000 bytes: over the parallel threshold, and rows that
        // repeat across the strips' seams.
        let (row_len, height) = (1000, 600);
        let raw: Vec<u8> = (0..row_len * height)
            .map(|i| ((i % row_len) / 10 + (i / row_len) % 7) as u8)
            .collect();
        for level in [1, 4, 9] {
            let rows = Rows {
                raw: &raw,
                row_len,
                bpp: 1,
                height,
                filter: FilterChoice::All(RowFilter::None),
                level,
            };
            let bytes = inflate(&zlib_stream(&rows).unwrap());
            let expected: Vec<u8> = raw
                .chunks(row_len)
                .flat_map(|row| std::iter::once(0).chain(row.iter().copied()))
                .collect();
            assert_eq!(bytes, expected, "level {level}");
        }
    }

    #[test]
    fn headers_pass_the_zlib_check() {
        for level in 0..=9 {
            let [cmf, flg] = zlib_header(level);
            assert_eq!((u16::from(cmf) * 256 + u16::from(flg)) % 31, 0);
        }
    }
}
