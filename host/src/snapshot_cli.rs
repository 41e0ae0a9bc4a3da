//! `computer-use-mcp snapshot save|list|restore|rm NAME` and
//! `computer-use-mcp reset`: the snapshot tools for a person at a terminal,
//! on the computer `COMPUTER_USE_NAME` names, with the tools' rules. The
//! destructive ones ask for `--yes`, and a restore or reset refuses while
//! sessions are live unless `--end-sessions` is given.

use crate::docker::image::ensure_image;
use crate::docker::resolve_endpoint;
use crate::docker::snapshot::{self, SnapshotError, SnapshotName, Target};
use crate::settings::{process_env, ComputerSettings};
use computer_protocol::endpoints::{ListRecordings, ListSessions, NoBody};
use std::fmt::Write as _;
use std::time::Duration;

const API_DEADLINE: Duration = Duration::from_secs(30);

pub const USAGE: &str = "usage: computer-use-mcp snapshot save NAME [--note TEXT] | snapshot list | snapshot restore NAME --yes [--end-sessions] | snapshot rm NAME --yes; computer-use-mcp reset --yes [--end-sessions]";

/// What the command line asked for.
#[derive(Debug, PartialEq, Eq)]
enum Command {
    Save { name: String, note: String },
    List,
    Restore { target: String, end_sessions: bool },
    Reset { end_sessions: bool },
    Remove { name: String },
}

/// What is wrong with a command line; exit code 2.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
enum BadCommandLine {
    #[error("{what} is destructive: add --yes to go ahead")]
    Unconfirmed { what: &'static str },
    #[error("unknown option `{option}`; {USAGE}")]
    UnknownOption { option: String },
    #[error("give a snapshot NAME; {USAGE}")]
    NoName,
    #[error("--note needs a TEXT")]
    NoNote,
    #[error("{USAGE}")]
    Usage,
}

/// `args` after `snapshot` (`reset`: `reset` and its flags).
fn parse(args: &[String]) -> Result<Command, BadCommandLine> {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let flag = |name: &str| words.contains(&name);
    let confirmed = |what: &'static str| {
        if flag("--yes") {
            Ok(())
        } else {
            Err(BadCommandLine::Unconfirmed { what })
        }
    };
    let known = ["--yes", "--end-sessions", "--note"];
    if let Some(unknown) = words
        .iter()
        .find(|w| w.starts_with("--") && !known.contains(w))
    {
        return Err(BadCommandLine::UnknownOption {
            option: unknown.to_string(),
        });
    }
    let name_at = |i: usize| {
        words
            .get(i)
            .filter(|w| !w.starts_with("--"))
            .map(|w| w.to_string())
            .ok_or(BadCommandLine::NoName)
    };
    match words.first().copied() {
        Some("reset") => {
            confirmed("resetting the computer")?;
            Ok(Command::Reset {
                end_sessions: flag("--end-sessions"),
            })
        }
        Some("save") => {
            let note = match words.iter().position(|w| *w == "--note") {
                Some(i) => words
                    .get(i + 1)
                    .map(|w| w.to_string())
                    .ok_or(BadCommandLine::NoNote)?,
                None => String::new(),
            };
            Ok(Command::Save {
                name: name_at(1)?,
                note,
            })
        }
        Some("list") => Ok(Command::List),
        Some("restore") => {
            let target = name_at(1)?;
            confirmed("restoring a snapshot")?;
            Ok(Command::Restore {
                target,
                end_sessions: flag("--end-sessions"),
            })
        }
        Some("rm") => {
            let name = name_at(1)?;
            confirmed("deleting a snapshot")?;
            Ok(Command::Remove { name })
        }
        _ => Err(BadCommandLine::Usage),
    }
}

/// Runs the command; the exit code is 0 on success, 2 on a bad command
/// line, 1 on a refusal or failure (printed to stderr).
pub async fn run(args: &[String]) -> i32 {
    let command = match parse(args) {
        Ok(command) => command,
        Err(e) => {
            eprintln!("computer-use-mcp: {e}");
            return 2;
        }
    };
    match execute(command).await {
        Ok(text) => {
            print!("{text}");
            0
        }
        Err(e) => {
            eprintln!("computer-use-mcp: {e}");
            1
        }
    }
}

