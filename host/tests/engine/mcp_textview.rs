//! The text view through the real host binary, in the real image: a GTK
//! dialog's field and buttons by name over the screen's own AT-SPI bus,
//! typing into the field and pressing OK by ref; a LibreOffice Writer
//! window's document area and its menu bar's menu, with items; a page's button and link from the screen's
//! browser with a click by ref; two sessions' trees kept apart.

use crate::support::docker::shared_computer;
use crate::support::mcp::{
    call, connect, is_error, ok, shell_ok as shell, start_session as start, text, write_files,
    Client,
};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Every node of a text view, in pre-order.
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
    nodes(view).into_iter().find(|n| {
        n["role"].as_str().unwrap_or("").contains(role)
            && n["name"].as_str().unwrap_or("").contains(name)
    })
}

/// Text views of `window` (empty: the focused one) until `done` finds
/// what it needs in one.
async fn view_until<T>(
    client: &Client,
    sid: &str,
    window: &str,
    what: &str,
    limit: Duration,
    done: impl Fn(&Value) -> Option<T>,
) -> (Value, T) {
    let started = Instant::now();
    loop {
        let mut args = json!({ "session_id": sid, "view": "text" });
        if !window.is_empty() {
            args["window"] = json!(window);
        }
        let result = call(client, "computer_observe", args).await;
        let structured = result.structured_content.clone().unwrap_or(Value::Null);
        let view = structured["text_view"].clone();
        if !is_error(&result) {
            if let Some(found) = done(&view) {
                return (view, found);
            }
        }
        assert!(
            started.elapsed() < limit,
            "{what} within {limit:?}; last: {}",
            text(&result)
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

async fn act(client: &Client, sid: &str, actions: Value) -> Value {
    act_with(client, sid, actions, json!({ "settle_ms": 100 })).await
}

/// [`act`] with the batch's settle options (`settle`, `settle_ms`,
/// `quiet_ms`) as given.
async fn act_with(client: &Client, sid: &str, actions: Value, settling: Value) -> Value {
    let mut args = json!({ "session_id": sid, "actions": actions });
    args.as_object_mut()
        .unwrap()
        .extend(settling.as_object().unwrap().clone());
    let (r, _) = ok(client, "computer_act", args).await;
    let outcomes = r["outcomes"].as_array().cloned().unwrap_or_default();
    assert!(
        outcomes.iter().all(|o| o["ok"] == true)
            && outcomes.len() == r["requested"].as_u64().unwrap_or(0) as usize,
        "every action ran: {}",
        serde_json::to_string(&outcomes).unwrap()
    );
    r
}

/// A right click at `x`, `y`.
fn right_click(x: i64, y: i64) -> Value {
    json!({ "type": "click", "x": x, "y": y, "button": "right" })
}

/// Makes the click `click` and returns the ref of the item `name` of the
/// menu of `app` that opened, which the click's effects name with its
/// items.
async fn menu_item(client: &Client, sid: &str, click: Value, app: &str, name: &str) -> Value {
    let settling = json!({ "settle": "quiet", "quiet_ms": 500, "settle_ms": 5000 });
    let r = act_with(client, sid, json!([click]), settling).await;
    // Chromium's items end with their shortcut: `"Reload Ctrl+R"`.
    let quoted = format!("\"{name}");
    let of_app = format!("of {app}");
    assert!(
        r["effects"][0]["popups_opened"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|p| p.contains(&of_app) && p.contains(&quoted)),
        "the click's effects name the menu {of_app} with {quoted}…: {}",
        serde_json::to_string(&r["effects"]).unwrap()
    );
    let result = call(
        client,
        "computer_observe",
        json!({ "session_id": sid, "view": "text" }),
    )
    .await;
    let view = result.structured_content.clone().unwrap()["text_view"].clone();
    let item = view["popups"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["class"] == app)
        .flat_map(|p| p["items"].as_array().cloned().unwrap_or_default())
        .find(|i| {
            i["name"].as_str().is_some_and(|n| n.starts_with(name)) && i["bounds"].is_object()
        });
    let said = text(&result);
    let item = item
        .unwrap_or_else(|| panic!("the text view lists {quoted}… in the menu {of_app}: {said}"));
    assert!(
        said.contains(&format!(
            "{} {} {:?}",
            item["ref"].as_str().unwrap(),
            item["role"].as_str().unwrap(),
            item["name"].as_str().unwrap()
        )),
        "the item is a line of the view's text: {said}"
    );
    item["ref"].clone()
}

/// Starts a zenity entry dialog titled `title` on the session's screen;
/// what it prints goes to `out`.
async fn zenity(client: &Client, sid: &str, title: &str, out: &str) {
    ok(client, "computer_observe", json!({ "session_id": sid })).await;
    // As a desktop program: GTK 4 needs more of X than the shell's own
    // untrusted cookie gives.
    shell(client, sid, &format!("computer-use-launch run sh -c \"zenity --entry --title='{title}' --text='Your name' >{out} 2>&1\"")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_gtk_dialog_is_filled_and_confirmed_by_ref() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let sid = start(&client, "gtk by ref").await;
    zenity(&client, &sid, "Probe", "/tmp/probe.out").await;
    let (view, (field, okay)) = view_until(
        &client,
        &sid,
        "Probe",
        "the dialog's tree",
        Duration::from_secs(30),
        |v| {
            let field = nodes(v).into_iter().find(|n| {
                n["states"]
                    .as_array()
                    .is_some_and(|s| s.contains(&json!("editable")))
            })?;
            let okay = find(v, "button", "OK")?;
            find(v, "button", "Cancel")?;
            Some((field, okay))
        },
    )
    .await;
    assert_eq!(view["source"], "atspi", "{view}");
    let window = view["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["id"] == view["window"])
        .unwrap()
        .clone();
    let b = &okay["bounds"];
    let inside = |v: &Value, lo: &Value, span: &Value| {
        v.as_i64().unwrap() >= lo.as_i64().unwrap()
            && v.as_i64().unwrap() < lo.as_i64().unwrap() + span.as_i64().unwrap()
    };
    // GTK in the image reports every node at 0,0: bounds are then left
    // out with a note, and refs act through the bus. Where a toolkit
    // gives positions, they lie inside the window.
    if b.is_null() {
        let note = view["note"].as_str().unwrap_or("");
        assert!(note.contains("reports no positions"), "{view}");
    } else {
        assert!(
            inside(&b["x"], &window["x"], &window["width"])
                && inside(&b["y"], &window["y"], &window["height"]),
            "OK {b} inside {window}"
        );
    }

    act(&client, &sid, json!([{ "type": "click", "ref": field["ref"] }, { "type": "key", "key": "ctrl+a" }, { "type": "type", "text": "Ada Lovelace" }])).await;
    // OK's ref comes from the latest view, the one that shows the value.
    let (_, okay) = view_until(
        &client,
        &sid,
        "Probe",
        "the typed value in the tree",
        Duration::from_secs(10),
        |v| {
            nodes(v)
                .iter()
                .any(|n| n["value"] == "Ada Lovelace" || n["name"] == "Ada Lovelace")
                .then(|| find(v, "button", "OK"))?
        },
    )
    .await;
    act(
        &client,
        &sid,
        json!([{ "type": "click", "ref": okay["ref"] }]),
    )
    .await;
    let started = Instant::now();
    loop {
        let out = shell(&client, &sid, "cat /tmp/probe.out").await;
        if out["stdout"]
            .as_str()
            .unwrap_or("")
            .contains("Ada Lovelace")
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "zenity printed the value: {out}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_sessions_never_see_each_others_nodes() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let a = start(&client, "tree a").await;
    let b = start(&client, "tree b").await;
    zenity(&client, &a, "Dialog of A", "/tmp/a.out").await;
    zenity(&client, &b, "Dialog of B", "/tmp/b.out").await;
    for (sid, own, other) in [
        (&a, "Dialog of A", "Dialog of B"),
        (&b, "Dialog of B", "Dialog of A"),
    ] {
        let (view, _) = view_until(
            &client,
            sid,
            own,
            "the session's own dialog",
            Duration::from_secs(30),
            |v| find(v, "button", "OK"),
        )
        .await;
        let all = serde_json::to_string(&view).unwrap();
        assert!(
            all.contains(own) && !all.contains(other),
            "{own} only: {all}"
        );
        let r = call(
            &client,
            "computer_observe",
            json!({ "session_id": sid, "view": "text", "window": other }),
        )
        .await;
        assert!(
            is_error(&r) && text(&r).contains("`window`"),
            "{}",
            text(&r)
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_writer_window_lists_its_document_area_and_its_menus_items() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let sid = start(&client, "writer").await;
    let launched = call(
        &client,
        "launch_app",
        json!({ "session_id": sid, "app": "libreoffice-writer" }),
    )
    .await;
    assert!(!is_error(&launched), "{}", text(&launched));
    let (view, document) = view_until(
        &client,
        &sid,
        "Writer",
        "Writer's document area",
        Duration::from_secs(60),
        |v| {
            nodes(v)
                .into_iter()
                .find(|n| n["role"].as_str().unwrap_or("").starts_with("document"))
        },
    )
    .await;
    assert_eq!(view["source"], "atspi");
    assert!(
        document["bounds"]["width"].as_u64().unwrap_or(0) > 100,
        "{document}"
    );

    // The menu bar's Help menu opens in a popup of its own, whose items
    // LibreOffice keeps under the window's menu bar, not in a top-level.
    let help = find(&view, "menu", "Help").expect("the menu bar's Help menu");
    let about = menu_item(
        &client,
        &sid,
        json!({ "type": "click", "ref": help["ref"] }),
        "Soffice",
        "About LibreOffice",
    )
    .await;
    let settling = json!({ "settle": "quiet", "quiet_ms": 500, "settle_ms": 5000 });
    let r = act_with(
        &client,
        &sid,
        json!([{ "type": "click", "ref": about }]),
        settling,
    )
    .await;
    // The dialog's frame is an override-redirect window of the window
    // manager's, and no popup.
    assert!(
        r["effects"][0]["popups_opened"]
            .as_array()
            .is_none_or(|p| p.is_empty()),
        "{}",
        serde_json::to_string(&r["effects"]).unwrap()
    );
    view_until(
        &client,
        &sid,
        "About LibreOffice",
        "the About dialog",
        Duration::from_secs(20),
        |v| find(v, "dialog", "About LibreOffice"),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_page_in_the_browser_is_read_and_pressed_by_ref() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let sid = start(&client, "page by ref").await;
    write_files(
        &client,
        &sid,
        &[(
            "/home/computer/probe.html",
            "<!doctype html><title>Probe page</title><h1 id=h>Waiting</h1><button onclick=\"h.textContent='Pressed'\">Press me</button> <a href=\"#docs\">Read the docs</a>",
        )],
    )
    .await;
    ok(
        &client,
        "open_path",
        json!({ "session_id": sid, "target": "/home/computer/probe.html" }),
    )
    .await;
    let result = call(
        &client,
        "computer_observe",
        json!({ "session_id": sid, "view": "both" }),
    )
    .await;
    assert!(!is_error(&result), "{}", text(&result));
    let said = text(&result);
    assert!(
        said.contains("button \"Press me\"") && said.contains("link \"Read the docs\""),
        "{said}"
    );
    let view = result.structured_content.clone().unwrap()["text_view"].clone();
    assert_eq!(view["source"], "page");
    let button = find(&view, "button", "Press me").unwrap();
    act(
        &client,
        &sid,
        json!([{ "type": "click", "ref": button["ref"] }]),
    )
    .await;
    view_until(
        &client,
        &sid,
        "Chromium",
        "the pressed heading",
        Duration::from_secs(5),
        |v| find(v, "heading", "Pressed"),
    )
    .await;
}

/// Menus and dropdowns are windows no window list names: the desktop's
/// menu, a page's context menu and a `<select>`'s dropdown each show in
/// the effects of the click that opened them and in the text view's
/// popups, with where they are, so the next click can aim at them; the
/// window manager's menus and Chromium's context menu list their items
/// with refs, and a click on one runs it; the open `<select>`'s options are
/// placed in its dropdown, and a click on one's ref chooses it.
#[tokio::test(flavor = "multi_thread")]
async fn menus_and_dropdowns_show_as_popups_in_effects_and_the_text_view() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let sid = start(&client, "popups").await;
    ok(&client, "computer_observe", json!({ "session_id": sid })).await;

    // A popup named by the effects of `actions`, and then by a text view.
    let shows_popup = |actions: Value, of: &'static str| {
        let (client, sid) = (&client, &sid);
        async move {
            // Until the screen is still, as an agent waits for a menu: a
            // fixed 100 ms ended before a busy machine's Chromium mapped
            // its dropdown.
            let settling = json!({ "settle": "quiet", "quiet_ms": 500, "settle_ms": 5000 });
            let r = act_with(client, sid, actions, settling).await;
            let opened: Vec<String> = r["effects"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|e| e["popups_opened"].as_array().cloned().unwrap_or_default())
                .filter_map(|p| p.as_str().map(str::to_string))
                .collect();
            assert!(
                opened.iter().any(|p| p.contains(of)),
                "the click's effects name a popup {of}: {}",
                serde_json::to_string(&r["effects"]).unwrap()
            );
            let result = call(
                client,
                "computer_observe",
                json!({ "session_id": sid, "view": "text" }),
            )
            .await;
            let said = text(&result);
            assert!(
                said.contains("Popups over the windows") && said.contains(of),
                "the text view lists the popup {of}: {said}"
            );
            // Esc closes every kind; a later view lists none.
            act(client, sid, json!([{ "type": "key", "key": "esc" }])).await;
            let started = Instant::now();
            loop {
                let result = call(
                    client,
                    "computer_observe",
                    json!({ "session_id": sid, "view": "text" }),
                )
                .await;
                let view = &result.structured_content.clone().unwrap()["text_view"];
                if view["popups"].as_array().is_none_or(|p| p.is_empty()) {
                    break;
                }
                assert!(
                    started.elapsed() < Duration::from_secs(5),
                    "the popup {of} to close: {}",
                    text(&result)
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    };

    // The desktop's menu: a right click on the empty desktop.
    shows_popup(
        json!([{ "type": "click", "x": 900, "y": 600, "button": "right" }]),
        "",
    )
    .await;

    // Fluxbox draws its menus' items itself: they are listed from its
    // menu files, each with a ref, in the effects and the text view, and
    // a click on one by ref runs it. The desktop menu opens a terminal...
    let terminal = menu_item(&client, &sid, right_click(900, 600), "Fluxbox", "Terminal").await;
    act(&client, &sid, json!([{ "type": "click", "ref": terminal }])).await;
    let (_, xterm) = view_until(
        &client,
        &sid,
        "",
        "the terminal the menu opened",
        Duration::from_secs(15),
        |v| {
            v["windows"]
                .as_array()?
                .iter()
                .find(|w| {
                    w["class"]
                        .as_str()
                        .is_some_and(|c| c.eq_ignore_ascii_case("xterm"))
                })
                .cloned()
        },
    )
    .await;
    // ...and its title bar's menu closes it.
    let at = |key: &str| xterm[key].as_i64().unwrap();
    let title_bar = (at("x") + at("width") / 2, at("y") - 8);
    let close = menu_item(
        &client,
        &sid,
        right_click(title_bar.0, title_bar.1),
        "Fluxbox",
        "Close",
    )
    .await;
    act(&client, &sid, json!([{ "type": "click", "ref": close }])).await;
    view_until(
        &client,
        &sid,
        "",
        "the terminal closed from its menu",
        Duration::from_secs(15),
        |v| {
            let windows = v["windows"].as_array()?;
            let gone = !windows.iter().any(|w| w["id"] == xterm["id"]);
            gone.then_some(())
        },
    )
    .await;

    write_files(
        &client,
        &sid,
        &[(
            "/home/computer/choices.html",
            "<!doctype html><title>Choices</title><select id=s style='font-size:20px'><option>Apple</option><option>Banana</option><option>Cherry</option></select><p style='height:300px'>Right-click here</p>",
        )],
    )
    .await;
    ok(
        &client,
        "open_path",
        json!({ "session_id": sid, "target": "/home/computer/choices.html" }),
    )
    .await;
    let (_, select) = view_until(
        &client,
        &sid,
        "Chromium",
        "the page's select",
        Duration::from_secs(10),
        |v| find(v, "combo", ""),
    )
    .await;
    shows_popup(
        json!([{ "type": "click", "ref": select["ref"] }]),
        "Chromium",
    )
    .await;

    // An option of the open list, clicked by ref, is chosen. The select
    // is opened where the first view placed it: the latest view, whose
    // refs hold, was taken inside `shows_popup`.
    let at = |key: &str| select["bounds"][key].as_i64().unwrap();
    act(
        &client,
        &sid,
        json!([{ "type": "click", "x": at("x") + at("width") / 2, "y": at("y") + at("height") / 2 }]),
    )
    .await;
    let (_, cherry) = view_until(
        &client,
        &sid,
        "Chromium",
        "the open list's options placed on the screen",
        Duration::from_secs(10),
        |v| find(v, "option", "Cherry").filter(|o| o["bounds"].is_object()),
    )
    .await;
    act(
        &client,
        &sid,
        json!([{ "type": "click", "ref": cherry["ref"] }]),
    )
    .await;
    view_until(
        &client,
        &sid,
        "Chromium",
        "Cherry chosen and the list closed",
        Duration::from_secs(10),
        |v| {
            find(v, "combo", "").filter(|s| {
                s["value"] == "Cherry"
                    && !s["states"]
                        .as_array()
                        .is_some_and(|st| st.iter().any(|x| x == "expanded"))
            })
        },
    )
    .await;

    shows_popup(
        // Below the select, on the page's 300 px tall paragraph.
        json!([{ "type": "click", "x": 300, "y": 300, "button": "right" }]),
        "menu of Chromium @ 300,300",
    )
    .await;

    // Chromium's context menu lists its items (over AT-SPI), and one
    // clicked by ref runs: the page's source opens in a tab of its own,
    // which Chromium titles with the file's name, not the page's title.
    let source = menu_item(
        &client,
        &sid,
        right_click(300, 300),
        "Chromium",
        "View page source",
    )
    .await;
    let r = act(&client, &sid, json!([{ "type": "click", "ref": source }])).await;
    assert!(
        r["effects"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|e| e["page"]["url"]
                .as_str()
                .is_some_and(|u| u.starts_with("view-source:"))),
        "the click's effects name the source page: {}",
        serde_json::to_string(&r["effects"]).unwrap()
    );
    view_until(
        &client,
        &sid,
        "",
        "the page's source, opened from the context menu",
        Duration::from_secs(15),
        |v| {
            v["windows"]
                .as_array()?
                .iter()
                .find(|w| {
                    w["title"]
                        .as_str()
                        .is_some_and(|t| t.starts_with("choices.html"))
                })
                .cloned()
        },
    )
    .await;
}
