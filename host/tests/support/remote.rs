//! A "remote" Docker engine for the remote-engine tests: the second dockerd
//! and the sshd of `scripts/remote-engine.sh`, in a network namespace of
//! their own, reached over TLS (`tcp://10.231.0.2:2376`) or ssh
//! (`ssh://cu-remote`). Brought up once per test binary; a missing program
//! or a failed start fails the test with the fix.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The environment that points a client at the remote engine.
#[derive(Debug, Clone)]
pub struct RemoteEngine {
    /// `DOCKER_HOST`, `DOCKER_TLS_VERIFY` and `DOCKER_CERT_PATH`.
    pub tls: Vec<(String, String)>,
    /// `DOCKER_HOST=ssh://cu-remote`, through the `Host cu-remote` block the
    /// script includes from root's ssh config.
    pub ssh: Vec<(String, String)>,
}

/// The remote engine's link, for every test of the binary that reaches that
/// engine: a test that takes the link down (`remote_engine`) holds it alone,
/// the others (`docker_remote`) side by side, so that none meets an outage
/// another test made. The engine tier runs those modules in one process.
pub static LINK: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

/// The `ssh` alias the script sets up.
pub const SSH_ALIAS: &str = "cu-remote";

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/remote-engine.sh")
}

/// Starts the remote engine (idempotent, once per test binary) and returns
/// how to reach it. It needs root, the programs below and the test image
/// on this machine's engine.
pub fn remote_engine() -> &'static RemoteEngine {
    static READY: OnceLock<Result<RemoteEngine, String>> = OnceLock::new();
    let ready = READY.get_or_init(|| {
        super::docker::require_docker();
        for (program, package) in [
            ("ssh", "openssh-client"),
            ("/usr/sbin/sshd", "openssh-server"),
            ("ssh-keygen", "openssh-client"),
            ("openssl", "openssl"),
            ("ip", "iproute2"),
            ("nsenter", "util-linux"),
            ("dockerd", "docker.io"),
        ] {
            let found = if program.starts_with('/') {
                Path::new(program).is_file()
            } else {
                Command::new("sh")
                    .args(["-c", &format!("command -v {program}")])
                    .output()
                    .is_ok_and(|o| o.status.success())
            };
            if !found {
                return Err(format!(
                    "`{program}` is missing, and the remote-engine tests need it; install it with `bash scripts/install-test-deps.sh` (or `apt-get install {package}`)"
                ));
            }
        }
        let up = Command::new("bash")
            .arg(script())
            .arg("up")
            .env("COMPUTER_USE_REMOTE_IMAGE", super::docker::image())
            .output()
            .map_err(|e| format!("cannot run `bash {}`: {e}", script().display()))?;
        if !up.status.success() {
            return Err(format!(
                "`bash {} up` failed ({}); it needs root, and the images computer-use-mcp:dev and debian:trixie on this machine's engine:\n{}",
                script().display(),
                up.status,
                String::from_utf8_lossy(&up.stderr)
            ));
        }
        let env = Command::new("bash")
            .arg(script())
            .arg("env")
            .output()
            .map_err(|e| format!("cannot run `bash {} env`: {e}", script().display()))?;
        let mut tls = Vec::new();
        let mut ssh = Vec::new();
        for line in String::from_utf8_lossy(&env.stdout).lines() {
            let Some((name, value)) = line.split_once('=') else {
                continue;
            };
            match name {
                "SSH_DOCKER_HOST" => ssh.push(("DOCKER_HOST".to_string(), value.to_string())),
                _ => tls.push((name.to_string(), value.to_string())),
            }
        }
        if tls.len() != 3 || ssh.len() != 1 {
            return Err(format!(
                "`bash {} env` printed something else than expected: {tls:?} {ssh:?}",
                script().display()
            ));
        }
        Ok(RemoteEngine { tls, ssh })
    });
    match ready {
        Ok(remote) => remote,
        Err(why) => panic!("{why}"),
    }
}

/// The variables that choose a Docker engine, which the tests replace.
pub const ENDPOINT_VARS: [&str; 6] = [
    "DOCKER_HOST",
    "DOCKER_CONTEXT",
    "DOCKER_TLS",
    "DOCKER_TLS_VERIFY",
    "DOCKER_CERT_PATH",
    "DOCKER_CONFIG",
];

/// Runs `docker <args>` against the engine `env` names.
pub fn remote_docker(env: &[(String, String)], args: &[&str]) -> std::process::Output {
    remote_docker_command(env, args)
        .output()
        .expect("runs `docker`")
}

/// `docker ARGS` against the engine `env` names, not yet started.
pub fn remote_docker_command(env: &[(String, String)], args: &[&str]) -> Command {
    let mut cmd = super::docker::docker_cli();
    for var in ENDPOINT_VARS {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v))).args(args);
    cmd
}
