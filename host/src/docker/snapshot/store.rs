//! The snapshots a computer has on its engine: found by their image's
//! labels, each with the volume its home copy is in.

use super::{
    SnapshotError, SnapshotName, CREATED_LABEL, HOME_BYTES_LABEL, HOME_LABEL, LAYER_BYTES_LABEL,
    NAME_LABEL, NOTE_LABEL, OF_LABEL, REPOSITORY,
};
use crate::docker::call::{status_of, Call};
use crate::docker::error::DockerError;
use crate::docker::image::VERSION_LABEL;
use bollard::query_parameters::{
    ListImagesOptionsBuilder, RemoveImageOptionsBuilder, RemoveVolumeOptionsBuilder,
};
use bollard::Docker;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::HashMap;
use std::time::Duration;

const LIST_DEADLINE: Duration = Duration::from_secs(30);
const REMOVE_DEADLINE: Duration = Duration::from_secs(60);

/// One snapshot, as `list_snapshots` shows it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Snapshot {
    pub name: String,
    pub note: String,
    /// RFC 3339.
    pub created_at: String,
    /// The disk it holds: its filesystem changes and its home copy.
    pub size_bytes: u64,
    /// The image version of the computer it was taken of.
    pub image_version: String,
    /// The snapshot image's id.
    #[serde(skip)]
    pub image_id: String,
    /// The snapshot image's reference, `computer-use-snapshot:<tag>`.
    #[serde(skip)]
    pub image: String,
    /// The volume holding its home copy.
    #[serde(skip)]
    pub home_volume: String,
}

/// `N using SIZE of the engine's disk: a, b`, for `info` and `doctor`.
pub fn summary(all: &[Snapshot]) -> String {
    let total: u64 = all.iter().map(|s| s.size_bytes).sum();
    let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
    format!(
        "{} using {} of the engine's disk: {}",
        all.len(),
        computer_protocol::archive::human_bytes(total),
        names.join(", ")
    )
}

/// Every snapshot of `computer`, oldest first.
pub async fn list(docker: &Docker, computer: &str) -> Result<Vec<Snapshot>, DockerError> {
    let filters: HashMap<String, Vec<String>> =
        [("label".to_string(), vec![format!("{OF_LABEL}={computer}")])].into();
    let options = ListImagesOptionsBuilder::default()
        .filters(&filters)
        .build();
    let images = Call::new(
        format!("listing the snapshots of `{computer}`"),
        "nothing was changed",
        LIST_DEADLINE,
    )
    .run(docker.list_images(Some(options)))
    .await?;
    let mut found: Vec<Snapshot> = images
        .into_iter()
        .filter_map(|image| {
            // An image untagged by `delete_snapshot` while a restored
            // computer still runs from it is no snapshot any more.
            let tag = image
                .repo_tags
                .iter()
                .find(|t| t.starts_with(&format!("{REPOSITORY}:")))?
                .clone();
            let label = |key: &str| image.labels.get(key).cloned();
            let bytes = |key: &str| label(key).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            Some(Snapshot {
                name: label(NAME_LABEL)?,
                note: label(NOTE_LABEL).unwrap_or_default(),
                created_at: label(CREATED_LABEL).unwrap_or_default(),
                size_bytes: bytes(LAYER_BYTES_LABEL) + bytes(HOME_BYTES_LABEL),
                image_version: label(VERSION_LABEL).unwrap_or_else(|| "unknown".into()),
                image_id: image.id.clone(),
                image: tag,
                home_volume: label(HOME_LABEL)?,
            })
        })
        .collect();
    found.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.name.cmp(&b.name)));
    Ok(found)
}

/// The snapshot `name` of `computer`; an unknown name lists the known ones.
pub async fn find(
    docker: &Docker,
    computer: &str,
    name: &SnapshotName,
) -> Result<Snapshot, SnapshotError> {
    let all = list(docker, computer).await?;
    let names = all.iter().map(|s| s.name.clone()).collect();
    all.into_iter()
        .find(|s| s.name == name.as_str())
        .ok_or_else(|| SnapshotError::Unknown {
            computer: computer.to_string(),
            name: name.to_string(),
            existing: names,
        })
}

/// Makes sure the snapshot's home copy is still on the engine: Docker
/// would make an empty volume of a missing one when the copier mounts it,
/// and a restore would then empty the computer's home.
pub async fn check_home_copy(docker: &Docker, snapshot: &Snapshot) -> Result<(), SnapshotError> {
    let volume = &snapshot.home_volume;
    let call = Call::new(
        format!("looking at the snapshot volume `{volume}`"),
        "nothing was changed",
        LIST_DEADLINE,
    );
    match call.run_raw(docker.inspect_volume(volume)).await? {
        Ok(_) => Ok(()),
        Err(e) if status_of(&e) == Some(404) => Err(SnapshotError::Failed {
            what: format!("using the snapshot `{}`", snapshot.name),
            why: format!("its home copy, the volume `{volume}`, is gone from the engine"),
            aftermath: "Nothing was changed; delete the snapshot with delete_snapshot.".into(),
        }),
        Err(e) => Err(call.failed(e).into()),
    }
}

/// Deletes the snapshot `name` of `computer`: its image tag and its home
/// copy. A computer restored from it keeps running; its layers stay until
/// that computer goes.
pub async fn delete(
    docker: &Docker,
    computer: &str,
    name: &SnapshotName,
) -> Result<Snapshot, SnapshotError> {
    let snapshot = find(docker, computer, name).await?;
    remove_pair(docker, &snapshot.image, &snapshot.home_volume).await?;
    Ok(snapshot)
}

/// Removes a snapshot's image reference and home volume; either may be gone
/// already.
pub(super) async fn remove_pair(
    docker: &Docker,
    image: &str,
    volume: &str,
) -> Result<(), DockerError> {
    let call = Call::new(
        format!("removing the snapshot image `{image}`"),
        "the snapshot may still be listed; try again",
        REMOVE_DEADLINE,
    );
    // Forced: a computer restored from it holds the image; the tag goes,
    // the layers stay with that computer.
    let options = RemoveImageOptionsBuilder::default().force(true).build();
    match call
        .run_raw(docker.remove_image(image, Some(options), None))
        .await?
    {
        Ok(_) => {}
        Err(e) if status_of(&e) == Some(404) => {}
        Err(e) => return Err(call.failed(e)),
    }
    remove_volume(docker, volume).await
}

pub(super) async fn remove_volume(docker: &Docker, volume: &str) -> Result<(), DockerError> {
    let call = Call::new(
        format!("removing the volume `{volume}`"),
        format!("the volume `{volume}` may be left; `docker volume rm {volume}` removes it"),
        REMOVE_DEADLINE,
    );
    let options = RemoveVolumeOptionsBuilder::default().force(true).build();
    match call
        .run_raw(docker.remove_volume(volume, Some(options)))
        .await?
    {
        Ok(()) => Ok(()),
        Err(e) if status_of(&e) == Some(404) => Ok(()),
        Err(e) => Err(call.failed(e)),
    }
}
