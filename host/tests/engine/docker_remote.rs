//! A remote Docker engine, reached over TLS and over ssh the way the docker
//! CLI reaches one: the real `computer-use-mcp info` names the transport and
//! reaches the engine, wrong settings give errors that say what to fix, and
//! an attached exec (the upgraded connection the tunnel rides on) echoes
//! bytes through both transports. The engine is the one of
//! `scripts/remote-engine.sh`, in a network namespace of its own.

use crate::support::docker::image;
use crate::support::mcp::host_bin;
use crate::support::remote::{remote_docker, remote_engine, ENDPOINT_VARS, LINK, SSH_ALIAS};
use bollard::exec::StartExecResults;
use bollard::models::{ContainerCreateBody, ExecConfig};
use bollard::query_parameters::CreateContainerOptionsBuilder;
use computer_use_mcp::docker::resolve_endpoint;
use computer_use_mcp::settings::Env;
use futures::StreamExt;
use std::process::Command;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// `computer-use-mcp info` against the engine `env` names; its stdout.
fn info(env: &[(String, String)]) -> String {
    host(env, "info")
}

/// `computer-use-mcp <command>` against the engine `env` names; its stdout.
fn host(env: &[(String, String)], command: &str) -> String {
    let mut cmd = Command::new(host_bin());
    for var in ENDPOINT_VARS {
        cmd.env_remove(var);
    }
    let out = cmd
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("COMPUTER_USE_NAME", "cu-remote-info-absent")
        .env("COMPUTER_USE_IMAGE", image())
        .arg(command)
        .output()
        .unwrap_or_else(|e| panic!("runs computer-use-mcp {command}: {e}"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!("{text}{}", String::from_utf8_lossy(&out.stderr));
    text
}

fn with(env: &[(String, String)], name: &str, value: &str) -> Vec<(String, String)> {
    let mut env: Vec<_> = env.iter().filter(|(k, _)| k != name).cloned().collect();
    env.push((name.to_string(), value.to_string()));
    env
}

/// The line of `info` that says what the image is: present with a version
/// only when the engine answered.
fn assert_reached(text: &str) {
    assert!(
        text.contains(&format!("image:    {} (present, version ", image())),
        "{text}"
    );
    assert!(
        text.contains(
            "computer: `cu-remote-info-absent` does not exist; start_computer creates it"
        ),
        "{text}"
    );
}

#[test]
fn info_over_tls_names_the_transport_and_the_certificates() {
    let _link = LINK.blocking_read();
    let cert_path = cert_path();
    let text = info(&remote_engine().tls);
    assert!(
        text.contains(&format!("docker:   `tcp://10.231.0.2:2376` (from DOCKER_HOST), over tls, certificates in `{cert_path}` (from DOCKER_CERT_PATH)\n")),
        "{text}"
    );
    assert_reached(&text);
}

#[test]
fn info_over_ssh_names_the_transport() {
    let _link = LINK.blocking_read();
    let text = info(&remote_engine().ssh);
    assert!(
        text.contains(&format!("docker:   `ssh://{SSH_ALIAS}` (from DOCKER_HOST), over ssh, through `ssh -o ConnectTimeout=30 -T -- {SSH_ALIAS} 'docker system dial-stdio'`\n")),
        "{text}"
    );
    assert_reached(&text);
}

/// Where the remote engine's client certificates are.
fn cert_path() -> String {
    let tls = &remote_engine().tls;
    tls.iter()
        .find(|(k, _)| k == "DOCKER_CERT_PATH")
        .expect("the TLS environment has DOCKER_CERT_PATH")
        .1
        .clone()
}

#[test]
fn doctor_over_tls_names_the_transport_and_reaches_the_engine() {
    let _link = LINK.blocking_read();
    let text = host(&remote_engine().tls, "doctor");
    let cert_path = cert_path();
    let line = |name: &str| {
        text.lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("no `{name}` line in:\n{text}"))
            .to_string()
    };
    let endpoint = line("docker-endpoint");
    assert!(endpoint.starts_with("ok "), "{text}");
    assert!(
        endpoint.ends_with(&format!("`tcp://10.231.0.2:2376` (from DOCKER_HOST), over tls, certificates in `{cert_path}` (from DOCKER_CERT_PATH)")),
        "{text}"
    );
    let engine = line("docker-engine");
    assert!(
        engine.starts_with("ok ") && engine.contains("at `tcp://10.231.0.2:2376`, linux/"),
        "{text}"
    );
}

/// Contexts made by the real docker CLI, in a folder of their own: the TLS
/// one keeps copies of the certificates under `contexts/tls/`.
#[test]
fn info_through_contexts_made_by_the_docker_cli() {
    let _link = LINK.blocking_read();
    let certs = cert_path();
    let config = tempfile::tempdir().unwrap();
    let config_dir = config.path().display().to_string();
    let docker_cli = |args: &[&str]| {
        let out = remote_docker(&[("DOCKER_CONFIG".into(), config_dir.clone())], args);
        assert!(
            out.status.success(),
            "docker {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    docker_cli(&[
        "context",
        "create",
        "remote-tls",
        "--docker",
        &format!("host=tcp://10.231.0.2:2376,ca={certs}/ca.pem,cert={certs}/cert.pem,key={certs}/key.pem"),
    ]);
    docker_cli(&[
        "context",
        "create",
        "remote-ssh",
        "--docker",
        &format!("host=ssh://{SSH_ALIAS}"),
    ]);
    for (context, transport) in [
        ("remote-tls", "over tls, certificates in `".to_string()),
        (
            "remote-ssh",
            format!("over ssh, through `ssh -o ConnectTimeout=30 -T -- {SSH_ALIAS}"),
        ),
    ] {
        let text = info(&[
            ("DOCKER_CONFIG".into(), config_dir.clone()),
            ("DOCKER_CONTEXT".into(), context.into()),
        ]);
        assert!(
            text.contains(&format!("(from DOCKER_CONTEXT={context}), {transport}")),
            "{text}"
        );
        if context == "remote-tls" {
            assert!(
                text.contains(&format!("{config_dir}/contexts/tls/"))
                    && text.contains("(the context's TLS files)"),
                "{text}"
            );
        }
        assert_reached(&text);
    }
}

#[test]
fn a_wrong_cert_path_names_the_missing_file() {
    let _link = LINK.blocking_read();
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().display().to_string();
    let text = info(&with(&remote_engine().tls, "DOCKER_CERT_PATH", &dir));
    assert!(
        text.contains(&format!("docker:   the Docker endpoint `tcp://10.231.0.2:2376` (from DOCKER_HOST) uses TLS, but `{dir}/ca.pem` (from DOCKER_CERT_PATH) is missing; set DOCKER_CERT_PATH to the folder that holds the engine's `ca.pem`")),
        "{text}"
    );
    assert!(
        text.contains("computer: not checked; fix the problem above first"),
        "{text}"
    );
}

#[test]
fn an_unknown_ssh_host_quotes_ssh() {
    let _link = LINK.blocking_read();
    remote_engine();
    let host = format!("ssh://{SSH_ALIAS}-no-such-host");
    let text = info(&[("DOCKER_HOST".into(), host.clone())]);
    assert!(
        text.contains(&format!(
            "computer: unknown: cannot reach the Docker engine at `{host}` (from DOCKER_HOST):"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("ended with exit code 255 before the engine answered: ssh: Could not resolve hostname {SSH_ALIAS}-no-such-host")),
        "{text}"
    );
    assert!(
        text.contains("check the host name and port in DOCKER_HOST or the context"),
        "{text}"
    );
}

#[test]
fn a_refused_ssh_login_says_how_to_log_in() {
    let _link = LINK.blocking_read();
    remote_engine();
    // The alias's key, but a user whose authorized_keys does not hold it.
    let host = format!("ssh://nobody@{SSH_ALIAS}");
    let text = info(&[("DOCKER_HOST".into(), host)]);
    assert!(text.contains("Permission denied (publickey)"), "{text}");
    assert!(
        text.contains("add your key to the remote `~/.ssh/authorized_keys`"),
        "{text}"
    );
}

/// A small container on the remote engine, removed however the test ends.
struct RemoteContainer {
    env: Vec<(String, String)>,
    name: String,
}

impl Drop for RemoteContainer {
    fn drop(&mut self) {
        remote_docker(&self.env, &["rm", "-f", &self.name]);
    }
}

/// Runs `cat` in a container on the remote engine through an attached exec
/// (an upgraded HTTP connection), writes bytes to it, closes its input, and
/// checks that every byte comes back.
async fn exec_echoes(env: &[(String, String)], label: &str) {
    let mut resolved = Env::new();
    for (k, v) in env {
        resolved.insert(k.clone(), v.clone());
    }
    let endpoint = resolve_endpoint(&resolved).expect("the remote endpoint resolves");
    let docker = endpoint.connect().await.expect("the remote engine answers");
    let container = RemoteContainer {
        env: env.to_vec(),
        name: format!("cu-remote-echo-{label}-{}", std::process::id()),
    };
    remote_docker(env, &["rm", "-f", &container.name]);
    let options = CreateContainerOptionsBuilder::default()
        .name(&container.name)
        .build();
    docker
        .create_container(
            Some(options),
            ContainerCreateBody {
                image: Some("debian:trixie".into()),
                cmd: Some(vec!["sleep".into(), "600".into()]),
                ..Default::default()
            },
        )
        .await
        .expect("creates a debian:trixie container on the remote engine");
    docker
        .start_container(&container.name, None)
        .await
        .expect("starts it");
    let exec = docker
        .create_exec(
            &container.name,
            ExecConfig {
                cmd: Some(vec!["cat".into()]),
                attach_stdin: Some(true),
                attach_stdout: Some(true),
                ..Default::default()
            },
        )
        .await
        .expect("creates the exec");
    let StartExecResults::Attached {
        mut output,
        mut input,
    } = docker
        .start_exec(&exec.id, None)
        .await
        .expect("starts the exec attached")
    else {
        panic!("the exec started detached");
    };
    // More than one read and one write, with every byte value.
    let sent: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let write = async {
        input.write_all(&sent).await.expect("writes to cat");
        input.shutdown().await.expect("closes cat's input");
    };
    let read = async {
        let mut got = Vec::new();
        while let Some(chunk) = output.next().await {
            got.extend_from_slice(&chunk.expect("reads cat's output").into_bytes());
        }
        got
    };
    let (_, got) =
        tokio::time::timeout(Duration::from_secs(60), async { tokio::join!(write, read) })
            .await
            .expect("cat echoed everything and ended within 60 s");
    assert_eq!(got.len(), sent.len(), "bytes echoed through {label}");
    assert!(got == sent, "the echo through {label} differs");
}

/// Held by the tests that start `ssh` from this process, so that counting
/// this process's `ssh` children sees only one test's.
static SSH_CHILDREN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The pids of this process's live children that run `ssh` (an ssh killed
/// by an earlier test stays a zombie until tokio reaps it).
fn ssh_children() -> std::collections::BTreeSet<u32> {
    let mut pids = std::collections::BTreeSet::new();
    for task in std::fs::read_dir("/proc/self/task").expect("reads /proc/self/task") {
        let children = task.unwrap().path().join("children");
        for pid in std::fs::read_to_string(children)
            .unwrap_or_default()
            .split_whitespace()
        {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('Z'));
            if comm.trim() == "ssh" && !zombie {
                pids.insert(pid.parse().unwrap());
            }
        }
    }
    pids
}

#[tokio::test(flavor = "multi_thread")]
async fn attached_exec_echoes_over_ssh() {
    let _link = LINK.read().await;
    let _alone = SSH_CHILDREN.lock().await;
    exec_echoes(&remote_engine().ssh, "ssh").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn consecutive_calls_over_ssh_reuse_their_ssh() {
    let _link = LINK.read().await;
    let _alone = SSH_CHILDREN.lock().await;
    let env: Env = remote_engine().ssh.iter().cloned().collect();
    // Another test's ssh may still be ending.
    let earlier = ssh_children();
    let docker = resolve_endpoint(&env).unwrap().connect().await.unwrap();
    let mut seen = ssh_children();
    let started = std::time::Instant::now();
    for _ in 0..50 {
        docker.version().await.expect("the remote engine answers");
        seen.extend(ssh_children());
    }
    let took = started.elapsed();
    seen.retain(|pid| !earlier.contains(pid));
    eprintln!(
        "50 calls over ssh took {took:?} with {} ssh processes",
        seen.len()
    );
    // Usually one. hyper's pool starts a new connection when a call comes
    // before the previous call's connection is back in the pool, and drops
    // one the engine closed, so a busy machine sees a few; one per call
    // would mean no reuse at all.
    assert!(
        (1..=5).contains(&seen.len()),
        "50 calls in a row started {} ssh processes: {seen:?}",
        seen.len()
    );
    // Dropping the client ends its pooled ssh processes.
    drop(docker);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while ssh_children().iter().any(|pid| seen.contains(pid)) {
        assert!(
            std::time::Instant::now() < deadline,
            "an ssh of {seen:?} outlived its client by 10 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn attached_exec_echoes_over_tls() {
    let _link = LINK.read().await;
    exec_echoes(&remote_engine().tls, "tls").await;
}

/// The inodes of this process's established TCP connections to the remote
/// engine's TLS port (10.231.0.2:2376, as `/proc/net/tcp` writes it).
fn engine_connections() -> Vec<u64> {
    const ENGINE: &str = "0200E70A:0948";
    const ESTABLISHED: &str = "01";
    let mine: std::collections::BTreeSet<u64> = std::fs::read_dir("/proc/self/fd")
        .expect("reads /proc/self/fd")
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter_map(|link| {
            let link = link.to_string_lossy().into_owned();
            link.strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect();
    std::fs::read_to_string("/proc/self/net/tcp")
        .expect("reads /proc/self/net/tcp")
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let inode: u64 = fields.get(9)?.parse().ok()?;
            (fields.get(2) == Some(&ENGINE)
                && fields.get(3) == Some(&ESTABLISHED)
                && mine.contains(&inode))
            .then_some(inode)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn consecutive_calls_over_tls_reuse_their_connection() {
    let _link = LINK.read().await;
    let env: Env = remote_engine().tls.iter().cloned().collect();
    let docker = resolve_endpoint(&env).unwrap().connect().await.unwrap();
    let mut seen: std::collections::BTreeMap<u64, usize> = Default::default();
    let mut kept_open = 0;
    for _ in 0..50 {
        docker.version().await.expect("the remote engine answers");
        let open = engine_connections();
        kept_open += usize::from(!open.is_empty());
        for inode in open {
            *seen.entry(inode).or_default() += 1;
        }
    }
    // A client without a pool closes its connection after each call: none
    // stays open after a call, and each call has a connection of its own.
    // The pool may replace a connection the engine closed, at any point of
    // the run (one run here: 21 calls on the first, then 29 on the next),
    // so what counts is that connections stay open and are few.
    assert!(
        kept_open >= 45 && seen.len() <= 5,
        "calls did not share pooled connections: a connection was open after {kept_open} of 50 calls, over {} connections: {seen:?}",
        seen.len()
    );
}
