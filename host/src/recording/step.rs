//! One tool call as a recording keeps it: the arguments with every secret
//! typed text hidden, and what the agent got back (text, the frame it
//! showed, the points its pointer actions used). Secrets typed earlier in
//! the recording are hidden from every later step's text and arguments
//! too, and a call that typed one keeps no frame. Pure, unit tested.

use computer_protocol::recording::{ScreenPoint, StepRecord, SECRET_SHOWN_AS, STEP_TEXT_MAX_BYTES};
use rmcp::model::{CallToolResponse, CallToolResult};
use serde_json::{Map, Value};

/// The arguments as they may be shown: each `type` action with
/// `secret: true` has its text replaced by `•••`.
pub fn redact(arguments: Option<&Map<String, Value>>) -> Value {
    let mut shown = Value::Object(arguments.cloned().unwrap_or_default());
    if let Some(actions) = shown.get_mut("actions").and_then(Value::as_array_mut) {
        for action in actions {
            if is_secret_type(action) {
                action["text"] = Value::String(SECRET_SHOWN_AS.to_string());
            }
        }
    }
    shown
}

fn is_secret_type(action: &Value) -> bool {
    action.get("type").and_then(Value::as_str) == Some("type")
        && action.get("secret").and_then(Value::as_bool) == Some(true)
}

