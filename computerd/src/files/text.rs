//! Reading a text file in one pass with bounded memory: checking it is UTF-8
//! without NUL bytes, counting its lines, and keeping the head and tail of the
//! lines asked for.

use crate::truncate::{HeadTail, Shortened};
use computer_protocol::limits::KEEP_HEAD_TAIL_BYTES;
use std::io::{self, Read};

/// Bytes read per call.
const CHUNK_BYTES: usize = 64 * 1024;

/// Which lines to keep, counted from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LineRange {
    /// First line kept; at least 1.
    pub first: u64,
    /// Lines kept from `first`; `None` keeps the rest of the file.
    pub count: Option<u64>,
}

impl LineRange {
    #[cfg(test)]
    pub(super) const WHOLE: LineRange = LineRange {
        first: 1,
        count: None,
    };

    fn contains(self, line: u64) -> bool {
        line >= self.first && self.count.is_none_or(|count| line - self.first < count)
    }
}

/// What a pass over a text found.
#[derive(Debug)]
pub(super) struct TextScan {
    /// The lines of the range, shortened when long.
    pub kept: Shortened,
    /// Lines in the whole file; a last line without a newline counts.
    pub total_lines: u64,
    /// Bytes in the whole file.
    pub total_bytes: u64,
    /// Whether the kept lines end with a newline (to count lines in the
    /// tail of a shortened range).
    pub ends_with_newline: bool,
}

#[derive(Debug)]
pub(super) enum ScanError {
    /// Not UTF-8, or holds a NUL byte.
    Binary,
    Io(io::Error),
}

/// Reads `reader` to the end. Stops early with [`ScanError::Binary`] at the
/// first byte that shows the file is not text.
pub(super) fn scan(mut reader: impl Read, range: LineRange) -> Result<TextScan, ScanError> {
    let mut kept = HeadTail::new(KEEP_HEAD_TAIL_BYTES);
    // The bytes of a character cut by the end of the previous read wait at
    // the front of `buf` until the rest arrives.
    let mut buf = vec![0u8; CHUNK_BYTES + 4];
    let mut pending = 0usize;
    let mut line = 1u64;
    let mut total_bytes = 0u64;
    let mut last_byte = None;
    let mut kept_ends_with_newline = false;
    loop {
        let read = match reader.read(&mut buf[pending..pending + CHUNK_BYTES]) {
            Ok(0) => break,
            Ok(read) => read,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(ScanError::Io(err)),
        };
        let fresh = &buf[pending..pending + read];
        if fresh.contains(&0) {
            return Err(ScanError::Binary);
        }
        total_bytes += read as u64;
        last_byte = fresh.last().copied();
        for piece in fresh.split_inclusive(|byte| *byte == b'\n') {
            if range.contains(line) {
                kept.push(piece);
                kept_ends_with_newline = piece.ends_with(b"\n");
            }
            if piece.ends_with(b"\n") {
                line += 1;
            }
        }

        let window = &buf[..pending + read];
        let valid_up_to = match std::str::from_utf8(window) {
            Ok(_) => window.len(),
            // Cut off in the middle of a character: keep the start for later.
            Err(err) if err.error_len().is_none() => err.valid_up_to(),
            Err(_) => return Err(ScanError::Binary),
        };
        buf.copy_within(valid_up_to..pending + read, 0);
        pending = pending + read - valid_up_to;
    }
    if pending > 0 {
        // The file ends inside a character.
        return Err(ScanError::Binary);
    }
    let total_lines = match last_byte {
        None => 0,
        Some(b'\n') => line - 1,
        Some(_) => line,
    };
    Ok(TextScan {
        kept: kept.finish(),
        total_lines,
        total_bytes,
        ends_with_newline: kept_ends_with_newline,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(first: u64, count: Option<u64>) -> LineRange {
        LineRange { first, count }
    }

    fn scan_text(text: &[u8], range: LineRange) -> TextScan {
        scan(text, range).unwrap()
    }

    /// A reader that returns one byte per call, to cut every character.
    struct ByteByByte<'a>(&'a [u8]);

    impl Read for ByteByByte<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let Some((first, rest)) = self.0.split_first() else {
                return Ok(0);
            };
            buf[0] = *first;
            self.0 = rest;
            Ok(1)
        }
    }

    #[test]
    fn counts_lines_with_and_without_a_final_newline() {
        assert_eq!(scan_text(b"", LineRange::WHOLE).total_lines, 0);
        assert_eq!(scan_text(b"a", LineRange::WHOLE).total_lines, 1);
        assert_eq!(scan_text(b"a\n", LineRange::WHOLE).total_lines, 1);
        assert_eq!(scan_text(b"a\nb", LineRange::WHOLE).total_lines, 2);
        assert_eq!(scan_text(b"\n\n", LineRange::WHOLE).total_lines, 2);
    }

    #[test]
    fn keeps_the_lines_of_the_range() {
        let text = b"one\ntwo\nthree\nfour\n";
        assert_eq!(scan_text(text, lines(2, Some(2))).kept.head, "two\nthree\n");
        assert_eq!(scan_text(text, lines(3, None)).kept.head, "three\nfour\n");
        assert_eq!(scan_text(text, lines(4, Some(10))).kept.head, "four\n");
        assert_eq!(scan_text(text, lines(5, None)).kept.head, "");
        assert_eq!(scan_text(text, lines(1, Some(1))).total_lines, 4);
    }

    #[test]
    fn a_range_keeps_a_last_line_without_newline() {
        let scanned = scan_text(b"a\nb", lines(2, None));
        assert_eq!(scanned.kept.head, "b");
        assert!(!scanned.ends_with_newline);
    }

    #[test]
    fn characters_cut_between_reads_are_text() {
        let text = "héllo €uro 😀\nzweite Zeile\n".as_bytes();
        let scanned = scan(ByteByByte(text), LineRange::WHOLE).unwrap();
        assert_eq!(scanned.kept.head.as_bytes(), text);
        assert_eq!(scanned.total_lines, 2);
    }

    #[test]
    fn nul_and_invalid_utf8_are_binary() {
        assert!(matches!(
            scan(&b"abc\0def"[..], LineRange::WHOLE),
            Err(ScanError::Binary)
        ));
        assert!(matches!(
            scan(&b"abc\xFFdef"[..], LineRange::WHOLE),
            Err(ScanError::Binary)
        ));
        // A truncated character at the very end.
        assert!(matches!(
            scan(&b"abc\xE2\x82"[..], LineRange::WHOLE),
            Err(ScanError::Binary)
        ));
        assert!(matches!(
            scan(ByteByByte(b"abc\xE2\x82"), LineRange::WHOLE),
            Err(ScanError::Binary)
        ));
    }

    #[test]
    fn long_text_is_shortened_and_counted() {
        let text: String = (1..=10_000).map(|n| format!("line {n}\n")).collect();
        let scanned = scan_text(text.as_bytes(), LineRange::WHOLE);
        assert_eq!(scanned.total_lines, 10_000);
        assert_eq!(scanned.total_bytes, text.len() as u64);
        assert!(scanned.kept.is_shortened());
        assert_eq!(scanned.kept.omitted, text.len() as u64 - 30_000);
    }
}
