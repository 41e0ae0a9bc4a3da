//! Listing one folder for `list_files`.

use super::error::FilesError;
use super::paths::{normalize, resolve, shown};
use computer_protocol::limits::LIST_MAX_ENTRIES;
use computer_protocol::{FileEntry, FileType, ListFilesResponse};
use std::ffi::OsString;
use std::fs::Metadata;
use std::path::Path;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// The folder `path` names (the working folder when `None`): folders first,
/// then everything else, each group sorted by name, at most
/// [`LIST_MAX_ENTRIES`] entries and `more` saying how many were left out.
/// Symlinks are listed as themselves, not as what they point to.
pub fn list(home: &Path, cwd: &Path, path: Option<&str>) -> Result<ListFilesResponse, FilesError> {
    let folder = match path {
        Some(path) => resolve(home, cwd, path),
        None => normalize(cwd),
    };
    let metadata =
        std::fs::metadata(&folder).map_err(|err| FilesError::io(&folder, "list", err))?;
    if !metadata.is_dir() {
        return Err(FilesError::NotAFolder {
            path: shown(&folder),
        });
    }

    // Names and kinds come from the folder itself (no stat per entry), so a
    // folder of a million entries costs a sort, and only the entries shown
    // are looked at further.
    let mut names = Vec::new();
    let read_dir =
        std::fs::read_dir(&folder).map_err(|err| FilesError::io(&folder, "list", err))?;
    for entry in read_dir {
        let entry = entry.map_err(|err| FilesError::io(&folder, "list", err))?;
        let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
        names.push(Listed {
            is_dir,
            name: entry.file_name().to_string_lossy().into_owned(),
            raw: entry.file_name(),
        });
    }
    sort(&mut names);
    let more = names.len().saturating_sub(LIST_MAX_ENTRIES) as u64;
    names.truncate(LIST_MAX_ENTRIES);

    let entries = names
        .into_iter()
        .filter_map(|listed| {
            // An entry removed since the folder was read is simply not listed.
            let metadata = std::fs::symlink_metadata(folder.join(&listed.raw)).ok()?;
            Some(FileEntry {
                name: listed.name,
                file_type: file_type(&metadata),
                size: metadata.len(),
                modified: modified(&metadata),
            })
        })
        .collect();
    Ok(ListFilesResponse {
        path: shown(&folder),
        entries,
        more,
    })
}

/// One name in a folder, before it is looked at.
struct Listed {
    /// A real folder, not a symlink to one.
    is_dir: bool,
    /// The name as shown (lossy for names that are not UTF-8).
    name: String,
    /// The name as stored, to find the entry again.
    raw: OsString,
}

/// Folders first, then the rest; each group by name, byte by byte.
fn sort(names: &mut [Listed]) {
    names.sort_by(|a, b| b.is_dir.cmp(&a.is_dir).then_with(|| a.name.cmp(&b.name)));
}

fn file_type(metadata: &Metadata) -> FileType {
    let kind = metadata.file_type();
    if kind.is_symlink() {
        FileType::Symlink
    } else if kind.is_dir() {
        FileType::Dir
    } else if kind.is_file() {
        FileType::File
    } else {
        FileType::Other
    }
}

/// RFC 3339 in UTC, to the second.
fn modified(metadata: &Metadata) -> String {
    let at = metadata
        .modified()
        .map(OffsetDateTime::from)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    rfc3339(at)
}

fn rfc3339(at: OffsetDateTime) -> String {
    // Only years outside 0..=9999 fail to format; the epoch then stands for
    // "unknown", as it does when the filesystem keeps no time.
    at.replace_nanosecond(0)
        .unwrap_or(at)
        .format(&Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(is_dir: bool, name: &str) -> Listed {
        Listed {
            is_dir,
            name: name.to_string(),
            raw: name.into(),
        }
    }

    #[test]
    fn folders_come_first_then_names_in_order() {
        let mut names = vec![
            listed(false, "b.txt"),
            listed(true, "zeta"),
            listed(false, "A.txt"),
            listed(true, "alpha"),
            listed(false, "a.txt"),
        ];
        sort(&mut names);
        let order: Vec<&str> = names.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(order, ["alpha", "zeta", "A.txt", "a.txt", "b.txt"]);
    }

    #[test]
    fn times_are_rfc3339_utc_to_the_second() {
        let at = OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap()
            + time::Duration::milliseconds(250);
        assert_eq!(rfc3339(at), "2023-11-14T22:13:20Z");
    }
}
