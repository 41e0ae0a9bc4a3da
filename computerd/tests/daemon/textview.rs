//! The text view against a real computerd, real Xvnc screens and a real
//! Chromium: a page's tree by name with screen bounds, a click by ref that
//! changes the page, paging through a long tree with a cursor, stale refs
//! and cursors refused, the unchanged rule, a window with no tree, pages
//! whose scripts lie about their visibility and size, and a read cut short
//! by a page that never yields.

use crate::common::{wait_until, Daemon};
use serde_json::{json, Value};
use std::time::Duration;

fn require_programs() {
    crate::common::require_programs(&[("chromium", "chromium"), ("xterm", "xterm")]);
}

async fn text_view(d: &Daemon, session: &str, extra: Value) -> Value {
    let mut text = json!({ "view": "text" });
    if let (Some(t), Some(e)) = (text.as_object_mut(), extra.as_object()) {
        t.extend(e.clone());
    }
    let o = d
        .ok(
            &format!("/v1/sessions/{session}/observe"),
            json!({ "text": text }),
        )
        .await;
    assert!(
        o.get("image_base64").is_none(),
        "view text has no image: {o}"
    );
    o["text_view"].clone()
}

/// Every node of a view, in pre-order.
fn nodes(view: &Value) -> Vec<Value> {
    fn walk(nodes: &Value, out: &mut Vec<Value>) {
        for n in nodes.as_array().into_iter().flatten() {
            out.push(n.clone());
            walk(&n["children"], out);
        }
    }
    let mut out = Vec::new();
    walk(&view["nodes"], &mut out);
    out
}

fn find(view: &Value, role: &str, name: &str) -> Option<Value> {
    nodes(view)
        .into_iter()
        .find(|n| n["role"] == role && n["name"].as_str().unwrap_or("").contains(name))
}

/// A page whose script stops yielding a moment after it loads.
const BUSY_PAGE: &str = r#"<!doctype html><title>Busy page</title><h1>Busy</h1>
<script>setTimeout(() => { for (;;) {} }, 1000)</script>"#;

/// Whether the browser on DevTools `port` says a client is attached to the
/// tab titled `title`, asked over its own DevTools socket.
async fn tab_attached(port: u16, title: &str) -> Option<bool> {
    use futures::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let version: Value = reqwest::get(format!("http://127.0.0.1:{port}/json/version"))
        .await
        .ok()?
        .json()
        .await
        .ok()?;
    let url = version["webSocketDebuggerUrl"].as_str()?.to_string();
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.ok()?;
    let ask = json!({"id": 1, "method": "Target.getTargets", "params": {}});
    socket
        .send(Message::Text(ask.to_string().into()))
        .await
        .ok()?;
    while let Some(Ok(message)) = socket.next().await {
        let Message::Text(text) = message else {
            continue;
        };
        let answer: Value = serde_json::from_str(text.as_str()).ok()?;
        if answer["id"] != 1 {
            continue;
        }
        return answer["result"]["targetInfos"]
            .as_array()?
            .iter()
            .find(|t| t["title"] == title)
            .and_then(|t| t["attached"].as_bool());
    }
    None
}

async fn act(d: &Daemon, session: &str, actions: Value) -> (u16, Value) {
    let (status, body) = d
        .post(
            &format!("/v1/sessions/{session}/act"),
            json!({ "actions": actions, "settle_ms": 100 }),
        )
        .await;
    (status.as_u16(), body)
}

