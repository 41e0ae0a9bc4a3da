//! computerd: the daemon inside the computer.
//! (Crate doc completed when the core lands.)

pub mod capture;
pub mod display;
pub mod files;
pub mod input;
pub mod shell;
