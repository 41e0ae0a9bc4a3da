//! What an agent does on its screen: observe it and act on it. Both open the
//! session's screen on first use and send their X work to the screen's X
//! thread ([`crate::screens::Screen::with_x`]).
//!
//! # Layout
//! - [`Desktop`]: the entry point the API calls, holding each session's
//!   [`DesktopState`] (`state`: frames shown, refs, repeated batches).
//! - `observe`: a screenshot, shaped and checked against the last one shown.
//! - `open`: `open_path` and `launch_app` through the launcher, then the
//!   screenshot once the screen settled.
//! - `act`: a batch, from request to result: frame and ref coordinates, the
//!   unchanged-batch rule (`repeats`), the settle and the screenshot after;
//!   `executor` runs the actions themselves, `effects` watches what each one
//!   changed, `quiet` waits for the screen to be still.

mod act;
pub mod effects;
pub mod executor;
mod observe;
mod open;
mod quiet;
mod repeats;
mod state;

pub use effects::EffectsWatch;
pub use open::Opening;
pub use quiet::settle;
pub use state::{DesktopState, DesktopStates};

use crate::apps::{LaunchError, Launcher};
use crate::browser::Browsers;
use crate::capture::CaptureError;
use crate::display::XFault;
use crate::input::InputError;
use crate::screens::ScreenError;
use crate::sessions::{Session, SessionError, Sessions};
use crate::textview::TextViewError;
use computer_protocol::{
    ActRequest, ActResponse, Coded, ErrorCode, FrameOptions, InvalidInput, Observation,
    ObserveRequest, OpenedResponse, Settling,
};
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum DesktopError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Screen(#[from] ScreenError),
    #[error(transparent)]
    Capture(#[from] CaptureError),
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    X(#[from] XFault),
    #[error(transparent)]
    InvalidInput(#[from] InvalidInput),
    #[error("the screen is not reacting: this is the 4th identical batch in a row that left it unchanged; observe the screen and try another approach")]
    NotReacting,
    #[error(transparent)]
    Launch(#[from] LaunchError),
}

impl From<TextViewError> for DesktopError {
    fn from(e: TextViewError) -> DesktopError {
        match e {
            TextViewError::InvalidInput(message) => DesktopError::InvalidInput(message),
            TextViewError::Screen(e) => DesktopError::Screen(e),
            TextViewError::X(e) => DesktopError::X(e),
        }
    }
}

impl Coded for DesktopError {
    fn code(&self) -> ErrorCode {
        match self {
            DesktopError::Session(e) => e.code(),
            DesktopError::Screen(e) => e.code(),
            DesktopError::Capture(_) | DesktopError::Input(_) | DesktopError::X(_) => {
                ErrorCode::Internal
            }
            DesktopError::InvalidInput(_) => ErrorCode::InvalidInput,
            DesktopError::NotReacting => ErrorCode::NotReacting,
            DesktopError::Launch(e) => e.code(),
        }
    }
}

/// Observing and acting on the sessions' screens.
pub struct Desktop {
    sessions: Arc<Sessions>,
    /// Starts the app a `focus` names when no window matches.
    launcher: Arc<Launcher>,
    /// The screens' browsers, whose pages the text view and the effects read.
    browsers: Arc<Browsers>,
    states: DesktopStates,
}

impl Desktop {
    pub fn new(
        sessions: Arc<Sessions>,
        launcher: Arc<Launcher>,
        browsers: Arc<Browsers>,
    ) -> Desktop {
        Desktop {
            sessions,
            launcher,
            browsers,
            states: DesktopStates::default(),
        }
    }

    /// `computer_observe` on the session's screen.
    pub async fn observe(
        &self,
        session: &Arc<Session>,
        req: ObserveRequest,
    ) -> Result<Observation, DesktopError> {
        let state = self.states.of(session);
        observe::observe(&self.sessions, &self.browsers, session, &state, req).await
    }

    /// `open_path` or `launch_app` on the session's screen, then the
    /// screenshot `frame` asks for once the screen settled as `settling`
    /// says.
    pub async fn open(
        &self,
        session: &Arc<Session>,
        opening: Opening<'_>,
        frame: FrameOptions,
        settling: Settling,
    ) -> Result<OpenedResponse, DesktopError> {
        let parts = open::OpenParts {
            sessions: &self.sessions,
            browsers: &self.browsers,
            launcher: &self.launcher,
        };
        let state = self.states.of(session);
        open::open(parts, session, &state, opening, frame, settling).await
    }

    /// `computer_act` on the session's screen.
    pub async fn act(
        &self,
        session: &Arc<Session>,
        req: ActRequest,
    ) -> Result<ActResponse, DesktopError> {
        let state = self.states.of(session);
        act::act(
            &self.sessions,
            &self.browsers,
            session,
            &state,
            &self.launcher,
            req,
        )
        .await
    }
}
