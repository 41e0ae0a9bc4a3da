//! Talking to `mcpc`, the MCP command-line client whose bridge process
//! keeps `chrome-devtools-mcp` running: its commands (each with a
//! deadline), its session list, and its bridge log.

use super::bridge_process::BridgeProcess;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use time::OffsetDateTime;

/// How long `mcpc connect` may take: it starts Node twice (the bridge and
/// `chrome-devtools-mcp`) and waits for the MCP handshake.
pub const CONNECT_DEADLINE: Duration = Duration::from_secs(60);
/// How long other `mcpc` commands may take.
pub const COMMAND_DEADLINE: Duration = Duration::from_secs(30);

/// The tail of a bridge log read to find the last call.
const LOG_TAIL_BYTES: u64 = 256 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum McpcError {
    #[error("could not run `mcpc`: {0}; the image installs it with npm (`@apify/mcpc`)")]
    Spawn(std::io::Error),
    #[error("`mcpc {command}` did not finish within {}s, so computerd stopped it; its log is `{}`", waited.as_secs(), log.display())]
    Timeout {
        command: String,
        waited: Duration,
        log: PathBuf,
    },
    #[error("`mcpc {command}` failed ({status}): {output}")]
    Failed {
        command: String,
        status: String,
        output: String,
    },
}

/// `mcpc` for one home folder.
#[derive(Debug, Clone)]
pub struct Mcpc {
    pub home: PathBuf,
    /// Variables for `mcpc` and the servers it starts.
    pub env: Vec<(String, String)>,
}

impl Mcpc {
    /// `~/.mcpc`, where `mcpc` keeps its sessions and logs.
    fn state_dir(&self) -> PathBuf {
        self.home.join(".mcpc")
    }

    /// The log of `bridge`'s bridge process.
    pub fn log_path(&self, bridge: &str) -> PathBuf {
        self.state_dir()
            .join("logs")
            .join(format!("bridge-{bridge}.log"))
    }

    /// Runs `mcpc args...`; returns its stdout when it succeeds.
    pub async fn run(
        &self,
        args: &[&str],
        deadline: Duration,
        bridge: &str,
    ) -> Result<String, McpcError> {
        let command = args.join(" ");
        let child = tokio::process::Command::new("mcpc")
            .args(args)
            .env("HOME", &self.home)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            // mcpc would otherwise colour and decorate its output.
            .env("NO_COLOR", "1")
            .current_dir(&self.home)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(McpcError::Spawn)?;
        let output = match tokio::time::timeout(deadline, child.wait_with_output()).await {
            Ok(Ok(output)) => output,
            Ok(Err(e)) => return Err(McpcError::Spawn(e)),
            Err(_) => {
                return Err(McpcError::Timeout {
                    command,
                    waited: deadline,
                    log: self.log_path(bridge),
                })
            }
        };
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if output.status.success() {
            return Ok(stdout);
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let said: Vec<&str> = stderr
            .lines()
            .chain(stdout.lines())
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .take(6)
            .collect();
        Err(McpcError::Failed {
            command,
            status: output.status.to_string(),
            output: if said.is_empty() {
                "nothing".into()
            } else {
                said.join(" | ")
            },
        })
    }

    /// `bridge`'s bridge process while it runs, by the pid in mcpc's
    /// session list. `None` when the session is unknown or its bridge is
    /// gone (stopped when idle, or crashed), also when that pid now belongs
    /// to another process.
    pub fn bridge_process(&self, bridge: &str) -> Option<BridgeProcess> {
        let session = self.session(bridge)?;
        let pid = i32::try_from(session.get("pid")?.as_i64()?).ok()?;
        BridgeProcess::identify(pid, bridge)
    }

    /// True when mcpc knows the session, running or not.
    pub fn knows(&self, bridge: &str) -> bool {
        self.session(bridge).is_some()
    }

    fn session(&self, bridge: &str) -> Option<Value> {
        let text = std::fs::read_to_string(self.state_dir().join("sessions.json")).ok()?;
        let all: Value = serde_json::from_str(&text).ok()?;
        let sessions = all.get("sessions")?;
        // A map by name, or a list of sessions with a `name`.
        match sessions {
            Value::Object(map) => map.get(bridge).cloned(),
            Value::Array(list) => list
                .iter()
                .find(|s| s.get("name").and_then(Value::as_str) == Some(bridge))
                .cloned(),
            _ => None,
        }
    }

    /// When an `mcpc` command last reached the bridge, from its log. The
    /// bridge's own keep-alive pings do not count.
    pub fn last_call(&self, bridge: &str) -> Option<OffsetDateTime> {
        last_call_in(&read_tail(&self.log_path(bridge), LOG_TAIL_BYTES)?)
    }
}

/// The time of the last request a client sent through the bridge, in the
/// text of a bridge log (`[2026-11-30T13:24:39.485Z] [DEBUG] [bridge] >>>
/// handleMcpRequest: callTool <<<`).
pub fn last_call_in(log: &str) -> Option<OffsetDateTime> {
    log.lines()
        .rev()
        .find(|line| line.contains("] >>> handleMcpRequest:"))
        .and_then(|line| line.strip_prefix('[')?.split_once(']'))
        .and_then(|(stamp, _)| {
            OffsetDateTime::parse(stamp, &time::format_description::well_known::Rfc3339).ok()
        })
}

fn read_tail(path: &Path, bytes: u64) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(bytes))).ok()?;
    let mut raw = Vec::new();
    file.take(bytes).read_to_end(&mut raw).ok()?;
    Some(String::from_utf8_lossy(&raw).into_owned())
}

