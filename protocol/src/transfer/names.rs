//! Archive entry names, checked before anything is written: an entry must
//! name a path below the copied item, never above it or elsewhere.

/// Why an entry's name was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnsafeName {
    /// Nothing but `/` and `.` parts.
    Empty,
    /// Starts with `/`: it would be written wherever it points.
    Absolute,
    /// Has a `..` part, which could climb out of the destination.
    ClimbsOut,
    /// Holds a NUL byte, which no filesystem name can.
    Nul,
    /// Its first part is not the copied item's name: every entry of a
    /// transfer lives under that one name.
    OutsideItem,
}

impl UnsafeName {
    pub fn reason(self) -> &'static str {
        match self {
            UnsafeName::Empty => "the entry has an empty name",
            UnsafeName::Absolute => "an absolute name would be written outside the destination",
            UnsafeName::ClimbsOut => "a `..` part would climb out of the destination",
            UnsafeName::Nul => "the name holds a NUL byte",
            UnsafeName::OutsideItem => "the entry is not inside the copied item",
        }
    }
}

/// Splits an entry's name into its parts, dropping `.` and empty parts
/// (`./a//b/` is `a`, `b`). Refuses absolute names and any `..`, even one
/// that would stay inside (`a/../b`): no honest sender writes one.
pub fn entry_parts(raw: &[u8]) -> Result<Vec<&[u8]>, UnsafeName> {
    if raw.contains(&0) {
        return Err(UnsafeName::Nul);
    }
    if raw.first() == Some(&b'/') {
        return Err(UnsafeName::Absolute);
    }
    let mut parts = Vec::new();
    for part in raw.split(|b| *b == b'/') {
        match part {
            b"" | b"." => {}
            b".." => return Err(UnsafeName::ClimbsOut),
            _ => parts.push(part),
        }
    }
    if parts.is_empty() {
        return Err(UnsafeName::Empty);
    }
    Ok(parts)
}

/// The parts of an entry below the copied item `item`: empty for the item
/// itself.
pub fn parts_below<'a>(raw: &'a [u8], item: &str) -> Result<Vec<&'a [u8]>, UnsafeName> {
    let mut parts = entry_parts(raw)?;
    if parts[0] != item.as_bytes() {
        return Err(UnsafeName::OutsideItem);
    }
    parts.remove(0);
    Ok(parts)
}

/// Why `name` cannot be the name of a copied item (the last part of the
/// source path), or `None` when it can.
pub fn item_name_problem(name: &str) -> Option<&'static str> {
    match name {
        "" => Some("it is empty"),
        "." | ".." => Some("`.` and `..` are not names"),
        _ if name.contains('/') => Some("it holds a `/`"),
        _ if name.contains('\0') => Some("it holds a NUL byte"),
        _ => None,
    }
}

/// A name for people: `/`-joined, with bytes that are not UTF-8 replaced.
pub fn shown_name(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(raw: &str) -> Result<Vec<String>, UnsafeName> {
        entry_parts(raw.as_bytes()).map(|p| p.iter().map(|s| shown_name(s)).collect::<Vec<_>>())
    }

    #[test]
    fn dots_and_repeated_slashes_are_dropped() {
        assert_eq!(parts("a/b/c").unwrap(), ["a", "b", "c"]);
        assert_eq!(parts("./a//b/./c/").unwrap(), ["a", "b", "c"]);
        assert_eq!(parts("dir/").unwrap(), ["dir"]);
        // A name that merely contains dots is a name.
        assert_eq!(parts("a/..b/c..").unwrap(), ["a", "..b", "c.."]);
        assert_eq!(parts("a/.../b").unwrap(), ["a", "...", "b"]);
    }

    #[test]
    fn names_that_could_leave_the_destination_are_refused() {
        assert_eq!(parts("../x"), Err(UnsafeName::ClimbsOut));
        assert_eq!(parts("a/../../x"), Err(UnsafeName::ClimbsOut));
        assert_eq!(parts("a/b/.."), Err(UnsafeName::ClimbsOut));
        assert_eq!(parts("a/../b"), Err(UnsafeName::ClimbsOut));
        assert_eq!(parts("/etc/passwd"), Err(UnsafeName::Absolute));
        assert_eq!(parts("//x"), Err(UnsafeName::Absolute));
        assert_eq!(parts(""), Err(UnsafeName::Empty));
        assert_eq!(parts("./"), Err(UnsafeName::Empty));
        assert_eq!(entry_parts(b"a\0b"), Err(UnsafeName::Nul));
    }

    #[test]
    fn entries_live_under_the_item_name() {
        let below = |raw: &str| {
            parts_below(raw.as_bytes(), "proj")
                .map(|p| p.iter().map(|s| shown_name(s)).collect::<Vec<_>>())
        };
        assert_eq!(below("proj").unwrap(), Vec::<String>::new());
        assert_eq!(below("./proj/").unwrap(), Vec::<String>::new());
        assert_eq!(below("proj/src/main.rs").unwrap(), ["src", "main.rs"]);
        assert_eq!(below("other/x"), Err(UnsafeName::OutsideItem));
        assert_eq!(below("projx/y"), Err(UnsafeName::OutsideItem));
        assert_eq!(below("../proj/x"), Err(UnsafeName::ClimbsOut));
    }

    #[test]
    fn item_names_are_single_parts() {
        assert_eq!(item_name_problem("report.pdf"), None);
        assert_eq!(item_name_problem(".bashrc"), None);
        assert!(item_name_problem("").is_some());
        assert!(item_name_problem("..").is_some());
        assert!(item_name_problem("a/b").is_some());
    }
}
