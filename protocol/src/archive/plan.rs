//! The checks made before any data moves: what the source is, and where
//! the copy lands and whether it may be written there.

use super::error::ArchiveError;
use super::open::{open_regular, OpenError, Symlinks};
use super::temp::TempPath;
use crate::transfer::{final_path, item_name_problem, step, windows_name_problem, Found, ItemKind};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// A destination that passed the checks.
#[derive(Debug, Clone)]
pub struct Target {
    /// The absolute path the copy gets.
    pub path: PathBuf,
    /// The copied item's name, the first part of every archive entry.
    pub name: String,
    pub kind: ItemKind,
    pub overwrite: bool,
    /// What was at `path` when checked.
    pub found: Found,
    /// The tool argument the destination came from, for messages.
    pub arg: &'static str,
}

/// What is being asked for: copy `name` (a `kind`) to `destination`.
#[derive(Debug, Clone)]
pub struct Destination<'a> {
    /// Absolute.
    pub path: &'a Path,
    /// The agent wrote it with a trailing `/`, so it must be a folder when
    /// the copy is a file.
    pub trailing_slash: bool,
    pub name: &'a str,
    pub kind: ItemKind,
    pub overwrite: bool,
    /// Names must also suit Windows (the host runs on it).
    pub windows_names: bool,
    pub arg: &'static str,
}

/// Applies the `cp -r` rule and the overwrite rules, and makes sure the
/// folder that will receive the copy can be written, all before any data
/// moves. Run it again right before writing: the checks only hold for the
/// moment they were made.
pub fn plan(dest: &Destination<'_>) -> Result<Target, ArchiveError> {
    if let Some(why) = item_name_problem(dest.name) {
        return Err(ArchiveError::BadItemName {
            name: dest.name.to_string(),
            why,
        });
    }
    let is_folder = match fs::metadata(dest.path) {
        Ok(metadata) => metadata.is_dir(),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            false
        }
        Err(e) => return Err(ArchiveError::io(dest.path, "look at", dest.arg, e)),
    };
    if dest.trailing_slash && !is_folder && dest.kind == ItemKind::File {
        return Err(ArchiveError::NotAFolder {
            path: dest.path.display().to_string(),
        });
    }
    if is_folder && dest.windows_names {
        if let Some(problem) = windows_name_problem(dest.name.as_bytes()) {
            return Err(ArchiveError::WindowsName {
                name: dest.name.to_string(),
                problem,
                arg: dest.arg,
            });
        }
    }
    let path = final_path(dest.path, is_folder, dest.name);
    let found = found_at(&path).map_err(|e| ArchiveError::io(&path, "look at", dest.arg, e))?;
    step(dest.kind.into(), found, dest.overwrite).map_err(|clash| ArchiveError::Clash {
        path: path.display().to_string(),
        clash,
        arg: dest.arg,
    })?;
    let receiving = if found == Found::Folder {
        path.clone()
    } else {
        nearest_folder(&path, dest.arg)?
    };
    probe_writable(&receiving, dest.arg)?;
    Ok(Target {
        path,
        name: dest.name.to_string(),
        kind: dest.kind,
        overwrite: dest.overwrite,
        found,
        arg: dest.arg,
    })
}

/// What is at `path`, without following a symlink there.
pub fn found_at(path: &Path) -> io::Result<Found> {
    match fs::symlink_metadata(path) {
        Ok(metadata) => {
            let kind = metadata.file_type();
            Ok(if kind.is_dir() {
                Found::Folder
            } else if kind.is_file() {
                Found::File
            } else if kind.is_symlink() {
                Found::Symlink
            } else {
                Found::Other
            })
        }
        // A file where a folder should be: nothing can be at the path.
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(Found::Nothing)
        }
        Err(e) => Err(e),
    }
}

