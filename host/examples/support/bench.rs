//! What the benches share: the median of their samples and `docker` run to
//! its answer. Each bench includes this file as a module of its own
//! (`#[path]`), since examples are crates apart.

use std::process::{Command, Stdio};

/// The middle sample (the upper one of an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    v[v.len() / 2]
}

/// Runs `docker ARGS` (reading nothing) to its end and returns its trimmed
/// output; panics with its error output when it fails.
pub fn docker_ok(args: &[&str]) -> String {
    let out = Command::new("docker")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("docker runs");
    assert!(
        out.status.success(),
        "`docker {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
