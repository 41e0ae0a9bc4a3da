//! Starting computerd: viewer key, sessions, reaper, and the API listener.

use crate::api::{router, App};
use crate::config::Config;
use crate::screens::ScreenPaths;
use crate::sessions::{run_reaper, Sessions};
use crate::viewer_key::ViewerKey;
use computer_protocol::{ComputerInfo, EndReason};
use std::future::Future;
use std::sync::Arc;

/// Serves until `shutdown` completes, then ends every session (closing their
/// screens) before returning.
pub async fn serve(
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let config = Arc::new(config);
    let key = ViewerKey::load_or_create(&config.home)?;
    let paths = ScreenPaths {
        home: config.home.clone(),
        vnc_password_file: key.vnc_password_file.clone(),
        fluxbox_dir: config.fluxbox_dir.clone(),
        display_base: config.display_base,
        rfb_port_base: config.rfb_port_base,
        rfb_interface: config.rfb_interface.clone(),
    };
    let sessions = Arc::new(Sessions::new(Arc::clone(&config), paths));
    let info = ComputerInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        boot_id: uuid::Uuid::new_v4().to_string(),
        viewer_key: key.key.clone(),
        home: config.home.display().to_string(),
    };
    let reaper = tokio::spawn(run_reaper(Arc::clone(&sessions)));
    let app = Arc::new(App {
        config: Arc::clone(&config),
        sessions: Arc::clone(&sessions),
        info,
    });
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| {
            anyhow::anyhow!(
                "cannot listen on `{}`: {e}; set COMPUTERD_LISTEN to a free address",
                config.listen
            )
        })?;
    let bound = listener.local_addr()?;
    // Tests and the container log read these two lines.
    println!(
        "computerd {} listening on {bound}",
        env!("CARGO_PKG_VERSION")
    );
    println!(
        "viewer: http://127.0.0.1:{}/#key={}  (VNC password: {})",
        config.port_base, key.key, key.key
    );
    axum::serve(listener, router(app))
        .with_graceful_shutdown(shutdown)
        .await?;
    reaper.abort();
    sessions.end_all(EndReason::ComputerRestarted).await;
    Ok(())
}
