//! Saving a snapshot of a running computer. The computer is paused only
//! while its home is copied and its filesystem committed, the two halves
//! that must agree; the checks and the copier's creation come before.
//! Whatever fails, the computer is unpaused and what was made is removed.

use super::copier::{Copier, Finished, Mounted};
use super::store::{self, Snapshot};
use super::{
    SaveLimits, SnapshotError, SnapshotName, CREATED_LABEL, HOME_BYTES_LABEL, HOME_LABEL,
    LAYER_BYTES_LABEL, NAME_LABEL, NOTE_LABEL, OF_LABEL, REPOSITORY,
};
use crate::docker::call::Call;
use crate::docker::found::{find_computer, FoundComputer, TOKEN_VAR};
use bollard::models::{ContainerConfig, VolumeCreateRequest};
use bollard::query_parameters::{CommitContainerOptionsBuilder, InspectContainerOptionsBuilder};
use bollard::Docker;
use std::time::{Duration, Instant};

/// The home copy of a large home takes minutes on a slow disk; the
/// computer is paused meanwhile, so this bounds how long it can stay so.
const COPY_DEADLINE: Duration = Duration::from_secs(600);
const STEP_DEADLINE: Duration = Duration::from_secs(60);

/// Checks the engine's disk, then copies the home. `$1`: bytes of the
/// filesystem changes; `$2`: bytes to keep spare. Prints `short NEED FREE`
/// and exits 3 when the disk is short, `copied BYTES` when done.
const SAVE_SCRIPT: &str = r#"
home=$(du -sxb /from | cut -f1) || exit 5
free=$(df -B1 --output=avail /to | tail -n 1 | tr -d ' ') || exit 5
need=$((home + $1))
if [ $((need + $2)) -gt "$free" ]; then echo "short $need $free"; exit 3; fi
cp -a /from/. /to/ || exit 4
echo "copied $home"
"#;

/// A snapshot just saved.
#[derive(Debug)]
pub struct Saved {
    pub snapshot: Snapshot,
    /// How long the computer was paused.
    pub frozen: Duration,
    pub took: Duration,
}

/// Saves the running computer `computer` as snapshot `name`, refused when
/// the name is taken, when it has `limits.max` snapshots already, or when
/// the engine's disk would keep less than `limits.spare_bytes` free. The
/// copier runs `plain_image` (see `copier`).
pub async fn save(
    docker: &Docker,
    (computer, plain_image): (&str, &str),
    name: &SnapshotName,
    note: &str,
    limits: SaveLimits,
) -> Result<Saved, SnapshotError> {
    let max = limits.max;
    let started = Instant::now();
    let found = running(docker, computer).await?;
    let existing = store::list(docker, computer).await?;
    if existing.iter().any(|s| s.name == name.as_str()) {
        return Err(SnapshotError::Exists {
            computer: computer.to_string(),
            name: name.to_string(),
        });
    }
    if existing.len() >= max {
        return Err(SnapshotError::TooMany {
            computer: computer.to_string(),
            count: existing.len(),
            max,
        });
    }
    let home = found.volume.clone().ok_or_else(|| SnapshotError::Failed {
        what: format!("saving a snapshot of `{computer}`"),
        why: "its container has no home volume".into(),
        aftermath: "Nothing was saved.".into(),
    })?;
    let layer_bytes = changed_bytes(docker, computer).await?;
    let id = super::random_suffix(12);
    let short: String = computer.chars().take(60).collect();
    let tag = format!("{short}.{id}");
    let volume = format!("{short}-snapshot-{id}");
    let labels = [
        (OF_LABEL.to_string(), computer.to_string()),
        (NAME_LABEL.to_string(), name.to_string()),
    ];
    Call::new(
        format!("creating the snapshot volume `{volume}`"),
        "nothing was saved; the computer runs as it was",
        STEP_DEADLINE,
    )
    .run(docker.create_volume(VolumeCreateRequest {
        name: Some(volume.clone()),
        labels: Some(labels.clone().into()),
        ..Default::default()
    }))
    .await?;
    // When the pause was asked for: set before the call, since one that
    // missed its deadline may still have paused the computer.
    let mut paused_at: Option<Instant> = None;
    let made = async {
        let copier = Copier::create(
            docker,
            computer,
            plain_image,
            &[
                Mounted {
                    volume: &home,
                    at: "/from",
                    read_only: true,
                },
                Mounted {
                    volume: &volume,
                    at: "/to",
                    read_only: false,
                },
            ],
            SAVE_SCRIPT,
            &[layer_bytes.to_string(), limits.spare_bytes.to_string()],
        )
        .await?;
        paused_at = Some(Instant::now());
        if let Err(e) = pause(docker, computer).await {
            copier.remove().await;
            return Err(e);
        }
        let copied = copier.run(COPY_DEADLINE).await?;
        let home_bytes = home_copied(&copied, computer, limits.spare_bytes)?;
        let created_at = crate::clock::now_rfc3339();
        let mut labels: std::collections::HashMap<String, String> = labels.clone().into();
        labels.extend([
            (NOTE_LABEL.to_string(), note.to_string()),
            (CREATED_LABEL.to_string(), created_at.clone()),
            (HOME_LABEL.to_string(), volume.clone()),
            (HOME_BYTES_LABEL.to_string(), home_bytes.to_string()),
            (LAYER_BYTES_LABEL.to_string(), layer_bytes.to_string()),
        ]);
        let options = CommitContainerOptionsBuilder::default()
            .container(&found.id)
            .repo(REPOSITORY)
            .tag(&tag)
            .comment(&format!("snapshot `{name}` of the computer `{computer}`"))
            .pause(false)
            .build();
        // The token stays with the computer, never in an image a template
        // starts others from.
        let config = ContainerConfig {
            env: Some(vec![format!("{TOKEN_VAR}=")]),
            labels: Some(labels),
            ..Default::default()
        };
        let committed = Call::new(
            format!("committing the filesystem of `{computer}`"),
            "nothing was saved",
            COPY_DEADLINE,
        )
        .run(docker.commit_container(options, config))
        .await?;
        Ok::<_, SnapshotError>((committed.id, created_at, home_bytes))
    }
    .await;
    let (frozen, unpaused) = match paused_at {
        Some(at) => {
            let unpaused = unpause(docker, computer).await;
            (at.elapsed(), unpaused)
        }
        None => (Duration::ZERO, Ok(())),
    };
    let (image_id, created_at, home_bytes) = match made {
        Ok(made) => made,
        Err(e) => {
            let _ = store::remove_pair(docker, &format!("{REPOSITORY}:{tag}"), &volume).await;
            return Err(match unpaused {
                Ok(()) => e,
                Err(thaw) => SnapshotError::Failed {
                    what: format!("saving the snapshot `{name}`"),
                    why: e.to_string(),
                    aftermath: format!("Unpausing the computer failed too ({thaw}): run `docker unpause {computer}`."),
                },
            });
        }
    };
    unpaused?;
    Ok(Saved {
        snapshot: Snapshot {
            name: name.to_string(),
            note: note.to_string(),
            created_at,
            size_bytes: layer_bytes + home_bytes,
            image_version: found.version.clone().unwrap_or_else(|| "unknown".into()),
            image_id,
            image: format!("{REPOSITORY}:{tag}"),
            home_volume: volume,
        },
        frozen,
        took: started.elapsed(),
    })
}

