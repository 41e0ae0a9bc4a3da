//! Opening a link in the person's browser.

use std::process::{Command, Stdio};

/// Opens `url` with the platform's opener: `open` on macOS, `start` on
/// Windows, and `$BROWSER` or `xdg-open` elsewhere.
pub fn open_url(url: &str) -> Result<(), String> {
    let mut cmd = if cfg!(target_os = "macos") {
        let mut c = Command::new("open");
        c.arg(url);
        c
    } else if cfg!(windows) {
        // `start` treats its first quoted argument as a window title.
        let mut c = Command::new("cmd");
        c.args(["/C", "start", "", url]);
        c
    } else {
        let program = std::env::var("BROWSER")
            .ok()
            .filter(|b| !b.trim().is_empty())
            .unwrap_or_else(|| "xdg-open".to_string());
        let mut c = Command::new(program);
        c.arg(url);
        c
    };
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("could not run the browser opener: {e}; open the viewer link from start_computer by hand"))?;
    // Reap it without waiting here: opening never delays a tool call.
    std::thread::spawn(move || child.wait());
    Ok(())
}
