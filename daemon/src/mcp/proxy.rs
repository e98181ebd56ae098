//! The MCP server `tabtunnel mcp` serves: the child's tools forwarded raw, plus our own
//! (`tabtunnel_*`, see `own_tools.rs`).
//!
//! rmcp's typed `tools/list` and `tools/call` would re-serialize the child's answers through
//! its model and drop what it does not know, so [`McpServer`] answers those two requests itself
//! with the child's JSON as is, and hands every other request to [`Proxy`], an ordinary rmcp
//! `ServerHandler`.

use super::child::{self, Child, ToolKind};
use super::daemon_api::Daemon;
use super::endpoint::ClientEndpoint;
use super::presence::Presence;
use super::rpc::Notification;
use super::slots::{Slot, Slots};
use super::supervisor::{Backend, Bounds, CallError, Extension, Supervisor};
use super::work_dir::WorkDir;
use super::{agent_name, child_tools, install};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientRequest, CustomResult, ErrorCode, Implementation,
    InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, ServerCapabilities, ServerConfig, ServerResult,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, Service};
use serde_json::{json, Value};
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::mpsc;

/// Where the child comes from and where it points. The agent and the tool server are settled
/// once the client has introduced itself (its name may be the agent's; over HTTP the request
/// names them).
pub struct RealBackend {
    pub data_dir: PathBuf,
    endpoint: ClientEndpoint,
    kind: OnceLock<ToolKind>,
    daemon: OnceLock<Daemon>,
    protocol_version: OnceLock<String>,
    /// Hides the tokens of the endpoints the child knows from all it says (`super::scrub`).
    redactor: OnceLock<tabtunnel_core::redact::Redactor>,
    /// Set when the daemon is this user's own: one that stopped is started again.
    on_demand: Option<crate::on_demand::StartOptions>,
    /// Set when the daemon was found through `daemon.json`: it proves it is ours before each
    /// request (`crate::proof`).
    proof: Option<crate::proof::Key>,
    /// The child's working directory, the only place its file arguments may name; the
    /// session's, removed with it.
    work: OnceLock<WorkDir>,
}

impl RealBackend {
    pub fn new(data_dir: PathBuf, endpoint: ClientEndpoint) -> RealBackend {
        RealBackend {
            data_dir,
            endpoint,
            kind: OnceLock::new(),
            daemon: OnceLock::new(),
            protocol_version: OnceLock::new(),
            redactor: OnceLock::new(),
            on_demand: None,
            proof: None,
            work: OnceLock::new(),
        }
    }

    /// Requires the daemon to prove it holds this user's key before each request.
    pub fn proven_by(mut self, key: Option<crate::proof::Key>) -> RealBackend {
        self.proof = key;
        self
    }

    /// Starts the daemon again (as the native host does) when it does not answer.
    pub fn starting_daemons(mut self, options: Option<crate::on_demand::StartOptions>) -> RealBackend {
        self.on_demand = options;
        self
    }

    pub fn daemon(&self) -> Result<&Daemon, String> {
        self.daemon.get().ok_or_else(|| "the MCP client has not initialized yet".into())
    }

    /// The child's words with no secret of its endpoint (nothing is known before `initialize`).
    fn scrub(&self, value: &mut Value) {
        if let Some(redactor) = self.redactor.get() {
            super::scrub::value(redactor, value);
        }
    }

    fn scrub_text(&self, text: String) -> String {
        match self.redactor.get() {
            Some(redactor) => super::scrub::text(redactor, text),
            None => text,
        }
    }

    /// The session's work directory, created on first use (a racing second one is dropped,
    /// and so removed, unused).
    pub fn work_dir(&self) -> Result<&WorkDir, String> {
        if let Some(work) = self.work.get() {
            return Ok(work);
        }
        let _ = self.work.set(WorkDir::create(&self.data_dir.join("run"))?);
        Ok(self.work.get().expect("just set"))
    }

    pub fn kind(&self) -> ToolKind {
        self.kind.get().copied().unwrap_or(ToolKind::ChromeDevtools)
    }
}

impl Backend for RealBackend {
    async fn extension(&self) -> Result<Extension, String> {
        let daemon = self.daemon()?;
        match (daemon.extension().await, &self.on_demand) {
            (Err(e), Some(options)) => {
                tracing::info!("the daemon does not answer ({e}); starting it");
                let started = crate::on_demand::ensure_running(options).await?;
                // The same daemon again: the same port (an agent's own token stays as it is).
                let back = ClientEndpoint::parse(&started.client_endpoint)?.0;
                if back.authority() != self.endpoint.authority() {
                    return Err(format!(
                        "the daemon came back on another port ({}): restart this MCP server",
                        started.port
                    ));
                }
                daemon.extension().await
            }
            (outcome, _) => outcome,
        }
    }

