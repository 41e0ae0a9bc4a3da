//! One ssh login shared by the connections to an `ssh://` engine.
//!
//! Each Docker connection over ssh is an `ssh` process of its own
//! (`ssh.rs`), and a session opens a dozen or more of them (every exec
//! tunnel to computerd is one). Each paid a whole login: about 0.3 s on one
//! machine, more across a network. With OpenSSH's connection sharing the
//! first `ssh` logs in and goes on in the background as the master, for
//! [`PERSIST`] after its last connection ends; the next ones open a channel
//! through it without a login.
//!
//! The user's ssh setup comes first: when `ssh -G` shows that it sets
//! `ControlMaster` or `ControlPath` itself, nothing is added. Windows'
//! OpenSSH cannot share connections. The master's socket lets whoever can
//! open it run commands as the remote user, so it lives in a folder that
//! only this user can enter; when no such folder can be had, each
//! connection logs in by itself as before.

use std::path::{Path, PathBuf};

/// How long the master stays after its last connection: longer than the
/// host's idle connections are kept, so consecutive calls find it.
const PERSIST: &str = "60";
/// How often the master checks that the engine's machine still answers,
/// and how many checks may go unanswered: a machine that dropped off
/// the network ends the shared login (and every connection in it) within
/// 15 s, so the next connection logs in afresh instead of waiting on it.
const ALIVE_INTERVAL: &str = "5";
const ALIVE_COUNT: &str = "3";
/// The longest socket path that works everywhere (macOS allows 104 bytes).
#[cfg(unix)]
const SOCKET_PATH_MAX: usize = 100;
/// What ssh makes of `%C` (40 hex digits), plus the temporary name it binds
/// first (`.` and 16 random characters).
#[cfg(unix)]
const SOCKET_NAME_LEN: usize = 40 + 17;

/// The `-o` options that share one login to `host` (with `login`, the
/// `-l` and `-p` arguments of the address), or none when the user's own
/// ssh setup decides, or no private folder can hold the socket.
pub async fn options(login: Vec<String>, host: String) -> Vec<String> {
    if cfg!(windows) {
        return Vec::new();
    }
    let Some(folder) = private_folder() else {
        return Vec::new();
    };
    match user_setup(&login, &host).await {
        Some(false) => sharing_options(&folder),
        Some(true) => {
            tracing::debug!("ssh: the user's ssh setup shares connections itself");
            Vec::new()
        }
        None => Vec::new(),
    }
}

/// The options that share one login through a socket in `folder`.
fn sharing_options(folder: &Path) -> Vec<String> {
    let socket = folder.join("%C");
    [
        "ControlMaster=auto".to_string(),
        format!("ControlPath={}", socket.display()),
        format!("ControlPersist={PERSIST}"),
        format!("ServerAliveInterval={ALIVE_INTERVAL}"),
        format!("ServerAliveCountMax={ALIVE_COUNT}"),
    ]
    .into_iter()
    .flat_map(|option| ["-o".to_string(), option])
    .collect()
}

/// Whether the user's ssh setup for `host` shares connections itself
/// (`Some(true)`), leaves it off (`Some(false)`), or `ssh -G` could not say
/// (`None`: the connection itself will report what is wrong).
async fn user_setup(login: &[String], host: &str) -> Option<bool> {
    let mut command = tokio::process::Command::new("ssh");
    command.arg("-G").args(login).arg("--").arg(host);
    let out = tokio::time::timeout(std::time::Duration::from_secs(5), command.output())
        .await
        .ok()?
        .ok()?;
    out.status
        .success()
        .then(|| sets_sharing(&String::from_utf8_lossy(&out.stdout)))
}

/// Whether `ssh -G`'s resolved settings share connections: a master other
/// than `false` or a control path other than `none`.
fn sets_sharing(resolved: &str) -> bool {
    resolved.lines().any(|line| {
        let mut words = line.split_whitespace();
        match (words.next(), words.next()) {
            (Some(key), Some(value)) => {
                (key.eq_ignore_ascii_case("controlmaster") && value != "false")
                    || (key.eq_ignore_ascii_case("controlpath") && value != "none")
            }
            _ => false,
        }
    })
}

/// `$XDG_RUNTIME_DIR/computer-use-mcp`, else `/tmp/computer-use-mcp-<uid>`:
/// made when missing, and used only when it is a real folder of this user
/// that nobody else may enter, short enough for a socket path.
#[cfg(unix)]
fn private_folder() -> Option<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    let folder = match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        Some(runtime) if runtime.is_absolute() => runtime.join("computer-use-mcp"),
        _ => PathBuf::from(format!("/tmp/computer-use-mcp-{uid}")),
    };
    if folder.as_os_str().len() + 1 + SOCKET_NAME_LEN > SOCKET_PATH_MAX {
        tracing::debug!(folder = %folder.display(), "ssh: the socket folder's path is too long to share connections");
        return None;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(&folder) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            tracing::debug!(folder = %folder.display(), "ssh: cannot make the socket folder: {e}");
            return None;
        }
    }
    // Not followed: a link someone else planted there is refused.
    let meta = std::fs::symlink_metadata(&folder).ok()?;
    private_to(meta.is_dir(), meta.uid(), meta.mode(), uid).then_some(folder)
}

#[cfg(not(unix))]
fn private_folder() -> Option<PathBuf> {
    None
}

/// A folder owned by `uid` with no access for its group or others.
#[cfg_attr(not(unix), allow(dead_code))]
fn private_to(is_dir: bool, owner: u32, mode: u32, uid: u32) -> bool {
    is_dir && owner == uid && mode & 0o077 == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_through_a_socket_in_the_folder_with_a_persisting_master() {
        let options = sharing_options(Path::new("/run/user/1000/computer-use-mcp"));
        assert_eq!(
            options,
            [
                "-o",
                "ControlMaster=auto",
                "-o",
                "ControlPath=/run/user/1000/computer-use-mcp/%C",
                "-o",
                "ControlPersist=60",
                "-o",
                "ServerAliveInterval=5",
                "-o",
                "ServerAliveCountMax=3",
            ]
        );
    }

    #[test]
    fn the_users_own_sharing_settings_are_seen() {
        let defaults = "user root\nhostname box\ncontrolmaster false\ncontrolpath none\nport 22\n";
        assert!(!sets_sharing(defaults));
        assert!(sets_sharing(
            "controlmaster auto\ncontrolpath /home/me/.ssh/cm-%C\n"
        ));
        assert!(sets_sharing("controlmaster false\ncontrolpath ~/.ssh/%C\n"));
        assert!(sets_sharing("controlmaster true\ncontrolpath none\n"));
        assert!(!sets_sharing(""));
    }

    #[test]
    fn the_socket_folder_must_be_this_users_alone() {
        assert!(private_to(true, 1000, 0o40700, 1000));
        assert!(!private_to(true, 1000, 0o40750, 1000), "group may enter");
        assert!(!private_to(true, 1000, 0o40701, 1000), "others may enter");
        assert!(!private_to(true, 0, 0o40700, 1000), "someone else's");
        assert!(!private_to(false, 1000, 0o100600, 1000), "not a folder");
    }
}
