//! `computerd::shell::run` against real `bash` processes.

use computer_protocol::{Coded, ErrorCode, ShellResult};
use computerd::shell::{run, ShellError, ShellSpec, EXIT_GRACE};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// HOME is the test's folder, as the caller sets it to the computer's home: a
/// login shell reads `~/.profile`, and the test machine's own may be slow.
fn spec(command: &str, cwd: &Path, timeout: Duration) -> ShellSpec {
    ShellSpec {
        command: command.to_string(),
        cwd: cwd.to_path_buf(),
        env: vec![("HOME".into(), cwd.display().to_string())],
        timeout,
    }
}

async fn run_ok(command: &str, cwd: &Path, timeout: Duration) -> ShellResult {
    match run(spec(command, cwd, timeout)).await {
        Ok(result) => result,
        Err(err) => panic!("`{command}` in {} failed to run: {err}", cwd.display()),
    }
}

/// Every pid listed in `file`, one a line.
fn pids_in(file: &Path) -> Vec<i32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(|line| {
            line.trim()
                .parse()
                .unwrap_or_else(|_| panic!("bad pid line {line:?} in {}", file.display()))
        })
        .collect()
}

/// A process that exited but was not yet reaped by its parent (PID 1 here,
/// which may reap late or never) counts as gone: it runs nothing.
fn is_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next());
            !matches!(state, Some('Z' | 'X') | None)
        }
        Err(_) => false,
    }
}

/// Waits until every pid is gone; panics naming the survivors after 5 s.
async fn assert_gone_soon(pids: &[i32]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let alive: Vec<i32> = pids.iter().copied().filter(|pid| is_alive(*pid)).collect();
        if alive.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            panic!("processes {alive:?} still run 5 s after the command was killed");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until `file` lists `count` pids; panics after 5 s.
async fn wait_for_pids(file: &Path, count: usize) -> Vec<i32> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let pids = pids_in(file);
        if pids.len() >= count {
            return pids;
        }
        assert!(
            Instant::now() < deadline,
            "{} lists {pids:?} after 5 s, expected {count} pids",
            file.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Kills the listed processes at the end of a test, pass or fail, so a failing
/// test leaves no `sleep 300` behind.
struct KillOnDrop(PathBuf);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for pid in pids_in(&self.0) {
            // SAFETY: kill(2) has no memory effects.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

const LONG: Duration = Duration::from_secs(30);

#[tokio::test]
async fn exit_code_and_streams_come_back_apart() {
    let dir = tempfile::tempdir().unwrap();
    let result = run_ok("echo out; echo err >&2; exit 3", dir.path(), LONG).await;
    assert_eq!(result.exit_code, Some(3), "{result:?}");
    assert_eq!(result.stdout, "out\n");
    assert_eq!(result.stderr, "err\n");
    assert!(!result.timed_out);
}

#[tokio::test]
async fn true_succeeds_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let result = run_ok("true", dir.path(), LONG).await;
    let elapsed = started.elapsed();
    eprintln!(
        "`true` round trip: {elapsed:?} (duration_ms {})",
        result.duration_ms
    );
    assert_eq!(result.exit_code, Some(0));
    assert_eq!((result.stdout.as_str(), result.stderr.as_str()), ("", ""));
    assert!(elapsed < Duration::from_secs(2), "`true` took {elapsed:?}");
    assert!(result.duration_ms <= elapsed.as_millis() as u64);
}

#[tokio::test]
async fn runs_in_the_working_folder() {
    let dir = tempfile::tempdir().unwrap();
    let result = run_ok("pwd -P", dir.path(), LONG).await;
    let expected = dir.path().canonicalize().unwrap();
    assert_eq!(result.stdout, format!("{}\n", expected.display()));
}

#[tokio::test]
async fn environment_is_added_to_the_inherited_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = spec(
        r#"echo "$GREETING|$HOME|${PATH:+has-path}""#,
        dir.path(),
        LONG,
    );
    spec.env = vec![
        ("GREETING".into(), "hello world".into()),
        ("HOME".into(), dir.path().display().to_string()),
    ];
    let result = run(spec).await.unwrap();
    assert_eq!(
        result.stdout,
        format!("hello world|{}|has-path\n", dir.path().display())
    );
}

#[tokio::test]
async fn there_is_no_input() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let result = run_ok("cat; read line; echo \"read exit $?\"", dir.path(), LONG).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "`cat` waited for input"
    );
    assert_eq!(result.stdout, "read exit 1\n");
    assert!(!result.timed_out);
}

