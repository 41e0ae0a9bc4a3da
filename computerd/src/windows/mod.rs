//! The one place that lists, matches, raises and describes a screen's
//! windows, over the X connection it is handed (the screen's X thread's, or
//! one of a caller's own). Every failure is an [`XFault`](crate::display::XFault): an X request
//! that failed is never the agent's fault.
//!
//! - `props`: a window's title and class, the active window, the atoms.
//! - `focus`: windows by class or title; raising and focusing one.
//! - `list`: the mapped windows as the text view and handoff describe them.
//! - `popups`: menus, dropdowns and tooltips (override-redirect windows),
//!   which no window list names.
//! - `wm_menu`: the items of the window manager's own menus, which it
//!   draws without telling any toolkit.
//! - `wait`: waiting for a started app's window to show and take the focus.

mod focus;
mod list;
mod popups;
mod props;
mod wait;
mod wm_menu;

pub use focus::{active_is, active_matches, focus_window, focus_window_id, window_list};
pub use list::{list_windows, pick};
pub use popups::{list_popups, PopupReader};
pub use props::{
    active_window, active_window_title, pointer_and_active_title, window_class, window_title, Atoms,
};
pub use wait::wait_for_window;
pub use wm_menu::WmMenus;
