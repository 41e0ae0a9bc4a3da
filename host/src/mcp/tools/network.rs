//! network_log: what the computer's network guard let through and refused,
//! read from the guard itself (`docker::guard`), never from inside the
//! computer, whose root could rewrite anything kept there.

use super::ToolResult;
use crate::computer::StartError;
use crate::docker::guard;
use crate::mcp::args::{Args, NetworkLogArgs};
use crate::mcp::result::structured;
use crate::mcp::{ComputerUseServer, ToolError};
use computer_protocol::network::{NetworkLogEntry, LOG_LIMIT_DEFAULT, LOG_LIMIT_MAX};
use computer_protocol::InvalidInput;
use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema)]
struct NetworkLogResult {
    /// The policy in force: `mode` and its lists.
    policy: PolicyView,
    /// Newest first.
    entries: Vec<NetworkLogEntry>,
}

#[derive(Serialize, JsonSchema)]
struct PolicyView {
    mode: String,
    allow: Vec<String>,
    private: Vec<String>,
    host_ports: Vec<u16>,
    summary: String,
}

#[tool_router(router = network_tools, vis = "pub(crate)")]
impl ComputerUseServer {
    #[tool(
        name = "network_log",
        output_schema = schema_for_output::<NetworkLogResult>(),
        title = "See what the computer's network reached",
        description = "What the computer's network allowed and refused, newest first, and its policy. Read it when a page or download fails.",
        annotations(
            title = "See what the computer's network reached",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn network_log(&self, Parameters(args): Parameters<Args<NetworkLogArgs>>) -> ToolResult {
        let a = args.read()?;
        let limit = a.limit.unwrap_or(LOG_LIMIT_DEFAULT as u32) as usize;
        if !(1..=LOG_LIMIT_MAX).contains(&limit) {
            return Err(ToolError::Invalid(InvalidInput(format!(
                "`limit` is {limit}: give 1..{LOG_LIMIT_MAX} entries (default {LOG_LIMIT_DEFAULT})"
            ))));
        }
        let conn = self.reach(&a.session_id).await?;
        let log = guard::network_log(conn.dialer.docker(), &conn.container, a.denied_only, limit)
            .await
            .map_err(|e| ToolError::Start(StartError::from(e)))?;
        let policy = &log.policy;
        let mut text = format!("Network policy: {}\n", policy.summary());
        if log.entries.is_empty() {
            text.push_str(if a.denied_only {
                "No denied connections.\n"
            } else {
                "No connections yet.\n"
            });
        }
        for e in &log.entries {
            let target = match &e.host {
                Some(host) => format!("{host} ({}:{})", e.address, e.port),
                None => format!("{}:{}", e.address, e.port),
            };
            let verdict = if e.allowed { "allowed" } else { "DENIED" };
            text.push_str(&format!(
                "{} {verdict} {target}: {}; {} B out, {} B in, {} ms\n",
                e.at, e.rule, e.bytes_out, e.bytes_in, e.duration_ms
            ));
        }
        let view = PolicyView {
            mode: policy.mode.as_str().to_string(),
            allow: policy.allow.iter().map(ToString::to_string).collect(),
            private: policy.private.iter().map(ToString::to_string).collect(),
            host_ports: policy.host_ports.clone(),
            summary: policy.summary(),
        };
        Ok(structured(
            text,
            &NetworkLogResult {
                policy: view,
                entries: log.entries,
            },
        ))
    }
}
