//! Parsing a key chord such as `ctrl+shift+t`: modifiers, then one key.

use super::keysyms::{self, Keysym};

/// A modifier held while the chord's key is pressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modifier {
    Ctrl,
    Alt,
    Shift,
    Super,
}

impl Modifier {
    fn from_name(name: &str) -> Option<Modifier> {
        Some(match name.to_ascii_lowercase().as_str() {
            "ctrl" | "control" => Modifier::Ctrl,
            "alt" | "option" => Modifier::Alt,
            "shift" => Modifier::Shift,
            "super" | "cmd" | "command" | "meta" | "win" => Modifier::Super,
            _ => return None,
        })
    }

    /// The keysyms whose keys act as this modifier, best first.
    pub fn keysyms(self) -> &'static [Keysym] {
        match self {
            Modifier::Ctrl => &[keysyms::CONTROL_L, keysyms::CONTROL_R],
            Modifier::Alt => &[keysyms::ALT_L, keysyms::ALT_R, keysyms::META_L],
            Modifier::Shift => &[keysyms::SHIFT_L, keysyms::SHIFT_R],
            Modifier::Super => &[keysyms::SUPER_L, keysyms::SUPER_R],
        }
    }

    /// The name an agent would write, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Modifier::Ctrl => "ctrl",
            Modifier::Alt => "alt",
            Modifier::Shift => "shift",
            Modifier::Super => "super",
        }
    }
}

/// A parsed chord: hold `modifiers` in order, tap `key`, release them in
/// reverse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chord {
    pub modifiers: Vec<Modifier>,
    pub key: Keysym,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChordError {
    #[error("`{name}` is not a key name: use names such as `enter`, `esc`, `f5` or a single character, joined with modifiers like `ctrl+shift+t`")]
    UnknownKey { name: String },
    #[error("`{name}` in `{chord}` is not a modifier: put only `ctrl`, `alt`, `shift` or `super` before the key, as in `ctrl+shift+t`")]
    NotAModifier { name: String, chord: String },
    #[error("`{chord}` has an empty part: join modifiers and one key with `+`, as in `ctrl+shift+t`; write `plus` for the + key")]
    EmptyPart { chord: String },
}

/// Parses `ctrl+shift+t`, `cmd+a`, `f5`, `A`, `ctrl++` (ctrl and plus).
/// Names are case-insensitive; a single character is taken as written.
pub fn parse(chord: &str) -> Result<Chord, ChordError> {
    let text = chord.trim();
    let empty = || ChordError::EmptyPart {
        chord: chord.to_string(),
    };
    // The `+` key itself, alone or after modifiers (`ctrl++`).
    let (prefix, key) = if text == "+" {
        ("", "+")
    } else if let Some(prefix) = text.strip_suffix("++") {
        (prefix, "+")
    } else {
        text.rsplit_once('+').unwrap_or(("", text))
    };
    let key = key.trim();
    if key.is_empty() {
        return Err(empty());
    }
    let mut modifiers = Vec::new();
    if !prefix.is_empty() {
        for part in prefix.split('+').map(str::trim) {
            if part.is_empty() {
                return Err(empty());
            }
            let modifier = Modifier::from_name(part).ok_or_else(|| ChordError::NotAModifier {
                name: part.to_string(),
                chord: chord.to_string(),
            })?;
            if !modifiers.contains(&modifier) {
                modifiers.push(modifier);
            }
        }
    }
    let key = keysyms::for_name(key).ok_or_else(|| ChordError::UnknownKey {
        name: key.to_string(),
    })?;
    Ok(Chord { modifiers, key })
}

#[cfg(test)]
mod tests {
    use super::keysyms::*;
    use super::*;
    use Modifier::*;

    fn chord(modifiers: &[Modifier], key: Keysym) -> Chord {
        Chord {
            modifiers: modifiers.to_vec(),
            key,
        }
    }

    #[test]
    fn plain_keys() {
        assert_eq!(parse("enter"), Ok(chord(&[], RETURN)));
        assert_eq!(parse("Esc"), Ok(chord(&[], ESCAPE)));
        assert_eq!(parse("f5"), Ok(chord(&[], 0xffc2)));
        assert_eq!(parse("a"), Ok(chord(&[], 0x61)));
        assert_eq!(parse("A"), Ok(chord(&[], 0x41)));
        assert_eq!(parse("space"), Ok(chord(&[], 0x20)));
        assert_eq!(parse("pageup"), Ok(chord(&[], 0xff55)));
        assert_eq!(parse("  tab "), Ok(chord(&[], TAB)));
    }

    #[test]
    fn modifiers_and_aliases() {
        assert_eq!(parse("ctrl+shift+t"), Ok(chord(&[Ctrl, Shift], 0x74)));
        assert_eq!(parse("cmd+a"), Ok(chord(&[Super], 0x61)));
        assert_eq!(parse("alt+f4"), Ok(chord(&[Alt], 0xffc1)));
        assert_eq!(parse("shift+tab"), Ok(chord(&[Shift], TAB)));
        assert_eq!(parse("ctrl+c"), Ok(chord(&[Ctrl], 0x63)));
        assert_eq!(
            parse("Control+Option+Delete"),
            Ok(chord(&[Ctrl, Alt], DELETE))
        );
        assert_eq!(parse("win+e"), Ok(chord(&[Super], 0x65)));
        assert_eq!(parse("meta+e"), Ok(chord(&[Super], 0x65)));
        assert_eq!(parse("command+q"), Ok(chord(&[Super], 0x71)));
        assert_eq!(parse("ctrl + c"), Ok(chord(&[Ctrl], 0x63)));
        assert_eq!(parse("ctrl+ctrl+c"), Ok(chord(&[Ctrl], 0x63)));
    }

    #[test]
    fn a_modifier_alone_is_a_key() {
        assert_eq!(parse("super"), Ok(chord(&[], SUPER_L)));
        assert_eq!(parse("shift"), Ok(chord(&[], SHIFT_L)));
        assert_eq!(parse("ctrl+shift"), Ok(chord(&[Ctrl], SHIFT_L)));
    }

    #[test]
    fn the_plus_key() {
        assert_eq!(parse("plus"), Ok(chord(&[], 0x2b)));
        assert_eq!(parse("+"), Ok(chord(&[], 0x2b)));
        assert_eq!(parse("ctrl++"), Ok(chord(&[Ctrl], 0x2b)));
        assert_eq!(parse("ctrl+plus"), Ok(chord(&[Ctrl], 0x2b)));
    }

    #[test]
    fn unknown_names_say_what_to_use() {
        let err = parse("hyperspace").unwrap_err();
        assert_eq!(
            err.to_string(),
            "`hyperspace` is not a key name: use names such as `enter`, `esc`, `f5` or a single character, joined with modifiers like `ctrl+shift+t`"
        );
        assert_eq!(
            parse("ctrl+hyperspace"),
            Err(ChordError::UnknownKey {
                name: "hyperspace".into()
            })
        );
    }

    #[test]
    fn malformed_chords_are_refused() {
        assert!(matches!(parse("ctrl+"), Err(ChordError::EmptyPart { .. })));
        assert!(matches!(
            parse("ctrl++c"),
            Err(ChordError::EmptyPart { .. })
        ));
        let err = parse("a+b").unwrap_err();
        assert_eq!(
            err,
            ChordError::NotAModifier {
                name: "a".into(),
                chord: "a+b".into()
            }
        );
        assert!(
            err.to_string().contains("`a` in `a+b` is not a modifier"),
            "{err}"
        );
    }
}