/// The tools of `mcpc --json @bridge tools-list`: name, first line of the
/// description, and whether `pageId` is among its arguments.
pub fn parse_tools(json: &str) -> Vec<computer_protocol::DevToolsTool> {
    let Ok(value) = serde_json::from_str::<Value>(json) else {
        return Vec::new();
    };
    let list = match &value {
        Value::Array(list) => list.clone(),
        other => other
            .get("tools")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
    };
    list.iter()
        .filter_map(|tool| {
            let name = tool.get("name")?.as_str()?.to_string();
            let summary = tool
                .get("description")
                .and_then(Value::as_str)
                .and_then(|d| d.lines().next())
                .unwrap_or("")
                .trim()
                .to_string();
            let needs_page_id = tool.pointer("/inputSchema/properties/pageId").is_some();
            Some(computer_protocol::DevToolsTool {
                name,
                summary,
                needs_page_id,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_call_is_the_last_client_request_not_a_ping() {
        let log = "\
[2026-11-30T13:24:39.483Z] [DEBUG] [bridge] New client connected
[2026-11-30T13:24:39.485Z] [DEBUG] [bridge] >>> handleMcpRequest: callTool <<<
[2026-11-30T13:24:39.488Z] [DEBUG] [McpClient:mcpc] Tool list_pages completed
[2026-11-30T13:24:55.838Z] [DEBUG] [bridge] Sending keepalive ping
[2026-11-30T13:24:55.839Z] [DEBUG] [bridge] Keepalive ping successful
";
        let last = last_call_in(log).unwrap();
        assert_eq!(last.unix_timestamp(), 1_796_045_079);
        assert_eq!(
            last_call_in("[2026-11-30T13:24:55.838Z] [DEBUG] [bridge] Sending keepalive ping"),
            None
        );
    }

    #[test]
    fn tools_say_which_need_a_page_id() {
        let json = r#"[
            {"name": "list_pages", "description": "Get a list of pages.\nMore.", "inputSchema": {"type": "object", "properties": {}}},
            {"name": "navigate_page", "description": "Go to a URL", "inputSchema": {"properties": {"pageId": {"type": "number"}, "url": {}}}}
        ]"#;
        let tools = parse_tools(json);
        assert_eq!(tools.len(), 2);
        assert_eq!(tools[0].summary, "Get a list of pages.");
        assert!(!tools[0].needs_page_id);
        assert!(tools[1].needs_page_id);
        assert!(parse_tools("not json").is_empty());
    }
}
