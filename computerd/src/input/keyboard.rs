//! Pressing keysyms: find the key that produces each one, or bind a spare
//! keycode to it (the approach of xdotool), and give the keycode back later.
//!
//! X clients translate keycodes to keysyms themselves, from their own copy
//! of the keymap, which they refresh when a `MappingNotify` says so - often
//! only when they handle the next key event. A binding changed before a
//! client handled the keys typed with it turns them into nothing, and no
//! protocol tells when a client is done (xterm answers no `_NET_WM_PING`).
//! So bindings are not undone at the end of an action: they stay until
//! they have been idle for [`RELEASE_AFTER`] (checked at the start of later
//! actions), and are reused for another keysym only after
//! [`CLIENT_CATCH_UP`] without use. Under load a client may lag a typed
//! burst by well over 100 ms; seconds leave a wide margin.

use super::chord::{Chord, Modifier};
use super::events::Events;
use super::keymap::{KeyPosition, Keymap};
use super::keysyms::{self, Keysym, NO_SYMBOL};
use super::rebinding::{rebinding_wait, Bound, REBINDING_WAIT_MAX};
use super::InputError;
use crate::display::Display;
use std::collections::HashSet;
use std::time::{Duration, Instant};
use x11rb::protocol::xproto::{ConnectionExt as _, KeyButMask, Keycode};

/// How long a bound keycode must go unused before it is bound to another
/// keysym: the time clients get to handle the keys typed with it. Paid only
/// by text with more distinct missing characters than there are spare
/// keycodes (about 19 on Xvnc).
pub const CLIENT_CATCH_UP: Duration = Duration::from_millis(500);

/// How long a bound keycode stays bound after its last use, when nothing
/// needs it: it is given back at the first action after that.
pub const RELEASE_AFTER: Duration = Duration::from_secs(2);

/// The keyboard of one display, as this process last saw it.
pub struct Keyboard {
    /// The server's keymap; kept current with our own changes and re-read
    /// after anyone else's.
    keymap: Keymap,
    /// Set when a `MappingNotify` arrived.
    stale: bool,
    /// Keycodes this process bound to keysyms no key had.
    borrowed: Vec<Borrowed>,
}

/// A spare keycode bound to `keysym`.
#[derive(Debug, Clone, Copy)]
struct Borrowed {
    keycode: Keycode,
    keysym: Keysym,
    /// When a key event last went out for it.
    last_used: Instant,
}

impl Keyboard {
    pub fn new(display: &Display) -> Result<Keyboard, InputError> {
        let keymap = Keymap::fetch(display).map_err(InputError::request(display.number))?;
        Ok(Keyboard {
            keymap,
            stale: false,
            borrowed: Vec::new(),
        })
    }

    /// A copy of the keymap as last read or changed.
    pub fn keymap(&self) -> &Keymap {
        &self.keymap
    }

    /// Keycodes currently bound by this process.
    pub fn borrowed(&self) -> usize {
        self.borrowed.len()
    }

    /// Refuses `keysyms` when typing them would wait longer than
    /// [`REBINDING_WAIT_MAX`] to rebind keycodes, before any key goes out.
    pub fn check_rebinding_wait(&self, keysyms: &[Keysym]) -> Result<(), InputError> {
        // The keymap is searched once per distinct keysym, not per
        // character: the typing that follows searches it again.
        let distinct: HashSet<Keysym> = keysyms.iter().copied().collect();
        let is_bound = |k: Keysym| self.borrowed.iter().any(|b| b.keysym == k);
        let missing: HashSet<Keysym> = distinct
            .into_iter()
            .filter(|&k| is_bound(k) || self.keymap.find(k).is_none())
            .collect();
        let spare = self.keymap.spare_keycodes().len();
        let keycodes = spare + self.borrowed.len();
        // Each fits a keycode of its own: nothing is rebound.
        if missing.len() <= keycodes {
            return Ok(());
        }
        let now = Instant::now();
        let bound: Vec<Bound> = self
            .borrowed
            .iter()
            .map(|b| Bound {
                keysym: b.keysym,
                unused_for: now.duration_since(b.last_used),
            })
            .collect();
        let on_a_key = |k: Keysym| !missing.contains(&k);
        let wait = rebinding_wait(keysyms, on_a_key, spare, &bound, CLIENT_CATCH_UP);
        if wait <= REBINDING_WAIT_MAX {
            return Ok(());
        }
        Err(InputError::TypingTooSlow {
            wait_s: wait.as_secs(),
            distinct: missing.len(),
            keycodes,
        })
    }

