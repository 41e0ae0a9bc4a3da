//! `--deep`: a spare screen of doctor's own (a session whose owner no agent
//! has), and on it what agents and people use: a screenshot, Chromium and
//! its DevTools, the accessibility bus, the viewer page and WebSocket, and a
//! native VNC handshake. The session is ended at the end on every path (a
//! failed check, a missed deadline, Ctrl+C); if doctor is killed outright,
//! computerd ends it 30 s after its last heartbeat.

use super::computer::{Computer, Running};
use super::engine::Found;
use super::picture::{picture, PictureError};
use super::report::{secs, Outcome, Report};
use super::{timed, viewer, vnc, Budget};
use crate::client::{ClientError, ComputerdClient};
use crate::docker::{ensure_computer, ComputerState};
use base64::Engine as _;
use computer_protocol::endpoints::{
    CreateSession, EndOwnerSessions, EndSession, Heartbeat, ListSessions, NoBody, Observe,
    OpenPath, Shell,
};
use computer_protocol::textview::{TextViewOptions, TreeSource, View};
use computer_protocol::ScreenSize;
use computer_protocol::{
    CreateSessionRequest, Observation, ObserveRequest, OpenPathRequest, OwnerId, ScreenNumber,
    SessionId, SessionSettings, ShellRequest, ShellResult, TextNode,
};
use std::time::Duration;
use tokio::time::Instant;

const START_DEADLINE: Duration = Duration::from_secs(40);
const SCREEN_DEADLINE: Duration = Duration::from_secs(10);
/// A fresh screen is black until its window manager paints it.
const SCREENSHOT_DEADLINE: Duration = Duration::from_secs(8);
const BROWSER_DEADLINE: Duration = Duration::from_secs(20);
const DEVTOOLS_DEADLINE: Duration = Duration::from_secs(6);
const ACCESSIBILITY_DEADLINE: Duration = Duration::from_secs(12);
const VIEWER_DEADLINE: Duration = Duration::from_secs(4);
const VNC_DEADLINE: Duration = Duration::from_secs(4);
/// Ending the session; not taken from the run's budget, so it always runs.
const CLEANUP_DEADLINE: Duration = Duration::from_secs(5);
const POLL_EVERY: Duration = Duration::from_millis(200);
/// Screen N's Chromium serves DevTools on this + N inside the computer
/// (computerd's `COMPUTERD_DEVTOOLS_PORT_BASE`, which the host never sets).
const DEVTOOLS_PORT_BASE: u16 = 9221;
pub(crate) const TITLE: &str = "computer-use-mcp doctor";

/// The spare session and where its screen is.
struct Spare {
    running: Running,
    id: SessionId,
    screen: ScreenNumber,
    size: ScreenSize,
    /// A word of this run in the names of the page and the dialog.
    tag: String,
}

pub(crate) async fn check(found: &Found, computer: Computer, budget: &Budget, report: &mut Report) {
    let running = match computer.running {
        Some(running) => running,
        None => match start(found, &computer, budget, report).await {
            Some(running) => running,
            None => {
                report.add(
                    "spare-screen",
                    Outcome::err(
                        "no running computer to open a spare screen on",
                        "fix the checks above, then run `computer-use-mcp doctor --deep` again",
                    ),
                );
                return;
            }
        },
    };
    let wire = found
        .settings
        .as_ref()
        .map(|s| s.session.to_wire())
        .unwrap_or_default();
    let size = found
        .settings
        .as_ref()
        .map(|s| s.session.screen_size)
        .unwrap_or(ScreenSize {
            width: 1280,
            height: 800,
        });
    let tag = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
    let owner = OwnerId(format!("doctor-{tag}"));
    let beating = tokio::spawn(heartbeat(running.client.clone(), owner.clone()));
    let (outcome, opened) = timed(
        budget,
        SCREEN_DEADLINE,
        "see computerd's logs with `docker logs <computer>`",
        open(&running.client, &owner, wire),
    )
    .await;
    report.add("spare-screen", outcome);
    if let Some((id, screen)) = opened {
        let spare = Spare {
            running: running.clone(),
            id,
            screen,
            size,
            tag,
        };
        let mut steps = Report::default();
        let interrupted = tokio::select! {
            () = on_screen(&spare, budget, &mut steps) => false,
            _ = tokio::signal::ctrl_c() => true,
        };
        report.checks.append(&mut steps.checks);
        if interrupted {
            report.add(
                "interrupted",
                Outcome::err("Ctrl+C ended the deep checks", "run them again to the end"),
            );
        }
        report.add("cleanup", cleanup(&spare, &owner).await);
    } else {
        // A session may exist even though its screen did not open in time.
        end_owner(&running.client, &owner).await;
    }
    beating.abort();
}

