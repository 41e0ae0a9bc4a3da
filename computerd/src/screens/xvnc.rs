//! The Xvnc and Fluxbox command lines, the folder of X sockets, and
//! clearing the lock a crashed X server left behind (a restarted container
//! keeps its /tmp).

use crate::screen_facts::ScreenEnv;
use computer_protocol::ScreenSize;
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
        .args(["-nolisten", "tcp"]);
    // Only programs with the desktop's cookie (or the agent's untrusted
    // one, which this server makes later) may connect.
    if let Some(auth) = crate::x_auth::installed() {
        cmd.arg("-auth").arg(auth.desktop_file());
    }
    cmd.stdin(Stdio::null())
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

pub use crate::display::SOCKET_DIR;

/// Makes [`SOCKET_DIR`], open to all with the sticky bit, unless it is
/// there. The image has it; on a machine where no X server ran yet (a fresh
/// test machine), two Xvnc started at once race to make it and the loser
/// refuses to start. It is made under another name and renamed into place,
/// so no X server ever sees it half set up.
pub fn ensure_socket_dir() -> std::io::Result<()> {
    ensure_shared_dir(Path::new(SOCKET_DIR))
}

fn ensure_shared_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    static STAGING: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    if dir.is_dir() {
        return Ok(());
    }
    let staging = PathBuf::from(format!(
        "{}.{}.{}",
        dir.display(),
        std::process::id(),
        STAGING.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir(&staging)?;
    let placed = std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o1777))
        .and_then(|()| rename_unless_there(&staging, dir));
    let _ = std::fs::remove_dir(&staging);
    match placed {
        Err(_) if dir.is_dir() => Ok(()),
        other => other,
    }
}

/// `rename(from, to)` that fails rather than replace an existing `to`.
fn rename_unless_there(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
    };
    let (from, to) = (c(from)?, c(to)?);
    // SAFETY: two NUL-terminated paths valid for the call.
    let done = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The lock file and socket of display `:n`.
pub fn lock_paths(n: u32) -> (PathBuf, PathBuf) {
    (
        PathBuf::from(format!("/tmp/.X{n}-lock")),
        PathBuf::from(format!("{SOCKET_DIR}/X{n}")),
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
    fn a_shared_dir_made_by_many_at_once_is_whole_for_all() {
        use std::os::unix::fs::PermissionsExt;
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join(".X11-unix");
        let makers: Vec<_> = (0..8)
            .map(|_| {
                let dir = dir.clone();
                std::thread::spawn(move || ensure_shared_dir(&dir))
            })
            .collect();
        for maker in makers {
            maker
                .join()
                .unwrap()
                .expect("every caller finds the folder made");
        }
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o7777, 0o1777);
        let left: Vec<_> = std::fs::read_dir(parent.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no staging folder is left behind");
    }

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
