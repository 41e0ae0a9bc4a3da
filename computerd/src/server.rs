//! Starting computerd: viewer key, sessions, reaper, the API listener and
//! the viewer's listener.

use crate::api::{router, App};
use crate::apps::Launcher;
use crate::browser::{run_cookie_sync, BrowserSettings, Browsers};
use crate::config::Config;
use crate::desktop::Desktop;
use crate::devtools::{run_idle_stop, DevTools};
use crate::handoff_desk::HandoffDesk;
use crate::launcher::{self, LauncherApp};
use crate::recording::Recordings;
use crate::screens::{Companion, ScreenPaths};
use crate::sessions::{run_reaper, run_unused_stop, Sessions};
use crate::viewer::http::ViewerApp;
use crate::viewer::{Guard, ViewerHub};
use crate::viewer_key::ViewerKey;
use computer_protocol::{ComputerInfo, EndReason};
use futures::FutureExt;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Serves until `shutdown` completes, then ends every session (closing their
/// screens) before returning.
pub async fn serve(
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let config = Arc::new(config);
    let key = ViewerKey::load_or_create(&config.home)?;
    // Before any screen: every Xvnc starts with this cookie.
    crate::x_auth::install(&crate::viewer_key::state_dir(&config.home))?;
    let launcher_listener = bind(config.launcher_listen, "COMPUTERD_LAUNCHER_LISTEN").await?;
    let launcher_token = launcher::new_token();
    let launcher_env = launcher::environment(launcher_listener.local_addr()?, &launcher_token);
    let browsers = Arc::new(Browsers::new(BrowserSettings {
        home: config.home.clone(),
        devtools_port_base: config.devtools_port_base,
        env: launcher_env.clone(),
    }));
    let apps = Arc::new(Launcher {
        browsers: Arc::clone(&browsers),
        home: config.home.clone(),
        env: launcher_env.clone(),
    });
    let devtools = DevTools::new(config.home.clone(), launcher_env.clone());
    let paths = ScreenPaths {
        home: config.home.clone(),
        vnc_password_file: key.vnc_password_file.clone(),
        fluxbox_dir: config.fluxbox_dir.clone(),
        display_base: config.display_base,
        rfb_port_base: config.rfb_port_base,
        rfb_interface: config.rfb_interface.clone(),
        companions: vec![
            Arc::clone(&devtools) as Arc<dyn Companion>,
            Arc::clone(&browsers) as Arc<dyn Companion>,
        ],
        env: launcher_env,
    };
    let recordings = Arc::new(Recordings::new(&config.home, Arc::clone(&browsers)));
    let sessions = Arc::new(Sessions::new(
        Arc::clone(&config),
        paths,
        Arc::clone(&recordings),
    ));
    let hub = ViewerHub::new();
    let info = ComputerInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        boot_id: uuid::Uuid::new_v4().to_string(),
        viewer_key: key.key.clone(),
        home: config.home.display().to_string(),
    };
    let listener = bind(config.listen, "COMPUTERD_LISTEN").await?;
    let viewer_listener = bind(config.viewer_listen, "COMPUTERD_VIEWER_LISTEN").await?;
    let bound = listener.local_addr()?;
    let viewer_bound = viewer_listener.local_addr()?;
    check_viewer_files(&config);

    let reaper = tokio::spawn(run_reaper(Arc::clone(&sessions)));
    let unused = Arc::new(tokio::sync::Notify::new());
    let unused_stop = tokio::spawn(run_unused_stop(Arc::clone(&sessions), Arc::clone(&unused)));
    let cookie_sync = tokio::spawn(run_cookie_sync(Arc::clone(&browsers)));
    let idle_stop = tokio::spawn(run_idle_stop(Arc::clone(&devtools)));
    let app = Arc::new(App {
        config: Arc::clone(&config),
        sessions: Arc::clone(&sessions),
        info,
        viewer: Arc::clone(&hub),
        launcher: Arc::clone(&apps),
        handoffs: Arc::new(HandoffDesk::new(
            Arc::clone(&sessions),
            Arc::clone(&browsers),
            Arc::clone(&devtools),
        )),
        devtools,
        desktop: Arc::new(Desktop::new(
            Arc::clone(&sessions),
            Arc::clone(&apps),
            Arc::clone(&browsers),
        )),
        browsers: Arc::clone(&browsers),
        recordings,
    });
    let launcher_app = Arc::new(LauncherApp {
        token: launcher_token,
        sessions: Arc::clone(&sessions),
        launcher: apps,
    });
    let viewer = Arc::new(ViewerApp {
        guard: Guard::for_viewer(config.port_base, viewer_bound, key.key.expose().to_string()),
        sessions: Arc::clone(&sessions),
        browsers: Arc::clone(&browsers),
        hub,
        rfb_interface: config.rfb_interface.clone(),
        dir: config.viewer_dir.clone(),
    });

    // Tests and the container log read these lines.
    println!(
        "computerd {} listening on {bound}",
        env!("CARGO_PKG_VERSION")
    );
    println!("viewer on http://{viewer_bound}");
    println!(
        "viewer: {}  (VNC password: {})",
        computer_protocol::viewer_link(config.port_base, &key.key, None),
        computer_protocol::vnc_password(key.key.expose())
    );
    // An unused computer (COMPUTER_USE_IDLE_STOP) shuts down as SIGTERM
    // would have it: sessions end, browsers save, and the container stops.
    let shutdown = async move {
        tokio::select! {
            _ = shutdown => {}
            _ = unused.notified() => {}
        }
    }
    .shared();
    let api = crate::http_server::serve(listener, router(app), shutdown.clone());
    let viewer = crate::viewer::http::serve(viewer_listener, viewer, shutdown.clone());
    let launcher =
        crate::http_server::serve(launcher_listener, launcher::router(launcher_app), shutdown);
    let served = tokio::try_join!(api, viewer, launcher);
    reaper.abort();
    unused_stop.abort();
    // Screens close their browsers; a browser whose screen is already
    // gone closes here. Each saves its profile and cookies first.
    sessions.end_all(EndReason::ComputerRestarted).await;
    browsers.close_all().await;
    cookie_sync.abort();
    idle_stop.abort();
    served?;
    Ok(())
}

async fn bind(address: SocketAddr, setting: &str) -> anyhow::Result<TcpListener> {
    TcpListener::bind(address).await.map_err(|e| {
        anyhow::anyhow!("cannot listen on `{address}`: {e}; set {setting} to a free address")
    })
}

/// A computer without its viewer files still serves agents; the person
/// learns why the page is missing from the log.
fn check_viewer_files(config: &Config) {
    for file in ["index.html", "novnc/core/rfb.js"] {
        let path = config.viewer_dir.join(file);
        if !path.is_file() {
            tracing::warn!(
                "the viewer page is incomplete: `{}` is missing; set COMPUTERD_VIEWER_DIR to the folder with the viewer's files",
                path.display()
            );
        }
    }
}
