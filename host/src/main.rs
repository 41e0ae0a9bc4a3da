//! `computer-use-mcp`: with no arguments, the MCP server on stdio; `info`
//! prints the computer's state. Logs go to stderr: stdout carries MCP frames.

use computer_use_mcp::heartbeat;
use computer_use_mcp::mcp::{ComputerUseServer, Host};
use rmcp::ServiceExt;
use std::sync::Arc;

const HELP: &str =
    "computer-use-mcp: an MCP server that gives AI agents a shared Linux desktop in Docker

Usage:
  computer-use-mcp          serve MCP over stdio (add this command to your MCP client)
  computer-use-mcp info     show the version, image, Docker endpoint and the computer's state
  computer-use-mcp --help   this text
  computer-use-mcp --version
";

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None => {}
        Some("--version" | "-V") => {
            println!("computer-use-mcp {}", env!("CARGO_PKG_VERSION"));
            return Ok(());
        }
        Some("--help" | "-h" | "help") => {
            print!("{HELP}");
            return Ok(());
        }
        Some("info") => {
            let runtime = tokio::runtime::Runtime::new()?;
            let info = runtime.block_on(computer_use_mcp::info::gather());
            print!("{info}");
            return Ok(());
        }
        Some(other) => {
            eprint!("computer-use-mcp: unknown argument `{other}`\n\n{HELP}");
            std::process::exit(2);
        }
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("COMPUTER_USE_LOG")
                .unwrap_or_else(|_| "warn,computer_use_mcp=info".into()),
        )
        .init();
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(serve())
}

/// Serves until stdin closes, Ctrl+C or SIGTERM, then ends this process's
/// sessions, waiting at most 3 s.
async fn serve() -> anyhow::Result<()> {
    let host = Arc::new(Host::new());
    let beats = tokio::spawn(heartbeat::run(Arc::clone(&host)));
    let server = ComputerUseServer::new(Arc::clone(&host));
    let running = server.serve(rmcp::transport::stdio()).await?;
    let cancel = running.cancellation_token();
    let stop_signal = async {
        #[cfg(unix)]
        {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                    .expect("SIGTERM handler installs");
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    };
    tokio::select! {
        result = running.waiting() => {
            if let Err(e) = result {
                tracing::warn!("MCP service ended: {e}");
            }
        }
        _ = stop_signal => {
            cancel.cancel();
        }
    }
    beats.abort();
    heartbeat::end_all(&host).await;
    computer_use_mcp::open::remove_password_files();
    Ok(())
}
