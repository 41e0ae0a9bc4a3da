//! computer-use-mcp: the MCP server on the host.
//!
//! # Layout
//! - [`mcp`]: the rmcp stdio server; `catalog` lists the tools, `args` reads
//!   their arguments, `tools/` holds one file per tool area, `result` builds
//!   their results, `state` keeps this process's connection and sessions,
//!   and `api_port` asks Docker where the API is now before the token is
//!   sent anywhere (a restarted computer has a new port).
//! - [`computer`]: turns `start_computer` into a running, healthy computer
//!   (settings, Docker, health) and a [`client::ComputerdClient`] for it.
//! - [`docker`]: the Docker endpoint, the container lifecycle, its limits
//!   (pids, logs, capabilities) and the image.
//! - [`settings`]: the `COMPUTER_USE_*` variables, read when the spec says.
//! - [`client`]: computerd's HTTP API with deadlines and size caps, straight
//!   to loopback (no proxy, no redirects): the computer is not trusted.
//! - [`transfer`]: `file_transfer`'s host side: host paths, and tar
//!   streamed to and from computerd with bounded memory and stall limits.
//! - [`heartbeat`]: keeps this process's sessions alive; ends them at exit.
//! - [`info`]: the `info` command.
//! - [`open`]: opens the viewer (browser tab or native VNC) when a screen opens.
//!
//! A tool call flows `mcp::server` → `mcp::tools::*` → `client` → computerd,
//! and back as text, structured content and images.

pub mod client;
pub mod computer;
pub mod docker;
pub mod heartbeat;
pub mod info;
pub mod mcp;
pub mod open;
pub mod settings;
pub mod transfer;
