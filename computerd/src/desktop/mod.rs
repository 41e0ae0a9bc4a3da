//! What an agent does on its screen: observe it and act on it. Both open the
//! session's screen on first use and borrow its X connection for one blocking
//! call at a time.

mod act;
pub mod effects;
mod observe;
mod quiet;

pub use act::act;
pub use effects::EffectsWatch;
pub use observe::{capture_observation, observe};
pub use quiet::settle;

use crate::capture::CaptureError;
use crate::display::XFault;
use crate::input::InputError;
use crate::screens::ScreenError;
use crate::sessions::SessionError;
use crate::textview::TextViewError;
use computer_protocol::{Coded, ErrorCode, InvalidInput};

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
        }
    }
}

/// Runs blocking X work off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, DesktopError> + Send + 'static,
) -> Result<T, DesktopError> {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}
