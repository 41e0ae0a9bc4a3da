//! The launcher: a loopback-only listener (container port 7071) where the
//! screens' menus and `xdg-open` ask computerd to open the browser or a
//! terminal on their own screen, so each screen keeps one Chromium with
//! the shared logins; and where the agent's shell puts text on its
//! screen's clipboard (`computer-use-launch clipboard`) or starts a
//! desktop program (`computer-use-launch run`), which its own X programs
//! cannot. Those two are refused on a screen a person holds; the browser
//! and the terminal are not, as the person's own menu opens them.
//!
//! Callers prove they run on the computer with a token computerd hands to
//! every program it starts (`COMPUTER_USE_LAUNCHER_TOKEN`, beside
//! `COMPUTER_USE_LAUNCHER_URL`). A web page in a browser can reach
//! 127.0.0.1 too, but cannot read that variable, and a request with an
//! `Authorization` header from a page needs a CORS preflight this listener
//! never grants.

use crate::apps::{Launcher, OnScreen};
use crate::bearer::bearer_is;
use crate::browser::BrowserScreen;
use crate::http_error::ApiError;
use crate::screens::Screen;
use crate::sessions::{Session, Sessions};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use axum::{Json, Router};
use computer_protocol::{endpoints, ClipboardRequest, ErrorCode, LauncherRequest, RunRequest};
use std::sync::Arc;

/// Variable names every program on a screen gets.
pub const URL_VAR: &str = "COMPUTER_USE_LAUNCHER_URL";
pub const TOKEN_VAR: &str = "COMPUTER_USE_LAUNCHER_TOKEN";

pub struct LauncherApp {
    pub token: String,
    pub sessions: Arc<Sessions>,
    pub launcher: Arc<Launcher>,
}

/// A fresh random token for this run of computerd.
pub fn new_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The variables that let a program on the computer call the launcher.
pub fn environment(address: std::net::SocketAddr, token: &str) -> Vec<(String, String)> {
    vec![
        (URL_VAR.to_string(), format!("http://{address}")),
        (TOKEN_VAR.to_string(), token.to_string()),
    ]
}

pub fn router(app: Arc<LauncherApp>) -> Router {
    Router::new()
        .route(endpoints::LAUNCH, post(launch))
        .route(endpoints::CLIPBOARD, post(clipboard))
        .route(endpoints::RUN, post(run))
        .fallback(crate::http_error::not_found)
        .with_state(app)
}

#[derive(serde::Serialize)]
struct Launched {
    summary: String,
}

async fn launch(
    State(app): State<Arc<LauncherApp>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Json<Launched>, ApiError> {
    check_token(&app, &headers)?;
    let req: LauncherRequest = serde_json::from_slice(&body)
        .map_err(|e| ApiError::invalid(format!("the launcher request is not valid: {e}; send {{\"display\": \":N\", \"app\": \"browser\"|\"terminal\", \"uri\": optional}}")))?;
    let display = display_number(&req.display)?;
    let app_name = req.app.trim().to_lowercase();
    if app_name != "browser" && app_name != "terminal" {
        return Err(ApiError::invalid(format!(
            "`app` is `{}`: the launcher opens `browser` or `terminal`",
            req.app
        )));
    }
    let (session, screen) = screen_on(&app, display)?;
    // Not refused on a held screen: the person's own menu opens the
    // browser and the terminal through here.
    let on = OnScreen {
        screen: BrowserScreen::of(&screen),
        cwd: session.cwd(),
    };
    let opened = app
        .launcher
        .launch(&on, &app_name, req.uri.as_deref())
        .await?;
    Ok(Json(Launched {
        summary: opened.summary,
    }))
}

/// Puts a file's text on the clipboard of the caller's screen.
async fn clipboard(
    State(app): State<Arc<LauncherApp>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Json<Launched>, ApiError> {
    check_token(&app, &headers)?;
    let req: ClipboardRequest = serde_json::from_slice(&body).map_err(|e| {
        ApiError::invalid(format!("the clipboard request is not valid: {e}; send {{\"display\": \":N\", \"path\": \"/absolute/file\"}}"))
    })?;
    let display = display_number(&req.display)?;
    let (session, screen) = screen_on(&app, display)?;
    session.check_free()?;
    crate::apps::clipboard::put(screen.env(), &req.path)
        .await
        .map_err(|e| ApiError::invalid(e.to_string()))?;
    Ok(Json(Launched {
        summary: format!(
            "the text of {} is on the clipboard of display :{display}: press ctrl+v to paste it",
            req.path
        ),
    }))
}

/// Arguments of a `run` request at most, and bytes of them together.
const RUN_ARGS_MAX: usize = 256;
const RUN_BYTES_MAX: usize = 64 * 1024;

/// Starts a program on the caller's screen as a desktop program.
async fn run(
    State(app): State<Arc<LauncherApp>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Json<Launched>, ApiError> {
    check_token(&app, &headers)?;
    let req: RunRequest = serde_json::from_slice(&body).map_err(|e| {
        ApiError::invalid(format!("the run request is not valid: {e}; send {{\"display\": \":N\", \"argv\": [\"program\", \"arg\", ...]}}"))
    })?;
    let display = display_number(&req.display)?;
    let bytes: usize = req.argv.iter().map(String::len).sum();
    if req.argv.is_empty() || req.argv[0].is_empty() {
        return Err(ApiError::invalid(
            "`argv` is empty: give the program to run, then its arguments",
        ));
    }
    if req.argv.len() > RUN_ARGS_MAX || bytes > RUN_BYTES_MAX {
        return Err(ApiError::invalid(format!(
            "`argv` has {} arguments of {bytes} bytes, over {RUN_ARGS_MAX} arguments or {RUN_BYTES_MAX} bytes: put the work in a script and run that",
            req.argv.len()
        )));
    }
    let (session, screen) = screen_on(&app, display)?;
    session.check_free()?;
    let on = OnScreen {
        screen: BrowserScreen::of(&screen),
        cwd: session.cwd(),
    };
    app.launcher.run_detached(&on, &req.argv)?;
    Ok(Json(Launched {
        summary: format!(
            "started `{}` on display :{display} as a desktop program",
            req.argv[0]
        ),
    }))
}

/// The session whose screen is on display `:display`, and that screen.
fn screen_on(app: &LauncherApp, display: u32) -> Result<(Arc<Session>, Arc<Screen>), ApiError> {
    app.sessions.screen_on_display(display).ok_or_else(|| {
        ApiError::new(
            ErrorCode::NotFound,
            format!("no session's screen is on display :{display}"),
        )
    })
}

fn check_token(app: &LauncherApp, headers: &HeaderMap) -> Result<(), ApiError> {
    if bearer_is(headers, &app.token) {
        return Ok(());
    }
    Err(ApiError::new(
        ErrorCode::Unauthorized,
        format!("missing or wrong launcher token: send `Authorization: Bearer ${TOKEN_VAR}`, which programs started on a screen have"),
    ))
}

/// The display number in a `DISPLAY` value such as `:3` or `:3.0`.
fn display_number(given: &str) -> Result<u32, ApiError> {
    given
        .trim()
        .trim_start_matches(':')
        .split('.')
        .next()
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| {
            ApiError::invalid(format!(
                "`display` is `{given}`: use the `DISPLAY` of a screen, such as `:3`"
            ))
        })
}
