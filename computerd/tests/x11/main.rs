//! The X tier: capture, input and accessibility against a real Xvnc, with
//! no daemon; each test owns its displays. One binary, so it links once and
//! its tests fill both test threads.

#[path = "../support/xvnc.rs"]
mod xvnc;

mod a11y;
mod capture;
mod input;
mod popups;
mod test_window;
