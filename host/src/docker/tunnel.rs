//! The computer's ports carried over the engine connection, for an engine
//! on another machine: the ports it publishes are on that machine's
//! loopback, out of reach from here.
//!
//! A [`Tunnel`] listens on this machine's 127.0.0.1: a port Docker would
//! never give out for computerd's API (chosen by the system), the viewer on
//! the computer's base port and VNC of screens 1 to 16 after it, as a local
//! engine would publish them. Each accepted connection becomes one
//! `docker exec` of `computerd relay 127.0.0.1:<port>` in the container,
//! whose attached stdin and stdout carry its bytes over the connection the
//! host already has to the engine (TLS or ssh). An exec costs a few round
//! trips to the engine, so the API client keeps its connections alive and
//! pays it once per connection, not per call.
//!
//! Nothing here listens on anything but 127.0.0.1. The viewer and VNC
//! listeners follow the container by name: a computer created again under
//! the same name keeps its local ports. The API's listener is made anew for
//! each start of the container, so its port moves as a published one would.

use super::ports::{API_PORT, LOOPBACK, VIEWER_PORT, VNC_PORT_BASE};
use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecOptions, StartExecResults};
use bollard::Docker;
use computer_protocol::limits::SCREENS_MAX;
use futures::StreamExt;
use parking_lot::{Mutex, RwLock};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// Bytes moved per read, both ways; a frame or a tar block takes a few.
const CHUNK: usize = 64 * 1024;
/// Where `computerd` is in the image, so the exec does not depend on PATH.
const COMPUTERD: &str = "/usr/local/bin/computerd";

/// Local listeners relaying to one computer's ports. Dropping it closes
/// them; connections already carried run until either side closes.
pub struct Tunnel {
    docker: Docker,
    /// The container the viewer and VNC listeners relay to, by id: a
    /// computer created again under the same name is followed.
    container: Arc<RwLock<String>>,
    port_base: u16,
    /// The viewer's port could not be bound: something else holds it,
    /// which must prove it is this computer's viewer before the person is
    /// sent there ([`super::probe::prove_viewer`]).
    viewer_taken: bool,
    people: Vec<JoinHandle<()>>,
    /// computerd's API listener, one per start of the container.
    api: Mutex<ApiListener>,
}

/// The API's listener for one run of the container. A restarted computer
/// gets a new one on a new port, as a local engine publishes the API on a
/// new port after a restart: the host tells a restart by the port moving.
struct ApiListener {
    run: Run,
    port: u16,
    task: JoinHandle<()>,
}

/// One start of one container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub container_id: String,
    /// Docker's `State.StartedAt`.
    pub started_at: String,
}

impl Drop for Tunnel {
    fn drop(&mut self) {
        for listener in &self.people {
            listener.abort();
        }
        self.api.lock().task.abort();
    }
}

impl std::fmt::Debug for Tunnel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tunnel")
            .field("container", &target(&self.container))
            .field("port_base", &self.port_base)
            .finish_non_exhaustive()
    }
}

impl Tunnel {
    /// Listens for computerd's API on a free local port, and for the viewer
    /// and VNC on `port_base` and the 16 ports after it. A viewer or VNC
    /// port that is taken (another MCP server of the same computer may hold
    /// it already, relaying to the same place) is left out with a warning;
    /// the API's listener must bind.
    pub async fn open(docker: &Docker, run: &Run, port_base: u16) -> std::io::Result<Tunnel> {
        let container = Arc::new(RwLock::new(run.container_id.clone()));
        let api = ApiListener::open(docker, run).await?;
        let mut people = Vec::new();
        let mut taken = Vec::new();
        let mut viewer_taken = false;
        let ports = std::iter::once((port_base, VIEWER_PORT)).chain(
            (1..=SCREENS_MAX as u16).map(|n| (port_base.saturating_add(n), VNC_PORT_BASE + n)),
        );
        for (local, remote) in ports {
            match TcpListener::bind((LOOPBACK, local)).await {
                Ok(listener) => people.push(tokio::spawn(serve(
                    listener,
                    docker.clone(),
                    container.clone(),
                    remote,
                ))),
                Err(e) => {
                    viewer_taken |= local == port_base;
                    taken.push(format!("{local} ({e})"));
                }
            }
        }
        if !taken.is_empty() {
            tracing::warn!(
                "not relaying these ports of {LOOPBACK} to the computer, as they cannot be bound (another MCP server of the same computer may relay them already): {}",
                taken.join(", ")
            );
        }
        Ok(Tunnel {
            docker: docker.clone(),
            container,
            port_base,
            viewer_taken,
            people,
            api: Mutex::new(api),
        })
    }

