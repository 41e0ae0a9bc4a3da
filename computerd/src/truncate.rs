//! Shortening long text to its first and last bytes, for `shell` streams and
//! `read_file` alike, so both show the same marker and count.
//!
//! A text of at most `2 × keep` bytes is kept whole. A longer one keeps its
//! first and last `keep` bytes (a little less at a cut that would split a UTF-8
//! character) joined by the marker on a line of its own:
//!
//! ```text
//! <head>
//! [... N bytes omitted ...]
//! <tail>
//! ```
//!
//! `N` counts the bytes of the original text that are not shown, exactly; the
//! two newlines around the marker are added and not part of the text.
//! [`HeadTail`] takes the text in pieces and holds at most `2 × keep` bytes,
//! however much is pushed, so a command printing gigabytes costs 30 kB.

use computer_protocol::limits::KEEP_HEAD_TAIL_BYTES;
use std::collections::VecDeque;

/// The marker put where bytes were left out.
pub fn omitted_marker(omitted: u64) -> String {
    format!("[... {omitted} bytes omitted ...]")
}

/// Shortens `bytes` with the default keep of [`KEEP_HEAD_TAIL_BYTES`].
pub fn shorten(bytes: &[u8]) -> Shortened {
    let mut head_tail = HeadTail::new(KEEP_HEAD_TAIL_BYTES);
    head_tail.push(bytes);
    head_tail.finish()
}

/// The first and last bytes of a text of any length, in bounded memory.
#[derive(Debug, Clone)]
pub struct HeadTail {
    /// Bytes kept at each end.
    keep: usize,
    /// The first `keep` bytes pushed.
    head: Vec<u8>,
    /// The last (up to) `keep` bytes pushed after the head. A ring, so that a
    /// long stream of small pushes does not shift the buffer each time.
    tail: VecDeque<u8>,
    /// Every byte pushed, so the omitted count is exact.
    total: u64,
    /// The byte just before the tail's first one, to tell whether the tail
    /// starts a line.
    before_tail: Option<u8>,
}

impl HeadTail {
    pub fn new(keep: usize) -> Self {
        HeadTail {
            keep,
            head: Vec::with_capacity(keep.min(64 * 1024)),
            tail: VecDeque::new(),
            total: 0,
            before_tail: None,
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let head_room = self.keep - self.head.len();
        if head_room > 0 {
            let taken = head_room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..taken]);
            bytes = &bytes[taken..];
        }
        if bytes.is_empty() {
            return;
        }
        let previous = self.tail.back().or(self.head.last()).copied();
        if bytes.len() >= self.keep {
            let start = bytes.len() - self.keep;
            self.before_tail = if start > 0 {
                Some(bytes[start - 1])
            } else {
                previous
            };
            self.tail.clear();
            self.tail.extend(&bytes[start..]);
        } else {
            // Cannot exceed the tail's length, since `bytes` is shorter than `keep`.
            let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.keep);
            if overflow > 0 {
                self.before_tail = Some(self.tail[overflow - 1]);
            } else if self.tail.is_empty() {
                self.before_tail = previous;
            }
            self.tail.drain(..overflow);
            self.tail.extend(bytes);
        }
    }

    /// Bytes pushed so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn finish(mut self) -> Shortened {
        let whole_fits = self.total <= 2 * self.keep as u64;
        let tail = self.tail.make_contiguous();
        if whole_fits {
            // The tail holds everything after the head here; join the bytes
            // before decoding so a character across the seam stays whole.
            let mut all = self.head;
            all.extend_from_slice(tail);
            return Shortened {
                head: String::from_utf8_lossy(&all).into_owned(),
                tail: String::new(),
                omitted: 0,
                tail_starts_line: false,
            };
        }
        let head = &self.head[..utf8_head_end(&self.head)];
        let skipped = utf8_tail_start(tail);
        let tail = &tail[skipped..];
        Shortened {
            omitted: self.total - head.len() as u64 - tail.len() as u64,
            head: String::from_utf8_lossy(head).into_owned(),
            tail: String::from_utf8_lossy(tail).into_owned(),
            tail_starts_line: skipped == 0 && self.before_tail == Some(b'\n'),
        }
    }
}

/// A text after [`HeadTail::finish`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shortened {
    /// The whole text when nothing was omitted, else its start.
    pub head: String,
    /// The end of the text; empty when nothing was omitted.
    pub tail: String,
    /// Bytes of the original left out between `head` and `tail`.
    pub omitted: u64,
    /// The last byte left out is a newline, so `tail` starts a line.
    pub tail_starts_line: bool,
}

impl Shortened {
    pub fn is_shortened(&self) -> bool {
        self.omitted > 0
    }

    /// The text as shown: head, marker line, tail.
    pub fn into_text(self) -> String {
        if !self.is_shortened() {
            return self.head;
        }
        let marker = omitted_marker(self.omitted);
        let mut text = String::with_capacity(self.head.len() + marker.len() + self.tail.len() + 2);
        text.push_str(&self.head);
        text.push('\n');
        text.push_str(&marker);
        text.push('\n');
        text.push_str(&self.tail);
        text
    }
}

