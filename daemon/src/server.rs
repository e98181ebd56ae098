//! The HTTP and WebSocket shell: discovery endpoints, client sockets and the extension socket,
//! all behind the [`Gate`]. Every client route exists for every agent: beneath
//! `/<token>/agent/<name>` as beneath `/<token>` (the default agent), see [`agent_path`].

use crate::agent_path::{self, AgentRoute};
use crate::gate::{Gate, EXTENSION_PATH, NAVIGATION_PATH};
use crate::hub::{self, HubHandle, Input};
use crate::outbox::{self, OutboxReader};
use crate::upgrade::{Socket, Upgrade};
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, Request, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Extension, Json, Router};
use bytes::Bytes;
use futures_util::stream::SplitSink;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::time::Duration;
use tabtunnel_core::{AgentId, Around, ClientFrame, Root};
use tabtunnel_wire::{hot, FromExtension, TabInfo, ToExtension, HEARTBEAT_INTERVAL_MS};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Message, Utf8Bytes};

/// Screenshots, traces and injected scripts are large; Chrome's own limit is 256 MiB.
const MAX_MESSAGE_BYTES: usize = 256 << 20;
/// An extension silent for this long (it sends a heartbeat every 15 s) is gone.
const EXTENSION_SILENCE_LIMIT: Duration = Duration::from_millis(HEARTBEAT_INTERVAL_MS as u64 * 3);
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a hand-over request may wait for the human, at most and by default.
const HANDOVER_MAX_WAIT: Duration = Duration::from_secs(600);
const HANDOVER_DEFAULT_WAIT: Duration = Duration::from_secs(120);
/// How long a closing client socket may take to accept our Close frame.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// The extension's writer stops gathering queued frames into one message past this many bytes.
const WRITE_BATCH_BYTES: usize = 1 << 20;
/// A client's writer flushes after this many bytes of queued frames. Taking frames is what
/// counts as the client's progress against the stall rule (`outbox`), so this is how much a
/// client with full socket buffers must read to be seen reading: 64 KiB is a few tens of
/// milliseconds of a slow reader, where a megabyte was seconds of one on a loaded machine
/// (a reading puppeteer was dropped in a 200,000-event flood). Frames are still written in
/// tungstenite's 128 KiB writes; the flushes cost nothing while the socket is full anyway.
const CLIENT_FLUSH_BYTES: usize = 64 << 10;
/// A frame around a large result (`ClientFrame::Around`) is written as fragments of this much of
/// the result each: tungstenite copies what it writes into its write buffer, so this, not the
/// result, is what the copy costs.
const FRAGMENT_BYTES: usize = 256 << 10;

#[derive(Clone)]
pub struct AppState {
    pub hub: HubHandle,
    pub gate: Gate,
    pub browser_target_id: String,
    pub shared: hub::Shared,
    /// `/mcp`: MCP over Streamable HTTP, a session per agent (`crate::mcp`).
    pub mcp: crate::mcp::HttpService,
    /// `tabtunnel agent add|revoke` has the daemon read the agents' credentials at once.
    pub credentials: crate::live_credentials::Reloader,
    pub client_outbox: outbox::Limits,
}

impl AppState {
    /// `ws://<host>[/<token>][/agent/<name>]<path>`: the host and the token the client used, so
    /// its URLs keep working and hold no other credential than its own, and the agent it named.
    fn ws_url(&self, host: &str, route: &AgentRoute, path: &str) -> String {
        format!("ws://{host}{}{}{path}", route.token_prefix, route.prefix)
    }
}

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/json/version", get(version))
        .route("/json/version/", get(version))
        .route("/json", get(list))
        .route("/json/", get(list))
        .route("/json/list", get(list))
        .route("/json/list/", get(list))
        .route("/json/new", get(new_target_needs_put).put(new_target))
        .route("/json/close/{id}", get(close_target).put(close_target))
        .route("/json/activate/{id}", get(activate_target).put(activate_target))
        .route("/devtools/browser/{id}", get(browser_socket))
        .route("/cdp", get(short_browser_socket))
        .route("/devtools/page/{id}", get(page_socket))
        .route("/tabtunnel/status", get(status))
        .route("/tabtunnel/handover", post(handover))
        .route("/tabtunnel/client", post(mcp_client))
        .route("/tabtunnel/session", get(session_socket))
        .route(crate::live_credentials::PATH, post(reload_credentials))
        .route(&format!("{NAVIGATION_PATH}/{{agent}}/{{tab}}"), any(navigation))
        .route(EXTENSION_PATH, get(extension_socket))
        .route_service("/mcp", state.mcp.clone())
        .with_state(state)
}

