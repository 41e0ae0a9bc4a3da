//! What can go wrong on the Docker side. Each message says what happened,
//! what may still exist or run, and what to do. The fixes `doctor` also
//! prints come from [`fix`](super::fix), and those errors point at `doctor`.

use super::fix::{DEV_IMAGE_MISSING, ENGINE_UNREACHABLE, PORT_TAKEN, PULL_DENIED, RUN_DOCTOR};
use super::origin::{CertOrigin, EndpointSource};
use super::ssh::SshAddressError;
use crate::error_chain::describe;
use std::path::PathBuf;
use std::time::Duration;

/// The endpoint could not be worked out from the environment and the Docker
/// CLI's configuration; no connection was attempted.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    #[error("the Docker endpoint `{host}` ({origin}) {reason}")]
    Refused {
        host: String,
        origin: EndpointSource,
        reason: Refusal,
    },
    #[error("`{host}` ({origin}) is not a Docker address: use `unix:///path/to/docker.sock`, `npipe:////./pipe/docker_engine`, `tcp://host:port` (with DOCKER_TLS_VERIFY for TLS) or `ssh://[user@]host[:port]`")]
    Malformed {
        host: String,
        origin: EndpointSource,
    },
    #[error("`{host}` ({origin}) is not a usable ssh address: {reason}; write it as `ssh://[user@]host[:port]`")]
    BadSsh {
        host: String,
        origin: EndpointSource,
        #[source]
        reason: SshAddressError,
    },
    #[error("the Docker endpoint `{host}` (from DOCKER_HOST) needs TLS files, but neither DOCKER_CERT_PATH nor a home folder (HOME, USERPROFILE on Windows) nor DOCKER_CONFIG says where they are; set DOCKER_CERT_PATH to the folder with `ca.pem`, `cert.pem` and `key.pem`")]
    NoCertPath { host: String },
    /// `file` names the file, where it came from and what is wrong with it.
    #[error("the Docker endpoint `{host}` ({origin}) uses TLS, but {file}; {}", cert_origin.fix())]
    TlsFile {
        host: String,
        origin: EndpointSource,
        file: String,
        cert_origin: CertOrigin,
    },
    #[error("the Docker endpoint `{host}` ({origin}) is a {kind}, which this system does not have; use a Docker context with a socket or set DOCKER_HOST")]
    WrongPlatform {
        host: String,
        origin: EndpointSource,
        kind: &'static str,
    },
    #[error("the Docker context `{name}` ({origin}) does not exist: `{}` is missing; run `docker context ls` and choose one that does", meta.display())]
    NoContext {
        name: String,
        origin: EndpointSource,
        meta: PathBuf,
    },
    #[error("the Docker context `{name}` ({origin}) has no Docker endpoint in `{}`; run `docker context inspect {name}`, or choose another context", meta.display())]
    NoHost {
        name: String,
        origin: EndpointSource,
        meta: PathBuf,
    },
    #[error("cannot read `{}`: {source}; fix its permissions, or set DOCKER_HOST to skip it", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("`{}` is not valid JSON: {source}; fix the file, or set DOCKER_HOST to skip it", path.display())]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
}

/// Why a well-formed endpoint is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `DOCKER_TLS` without `DOCKER_TLS_VERIFY`: TLS that trusts any engine.
    TlsWithoutVerify,
    /// A context with `SkipTLSVerify`.
    ContextSkipsVerify,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refusal::TlsWithoutVerify => "asks for TLS without checking the engine's certificate (DOCKER_TLS is set, DOCKER_TLS_VERIFY is not), which computer-use-mcp does not do: anyone on the way could run containers as you; set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH to the folder with the engine's `ca.pem` and your `cert.pem` and `key.pem`",
            Refusal::ContextSkipsVerify => "skips checking the engine's certificate (`SkipTLSVerify` in the context), which computer-use-mcp does not do: anyone on the way could run containers as you; recreate the context with the engine's CA (`docker context create <name> --docker \"host=tcp://…,ca=…,cert=…,key=…\"`)",
        })
    }
}

