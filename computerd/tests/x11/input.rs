//! Input against a real Xvnc: typed text as a real X client receives it,
//! key chords, pointer events, window focus, and what `computer_act`'s
//! effects watch costs. Each test owns its display.

use crate::test_window::{TestWindow, LIMIT};
use crate::xvnc::{Program, Xvnc};
use computer_protocol::{Action, Button, ScrollDirection};
use computerd::capture::cursor_position;
use computerd::desktop::effects::Finished;
use computerd::desktop::EffectsWatch;
use computerd::display::Display;
use computerd::input::keymap::Keymap;
use computerd::input::{Input, CLIENT_CATCH_UP, REBINDING_WAIT_MAX};
use computerd::screens::WatchConnection;
use computerd::windows::{active_window_title, focus_window, window_title, Atoms};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use test_support::wait_until_blocking;
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _, EventMask};
use x11rb::protocol::Event;

/// An xterm running `cat > FILE`: what is typed into it ends up in the file
/// byte for byte (canonical tty mode, so `ctrl+d` on an empty line ends it).
fn cat_xterm(xvnc: &Xvnc, title: &str) -> (Program, PathBuf) {
    let out = xvnc.home.path().join(format!("{title}.txt"));
    let mut cmd = xvnc.command("xterm");
    cmd.args([
        "-u8",
        "-xrm",
        "XTerm*utf8: 1",
        "-T",
        title,
        "-geometry",
        "80x10+0+0",
    ])
    .args(["-e", "sh", "-c", &format!("exec cat > '{}'", out.display())]);
    let program = xvnc.spawn(cmd);
    wait_until_blocking("cat to open its output file", LIMIT, || {
        out.exists().then_some(())
    });
    (program, out)
}

/// Focuses the window titled `title` and waits until it has the keyboard.
fn focus_by_title(display: &Display, title: &str) {
    wait_until_blocking(
        &format!("the window `{title}` to have the focus"),
        LIMIT,
        || {
            if !focus_window(display, title).expect("focus_window") {
                return None;
            }
            (focused_title(display)? == title).then_some(())
        },
    );
}

/// The title of the window that has the keyboard focus, if it has one.
fn focused_title(display: &Display) -> Option<String> {
    let atoms = Atoms::intern(&display.conn).ok()?;
    let focus = display.conn.get_input_focus().ok()?.reply().ok()?.focus;
    window_title(&display.conn, &atoms, focus).ok()?
}

fn perform(input: &mut Input, display: &Display, action: Action) {
    input
        .perform(display, &action)
        .unwrap_or_else(|e| panic!("{action:?} failed: {e}"));
}

fn type_text(text: &str) -> Action {
    Action::Type {
        text: text.into(),
        secret: false,
    }
}

fn key(chord: &str) -> Action {
    Action::Key { key: chord.into() }
}

/// Waits until the file holds `expected` and its writer has exited.
fn wait_for_file(out: &PathBuf, program: &mut Program, expected: &[u8]) {
    let mut last = Vec::new();
    let done = wait_for_result(|| {
        last = std::fs::read(out).unwrap_or_default();
        last == expected && program.exited().is_some()
    });
    assert!(
        done,
        "typed bytes differ:\n  got      {:?}\n  expected {:?}",
        String::from_utf8_lossy(&last),
        String::from_utf8_lossy(expected)
    );
}

