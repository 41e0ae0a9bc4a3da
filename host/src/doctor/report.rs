//! What `doctor` found: one [`Check`] per line of text, or one JSON object
//! `{"checks": [{"name", "status", "detail", "fix"}]}` with `--json`, where
//! `fix` is `null` for a check that is `ok`.

use serde::Serialize;
use std::fmt;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    /// Works now, but may not for long or not everywhere.
    Warn,
    /// Something `start_computer` or a tool needs does not work.
    Err,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad`, so that `{:<4}` lines the names up.
        f.pad(match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Err => "err",
        })
    }
}

/// How one check ended, before it has its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub status: Status,
    pub detail: String,
    /// Always `Some` for `warn` and `err`, `None` for `ok`.
    pub fix: Option<String>,
}

impl Outcome {
    pub fn ok(detail: impl Into<String>) -> Outcome {
        Outcome {
            status: Status::Ok,
            detail: detail.into(),
            fix: None,
        }
    }

    pub fn warn(detail: impl Into<String>, fix: impl Into<String>) -> Outcome {
        Outcome {
            status: Status::Warn,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    pub fn err(detail: impl Into<String>, fix: impl Into<String>) -> Outcome {
        Outcome {
            status: Status::Err,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    /// A check that ran out of its own deadline.
    pub fn timed_out(deadline: Duration, fix: impl Into<String>) -> Outcome {
        Outcome::err(
            format!("did not finish within its deadline of {}", secs(deadline)),
            fix,
        )
    }
}

/// `3s`, `2.5s` or `50ms`.
pub fn secs(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub status: Status,
    pub detail: String,
    pub fix: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    pub checks: Vec<Check>,
}

impl Report {
    pub fn add(&mut self, name: &'static str, outcome: Outcome) {
        self.checks.push(Check {
            name,
            status: outcome.status,
            detail: outcome.detail,
            fix: outcome.fix,
        });
    }

    /// 1 when any check is `err`, else 0.
    pub fn exit_code(&self) -> i32 {
        i32::from(self.checks.iter().any(|c| c.status == Status::Err))
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serializes")
    }
}

/// One line per check, `status  name  detail`, and the fix of a `warn` or
/// `err` on the next line, indented.
impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self.checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
        for c in &self.checks {
            writeln!(f, "{:<4}  {:<width$}  {}", c.status, c.name, c.detail)?;
            if let Some(fix) = &c.fix {
                writeln!(f, "{:<4}  {:<width$}  fix: {fix}", "", "")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Report {
        let mut r = Report::default();
        r.add(
            "docker-engine",
            Outcome::ok("Docker 27.5.1 on linux/x86_64"),
        );
        r.add("disk", Outcome::warn("3.1 GB free", "free space"));
        r
    }

    #[test]
    fn one_line_per_check_and_the_fix_under_it() {
        assert_eq!(
            sample().to_string(),
            "ok    docker-engine  Docker 27.5.1 on linux/x86_64\n\
             warn  disk           3.1 GB free\n\
             \x20     \x20              fix: free space\n"
        );
    }

    #[test]
    fn exit_code_is_one_only_with_an_err() {
        let mut r = sample();
        assert_eq!(r.exit_code(), 0, "a warn is no failure");
        r.add("image", Outcome::err("missing", "build it"));
        assert_eq!(r.exit_code(), 1);
        assert_eq!(Report::default().exit_code(), 0);
    }

    #[test]
    fn json_has_the_four_fields_and_a_null_fix_when_ok() {
        let v: serde_json::Value = serde_json::from_str(&sample().to_json()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"checks": [
                {"name": "docker-engine", "status": "ok", "detail": "Docker 27.5.1 on linux/x86_64", "fix": null},
                {"name": "disk", "status": "warn", "detail": "3.1 GB free", "fix": "free space"},
            ]})
        );
    }

    #[test]
    fn a_timeout_names_its_deadline() {
        let o = Outcome::timed_out(Duration::from_secs(3), "check Docker");
        assert_eq!(o.status, Status::Err);
        assert_eq!(o.detail, "did not finish within its deadline of 3s");
        assert_eq!(
            Outcome::timed_out(Duration::from_millis(2500), "x").detail,
            "did not finish within its deadline of 2.5s"
        );
    }
}