const PAGE: &str = r#"<!doctype html><title>Probe page</title>
<h1 id="h">Waiting</h1>
<button onclick="document.getElementById('h').textContent='Pressed by ref'">Press me</button>
<a href="https://example.invalid/docs">Read the docs</a>
<input aria-label="Your name" value="Ada">"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_page_lists_its_controls_by_name_and_a_click_by_ref_presses_the_button() {
    require_programs();
    let d = Daemon::start().await;
    let s = d.create_session("text view").await;
    std::fs::write(d.home.path().join("probe.html"), PAGE).unwrap();
    let opened = d
        .ok(
            &format!("/v1/sessions/{s}/open"),
            json!({ "target": "probe.html" }),
        )
        .await;
    assert_eq!(opened["ready"], true, "{opened}");

    let view = text_view(&d, &s, json!({})).await;
    assert_eq!(view["source"], "page", "{view}");
    let windows = view["windows"].as_array().unwrap();
    let shown = windows
        .iter()
        .find(|w| Some(&w["id"]) == Some(&view["window"]))
        .expect("the tree's window is listed");
    assert_eq!(shown["focused"], true, "{view}");
    let button = find(&view, "button", "Press me").unwrap_or_else(|| panic!("a button: {view:#}"));
    assert!(
        find(&view, "link", "Read the docs").is_some(),
        "a link: {view:#}"
    );
    let field =
        find(&view, "textbox", "Your name").unwrap_or_else(|| panic!("a text field: {view:#}"));
    assert_eq!(field["value"], "Ada");
    assert!(
        field["states"]
            .as_array()
            .unwrap()
            .contains(&json!("editable")),
        "{field}"
    );
    // Bounds are screen pixels inside the browser window.
    let b = &button["bounds"];
    let (bx, by) = (b["x"].as_i64().unwrap(), b["y"].as_i64().unwrap());
    let (wx, wy) = (shown["x"].as_i64().unwrap(), shown["y"].as_i64().unwrap());
    assert!(
        bx >= wx && by > wy + 40,
        "the button sits below the browser's toolbar: {b} in {shown}"
    );

    let (status, done) = act(&d, &s, json!([{ "type": "click", "ref": button["ref"] }])).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["outcomes"][0]["ok"], true, "{done}");
    wait_until(
        "the click by ref to change the page",
        Duration::from_secs(5),
        || async {
            let view = text_view(&d, &s, json!({})).await;
            find(&view, "heading", "Pressed by ref").map(|_| ())
        },
    )
    .await;

    // The button's old ref belongs to an older view now.
    let (status, stale) = act(&d, &s, json!([{ "type": "click", "ref": button["ref"] }])).await;
    assert_eq!(status, 400, "{stale}");
    let message = stale["message"].as_str().unwrap();
    assert!(
        message.contains("latest text view") && message.contains("actions[0].ref"),
        "{message}"
    );
}

/// A tab opened first and left behind claims to be the visible one.
const BACKGROUND_TRAP: &str = r#"<!doctype html><title>Background trap</title>
<script>Object.defineProperty(Document.prototype, 'visibilityState', { get() { return 'visible'; } });</script>
<button>Trap button</button>"#;

/// The page in front writes its real viewport size, then lies about its
/// scale and height so refs would land on the browser's toolbar.
const LYING_FRONT: &str = r#"<!doctype html><title>Front page</title>
<h1 id="real">measuring</h1>
<button>Continue</button>
<p style="margin-top: 2000px">Far below</p>
<script>
document.getElementById('real').textContent = 'viewport ' + innerWidth + 'x' + innerHeight;
Object.defineProperty(window, 'devicePixelRatio', { get() { return 0.3; } });
Object.defineProperty(window, 'innerHeight', { get() { return 100000; } });
Object.defineProperty(window, 'innerWidth', { get() { return 100000; } });
</script>"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_read_cut_short_by_a_busy_page_leaves_no_session_on_its_tab() {
    require_programs();
    let d = Daemon::start().await;
    let s = d.create_session("busy page").await;
    std::fs::write(d.home.path().join("busy.html"), BUSY_PAGE).unwrap();
    let opened = d
        .ok(
            &format!("/v1/sessions/{s}/open"),
            json!({ "target": "busy.html" }),
        )
        .await;
    assert_eq!(opened["ready"], true, "{opened}");
    // Reads answer until the page's script stops yielding; then one runs
    // out of time half way, after attaching to the tab.
    wait_until(
        "a page tree read to time out",
        Duration::from_secs(30),
        || async {
            let view = text_view(&d, &s, json!({})).await;
            view.to_string().contains("did not answer").then_some(())
        },
    )
    .await;
    let port = d.devtools_port_base + u16::from(d.open_screen(&s).await);
    wait_until(
        "the cut-short read's DevTools session to detach from the tab",
        Duration::from_secs(10),
        || async { (tab_attached(port, "Busy page").await == Some(false)).then_some(()) },
    )
    .await;
}