/// Serves until `shutdown` resolves. The gate wraps the router, so it runs before routing (it
/// rewrites `/<token>/...` paths to the routes above).
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use tower_layer::Layer;
    let gate = state.gate.clone();
    let shared = state.shared.clone();
    let app = middleware::from_fn(move |mut req: Request<Body>, next| {
        req.extensions_mut().insert(shared.clone());
        admit(gate.clone(), req, next)
    })
    .layer(router(state));
    crate::accept::serve(listener, app, shutdown).await
}

/// Whether the kill switch is engaged (the shared flag rides in the request's extensions).
fn state_stopped(req: &Request<Body>) -> bool {
    req.extensions().get::<hub::Shared>().is_some_and(|s| s.stopped.load(std::sync::atomic::Ordering::SeqCst))
}

async fn admit(gate: Gate, mut req: Request<Body>, next: Next) -> Response {
    let admitted = match gate.check(req.uri(), req.headers()) {
        Ok(admitted) => admitted,
        Err(refusal) => {
            // The path may hold a token: the log gets it redacted.
            let path = crate::token::redact(req.uri().path());
            tracing::info!(uri = %path, status = %refusal.status, reason = refusal.reason, "refused");
            return (refusal.status, format!("tabtunnel: {}\n", refusal.reason)).into_response();
        }
    };
    if admitted.credential == crate::credential::Credential::Hello {
        // Who we are, whatever else holds (the kill switch included): no secret in it. The
        // connection stays open for the request the client sends once it has checked this.
        return match gate.identity.answer(req.uri().query()) {
            Ok(body) => {
                let headers =
                    [(header::CONTENT_TYPE, "application/json"), (header::CONNECTION, "keep-alive")];
                (headers, body).into_response()
            }
            Err(why) => (StatusCode::BAD_REQUEST, format!("tabtunnel: {why}\n")).into_response(),
        };
    }
    if let Some(uri) = admitted.uri.clone() {
        *req.uri_mut() = uri;
    }
    let path = req.uri().path();
    // A revocation goes through the kill switch too (the route takes the owner's credential only).
    let exempt = [EXTENSION_PATH, crate::live_credentials::PATH].contains(&path);
    if state_stopped(&req) && !exempt && !path.starts_with(NAVIGATION_PATH) {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "tabtunnel: stopped by the kill switch in the side panel; turn it off there to let agents in again\n",
        )
            .into_response();
    }
    let route = agent_path::split(req.uri())
        .and_then(|(route, rewritten)| Ok((route.apply(&admitted, gate.require_agent_tokens)?, rewritten)));
    match route {
        Ok((mut route, rewritten)) => {
            if let Some(uri) = rewritten {
                *req.uri_mut() = uri;
            }
            route.identity.client = user_agent(req.headers());
            req.extensions_mut().insert(route);
        }
        Err((status, reason)) => return (status, format!("tabtunnel: {reason}\n")).into_response(),
    }
    next.run(req).await
}

/// The client's User-Agent, as it said it (the audit trail escapes and redacts what it shows).
fn user_agent(headers: &HeaderMap) -> Option<String> {
    let agent = headers.get(header::USER_AGENT)?;
    let text = String::from_utf8_lossy(agent.as_bytes());
    Some(text.chars().take(200).collect())
}

fn host(headers: &HeaderMap) -> &str {
    headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("127.0.0.1")
}

