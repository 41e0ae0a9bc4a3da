//! Tool arguments. Doc comments become the JSON Schema descriptions a model
//! reads, so they state units, limits and defaults. Unknown fields are
//! refused so that a misspelt option is an error, not silently ignored.

use super::action_shape::{bad_field, ActionShape};
use super::error::ToolError;
use computer_protocol::limits::ACTIONS_MAX;
use computer_protocol::{Action, ImageFormat, Region, Settle, TimeoutArg, TransferDirection, View};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartComputerArgs {
    /// What this session is for, shown to people watching the screens; 1 to 80 characters.
    pub title: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionArgs {
    /// The id start_computer returned.
    #[serde(deserialize_with = "session_id")]
    pub session_id: String,
}

fn default_true() -> bool {
    true
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActArgs {
    /// The id start_computer returned.
    #[serde(deserialize_with = "session_id")]
    pub session_id: String,
    /// 1 to 24 actions, run in order; the first failure stops the batch.
    /// Coordinates are pixels of this session's screen, origin top-left.
    /// A double click is two click actions.
    #[schemars(with = "Vec<ActionShape>", length(min = 1, max = ACTIONS_MAX))]
    pub actions: Vec<Action>,
    /// Take a screenshot after the last action (default true).
    #[serde(default = "default_true")]
    pub observe: bool,
    /// Milliseconds to wait after the last action before the screenshot, 0 to 5000 (default 300); with settle `quiet`, the longest wait (default 3000).
    #[serde(default)]
    pub settle_ms: Option<u64>,
    /// `fixed` (default): wait settle_ms. `quiet`: take the screenshot as soon as the screen has not changed for quiet_ms after the last action (or when settle_ms runs out); the result says `settled` and `settle_waited_ms`.
    #[serde(default)]
    pub settle: Settle,
    /// Quiet mode only: how long the screen must be still, 50 to 2000 ms (default 250).
    #[serde(default)]
    pub quiet_ms: Option<u64>,
    /// A frame_id from one of this session's last 16 screenshots: every x/y of the batch is then in that frame's pixels (useful when the frame was scaled or zoomed). Without it, x/y are screen pixels.
    #[serde(default)]
    pub frame_id: Option<u64>,
    /// Longest side of the returned screenshot in pixels, 256 to 7680; a larger screen is scaled down keeping its aspect. Default COMPUTER_USE_FRAME_MAX_SIDE (1568), and then the frame also keeps to COMPUTER_USE_FRAME_MAX_PIXELS (1150000).
    #[serde(default)]
    pub max_side: Option<u32>,
    /// `png` (default) or `jpeg`.
    #[serde(default)]
    pub format: Option<ImageFormat>,
    /// JPEG quality 1 to 100 (default 80); jpeg only.
    #[serde(default)]
    pub quality: Option<u8>,
}

// `max_side`, `format` and `quality` stand in each tool that returns a
// screenshot (and `settle`, `settle_ms`, `quiet_ms` in each acting tool): serde's `flatten` cannot share them, as it does not work with
// `deny_unknown_fields`, which names a mistyped field to the agent.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObserveArgs {
    /// The id start_computer returned.
    #[serde(deserialize_with = "session_id")]
    pub session_id: String,
    /// Only this part of the screen, in screen pixels (zoom): shown at up to full resolution within max_side.
    #[serde(default)]
    pub region: Option<Region>,
    /// `image` (default): a screenshot. `text`: the screen's windows and the accessibility tree of one window, each node with a ref (e1, e2, ...) that computer_act takes instead of x/y. `both`: the two together.
    #[serde(default)]
    pub view: View,
    /// Text view: the window whose tree is read, by class or title (case-insensitive substring); default the focused window.
    #[serde(default)]
    pub window: Option<String>,
    /// Text view: at most this many nodes, 1 to 5000 (default 400); a longer tree is cut with a cursor.
    #[serde(default)]
    pub max_nodes: Option<usize>,
    /// Text view: the cursor a cut view returned, for its next nodes.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Longest side of the returned screenshot in pixels, 256 to 7680; a larger screen is scaled down keeping its aspect. Default COMPUTER_USE_FRAME_MAX_SIDE (1568), and then the frame also keeps to COMPUTER_USE_FRAME_MAX_PIXELS (1150000).
    #[serde(default)]
    pub max_side: Option<u32>,
    /// `png` (default) or `jpeg`.
    #[serde(default)]
    pub format: Option<ImageFormat>,
    /// JPEG quality 1 to 100 (default 80); jpeg only.
    #[serde(default)]
    pub quality: Option<u8>,
    /// true: always return the image, even when the screen is unchanged since your previous screenshot (default false).
    #[serde(default)]
    pub force: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellArgs {
    /// The id start_computer returned.
    #[serde(deserialize_with = "session_id")]
    pub session_id: String,
    /// A bash command line, run with `bash -lc` in the session's working folder, with no input.
    pub command: String,
    /// Time limit: seconds as a number, or a string such as `90`, `90s`, `2m`, `1h`.
    /// Default COMPUTER_USE_SHELL_TIMEOUT (120 s); at most COMPUTER_USE_SHELL_TIMEOUT_MAX (600 s).
    /// On timeout the command and everything it started are killed; output so far is kept.
    #[serde(default)]
    pub timeout: Option<TimeoutArg>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenPathArgs {
    /// The id start_computer returned.
    #[serde(deserialize_with = "session_id")]
    pub session_id: String,
    /// An http(s) URL, or a path on the computer (absolute, `~/...`, or relative to the working folder). Pages and HTML, PDF, image, text, JSON and XML files open in the screen's browser; other files in their default app.
    pub target: String,
    /// `fixed` (default): wait settle_ms once it opened (default 0). `quiet`: take the screenshot as soon as the screen has not changed for quiet_ms after it opened (or when settle_ms runs out), for pages and apps that keep drawing after they load; the result says `settled` and `settle_waited_ms`.
    #[serde(default)]
    pub settle: Settle,
    /// Milliseconds to wait after it opened before the screenshot, 0 to 5000 (default 0); with settle `quiet`, the longest wait (default 3000).
    #[serde(default)]
    pub settle_ms: Option<u64>,
    /// Quiet mode only: how long the screen must be still, 50 to 2000 ms (default 250).
    #[serde(default)]
    pub quiet_ms: Option<u64>,
    /// Longest side of the returned screenshot in pixels, 256 to 7680; a larger screen is scaled down keeping its aspect. Default COMPUTER_USE_FRAME_MAX_SIDE (1568), and then the frame also keeps to COMPUTER_USE_FRAME_MAX_PIXELS (1150000).
    #[serde(default)]
    pub max_side: Option<u32>,
    /// `png` (default) or `jpeg`.
    #[serde(default)]
    pub format: Option<ImageFormat>,
    /// JPEG quality 1 to 100 (default 80); jpeg only.
    #[serde(default)]
    pub quality: Option<u8>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchAppArgs {
    /// The id start_computer returned.
    #[serde(deserialize_with = "session_id")]
    pub session_id: String,
    /// `browser`, `terminal`, an installed application (a .desktop entry id such as `libreoffice-writer`, or its name), or a program on PATH.
    pub app: String,
    /// Optional URL or file to open in the app; the browser opens it in a new tab.
    #[serde(default)]
    pub uri: Option<String>,
    /// `fixed` (default): wait settle_ms once it opened (default 0). `quiet`: take the screenshot as soon as the screen has not changed for quiet_ms after it opened (or when settle_ms runs out), for pages and apps that keep drawing after they load; the result says `settled` and `settle_waited_ms`.
    #[serde(default)]
    pub settle: Settle,
    /// Milliseconds to wait after it opened before the screenshot, 0 to 5000 (default 0); with settle `quiet`, the longest wait (default 3000).
    #[serde(default)]
    pub settle_ms: Option<u64>,
    /// Quiet mode only: how long the screen must be still, 50 to 2000 ms (default 250).
    #[serde(default)]
    pub quiet_ms: Option<u64>,
    /// Longest side of the returned screenshot in pixels, 256 to 7680; a larger screen is scaled down keeping its aspect. Default COMPUTER_USE_FRAME_MAX_SIDE (1568), and then the frame also keeps to COMPUTER_USE_FRAME_MAX_PIXELS (1150000).
    #[serde(default)]
    pub max_side: Option<u32>,
    /// `png` (default) or `jpeg`.
    #[serde(default)]
    pub format: Option<ImageFormat>,
    /// JPEG quality 1 to 100 (default 80); jpeg only.
    #[serde(default)]
    pub quality: Option<u8>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetCwdArgs {
    /// The id start_computer returned.
    #[serde(deserialize_with = "session_id")]
    pub session_id: String,
    /// A folder: absolute, `~` for home, or relative to the current working folder.
    pub path: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListFilesArgs {
    /// The id start_computer returned.
    #[serde(deserialize_with = "session_id")]
    pub session_id: String,
    /// The folder to list (default: the working folder); `~` is home.
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// The id start_computer returned.
    #[serde(deserialize_with = "session_id")]
    pub session_id: String,
    /// The file: absolute, `~/...`, or relative to the working folder.
    pub path: String,
    /// First line to read, counting from 1.
    #[serde(default)]
    pub offset: Option<u64>,
    /// Number of lines to read.
    #[serde(default)]
    pub limit: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// The id start_computer returned.
    #[serde(deserialize_with = "session_id")]
    pub session_id: String,
    /// The file to replace or create; missing folders are created.
    pub path: String,
    /// The whole new content, UTF-8 text up to 10 MB.
    pub content: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransferArgs {
    /// The id start_computer returned.
    #[serde(deserialize_with = "session_id")]
    pub session_id: String,
    /// `to_computer` copies host_path to computer_path; `from_computer` copies computer_path to host_path.
    pub direction: TransferDirection,
    /// A file or folder on the machine running this MCP server: absolute, `~/...`, or relative to the server's working folder.
    pub host_path: String,
    /// A file or folder on the computer: absolute, `~/...`, or relative to the session's working folder.
    pub computer_path: String,
    /// Replace existing files and merge into existing folders (default false: refuse when the final path exists).
    /// Files and folders never take each other's place.
    #[serde(default)]
    pub overwrite: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartRecordingArgs {
    /// The id start_computer returned.
    #[serde(deserialize_with = "session_id")]
    pub session_id: String,
    /// What the task is, 1 to 80 characters; it names the package folder.
    pub task: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordingNoteArgs {
    /// The id start_computer returned.
    #[serde(deserialize_with = "session_id")]
    pub session_id: String,
    /// The note, 1 to 2000 characters: what you checked, found or concluded.
    pub text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StopRecordingArgs {
    /// The id start_computer returned.
    #[serde(deserialize_with = "session_id")]
    pub session_id: String,
    /// Optional folder on the machine running this MCP server for the package: an existing folder gets it inside as <task>-<UTC time>/, a new path names it. Default computer-use-evidence/<task>-<UTC time>/ under the server's working folder (over HTTP: relative to COMPUTER_USE_TRANSFER_ROOT).
    #[serde(default)]
    pub host_path: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HandoffArgs {
    /// The id start_computer returned.
    #[serde(deserialize_with = "session_id")]
    pub session_id: String,
    /// What the person should do, 1 to 500 characters (shown to them as plain text).
    pub reason: String,
    /// Optional, up to 500 characters: what the screen should show when they are done.
    #[serde(default)]
    pub expected: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitHandoffArgs {
    /// The id start_computer returned.
    #[serde(deserialize_with = "session_id")]
    pub session_id: String,
    /// Seconds to wait at most, 1 to 45 (default 30); answers at once when the hold ends.
    #[serde(default)]
    pub timeout: Option<u64>,
    /// Longest side of the screenshot taken once the screen is back, 256 to 7680; defaults as in computer_observe.
    #[serde(default)]
    pub max_side: Option<u32>,
    /// `png` (default) or `jpeg`.
    #[serde(default)]
    pub format: Option<ImageFormat>,
    /// JPEG quality 1 to 100 (default 80); jpeg only.
    #[serde(default)]
    pub quality: Option<u8>,
}

/// A session id as computerd makes them: a UUID in its hyphenated form.
/// Checked before any request, because the id becomes part of a URL path
/// where `../` or `?` would reach other routes.
fn session_id<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let text = String::deserialize(deserializer)?;
    if text.len() == 36 && uuid::Uuid::try_parse(&text).is_ok() {
        return Ok(text);
    }
    let mut shown: String = text.chars().take(40).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    Err(serde::de::Error::custom(format!(
        "{shown:?} is not a session id: use the session_id that start_computer returned (a UUID such as 0b8a3c1e-5f2d-4e7a-9c61-2d4f8e9a7b30)"
    )))
}

/// Reads a tool's arguments, naming the field at fault on failure
/// (`actions[2].x: invalid type: string "a", expected i32`).
pub fn parse<T: DeserializeOwned>(
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<T, String> {
    read(serde_json::Value::Object(arguments.unwrap_or_default()))
}

fn read<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, String> {
    serde_path_to_error::deserialize(&value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        if path == "." || path.is_empty() {
            return format!("invalid arguments: {inner}");
        }
        // serde stops at the action for a fault inside it (actions are a
        // tagged enum); read that action field by field to name the field.
        if let Some(action) = action_at(&value, &path) {
            if let Some((field, message)) = bad_field(action) {
                // For a misspelt field the action's own message is better:
                // it lists only the fields of that action's type.
                let message = if inner.starts_with("unknown field") {
                    &inner
                } else {
                    &message
                };
                return format!("`{path}.{field}`: {message}");
            }
        }
        format!("`{path}`: {inner}")
    })
}

/// The action a path such as `actions[2]` points at, if it is one.
fn action_at<'a>(arguments: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    let index: usize = path
        .strip_prefix("actions[")?
        .strip_suffix(']')?
        .parse()
        .ok()?;
    arguments.get("actions")?.get(index)
}

/// A tool's arguments as rmcp's `Parameters<Args<T>>` hands them over:
/// `T`, or the error naming the field at fault.
///
/// rmcp's own `Parameters<T>` would report a bad field with serde_json's
/// message, which says neither where nor which field. Reading never fails
/// here; the tool turns the error into [`ToolError::Arguments`] with `?`,
/// and the published schema is `T`'s.
pub struct Args<T>(Result<T, String>);

impl<T> Args<T> {
    pub fn read(self) -> Result<T, ToolError> {
        self.0.map_err(ToolError::Arguments)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Args<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        Ok(Args(read(value)))
    }
}

impl<T: JsonSchema> JsonSchema for Args<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: serde_json::Value) -> Option<serde_json::Map<String, serde_json::Value>> {
        v.as_object().cloned()
    }

    #[test]
    fn errors_name_the_field() {
        let e = parse::<ActArgs>(args(
            json!({"session_id": SID, "actions": [{"type": "click", "x": "a", "y": 1}]}),
        ))
        .unwrap_err();
        assert!(e.starts_with("`actions[0].x`: invalid type"), "{e}");
        let e = parse::<ActArgs>(args(
            json!({"session_id": SID, "actions": [{"type": "wait", "ms": 1}, {"type": "key", "keys": "a"}]}),
        ))
        .unwrap_err();
        assert_eq!(e, "`actions[1].keys`: unknown field `keys`, expected `key`");
        let e = parse::<StartComputerArgs>(args(json!({}))).unwrap_err();
        assert!(e.contains("title"), "{e}");
        let e = parse::<ShellArgs>(args(
            json!({"session_id": SID, "command": "x", "colour": 1}),
        ))
        .unwrap_err();
        assert!(e.contains("colour"), "{e}");
    }

    #[test]
    fn transfer_arguments_name_their_direction() {
        let a = parse::<TransferArgs>(args(json!({
            "session_id": SID, "direction": "from_computer",
            "host_path": "~/Downloads", "computer_path": "~/report.pdf"
        })))
        .unwrap();
        assert_eq!(a.direction, TransferDirection::FromComputer);
        assert!(!a.overwrite);
        let e = parse::<TransferArgs>(args(json!({
            "session_id": SID, "direction": "sideways", "host_path": "a", "computer_path": "b"
        })))
        .unwrap_err();
        assert!(
            e.contains("`direction`") && e.contains("to_computer"),
            "{e}"
        );
    }

    const SID: &str = "0b8a3c1e-5f2d-4e7a-9c61-2d4f8e9a7b30";

    #[test]
    fn session_ids_must_be_uuids() {
        for bad in [
            "../owners/host-1-deadbeef",
            "../owners/host-1-deadbeef/heartbeat?",
            "nope",
            "{0b8a3c1e-5f2d-4e7a-9c61-2d4f8e9a7b30}",
            "0b8a3c1e5f2d4e7a9c612d4f8e9a7b30",
            "",
        ] {
            let e = parse::<SessionArgs>(args(json!({ "session_id": bad }))).unwrap_err();
            assert!(
                e.starts_with("`session_id`:") && e.contains("start_computer"),
                "{bad}: {e}"
            );
        }
        let e = parse::<TransferArgs>(args(json!({
            "session_id": "a/../b", "direction": "from_computer",
            "host_path": "x", "computer_path": "y"
        })))
        .unwrap_err();
        assert!(e.starts_with("`session_id`:"), "{e}");
        let a = parse::<SessionArgs>(args(json!({ "session_id": SID }))).unwrap();
        assert_eq!(a.session_id, SID);
    }

    #[test]
    fn wrapped_arguments_keep_the_field_and_the_schema() {
        let bad: Args<ActArgs> = serde_json::from_value(
            json!({"session_id": SID, "actions": [{"type": "click", "x": "a", "y": 1}]}),
        )
        .unwrap();
        let e = bad.read().unwrap_err();
        assert!(
            matches!(&e, ToolError::Arguments(m) if m.contains("actions[0]")),
            "{e}"
        );
        let good: Args<SessionArgs> = serde_json::from_value(json!({"session_id": SID})).unwrap();
        assert_eq!(good.read().unwrap().session_id, SID);
        assert_eq!(
            rmcp::handler::server::common::schema_for_type::<Args<ShellArgs>>(),
            rmcp::handler::server::common::schema_for_type::<ShellArgs>()
        );
    }

    #[test]
    fn defaults_apply() {
        let a = parse::<ActArgs>(args(json!({"session_id": SID, "actions": []}))).unwrap();
        assert!(a.observe);
        assert_eq!(a.settle_ms, None);
    }
}
