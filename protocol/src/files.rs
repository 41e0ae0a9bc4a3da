//! The working folder and the file tools.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetCwdRequest {
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SetCwdResponse {
    /// The new absolute working folder.
    pub path: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListFilesRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FileType {
    File,
    Dir,
    Symlink,
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileEntry {
    pub name: String,
    #[serde(rename = "type")]
    pub file_type: FileType,
    pub size: u64,
    /// RFC 3339, UTC.
    pub modified: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ListFilesResponse {
    /// The absolute folder listed.
    pub path: String,
    /// Folders first, then the rest, each group by name.
    pub entries: Vec<FileEntry>,
    /// Entries left out past the 1000-entry cap.
    pub more: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadFileRequest {
    pub path: String,
    /// First line to read, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Number of lines to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReadFileResponse {
    Text {
        /// The absolute path read.
        path: String,
        text: String,
        /// Lines in the whole file.
        total_lines: u64,
        /// Set when the text was shortened or a range was read: says what was
        /// left out and how to read the rest.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    Image {
        path: String,
        /// `image/png` or `image/jpeg`.
        mime: String,
        data_base64: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteFileRequest {
    pub path: String,
    pub content: String,
}

impl WriteFileRequest {
    /// Why `content` is refused: over [`crate::limits::WRITE_MAX_BYTES`].
    /// The host checks it before sending, so the agent gets this message
    /// rather than a transport's limit.
    pub fn size_problem(&self) -> Option<String> {
        let size = self.content.len();
        (size > crate::limits::WRITE_MAX_BYTES).then(|| format!(
            "`content` is {size} bytes, over the {}-byte (10 MB) limit of `write_file` for `{}`: write the file in parts with `shell`, or copy it with `file_transfer`",
            crate::limits::WRITE_MAX_BYTES,
            self.path
        ))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WriteFileResponse {
    /// The absolute path written.
    pub path: String,
    pub bytes: u64,
}

#[cfg(test)]
mod write_tests {
    use super::*;

    #[test]
    fn content_over_ten_megabytes_is_refused() {
        let mut req = WriteFileRequest {
            path: "~/big.txt".into(),
            content: "x".repeat(crate::limits::WRITE_MAX_BYTES),
        };
        assert_eq!(req.size_problem(), None);
        req.content.push('x');
        let e = req.size_problem().unwrap();
        assert!(e.starts_with("`content` is 10485761 bytes, over the 10485760-byte (10 MB) limit of `write_file` for `~/big.txt`"), "{e}");
    }
}
