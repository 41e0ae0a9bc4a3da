//! The processes one command starts, and killing all of them.
//!
//! `bash` gets a process group of its own, which covers its pipelines and
//! plain `&` jobs. A process that leaves the group (`setsid`, a daemon's double
//! fork) is still found: every process of the command inherits a marker
//! variable, `COMPUTERD_RUN=<uuid>`, and `/proc/<pid>/environ` shows it; so is
//! every descendant of those (`sudo`'s processes, see `family`). That misses
//! only processes that threw their environment away (`env -i`) and left the
//! tree (a double fork) before they were looked at.

use super::family;
use super::{ShellError, ShellSpec};
use std::collections::HashSet;
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;
use tokio::process::{Child, Command};

/// Name of the variable that marks every process of one command.
pub(super) const MARKER_VAR: &str = "COMPUTERD_RUN";

/// Passes over `/proc` at most, while passes still find new processes (a
/// process forking while it is killed).
const KILL_PASSES_MAX: usize = 50;

/// Passes in a row that must find nothing new before the killing stops. A
/// process in the middle of `exec` shows an empty environ for a moment, so one
/// empty pass is not proof; the pause between passes outlasts that moment.
const QUIET_PASSES: usize = 3;
const PASS_PAUSE: Duration = Duration::from_millis(5);

/// Starts `bash -lc <command>` as the leader of a new process group.
pub(super) fn spawn(spec: &ShellSpec) -> Result<(Child, ProcessTree), ShellError> {
    let marker = uuid::Uuid::new_v4().to_string();
    let mut command = Command::new("bash");
    // main removed them from computerd's environment already; this keeps
    // them out when the library runs inside another program (tests).
    for name in crate::config::daemon_variables() {
        command.env_remove(name);
    }
    command
        .arg("-lc")
        .arg(&spec.command)
        .current_dir(&spec.cwd)
        .envs(spec.env.iter().map(|(name, value)| (name, value)))
        .env(MARKER_VAR, &marker)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let child = command.spawn().map_err(|err| {
        // A missing working folder also fails the spawn with "not found";
        // say which of the two it was.
        if spec.cwd.is_dir() {
            ShellError::Spawn(err)
        } else {
            ShellError::CwdMissing(spec.cwd.clone())
        }
    })?;
    let leader = child.id().ok_or_else(|| {
        ShellError::Wait(std::io::Error::other("bash exited before its pid was read"))
    })?;
    let tree = ProcessTree {
        family: Some(Family {
            group: leader as libc::pid_t,
            marker: format!("{MARKER_VAR}={marker}").into_bytes(),
        }),
    };
    Ok((child, tree))
}

/// Every process one command started. Dropped while armed (the call was
/// cancelled, or failed half way) it kills them, so nothing outlives a call
/// that never returned a result.
pub(super) struct ProcessTree {
    /// What to kill; `None` once killed or released.
    family: Option<Family>,
}

impl ProcessTree {
    /// Leaves the processes alone from now on.
    pub(super) fn release(mut self) {
        self.family = None;
    }

    /// Kills every process of the command (see [`Family::kill`]) on a
    /// blocking thread: it scans `/proc` and pauses between passes, which
    /// must not stall the async workers. Returns how many processes could not
    /// be killed.
    pub(super) async fn kill(mut self) -> usize {
        let Some(family) = self.family.take() else {
            return 0;
        };
        crate::blocking::run(move || family.kill()).await
    }
}

impl Drop for ProcessTree {
    fn drop(&mut self) {
        let Some(family) = self.family.take() else {
            return;
        };
        // Dropped on an async worker (a cancelled call): kill off it.
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn_blocking(move || family.kill());
            }
            Err(_) => {
                family.kill();
            }
        }
    }
}

/// How one command's processes are recognised (see `family`).
struct Family {
    /// Process group id, which is bash's pid.
    group: libc::pid_t,
    /// The `NAME=value` entry to look for in `/proc/<pid>/environ`.
    marker: Vec<u8>,
}