/// The closest existing folder above `path`, where missing folders down to
/// the copy will be made. Symlinks on the way are the agent's own choice of
/// destination and are followed.
fn nearest_folder(path: &Path, arg: &'static str) -> Result<PathBuf, ArchiveError> {
    for ancestor in path.ancestors().skip(1) {
        match fs::metadata(ancestor) {
            Ok(metadata) if metadata.is_dir() => return Ok(ancestor.to_path_buf()),
            Ok(_) => {
                return Err(ArchiveError::ParentNotFolder {
                    path: ancestor.display().to_string(),
                    found: found_at(ancestor)
                        .map(Found::noun)
                        .unwrap_or("not a folder"),
                    arg,
                })
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) if e.kind() == io::ErrorKind::NotADirectory => continue,
            Err(e) => return Err(ArchiveError::io(ancestor, "look at", arg, e)),
        }
    }
    Err(ArchiveError::NotFound {
        path: path.display().to_string(),
        arg,
    })
}

/// Creates and removes an empty file in `folder`: the one test of
/// writability that agrees with the filesystem on ownership, ACLs and
/// read-only mounts alike.
fn probe_writable(folder: &Path, arg: &'static str) -> Result<(), ArchiveError> {
    TempPath::create_file(folder)
        .map(|(temp, file)| {
            // Closed before removal, which Windows insists on.
            drop(file);
            drop(temp);
        })
        .map_err(|e| match e.kind() {
            // The folder exists (it was just found), so `NotFound` means it
            // takes no new files, as /proc and /sys do.
            io::ErrorKind::PermissionDenied
            | io::ErrorKind::ReadOnlyFilesystem
            | io::ErrorKind::NotFound => ArchiveError::PermissionDenied {
                path: folder.display().to_string(),
                action: "write in",
                arg,
            },
            _ => ArchiveError::io(folder, "write in", arg, e),
        })
}

/// What a source path holds, checked before any data moves: a file or a
/// folder that this user can read. A symlink given as the source itself is
/// followed, as the agent named what it points to; symlinks inside a folder
/// are copied as links.
pub fn describe_source(path: &Path, arg: &'static str) -> Result<(String, ItemKind), ArchiveError> {
    let name = match path.file_name() {
        Some(name) => name.to_string_lossy().into_owned(),
        None => {
            return Err(ArchiveError::NoItemName {
                path: path.display().to_string(),
                why: "it has no name of its own",
                arg,
            })
        }
    };
    let metadata = fs::metadata(path).map_err(|e| ArchiveError::io(path, "read", arg, e))?;
    let kind = if metadata.is_dir() {
        fs::read_dir(path).map_err(|e| ArchiveError::io(path, "read", arg, e))?;
        ItemKind::Folder
    } else if metadata.is_file() {
        // Opened to check it can be read, without blocking on a pipe
        // swapped in since `metadata`.
        match open_regular(path, Symlinks::Follow) {
            Ok(_) => {}
            Err(OpenError::NotRegular) => return Err(not_file_or_folder(path, arg)),
            Err(OpenError::Io(e)) => return Err(ArchiveError::io(path, "read", arg, e)),
        }
        ItemKind::File
    } else {
        return Err(not_file_or_folder(path, arg));
    };
    Ok((name, kind))
}

