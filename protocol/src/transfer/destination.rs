//! Where a copy lands and what it may do to what is already there. Pure
//! rules, shared by both ends; the filesystem is looked at by the caller.

use super::messages::ItemKind;
use std::path::{Path, PathBuf};

/// The `cp -r` rule: into an existing folder the copy goes under its own
/// name; anywhere else the destination is the copy's new name.
pub fn final_path(destination: &Path, destination_is_folder: bool, name: &str) -> PathBuf {
    if destination_is_folder {
        destination.join(name)
    } else {
        destination.to_path_buf()
    }
}

/// What is at a path, looked at without following a symlink there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    Nothing,
    File,
    Folder,
    Symlink,
    /// A pipe, socket or device.
    Other,
}

impl Found {
    pub fn noun(self) -> &'static str {
        match self {
            Found::Nothing => "nothing",
            Found::File => "a file",
            Found::Folder => "a folder",
            Found::Symlink => "a symlink",
            Found::Other => "a pipe, socket or device",
        }
    }
}

/// What an archive entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Folder,
    Symlink,
}

impl From<ItemKind> for EntryKind {
    fn from(kind: ItemKind) -> EntryKind {
        match kind {
            ItemKind::File => EntryKind::File,
            ItemKind::Folder => EntryKind::Folder,
        }
    }
}

impl EntryKind {
    pub fn noun(self) -> &'static str {
        match self {
            EntryKind::File => "a file",
            EntryKind::Folder => "a folder",
            EntryKind::Symlink => "a symlink",
        }
    }
}

/// What writing an entry does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Nothing is there: create it.
    Create,
    /// A file or symlink is there and `overwrite` is on: rename over it.
    Replace,
    /// A folder is there, the entry is a folder and `overwrite` is on: keep
    /// the folder and what it holds, and write the entry's contents into it.
    Merge,
}

/// Why an entry cannot be written where it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clash {
    /// Something is there and `overwrite` is off.
    Exists { found: Found },
    /// A file or symlink would replace a folder.
    OverFolder { entry: EntryKind },
    /// A folder would replace something that is not a folder.
    FolderOver { found: Found },
    /// Only files, folders and symlinks are ever replaced.
    OverOther { entry: EntryKind },
}

impl Clash {
    /// Says what is in the way, for a message that names the path first:
    /// "`/x` {explain}".
    pub fn explain(self) -> String {
        match self {
            Clash::Exists { found } => format!("already exists ({})", found.noun()),
            Clash::OverFolder { entry } => format!(
                "is a folder, and the copy has {} there: only a folder can merge into a folder",
                entry.noun()
            ),
            Clash::FolderOver { found } => format!(
                "is {}, and the copy has a folder there: a folder cannot take its place",
                found.noun()
            ),
            Clash::OverOther { entry } => format!(
                "is a pipe, socket or device, which {} cannot replace",
                entry.noun()
            ),
        }
    }
}

/// The rule for one entry: with `overwrite` off nothing may be there; with
/// it on files (and symlinks) are replaced and folders merge, but a file
/// and a folder never take each other's place.
pub fn step(entry: EntryKind, found: Found, overwrite: bool) -> Result<Step, Clash> {
    match (entry, found) {
        (_, Found::Nothing) => Ok(Step::Create),
        (_, found) if !overwrite => Err(Clash::Exists { found }),
        (EntryKind::Folder, Found::Folder) => Ok(Step::Merge),
        (EntryKind::Folder, found) => Err(Clash::FolderOver { found }),
        (entry, Found::Folder) => Err(Clash::OverFolder { entry }),
        (entry, Found::Other) => Err(Clash::OverOther { entry }),
        (EntryKind::File | EntryKind::Symlink, Found::File | Found::Symlink) => Ok(Step::Replace),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_folder_takes_the_copy_under_its_own_name() {
        let downloads = Path::new("/home/me/Downloads");
        assert_eq!(
            final_path(downloads, true, "report.pdf"),
            Path::new("/home/me/Downloads/report.pdf")
        );
        // Anything else is the new name, whatever the source was called.
        assert_eq!(
            final_path(Path::new("/home/me/new.pdf"), false, "report.pdf"),
            Path::new("/home/me/new.pdf")
        );
    }

    #[test]
    fn without_overwrite_anything_there_is_a_clash() {
        for found in [Found::File, Found::Folder, Found::Symlink, Found::Other] {
            for entry in [EntryKind::File, EntryKind::Folder, EntryKind::Symlink] {
                assert_eq!(step(entry, found, false), Err(Clash::Exists { found }));
            }
        }
        assert_eq!(
            step(EntryKind::File, Found::Nothing, false),
            Ok(Step::Create)
        );
    }

    #[test]
    fn with_overwrite_files_are_replaced_and_folders_merge() {
        assert_eq!(step(EntryKind::File, Found::File, true), Ok(Step::Replace));
        assert_eq!(
            step(EntryKind::Symlink, Found::File, true),
            Ok(Step::Replace)
        );
        assert_eq!(
            step(EntryKind::File, Found::Symlink, true),
            Ok(Step::Replace)
        );
        assert_eq!(
            step(EntryKind::Folder, Found::Folder, true),
            Ok(Step::Merge)
        );
        assert_eq!(
            step(EntryKind::Folder, Found::Nothing, true),
            Ok(Step::Create)
        );
    }

    #[test]
    fn a_file_never_replaces_a_folder_nor_the_reverse() {
        assert_eq!(
            step(EntryKind::File, Found::Folder, true),
            Err(Clash::OverFolder {
                entry: EntryKind::File
            })
        );
        assert_eq!(
            step(EntryKind::Symlink, Found::Folder, true),
            Err(Clash::OverFolder {
                entry: EntryKind::Symlink
            })
        );
        assert_eq!(
            step(EntryKind::Folder, Found::File, true),
            Err(Clash::FolderOver { found: Found::File })
        );
        // A symlink to a folder is not a folder: merging through it would
        // write wherever it points.
        assert_eq!(
            step(EntryKind::Folder, Found::Symlink, true),
            Err(Clash::FolderOver {
                found: Found::Symlink
            })
        );
        assert_eq!(
            step(EntryKind::File, Found::Other, true),
            Err(Clash::OverOther {
                entry: EntryKind::File
            })
        );
    }

    #[test]
    fn clashes_explain_themselves() {
        assert_eq!(
            Clash::OverFolder {
                entry: EntryKind::File
            }
            .explain(),
            "is a folder, and the copy has a file there: only a folder can merge into a folder"
        );
        assert_eq!(
            Clash::Exists {
                found: Found::Folder
            }
            .explain(),
            "already exists (a folder)"
        );
    }
}