async fn execute(command: Command) -> Result<String, Box<dyn std::error::Error>> {
    let env = process_env();
    let settings = ComputerSettings::from_env(&env)?;
    let endpoint = resolve_endpoint(&env)?;
    let docker = endpoint.connect().await?;
    let computer = settings.name.as_str();
    match command {
        Command::List => {
            let all = snapshot::list(&docker, computer).await?;
            Ok(listing(computer, &all))
        }
        Command::Save { name, note } => {
            let name = SnapshotName::parse(&name)?;
            snapshot::check_note(&note)?;
            let limits = snapshot::SaveLimits::from_env(&env)?;
            ensure_image(&docker, &settings.image, endpoint.config_dir.as_deref()).await?;
            let saved =
                snapshot::save(&docker, (computer, &settings.image), &name, &note, limits).await?;
            Ok(format!(
                "saved snapshot `{name}` of `{computer}`: {}, in {:.1} s (paused {:.1} s)\n",
                human(saved.snapshot.size_bytes),
                saved.took.as_secs_f64(),
                saved.frozen.as_secs_f64()
            ))
        }
        Command::Remove { name } => {
            let name = SnapshotName::parse(&name)?;
            let gone = snapshot::delete(&docker, computer, &name).await?;
            Ok(format!(
                "deleted snapshot `{name}` of `{computer}` ({} freed)\n",
                human(gone.size_bytes)
            ))
        }
        Command::Restore {
            target,
            end_sessions,
        } => {
            let name = SnapshotName::parse(&target)?;
            let found = snapshot::store::find(&docker, computer, &name).await?;
            put_back(
                &docker,
                (&settings, &endpoint),
                Target::Snapshot(found),
                end_sessions,
            )
            .await
        }
        Command::Reset { end_sessions } => {
            put_back(&docker, (&settings, &endpoint), Target::Reset, end_sessions).await
        }
    }
}

/// A restore or reset, refused while sessions are live unless
/// `end_sessions`; the computer is started first if it was stopped.
async fn put_back(
    docker: &bollard::Docker,
    (settings, endpoint): (&ComputerSettings, &crate::docker::DockerEndpoint),
    target: Target,
    end_sessions: bool,
) -> Result<String, Box<dyn std::error::Error>> {
    let started = crate::computer::start(&crate::tenant::Tenant::local()).await?;
    let live = started
        .client
        .send::<ListSessions>(&(), &NoBody {}, API_DEADLINE, "nothing was changed")
        .await?
        .sessions;
    let recording = snapshot::recordings_in_progress(
        started
            .client
            .send::<ListRecordings>(&(), &NoBody {}, API_DEADLINE, "nothing was changed")
            .await?,
    );
    if !recording.is_empty() {
        return Err(SnapshotError::Invalid(format!(
            "the computer `{}` is recording: {}. Nothing was changed; the agent stops it with stop_recording first",
            settings.name,
            recording.join(", ")
        ))
        .into());
    }
    if !live.is_empty() && !end_sessions {
        let named: Vec<String> = live
            .iter()
            .map(|s| snapshot::session_named(&s.session_id, &s.title))
            .collect();
        return Err(SnapshotError::Invalid(format!(
            "the computer `{}` has live sessions: {}. Nothing was changed; add --end-sessions to end them",
            settings.name,
            named.join(", ")
        ))
        .into());
    }
    let done = snapshot::restore(docker, settings, endpoint.config_dir.as_deref(), &target).await?;
    let what = match &target {
        Target::Snapshot(s) => format!("restored `{}` to snapshot `{}`", settings.name, s.name),
        Target::Reset => format!("reset `{}` to its image with an empty home", settings.name),
    };
    Ok(format!(
        "{what} in {:.1} s; ended {} session(s)\n",
        done.took.as_secs_f64(),
        live.len()
    ))
}

/// The snapshots of `computer`, one per line, with the disk they hold.
pub fn listing(computer: &str, all: &[snapshot::Snapshot]) -> String {
    if all.is_empty() {
        return format!("the computer `{computer}` has no snapshots\n");
    }
    let total: u64 = all.iter().map(|s| s.size_bytes).sum();
    let mut text = format!(
        "{} snapshot(s) of `{computer}`, {} in all:\n",
        all.len(),
        human(total)
    );
    for s in all {
        let _ = writeln!(
            text,
            "  {}  {}  {}  image {}{}",
            s.name,
            s.created_at,
            human(s.size_bytes),
            s.image_version,
            if s.note.is_empty() {
                String::new()
            } else {
                format!("  {}", s.note)
            }
        );
    }
    text
}

fn human(bytes: u64) -> String {
    computer_protocol::archive::human_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn the_command_line_is_read_and_destructive_ones_need_yes() {
        assert_eq!(
            parse(&args("save base --note ready")).unwrap(),
            Command::Save {
                name: "base".into(),
                note: "ready".into()
            }
        );
        assert_eq!(parse(&args("list")).unwrap(), Command::List);
        assert_eq!(
            parse(&args("restore base --yes --end-sessions")).unwrap(),
            Command::Restore {
                target: "base".into(),
                end_sessions: true
            }
        );
        assert_eq!(
            parse(&args("reset --yes")).unwrap(),
            Command::Reset {
                end_sessions: false
            }
        );
        for (line, says) in [
            ("restore base", "--yes"),
            ("rm base", "--yes"),
            ("reset", "--yes"),
            ("save", "NAME"),
            ("save base --note", "TEXT"),
            ("restore --yes", "NAME"),
            ("list --force", "unknown option `--force`"),
            ("frobnicate", "usage"),
        ] {
            let e = parse(&args(line)).unwrap_err();
            assert!(e.to_string().contains(says), "{line}: {e}");
        }
    }
}
