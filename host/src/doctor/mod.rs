//! `computer-use-mcp doctor [--json] [--deep]`: checks, one by one, what the
//! computer needs on this machine and prints each with `ok`, `warn` or `err`
//! and the fix of each `warn` and `err`. The exit code is 1 when any check is
//! `err`.
//!
//! # Layout
//! - [`report`]: the checks' results, as text or JSON, and the exit code.
//! - [`engine`]: settings, the Docker endpoint and engine, free disk, the image.
//! - [`computer`]: the computer's container, its ports, computerd's health.
//! - [`deep`] (`--deep`): a spare screen of doctor's own, with its
//!   screenshot (read by [`picture`]), browser, DevTools and accessibility
//!   bus, then [`viewer`] (the page and its WebSocket) and [`vnc`] (a
//!   native VNC handshake).
//!
//! Every check has its own deadline, and a whole run has one too (10 s, or
//! 60 s with `--deep`): a later check gets what is left when that is less.
//! Checks only read, except `--deep`, which starts a stopped or missing
//! computer as `start_computer` would (that is what a user running it
//! wants to know works) and opens, then ends, a session no agent owns.

mod computer;
mod deep;
mod engine;
mod picture;
pub mod report;
mod viewer;
mod vnc;

use crate::settings::Env;
use report::{Outcome, Report};
use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;

/// A plain run ends within this.
pub const PLAIN_TOTAL: Duration = Duration::from_secs(10);
/// A `--deep` run ends within this, its spare session ended.
pub const DEEP_TOTAL: Duration = Duration::from_secs(60);

/// The command line after `doctor`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    pub json: bool,
    pub deep: bool,
}

/// An argument `doctor` does not take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`doctor` takes `--json` and `--deep`, not `{arg}`")]
pub struct UnknownDoctorArg {
    pub arg: String,
}

impl Options {
    pub fn parse(args: &[String]) -> Result<Options, UnknownDoctorArg> {
        let mut options = Options::default();
        for arg in args {
            match arg.as_str() {
                "--json" => options.json = true,
                "--deep" => options.deep = true,
                other => {
                    return Err(UnknownDoctorArg {
                        arg: other.to_string(),
                    })
                }
            }
        }
        Ok(options)
    }
}

/// What is left of a run's time.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    ends: Instant,
}

impl Budget {
    fn new(total: Duration) -> Budget {
        Budget {
            ends: Instant::now() + total,
        }
    }

    /// `own`, or less when the run has less left.
    fn cap(&self, own: Duration) -> Duration {
        own.min(self.ends.saturating_duration_since(Instant::now()))
    }
}

/// Runs one check with its deadline (capped by `budget`); running out of it
/// is an `err` that names the deadline, with `fix`. `None` from the check is
/// what it found for the next checks.
pub(crate) async fn timed<T>(
    budget: &Budget,
    own: Duration,
    fix: &str,
    check: impl Future<Output = (Outcome, Option<T>)>,
) -> (Outcome, Option<T>) {
    let deadline = budget.cap(own);
    match tokio::time::timeout(deadline, check).await {
        Ok(done) => done,
        Err(_) => (Outcome::timed_out(deadline, fix), None),
    }
}

/// Runs the checks `options` ask for against `env`.
pub async fn diagnose(env: &Env, options: Options) -> Report {
    let total = if options.deep {
        DEEP_TOTAL
    } else {
        PLAIN_TOTAL
    };
    let budget = Budget::new(total);
    let mut report = Report::default();
    let found = engine::check(env, &budget, &mut report).await;
    let computer = computer::check(&found, &budget, &mut report).await;
    if options.deep {
        deep::check(&found, computer, &budget, &mut report).await;
    }
    report
}

/// `computer-use-mcp doctor ARGS`: prints the report and returns the exit
/// code (2 for a bad command line).
pub async fn run(args: &[String]) -> i32 {
    let options = match Options::parse(args) {
        Ok(options) => options,
        Err(e) => {
            eprintln!("computer-use-mcp: {e}");
            return 2;
        }
    };
    let report = diagnose(&crate::settings::process_env(), options).await;
    if options.json {
        println!("{}", report.to_json());
    } else {
        print!("{report}");
    }
    report.exit_code()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_its_two_flags_and_refuses_others() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(Options::parse(&args(&[])), Ok(Options::default()));
        assert_eq!(
            Options::parse(&args(&["--deep", "--json"])),
            Ok(Options {
                json: true,
                deep: true
            })
        );
        assert_eq!(
            Options::parse(&args(&["--fix"])).unwrap_err().to_string(),
            "`doctor` takes `--json` and `--deep`, not `--fix`"
        );
    }

    #[tokio::test]
    async fn a_check_past_its_deadline_is_an_err_naming_it() {
        let budget = Budget::new(Duration::from_secs(10));
        let (outcome, found) = timed::<()>(
            &budget,
            Duration::from_millis(50),
            "try again",
            std::future::pending(),
        )
        .await;
        assert_eq!(outcome.status, report::Status::Err);
        assert_eq!(outcome.detail, "did not finish within its deadline of 50ms");
        assert_eq!(found, None);
    }

    #[tokio::test]
    async fn the_run_budget_caps_each_deadline() {
        let budget = Budget::new(Duration::from_millis(100));
        assert!(budget.cap(Duration::from_secs(5)) <= Duration::from_millis(100));
        assert_eq!(
            Budget::new(Duration::from_secs(60)).cap(Duration::from_secs(2)),
            Duration::from_secs(2)
        );
    }
}
