//! Names and symlinks that Windows rejects. Kept free of any Windows API so the
//! rules are tested on every OS; the host applies them when it runs on
//! Windows, and skips (and lists) what they reject instead of failing.

use std::fmt;

/// Why a name is not valid on Windows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowsNameProblem {
    /// Windows names are Unicode; these bytes are not UTF-8.
    NotUtf8,
    /// A device name such as `CON` or `LPT1`, with or without an extension.
    Reserved(String),
    /// One of `< > : " \ | ? *`.
    Character(char),
    /// A control character (0 to 31).
    Control,
    /// Windows drops a trailing `.` or space, so the name would change.
    TrailingDotOrSpace,
}

impl fmt::Display for WindowsNameProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WindowsNameProblem::NotUtf8 => f.write_str("the name is not valid UTF-8"),
            WindowsNameProblem::Reserved(device) => {
                write!(f, "`{device}` is a device name Windows reserves")
            }
            WindowsNameProblem::Character(c) => {
                write!(f, "`{c}` is not allowed in Windows names")
            }
            WindowsNameProblem::Control => {
                f.write_str("control characters are not allowed in Windows names")
            }
            WindowsNameProblem::TrailingDotOrSpace => {
                f.write_str("Windows names cannot end with a dot or a space")
            }
        }
    }
}

/// Device names, reserved whatever the case and whatever follows the first
/// dot (`nul.txt`, `Com1.tar.gz`).
const RESERVED: &[&str] = &[
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "COM¹", "COM²", "COM³", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8",
    "LPT9", "LPT¹", "LPT²", "LPT³",
];

const FORBIDDEN: &[char] = &['<', '>', ':', '"', '\\', '|', '?', '*'];

/// Why `name`, one part of a path, is not valid on Windows, or `None` when
/// it is.
pub fn windows_name_problem(name: &[u8]) -> Option<WindowsNameProblem> {
    let Ok(name) = std::str::from_utf8(name) else {
        return Some(WindowsNameProblem::NotUtf8);
    };
    if let Some(c) = name.chars().find(|c| FORBIDDEN.contains(c)) {
        return Some(WindowsNameProblem::Character(c));
    }
    if name.chars().any(|c| (c as u32) < 32) {
        return Some(WindowsNameProblem::Control);
    }
    if name.ends_with('.') || name.ends_with(' ') {
        return Some(WindowsNameProblem::TrailingDotOrSpace);
    }
    // Windows ignores spaces between the device name and the extension too.
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ');
    RESERVED
        .iter()
        .find(|device| device.eq_ignore_ascii_case(stem))
        .map(|device| WindowsNameProblem::Reserved((*device).to_string()))
}

/// Why Windows would refuse a symlink to `target`, or `None` when it
/// could. An absolute POSIX target (`/usr/bin/python3`) means nothing there,
/// and a target with a part that is invalid there can never resolve. Whether
/// the account may create symlinks at all is only known by trying.
pub fn windows_symlink_problem(target: &[u8]) -> Option<String> {
    if target.is_empty() {
        return Some("the symlink has an empty target".into());
    }
    if target.first() == Some(&b'/') {
        return Some(format!(
            "its target `{}` is an absolute path of the computer, which Windows cannot follow",
            String::from_utf8_lossy(target)
        ));
    }
    target
        .split(|b| *b == b'/')
        .filter(|part| !matches!(*part, b"" | b"." | b".."))
        .find_map(windows_name_problem)
        .map(|problem| {
            format!(
                "its target `{}` cannot exist on Windows: {problem}",
                String::from_utf8_lossy(target)
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(name: &str) -> Option<WindowsNameProblem> {
        windows_name_problem(name.as_bytes())
    }

    #[test]
    fn ordinary_names_pass() {
        for name in [
            "report.pdf",
            ".bashrc",
            "a b",
            "console.log",
            "CONFIG",
            "com10",
            "lpt",
            "nul_device",
            "über",
            "..x",
        ] {
            assert_eq!(problem(name), None, "{name}");
        }
    }

    #[test]
    fn device_names_are_reserved_with_or_without_extension() {
        for name in [
            "CON",
            "con",
            "Prn",
            "aux",
            "NUL",
            "COM1",
            "com9",
            "LPT1",
            "lpt9",
            "nul.txt",
            "CON.tar.gz",
            "aux .c",
            "COM¹",
        ] {
            assert!(
                matches!(problem(name), Some(WindowsNameProblem::Reserved(_))),
                "{name}: {:?}",
                problem(name)
            );
        }
        assert_eq!(
            problem("con.txt").unwrap().to_string(),
            "`CON` is a device name Windows reserves"
        );
    }

    #[test]
    fn forbidden_characters_and_endings() {
        for c in ['<', '>', ':', '"', '\\', '|', '?', '*'] {
            assert_eq!(
                problem(&format!("a{c}b")),
                Some(WindowsNameProblem::Character(c))
            );
        }
        assert_eq!(problem("tab\there"), Some(WindowsNameProblem::Control));
        assert_eq!(
            problem("name."),
            Some(WindowsNameProblem::TrailingDotOrSpace)
        );
        assert_eq!(
            problem("name "),
            Some(WindowsNameProblem::TrailingDotOrSpace)
        );
        assert_eq!(
            windows_name_problem(b"caf\xe9"),
            Some(WindowsNameProblem::NotUtf8)
        );
    }

    #[test]
    fn symlinks_windows_will_not_create() {
        assert_eq!(windows_symlink_problem(b"../lib/x.so"), None);
        assert_eq!(windows_symlink_problem(b"sub/file.txt"), None);
        assert!(windows_symlink_problem(b"/usr/bin/python3")
            .unwrap()
            .contains("absolute path"));
        assert!(windows_symlink_problem(b"dir/a:b")
            .unwrap()
            .contains("`:` is not allowed"));
        assert!(windows_symlink_problem(b"nul").is_some());
        assert!(windows_symlink_problem(b"").is_some());
    }
}
