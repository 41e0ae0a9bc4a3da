//! Normalising paths on their text, shared so that computerd (computer
//! paths) and the host (host paths of `file_transfer`) read what an agent
//! typed the same way.
//!
//! Normalising is lexical, as a shell's `cd` does by default: `link/..` is
//! the folder holding `link`, not the parent of where `link` points. The
//! path an agent gets back is then the one it would expect from what it
//! typed.

use std::path::{Component, Path, PathBuf};

/// Drops `.` parts and resolves `..` against the part before it, never going
/// above the root.
pub fn normalize(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => normal.push(component),
            Component::CurDir => {}
            Component::ParentDir => {
                let climbing =
                    matches!(normal.components().next_back(), Some(Component::ParentDir));
                if climbing || (!normal.pop() && !normal.has_root()) {
                    // A relative path that climbs above its start keeps
                    // every `..` (popping one would drop it); only the
                    // caller knows where it starts.
                    normal.push("..");
                }
            }
            Component::Normal(part) => normal.push(part),
        }
    }
    if normal.as_os_str().is_empty() {
        normal.push(".");
    }
    normal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_dot_stops_at_the_root() {
        assert_eq!(
            normalize(Path::new("/work/../../etc/./x/..")),
            PathBuf::from("/etc")
        );
        assert_eq!(normalize(Path::new("/")), PathBuf::from("/"));
    }

    #[test]
    fn relative_input_stays_relative() {
        assert_eq!(normalize(Path::new("a/../..")), PathBuf::from(".."));
        assert_eq!(normalize(Path::new("a/..")), PathBuf::from("."));
    }

    #[test]
    fn climbing_keeps_every_dot_dot() {
        assert_eq!(normalize(Path::new("../../x")), PathBuf::from("../../x"));
        assert_eq!(normalize(Path::new("../..")), PathBuf::from("../.."));
        assert_eq!(
            normalize(Path::new("a/../../b/../..")),
            PathBuf::from("../..")
        );
    }
}
