//! Helpers of the daemon tests: a daemon on a real socket, a scripted fake extension in place of
//! Chrome, raw clients.
#![allow(dead_code)] // each test file uses some of them

pub use futures_util::{SinkExt, StreamExt};
pub use serde_json::{json, Value};
pub use std::time::Duration;
pub use tabtunnel::outbox::Limits as OutboxLimits;
pub use tabtunnel::{Limits, Running, ServeOptions, EXTENSION_ID};
#[allow(unused_imports)]
pub use tabtunnel_wire::{
    BrowserInfo, BrowserOp, BrowserRequest, CommandResult, Event, FromExtension, Hello, RawValue, TabInfo,
    ToExtension, UnshareReason,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
pub use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;
pub const WAIT: Duration = Duration::from_secs(10);
pub const ORIGIN: &str = "chrome-extension://jmlcgbpniifikmbmclnhinffofckiihm";

pub struct Daemon {
    pub running: Running,
    _config: tempfile::TempDir,
}

pub async fn daemon() -> Daemon {
    daemon_with(Limits::default()).await
}

pub async fn daemon_with(limits: Limits) -> Daemon {
    start(limits, None, OutboxLimits::default()).await
}

/// A daemon with a policy file holding `policy` (TOML).
pub async fn daemon_with_policy(limits: Limits, policy: Option<&str>) -> Daemon {
    start(limits, policy, OutboxLimits::default()).await
}

pub async fn daemon_with_outbox(client_outbox: OutboxLimits) -> Daemon {
    start(Limits::default(), None, client_outbox).await
}

async fn start(limits: Limits, policy: Option<&str>, client_outbox: OutboxLimits) -> Daemon {
    start_with(limits, policy, client_outbox, |_| {}).await
}

/// A daemon whose options `adjust` changes, with a fresh config dir that `prepare` may fill
/// first (agents' tokens, say).
pub async fn daemon_configured(
    prepare: impl FnOnce(&std::path::Path),
    adjust: impl FnOnce(&mut ServeOptions),
) -> Daemon {
    let config = tempfile::tempdir().unwrap();
    prepare(config.path());
    start_in(config, Limits::default(), None, OutboxLimits::default(), adjust).await
}

async fn start_with(
    limits: Limits,
    policy: Option<&str>,
    client_outbox: OutboxLimits,
    adjust: impl FnOnce(&mut ServeOptions),
) -> Daemon {
    start_in(tempfile::tempdir().unwrap(), limits, policy, client_outbox, adjust).await
}

async fn start_in(
    config: tempfile::TempDir,
    limits: Limits,
    policy: Option<&str>,
    client_outbox: OutboxLimits,
    adjust: impl FnOnce(&mut ServeOptions),
) -> Daemon {
    let policy = policy.map(|text| {
        let path = config.path().join("policy.toml");
        std::fs::write(&path, text).unwrap();
        path
    });
    let mut options = ServeOptions {
        port: 0,
        require_token: true,
        config_dir: config.path().to_owned(),
        extension_id: EXTENSION_ID.into(),
        limits,
        policy,
        data_dir: config.path().join("data"),
        client_outbox,
        require_agent_tokens: false,
        on_demand: false,
        // The scripted extension is not asked to prepare tabs (core/src/prepared.rs's tests are).
        prepare_tabs: false,
    };
    adjust(&mut options);
    let running = tabtunnel::start(options).await.unwrap();
    Daemon { running, _config: config }
}

impl Daemon {
    /// Stops this daemon and starts another on the same config dir (its trail, its secrets).
    pub async fn restart(self) -> Daemon {
        let Daemon { running, _config: config } = self;
        running.stop().await;
        start_in(config, Limits::default(), None, OutboxLimits::default(), |_| {}).await
    }

    pub fn config_dir(&self) -> &std::path::Path {
        self._config.path()
    }

    /// `http://127.0.0.1:PORT/<token>/agent/<name>`
    pub fn agent_endpoint(&self, name: &str) -> String {
        format!("{}/agent/{name}", self.running.client_endpoint())
    }

    pub fn token(&self) -> String {
        self.running.token.clone().unwrap()
    }
}

pub fn tab(tab_id: i32) -> TabInfo {
    TabInfo {
        tab_id,
        window_id: 1,
        target_id: format!("PAGE{tab_id}"),
        browser_context_id: "CTX".into(),
        url: format!("http://127.0.0.1:1/{tab_id}"),
        title: format!("Tab {tab_id}"),
        opener_target_id: None,
        agent: tabtunnel_wire::DEFAULT_AGENT.into(),
        created: false,
        kind: Default::default(),
    }
}

pub fn hello(tabs: &[i32]) -> FromExtension {
    FromExtension::Hello(Hello {
        protocol_version: tabtunnel_wire::PROTOCOL_VERSION,
        extension_version: "0.1.0".into(),
        instance_id: "browser-1".into(),
        browser: BrowserInfo {
            product: "HeadlessChrome/156.0.8078.73".into(),
            user_agent: "Mozilla/5.0 HeadlessChrome/156.0.0.0 Safari/537.36".into(),
            protocol_version: "1.3".into(),
            js_version: "15.6.1".into(),
        },
        tabs: tabs.iter().map(|t| tab(*t)).collect(),
        kill_switch: false,
        take_over: false,
    })
}

pub async fn ws(url: &str, origin: Option<&str>) -> Result<Socket, tokio_tungstenite::tungstenite::Error> {
    let mut request = url.into_client_request().unwrap();
    if let Some(origin) = origin {
        request.headers_mut().insert("Origin", HeaderValue::from_str(origin).unwrap());
    }
    tokio_tungstenite::connect_async(request).await.map(|(s, _)| s)
}

/// The fake extension's socket. The daemon may send several frames in one message (a JSON
/// array): they are read one at a time.
pub struct ExtSocket {
    socket: Socket,
    queued: std::collections::VecDeque<ToExtension>,
}

impl From<Socket> for ExtSocket {
    fn from(socket: Socket) -> Self {
        ExtSocket { socket, queued: Default::default() }
    }
}

impl std::ops::Deref for ExtSocket {
    type Target = Socket;
    fn deref(&self) -> &Socket {
        &self.socket
    }
}

impl std::ops::DerefMut for ExtSocket {
    fn deref_mut(&mut self) -> &mut Socket {
        &mut self.socket
    }
}

/// The extension socket, connected but silent.
pub async fn extension_socket(d: &Daemon) -> ExtSocket {
    ws(&d.running.extension_url(), Some(ORIGIN)).await.unwrap().into()
}

/// A fake extension that has said Hello and read the Welcome.
pub async fn extension(d: &Daemon, tabs: &[i32]) -> ExtSocket {
    let mut socket = extension_socket(d).await;
    socket.send(Message::text(hello(tabs).to_json())).await.unwrap();
    match next_ext(&mut socket).await {
        ToExtension::Welcome(w) => assert_eq!(w.client_endpoint, d.running.client_endpoint()),
        other => panic!("expected Welcome, got {other:?}"),
    }
    socket
}

pub async fn next_text(socket: &mut Socket) -> String {
    loop {
        let message =
            tokio::time::timeout(WAIT, socket.next()).await.expect("a frame in time").expect("open").unwrap();
        if let Message::Text(text) = message {
            return text.to_string();
        }
    }
}

/// The next frame for the extension, skipping heartbeats, the side panel's agent lists and
/// credentials, and navigation rules.
pub async fn next_ext(socket: &mut ExtSocket) -> ToExtension {
    loop {
        match next_ext_with_reports(socket).await {
            ToExtension::Agents { .. }
            | ToExtension::AgentCredentials { .. }
            | ToExtension::NavigationRules { .. } => continue,
            frame => return frame,
        }
    }
}

/// The next frame to the extension but heartbeats, the side panel's reports included.
pub async fn next_ext_with_reports(socket: &mut ExtSocket) -> ToExtension {
    loop {
        if socket.queued.is_empty() {
            let text = next_text(socket).await;
            match text.starts_with('[') {
                true => socket.queued.extend(serde_json::from_str::<Vec<ToExtension>>(&text).unwrap()),
                false => socket.queued.push_back(serde_json::from_str(&text).unwrap()),
            }
        }
        match socket.queued.pop_front().expect("a frame") {
            ToExtension::Heartbeat => continue,
            frame => return frame,
        }
    }
}

/// The next tab or window operation asked of the extension: (request id, operation).
pub async fn next_browser_op(socket: &mut ExtSocket) -> (u64, BrowserOp) {
    match next_ext(socket).await {
        ToExtension::Browser(BrowserRequest { id, op }) => (id, op),
        other => panic!("expected a browser operation, got {other:?}"),
    }
}

/// A plain HTTP/1.1 request with a method and body; returns (status, body).
pub async fn request(port: u16, method: &str, path: &str, body: &str) -> (u16, String) {
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    exchange(port, &request).await
}

/// Sends one raw HTTP/1.1 request and reads the response to its end: (status, body).
async fn exchange(port: u16, request: &str) -> (u16, String) {
    let (status, body, _) = exchange_with_location(port, request).await;
    (status, body)
}

/// (status, body, Location header).
async fn exchange_with_location(port: u16, request: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let status = response[9..12].parse().unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let location = head.lines().find_map(|l| l.strip_prefix("location: ")).unwrap_or_default().to_owned();
    (status, body.to_owned(), location)
}

pub async fn next_json(socket: &mut Socket) -> Value {
    serde_json::from_str(&next_text(socket).await).unwrap()
}

pub async fn send(socket: &mut Socket, value: Value) {
    socket.send(Message::text(value.to_string())).await.unwrap();
}

pub async fn ext_send(socket: &mut Socket, frame: FromExtension) {
    socket.send(Message::text(frame.to_json())).await.unwrap();
}

/// Reads until the reply with `id`, returning it and the events before it.
pub async fn until_reply(socket: &mut Socket, id: i64) -> (Value, Vec<Value>) {
    let mut events = Vec::new();
    loop {
        let frame = next_json(socket).await;
        if frame["id"] == id {
            return (frame, events);
        }
        events.push(frame);
    }
}

/// A plain HTTP/1.1 GET; returns (status, body).
pub async fn get(port: u16, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let (status, body, _) = get_with_location(port, path, headers).await;
    (status, body)
}

/// A plain HTTP/1.1 GET; returns (status, body, Location header).
pub async fn get_with_location(port: u16, path: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
    let mut request = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    exchange_with_location(port, &request).await
}

/// Reads (and drops) frames until the daemon closes the socket; false if it stays open.
pub async fn closes_within(socket: &mut Socket, limit: Duration) -> bool {
    let drain = async {
        while let Some(Ok(message)) = socket.next().await {
            if message.is_close() {
                break;
            }
        }
    };
    tokio::time::timeout(limit, drain).await.is_ok()
}

pub fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).unwrap()
}

