//! How the guard is asked things. One line in, one answer out:
//! - the host, through `docker exec` into the guard's container, on a Unix
//!   socket in that container's own filesystem (out of the computer's
//!   reach): `log DENIED_ONLY LIMIT` and `policy JSON`;
//! - computerd, on a loopback port of the shared namespace: `denials
//!   SINCE_MS` and `between SINCE_MS UNTIL_MS` (every connection that
//!   started then, for a recording's step), read only (the computer may
//!   read its own log, not change the policy).

use super::error::GuardError;
use super::Guard;
use computer_protocol::network::{NetworkLog, NetworkLogEntry, NetworkPolicy, LOG_KEPT};
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, UnixListener};

const SOCKET: &str = "/run/computer-use-guard.sock";
/// computerd asks for the denials during a call here.
pub const DENIALS_PORT: u16 = 7079;
/// A request line longer than this is refused (a policy of 256 entries
/// fits with room to spare).
const LINE_MAX: usize = 64 * 1024;

pub fn bind() -> Result<UnixListener, GuardError> {
    let _ = std::fs::remove_file(SOCKET);
    UnixListener::bind(SOCKET).map_err(GuardError::listen(SOCKET))
}

pub async fn serve_host(listener: UnixListener, guard: Arc<Guard>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let guard = guard.clone();
        tokio::spawn(answer_one_line(stream, move |line| {
            host_command(&guard, line)
        }));
    }
}

fn host_command(guard: &Guard, line: &str) -> String {
    let (command, rest) = line.split_once(' ').unwrap_or((line, ""));
    match command {
        "log" => {
            let mut words = rest.split_whitespace();
            let denied_only = words.next() == Some("1");
            let limit = words
                .next()
                .and_then(|w| w.parse().ok())
                .unwrap_or(LOG_KEPT);
            if let Some(path) = &guard.kernel_path {
                path.refresh(&guard.journal);
            }
            let (entries, dropped) = guard.journal.newest(denied_only, limit);
            let log = NetworkLog {
                policy: (*guard.policy()).clone(),
                entries,
                dropped,
            };
            serde_json::to_string(&log).unwrap_or_else(|e| format!("error: {e}"))
        }
        "policy" => match serde_json::from_str::<NetworkPolicy>(rest) {
            Ok(policy) => match guard.set_policy(policy) {
                Ok(()) => format!("ok: {}", guard.policy().summary()),
                Err(e) => format!("error: {e}"),
            },
            Err(e) => format!("error: the policy is not valid JSON: {e}"),
        },
        other => format!("error: unknown command `{other}`"),
    }
}

pub async fn serve_computer(listener: TcpListener, guard: Arc<Guard>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let guard = guard.clone();
        tokio::spawn(answer_one_line(stream, move |line| {
            let numbers = |rest: &str| -> Vec<u64> {
                rest.split_whitespace()
                    .map_while(|w| w.parse().ok())
                    .collect()
            };
            let entries = match line.split_once(' ') {
                Some(("denials", rest)) => match numbers(rest)[..] {
                    [since] => guard.journal.denials_since(since),
                    _ => Vec::new(),
                },
                Some(("between", rest)) => match numbers(rest)[..] {
                    [since, until] => guard.journal.started_between(since, until),
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            };
            serde_json::to_string(&entries).unwrap_or_default()
        }));
    }
}

/// Reads one request line from `stream` and writes `answer`'s reply.
async fn answer_one_line<S>(stream: S, answer: impl FnOnce(&str) -> String)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (read, mut write) = tokio::io::split(stream);
    let Some(line) = read_line(read).await else {
        return;
    };
    let reply = answer(&line);
    let _ = write.write_all(reply.as_bytes()).await;
}

async fn read_line(read: impl tokio::io::AsyncRead + Unpin) -> Option<String> {
    let mut line = String::new();
    let mut reader = BufReader::new(read).take(LINE_MAX as u64);
    tokio::time::timeout(Duration::from_secs(5), reader.read_line(&mut line))
        .await
        .ok()?
        .ok()?;
    Some(line.trim_end().to_string())
}

/// Sends one command to the running guard (from `docker exec`).
pub fn ask(command: &str) -> Result<String, GuardError> {
    let mut stream = std::os::unix::net::UnixStream::connect(SOCKET).map_err(|source| {
        GuardError::NotAnswering {
            socket: SOCKET,
            source,
        }
    })?;
    stream
        .write_all(format!("{command}\n").as_bytes())
        .map_err(GuardError::Ask)?;
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .map_err(GuardError::NoAnswer)?;
    if let Some(error) = answer.strip_prefix("error: ") {
        return Err(GuardError::Answered(error.to_string()));
    }
    Ok(answer)
}

/// The denials since `since_ms` (milliseconds since the epoch), for
/// computerd to mention in a call's result. Empty when no guard answers
/// (computerd outside a container) or it is slow.
pub async fn denials_since(since_ms: u64) -> Vec<NetworkLogEntry> {
    ask_as_computer(format!("denials {since_ms}")).await
}

/// Every connection that started from `since_ms` to `until_ms`, for a
/// recording's step; empty as [`denials_since`].
pub async fn started_between(since_ms: u64, until_ms: u64) -> Vec<NetworkLogEntry> {
    ask_as_computer(format!("between {since_ms} {until_ms}")).await
}

async fn ask_as_computer(line: String) -> Vec<NetworkLogEntry> {
    let ask = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", DENIALS_PORT))
            .await
            .ok()?;
        stream
            .write_all(format!("{line}\n").as_bytes())
            .await
            .ok()?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.ok()?;
        serde_json::from_slice(&answer).ok()
    };
    tokio::time::timeout(Duration::from_millis(200), ask)
        .await
        .ok()
        .flatten()
        .unwrap_or_default()
}
