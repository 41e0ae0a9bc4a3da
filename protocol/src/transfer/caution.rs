//! Entries a copy writes that can make the machine run the sender's code
//! later, without anyone choosing to run it: git runs a repository's hooks
//! and the commands its `config` names (`core.fsmonitor`,
//! `core.hooksPath`, ...) on an ordinary `git status`, and a symlink out of
//! the copy sends a later write somewhere else. They are still written
//! (copying a repository back is what transfers are for), and listed so
//! that the person looks at them before using the copy.

use super::messages::CautionKind;
use std::path::{Component, Path};

/// The git rule that applies to an entry written at `path`, the whole path
/// on this machine: a copy landing inside an existing repository counts
/// too. Names compare without regard to ASCII case, as git's do on Windows
/// and macOS.
pub fn git_caution(path: &Path, is_folder: bool) -> Option<CautionKind> {
    let names: Vec<_> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_string_lossy()),
            _ => None,
        })
        .collect();
    let is = |i: usize, name: &str| names.get(i).is_some_and(|n| n.eq_ignore_ascii_case(name));
    let last = names.len().checked_sub(1)?;
    if is_folder {
        return None;
    }
    if is(last, ".git") {
        return Some(CautionKind::GitLink);
    }
    // `.git/hooks` itself counts when it is a symlink: git runs what it
    // points at.
    let under_hooks = (0..last).any(|i| is(i, ".git") && is(i + 1, "hooks"));
    if under_hooks {
        return Some(CautionKind::GitHook);
    }
    if last >= 1 && is(last - 1, ".git") && is(last, "config") {
        return Some(CautionKind::GitConfig);
    }
    None
}

/// Whether a symlink whose folder is `depth` folders below the copied item
/// points outside the copy: an absolute target, or one whose `..` climb
/// above the item. Judged on the text alone (a link inside the copy could
/// still lead out through another link, which is listed in its turn).
pub fn symlink_leaves_copy(depth: usize, target: &[u8]) -> bool {
    let is_separator = |b: &u8| *b == b'/' || *b == b'\\';
    let drive = target.len() >= 2 && target[0].is_ascii_alphabetic() && target[1] == b':';
    if target.first().is_some_and(is_separator) || drive {
        return true;
    }
    let mut depth = depth as i64;
    for part in target.split(is_separator) {
        match part {
            b"" | b"." => {}
            b".." => {
                depth -= 1;
                if depth < 0 {
                    return true;
                }
            }
            _ => depth += 1,
        }
    }
    false
}

/// Whether a symlink whose folder is `depth` folders below the copied item
/// surely stays inside the copy, wherever the links it passes through
/// lead: a relative target whose `..` all come first, no more of them than
/// `depth`. A `..` after a name is refused, since that name may itself be a
/// link (`s -> .` makes `s/..` climb one folder more than it reads).
pub fn symlink_surely_inside(depth: usize, target: &[u8]) -> bool {
    let is_separator = |b: &u8| *b == b'/' || *b == b'\\';
    let drive = target.len() >= 2 && target[0].is_ascii_alphabetic() && target[1] == b':';
    if target.is_empty() || target.first().is_some_and(is_separator) || drive {
        return false;
    }
    let mut climbs = 0;
    let mut named = false;
    for part in target.split(is_separator) {
        match part {
            b"" | b"." => {}
            b".." if named => return false,
            b".." => climbs += 1,
            _ => named = true,
        }
    }
    climbs <= depth
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_links_that_climb_first_and_not_too_far_are_surely_inside() {
        assert!(symlink_surely_inside(0, b"a/b"));
        assert!(symlink_surely_inside(2, b"../../lib/x.js"));
        assert!(symlink_surely_inside(1, b"./../x"));
        assert!(!symlink_surely_inside(1, b"../../x"));
        assert!(!symlink_surely_inside(3, b"/etc/passwd"));
        assert!(!symlink_surely_inside(3, b"C:x"));
        assert!(!symlink_surely_inside(3, b""));
        // Reads as inside, but `s` may be a link to `.`.
        assert!(!symlink_surely_inside(2, b"s/../.."));
        assert!(!symlink_surely_inside(1, b"a/../b"));
    }

    #[test]
    fn git_config_hooks_and_links_are_found_anywhere_in_the_path() {
        let rule = |p: &str| git_caution(Path::new(p), false);
        assert_eq!(rule("/h/proj/.git/config"), Some(CautionKind::GitConfig));
        assert_eq!(rule("/h/proj/.GIT/Config"), Some(CautionKind::GitConfig));
        assert_eq!(
            rule("/h/proj/.git/hooks/pre-commit"),
            Some(CautionKind::GitHook)
        );
        assert_eq!(rule("/h/proj/.git/hooks"), Some(CautionKind::GitHook));
        assert_eq!(rule("/h/proj/sub/.git"), Some(CautionKind::GitLink));
        assert_eq!(rule("/h/proj/.git/HEAD"), None);
        assert_eq!(rule("/h/proj/config"), None);
        assert_eq!(rule("/h/proj/hooks/x"), None);
        assert_eq!(git_caution(Path::new("/h/proj/.git"), true), None);
        assert_eq!(git_caution(Path::new("/h/proj/.git/hooks"), true), None);
    }

    #[test]
    fn a_symlink_leaves_the_copy_when_absolute_or_climbing_out() {
        assert!(symlink_leaves_copy(3, b"/etc/passwd"));
        assert!(symlink_leaves_copy(0, b"\\\\server\\share"));
        assert!(symlink_leaves_copy(0, b"C:x"));
        assert!(symlink_leaves_copy(0, b"../x"));
        assert!(symlink_leaves_copy(1, b"a/../../../x"));
        assert!(!symlink_leaves_copy(1, b"../x"));
        assert!(!symlink_leaves_copy(0, b"./a/../b"));
        assert!(!symlink_leaves_copy(0, b"dangling"));
    }
}
