//! Host paths as the agent writes them.

use super::error::TransferError;
use computer_protocol::paths::normalize;
use std::path::{Path, PathBuf};

/// `~` and `~/x` are in `home`, absolute paths are kept, anything else
/// starts at `cwd` (the MCP server's working folder). `.` and `..` are
/// resolved on the text, as computerd resolves computer paths, so both
/// sides of a transfer read paths the same way.
pub fn resolve_host_path(
    typed: &str,
    home: Option<&Path>,
    cwd: &Path,
) -> Result<PathBuf, TransferError> {
    if typed.is_empty() {
        return Err(TransferError::EmptyHostPath);
    }
    let home_rest = if typed == "~" {
        Some("")
    } else {
        typed
            .strip_prefix("~/")
            .or_else(|| typed.strip_prefix("~\\").filter(|_| cfg!(windows)))
    };
    let joined = match home_rest {
        Some(rest) => {
            let home = home.ok_or(TransferError::NoHome { var: HOME_VAR })?;
            home.join(rest.trim_start_matches(['/', '\\']))
        }
        // `join` keeps an absolute path as it is.
        None => cwd.join(typed),
    };
    Ok(normalize(&joined))
}

/// The typed path ends with a separator: it names a folder.
pub fn ends_with_separator(typed: &str) -> bool {
    typed.len() > 1 && (typed.ends_with('/') || (cfg!(windows) && typed.ends_with('\\')))
}

#[cfg(windows)]
pub const HOME_VAR: &str = "USERPROFILE";
#[cfg(not(windows))]
pub const HOME_VAR: &str = "HOME";

/// This process's home folder, if it has one.
pub fn home() -> Option<PathBuf> {
    std::env::var_os(HOME_VAR)
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// This process's working folder, for relative host paths.
pub fn working_folder(typed: &str) -> Result<PathBuf, TransferError> {
    std::env::current_dir().map_err(|e| TransferError::NoWorkingFolder {
        path: typed.to_string(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(typed: &str) -> String {
        resolve_host_path(typed, Some(Path::new("/home/me")), Path::new("/work/proj"))
            .unwrap()
            .display()
            .to_string()
    }

    #[test]
    fn host_paths_resolve_like_a_shell() {
        assert_eq!(resolved("/etc/hosts"), "/etc/hosts");
        assert_eq!(resolved("~"), "/home/me");
        assert_eq!(resolved("~/Downloads"), "/home/me/Downloads");
        assert_eq!(resolved("~//x"), "/home/me/x");
        assert_eq!(resolved("notes.txt"), "/work/proj/notes.txt");
        assert_eq!(resolved("./a/../b/"), "/work/proj/b");
        assert_eq!(resolved(".."), "/work");
        assert_eq!(resolved("/../../x"), "/x");
        // Only a leading `~` is home.
        assert_eq!(resolved("~me/x"), "/work/proj/~me/x");
    }

    #[test]
    fn unusable_host_paths_say_what_to_give() {
        let cwd = Path::new("/w");
        assert!(matches!(
            resolve_host_path("", None, cwd),
            Err(TransferError::EmptyHostPath)
        ));
        let e = resolve_host_path("~/x", None, cwd).unwrap_err();
        assert!(e.to_string().contains("give an absolute path"), "{e}");
    }

    #[test]
    fn a_trailing_separator_names_a_folder() {
        assert!(ends_with_separator("~/Downloads/"));
        assert!(!ends_with_separator("~/Downloads"));
        assert!(!ends_with_separator("/"));
    }
}
