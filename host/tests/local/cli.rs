//! The host binary's command line without a computer: `--help`, `--version`
//! and what an unknown argument gets. Each check runs the real binary and
//! compares its stdout, stderr and exit status exactly.

use crate::support::mcp::host_bin;
use std::process::{Command, Output};

/// Runs the host with `args`, printing what it did when a check fails.
fn run(args: &[&str]) -> Output {
    let output = Command::new(host_bin())
        .args(args)
        .env_remove("COMPUTER_USE_LOG")
        .output()
        .unwrap_or_else(|e| panic!("{} {args:?} did not run: {e}", host_bin().display()));
    eprintln!(
        "{} {args:?}: {}\n--- stdout\n{}--- stderr\n{}",
        host_bin().display(),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("utf-8 stdout")
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("utf-8 stderr")
}

#[test]
fn help_lists_every_command_and_exits_0() {
    let help = run(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert_eq!(stderr(&help), "");
    let text = stdout(&help);
    for usage in [
        "computer-use-mcp          serve MCP over stdio",
        "computer-use-mcp serve    the same",
        "computer-use-mcp serve --http 127.0.0.1:PORT [--allow-remote]",
        "computer-use-mcp info ",
        "computer-use-mcp doctor [--json] [--deep]",
        "computer-use-mcp review PATH",
        "computer-use-mcp review --unattested PATH",
        "computer-use-mcp review --list",
        "computer-use-mcp review --fetch ID [PATH]",
        "computer-use-mcp snapshot save NAME [--note TEXT]",
        "computer-use-mcp snapshot list",
        "computer-use-mcp snapshot restore NAME --yes [--end-sessions]",
        "computer-use-mcp snapshot rm NAME --yes",
        "computer-use-mcp reset --yes [--end-sessions]",
        "computer-use-mcp --help",
        "computer-use-mcp --version",
    ] {
        assert!(
            text.contains(usage),
            "`{usage}` missing from --help:\n{text}"
        );
    }
    for alias in ["-h", "help"] {
        let same = run(&[alias]);
        assert_eq!(same.status.code(), Some(0), "{alias}");
        assert_eq!(stdout(&same), text, "{alias}");
    }
}

#[test]
fn version_prints_the_crate_version_and_exits_0() {
    for flag in ["--version", "-V"] {
        let version = run(&[flag]);
        assert_eq!(version.status.code(), Some(0), "{flag}");
        assert_eq!(stderr(&version), "", "{flag}");
        assert_eq!(
            stdout(&version),
            format!("computer-use-mcp {}\n", env!("CARGO_PKG_VERSION")),
            "{flag}"
        );
    }
}

#[test]
fn an_unknown_argument_exits_2_with_the_help_on_stderr() {
    let help = stdout(&run(&["--help"]));
    let unknown = run(&["--bogus"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert_eq!(stdout(&unknown), "", "stdout carries MCP frames only");
    assert_eq!(
        stderr(&unknown),
        format!("computer-use-mcp: unknown argument `--bogus`\n\n{help}")
    );
    let bad_serve = run(&["serve", "--bogus"]);
    assert_eq!(bad_serve.status.code(), Some(2));
    assert_eq!(stdout(&bad_serve), "");
    assert_eq!(
        stderr(&bad_serve),
        format!("computer-use-mcp: unknown argument `--bogus` for `serve`\n\n{help}")
    );
}
