//! The Xvnc and Fluxbox command lines, and clearing the lock a crashed X
//! server left behind (a restarted container keeps its /tmp).

use super::env::ScreenEnv;
use crate::config::ScreenSize;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use tokio::process::Command;

/// Failed VNC logins from one address before Xvnc refuses it.
pub const BLACKLIST_THRESHOLD: u32 = 5;
/// Seconds an address is refused at first; Xvnc doubles it for each
/// further failure, so five more wrong guesses cost over five minutes.
pub const BLACKLIST_TIMEOUT_SECS: u32 = 10;

/// What Xvnc needs to serve one screen.
pub struct XvncArgs<'a> {
    pub display: u32,
    pub size: ScreenSize,
    pub rfb_port: u16,
    pub rfb_interface: &'a str,
    pub password_file: &'a Path,
    pub desktop_name: String,
}

pub fn xvnc_command(args: &XvncArgs<'_>) -> Command {
    let mut cmd = Command::new("Xvnc");
    cmd.arg(format!(":{}", args.display))
        .args(["-geometry", &args.size.to_string()])
        .args(["-depth", "24"])
        .args(["-rfbport", &args.rfb_port.to_string()])
        .args(["-interface", args.rfb_interface])
        .args(["-SecurityTypes", "VncAuth"])
        // The password is the 8-character viewer key (VncAuth reads no
        // more), so guesses must be slow: after BLACKLIST_THRESHOLD failed
        // logins an address is refused for BLACKLIST_TIMEOUT_SECS, doubled
        // for every failure after that. Set here, not left to the build's
        // defaults.
        .arg("-UseBlacklist=1")
        .arg(format!("-BlacklistThreshold={BLACKLIST_THRESHOLD}"))
        .arg(format!("-BlacklistTimeout={BLACKLIST_TIMEOUT_SECS}"))
        .arg("-PasswordFile")
        .arg(args.password_file)
        .args(["-desktop", &args.desktop_name])
        // Several viewers may watch one screen; nobody may resize it under the agent.
        .arg("-AlwaysShared")
        .arg("-AcceptSetDesktopSize=0")
        .args(["-nolisten", "tcp"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // Kept in a tail that errors about the start quote.
        .stderr(Stdio::piped())
        .kill_on_drop(false);
    cmd
}

pub fn fluxbox_command(
    screen: ScreenEnv,
    home: &Path,
    fluxbox_dir: &Path,
    env: &[(String, String)],
) -> Command {
    let mut cmd = Command::new("fluxbox");
    let init = fluxbox_dir.join("init");
    if init.is_file() {
        cmd.arg("-rc").arg(init);
    }
    screen.apply(&mut cmd);
    cmd.env("HOME", home)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    cmd
}

/// The lock file and socket of display `:n`.
pub fn lock_paths(n: u32) -> (PathBuf, PathBuf) {
    (
        PathBuf::from(format!("/tmp/.X{n}-lock")),
        PathBuf::from(format!("/tmp/.X11-unix/X{n}")),
    )
}

/// The pid written in the lock file of `:n`, if there is one.
pub fn lock_owner(n: u32) -> Option<i32> {
    let (lock, _) = lock_paths(n);
    std::fs::read_to_string(lock)
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok())
}

/// Removes the lock and socket of `:n` when the process that made them is
/// gone. Returns the pid of a live X server holding the display.
pub fn clear_stale_lock(n: u32) -> Option<i32> {
    let (lock, socket) = lock_paths(n);
    match lock_owner(n) {
        // SAFETY: signal 0 only checks that the process exists.
        Some(pid) if pid > 0 && unsafe { libc::kill(pid, 0) } == 0 => Some(pid),
        _ => {
            let _ = std::fs::remove_file(&lock);
            let _ = std::fs::remove_file(&socket);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xvnc_refuses_an_address_after_failed_logins() {
        let args = XvncArgs {
            display: 7,
            size: ScreenSize {
                width: 1280,
                height: 800,
            },
            rfb_port: 5907,
            rfb_interface: "127.0.0.1",
            password_file: Path::new("/tmp/passwd"),
            desktop_name: "screen 7".into(),
        };
        let command = xvnc_command(&args);
        let argv: Vec<String> = command
            .as_std()
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        for wanted in [
            "-UseBlacklist=1",
            "-BlacklistThreshold=5",
            "-BlacklistTimeout=10",
        ] {
            assert!(argv.iter().any(|a| a == wanted), "{wanted} in {argv:?}");
        }
    }
}