    /// Whether the viewer's port was held by something else when this
    /// tunnel opened.
    pub fn viewer_taken(&self) -> bool {
        self.viewer_taken
    }

    /// `http://127.0.0.1:<port>` of computerd's API in `run`, on a new
    /// port when the container was started again since the last call.
    pub async fn api_url(&self, run: &Run) -> std::io::Result<String> {
        *self.container.write() = run.container_id.clone();
        let current = {
            let api = self.api.lock();
            (api.run == *run).then_some(api.port)
        };
        let port = match current {
            Some(port) => port,
            None => {
                let fresh = ApiListener::open(&self.docker, run).await?;
                let port = fresh.port;
                let mut api = self.api.lock();
                if api.run != *run {
                    api.task.abort();
                    *api = fresh;
                    port
                } else {
                    // Another call got there first; its listener stays.
                    fresh.task.abort();
                    api.port
                }
            }
        };
        Ok(format!("http://{LOOPBACK}:{port}"))
    }

    pub fn port_base(&self) -> u16 {
        self.port_base
    }
}

impl ApiListener {
    async fn open(docker: &Docker, run: &Run) -> std::io::Result<ApiListener> {
        let listener = TcpListener::bind((LOOPBACK, 0)).await?;
        let port = listener.local_addr()?.port();
        let container = Arc::new(RwLock::new(run.container_id.clone()));
        let task = tokio::spawn(serve(listener, docker.clone(), container, API_PORT));
        Ok(ApiListener {
            run: run.clone(),
            port,
            task,
        })
    }
}

fn target(container: &RwLock<String>) -> String {
    container.read().clone()
}

/// Accepts connections until the tunnel is dropped, each relayed on its own.
async fn serve(listener: TcpListener, docker: Docker, container: Arc<RwLock<String>>, port: u16) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors and the like: pause, not spin.
                tracing::warn!("accepting a connection for the computer's port {port}: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let docker = docker.clone();
        let target = target(&container);
        tokio::spawn(async move {
            if let Err(e) = relay(&docker, &target, port, stream).await {
                tracing::debug!("relaying to the computer's port {port}: {e}");
            }
        });
    }
}

/// Carries `stream` to `port` inside `container` through one exec of
/// `computerd relay`, until either side closes. Closing the local
/// connection ends the exec's stdin, which ends the relay.
pub async fn relay(
    docker: &Docker,
    container: &str,
    port: u16,
    stream: TcpStream,
) -> Result<(), bollard::errors::Error> {
    let exec = docker
        .create_exec(
            container,
            CreateExecOptions {
                cmd: Some(vec![
                    COMPUTERD.to_string(),
                    "relay".to_string(),
                    format!("{LOOPBACK}:{port}"),
                ]),
                attach_stdin: Some(true),
                attach_stdout: Some(true),
                attach_stderr: Some(true),
                tty: Some(false),
                env: Some(super::found::exec_env()),
                ..Default::default()
            },
        )
        .await?;
    let started = docker
        .start_exec(
            &exec.id,
            Some(StartExecOptions {
                detach: false,
                tty: false,
                output_capacity: Some(CHUNK),
            }),
        )
        .await?;
    let StartExecResults::Attached { mut output, input } = started else {
        return Ok(());
    };
    let (from_client, mut to_client) = stream.into_split();
    let upstream = tokio::spawn(pump(from_client, input));
    while let Some(frame) = output.next().await {
        match frame? {
            LogOutput::StdOut { message } | LogOutput::Console { message } => {
                if to_client.write_all(&message).await.is_err() {
                    break;
                }
            }
            // The relay's own complaint, such as nothing listening yet.
            LogOutput::StdErr { message } => tracing::debug!(
                "computerd relay to port {port}: {}",
                String::from_utf8_lossy(&message).trim_end()
            ),
            LogOutput::StdIn { .. } => {}
        }
    }
    upstream.abort();
    let _ = to_client.shutdown().await;
    Ok(())
}

/// Copies the local connection into the exec's stdin, flushing each chunk
/// so a small request is not held in a TLS buffer; its end closes stdin.
async fn pump(mut from: impl AsyncRead + Unpin, mut to: impl AsyncWrite + Unpin) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).await.is_err() || to.flush().await.is_err() {
                    return;
                }
            }
        }
    }
    let _ = to.shutdown().await;
}
