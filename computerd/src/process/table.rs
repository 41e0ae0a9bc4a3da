//! The live processes of the machine, read from `/proc`: who is whose
//! parent and group, when each started and what it runs. Used to find
//! everything a shell command started, and to tell a DevTools bridge (and
//! the `chrome-devtools-mcp` it runs) from a process that got its pid later.

use std::path::Path;

/// One line of the process table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessEntry {
    pub pid: libc::pid_t,
    pub parent: libc::pid_t,
    pub group: libc::pid_t,
}

/// Every live process but computerd itself. Zombies are left out: they run
/// nothing and cannot be killed again.
pub fn process_table() -> Vec<ProcessEntry> {
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
        .filter(|pid| *pid != own)
        .filter_map(process_entry)
        .collect()
}

/// The fields of `/proc/<pid>/stat` after the process name, starting with
/// the state (field 3).
fn stat_fields(pid: libc::pid_t) -> Option<Vec<String>> {
    let stat =
        std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("stat")).ok()?;
    // The name in parentheses may hold spaces and parentheses: fields
    // start after the last `)`.
    Some(
        stat.rsplit_once(')')?
            .1
            .split_whitespace()
            .map(str::to_string)
            .collect(),
    )
}

/// When the process started, in clock ticks after boot (`/proc/<pid>/stat`
/// field 22). A pid is reused once its process is gone; pid and start time
/// together name one process for as long as the machine runs. `None` when
/// the process is gone or a zombie.
pub fn start_time(pid: libc::pid_t) -> Option<u64> {
    let fields = stat_fields(pid)?;
    if matches!(fields.first()?.as_str(), "Z" | "X" | "x") {
        return None;
    }
    // Field 22, counted from field 3 at index 0.
    fields.get(22 - 3)?.parse().ok()
}

/// The arguments the process was started with (`/proc/<pid>/cmdline`);
/// `None` when it is gone.
pub fn command_line(pid: libc::pid_t) -> Option<Vec<String>> {
    let raw = std::fs::read(Path::new("/proc").join(pid.to_string()).join("cmdline")).ok()?;
    Some(
        raw.split(|b| *b == 0)
            .filter(|arg| !arg.is_empty())
            .map(|arg| String::from_utf8_lossy(arg).into_owned())
            .collect(),
    )
}

/// `/proc/<pid>/stat`, readable for every user's processes; `None` when
/// the process is gone or a zombie (exited, not reaped yet).
pub fn process_entry(pid: libc::pid_t) -> Option<ProcessEntry> {
    let fields = stat_fields(pid)?;
    if matches!(fields.first()?.as_str(), "Z" | "X" | "x") {
        return None;
    }
    let parent = fields.get(1)?.parse().ok()?;
    let group = fields.get(2)?.parse().ok()?;
    Some(ProcessEntry { pid, parent, group })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_has_a_start_time_and_a_command_line() {
        // `sh -c` waiting in its own `read` (a builtin: no child of its
        // own outlives it), with an argument holding a space.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "read -r line; :", "a b"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id() as libc::pid_t;
        // Until the child has exec'd, /proc shows the test's own arguments.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut args = command_line(pid);
        while args.as_ref().and_then(|a| a.first()).map(String::as_str) != Some("sh")
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
            args = command_line(pid);
        }
        let started = start_time(pid);
        child.kill().unwrap();
        child.wait().unwrap();
        let own = start_time(std::process::id() as libc::pid_t).unwrap();
        assert!(started.is_some_and(|t| t >= own), "{started:?} vs {own}");
        assert_eq!(args.unwrap(), ["sh", "-c", "read -r line; :", "a b"]);
        assert_eq!(start_time(pid), None, "a reaped process has no start time");
    }
}