fn unavailable(why: &str) -> Response {
    (StatusCode::SERVICE_UNAVAILABLE, format!("tabtunnel: {why}\n")).into_response()
}

const NO_EXTENSION: &str = "the tabtunnel extension is not connected; open Chrome with the extension loaded and paired (a stopped extension reconnects on its own within a minute)";

/// What discovery shows, or a 503 saying why there is nothing to show: without the extension
/// there is no browser, and an empty one would only mislead.
async fn connected_snapshot(state: &AppState, agent: &AgentId) -> Result<hub::Snapshot, Response> {
    match state.hub.snapshot(agent.clone()).await {
        None => Err(unavailable("shutting down")),
        Some(snapshot) if !snapshot.extension_connected => Err(unavailable(NO_EXTENSION)),
        Some(snapshot) => Ok(snapshot),
    }
}

async fn version(
    State(state): State<AppState>,
    Extension(route): Extension<AgentRoute>,
    headers: HeaderMap,
) -> Response {
    let snapshot = match connected_snapshot(&state, &route.agent).await {
        Ok(snapshot) => snapshot,
        Err(refusal) => return refusal,
    };
    let Some(browser) = snapshot.browser else { return unavailable(NO_EXTENSION) };
    let path = format!("/devtools/browser/{}", state.browser_target_id);
    let mut version = json!({
        "Browser": browser.product,
        "Protocol-Version": browser.protocol_version,
        "User-Agent": browser.user_agent,
        "WebKit-Version": "537.36",
        "webSocketDebuggerUrl": state.ws_url(host(&headers), &route, &path),
    });
    // The extension cannot always learn V8's version; better absent than empty.
    if !browser.js_version.is_empty() {
        version["V8-Version"] = json!(browser.js_version);
    }
    Json(version).into_response()
}

async fn list(
    State(state): State<AppState>,
    Extension(route): Extension<AgentRoute>,
    headers: HeaderMap,
) -> Response {
    let snapshot = match connected_snapshot(&state, &route.agent).await {
        Ok(snapshot) => snapshot,
        Err(refusal) => return refusal,
    };
    let host = host(&headers);
    let pages: Vec<Value> = snapshot.pages.iter().map(|tab| list_entry(&state, &route, host, tab)).collect();
    Json(Value::Array(pages)).into_response()
}

/// A tab as Chrome's `/json/list` shows a page.
fn list_entry(state: &AppState, route: &AgentRoute, host: &str, tab: &TabInfo) -> Value {
    json!({
        "description": "",
        "devtoolsFrontendUrl": "",
        "id": tab.target_id,
        "title": tab.title,
        "type": "page",
        "url": tab.url,
        "webSocketDebuggerUrl": state.ws_url(host, route, &format!("/devtools/page/{}", tab.target_id)),
    })
}

/// The answer frame of a one-shot command: its `result`, or its error message.
async fn run_request(
    state: &AppState,
    route: &AgentRoute,
    method: &str,
    params: Value,
) -> Result<Value, String> {
    let frame =
        state.hub.request(route.agent.clone(), method, params).await.ok_or("tabtunnel is shutting down")?;
    let mut answer: Value = serde_json::from_str(&frame).map_err(|e| e.to_string())?;
    match answer.get_mut("result") {
        Some(result) => Ok(result.take()),
        None => Err(answer["error"]["message"].as_str().unwrap_or("unknown error").to_owned()),
    }
}

/// `GET /json/new`: refused as Chrome's own endpoint refuses it (a state change needs `PUT`).
async fn new_target_needs_put() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, "PUT")],
        "Using unsafe HTTP verb GET to invoke /json/new. This action supports only PUT verb.\n",
    )
        .into_response()
}

