//! [`Frame`]: one screenshot, and the fingerprint that tells whether the
//! screen changed between two of them.

/// One screenshot: tightly packed RGB8 rows, top to bottom.
#[derive(Clone)]
pub struct Frame {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frame")
            .field("width", &self.width)
            .field("height", &self.height)
            .field("fingerprint", &format_args!("{:016x}", self.fingerprint()))
            .finish()
    }
}

impl Frame {
    /// A hash of the size and pixels, to tell whether anything changed
    /// between frames. Not cryptographic; about 0.2 ms for 1280x800.
    pub fn fingerprint(&self) -> u64 {
        fingerprint(self.width, self.height, &self.rgb)
    }

    /// The fingerprint of a part of the frame: its rows copied out and
    /// hashed like a frame of that size. The whole frame costs nothing
    /// extra.
    pub fn region_fingerprint(&self, x: u32, y: u32, width: u32, height: u32) -> u64 {
        if x == 0 && y == 0 && width == self.width && height == self.height {
            return self.fingerprint();
        }
        let row = self.width as usize * 3;
        let mut part = Vec::with_capacity(width as usize * height as usize * 3);
        for r in y..y + height {
            let start = r as usize * row + x as usize * 3;
            part.extend_from_slice(&self.rgb[start..start + width as usize * 3]);
        }
        fingerprint(width, height, &part)
    }

    /// The RGB8 value of the pixel at `(x, y)`.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 3]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let at = (y as usize * self.width as usize + x as usize) * 3;
        self.rgb.get(at..at + 3).map(|p| [p[0], p[1], p[2]])
    }
}

const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// Four independent multiply-rotate lanes over 8-byte words, so the CPU
/// overlaps the multiplications; each step is a bijection of the lane for a
/// given word, so a frame that differs in one word always hashes apart.
fn fingerprint(width: u32, height: u32, bytes: &[u8]) -> u64 {
    masked_fingerprint(width, height, bytes, u64::MAX)
}

/// [`Frame::fingerprint`]'s hash with each 8-byte word ANDed with `mask`
/// first (`tile_hashes` keeps the same lanes for the server's pixels,
/// masking the padding byte of each).
fn masked_fingerprint(width: u32, height: u32, bytes: &[u8], mask: u64) -> u64 {
    let mut lanes = [K, K.rotate_left(16), K.rotate_left(32), K.rotate_left(48)];
    let mut blocks = bytes.chunks_exact(32);
    for block in &mut blocks {
        for (lane, word) in lanes.iter_mut().zip(block.chunks_exact(8)) {
            let word = u64::from_le_bytes(word.try_into().expect("8-byte chunk")) & mask;
            *lane = (*lane ^ word).wrapping_mul(K).rotate_left(29);
        }
    }
    let mut tail = [0u8; 32];
    let rest = blocks.remainder();
    tail[..rest.len()].copy_from_slice(rest);
    for (lane, word) in lanes.iter_mut().zip(tail.chunks_exact(8)) {
        let word = u64::from_le_bytes(word.try_into().expect("8-byte chunk")) & mask;
        *lane = (*lane ^ word).wrapping_mul(K).rotate_left(29);
    }
    let size = (u64::from(width) << 32 | u64::from(height)) ^ (bytes.len() as u64).rotate_left(17);
    lanes.iter().enumerate().fold(mix(size), |h, (i, lane)| {
        h ^ mix(*lane).rotate_left(i as u32 * 16)
    })
}

/// The 64-bit finalizer of MurmurHash3: spreads every input bit over the
/// output.
pub(super) fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(width: u32, height: u32, rgb: Vec<u8>) -> Frame {
        Frame { width, height, rgb }
    }

    #[test]
    fn equal_frames_hash_equal() {
        let a = frame(7, 5, (0..105).map(|i| i as u8).collect());
        let b = frame(7, 5, a.rgb.clone());
        assert_eq!(a.fingerprint(), b.fingerprint());
    }

    #[test]
    fn any_single_byte_change_is_seen() {
        let base: Vec<u8> = (0..3 * 37 * 3).map(|i| (i * 7) as u8).collect();
        let original = frame(37, 3, base.clone()).fingerprint();
        for at in 0..base.len() {
            let mut changed = base.clone();
            changed[at] ^= 1;
            assert_ne!(frame(37, 3, changed).fingerprint(), original, "byte {at}");
        }
    }

    #[test]
    fn size_is_part_of_the_hash() {
        let rgb = vec![0u8; 12 * 3];
        assert_ne!(
            frame(4, 3, rgb.clone()).fingerprint(),
            frame(3, 4, rgb).fingerprint()
        );
    }

    #[test]
    fn a_region_hashes_like_a_frame_of_its_pixels() {
        let whole = frame(4, 3, (0..36).map(|i| i as u8).collect());
        let part: Vec<u8> = [1u32, 2]
            .iter()
            .flat_map(|r| whole.rgb[(*r as usize * 12 + 3)..(*r as usize * 12 + 9)].to_vec())
            .collect();
        assert_eq!(
            whole.region_fingerprint(1, 1, 2, 2),
            frame(2, 2, part).fingerprint()
        );
        assert_eq!(whole.region_fingerprint(0, 0, 4, 3), whole.fingerprint());
    }

    #[test]
    fn pixel_reads_rgb() {
        let f = frame(2, 1, vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(f.pixel(1, 0), Some([4, 5, 6]));
        assert_eq!(f.pixel(2, 0), None);
    }
}
