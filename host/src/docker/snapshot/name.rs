//! The names and notes agents give snapshots. A name goes into labels and
//! messages, never into a path or a command line, but it is still held to
//! a plain alphabet so that it reads the same everywhere.

use super::SnapshotError;

pub const NAME_MAX: usize = 64;
pub const NOTE_MAX_CHARS: usize = 500;

/// A snapshot name: 1..=64 of `[a-z0-9._-]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotName(String);

impl SnapshotName {
    pub fn parse(text: &str) -> Result<SnapshotName, SnapshotError> {
        let invalid = |why: String| {
            SnapshotError::Invalid(format!(
                "`name` {why}: give 1 to {NAME_MAX} characters of a-z, 0-9, `.`, `_` and `-`"
            ))
        };
        if text.is_empty() {
            return Err(invalid("is empty".into()));
        }
        let chars = text.chars().count();
        if chars > NAME_MAX {
            return Err(invalid(format!("has {chars} characters")));
        }
        if let Some(bad) = text
            .chars()
            .find(|c| !matches!(c, 'a'..='z' | '0'..='9' | '.' | '_' | '-'))
        {
            return Err(invalid(format!("holds {bad:?}")));
        }
        Ok(SnapshotName(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for SnapshotName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A note of at most [`NOTE_MAX_CHARS`] characters, without control
/// characters (it is shown on one line in lists).
pub fn check_note(note: &str) -> Result<(), SnapshotError> {
    let chars = note.chars().count();
    if chars > NOTE_MAX_CHARS {
        return Err(SnapshotError::Invalid(format!(
            "`note` has {chars} characters: the limit is {NOTE_MAX_CHARS}; shorten it"
        )));
    }
    if note.chars().any(char::is_control) {
        return Err(SnapshotError::Invalid(
            "`note` holds a control character (a line break or tab): give one line of text"
                .to_string(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_held_to_their_alphabet_and_length() {
        for good in ["a", "before-upgrade", "v1.2_3", &"x".repeat(64)] {
            assert_eq!(SnapshotName::parse(good).unwrap().as_str(), good);
        }
        for (bad, says) in [
            ("", "is empty"),
            (&"x".repeat(65) as &str, "has 65 characters"),
            ("Upper", "holds 'U'"),
            ("a/b", "holds '/'"),
            ("a b", "holds ' '"),
            ("é", "holds 'é'"),
        ] {
            let e = SnapshotName::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with("`name` ") && e.contains(says), "{bad}: {e}");
            assert!(e.contains("1 to 64"), "{e}");
        }
    }

    #[test]
    fn notes_are_one_line_of_at_most_500_characters() {
        assert!(check_note("").is_ok());
        assert!(check_note(&"é".repeat(500)).is_ok());
        let long = check_note(&"é".repeat(501)).unwrap_err().to_string();
        assert!(long.contains("501") && long.contains("500"), "{long}");
        assert!(check_note("a\nb").unwrap_err().to_string().contains("line"));
    }
}
