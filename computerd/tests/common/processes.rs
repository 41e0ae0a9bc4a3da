//! The processes running on this machine, read from `/proc`, so tests can
//! check that nothing a daemon started outlives what it belongs to.

/// The argument lists of every process that can be read.
pub fn command_lines() -> Vec<Vec<String>> {
    processes().into_iter().map(|(_, args)| args).collect()
}

/// The id and argument list of every process that can be read.
pub fn processes() -> Vec<(i32, Vec<String>)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_string_lossy().parse::<i32>().ok()?;
            let raw = std::fs::read(e.path().join("cmdline")).ok()?;
            Some((pid, raw))
        })
        .filter(|(_, raw)| !raw.is_empty())
        .map(|(pid, raw)| {
            let args = raw
                .split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            (pid, args)
        })
        .collect()
}

/// True while some process runs exactly `args`.
pub fn running(args: &[&str]) -> bool {
    command_lines().iter().any(|line| line == args)
}
