//! Opening the viewer when one of this process's sessions gets its screen,
//! as `COMPUTER_USE_OPEN` says: `browser` switches an open viewer page to the
//! new screen or opens one tab; `vnc` opens a native viewer (macOS Screen
//! Sharing, TigerVNC on Windows) and falls back to the browser; `none` opens
//! nothing. A handoff always opens a tab of its own, whose link carries the
//! hand-back code ([`Opener::handoff_opened`]). Opening runs in the
//! background and never delays or fails a tool call; problems go to stderr.

mod browser;
mod password_file;
mod vnc;

pub use browser::{open_url, OpenUrlError};
pub use vnc::remove_password_files;
pub mod vnc_password;

use crate::client::{ClientError, ComputerdClient};
use crate::settings::OpenMode;
use computer_protocol::endpoints::{FocusViewer, GetViewer, IssueViewerCode, NoBody};
use computer_protocol::{
    code_link, viewer_link, FocusRequest, Hidden, InvalidViewerKey, ScreenNumber, ViewerKey,
};
use parking_lot::Mutex;
use std::time::{Duration, Instant};

/// Screens opening within this window share one new tab.
const ONE_TAB_WINDOW: Duration = Duration::from_secs(10);
const VIEWER_DEADLINE: Duration = Duration::from_secs(5);

/// What the opener needs to reach the computer and the person.
#[derive(Clone, Debug)]
pub struct Target {
    pub client: ComputerdClient,
    pub port_base: u16,
    pub key: computer_protocol::ViewerKey,
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
        screen: ScreenNumber,
        vnc_viewer: Option<std::path::PathBuf>,
    ) {
        let screen = screen.0;
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

    /// Starts opening the viewer for the person asked to take `screen`:
    /// always a new browser tab, since its link carries `handback`, the code
    /// that Hand back needs. That code must not pass through the computer
    /// (switching an open page goes through computerd), and a native VNC
    /// viewer has no Hand back button. With `none` the link goes to stderr,
    /// for whoever runs this server to give to the person.
    pub fn handoff_opened(
        self: &std::sync::Arc<Self>,
        mode: OpenMode,
        target: Target,
        screen: u8,
        handback: Handback,
    ) {
        if mode == OpenMode::None {
            tracing::warn!(
                "handoff {} on screen {screen}: nothing opens a viewer (COMPUTER_USE_OPEN=none); the person hands back from this link only: {}",
                handback.handoff_id,
                handback.link_with_key(target.port_base, &target.key, screen)
            );
            return;
        }
        tokio::spawn(async move {
            if let Err(e) = open_handoff_tab(&target, screen, &handback).await {
                tracing::warn!(
                    "could not open the viewer for handoff {} on screen {screen} ({e}); the person hands back from this link only: {}",
                    handback.handoff_id,
                    handback.link_with_key(target.port_base, &target.key, screen)
                );
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
        computer_protocol::check_viewer_key(target.key.expose())?;
        if mode == OpenMode::Vnc {
            match vnc::open(
                target.port_base + u16::from(screen),
                target.key.expose(),
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
        computer_protocol::check_viewer_key(code.code.expose())?;
        browser::open_url(&code_link(
            target.port_base,
            code.code.expose(),
            Some(screen),
        ))?;
        tracing::debug!("screen {screen}: opened a browser tab on it");
        Ok(())
    }
}

/// A handoff's hand-back code, for the person's link only; [`Hidden`] so
/// that no log line shows it by accident.
#[derive(Clone, Debug)]
pub struct Handback {
    pub handoff_id: String,
    pub code: Hidden<String>,
}

impl Handback {
    /// `&handoff=<id>&handback=<code>`, the part of the link the viewer
    /// page keeps for Hand back.
    fn fragment(&self) -> String {
        format!(
            "&handoff={}&handback={}",
            self.handoff_id,
            self.code.expose()
        )
    }

    /// The person's link with the viewer key itself (for stderr, where no
    /// one-time code is needed).
    fn link_with_key(&self, port_base: u16, key: &ViewerKey, screen: u8) -> String {
        viewer_link(port_base, key, Some(screen)) + &self.fragment()
    }
}

/// Opens a new tab on `screen` for the person, with a one-time code for the
/// key (no key in a command line) and the hand-back code.
async fn open_handoff_tab(
    target: &Target,
    screen: u8,
    handback: &Handback,
) -> Result<(), OpenViewerError> {
    computer_protocol::check_viewer_key(target.key.expose())?;
    let code = target
        .client
        .send::<IssueViewerCode>(&(), &NoBody {}, VIEWER_DEADLINE, "nothing")
        .await?;
    computer_protocol::check_viewer_key(code.code.expose())?;
    let link = code_link(target.port_base, code.code.expose(), Some(screen)) + &handback.fragment();
    browser::open_url(&link)?;
    tracing::debug!(
        "handoff {}: opened a tab on screen {screen}",
        handback.handoff_id
    );
    Ok(())
}
