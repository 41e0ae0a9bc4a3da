//! Native VNC viewers: macOS Screen Sharing through a `vnc://` link with the
//! key, TigerVNC on Windows with a private password file (Windows viewers do
//! not read a password from a link). Anything else falls back to the browser.

use super::browser::OpenUrlError;
use super::password_file::PasswordFileError;
use std::path::{Path, PathBuf};

/// Why the browser opens instead of a native viewer.
#[derive(Debug, thiserror::Error)]
pub enum NativeViewerError {
    #[error("`COMPUTER_USE_OPEN` is `vnc`, which runs a native viewer on macOS and Windows only; on this system the viewer opens in the browser")]
    Unsupported,
    /// macOS could not open the `vnc://` link.
    #[error(transparent)]
    Link(#[from] OpenUrlError),
    #[error(transparent)]
    NoViewer(#[from] ViewerChoiceError),
    #[error(transparent)]
    PasswordFile(#[from] PasswordFileError),
    #[cfg(windows)]
    #[error("could not start `{}`: {source}", program.display())]
    Start {
        program: PathBuf,
        source: std::io::Error,
    },
}

/// Why no TigerVNC viewer is run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ViewerChoiceError {
    #[error("`COMPUTER_USE_VNC_VIEWER` is `{}`: no file is there; set it to the path of TigerVNC's `vncviewer.exe`, or unset it to look on PATH and in Program Files", path.display())]
    NoFile { path: PathBuf },
    #[error("no TigerVNC viewer found on PATH or in Program Files: install TigerVNC (https://tigervnc.org) or set `COMPUTER_USE_VNC_VIEWER` to the path of `vncviewer.exe`")]
    NotFound,
}

/// Opens the native viewer on `port`, or says why the browser opens instead.
/// `viewer_setting` is `COMPUTER_USE_VNC_VIEWER` (read on Windows only).
pub fn open(
    port: u16,
    key: &str,
    viewer_setting: Option<PathBuf>,
) -> Result<(), NativeViewerError> {
    // Native clients take the VNC password: the key's first 8 characters.
    let key = computer_protocol::vnc_password(key);
    if cfg!(target_os = "macos") {
        let _ = viewer_setting;
        // Screen Sharing takes no password file: the password is in the
        // argument of `open` for as long as that runs (README, Security).
        return Ok(super::browser::open_url(&format!(
            "vnc://:{key}@127.0.0.1:{port}"
        ))?);
    }
    #[cfg(windows)]
    {
        return open_tigervnc(port, key, viewer_setting);
    }
    #[allow(unreachable_code)]
    {
        let _ = (port, key, viewer_setting);
        Err(NativeViewerError::Unsupported)
    }
}

/// The TigerVNC program to run, or why the browser opens instead: the file
/// `COMPUTER_USE_VNC_VIEWER` names when it is set, otherwise what `search`
/// finds. A setting that names no file is a reason to open the browser, not
/// an error of any call: opening never fails a tool call.
#[cfg_attr(not(windows), allow(dead_code))]
pub(super) fn choose_viewer(
    setting: Option<&Path>,
    is_file: impl Fn(&Path) -> bool,
    search: impl FnOnce() -> Option<PathBuf>,
) -> Result<PathBuf, ViewerChoiceError> {
    match setting {
        Some(path) if is_file(path) => Ok(path.to_path_buf()),
        Some(path) => Err(ViewerChoiceError::NoFile {
            path: path.to_path_buf(),
        }),
        None => search().ok_or(ViewerChoiceError::NotFound),
    }
}

#[cfg(windows)]
fn open_tigervnc(
    port: u16,
    key: &str,
    viewer_setting: Option<PathBuf>,
) -> Result<(), NativeViewerError> {
    use crate::child_env::WithoutHostSecrets;
    let program = choose_viewer(viewer_setting.as_deref(), Path::is_file, find_tigervnc)?;
    let password_file = super::password_file::PASSWORD_FILES.write(key)?;
    std::process::Command::new(&program)
        .without_host_secrets()
        .arg("-passwd")
        .arg(&password_file)
        .arg(format!("127.0.0.1::{port}"))
        .spawn()
        .map_err(|source| NativeViewerError::Start {
            program: program.clone(),
            source,
        })?;
    Ok(())
}

/// Removes every password file still on disk (the server is exiting).
pub fn remove_password_files() {
    super::password_file::PASSWORD_FILES.remove_all();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn found() -> Option<PathBuf> {
        Some(PathBuf::from(r"C:\Program Files\TigerVNC\vncviewer.exe"))
    }

    #[test]
    fn a_setting_that_names_a_file_is_run() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("vncviewer.exe");
        std::fs::write(&file, b"").unwrap();
        assert_eq!(
            choose_viewer(Some(&file), Path::is_file, found),
            Ok(file.clone())
        );
        // The search is not needed and does not decide.
        assert_eq!(choose_viewer(Some(&file), Path::is_file, || None), Ok(file));
    }

    #[test]
    fn a_setting_that_names_no_file_opens_the_browser_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().display().to_string();
        let missing = dir.path().join("vncviewer.exe").display().to_string();
        for bad in [&folder, &missing] {
            let e = choose_viewer(Some(Path::new(bad)), Path::is_file, found).unwrap_err();
            assert_eq!(e, ViewerChoiceError::NoFile { path: bad.into() });
            assert_eq!(e.to_string(), format!("`COMPUTER_USE_VNC_VIEWER` is `{bad}`: no file is there; set it to the path of TigerVNC's `vncviewer.exe`, or unset it to look on PATH and in Program Files"));
        }
    }

    #[test]
    fn without_a_setting_the_search_decides() {
        assert_eq!(choose_viewer(None, |_| false, found), Ok(found().unwrap()));
        assert_eq!(
            choose_viewer(None, |_| true, || None)
                .unwrap_err()
                .to_string(),
            "no TigerVNC viewer found on PATH or in Program Files: install TigerVNC (https://tigervnc.org) or set `COMPUTER_USE_VNC_VIEWER` to the path of `vncviewer.exe`"
        );
    }

    #[cfg(not(any(windows, target_os = "macos")))]
    #[test]
    fn other_systems_open_the_browser_and_say_why() {
        let why = open(20901, "abcdefgh", Some(PathBuf::from("/usr/bin/vncviewer"))).unwrap_err();
        assert!(matches!(why, NativeViewerError::Unsupported), "{why:?}");
        assert!(
            why.to_string().starts_with("`COMPUTER_USE_OPEN` is `vnc`"),
            "{why}"
        );
    }
}
