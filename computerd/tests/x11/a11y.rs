//! Accessibility trees against a real Xvnc, Fluxbox, the screen's own
//! session and AT-SPI buses, and real GTK apps (zenity). Each test owns its
//! displays and buses.

use crate::xvnc::{Program, Xvnc};
use computerd::a11y::{self, A11yBus, A11yError, A11yState, A11yTree, WindowHint, BUS_LAUNCHER};
use computerd::display::Display;
use computerd::screen_facts::ScreenEnv;
use std::path::Path;
use std::time::{Duration, Instant};
use test_support::require_program;
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _, Window};

const INSTALL: &str = "apt-get install at-spi2-core zenity";
/// How long an app may take to start and register its tree.
const APP_WAIT: Duration = Duration::from_secs(20);
/// The deadline the text view gives a tree read.
const READ_DEADLINE: Duration = Duration::from_secs(1);

/// Panics with the install command when the AT-SPI launcher or zenity is
/// missing: these tests never pass by skipping.
fn require_a11y() {
    assert!(
        Path::new(BUS_LAUNCHER).is_file(),
        "`{BUS_LAUNCHER}` is missing; run `{INSTALL}` (or `bash scripts/install-test-deps.sh`)"
    );
    require_program("zenity", INSTALL);
    require_program("dbus-daemon", INSTALL);
}

/// An Xvnc with Fluxbox (so windows have frames and positions as in the
/// computer) and the screen's buses.
struct TestScreen {
    xvnc: Xvnc,
    display: Display,
    _wm: Program,
    bus: A11yBus,
}

impl TestScreen {
    async fn start() -> TestScreen {
        require_a11y();
        let xvnc = Xvnc::start();
        let display = xvnc.connect();
        let wm = xvnc.start_fluxbox(&display);
        let bus = A11yBus::start(xvnc.number)
            .await
            .unwrap_or_else(|e| panic!("the accessibility bus did not start: {e}"));
        TestScreen {
            xvnc,
            display,
            _wm: wm,
            bus,
        }
    }

    fn env(&self) -> ScreenEnv {
        ScreenEnv {
            display: self.xvnc.number,
            session_bus: true,
        }
    }

    /// Starts `program` with the screen's environment, as computerd does.
    fn run(&self, program: &str, args: &[&str]) -> Program {
        let mut cmd = self.xvnc.command(program);
        self.env().apply_std(&mut cmd);
        cmd.args(args);
        self.xvnc.spawn(cmd)
    }

    fn zenity(&self, title: &str) -> Program {
        self.run(
            "zenity",
            &["--entry", &format!("--title={title}"), "--text=Your name"],
        )
    }

