//! `computer-use-mcp`: with no arguments (or `serve`), the MCP server on
//! stdio; `serve --http ADDR`, MCP over Streamable HTTP; `info` prints the
//! computer's state; `doctor` checks what the computer needs; `snapshot`
//! and `reset` save, restore and throw away the computer's files. Logs go to stderr: stdout carries MCP frames.

// What runs never unwraps: a failure is an error its caller can tell
// about. Unit tests may (clippy.toml).
#![deny(clippy::unwrap_used)]

use computer_use_mcp::serve;
use serve::http::HttpOptions;

const HELP: &str =
    "computer-use-mcp: an MCP server that gives AI agents a shared Linux desktop in Docker

Usage:
  computer-use-mcp          serve MCP over stdio (add this command to your MCP client)
  computer-use-mcp serve    the same
  computer-use-mcp serve --http 127.0.0.1:PORT [--allow-remote]
                            serve MCP over Streamable HTTP at http://127.0.0.1:PORT/mcp;
                            each client gets its own sessions. Needs
                            COMPUTER_USE_HTTP_TOKEN (at least 32 characters), sent by
                            clients as `Authorization: Bearer <token>`; browser origins
                            are refused unless listed in COMPUTER_USE_HTTP_ORIGINS
                            (comma-separated). Listens on loopback only unless
                            --allow-remote is given (then put a TLS proxy in front);
                            names clients reach it under besides the address it listens
                            on go in COMPUTER_USE_HTTP_HOSTS (comma-separated host or
                            host:port; required when listening on 0.0.0.0).
  computer-use-mcp info     show the version, image, Docker endpoint and the computer's state
  computer-use-mcp doctor [--json] [--deep]
                            check what the computer needs (settings, Docker, free disk,
                            the image, the computer's ports, computerd), one line each
                            with `ok`, `warn` or `err` and the fix; exit code 1 on any
                            `err`. --json prints one object: a `checks` list of
                            {name, status, detail, fix} (fix is null when ok).
                            --deep also opens a spare screen (starting the computer if
                            needed) and checks a screenshot, Chromium and DevTools, the
                            accessibility bus, the viewer page and WebSocket and a VNC
                            handshake, then ends it. Within 10 s, or 60 s with --deep
  computer-use-mcp review PATH
                            check a recording's package (stop_recording wrote it) against
                            its manifest and this server's signed record of the steps it
                            sent and frames it saw, naming each missing, changed or forged
                            one; write index.html again from walkthrough.json and open it
  computer-use-mcp review --unattested PATH
                            the same for a package without a host attestation, read as
                            the computer's own account
  computer-use-mcp review --list
                            list the recordings kept in the computer
  computer-use-mcp review --fetch ID [PATH]
                            bring one home as a package (default
                            computer-use-evidence/<task>-<UTC time>/ here)
  computer-use-mcp review --delete ID
                            delete an ended recording from the computer
  computer-use-mcp snapshot save NAME [--note TEXT]
                            save the computer's files (the container's changes and its
                            home) on its engine as snapshot NAME (1 to 64 of a-z 0-9 . _ -)
  computer-use-mcp snapshot list
                            its snapshots: name, time, size, image version, note
  computer-use-mcp snapshot restore NAME --yes [--end-sessions]
                            put the computer's files back as NAME saved them; refused
                            while sessions are live unless --end-sessions
  computer-use-mcp snapshot rm NAME --yes
                            delete a snapshot and the disk it holds
  computer-use-mcp reset --yes [--end-sessions]
                            back to a fresh computer: its image, an empty home
  computer-use-mcp --help   this text
  computer-use-mcp --version
";

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let http = match args.first().map(String::as_str) {
        None => None,
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
        Some("doctor") => {
            let runtime = tokio::runtime::Runtime::new()?;
            let code = runtime.block_on(computer_use_mcp::doctor::run(&args[1..]));
            std::process::exit(code);
        }
        Some("review") => {
            let runtime = tokio::runtime::Runtime::new()?;
            let code = runtime.block_on(computer_use_mcp::recording::review::run(&args[1..]));
            std::process::exit(code);
        }
        Some("snapshot") => {
            let runtime = tokio::runtime::Runtime::new()?;
            let code = runtime.block_on(computer_use_mcp::snapshot_cli::run(&args[1..]));
            std::process::exit(code);
        }
        Some("reset") => {
            let runtime = tokio::runtime::Runtime::new()?;
            let code = runtime.block_on(computer_use_mcp::snapshot_cli::run(&args));
            std::process::exit(code);
        }
        Some("serve") => match HttpOptions::parse(&args[1..]) {
            Ok(http) => http,
            Err(e) => {
                eprint!("computer-use-mcp: {e}\n\n{HELP}");
                std::process::exit(2);
            }
        },
        Some(other) => {
            eprint!("computer-use-mcp: unknown argument `{other}`\n\n{HELP}");
            std::process::exit(2);
        }
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("COMPUTER_USE_LOG")
                .unwrap_or_else(|_| "warn,computer_use_mcp=info".into()),
        )
        .init();
    let runtime = tokio::runtime::Runtime::new()?;
    let served = match http {
        None => runtime.block_on(serve::stdio::serve()),
        Some(options) => {
            if let Err(e) = runtime.block_on(serve::http::serve(options)) {
                eprintln!("computer-use-mcp: {e}");
                std::process::exit(2);
            }
            Ok(())
        }
    };
    // The sessions are ended by now. Dropping the runtime would wait for its
    // blocking threads, and the one reading stdin returns only at EOF: after
    // Ctrl+C or SIGTERM the client still holds stdin open, and the process
    // would hang until it let go.
    runtime.shutdown_background();
    served
}
