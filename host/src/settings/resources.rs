//! `COMPUTER_USE_MEMORY` and `COMPUTER_USE_CPUS`: how much of the engine's
//! machine a new computer may use. Read with the other computer settings and
//! applied when the container is created; the engine's own size, which the
//! default depends on, is only known then (see `docker::limits`).

use super::{get, Env, SettingsError};

pub const MEMORY: &str = "COMPUTER_USE_MEMORY";
pub const CPUS: &str = "COMPUTER_USE_CPUS";

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;
const TIB: u64 = 1024 * GIB;

/// The smallest memory limit one may set: computerd, Xvnc and one screen's
/// desktop start in it, though a browser does not fit. Tests use it to make
/// the out-of-memory killer strike quickly.
pub const MEMORY_SET_MIN: u64 = 256 * MIB;
/// Docker's own lower bound for `--cpus` (one hundredth of a CPU).
pub const NANO_CPUS_MIN: i64 = 10_000_000;
const NANO_PER_CPU: f64 = 1e9;

/// The memory limit of a new computer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryLimit {
    /// A share of the engine's memory, never under a floor
    /// (`docker::limits::default_memory`).
    EngineShare,
    /// `0`: no limit.
    Unlimited,
    /// A size in bytes, at least [`MEMORY_SET_MIN`].
    Bytes(u64),
}

/// What a new computer may use; see the module comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceLimits {
    pub memory: MemoryLimit,
    /// CPU time in billionths of a CPU, as Docker's `NanoCpus`; `None`: no
    /// limit.
    pub nano_cpus: Option<i64>,
    /// How many computers the engine's default share of memory is divided
    /// among: the tenants of an HTTP server, 1 otherwise.
    pub sharing: u32,
}

impl Default for ResourceLimits {
    fn default() -> ResourceLimits {
        ResourceLimits {
            memory: MemoryLimit::EngineShare,
            nano_cpus: None,
            sharing: 1,
        }
    }
}

impl ResourceLimits {
    pub fn from_env(env: &Env) -> Result<ResourceLimits, SettingsError> {
        Ok(ResourceLimits {
            memory: match get(env, MEMORY) {
                None => MemoryLimit::EngineShare,
                Some(v) => memory(v)?,
            },
            nano_cpus: match get(env, CPUS) {
                None => None,
                Some(v) => nano_cpus(v)?,
            },
            sharing: 1,
        })
    }
}

/// `4g`, `4096m`, `2GiB`, `1.5g`, a number of bytes, or `0`. Units are
/// powers of 1024 whatever their spelling, as in Docker's `--memory`.
fn memory(value: &str) -> Result<MemoryLimit, SettingsError> {
    let err = || {
        SettingsError {
        name: MEMORY,
        value: value.to_string(),
        expected: format!(
            "use a size of at least {} such as `4g`, `4096m` or `2GiB` (units of 1024), or `0` for no limit; unset, it is 75% of the engine's memory and at least 2 GiB",
            format_size(MEMORY_SET_MIN)
        ),
    }
    };
    let split = value
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(value.len());
    let (number, unit) = value.split_at(split);
    let unit = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => KIB,
        "m" | "mb" | "mib" => MIB,
        "g" | "gb" | "gib" => GIB,
        "t" | "tb" | "tib" => TIB,
        _ => return Err(err()),
    };
    let number: f64 = number.parse().map_err(|_| err())?;
    if number == 0.0 {
        return Ok(MemoryLimit::Unlimited);
    }
    let bytes = (number * unit as f64).round();
    // Docker takes the limit as a signed 64-bit number.
    if !(MEMORY_SET_MIN as f64..=i64::MAX as f64).contains(&bytes) {
        return Err(err());
    }
    Ok(MemoryLimit::Bytes(bytes as u64))
}

/// `1.5`, `2`, `0.5`, or `0` for no limit. Whether the engine has that many
/// CPUs is checked when the computer is created.
fn nano_cpus(value: &str) -> Result<Option<i64>, SettingsError> {
    let err = || {
        SettingsError {
        name: CPUS,
        value: value.to_string(),
        expected: "use a number of CPUs from 0.01 up to the engine's CPU count, such as `1.5`, or `0` for no limit".into(),
    }
    };
    // `f64::from_str` also takes `inf`, `NaN` and exponents; only plain
    // decimals are meant.
    if !value.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(err());
    }
    let cpus: f64 = value.parse().map_err(|_| err())?;
    if cpus == 0.0 {
        return Ok(None);
    }
    let nano = (cpus * NANO_PER_CPU).round();
    if !(NANO_CPUS_MIN as f64..=1e6 * NANO_PER_CPU).contains(&nano) {
        return Err(err());
    }
    Ok(Some(nano as i64))
}