/// `PUT /json/new?<url>`: a new tab for the agent.
async fn new_target(
    State(state): State<AppState>,
    Extension(route): Extension<AgentRoute>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let url = uri.query().map(target_url_from_query).unwrap_or_else(|| "about:blank".into());
    let target_id = match run_request(&state, &route, "Target.createTarget", json!({ "url": url })).await {
        Ok(result) => result["targetId"].as_str().unwrap_or_default().to_owned(),
        Err(why) => {
            return (StatusCode::INTERNAL_SERVER_ERROR, format!("tabtunnel: could not open a tab: {why}\n"))
                .into_response()
        }
    };
    let Some(snapshot) = state.hub.snapshot(route.agent.clone()).await else {
        return unavailable("shutting down");
    };
    match snapshot.pages.iter().find(|t| t.target_id == target_id) {
        Some(tab) => Json(list_entry(&state, &route, host(&headers), tab)).into_response(),
        None => {
            (StatusCode::INTERNAL_SERVER_ERROR, "tabtunnel: the new tab closed at once\n").into_response()
        }
    }
}

/// Chrome reads `/json/new?<url>` with the URL as the whole query; a URL percent-encoded as a
/// whole (no `:` left) is decoded.
fn target_url_from_query(query: &str) -> String {
    let query = query.strip_prefix("url=").unwrap_or(query);
    if query.contains(':') {
        return query.to_owned();
    }
    let bytes = query.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).and_then(|b| hex(*b)), bytes.get(i + 2).and_then(|b| hex(*b))) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `<navigation path>/<agent>/<tabId>?<url>`: the browser's origin rules redirected a page's
/// own navigation here. Going on is a redirect back to the URL (the rules let it through once);
/// not going on is `204 No Content`, which leaves the tab where it was.
async fn navigation(
    State(state): State<AppState>,
    Path((agent, tab)): Path<(String, i32)>,
    uri: Uri,
) -> Response {
    let stay = || StatusCode::NO_CONTENT.into_response();
    if !tabtunnel_core::is_valid_agent_name(&agent) {
        return stay();
    }
    let Some(url) = uri.query().map(target_url_from_query) else { return stay() };
    let (reply, answer) = oneshot::channel();
    let input =
        Input::Navigation { agent: tabtunnel_core::AgentId::new(&agent), tab, url: url.clone(), reply };
    if state.hub.send(input).await.is_err() {
        return stay();
    }
    match answer.await {
        Ok(true) => match axum::http::HeaderValue::from_str(&url) {
            Ok(location) => (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, location)]).into_response(),
            Err(_) => stay(),
        },
        _ => stay(),
    }
}

async fn close_target(
    State(state): State<AppState>,
    Extension(route): Extension<AgentRoute>,
    Path(id): Path<String>,
) -> Response {
    match run_request(&state, &route, "Target.closeTarget", json!({ "targetId": id })).await {
        Ok(_) => "Target is closing".into_response(),
        Err(_) => (StatusCode::NOT_FOUND, format!("No such target id: {id}")).into_response(),
    }
}

async fn activate_target(
    State(state): State<AppState>,
    Extension(route): Extension<AgentRoute>,
    Path(id): Path<String>,
) -> Response {
    match run_request(&state, &route, "Target.activateTarget", json!({ "targetId": id })).await {
        Ok(_) => "Target activated".into_response(),
        Err(_) => (StatusCode::NOT_FOUND, format!("No such target id: {id}")).into_response(),
    }
}

/// `/tabtunnel/status`: what an agent's helper (such as `tabtunnel mcp`) needs to know.
async fn status(State(state): State<AppState>, Extension(route): Extension<AgentRoute>) -> Response {
    let Some(snapshot) = state.hub.snapshot(route.agent.clone()).await else {
        return unavailable("shutting down");
    };
    let tabs: Vec<Value> = snapshot
        .pages
        .iter()
        .map(|t| json!({ "targetId": t.target_id, "url": t.url, "title": t.title }))
        .collect();
    Json(json!({
        "daemonVersion": env!("CARGO_PKG_VERSION"),
        "extensionConnected": snapshot.extension_connected,
        "extensionEpoch": snapshot.extension_epoch,
        "extensionVersion": snapshot.extension_version,
        "browser": snapshot.browser.as_ref().map(|b| &b.product),
        "agent": route.agent.as_str(),
        "tabs": tabs,
    }))
    .into_response()
}