#[tokio::test]
async fn a_command_killed_by_a_signal_has_no_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let result = run_ok("echo before; kill -KILL $$", dir.path(), LONG).await;
    assert_eq!(result.exit_code, None, "{result:?}");
    assert!(!result.timed_out);
    assert_eq!(result.stdout, "before\n");
}

#[tokio::test]
async fn a_child_killed_by_a_signal_gives_bash_s_exit_code() {
    // bash reports 128 + signal for a child it waited on.
    let dir = tempfile::tempdir().unwrap();
    let result = run_ok("sh -c 'kill -TERM $$'; echo \"child $?\"", dir.path(), LONG).await;
    assert_eq!(result.exit_code, Some(0));
    assert_eq!(result.stdout, "child 143\n");
}

#[tokio::test]
async fn timeout_keeps_the_output_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let result = run_ok(
        "echo before; echo oops >&2; sleep 30; echo after",
        dir.path(),
        Duration::from_secs(1),
    )
    .await;
    assert!(result.timed_out, "{result:?}");
    assert_eq!(result.exit_code, None);
    assert_eq!(result.stdout, "before\n");
    assert_eq!(result.stderr, "oops\n");
    assert!(
        (1000..5000).contains(&result.duration_ms),
        "timed out after {} ms, expected about 1000",
        result.duration_ms
    );
}

#[tokio::test]
async fn timeout_kills_everything_the_command_started() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let _cleanup = KillOnDrop(pids.clone());
    // Four ways to outlive bash: a plain `&` job holding the pipes, a `setsid`
    // job (new session and group), a double fork through a subshell that
    // exits, and a detached daemon-style job with its output redirected. Each
    // writes its own pid, then becomes `sleep 300` under that pid.
    let command = r#"
        : > pids
        sh -c 'echo $$ >> pids; exec sleep 300' &
        setsid sh -c 'echo $$ >> pids; exec sleep 300' &
        ( setsid sh -c 'echo $$ >> pids; exec sleep 300' & )
        setsid nohup sh -c 'echo $$ >> pids; exec sleep 300' >/dev/null 2>&1 &
        while [ "$(wc -l < pids)" -lt 4 ]; do sleep 0.05; done
        echo started
        sleep 300
    "#;
    let started = Instant::now();
    let result = run_ok(command, dir.path(), Duration::from_secs(2)).await;
    let elapsed = started.elapsed();
    eprintln!("a 2 s timeout returned after {elapsed:?}");
    assert!(result.timed_out, "{result:?}");
    assert_eq!(result.exit_code, None);
    assert_eq!(result.stdout, "started\n", "{result:?}");
    assert!(
        elapsed < Duration::from_secs(2) + EXIT_GRACE + Duration::from_secs(2),
        "returned {elapsed:?} after start with a 2 s timeout"
    );
    let pids = pids_in(&pids);
    assert_eq!(pids.len(), 4, "{pids:?}");
    assert_gone_soon(&pids).await;
}

