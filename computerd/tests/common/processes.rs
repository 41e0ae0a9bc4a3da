//! The processes running on this machine, read from `/proc`, so tests can
//! check that nothing a daemon started outlives what it belongs to.

/// The argument lists of every process that can be read.
pub fn command_lines() -> Vec<Vec<String>> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|raw| !raw.is_empty())
        .map(|raw| {
            raw.split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .collect()
}

/// True while some process runs exactly `args`.
pub fn running(args: &[&str]) -> bool {
    command_lines().iter().any(|line| line == args)
}
