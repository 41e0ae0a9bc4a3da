//! The engine as `doctor` sees it: a connection and the few questions the
//! checks ask of it (its facts, the computer, the image, what a running
//! computer publishes, a command's output inside it, whether the registry
//! has an image). Doctor words the answers; only this module speaks Docker's
//! API, so another backend answers the same questions its own way
//! (docs/scaling.md).

use super::call::Call;
use super::credentials;
use super::dialer::Dialer;
use super::endpoint::DockerEndpoint;
use super::error::DockerError;
use super::found::{find_computer, FoundComputer};
use super::image::{inspect_image, ImageFacts};
use super::ports;
use crate::error_chain::describe;
use crate::settings::TunnelMode;
use bollard::models::ExecConfig;
use bollard::Docker;
use futures::StreamExt;
use std::path::Path;
use std::time::Duration;

/// The most of a command's output [`Engine::output_in`] keeps.
pub const OUTPUT_IN_MAX: usize = 64 * 1024;

/// How long the registry may take to say whether it has an image.
const REGISTRY_DEADLINE: Duration = Duration::from_secs(3);

/// One of doctor's questions that the engine did not answer. Its text is
/// Docker's error with its causes on one line (see [`describe`]): doctor
/// puts it into a check's detail, next to its own fix.
#[derive(Debug, thiserror::Error)]
#[error("{}", describe(.0))]
pub struct EngineQueryError(#[from] bollard::errors::Error);

/// A connected engine.
#[derive(Clone)]
pub struct Engine {
    docker: Docker,
}

/// What the engine says of itself; `None` where it did not say.
#[derive(Debug, Clone, Default)]
pub struct EngineFacts {
    pub version: Option<String>,
    /// `linux` or `windows`.
    pub os: Option<String>,
    pub arch: Option<String>,
    pub cpus: i64,
    pub memory_bytes: u64,
    /// Where the engine keeps images and containers, on its own machine.
    pub root_dir: Option<String>,
}

impl Engine {
    /// Connects, agreeing on the API version first.
    pub async fn connect(endpoint: &DockerEndpoint) -> Result<Engine, DockerError> {
        Ok(Engine {
            docker: endpoint.connect().await?,
        })
    }

    /// The engine's version, platform and size.
    pub async fn facts(&self) -> Result<EngineFacts, EngineQueryError> {
        let info = self.docker.info().await?;
        Ok(EngineFacts {
            version: info.server_version,
            os: info.os_type,
            arch: info.architecture,
            cpus: info.ncpu.unwrap_or(0),
            memory_bytes: info.mem_total.unwrap_or(0).max(0) as u64,
            root_dir: info.docker_root_dir.filter(|d| !d.is_empty()),
        })
    }

    /// The snapshots of the computer `name`.
    pub async fn snapshots(
        &self,
        name: &str,
    ) -> Result<Vec<super::snapshot::Snapshot>, DockerError> {
        super::snapshot::list(&self.docker, name).await
    }

    /// The container named `name`, if there is one.
    pub async fn find_computer(&self, name: &str) -> Result<Option<FoundComputer>, DockerError> {
        find_computer(&self.docker, name).await
    }

    /// The image's facts, or `None` when the engine does not have it.
    pub async fn inspect_image(&self, image: &str) -> Result<Option<ImageFacts>, DockerError> {
        inspect_image(&self.docker, image).await
    }

    /// The computer's host ports from `base` on that it does not publish.
    pub async fn unpublished_ports(
        &self,
        name: &str,
        base: u16,
    ) -> Result<Vec<u16>, EngineQueryError> {
        let inspect = self.docker.inspect_container(name, None).await?;
        let published = inspect
            .network_settings
            .and_then(|n| n.ports)
            .unwrap_or_default();
        Ok(ports::unpublished(&published, base))
    }

    /// What `argv` prints on stdout when run in the container `name`, up to
    /// [`OUTPUT_IN_MAX`] bytes: the computer (or a hostile engine) decides
    /// how much comes, and the host keeps only what a short answer needs.
    pub async fn output_in(&self, name: &str, argv: &[&str]) -> Result<String, EngineQueryError> {
        let exec = self
            .docker
            .create_exec(
                name,
                ExecConfig {
                    cmd: Some(argv.iter().map(|a| a.to_string()).collect()),
                    attach_stdout: Some(true),
                    env: Some(super::found::exec_env()),
                    ..Default::default()
                },
            )
            .await?;
        let mut text = String::new();
        if let bollard::exec::StartExecResults::Attached { mut output, .. } =
            self.docker.start_exec(&exec.id, None).await?
        {
            while let Some(Ok(chunk)) = output.next().await {
                text.push_str(&chunk.to_string());
                if text.len() >= OUTPUT_IN_MAX {
                    let cut = (0..=OUTPUT_IN_MAX)
                        .rev()
                        .find(|at| text.is_char_boundary(*at))
                        .unwrap_or(0);
                    text.truncate(cut);
                    break;
                }
            }
        }
        Ok(text)
    }

    /// Whether the registry gives the image's manifest to the user's login
    /// (what a pull needs first, without pulling). The outer error is the
    /// login or the deadline; the inner one the registry's refusal.
    pub async fn registry_has(
        &self,
        image: &str,
        config_dir: Option<&Path>,
    ) -> Result<Result<(), EngineQueryError>, DockerError> {
        let login = credentials::for_image(config_dir, image).await?;
        let call = Call::new(
            format!("asking the registry for `{image}`"),
            "nothing was changed",
            REGISTRY_DEADLINE,
        );
        Ok(call
            .run_raw(self.docker.inspect_registry_image(image, login))
            .await?
            .map(|_| ())
            .map_err(EngineQueryError))
    }

    /// The way to the computer's ports from this machine.
    pub fn dialer(&self, endpoint: &DockerEndpoint, mode: TunnelMode) -> Dialer {
        Dialer::new(endpoint, &self.docker, mode)
    }
}
