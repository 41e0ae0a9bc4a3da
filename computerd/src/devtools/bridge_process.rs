//! Telling screen N's bridge process from whatever got its pid later.
//!
//! `mcpc`'s session list keeps a bridge's pid after the bridge exits (idle
//! stop, crash). Once the container's pid counter wraps, that pid may be
//! another screen's Chromium or another agent's dev server, so a pid alone
//! never decides a kill: the process must run `mcpc` for `@cdt-N`, and it
//! must still be the process first seen (same start time).

use crate::process::{command_line, start_time};

/// One bridge process, as it was when first identified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BridgeProcess {
    pub pid: i32,
    /// Clock ticks after boot (`/proc/<pid>/stat` field 22): with the pid,
    /// this names one process for as long as the machine runs.
    pub start_time: u64,
}

impl BridgeProcess {
    /// The process `pid` if it is the bridge named `bridge` (`@cdt-N`):
    /// alive, not a zombie, and started as `mcpc`'s bridge for that name
    /// (`node …/mcpc/dist/bridge/index.js @cdt-N …`).
    pub fn identify(pid: i32, bridge: &str) -> Option<BridgeProcess> {
        if pid <= 0 {
            return None;
        }
        let before = start_time(pid)?;
        let runs_bridge = is_bridge_command(&command_line(pid)?, bridge);
        // The same process throughout: not one that exited and whose pid
        // was taken while its command line was read.
        (runs_bridge && start_time(pid) == Some(before)).then_some(BridgeProcess {
            pid,
            start_time: before,
        })
    }

    /// True while the process first identified still runs.
    pub fn is_alive(&self) -> bool {
        start_time(self.pid) == Some(self.start_time)
    }
}

/// An argument mentions `mcpc` (its program or script) and another is
/// exactly the bridge's name.
pub fn is_bridge_command(args: &[String], bridge: &str) -> bool {
    args.iter().any(|arg| arg.contains("mcpc")) && args.iter().any(|arg| arg == bridge)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn only_mcpcs_bridge_for_that_screen_counts() {
        let bridge = args(&[
            "/usr/bin/node",
            "/usr/local/lib/node_modules/@apify/mcpc/dist/bridge/index.js",
            "@cdt-2",
            r#"{"command":"chrome-devtools-mcp"}"#,
        ]);
        assert!(is_bridge_command(&bridge, "@cdt-2"));
        assert!(!is_bridge_command(&bridge, "@cdt-3"));
        assert!(!is_bridge_command(&bridge, "@cdt-22"));
        assert!(!is_bridge_command(&args(&["sleep", "600"]), "@cdt-2"));
        assert!(!is_bridge_command(
            &args(&["/usr/bin/chromium", "--user-data-dir=/tmp/cdt-2"]),
            "@cdt-2"
        ));
        assert!(!is_bridge_command(&args(&["echo", "@cdt-2"]), "@cdt-2"));
    }

    #[test]
    fn a_process_that_does_not_run_the_bridge_is_not_identified() {
        let mut sleep = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .unwrap();
        let found = BridgeProcess::identify(sleep.id() as i32, "@cdt-2");
        sleep.kill().unwrap();
        sleep.wait().unwrap();
        assert_eq!(found, None);
        assert_eq!(BridgeProcess::identify(0, "@cdt-2"), None);
        assert_eq!(BridgeProcess::identify(-1, "@cdt-2"), None);
    }
}
