//! The walkthrough page a person opens, rendered by the host from the
//! package's `walkthrough.json` with the host's own template. The page the
//! computer wrote is replaced, never opened: code in the computer could
//! have written any page there.

use cap_std::fs::Dir;
use computer_protocol::recording::{walkthrough_page, Walkthrough, WALKTHROUGH_FORMAT};
use std::io;

/// Largest `walkthrough.json` read: steps hold at most 64 KiB of text each
/// and a recording at most 64 GiB, so a real one is far below this.
pub const WALKTHROUGH_MAX_BYTES: u64 = 256 << 20;

/// Reads and checks `walkthrough.json` in `folder`: a regular file (not a
/// link), within [`WALKTHROUGH_MAX_BYTES`], of a known format.
pub fn read_walkthrough(folder: &Dir) -> io::Result<Walkthrough> {
    let bytes =
        super::package_file::read_regular_in(folder, "walkthrough.json", WALKTHROUGH_MAX_BYTES)?;
    let walkthrough: Walkthrough = serde_json::from_slice(&bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("walkthrough.json is not a walkthrough ({e})"),
        )
    })?;
    if walkthrough.format != WALKTHROUGH_FORMAT {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "walkthrough.json has format `{}`; this computer-use-mcp reads `{WALKTHROUGH_FORMAT}`",
                walkthrough.format
            ),
        ));
    }
    Ok(walkthrough)
}

/// Writes `index.html` in `folder` from `walkthrough`: the data as the
/// host parsed it (unknown fields dropped) in the host's template.
pub fn write_page(folder: &Dir, walkthrough: &Walkthrough) -> io::Result<()> {
    let json = serde_json::to_string_pretty(walkthrough).map_err(io::Error::other)?;
    super::package_file::replace_in(folder, "index.html", walkthrough_page(&json).as_bytes())
}
