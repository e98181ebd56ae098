//! tabtunnel's own tools, beside the child's: prefixed `tabtunnel_` so they cannot clash, and
//! answered from the daemon's endpoints. None of them ever (re)starts the child.

use super::daemon_api::ApiError;
use super::endpoint::redact;
use super::proxy::Proxy;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router, ErrorData as McpError};
use serde::Deserialize;
use serde_json::{json, Value};
use std::time::Duration;

const DEFAULT_HANDOVER_SECONDS: u64 = 120;
const MAX_HANDOVER_SECONDS: u64 = 600;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RequestTabParams {
    /// Why you need the user's tab, in a sentence the user reads in the tabtunnel side panel.
    pub reason: String,
    /// How long to wait for the user's answer, in seconds (default 120, at most 600).
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

fn text(value: impl Into<String>) -> Result<CallToolResult, McpError> {
    Ok(CallToolResult::success(vec![ContentBlock::text(value)]))
}

fn failure(value: impl Into<String>) -> Result<CallToolResult, McpError> {
    Ok(CallToolResult::error(vec![ContentBlock::text(value)]))
}

/// What a daemon error means to the model.
fn explain(feature: &str, error: ApiError) -> String {
    match error {
        ApiError::Status(404, _) => {
            format!("this tabtunnel daemon has no {feature} (it predates agents): update and restart it")
        }
        ApiError::Unreachable(_) => "no tabtunnel daemon answers: ask the user to start it (`tabtunnel launch`, or `tabtunnel serve` with the extension in their own Chrome)".into(),
        other => format!("{feature}: {other}"),
    }
}

#[tool_router(router = own_tools, vis = "pub(super)")]
impl Proxy {
    #[tool(
        name = "tabtunnel_status",
        description = "The state of the tunnel to the user's browser: whether the tabtunnel daemon is \
                       running, whether the browser extension is connected, this agent's name and tab \
                       count, and the browser tool server behind the other tools.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn tabtunnel_status(&self) -> Result<CallToolResult, McpError> {
        let backend = self.supervisor.backend();
        let tool_server = json!({
            "package": backend.kind().package(),
            "running": self.supervisor.current().map(|live| live.child.describe()),
            "starts": self.supervisor.launches(),
        });
        let Ok(daemon) = backend.daemon() else { return failure("the MCP session has not initialized yet") };
        let daemon_state = match daemon.status().await {
            Ok(status) => json!({
                "daemonVersion": status.daemon_version,
                "extensionConnected": status.extension_connected,
                "extensionEpoch": status.extension_epoch,
                "tabs": status.tabs.len(),
            }),
            Err(e) => json!({"error": explain("status endpoint", e)}),
        };
        let status = json!({
            "agent": daemon.agent(),
            "endpoint": redact(&daemon.agent_endpoint()),
            "daemon": daemon_state,
            "toolServer": tool_server,
        });
        text(serde_json::to_string_pretty(&status).expect("serializable"))
    }

    #[tool(
        name = "tabtunnel_tabs",
        description = "The browser tabs this agent has: the ones it opened and the ones the user handed \
                       to it (targetId, url, title). Other agents' tabs and the user's own are not listed.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn tabtunnel_tabs(&self) -> Result<CallToolResult, McpError> {
        let Ok(daemon) = self.supervisor.backend().daemon() else {
            return failure("the MCP session has not initialized yet");
        };
        match daemon.status().await {
            Ok(status) if status.tabs.is_empty() => text(format!("agent {} has no tabs yet", daemon.agent())),
            Ok(status) => {
                text(serde_json::to_string_pretty(&Value::Array(status.tabs)).expect("serializable"))
            }
            Err(e) => failure(explain("tab list", e)),
        }
    }

    #[tool(
        name = "tabtunnel_request_tab",
        description = "Ask the user to hand this agent the tab they are looking at (for a page that needs \
                       them: a login, a captcha, a page they already have open). The request shows in the \
                       tabtunnel side panel; this returns when the user grants or denies it, or after the \
                       timeout. A granted tab then belongs to this agent and shows among its pages.",
        annotations(read_only_hint = false, destructive_hint = false, open_world_hint = false)
    )]
    async fn tabtunnel_request_tab(
        &self,
        Parameters(params): Parameters<RequestTabParams>,
    ) -> Result<CallToolResult, McpError> {
        let Ok(daemon) = self.supervisor.backend().daemon() else {
            return failure("the MCP session has not initialized yet");
        };
        if params.reason.trim().is_empty() {
            return failure("give a reason: the user reads it before answering");
        }
        let seconds =
            params.timeout_seconds.unwrap_or(DEFAULT_HANDOVER_SECONDS).clamp(1, MAX_HANDOVER_SECONDS);
        match daemon.handover(params.reason.trim(), Duration::from_secs(seconds)).await {
            Ok(answer) => match answer["outcome"].as_str() {
                Some("granted") => {
                    let tab = &answer["tab"];
                    text(format!(
                        "The user handed you their tab {:?} ({}), targetId {}. It is now one of your pages.",
                        tab["title"].as_str().unwrap_or(""),
                        tab["url"].as_str().unwrap_or(""),
                        tab["targetId"].as_str().unwrap_or("?"),
                    ))
                }
                Some("denied") => text("The user declined to hand over a tab."),
                Some("timeout") => text(format!("The user did not answer within {seconds}s.")),
                Some("withdrawn") => text("The request was withdrawn before the user answered."),
                _ => failure(format!("unexpected answer from the daemon: {answer}")),
            },
            Err(ApiError::Status(503, _)) => failure(
                "the browser extension is not connected to the tabtunnel daemon, so nobody can be asked",
            ),
            Err(e) => failure(explain("hand-over endpoint", e)),
        }
    }
}
