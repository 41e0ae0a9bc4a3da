//! Restoring a snapshot, and resetting a computer to its image with an
//! empty home. Both make the computer's container again beside the old
//! one, stop the old one, put the home in place, and only then swap the
//! two: a failure up to the swap removes the new container and starts the
//! old one again, with its home as it was (the copier moves the old home
//! aside within its own volume, and moves it back when the copy fails).
//!
//! The new container keeps the computer's token, ports, guard and home
//! volume, so the host reaches it as before; its `computer-use.origin`
//! label says what it was made from, for the sessions it ended.

use super::copier::{Copier, Mounted};
use super::store::{self, Snapshot};
use super::SnapshotError;
use crate::docker::call::{status_of, Call};
use crate::docker::container::create_replacement;
use crate::docker::found::{find_computer, FoundComputer};
use crate::docker::image::{ensure_image, inspect_image};
use crate::settings::ComputerSettings;
use bollard::query_parameters::{
    RemoveContainerOptionsBuilder, RenameContainerOptionsBuilder, StopContainerOptionsBuilder,
};
use bollard::Docker;
use computer_protocol::recording::RecordingsResponse;
use computer_protocol::SessionId;
use std::path::Path;
use std::time::{Duration, Instant};

const COPY_DEADLINE: Duration = Duration::from_secs(600);
const STEP_DEADLINE: Duration = Duration::from_secs(60);
/// computerd ends its screens on SIGTERM; what they hold is being replaced.
const STOP_GRACE_SECS: i32 = 2;

/// Where the home comes from in the copier: a snapshot's volume, mounted
/// here, or the image's own (empty) home.
const SNAPSHOT_AT: &str = "/snap";
const IMAGE_HOME: &str = "/home/computer";

/// Moves the home (`/target`) aside into `$1` inside the same volume (a
/// rename, so nothing is copied), copies `$2` in, and drops the old home;
/// when the copy fails, the old home goes back and it exits 4.
const SWAP_SCRIPT: &str = r#"
aside="/target/$1"
back() { find "$aside" -mindepth 1 -maxdepth 1 -exec mv -t /target -- {} + && rmdir "$aside"; }
mkdir "$aside" || exit 5
if ! find /target -mindepth 1 -maxdepth 1 ! -name "$1" -exec mv -t "$aside" -- {} +; then back; exit 5; fi
if cp -a "$2/." /target/; then rm -rf "$aside"; echo restored; exit 0; fi
find /target -mindepth 1 -maxdepth 1 ! -name "$1" -exec rm -rf -- {} +
back
exit 4
"#;

/// What the computer goes back to.
#[derive(Debug, Clone)]
pub enum Target {
    /// One of its snapshots, as `store::find` found it.
    Snapshot(Snapshot),
    /// The image, with an empty home.
    Reset,
}

impl Target {
    /// The `computer-use.origin` label of the computer it makes.
    pub fn origin(&self) -> String {
        match self {
            Target::Snapshot(snapshot) => format!("snapshot {}", snapshot.name),
            Target::Reset => "reset".to_string(),
        }
    }
}

/// The recordings in `listed` still in progress, named for a refusal: a
/// restore or a reset would lose them.
pub fn recordings_in_progress(listed: RecordingsResponse) -> Vec<String> {
    listed
        .recordings
        .into_iter()
        .filter(|r| r.recording)
        .map(|r| format!("{} (session \"{}\")", r.recording_id, r.session_title))
        .collect()
}

/// A live session named for a refusal: `ID ("title")`.
pub fn session_named(id: &SessionId, title: &str) -> String {
    format!("{id} (\"{title}\")")
}

/// A computer put back.
#[derive(Debug)]
pub struct Restored {
    pub took: Duration,
    /// The image version it runs now.
    pub image_version: Option<String>,
}

