//! Building tool results: text for people and models, structured content
//! with the same facts as JSON, images as MCP image content.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;

/// A successful result with a text summary and structured content.
pub fn structured<T: Serialize>(text: impl Into<String>, value: &T) -> CallToolResult {
    match serde_json::to_value(value) {
        Ok(value) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = Some(value);
            result
        }
        // An answer the tool's schema promises but cannot be written is a
        // bug; saying so beats a `null` the agent would take as the answer.
        Err(e) => error(format!(
            "the tool's answer could not be written as JSON ({e}); this is a bug in computer-use-mcp, please report it"
        )),
    }
}

/// Adds an image to a result.
pub fn with_image(mut result: CallToolResult, base64_data: String, mime: &str) -> CallToolResult {
    result.content.push(ContentBlock::image(base64_data, mime));
    result
}

/// A tool error the agent reads: `isError: true` with the message.
pub fn error(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}
