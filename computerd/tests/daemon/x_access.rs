//! X access by cookie: what the agent's shell starts gets the screen's
//! untrusted cookie, so it cannot log what a person types on the desktop
//! nor type itself; the desktop's programs keep the trusted one.

use crate::common::{require_programs, wait_until, Daemon};
use serde_json::json;
use std::time::Duration;

/// The extensions an untrusted client must not see: input injection, the
/// recorder of the event stream, and raw device events.
const SNOOPING_EXTENSIONS: [&str; 3] = ["XTEST", "RECORD", "XInputExtension"];

#[tokio::test(flavor = "multi_thread")]
async fn a_key_logger_started_from_the_shell_sees_nothing_that_is_typed() {
    require_programs(&[
        ("xinput", "xinput"),
        ("xdpyinfo", "x11-utils"),
        ("xdotool", "xdotool"),
    ]);
    let d = Daemon::start().await;
    let sid = d.create_session("x access").await;
    // A desktop program, as a person would type into in a handoff.
    let launched = d
        .ok(
            &format!("/v1/sessions/{sid}/launch"),
            json!({ "app": "xterm" }),
        )
        .await;
    assert!(
        launched["observation"]["active_window"].is_string(),
        "{launched}"
    );

    let shown = d
        .shell(
            &sid,
            "echo \"$XAUTHORITY\"; xdpyinfo | sed -n '/number of extensions/,/default screen/p'",
        )
        .await;
    let out = shown["stdout"].as_str().unwrap();
    assert!(out.contains("x-agent-cookie-"), "{shown}");
    assert!(out.contains("BIG-REQUESTS"), "the shell reaches X: {shown}");
    for name in SNOOPING_EXTENSIONS {
        assert!(!out.contains(name), "the shell sees {name}: {shown}");
    }
    let injected = d.shell(&sid, "xdotool type hello").await;
    assert_ne!(injected["exit_code"], 0, "xdotool typed: {injected}");

    // The agent's logger, the classic one: raw key events of every device.
    let agent_log = d.home.path().join("agent-keys.log");
    d.shell(
        &sid,
        &format!(
            "setsid nohup xinput test-xi2 --root >{} 2>&1 </dev/null &",
            agent_log.display()
        ),
    )
    .await;
    // Typed into the desktop's terminal until the agent's logger said
    // something: one that works lists the devices, then the keys.
    let agent_said = wait_until(
        "the agent's logger to speak",
        Duration::from_secs(15),
        || async {
            let typed = d
                .ok(
                    &format!("/v1/sessions/{sid}/act"),
                    json!({"actions": [{"type": "type", "text": "s3cret"}], "settle_ms": 0}),
                )
                .await;
            assert_eq!(typed["outcomes"][0]["ok"], true, "{typed}");
            let said = std::fs::read_to_string(&agent_log).unwrap_or_default();
            let done = said.contains("KeyPress") || said.contains("not available");
            done.then_some(said)
        },
    )
    .await;

    assert!(!agent_said.contains("KeyPress"), "{agent_said}");
    assert!(
        agent_said.contains("X Input extension not available"),
        "{agent_said}"
    );
}
