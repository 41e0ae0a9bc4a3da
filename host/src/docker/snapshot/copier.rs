//! The copier: a short-lived container on the computer's engine that runs
//! one shell script over volumes (copying a home into a snapshot, or a
//! snapshot back into a home), so that no byte of a home passes through
//! the host, on a local engine as on a remote one.
//!
//! It runs the plain image (`COMPUTER_USE_IMAGE`), never a snapshot's or
//! the computer's own container: those hold whatever root in the computer
//! left there, its `sh` and `cp` included. It runs as root, with no
//! network, a read-only root filesystem and only the capabilities a copy
//! that keeps owners, modes and special files needs. What it copies was
//! written by the computer, so the scripts copy links as links and fifos
//! and devices as nodes (`cp -a`), never following or opening them.

use super::SnapshotError;
use crate::docker::call::Call;
use crate::docker::error::DockerError;
use bollard::container::LogOutput;
use bollard::models::{ContainerCreateBody, HostConfig, Mount, MountType};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, LogsOptionsBuilder, RemoveContainerOptionsBuilder,
};
use bollard::Docker;
use futures::StreamExt;
use std::time::Duration;

/// The label naming the computer a copier works for, so that one left
/// behind by a crash can be found.
pub const COPIER_OF_LABEL: &str = "computer-use.copier-of";

/// What a copy keeping owners, modes, times and special files needs.
const CAPABILITIES: &[&str] = &[
    "CHOWN",
    "DAC_OVERRIDE",
    "DAC_READ_SEARCH",
    "FOWNER",
    "FSETID",
    "MKNOD",
];
const STEP_DEADLINE: Duration = Duration::from_secs(30);

/// A volume the copier sees at `at`.
pub struct Mounted<'a> {
    pub volume: &'a str,
    pub at: &'static str,
    pub read_only: bool,
}

/// A copier made and not yet started: making one takes a moment the
/// computer need not be paused for.
pub struct Copier<'a> {
    docker: &'a Docker,
    pub name: String,
    /// The computer it works for, for the messages.
    computer: String,
}

/// What the script printed and how it ended.
#[derive(Debug)]
pub struct Finished {
    pub exit_code: i64,
    pub output: String,
}

impl Finished {
    /// How it ended and the start of what it printed, for an error.
    pub fn outcome(&self) -> String {
        format!(
            "the copier exited with {}: {}",
            self.exit_code,
            self.output.trim().chars().take(500).collect::<String>()
        )
    }

    /// `Ok` when the script ended well; else the failure of `what`.
    pub fn succeeded(self, what: String) -> Result<Finished, SnapshotError> {
        if self.exit_code == 0 {
            return Ok(self);
        }
        Err(SnapshotError::Failed {
            what,
            why: self.outcome(),
            aftermath: String::new(),
        })
    }
}

impl<'a> Copier<'a> {
    /// Creates the copier for `computer` from `image`; it runs `script`
    /// with `args` as `$1`... once started.
    pub async fn create(
        docker: &'a Docker,
        computer: &str,
        image: &str,
        mounts: &[Mounted<'_>],
        script: &str,
        args: &[String],
    ) -> Result<Copier<'a>, DockerError> {
        let suffix = super::random_suffix(8);
        let name = format!("{computer}-copier-{suffix}");
        let body = ContainerCreateBody {
            image: Some(image.to_string()),
            user: Some("0".to_string()),
            entrypoint: Some(
                ["/bin/sh", "-c", script, "copier"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
            ),
            cmd: Some(args.to_vec()),
            labels: Some([(COPIER_OF_LABEL.to_string(), computer.to_string())].into()),
            network_disabled: Some(true),
            host_config: Some(HostConfig {
                network_mode: Some("none".to_string()),
                readonly_rootfs: Some(true),
                cap_drop: Some(vec!["ALL".to_string()]),
                cap_add: Some(CAPABILITIES.iter().map(|c| c.to_string()).collect()),
                security_opt: Some(vec!["no-new-privileges".to_string()]),
                mounts: Some(
                    mounts
                        .iter()
                        .map(|m| Mount {
                            target: Some(m.at.to_string()),
                            source: Some(m.volume.to_string()),
                            typ: Some(MountType::VOLUME),
                            read_only: Some(m.read_only),
                            ..Default::default()
                        })
                        .collect(),
                ),
                ..Default::default()
            }),
            ..Default::default()
        };
        let options = CreateContainerOptionsBuilder::default().name(&name).build();
        Call::new(
            format!("creating the copier `{name}` for `{computer}`"),
            "nothing was changed",
            STEP_DEADLINE,
        )
        .run(docker.create_container(Some(options), body))
        .await?;
        Ok(Copier {
            docker,
            name,
            computer: computer.to_string(),
        })
    }

    /// Starts the script and waits for it at most `deadline`; the copier is
    /// removed whatever happens.
    pub async fn run(self, deadline: Duration) -> Result<Finished, DockerError> {
        let result = self.run_to_end(deadline).await;
        self.remove().await;
        result
    }

    async fn run_to_end(&self, deadline: Duration) -> Result<Finished, DockerError> {
        let name = &self.name;
        let aftermath = format!("the copier `{name}` of `{}` is removed", self.computer);
        Call::new(
            format!("starting the copier `{name}`"),
            aftermath.clone(),
            STEP_DEADLINE,
        )
        .run(self.docker.start_container(name, None))
        .await?;
        let waiting = Call::new(
            format!("copying files for `{}` (copier `{name}`)", self.computer),
            aftermath.clone(),
            deadline,
        );
        let exit_code = waiting
            .run(async {
                match self.docker.wait_container(name, None).next().await {
                    Some(Ok(done)) => Ok(done.status_code),
                    // A non-zero exit comes as an error carrying the code.
                    Some(Err(bollard::errors::Error::DockerContainerWaitError {
                        code, ..
                    })) => Ok(code),
                    Some(Err(e)) => Err(e),
                    None => Ok(-1),
                }
            })
            .await?;
        let output = Call::new(
            format!("reading what the copier `{name}` printed"),
            aftermath,
            STEP_DEADLINE,
        )
        .run(async {
            let options = LogsOptionsBuilder::default()
                .stdout(true)
                .stderr(true)
                .build();
            let mut logs = self.docker.logs(name, Some(options));
            let mut text = String::new();
            while let Some(chunk) = logs.next().await {
                match chunk? {
                    LogOutput::StdOut { message } | LogOutput::StdErr { message } => {
                        text.push_str(&String::from_utf8_lossy(&message))
                    }
                    _ => {}
                }
                if text.len() > 64 * 1024 {
                    break;
                }
            }
            Ok(text)
        })
        .await?;
        Ok(Finished { exit_code, output })
    }

    /// Removes the copier, forced (it may still run after a missed deadline).
    pub async fn remove(&self) {
        let options = RemoveContainerOptionsBuilder::default()
            .force(true)
            .v(false)
            .build();
        if let Err(e) = Call::new(
            format!("removing the copier `{}`", self.name),
            "",
            STEP_DEADLINE,
        )
        .run(self.docker.remove_container(&self.name, Some(options)))
        .await
        {
            tracing::warn!("{e}; `docker rm -f {}` removes it", self.name);
        }
    }
}