/// Starts the computer as `start_computer` would, when it is missing or
/// stopped and the plain checks found what that needs.
async fn start(
    found: &Found,
    computer: &Computer,
    budget: &Budget,
    report: &mut Report,
) -> Option<Running> {
    let (Some(settings), Some(endpoint)) = (&found.settings, &found.endpoint) else {
        return None;
    };
    let startable = match &computer.found {
        Some(None) => true,
        Some(Some(c)) => c.state == ComputerState::Stopped && c.token.is_some(),
        None => false,
    };
    if !startable {
        return None;
    }
    let name = settings.computer.name.clone();
    let (outcome, running) = timed(
        budget,
        START_DEADLINE,
        &format!("call start_computer once to see the whole error, or see `docker logs {name}`"),
        async {
            match ensure_computer(&settings.computer, endpoint).await {
                Err(e) => (
                    Outcome::err(format!("`{name}` did not start"), e.to_string()),
                    None,
                ),
                Ok(c) => match c.viewer_key.clone() {
                    None => (
                        Outcome::err(
                            format!("`{name}` started but gave no viewer key"),
                            format!("see `docker logs {name}`"),
                        ),
                        None,
                    ),
                    Some(key) => (
                        Outcome::ok(format!(
                            "started `{name}` as start_computer would ({:?}); it keeps running",
                            c.startup
                        )),
                        Some(Running {
                            client: ComputerdClient::new(
                                c.api_url.clone(),
                                c.token.clone(),
                                name.clone(),
                            ),
                            name: name.clone(),
                            port_base: c.port_base,
                            key,
                        }),
                    ),
                },
            }
        },
    )
    .await;
    report.add("computer-start", outcome);
    running
}

/// Keeps the spare session alive as an agent's are, at the same pace.
async fn heartbeat(client: ComputerdClient, owner: OwnerId) {
    use crate::heartbeat::INTERVAL;
    let mut ticks = tokio::time::interval(INTERVAL);
    loop {
        ticks.tick().await;
        let _ = client
            .send::<Heartbeat>(&owner, &NoBody {}, INTERVAL, "nothing")
            .await;
    }
}

/// A session of doctor's own, and its screen (opened by a first screenshot).
async fn open(
    client: &ComputerdClient,
    owner: &OwnerId,
    settings: SessionSettings,
) -> (Outcome, Option<(SessionId, ScreenNumber)>) {
    let fix = "see computerd's logs with `docker logs <computer>`";
    let request = CreateSessionRequest {
        title: TITLE.into(),
        owner: owner.clone(),
        settings,
        resume: None,
    };
    let created = match client
        .send::<CreateSession>(
            &(),
            &request,
            SCREEN_DEADLINE,
            "the session may exist; it ends 30 s after doctor",
        )
        .await
    {
        Ok(created) => created,
        Err(e) => return (Outcome::err(e.to_string(), fix), None),
    };
    let id = created.session_id;
    match client
        .send::<Observe>(
            &id,
            &ObserveRequest::default(),
            SCREEN_DEADLINE,
            "the screen may be opening",
        )
        .await
    {
        // The observation names the screen the session opened.
        Ok(observed) => (
            Outcome::ok(format!(
                "session `{id}` of `{}` (no agent's) on screen {}",
                owner.0, observed.screen
            )),
            Some((id, observed.screen)),
        ),
        Err(e) => (
            Outcome::err(e.to_string(), fix),
            Some((id, ScreenNumber(0))),
        ),
    }
}