    /// The hint of the managed window titled `title`, once it is mapped.
    async fn window(&self, title: &str) -> WindowHint {
        let started = Instant::now();
        loop {
            if let Some(hint) = window_hint(&self.display, title) {
                return hint;
            }
            assert!(
                started.elapsed() < APP_WAIT,
                "no window titled {title:?} showed on :{} within {APP_WAIT:?}",
                self.xvnc.number
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Reads the tree of `window` until `done` holds, and gives the last
    /// tree with the time its read took.
    async fn tree_until(
        &self,
        window: &WindowHint,
        what: &str,
        done: impl Fn(&A11yTree) -> bool,
    ) -> (A11yTree, Duration) {
        self.tree_of_size_until(window, 400, what, done).await
    }

    async fn tree_of_size_until(
        &self,
        window: &WindowHint,
        limit: usize,
        what: &str,
        done: impl Fn(&A11yTree) -> bool,
    ) -> (A11yTree, Duration) {
        let started = Instant::now();
        loop {
            let read_started = Instant::now();
            let last = match a11y::read_tree(&self.bus, window, limit, READ_DEADLINE).await {
                Ok(Some(tree)) if done(&tree) => return (tree, read_started.elapsed()),
                Ok(Some(tree)) => format!("{tree:#?}"),
                Ok(None) => "no tree".to_string(),
                Err(e) => e.to_string(),
            };
            assert!(
                started.elapsed() < APP_WAIT,
                "the tree of {:?} did not show {what} within {APP_WAIT:?}; last read: {last}",
                window.title
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The client window titled `title` in `_NET_CLIENT_LIST`, with its pid
/// and its geometry in screen pixels.
fn window_hint(display: &Display, title: &str) -> Option<WindowHint> {
    let conn = &display.conn;
    let atom = |name: &[u8]| {
        conn.intern_atom(false, name)
            .ok()?
            .reply()
            .ok()
            .map(|r| r.atom)
    };
    let clients = atom(b"_NET_CLIENT_LIST")?;
    let net_name = atom(b"_NET_WM_NAME")?;
    let utf8 = atom(b"UTF8_STRING")?;
    let pid_atom = atom(b"_NET_WM_PID")?;
    let list = conn
        .get_property(false, display.root, clients, AtomEnum::WINDOW, 0, 1024)
        .ok()?
        .reply()
        .ok()?;
    let windows: Vec<Window> = list.value32()?.collect();
    for window in windows {
        // xterm sets only the old `WM_NAME`.
        let name = |property, kind| {
            conn.get_property(false, window, property, kind, 0, 1024)
                .ok()?
                .reply()
                .ok()
                .map(|r| String::from_utf8_lossy(&r.value).into_owned())
                .filter(|name| !name.is_empty())
        };
        let name = name(net_name, utf8)
            .or_else(|| name(AtomEnum::WM_NAME.into(), AtomEnum::STRING.into()));
        if name.as_deref() != Some(title) {
            continue;
        }
        let pid = conn
            .get_property(false, window, pid_atom, AtomEnum::CARDINAL, 0, 1)
            .ok()?
            .reply()
            .ok()?
            .value32()
            .and_then(|mut v| v.next());
        let geometry = conn.get_geometry(window).ok()?.reply().ok()?;
        let at = conn
            .translate_coordinates(window, display.root, 0, 0)
            .ok()?
            .reply()
            .ok()?;
        let attributes = conn.get_window_attributes(window).ok()?.reply().ok()?;
        if attributes.map_state != x11rb::protocol::xproto::MapState::VIEWABLE {
            return None;
        }
        return Some(WindowHint {
            pid,
            title: title.to_string(),
            class: "Zenity".to_string(),
            x: i32::from(at.dst_x),
            y: i32::from(at.dst_y),
            width: u32::from(geometry.width),
            height: u32::from(geometry.height),
        });
    }
    let _ = conn.flush();
    None
}

fn has_buttons(tree: &A11yTree) -> bool {
    let button = |name: &str| {
        tree.nodes
            .iter()
            .any(|n| n.role == "button" && n.name == name)
    };
    button("OK") && button("Cancel") && editable_text(tree).is_some()
}

fn editable_text(tree: &A11yTree) -> Option<&a11y::A11yNode> {
    tree.nodes
        .iter()
        .find(|n| n.role == "text" && n.states.contains(&A11yState::Editable))
}

fn inside(bounds: (i32, i32, u32, u32), window: &WindowHint) -> bool {
    let (x, y, w, h) = bounds;
    x >= window.x
        && y >= window.y
        && x + w as i32 <= window.x + window.width as i32
        && y + h as i32 <= window.y + window.height as i32
}

fn print_tree(tree: &A11yTree) {
    for node in &tree.nodes {
        eprintln!(
            "{}{} {:?} value={:?} {:?} @ {:?}",
            "  ".repeat(node.depth),
            node.role,
            node.name,
            node.value,
            node.states,
            node.bounds
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gtk_dialog_shows_its_field_and_buttons_inside_its_window() {
    let screen = TestScreen::start().await;
    let _zenity = screen.zenity("Probe");
    let window = screen.window("Probe").await;
    let (tree, took) = screen
        .tree_until(&window, "a text field and OK and Cancel", has_buttons)
        .await;
    eprintln!("X window: {window:?}");
    print_tree(&tree);
    assert_eq!(tree.app, "zenity");
    assert!(!tree.truncated);
    assert_eq!(tree.nodes[0].depth, 0);
    assert_eq!(tree.nodes[0].name, "Probe");
    let mut reads = Vec::new();
    for _ in 0..10 {
        let started = Instant::now();
        let again = a11y::read_tree(&screen.bus, &window, 400, READ_DEADLINE)
            .await
            .expect("read")
            .expect("a tree");
        reads.push(started.elapsed());
        assert_eq!(again.nodes.len(), tree.nodes.len());
    }
    reads.sort();
    eprintln!(
        "zenity tree: {} nodes; first full read {took:?}; median of 10 reads {:?}, slowest {:?}",
        tree.nodes.len(),
        reads[5],
        reads[9]
    );
    let field = editable_text(&tree).expect("an editable text");
    for node in [
        field,
        tree.nodes.iter().find(|n| n.name == "OK").expect("OK"),
        tree.nodes
            .iter()
            .find(|n| n.name == "Cancel")
            .expect("Cancel"),
    ] {
        let bounds = node.bounds.expect("bounds of a control");
        assert!(
            inside(bounds, &window),
            "{} {:?} at {bounds:?} lies outside its window {window:?}",
            node.role,
            node.name
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_of_400_nodes_reads_well_within_the_deadline() {
    let screen = TestScreen::start().await;
    let mut args = vec!["--forms".to_string(), "--title=Big".to_string()];
    args.extend((1..=200).map(|i| format!("--add-entry=Field {i}")));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let _zenity = screen.run("zenity", &args);
    let window = screen.window("Big").await;
    let fields = |tree: &A11yTree| {
        tree.nodes
            .iter()
            .filter(|n| n.role == "text" && n.states.contains(&A11yState::Editable))
            .count()
    };
    let (tree, _) = screen
        .tree_of_size_until(&window, 1000, "200 text fields", |tree| fields(tree) == 200)
        .await;
    assert!(tree.nodes.len() >= 400, "{} nodes", tree.nodes.len());
    let mut reads = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let again = a11y::read_tree(&screen.bus, &window, 1000, READ_DEADLINE)
            .await
            .expect("read within the deadline")
            .expect("a tree");
        reads.push(started.elapsed());
        assert_eq!(fields(&again), 200);
    }
    reads.sort();
    eprintln!(
        "zenity form: {} nodes; median of 5 reads {:?}, slowest {:?}",
        tree.nodes.len(),
        reads[2],
        reads[4]
    );
    // The tree cut at 50 is the beginning of the whole one.
    let cut = a11y::read_tree(&screen.bus, &window, 50, READ_DEADLINE)
        .await
        .expect("read")
        .expect("a tree");
    assert!(cut.truncated);
    assert_eq!(cut.nodes[..], tree.nodes[..50]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_screens_never_see_each_others_apps() {
    let (a, b) = tokio::join!(TestScreen::start(), TestScreen::start());
    assert_ne!(a.bus.session_bus_address(), b.bus.session_bus_address());
    let _zenity_a = a.zenity("ProbeA");
    let _zenity_b = b.zenity("ProbeB");
    let window_a = a.window("ProbeA").await;
    let window_b = b.window("ProbeB").await;
    a.tree_until(&window_a, "the dialog", has_buttons).await;
    b.tree_until(&window_b, "the dialog", has_buttons).await;
    for (screen, own, other) in [(&a, &window_a, &window_b), (&b, &window_b, &window_a)] {
        let apps = a11y::app_names(&screen.bus, READ_DEADLINE)
            .await
            .expect("apps");
        assert_eq!(
            apps,
            ["zenity"],
            "apps on the bus of :{}",
            screen.xvnc.number
        );
        let foreign = a11y::read_tree(&screen.bus, other, 400, READ_DEADLINE)
            .await
            .expect("read");
        assert!(
            foreign.is_none(),
            "the bus of :{} exposes {:?} of the other screen: {foreign:?}",
            screen.xvnc.number,
            other.title
        );
        let mine = a11y::read_tree(&screen.bus, own, 400, READ_DEADLINE)
            .await
            .expect("read")
            .expect("its own dialog");
        assert_eq!(mine.nodes[0].name, own.title);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_without_a_tree_reads_as_none() {
    let screen = TestScreen::start().await;
    // An app on the bus, so "none" is about the window, not an empty bus.
    let _zenity = screen.zenity("Probe");
    let window = screen.window("Probe").await;
    screen.tree_until(&window, "the dialog", has_buttons).await;
    let _xterm = screen.run("xterm", &["-T", "Plain"]);
    let xterm = screen.window("Plain").await;
    let tree = a11y::read_tree(&screen.bus, &xterm, 400, READ_DEADLINE)
        .await
        .expect("read");
    assert!(tree.is_none(), "xterm has no tree, got {tree:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_app_times_out_within_the_deadline() {
    let screen = TestScreen::start().await;
    let zenity = screen.zenity("Probe");
    let window = screen.window("Probe").await;
    screen.tree_until(&window, "the dialog", has_buttons).await;
    let pid = window.pid.expect("zenity sets _NET_WM_PID") as i32;
    // SAFETY: signalling the zenity this test started.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let started = Instant::now();
    let read = a11y::read_tree(&screen.bus, &window, 400, READ_DEADLINE).await;
    let took = started.elapsed();
    // SAFETY: as above; lets it end on drop.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    drop(zenity);
    assert!(
        matches!(read, Err(A11yError::Timeout { .. })),
        "a stopped app must time out, got {read:?}"
    );
    assert!(
        took < READ_DEADLINE + Duration::from_millis(300),
        "the read took {took:?}, past its deadline of {READ_DEADLINE:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bus_folder_is_private_and_goes_with_the_bus() {
    use std::os::unix::fs::PermissionsExt;
    let screen = TestScreen::start().await;
    let address = screen.bus.session_bus_address().to_string();
    let socket = Path::new(address.strip_prefix("unix:path=").expect("a socket path"));
    let folder = socket.parent().expect("its folder").to_path_buf();
    let mode = std::fs::metadata(&folder)
        .expect("folder")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700, "{} is mode {mode:o}", folder.display());
    assert!(socket.exists());
    assert!(screen.bus.is_running());
    screen.bus.stop().await;
    assert!(!folder.exists(), "{} outlived its bus", folder.display());
    assert!(!screen.bus.is_running());
    assert_eq!(
        processes_naming(&folder),
        Vec::<i32>::new(),
        "processes outlived the bus"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_bus_leaves_no_daemon_behind() {
    let screen = TestScreen::start().await;
    let address = screen.bus.session_bus_address().to_string();
    let folder = Path::new(address.strip_prefix("unix:path=").expect("a socket path"))
        .parent()
        .expect("its folder")
        .to_path_buf();
    assert!(!processes_naming(&folder).is_empty(), "the buses run");
    drop(screen);
    let started = Instant::now();
    while !processes_naming(&folder).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "processes outlived a dropped bus: {:?}",
            processes_naming(&folder)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Live processes whose command line names `folder` (the AT-SPI bus's
/// dbus-daemon does, in its `--address`).
fn processes_naming(folder: &Path) -> Vec<i32> {
    let needle = folder.display().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // A zombie is gone but for its reaping.
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'));
        if !zombie && String::from_utf8_lossy(&cmdline).contains(&needle) {
            found.push(pid);
        }
    }
    found
}
