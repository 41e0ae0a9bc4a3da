//! A copy of the display's core keyboard mapping: which keycode (and shift
//! level) produces a keysym, and which keycodes are free for temporary use.

use super::keysyms::{self, Keysym, NO_SYMBOL};
use crate::display::Display;
use x11rb::connection::Connection;
use x11rb::errors::ReplyError;
use x11rb::protocol::xproto::{ConnectionExt as _, Keycode};

/// Where a keysym sits: its key, and whether Shift selects it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyPosition {
    pub keycode: Keycode,
    pub shift: bool,
}

/// The core keyboard mapping, `per_keycode` keysyms for each keycode from
/// `min_keycode` on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    min_keycode: Keycode,
    per_keycode: usize,
    keysyms: Vec<Keysym>,
}

impl Keymap {
    pub fn new(min_keycode: Keycode, per_keycode: usize, keysyms: Vec<Keysym>) -> Keymap {
        Keymap {
            min_keycode,
            per_keycode: per_keycode.max(1),
            keysyms,
        }
    }

    /// Reads the whole mapping from the server.
    pub fn fetch(display: &Display) -> Result<Keymap, ReplyError> {
        let setup = display.conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let reply = display
            .conn
            .get_keyboard_mapping(min, max - min + 1)?
            .reply()?;
        Ok(Keymap::new(
            min,
            usize::from(reply.keysyms_per_keycode),
            reply.keysyms,
        ))
    }

    /// Keysyms per keycode in this mapping.
    pub fn per_keycode(&self) -> usize {
        self.per_keycode
    }

    fn keycodes(&self) -> impl Iterator<Item = (Keycode, &[Keysym])> {
        let min = self.min_keycode;
        self.keysyms
            .chunks_exact(self.per_keycode)
            .enumerate()
            .map(move |(i, syms)| (min.wrapping_add(i as u8), syms))
    }

    /// The keysyms of `keycode`, if it is in the mapping.
    pub fn keysyms_of(&self, keycode: Keycode) -> Option<&[Keysym]> {
        let i = usize::from(keycode.checked_sub(self.min_keycode)?);
        self.keysyms
            .get(i * self.per_keycode..(i + 1) * self.per_keycode)
    }

    /// The unshifted or shifted position of `keysym` (or of the other keysym
    /// for the same character). Unshifted positions win, then low keycodes.
    /// Only the first group's two levels count: other levels need modifiers
    /// (AltGr) whose meaning depends on the layout.
    pub fn find(&self, keysym: Keysym) -> Option<KeyPosition> {
        let wanted = |k: Keysym| k == keysym || Some(k) == keysyms::alternate(keysym);
        if keysym == NO_SYMBOL {
            return None;
        }
        for shift in [false, true] {
            for (keycode, syms) in self.keycodes() {
                if level(syms, shift).is_some_and(wanted) {
                    return Some(KeyPosition { keycode, shift });
                }
            }
        }
        None
    }

    /// Keycodes with no keysym at all: nothing on the keyboard produces
    /// them, so they can be bound to a keysym for a moment.
    pub fn spare_keycodes(&self) -> Vec<Keycode> {
        self.keycodes()
            .filter(|(_, syms)| syms.iter().all(|&k| k == NO_SYMBOL))
            .map(|(keycode, _)| keycode)
            .collect()
    }

    /// Records a change this process made, so the copy stays current
    /// without asking the server.
    pub fn set(&mut self, keycode: Keycode, syms: &[Keysym]) {
        let Some(i) = keycode.checked_sub(self.min_keycode).map(usize::from) else {
            return;
        };
        if let Some(slot) = self
            .keysyms
            .get_mut(i * self.per_keycode..(i + 1) * self.per_keycode)
        {
            for (j, k) in slot.iter_mut().enumerate() {
                *k = syms.get(j).copied().unwrap_or(NO_SYMBOL);
            }
        }
    }
}

/// The keysym a key gives at level 1 (`shift` false) or 2. Per the core
/// protocol, a lone lowercase letter implies its uppercase at level 2.
fn level(syms: &[Keysym], shift: bool) -> Option<Keysym> {
    let first = *syms.first()?;
    let second = syms.get(1).copied().unwrap_or(NO_SYMBOL);
    let k = match (shift, second) {
        (false, _) => first,
        (true, NO_SYMBOL) => upper_of(first)?,
        (true, k) => k,
    };
    (k != NO_SYMBOL).then_some(k)
}

/// The uppercase keysym of a Latin-1 lowercase letter.
fn upper_of(keysym: Keysym) -> Option<Keysym> {
    match keysym {
        0x61..=0x7a => Some(keysym - 0x20),
        0xe0..=0xfe if keysym != 0xf7 => Some(keysym - 0x20),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// keycode 8: empty; 9: a A; 10: 1 exclam; 11: empty; 12: b (lone);
    /// 13: Return.
    fn sample() -> Keymap {
        Keymap::new(
            8,
            2,
            vec![
                0,
                0,
                0x61,
                0x41,
                0x31,
                0x21,
                0,
                0,
                0x62,
                0,
                keysyms::RETURN,
                0,
            ],
        )
    }

    #[test]
    fn finds_unshifted_and_shifted() {
        let map = sample();
        assert_eq!(
            map.find(0x61),
            Some(KeyPosition {
                keycode: 9,
                shift: false
            })
        );
        assert_eq!(
            map.find(0x41),
            Some(KeyPosition {
                keycode: 9,
                shift: true
            })
        );
        assert_eq!(
            map.find(0x21),
            Some(KeyPosition {
                keycode: 10,
                shift: true
            })
        );
        assert_eq!(
            map.find(keysyms::RETURN),
            Some(KeyPosition {
                keycode: 13,
                shift: false
            })
        );
        assert_eq!(map.find(0x7a), None);
        assert_eq!(map.find(NO_SYMBOL), None);
    }

    #[test]
    fn a_lone_letter_implies_its_uppercase() {
        assert_eq!(
            sample().find(0x42),
            Some(KeyPosition {
                keycode: 12,
                shift: true
            })
        );
    }

    #[test]
    fn unicode_keysyms_match_latin1_entries() {
        assert_eq!(
            sample().find(0x0100_0061),
            Some(KeyPosition {
                keycode: 9,
                shift: false
            })
        );
    }

    #[test]
    fn spare_keycodes_have_no_symbols() {
        assert_eq!(sample().spare_keycodes(), vec![8, 11]);
    }

    #[test]
    fn set_updates_the_copy() {
        let mut map = sample();
        map.set(11, &[0xe9, 0xe9]);
        assert_eq!(
            map.find(0xe9),
            Some(KeyPosition {
                keycode: 11,
                shift: false
            })
        );
        assert_eq!(map.keysyms_of(11), Some(&[0xe9, 0xe9][..]));
        assert_eq!(map.spare_keycodes(), vec![8]);
        map.set(11, &[]);
        assert_eq!(map.spare_keycodes(), vec![8, 11]);
    }
}
