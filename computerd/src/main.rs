//! computerd's entry point: read the settings, log to stderr, serve until
//! SIGTERM or Ctrl+C.

// What runs never unwraps: a failure is an error its caller can tell
// about. Unit tests may (clippy.toml).
#![deny(clippy::unwrap_used)]

use computerd::config::{Config, ConfigError};
use tokio::signal::unix::{signal, SignalKind};

fn main() {
    computerd::heap::keep_freed_buffers();
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `relay` is the host's way in when the engine is remote; it runs as a
    // `docker exec` beside the daemon, never as the daemon.
    if args.first().map(String::as_str) == Some("relay") {
        let result = computerd::relay::target(&args[1..]).and_then(computerd::relay::run);
        if let Err(e) = result {
            eprintln!("computerd relay: {e}");
            std::process::exit(1);
        }
        return;
    }
    // `net-guard` is the computer's network guard, run as the command of a
    // container of its own beside the computer's (see netguard).
    if args.first().map(String::as_str) == Some("net-guard") {
        std::process::exit(computerd::netguard::main(&args[1..]));
    }
    let config = match Config::from_process() {
        Ok(c) => c,
        // `--help` and `--version` print on stdout and exit 0; a bad flag or
        // value prints why on stderr and exits 2.
        Err(ConfigError::Flags(e)) => e.exit(),
        Err(e) => {
            eprintln!("computerd: {e}");
            std::process::exit(2);
        }
    };
    // Still one thread here: the tokio runtime starts below. From now on no
    // child (shell commands, Xvnc, Fluxbox, browsers) inherits the token.
    computerd::config::remove_daemon_variables_from_environment();
    computerd::log_to_stderr();
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime starts");
    let result = runtime.block_on(async {
        let mut term = signal(SignalKind::terminate())?;
        let shutdown = async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        };
        computerd::server::serve(config, shutdown).await
    });
    if let Err(e) = result {
        eprintln!("computerd: {e:#}");
        std::process::exit(1);
    }
}
