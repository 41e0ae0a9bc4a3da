//! Fitting a frame of a few hundred colours into a 256-colour palette by
//! merging near shades, so that a desktop of antialiased text still gets an
//! indexed PNG (a third of the raw bytes, and a fraction of the RGB PNG).
//!
//! Antialiased glyphs on a flat background blend their ink into it: a
//! terminal of DejaVu Sans Mono shows about 400 colours, of which the 256
//! most common cover 99.97 % of the pixels, and the rest are shades a few
//! levels from one that is kept. Merging them is invisible; moving a colour
//! that stands apart (an icon's red) is not. So the merge is greedy on the
//! cost of a move, the pixels moved times the squared distance: cheap
//! near-duplicates go first and lone distinct colours stay. A frame whose
//! merge would move a pixel further than [`SHADE_MOVE_MAX`] in any channel,
//! or more than [`MOVED_SHARE_MAX`] of its pixels, stays exact (RGB).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The furthest, in levels of one channel out of 255, that a merged pixel
/// may move: below what an eye tells apart between neighbouring
/// antialiasing shades.
pub const SHADE_MOVE_MAX: u32 = 12;

/// The largest share of a frame's pixels that may change colour, as a
/// fraction: antialiasing fringes, not content.
pub const MOVED_SHARE_MAX: f64 = 0.02;

/// The most colours kept: a pixel's slot is one byte, as in an 8-bit
/// palette.
const KEPT_MAX: usize = u8::MAX as usize + 1;

/// A palette of at most 256 colours and the slot each colour id maps to.
#[derive(Debug, PartialEq, Eq)]
pub struct Merged {
    /// Kept colours as `0xRRGGBB`, in the order of their ids.
    pub palette: Vec<u32>,
    /// For each colour id, its slot in `palette`.
    pub slot_of: Vec<u8>,
}

/// Merges `colours` (with `counts` pixels each) down to 256, or `None`
/// when that would be visible by the bounds above.
pub fn merge_shades(colours: &[u32], counts: &[u32]) -> Option<Merged> {
    let n = colours.len();
    if n <= KEPT_MAX {
        return Some(Merged {
            palette: colours.to_vec(),
            slot_of: (0..n).map(|id| id as u8).collect(),
        });
    }
    let space = Space::new(colours);
    let pixels: u64 = counts.iter().map(|&c| u64::from(c)).sum();
    let mut alive = vec![true; n];
    // Pixels a colour stands for once others merged into it.
    let mut weight: Vec<u64> = counts.iter().map(|&c| u64::from(c)).collect();
    let mut nearest: Vec<(u32, usize)> = (0..n).map(|i| space.nearest(i, &alive)).collect();
    // The cheapest move first. A colour's cost only grows (it gains
    // weight, its neighbours go), so a cost in the heap is a lower bound:
    // one found stale is computed again and pushed back.
    let cost =
        |i: usize, weight: &[u64], nearest: &[(u32, usize)]| weight[i] * u64::from(nearest[i].0);
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = (0..n)
        .map(|i| Reverse((cost(i, &weight, &nearest), i)))
        .collect();
    let mut left = n;
    while left > KEPT_MAX {
        let Reverse((was, gone)) = heap.pop()?;
        if !alive[gone] {
            continue;
        }
        if !alive[nearest[gone].1] {
            nearest[gone] = space.nearest(gone, &alive);
        }
        let now = cost(gone, &weight, &nearest);
        if now != was {
            heap.push(Reverse((now, gone)));
            continue;
        }
        alive[gone] = false;
        weight[nearest[gone].1] += weight[gone];
        left -= 1;
    }
    // Each merged colour takes its nearest kept colour (the one it was
    // merged into may have gone since), and is checked against the bounds.
    let mut slot_of = vec![0u8; n];
    let mut palette = Vec::with_capacity(KEPT_MAX);
    for i in (0..n).filter(|&i| alive[i]) {
        slot_of[i] = palette.len() as u8;
        palette.push(colours[i]);
    }
    let mut moved = 0u64;
    for i in (0..n).filter(|&i| !alive[i]) {
        let (_, kept) = space.nearest(i, &alive);
        if space.step(i, kept) > SHADE_MOVE_MAX {
            return None;
        }
        moved += u64::from(counts[i]);
        slot_of[i] = slot_of[kept];
    }
    (moved as f64 <= MOVED_SHARE_MAX * pixels as f64).then_some(Merged { palette, slot_of })
}