#[tokio::test]
async fn long_output_keeps_head_and_tail_with_an_exact_marker() {
    let dir = tempfile::tempdir().unwrap();
    // 100000 bytes on each stream: 5 + 99990 + 5.
    let command = "
        { printf START; head -c 99990 /dev/zero | tr '\\0' x; printf 'END!!'; }
        { printf BEGIN; head -c 99990 /dev/zero | tr '\\0' y; printf 'STOP!'; } >&2
    ";
    let result = run_ok(command, dir.path(), LONG).await;
    let expected = |first: &str, fill: &str, last: &str| {
        format!(
            "{first}{}\n[... 70000 bytes omitted ...]\n{}{last}",
            fill.repeat(14_995),
            fill.repeat(14_995)
        )
    };
    assert_eq!(result.stdout, expected("START", "x", "END!!"));
    assert_eq!(result.stderr, expected("BEGIN", "y", "STOP!"));
}

#[tokio::test]
async fn a_huge_stream_is_read_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let result = run_ok(
        "head -c 50000000 /dev/zero | tr '\\0' z; echo -n tail",
        dir.path(),
        LONG,
    )
    .await;
    assert_eq!(result.exit_code, Some(0));
    assert!(result.stdout.ends_with("zzztail"));
    assert!(
        result
            .stdout
            .contains("\n[... 49970004 bytes omitted ...]\n"),
        "marker missing around {:?}",
        &result.stdout[14_990..15_040]
    );
}

#[tokio::test]
async fn two_commands_run_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let (first, second) = tokio::join!(
        run_ok("sleep 1; echo one", dir.path(), LONG),
        run_ok("sleep 1; echo two", dir.path(), LONG)
    );
    let elapsed = started.elapsed();
    assert_eq!(
        (first.stdout.as_str(), second.stdout.as_str()),
        ("one\n", "two\n")
    );
    assert!(
        elapsed < Duration::from_millis(1800),
        "two `sleep 1` took {elapsed:?} together"
    );
}

#[tokio::test]
async fn a_background_job_holding_the_pipes_does_not_hang_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let _cleanup = KillOnDrop(pids.clone());
    let started = Instant::now();
    let result = run_ok("sleep 30 & echo $! > pids; echo done", dir.path(), LONG).await;
    let elapsed = started.elapsed();
    assert_eq!(result.exit_code, Some(0));
    assert!(!result.timed_out);
    assert_eq!(result.stdout, "done\n");
    assert!(
        elapsed < Duration::from_secs(3),
        "the call waited {elapsed:?} for the background job"
    );
    assert!(
        elapsed >= EXIT_GRACE,
        "returned in {elapsed:?}, before the grace period"
    );
}

#[tokio::test]
async fn a_detached_job_keeps_running_after_a_normal_exit() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let _cleanup = KillOnDrop(pids.clone());
    let result = run_ok(
        "setsid nohup sh -c 'echo $$ > pids; exec sleep 30' >log 2>&1 & echo launched",
        dir.path(),
        LONG,
    )
    .await;
    assert_eq!(result.exit_code, Some(0));
    assert_eq!(result.stdout, "launched\n");
    let pids = wait_for_pids(&pids, 1).await;
    assert!(is_alive(pids[0]), "the detached job {} was killed", pids[0]);
}

#[tokio::test]
async fn dropping_the_call_kills_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let _cleanup = KillOnDrop(pids.clone());
    let call = run(spec(
        "setsid sh -c 'echo $$ >> pids; exec sleep 300' & sleep 300",
        dir.path(),
        LONG,
    ));
    tokio::select! {
        result = call => panic!("the command ended early: {result:?}"),
        _ = wait_for_pids(&pids, 1) => {}
    }
    assert_gone_soon(&pids_in(&pids)).await;
}

#[tokio::test]
async fn a_missing_working_folder_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    let err = run(spec("true", &gone, LONG)).await.unwrap_err();
    assert!(matches!(err, ShellError::CwdMissing(_)), "{err:?}");
    assert_eq!(err.code(), ErrorCode::NotFound);
    assert_eq!(
        err.to_string(),
        format!(
            "the working folder `{}` no longer exists: call `set_cwd` with a folder that exists",
            gone.display()
        )
    );
}