fn wait_for_result(mut check: impl FnMut() -> bool) -> bool {
    let started = std::time::Instant::now();
    while started.elapsed() < LIMIT {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    check()
}

#[test]
fn typed_unicode_reaches_an_x_client_byte_for_byte_and_the_keymap_is_restored() {
    let xvnc = Xvnc::start();
    let display = xvnc.connect();
    let _wm = xvnc.start_fluxbox(&display);
    let (mut xterm, out) = cat_xterm(&xvnc, "typing-term");
    focus_by_title(&display, "typing-term");

    let keymap_before = Keymap::fetch(&display).expect("keymap");
    let mut input = Input::new(&display).expect("input");
    let text = "héllo wörld ÀÉ 你好 👋 $%^&*()_+{}|:\"<>?~\ntab\tend ß ñ € ≠\r\n";
    perform(&mut input, &display, type_text(text));
    perform(&mut input, &display, key("ctrl+d"));

    wait_for_file(&out, &mut xterm, text.replace("\r\n", "\n").as_bytes());
    // 11 characters had no key: each got a spare keycode, kept for now so
    // that a lagging client still reads them right.
    assert_eq!(input.borrowed_keycodes(), 11);
    assert_ne!(Keymap::fetch(&display).expect("keymap"), keymap_before);
    input.restore_keymap(&display).expect("restore");
    let keymap_after = Keymap::fetch(&display).expect("keymap");
    assert_eq!(
        keymap_after, keymap_before,
        "every keycode bound for typing is free again"
    );
    assert_eq!(
        input.keymap(),
        &keymap_after,
        "Input's copy matches the server"
    );
    assert_eq!(input.borrowed_keycodes(), 0);
}

#[test]
fn typing_more_distinct_characters_than_spare_keycodes_rebinds_them() {
    let xvnc = Xvnc::start();
    let display = xvnc.connect();
    let (mut xterm, out) = cat_xterm(&xvnc, "many-term");
    focus_by_title(&display, "many-term");

    let keymap_before = Keymap::fetch(&display).expect("keymap");
    let spare = keymap_before.spare_keycodes().len();
    let text: String = ('一'..)
        .step_by(7)
        .take(spare * 2 + 5)
        .chain("\n".chars())
        .collect();
    let mut input = Input::new(&display).expect("input");
    perform(&mut input, &display, type_text(&text));
    perform(&mut input, &display, key("ctrl+d"));

    wait_for_file(&out, &mut xterm, text.as_bytes());
    assert_eq!(
        input.borrowed_keycodes(),
        spare,
        "every spare keycode was used"
    );
    input.restore_keymap(&display).expect("restore");
    assert_eq!(Keymap::fetch(&display).expect("keymap"), keymap_before);
}

/// A text whose rebinding would hold the screen past the limit is refused
/// before any key goes out: the keymap is untouched and nothing is typed.
#[test]
fn text_that_would_wait_too_long_to_rebind_is_refused_before_typing() {
    let xvnc = Xvnc::start();
    let display = xvnc.connect();
    let keymap_before = Keymap::fetch(&display).expect("keymap");
    let spare = keymap_before.spare_keycodes().len();
    // Two batches of spares per CLIENT_CATCH_UP beyond the limit.
    let batches = (REBINDING_WAIT_MAX.as_millis() / CLIENT_CATCH_UP.as_millis()) as usize + 2;
    let text: String = ('一'..).take(spare * batches).collect();
    let mut input = Input::new(&display).expect("input");

    let started = Instant::now();
    let err = input.perform(&display, &type_text(&text)).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "refused only after {:?}",
        started.elapsed()
    );
    let said = err.to_string();
    assert!(
        said.starts_with("`text` would take at least")
            && said.contains(&format!(
                "{} different characters that no key has",
                spare * batches
            ))
            && said.contains("computer-use-launch clipboard"),
        "{said}"
    );
    assert_eq!(input.borrowed_keycodes(), 0);
    assert_eq!(Keymap::fetch(&display).expect("keymap"), keymap_before);
}

#[test]
fn key_chords_edit_the_line_and_unknown_names_are_refused() {
    let xvnc = Xvnc::start();
    let display = xvnc.connect();
    // No window manager: focus_window walks the window tree instead.
    let (mut xterm, out) = cat_xterm(&xvnc, "chord-term");
    focus_by_title(&display, "chord-term");

    let keymap_before = Keymap::fetch(&display).expect("keymap");
    let mut input = Input::new(&display).expect("input");
    let err = input.perform(&display, &key("hyperspace")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`hyperspace` is not a key name: use names such as `enter`, `esc`, `f5` or a single character, joined with modifiers like `ctrl+shift+t`"
    );
    let err = input.perform(&display, &key("a+b")).unwrap_err();
    assert!(
        err.to_string().contains("`a` in `a+b` is not a modifier"),
        "{err}"
    );

    perform(&mut input, &display, type_text("abc"));
    perform(&mut input, &display, key("ctrl+u")); // the tty's line kill
    perform(&mut input, &display, type_text("xyz"));
    perform(&mut input, &display, key("backspace"));
    for chord in [
        "A",
        "plus",
        "shift+2",
        "é",
        "space",
        "Tab",
        "ctrl+shift+minus",
    ] {
        perform(&mut input, &display, key(chord));
    }
    // Caps Lock on: typed text keeps its case all the same.
    perform(&mut input, &display, key("capslock"));
    perform(&mut input, &display, type_text("aB"));
    perform(&mut input, &display, key("capslock"));
    perform(&mut input, &display, key("Return"));
    perform(&mut input, &display, key("ctrl+d"));
    // ctrl+shift+minus is ctrl+underscore: the 0x1f control byte.
    wait_for_file(&out, &mut xterm, "xyA+@é \t\u{1f}aB\n".as_bytes());

    // `é` borrowed a spare keycode; a later action gives it back once it
    // has been idle long enough.
    assert_eq!(input.borrowed_keycodes(), 1);
    wait_until_blocking("the borrowed keycode to be given back", LIMIT, || {
        perform(&mut input, &display, Action::move_to(5, 5));
        (input.borrowed_keycodes() == 0).then_some(())
    });
    assert_eq!(Keymap::fetch(&display).expect("keymap"), keymap_before);
}