    /// Reads the events queued on the display's connection, re-reads the
    /// keymap when one says it changed, and gives back bindings idle for [`RELEASE_AFTER`].
    /// Run at the start of every action.
    pub fn catch_up(&mut self, display: &Display) -> Result<(), InputError> {
        display
            .drain_events()
            .map_err(InputError::send(display.number))?;
        self.stale |= display.take_keymap_changed();
        if self.stale {
            self.keymap = Keymap::fetch(display).map_err(InputError::request(display.number))?;
            self.stale = false;
            // A binding someone else has changed since is theirs now.
            let keymap = &self.keymap;
            self.borrowed.retain(|b| {
                keymap.keysyms_of(b.keycode).and_then(|s| s.first()) == Some(&b.keysym)
            });
        }
        let now = Instant::now();
        let idle: Vec<Keycode> = self
            .borrowed
            .iter()
            .filter(|b| now.duration_since(b.last_used) >= RELEASE_AFTER)
            .map(|b| b.keycode)
            .collect();
        self.release(display, &idle)
    }

    /// Gives back every bound keycode once it has been unused for
    /// [`CLIENT_CATCH_UP`], leaving the keymap as it was. For callers that
    /// know clients have handled the typed keys.
    pub fn restore(&mut self, display: &Display) -> Result<(), InputError> {
        self.catch_up(display)?;
        if let Some(last) = self.borrowed.iter().map(|b| b.last_used).max() {
            sleep_until(last + CLIENT_CATCH_UP);
        }
        let all: Vec<Keycode> = self.borrowed.iter().map(|b| b.keycode).collect();
        self.release(display, &all)
    }

    fn release(&mut self, display: &Display, keycodes: &[Keycode]) -> Result<(), InputError> {
        for &keycode in keycodes {
            change_mapping(display, &mut self.keymap, keycode, &[])?;
            self.borrowed.retain(|b| b.keycode != keycode);
        }
        Ok(())
    }

    /// Presses `chord`: its modifiers in order, the key, then releases in
    /// reverse.
    pub fn press_chord(&mut self, display: &Display, chord: &Chord) -> Result<(), InputError> {
        let mut run = Run::new(display, self);
        let result = run.chord(chord);
        run.events.confirm().and(result)
    }

    /// Types `keysyms` one after the other, with Shift where a keysym needs
    /// it. Caps Lock is switched off meanwhile so letters keep their case.
    pub fn type_keysyms(
        &mut self,
        display: &Display,
        keysyms: &[Keysym],
    ) -> Result<(), InputError> {
        let locked = display
            .conn
            .query_pointer(display.root)
            .map_err(InputError::send(display.number))?
            .reply()
            .map_err(InputError::request(display.number))?
            .mask
            .contains(KeyButMask::LOCK);
        let mut run = Run::new(display, self);
        let result = (|| {
            if locked {
                run.tap(keysyms::CAPS_LOCK)?;
            }
            for &keysym in keysyms {
                run.tap(keysym)?;
            }
            if locked {
                run.tap(keysyms::CAPS_LOCK)?;
            }
            Ok(())
        })();
        run.events.confirm().and(result)
    }
}

/// One action's key presses.
struct Run<'a> {
    events: Events<'a>,
    keyboard: &'a mut Keyboard,
}

