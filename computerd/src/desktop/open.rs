//! `open_path` and `launch_app` on a session's screen: the launcher opens
//! the page, file or app there; the answer is what opened, with the
//! screenshot once the screen settled and what the network refused
//! meanwhile.

use super::{observe, settle, DesktopError, DesktopState};
use crate::apps::{Launcher, OnScreen};
use crate::browser::{BrowserScreen, Browsers};
use crate::sessions::{Session, Sessions};
use computer_protocol::{FrameOptions, ObserveRequest, OpenedResponse, Settling};
use std::sync::Arc;

/// What to open.
pub enum Opening<'a> {
    /// A URL, file or folder (`open_path`).
    Path(&'a str),
    /// A desktop entry or a program on `PATH`, with an optional argument
    /// (`launch_app`).
    App { app: &'a str, uri: Option<&'a str> },
}

/// The parts of the desktop an open uses.
pub struct OpenParts<'a> {
    pub sessions: &'a Arc<Sessions>,
    pub browsers: &'a Browsers,
    pub launcher: &'a Launcher,
}

pub async fn open(
    parts: OpenParts<'_>,
    session: &Arc<Session>,
    state: &Arc<DesktopState>,
    opening: Opening<'_>,
    frame: FrameOptions,
    settling: Settling,
) -> Result<OpenedResponse, DesktopError> {
    let screen = parts.sessions.screen_of(session).await?;
    let on = OnScreen {
        screen: BrowserScreen::of(&screen),
        cwd: session.cwd(),
    };
    let started_ms = crate::netguard::now_ms();
    let opened = match opening {
        Opening::Path(target) => parts.launcher.open_path(&on, target).await?,
        Opening::App { app, uri } => parts.launcher.launch(&on, app, uri).await?,
    };
    session.touch();
    let (settled, waited) = settle(&screen, settling).await?;
    let req = ObserveRequest {
        frame,
        ..ObserveRequest::default()
    };
    let observation = observe::observe(parts.sessions, parts.browsers, session, state, req).await?;
    // A page that did not load because the network refused it says so.
    let mut summary = opened.summary;
    for line in crate::netguard::denial_lines_since(started_ms).await {
        summary.push('\n');
        summary.push_str(&line);
    }
    Ok(OpenedResponse {
        summary,
        ready: opened.ready,
        observation,
        settled,
        settle_waited_ms: waited.as_millis() as u64,
    })
}