#[test]
fn keymap_changes_by_other_clients_are_followed() {
    let xvnc = Xvnc::start();
    let display = xvnc.connect();
    let (mut xterm, out) = cat_xterm(&xvnc, "remap-term");
    focus_by_title(&display, "remap-term");
    let mut input = Input::new(&display).expect("input");
    // Handled before the remap below: clients translate keys when they
    // read them, so an unread `q` would turn into `w` too.
    perform(&mut input, &display, type_text("q\n"));
    let mut first = Vec::new();
    let arrived = wait_for_result(|| {
        first = std::fs::read(&out).unwrap_or_default();
        first == b"q\n"
    });
    // Said in full if it ever fails: once, under CI's load, this line
    // did not arrive, and the cause was not found by rerunning it.
    assert!(
        arrived,
        "the first line did not reach the file: it holds {:?}; xterm {}; the focus is on {:?}",
        String::from_utf8_lossy(&first),
        match xterm.exited() {
            Some(status) => format!("exited ({status:?})"),
            None => "runs".to_string(),
        },
        focused_title(&display)
    );

    // Another client turns the `q` key into `w`, as `xmodmap` would.
    let other = xvnc.connect();
    let keymap = Keymap::fetch(&other).expect("keymap");
    let q = keymap.find(u32::from('q')).expect("a q key").keycode;
    let mut row = vec![0; keymap.per_keycode()];
    row[..2].copy_from_slice(&[u32::from('w'), u32::from('W')]);
    other
        .conn
        .change_keyboard_mapping(1, q, row.len() as u8, &row)
        .expect("send")
        .check()
        .expect("remap");

    // `q` must now come from a borrowed keycode, and the q key gives `w`.
    perform(&mut input, &display, type_text("q\n"));
    perform(&mut input, &display, key("ctrl+d"));
    wait_for_file(&out, &mut xterm, b"q\nq\n");
    assert_eq!(
        input.keymap().find(u32::from('w')).map(|p| p.keycode),
        Some(q)
    );
}

