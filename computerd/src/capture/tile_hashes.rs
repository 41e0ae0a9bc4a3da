//! The fingerprint of a screen in the server's 4-byte pixels, kept as one
//! hash per tile: a grab that re-read a few drawn boxes rehashes only the
//! tiles they touch, and the fingerprint combines all tiles.

use super::area::Area;
use super::frame::mix;

/// Pixels across a tile: 512 bytes a row, whole 32-byte blocks.
const TILE_WIDTH: u32 = 128;
/// Rows down a tile.
const TILE_HEIGHT: u32 = 16;
/// Odd constant of the lanes (as in `frame::masked_fingerprint`).
const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// Hashes of the tiles of one `width` x `height` image of 4-byte pixels
/// in rows of `width * 4` bytes.
pub struct TileHashes {
    width: u32,
    height: u32,
    /// Keeps the colour bits of the two pixels of a word (see
    /// `PixelFormat::word_mask`).
    mask: u64,
    columns: u32,
    tiles: Vec<u64>,
}

impl TileHashes {
    /// Hashes every tile of `data`.
    pub fn of(data: &[u8], width: u32, height: u32, mask: u64) -> TileHashes {
        let columns = width.div_ceil(TILE_WIDTH);
        let rows = height.div_ceil(TILE_HEIGHT);
        let mut hashes = TileHashes {
            width,
            height,
            mask,
            columns,
            tiles: vec![0; (columns * rows) as usize],
        };
        hashes.update(data, &[Area::whole(width, height)]);
        hashes
    }

    /// Rehashes the tiles that `areas` touch.
    pub fn update(&mut self, data: &[u8], areas: &[Area]) {
        for area in areas.iter().filter(|a| !a.is_empty()) {
            let (first_column, end_column) = (
                area.x / TILE_WIDTH,
                area.right().div_ceil(TILE_WIDTH).min(self.columns),
            );
            let (first_row, end_row) = (area.y / TILE_HEIGHT, area.bottom().div_ceil(TILE_HEIGHT));
            for row in first_row..end_row {
                for column in first_column..end_column {
                    self.tiles[(row * self.columns + column) as usize] =
                        self.tile_hash(data, column, row);
                }
            }
        }
    }

    /// The hash of one tile's pixels: four lanes of masked 8-byte words,
    /// continued from row to row.
    fn tile_hash(&self, data: &[u8], column: u32, row: u32) -> u64 {
        let stride = self.width as usize * 4;
        let x = (column * TILE_WIDTH) as usize * 4;
        let width = (TILE_WIDTH.min(self.width - column * TILE_WIDTH)) as usize * 4;
        let top = row * TILE_HEIGHT;
        let mut lanes = [K, K.rotate_left(16), K.rotate_left(32), K.rotate_left(48)];
        let mut feed = |block: &[u8]| {
            for (lane, word) in lanes.iter_mut().zip(block.chunks_exact(8)) {
                let word = u64::from_le_bytes(word.try_into().expect("8-byte chunk")) & self.mask;
                *lane = (*lane ^ word).wrapping_mul(K).rotate_left(29);
            }
        };
        for y in top..(top + TILE_HEIGHT).min(self.height) {
            let start = y as usize * stride + x;
            let pixels = &data[start..start + width];
            let mut blocks = pixels.chunks_exact(32);
            for block in &mut blocks {
                feed(block);
            }
            let rest = blocks.remainder();
            if !rest.is_empty() {
                let mut tail = [0u8; 32];
                tail[..rest.len()].copy_from_slice(rest);
                feed(&tail);
            }
        }
        lanes
            .iter()
            .enumerate()
            .fold(0, |h, (i, lane)| h ^ mix(*lane).rotate_left(i as u32 * 16))
    }

    /// The whole image's fingerprint: its size and every tile's hash.
    pub fn fingerprint(&self) -> u64 {
        let size = u64::from(self.width) << 32 | u64::from(self.height);
        self.tiles
            .iter()
            .fold(mix(size), |h, tile| mix(h.rotate_left(23) ^ tile))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MASK: u64 = 0x00ff_ffff_00ff_ffff;

    fn image(width: u32, height: u32) -> Vec<u8> {
        (0..(width * height * 4) as usize)
            .map(|i| (i * 13 + i / 997) as u8)
            .collect()
    }

    #[test]
    fn rehashing_the_drawn_boxes_gives_the_fingerprint_of_hashing_all() {
        // Sides that leave part tiles at the right and the bottom.
        let (w, h) = (301u32, 70u32);
        let mut data = image(w, h);
        let mut kept = TileHashes::of(&data, w, h, MASK);
        let drawn = [
            Area {
                x: 3,
                y: 20,
                width: 2,
                height: 1,
            },
            Area {
                x: 290,
                y: 60,
                width: 11,
                height: 10,
            },
        ];
        for area in drawn {
            let at = ((area.y * w + area.x) * 4) as usize;
            data[at] ^= 0x55;
            let at = (((area.bottom() - 1) * w + area.right() - 1) * 4) as usize;
            data[at] ^= 0x0f;
        }
        let before = kept.fingerprint();
        kept.update(&data, &drawn);
        let fresh = TileHashes::of(&data, w, h, MASK);
        assert_ne!(kept.fingerprint(), before, "a drawn pixel changes it");
        assert_eq!(kept.fingerprint(), fresh.fingerprint());
    }

    #[test]
    fn the_padding_byte_is_ignored_and_sizes_differ() {
        let (w, h) = (40u32, 20u32);
        let mut data = image(w, h);
        let a = TileHashes::of(&data, w, h, MASK).fingerprint();
        data[3] ^= 0xff;
        assert_eq!(TileHashes::of(&data, w, h, MASK).fingerprint(), a);
        assert_ne!(TileHashes::of(&data, h, w, MASK).fingerprint(), a);
    }
}
