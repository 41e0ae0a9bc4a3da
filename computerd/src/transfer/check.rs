//! The checks made before any data moves, with computer paths resolved as
//! the file tools resolve them.

use super::error::TransferError;
use crate::files::resolve;
use computer_protocol::archive::{describe_source, plan, Destination, Target};
use computer_protocol::transfer::Found;
use computer_protocol::{SourceRequest, TransferSource, UploadRequest, UploadTarget};
use std::path::{Path, PathBuf};

/// The argument computer paths come from, named in messages.
const ARG: &str = "computer_path";

/// Where `req` would land, refused now when it may not: the final path
/// exists without `overwrite`, kinds clash, or the folder cannot be written.
pub fn check_upload(
    home: &Path,
    cwd: &Path,
    req: &UploadRequest,
) -> Result<UploadTarget, TransferError> {
    let target = upload_target(home, cwd, req)?;
    Ok(UploadTarget {
        path: target.path.display().to_string(),
        exists: target.found != Found::Nothing,
    })
}

pub(super) fn upload_target(
    home: &Path,
    cwd: &Path,
    req: &UploadRequest,
) -> Result<Target, TransferError> {
    let path = resolve(home, cwd, &req.path);
    Ok(plan(&Destination {
        path: &path,
        trailing_slash: req.path.len() > 1 && req.path.ends_with('/'),
        name: &req.name,
        kind: req.kind,
        overwrite: req.overwrite,
        // The computer is Linux.
        windows_names: false,
        arg: ARG,
    })?)
}

/// The file or folder a download of `req` sends, and its absolute path.
pub fn describe(
    home: &Path,
    cwd: &Path,
    req: &SourceRequest,
) -> Result<(PathBuf, TransferSource), TransferError> {
    let path = resolve(home, cwd, &req.path);
    let (name, kind) = describe_source(&path, ARG)?;
    let source = TransferSource {
        path: path.display().to_string(),
        name,
        kind,
    };
    Ok((path, source))
}
