//! Text to keysyms for the `type` action: any Unicode, with `\n` as Return
//! and `\t` as Tab.

use super::keysyms::{self, Keysym};
use super::InputError;

/// The keysyms that type `text`, in order. `\r\n` and a lone `\r` are one
/// Return. Other control characters have no key to type them and fail
/// before anything is typed.
pub fn keysyms_for_text(text: &str) -> Result<Vec<Keysym>, InputError> {
    let mut out = Vec::with_capacity(text.len());
    let mut chars = text.chars().enumerate().peekable();
    while let Some((index, c)) = chars.next() {
        let keysym = match c {
            '\r' if chars.peek().is_some_and(|&(_, next)| next == '\n') => continue,
            '\n' | '\r' => keysyms::RETURN,
            '\t' => keysyms::TAB,
            c if c.is_control() => {
                return Err(InputError::ControlCharacter {
                    codepoint: u32::from(c),
                    index,
                })
            }
            c => keysyms::for_char(c),
        };
        out.push(keysym);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::keysyms::{RETURN, TAB};

    #[test]
    fn text_becomes_keysyms() {
        assert_eq!(
            keysyms_for_text("aÉ你👋").unwrap(),
            vec![0x61, 0xc9, 0x0100_4f60, 0x0101_f44b]
        );
    }

    #[test]
    fn newlines_and_tabs_are_keys() {
        assert_eq!(
            keysyms_for_text("a\nb\tc\r\nd\re").unwrap(),
            vec![0x61, RETURN, 0x62, TAB, 0x63, RETURN, 0x64, RETURN, 0x65]
        );
    }

    #[test]
    fn other_control_characters_are_refused() {
        let err = keysyms_for_text("ab\u{7}").unwrap_err();
        assert!(
            matches!(
                err,
                InputError::ControlCharacter {
                    codepoint: 7,
                    index: 2
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("U+0007"), "{err}");
        assert!(keysyms_for_text("\u{1b}[A").is_err());
        assert!(keysyms_for_text("\u{85}").is_err());
    }
}