pub async fn client(d: &Daemon) -> Socket {
    ws(&d.running.ws_endpoint(), None).await.unwrap()
}

/// A client whose socket's receive buffer is `bytes`: what it has not read holds the daemon
/// back sooner, as a client does whose kernel buffers are full.
pub async fn client_with_receive_buffer(d: &Daemon, bytes: u32) -> Socket {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(bytes).unwrap();
    let stream = socket.connect(([127, 0, 0, 1], d.running.port).into()).await.unwrap();
    let request = d.running.ws_endpoint().into_client_request().unwrap();
    tokio_tungstenite::client_async(request, MaybeTlsStream::Plain(stream)).await.unwrap().0
}

/// Playwright's root auto-attach; returns the page session of each tab.
pub async fn attach_pages(client: &mut Socket) -> Vec<String> {
    send(client, json!({"id": 1, "method": "Target.setAutoAttach", "params": {"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": true}})).await;
    let (_, events) = until_reply(client, 1).await;
    events.iter().map(|e| e["params"]["sessionId"].as_str().unwrap().to_owned()).collect()
}

/// A browser tool server install in `data_dir`, as `tabtunnel mcp --install` leaves one, whose
/// `node` is `node`: what runs a session's child without Node.js or the network.
pub fn plant_tool_servers(data_dir: &std::path::Path, node: &std::path::Path) {
    let dir = tabtunnel::mcp::install::install_dir(data_dir);
    let script = dir.join("node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js");
    std::fs::create_dir_all(script.parent().unwrap()).unwrap();
    std::fs::write(&script, "").unwrap();
    std::fs::write(dir.join(".tabtunnel-installed"), json!({"node": node}).to_string()).unwrap();
}

/// The audit trail's lines once there are `n`.
pub async fn trail_lines(d: &Daemon, n: usize) -> Vec<String> {
    let file = d.config_dir().join("data/audit/audit.jsonl");
    for _ in 0..250 {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        if text.lines().count() >= n {
            return text.lines().map(str::to_owned).collect();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the trail never held {n} lines");
}