    async fn launch(&self) -> Result<(Child, mpsc::Receiver<Notification>), String> {
        let installed = install::ensure_installed(&self.data_dir).await?;
        let endpoint = self.daemon()?.child_endpoint().await?;
        let command = child::Command {
            kind: self.kind(),
            node: installed.node,
            modules: installed.modules,
            endpoint,
            // The file naming the endpoint goes in an owner-only directory, never the shared temp.
            private_dir: self.data_dir.join("run"),
            work_dir: self.work_dir()?.path().to_path_buf(),
        };
        let version =
            self.protocol_version.get().map(String::as_str).unwrap_or(child::FALLBACK_PROTOCOL_VERSION);
        child::spawn(&command, version).await
    }
}

/// A session's agent (`None`: from the client's name), tool server, and the `/<token>` its
/// child uses instead of the backend's own.
pub type Chosen = (Option<String>, ToolKind, Option<String>);

/// Who names the session's agent and tool server.
pub enum Session {
    /// `tabtunnel mcp`: the command line (an agent or none: the client's name).
    Stdio { agent: Option<String>, kind: ToolKind },
    /// `<endpoint>/mcp` on the daemon: the request (`/agent/<name>/mcp`, `?agent=`, `?tools=`),
    /// read by the HTTP side (`http.rs`), which this file knows nothing of.
    Http(fn(&RequestContext<RoleServer>) -> Result<Chosen, String>),
}

pub struct Proxy {
    pub(super) supervisor: Supervisor<RealBackend>,
    session: Session,
    /// Over HTTP: the sessions running, and this one's place among them (freed with it).
    slots: Option<Slots>,
    slot: Mutex<Option<Slot>>,
    notifications: Mutex<Option<mpsc::Receiver<Notification>>>,
    /// The agent's connection from the session's start (`presence.rs`).
    presence: OnceLock<Presence>,
    pub(super) tool_router: ToolRouter<Proxy>,
}

impl Proxy {
    pub fn new(backend: RealBackend, session: Session) -> Proxy {
        let (supervisor, notifications) = Supervisor::new(backend, Bounds::default());
        Proxy {
            supervisor,
            session,
            slots: None,
            slot: Mutex::new(None),
            notifications: Mutex::new(Some(notifications)),
            presence: OnceLock::new(),
            tool_router: Proxy::own_tools(),
        }
    }

    /// A session over HTTP, counted among `slots`; `chosen` reads what its request names.
    pub fn over_http(
        backend: RealBackend,
        slots: Slots,
        chosen: fn(&RequestContext<RoleServer>) -> Result<Chosen, String>,
    ) -> Proxy {
        Proxy { slots: Some(slots), ..Proxy::new(backend, Session::Http(chosen)) }
    }

    /// The session's agent (`None`: from the client's name), tool server, and the credential
    /// its child uses (`None`: the backend's own).
    fn choose(&self, context: &RequestContext<RoleServer>) -> Result<Chosen, McpError> {
        match &self.session {
            Session::Stdio { agent, kind } => Ok((agent.clone(), *kind, None)),
            Session::Http(chosen) => chosen(context).map_err(|e| McpError::invalid_params(e, None)),
        }
    }

    /// Names the agent, points the backend at the daemon and starts the child (in the
    /// background), with the protocol version agreed with the client. Once per session.
    fn begin(
        &self,
        agent: String,
        (_, kind, token_prefix): Chosen,
        client: &rmcp::model::Implementation,
        protocol_version: String,
        peer: rmcp::Peer<RoleServer>,
    ) {
        let backend = self.supervisor.backend();
        let _ = backend.protocol_version.set(protocol_version);
        let _ = backend.kind.set(kind);
        let endpoint = match &token_prefix {
            Some(prefix) => backend.endpoint.with_token_prefix(prefix),
            None => backend.endpoint.clone(),
        };
        let redactor = super::scrub::redactor([backend.endpoint.as_str(), endpoint.as_str()]);
        let _ = backend.redactor.set(redactor.clone());
        let daemon = Daemon::new(endpoint, agent.clone(), backend.proof.clone());
        if backend.daemon.set(daemon.clone()).is_ok() {
            tracing::info!(
                "agent {agent} (client {:?}) on {}; tools: {}",
                client.name,
                super::endpoint::redact(backend.endpoint.as_str()),
                kind.package()
            );
            // Its window and a tab for it open now, not at its first browser tool call.
            let _ = self.presence.set(Presence::hold(daemon.clone()));
        }
        {
            let (name, version) = (client.name.clone(), client.version.clone());
            tokio::spawn(async move {
                if let Err(e) = daemon.tell_client(&name, &version).await {
                    tracing::debug!("the daemon was not told the MCP client: {e:?}");
                }
            });
        }
        if let Some(notifications) = self.notifications.lock().unwrap().take() {
            tokio::spawn(relay(notifications, peer, redactor));
        }
        self.supervisor.warm_up();
    }

