//! Programs the tests drive for real (Xvnc, Fluxbox, Chromium, curl...): a
//! test that finds one missing fails with the command that installs it,
//! so the suite never passes by skipping.

use std::path::{Path, PathBuf};

/// Installs everything the test suite drives.
const INSTALL_ALL: &str = "bash scripts/install-test-deps.sh";

/// Where `program` is on `PATH`, if it is.
pub fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// Where `program` is on `PATH`; panics with `install`, the command that
/// installs it, when it is missing.
pub fn require_program(program: &str, install: &str) -> PathBuf {
    find_program(program).unwrap_or_else(|| {
        panic!("`{program}` is not installed; run `{install}` (or `{INSTALL_ALL}`)")
    })
}

/// [`require_program`] for each program with the Debian package that
/// installs it.
pub fn require_programs(programs: &[(&str, &str)]) {
    for (program, package) in programs {
        require_program(program, &format!("apt-get install {package}"));
    }
}

/// The Playwright tests' folder, `computerd/tests/browser`, which the
/// viewer, handoff and walkthrough tests of both crates run with `node`;
/// panics with the command that installs what they need when it is missing.
pub fn require_playwright() -> PathBuf {
    require_program("node", "apt-get install nodejs");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../computerd/tests/browser");
    assert!(
        dir.join("node_modules/playwright-core").is_dir(),
        "Playwright is not installed; run `npm ci --prefix computerd/tests/browser` (scripts/test.sh does)"
    );
    dir
}