/// The computer, which must be running (not paused or stopped).
pub(super) async fn running(
    docker: &Docker,
    computer: &str,
) -> Result<FoundComputer, SnapshotError> {
    match find_computer(docker, computer).await? {
        Some(found) if found.status == "running" && found.token.is_some() => Ok(found),
        _ => Err(SnapshotError::NotRunning {
            computer: computer.to_string(),
        }),
    }
}

/// The size of the container's filesystem changes (Docker's `SizeRw`).
async fn changed_bytes(docker: &Docker, computer: &str) -> Result<u64, SnapshotError> {
    let options = InspectContainerOptionsBuilder::default().size(true).build();
    let inspect = Call::new(
        format!("measuring the filesystem changes of `{computer}`"),
        "nothing was saved",
        STEP_DEADLINE,
    )
    .run(docker.inspect_container(computer, Some(options)))
    .await?;
    Ok(inspect.size_rw.unwrap_or(0).max(0) as u64)
}

/// The home copy's size from the copier's last line, or why it failed.
fn home_copied(copied: &Finished, computer: &str, spare: u64) -> Result<u64, SnapshotError> {
    let last = copied.output.lines().last().unwrap_or("").trim();
    let mut words = last.split_whitespace();
    match (copied.exit_code, words.next()) {
        (0, Some("copied")) => Ok(words.next().and_then(|n| n.parse().ok()).unwrap_or(0)),
        (3, Some("short")) => {
            let mut figure = || {
                words
                    .next()
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            let needed = figure();
            let free = figure();
            Err(SnapshotError::DiskShort {
                needed,
                free: free.saturating_sub(spare),
                spare,
            })
        }
        _ => Err(SnapshotError::Failed {
            what: format!("copying the home of `{computer}`"),
            why: copied.outcome(),
            aftermath: "Nothing was saved; the computer runs as it was.".into(),
        }),
    }
}

async fn pause(docker: &Docker, computer: &str) -> Result<(), SnapshotError> {
    Call::new(
        format!("pausing the computer `{computer}`"),
        "nothing was saved",
        STEP_DEADLINE,
    )
    .run(docker.pause_container(computer))
    .await?;
    Ok(())
}

async fn unpause(docker: &Docker, computer: &str) -> Result<(), SnapshotError> {
    Call::new(
        format!("unpausing the computer `{computer}`"),
        format!("the computer may stay paused: run `docker unpause {computer}`"),
        STEP_DEADLINE,
    )
    .run(docker.unpause_container(computer))
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPARE: u64 = 256 * 1024 * 1024;

    fn finished(exit_code: i64, output: &str) -> Finished {
        Finished {
            exit_code,
            output: output.to_string(),
        }
    }

    #[test]
    fn the_copier_says_how_much_it_copied_or_why_not() {
        assert_eq!(
            home_copied(&finished(0, "copied 1234\n"), "c", SPARE).unwrap(),
            1234
        );
        let short =
            home_copied(&finished(3, "short 100000000 300000000\n"), "c", SPARE).unwrap_err();
        let text = short.to_string();
        assert!(
            text.contains("needs 100.0 MB and 31.6 MB is free beyond the 268.4 MB kept spare"),
            "{text}"
        );
        assert!(text.contains("nothing was saved and the computer runs as it was"));
        let broken =
            home_copied(&finished(4, "cp: cannot create: No space\n"), "c", SPARE).unwrap_err();
        assert!(
            broken
                .to_string()
                .contains("exited with 4: cp: cannot create"),
            "{broken}"
        );
    }
}