    /// `tools/list`: our tools first on the first page, then the child's page unchanged.
    async fn list_tools_raw(&self, params: Option<PaginatedRequestParams>) -> Result<Value, McpError> {
        let cursor = params.and_then(|p| p.cursor);
        let first_page = cursor.is_none();
        let backend = self.supervisor.backend();
        let mut page = self
            .supervisor
            .list_tools(cursor)
            .await
            .map_err(|e| McpError::internal_error(backend.scrub_text(e), None))?;
        backend.scrub(&mut page);
        let kind = backend.kind();
        let mut theirs = match page.get_mut("tools").and_then(Value::as_array_mut) {
            Some(theirs) => std::mem::take(theirs),
            None => Vec::new(),
        };
        theirs.retain(|tool| {
            let name = tool["name"].as_str().unwrap_or_default();
            // Our names are prefixed; should a child ever use one, ours wins, visibly.
            if self.tool_router.has_route(name) {
                tracing::warn!("the child's tool {name} is hidden by tabtunnel's own");
                return false;
            }
            child_tools::offered(kind, name)
        });
        let mut tools: Vec<Value> = match first_page {
            true => self
                .tool_router
                .list_all()
                .iter()
                .map(|t| serde_json::to_value(t).expect("serializable"))
                .collect(),
            false => Vec::new(),
        };
        tools.append(&mut theirs);
        page["tools"] = Value::Array(tools);
        Ok(page)
    }