/// The secret texts of a call, to keep them out of its result's text too.
pub fn secrets(arguments: Option<&Map<String, Value>>) -> Vec<String> {
    let Some(actions) = arguments
        .and_then(|a| a.get("actions"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    actions
        .iter()
        .filter(|a| is_secret_type(a))
        .filter_map(|a| a.get("text").and_then(Value::as_str))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// Secrets shorter than this are hidden only in the call that typed them:
/// replacing a two-letter secret wherever it appears later would garble
/// every later step.
pub const SECRET_REMEMBERED_MIN_CHARS: usize = 4;

/// Replaces each of `secrets` in every string of `value`.
fn hide_in(value: &mut Value, secrets: &[String]) {
    match value {
        Value::String(text) => {
            for secret in secrets {
                if text.contains(secret.as_str()) {
                    *text = text.replace(secret.as_str(), SECRET_SHOWN_AS);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| hide_in(v, secrets)),
        Value::Object(map) => map.values_mut().for_each(|v| hide_in(v, secrets)),
        _ => {}
    }
}

/// The step for a finished call. `earlier` are the secrets typed earlier
/// in the recording (at least [`SECRET_REMEMBERED_MIN_CHARS`] each).
pub fn step_of(
    tool: &str,
    arguments: Option<&Map<String, Value>>,
    started_at: String,
    duration_ms: u64,
    response: &CallToolResponse,
    earlier: &[String],
) -> StepRecord {
    let result = match response {
        CallToolResponse::Complete(result) => Some(result),
        _ => None,
    };
    let own = secrets(arguments);
    let mut hidden: Vec<String> = own.iter().chain(earlier).cloned().collect();
    // The longest first, so a secret holding another is hidden whole.
    hidden.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut text = Value::String(result.map(text_of).unwrap_or_default());
    hide_in(&mut text, &hidden);
    let mut shown_arguments = redact(arguments);
    hide_in(&mut shown_arguments, &hidden);
    let text = match text {
        Value::String(text) => text,
        _ => String::new(),
    };
    let structured = result.and_then(|r| r.structured_content.as_ref());
    StepRecord {
        secret: !own.is_empty(),
        tool: tool.to_string(),
        arguments: shown_arguments,
        started_at,
        duration_ms,
        is_error: result.and_then(|r| r.is_error).unwrap_or(false),
        text: bounded(text),
        frame_id: structured.and_then(frame_id_of),
        points: structured.map(points_of).unwrap_or_default(),
    }
}

/// The image the result showed the agent, decoded: the bytes computerd
/// captured, which name its frame file.
pub fn frame_of(response: &CallToolResponse) -> Option<Vec<u8>> {
    let CallToolResponse::Complete(result) = response else {
        return None;
    };
    let image = result.content.iter().find_map(|c| c.as_image())?;
    base64::Engine::decode(&base64::engine::general_purpose::STANDARD, &image.data).ok()
}

/// Every text content of the result, one after another.
fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The frame a result showed: observation fields are flattened into the
/// structured result of every tool that returns a screenshot.
fn frame_id_of(structured: &Value) -> Option<u64> {
    structured.get("frame_id").and_then(Value::as_u64)
}

/// The points computer_act's outcomes say its actions used.
fn points_of(structured: &Value) -> Vec<ScreenPoint> {
    let Some(outcomes) = structured.get("outcomes").and_then(Value::as_array) else {
        return Vec::new();
    };
    outcomes
        .iter()
        .filter_map(|o| serde_json::from_value(o.get("at")?.clone()).ok())
        .collect()
}

/// At most [`STEP_TEXT_MAX_BYTES`]: the head and tail, with a marker.
fn bounded(text: String) -> String {
    if text.len() <= STEP_TEXT_MAX_BYTES {
        return text;
    }
    let half = STEP_TEXT_MAX_BYTES / 2;
    let head_end = floor_char_boundary(&text, half);
    let tail_start = ceil_char_boundary(&text, text.len() - half);
    format!(
        "{}\n[... {} bytes left out of the recording ...]\n{}",
        &text[..head_end],
        tail_start - head_end,
        &text[tail_start..]
    )
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;
    use serde_json::json;

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn a_secret_text_appears_nowhere_in_the_step() {
        let a = args(json!({"session_id": "s", "actions": [
            {"type": "type", "text": "hunter2-PASS", "secret": true},
            {"type": "type", "text": "visible"},
            {"type": "click", "x": 5, "y": 6},
        ]}));
        let mut result = CallToolResult::error(vec![ContentBlock::text(
            "Action 0 (type) failed near hunter2-PASS",
        )]);
        result.structured_content = Some(json!({
            "frame_id": 7,
            "outcomes": [{"index": 2, "type": "click", "ok": true, "at": {"x": 5, "y": 6}}]
        }));
        let step = step_of(
            "computer_act",
            Some(&a),
            "t".into(),
            3,
            &CallToolResponse::Complete(result),
            &[],
        );
        let all = serde_json::to_string(&step).unwrap();
        assert!(!all.contains("hunter2"), "{all}");
        assert!(all.contains("visible"));
        assert_eq!(step.arguments["actions"][0]["text"], "•••");
        assert!(step.is_error);
        assert_eq!(step.frame_id, Some(7));
        assert_eq!(step.points, vec![ScreenPoint { x: 5, y: 6 }]);
        assert!(step.secret, "its frame is not to be kept");
    }

    #[test]
    fn a_secret_typed_earlier_is_hidden_in_later_steps() {
        let a = args(json!({"session_id": "s", "command": "echo hunter2-PASS | sudo -S true"}));
        let result = CallToolResult::success(vec![ContentBlock::text("[sudo] hunter2-PASS")]);
        let step = step_of(
            "shell",
            Some(&a),
            "t".into(),
            3,
            &CallToolResponse::Complete(result),
            &["hunter2-PASS".to_string()],
        );
        let all = serde_json::to_string(&step).unwrap();
        assert!(!all.contains("hunter2"), "{all}");
        assert_eq!(step.arguments["command"], "echo ••• | sudo -S true");
        assert!(!step.secret, "this call typed nothing secret");
    }

    #[test]
    fn long_text_keeps_its_head_and_tail() {
        let text = format!("{}{}", "é".repeat(STEP_TEXT_MAX_BYTES), "end");
        let kept = bounded(text);
        assert!(kept.len() < STEP_TEXT_MAX_BYTES + 100);
        assert!(kept.starts_with('é') && kept.ends_with("end"));
        assert!(kept.contains("left out of the recording"));
    }
}
