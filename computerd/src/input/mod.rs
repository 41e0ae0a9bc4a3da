//! Mouse and keyboard input through XTEST (STUB: being written; the signatures
//! are the contract).

use crate::display::Display;
use computer_protocol::Action;

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("input on display :{display} failed: {reason}")]
    Failed { display: u32, reason: String },
}

/// Keyboard state of one display: the keymap and a spare keycode for typing
/// characters the keymap lacks.
pub struct Input {}

impl Input {
    pub fn new(_display: &Display) -> Result<Input, InputError> {
        Ok(Input {})
    }

    /// Performs click, move, down, up, type, key and scroll. `wait` and
    /// `focus` are run by the caller.
    pub fn perform(&mut self, display: &Display, _action: &Action) -> Result<(), InputError> {
        Err(InputError::Failed { display: display.number, reason: "not built yet".into() })
    }
}

/// Raises and focuses the first window whose class or title contains `target`
/// (case-insensitive). Returns false when no window matches.
pub fn focus_window(_display: &Display, _target: &str) -> Result<bool, InputError> {
    Ok(false)
}