/// `POST /tabtunnel/credentials` (owner only): reads `agents.json` now, answering once a revoked
/// token is refused and its agent's connections are closed (`crate::live_credentials`).
async fn reload_credentials(
    State(state): State<AppState>,
    Extension(route): Extension<AgentRoute>,
) -> Response {
    use crate::credential::Credential;
    if !matches!(route.credential, Credential::Owner | Credential::Open) || !route.prefix.is_empty() {
        return (StatusCode::FORBIDDEN, "tabtunnel: only the owner token reloads the agents' credentials\n")
            .into_response();
    }
    match state.credentials.reload().await {
        Ok(()) => {
            tracing::info!("agents' credentials reloaded on request");
            Json(json!({ "reloaded": true })).into_response()
        }
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("tabtunnel: {e}\n")).into_response(),
    }
}

#[derive(serde::Deserialize)]
struct McpClient {
    name: String,
    #[serde(default)]
    version: String,
}

/// `POST /tabtunnel/client`: `tabtunnel mcp` says which MCP client the agent came through (its
/// `initialize` clientInfo); the agent's records name it rather than the tool server's
/// User-Agent.
async fn mcp_client(
    State(state): State<AppState>,
    Extension(route): Extension<AgentRoute>,
    body: axum::body::Bytes,
) -> Response {
    let client: McpClient = match serde_json::from_slice(&body) {
        Ok(client) => client,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("tabtunnel: {e}\n")).into_response(),
    };
    let text = format!("{} {} (MCP)", client.name.trim(), client.version.trim());
    let client = text.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(200).collect();
    if state.hub.send(Input::McpClient { agent: route.agent, client }).await.is_err() {
        return unavailable("shutting down");
    }
    StatusCode::NO_CONTENT.into_response()
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct HandoverAsk {
    #[serde(default)]
    reason: String,
    timeout_ms: Option<u64>,
}

/// `POST /tabtunnel/handover`: asks the human, in the side panel, to hand the agent their
/// active tab; answers when they do, refuse, or the wait ends.
async fn handover(
    State(state): State<AppState>,
    Extension(route): Extension<AgentRoute>,
    body: axum::body::Bytes,
) -> Response {
    let ask: HandoverAsk = if body.is_empty() {
        HandoverAsk::default()
    } else {
        match serde_json::from_slice(&body) {
            Ok(ask) => ask,
            Err(e) => return (StatusCode::BAD_REQUEST, format!("tabtunnel: {e}\n")).into_response(),
        }
    };
    let Some(snapshot) = state.hub.snapshot(route.agent.clone()).await else {
        return unavailable("shutting down");
    };
    if !snapshot.extension_connected {
        let body = json!({ "outcome": "unavailable", "reason": "the tabtunnel extension is not connected" });
        return (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response();
    }
    let wait = ask.timeout_ms.map_or(HANDOVER_DEFAULT_WAIT, Duration::from_millis).min(HANDOVER_MAX_WAIT);
    let reason: String = ask.reason.chars().take(500).collect();
    let (reply, answer) = oneshot::channel();
    if state.hub.send(Input::Handover { agent: route.agent.clone(), reason, reply }).await.is_err() {
        return unavailable("shutting down");
    }
    // Giving up drops `answer`, which withdraws the request from the side panel.
    let outcome = match tokio::time::timeout(wait, answer).await {
        Ok(Ok(Some(tab))) => {
            json!({ "outcome": "granted", "tab": { "targetId": tab.target_id, "url": tab.url, "title": tab.title } })
        }
        Ok(Ok(None)) => json!({ "outcome": "denied" }),
        Ok(Err(_)) => json!({ "outcome": "withdrawn" }),
        Err(_) => json!({ "outcome": "timeout" }),
    };
    Json(outcome).into_response()
}

async fn browser_socket(
    State(state): State<AppState>,
    Extension(route): Extension<AgentRoute>,
    Path(id): Path<String>,
    ws: Upgrade,
) -> Response {
    if id != state.browser_target_id {
        return (StatusCode::NOT_FOUND, "tabtunnel: no browser with that id; read /json/version\n")
            .into_response();
    }
    short_browser_socket(State(state), Extension(route), ws).await
}

/// `/cdp`: the browser WebSocket without its id, the short form people expect.
async fn short_browser_socket(
    State(state): State<AppState>,
    Extension(route): Extension<AgentRoute>,
    ws: Upgrade,
) -> Response {
    ws.on_upgrade(socket_config(), move |socket| {
        client_session(state, socket, route, AgentSocket::Cdp(Root::Browser))
    })
}

/// `/tabtunnel/session`: an MCP session of the agent's (`tabtunnel mcp`, `/mcp`) says it
/// expects it, from its start until this socket closes: the agent's window and a prepared tab
/// open before its tool server connects. It takes no commands.
async fn session_socket(
    State(state): State<AppState>,
    Extension(route): Extension<AgentRoute>,
    ws: Upgrade,
) -> Response {
    ws.on_upgrade(socket_config(), move |socket| client_session(state, socket, route, AgentSocket::Session))
}

async fn page_socket(
    State(state): State<AppState>,
    Extension(route): Extension<AgentRoute>,
    Path(target_id): Path<String>,
    ws: Upgrade,
) -> Response {
    let Some(snapshot) = state.hub.snapshot(route.agent.clone()).await else {
        return unavailable("shutting down");
    };
    let Some(tab) = snapshot.pages.iter().find(|t| t.target_id == target_id).map(|t| t.tab_id) else {
        return (StatusCode::NOT_FOUND, "tabtunnel: no shared page with that id; read /json/list\n")
            .into_response();
    };
    ws.on_upgrade(socket_config(), move |socket| {
        client_session(state, socket, route, AgentSocket::Cdp(Root::Page(tab)))
    })
}

/// Every socket's: messages as large as Chrome's own endpoint takes, in frames as large.
fn socket_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_MESSAGE_BYTES))
}