impl<'a> Run<'a> {
    fn new(display: &'a Display, keyboard: &'a mut Keyboard) -> Run<'a> {
        Run {
            events: Events::new(display),
            keyboard,
        }
    }

    fn display(&self) -> &'a Display {
        self.events.display()
    }

    fn chord(&mut self, chord: &Chord) -> Result<(), InputError> {
        let key = self.position(chord.key)?;
        let mut held = Vec::new();
        for &modifier in &chord.modifiers {
            held.push(self.modifier_key(modifier)?);
        }
        if key.shift && !chord.modifiers.contains(&Modifier::Shift) {
            held.push(self.modifier_key(Modifier::Shift)?);
        }
        self.press(&held, key.keycode)
    }

    /// Taps the key for `keysym`, holding Shift when its level needs it.
    fn tap(&mut self, keysym: Keysym) -> Result<(), InputError> {
        let key = self.position(keysym)?;
        let held = if key.shift {
            vec![self.modifier_key(Modifier::Shift)?]
        } else {
            Vec::new()
        };
        self.press(&held, key.keycode)
    }

    fn press(&mut self, held: &[Keycode], keycode: Keycode) -> Result<(), InputError> {
        for &m in held {
            self.events.key(m, true)?;
        }
        self.events.key(keycode, true)?;
        self.events.key(keycode, false)?;
        for &m in held.iter().rev() {
            self.events.key(m, false)?;
        }
        if let Some(b) = self
            .keyboard
            .borrowed
            .iter_mut()
            .find(|b| b.keycode == keycode)
        {
            b.last_used = Instant::now();
        }
        Ok(())
    }

    fn modifier_key(&self, modifier: Modifier) -> Result<Keycode, InputError> {
        modifier
            .keysyms()
            .iter()
            .find_map(|&k| self.keyboard.keymap.find(k))
            .map(|p| p.keycode)
            .ok_or(InputError::NoModifierKey {
                display: self.display().number,
                modifier: modifier.name(),
            })
    }

    /// Where `keysym` is, binding a keycode to it when no key has it: a
    /// spare one (highest first, far from the keys keyboards have), else
    /// the bound one unused longest, once clients have caught up with it.
    fn position(&mut self, keysym: Keysym) -> Result<KeyPosition, InputError> {
        if let Some(position) = self.keyboard.keymap.find(keysym) {
            return Ok(position);
        }
        let display = self.display();
        let keycode = match self.keyboard.keymap.spare_keycodes().into_iter().max() {
            Some(keycode) => keycode,
            None => {
                let oldest = self
                    .keyboard
                    .borrowed
                    .iter()
                    .min_by_key(|b| b.last_used)
                    .copied()
                    .ok_or(InputError::NoSpareKeycode {
                        display: display.number,
                        keysym,
                    })?;
                // The server must have delivered its keys before the
                // clients' allowance can run out.
                self.events.confirm()?;
                sleep_until(oldest.last_used + CLIENT_CATCH_UP);
                self.keyboard
                    .borrowed
                    .retain(|b| b.keycode != oldest.keycode);
                oldest.keycode
            }
        };
        // Both levels, so Shift (or Caps Lock) cannot change what it types;
        // a lone letter would give its lowercase form without Shift.
        change_mapping(
            display,
            &mut self.keyboard.keymap,
            keycode,
            &[keysym, keysym],
        )?;
        self.keyboard.borrowed.push(Borrowed {
            keycode,
            keysym,
            last_used: Instant::now(),
        });
        Ok(KeyPosition {
            keycode,
            shift: false,
        })
    }
}

/// Sets `keycode`'s keysyms and waits until the server has them, so key
/// events sent after are translated with the new mapping. Requests are
/// handled in order, so key events sent before keep the old one.
fn change_mapping(
    display: &Display,
    keymap: &mut Keymap,
    keycode: Keycode,
    syms: &[Keysym],
) -> Result<(), InputError> {
    let per_keycode = keymap.per_keycode();
    let mut row = vec![NO_SYMBOL; per_keycode];
    for (slot, &k) in row.iter_mut().zip(syms) {
        *slot = k;
    }
    display
        .conn
        .change_keyboard_mapping(1, keycode, per_keycode as u8, &row)
        .map_err(InputError::send(display.number))?
        .check()
        .map_err(InputError::request(display.number))?;
    keymap.set(keycode, &row);
    Ok(())
}

fn sleep_until(when: Instant) {
    if let Some(left) = when.checked_duration_since(Instant::now()) {
        std::thread::sleep(left);
    }
}
