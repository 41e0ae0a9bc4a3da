//! Which live processes belong to one command, read from `/proc`.
//!
//! A process belongs when it is in the command's process group, when its
//! environment carries the command's marker, or when it descends from one
//! that belongs. Descent matters for `sudo`: sudo resets the environment (the
//! marker is gone) and, with `use_pty`, runs the command in a session of its
//! own (outside the group); root's `environ` cannot be read anyway. Its
//! processes are still children of the sudo that the command started, as
//! long as they are looked at before that sudo is killed.

use std::collections::{HashMap, HashSet};
use std::path::Path;

pub(super) use crate::process::{process_table, ProcessEntry};

/// The pids of `table` that belong to the command of process group `group`
/// and `marker` (`NAME=value`), plus the descendants of `known` (members
/// found earlier, whose children may have lost the group and the marker).
pub(super) fn members(
    table: &[ProcessEntry],
    group: libc::pid_t,
    marker: &[u8],
    known: &HashSet<libc::pid_t>,
) -> HashSet<libc::pid_t> {
    let mut children: HashMap<libc::pid_t, Vec<libc::pid_t>> = HashMap::new();
    for entry in table {
        children.entry(entry.parent).or_default().push(entry.pid);
    }
    let mut found: HashSet<libc::pid_t> = HashSet::new();
    let mut todo: Vec<libc::pid_t> = table
        .iter()
        .filter(|e| e.group == group || known.contains(&e.pid) || has_marker(e.pid, marker))
        .map(|e| e.pid)
        .collect();
    // Children of known members that already exited are orphans now (their
    // parent is PID 1), so only live members lead to descendants.
    while let Some(pid) = todo.pop() {
        if found.insert(pid) {
            if let Some(kids) = children.get(&pid) {
                todo.extend(kids.iter().copied());
            }
        }
    }
    found
}

/// Whether `/proc/<pid>/environ` holds `marker`. Unreadable (another user,
/// already gone) means no.
pub(super) fn has_marker(pid: libc::pid_t, marker: &[u8]) -> bool {
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

    fn entry(pid: i32, parent: i32, group: i32) -> ProcessEntry {
        ProcessEntry { pid, parent, group }
    }

    #[test]
    fn descendants_outside_the_group_belong() {
        // 10 leads the group; 11 (sudo) started 12 in a session of its own,
        // which started 13. 20 is someone else's.
        let table = [
            entry(10, 1, 10),
            entry(11, 10, 10),
            entry(12, 11, 12),
            entry(13, 12, 12),
            entry(20, 1, 20),
        ];
        let found = members(&table, 10, b"NO_SUCH=marker", &HashSet::new());
        assert_eq!(found, HashSet::from([10, 11, 12, 13]));
    }

    #[test]
    fn known_members_keep_their_descendants() {
        // The group's leader is gone; 12 was found before and still runs.
        let table = [entry(12, 1, 12), entry(13, 12, 12), entry(20, 1, 20)];
        let found = members(&table, 10, b"NO_SUCH=marker", &HashSet::from([12]));
        assert_eq!(found, HashSet::from([12, 13]));
    }
}