/// Where `head` ends once a trailing, incomplete UTF-8 sequence is dropped, so
/// the cut does not show as a replacement character. Bytes that are not UTF-8
/// anyway are left for the lossy decoding.
fn utf8_head_end(head: &[u8]) -> usize {
    for back in 1..=head.len().min(4) {
        let byte = head[head.len() - back];
        if !is_continuation(byte) {
            let needed = match byte {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 4,
                _ => 1,
            };
            return if needed > back {
                head.len() - back
            } else {
                head.len()
            };
        }
    }
    head.len()
}

/// Where `tail` starts once the continuation bytes of a character cut at its
/// front (at most 3) are skipped.
fn utf8_tail_start(tail: &[u8]) -> usize {
    tail.iter()
        .take(3)
        .take_while(|b| is_continuation(**b))
        .count()
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shorten_text(text: &str) -> String {
        shorten(text.as_bytes()).into_text()
    }

    #[test]
    fn marker_text_is_exact() {
        assert_eq!(omitted_marker(1), "[... 1 bytes omitted ...]");
        assert_eq!(omitted_marker(70_000), "[... 70000 bytes omitted ...]");
    }

    #[test]
    fn short_text_is_kept_whole() {
        assert_eq!(shorten_text(""), "");
        assert_eq!(shorten_text("hello\n"), "hello\n");
        let exactly = "a".repeat(30_000);
        let kept = shorten(exactly.as_bytes());
        assert!(!kept.is_shortened());
        assert_eq!(kept.into_text(), exactly);
    }

    #[test]
    fn one_byte_over_omits_exactly_one() {
        let text = format!("{}X{}", "h".repeat(15_000), "t".repeat(15_000));
        assert_eq!(text.len(), 30_001);
        let expected = format!(
            "{}\n[... 1 bytes omitted ...]\n{}",
            "h".repeat(15_000),
            "t".repeat(15_000)
        );
        assert_eq!(shorten_text(&text), expected);
    }

    #[test]
    fn long_text_keeps_both_ends_and_counts_the_middle() {
        let text = format!(
            "{}{}{}",
            "h".repeat(15_000),
            "m".repeat(70_000),
            "t".repeat(15_000)
        );
        let shortened = shorten(text.as_bytes());
        assert_eq!(shortened.omitted, 70_000);
        assert_eq!(shortened.head, "h".repeat(15_000));
        assert_eq!(shortened.tail, "t".repeat(15_000));
    }

    #[test]
    fn pieces_give_the_same_result_as_one_push() {
        let text: Vec<u8> = (0..100_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        for piece in [1, 7, 4096, 15_000, 15_001, 40_000] {
            let mut head_tail = HeadTail::new(15_000);
            for chunk in text.chunks(piece) {
                head_tail.push(chunk);
            }
            assert_eq!(head_tail.total(), 100_000);
            assert_eq!(head_tail.finish(), shorten(&text), "pieces of {piece}");
        }
    }

    #[test]
    fn tells_whether_the_tail_starts_a_line() {
        let lines: String = (0..10_000).map(|n| format!("{n:09}\n")).collect();
        assert!(shorten(lines.as_bytes()).tail_starts_line);
        let shifted = format!("{lines}xx");
        assert!(!shorten(shifted.as_bytes()).tail_starts_line);
        for piece in [1, 9, 10, 11, 15_000, 15_001] {
            let mut head_tail = HeadTail::new(15_000);
            for chunk in lines.as_bytes().chunks(piece) {
                head_tail.push(chunk);
            }
            assert!(head_tail.finish().tail_starts_line, "pieces of {piece}");
        }
    }

    #[test]
    fn memory_stays_bounded() {
        let mut head_tail = HeadTail::new(100);
        for _ in 0..10_000 {
            head_tail.push(&[b'x'; 1000]);
        }
        assert_eq!(head_tail.head.len(), 100);
        assert_eq!(head_tail.tail.len(), 100);
        assert_eq!(head_tail.finish().omitted, 10_000_000 - 200);
    }

    #[test]
    fn cuts_do_not_split_multibyte_characters() {
        // 'é' is 2 bytes, '€' 3, '😀' 4: every cut offset lands inside one of
        // them for some prefix length.
        for prefix in 0..4 {
            for ch in ['é', '€', '😀'] {
                let body: String = std::iter::repeat_n(ch, 20_000).collect();
                let text = format!("{}{}", "a".repeat(prefix), body);
                let shortened = shorten(text.as_bytes());
                assert!(!shortened.head.contains('\u{FFFD}'), "{ch} prefix {prefix}");
                assert!(!shortened.tail.contains('\u{FFFD}'), "{ch} prefix {prefix}");
                assert!(shortened.head.len() <= 15_000 && shortened.head.len() > 14_996);
                assert!(shortened.tail.len() <= 15_000 && shortened.tail.len() > 14_996);
                assert_eq!(
                    shortened.omitted as usize,
                    text.len() - shortened.head.len() - shortened.tail.len()
                );
            }
        }
    }

    #[test]
    fn multibyte_character_across_the_seam_of_a_kept_text_stays_whole() {
        let text = format!("{}€{}", "a".repeat(14_999), "b".repeat(100));
        assert_eq!(shorten_text(&text), text);
    }

    #[test]
    fn invalid_utf8_is_decoded_lossily() {
        let mut bytes = vec![0xFF; 40_000];
        bytes[0] = b'a';
        let shortened = shorten(&bytes);
        assert!(shortened.head.starts_with('a'));
        assert_eq!(shortened.omitted, 10_000);
    }
}