#[test]
fn pointer_actions_arrive_with_the_right_button_and_position() {
    let xvnc = Xvnc::start();
    let display = xvnc.connect();
    let events = EventMask::BUTTON_PRESS | EventMask::BUTTON_RELEASE | EventMask::POINTER_MOTION;
    let target = TestWindow::open(&xvnc, 0, 0, 1280, 800, 0x20_2020, events);
    let mut input = Input::new(&display).expect("input");
    target.events();

    let click = |x, y, button| Action::click_at(x, y, button);
    perform(&mut input, &display, click(100, 200, Button::Left));
    perform(&mut input, &display, click(640, 400, Button::Right));
    perform(&mut input, &display, click(1279, 799, Button::Middle));
    assert_eq!(
        target.buttons(),
        vec![
            (true, 1, 100, 200),
            (false, 1, 100, 200),
            (true, 3, 640, 400),
            (false, 3, 640, 400),
            (true, 2, 1279, 799),
            (false, 2, 1279, 799),
        ]
    );

    // A drag: down at one point, move, up at another.
    perform(
        &mut input,
        &display,
        Action::Down {
            button: Button::Left,
            x: Some(10),
            y: Some(20),
            element: None,
        },
    );
    perform(&mut input, &display, Action::move_to(150, 160));
    perform(
        &mut input,
        &display,
        Action::Up {
            button: Button::Left,
            x: Some(300),
            y: Some(400),
            element: None,
        },
    );
    let events = target.events();
    let motions: Vec<(i16, i16)> = events
        .iter()
        .filter_map(|e| match e {
            Event::MotionNotify(m) => Some((m.event_x, m.event_y)),
            _ => None,
        })
        .collect();
    assert!(
        motions.contains(&(150, 160)),
        "motion to the move target: {motions:?}"
    );
    assert_eq!(cursor_position(&display).expect("cursor"), (300, 400));
    perform(
        &mut input,
        &display,
        Action::Down {
            button: Button::Right,
            x: None,
            y: None,
            element: None,
        },
    );
    perform(
        &mut input,
        &display,
        Action::Up {
            button: Button::Right,
            x: None,
            y: None,
            element: None,
        },
    );
    let buttons: Vec<_> = events
        .into_iter()
        .filter_map(|e| match e {
            Event::ButtonPress(b) => Some((true, b.detail, b.event_x, b.event_y)),
            Event::ButtonRelease(b) => Some((false, b.detail, b.event_x, b.event_y)),
            _ => None,
        })
        .chain(target.buttons())
        .collect();
    assert_eq!(
        buttons,
        vec![
            (true, 1, 10, 20),
            (false, 1, 300, 400),
            (true, 3, 300, 400),
            (false, 3, 300, 400)
        ]
    );

    // Wheel steps: buttons 4 (up), 5 (down), 6 (left), 7 (right), one
    // press and release per step, after moving when asked.
    let scroll = |direction, steps, at: Option<(i32, i32)>| Action::Scroll {
        direction,
        steps,
        x: at.map(|p| p.0),
        y: at.map(|p| p.1),
        element: None,
    };
    perform(
        &mut input,
        &display,
        scroll(ScrollDirection::Down, 3, Some((50, 60))),
    );
    perform(&mut input, &display, scroll(ScrollDirection::Up, 2, None));
    perform(
        &mut input,
        &display,
        scroll(ScrollDirection::Left, 1, Some((70, 80))),
    );
    perform(
        &mut input,
        &display,
        scroll(ScrollDirection::Right, 1, None),
    );
    let pair = |b, x, y| [(true, b, x, y), (false, b, x, y)];
    let expected: Vec<_> = [pair(5, 50, 60); 3]
        .into_iter()
        .chain([pair(4, 50, 60); 2])
        .chain([pair(6, 70, 80), pair(7, 70, 80)])
        .flatten()
        .collect();
    assert_eq!(target.buttons(), expected);

    perform(&mut input, &display, Action::move_to(1279, 799));
    assert_eq!(cursor_position(&display).expect("cursor"), (1279, 799));
    target.events();

    // Off the screen: refused before anything is sent.
    for (action, point) in [
        (click(1280, 5, Button::Left), "(1280, 5)"),
        (Action::move_to(-1, 10), "(-1, 10)"),
        (scroll(ScrollDirection::Down, 1, Some((0, 800))), "(0, 800)"),
        (
            Action::Down {
                button: Button::Left,
                x: Some(5000),
                y: Some(5000),
                element: None,
            },
            "(5000, 5000)",
        ),
    ] {
        let err = input
            .perform(&display, &action)
            .expect_err("off-screen point");
        let message = err.to_string();
        assert!(
            message.contains(point) && message.contains("1280x800"),
            "{message}"
        );
        assert!(
            message.contains("0 to 1279") && message.contains("0 to 799"),
            "{message}"
        );
    }
    let err = input
        .perform(
            &display,
            &Action::Down {
                button: Button::Left,
                x: Some(5),
                y: None,
                element: None,
            },
        )
        .expect_err("half a point");
    assert!(err.to_string().contains("`x` and `y` go together"), "{err}");
    assert!(
        target.events().is_empty(),
        "no event was sent for refused actions"
    );
    assert_eq!(cursor_position(&display).expect("cursor"), (1279, 799));
}

/// The windows Fluxbox lists as its clients (`_NET_CLIENT_LIST`).
fn client_list(display: &Display, atoms: &Atoms) -> Option<Vec<u32>> {
    let list = display
        .conn
        .get_property(
            false,
            display.root,
            atoms.net_client_list,
            AtomEnum::WINDOW,
            0,
            64,
        )
        .ok()?
        .reply()
        .ok()?;
    let windows = list.value32()?.collect();
    Some(windows)
}

