//! A palette for frames of few colours. Flat desktops (window manager,
//! terminals, plain pages) usually have well under 256 colours, and an
//! indexed PNG of them is a third of the raw bytes before compression.

/// The most colours an 8-bit palette holds.
pub const PALETTE_MAX_COLOURS: usize = 256;

/// A frame as palette indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indexed {
    /// RGB triples, at most [`PALETTE_MAX_COLOURS`] of them, in order of
    /// first appearance (of those kept, when shades were merged).
    pub palette: Vec<u8>,
    /// One index into `palette` per pixel.
    pub indices: Vec<u8>,
}

/// Distinct colours counted before a frame is taken for a photo or a
/// scaled image, which no palette of 256 serves. Antialiased text on a
/// desktop has a few hundred; a page with pictures has thousands within
/// its first rows, so the bail-out stays cheap.
pub const COUNTED_MAX_COLOURS: usize = 1024;

/// Slots of the colour table: a power of two, four times the colours it
/// may hold, so probes stay short.
const SLOTS: usize = 4 * COUNTED_MAX_COLOURS;
/// No 24-bit colour has this key.
const EMPTY: u32 = u32::MAX;

/// A frame's colours: each distinct one once, in order of first
/// appearance, with how many pixels have it, and each pixel as the number
/// of its colour.
pub(super) struct Counted {
    /// Colours as `0xRRGGBB`.
    pub colours: Vec<u32>,
    pub counts: Vec<u32>,
    pub ids: Vec<u16>,
}

/// Counts the colours of packed RGB8 pixels, or gives `None` as soon as
/// there are more than `max` (at most [`COUNTED_MAX_COLOURS`]).
pub(super) fn count_colours(rgb: &[u8], max: usize) -> Option<Counted> {
    let max = max.min(COUNTED_MAX_COLOURS);
    let mut keys = vec![EMPTY; SLOTS];
    let mut values = vec![0u16; SLOTS];
    let mut colours = Vec::with_capacity(max.min(PALETTE_MAX_COLOURS));
    let mut counts: Vec<u32> = Vec::with_capacity(max.min(PALETTE_MAX_COLOURS));
    let mut ids = Vec::with_capacity(rgb.len() / 3);
    // Desktops come in runs of one colour: most pixels skip the table, and
    // a run is counted once it ends (a count bumped for every pixel would
    // wait on its own last store).
    let mut last_colour = EMPTY;
    let mut last_id = 0u16;
    let mut run = 0u32;
    for pixel in rgb.chunks_exact(3) {
        let colour = u32::from(pixel[0]) << 16 | u32::from(pixel[1]) << 8 | u32::from(pixel[2]);
        if colour != last_colour {
            if run > 0 {
                counts[usize::from(last_id)] += run;
            }
            run = 0;
            // Fibonacci hashing: the top bits of the product index the table.
            let mut slot =
                (colour.wrapping_mul(0x9E37_79B1) >> (32 - SLOTS.trailing_zeros())) as usize;
            last_id = loop {
                if keys[slot] == colour {
                    break values[slot];
                }
                if keys[slot] == EMPTY {
                    if colours.len() == max {
                        return None;
                    }
                    let id = colours.len() as u16;
                    keys[slot] = colour;
                    values[slot] = id;
                    colours.push(colour);
                    counts.push(0);
                    break id;
                }
                slot = (slot + 1) & (SLOTS - 1);
            };
            last_colour = colour;
        }
        run += 1;
        ids.push(last_id);
    }
    if run > 0 {
        counts[usize::from(last_id)] += run;
    }
    Some(Counted {
        colours,
        counts,
        ids,
    })
}

/// Indexes packed RGB8 pixels exactly, or gives `None` when they have
/// more than 256 colours.
pub fn index_colours(rgb: &[u8]) -> Option<Indexed> {
    count_colours(rgb, PALETTE_MAX_COLOURS).map(exact)
}

/// Indexes packed RGB8 pixels for a PNG: exactly when they have at most
/// 256 colours; else, when they have at most [`COUNTED_MAX_COLOURS`],
/// with the rarest shades merged into their nearest kept colour within
/// the bounds of [`super::shades`] (antialiased text). `None` when
/// neither fits: the frame stays RGB.
pub fn index_shades(rgb: &[u8]) -> Option<Indexed> {
    let counted = count_colours(rgb, COUNTED_MAX_COLOURS)?;
    if counted.colours.len() <= PALETTE_MAX_COLOURS {
        return Some(exact(counted));
    }
    let merged = super::shades::merge_shades(&counted.colours, &counted.counts)?;
    Some(Indexed {
        palette: triples(&merged.palette),
        indices: counted
            .ids
            .iter()
            .map(|&id| merged.slot_of[usize::from(id)])
            .collect(),
    })
}

/// Colour ids as they are: at most 256 of them, each its own slot.
fn exact(counted: Counted) -> Indexed {
    Indexed {
        palette: triples(&counted.colours),
        indices: counted.ids.iter().map(|&id| id as u8).collect(),
    }
}

fn triples(colours: &[u32]) -> Vec<u8> {
    colours
        .iter()
        .flat_map(|c| [(c >> 16) as u8, (c >> 8) as u8, *c as u8])
        .collect()
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
    match depth {
        1 => pack::<8>(indices, width),
        2 => pack::<4>(indices, width),
        4 => pack::<2>(indices, width),
        _ => indices.to_vec(),
    }
}

/// [`pack_indices`] at `PER` pixels a byte: a whole group is a fixed-size
/// array, so its shifts unroll.
fn pack<const PER: usize>(indices: &[u8], width: usize) -> Vec<u8> {
    let depth = 8 / PER;
    let row_len = width.div_ceil(PER);
    let rows = indices.len() / width.max(1);
    let mut packed = Vec::with_capacity(row_len * rows);
    let join = |group: &[u8]| {
        group
            .iter()
            .fold(0u8, |byte, index| (byte << depth) | index)
    };
    for row in indices.chunks_exact(width) {
        let groups = row.chunks_exact(PER);
        let rest = groups.remainder();
        packed.extend(groups.map(|group| {
            let group: &[u8; PER] = group.try_into().expect("chunks of PER");
            join(group)
        }));
        if !rest.is_empty() {
            // A short last group sits in the high bits too.
            packed.push(join(rest) << (depth * (PER - rest.len())));
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
