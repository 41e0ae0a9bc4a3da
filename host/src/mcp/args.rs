//! Tool arguments. Doc comments become the JSON Schema descriptions a model
//! reads, so they state units, limits and defaults. Unknown fields are
//! refused so that a misspelt option is an error, not silently ignored.

use super::action_shape::{bad_field, ActionShape};
use computer_protocol::limits::ACTIONS_MAX;
use computer_protocol::{
    Action, ImageFormat, Region, SessionId, Settle, TimeoutArg, TransferDirection, View,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;

/// The screenshot fields an agent may give a tool that returns a frame, as
/// it gave them.
#[derive(Debug, Clone, Copy)]
pub struct FrameRequest {
    pub max_side: Option<u32>,
    pub format: Option<ImageFormat>,
    pub quality: Option<u8>,
}

/// Declares a tool's arguments followed by the screenshot fields
/// (`max_side`, `format`, `quality`) of every tool that returns a frame, and
/// `frame()` to read them. A macro, because serde's `flatten` does not work
/// with `deny_unknown_fields`, which names a mistyped field to the agent.
/// (`settle`, `settle_ms` and `quiet_ms` are written out in each acting
/// tool: their defaults and descriptions differ.)
macro_rules! with_frame {
    ($(#[$meta:meta])* pub struct $name:ident { $($fields:tt)* }) => {
        with_frame! {
            max_side_doc = " Longest side in px (default 1568; about 1.15 megapixels at most).";
            $(#[$meta])* pub struct $name { $($fields)* }
        }
    };
    // `max_side_doc`: for a tool whose screenshot is not its main answer,
    // the doc of `max_side` says which screenshot it sizes.
    (max_side_doc = $doc:literal; $(#[$meta:meta])* pub struct $name:ident { $($fields:tt)* }) => {
        $(#[$meta])*
        pub struct $name {
            $($fields)*
            #[doc = $doc]
            #[serde(default)]
            #[schemars(range(min = 256, max = 7680))]
            pub max_side: Option<u32>,
            /// Default png.
            #[serde(default)]
            pub format: Option<ImageFormat>,
            /// JPEG quality (default 80).
            #[serde(default)]
            #[schemars(range(min = 1, max = 100))]
            pub quality: Option<u8>,
        }

        impl $name {
            /// The screenshot fields, for `frame_options`.
            pub fn frame(&self) -> FrameRequest {
                FrameRequest {
                    max_side: self.max_side,
                    format: self.format,
                    quality: self.quality,
                }
            }
        }
    };
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartComputerArgs {
    /// What this session is for, shown to people watching the screens; 1 to 80 characters.
    pub title: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
}

fn default_true() -> bool {
    true
}

with_frame! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
    /// In order; the first failure stops the batch. click / move / down / up (drags): `button` (default left) at x,y (down and up move first only when given). scroll: `steps` toward `direction`, at x,y if given. type: `text`. key: `key`. wait: `ms`. focus: raise the window whose class or title contains `target`, or start that app. A double click is two clicks.
    #[schemars(with = "Vec<ActionShape>", length(min = 1, max = ACTIONS_MAX))]
    pub actions: Vec<Action>,
    /// Return a screenshot after the last action.
    #[serde(default = "default_true")]
    pub observe: bool,
    /// Ms to wait (default 300; with quiet, at most, default 3000).
    #[serde(default)]
    #[schemars(range(max = 5000))]
    pub settle_ms: Option<u64>,
    /// `quiet`: once still for quiet_ms (at most settle_ms).
    #[serde(default)]
    pub settle: Settle,
    /// With quiet: ms of stillness (default 250).
    #[serde(default)]
    #[schemars(range(min = 50, max = 2000))]
    pub quiet_ms: Option<u64>,
    /// One of the last 16 screenshots: x/y are then its pixels.
    #[serde(default)]
    pub frame_id: Option<u64>,
}
}

with_frame! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObserveArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
    /// Zoom: only this part of the screen (screen px), at up to full resolution.
    #[serde(default)]
    pub region: Option<Region>,
    /// `text`: the windows and one window's accessibility tree (refs e1, e2, ... stand for x/y in computer_act); `both`.
    #[serde(default)]
    pub view: View,
    /// Text view: whose tree, by class or title substring (default the focused window).
    #[serde(default)]
    pub window: Option<String>,
    /// Text view: most nodes (default 400); more are cut with a cursor.
    #[serde(default)]
    #[schemars(range(min = 1, max = 5000))]
    pub max_nodes: Option<usize>,
    /// Text view: a cut view's cursor, for its next nodes.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Return the image even when the screen is unchanged.
    #[serde(default)]
    pub force: bool,
}
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
    /// A bash command line.
    pub command: String,
    /// Seconds, or `90s`, `2m`, `1h`. Default COMPUTER_USE_SHELL_TIMEOUT (120 s), at most COMPUTER_USE_SHELL_TIMEOUT_MAX (600 s). On timeout all it started is killed; output so far is kept.
    #[serde(default)]
    pub timeout: Option<TimeoutArg>,
}

with_frame! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenPathArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
    /// An http(s) URL, or a path on the computer (absolute, `~/...`, or relative to the working folder).
    pub target: String,
    /// `quiet`: once still for quiet_ms (at most settle_ms).
    #[serde(default)]
    pub settle: Settle,
    /// Ms to wait once open (default 0; with quiet, at most, default 3000).
    #[serde(default)]
    #[schemars(range(max = 5000))]
    pub settle_ms: Option<u64>,
    /// With quiet: ms of stillness (default 250).
    #[serde(default)]
    #[schemars(range(min = 50, max = 2000))]
    pub quiet_ms: Option<u64>,
}
}