#[test]
fn focus_window_finds_windows_by_class_and_title() {
    let xvnc = Xvnc::start();
    let display = xvnc.connect();
    let _wm = xvnc.start_fluxbox(&display);
    let xterm = |title: &str, instance: &str| {
        let mut cmd = xvnc.command("xterm");
        cmd.args([
            "-T",
            title,
            "-name",
            instance,
            "-geometry",
            "40x5",
            "-e",
            "sleep",
            "600",
        ]);
        xvnc.spawn(cmd)
    };
    let atoms = Atoms::intern(&display.conn).expect("atoms");
    // Waits until Fluxbox lists a window titled `title` and shows it. Not a
    // count of listed windows: any other window (Fluxbox's own `xmessage`
    // about a wallpaper, say) would make a count pass early.
    let managed = |title: &str| {
        wait_until_blocking(
            &format!("`{title}` to be managed and viewable"),
            LIMIT,
            || {
                let shown = client_list(&display, &atoms)?.into_iter().any(|w| {
                    let titled = window_title(&display.conn, &atoms, w).ok().flatten();
                    let viewable = display
                        .conn
                        .get_window_attributes(w)
                        .ok()
                        .and_then(|c| c.reply().ok())
                        .is_some_and(|a| {
                            a.map_state == x11rb::protocol::xproto::MapState::VIEWABLE
                        });
                    titled.as_deref() == Some(title) && viewable
                });
                shown.then_some(())
            },
        )
    };
    // One after the other, so the client list (mapping order) is known.
    let _alpha = xterm("alpha-term", "xterm");
    managed("alpha-term");
    let _bravo = xterm("beta-term", "bravo");
    managed("beta-term");

    // The titles of the focused and of the active window, and of every
    // client with its map state (for the message when the wait fails).
    let focus_state = || {
        let focus = display.conn.get_input_focus().ok()?.reply().ok()?.focus;
        let focused = window_title(&display.conn, &atoms, focus).ok()?;
        let active = active_window_title(&display).ok()?;
        Some((focused, active))
    };
    let clients = || {
        let described: Vec<String> = client_list(&display, &atoms)?
            .into_iter()
            .map(|w| {
                let title = window_title(&display.conn, &atoms, w).ok().flatten();
                let state = display
                    .conn
                    .get_window_attributes(w)
                    .ok()
                    .and_then(|c| c.reply().ok())
                    .map(|a| a.map_state);
                format!("{w:#x} {title:?} {state:?}")
            })
            .collect();
        Some(described)
    };
    let active_becomes = |title: &str| {
        let want = Some(title.to_string());
        let started = std::time::Instant::now();
        loop {
            let state = focus_state();
            if state == Some((want.clone(), want.clone())) {
                return;
            }
            assert!(
                started.elapsed() < LIMIT,
                "timed out after {LIMIT:?} waiting for `{title}` to be the active window with the focus; (focused, active) is {state:?}; clients: {:?}",
                clients()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    };

    assert!(
        focus_window(&display, "BETA-TERM").expect("focus"),
        "by title, any case"
    );
    active_becomes("beta-term");
    assert!(
        focus_window(&display, "alpha").expect("focus"),
        "by part of the title"
    );
    active_becomes("alpha-term");
    assert!(
        focus_window(&display, "Bravo").expect("focus"),
        "by WM_CLASS instance name"
    );
    active_becomes("beta-term");
    assert!(
        focus_window(&display, "xterm").expect("focus"),
        "by WM_CLASS class `XTerm`"
    );
    active_becomes("alpha-term");
    assert!(!focus_window(&display, "no-such-window").expect("focus"));
    active_becomes("alpha-term");
}

#[test]
fn active_window_title_is_none_without_a_window_manager() {
    let xvnc = Xvnc::start();
    let display = xvnc.connect();
    assert_eq!(active_window_title(&display).expect("title"), None);
    assert!(!focus_window(&display, "anything").expect("focus"));
}

/// The watch over full batches (24 actions) on a screen with Fluxbox and
/// three windows, batch after batch on one connection: each reports one
/// effect per action and hands its connection back. What the watch costs a
/// batch is a row of the benchmark table (`scripts/bench.sh`), not a timed
/// test: a loaded machine must not fail the suite.
#[test]
fn the_watch_reports_every_action_batch_after_batch() {
    let xvnc = Xvnc::start();
    let display = xvnc.connect();
    let _wm = xvnc.start_fluxbox(&display);
    let _terms: Vec<_> = (0..3)
        .map(|n| {
            let mut cmd = xvnc.command("xterm");
            cmd.args(["-T", &format!("term {n}"), "-e", "sleep", "600"]);
            xvnc.spawn(cmd)
        })
        .collect();
    // Waits until Fluxbox lists the three: the watch reads their titles.
    let mut conn = wait_until_blocking("three windows listed", LIMIT, || {
        let watch = EffectsWatch::begin(WatchConnection::open(xvnc.number).ok()?, None).ok()?;
        let listed = watch.window_count() >= 3;
        let conn = watch.finish().conn;
        listed.then_some(conn)
    });
    let actions: Vec<Action> = (0..24).map(|i| Action::move_to(i, i)).collect();
    for _ in 0..20 {
        let mut watch = EffectsWatch::begin(conn, None).expect("watch");
        assert!(watch.window_count() >= 3);
        for (index, action) in actions.iter().enumerate() {
            watch.before(index, action);
        }
        let Finished {
            effects,
            conn: back,
            ..
        } = watch.finish();
        assert_eq!(effects.len(), 24);
        conn = back;
    }
}
