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
}
