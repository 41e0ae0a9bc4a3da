//! A palette for frames of few colours. Flat desktops (window manager,
//! terminals, plain pages) usually have well under 256 colours, and an
//! indexed PNG of them is a third of the raw bytes before compression.

/// The most colours an 8-bit palette holds.
pub const PALETTE_MAX_COLOURS: usize = 256;

/// A frame as palette indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indexed {
    /// RGB triples, at most [`PALETTE_MAX_COLOURS`] of them, in order of
    /// first appearance.
    pub palette: Vec<u8>,
    /// One index into `palette` per pixel.
    pub indices: Vec<u8>,
}

/// Slots of the colour table: a power of two, four times the colours it
/// may hold, so probes stay short.
const SLOTS: usize = 1024;
/// No 24-bit colour has this key.
const EMPTY: u32 = u32::MAX;

/// Indexes packed RGB8 pixels, or gives `None` as soon as a 257th colour
/// turns up (a photo or a scaled frame usually has that within its first
/// rows, so the bail-out is cheap).
pub fn index_colours(rgb: &[u8]) -> Option<Indexed> {
    let mut keys = [EMPTY; SLOTS];
    let mut values = [0u8; SLOTS];
    let mut palette = Vec::with_capacity(PALETTE_MAX_COLOURS * 3);
    let mut indices = Vec::with_capacity(rgb.len() / 3);
    // Desktops come in runs of one colour: most pixels skip the table.
    let mut last_colour = EMPTY;
    let mut last_index = 0u8;
    for pixel in rgb.chunks_exact(3) {
        let colour = u32::from(pixel[0]) << 16 | u32::from(pixel[1]) << 8 | u32::from(pixel[2]);
        if colour != last_colour {
            // Fibonacci hashing: the top bits of the product index the table.
            let mut slot =
                (colour.wrapping_mul(0x9E37_79B1) >> (32 - SLOTS.trailing_zeros())) as usize;
            last_index = loop {
                if keys[slot] == colour {
                    break values[slot];
                }
                if keys[slot] == EMPTY {
                    let index = palette.len() / 3;
                    if index == PALETTE_MAX_COLOURS {
                        return None;
                    }
                    keys[slot] = colour;
                    values[slot] = index as u8;
                    palette.extend_from_slice(pixel);
                    break index as u8;
                }
                slot = (slot + 1) & (SLOTS - 1);
            };
            last_colour = colour;
        }
        indices.push(last_index);
    }
    Some(Indexed { palette, indices })
}

/// The fewest bits a pixel of a palette of `colours` takes in a PNG: 1, 2,
/// 4 or 8. A terminal of 2 colours packs 8 pixels to the byte, so deflate
/// reads an eighth of the bytes.
pub fn bit_depth(colours: usize) -> u8 {
    match colours {
        0..=2 => 1,
        3..=4 => 2,
        5..=16 => 4,
        _ => 8,
    }
}

/// `indices` (rows of `width`) packed `depth` bits a pixel, leftmost pixel
/// in the high bits, each row padded to whole bytes (PNG's layout). The
/// indices must fit in `depth` bits.
pub fn pack_indices(indices: &[u8], width: usize, depth: u8) -> Vec<u8> {
    if depth == 8 {
        return indices.to_vec();
    }
    let per_byte = usize::from(8 / depth);
    let row_len = width.div_ceil(per_byte);
    let rows = indices.len() / width.max(1);
    let mut packed = Vec::with_capacity(row_len * rows);
    for row in indices.chunks_exact(width) {
        for group in row.chunks(per_byte) {
            let byte = group
                .iter()
                .fold(0u8, |byte, index| (byte << depth) | index);
            // A short last group sits in the high bits too.
            packed.push(byte << (usize::from(depth) * (per_byte - group.len())));
        }
    }
    packed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pixels `0..count` as distinct colours, spread over all three bytes.
    fn colours(count: u32) -> Vec<u8> {
        (0..count)
            .flat_map(|i| {
                let c = i.wrapping_mul(2_654_435_761) & 0xFF_FFFF;
                [(c >> 16) as u8, (c >> 8) as u8, c as u8]
            })
            .collect()
    }

    #[test]
    fn indices_point_at_each_pixels_colour() {
        // 200 colours, then the same pixels in reverse order.
        let mut rgb = colours(200);
        let again: Vec<u8> = colours(200).rchunks_exact(3).flatten().copied().collect();
        rgb.extend(again);
        let indexed = index_colours(&rgb).expect("200 colours fit");
        assert_eq!(indexed.palette.len(), 200 * 3);
        assert_eq!(indexed.indices.len(), 400);
        for (pixel, index) in rgb.chunks_exact(3).zip(&indexed.indices) {
            let at = usize::from(*index) * 3;
            assert_eq!(pixel, &indexed.palette[at..at + 3]);
        }
    }

    #[test]
    fn exactly_256_colours_fit_and_257_do_not() {
        assert!(index_colours(&colours(256)).is_some());
        assert_eq!(index_colours(&colours(257)), None);
        // White, which is the table's empty key plus one byte, and black.
        let edge = [255, 255, 255, 0, 0, 0, 255, 255, 255];
        let indexed = index_colours(&edge).unwrap();
        assert_eq!(indexed.indices, [0, 1, 0]);
    }

    #[test]
    fn indices_pack_high_bits_first_and_pad_each_row() {
        assert_eq!(
            (bit_depth(2), bit_depth(3), bit_depth(16), bit_depth(17)),
            (1, 2, 4, 8)
        );
        // Two rows of 3 pixels at 2 bits: 0b01_10_11_00 each.
        assert_eq!(
            pack_indices(&[1, 2, 3, 1, 2, 3], 3, 2),
            [0b0110_1100, 0b0110_1100]
        );
        // 1 bit, 9 pixels: a full byte and one bit in the high end.
        assert_eq!(
            pack_indices(&[1, 0, 1, 0, 0, 0, 0, 1, 1], 9, 1),
            [0b1010_0001, 0b1000_0000]
        );
        assert_eq!(pack_indices(&[5, 15], 2, 4), [0x5f]);
    }
}
