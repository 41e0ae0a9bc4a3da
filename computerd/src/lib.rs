//! computerd: the daemon inside the computer. It runs the agents' sessions,
//! their screens, and the shell and file tools, behind a token-protected HTTP
//! API that the host binary `computer-use-mcp` calls.
//!
//! # Layout
//! - [`config`]: settings from flags and environment variables (read by
//!   clap), checked at start.
//! - [`server`]: wires everything together and serves until shutdown;
//!   [`http_server`] serves each listener with a deadline for request heads.
//! - [`api`]: HTTP routes; each extracts input, calls one subsystem, maps
//!   its error through [`http_error`]. With [`viewer`]'s `http` part,
//!   [`launcher`], [`http_server`], [`http_error`] and [`bearer`] (the
//!   token check the API and the launcher share), the only code that knows
//!   axum.
//! - [`sessions`]: live sessions, their working folders and screens, ended
//!   sessions' reasons, heartbeats and the idle/heartbeat reaper.
//! - [`screens`]: screen numbers 1..16, each an Xvnc display plus Fluxbox;
//!   the only owner of those processes and of X connections ([`display`]).
//!   Each screen's X connection belongs to one thread, which runs the jobs
//!   sent to it (capture, input, window queries) one at a time, in order.
//! - [`windows`]: listing, matching, raising and describing windows, over
//!   whichever X connection the caller hands it.
//! - [`screen_facts`]: a screen's size and the environment of every process
//!   on it; a leaf, so the browser, launcher, sessions and settings name
//!   them without importing `screens` or `config`.
//! - [`browser`]: a Chromium per screen, logins shared across screens, spoken
//!   to over DevTools; [`devtools`]: the DevTools MCP bridge to it. Both are
//!   a screen's companions ([`screens::Companion`]): they know screens, and a
//!   screen knows them only to stop them before its display closes.
//! - [`apps`]: `open_path`, `launch_app` and the focus fallback;
//!   [`launcher`]: the loopback listener the screens' menus ask to open
//!   things; [`a11y`]: a screen's accessibility bus.
//! - [`desktop`]: observe and act on a session's screen, using
//!   [`capture`] (X image to PNG) and [`input`] (XTEST mouse and keyboard);
//!   it keeps each session's frames, refs and repeated batches, and its
//!   action executor runs a batch's X work on the screen's X thread and
//!   awaits its async steps (starting an app, the accessibility bus).
//!   [`textview`] reads a screen as text (windows, accessibility trees) and
//!   turns the refs of its nodes into points.
//! - [`shell`]: `bash -lc` with deadlines that kill everything a command
//!   started (through `sudo -n kill` for what runs as root); [`jobs`] runs
//!   a session's commands and transfers, stopped when it ends or a person
//!   takes its screen;
//!   [`truncate`] keeps long output's head and tail.
//! - [`files`]: working folder, list, read, write.
//! - [`transfer`]: `file_transfer`'s checks, uploads and downloads as tar
//!   streams, with the archive rules of `computer_protocol::archive`.
//! - [`viewer`]: the page people open to watch and take over screens, its
//!   live session list, and the WebSocket bridge to each screen's Xvnc, on
//!   a listener of its own; guarded by `Host`, `Origin` and the key.
//! - [`viewer_key`]: the viewer key, kept in home (its first 8 characters
//!   are the VNC password), and the password file Xvnc reads.
//! - [`x_auth`]: the X cookies: the desktop's, which every Xvnc starts with
//!   and computerd's connections carry, and the untrusted one per screen
//!   that the agent's shell gets.
//! - [`handoff`]: a person holding a session's screen at its agent's
//!   request; screen calls are refused until they hand it back.
//!   [`handoff_desk`] makes, waits for and cancels those holds for a
//!   session, stopping what the session runs beside the person.
//! - [`recording`]: recordings of what agents did, written inside the
//!   computer as they happen, and the walkthrough packages they become;
//!   fed frames by [`desktop`] and steps by the host.
//! - [`memory`]: the container's memory limit and out-of-memory kills, which
//!   `shell` answers report.
//! - [`relay`]: `computerd relay`, one TCP connection to one of this
//!   computer's ports carried over stdin and stdout: the host's way in
//!   through `docker exec` when the engine is on another machine.
//! - [`netguard`]: `computerd net-guard`, the computer's network guard,
//!   run in a container of its own that holds the computer's firewall;
//!   computerd only asks it for the denials during a call.
//! - [`blocking`]: blocking work off the async threads, its panic carried
//!   on in the caller.
//! - [`process`]: supervised children, reaped as soon as they exit, killed
//!   when dropped unstopped, with the tail of their stderr kept for errors.
//! - [`heap`]: keeps the big buffers a transfer frees for the next ones,
//!   instead of handing them back to the kernel.
//!
//! A request flows `api` → `sessions` (find the session, count activity) →
//! one subsystem → back to `api` as JSON or a [`computer_protocol::WireError`].
//! An act flows `api` → [`desktop::Desktop`] (the session's state, refs and
//! frame pixels to screen points) → the executor → jobs on the screen's X
//! thread → [`input`]; then the settle and the screenshot, also on that
//! thread.
//!
//! Modules import downward only, with no circle (`scripts/import-circles.py`
//! checks it): `x_auth`, `screen_facts`, `display`, `windows`, `capture`
//! and `input` at the bottom; then
//! `screens`; then `browser` and `devtools`; then `textview`, `recording`,
//! `handoff` and `apps`; then `sessions`, which holds each session's slots
//! for recordings and holds; then `desktop`, `jobs` and
//! `handoff_desk`; `api` on top.

// What runs never unwraps: a failure is an error its caller can tell
// about. Unit tests may (clippy.toml).
#![deny(clippy::unwrap_used)]

pub mod a11y;
pub mod api;
pub mod apps;
pub mod bearer;
pub mod blocking;
pub mod browser;
pub mod capture;
pub mod clock;
pub mod config;
pub mod desktop;
pub mod devtools;
pub mod display;
pub mod files;
pub mod handoff;
pub mod handoff_desk;
pub mod heap;
pub mod http_error;
pub mod http_server;
pub mod input;
pub mod jobs;
pub mod launcher;
pub mod memory;
pub mod netguard;
pub mod process;
pub mod recording;
pub mod relay;
pub mod screen_facts;
pub mod screens;
pub mod server;
pub mod sessions;
pub mod shell;
pub mod textview;
pub mod transfer;
pub mod truncate;
pub mod viewer;
pub mod viewer_key;
pub mod windows;
pub mod x_auth;

/// Logs to stderr, filtered by `COMPUTERD_LOG` (default `info`): the daemon's
/// and the network guard's way.
pub fn log_to_stderr() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("COMPUTERD_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .init();
}
