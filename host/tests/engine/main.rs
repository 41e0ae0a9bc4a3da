//! The engine tier: every host test that needs a real Docker engine and the
//! real image, in one binary so that it is linked once and its tests fill
//! both test threads from start to end instead of idling at the tail of each
//! file. One module per subject; a test keeps its module's name in its path
//! (`mcp_session::...`), so `scripts/test-http.sh` and
//! `scripts/test-remote.sh` select the modules they rerun by that prefix.
//!
//! The one test that must not share an engine with these has a binary of
//! its own: `faults_dockerd` (it restarts the engine).
//! `release_build` drives the release binary that `scripts/test.sh` builds,
//! and fails naming the command that builds it when it is missing.
//!
//! Run one module: `cargo test -p computer-use-mcp --test engine mcp_session::`.

#[path = "../support/mod.rs"]
mod support;

mod docker_hardening;
mod docker_info;
mod docker_lifecycle;
mod docker_limits;
mod docker_remote;
mod doctor;
mod faults;
mod mcp_apps;
mod mcp_browser;
mod mcp_devtools;
mod mcp_evidence;
mod mcp_evidence_delivery;
mod mcp_handoff;
mod mcp_http;
mod mcp_http_tenants;
mod mcp_http_trust;
mod mcp_open;
mod mcp_session;
mod mcp_textview;
mod mcp_transfer;
mod network;
mod release_build;
mod remote_engine;
mod snapshots;
mod typescript_sdk;
