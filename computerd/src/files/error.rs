//! What can go wrong with a file tool, said for an agent: which path, and what
//! to do instead.

use computer_protocol::limits::{READ_IMAGE_MAX_BYTES, WRITE_MAX_BYTES};
use computer_protocol::{Coded, ErrorCode};
use std::io;
use std::path::Path;

use super::paths::shown;

#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    #[error("`{path}` does not exist: check the path, or look around with `list_files`")]
    NotFound { path: String },

    #[error(
        "`{path}` is not a folder: give the path of a folder (use `read_file` to read a file)"
    )]
    NotAFolder { path: String },

    #[error(
        "`{path}` is a folder: use `list_files` to see what it holds, then read a file inside it"
    )]
    ReadFolder { path: String },

    #[error("`{path}` is a folder: give the path of a file to write, such as `{path}/name.txt`")]
    WriteFolder { path: String },

    #[error("`{path}` ends with `/`, so it names a folder: give the path of a file to write")]
    NotAFilePath { path: String },

    #[error("`{path}` is a file, so no folder can be made inside it: write to another path, or move the file away with `shell`")]
    ParentIsFile { path: String },

    #[error("`{path}` is not a regular file (it is a device, socket or pipe): use `shell` to work with it")]
    NotRegular { path: String },

    #[error("`{path}` is a binary file, not UTF-8 text: inspect it with `shell` (for example `file`, `xxd` or `strings`) or copy it to your machine with `file_transfer`")]
    Binary { path: String },

    #[error("`{path}` is a {kind} image of {size} bytes, over the {READ_IMAGE_MAX_BYTES}-byte (1 MB) limit of `read_file`: copy it with `file_transfer`, or make a smaller copy with `shell` (for example `convert in.png -resize 50% small.png`) and read that")]
    ImageTooLarge {
        path: String,
        kind: &'static str,
        size: u64,
    },

    #[error("`content` is {size} bytes, over the {WRITE_MAX_BYTES}-byte (10 MB) limit of `write_file` for `{path}`: write the file in parts with `shell`, or copy it with `file_transfer`")]
    ContentTooLarge { path: String, size: usize },

    #[error("`offset` must be at least 1 (the first line of `{path}` is line 1)")]
    OffsetZero { path: String },

    #[error("{}", offset_past_end(.path, *.offset, *.total_lines))]
    OffsetPastEnd {
        path: String,
        offset: u64,
        total_lines: u64,
    },

    #[error("`limit` must be at least 1 line; leave it out to read `{path}` to the end")]
    LimitZero { path: String },

    #[error("permission denied to {action} `{path}`: choose a path the user `computer` may {action}, such as one in home, or change the permissions with `shell`")]
    PermissionDenied { path: String, action: &'static str },

    #[error("could not {action} `{path}`: {source}")]
    Io {
        path: String,
        action: &'static str,
        #[source]
        source: io::Error,
    },
}

fn offset_past_end(path: &str, offset: u64, total_lines: u64) -> String {
    if total_lines == 0 {
        format!("`offset` {offset} is past the end of `{path}`, which is empty: leave `offset` out")
    } else {
        format!("`offset` {offset} is past the end of `{path}`, which has {total_lines} lines: give an `offset` from 1 to {total_lines}")
    }
}

impl FilesError {
    /// Sorts an I/O error on `path` into the variants an agent can act on.
    /// `action` completes "could not ... `path`" and "permission denied to ...".
    pub(super) fn io(path: &Path, action: &'static str, source: io::Error) -> FilesError {
        let path = shown(path);
        match source.kind() {
            // A part of the path being a file (`a.txt/b`) means the path does
            // not exist either.
            io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => FilesError::NotFound { path },
            io::ErrorKind::PermissionDenied => FilesError::PermissionDenied { path, action },
            _ => FilesError::Io {
                path,
                action,
                source,
            },
        }
    }
}

impl Coded for FilesError {
    fn code(&self) -> ErrorCode {
        match self {
            FilesError::NotFound { .. } => ErrorCode::NotFound,
            FilesError::NotAFolder { .. }
            | FilesError::ReadFolder { .. }
            | FilesError::WriteFolder { .. }
            | FilesError::ParentIsFile { .. }
            | FilesError::NotRegular { .. }
            | FilesError::Binary { .. }
            | FilesError::ImageTooLarge { .. } => ErrorCode::Conflict,
            FilesError::NotAFilePath { .. }
            | FilesError::ContentTooLarge { .. }
            | FilesError::OffsetZero { .. }
            | FilesError::OffsetPastEnd { .. }
            | FilesError::LimitZero { .. } => ErrorCode::InvalidInput,
            FilesError::PermissionDenied { .. } => ErrorCode::PermissionDenied,
            FilesError::Io { .. } => ErrorCode::Internal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_map_to_codes_an_agent_can_act_on() {
        let path = Path::new("/x/y");
        let not_found = FilesError::io(path, "read", io::ErrorKind::NotFound.into());
        assert_eq!(not_found.code(), ErrorCode::NotFound);
        assert_eq!(
            not_found.to_string(),
            "`/x/y` does not exist: check the path, or look around with `list_files`"
        );
        let denied = FilesError::io(path, "read", io::ErrorKind::PermissionDenied.into());
        assert_eq!(denied.code(), ErrorCode::PermissionDenied);
        assert!(denied
            .to_string()
            .starts_with("permission denied to read `/x/y`"));
        let other = FilesError::io(path, "read", io::Error::other("disk on fire"));
        assert_eq!(other.code(), ErrorCode::Internal);
        assert_eq!(other.to_string(), "could not read `/x/y`: disk on fire");
    }

    #[test]
    fn offset_errors_name_the_line_count() {
        let past = FilesError::OffsetPastEnd {
            path: "/a".into(),
            offset: 9,
            total_lines: 3,
        };
        assert_eq!(past.code(), ErrorCode::InvalidInput);
        assert_eq!(
            past.to_string(),
            "`offset` 9 is past the end of `/a`, which has 3 lines: give an `offset` from 1 to 3"
        );
        let empty = FilesError::OffsetPastEnd {
            path: "/a".into(),
            offset: 1,
            total_lines: 0,
        };
        assert!(empty.to_string().contains("which is empty"));
    }
}
