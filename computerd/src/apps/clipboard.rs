//! Putting a file's text on a screen's clipboard, for the agent's shell:
//! its own X programs cannot serve the clipboard to the desktop's (their
//! X cookie is untrusted, see `crate::x_auth`), so `xclip` runs here as a
//! desktop program, reads the file, and serves the clipboard until
//! something else takes it.

use crate::screen_facts::ScreenEnv;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::Command;

/// The most a clipboard takes here: a paste, not a file transfer.
pub const CLIPBOARD_BYTES_MAX: u64 = 16 << 20;

/// How long `xclip` may take to read the file and go to the background.
const XCLIP_WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum ClipboardError {
    #[error("`path` is `{path}`, which is not absolute: give the file's full path")]
    Relative { path: String },
    #[error("cannot read `{path}`: {source}; give a file the computer's user can read")]
    Unreadable {
        path: String,
        source: std::io::Error,
    },
    #[error("`{path}` is {size} bytes, over the {CLIPBOARD_BYTES_MAX} bytes the clipboard takes: paste it in parts")]
    TooLarge { path: String, size: u64 },
    #[error(
        "`xclip` did not take the text ({0}); is xclip installed? `sudo apt-get install xclip`"
    )]
    Xclip(String),
}

/// Puts the text of `path` on the CLIPBOARD selection of `screen`.
pub async fn put(screen: ScreenEnv, path: &str) -> Result<(), ClipboardError> {
    if !Path::new(path).is_absolute() {
        return Err(ClipboardError::Relative {
            path: path.to_string(),
        });
    }
    let meta = tokio::fs::metadata(path)
        .await
        .and_then(|meta| {
            if meta.is_file() {
                Ok(meta)
            } else {
                Err(std::io::Error::other("it is not a file"))
            }
        })
        .map_err(|source| ClipboardError::Unreadable {
            path: path.to_string(),
            source,
        })?;
    if meta.len() > CLIPBOARD_BYTES_MAX {
        return Err(ClipboardError::TooLarge {
            path: path.to_string(),
            size: meta.len(),
        });
    }
    let mut xclip = Command::new("xclip");
    xclip
        .args(["-selection", "clipboard", "-i"])
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // xclip goes to the background to serve the clipboard, keeping
        // whatever it inherited: a pipe would stay open as long.
        .stderr(Stdio::null())
        .process_group(0);
    screen.apply(&mut xclip);
    let mut child = xclip
        .spawn()
        .map_err(|e| ClipboardError::Xclip(e.to_string()))?;
    match tokio::time::timeout(XCLIP_WAIT, child.wait()).await {
        Ok(Ok(status)) if status.success() => Ok(()),
        Ok(Ok(status)) => Err(ClipboardError::Xclip(status.to_string())),
        Ok(Err(e)) => Err(ClipboardError::Xclip(e.to_string())),
        Err(_) => {
            child.kill().await.ok();
            Err(ClipboardError::Xclip(format!(
                "it had not gone to the background after {} s",
                XCLIP_WAIT.as_secs()
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen() -> ScreenEnv {
        ScreenEnv {
            display: 9999,
            session_bus: false,
        }
    }

    #[tokio::test]
    async fn a_relative_or_missing_or_huge_file_is_refused_by_name() {
        let e = put(screen(), "notes.txt").await.unwrap_err();
        assert!(e.to_string().contains("`notes.txt`") && e.to_string().contains("full path"));
        let e = put(screen(), "/no/such/file").await.unwrap_err();
        assert!(e.to_string().contains("cannot read `/no/such/file`"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(CLIPBOARD_BYTES_MAX + 1)
            .unwrap();
        let e = put(screen(), big.to_str().unwrap()).await.unwrap_err();
        assert!(e.to_string().contains("paste it in parts"), "{e}");
    }
}
