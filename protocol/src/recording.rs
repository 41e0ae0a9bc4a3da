//! Recordings: what an agent did on a session, step by step, kept by
//! computerd inside the computer and packaged as a walkthrough a person
//! opens from disk.
//!
//! The host sends one [`StepRecord`] per tool call (the call as the agent
//! made it, secrets already hidden, and the result as the agent got it);
//! computerd adds the frames it captured for that call, the page shown, and
//! writes the step to the recording's journal at once. Closing a recording
//! builds its package: `index.html`, `walkthrough.json` ([`Walkthrough`]),
//! `frames/` and `manifest.json` ([`Manifest`]).

use crate::error::InvalidInput;
use crate::ids::SessionId;
use serde::{Deserialize, Serialize};

/// `task` of `start_recording`: names the package.
pub const TASK_MAX_CHARS: usize = 80;
/// `text` of `recording_note`.
pub const NOTE_MAX_CHARS: usize = 2000;
/// How a secret typed text appears wherever the call is shown.
pub const SECRET_SHOWN_AS: &str = "•••";
/// Default of `COMPUTER_USE_RECORDING_MAX_MB`.
pub const DEFAULT_MAX_MB: u64 = 512;
/// The text of one step's result kept in the recording; a shell result is
/// already bounded (head and tail of each stream), this bounds the rest.
pub const STEP_TEXT_MAX_BYTES: usize = 64 * 1024;
/// The version of `walkthrough.json`'s layout.
pub const WALKTHROUGH_FORMAT: &str = "computer-use-walkthrough/1";
/// Where recordings live, under the computer's home.
pub const RECORDINGS_DIR: &str = ".local/share/computer-use/recordings";

/// A recording, named by computerd: the UTC time it started and a short
/// random tail, so a listing sorts by time (`20261201T235959Z-3f9a`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RecordingId(pub String);

impl std::fmt::Display for RecordingId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl RecordingId {
    /// Whether `text` can be a recording id: letters, digits and `-`, at
    /// most 64; a typed id never reaches a path unchecked.
    pub fn parse(text: &str) -> Result<RecordingId, InvalidInput> {
        let ok = !text.is_empty()
            && text.len() <= 64
            && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if ok {
            Ok(RecordingId(text.to_string()))
        } else {
            Err(InvalidInput(format!(
                "`{text}` is not a recording id: ids are letters, digits and `-` (see `computer-use-mcp review --list`)"
            )))
        }
    }
}

/// Checks `task`; the message names the field and the limit.
pub fn check_task(task: &str) -> Result<(), InvalidInput> {
    let chars = task.chars().count();
    if task.trim().is_empty() {
        return Err(InvalidInput(format!(
            "`task` is empty: name the task in 1 to {TASK_MAX_CHARS} characters (it names the package)"
        )));
    }
    if chars > TASK_MAX_CHARS {
        return Err(InvalidInput(format!(
            "`task` has {chars} characters: the limit is {TASK_MAX_CHARS}; shorten it"
        )));
    }
    Ok(())
}

/// Checks a note's `text`.
pub fn check_note(text: &str) -> Result<(), InvalidInput> {
    let chars = text.chars().count();
    if text.trim().is_empty() {
        return Err(InvalidInput(format!(
            "`text` is empty: write the note in 1 to {NOTE_MAX_CHARS} characters"
        )));
    }
    if chars > NOTE_MAX_CHARS {
        return Err(InvalidInput(format!(
            "`text` has {chars} characters: a note holds at most {NOTE_MAX_CHARS}; shorten it or split it into several notes"
        )));
    }
    Ok(())
}

/// `POST /v1/sessions/{id}/recording`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartRecordingRequest {
    pub task: String,
    /// Past this many bytes (frames and journal) the recording stops growing.
    pub max_bytes: u64,
    /// Which ended recordings stay when this one starts; none go without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<Retention>,
}

/// Which recordings a computer keeps: the newest `count` (a new one
/// included), none started more than `days` days ago. An open recording
/// always stays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Retention {
    pub count: u32,
    pub days: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordingStarted {
    pub recording_id: RecordingId,
    /// RFC 3339.
    pub started_at: String,
    /// Ended recordings deleted to keep to the retention.
    #[serde(default)]
    pub pruned: Vec<RecordingId>,
}

/// `DELETE /v1/recordings/{recording}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordingDeleted {
    pub recording_id: RecordingId,
    /// What its files took.
    pub bytes: u64,
}

/// One tool call, as the host saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepRecord {
    pub tool: String,
    /// The call's arguments, a secret typed text replaced by
    /// [`SECRET_SHOWN_AS`].
    pub arguments: serde_json::Value,
    /// RFC 3339.
    pub started_at: String,
    pub duration_ms: u64,
    pub is_error: bool,
    /// The result's text as the agent got it (the error's, when
    /// `is_error`), at most [`STEP_TEXT_MAX_BYTES`].
    pub text: String,
    /// The frame the result showed, when it showed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<u64>,
    /// Where the call's pointer actions landed, in screen pixels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<ScreenPoint>,
    /// The call typed a secret: the frame it showed is not kept (the
    /// screen may show what was typed), nor is it the next step's before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secret: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ScreenPoint {
    pub x: i32,
    pub y: i32,
}

