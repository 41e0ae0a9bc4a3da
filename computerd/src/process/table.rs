//! The live processes of the machine, read from `/proc`: who is whose
//! parent and group. Used to find everything a shell command started, and
//! the `chrome-devtools-mcp` a DevTools bridge runs.

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

/// `/proc/<pid>/stat`, readable for every user's processes; `None` when
/// the process is gone or a zombie (exited, not reaped yet).
pub fn process_entry(pid: libc::pid_t) -> Option<ProcessEntry> {
    let stat =
        std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("stat")).ok()?;
    // The name in parentheses may hold spaces and parentheses: fields
    // start after the last `)`.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?;
    if matches!(state, "Z" | "X" | "x") {
        return None;
    }
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    Some(ProcessEntry { pid, parent, group })
}