fn not_file_or_folder(path: &Path, arg: &'static str) -> ArchiveError {
    ArchiveError::NotFileOrFolder {
        path: path.display().to_string(),
        what: "a pipe, socket or device",
        arg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transfer::{Clash, EntryKind};

    fn dest<'a>(path: &'a Path, name: &'a str, kind: ItemKind, overwrite: bool) -> Destination<'a> {
        Destination {
            path,
            trailing_slash: false,
            name,
            kind,
            overwrite,
            windows_names: false,
            arg: "host_path",
        }
    }

    #[test]
    fn an_existing_folder_receives_the_copy_under_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let t = plan(&dest(dir.path(), "report.pdf", ItemKind::File, false)).unwrap();
        assert_eq!(t.path, dir.path().join("report.pdf"));
        assert_eq!(t.found, Found::Nothing);
    }

    #[test]
    fn anything_else_is_the_new_name_with_missing_parents() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("a/b/renamed.pdf");
        let t = plan(&dest(&new, "report.pdf", ItemKind::File, false)).unwrap();
        assert_eq!(t.path, new);
        // Nothing is created by the check.
        assert!(!dir.path().join("a").exists());
    }

    #[test]
    fn an_existing_final_path_is_refused_without_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("report.pdf"), "old").unwrap();
        let e = plan(&dest(dir.path(), "report.pdf", ItemKind::File, false)).unwrap_err();
        let shown = dir.path().join("report.pdf").display().to_string();
        assert!(
            e.to_string()
                .starts_with(&format!("`{shown}` already exists")),
            "{e}"
        );
        let t = plan(&dest(dir.path(), "report.pdf", ItemKind::File, true)).unwrap();
        assert_eq!(t.found, Found::File);
    }

    #[test]
    fn kinds_never_replace_each_other() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("x")).unwrap();
        let e = plan(&dest(&dir.path().join("x"), "y", ItemKind::File, true));
        // `x` is a folder, so the file goes inside it.
        assert_eq!(e.unwrap().path, dir.path().join("x/y"));
        fs::create_dir(dir.path().join("x/y")).unwrap();
        let e = plan(&dest(&dir.path().join("x"), "y", ItemKind::File, true)).unwrap_err();
        assert!(matches!(
            e,
            ArchiveError::Clash {
                clash: Clash::OverFolder {
                    entry: EntryKind::File
                },
                ..
            }
        ));
        fs::write(dir.path().join("f"), "").unwrap();
        let e = plan(&dest(&dir.path().join("f"), "proj", ItemKind::Folder, true)).unwrap_err();
        assert!(
            e.to_string().contains("a folder cannot take its place"),
            "{e}"
        );
    }

    #[test]
    fn a_trailing_slash_wants_a_folder_for_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let mut d = dest(&missing, "a.txt", ItemKind::File, false);
        d.trailing_slash = true;
        assert!(matches!(plan(&d), Err(ArchiveError::NotAFolder { .. })));
        // A folder copied to `nope/` is named `nope`, as with `cp -r`.
        d.kind = ItemKind::Folder;
        assert_eq!(plan(&d).unwrap().path, missing);
    }

    #[test]
    fn a_source_below_a_file_does_not_exist() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "").unwrap();
        let missing = dir.path().join("a.txt/b");
        let e = describe_source(&missing, "host_path").unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("`{}` does not exist: check `host_path`", missing.display())
        );
    }

    #[test]
    fn a_folder_that_takes_no_files_is_a_refusal_to_write() {
        // procfs answers "not found" to a new file in a folder it lists.
        let e = plan(&dest(Path::new("/proc/x"), "x", ItemKind::File, false)).unwrap_err();
        assert_eq!(e.to_string(), "permission denied to write in `/proc`: choose a `host_path` this user may write in, or change the permissions");
    }

    #[test]
    fn a_file_on_the_way_is_named() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("file"), "").unwrap();
        let e = plan(&dest(
            &dir.path().join("file/sub/x"),
            "x",
            ItemKind::File,
            false,
        ))
        .unwrap_err();
        assert!(
            matches!(&e, ArchiveError::ParentNotFolder { path, .. } if *path == dir.path().join("file").display().to_string()),
            "{e}"
        );
    }

    #[test]
    fn windows_names_are_checked_when_the_name_is_used() {
        let dir = tempfile::tempdir().unwrap();
        let mut d = dest(dir.path(), "aux.txt", ItemKind::File, false);
        d.windows_names = true;
        assert!(matches!(plan(&d), Err(ArchiveError::WindowsName { .. })));
        // Given a new name, the source's name does not matter.
        let renamed = dir.path().join("fine.txt");
        d.path = &renamed;
        assert_eq!(plan(&d).unwrap().path, renamed);
    }

    #[test]
    fn sources_are_files_or_folders() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "x").unwrap();
        assert_eq!(
            describe_source(&dir.path().join("a.txt"), "host_path").unwrap(),
            ("a.txt".to_string(), ItemKind::File)
        );
        assert_eq!(
            describe_source(dir.path(), "host_path").unwrap().1,
            ItemKind::Folder
        );
        assert!(matches!(
            describe_source(&dir.path().join("missing"), "host_path"),
            Err(ArchiveError::NotFound { .. })
        ));
        assert!(matches!(
            describe_source(Path::new("/"), "host_path"),
            Err(ArchiveError::NoItemName { .. })
        ));
    }
}
