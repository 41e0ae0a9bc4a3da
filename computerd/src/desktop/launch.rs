//! Starting an app on a screen when `focus` finds no window for it.

use crate::display::Display;
use crate::input::focus_window;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a started app may take to show a window.
const WINDOW_WAIT: Duration = Duration::from_secs(15);

/// The program to run for `target` and the window name to wait for.
fn resolve(target: &str) -> Option<(PathBuf, Vec<String>, String)> {
    let lower = target.trim().to_lowercase();
    let (program, args, window) = match lower.as_str() {
        "browser" | "chromium" | "chrome" => {
            if let Some(p) = find_on_path("computer-use-launch") {
                (p, vec!["browser".to_string()], "chromium".to_string())
            } else {
                (
                    find_on_path("chromium")?,
                    vec!["--no-sandbox".into(), "--no-first-run".into()],
                    "chromium".into(),
                )
            }
        }
        "terminal" | "xterm" => {
            if let Some(p) = find_on_path("computer-use-launch") {
                (p, vec!["terminal".to_string()], "xterm".to_string())
            } else {
                (find_on_path("xterm")?, vec![], "xterm".into())
            }
        }
        _ => (
            find_on_path(target.trim())?,
            vec![],
            target.trim().to_string(),
        ),
    };
    Some((program, args, window))
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    if name.is_empty() || name.contains('/') {
        return None;
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Starts the app for `target` on `display`, detached from computerd, and
/// waits until its window can be focused. Blocking.
pub fn launch_and_focus(display: &Display, target: &str, home: &Path) -> Result<(), String> {
    let (program, args, window) = resolve(target).ok_or_else(|| {
        format!("no window matches `{target}` and no program `{target}` is on PATH; use `browser`, `terminal`, a window title, or a program name")
    })?;
    let mut cmd = Command::new(&program);
    cmd.args(&args)
        .env("DISPLAY", format!(":{}", display.number))
        .env("HOME", home)
        .current_dir(home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("could not start `{}`: {e}", program.display()))?;
    // Reap it in the background so it never lingers as a zombie.
    std::thread::spawn(move || child.wait());
    let started = Instant::now();
    loop {
        if focus_window(display, &window).map_err(|e| e.to_string())? {
            return Ok(());
        }
        if started.elapsed() > WINDOW_WAIT {
            return Err(format!(
                "started `{}` but no window matching `{window}` appeared within {}s",
                program.display(),
                WINDOW_WAIT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
