//! SSSE3 loops for Xvnc's BGRX rows on x86-64: four pixels to RGB with one
//! byte shuffle, and four halved pixels (2x2 means) from two rows with
//! 16-bit sums. Each returns how many output pixels it wrote; the caller's
//! plain loop does the rest (a row's tail, or all of it on a CPU without
//! SSSE3, which no x86-64 machine of the last fifteen years lacks).

use std::arch::x86_64::{
    __m128i, _mm_add_epi16, _mm_loadu_si128, _mm_packus_epi16, _mm_set1_epi16, _mm_setr_epi8,
    _mm_setzero_si128, _mm_shuffle_epi8, _mm_srli_epi16, _mm_storeu_si128, _mm_unpackhi_epi64,
    _mm_unpackhi_epi8, _mm_unpacklo_epi64, _mm_unpacklo_epi8,
};

/// Whether this CPU runs the loops here.
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("ssse3")
}

/// Blocks of four output pixels that fit `dst`: each block stores 16 bytes
/// of which 12 are pixels, so the last block must leave 4 bytes of room.
fn blocks_that_fit(dst_len: usize, blocks: usize) -> usize {
    if blocks * 12 + 4 <= dst_len {
        blocks
    } else {
        blocks.saturating_sub(1)
    }
}

/// BGRX → RGB for the leading pixels of `src` into `dst`.
pub fn bgrx_to_rgb(src: &[u8], dst: &mut [u8]) -> usize {
    if !available() {
        return 0;
    }
    // SAFETY: SSSE3 is present (checked above).
    unsafe { bgrx_to_rgb_ssse3(src, dst) }
}

#[target_feature(enable = "ssse3")]
unsafe fn bgrx_to_rgb_ssse3(src: &[u8], dst: &mut [u8]) -> usize {
    // Red, green, blue of each of the four pixels; the last four bytes
    // are zeroed (index with the top bit set) and overwritten by the
    // next block.
    let to_rgb = _mm_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
    let blocks = blocks_that_fit(dst.len(), (src.len() / 16).min(dst.len() / 12));
    for i in 0..blocks {
        // SAFETY: block `i` reads src[16i..16i+16] and writes
        // dst[12i..12i+16], both in bounds by the block count above;
        // unaligned loads and stores take any address.
        unsafe {
            let bgrx = _mm_loadu_si128(src.as_ptr().add(16 * i).cast::<__m128i>());
            let rgb = _mm_shuffle_epi8(bgrx, to_rgb);
            _mm_storeu_si128(dst.as_mut_ptr().add(12 * i).cast::<__m128i>(), rgb);
        }
    }
    blocks * 4
}

/// Halved BGRX → RGB: output pixel `i` is the rounded mean of pixels `2i`
/// and `2i + 1` of rows `top` and `bottom`, for the leading pixels.
pub fn halve_bgrx_to_rgb(top: &[u8], bottom: &[u8], dst: &mut [u8]) -> usize {
    if !available() {
        return 0;
    }
    // SAFETY: SSSE3 is present (checked above).
    unsafe { halve_bgrx_to_rgb_ssse3(top, bottom, dst) }
}

#[target_feature(enable = "ssse3")]
unsafe fn halve_bgrx_to_rgb_ssse3(top: &[u8], bottom: &[u8], dst: &mut [u8]) -> usize {
    let to_rgb = _mm_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
    let zero = _mm_setzero_si128();
    let two = _mm_set1_epi16(2);
    let src_blocks = top.len().min(bottom.len()) / 32;
    let blocks = blocks_that_fit(dst.len(), src_blocks.min(dst.len() / 12));
    // Sums of two output pixels from 16 bytes (four pixels) of each row:
    // the columns add as 16-bit lanes, then each pixel's pair of columns.
    let pair_sums = |t: __m128i, b: __m128i| {
        let left = _mm_add_epi16(_mm_unpacklo_epi8(t, zero), _mm_unpacklo_epi8(b, zero));
        let right = _mm_add_epi16(_mm_unpackhi_epi8(t, zero), _mm_unpackhi_epi8(b, zero));
        _mm_add_epi16(
            _mm_unpacklo_epi64(left, right),
            _mm_unpackhi_epi64(left, right),
        )
    };
    for i in 0..blocks {
        // SAFETY: block `i` reads 32 bytes at 32i of both rows and writes
        // dst[12i..12i+16], all in bounds by the block count above.
        unsafe {
            let load =
                |row: &[u8], at: usize| _mm_loadu_si128(row.as_ptr().add(at).cast::<__m128i>());
            let first = pair_sums(load(top, 32 * i), load(bottom, 32 * i));
            let second = pair_sums(load(top, 32 * i + 16), load(bottom, 32 * i + 16));
            let mean = |sum: __m128i| _mm_srli_epi16(_mm_add_epi16(sum, two), 2);
            let bgrx = _mm_packus_epi16(mean(first), mean(second));
            let rgb = _mm_shuffle_epi8(bgrx, to_rgb);
            _mm_storeu_si128(dst.as_mut_ptr().add(12 * i).cast::<__m128i>(), rgb);
        }
    }
    blocks * 4
}
