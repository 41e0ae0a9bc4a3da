//! Which name a download may write on the host: the one the agent typed.
//!
//! computerd answers `transfer/source` with the item's name, and that name
//! becomes the final host path inside an existing folder. A tampered
//! computer could answer `.zshenv` for `~/report.pdf`, so the answer must
//! be the last part of what the agent typed (read as computerd reads it:
//! `~/`, `.` and `..` resolved on the text). Only when the typed path ends
//! without a name of its own (`~`, `.`, `..`) does the answered absolute
//! path decide, and then it must agree with the name and not be hidden
//! (starting with `.`): the computer must not pick `~/.zshenv` for a
//! download of `.` into the home folder.

use super::error::TransferError;
use computer_protocol::TransferSource;

/// Longest name accepted, in bytes: what Linux, macOS and Windows
/// filesystems hold.
pub(super) const NAME_MAX_BYTES: usize = 255;

/// Checks `source`, computerd's answer for the typed `computer_path`.
pub(super) fn check_source_name(
    computer_path: &str,
    source: &TransferSource,
) -> Result<(), TransferError> {
    let typed = typed_name(computer_path);
    let expected = match typed {
        Some(name) => name,
        None => match source.path.strip_prefix('/') {
            Some(rest) => rest.rsplit('/').next().unwrap_or_default(),
            None => {
                return Err(TransferError::ForeignSource {
                    computer_path: shown(computer_path),
                    answered: shown(&source.path),
                    why: "its path is not absolute",
                })
            }
        },
    };
    if source.name != expected {
        return Err(TransferError::ForeignSource {
            computer_path: shown(computer_path),
            answered: shown(&source.name),
            why: "that is not the name asked for",
        });
    }
    if typed.is_none() && source.name.starts_with('.') {
        return Err(TransferError::UntypedHiddenName {
            computer_path: shown(computer_path),
            answered: shown(&source.name),
            path: shown(&source.path),
        });
    }
    if source.name.len() > NAME_MAX_BYTES {
        return Err(TransferError::ForeignSource {
            computer_path: shown(computer_path),
            answered: shown(&source.name),
            why: "the name is longer than 255 bytes",
        });
    }
    Ok(())
}

/// The last part of `typed` after resolving `~/`, `.` and `..` on the
/// text, or `None` when that depends on the computer (`~`, a path ending
/// in `..` above its start, or nothing at all).
fn typed_name(typed: &str) -> Option<&str> {
    if typed == "~" {
        return None;
    }
    let rest = typed.strip_prefix("~/").unwrap_or(typed);
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|last| *last != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.last().copied().filter(|last| *last != "..")
}

/// Escaped and short, safe in a message.
fn shown(text: &str) -> String {
    let mut shown: String = text.chars().take(80).flat_map(char::escape_debug).collect();
    if text.chars().count() > 80 {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use computer_protocol::ItemKind;

    fn source(path: &str, name: &str) -> TransferSource {
        TransferSource {
            path: path.into(),
            name: name.into(),
            kind: ItemKind::File,
        }
    }

    #[test]
    fn the_typed_name_decides() {
        assert_eq!(typed_name("~/report.pdf"), Some("report.pdf"));
        assert_eq!(typed_name("/home/computer/proj/"), Some("proj"));
        assert_eq!(typed_name("proj/./src/.."), Some("proj"));
        assert_eq!(typed_name("../x"), Some("x"));
        assert_eq!(typed_name("~bob/x"), Some("x"));
        for open in ["~", "~/", ".", "..", "a/..", "../..", "/", ""] {
            assert_eq!(typed_name(open), None, "{open}");
        }
    }

    #[test]
    fn another_name_is_refused() {
        let ok = source("/home/computer/report.pdf", "report.pdf");
        check_source_name("~/report.pdf", &ok).unwrap();
        let e = check_source_name(
            "~/report.pdf",
            &source("/home/computer/report.pdf", ".zshenv"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("`.zshenv`") && e.contains("`~/report.pdf`"),
            "{e}"
        );
    }

    #[test]
    fn without_a_typed_name_the_path_decides() {
        check_source_name("~", &source("/home/computer", "computer")).unwrap();
        check_source_name(".", &source("/work/proj", "proj")).unwrap();
        assert!(check_source_name(".", &source("/work/proj", "Library")).is_err());
        assert!(check_source_name(".", &source("proj", "proj")).is_err());
    }

    #[test]
    fn without_a_typed_name_a_hidden_name_is_refused() {
        for typed in [".", "~", "..", "~/", "a/.."] {
            let e =
                check_source_name(typed, &source("/home/computer/.zshenv", ".zshenv")).unwrap_err();
            assert!(
                matches!(e, TransferError::UntypedHiddenName { .. }),
                "{typed}: {e}"
            );
            let e = e.to_string();
            assert!(
                e.contains("`.zshenv`") && e.contains("`/home/computer/.zshenv`"),
                "{e}"
            );
        }
        // Typed by the agent, a hidden name is the agent's choice.
        check_source_name("~/.zshenv", &source("/home/computer/.zshenv", ".zshenv")).unwrap();
        check_source_name("/work/.config", &source("/work/.config", ".config")).unwrap();
    }

    #[test]
    fn long_names_are_refused() {
        let long = "n".repeat(256);
        let e = check_source_name(&long, &source(&format!("/w/{long}"), &long)).unwrap_err();
        assert!(e.to_string().contains("255 bytes"), "{e}");
    }
}