/// What an agent's socket is.
enum AgentSocket {
    /// A CDP client's, at the browser or a page.
    Cdp(Root),
    /// An MCP session's, expecting the agent (`session_socket`).
    Session,
}

/// One CDP client: its frames go to the hub, the hub's frames come back through its outbox.
/// An MCP session's socket is the same but for its frames: none are taken.
async fn client_session(state: AppState, socket: Socket, route: AgentRoute, kind: AgentSocket) {
    let conn = state.hub.next_id();
    let (outbox, outbox_reader) = outbox::outbox(state.client_outbox);
    let agent = route.agent;
    let identity = route.identity;
    let session = matches!(kind, AgentSocket::Session);
    let connected = match kind {
        AgentSocket::Cdp(root) => {
            tracing::info!(conn, agent = agent.as_str(), "client connected");
            Input::ClientConnected { conn, agent, root, outbox, identity }
        }
        AgentSocket::Session => {
            tracing::info!(conn, agent = agent.as_str(), "MCP session expects its agent");
            Input::SessionOpened { conn, agent, outbox, identity }
        }
    };
    if state.hub.send(connected).await.is_err() {
        return;
    }
    let (sink, mut stream) = socket.split();
    let mut writer = tokio::spawn(write_client(sink, outbox_reader));
    let overflowed = loop {
        let message = tokio::select! {
            message = stream.next() => message,
            // The writer ended: the socket failed, or the hub closed or dropped the client.
            overflowed = &mut writer => break overflowed.unwrap_or(false),
        };
        let text = match message {
            Some(Ok(Message::Text(text))) => text,
            // CDP is text; accept UTF-8 binary frames too, as Chrome does.
            Some(Ok(Message::Binary(bytes))) => match Utf8Bytes::try_from(bytes) {
                Ok(text) => text,
                Err(_) => Utf8Bytes::from_static("<binary frame that is not UTF-8>"),
            },
            Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
            Some(Ok(Message::Close(_)) | Err(_)) | None => break false,
        };
        if session {
            tracing::info!(conn, "an MCP session's socket takes no commands: closed");
            break false;
        }
        if state.hub.send(Input::ClientMessage { conn, text }).await.is_err() {
            break false;
        }
    };
    // The writer is told to stop; with both halves dropped the socket closes once it has,
    // whatever was still queued.
    writer.abort();
    drop(stream);
    let _ = state.hub.send(Input::ClientDisconnected { conn }).await;
    if !overflowed {
        tracing::info!(conn, "client disconnected");
    }
    // Its queue, socket buffers and sessions are gone now: what they held can go back to the
    // system (the allocator keeps it otherwise, most after a flood of small frames).
    crate::trim::release_free_memory_soon();
}

