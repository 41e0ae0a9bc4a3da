//! The checks up to the engine: the `COMPUTER_USE_*` settings, which Docker
//! endpoint is used and why, the engine itself, its free disk and the image.

use super::report::{Outcome, Report};
use super::{timed, Budget};
use crate::child_env::WithoutHostSecrets;
use crate::docker::fix;
use crate::docker::image::{is_older_than_binary, pulls_missing_image};
use crate::docker::{
    binary_version, resolve_endpoint, ComputerState, DockerEndpoint, DockerError, Engine,
    EngineFacts, EngineQueryError, Transport,
};
use crate::error_chain::describe;
use crate::settings::{ComputerSettings, DevtoolsSettings, Env, Settings, SettingsError};
use std::time::Duration;

const ENGINE_DEADLINE: Duration = Duration::from_secs(3);
const DISK_DEADLINE: Duration = Duration::from_secs(3);
const IMAGE_DEADLINE: Duration = Duration::from_secs(3);

/// Under this much free space on the engine's disk, a warning: an image
/// pull, Chromium's cache and recordings need room.
const DISK_WARN_KIB: u64 = 5 * 1024 * 1024;
/// Under this much, containers fail to write and the check is an error.
const DISK_ERR_KIB: u64 = 1024 * 1024;
/// The fix for too little free space, a warning or an error.
const FREE_SPACE: &str =
    "free space: `docker system prune` removes stopped containers and unused images";