/// A page whose tree is bigger than one DevTools message may be (64 MiB):
/// reading it ends computerd's socket to the browser.
/// The bulk is an attribute of a hidden element, which the page snapshot
/// carries but nothing has to lay out.
const HUGE_PAGE: &str = r#"<!doctype html><title>Huge page</title><div id="d" hidden></div>
<script>document.getElementById('d').setAttribute('data-bulk', 'x'.repeat(80 * 1024 * 1024));</script>"#;

/// The browser's id, which a new Chromium on the port does not share.
async fn browser_id(port: u16) -> String {
    let version: Value = reqwest::get(format!("http://127.0.0.1:{port}/json/version"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    version["webSocketDebuggerUrl"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_too_big_for_devtools_leaves_the_browser_and_its_tabs() {
    require_programs();
    let d = Daemon::start().await;
    let s = d.create_session("huge page").await;
    std::fs::write(d.home.path().join("huge.html"), HUGE_PAGE).unwrap();
    std::fs::write(
        d.home.path().join("small.html"),
        "<!doctype html><title>Small page</title><button>Small button</button>",
    )
    .unwrap();
    let opened = d
        .ok(
            &format!("/v1/sessions/{s}/open"),
            json!({ "target": "small.html" }),
        )
        .await;
    assert_eq!(opened["ready"], true, "{opened}");
    let port = d.devtools_port_base + u16::from(d.open_screen(&s).await);
    let before = browser_id(port).await;
    let opened = d
        .ok(
            &format!("/v1/sessions/{s}/open"),
            json!({ "target": "huge.html" }),
        )
        .await;
    assert_eq!(opened["ready"], true, "{opened}");

    // The read of the huge page loses its socket and says the page did not
    // answer; the browser stays, with both tabs.
    let view = text_view(&d, &s, json!({})).await;
    assert!(find(&view, "button", "Small button").is_none(), "{view}");
    assert_eq!(browser_id(port).await, before, "the browser was replaced");
    let opened = d
        .ok(
            &format!("/v1/sessions/{s}/open"),
            json!({ "target": "small.html" }),
        )
        .await;
    assert_eq!(opened["ready"], true, "{opened}");
    let view = text_view(&d, &s, json!({})).await;
    assert!(find(&view, "button", "Small button").is_some(), "{view:#}");
    assert_eq!(browser_id(port).await, before, "the browser was replaced");
    let tabs = tab_attached(port, "Huge page").await;
    assert!(tabs.is_some(), "the huge page's tab is gone");
}

#[tokio::test(flavor = "multi_thread")]
async fn page_scripts_decide_neither_the_tab_read_nor_where_its_nodes_lie() {
    require_programs();
    let d = Daemon::start().await;
    let s = d.create_session("lying pages").await;
    std::fs::write(d.home.path().join("trap.html"), BACKGROUND_TRAP).unwrap();
    std::fs::write(d.home.path().join("front.html"), LYING_FRONT).unwrap();
    for page in ["trap.html", "front.html"] {
        let opened = d
            .ok(&format!("/v1/sessions/{s}/open"), json!({ "target": page }))
            .await;
        assert_eq!(opened["ready"], true, "{opened}");
    }

    let view = text_view(&d, &s, json!({})).await;
    assert_eq!(view["source"], "page", "{view}");
    assert!(
        find(&view, "button", "Continue").is_some(),
        "the front page's tree: {view:#}"
    );
    assert!(
        find(&view, "button", "Trap button").is_none(),
        "not the background tab's: {view:#}"
    );
    let heading = find(&view, "heading", "viewport ")
        .unwrap_or_else(|| panic!("the page's real size: {view:#}"));
    let size = heading["name"]
        .as_str()
        .unwrap()
        .trim_start_matches("viewport ");
    let (_, inner_h) = size.split_once('x').unwrap();
    let inner_h: i64 = inner_h.parse().unwrap();
    let window = view["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["id"] == view["window"])
        .expect("the tree's window is listed")
        .clone();
    let at = |key: &str| window[key].as_i64().unwrap();
    let (left, right) = (at("x"), at("x") + at("width"));
    let (top, bottom) = (at("y") + at("height") - inner_h, at("y") + at("height"));
    assert!(
        top > at("y") + 40,
        "the viewport is below the toolbar: {window}"
    );
    let mut placed = 0;
    for node in nodes(&view) {
        let Some(b) = node["bounds"].as_object() else {
            continue;
        };
        placed += 1;
        let (x, y) = (b["x"].as_i64().unwrap(), b["y"].as_i64().unwrap());
        let (w, h) = (b["width"].as_i64().unwrap(), b["height"].as_i64().unwrap());
        assert!(
            x >= left && x + w <= right && y >= top && y + h <= bottom,
            "{} {} at {x},{y} {w}x{h} lies inside the viewport {left}..{right} x {top}..{bottom}",
            node["role"],
            node["name"]
        );
    }
    assert!(placed >= 2, "the nodes have bounds: {view:#}");
    let far = find(&view, "text", "Far below").unwrap_or_else(|| panic!("{view:#}"));
    assert!(
        far.get("bounds").is_none(),
        "below the viewport: no bounds: {far}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_tree_pages_with_a_cursor_and_an_unchanged_view_keeps_its_refs() {
    require_programs();
    let d = Daemon::start().await;
    let s = d.create_session("paging").await;
    let buttons: String = (1..=120)
        .map(|i| format!("<button>Item {i}</button>\n"))
        .collect();
    std::fs::write(
        d.home.path().join("long.html"),
        format!("<!doctype html><title>Long</title>{buttons}"),
    )
    .unwrap();
    let opened = d
        .ok(
            &format!("/v1/sessions/{s}/open"),
            json!({ "target": "long.html" }),
        )
        .await;
    assert_eq!(opened["ready"], true, "{opened}");

    let first = text_view(&d, &s, json!({ "max_nodes": 50 })).await;
    let total = first["total_nodes"].as_u64().unwrap();
    assert!(total > 120, "every button is a node: {total}");
    let mut seen: Vec<String> = Vec::new();
    let mut view = first.clone();
    let mut pages = 0;
    loop {
        pages += 1;
        let page = nodes(&view);
        assert!(page.len() <= 50, "a page keeps to max_nodes");
        assert_eq!(view["offset"].as_u64().unwrap() as usize, seen.len());
        seen.extend(page.iter().map(|n| n["ref"].as_str().unwrap().to_string()));
        let Some(cursor) = view["cursor"].as_str().map(str::to_string) else {
            break;
        };
        assert!(view["note"].as_str().unwrap().contains(&cursor), "{view}");
        view = text_view(&d, &s, json!({ "max_nodes": 50, "cursor": cursor })).await;
        assert_eq!(
            view["view_id"], first["view_id"],
            "pages come from one view"
        );
    }
    assert_eq!(seen.len() as u64, total);
    assert_eq!(pages as u64, total.div_ceil(50));
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "refs are unique");
    let labels: Vec<String> = (1..=120).map(|i| format!("Item {i}")).collect();
    let all_names: Vec<String> = {
        // Names of every page's buttons, read again from the first view.
        let mut names = Vec::new();
        let mut v = text_view(&d, &s, json!({ "max_nodes": 5000 })).await;
        assert_eq!(
            v["unchanged"], true,
            "the same page again is unchanged: {v}"
        );
        assert!(nodes(&v).is_empty());
        // An unchanged view keeps the refs, so the cursor still works.
        v = text_view(
            &d,
            &s,
            json!({ "max_nodes": 5000, "cursor": format!("{}.0", first["view_id"]) }),
        )
        .await;
        for n in nodes(&v) {
            if n["role"] == "button" {
                names.push(n["name"].as_str().unwrap().to_string());
            }
        }
        names
    };
    assert_eq!(all_names, labels);

    // A cursor of another view is refused with the fix.
    let (status, body) = d
        .post(
            &format!("/v1/sessions/{s}/observe"),
            json!({ "text": { "view": "text", "cursor": "999.0" } }),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("`cursor`"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_window_without_a_tree_is_listed_with_a_note_and_both_gives_an_image_too() {
    require_programs();
    let d = Daemon::start().await;
    let s = d.create_session("no tree").await;
    let launched = d
        .ok(
            &format!("/v1/sessions/{s}/launch"),
            json!({ "app": "xterm" }),
        )
        .await;
    assert!(
        launched["observation"]["active_window"].is_string(),
        "{launched}"
    );
    let o = d
        .ok(
            &format!("/v1/sessions/{s}/observe"),
            // Another size than launch_app's frame, so the image is news.
            json!({ "frame": { "max_side": 640 }, "text": { "view": "both", "window": "xterm" } }),
        )
        .await;
    assert!(o["image_base64"].is_string(), "both has the image: {o}");
    assert_eq!(o["frame_width"], 640);
    let view = &o["text_view"];
    let xterm = view["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["class"] == "XTerm")
        .unwrap_or_else(|| panic!("xterm is listed: {view}"))
        .clone();
    assert!(
        xterm["pid"].as_u64().is_some() && xterm["width"].as_u64().unwrap() > 0,
        "{xterm}"
    );
    assert_eq!(view["window"], xterm["id"]);
    assert!(nodes(view).is_empty(), "{view}");
    assert!(
        view["note"]
            .as_str()
            .unwrap()
            .contains("no accessibility tree"),
        "{view}"
    );

    // Names of windows that do not exist are errors listing the others.
    let (status, body) = d
        .post(
            &format!("/v1/sessions/{s}/observe"),
            json!({ "text": { "view": "text", "window": "no-such-app" } }),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("XTerm"),
        "{body}"
    );
}

/// Text views of `window` until `found` finds what it needs.
async fn view_until<T>(
    d: &Daemon,
    session: &str,
    window: &str,
    what: &str,
    found: impl Fn(&Value) -> Option<T>,
) -> (Value, T) {
    let limit = Duration::from_secs(20);
    let started = std::time::Instant::now();
    loop {
        let (status, o) = d
            .post(
                &format!("/v1/sessions/{session}/observe"),
                json!({ "text": { "view": "text", "window": window } }),
            )
            .await;
        if status == 200 {
            if let Some(hit) = found(&o["text_view"]) {
                return (o["text_view"].clone(), hit);
            }
        }
        assert!(
            started.elapsed() < limit,
            "{what} within {limit:?}; last: {o}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_gtk_dialog_is_filled_in_and_confirmed_by_ref() {
    require_programs();
    crate::common::require_programs(&[
        ("zenity", "zenity"),
        ("/usr/libexec/at-spi-bus-launcher", "at-spi2-core"),
    ]);
    let d = Daemon::start().await;
    let s = d.create_session("gtk by ref").await;
    d.open_screen(&s).await;
    let out = d.home.path().join("zenity.out");
    d.shell(
        &s,
        &format!(
            "setsid nohup zenity --entry --title=Probe --text='Your name' >{} 2>&1 </dev/null &",
            out.display()
        ),
    )
    .await;
    let (view, (field, _)) = view_until(&d, &s, "Probe", "the dialog's field and buttons", |v| {
        let field = nodes(v).into_iter().find(|n| {
            n["states"]
                .as_array()
                .is_some_and(|s| s.contains(&json!("editable")))
        })?;
        Some((
            field,
            (find(v, "button", "OK")?, find(v, "button", "Cancel")?),
        ))
    })
    .await;
    assert_eq!(view["source"], "atspi", "{view}");

    let (status, typed) = act(
        &d,
        &s,
        json!([{ "type": "click", "ref": field["ref"] }, { "type": "type", "text": "Ada Lovelace" }]),
    )
    .await;
    assert_eq!(status, 200, "{typed}");
    let (_, okay) = view_until(&d, &s, "Probe", "the typed name in the field", |v| {
        nodes(v)
            .iter()
            .any(|n| n["value"] == "Ada Lovelace")
            .then(|| find(v, "button", "OK"))?
    })
    .await;
    let (status, pressed) = act(&d, &s, json!([{ "type": "click", "ref": okay["ref"] }])).await;
    assert_eq!(status, 200, "{pressed}");
    wait_until(
        "zenity to print the name",
        Duration::from_secs(10),
        || async {
            std::fs::read_to_string(&out)
                .ok()
                .filter(|t| t.contains("Ada Lovelace"))
                .map(|_| ())
        },
    )
    .await;
}
