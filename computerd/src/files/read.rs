//! Reading a file for `read_file`: PNG and JPEG as images, UTF-8 text as
//! text, anything else refused with a hint.

use super::error::FilesError;
use super::magic::{ImageKind, PREFIX_BYTES};
use super::paths::{resolve, shown};
use super::text::{self, LineRange, ScanError, TextScan};
use base64::Engine as _;
use computer_protocol::archive::{open_regular, OpenError, Symlinks};
use computer_protocol::limits::READ_IMAGE_MAX_BYTES;
use computer_protocol::{ReadFileRequest, ReadFileResponse};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Reads the file `req.path` names. Text is read in one streaming pass, so a
/// huge log costs time but not memory, whatever range is asked for. `offset`
/// and `limit` apply to text; an image is returned whole.
pub fn read(
    home: &Path,
    cwd: &Path,
    req: &ReadFileRequest,
) -> Result<ReadFileResponse, FilesError> {
    let path = resolve(home, cwd, &req.path);
    let range = line_range(&path, req.offset, req.limit)?;
    let metadata = std::fs::metadata(&path).map_err(|err| FilesError::io(&path, "read", err))?;
    if metadata.is_dir() {
        return Err(FilesError::ReadFolder { path: shown(&path) });
    }
    if !metadata.is_file() {
        return Err(FilesError::NotRegular { path: shown(&path) });
    }
    // Opening a pipe would block until a writer comes; one swapped in since
    // `metadata` is refused at once.
    let mut file = open_regular(&path, Symlinks::Follow).map_err(|err| match err {
        OpenError::NotRegular => FilesError::NotRegular { path: shown(&path) },
        OpenError::Io(err) => FilesError::io(&path, "read", err),
    })?;
    let prefix = read_prefix(&mut file).map_err(|err| FilesError::io(&path, "read", err))?;

    if let Some(kind) = ImageKind::detect(&prefix) {
        return read_image(&path, kind, prefix, file, metadata.len());
    }

    let scanned =
        text::scan(io::Cursor::new(prefix).chain(file), range).map_err(|err| match err {
            ScanError::Binary => FilesError::Binary { path: shown(&path) },
            ScanError::Io(err) => FilesError::io(&path, "read", err),
        })?;
    if req.offset.is_some() && range.first > scanned.total_lines {
        return Err(FilesError::OffsetPastEnd {
            path: shown(&path),
            offset: range.first,
            total_lines: scanned.total_lines,
        });
    }
    let note = note(
        &path,
        range,
        req.offset.is_some() || req.limit.is_some(),
        &scanned,
    );
    Ok(ReadFileResponse::Text {
        path: shown(&path),
        total_lines: scanned.total_lines,
        text: scanned.kept.into_text(),
        note,
    })
}

