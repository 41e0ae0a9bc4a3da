//! Native VNC viewers: macOS Screen Sharing through a `vnc://` link with the
//! key, TigerVNC on Windows with a private password file (Windows viewers do
//! not read a password from a link). Anything else falls back to the browser.

use std::path::PathBuf;

/// How long the password file may exist before it is removed.
#[cfg(windows)]
const PASSWORD_FILE_LIFETIME: std::time::Duration = std::time::Duration::from_secs(15);

pub fn open(port: u16, key: &str, viewer: Option<PathBuf>) -> Result<(), String> {
    if cfg!(target_os = "macos") {
        let _ = viewer;
        return super::browser::open_url(&format!("vnc://:{key}@127.0.0.1:{port}"));
    }
    #[cfg(windows)]
    {
        return open_tigervnc(port, key, viewer);
    }
    #[allow(unreachable_code)]
    {
        let _ = (port, key, viewer);
        Err("`vnc` opens a native viewer on macOS and Windows only".to_string())
    }
}

#[cfg(windows)]
fn open_tigervnc(port: u16, key: &str, viewer: Option<PathBuf>) -> Result<(), String> {
    use crate::child_env::WithoutHostSecrets;
    use std::io::Write;
    let program = viewer
        .or_else(find_tigervnc)
        .ok_or("no TigerVNC viewer found: set COMPUTER_USE_VNC_VIEWER to vncviewer.exe, or install TigerVNC")?;
    let mut file = tempfile::Builder::new()
        .prefix("computer-use-vnc-")
        .tempfile()
        .map_err(|e| format!("could not write the VNC password file: {e}"))?;
    file.write_all(&super::vnc_password::obfuscate(key))
        .map_err(|e| format!("could not write the VNC password file: {e}"))?;
    let path = file.into_temp_path();
    std::process::Command::new(&program)
        .without_host_secrets()
        .arg("-passwd")
        .arg(&path)
        .arg(format!("127.0.0.1::{port}"))
        .spawn()
        .map_err(|e| format!("could not start `{}`: {e}", program.display()))?;
    // The file goes after 15 s, or at exit through `remove_password_files`.
    let path = std::sync::Arc::new(std::sync::Mutex::new(Some(path)));
    PASSWORD_FILES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(std::sync::Arc::clone(&path));
    std::thread::spawn(move || {
        std::thread::sleep(PASSWORD_FILE_LIFETIME);
        path.lock().unwrap_or_else(|e| e.into_inner()).take();
    });
    Ok(())
}

/// Password files not yet removed; emptied at exit.
#[cfg(windows)]
type PendingFile = std::sync::Arc<std::sync::Mutex<Option<tempfile::TempPath>>>;
#[cfg(windows)]
static PASSWORD_FILES: std::sync::Mutex<Vec<PendingFile>> = std::sync::Mutex::new(Vec::new());

/// Removes every password file still on disk (the server is exiting).
pub fn remove_password_files() {
    #[cfg(windows)]
    for file in PASSWORD_FILES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .drain(..)
    {
        file.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

#[cfg(windows)]
fn find_tigervnc() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("vncviewer.exe"))
            .find(|f| f.is_file())
    });
    on_path.or_else(|| {
        ["ProgramFiles", "ProgramFiles(x86)"]
            .iter()
            .find_map(|var| {
                let f = PathBuf::from(std::env::var_os(var)?)
                    .join("TigerVNC")
                    .join("vncviewer.exe");
                f.is_file().then_some(f)
            })
    })
}
