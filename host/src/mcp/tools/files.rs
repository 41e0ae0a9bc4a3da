//! set_cwd, list_files, read_file, write_file.

use super::ToolResult;
use crate::mcp::args::{Args, ListFilesArgs, ReadFileArgs, SetCwdArgs, WriteFileArgs};
use crate::mcp::result::{structured, with_image};
use crate::mcp::{ComputerUseServer, ToolError};
use computer_protocol::endpoints::{Endpoint, ListFiles, ReadFile, SetCwd, WriteFile};
use computer_protocol::{
    FileType, InvalidInput, ListFilesRequest, ListFilesResponse, ReadFileRequest, ReadFileResponse,
    SessionId, SetCwdRequest, SetCwdResponse, WriteFileRequest, WriteFileResponse,
};
use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Serialize;
use std::time::Duration;

const FILE_DEADLINE: Duration = Duration::from_secs(60);
const NOTHING_RUNS: &str = "nothing keeps running; try again";

/// read_file's structured result: a text (with its line count and any
/// note on what was left out), or the facts of the image sent beside it.
#[derive(Serialize, JsonSchema)]
struct FileRead {
    /// The absolute path read.
    path: String,
    /// Text files: the lines read.
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    /// Text files: how many lines the whole file has.
    #[serde(skip_serializing_if = "Option::is_none")]
    total_lines: Option<u64>,
    /// Text files: what was left out and how to read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    /// Images: `image/png` or `image/jpeg`.
    #[serde(skip_serializing_if = "Option::is_none")]
    mime: Option<String>,
}

impl ComputerUseServer {
    /// Calls file route `E` of session `session_id`.
    async fn file_call<E: Endpoint<Key = SessionId>>(
        &self,
        session_id: &SessionId,
        body: &E::Request,
    ) -> Result<E::Response, ToolError> {
        self.session_call::<E>(session_id, body, FILE_DEADLINE, NOTHING_RUNS)
            .await
    }
}

#[tool_router(router = file_tools, vis = "pub(crate)")]
impl ComputerUseServer {
    #[tool(
        name = "set_cwd",
        output_schema = schema_for_output::<SetCwdResponse>(),
        title = "Change the working folder",
        description = "Change the session's working folder (for shell and the file tools); `~` is home. Returns the absolute path.",
        annotations(
            title = "Change the working folder",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn set_cwd(&self, Parameters(args): Parameters<Args<SetCwdArgs>>) -> ToolResult {
        let a = args.read()?;
        let r = self
            .file_call::<SetCwd>(&a.session_id, &SetCwdRequest { path: a.path })
            .await?;
        Ok(structured(format!("Working folder is now {}", r.path), &r))
    }

    #[tool(
        name = "list_files",
        output_schema = schema_for_output::<ListFilesResponse>(),
        title = "List a folder",
        description = "List one folder, folders first: name, type (file, dir, symlink, other), size, modified time. At most 1000 entries, with a count of the rest.",
        annotations(
            title = "List a folder",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_files(&self, Parameters(args): Parameters<Args<ListFilesArgs>>) -> ToolResult {
        let a = args.read()?;
        let r = self
            .file_call::<ListFiles>(&a.session_id, &ListFilesRequest { path: a.path })
            .await?;
        let mut text = format!("{} ({} entries)\n", r.path, r.entries.len());
        for e in &r.entries {
            let kind = match e.file_type {
                FileType::Dir => "dir ",
                FileType::File => "file",
                FileType::Symlink => "link",
                FileType::Other => "other",
            };
            text.push_str(&format!(
                "{kind} {:>12} {} {}\n",
                e.size, e.modified, e.name
            ));
        }
        if r.more > 0 {
            text.push_str(&format!("... and {} more entries not listed (the limit is 1000); list a subfolder or use shell with `ls`/`find`\n", r.more));
        }
        Ok(structured(text, &r))
    }

    #[tool(
        name = "read_file",
        output_schema = schema_for_output::<FileRead>(),
        title = "Read a file",
        description = "Read a UTF-8 text file (offset: first line from 1, limit: lines), or a PNG/JPEG image up to 1 MB as an image. Long text keeps its first and last 15000 bytes, with a note on reading a range. Other binary files are refused: use shell or file_transfer.",
        annotations(
            title = "Read a file",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn read_file(&self, Parameters(args): Parameters<Args<ReadFileArgs>>) -> ToolResult {
        let a = args.read()?;
        let req = ReadFileRequest {
            path: a.path,
            offset: a.offset,
            limit: a.limit,
        };
        let r = self.file_call::<ReadFile>(&a.session_id, &req).await?;
        Ok(match r {
            ReadFileResponse::Text {
                path,
                text,
                total_lines,
                note,
            } => {
                let mut shown = text.clone();
                if let Some(note) = &note {
                    shown = format!("{shown}\n\n[{note}]");
                }
                structured(
                    shown,
                    &FileRead {
                        path,
                        text: Some(text),
                        total_lines: Some(total_lines),
                        note,
                        mime: None,
                    },
                )
            }
            ReadFileResponse::Image {
                path,
                mime,
                data_base64,
            } => with_image(
                structured(
                    format!("{path} ({mime})"),
                    &FileRead {
                        path: path.clone(),
                        text: None,
                        total_lines: None,
                        note: None,
                        mime: Some(mime.clone()),
                    },
                ),
                data_base64,
                &mime,
            ),
        })
    }

    #[tool(
        name = "write_file",
        output_schema = schema_for_output::<WriteFileResponse>(),
        title = "Write a file",
        description = "Create or replace a file with UTF-8 text up to 10 MB, atomically, creating missing folders and keeping an existing file's permissions. Refuses a folder.",
        annotations(
            title = "Write a file",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn write_file(&self, Parameters(args): Parameters<Args<WriteFileArgs>>) -> ToolResult {
        let a = args.read()?;
        let req = WriteFileRequest {
            path: a.path,
            content: a.content,
        };
        // Refused here, before 10 MB or more cross the wire.
        if let Some(problem) = req.size_problem() {
            return Err(ToolError::Invalid(InvalidInput(problem)));
        }
        let r = self.file_call::<WriteFile>(&a.session_id, &req).await?;
        Ok(structured(
            format!("Wrote {} bytes to {}", r.bytes, r.path),
            &r,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn oversized_content_is_refused_before_any_request() {
        // No computer is connected: reaching the client would fail with
        // "call start_computer first" instead.
        let agent = crate::agent::Agent::new(crate::tenant::Tenant::local());
        let server = ComputerUseServer::new(std::sync::Arc::new(agent));
        let args = serde_json::json!({
            "session_id": "0b8a3c1e-5f2d-4e7a-9c61-2d4f8e9a7b30",
            "path": "big.txt",
            "content": "x".repeat(computer_protocol::limits::WRITE_MAX_BYTES + 1),
        });
        let e = server
            .write_file(Parameters(serde_json::from_value(args).unwrap()))
            .await
            .unwrap_err();
        assert!(
            matches!(&e, ToolError::Invalid(m) if m.0.contains("(10 MB) limit of `write_file`")),
            "{e}"
        );
    }
}