/// Talking to the Docker engine, or to computerd in a container it started.
#[derive(Debug, thiserror::Error)]
pub enum DockerError {
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    /// N15: a program squatting the viewer's port would get the key from
    /// the person's browser.
    #[error("127.0.0.1:{port}, the viewer's port of the computer `{name}`, is held by a program that is not this computer's viewer ({answer}): the person's browser would give it the viewer key. Stop that program (`ss -ltnp 'sport = :{port}'` names it), or give this computer other ports with COMPUTER_USE_PORT_BASE")]
    ViewerPortHeld {
        name: String,
        port: u16,
        answer: String,
    },
    #[error("cannot reach the Docker engine at `{host}` ({why}): {}; {engine_unreachable}; {run_doctor}", describe(source), engine_unreachable = ENGINE_UNREACHABLE, run_doctor = RUN_DOCTOR)]
    Unreachable {
        host: String,
        why: String,
        source: bollard::errors::Error,
    },
    #[error("the Docker engine at `{host}` ({why}) did not answer within {}s; check that Docker is running and not stuck, or point DOCKER_HOST or DOCKER_CONTEXT at another engine; {run_doctor}", after.as_secs(), run_doctor = RUN_DOCTOR)]
    EngineSilent {
        host: String,
        why: String,
        after: Duration,
    },
    #[error("the Docker engine failed {action}: {}; {aftermath}", describe(source))]
    Call {
        action: String,
        aftermath: String,
        source: bollard::errors::Error,
    },
    #[error("the Docker engine did not finish {action} within {}s; {aftermath}", after.as_secs())]
    Timeout {
        action: String,
        aftermath: String,
        after: Duration,
    },
    #[error("the image `{image}` does not exist, and dev builds never pull: {dev_image_missing}; {run_doctor}", dev_image_missing = DEV_IMAGE_MISSING, run_doctor = RUN_DOCTOR)]
    DevImageMissing { image: String },
    #[error("cannot pull the image `{image}`: {}; {pull_denied}; {run_doctor}", describe(source), pull_denied = PULL_DENIED, run_doctor = RUN_DOCTOR)]
    Pull {
        image: String,
        source: bollard::errors::Error,
    },
    #[error("pulling the image `{image}` made no progress for {}s; check the network and run `docker pull {image}` to see what happens, then call start_computer again", after.as_secs())]
    PullStalled { image: String, after: Duration },
    #[error("cannot use the registry login for `{registry}`: {reason}; run `docker login {registry}` again")]
    Credentials { registry: String, reason: String },
    #[error("host port {port} on 127.0.0.1 is taken, so a computer with ports {base}-{} cannot start; {port_taken}; {run_doctor}", base + 16, port_taken = PORT_TAKEN, run_doctor = RUN_DOCTOR)]
    PortTaken { port: u16, base: u16 },
    #[error("host port {port} on 127.0.0.1 is taken, and the stopped computer `{name}` keeps the ports it was created with ({base}-{}); stop what uses the port, or remove the computer with `docker rm {name}` (its home volume stays) and set COMPUTER_USE_PORT_BASE to another first port; {run_doctor}", base + 16, run_doctor = RUN_DOCTOR)]
    ExistingPortTaken { port: u16, base: u16, name: String },
    #[error("no 17 free host ports above {first} for a tenant's computer: every slot is held by another computer or program; remove computers no longer used (`docker ps -a`), or set COMPUTER_USE_PORT_BASE lower")]
    NoPortSlot { first: u16 },
    #[error("this tenant's home, the volume `{volume}`, was made for another token (home key {made_for}), so it is not opened: the tenant's name may have been given to someone new. The server's operator decides: for someone new, remove the old tenant's computer and home first (`docker rm -f {name} {name}-network && docker volume rm {volume}`, and its folder beneath COMPUTER_USE_TRANSFER_ROOT); for the same person with a new token, add `COMPUTER_USE_TENANT_HOME={made_for}` to their line in the tenants file and restart the server")]
    HomeOfAnother {
        name: String,
        volume: String,
        made_for: String,
    },
    #[error("a container named `{name}` exists but was not made by computer-use-mcp (it has no COMPUTERD_TOKEN); set COMPUTER_USE_NAME to another name, or remove that container")]
    NotOurs { name: String },
    #[error("the computer `{name}` is {status}; {fix}")]
    Busy {
        name: String,
        status: String,
        fix: String,
    },
    #[error("the computer `{name}` has no {what}, so it was changed outside computer-use-mcp; remove it with `docker rm -f {name}` (its home volume stays) and call start_computer to create it again")]
    Damaged { name: String, what: &'static str },
    #[error("cannot open the tunnel to the computer `{name}` on this machine's 127.0.0.1: {source}; free a local port or set COMPUTER_USE_PORT_BASE to other ports")]
    Tunnel {
        name: String,
        source: std::io::Error,
    },
    #[error("the computer `{name}` stopped while starting (exit code {exit_code}); its container is still there: see why with `docker logs {name}`")]
    Exited { name: String, exit_code: i64 },
    #[error("the computer `{name}` was removed while it was starting; call start_computer again to create it")]
    Vanished { name: String },
    /// The computer's network guard (`docker::guard`) failed; the computer
    /// gets no network without it.
    #[error("the computer's network guard `{name}` failed: {why}; the computer has no network until it runs (see `docker logs {name}`; the image needs nftables and the engine must allow NET_ADMIN for the guard)")]
    Guard { name: String, why: String },
    /// The container that owns the computer's network namespace is gone,
    /// so the computer cannot start again and, if it runs, has loopback
    /// only. Only a new computer gets a new guard.
    #[error("the computer `{name}` runs in the network of its guard `{guard}`, which was removed, so it has no network and cannot start again; remove the computer with `docker rm -f {name}` (its home volume stays) and call start_computer to create both again")]
    GuardGone { name: String, guard: String },
    #[error("computerd in the computer `{name}` did not answer `GET {url}` within {}s ({last}); the container is running: see its logs with `docker logs {name}`", after.as_secs())]
    Unhealthy {
        name: String,
        url: String,
        after: Duration,
        last: String,
    },
    #[error("computerd in the computer `{name}` did not give its viewer key at `{url}`: {reason}; see its logs with `docker logs {name}`")]
    ViewerKey {
        name: String,
        url: String,
        reason: String,
    },
    /// computerd gave a key that breaks the key rule; it goes into links
    /// and command lines, so it is never used.
    #[error(transparent)]
    InvalidViewerKey(#[from] computer_protocol::InvalidViewerKey),
    /// A setting the engine cannot honour, such as more CPUs than it has.
    #[error(transparent)]
    Setting(#[from] crate::settings::SettingsError),
}
