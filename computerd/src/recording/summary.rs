//! How a step reads in the walkthrough's timeline: its kind (how the page
//! shows it) and a one-line summary made from the call's arguments and
//! outcome. Pure, so every tool's line is unit tested.

use serde_json::Value;

/// How long a summary line may grow before it is cut with `…`.
const SUMMARY_MAX_CHARS: usize = 140;

/// `screen`, `note`, `shell`, `files` or `session`.
pub fn kind_of(tool: &str) -> &'static str {
    match tool {
        "computer_observe" | "computer_act" | "open_path" | "launch_app" => "screen",
        "recording_note" => "note",
        "shell" => "shell",
        "set_cwd" | "list_files" | "read_file" | "write_file" | "file_transfer" => "files",
        _ => "session",
    }
}

/// One line for the timeline: what was asked, and for shell its exit.
pub fn summary(tool: &str, arguments: &Value, is_error: bool, text: &str) -> String {
    let s = |field: &str| arguments.get(field).and_then(Value::as_str).unwrap_or("");
    let line = match tool {
        "computer_act" => actions_line(arguments.get("actions")),
        "computer_observe" => match s("view") {
            "" | "image" => "look at the screen".to_string(),
            view => format!("look at the screen ({view})"),
        },
        "open_path" => format!("open {}", s("target")),
        "launch_app" => match s("uri") {
            "" => format!("launch {}", s("app")),
            uri => format!("launch {} with {uri}", s("app")),
        },
        "recording_note" => s("text").to_string(),
        "shell" => {
            let command = s("command");
            match exit_code(text) {
                Some(code) if !is_error => format!("$ {command} → exit {code}"),
                _ => format!("$ {command}"),
            }
        }
        "set_cwd" => format!("cd {}", s("path")),
        "list_files" => format!("list {}", or_dot(s("path"))),
        "read_file" => format!("read {}", s("path")),
        "write_file" => format!("write {}", s("path")),
        "file_transfer" => match s("direction") {
            "to_computer" => format!("copy {} → computer {}", s("host_path"), s("computer_path")),
            _ => format!("copy computer {} → {}", s("computer_path"), s("host_path")),
        },
        "handoff" => format!("handed to a person: {}", s("reason")),
        "start_chrome_devtools" => "start the DevTools bridge".to_string(),
        "stop_chrome_devtools" => "stop the DevTools bridge".to_string(),
        other => other.replace('_', " "),
    };
    let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
    let line = if is_error {
        format!("{line} — failed")
    } else {
        line
    };
    cut(&line)
}

fn or_dot(path: &str) -> &str {
    if path.is_empty() {
        "."
    } else {
        path
    }
}

/// `click 412,300 · type "hello" · key enter`.
fn actions_line(actions: Option<&Value>) -> String {
    let Some(actions) = actions.and_then(Value::as_array) else {
        return "act".to_string();
    };
    let parts: Vec<String> = actions.iter().map(action_words).collect();
    parts.join(" · ")
}

fn action_words(action: &Value) -> String {
    let field = |name: &str| action.get(name);
    let text = |name: &str| field(name).and_then(Value::as_str).unwrap_or("");
    let at = || match (field("x"), field("y"), field("ref")) {
        (Some(x), Some(y), _) => format!(" {x},{y}"),
        (_, _, Some(Value::String(r))) => format!(" {r}"),
        _ => String::new(),
    };
    let kind = text("type");
    match kind {
        "click" | "move" | "down" | "up" => {
            let button = match text("button") {
                "" | "left" => String::new(),
                b => format!(" ({b})"),
            };
            format!("{kind}{}{button}", at())
        }
        // The host already replaced a secret text with `•••`.
        "type" => format!("type \"{}\"", text("text")),
        "key" => format!("key {}", text("key")),
        "scroll" => format!("scroll {}{}", text("direction"), at()),
        "wait" => format!("wait {} ms", field("ms").cloned().unwrap_or(Value::Null)),
        "focus" => format!("focus {}", text("target")),
        other => other.to_string(),
    }
}

/// The exit code a shell result's text starts with (`exit code 0 after
/// 12 ms`), when it has one.
fn exit_code(text: &str) -> Option<String> {
    let digits: String = text
        .strip_prefix("exit code ")?
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    (!digits.is_empty()).then_some(digits)
}

fn cut(line: &str) -> String {
    if line.chars().count() <= SUMMARY_MAX_CHARS {
        return line.to_string();
    }
    let mut out: String = line.chars().take(SUMMARY_MAX_CHARS - 1).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_act_batch_reads_as_its_actions() {
        let args = json!({"session_id": "s", "actions": [
            {"type": "click", "x": 412, "y": 300},
            {"type": "type", "text": "•••", "secret": true},
            {"type": "key", "key": "enter"},
            {"type": "click", "ref": "e7", "button": "right"},
            {"type": "scroll", "direction": "down"},
            {"type": "wait", "ms": 200},
        ]});
        assert_eq!(
            summary("computer_act", &args, false, ""),
            "click 412,300 · type \"•••\" · key enter · click e7 (right) · scroll down · wait 200 ms"
        );
        assert_eq!(kind_of("computer_act"), "screen");
    }

    #[test]
    fn shell_shows_the_command_and_its_exit() {
        let args = json!({"command": "ls  -la\n/tmp"});
        let text = "exit code 2 after 12 ms\nstdout: ...";
        assert_eq!(
            summary("shell", &args, false, text),
            "$ ls -la /tmp → exit 2"
        );
        assert_eq!(
            summary("shell", &args, true, "timed out"),
            "$ ls -la /tmp — failed"
        );
    }

    #[test]
    fn other_tools_and_long_lines() {
        let note = json!({"text": "n".repeat(500)});
        let line = summary("recording_note", &note, false, "");
        assert_eq!(line.chars().count(), SUMMARY_MAX_CHARS);
        assert!(line.ends_with('…'));
        assert_eq!(kind_of("recording_note"), "note");
        assert_eq!(
            summary(
                "file_transfer",
                &json!({"direction": "from_computer", "computer_path": "~/a", "host_path": "b"}),
                false,
                ""
            ),
            "copy computer ~/a → b"
        );
        assert_eq!(summary("list_files", &json!({}), false, ""), "list .");
        assert_eq!(
            summary("something_new", &json!({}), false, ""),
            "something new"
        );
        assert_eq!(kind_of("something_new"), "session");
    }
}