/// Checks `offset` and `limit` before any reading.
fn line_range(
    path: &Path,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<LineRange, FilesError> {
    if offset == Some(0) {
        return Err(FilesError::OffsetZero { path: shown(path) });
    }
    if limit == Some(0) {
        return Err(FilesError::LimitZero { path: shown(path) });
    }
    Ok(LineRange {
        first: offset.unwrap_or(1),
        count: limit,
    })
}

/// Up to [`PREFIX_BYTES`] from the start; fewer only for a shorter file.
fn read_prefix(file: &mut File) -> io::Result<Vec<u8>> {
    let mut prefix = Vec::with_capacity(PREFIX_BYTES);
    file.take(PREFIX_BYTES as u64).read_to_end(&mut prefix)?;
    Ok(prefix)
}

fn read_image(
    path: &Path,
    kind: ImageKind,
    mut bytes: Vec<u8>,
    file: File,
    size: u64,
) -> Result<ReadFileResponse, FilesError> {
    let too_large = |size| FilesError::ImageTooLarge {
        path: shown(path),
        kind: kind.name(),
        size,
    };
    if size > READ_IMAGE_MAX_BYTES {
        return Err(too_large(size));
    }
    // Read one byte past the limit, in case the file grew since its size was read.
    let rest = READ_IMAGE_MAX_BYTES + 1 - bytes.len() as u64;
    file.take(rest)
        .read_to_end(&mut bytes)
        .map_err(|err| FilesError::io(path, "read", err))?;
    if bytes.len() as u64 > READ_IMAGE_MAX_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(ReadFileResponse::Image {
        path: shown(path),
        mime: kind.mime().to_string(),
        data_base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
    })
}

/// Says what part of the file the text shows and how to read the rest; `None`
/// when it is the whole file.
fn note(path: &Path, range: LineRange, range_asked: bool, scanned: &TextScan) -> Option<String> {
    let total = scanned.total_lines;
    let first = range.first;
    let last = match range.count {
        Some(count) => first.saturating_add(count - 1).min(total),
        None => total,
    };
    let mut parts = Vec::new();
    if range_asked && total > 0 {
        let mut shown_part = format!("showing lines {first} to {last} of {total}");
        if last < total {
            shown_part.push_str(&format!("; read on with `offset` {}", last + 1));
        } else {
            shown_part.push_str(" (the end of the file)");
        }
        parts.push(shown_part);
    }
    if scanned.kept.is_shortened() {
        let (cut_first, cut_last) = cut_lines(first, last - first + 1, scanned);
        let whole = if range_asked {
            "these lines are".to_string()
        } else {
            format!(
                "`{}` has {total} lines ({} bytes) and is",
                shown(path),
                scanned.total_bytes
            )
        };
        parts.push(format!(
            "{whole} too long to show whole: the marker stands for {} bytes cut from lines {cut_first} to {cut_last}. \
             Read them with `offset` {cut_first} and `limit` {}, or any range with `offset` (first line, from 1) and `limit` (number of lines)",
            scanned.kept.omitted,
            cut_last - cut_first + 1,
        ));
    }
    (!parts.is_empty()).then(|| parts.join(". "))
}

/// The first and last line (of the file) that the cut of a shortened range
/// touches, from the lines the head and tail show.
fn cut_lines(first: u64, lines: u64, scanned: &TextScan) -> (u64, u64) {
    let newlines = |text: &str| text.bytes().filter(|byte| *byte == b'\n').count() as u64;
    let cut_first = first + newlines(&scanned.kept.head);
    // The tail's first byte is in this line of the range (from 1).
    let tail_line =
        (lines + u64::from(scanned.ends_with_newline)).saturating_sub(newlines(&scanned.kept.tail));
    let cut_last =
        (first + tail_line.max(1) - 1 - u64::from(scanned.kept.tail_starts_line)).max(cut_first);
    (cut_first, cut_last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_whole(text: &str, range: LineRange) -> TextScan {
        text::scan(text.as_bytes(), range).unwrap()
    }

    #[test]
    fn zero_offset_or_limit_is_refused_before_reading() {
        let path = Path::new("/nowhere");
        assert!(matches!(
            line_range(path, Some(0), None),
            Err(FilesError::OffsetZero { .. })
        ));
        assert!(matches!(
            line_range(path, None, Some(0)),
            Err(FilesError::LimitZero { .. })
        ));
        assert_eq!(line_range(path, None, None).unwrap(), LineRange::WHOLE);
        assert_eq!(
            line_range(path, Some(5), Some(2)).unwrap(),
            LineRange {
                first: 5,
                count: Some(2)
            }
        );
    }

    #[test]
    fn a_whole_short_file_has_no_note() {
        let scanned = scan_whole("a\nb\n", LineRange::WHOLE);
        assert_eq!(
            note(Path::new("/f"), LineRange::WHOLE, false, &scanned),
            None
        );
    }

    #[test]
    fn a_range_note_says_which_lines_and_where_to_go_on() {
        let text = "1\n2\n3\n4\n5\n";
        let range = LineRange {
            first: 2,
            count: Some(2),
        };
        let scanned = scan_whole(text, range);
        assert_eq!(
            note(Path::new("/f"), range, true, &scanned).unwrap(),
            "showing lines 2 to 3 of 5; read on with `offset` 4"
        );
        let to_end = LineRange {
            first: 4,
            count: Some(100),
        };
        let scanned = scan_whole(text, to_end);
        assert_eq!(
            note(Path::new("/f"), to_end, true, &scanned).unwrap(),
            "showing lines 4 to 5 of 5 (the end of the file)"
        );
    }

    #[test]
    fn a_shortened_note_names_the_cut_lines() {
        // 10-byte lines: the head of 15000 bytes holds lines 1..=1500, the tail
        // lines 8501..=10000, so lines 1501..=8500 are cut.
        let text: String = (1..=10_000).map(|n| format!("{n:09}\n")).collect();
        let scanned = scan_whole(&text, LineRange::WHOLE);
        assert_eq!(cut_lines(1, 10_000, &scanned), (1501, 8500));
        let note = note(Path::new("/f"), LineRange::WHOLE, false, &scanned).unwrap();
        assert!(
            note.starts_with("`/f` has 10000 lines (100000 bytes) and is too long to show whole"),
            "{note}"
        );
        assert!(
            note.contains("70000 bytes cut from lines 1501 to 8500"),
            "{note}"
        );
        assert!(note.contains("`offset` 1501 and `limit` 7000"), "{note}");
    }

    #[test]
    fn cut_lines_of_a_shortened_range_are_file_line_numbers() {
        // Lines 101..=5100 of 10-byte lines: the head shows 101..=1600, the
        // tail 3601..=5100.
        let text: String = (1..=10_000).map(|n| format!("{n:09}\n")).collect();
        let range = LineRange {
            first: 101,
            count: Some(5000),
        };
        let scanned = scan_whole(&text, range);
        assert_eq!(cut_lines(101, 5000, &scanned), (1601, 3600));
    }

    #[test]
    fn cut_lines_when_the_cut_is_mid_line() {
        // One long line: the cut starts and ends in line 1.
        let text = "x".repeat(50_000);
        let scanned = scan_whole(&text, LineRange::WHOLE);
        assert_eq!(cut_lines(1, 1, &scanned), (1, 1));
    }
}
