//! Mouse and keyboard input through XTEST.
//!
//! # Layout
//! - `pointer`: click, move, down, up, scroll.
//! - [`chord`]: parsing `ctrl+shift+t`; [`keysyms`]: key names and the
//!   keysym of a character; [`typing`]: text to keysyms.
//! - [`keymap`]: a copy of the server's keymap; `keyboard`: pressing
//!   keysyms, binding spare keycodes for those no key has and giving them
//!   back once idle (why not at once: see its docs).
//!   `rebinding`: how long a text would wait to rebind keycodes, checked
//!   before typing it.
//! - `events`: XTEST fake events, confirmed with a round trip.
//!
//! Every action returns once the server has delivered its events.

pub mod chord;
mod events;
mod keyboard;
pub mod keymap;
pub mod keysyms;
mod pointer;
mod rebinding;
pub mod typing;

pub use keyboard::{CLIENT_CATCH_UP, RELEASE_AFTER};
pub use rebinding::REBINDING_WAIT_MAX;

use crate::display::Display;
use chord::ChordError;
use computer_protocol::{Action, ActionKind};
use keyboard::Keyboard;
use keymap::Keymap;
use x11rb::connection::RequestConnection;
use x11rb::errors::{ConnectionError, ReplyError};
use x11rb::protocol::xtest;

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("display :{display} has no XTEST extension, so no input can be sent: start Xvnc without `-extension XTEST`")]
    NoXtest { display: u32 },
    #[error("point ({x}, {y}) is off the screen: display :{display} is {width}x{height}, so `x` runs 0 to {max_x} and `y` 0 to {max_y}")]
    OffScreen {
        display: u32,
        x: i32,
        y: i32,
        width: u16,
        height: u16,
        max_x: i32,
        max_y: i32,
    },
    #[error("`x` and `y` go together: give both to move first, or neither")]
    HalfPoint,
    #[error(transparent)]
    Chord(#[from] ChordError),
    #[error("`text` has the control character U+{codepoint:04X} at character {index}: type printable text, `\\n` and `\\t` only, and press other keys with a `key` action")]
    ControlCharacter { codepoint: u32, index: usize },
    #[error("display :{display} has no `{modifier}` key in its keymap: restore a standard layout (`setxkbmap us`)")]
    NoModifierKey {
        display: u32,
        modifier: &'static str,
    },
    #[error("display :{display} has no free keycode to bind keysym 0x{keysym:x} to: every keycode has a keysym; restore a standard layout (`setxkbmap us`)")]
    NoSpareKeycode { display: u32, keysym: u32 },
    #[error("`text` would take at least {wait_s} s to type, over the {} s an action may take: it has {distinct} different characters that no key has, and they are typed through {keycodes} spare keycodes, each rebound only {} ms after its last use so programs keep up. Type it in parts across several calls, or paste it: write it to a file with `write_file`, run `computer-use-launch clipboard FILE` with `shell`, then press `ctrl+v`", REBINDING_WAIT_MAX.as_secs(), CLIENT_CATCH_UP.as_millis())]
    TypingTooSlow {
        wait_s: u64,
        distinct: usize,
        keycodes: usize,
    },
    #[error("`{kind}` is not an input action: the caller runs it")]
    NotInput { kind: ActionKind },
    #[error("input on display :{display} failed: the X request was refused or the connection broke ({source}); if Xvnc is gone, end the session and start a new one")]
    Request {
        display: u32,
        #[source]
        source: ReplyError,
    },
}

impl InputError {
    /// Wraps an X error with the display it happened on.
    pub(crate) fn request(display: u32) -> impl Fn(ReplyError) -> InputError {
        move |source| InputError::Request { display, source }
    }

    /// Same, for errors that happen while sending.
    pub(crate) fn send(display: u32) -> impl Fn(ConnectionError) -> InputError {
        move |source| InputError::Request {
            display,
            source: source.into(),
        }
    }
}

/// Keyboard state of one display: the keymap and the spare keycodes bound
/// for typing characters the keymap lacks.
pub struct Input {
    keyboard: Keyboard,
}

impl Input {
    pub fn new(display: &Display) -> Result<Input, InputError> {
        let present = display
            .conn
            .extension_information(xtest::X11_EXTENSION_NAME)
            .map_err(InputError::send(display.number))?;
        if present.is_none() {
            return Err(InputError::NoXtest {
                display: display.number,
            });
        }
        Ok(Input {
            keyboard: Keyboard::new(display)?,
        })
    }

    /// Performs click, move, down, up, type, key and scroll. `wait` and
    /// `focus` are run by the caller.
    pub fn perform(&mut self, display: &Display, action: &Action) -> Result<(), InputError> {
        self.keyboard.catch_up(display)?;
        match action {
            Action::Click {
                x: Some(x),
                y: Some(y),
                button,
                ..
            } => pointer::click(display, *x, *y, *button),
            Action::Move {
                x: Some(x),
                y: Some(y),
                ..
            } => pointer::move_to(display, *x, *y),
            Action::Down { button, x, y, .. } => pointer::button(display, *button, true, *x, *y),
            Action::Up { button, x, y, .. } => pointer::button(display, *button, false, *x, *y),
            Action::Scroll {
                direction,
                steps,
                x,
                y,
                ..
            } => pointer::scroll(display, *direction, *steps, *x, *y),
            Action::Type { text, .. } => {
                let keysyms = typing::keysyms_for_text(text)?;
                self.keyboard.check_rebinding_wait(&keysyms)?;
                self.keyboard.type_keysyms(display, &keysyms)
            }
            Action::Key { key } => {
                let chord = chord::parse(key)?;
                self.keyboard.press_chord(display, &chord)
            }
            // A click or move without a point is a ref the caller did not
            // resolve.
            Action::Wait { .. }
            | Action::Focus { .. }
            | Action::Click { .. }
            | Action::Move { .. } => Err(InputError::NotInput {
                kind: action.kind(),
            }),
        }
    }

    /// The keymap as this `Input` last read or changed it.
    pub fn keymap(&self) -> &Keymap {
        self.keyboard.keymap()
    }

    /// How many spare keycodes are bound to characters typed lately. They
    /// are given back [`RELEASE_AFTER`] after their last use, at the start
    /// of the next action.
    pub fn borrowed_keycodes(&self) -> usize {
        self.keyboard.borrowed()
    }

    /// Gives back every keycode bound for typing now (after waiting until
    /// each has gone [`CLIENT_CATCH_UP`] unused), so the keymap is the one
    /// found at the start. For when clients are known to have handled the
    /// typed keys, e.g. before handing the screen to someone else.
    pub fn restore_keymap(&mut self, display: &Display) -> Result<(), InputError> {
        self.keyboard.restore(display)
    }
}
