//! Running commands (STUB: being written; the signatures are the contract).

use computer_protocol::ShellResult;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    #[error("could not start `bash`: {0}")]
    Spawn(std::io::Error),
}

pub struct ShellSpec {
    pub command: String,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
}

pub async fn run(_spec: ShellSpec) -> Result<ShellResult, ShellError> {
    Err(ShellError::Spawn(std::io::Error::other("not built yet")))
}