with_frame! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchAppArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
    /// `browser`, `terminal`, an installed application (a .desktop entry id such as `libreoffice-writer`, or its name), or a program on PATH.
    pub app: String,
    /// A URL or file to open in the app (the browser opens a new tab).
    #[serde(default)]
    pub uri: Option<String>,
    /// `quiet`: once still for quiet_ms (at most settle_ms).
    #[serde(default)]
    pub settle: Settle,
    /// Ms to wait once open (default 0; with quiet, at most, default 3000).
    #[serde(default)]
    #[schemars(range(max = 5000))]
    pub settle_ms: Option<u64>,
    /// With quiet: ms of stillness (default 250).
    #[serde(default)]
    #[schemars(range(min = 50, max = 2000))]
    pub quiet_ms: Option<u64>,
}
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetCwdArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
    /// A folder: absolute, `~` for home, or relative to the current working folder.
    pub path: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListFilesArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
    /// The folder to list (default: the working folder); `~` is home.
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
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
    #[schemars(with = "String")]
    pub session_id: SessionId,
    /// The file to replace or create; missing folders are created.
    pub path: String,
    /// The whole new content, UTF-8 text up to 10 MB.
    pub content: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransferArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
    // The tool's description says which way each goes.
    pub direction: TransferDirection,
    /// On the machine running this MCP server: absolute, `~/...`, or relative to its working folder.
    pub host_path: String,
    /// On the computer: absolute, `~/...`, or relative to the working folder.
    pub computer_path: String,
    /// Replace files and merge into folders (default false: refuse when the final path exists).
    #[serde(default)]
    pub overwrite: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartRecordingArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
    /// What the task is, 1 to 80 characters; it names the package folder.
    pub task: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordingNoteArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
    /// The note, 1 to 2000 characters: what you checked, found or concluded.
    pub text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StopRecordingArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
    /// Where on this server's machine: an existing folder gets the package inside as `<task>-<UTC time>/`, a new path names it. Default `computer-use-evidence/<task>-<UTC time>/` in the server's working folder (over HTTP, relative to COMPUTER_USE_TRANSFER_ROOT).
    #[serde(default)]
    pub host_path: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkLogArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
    #[serde(default)]
    pub denied_only: bool,
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveSnapshotArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
    /// 1 to 64 of a-z 0-9 . _ -
    pub name: String,
    /// Up to 500 characters.
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnapshotArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
    pub name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestoreSnapshotArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
    pub name: String,
    /// End the computer's other live sessions (else refused while any is).
    #[serde(default)]
    pub end_other_sessions: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResetComputerArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
    /// End the computer's other live sessions (else refused while any is).
    #[serde(default)]
    pub end_other_sessions: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HandoffArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
    /// What the person should do, 1 to 500 characters.
    pub reason: String,
    /// What the screen should show when they are done, up to 500 characters.
    #[serde(default)]
    pub expected: Option<String>,
}

with_frame! {
max_side_doc = " Longest side of the screenshot taken once the screen is back, in px (default as computer_observe).";
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitHandoffArgs {
    #[schemars(with = "String")]
    pub session_id: SessionId,
    /// Seconds to wait at most (default 30).
    #[serde(default)]
    #[schemars(range(min = 1, max = 45))]
    pub timeout: Option<u64>,
}
}

