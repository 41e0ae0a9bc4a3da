//! Opening the viewer when one of this process's sessions gets its screen,
//! as `COMPUTER_USE_OPEN` says: `browser` switches an open viewer page to the
//! new screen or opens one tab; `vnc` opens a native viewer (macOS Screen
//! Sharing, TigerVNC on Windows) and falls back to the browser; `none` opens
//! nothing. Opening runs in the background and never delays or fails a tool
//! call; problems go to stderr.

mod browser;
mod password_file;
mod vnc;

pub use browser::{open_url, OpenUrlError};
pub use vnc::remove_password_files;
pub mod vnc_password;

use crate::client::{ClientError, ComputerdClient};
use crate::settings::OpenMode;
use computer_protocol::endpoints::{FocusViewer, GetViewer, IssueViewerCode, NoBody};
use computer_protocol::{FocusRequest, InvalidViewerKey, ScreenNumber};
use parking_lot::Mutex;
use std::time::{Duration, Instant};

/// Screens opening within this window share one new tab.
const ONE_TAB_WINDOW: Duration = Duration::from_secs(10);
const VIEWER_DEADLINE: Duration = Duration::from_secs(5);

/// What the opener needs to reach the computer and the person.
#[derive(Clone)]
pub struct Target {
    pub client: ComputerdClient,
    pub port_base: u16,
    pub key: String,
}

/// Leaves the viewer key out, so that no log line shows it.
impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("client", &self.client)
            .field("port_base", &self.port_base)
            .field("key", &"(hidden)")
            .finish()
    }
}

/// Why no viewer opened for a screen; only logged, never a tool's error.
#[derive(Debug, thiserror::Error)]
enum OpenViewerError {
    /// The key goes into a link or a command line, so a bad one opens
    /// nothing.
    #[error(transparent)]
    ViewerKey(#[from] InvalidViewerKey),
    /// computerd did not say whether a viewer page is open, or did not
    /// switch it.
    #[error(transparent)]
    Computer(#[from] ClientError),
    #[error(transparent)]
    Browser(#[from] OpenUrlError),
}

/// Remembers when this process last opened a tab, so that several screens
/// opening at once open one.
#[derive(Debug, Default)]
pub struct Opener {
    last_tab: Mutex<Option<Instant>>,
}

impl Opener {
    /// Starts opening the viewer for `screen` in the background.
    pub fn screen_opened(
        self: &std::sync::Arc<Self>,
        mode: OpenMode,
        target: Target,
        screen: u8,
        vnc_viewer: Option<std::path::PathBuf>,
    ) {
        if mode == OpenMode::None {
            return;
        }
        let opener = std::sync::Arc::clone(self);
        tokio::spawn(async move {
            if let Err(e) = opener.open(mode, &target, screen, vnc_viewer).await {
                tracing::warn!("could not open the viewer for screen {screen}: {e}");
            }
        });
    }

    async fn open(
        &self,
        mode: OpenMode,
        target: &Target,
        screen: u8,
        vnc_viewer: Option<std::path::PathBuf>,
    ) -> Result<(), OpenViewerError> {
        // Checked where it arrived too; the key goes into a link or a
        // command line here, so check it once more.
        computer_protocol::check_viewer_key(&target.key)?;
        if mode == OpenMode::Vnc {
            match vnc::open(
                target.port_base + u16::from(screen),
                &target.key,
                vnc_viewer,
            ) {
                Ok(()) => return Ok(()),
                Err(why) => tracing::warn!("opening the browser instead of a VNC viewer: {why}"),
            }
        }
        self.open_in_browser(target, screen).await
    }

    async fn open_in_browser(&self, target: &Target, screen: u8) -> Result<(), OpenViewerError> {
        // A viewer page already open switches to the screen; the count is a
        // best guess, so the link from start_computer stays the fallback.
        let status = target
            .client
            .send::<GetViewer>(&(), &NoBody {}, VIEWER_DEADLINE, "nothing")
            .await?;
        if status.pages > 0 {
            let focus = FocusRequest {
                screen: ScreenNumber(screen),
            };
            target
                .client
                .send::<FocusViewer>(&(), &focus, VIEWER_DEADLINE, "nothing")
                .await?;
            tracing::debug!("screen {screen}: the open viewer page switched to it");
            return Ok(());
        }
        {
            let mut last = self.last_tab.lock();
            if let Some(at) = last.filter(|at| at.elapsed() < ONE_TAB_WINDOW) {
                tracing::debug!(
                    "screen {screen}: no tab of its own, one opened {:?} ago",
                    at.elapsed()
                );
                return Ok(());
            }
            *last = Some(Instant::now());
        }
        // The link carries a one-time code, not the key: a command line
        // is readable by every user of this machine, and the browser this
        // starts keeps it. The page trades the code for the key once.
        let code = target
            .client
            .send::<IssueViewerCode>(&(), &NoBody {}, VIEWER_DEADLINE, "nothing")
            .await?;
        computer_protocol::check_viewer_key(&code.code)?;
        browser::open_url(&code_link(target.port_base, &code.code, Some(screen)))?;
        tracing::debug!("screen {screen}: opened a browser tab on it");
        Ok(())
    }
}

/// `http://127.0.0.1:<base>/#code=<code>`, with `&screen=<n>`: a link that
/// opens the viewer once (see [`IssueViewerCode`]).
pub fn code_link(port_base: u16, code: &str, screen: Option<u8>) -> String {
    match screen {
        Some(n) => format!("http://127.0.0.1:{port_base}/#code={code}&screen={n}"),
        None => format!("http://127.0.0.1:{port_base}/#code={code}"),
    }
}

/// `http://127.0.0.1:<base>/#key=<key>`, with `&screen=<n>` to open one screen.
pub fn viewer_link(port_base: u16, key: &str, screen: Option<u8>) -> String {
    match screen {
        Some(n) => format!("http://127.0.0.1:{port_base}/#key={key}&screen={n}"),
        None => format!("http://127.0.0.1:{port_base}/#key={key}"),
    }
}
