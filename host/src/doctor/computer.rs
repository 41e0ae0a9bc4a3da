//! The computer's container, its host ports, and computerd inside it.

use super::engine::Found;
use super::report::{Outcome, Report};
use super::{timed, Budget};
use crate::client::{loopback_http, ComputerdClient};
use crate::docker::container::busy_fix;
use crate::docker::fix;
use crate::docker::ports::{self, HOST_PORTS, LOOPBACK};
use crate::docker::{
    binary_version, viewer_key, ComputerState, Dialer, Engine, FoundComputer, Way,
};
use crate::error_chain::describe;
use computer_protocol::endpoints::{Endpoint, GetHealth, ListSessions, NoBody};
use computer_protocol::Health;
use std::net::Ipv4Addr;
use std::time::Duration;

const COMPUTER_DEADLINE: Duration = Duration::from_secs(3);
const PORTS_DEADLINE: Duration = Duration::from_secs(2);
const COMPUTERD_DEADLINE: Duration = Duration::from_secs(3);

/// A running computer whose computerd answers with its token.
#[derive(Clone)]
pub(crate) struct Running {
    pub name: String,
    pub client: ComputerdClient,
    pub port_base: u16,
    /// The viewer key, also the VNC password.
    pub key: computer_protocol::ViewerKey,
}

/// What the computer checks found: its container, if any, and a way to
/// reach computerd when it runs.
pub(crate) struct Computer {
    /// `None` when Docker could not say; `Some(None)` when there is none.
    pub found: Option<Option<FoundComputer>>,
    pub running: Option<Running>,
}

pub(crate) async fn check(found: &Found, budget: &Budget, report: &mut Report) -> Computer {
    let mut result = Computer {
        found: None,
        running: None,
    };
    let (Some(engine), Some(settings)) = (&found.engine, &found.computer) else {
        return result;
    };
    let name = &settings.name;
    let dialer = found
        .endpoint
        .as_ref()
        .map(|endpoint| engine.dialer(endpoint, settings.tunnel));
    let (outcome, container) = timed(
        budget,
        COMPUTER_DEADLINE,
        "check that Docker is not stuck, then run `docker ps -a`",
        computer(engine, name),
    )
    .await;
    report.add("computer", outcome);
    let Some(container) = container else {
        return result;
    };
    let (outcome, _) = timed(
        budget,
        PORTS_DEADLINE,
        fix::PORT_TAKEN,
        ports(
            engine,
            dialer.as_ref(),
            container.as_ref(),
            settings.port_base,
        ),
    )
    .await;
    report.add("ports", outcome);
    if let (Some(c), Some(dialer)) = (
        container
            .as_ref()
            .filter(|c| c.state == ComputerState::Running),
        &dialer,
    ) {
        let (outcome, running) = timed(
            budget,
            COMPUTERD_DEADLINE,
            &restart_fix(name),
            computerd(c, dialer),
        )
        .await;
        report.add("computerd", outcome);
        result.running = running;
    }
    result.found = Some(container);
    result
}

fn restart_fix(name: &str) -> String {
    format!("see its logs with `docker logs {name}`; if it stays stuck, `docker restart {name}` (its sessions end, files in home stay)")
}

async fn computer(engine: &Engine, name: &str) -> (Outcome, Option<Option<FoundComputer>>) {
    let found = match engine.find_computer(name).await {
        Ok(found) => found,
        Err(e) => return (Outcome::err(e.to_string(), fix::ENGINE_UNREACHABLE), None),
    };
    let Some(c) = found else {
        return (
            Outcome::ok(format!(
                "`{name}` does not exist yet; start_computer creates it"
            )),
            Some(None),
        );
    };
    let version = c.version.as_deref().unwrap_or("unknown");
    let outcome = if c.token.is_none() {
        Outcome::err(
            format!("a container named `{name}` exists but was not made by computer-use-mcp"),
            "set COMPUTER_USE_NAME to another name, or remove that container",
        )
    } else if let Some(fix) = busy_fix(&c.status, name) {
        Outcome::err(format!("`{name}` is {}", c.status), fix)
    } else if c.state == ComputerState::Stopped {
        Outcome::ok(format!(
            "`{name}` is stopped ({}, exit code {}), image version {version}; start_computer starts it",
            c.status,
            c.exit_code.unwrap_or(0)
        ))
    } else if c.upgrade_pending() {
        Outcome::warn(
            format!("`{name}` is running on image version {version}, older than this binary ({})", binary_version()),
            format!("when no agent uses it, run `docker stop {name}`; the next start_computer moves it to the new image (files in home stay)"),
        )
    } else {
        Outcome::ok(format!("`{name}` is running, image version {version}"))
    };
    (outcome, Some(Some(c)))
}