/// Puts `settings.name` back to `target`. The computer ends up running,
/// with its old processes gone; the caller waits for computerd.
pub async fn restore(
    docker: &Docker,
    settings: &ComputerSettings,
    config_dir: Option<&Path>,
    target: &Target,
) -> Result<Restored, SnapshotError> {
    let started = Instant::now();
    let computer = settings.name.as_str();
    let found = match find_computer(docker, computer).await? {
        Some(found) if found.token.is_some() => found,
        _ => {
            return Err(SnapshotError::NotRunning {
                computer: computer.to_string(),
            })
        }
    };
    let home = found.volume.clone().unwrap_or_else(|| settings.volume());
    let plain = ensure_image(docker, &settings.image, config_dir).await?;
    let (image, version, source) = match target {
        Target::Snapshot(snapshot) => {
            store::check_home_copy(docker, snapshot).await?;
            if inspect_image(docker, &snapshot.image).await?.is_none() {
                return Err(SnapshotError::ImageGone {
                    name: snapshot.name.clone(),
                    image: snapshot.image.clone(),
                    version: snapshot.image_version.clone(),
                });
            }
            let version = Some(snapshot.image_version.clone()).filter(|v| v != "unknown");
            (
                snapshot.image.clone(),
                version,
                Some(snapshot.home_volume.clone()),
            )
        }
        Target::Reset => (settings.image.clone(), plain.version, None),
    };
    let suffix = super::random_suffix(8);
    let next = format!("{computer}-next-{suffix}");
    let origin = target.origin();
    let next_id = create_replacement(
        docker,
        settings,
        &found,
        (&image, version.clone()),
        &next,
        &origin,
    )
    .await?;
    let mut mounts = vec![Mounted {
        volume: &home,
        at: "/target",
        read_only: false,
    }];
    if let Some(volume) = &source {
        mounts.push(Mounted {
            volume,
            at: SNAPSHOT_AT,
            read_only: true,
        });
    }
    let from = if source.is_some() {
        SNAPSHOT_AT
    } else {
        IMAGE_HOME
    };
    let aside = format!(".computer-use-restore-{suffix}");
    let swapped = async {
        let copier = Copier::create(
            docker,
            computer,
            &settings.image,
            &mounts,
            SWAP_SCRIPT,
            &[aside.clone(), from.to_string()],
        )
        .await?;
        if let Err(e) = stop(docker, &found).await {
            copier.remove().await;
            return Err(e);
        }
        copier
            .run(COPY_DEADLINE)
            .await?
            .succeeded(format!("putting the home of `{computer}` back to {origin}"))
            .map(drop)
    }
    .await;
    if let Err(e) = swapped {
        remove_container(docker, &next_id).await;
        let again = start(docker, &found.id).await;
        return Err(SnapshotError::Failed {
            what: format!("restoring `{computer}` to {origin}"),
            why: e.to_string(),
            aftermath: match again {
                Ok(()) => "The computer runs as it was, with the same home.".to_string(),
                Err(start) => format!(
                    "Its home is as it was, but starting it again failed ({start}): call start_computer."
                ),
            },
        });
    }
    // The swap: the old container goes, the new one takes its name.
    remove_container(docker, &found.id).await;
    Call::new(
        format!("renaming `{next}` to `{computer}`"),
        format!("the computer's home is restored; the container `{next}` holds the computer: run `docker rename {next} {computer}` and call start_computer"),
        STEP_DEADLINE,
    )
    .run(docker.rename_container(&next_id, RenameContainerOptionsBuilder::default().name(computer).build()))
    .await?;
    start(docker, &next_id).await?;
    Ok(Restored {
        took: started.elapsed(),
        image_version: version,
    })
}

async fn stop(docker: &Docker, found: &FoundComputer) -> Result<(), SnapshotError> {
    let options = StopContainerOptionsBuilder::default()
        .t(STOP_GRACE_SECS)
        .build();
    Call::new(
        format!("stopping the computer `{}`", found.name),
        "the computer may be stopped; call start_computer",
        STEP_DEADLINE,
    )
    .run(docker.stop_container(&found.id, Some(options)))
    .await?;
    Ok(())
}

async fn start(docker: &Docker, id: &str) -> Result<(), SnapshotError> {
    let call = Call::new(
        "starting the computer".to_string(),
        "the computer is stopped: call start_computer",
        STEP_DEADLINE,
    );
    match call.run_raw(docker.start_container(id, None)).await? {
        Ok(()) => Ok(()),
        Err(e) if status_of(&e) == Some(304) => Ok(()),
        Err(e) => Err(call.failed(e).into()),
    }
}

async fn remove_container(docker: &Docker, id: &str) {
    let options = RemoveContainerOptionsBuilder::default()
        .force(true)
        .v(false)
        .build();
    if let Err(e) = Call::new(format!("removing the container `{id}`"), "", STEP_DEADLINE)
        .run(docker.remove_container(id, Some(options)))
        .await
    {
        tracing::warn!("{e}; `docker rm -f {id}` removes it");
    }
}