/// A size for people: `2 GiB`, `1.5 GiB`, `512 MiB`, `300 KiB`, `17 bytes`.
pub fn format_size(bytes: u64) -> String {
    let (unit, name) = match bytes {
        b if b >= TIB => (TIB, "TiB"),
        b if b >= GIB => (GIB, "GiB"),
        b if b >= MIB => (MIB, "MiB"),
        b if b >= KIB => (KIB, "KiB"),
        _ => return format!("{bytes} bytes"),
    };
    let value = bytes as f64 / unit as f64;
    let text = format!("{value:.1}");
    let text = text.strip_suffix(".0").unwrap_or(&text);
    format!("{text} {name}")
}

/// A CPU count for people: `1.5`, `2`.
pub fn format_cpus(nano_cpus: i64) -> String {
    let text = format!("{:.2}", nano_cpus as f64 / NANO_PER_CPU);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn limits(pairs: &[(&str, &str)]) -> Result<ResourceLimits, SettingsError> {
        ResourceLimits::from_env(&env(pairs))
    }

    #[test]
    fn unset_means_a_share_of_the_engine_and_no_cpu_limit() {
        assert_eq!(limits(&[]).unwrap(), ResourceLimits::default());
        assert_eq!(
            limits(&[(MEMORY, " "), (CPUS, "")]).unwrap(),
            ResourceLimits {
                memory: MemoryLimit::EngineShare,
                nano_cpus: None,
                sharing: 1,
            }
        );
    }

    #[test]
    fn reads_sizes_in_units_of_1024() {
        for (text, bytes) in [
            ("4g", 4 * GIB),
            ("4G", 4 * GIB),
            ("4096m", 4 * GIB),
            ("2GiB", 2 * GIB),
            ("2 GB", 2 * GIB),
            ("1.5g", 3 * GIB / 2),
            ("262144k", 256 * MIB),
            ("268435456", 256 * MIB),
            ("1t", TIB),
        ] {
            assert_eq!(
                limits(&[(MEMORY, text)]).unwrap().memory,
                MemoryLimit::Bytes(bytes),
                "{text}"
            );
        }
        for none in ["0", "0g", "0.0"] {
            assert_eq!(
                limits(&[(MEMORY, none)]).unwrap().memory,
                MemoryLimit::Unlimited
            );
        }
    }

    #[test]
    fn refuses_bad_or_tiny_sizes_naming_the_variable_and_the_minimum() {
        for bad in [
            "255m",
            "100",
            "4x",
            "g",
            "-1g",
            "4 g b",
            "1e9",
            "lots",
            "99999999t",
        ] {
            assert_eq!(
                limits(&[(MEMORY, bad)]).unwrap_err().to_string(),
                format!("`COMPUTER_USE_MEMORY` is `{bad}`: use a size of at least 256 MiB such as `4g`, `4096m` or `2GiB` (units of 1024), or `0` for no limit; unset, it is 75% of the engine's memory and at least 2 GiB"),
            );
        }
    }

    #[test]
    fn reads_cpus_as_nano_cpus() {
        for (text, nano) in [
            ("1.5", 1_500_000_000),
            ("2", 2_000_000_000),
            ("0.01", 10_000_000),
        ] {
            assert_eq!(
                limits(&[(CPUS, text)]).unwrap().nano_cpus,
                Some(nano),
                "{text}"
            );
        }
        assert_eq!(limits(&[(CPUS, "0")]).unwrap().nano_cpus, None);
        for bad in ["0.001", "-1", "two", "1e3", "inf", "NaN", "1,5"] {
            assert_eq!(
                limits(&[(CPUS, bad)]).unwrap_err().to_string(),
                format!("`COMPUTER_USE_CPUS` is `{bad}`: use a number of CPUs from 0.01 up to the engine's CPU count, such as `1.5`, or `0` for no limit"),
            );
        }
    }

    #[test]
    fn formats_sizes_and_cpus_for_people() {
        assert_eq!(format_size(2 * GIB), "2 GiB");
        assert_eq!(format_size(3 * GIB / 2), "1.5 GiB");
        assert_eq!(format_size(512 * MIB), "512 MiB");
        assert_eq!(format_size(17), "17 bytes");
        assert_eq!(format_cpus(1_500_000_000), "1.5");
        assert_eq!(format_cpus(2_000_000_000), "2");
    }
}
