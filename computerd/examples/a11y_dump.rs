//! Starts a screen's accessibility bus on an X display that already runs,
//! starts a command there with the screen's environment, and prints the
//! tree of the window titled `title` once it shows, with read timings.
//! A diagnostic for apps in the image:
//!
//! `a11y_dump :1 'Untitled 1 - LibreOffice Writer' libreoffice --writer --norestore`

use computerd::a11y::{self, A11yBus, WindowHint};
use computerd::screen_facts::ScreenEnv;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(90);
const DEADLINE: Duration = Duration::from_secs(1);

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [display, title, command @ ..] = args.as_slice() else {
        eprintln!("usage: a11y_dump :N TITLE COMMAND [ARGS...]");
        std::process::exit(2);
    };
    let display: u32 = display
        .trim_start_matches(':')
        .parse()
        .expect("a display such as :1");
    let started = Instant::now();
    let bus = A11yBus::start(display).await.expect("accessibility bus");
    println!(
        "bus up in {:?}: {}",
        started.elapsed(),
        bus.session_bus_address()
    );
    let (program, rest) = command.split_first().expect("a command");
    let mut cmd = std::process::Command::new(program);
    cmd.args(rest);
    ScreenEnv {
        display,
        session_bus: true,
    }
    .apply_std(&mut cmd);
    let mut child = cmd.spawn().expect("start the command");
    let window = WindowHint {
        pid: None,
        title: title.clone(),
        class: String::new(),
        x: 0,
        y: 0,
        width: 0,
        height: 0,
    };
    let started = Instant::now();
    let tree = loop {
        let apps = a11y::app_names(&bus, DEADLINE).await;
        match a11y::read_tree(&bus, &window, 5000, DEADLINE).await {
            Ok(Some(tree)) if tree.nodes.len() > 1 => break tree,
            other => {
                assert!(
                    started.elapsed() < WAIT,
                    "no tree of {title:?} in {WAIT:?}; apps {apps:?}; last {other:?}"
                );
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
    };
    // Let the app finish laying out, then time reads of the settled tree.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut reads = Vec::new();
    let mut tree = tree;
    for _ in 0..10 {
        let t = Instant::now();
        tree = a11y::read_tree(&bus, &window, 5000, DEADLINE)
            .await
            .expect("read")
            .expect("tree");
        reads.push(t.elapsed());
    }
    reads.sort();
    for node in &tree.nodes {
        println!(
            "{}{} {:?} value={:?} {:?} @ {:?}",
            "  ".repeat(node.depth),
            node.role,
            node.name,
            node.value
                .as_deref()
                .map(|v| v.chars().take(60).collect::<String>()),
            node.states,
            node.bounds
        );
    }
    println!(
        "app {:?}: {} nodes (truncated: {}); reads: median {:?}, fastest {:?}, slowest {:?}; apps on the bus: {:?}",
        tree.app,
        tree.nodes.len(),
        tree.truncated,
        reads[5],
        reads[0],
        reads[9],
        a11y::app_names(&bus, DEADLINE).await
    );
    bus.stop().await;
    // The app was started for this dump; it goes with it.
    let _ = child.kill();
    let _ = child.wait();
}