/// What the recording holds so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordingTally {
    pub steps: u32,
    pub bytes: u64,
    /// The recording reached its size limit and stopped growing.
    pub full: bool,
}

/// `POST /v1/sessions/{id}/recording/stop`, and a package built on demand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordingPackage {
    pub recording_id: RecordingId,
    pub task: String,
    /// RFC 3339 of the start; with `task`, names the host folder.
    pub started_at: String,
    /// The package's folder in the computer.
    pub dir: String,
    pub steps: u32,
    /// Bytes of the package.
    pub bytes: u64,
    pub full: bool,
}

/// One recording kept in the computer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordingSummary {
    pub recording_id: RecordingId,
    pub task: String,
    pub session_id: SessionId,
    pub session_title: String,
    /// RFC 3339.
    pub started_at: String,
    /// RFC 3339; none while it records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    pub recording: bool,
    pub steps: u32,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordingsResponse {
    pub recordings: Vec<RecordingSummary>,
}

/// `walkthrough.json`: the recording as data. Its JSON Schema is
/// `protocol/schema/walkthrough.schema.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Walkthrough {
    /// [`WALKTHROUGH_FORMAT`].
    pub format: String,
    pub recording_id: RecordingId,
    pub task: String,
    pub session_id: SessionId,
    pub session_title: String,
    pub started_at: String,
    pub ended_at: String,
    /// The recording reached `max_bytes` and stopped growing: steps after
    /// that point are missing.
    pub full: bool,
    pub max_bytes: u64,
    pub steps: Vec<Step>,
    /// Every frame file the steps name, by its path in the package.
    pub frames: std::collections::BTreeMap<String, FrameFile>,
}

/// One step of a walkthrough.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// From 1.
    pub index: u32,
    pub tool: String,
    /// `screen` (acted on or looked at the screen), `note`, `shell`,
    /// `files` or `session`: how the page shows it.
    pub kind: String,
    /// One line for the timeline.
    pub summary: String,
    pub arguments: serde_json::Value,
    pub started_at: String,
    pub duration_ms: u64,
    pub is_error: bool,
    pub text: String,
    /// `frames/<sha256>.<ext>`: what the screen showed before the call (the
    /// previous frame the agent saw), and what the call showed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// Pointer actions: screen pixels, and where they fall on the before
    /// frame as fractions of its width and height (none when outside it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<StepPoint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<PageShown>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_window: Option<String>,
    /// The connections of the computer (any program's) that started during
    /// the step, one line each, as the network guard logged them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepPoint {
    pub x: i32,
    pub y: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top: Option<f64>,
}

/// The screen's Chromium page when the step's frame showed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageShown {
    pub url: String,
    pub title: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameFile {
    pub width: u32,
    pub height: u32,
    pub bytes: u64,
}

/// The walkthrough page; [`walkthrough_page`] puts the data in its one
/// place. The host renders it again from `walkthrough.json` whenever it
/// delivers or reviews a package, so a page edited in the computer is never
/// the one a person opens.
const PAGE: &str = include_str!("walkthrough.html");
const PAGE_PLACEHOLDER: &str = "__WALKTHROUGH_JSON__";

/// The page with `json` (a [`Walkthrough`]) inlined. Inside a `<script>`
/// element only `</script` could end it early; `<`, `>` and `&` written as
/// JSON escapes rule that out whatever a page title or shell output holds.
pub fn walkthrough_page(json: &str) -> String {
    let escaped = json
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026");
    PAGE.replacen(PAGE_PLACEHOLDER, &escaped, 1)
}

/// `manifest.json`: every other file of the package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub files: Vec<ManifestEntry>,
}

/// The version of `manifest.json`'s layout.
pub const MANIFEST_FORMAT: &str = "computer-use-manifest/1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestEntry {
    /// Relative, `/`-separated.
    pub path: String,
    pub size: u64,
    /// Lowercase hex.
    pub sha256: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inlined_data_cannot_close_its_script() {
        let json = r#"{"text":"</script><script>alert(1)</script> & more"}"#;
        let html = walkthrough_page(json);
        assert!(!html.contains("</script><script>alert"));
        assert!(html.contains(r"\u003c/script\u003e"));
        assert!(!html.contains(PAGE_PLACEHOLDER));
    }

    #[test]
    fn the_page_has_one_place_for_the_data() {
        assert_eq!(PAGE.matches(PAGE_PLACEHOLDER).count(), 1);
        assert!(PAGE.contains(r#"<script id="walkthrough-data" type="application/json">"#));
    }

    #[test]
    fn ids_are_plain_names() {
        assert!(RecordingId::parse("20261201T235959Z-3f9a").is_ok());
        for bad in ["", "../x", "a/b", "a b", &"x".repeat(65)] {
            assert!(RecordingId::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn task_and_note_limits_name_the_field() {
        assert!(check_task("fix the login").is_ok());
        assert!(check_task(" ").unwrap_err().0.contains("`task` is empty"));
        let long = check_task(&"é".repeat(81)).unwrap_err().to_string();
        assert!(
            long.contains("81 characters") && long.contains("80"),
            "{long}"
        );
        assert!(check_note(&"n".repeat(2000)).is_ok());
        let long = check_note(&"n".repeat(2001)).unwrap_err().to_string();
        assert!(long.contains("`text`") && long.contains("2000"), "{long}");
    }
}