    /// `tools/call` of a child tool, forwarded once; its result unchanged.
    async fn forward_call(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<Value, McpError> {
        let mut raw =
            serde_json::to_value(&params).map_err(|e| McpError::internal_error(e.to_string(), None))?;
        if raw.get("_meta").is_none() && !context.meta.is_empty() {
            // rmcp keeps the request's _meta (a progress token) beside the params.
            raw["_meta"] = serde_json::to_value(&context.meta).unwrap_or(Value::Null);
        }
        if let Some(presence) = self.presence.get() {
            presence.renew();
        }
        let backend = self.supervisor.backend();
        let kind = backend.kind();
        if !child_tools::offered(kind, &params.name) {
            // Hidden from tools/list, and never forwarded by name either.
            return Err(McpError::invalid_params(format!("unknown tool {}", params.name), None));
        }
        let work = backend.work_dir().map_err(|e| McpError::internal_error(e, None))?;
        let arguments = params.arguments.clone().map(Value::Object);
        if let Some(why) = child_tools::refusal(kind, &params.name, arguments.as_ref(), work) {
            return Ok(tool_error(&format!("{why}; it was not run")));
        }
        match self.supervisor.call_tool(raw, &context.ct).await {
            Ok(mut result) => {
                backend.scrub(&mut result);
                Ok(result)
            }
            Err(CallError::Remote { code, message, mut data }) => {
                if let Some(data) = &mut data {
                    backend.scrub(data);
                }
                Err(McpError::new(ErrorCode(code as i32), backend.scrub_text(message), data))
            }
            Err(CallError::Cancelled) => Err(McpError::new(ErrorCode(-32800), "cancelled", None)),
            Err(CallError::Unavailable(why)) => {
                Ok(tool_error(&backend.scrub_text(format!("{} was not run: {why}", params.name))))
            }
            Err(CallError::Lost(why)) => Ok(tool_error(&backend.scrub_text(format!(
                "the browser tool server stopped during {} ({why}): it may or may not have taken effect, and \
                 was not retried. The next browser tool call restarts the tool server.",
                params.name
            )))),
        }
    }
}

/// A tool result the model reads as a failure.
pub fn tool_error(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

/// Relays the child's notifications to the client: tool list changes and progress. Its log
/// messages go to our log; none keeps a secret of the child's endpoint. Ends when the
/// supervisor and its children are gone.
async fn relay(
    mut notifications: mpsc::Receiver<Notification>,
    peer: rmcp::Peer<RoleServer>,
    redactor: tabtunnel_core::redact::Redactor,
) {
    while let Some(Notification { method, mut params }) = notifications.recv().await {
        super::scrub::value(&redactor, &mut params);
        match method.as_str() {
            "notifications/tools/list_changed" => {
                let _ = peer.notify_tool_list_changed().await;
            }
            "notifications/progress" => match serde_json::from_value::<ProgressNotificationParam>(params) {
                Ok(progress) => {
                    let _ = peer.notify_progress(progress).await;
                }
                Err(e) => tracing::debug!("unreadable progress from the child: {e}"),
            },
            "notifications/message" => tracing::info!("child: {params}"),
            other => tracing::debug!("child notification {other} not relayed"),
        }
    }
}

impl ServerHandler for Proxy {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build())
            .with_server_info(Implementation::new("tabtunnel", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Browser tools that act in the user's real, logged-in browser, in this agent's own tabs \
                 (other agents and the user's own tabs are not visible). tabtunnel_status tells whether the \
                 browser is connected; tabtunnel_request_tab asks the user to hand over their active tab.",
            )
    }

    /// The session model (one agent per session) needs the `initialize` handshake, which the
    /// 2026-07-28 revision dropped.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    /// The client's name (maybe the agent's) and protocol version are known here; naming the
    /// agent now, not on `notifications/initialized`, means a `tools/list` that overtakes that
    /// notification (rmcp handles them concurrently) still finds it named.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        let chosen = self.choose(&context)?;
        let client_name = &request.client_info.name;
        let agent = chosen
            .0
            .clone()
            .unwrap_or_else(|| agent_name::from_client_name(client_name, &agent_name::unique_suffix()));
        if let Some(slots) = &self.slots {
            // Each session runs a tool server of its own: none may starve the machine.
            let slot = slots.take(&agent).map_err(|e| McpError::invalid_request(e, None))?;
            *self.slot.lock().unwrap() = Some(slot);
        }
        context.peer.set_peer_info(request.clone());
        let result = self.negotiate_initialize(&request)?;
        let version = result.protocol_version.to_string();
        self.begin(agent, chosen, &request.client_info, version, context.peer.clone());
        Ok(result)
    }

    /// Over stdio [`McpServer`] answers this with the child's JSON as is; over HTTP rmcp's
    /// Streamable HTTP service takes only a `ServerHandler`, so the page goes through rmcp's
    /// typed model (standard fields only: chrome-devtools-mcp's `annotations.category` is lost).
    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        typed(self.list_tools_raw(request).await?)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, McpError> {
        if self.tool_router.has_route(&request.name) {
            return self
                .tool_router
                .call(rmcp::handler::server::tool::ToolCallContext::new(self, request, context))
                .await;
        }
        typed::<CallToolResult>(self.forward_call(request, context).await?).map(Into::into)
    }
}

/// A raw result read into rmcp's model.
fn typed<T: serde::de::DeserializeOwned>(raw: Value) -> Result<T, McpError> {
    serde_json::from_value(raw).map_err(|e| {
        McpError::internal_error(format!("the browser tool server's answer does not parse: {e}"), None)
    })
}

/// The stdio service: `tools/list` and child `tools/call` raw, the rest to [`Proxy`].
pub struct McpServer {
    pub proxy: Arc<Proxy>,
}

impl Service<RoleServer> for McpServer {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, McpError> {
        let raw = match request {
            ClientRequest::ListToolsRequest(request) => self.proxy.list_tools_raw(request.params).await?,
            ClientRequest::CallToolRequest(request)
                if !self.proxy.tool_router.has_route(&request.params.name) =>
            {
                self.proxy.forward_call(request.params, context).await?
            }
            other => return Service::handle_request(&*self.proxy, other, context).await,
        };
        Ok(ServerResult::CustomResult(CustomResult(raw)))
    }

    async fn handle_notification(
        &self,
        notification: rmcp::model::ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), McpError> {
        Service::handle_notification(&*self.proxy, notification, context).await
    }

    fn get_info(&self) -> ServerConfig {
        ServerHandler::get_info(&*self.proxy)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        ServerHandler::supported_protocol_versions(&*self.proxy)
    }
}
