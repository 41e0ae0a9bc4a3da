//! Running a command in the session's working folder.

use crate::duration::TimeoutArg;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellRequest {
    pub command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<TimeoutArg>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ShellResult {
    /// Null when the command was killed (timeout or signal).
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub timed_out: bool,
    /// Processes of a timed-out command that could not be killed: another
    /// user's (root's, through sudo) where computerd may not use sudo.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub survivors: u32,
    /// Processes in the computer the kernel's out-of-memory killer killed
    /// since this session's previous command (or its start): the command
    /// itself when it was killed by a signal, or anything else that ran.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub oom_kills: u64,
    /// The computer's memory limit in bytes, given with `oom_kills`; absent
    /// when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<u64>,
    pub stdout: String,
    pub stderr: String,
    /// Connections and lookups the network guard refused while the command
    /// ran, one line each (host, port, rule).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network_denials: Vec<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}