/// Every check on the spare screen, each with its deadline.
async fn on_screen(spare: &Spare, budget: &Budget, report: &mut Report) {
    if spare.screen.0 == 0 {
        return;
    }
    let name = &spare.running.name;
    let logs = format!("see `docker logs {name}`");
    let (o, _) = timed::<()>(budget, SCREENSHOT_DEADLINE, &logs, async {
        (
            screenshot(spare, SCREENSHOT_DEADLINE - POLL_EVERY).await,
            None,
        )
    })
    .await;
    report.add("screenshot", o);
    let page = format!("/tmp/computer-use-doctor-{}.html", spare.tag);
    let (o, _) = timed::<()>(budget, BROWSER_DEADLINE, &logs, async {
        (browser(spare, &page).await, None)
    })
    .await;
    report.add("browser", o);
    let (o, _) = timed::<()>(budget, DEVTOOLS_DEADLINE, &logs, async {
        (devtools(spare, &page).await, None)
    })
    .await;
    report.add("devtools", o);
    let (o, _) = timed::<()>(budget, ACCESSIBILITY_DEADLINE, &logs, async {
        (
            accessibility(spare, ACCESSIBILITY_DEADLINE - POLL_EVERY).await,
            None,
        )
    })
    .await;
    report.add("accessibility", o);
    let (base, key) = (spare.running.port_base, spare.running.key.expose());
    let (o, _) = timed::<()>(budget, VIEWER_DEADLINE, &logs, async {
        (viewer::page(base, key, TITLE, spare.screen).await, None)
    })
    .await;
    report.add("viewer-page", o);
    let (o, _) = timed::<()>(budget, VIEWER_DEADLINE, &logs, async {
        (viewer::socket(base, key, spare.screen).await, None)
    })
    .await;
    report.add("viewer-websocket", o);
    let port = base + u16::from(spare.screen.0);
    let size = (spare.size.width, spare.size.height);
    let (o, _) = timed::<()>(budget, VNC_DEADLINE, &logs, async {
        (
            vnc::check(port, computer_protocol::vnc_password(key), size).await,
            None,
        )
    })
    .await;
    report.add("vnc", o);
}

