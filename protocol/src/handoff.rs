//! Handoffs: an agent asks a person to take its screen (a sign-in, a
//! CAPTCHA, a payment), waits, and gets it back when the person hands it
//! back in the viewer. While a screen is held the agent's input,
//! screenshots and opening on it are refused.

use crate::error::InvalidInput;
use crate::observe::Observation;
use serde::{Deserialize, Serialize};

/// `reason` of `request_handoff`.
pub const REASON_MAX_CHARS: usize = 500;
/// `expected` of `request_handoff`.
pub const EXPECTED_MAX_CHARS: usize = 500;
/// The person's note when handing back.
pub const NOTE_MAX_CHARS: usize = 2000;
/// `timeout` of `wait_handoff`, seconds.
pub const WAIT_MAX_SECS: u64 = 45;
pub const WAIT_DEFAULT_SECS: u64 = 30;
/// Default of `COMPUTER_USE_HANDOFF_TIMEOUT`.
pub const HOLD_DEFAULT_SECS: u64 = 15 * 60;
/// The hand-back code's length: 32 characters of `[A-Za-z0-9]`, about 190
/// bits, so guessing it is not a way in.
pub const HANDBACK_CODE_CHARS: usize = 32;

/// What computerd keeps of a hand-back code: its SHA-256, in hex. The host
/// makes the code and keeps it; the computer holds only this digest, so
/// nothing inside it (root included) can present the code before the
/// person does.
pub fn handback_digest(code: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(code.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Checks `reason` and `expected`; the message names the field and limit.
pub fn check_request(reason: &str, expected: Option<&str>) -> Result<(), InvalidInput> {
    let chars = reason.chars().count();
    if reason.trim().is_empty() {
        return Err(InvalidInput(format!(
            "`reason` is empty: tell the person what to do, in 1 to {REASON_MAX_CHARS} characters"
        )));
    }
    if chars > REASON_MAX_CHARS {
        return Err(InvalidInput(format!(
            "`reason` has {chars} characters: the limit is {REASON_MAX_CHARS}; shorten it"
        )));
    }
    if let Some(expected) = expected {
        let chars = expected.chars().count();
        if chars > EXPECTED_MAX_CHARS {
            return Err(InvalidInput(format!(
                "`expected` has {chars} characters: the limit is {EXPECTED_MAX_CHARS}; shorten it"
            )));
        }
    }
    Ok(())
}

/// `POST /v1/sessions/{id}/handoff`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandoffRequest {
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// A hold nobody returns ends as `expired` after this long.
    pub expire_secs: u64,
    /// [`handback_digest`] of the code only the person's link carries.
    pub handback_digest: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandoffStarted {
    pub handoff_id: String,
    pub screen: crate::ScreenNumber,
    /// RFC 3339.
    pub started_at: String,
    /// The session's shell commands and transfers the hold stopped, each
    /// as the start of its command line.
    #[serde(default)]
    pub stopped: Vec<String>,
}

/// `POST /v1/sessions/{id}/handoff/wait`: answers when the hold ends, or
/// after `wait_ms` with `held`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandoffWaitRequest {
    pub wait_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum HandoffState {
    Held,
    Returned,
    Cancelled,
    Expired,
}

/// Where a hold stands, and when it ended what changed meanwhile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HandoffStatus {
    pub handoff_id: String,
    pub state: HandoffState,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// How long it was (or has been) held.
    pub held_ms: u64,
    /// The person took control (unlocked input) at some point.
    pub taken: bool,
    /// The person's note, when they handed back with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// What changed on the screen, once the hold ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<ScreenChanges>,
    /// The hand-back code the person's page presented, for the host to
    /// compare with its own; never shown to the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handback_code: Option<String>,
    /// A screenshot after the hold (filled in by the host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<Observation>,
}

/// The screen before the hold and after it, as facts (never keystrokes).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ScreenChanges {
    pub active_window_before: Option<String>,
    pub active_window_after: Option<String>,
    /// Titles of windows that opened during the hold.
    pub windows_opened: Vec<String>,
    /// Titles of windows that closed during the hold.
    pub windows_closed: Vec<String>,
    pub page_before: Option<PageFacts>,
    pub page_after: Option<PageFacts>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PageFacts {
    pub url: String,
    pub title: String,
}

/// What the viewer sends for a held screen: `take` unlocks input for the
/// person; `return` hands the screen back with an optional note and the
/// hand-back code of the person's link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum ViewerHandoffAction {
    Take,
    Return {
        #[serde(default)]
        note: Option<String>,
        #[serde(default)]
        handback: Option<String>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_bounded_and_named() {
        assert!(check_request("Sign in", None).is_ok());
        assert!(check_request("", None)
            .unwrap_err()
            .0
            .contains("`reason` is empty"));
        let long = check_request(&"r".repeat(501), None)
            .unwrap_err()
            .to_string();
        assert!(long.contains("501") && long.contains("500"), "{long}");
        let e = check_request("ok", Some(&"e".repeat(501)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`expected`"), "{e}");
    }

    #[test]
    fn viewer_actions_read_as_tagged_json() {
        let take: ViewerHandoffAction = serde_json::from_str(r#"{"action":"take"}"#).unwrap();
        assert_eq!(take, ViewerHandoffAction::Take);
        let back: ViewerHandoffAction =
            serde_json::from_str(r#"{"action":"return","note":"done","handback":"c"}"#).unwrap();
        assert_eq!(
            back,
            ViewerHandoffAction::Return {
                note: Some("done".into()),
                handback: Some("c".into())
            }
        );
        assert!(serde_json::from_str::<ViewerHandoffAction>(r#"{"action":"approve"}"#).is_err());
    }

    #[test]
    fn the_digest_is_sha256_in_hex() {
        assert_eq!(
            handback_digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
