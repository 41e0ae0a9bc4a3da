//! The computer's image: its version label, how versions compare, and
//! pulling it when a release build lacks it. Which image a build uses is
//! [`crate::version`]'s, re-exported here.

use super::call::{status_of, Call};
use super::credentials;
use super::error::DockerError;
use bollard::query_parameters::CreateImageOptionsBuilder;
use bollard::Docker;
use futures::StreamExt;
use std::cmp::Ordering;
use std::path::Path;
use std::time::Duration;

/// Label on the image and the container: the version of the image.
pub const VERSION_LABEL: &str = "computer-use.version";
pub use crate::version::{
    binary_version, default_image, pulls_missing_image, DEV_IMAGE, RELEASE_REPOSITORY,
};

const INSPECT_DEADLINE: Duration = Duration::from_secs(15);
/// A pull of a few GB has no sensible total limit; one that stops moving does.
const PULL_STALL: Duration = Duration::from_secs(120);

/// Orders two image versions by semver precedence (a pre-release comes
/// before its release; build metadata is ignored). `None` when either is not
/// a version, and then nothing is decided from it.
pub fn compare_versions(a: &str, b: &str) -> Option<Ordering> {
    let parse = |v: &str| semver::Version::parse(v.trim().trim_start_matches('v')).ok();
    Some(parse(a)?.cmp_precedence(&parse(b)?))
}

/// True when `version` is known and older than this binary.
pub fn is_older_than_binary(version: Option<&str>) -> bool {
    version.and_then(|v| compare_versions(v, binary_version())) == Some(Ordering::Less)
}

/// What the host needs to know about an image it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageFacts {
    pub id: String,
    /// The `computer-use.version` label, when the image has one.
    pub version: Option<String>,
}

/// The image's facts, or `None` when the engine does not have it.
pub async fn inspect_image(
    docker: &Docker,
    image: &str,
) -> Result<Option<ImageFacts>, DockerError> {
    let call = Call::new(
        format!("inspecting the image `{image}`"),
        "nothing was changed",
        INSPECT_DEADLINE,
    );
    match call.run_raw(docker.inspect_image(image)).await? {
        Ok(inspect) => Ok(Some(ImageFacts {
            id: inspect.id.unwrap_or_default(),
            version: inspect
                .config
                .and_then(|c| c.labels)
                .and_then(|mut l| l.remove(VERSION_LABEL)),
        })),
        Err(e) if status_of(&e) == Some(404) => Ok(None),
        Err(e) => Err(call.failed(e)),
    }
}

/// The image's facts, pulling it first in a release build. `config_dir` is
/// the Docker CLI's folder, where registry logins are.
pub async fn ensure_image(
    docker: &Docker,
    image: &str,
    config_dir: Option<&Path>,
) -> Result<ImageFacts, DockerError> {
    if let Some(facts) = inspect_image(docker, image).await? {
        return Ok(facts);
    }
    if !pulls_missing_image() {
        return Err(DockerError::DevImageMissing {
            image: image.to_string(),
        });
    }
    pull(docker, image, config_dir).await?;
    inspect_image(docker, image)
        .await?
        .ok_or_else(|| DockerError::Pull {
            image: image.to_string(),
            source: bollard::errors::Error::DockerStreamError {
                error: "the pull finished but the engine does not list the image".into(),
            },
        })
}

/// Pulls `image` with the user's registry login, if any.
pub async fn pull(
    docker: &Docker,
    image: &str,
    config_dir: Option<&Path>,
) -> Result<(), DockerError> {
    let credentials = credentials::for_image(config_dir, image).await?;
    tracing::info!(
        image,
        "pulling the computer's image; this takes a while the first time"
    );
    let options = CreateImageOptionsBuilder::default()
        .from_image(image)
        .build();
    let mut progress = docker.create_image(Some(options), None, credentials);
    loop {
        match tokio::time::timeout(PULL_STALL, progress.next()).await {
            Err(_) => {
                return Err(DockerError::PullStalled {
                    image: image.to_string(),
                    after: PULL_STALL,
                })
            }
            Ok(None) => break,
            Ok(Some(Err(source))) => {
                return Err(DockerError::Pull {
                    image: image.to_string(),
                    source,
                })
            }
            Ok(Some(Ok(info))) => {
                if let Some(status) = info.status {
                    tracing::debug!(image, id = info.id.as_deref().unwrap_or(""), "{status}");
                }
            }
        }
    }
    tracing::info!(image, "pulled");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_by_semver_precedence() {
        assert_eq!(compare_versions("0.0.1", "0.1.0"), Some(Ordering::Less));
        assert_eq!(compare_versions("0.10.0", "0.9.9"), Some(Ordering::Greater));
        assert_eq!(compare_versions("99.0.0", "0.1.0"), Some(Ordering::Greater));
        assert_eq!(compare_versions("v0.1.0", "0.1.0"), Some(Ordering::Equal));
        // A pre-release comes before its release and after the one before.
        assert_eq!(
            compare_versions("0.2.0-beta.1", "0.2.0"),
            Some(Ordering::Less)
        );
        assert_eq!(
            compare_versions("0.2.0-beta.1", "0.1.9"),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare_versions("0.2.0-beta.2", "0.2.0-beta.10"),
            Some(Ordering::Less)
        );
        // Build metadata does not make one image newer than another.
        assert_eq!(
            compare_versions("0.1.0+abc", "0.1.0+def"),
            Some(Ordering::Equal)
        );
        assert_eq!(compare_versions("dev", "0.1.0"), None);
        assert_eq!(compare_versions("", "0.1.0"), None);
    }

    #[test]
    fn older_means_known_and_older() {
        assert!(is_older_than_binary(Some("0.0.1")));
        assert!(!is_older_than_binary(Some(binary_version())));
        assert!(!is_older_than_binary(Some("99.0.0")));
        assert!(!is_older_than_binary(Some("not-a-version")));
        assert!(!is_older_than_binary(None));
    }

    #[test]
    fn release_image_names_the_binary_version() {
        assert_eq!(
            format!("{RELEASE_REPOSITORY}:{}", binary_version()),
            format!(
                "ghcr.io/falleng0d/computer-use-mcp:{}",
                env!("CARGO_PKG_VERSION")
            )
        );
        assert!(
            !pulls_missing_image(),
            "tests are dev builds, which never pull"
        );
    }
}
