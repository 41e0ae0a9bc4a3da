//! When an acting tool takes its screenshot: after a fixed wait, or once the
//! screen has been still for a while. `computer_act`, `open_path` and
//! `launch_app` share these options, their defaults and their checks.

use crate::error::InvalidInput;
use crate::limits::WAIT_MAX_MS;
use serde::{Deserialize, Serialize};

/// How an acting tool waits before its screenshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Settle {
    #[default]
    Fixed,
    Quiet,
}

/// Quiet mode: the screen must be still this long, by default.
pub const QUIET_DEFAULT_MS: u64 = 250;
pub const QUIET_MIN_MS: u64 = 50;
pub const QUIET_MAX_MS: u64 = 2000;
/// Quiet mode's longest wait when `settle_ms` is not given.
pub const QUIET_SETTLE_DEFAULT_MS: u64 = 3000;

/// A tool's settle options with every default filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settling {
    pub settle: Settle,
    /// `fixed`: the wait; `quiet`: the longest wait.
    pub settle_ms: u64,
    /// `quiet`: how long the screen must be still.
    pub quiet_ms: u64,
}

impl Settling {
    /// Fills in what the agent left out: `settle_ms` is `fixed_default_ms`
    /// in fixed mode (each tool has its own) and
    /// [`QUIET_SETTLE_DEFAULT_MS`] in quiet mode.
    pub fn resolve(
        settle: Settle,
        settle_ms: Option<u64>,
        quiet_ms: Option<u64>,
        fixed_default_ms: u64,
    ) -> Settling {
        Settling {
            settle,
            settle_ms: settle_ms.unwrap_or(match settle {
                Settle::Fixed => fixed_default_ms,
                Settle::Quiet => QUIET_SETTLE_DEFAULT_MS,
            }),
            quiet_ms: quiet_ms.unwrap_or(QUIET_DEFAULT_MS),
        }
    }

    pub fn validate(&self) -> Result<(), InvalidInput> {
        if self.settle_ms > WAIT_MAX_MS {
            return Err(InvalidInput(format!(
                "`settle_ms` is {}: the limit is {WAIT_MAX_MS} ms",
                self.settle_ms
            )));
        }
        if !(QUIET_MIN_MS..=QUIET_MAX_MS).contains(&self.quiet_ms) {
            return Err(InvalidInput(format!(
                "`quiet_ms` is {}: use {QUIET_MIN_MS} to {QUIET_MAX_MS} ms (default {QUIET_DEFAULT_MS})",
                self.quiet_ms
            )));
        }
        Ok(())
    }
}

/// A response from a computerd that does not report settling was settled.
pub(crate) fn default_settled() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_depend_on_the_mode_and_the_tool() {
        let fixed = Settling::resolve(Settle::Fixed, None, None, 0);
        assert_eq!((fixed.settle_ms, fixed.quiet_ms), (0, QUIET_DEFAULT_MS));
        let quiet = Settling::resolve(Settle::Quiet, None, None, 0);
        assert_eq!(quiet.settle_ms, QUIET_SETTLE_DEFAULT_MS);
        let given = Settling::resolve(Settle::Quiet, Some(1000), Some(100), 0);
        assert_eq!((given.settle_ms, given.quiet_ms), (1000, 100));
        assert_eq!(given.validate(), Ok(()));
    }

    #[test]
    fn limits_name_the_field() {
        let err = Settling::resolve(Settle::Fixed, Some(6000), None, 300)
            .validate()
            .unwrap_err()
            .to_string();
        assert_eq!(err, "`settle_ms` is 6000: the limit is 5000 ms");
        let err = Settling::resolve(Settle::Quiet, None, Some(10), 300)
            .validate()
            .unwrap_err()
            .to_string();
        assert_eq!(err, "`quiet_ms` is 10: use 50 to 2000 ms (default 250)");
    }
}