/// The colours as three arrays of channels, so that the distances to all
/// of them are one sweep the compiler vectorizes.
struct Space {
    red: Vec<i32>,
    green: Vec<i32>,
    blue: Vec<i32>,
}

impl Space {
    fn new(colours: &[u32]) -> Space {
        let channel = |shift: u32| {
            colours
                .iter()
                .map(|&c| (c >> shift & 0xff) as i32)
                .collect()
        };
        Space {
            red: channel(16),
            green: channel(8),
            blue: channel(0),
        }
    }

    /// The squared distance to, and the id of, the colour nearest `i`
    /// among the others still alive.
    fn nearest(&self, i: usize, alive: &[bool]) -> (u32, usize) {
        let (r, g, b) = (self.red[i], self.green[i], self.blue[i]);
        let mut best = (u32::MAX, i);
        let channels = self.red.iter().zip(&self.green).zip(&self.blue);
        for (j, (((red, green), blue), &alive)) in channels.zip(alive).enumerate() {
            let d = ((red - r).pow(2) + (green - g).pow(2) + (blue - b).pow(2)) as u32;
            if d < best.0 && alive && j != i {
                best = (d, j);
            }
        }
        best
    }

    /// The largest difference of one channel between two colours.
    fn step(&self, i: usize, j: usize) -> u32 {
        let red = self.red[i].abs_diff(self.red[j]);
        let green = self.green[i].abs_diff(self.green[j]);
        let blue = self.blue[i].abs_diff(self.blue[j]);
        red.max(green).max(blue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grey(level: u32) -> u32 {
        level << 16 | level << 8 | level
    }

    #[test]
    fn up_to_256_colours_are_kept_as_they_are() {
        let colours: Vec<u32> = (0..256).map(|i| i * 0x010101).collect();
        let merged = merge_shades(&colours, &vec![1; 256]).unwrap();
        assert_eq!(merged.palette, colours);
        assert_eq!(merged.slot_of, (0..=255).collect::<Vec<u8>>());
    }

    #[test]
    fn rare_shades_merge_into_their_nearest_kept_colour_and_lone_colours_stay() {
        // 250 common colours far apart, a lone red pixel, and 20 rare
        // greys, each one level from a common grey.
        let mut colours: Vec<u32> = (0..250).map(grey).collect();
        let mut counts = vec![1000; 250];
        colours.push(0xff0000);
        counts.push(1);
        for i in 0..20 {
            colours.push(grey(i * 10) ^ 0x000001);
            counts.push(2);
        }
        let merged = merge_shades(&colours, &counts).unwrap();
        assert_eq!(merged.palette.len(), 256);
        let red = merged.slot_of[250];
        assert_eq!(
            merged.palette[usize::from(red)],
            0xff0000,
            "the lone red stays"
        );
        for (id, &colour) in colours.iter().enumerate() {
            let kept = merged.palette[usize::from(merged.slot_of[id])];
            let step = Space::new(&[colour, kept]).step(0, 1);
            assert!(step <= SHADE_MOVE_MAX, "colour {colour:06x} moved {step}");
        }
    }

    #[test]
    fn a_merge_that_would_show_keeps_the_frame_exact() {
        // 300 colours 20 levels apart in red: any merge moves a pixel 20.
        let colours: Vec<u32> = (0..300).map(|i| (i % 13 * 20) << 16 | i).collect();
        assert_eq!(merge_shades(&colours, &vec![1; 300]), None);
        // Near shades, but too many pixels of them: over the share.
        let mut colours: Vec<u32> = (0..256).map(|i| i * 0x010000).collect();
        let mut counts = vec![100; 256];
        for i in 0..10 {
            colours.push(i * 0x010000 + 1);
            counts.push(100);
        }
        assert_eq!(merge_shades(&colours, &counts), None);
    }
}
