//! The processes one command starts, and killing all of them.
//!
//! `bash` gets a process group of its own, which covers its pipelines and
//! plain `&` jobs. A process that leaves the group (`setsid`, a daemon's double
//! fork) is still found: every process of the command inherits a marker
//! variable, `COMPUTERD_RUN=<uuid>`, and `/proc/<pid>/environ` shows it. That
//! misses only processes that threw their environment away (`env -i`) or that
//! computerd may not inspect (another user, setuid programs).

use super::{ShellError, ShellSpec};
use std::path::Path;
use std::process::Stdio;
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
        group: leader as libc::pid_t,
        marker: format!("{MARKER_VAR}={marker}").into_bytes(),
        armed: true,
    };
    Ok((child, tree))
}

/// Every process one command started. Dropped while armed (the call was
/// cancelled, or failed half way) it kills them, so nothing outlives a call
/// that never returned a result.
pub(super) struct ProcessTree {
    /// Process group id, which is bash's pid.
    group: libc::pid_t,
    /// The `NAME=value` entry to look for in `/proc/<pid>/environ`.
    marker: Vec<u8>,
    /// False once the command finished on its own: its detached jobs
    /// (`setsid nohup server >log 2>&1 &`) are meant to keep running.
    armed: bool,
}

impl ProcessTree {
    /// Leaves the processes alone from now on.
    pub(super) fn release(mut self) {
        self.armed = false;
    }

    /// SIGKILLs the process group and every process carrying the marker,
    /// repeating until passes stop finding new ones. Blocks for a few
    /// milliseconds (see [`QUIET_PASSES`]); it runs once per timed-out or
    /// cancelled command.
    pub(super) fn kill(&mut self) {
        self.armed = false;
        // SAFETY: kill(2) has no memory effects; a negative pid names the group.
        unsafe {
            libc::kill(-self.group, libc::SIGKILL);
        }
        let mut killed = Vec::new();
        let mut quiet = 0;
        for _ in 0..KILL_PASSES_MAX {
            let fresh: Vec<libc::pid_t> = marked_processes(&self.marker)
                .into_iter()
                .filter(|pid| !killed.contains(pid))
                .collect();
            if fresh.is_empty() {
                quiet += 1;
                if quiet == QUIET_PASSES {
                    return;
                }
                std::thread::sleep(PASS_PAUSE);
                continue;
            }
            quiet = 0;
            for pid in fresh {
                // SAFETY: as above.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
                killed.push(pid);
            }
        }
        tracing::warn!(
            group = self.group,
            "processes of a timed-out command kept appearing after {KILL_PASSES_MAX} passes"
        );
    }
}

impl Drop for ProcessTree {
    fn drop(&mut self) {
        if self.armed {
            self.kill();
        }
    }
}

/// Pids of live processes whose environment holds `marker` (`NAME=value`).
/// Exited processes have an empty environ, so zombies are not listed.
fn marked_processes(marker: &[u8]) -> Vec<libc::pid_t> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let own = std::process::id() as libc::pid_t;
    entries
        .filter_map(|entry| {
            entry
                .ok()?
                .file_name()
                .to_str()?
                .parse::<libc::pid_t>()
                .ok()
        })
        .filter(|pid| *pid != own && has_marker(*pid, marker))
        .collect()
}

fn has_marker(pid: libc::pid_t, marker: &[u8]) -> bool {
    // Unreadable (another user, already gone) means not ours.
    let Ok(environ) = std::fs::read(Path::new("/proc").join(pid.to_string()).join("environ"))
    else {
        return false;
    };
    environ
        .split(|byte| *byte == 0)
        .any(|entry| entry == marker)
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
        while !marked_processes(marker.as_bytes()).contains(&pid) {
            assert!(
                std::time::Instant::now() < deadline,
                "pid {pid} never showed its marker"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let other = format!("{MARKER_VAR}={}", uuid::Uuid::new_v4());
        assert!(!marked_processes(other.as_bytes()).contains(&pid));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!marked_processes(marker.as_bytes()).contains(&pid));
    }
}