/// Why the free space on the engine's disk was not measured; the check
/// then warns with it.
#[derive(Debug, thiserror::Error)]
enum UnmeasuredDisk {
    #[error("cannot run `df`: {0}")]
    NoDf(#[source] std::io::Error),
    #[error("`df -Pk {path}` printed no size")]
    NoLocalSize { path: String },
    #[error("the engine's data root is not on this machine and `{name}` is not running")]
    NotRunning { name: String },
    #[error(transparent)]
    Docker(#[from] DockerError),
    #[error(transparent)]
    Exec(#[from] EngineQueryError),
    #[error("`df -Pk /` in `{name}` printed no size")]
    NoComputerSize { name: String },
    #[error("the computer's settings are not usable")]
    NoSettings,
}

/// What the checks so far found, for the ones after them.
pub(crate) struct Found {
    /// Everything `start_computer` reads, when all of it is usable.
    pub settings: Option<Settings>,
    /// The computer's own settings, when at least those are usable.
    pub computer: Option<ComputerSettings>,
    pub endpoint: Option<DockerEndpoint>,
    pub engine: Option<Engine>,
}

/// Settings, endpoint, engine, then the disk and the image side by side.
pub(crate) async fn check(env: &Env, budget: &Budget, report: &mut Report) -> Found {
    let (outcome, settings, computer) = settings(env);
    report.add("settings", outcome);
    let endpoint = match resolve_endpoint(env) {
        Ok(endpoint) => {
            report.add(
                "docker-endpoint",
                Outcome::ok(format!("{endpoint}, over {}", endpoint.transport)),
            );
            Some(endpoint)
        }
        Err(e) => {
            report.add(
                "docker-endpoint",
                Outcome::err(e.to_string(), fix::ENDPOINT),
            );
            None
        }
    };
    let mut found = Found {
        settings,
        computer,
        endpoint,
        engine: None,
    };
    let Some(endpoint) = &found.endpoint else {
        return found;
    };
    let (outcome, engine) = timed(
        budget,
        ENGINE_DEADLINE,
        fix::ENGINE_UNREACHABLE,
        engine(endpoint),
    )
    .await;
    report.add("docker-engine", outcome);
    let Some((engine, facts)) = engine else {
        return found;
    };
    let disk = timed(
        budget,
        DISK_DEADLINE,
        "check it with `docker system df`",
        disk(&engine, &facts, endpoint, found.computer.as_ref()),
    );
    let image = async {
        match &found.computer {
            Some(computer) => Some(
                timed(
                    budget,
                    IMAGE_DEADLINE,
                    "check that Docker is not stuck, then run `docker image ls`",
                    image(&engine, computer, endpoint),
                )
                .await,
            ),
            None => None,
        }
    };
    let ((disk, _), image) = tokio::join!(disk, image);
    report.add("docker-disk", disk);
    if let Some((image, _)) = image {
        report.add("image", image);
    }
    if let Some(computer) = &found.computer {
        let (outcome, _) = timed(
            budget,
            IMAGE_DEADLINE,
            "check that Docker is not stuck, then run `docker image ls`",
            snapshots(&engine, &computer.name),
        )
        .await;
        report.add("snapshots", outcome);
    }
    found.engine = Some(engine);
    found
}

fn settings(env: &Env) -> (Outcome, Option<Settings>, Option<ComputerSettings>) {
    let bad = |e: SettingsError| {
        Outcome::err(format!("`{}` is `{}`", e.name, e.value), e.expected.clone())
    };
    let settings = match Settings::for_start_computer(env) {
        Ok(settings) => settings,
        Err(e) => return (bad(e), None, ComputerSettings::from_env(env).ok()),
    };
    if let Err(e) = DevtoolsSettings::for_start_chrome_devtools(env) {
        let computer = settings.computer.clone();
        return (bad(e), None, Some(computer));
    }
    let c = &settings.computer;
    let outcome = Outcome::ok(format!(
        "computer `{}`, ports {}-{}, image `{}`, screens {}",
        c.name,
        c.port_base,
        c.port_base + 16,
        c.image,
        settings.session.screen_size
    ));
    let computer = settings.computer.clone();
    (outcome, Some(settings), Some(computer))
}

/// The computer's snapshots and the disk they hold; a warning at the
/// most `COMPUTER_USE_SNAPSHOTS_MAX` allows.
async fn snapshots(engine: &Engine, name: &str) -> (Outcome, Option<()>) {
    use crate::docker::snapshot::{max_from, MAX_VAR};
    let all = match engine.snapshots(name).await {
        Ok(all) => all,
        Err(e) => return (Outcome::warn(e.to_string(), "run `docker image ls`"), None),
    };
    let env = crate::settings::process_env();
    let max = max_from(env.get(MAX_VAR).map(String::as_str))
        .unwrap_or(crate::docker::snapshot::MAX_DEFAULT);
    if all.is_empty() {
        return (Outcome::ok(format!("`{name}` has none")), Some(()));
    }
    let detail = format!(
        "`{name}` has {}",
        crate::docker::snapshot::store::summary(&all)
    );
    let outcome = if all.len() >= max {
        Outcome::warn(
            format!("{detail}; that is the most {MAX_VAR} allows ({max})"),
            "delete one with `computer-use-mcp snapshot rm NAME --yes`, or raise COMPUTER_USE_SNAPSHOTS_MAX",
        )
    } else {
        Outcome::ok(detail)
    };
    (outcome, Some(()))
}

async fn engine(endpoint: &DockerEndpoint) -> (Outcome, Option<(Engine, EngineFacts)>) {
    let engine = match Engine::connect(endpoint).await {
        Ok(engine) => engine,
        Err(e) => {
            let detail = match &e {
                DockerError::Unreachable { host, why, source } => format!(
                    "cannot reach the Docker engine at `{host}` ({why}): {}",
                    describe(source)
                ),
                DockerError::EngineSilent { host, why, after } => format!(
                    "the Docker engine at `{host}` ({why}) did not answer within {}s",
                    after.as_secs()
                ),
                other => other.to_string(),
            };
            return (Outcome::err(detail, fix::ENGINE_UNREACHABLE), None);
        }
    };
    let facts = match engine.facts().await {
        Ok(facts) => facts,
        Err(e) => {
            return (
                Outcome::err(
                    format!("the Docker engine at {endpoint} did not answer `info`: {e}"),
                    fix::ENGINE_UNREACHABLE,
                ),
                None,
            )
        }
    };
    let unknown = || "?".to_string();
    let os = facts.os.clone().unwrap_or_else(unknown);
    let arch = facts.arch.clone().unwrap_or_else(unknown);
    let detail = format!(
        "Docker {} at `{}`, {os}/{arch}, {} CPUs, {} memory",
        facts.version.clone().unwrap_or_else(unknown),
        endpoint.host,
        facts.cpus,
        crate::settings::format_size(facts.memory_bytes),
    );
    let outcome = if os != "linux" {
        Outcome::err(
            format!("{detail}: the computer is a Linux container"),
            "switch Docker Desktop to Linux containers (its tray menu), or use another engine",
        )
    } else if !matches!(arch.as_str(), "x86_64" | "amd64" | "aarch64" | "arm64") {
        Outcome::warn(
            format!("{detail}: the image is built for x86_64 and arm64 only"),
            "use an engine on an x86_64 or arm64 machine",
        )
    } else {
        Outcome::ok(detail)
    };
    (outcome, Some((engine, facts)))
}

/// Free space where the engine keeps images and containers: its data root
/// when that is on this machine (a local socket), else the root of a running
/// computer (Docker Desktop's VM, a remote engine).
async fn disk(
    engine: &Engine,
    facts: &EngineFacts,
    endpoint: &DockerEndpoint,
    computer: Option<&ComputerSettings>,
) -> (Outcome, Option<()>) {
    let root = facts.root_dir.clone().unwrap_or_default();
    let local = matches!(endpoint.transport, Transport::Unix(_))
        && !root.is_empty()
        && std::path::Path::new(&root).exists();
    let measured = if local {
        df_local(&root).await.map(|kib| (kib, format!("`{root}`")))
    } else {
        match computer {
            Some(c) => df_in_computer(engine, &c.name)
                .await
                .map(|kib| (kib, format!("the engine's disk (seen from `{}`)", c.name))),
            None => Err(UnmeasuredDisk::NoSettings),
        }
    };
    let outcome = match measured {
        Ok((kib, place)) => {
            let free = crate::settings::format_size(kib * 1024);
            if kib < DISK_ERR_KIB {
                Outcome::err(
                    format!("{free} free on {place}"),
                    FREE_SPACE,
                )
            } else if kib < DISK_WARN_KIB {
                Outcome::warn(
                    format!("{free} free on {place}, under 5 GiB"),
                    FREE_SPACE,
                )
            } else {
                Outcome::ok(format!("{free} free on {place}"))
            }
        }
        Err(why) => Outcome::warn(
            format!("free space not measured: {why}"),
            "check it with `docker system df`; `doctor --deep` starts the computer, and then it can be measured",
        ),
    };
    (outcome, Some(()))
}

async fn df_local(path: &str) -> Result<u64, UnmeasuredDisk> {
    let out = tokio::process::Command::new("df")
        .without_host_secrets()
        .args(["-Pk", path])
        .kill_on_drop(true)
        .output()
        .await
        .map_err(UnmeasuredDisk::NoDf)?;
    available_kib(&String::from_utf8_lossy(&out.stdout)).ok_or_else(|| {
        UnmeasuredDisk::NoLocalSize {
            path: path.to_string(),
        }
    })
}

async fn df_in_computer(engine: &Engine, name: &str) -> Result<u64, UnmeasuredDisk> {
    match engine.find_computer(name).await? {
        Some(found) if found.state == ComputerState::Running => {}
        _ => {
            return Err(UnmeasuredDisk::NotRunning {
                name: name.to_string(),
            })
        }
    }
    let text = engine.output_in(name, &["df", "-Pk", "/"]).await?;
    available_kib(&text).ok_or_else(|| UnmeasuredDisk::NoComputerSize {
        name: name.to_string(),
    })
}

/// The `Available` column of `df -Pk`'s one line of data.
fn available_kib(df: &str) -> Option<u64> {
    df.lines().nth(1)?.split_whitespace().nth(3)?.parse().ok()
}

/// The image: present with its version, or (missing) whether this build can
/// get it: a dev build never pulls, a release build asks the registry with
/// the current login.
async fn image(
    engine: &Engine,
    computer: &ComputerSettings,
    endpoint: &DockerEndpoint,
) -> (Outcome, Option<()>) {
    let image = &computer.image;
    let outcome = match engine.inspect_image(image).await {
        Err(e) => Outcome::err(e.to_string(), fix::ENGINE_UNREACHABLE),
        Ok(Some(facts)) => match facts.version {
            None => Outcome::warn(
                format!("`{image}` is present without a `computer-use.version` label"),
                "computers made from it count as this binary's version; build it with `just image`, or set COMPUTER_USE_IMAGE to a released image",
            ),
            Some(v) if is_older_than_binary(Some(&v)) => Outcome::warn(
                format!("`{image}` is present, version {v}, older than this binary ({})", binary_version()),
                if pulls_missing_image() {
                    format!("run `docker pull {image}`")
                } else {
                    "rebuild it with `just image`".to_string()
                },
            ),
            Some(v) => Outcome::ok(format!("`{image}` is present, version {v}")),
        },
        Ok(None) if !pulls_missing_image() => {
            let exists = matches!(engine.find_computer(&computer.name).await, Ok(Some(_)));
            let detail = format!("`{image}` is not on the engine, and dev builds never pull");
            if exists {
                Outcome::warn(
                    format!(
                        "{detail}; the computer `{}` exists and keeps working, but a new one cannot be made",
                        computer.name
                    ),
                    fix::DEV_IMAGE_MISSING,
                )
            } else {
                Outcome::err(detail, fix::DEV_IMAGE_MISSING)
            }
        }
        Ok(None) => pullable(engine, image, endpoint).await,
    };
    (outcome, Some(()))
}

/// Asks the registry, through the engine and with the user's login, for the
/// image's manifest: what a pull needs first, without pulling gigabytes.
async fn pullable(engine: &Engine, image: &str, endpoint: &DockerEndpoint) -> Outcome {
    match engine.registry_has(image, endpoint.config_dir.as_deref()).await {
        Ok(Ok(())) => Outcome::ok(format!(
            "`{image}` is not on the engine yet; the registry has it for this login, and start_computer pulls it (a few GB the first time)"
        )),
        Ok(Err(refusal)) => Outcome::err(
            format!("`{image}` is not on the engine, and the registry refuses it: {refusal}"),
            fix::PULL_DENIED,
        ),
        Err(e) => Outcome::err(e.to_string(), fix::PULL_DENIED),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_available_column_of_df() {
        let linux = "Filesystem     1024-blocks      Used Available Capacity Mounted on\n/dev/sda1        102687672  61234567  36199981      63% /\n";
        assert_eq!(available_kib(linux), Some(36199981));
        assert_eq!(available_kib("Filesystem 1024-blocks\n"), None);
        assert_eq!(available_kib(""), None);
    }

    #[test]
    fn a_bad_setting_is_an_err_naming_it_with_the_fix() {
        let env: Env = [("COMPUTER_USE_SCREEN_SIZE".to_string(), "huge".to_string())].into();
        let (outcome, settings, computer) = settings(&env);
        assert_eq!(outcome.status, super::super::report::Status::Err);
        assert_eq!(outcome.detail, "`COMPUTER_USE_SCREEN_SIZE` is `huge`");
        assert!(outcome.fix.is_some_and(|f| !f.is_empty()));
        assert!(settings.is_none());
        assert!(
            computer.is_some(),
            "the computer's own settings still count"
        );
    }
}