/// Writes the client's outbox to its socket. Returns whether it stopped because the client
/// read too slowly (the hub has logged that).
async fn write_client(mut sink: SplitSink<Socket, Message>, outbox: OutboxReader) -> bool {
    while let Some(frame) = outbox.next().await {
        tokio::select! {
            sent = write_batch(&mut sink, frame, &outbox) => if sent.is_err() { return false },
            () = outbox.overflowed() => return true,
        }
    }
    if outbox.has_overflowed() {
        return true;
    }
    // The hub closed it (its page went away): say so, unless the client does not even read that.
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, sink.send(Message::Close(None))).await;
    false
}

/// Writes `first` and every frame queued behind it, then flushes once: frames that leave
/// together cost one write, not one each. (Each stays its own WebSocket message: CDP clients
/// read one frame per message.)
async fn write_batch(
    sink: &mut SplitSink<Socket, Message>,
    first: ClientFrame,
    outbox: &OutboxReader,
) -> Result<(), tungstenite::Error> {
    let mut batched = first.len();
    feed_frame(sink, first).await?;
    while batched < CLIENT_FLUSH_BYTES {
        let Some(frame) = outbox.next_ready() else { break };
        batched += frame.len();
        feed_frame(sink, frame).await?;
    }
    sink.flush().await
}

/// One message: a whole frame as it is; one around a result as its head, the result in
/// [`FRAGMENT_BYTES`] pieces and its tail, fragments of one text message (RFC 6455, 5.4), each a
/// slice of the bytes the extension sent (never copied whole).
async fn feed_frame(
    sink: &mut SplitSink<Socket, Message>,
    frame: ClientFrame,
) -> Result<(), tungstenite::Error> {
    match frame {
        ClientFrame::Whole(text) => sink.feed(Message::Text(text.into())).await,
        ClientFrame::Around(around) => {
            let Around { head, body, tail } = *around;
            let fragment = |bytes, first, last| {
                let opcode = OpCode::Data(if first { Data::Text } else { Data::Continue });
                Message::Frame(Frame::message(bytes, opcode, last))
            };
            sink.feed(fragment(Bytes::from(head), true, false)).await?;
            let mut start = 0;
            while start < body.len() {
                let end = (start + FRAGMENT_BYTES).min(body.len());
                sink.feed(fragment(body.slice(start..end), false, false)).await?;
                start = end;
            }
            sink.feed(fragment(Bytes::from(tail), false, true)).await
        }
    }
}

async fn extension_socket(
    State(state): State<AppState>,
    Extension(route): Extension<AgentRoute>,
    ws: Upgrade,
) -> Response {
    if !route.prefix.is_empty() {
        return (StatusCode::NOT_FOUND, "tabtunnel: the extension socket belongs to no agent\n")
            .into_response();
    }
    ws.on_upgrade(socket_config(), move |socket| extension_session(state, socket))
}

/// `first` and the frames queued behind it as one message (a JSON array when more than one):
/// the extension's worker pays per message, far more than per byte.
fn extension_message(
    first: Utf8Bytes,
    rx: &mut mpsc::Receiver<Utf8Bytes>,
    batch: &mut Vec<Utf8Bytes>,
) -> Utf8Bytes {
    let mut bytes = first.len();
    batch.clear();
    batch.push(first);
    while bytes < WRITE_BATCH_BYTES {
        let Ok(frame) = rx.try_recv() else { break };
        bytes += frame.len();
        batch.push(frame);
    }
    if batch.len() == 1 {
        return batch.pop().expect("one frame");
    }
    let message = hot::join_array(batch.iter().map(Utf8Bytes::as_str));
    batch.clear();
    message.into()
}

