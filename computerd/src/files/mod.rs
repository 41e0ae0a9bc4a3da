//! The working folder and the file tools (STUB: being written; the signatures
//! are the contract).

use computer_protocol::{
    ErrorCode, ListFilesResponse, ReadFileRequest, ReadFileResponse, WriteFileRequest,
    WriteFileResponse,
};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    #[error("not built yet")]
    NotBuilt,
}

impl FilesError {
    pub fn code(&self) -> ErrorCode {
        ErrorCode::Internal
    }
}

pub fn set_cwd(_home: &Path, _cwd: &Path, _path: &str) -> Result<PathBuf, FilesError> {
    Err(FilesError::NotBuilt)
}

pub fn list(_home: &Path, _cwd: &Path, _path: Option<&str>) -> Result<ListFilesResponse, FilesError> {
    Err(FilesError::NotBuilt)
}

pub fn read(_home: &Path, _cwd: &Path, _req: &ReadFileRequest) -> Result<ReadFileResponse, FilesError> {
    Err(FilesError::NotBuilt)
}

pub fn write(_home: &Path, _cwd: &Path, _req: &WriteFileRequest) -> Result<WriteFileResponse, FilesError> {
    Err(FilesError::NotBuilt)
}