/// Why a screenshot is not yet the drawn screen the session asked for.
#[derive(Debug, thiserror::Error)]
enum ScreenshotProblem {
    #[error("the screen is {width}x{height}, not the {asked} the session asked for")]
    WrongSize {
        width: u32,
        height: u32,
        asked: ScreenSize,
    },
    #[error("the screenshot came without an image")]
    NoImage,
    #[error("the screenshot is not base64: {0}")]
    NotBase64(#[source] base64::DecodeError),
    #[error(transparent)]
    Picture(#[from] PictureError),
    #[error("the image is {width}x{height}, not the {frame_width}x{frame_height} its frame says")]
    NotItsFrame {
        width: u32,
        height: u32,
        frame_width: u32,
        frame_height: u32,
    },
    #[error("every pixel of the {width}x{height} screenshot is black: the desktop was not drawn within {}", secs(*.within))]
    Black {
        width: u32,
        height: u32,
        within: Duration,
    },
}

/// Screenshots until one is drawn (a fresh screen is black until the
/// window manager paints its background): a PNG of the frame's size, of a
/// screen of the session's size, not all black.
async fn screenshot(spare: &Spare, within: Duration) -> Outcome {
    let fix = format!(
        "the screen is Xvnc with Fluxbox in `{}`; see `docker logs {}`",
        spare.running.name, spare.running.name
    );
    let request = ObserveRequest {
        force: true,
        ..Default::default()
    };
    observe_until(spare, &request, within, fix, |o| {
        if (o.width, o.height) != (spare.size.width, spare.size.height) {
            return Err(ScreenshotProblem::WrongSize {
                width: o.width,
                height: o.height,
                asked: spare.size,
            });
        }
        let png = match o
            .image_base64
            .as_deref()
            .map(|b| base64::engine::general_purpose::STANDARD.decode(b))
        {
            None => return Err(ScreenshotProblem::NoImage),
            Some(Err(e)) => return Err(ScreenshotProblem::NotBase64(e)),
            Some(Ok(png)) => png,
        };
        match picture(&png)? {
            p if (p.width, p.height) != (o.frame_width, o.frame_height) => {
                Err(ScreenshotProblem::NotItsFrame {
                    width: p.width,
                    height: p.height,
                    frame_width: o.frame_width,
                    frame_height: o.frame_height,
                })
            }
            p if p.black => Err(ScreenshotProblem::Black {
                width: p.width,
                height: p.height,
                within,
            }),
            p => Ok(format!(
                "a {}x{} screen, drawn ({} PNG bytes, {}x{} frame)",
                o.width,
                o.height,
                png.len(),
                p.width,
                p.height
            )),
        }
    })
    .await
}

/// Observes the spare screen with `request` until `judge` finds what it
/// wants (its `Ok` is the check's detail) or `within` runs out (then the
/// last problem it named, with `fix`).
async fn observe_until<P: std::error::Error>(
    spare: &Spare,
    request: &ObserveRequest,
    within: Duration,
    fix: String,
    judge: impl Fn(&Observation) -> Result<String, P>,
) -> Outcome {
    let ends = Instant::now() + within;
    loop {
        let problem = match spare
            .running
            .client
            .send::<Observe>(&spare.id, request, within, "nothing")
            .await
        {
            Err(e) => e.to_string(),
            Ok(o) => match judge(&o) {
                Ok(detail) => return Outcome::ok(detail),
                Err(problem) => problem.to_string(),
            },
        };
        if Instant::now() + POLL_EVERY >= ends {
            return Outcome::err(problem, fix);
        }
        tokio::time::sleep(POLL_EVERY).await;
    }
}

async fn shell(
    spare: &Spare,
    command: String,
    deadline: Duration,
) -> Result<ShellResult, ClientError> {
    let request = ShellRequest {
        command,
        timeout: None,
    };
    spare
        .running
        .client
        .send::<Shell>(&spare.id, &request, deadline, "the command may still run")
        .await
}

/// A small page of doctor's own opened with `open_path`: the screen's
/// Chromium starts if none runs, and must load it.
async fn browser(spare: &Spare, page: &str) -> Outcome {
    let fix = format!(
        "Chromium needs the container's 2 GB /dev/shm and free memory; see `docker logs {}`",
        spare.running.name
    );
    let html = format!(
        "<!doctype html><title>{TITLE}</title><h1>{TITLE} {}</h1>",
        spare.tag
    );
    match shell(
        spare,
        format!("printf '%s' '{html}' > {page}"),
        BROWSER_DEADLINE,
    )
    .await
    {
        Ok(r) if r.exit_code == Some(0) => {}
        Ok(r) => return Outcome::err(format!("writing {page} failed: {}", r.stderr.trim()), fix),
        Err(e) => return Outcome::err(e.to_string(), fix),
    }
    let request = OpenPathRequest {
        target: page.to_string(),
        frame: Default::default(),
        settling: Default::default(),
    };
    match spare
        .running
        .client
        .send::<OpenPath>(
            &spare.id,
            &request,
            BROWSER_DEADLINE,
            "Chromium may still be starting",
        )
        .await
    {
        Ok(opened) if opened.ready => Outcome::ok(format!(
            "Chromium started and loaded a page: {}",
            opened.summary
        )),
        Ok(opened) => Outcome::err(format!("the page did not load: {}", opened.summary), fix),
        Err(e) => Outcome::err(e.to_string(), fix),
    }
}

/// The screen's Chromium answers on its DevTools port with the page open.
async fn devtools(spare: &Spare, page: &str) -> Outcome {
    let port = DEVTOOLS_PORT_BASE + u16::from(spare.screen.0);
    let fix = format!(
        "the bridge of start_chrome_devtools needs this port; see `docker logs {}`",
        spare.running.name
    );
    let command = format!(
        "curl -fsS --max-time 3 http://127.0.0.1:{port}/json/version && curl -fsS --max-time 3 http://127.0.0.1:{port}/json/list"
    );
    let out = match shell(spare, command, DEVTOOLS_DEADLINE).await {
        Ok(r) if r.exit_code == Some(0) => r.stdout,
        Ok(r) => {
            return Outcome::err(
                format!(
                    "DevTools on 127.0.0.1:{port} in the computer did not answer: {}",
                    r.stderr.trim()
                ),
                fix,
            )
        }
        Err(e) => return Outcome::err(e.to_string(), fix),
    };
    let docs: Vec<serde_json::Value> = serde_json::Deserializer::from_str(&out)
        .into_iter()
        .filter_map(Result::ok)
        .collect();
    let browser = docs
        .first()
        .and_then(|v| v["Browser"].as_str())
        .unwrap_or("?")
        .to_string();
    let lists_page = docs.get(1).and_then(|v| v.as_array()).is_some_and(|pages| {
        pages
            .iter()
            .any(|p| p["url"].as_str().is_some_and(|u| u.ends_with(page)))
    });
    if lists_page {
        Outcome::ok(format!(
            "{browser} answers on DevTools port {port} and lists the page"
        ))
    } else {
        Outcome::err(
            format!("{browser} answers on DevTools port {port} but does not list the page"),
            fix,
        )
    }
}

/// Why the text view does not yet show the dialog the check opened.
#[derive(Debug, thiserror::Error)]
enum DialogProblem {
    #[error("the text view was not given")]
    TextViewMissing,
    #[error("no accessibility tree of the dialog yet{}", .note.as_ref().map(|n| format!(": {n}")).unwrap_or_default())]
    TreeNotYetRead { note: Option<String> },
    #[error("the dialog's tree ({nodes} nodes) has no button")]
    ButtonMissing { nodes: usize },
}

/// A GTK dialog on the spare screen, read through the screen's AT-SPI bus
/// as `computer_observe`'s text view reads it.
async fn accessibility(spare: &Spare, within: Duration) -> Outcome {
    let fix = format!(
        "the bus is the screen's at-spi2 (dbus-daemon, at-spi2-core in the image); see `docker logs {}`",
        spare.running.name
    );
    let title = format!("{TITLE} {}", spare.tag);
    // A desktop program, as the agent's shell starts GTK apps (its own X
    // cookie is untrusted).
    let command = format!(
        "computer-use-launch run zenity --info --title='{title}' --text='accessibility check'"
    );
    if let Err(e) = shell(spare, command, within).await {
        return Outcome::err(e.to_string(), fix);
    }
    let request = ObserveRequest {
        text: TextViewOptions {
            view: View::Text,
            window: Some(title.clone()),
            ..Default::default()
        },
        ..Default::default()
    };
    observe_until(spare, &request, within, fix, |o| match &o.text_view {
        None => Err(DialogProblem::TextViewMissing),
        Some(v) if v.source != Some(TreeSource::Atspi) => Err(DialogProblem::TreeNotYetRead {
            note: v.note.clone(),
        }),
        Some(v) if has_button(&v.nodes) => Ok(format!(
            "the AT-SPI bus gave a GTK dialog's tree ({} nodes, its button among them)",
            v.total_nodes
        )),
        Some(v) => Err(DialogProblem::ButtonMissing {
            nodes: v.total_nodes,
        }),
    })
    .await
}

fn has_button(nodes: &[TextNode]) -> bool {
    nodes
        .iter()
        .any(|n| n.role.contains("button") || has_button(&n.children))
}

/// Ends the spare session (its screen, browser and dialog go with it) and
/// checks that no session of doctor's owner is left.
async fn cleanup(spare: &Spare, owner: &OwnerId) -> Outcome {
    let client = &spare.running.client;
    let fix = format!(
        "it ends by itself within 30 s; if it stays, `docker restart {}`",
        spare.running.name
    );
    let work = async {
        let page = format!("/tmp/computer-use-doctor-{}.html", spare.tag);
        let _ = shell(spare, format!("rm -f {page}"), CLEANUP_DEADLINE).await;
        client
            .send::<EndSession>(
                &spare.id,
                &NoBody {},
                CLEANUP_DEADLINE,
                "the session ends within 30 s",
            )
            .await?;
        end_owner(client, owner).await;
        let left = client
            .send::<ListSessions>(&(), &NoBody {}, CLEANUP_DEADLINE, "nothing")
            .await?
            .sessions
            .into_iter()
            .filter(|s| s.owner == *owner)
            .count();
        Ok::<usize, ClientError>(left)
    };
    match tokio::time::timeout(CLEANUP_DEADLINE, work).await {
        Ok(Ok(0)) => Outcome::ok(format!(
            "the spare session `{}` ended, its screen {} with it",
            spare.id, spare.screen
        )),
        Ok(Ok(n)) => Outcome::err(
            format!("{n} sessions of `{}` are still there", owner.0),
            fix,
        ),
        Ok(Err(e)) => Outcome::err(e.to_string(), fix),
        Err(_) => Outcome::timed_out(CLEANUP_DEADLINE, fix),
    }
}

async fn end_owner(client: &ComputerdClient, owner: &OwnerId) {
    let _ = client
        .send::<EndOwnerSessions>(owner, &NoBody {}, CLEANUP_DEADLINE, "they end within 30 s")
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_button_at_any_depth() {
        let node = |role: &str, children| TextNode {
            node_ref: "e1".into(),
            role: role.into(),
            name: String::new(),
            value: None,
            states: vec![],
            bounds: None,
            depth: None,
            children,
        };
        let tree = vec![node(
            "dialog",
            vec![node("panel", vec![node("push button", vec![])])],
        )];
        assert!(has_button(&tree));
        assert!(!has_button(&[node("label", vec![])]));
    }
}
