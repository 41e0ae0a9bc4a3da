//! What runs beside a screen without being part of it: the browser and its
//! DevTools bridge. They know the screen (they import this module), the
//! screen knows them only as companions it stops, in order, before its
//! display goes away.

use computer_protocol::ScreenNumber;
use futures::future::BoxFuture;

/// A registry of something that may run for any screen.
pub trait Companion: std::fmt::Debug + Send + Sync {
    /// Stops what runs for screen `number`, if anything does.
    fn stop_for(&self, number: ScreenNumber) -> BoxFuture<'_, ()>;
}
