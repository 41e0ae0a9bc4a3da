//! `computer-use-mcp`: the MCP server on the host. This is a stub until the
//! host issue lands; it only answers `--version`.

fn main() -> anyhow::Result<()> {
    let arg = std::env::args().nth(1);
    match arg.as_deref() {
        Some("--version") => {
            println!("computer-use-mcp {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        _ => anyhow::bail!("the MCP server is not built yet; only `--version` works"),
    }
}