/// A missing or stopped computer needs its 17 host ports free; a running one
/// holds them, published on 127.0.0.1.
async fn ports(
    engine: &Engine,
    dialer: Option<&Dialer>,
    c: Option<&FoundComputer>,
    wanted: u16,
) -> (Outcome, Option<()>) {
    let span = |base: u16| format!("{base}-{}", base + HOST_PORTS - 1);
    let outcome = match c {
        None => match ports::first_taken(wanted) {
            Some(port) => Outcome::err(
                format!("host port {port} on 127.0.0.1 is taken, so a new computer with ports {} cannot start", span(wanted)),
                fix::PORT_TAKEN,
            ),
            None => Outcome::ok(format!("{} on 127.0.0.1 are free for a new computer", span(wanted))),
        },
        Some(c) => match (c.state, c.port_base) {
            (_, None) => Outcome::err(
                format!("`{}` has no viewer port bound on the host, so it was changed outside computer-use-mcp", c.name),
                format!("remove it with `docker rm -f {}` (its home volume stays) and call start_computer", c.name),
            ),
            // What a remote engine publishes is on its own loopback; this
            // machine's ports are the tunnel's, opened by whoever uses it.
            (ComputerState::Running, Some(base))
                if dialer.is_some_and(|d| d.way() == Way::Tunnel) =>
            {
                Outcome::ok(format!(
                    "`{}` is reached through {}: viewer on {LOOPBACK}:{base} and VNC of screens 1-16 after it while an MCP server of it runs",
                    c.name,
                    Way::Tunnel
                ))
            }
            (ComputerState::Running, Some(base)) => running_ports(engine, c, base, wanted).await,
            (_, Some(base)) if c.owner().is_some_and(|owner| owner.running) => Outcome::ok(format!(
                "{} on 127.0.0.1 are held for the stopped `{}` by its network guard `{}`",
                span(base),
                c.name,
                c.owner().map(|owner| owner.name.as_str()).unwrap_or_default()
            )),
            (_, Some(base)) => match ports::first_taken(base) {
                Some(port) => Outcome::err(
                    format!("host port {port} on 127.0.0.1 is taken, and the stopped `{}` keeps its ports {}", c.name, span(base)),
                    format!("stop what uses the port, or remove the computer with `docker rm {}` (its home volume stays) and set COMPUTER_USE_PORT_BASE to another first port", c.name),
                ),
                None => Outcome::ok(format!("{} on 127.0.0.1 are free for `{}` to start again", span(base), c.name)),
            },
        },
    };
    (outcome, Some(()))
}

async fn running_ports(engine: &Engine, c: &FoundComputer, base: u16, wanted: u16) -> Outcome {
    // The guard that owns the computer's network publishes its ports.
    let publisher = c
        .owner()
        .map_or(c.name.as_str(), |owner| owner.name.as_str());
    let missing = match engine.unpublished_ports(publisher, base).await {
        Ok(missing) => missing,
        Err(e) => return Outcome::err(e.to_string(), fix::ENGINE_UNREACHABLE),
    };
    let note = if wanted == base {
        String::new()
    } else {
        format!(" (COMPUTER_USE_PORT_BASE={wanted} applies only to a new computer)")
    };
    if !missing.is_empty() {
        return Outcome::err(
            format!("`{}` does not publish host ports {missing:?}", c.name),
            format!("remove it with `docker rm -f {}` (its home volume stays) and call start_computer to create it again", c.name),
        );
    }
    // Published is not yet reachable: the engine's proxy must accept.
    let viewer = (Ipv4Addr::LOCALHOST, base);
    match tokio::net::TcpStream::connect(viewer).await {
        Ok(_) => Outcome::ok(format!(
            "{LOOPBACK}:{}-{} published by `{}` (viewer on {base}, VNC of screens 1-16 after it), API on {}{note}",
            base,
            base + HOST_PORTS - 1,
            c.name,
            c.api_port.map(|p| p.to_string()).unwrap_or_else(|| "?".into())
        )),
        Err(e) => Outcome::err(
            format!("the viewer port {LOOPBACK}:{base} of `{}` does not accept connections: {e}", c.name),
            restart_fix(&c.name),
        ),
    }
}

async fn computerd(c: &FoundComputer, dialer: &Dialer) -> (Outcome, Option<Running>) {
    let name = &c.name;
    let fail = |detail: String| (Outcome::err(detail, restart_fix(name)), None);
    let reach = match dialer.reach(c).await {
        Ok(reach) => reach,
        Err(e) => return fail(e.to_string()),
    };
    let (Some(reach), Some(token)) = (reach, c.token.clone()) else {
        return fail(format!("`{name}` publishes no API port"));
    };
    let (api, base) = (reach.api_url, reach.port_base);
    let health = match loopback_http()
        .build()
        .expect("an HTTP client without TLS always builds")
        .get(format!("{api}{}", GetHealth::PATH))
        .send()
        .await
    {
        Ok(answer) if answer.status().is_success() => answer.json::<Health>().await,
        Ok(answer) => {
            return fail(format!(
                "computerd answered `GET /health` with status {}",
                answer.status()
            ))
        }
        Err(e) => {
            return fail(format!(
                "computerd does not answer at {api}: {}",
                describe(&e)
            ))
        }
    };
    let health = match health {
        Ok(health) => health,
        Err(e) => return fail(format!("computerd's `GET /health` is not JSON: {e}")),
    };
    let key = match viewer_key(name, &api, &token).await {
        Ok(key) => key,
        Err(e) => return fail(e.to_string()),
    };
    let client = ComputerdClient::new(api.clone(), token, name.clone());
    let sessions = match client
        .send::<ListSessions>(&(), &NoBody {}, COMPUTERD_DEADLINE, "nothing")
        .await
    {
        Ok(list) => list.sessions,
        Err(e) => return fail(e.to_string()),
    };
    let screens = sessions.iter().filter(|s| s.screen.is_some()).count();
    let outcome = Outcome::ok(format!(
        "computerd {} answers at {api}: {} sessions, {screens} screens open",
        health.version,
        sessions.len()
    ));
    let running = Running {
        name: name.clone(),
        client,
        port_base: base,
        key,
    };
    (outcome, Some(running))
}
