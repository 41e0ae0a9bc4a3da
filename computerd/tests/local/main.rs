//! The local tier: computerd's tests that need neither Docker nor an X
//! server, in one binary that the fast loop (`scripts/test-fast.sh`) runs:
//! files and shell commands as the daemon's modules run them, the files
//! under `image/` it relies on, and its settings as the binary reads them.

mod files;
mod image_files;
mod settings;
mod shell;
