//! computer-use-mcp: the MCP server on the host.
//!
//! # Layout
//! - [`mcp`]: the MCP server on rmcp's tool router: `tools/` declares each
//!   tool (name, description, annotations, arguments) beside its body, one
//!   file per tool area; `args` reads arguments naming the field at fault,
//!   `result` builds results, `error` is the one [`mcp::ToolError`].
//! - [`link`]: the process's one connection to the computer, shared by all
//!   agents; it asks `docker::recheck` where the API is now before the token
//!   is sent anywhere (a restarted computer has a new port).
//! - [`agent`]: one MCP client: its owner id, sessions, heartbeat and shown
//!   screens; closing it ends its sessions.
//! - [`tenant`]: whose computer an agent drives: one for stdio and a
//!   one-token HTTP server, one per tenant with a tenants file, each with
//!   its own link and the host files its agents may reach.
//! - [`serve`]: the transports: stdio, and Streamable HTTP with a bearer
//!   token or a tenants file.
//! - [`computer`]: turns `start_computer` into a running, healthy computer
//!   (settings, Docker, health) and a [`client::ComputerdClient`] for it.
//! - [`docker`]: the backend: the Docker endpoint (local, TLS, ssh), the
//!   container lifecycle, the dialer that reaches its ports (published, or
//!   a tunnel over the engine connection), its limits (pids, logs,
//!   capabilities), the image, and snapshots (`docker::snapshot`: a
//!   computer's files kept on its engine, restored, reset, and templates
//!   new computers start from). See docs/scaling.md for the boundary.
//! - [`settings`]: the `COMPUTER_USE_*` variables, read when the spec says.
//! - [`version`]: this build's version and its default image.
//! - [`client`]: computerd's HTTP API with deadlines and size caps, straight
//!   to loopback (no proxy, no redirects): the computer is not trusted.
//! - [`transfer`]: `file_transfer`'s host side: host paths, and tar
//!   streamed to and from computerd with bounded memory and stall limits.
//! - [`recording`]: recordings of sessions: each call queued as a step to
//!   computerd, the package brought home, and the `review` command.
//! - [`heartbeat`]: keeps an agent's sessions alive; ends them when it goes.
//! - [`info`]: the `info` command.
//! - [`snapshot_cli`]: the `snapshot` and `reset` commands.
//! - [`doctor`]: the `doctor` command: each thing the computer needs, checked
//!   with its own deadline (`--deep`: a spare screen, its browser, DevTools,
//!   accessibility bus, viewer and VNC), `ok`/`warn`/`err` with the fix; the
//!   fixes `start_computer`'s Docker errors end with live there too.
//! - [`open`]: opens the viewer (browser tab or native VNC) when a screen opens.
//! - [`state`]: the host's own folder (the key that signs recordings, the
//!   log of steps it sent), out of every computer's reach.
//! - [`clock`]: the wall clock in RFC 3339, for labels and steps.
//! - [`blocking`]: file and archive work off the async threads.
//! - [`error_chain`]: an error and its causes on one line, for every
//!   message that carries a lower layer's error.
//! - [`child_env`]: what every process the host starts must not inherit
//!   (the HTTP bearer token).
//!
//! A tool call flows `mcp::server` (rmcp's router) → `mcp::tools::*` →
//! `client` (one typed call per `computer_protocol::endpoints` route) → computerd,
//! and back as text, structured content and images.

// What runs never unwraps: a failure is an error its caller can tell
// about. Unit tests may (clippy.toml).
#![deny(clippy::unwrap_used)]

pub mod agent;
pub mod blocking;
pub mod child_env;
pub mod client;
pub mod clock;
pub mod computer;
pub mod docker;
pub mod doctor;
pub mod error_chain;
pub mod heartbeat;
pub mod info;
pub mod link;
pub mod mcp;
pub mod open;
pub mod recording;
pub mod serve;
pub mod settings;
pub mod snapshot_cli;
pub mod state;
pub mod tenant;
pub mod transfer;
pub mod version;
