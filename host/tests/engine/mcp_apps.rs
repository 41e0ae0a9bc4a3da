//! Apps other than the browser through the real host binary, in the real
//! image: `open_path` of a file Chromium does not show going through
//! `xdg-open` to its default app, a folder landing in the screen's own
//! Chromium, `launch_app` of programs on `PATH` with and without a `uri`,
//! and the desktop's right-click menu opening a terminal and the browser
//! through the launcher, each on the screen it was asked on; and the
//! shell's text reaching its screen's clipboard through the launcher.

use crate::support::docker::{desktop_x, shared_computer};
use crate::support::mcp::{
    connect, ok, screen_number, shell_ok as shell, start_session as start, Client,
};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// The screen's windows from the text view: `(title, class)`.
async fn windows(client: &Client, sid: &str) -> Vec<(String, String)> {
    let (o, _) = ok(
        client,
        "computer_observe",
        json!({ "session_id": sid, "view": "text", "max_nodes": 1 }),
    )
    .await;
    o["text_view"]["windows"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|w| {
            let field = |k: &str| w[k].as_str().unwrap_or("").to_string();
            (field("title"), field("class"))
        })
        .collect()
}

/// Polls the screen's windows until one's title or class holds `want`.
async fn wait_window(client: &Client, sid: &str, want: &str, limit: Duration) -> String {
    let deadline = Instant::now() + limit;
    loop {
        let listed = windows(client, sid).await;
        if let Some((title, _)) = listed
            .iter()
            .find(|(title, class)| title.contains(want) || class.to_lowercase().contains(want))
        {
            return title.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no window with `{want}` on the screen within {limit:?}: {listed:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The Chromium main processes (no `--type=` helpers) of the session's
/// screen: the computer is shared, and other tests' screens run their own.
async fn chromium_processes(client: &Client, sid: &str) -> Vec<String> {
    let n = screen_number(client, sid).await;
    let r = shell(
        client,
        sid,
        &format!(
            "ps -eo args= | grep -E '^/usr/lib/chromium/chromium .*/chromium/screen-{n} ' \\
             | grep -v -e '--type=' || true"
        ),
    )
    .await;
    r["stdout"]
        .as_str()
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn files_and_folders_open_with_their_default_app_on_the_sessions_screen() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let sid = start(&client, "default apps").await;
    // A PPM image: binary, and not a format Chromium shows, so xdg-open
    // picks its app (ImageMagick's `display`, from its desktop entry).
    let made = shell(
        &client,
        &sid,
        "mkdir -p pictures && magick -size 64x48 xc:orange pictures/swatch.ppm",
    )
    .await;
    assert_eq!(made["exit_code"], 0, "{made}");

    let (opened, _) = ok(
        &client,
        "open_path",
        json!({"session_id": sid, "target": "pictures/swatch.ppm"}),
    )
    .await;
    assert_eq!(opened["ready"], true, "{opened}");
    let active = opened["active_window"].as_str().unwrap_or("");
    assert!(
        active.contains("ImageMagick") && active.contains("swatch.ppm"),
        "the default app's window is not the active one: {opened}"
    );
    // It did not fall through to a browser.
    assert_eq!(
        chromium_processes(&client, &sid).await,
        Vec::<String>::new()
    );

    // A folder opens in the screen's own Chromium (the one with its
    // DevTools port), not in a second Chromium without its profile.
    ok(
        &client,
        "open_path",
        json!({"session_id": sid, "target": "pictures"}),
    )
    .await;
    wait_window(
        &client,
        &sid,
        "Index of /home/computer/pictures",
        Duration::from_secs(20),
    )
    .await;
    let n = screen_number(&client, &sid).await;
    let browsers = chromium_processes(&client, &sid).await;
    assert_eq!(browsers.len(), 1, "{browsers:?}");
    assert!(
        browsers[0].contains(&format!("--remote-debugging-port={}", 9221 + n)),
        "the folder opened in a Chromium that is not screen {n}'s: {browsers:?}"
    );
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn xdg_open_in_a_shell_returns_and_lands_on_the_sessions_screen() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let sid = start(&client, "xdg-open").await;
    // The screen opens with the first observation; the shell gets its DISPLAY.
    windows(&client, &sid).await;
    // An HTML fragment (`file` reads it as text/plain), an empty file and a
    // folder, before the screen's browser runs; then a file an app claims.
    // Debian's own xdg-open started a second Chromium in the foreground for
    // the first two and held the shell until its timeout.
    let opened = |command: &'static str| {
        let client = &client;
        let sid = &sid;
        async move {
            let (r, _) = ok(
                client,
                "shell",
                json!({"session_id": sid, "command": command, "timeout": 30}),
            )
            .await;
            assert_eq!(r["timed_out"], false, "`{command}` held the shell: {r}");
            assert_eq!(r["exit_code"], 0, "`{command}`: {r}");
            r
        }
    };
    opened("printf '<h1>Fragment</h1><p>x</p>' > frag.html && xdg-open frag.html").await;
    wait_window(&client, &sid, "frag.html", Duration::from_secs(30)).await;
    opened(": > empty.log && xdg-open empty.log").await;
    wait_window(&client, &sid, "empty.log", Duration::from_secs(30)).await;
    opened("mkdir -p notes && xdg-open notes").await;
    wait_window(&client, &sid, "Index of", Duration::from_secs(30)).await;
    let n = screen_number(&client, &sid).await;
    let browsers = chromium_processes(&client, &sid).await;
    assert_eq!(browsers.len(), 1, "{browsers:?}");
    assert!(
        browsers[0].contains(&format!("--remote-debugging-port={}", 9221 + n)),
        "xdg-open reached a Chromium that is not screen {n}'s: {browsers:?}"
    );

    let r = opened("magick -size 64x48 xc:orange swatch.ppm && xdg-open swatch.ppm").await;
    assert!(r["stdout"].as_str().unwrap_or("").contains("opened"), "{r}");
    wait_window(&client, &sid, "swatch.ppm", Duration::from_secs(30)).await;

    // What does not exist is an error at once.
    let (r, _) = ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": "xdg-open missing.txt", "timeout": 30}),
    )
    .await;
    assert_eq!(r["exit_code"], 2, "{r}");
    assert!(
        r["stderr"]
            .as_str()
            .unwrap_or("")
            .contains("does not exist"),
        "{r}"
    );
    client.cancel().await.ok();
}

/// A page of random pixels: its screenshot is as large as a frame gets.
const NOISE_PAGE: &str = "<!doctype html><title>Noise</title>
<style>html,body{margin:0;overflow:hidden}canvas{display:block}</style>
<canvas id=c></canvas><script>
const c = document.getElementById('c');
c.width = innerWidth; c.height = innerHeight;
const g = c.getContext('2d');
const image = g.createImageData(c.width, c.height);
for (let i = 0; i < image.data.length; i++) image.data[i] = (i % 4 == 3) ? 255 : Math.random() * 256;
g.putImageData(image, 0, 0);
</script>";

#[tokio::test(flavor = "multi_thread")]
async fn open_path_of_a_noisy_page_answers_with_its_frame() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let sid = start(&client, "noise").await;
    ok(
        &client,
        "write_file",
        json!({"session_id": sid, "path": "noise.html", "content": NOISE_PAGE}),
    )
    .await;
    // The answer carries the frame; a page of noise makes it a large one.
    let (opened, content) = ok(
        &client,
        "open_path",
        json!({"session_id": sid, "target": "noise.html"}),
    )
    .await;
    assert_eq!(opened["ready"], true, "{opened}");
    let png = content
        .content
        .iter()
        .find_map(|c| c.as_image().map(|i| i.data.len()))
        .expect("open_path returns the screenshot");
    assert!(
        png > 1024 * 1024,
        "the frame was only {png} bytes of base64"
    );
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn programs_on_path_open_on_the_sessions_screen_and_take_the_uri() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let a = start(&client, "programs a").await;
    let b = start(&client, "programs b").await;

    // `xev` has no desktop entry, and its window's title ("Event Tester")
    // and class do not hold its name; on a screen with no window yet.
    let (xev, _) = ok(
        &client,
        "launch_app",
        json!({"session_id": a, "app": "xev"}),
    )
    .await;
    assert_eq!(xev["ready"], true, "{xev}");
    assert_eq!(xev["active_window"], "Event Tester", "{xev}");

    // A `uri` reaches the program as its argument: `display` titles its
    // window with the file it shows.
    let made = shell(
        &client,
        &a,
        "magick -size 64x48 xc:teal /tmp/given.ppm && magick -size 64x48 xc:navy /tmp/entry.ppm",
    )
    .await;
    assert_eq!(made["exit_code"], 0, "{made}");
    let (shown, _) = ok(
        &client,
        "launch_app",
        json!({"session_id": a, "app": "display", "uri": "/tmp/given.ppm"}),
    )
    .await;
    assert_eq!(shown["ready"], true, "{shown}");
    assert_eq!(shown["active_window"], "ImageMagick: given.ppm", "{shown}");
    // The same through a desktop entry, whose `%F` takes the uri.
    let (entry, _) = ok(
        &client,
        "launch_app",
        json!({"session_id": a, "app": "display-im7.q16", "uri": "/tmp/entry.ppm"}),
    )
    .await;
    assert_eq!(entry["ready"], true, "{entry}");
    assert_eq!(entry["active_window"], "ImageMagick: entry.ppm", "{entry}");

    // All of it on a's screen; b's has none of it.
    let on_b = windows(&client, &b).await;
    assert!(
        on_b.iter()
            .all(|(title, _)| !title.contains("Event Tester") && !title.contains("ImageMagick")),
        "{on_b:?}"
    );
    client.cancel().await.ok();
}

/// The visible top-level windows at the root of the session's screen with
/// their geometry: Fluxbox's menus are such windows, and have no title.
async fn viewable_root_children(client: &Client, sid: &str) -> Vec<(i64, i64, i64, i64)> {
    let r = shell(
        client,
        sid,
        r#"for w in $(xwininfo -root -children | awk '$1 ~ /^0x/ {print $1}'); do xwininfo -id "$w" | awk '/Map State: IsViewable/ {v=1} /Absolute upper-left X/ {x=$NF} /Absolute upper-left Y/ {y=$NF} /^ *Width:/ {w=$NF} /^ *Height:/ {h=$NF} END {if (v) print x, y, w, h}'; done"#,
    )
    .await;
    r["stdout"]
        .as_str()
        .unwrap()
        .lines()
        .map(|line| {
            let n: Vec<i64> = line
                .split_whitespace()
                .map(|v| v.parse().unwrap())
                .collect();
            (n[0], n[1], n[2], n[3])
        })
        .collect()
}

/// Right-clicks the desktop at `(x, y)` and waits for the menu (Computer,
/// Browser, Terminal) to show near the pointer; returns its geometry.
async fn open_desktop_menu(client: &Client, sid: &str, x: i64, y: i64) -> (i64, i64, i64, i64) {
    let before = viewable_root_children(client, sid).await;
    ok(
        client,
        "computer_act",
        json!({"session_id": sid, "actions": [{"type": "click", "x": x, "y": y, "button": "right"}]}),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = viewable_root_children(client, sid).await;
        // The menu opens at the pointer (moved in when it would not fit).
        if let Some(menu) = now.iter().find(|w| {
            !before.contains(w) && (w.0 - x).abs() < 400 && (w.1 - y).abs() < 400 && w.3 > 20
        }) {
            return *menu;
        }
        assert!(
            Instant::now() < deadline,
            "no menu showed after a right click at {x},{y}: {now:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until the session's screen has a window manager (Fluxbox sets
/// `_NET_SUPPORTING_WM_CHECK` on the root), so a right click reaches it.
async fn wait_window_manager(client: &Client, sid: &str) {
    let r = shell(
        client,
        sid,
        "for i in $(seq 100); do xprop -root _NET_SUPPORTING_WM_CHECK | grep -q 'window id' && exit 0; sleep 0.1; done; exit 1",
    )
    .await;
    assert_eq!(r["exit_code"], 0, "Fluxbox never came up: {r}");
}

/// The menu's rows are its title, Browser and Terminal, of equal height.
fn menu_row(menu: (i64, i64, i64, i64), row: i64) -> Value {
    let (x, y, w, h) = menu;
    json!({"type": "click", "x": x + w / 2, "y": y + h * (2 * row + 1) / 6})
}

#[tokio::test(flavor = "multi_thread")]
async fn the_desktop_menu_opens_a_terminal_and_the_browser_on_its_screen() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let a = start(&client, "menu a").await;
    let b = start(&client, "menu b").await;
    // Screens open on first use: the agent's first look.
    for sid in [&a, &b] {
        ok(&client, "computer_observe", json!({ "session_id": sid })).await;
    }
    wait_window_manager(&client, &a).await;

    let menu = open_desktop_menu(&client, &a, 900, 600).await;
    ok(
        &client,
        "computer_act",
        json!({"session_id": a, "actions": [menu_row(menu, 2)]}),
    )
    .await;
    wait_window(&client, &a, "xterm", Duration::from_secs(20)).await;
    // The launcher's terminal (its font options), on a's display.
    let n = screen_number(&client, &a).await;
    // Other tests' screens may run terminals of their own.
    let terminals = shell(
        &client,
        &a,
        &format!(
            "for p in $(pgrep -x xterm); do d=$(tr '\\0' '\\n' </proc/$p/environ | grep '^DISPLAY='); \\
             [ \"$d\" = DISPLAY=:{n} ] && echo \"$(tr '\\0' ' ' </proc/$p/cmdline) $d\"; done; true"
        ),
    )
    .await;
    let terminals = terminals["stdout"].as_str().unwrap().trim().to_string();
    assert_eq!(
        terminals,
        format!("xterm -fa DejaVu Sans Mono -fs 11  DISPLAY=:{n}"),
        "one terminal, from computerd's launcher, on screen {n}"
    );

    // The browser from the same menu: the screen's own Chromium.
    let menu = open_desktop_menu(&client, &a, 1100, 700).await;
    ok(
        &client,
        "computer_act",
        json!({"session_id": a, "actions": [menu_row(menu, 1)]}),
    )
    .await;
    wait_window(&client, &a, "Chromium", Duration::from_secs(30)).await;
    let browsers = chromium_processes(&client, &a).await;
    assert_eq!(browsers.len(), 1, "{browsers:?}");
    assert!(
        browsers[0].contains(&format!("--remote-debugging-port={}", 9221 + n)),
        "{browsers:?}"
    );

    let on_b = windows(&client, &b).await;
    assert!(on_b.is_empty(), "b's screen got windows: {on_b:?}");
    client.cancel().await.ok();
}

/// The shell's own X programs cannot serve the clipboard (their X cookie is
/// untrusted), so `computer-use-launch clipboard` has computerd do it, from
/// a file or from stdin; a paste in a desktop program then gets the text.
#[tokio::test(flavor = "multi_thread")]
async fn the_shell_puts_text_on_its_screens_clipboard_through_the_launcher() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let sid = start(&client, "clipboard").await;
    windows(&client, &sid).await;
    let display = u64::from(screen_number(&client, &sid).await);
    let clipboard = || {
        desktop_x(
            &computer.name,
            display,
            "xclip -selection clipboard -o 2>/dev/null || true",
        )
    };

    // What the shell used to do no longer reaches the desktop.
    shell(
        &client,
        &sid,
        "printf 'by xclip' | xclip -selection clipboard -i 2>/dev/null; true",
    )
    .await;
    assert_ne!(clipboard(), "by xclip");

    let r = shell(
        &client,
        &sid,
        "printf 'Grüße, 世界\nline two' > paste.txt && computer-use-launch clipboard paste.txt",
    )
    .await;
    assert!(r["stdout"].as_str().unwrap().contains("ctrl+v"), "{r}");
    assert_eq!(clipboard(), "Grüße, 世界\nline two");
    shell(
        &client,
        &sid,
        "echo -n 'from stdin' | computer-use-launch clipboard",
    )
    .await;
    assert_eq!(clipboard(), "from stdin");

    let (r, _) = ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": "computer-use-launch clipboard missing.txt 2>&1; truncate -s 17M big.txt; computer-use-launch clipboard big.txt 2>&1"}),
    )
    .await;
    let said = r["stdout"].as_str().unwrap();
    assert!(
        said.contains("missing.txt") && said.contains("paste it in parts"),
        "{r}"
    );
    client.cancel().await.ok();
}
