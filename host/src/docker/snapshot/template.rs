//! Templates (`COMPUTER_USE_TEMPLATE`): a computer that does not exist yet
//! starts from a snapshot, its own or another computer's on the same
//! engine, instead of the plain image and an empty home. It is a fork:
//! the snapshot's image and a copy of its home, but a token, viewer key
//! and VNC password of its own (the copy leaves the template's keys out,
//! so computerd makes new ones; the token is made with the container).

use super::copier::{Copier, Mounted};
use super::store::{self, Snapshot};
use super::{SnapshotError, SnapshotName};
use crate::docker::call::{status_of, Call};
use crate::docker::container::HOME_KEY_LABEL;
use crate::docker::image::ensure_image;
use crate::settings::{ComputerSettings, Template, TEMPLATE};
use bollard::models::VolumeCreateRequest;
use bollard::query_parameters::ListImagesOptionsBuilder;
use bollard::Docker;
use std::collections::HashMap;
use std::time::Duration;

const COPY_DEADLINE: Duration = Duration::from_secs(600);
const STEP_DEADLINE: Duration = Duration::from_secs(60);

/// Copies the snapshot's home (`/snap`) into the new home (`/target`),
/// without the keys that must be the new computer's own.
/// A link on the way to them (planted by root in the template's computer)
/// is removed first, so that the keys removed are the ones computerd reads.
const FORK_SCRIPT: &str = r#"
cp -a /snap/. /target/ || exit 4
for part in .local .local/share .local/share/computer-use; do
    if [ -L "/target/$part" ]; then rm -f "/target/$part" || exit 5; fi
done
rm -f /target/.local/share/computer-use/viewer-key /target/.local/share/computer-use/vncpasswd || exit 5
echo forked
"#;

/// Makes the home of `settings`' computer, which does not exist yet, from
/// its template, and returns the snapshot image to create it from. `None`
/// when its home volume exists already: a home is never overwritten.
pub async fn prepare(
    docker: &Docker,
    settings: &ComputerSettings,
    config_dir: Option<&std::path::Path>,
    template: &Template,
) -> Result<Option<String>, SnapshotError> {
    let volume = settings.volume();
    let looked = Call::new(
        format!("looking at the home volume `{volume}`"),
        "nothing was changed",
        STEP_DEADLINE,
    );
    match looked.run_raw(docker.inspect_volume(&volume)).await? {
        Ok(_) => {
            tracing::info!(
                "{TEMPLATE} is set, but the home volume `{volume}` exists: the computer starts with that home, on the plain image"
            );
            return Ok(None);
        }
        Err(e) if status_of(&e) == Some(404) => {}
        Err(e) => return Err(looked.failed(e).into()),
    }
    let snapshot = find(docker, template).await?;
    store::check_home_copy(docker, &snapshot).await?;
    ensure_image(docker, &settings.image, config_dir).await?;
    Call::new(
        format!("creating the home volume `{volume}`"),
        "nothing was created",
        STEP_DEADLINE,
    )
    .run(
        docker.create_volume(VolumeCreateRequest {
            name: Some(volume.clone()),
            labels: settings
                .home_key
                .as_ref()
                .map(|key| [(HOME_KEY_LABEL.to_string(), key.clone())].into()),
            ..Default::default()
        }),
    )
    .await?;
    let copied = async {
        let copier = Copier::create(
            docker,
            &settings.name,
            &settings.image,
            &[
                Mounted {
                    volume: &snapshot.home_volume,
                    at: "/snap",
                    read_only: true,
                },
                Mounted {
                    volume: &volume,
                    at: "/target",
                    read_only: false,
                },
            ],
            FORK_SCRIPT,
            &[],
        )
        .await?;
        copier
            .run(COPY_DEADLINE)
            .await?
            .succeeded(format!("copying the home of the template `{template}`"))
            .map(drop)
    }
    .await;
    if let Err(e) = copied {
        // A half-copied home would be taken for the computer's own next time.
        let _ = store::remove_volume(docker, &volume).await;
        return Err(SnapshotError::Failed {
            what: format!("starting `{}` from the template `{template}`", settings.name),
            why: e.to_string(),
            aftermath: "Nothing was created; fix the cause or unset COMPUTER_USE_TEMPLATE, and call start_computer again.".into(),
        });
    }
    Ok(Some(snapshot.image))
}

/// The snapshot a template names; a bare name must be one computer's only.
async fn find(docker: &Docker, template: &Template) -> Result<Snapshot, SnapshotError> {
    let name = SnapshotName::parse(&template.name)?;
    if let Some(computer) = &template.computer {
        return store::find(docker, computer, &name).await.map_err(|e| match e {
            SnapshotError::Unknown { existing, .. } => SnapshotError::Invalid(format!(
                "{TEMPLATE} is `{template}`, but the computer `{computer}` has no snapshot `{name}` ({}): name one of its snapshots",
                if existing.is_empty() { "it has none".to_string() } else { format!("it has {}", existing.join(", ")) }
            )),
            other => other,
        });
    }
    let filters: HashMap<String, Vec<String>> = [(
        "label".to_string(),
        vec![format!("{}={name}", super::NAME_LABEL)],
    )]
    .into();
    let options = ListImagesOptionsBuilder::default()
        .filters(&filters)
        .build();
    let images = Call::new(
        format!("looking for the snapshot `{name}`"),
        "nothing was changed",
        STEP_DEADLINE,
    )
    .run(docker.list_images(Some(options)))
    .await?;
    let mut owners: Vec<String> = images
        .iter()
        .filter_map(|image| image.labels.get(super::OF_LABEL).cloned())
        .collect();
    owners.sort();
    owners.dedup();
    match owners.as_slice() {
        [owner] => store::find(docker, owner, &name).await,
        [] => Err(SnapshotError::Invalid(format!(
            "{TEMPLATE} is `{template}`, but no computer on this engine has a snapshot named `{name}`: save one with save_snapshot or `computer-use-mcp snapshot save {name}`, or unset {TEMPLATE}"
        ))),
        several => Err(SnapshotError::Invalid(format!(
            "{TEMPLATE} is `{template}`, and several computers have a snapshot of that name: say which, as one of {}",
            several
                .iter()
                .map(|owner| format!("`{owner}:{name}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}
