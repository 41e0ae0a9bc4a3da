//! Popups (override-redirect windows: menus, dropdowns, tooltips) against a
//! real Xvnc: the text view's list of them, and `computer_act`'s effects
//! naming one that showed during a batch. Each test owns its display.

use crate::xvnc::Xvnc;
use computer_protocol::{Action, PopupEntry};
use computerd::desktop::EffectsWatch;
use computerd::display::Display;
use computerd::screens::WatchConnection;
use computerd::windows::list_popups;
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    AtomEnum, ConnectionExt as _, CreateWindowAux, PropMode, Window, WindowClass,
};
use x11rb::wrapper::ConnectionExt as _;

/// Maps a window at `(x, y)`, override-redirect when `popup`, typed as
/// `_NET_WM_WINDOW_TYPE_<kind>` when a kind is given, with `class`.
fn map_window(
    display: &Display,
    (x, y, width, height): (i16, i16, u16, u16),
    popup: bool,
    kind: Option<&str>,
    class: &str,
) -> Window {
    let conn = &display.conn;
    let window = conn.generate_id().expect("id");
    let aux = CreateWindowAux::new()
        .background_pixel(0x30_3030)
        .override_redirect(u32::from(popup));
    conn.create_window(
        0,
        window,
        display.root,
        x,
        y,
        width,
        height,
        0,
        WindowClass::INPUT_OUTPUT,
        0,
        &aux,
    )
    .expect("create window");
    let instance_and_class = format!("{}\0{class}\0", class.to_lowercase());
    conn.change_property8(
        PropMode::REPLACE,
        window,
        AtomEnum::WM_CLASS,
        AtomEnum::STRING,
        instance_and_class.as_bytes(),
    )
    .expect("class");
    if let Some(kind) = kind {
        let atom = |name: &str| {
            conn.intern_atom(false, name.as_bytes())
                .expect("intern")
                .reply()
                .expect("atom")
                .atom
        };
        let value = atom(&format!("_NET_WM_WINDOW_TYPE_{kind}"));
        conn.change_property32(
            PropMode::REPLACE,
            window,
            atom("_NET_WM_WINDOW_TYPE"),
            AtomEnum::ATOM,
            &[value],
        )
        .expect("type");
    }
    conn.map_window(window).expect("map");
    conn.sync().expect("sync");
    window
}

fn popups(display: &Display) -> Vec<PopupEntry> {
    list_popups(display).expect("list popups")
}

#[test]
fn shown_popups_are_listed_topmost_first_and_helpers_and_windows_are_not() {
    let xvnc = Xvnc::start();
    let display = xvnc.connect();
    let app = xvnc.connect();
    assert_eq!(popups(&display), vec![]);

    // A window the window manager would manage, a 1x1 helper and one off
    // the screen: none of them is a popup someone sees.
    map_window(&app, (10, 10, 300, 200), false, None, "Editor");
    map_window(&app, (0, 0, 1, 1), true, None, "Chromium");
    map_window(
        &app,
        (-500, -500, 100, 100),
        true,
        Some("TOOLTIP"),
        "Chromium",
    );
    assert_eq!(popups(&display), vec![]);

    let menu = map_window(
        &app,
        (40, 50, 180, 120),
        true,
        Some("POPUP_MENU"),
        "Chromium",
    );
    let tip = map_window(&app, (60, 200, 90, 20), true, None, "");
    let listed = popups(&display);
    assert_eq!(
        listed,
        vec![
            PopupEntry {
                id: tip,
                kind: "popup".into(),
                class: String::new(),
                pid: None,
                x: 60,
                y: 200,
                width: 90,
                height: 20,
                items: vec![],
                items_note: None,
            },
            PopupEntry {
                id: menu,
                kind: "popup_menu".into(),
                class: "Chromium".into(),
                pid: None,
                x: 40,
                y: 50,
                width: 180,
                height: 120,
                items: vec![],
                items_note: None,
            },
        ]
    );
    assert_eq!(
        listed[1].describe(),
        "popup_menu of Chromium @ 40,50 180x120"
    );

    app.conn.unmap_window(menu).expect("unmap");
    app.conn.sync().expect("sync");
    assert_eq!(popups(&display).len(), 1);
}

#[test]
fn a_popup_shown_during_an_action_is_among_its_effects() {
    let xvnc = Xvnc::start();
    let app = xvnc.connect();
    let watch_conn = WatchConnection::open(xvnc.number).expect("watch connection");
    let mut watch = EffectsWatch::begin(watch_conn, None).expect("watch");
    watch.before(0, &Action::move_to(5, 5));
    // A helper mapped too: it is not news.
    map_window(&app, (0, 0, 1, 1), true, None, "Chromium");
    map_window(
        &app,
        (100, 80, 200, 60),
        true,
        Some("DROPDOWN_MENU"),
        "Chromium",
    );
    watch.before(1, &Action::move_to(6, 6));
    let effects = watch.finish().effects;
    assert_eq!(
        effects[0].popups_opened,
        vec!["dropdown_menu of Chromium @ 100,80 200x60".to_string()]
    );
    assert_eq!(effects[0].changed, Some(true));
    assert!(effects[1].popups_opened.is_empty(), "{:?}", effects[1]);
}

/// As under Fluxbox: its frames are override-redirect and hold the
/// listed windows, and a popup names no class of its own (Chromium's
/// menus do not). The frame is not a popup; the popup is its app's.
#[test]
fn frames_are_not_popups_and_a_classless_popup_is_its_apps() {
    let xvnc = Xvnc::start();
    let display = xvnc.connect();
    let (manager, app) = (xvnc.connect(), xvnc.connect());
    let frame = map_window(&manager, (0, 0, 400, 300), true, None, "");
    let client = app.conn.generate_id().expect("id");
    app.conn
        .create_window(
            0,
            client,
            frame,
            0,
            20,
            400,
            280,
            0,
            WindowClass::INPUT_OUTPUT,
            0,
            &CreateWindowAux::new(),
        )
        .expect("client window");
    app.conn
        .change_property8(
            PropMode::REPLACE,
            client,
            AtomEnum::WM_CLASS,
            AtomEnum::STRING,
            b"editor\0Editor\0",
        )
        .expect("class");
    app.conn.map_window(client).expect("map");
    app.conn.sync().expect("sync");
    let client_list = manager
        .conn
        .intern_atom(false, b"_NET_CLIENT_LIST")
        .expect("intern")
        .reply()
        .expect("atom")
        .atom;
    manager
        .conn
        .change_property32(
            PropMode::REPLACE,
            manager.root,
            client_list,
            AtomEnum::WINDOW,
            &[client],
        )
        .expect("client list");
    manager.conn.sync().expect("sync");

    let menu = map_window(&app, (50, 60, 120, 80), true, Some("MENU"), "");
    let listed = popups(&display);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].id, menu);
    assert_eq!(listed[0].describe(), "menu of Editor @ 50,60 120x80");
}
