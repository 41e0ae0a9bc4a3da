//! computerd's settings as a person or the image gives them: the real
//! binary, run with an environment of the test's own (nothing of the
//! caller's leaks in), refusing bad values at start. Each run stops at the
//! settings, so no X server, port or Docker engine is needed.
//!
//! The unit tests in `src/config/` check each value through its flag; these
//! check what only the process shows: variables, a flag over its variable,
//! the exit status, and which stream says what.

use std::path::Path;
use std::process::{Command, Output};

const TOKEN: &str = "0123456789abcdef";
/// A home folder that does not exist: computerd checks it after every other
/// setting, so a run that gets this far read all the others.
const NO_HOME: &str = "/nonexistent/computerd-settings-test";
/// The refusal a run that got as far as the home folder ends with.
const NO_HOME_ERROR: &str = "computerd: `COMPUTERD_HOME` is `/nonexistent/computerd-settings-test`: the folder does not exist; create it or point to an existing one\n";

/// Runs computerd with `args` and only the variables `env`. What it did is
/// printed, and so shown when an assertion about it fails.
fn computerd(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_computerd"));
    command
        .args(args)
        .env_clear()
        .envs(env.iter().copied())
        .current_dir(std::env::temp_dir());
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    eprintln!(
        "ran {command:?}\nstatus: {}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        stdout(&output),
        stderr(&output)
    );
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn help_lists_every_flag_with_its_variable_on_stdout() {
    let out = computerd(
        &["--help"],
        &[("COMPUTERD_TOKEN", "secret-token-0123456789")],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stderr(&out), "");
    let help = stdout(&out);
    for (flag, variable) in [
        ("--listen", "COMPUTERD_LISTEN"),
        ("--token", "COMPUTERD_TOKEN"),
        ("--token-file", "COMPUTERD_TOKEN_FILE"),
        ("--home", "COMPUTERD_HOME"),
        ("--display-base", "COMPUTERD_DISPLAY_BASE"),
        ("--rfb-port-base", "COMPUTERD_RFB_PORT_BASE"),
        ("--rfb-interface", "COMPUTERD_RFB_INTERFACE"),
        ("--port-base", "COMPUTER_USE_PORT_BASE"),
        ("--viewer-listen", "COMPUTERD_VIEWER_LISTEN"),
        ("--viewer-dir", "COMPUTERD_VIEWER_DIR"),
        ("--screen-size", "COMPUTER_USE_SCREEN_SIZE"),
        ("--idle-timeout", "COMPUTER_USE_IDLE_TIMEOUT"),
        ("--shell-timeout", "COMPUTER_USE_SHELL_TIMEOUT"),
        ("--shell-timeout-max", "COMPUTER_USE_SHELL_TIMEOUT_MAX"),
        ("--heartbeat-grace", "COMPUTERD_HEARTBEAT_GRACE"),
        ("--fluxbox-dir", "COMPUTERD_FLUXBOX_DIR"),
        ("--devtools-port-base", "COMPUTERD_DEVTOOLS_PORT_BASE"),
        ("--launcher-listen", "COMPUTERD_LAUNCHER_LISTEN"),
    ] {
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{flag} ")))
            .unwrap_or_else(|| panic!("--help lists no `{flag}`"));
        assert!(
            line.contains(&format!("[env: {variable}]")),
            "`{flag}` should name `{variable}`: {line}"
        );
    }
    assert!(
        !help.contains("secret-token"),
        "--help must not show the token's value"
    );
    assert!(help.contains("[default: 127.0.0.1:7070]"), "{help}");
}

#[test]
fn version_prints_on_stdout() {
    let out = computerd(&["--version"], &[]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        format!("computerd {}\n", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(stderr(&out), "");
}

#[test]
fn a_bad_variable_is_refused_naming_it_the_value_and_the_range() {
    let out = computerd(
        &[],
        &[
            ("COMPUTERD_TOKEN", TOKEN),
            ("COMPUTERD_HOME", NO_HOME),
            ("COMPUTER_USE_SCREEN_SIZE", "100x800"),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).starts_with("error: `COMPUTER_USE_SCREEN_SIZE` (`--screen-size`) is `100x800`: use `<width>x<height>` with sides from 320 to 7680, such as `1280x800`\n"),
        "{}",
        stderr(&out)
    );
    let out = computerd(
        &[],
        &[
            ("COMPUTERD_TOKEN", TOKEN),
            ("COMPUTERD_HOME", NO_HOME),
            ("COMPUTERD_RFB_PORT_BASE", "80"),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with(
            "error: `COMPUTERD_RFB_PORT_BASE` (`--rfb-port-base`) is `80`: use a port from 1024 to 65519\n"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_flag_wins_over_its_variable() {
    // The variable's bad value is never read: the run gets to the home
    // folder, which every other setting comes before.
    let out = computerd(
        &["--screen-size", "800x600", "--home", NO_HOME],
        &[
            ("COMPUTERD_TOKEN", TOKEN),
            ("COMPUTER_USE_SCREEN_SIZE", "100x800"),
            ("COMPUTERD_HOME", "/tmp"),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out), NO_HOME_ERROR);
    assert_eq!(stdout(&out), "");
}

#[test]
fn home_comes_from_home_when_no_setting_names_one() {
    let out = computerd(&[], &[("COMPUTERD_TOKEN", TOKEN), ("HOME", NO_HOME)]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out), NO_HOME_ERROR);
}

#[test]
fn the_token_file_is_read_then_deleted_and_its_token_never_shown() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{TOKEN}\n")).expect("write the token file");
    let path = file.to_str().expect("a UTF-8 path");
    let out = computerd(
        &[],
        &[("COMPUTERD_TOKEN_FILE", path), ("COMPUTERD_HOME", NO_HOME)],
    );
    assert_eq!(stderr(&out), NO_HOME_ERROR, "the token was read");
    assert!(!Path::new(path).exists(), "the token file is deleted");

    std::fs::write(&file, "short-token").expect("write the token file");
    let out = computerd(&["--token-file", path], &[("COMPUTERD_HOME", NO_HOME)]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "computerd: `COMPUTERD_TOKEN` is `(hidden)`: use 16 or more characters without spaces\n"
    );
}

#[test]
fn a_missing_token_and_an_unknown_flag_are_refused() {
    let out = computerd(&[], &[("COMPUTERD_HOME", "/tmp")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("computerd: `COMPUTERD_TOKEN` is not set"),
        "{}",
        stderr(&out)
    );
    let out = computerd(&["--bogus"], &[("COMPUTERD_TOKEN", TOKEN)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("error: unexpected argument '--bogus' found\n"),
        "{}",
        stderr(&out)
    );
    let out = computerd(&["--listen"], &[("COMPUTERD_TOKEN", TOKEN)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("a value is required for '--listen <ADDR>'"),
        "{}",
        stderr(&out)
    );
}
