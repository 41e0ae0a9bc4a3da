//! Archives for the `file_transfer` tests: packed by the engine, unpacked
//! where the host would put them, or crafted entry by entry.
//!
//! Used by `protocol/tests/local/archive.rs` and `computerd/tests/daemon/transfer.rs`.

use computer_protocol::archive::{
    pack, plan, unpack, ArchiveError, Destination, Progress, Target, UnpackOptions,
};
use computer_protocol::{ItemKind, TransferSummary};
use std::path::Path;

/// `source` packed under its own name.
pub fn packed(source: &Path, kind: ItemKind) -> Vec<u8> {
    let name = source.file_name().unwrap().to_str().unwrap();
    let (bytes, _) = pack(source, name, kind, Vec::new(), &Progress::default()).unwrap();
    bytes
}

/// Where a copy of `name` given `dest` lands, planned as the host plans it
/// (`host_path`, no trailing `/`, no Windows rules).
pub fn target(
    dest: &Path,
    name: &str,
    kind: ItemKind,
    overwrite: bool,
) -> Result<Target, ArchiveError> {
    plan(&Destination {
        path: dest,
        trailing_slash: false,
        name,
        kind,
        overwrite,
        windows_names: false,
        arg: "host_path",
    })
}

/// `bytes` unpacked at `target` with the default options.
pub fn unpacked(bytes: &[u8], target: &Target) -> Result<TransferSummary, ArchiveError> {
    unpack(
        bytes,
        target,
        UnpackOptions::default(),
        &Progress::default(),
    )
}

/// One raw tar entry appended to `out`, with any name or link at all: the
/// tar crate's own writer refuses the names an attacker would use. Folders
/// get mode 755, everything else 644.
pub fn raw_entry(out: &mut Vec<u8>, name: &str, kind: tar::EntryType, link: &str, data: &[u8]) {
    let mut header = tar::Header::new_gnu();
    {
        let gnu = header.as_gnu_mut().unwrap();
        gnu.name[..name.len()].copy_from_slice(name.as_bytes());
        gnu.linkname[..link.len()].copy_from_slice(link.as_bytes());
    }
    header.set_entry_type(kind);
    header.set_size(data.len() as u64);
    header.set_mode(if kind.is_dir() { 0o755 } else { 0o644 });
    header.set_cksum();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out.resize(out.len().div_ceil(512) * 512, 0);
}
