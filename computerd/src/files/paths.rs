//! Turning a path as an agent writes it into an absolute path, normalised
//! on its text by [`normalize`] (shared with the host).

pub use computer_protocol::paths::normalize;
use std::path::{Path, PathBuf};

/// `~` and `~/x` are in `home`, absolute paths are kept, anything else starts
/// at `cwd`. `~user` is not expanded: it is a relative name like any other.
/// The result has no `.` or `..` parts.
pub fn resolve(home: &Path, cwd: &Path, path: &str) -> PathBuf {
    let joined = if path == "~" {
        home.to_path_buf()
    } else if let Some(rest) = path.strip_prefix("~/") {
        home.join(rest.trim_start_matches('/'))
    } else {
        // `join` keeps an absolute `path` as it is.
        cwd.join(path)
    };
    normalize(&joined)
}

/// A path as shown to an agent.
pub(super) fn shown(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(path: &str) -> String {
        shown(&resolve(
            Path::new("/home/computer"),
            Path::new("/work/project"),
            path,
        ))
    }

    #[test]
    fn relative_paths_start_at_the_working_folder() {
        assert_eq!(resolved("src/main.rs"), "/work/project/src/main.rs");
        assert_eq!(resolved("./a/./b"), "/work/project/a/b");
        assert_eq!(resolved(""), "/work/project");
        assert_eq!(resolved("."), "/work/project");
    }

    #[test]
    fn tilde_is_home() {
        assert_eq!(resolved("~"), "/home/computer");
        assert_eq!(resolved("~/"), "/home/computer");
        assert_eq!(resolved("~/notes/a.txt"), "/home/computer/notes/a.txt");
        assert_eq!(resolved("~//x"), "/home/computer/x");
        // Only a leading `~` means home.
        assert_eq!(resolved("a/~/b"), "/work/project/a/~/b");
        assert_eq!(resolved("~bob"), "/work/project/~bob");
    }

    #[test]
    fn absolute_paths_are_kept() {
        assert_eq!(resolved("/etc/hosts"), "/etc/hosts");
        assert_eq!(resolved("/"), "/");
    }

    #[test]
    fn dot_dot_is_resolved_lexically_and_stops_at_root() {
        assert_eq!(resolved(".."), "/work");
        assert_eq!(resolved("../other/./x/../y"), "/work/other/y");
        assert_eq!(resolved("/../../etc"), "/etc");
        assert_eq!(resolved("~/../.."), "/");
        assert_eq!(resolved("a/b/"), "/work/project/a/b");
    }
}