fn parse_extension_frame(message: Message) -> Option<Result<FromExtension, String>> {
    let text = match message {
        Message::Text(text) => text,
        Message::Binary(bytes) => Utf8Bytes::try_from(bytes).ok()?,
        _ => return None,
    };
    Some(
        serde_json::from_str(text.as_str())
            .map_err(|e| format!("{e}: {}", text.as_str().chars().take(200).collect::<String>())),
    )
}

/// The extension's socket: `Hello` first, then frames both ways and a heartbeat from us.
async fn extension_session(state: AppState, mut socket: Socket) {
    let socket_id = state.hub.next_id();
    let hello = match tokio::time::timeout(HELLO_TIMEOUT, socket.next()).await {
        Ok(Some(Ok(message))) => match parse_extension_frame(message) {
            Some(Ok(FromExtension::Hello(hello))) => hello,
            other => {
                tracing::warn!("extension socket did not start with Hello: {other:?}");
                return;
            }
        },
        _ => return,
    };
    let (outbox, mut rx) = mpsc::channel::<Utf8Bytes>(hub::EXTENSION_OUTBOX);
    let (accepted, verdict) = oneshot::channel();
    let input = Input::ExtensionHello { socket: socket_id, hello, outbox, accepted };
    if state.hub.send(input).await.is_err() {
        return;
    }
    let welcome = match verdict.await {
        Ok(Ok(welcome)) => welcome,
        Ok(Err(reason)) => {
            tracing::warn!("extension rejected: {reason}");
            let _ = socket.send(Message::Text(ToExtension::Rejected { reason }.to_json().into())).await;
            return;
        }
        Err(_) => return,
    };
    tracing::info!("extension connected");
    let (mut sink, mut stream) = socket.split();
    if sink.send(Message::Text(ToExtension::Welcome(welcome).to_json().into())).await.is_err() {
        let _ = state.hub.send(Input::ExtensionClosed { socket: socket_id }).await;
        return;
    }
    let writer = tokio::spawn(async move {
        let mut heartbeat = tokio::time::interval(Duration::from_millis(HEARTBEAT_INTERVAL_MS as u64));
        let heartbeat_frame: Utf8Bytes = ToExtension::Heartbeat.to_json().into();
        let mut batch = Vec::new();
        loop {
            let first = tokio::select! {
                frame = rx.recv() => match frame { Some(frame) => frame, None => break },
                _ = heartbeat.tick() => heartbeat_frame.clone(),
            };
            if sink.send(Message::Text(extension_message(first, &mut rx, &mut batch))).await.is_err() {
                return;
            }
        }
        let _ = sink.send(Message::Close(None)).await;
    });
    loop {
        let message = match tokio::time::timeout(EXTENSION_SILENCE_LIMIT, stream.next()).await {
            Ok(Some(Ok(message))) => message,
            Ok(_) => break,
            Err(_) => {
                tracing::warn!("extension silent for {EXTENSION_SILENCE_LIMIT:?}; dropping it");
                break;
            }
        };
        let text = match message {
            Message::Text(text) => text,
            Message::Binary(bytes) => match Utf8Bytes::try_from(bytes) {
                Ok(text) => text,
                Err(_) => {
                    tracing::warn!("ignoring a binary frame from the extension that is not UTF-8");
                    continue;
                }
            },
            Message::Close(_) => break,
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => continue,
        };
        // Read in the hub, by layout where it can (`wire::hot`): no parse here, no copy.
        if state.hub.send(Input::ExtensionMessage { socket: socket_id, text }).await.is_err() {
            break;
        }
        if writer.is_finished() {
            break;
        }
    }
    writer.abort();
    let _ = state.hub.send(Input::ExtensionClosed { socket: socket_id }).await;
    tracing::info!("extension disconnected");
}