impl Family {
    /// SIGKILLs the process group and every process that belongs to the
    /// command, repeating until passes stop finding new ones. Processes of
    /// another user (root, through `sudo`) are killed with `sudo -n kill`
    /// when computerd may use sudo without a password, as in the container.
    /// Blocks for a few milliseconds (see [`QUIET_PASSES`]), longer when sudo
    /// is needed. Returns how many processes are still alive at the end.
    fn kill(self) -> usize {
        let mut known: HashSet<libc::pid_t> = HashSet::new();
        let mut refused: HashSet<libc::pid_t> = HashSet::new();
        let mut quiet = 0;
        let mut first = true;
        for _ in 0..KILL_PASSES_MAX {
            // Read before killing: a killed parent's children become PID 1's
            // and no longer show where they came from.
            let table = family::process_table();
            let fresh: Vec<libc::pid_t> = family::members(&table, self.group, &self.marker, &known)
                .into_iter()
                .filter(|pid| !known.contains(pid))
                .collect();
            if first {
                // SAFETY: kill(2) has no memory effects; a negative pid
                // names the group.
                unsafe {
                    libc::kill(-self.group, libc::SIGKILL);
                }
                first = false;
            }
            if fresh.is_empty() {
                quiet += 1;
                if quiet == QUIET_PASSES {
                    return survivors(&refused);
                }
                std::thread::sleep(PASS_PAUSE);
                continue;
            }
            quiet = 0;
            let mut others = Vec::new();
            for pid in fresh {
                known.insert(pid);
                // SAFETY: as above.
                let sent = unsafe { libc::kill(pid, libc::SIGKILL) } == 0;
                if !sent && std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM) {
                    others.push(pid);
                }
            }
            if !others.is_empty() {
                kill_as_root(&others);
                refused.extend(others);
            }
        }
        tracing::warn!(
            group = self.group,
            "processes of a timed-out command kept appearing after {KILL_PASSES_MAX} passes"
        );
        survivors(&refused)
    }
}

/// How long processes killed through sudo get to disappear before they
/// count as survivors.
const ROOT_KILL_WAIT: Duration = Duration::from_secs(2);

/// SIGKILLs processes of other users with `sudo -n kill`, when sudo works
/// without a password.
fn kill_as_root(pids: &[libc::pid_t]) {
    if !sudo_works() {
        return;
    }
    let status = std::process::Command::new("sudo")
        .args(["-n", "kill", "-KILL", "--"])
        .args(pids.iter().map(|pid| pid.to_string()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    // kill fails when one of them exited meanwhile; survivors are counted
    // afterwards either way.
    if let Err(e) = status {
        tracing::warn!("could not run `sudo -n kill`: {e}");
    }
}

/// Whether `sudo -n` runs commands as root here; asked once.
fn sudo_works() -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(|| {
        std::process::Command::new("sudo")
            .args(["-n", "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    })
}

/// How many of the processes that refused a plain kill still run, after
/// giving a root kill a moment to land.
fn survivors(refused: &HashSet<libc::pid_t>) -> usize {
    if refused.is_empty() {
        return 0;
    }
    let deadline = std::time::Instant::now() + ROOT_KILL_WAIT;
    loop {
        let alive: HashSet<libc::pid_t> =
            family::process_table().into_iter().map(|e| e.pid).collect();
        let left = refused.iter().filter(|pid| alive.contains(pid)).count();
        if left == 0 || std::time::Instant::now() >= deadline {
            if left > 0 {
                tracing::warn!("{left} processes of a killed command run as another user and could not be killed");
            }
            return left;
        }
        std::thread::sleep(PASS_PAUSE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_process_by_its_marker_and_not_others() {
        let marker = format!("{MARKER_VAR}={}", uuid::Uuid::new_v4());
        let (name, value) = marker.split_once('=').unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .env(name, value)
            .spawn()
            .unwrap();
        let pid = child.id() as libc::pid_t;
        // The environ reads empty while `exec` is still setting it up.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let marked = |marker: &str| {
            family::members(
                &family::process_table(),
                -1,
                marker.as_bytes(),
                &HashSet::new(),
            )
        };
        while !marked(&marker).contains(&pid) {
            assert!(
                std::time::Instant::now() < deadline,
                "pid {pid} never showed its marker"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let other = format!("{MARKER_VAR}={}", uuid::Uuid::new_v4());
        assert!(!marked(&other).contains(&pid));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!marked(&marker).contains(&pid));
    }
}
