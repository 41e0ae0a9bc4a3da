//! The checks made before any data moves: what the source is, and where
//! the copy lands and whether it may be written there.

use super::error::ArchiveError;
use super::located::Located;
use super::open::{open_regular_in, OpenError, Symlinks};
use super::temp::TempPath;
use crate::transfer::{item_name_problem, step, windows_name_problem, Found, ItemKind};
use cap_std::fs::Dir;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// A destination that passed the checks.
#[derive(Debug)]
pub struct Target {
    /// The absolute path the copy gets, for messages and the summary.
    pub path: PathBuf,
    /// The folder the copy is written beneath, opened when it was checked:
    /// every write goes through this handle.
    pub anchor: Dir,
    /// The copy's path below `anchor`: its name, after any missing folders.
    pub below: PathBuf,
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

/// [`plan_at`] with the destination looked up as a shell would: symlinks
/// on the way are the agent's own choice of destination and are followed.
pub fn plan(dest: &Destination<'_>) -> Result<Target, ArchiveError> {
    let at = Located::ambient(dest.path)
        .map_err(|e| ArchiveError::io(dest.path, "look at", dest.arg, e))?;
    plan_at(&at, dest)
}

/// Applies the `cp -r` rule and the overwrite rules, and makes sure the
/// folder that will receive the copy can be written, all before any data
/// moves, looking only beneath `at` (`dest.path` names it in messages).
/// Run it again right before writing: the checks only hold for the moment
/// they were made.
pub fn plan_at(at: &Located, dest: &Destination<'_>) -> Result<Target, ArchiveError> {
    if let Some(why) = item_name_problem(dest.name) {
        return Err(ArchiveError::BadItemName {
            name: dest.name.to_string(),
            why,
        });
    }
    // The located folder is the deepest one on the path: with nothing
    // below it, the path is that folder.
    let is_folder = at.rest.as_os_str().is_empty();
    if dest.trailing_slash && !is_folder && dest.kind == ItemKind::File {
        return Err(ArchiveError::NotAFolder {
            path: at.path().display().to_string(),
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
    let below = if is_folder {
        PathBuf::from(dest.name)
    } else {
        at.rest.clone()
    };
    let path = at.folder_path.join(&below);
    let found = found_in(&at.folder, &below)
        .map_err(|e| ArchiveError::io(&path, "look at", dest.arg, e))?;
    step(dest.kind.into(), found, dest.overwrite).map_err(|clash| ArchiveError::Clash {
        path: path.display().to_string(),
        clash,
        arg: dest.arg,
    })?;
    let anchor = at
        .folder
        .try_clone()
        .map_err(|e| ArchiveError::io(&at.folder_path, "look at", dest.arg, e))?;
    if found == Found::Folder {
        let receiving = anchor
            .open_dir(&below)
            .map_err(|e| ArchiveError::io(&path, "look at", dest.arg, e))?;
        probe_writable(&receiving, &path, dest.arg)?;
    } else {
        refuse_non_folder_on_the_way(at, &below, dest.arg)?;
        probe_writable(&anchor, &at.folder_path, dest.arg)?;
    }
    Ok(Target {
        path,
        anchor,
        below,
        name: dest.name.to_string(),
        kind: dest.kind,
        overwrite: dest.overwrite,
        found,
        arg: dest.arg,
    })
}

/// Missing folders between the located one and the copy are made later;
/// something other than a folder where the first of them goes stops it now.
fn refuse_non_folder_on_the_way(
    at: &Located,
    below: &Path,
    arg: &'static str,
) -> Result<(), ArchiveError> {
    let mut parts = below.components();
    let (Some(first), Some(_)) = (parts.next(), parts.next()) else {
        return Ok(());
    };
    let first = at.folder_path.join(first);
    let name = first.file_name().map(PathBuf::from).unwrap_or_default();
    match found_in(&at.folder, &name) {
        Ok(Found::Nothing) => Ok(()),
        Ok(found) => Err(ArchiveError::ParentNotFolder {
            path: first.display().to_string(),
            found: found.noun(),
            arg,
        }),
        Err(e) => Err(ArchiveError::io(&first, "look at", arg, e)),
    }
}

/// What is at `below` beneath `folder`, without following a symlink there.
pub fn found_in(folder: &Dir, below: &Path) -> io::Result<Found> {
    found_of(
        folder
            .symlink_metadata(below)
            .map(|m| (m.is_dir(), m.is_file(), m.file_type().is_symlink())),
    )
}

/// What is at `path`, without following a symlink there.
pub fn found_at(path: &Path) -> io::Result<Found> {
    found_of(
        fs::symlink_metadata(path).map(|m| (m.is_dir(), m.is_file(), m.file_type().is_symlink())),
    )
}

/// `kind`: whether it is a folder, a file, a symlink.
fn found_of(kind: io::Result<(bool, bool, bool)>) -> io::Result<Found> {
    match kind {
        Ok((true, _, _)) => Ok(Found::Folder),
        Ok((_, true, _)) => Ok(Found::File),
        Ok((_, _, true)) => Ok(Found::Symlink),
        Ok(_) => Ok(Found::Other),
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

/// Creates and removes an empty file in `folder`: the one test of
/// writability that agrees with the filesystem on ownership, ACLs and
/// read-only mounts alike.
fn probe_writable(folder: &Dir, shown: &Path, arg: &'static str) -> Result<(), ArchiveError> {
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
                path: shown.display().to_string(),
                action: "write in",
                arg,
            },
            _ => ArchiveError::io(shown, "write in", arg, e),
        })
}

/// [`describe_source_at`] for a path named by the agent: every symlink in
/// it is followed, the last one too, as the agent named what it points to.
pub fn describe_source(path: &Path, arg: &'static str) -> Result<(String, ItemKind), ArchiveError> {
    let at = locate_source(path, arg)?;
    describe_source_at(&at, path, arg)
}

/// Where the source at `path` really is, located there; messages keep
/// the path as the agent wrote it.
pub fn locate_source(path: &Path, arg: &'static str) -> Result<Located, ArchiveError> {
    let real = fs::canonicalize(path).map_err(|e| ArchiveError::io(path, "read", arg, e))?;
    Located::ambient(&real).map_err(|e| ArchiveError::io(path, "read", arg, e))
}

/// What the source `at` holds (`shown` names it), checked before any data
/// moves: a file or a folder that this user can read. A symlink as the
/// source itself is followed; symlinks inside a folder are copied as
/// links.
pub fn describe_source_at(
    at: &Located,
    shown: &Path,
    arg: &'static str,
) -> Result<(String, ItemKind), ArchiveError> {
    let name = match shown.file_name() {
        Some(name) => name.to_string_lossy().into_owned(),
        None => {
            return Err(ArchiveError::NoItemName {
                path: shown.display().to_string(),
                why: "it has no name of its own",
                arg,
            })
        }
    };
    if at.rest.as_os_str().is_empty() {
        at.folder
            .entries()
            .map_err(|e| ArchiveError::io(shown, "read", arg, e))?;
        return Ok((name, ItemKind::Folder));
    }
    if at.rest.components().count() > 1 {
        // Something on the way is missing or not a folder.
        return Err(ArchiveError::NotFound {
            path: shown.display().to_string(),
            arg,
        });
    }
    // Opened to check it can be read, without blocking on a pipe swapped
    // in meanwhile.
    match open_regular_in(&at.folder, &at.rest, Symlinks::Follow) {
        Ok(_) => Ok((name, ItemKind::File)),
        Err(OpenError::NotRegular) => Err(not_file_or_folder(shown, arg)),
        Err(OpenError::Io(e)) => Err(ArchiveError::io(shown, "read", arg, e)),
    }
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
