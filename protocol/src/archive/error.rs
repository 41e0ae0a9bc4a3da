//! What can stop a transfer, said for an agent: which path, how far the copy
//! got, and what to do. `arg` is the tool argument the path came from
//! (`host_path` or `computer_path`), so a fix can name it.

use super::progress::Done;
use crate::error::Coded;
use crate::error::ErrorCode;
use crate::transfer::{Clash, WindowsNameProblem};
use std::io;

#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("`{path}` does not exist: check `{arg}`")]
    NotFound { path: String, arg: &'static str },

    #[error(
        "`{path}` is {what}: only files and folders can be copied; give `{arg}` a file or a folder"
    )]
    NotFileOrFolder {
        path: String,
        what: &'static str,
        arg: &'static str,
    },

    #[error(
        "`{path}` cannot be copied as a whole: {why}; name a file or folder inside it in `{arg}`"
    )]
    NoItemName {
        path: String,
        why: &'static str,
        arg: &'static str,
    },

    #[error("`{name}` cannot be the name of a copy: {why}")]
    BadItemName { name: String, why: &'static str },

    #[error("`{name}` cannot be a name on this Windows host ({problem}): give `{arg}` a full path with a new name for the copy instead of a folder")]
    WindowsName {
        name: String,
        problem: WindowsNameProblem,
        arg: &'static str,
    },

    #[error("`{path}/` ends with `/` but is not a folder: create the folder first, or leave out the `/` to make `{path}` the name of the copy")]
    NotAFolder { path: String },

    #[error("`{path}` is {found}, so no folder can be made inside it: choose another `{arg}`")]
    ParentNotFolder {
        path: String,
        found: &'static str,
        arg: &'static str,
    },

    #[error("`{path}` {}: {}", .clash.explain(), clash_fix(*.clash, .arg))]
    Clash {
        path: String,
        clash: Clash,
        arg: &'static str,
    },

    #[error("permission denied to {action} `{path}`: choose a `{arg}` this user may {action}, or change the permissions")]
    PermissionDenied {
        path: String,
        action: &'static str,
        arg: &'static str,
    },

    #[error("could not {action} `{path}`: {source}")]
    Io {
        path: String,
        action: &'static str,
        #[source]
        source: io::Error,
    },

    #[error("stopped at `{path}`, which {}; {done}: {}, then copy again", .clash.explain(), partway_fix(*.clash, .path))]
    StoppedAt {
        path: String,
        clash: Clash,
        done: Done,
    },

    #[error("stopped: could not {action} `{path}` ({source}); {done}")]
    FailedAt {
        path: String,
        action: &'static str,
        #[source]
        source: io::Error,
        done: Done,
    },

    #[error("stopped: the data stopped coming ({source}); {done}; temporary files were removed")]
    Stream {
        #[source]
        source: io::Error,
        done: Done,
    },

    /// Sending: the receiving side stopped taking the data.
    #[error("stopped: the receiving side stopped taking the data ({source})")]
    Unsent {
        #[source]
        source: io::Error,
    },

    #[error("stopped: the archive is not a copy of `{name}`: {why}; {done}")]
    BadArchive {
        name: String,
        why: String,
        done: Done,
    },
}

fn clash_fix(clash: Clash, arg: &str) -> String {
    match clash {
        Clash::Exists { .. } => format!(
            "set `overwrite` to true to replace files and merge folders, or choose another `{arg}`"
        ),
        _ => format!("move it away, or choose another `{arg}`"),
    }
}

fn partway_fix(clash: Clash, path: &str) -> String {
    match clash {
        Clash::Exists { .. } => {
            "something appeared there while copying; set `overwrite` to true or choose another destination".to_string()
        }
        _ => format!("move `{path}` away"),
    }
}

impl ArchiveError {
    /// A filesystem failure partway, with how far the copy got.
    pub(super) fn failed_at(
        path: &std::path::Path,
        action: &'static str,
        source: io::Error,
        done: Done,
    ) -> ArchiveError {
        ArchiveError::FailedAt {
            path: path.display().to_string(),
            action,
            source,
            done,
        }
    }

    /// Sorts an I/O error met before any data moved.
    pub fn io(
        path: &std::path::Path,
        action: &'static str,
        arg: &'static str,
        source: io::Error,
    ) -> ArchiveError {
        let path = path.display().to_string();
        match source.kind() {
            // A file on the way (`a.txt/b`) means the path does not exist
            // either, as the file tools say.
            io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => {
                ArchiveError::NotFound { path, arg }
            }
            io::ErrorKind::PermissionDenied => ArchiveError::PermissionDenied { path, action, arg },
            _ => ArchiveError::Io {
                path,
                action,
                source,
            },
        }
    }
}

impl Coded for ArchiveError {
    fn code(&self) -> ErrorCode {
        match self {
            ArchiveError::NotFound { .. } => ErrorCode::NotFound,
            ArchiveError::NotFileOrFolder { .. }
            | ArchiveError::NotAFolder { .. }
            | ArchiveError::ParentNotFolder { .. }
            | ArchiveError::Clash { .. }
            | ArchiveError::StoppedAt { .. } => ErrorCode::Conflict,
            ArchiveError::NoItemName { .. }
            | ArchiveError::BadItemName { .. }
            | ArchiveError::WindowsName { .. }
            | ArchiveError::BadArchive { .. } => ErrorCode::InvalidInput,
            ArchiveError::PermissionDenied { .. } => ErrorCode::PermissionDenied,
            ArchiveError::Stream { .. } | ArchiveError::Unsent { .. } => ErrorCode::Unavailable,
            ArchiveError::Io { .. } | ArchiveError::FailedAt { .. } => ErrorCode::Internal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transfer::{EntryKind, Found};

    #[test]
    fn clashes_before_data_name_the_path_and_the_fix() {
        let e = ArchiveError::Clash {
            path: "/home/computer/report.pdf".into(),
            clash: Clash::Exists { found: Found::File },
            arg: "computer_path",
        };
        assert_eq!(e.code(), ErrorCode::Conflict);
        assert_eq!(
            e.to_string(),
            "`/home/computer/report.pdf` already exists (a file): set `overwrite` to true to replace files and merge folders, or choose another `computer_path`"
        );
    }

    #[test]
    fn a_stop_partway_says_how_far_it_got() {
        let e = ArchiveError::StoppedAt {
            path: "/d/proj/lib".into(),
            clash: Clash::OverFolder {
                entry: EntryKind::File,
            },
            done: Done {
                files: 3,
                folders: 2,
                symlinks: 0,
                bytes: 10,
            },
        };
        assert_eq!(
            e.to_string(),
            "stopped at `/d/proj/lib`, which is a folder, and the copy has a file there: only a folder can merge into a folder; 3 files, 2 folders and 0 symlinks (10 bytes) were written before it and stay in place: move `/d/proj/lib` away, then copy again"
        );
    }
}

/// Why an archive's format is broken (a malformed pax record, an entry
/// larger than its limit); [`ArchiveError::BadArchive`] carries its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub String);

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Malformed {}
