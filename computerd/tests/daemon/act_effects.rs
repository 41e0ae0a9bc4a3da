//! What each action of `computer_act` changed, against a real computerd
//! with real Xvnc screens and a real Chromium: a click on the bare desktop
//! changes nothing, a button that opens a window says so, and a link says
//! where it went. What the watch costs is timed in `x11_input_capture`.

use crate::common::Daemon;
use axum::response::Html;
use axum::routing::get;
use serde_json::{json, Value};

/// A page that is one big link to `/next`, one big button that opens a
/// window, and the page the link leads to.
async fn start_site() -> String {
    let cover = "position:fixed;inset:0;width:100%;height:100%;font-size:40px";
    let link = format!(
        "<!doctype html><title>the link</title><a href='/next' style='{cover};display:block'>next</a>"
    );
    // The button flashes from the click until the window it opened has
    // loaded, like a page showing it is busy: the act's quiet settle then
    // lasts exactly as long as Chromium takes, however busy the machine.
    let opener = format!(
        "<!doctype html><title>the opener</title>\
         <style>.busy{{animation:flash .1s steps(2) infinite}}\
         @keyframes flash{{from{{background:#fff}}to{{background:#888}}}}</style>\
         <button style='{cover}' onclick='opened(this)'>open</button>\
         <script>function opened(button){{\
           button.classList.add('busy');\
           const w=window.open('/next','popup','width=420,height=320');\
           const done=setInterval(()=>{{\
             if(w.location.pathname==='/next'&&w.document.readyState==='complete'){{\
               clearInterval(done);button.classList.remove('busy');}}}},20);}}</script>"
    );
    let app = axum::Router::new()
        .route("/link", get(move || async move { Html(link) }))
        .route("/opener", get(move || async move { Html(opener) }))
        .route(
            "/next",
            get(|| async { Html("<!doctype html><title>the next page</title><h1>next</h1>") }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

async fn act(d: &Daemon, sid: &str, body: Value) -> Value {
    d.ok(&format!("/v1/sessions/{sid}/act"), body).await
}

/// The effects of a response, without the image, for messages.
fn effects(r: &Value) -> &Value {
    &r["effects"]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_click_on_the_bare_desktop_changed_nothing() {
    crate::common::require_x_programs();
    let d = Daemon::start().await;
    let sid = d.create_session("effects desktop").await;
    // The screen is handed out once its desktop is drawn.
    let screen = d.open_screen(&sid).await;
    let r = act(
        &d,
        &sid,
        json!({"actions": [{"type": "click", "x": 640, "y": 300}], "settle": "quiet", "settle_ms": 2000}),
    )
    .await;
    let effect = &effects(&r)[0];
    assert_eq!(effect["index"], 0, "{}", effects(&r));
    assert_eq!(effect["changed"], false, "{}", effects(&r));
    assert!(effect.get("drawn").is_none(), "{}", effects(&r));
    assert!(effect["watched_ms"].as_u64().unwrap() >= 100);

    // A click followed at once by another is too briefly watched to tell;
    // a wait after it lends it its time.
    let r = act(
        &d,
        &sid,
        json!({"actions": [{"type": "click", "x": 600, "y": 300}, {"type": "click", "x": 610, "y": 300}, {"type": "wait", "ms": 150}], "observe": false}),
    )
    .await;
    // Without an observation the answer still names the screen.
    assert!(r.get("observation").is_none());
    assert_eq!(r["screen"], screen);
    let list = effects(&r).as_array().unwrap();
    assert_eq!(list.len(), 3, "{}", effects(&r));
    assert!(list[0].get("changed").is_none(), "{}", effects(&r));
    assert_eq!(list[1]["changed"], false, "{}", effects(&r));
    assert!(list[2].get("changed").is_none(), "{}", effects(&r));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_button_that_opens_a_window_and_a_link_say_what_they_did() {
    crate::common::require_programs(&[("chromium", "chromium")]);
    let site = start_site().await;
    let d = Daemon::start().await;
    let sid = d.create_session("effects browser").await;

    d.ok(
        &format!("/v1/sessions/{sid}/open"),
        json!({"target": format!("{site}/link")}),
    )
    .await;
    let r = act(
        &d,
        &sid,
        json!({"actions": [{"type": "click", "x": 640, "y": 450}], "settle_ms": 1500}),
    )
    .await;
    let effect = &effects(&r)[0];
    assert_eq!(effect["changed"], true, "{}", effects(&r));
    assert_eq!(
        effect["page"],
        json!({"url": format!("{site}/next"), "title": "the next page"}),
        "{}",
        effects(&r)
    );
    assert!(effect["drawn"]["width"].as_u64().unwrap() > 0);

    d.ok(
        &format!("/v1/sessions/{sid}/open"),
        json!({"target": format!("{site}/opener")}),
    )
    .await;
    let r = act(
        &d,
        &sid,
        json!({"actions": [{"type": "click", "x": 640, "y": 450}], "settle": "quiet", "settle_ms": 5000}),
    )
    .await;
    let effect = &effects(&r)[0];
    assert_eq!(effect["changed"], true, "{}", effects(&r));
    assert_eq!(
        effect["windows_opened"].as_array().map(Vec::len),
        Some(1),
        "{}",
        effects(&r)
    );
    assert_eq!(
        effect["windows_opened"][0],
        "the next page - Chromium",
        "{}",
        effects(&r)
    );
    assert_eq!(effect["focused"], "the next page - Chromium");
}
