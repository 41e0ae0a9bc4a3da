//! Durations as people write them in settings and tool arguments: `90` or
//! `90s` (seconds), `2m` (minutes), `1h` (hours).

use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("`{0}` is not a duration: use whole seconds (`90`), or a number with `s`, `m` or `h` (`90s`, `2m`, `1h`)")]
    Malformed(String),
    #[error("`{0}` is zero: a duration must be at least 1 second")]
    Zero(String),
}

/// Parses `90`, `90s`, `2m`, `1h` (surrounding spaces allowed). Zero is refused,
/// because every duration here is a limit that must let something run.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let trimmed = text.trim();
    let (digits, unit_secs) = match trimmed.char_indices().last() {
        Some((i, 's')) => (&trimmed[..i], 1),
        Some((i, 'm')) => (&trimmed[..i], 60),
        Some((i, 'h')) => (&trimmed[..i], 3600),
        _ => (trimmed, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(DurationError::Malformed(text.to_string()));
    }
    let count: u64 = digits
        .parse()
        .map_err(|_| DurationError::Malformed(text.to_string()))?;
    let secs = count
        .checked_mul(unit_secs)
        .ok_or_else(|| DurationError::Malformed(text.to_string()))?;
    if secs == 0 {
        return Err(DurationError::Zero(text.to_string()));
    }
    Ok(Duration::from_secs(secs))
}

/// A timeout given by an agent: whole seconds as a number, or a string in the
/// forms of [`parse_duration`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum TimeoutArg {
    Seconds(u64),
    Text(String),
}

impl TimeoutArg {
    pub fn to_duration(&self) -> Result<Duration, DurationError> {
        match self {
            TimeoutArg::Seconds(0) => Err(DurationError::Zero("0".into())),
            TimeoutArg::Seconds(s) => Ok(Duration::from_secs(*s)),
            TimeoutArg::Text(t) => parse_duration(t),
        }
    }
}

/// Writes a duration in the shortest exact form of [`parse_duration`].
pub fn format_duration(d: Duration) -> String {
    let secs = d.as_secs();
    if secs != 0 && secs.is_multiple_of(3600) {
        format!("{}h", secs / 3600)
    } else if secs != 0 && secs.is_multiple_of(60) {
        format!("{}m", secs / 60)
    } else {
        format!("{secs}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_every_form() {
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration(" 30m "), Ok(Duration::from_secs(1800)));
    }

    #[test]
    fn refuses_bad_forms() {
        for bad in [
            "",
            "s",
            "1.5m",
            "-3",
            "2d",
            "m2",
            "1 h",
            "abc",
            "99999999999999999999h",
        ] {
            assert!(
                matches!(parse_duration(bad), Err(DurationError::Malformed(_))),
                "{bad:?} should be malformed"
            );
        }
        assert_eq!(parse_duration("0m"), Err(DurationError::Zero("0m".into())));
    }

    #[test]
    fn timeout_arg_takes_numbers_and_text() {
        let n: TimeoutArg = serde_json::from_str("90").unwrap();
        let t: TimeoutArg = serde_json::from_str("\"2m\"").unwrap();
        assert_eq!(n.to_duration(), Ok(Duration::from_secs(90)));
        assert_eq!(t.to_duration(), Ok(Duration::from_secs(120)));
        assert!(TimeoutArg::Seconds(0).to_duration().is_err());
    }

    #[test]
    fn formats_shortest_form() {
        assert_eq!(format_duration(Duration::from_secs(3600)), "1h");
        assert_eq!(format_duration(Duration::from_secs(120)), "2m");
        assert_eq!(format_duration(Duration::from_secs(90)), "90s");
    }
}