/// A tool's arguments that do not fit its schema, naming the field at
/// fault (`actions[2].x: invalid type: string "a", expected i32`).
#[derive(Debug, thiserror::Error)]
pub enum ArgumentsError {
    /// The arguments as a whole, such as a required field left out.
    #[error("invalid arguments: {source}")]
    Whole { source: serde_json::Error },
    #[error("`{path}`: {source}")]
    Field {
        /// Where serde stopped, such as `session_id` or `actions[2]`.
        path: String,
        source: serde_json::Error,
    },
    /// A field inside an action: serde stops at the action (actions are a
    /// tagged enum), so the action was read again field by field.
    #[error("`{path}.{field}`: {source}")]
    ActionField {
        /// The action, such as `actions[2]`.
        path: String,
        field: String,
        source: serde_json::Error,
    },
}

/// Reads a tool's arguments, naming the field at fault on failure
/// (`actions[2].x: invalid type: string "a", expected i32`).
pub fn parse<T: DeserializeOwned>(
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<T, ArgumentsError> {
    read(serde_json::Value::Object(arguments.unwrap_or_default()))
}

fn read<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, ArgumentsError> {
    serde_path_to_error::deserialize(&value).map_err(|e| {
        let path = e.path().to_string();
        let source = e.into_inner();
        if path == "." || path.is_empty() {
            return ArgumentsError::Whole { source };
        }
        // serde stops at the action for a fault inside it (actions are a
        // tagged enum); read that action field by field to name the field.
        if let Some(action) = action_at(&value, &path) {
            if let Some((field, by_field)) = bad_field(action) {
                // For a misspelt field the action's own message is better:
                // it lists only the fields of that action's type.
                let source = if source.to_string().starts_with("unknown field") {
                    source
                } else {
                    by_field
                };
                return ArgumentsError::ActionField {
                    path,
                    field,
                    source,
                };
            }
        }
        ArgumentsError::Field { path, source }
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
/// here; the tool turns the error into
/// [`ToolError::Arguments`](super::ToolError::Arguments) with `?`,
/// and the published schema is `T`'s.
pub struct Args<T>(Result<T, ArgumentsError>);

impl<T> Args<T> {
    pub fn read(self) -> Result<T, ArgumentsError> {
        self.0
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

    /// The error's text, as the agent reads it.
    fn refused<T: DeserializeOwned + std::fmt::Debug>(v: serde_json::Value) -> String {
        parse::<T>(args(v)).unwrap_err().to_string()
    }

    #[test]
    fn errors_name_the_field() {
        let e = refused::<ActArgs>(
            json!({"session_id": SID, "actions": [{"type": "click", "x": "a", "y": 1}]}),
        );
        assert!(e.starts_with("`actions[0].x`: invalid type"), "{e}");
        let e = refused::<ActArgs>(
            json!({"session_id": SID, "actions": [{"type": "wait", "ms": 1}, {"type": "key", "keys": "a"}]}),
        );
        assert_eq!(e, "`actions[1].keys`: unknown field `keys`, expected `key`");
        let e = refused::<StartComputerArgs>(json!({}));
        assert!(
            e.starts_with("invalid arguments: ") && e.contains("title"),
            "{e}"
        );
        let e = refused::<ShellArgs>(json!({"session_id": SID, "command": "x", "colour": 1}));
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
        let e = refused::<TransferArgs>(json!({
            "session_id": SID, "direction": "sideways", "host_path": "a", "computer_path": "b"
        }));
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
            let e = refused::<SessionArgs>(json!({ "session_id": bad }));
            assert!(
                e.starts_with("`session_id`:") && e.contains("start_computer"),
                "{bad}: {e}"
            );
        }
        let e = refused::<TransferArgs>(json!({
            "session_id": "a/../b", "direction": "from_computer",
            "host_path": "x", "computer_path": "y"
        }));
        assert!(e.starts_with("`session_id`:"), "{e}");
        let a = parse::<SessionArgs>(args(json!({ "session_id": SID }))).unwrap();
        assert_eq!(a.session_id.as_str(), SID);
    }

    #[test]
    fn wrapped_arguments_keep_the_field_and_the_schema() {
        let bad: Args<ActArgs> = serde_json::from_value(
            json!({"session_id": SID, "actions": [{"type": "click", "x": "a", "y": 1}]}),
        )
        .unwrap();
        let e = bad.read().unwrap_err();
        assert!(
            matches!(&e, ArgumentsError::ActionField { path, field, .. } if path == "actions[0]" && field == "x"),
            "{e}"
        );
        let good: Args<SessionArgs> = serde_json::from_value(json!({"session_id": SID})).unwrap();
        assert_eq!(good.read().unwrap().session_id.as_str(), SID);
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
