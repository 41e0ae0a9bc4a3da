//! set_cwd, list_files, read_file, write_file.

use super::ToolResult;
use crate::agent::Agent;
use crate::mcp::args::{parse, ListFilesArgs, ReadFileArgs, SetCwdArgs, WriteFileArgs};
use crate::mcp::result::{structured, with_image};
use computer_protocol::routes::{session_action, SessionRoute};
use computer_protocol::{
    FileType, ListFilesRequest, ListFilesResponse, ReadFileRequest, ReadFileResponse, SessionId,
    SetCwdRequest, SetCwdResponse, WriteFileRequest, WriteFileResponse,
};
use reqwest::Method;
use rmcp::model::JsonObject;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::time::Duration;

const FILE_DEADLINE: Duration = Duration::from_secs(60);
const NOTHING_RUNS: &str = "nothing keeps running; try again";

async fn post<B: Serialize, T: DeserializeOwned>(
    host: &Agent,
    session_id: &str,
    route: SessionRoute,
    body: &B,
) -> Result<T, String> {
    let conn = host.reach(session_id).await?;
    let path = session_action(&SessionId(session_id.to_string()), route);
    let answered = conn
        .client
        .call(Method::POST, &path, Some(body), FILE_DEADLINE, NOTHING_RUNS)
        .await;
    host.answer(session_id, answered).await
}

pub async fn set_cwd(host: &Agent, arguments: Option<JsonObject>) -> ToolResult {
    let a: SetCwdArgs = parse(arguments)?;
    let r: SetCwdResponse = post(
        host,
        &a.session_id,
        SessionRoute::Cwd,
        &SetCwdRequest { path: a.path },
    )
    .await?;
    Ok(structured(format!("Working folder is now {}", r.path), &r))
}

pub async fn list_files(host: &Agent, arguments: Option<JsonObject>) -> ToolResult {
    let a: ListFilesArgs = parse(arguments)?;
    let r: ListFilesResponse = post(
        host,
        &a.session_id,
        SessionRoute::ListFiles,
        &ListFilesRequest { path: a.path },
    )
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

pub async fn read_file(host: &Agent, arguments: Option<JsonObject>) -> ToolResult {
    let a: ReadFileArgs = parse(arguments)?;
    let req = ReadFileRequest {
        path: a.path,
        offset: a.offset,
        limit: a.limit,
    };
    let r: ReadFileResponse = post(host, &a.session_id, SessionRoute::ReadFile, &req).await?;
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
                &serde_json::json!({"path": path, "total_lines": total_lines, "note": note, "text": text}),
            )
        }
        ReadFileResponse::Image {
            path,
            mime,
            data_base64,
        } => with_image(
            structured(
                format!("{path} ({mime})"),
                &serde_json::json!({"path": path, "mime": mime}),
            ),
            data_base64,
            &mime,
        ),
    })
}

pub async fn write_file(host: &Agent, arguments: Option<JsonObject>) -> ToolResult {
    let a: WriteFileArgs = parse(arguments)?;
    let req = WriteFileRequest {
        path: a.path,
        content: a.content,
    };
    // Refused here, before 10 MB or more cross the wire.
    if let Some(problem) = req.size_problem() {
        return Err(problem);
    }
    let r: WriteFileResponse = post(host, &a.session_id, SessionRoute::WriteFile, &req).await?;
    Ok(structured(
        format!("Wrote {} bytes to {}", r.bytes, r.path),
        &r,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn oversized_content_is_refused_before_any_request() {
        // No computer is connected: reaching the client would fail with
        // "call start_computer first" instead.
        let host = Agent::new(std::sync::Arc::new(crate::link::Link::new()));
        let args = serde_json::json!({
            "session_id": "0b8a3c1e-5f2d-4e7a-9c61-2d4f8e9a7b30",
            "path": "big.txt",
            "content": "x".repeat(computer_protocol::limits::WRITE_MAX_BYTES + 1),
        });
        let e = write_file(&host, args.as_object().cloned())
            .await
            .unwrap_err();
        assert!(e.contains("(10 MB) limit of `write_file`"), "{e}");
    }
}
