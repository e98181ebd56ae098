//! The daemon's endpoints `tabtunnel mcp` uses beneath the agent's endpoint:
//! `GET /tabtunnel/status` and `POST /tabtunnel/handover`, and `/json/version` to find out
//! whether the daemon serves agents at all.

use super::endpoint::ClientEndpoint;
use super::supervisor::Extension;
use crate::proof::Key;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;

/// Bound on the small requests (status, version); a hand-over has its own.
const QUICK: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub daemon_version: String,
    pub extension_connected: bool,
    pub extension_epoch: u64,
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default)]
    pub tabs: Vec<Value>,
}

#[derive(Debug)]
pub enum ApiError {
    /// Nothing answered (connection refused, timeout).
    Unreachable(String),
    /// An HTTP error status, with the body's text.
    Status(u16, String),
    /// A 2xx whose body is not what the contract says.
    BadReply(String),
    /// The listener did not prove it is this user's daemon (`crate::proof`).
    NotOurs(String),
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApiError::Unreachable(why) => write!(f, "{why}"),
            ApiError::Status(code, body) => write!(f, "HTTP {code}: {}", body.trim()),
            ApiError::BadReply(why) => write!(f, "unexpected reply: {why}"),
            ApiError::NotOurs(why) => write!(f, "{why}"),
        }
    }
}

/// One agent's view of one daemon.
#[derive(Clone)]
pub struct Daemon {
    endpoint: ClientEndpoint,
    agent: String,
    /// This user's key, when the daemon must prove it is this user's before each request (one
    /// found through `daemon.json`); `None` for an endpoint the user gave, or the daemon's own.
    proof: Option<Key>,
}

impl Daemon {
    pub fn new(endpoint: ClientEndpoint, agent: String, proof: Option<Key>) -> Daemon {
        Daemon { endpoint, agent, proof }
    }

    pub fn agent(&self) -> &str {
        &self.agent
    }

    pub fn agent_endpoint(&self) -> String {
        self.endpoint.agent(&self.agent)
    }

    pub async fn status(&self) -> Result<Status, ApiError> {
        let body = self.request("GET", "/tabtunnel/status", None, QUICK).await?;
        serde_json::from_slice(&body).map_err(|e| ApiError::BadReply(e.to_string()))
    }

    /// Tells the daemon which MCP client this agent came through, for its audit records (an
    /// older daemon without the endpoint answers 404: nothing lost but the name).
    pub async fn tell_client(&self, name: &str, version: &str) -> Result<(), ApiError> {
        let body = serde_json::json!({"name": name, "version": version});
        self.request("POST", "/tabtunnel/client", Some(body.to_string()), QUICK).await.map(|_| ())
    }

    /// Asks the human for their active tab; waits for the answer (`outcome` granted, denied
    /// or timeout), a little longer than the daemon's own `timeout`.
    pub async fn handover(&self, reason: &str, timeout: Duration) -> Result<Value, ApiError> {
        let body = serde_json::json!({"reason": reason, "timeoutMs": timeout.as_millis() as u64});
        let reply = self
            .request("POST", "/tabtunnel/handover", Some(body.to_string()), timeout + Duration::from_secs(15))
            .await?;
        serde_json::from_slice(&reply).map_err(|e| ApiError::BadReply(e.to_string()))
    }

    /// The extension as the daemon reports it. A daemon without the status endpoint (one that
    /// predates agents) reports no epoch: only the child dying is noticed then.
    pub async fn extension(&self) -> Result<Extension, String> {
        match self.status().await {
            Ok(status) => {
                Ok(Extension { connected: status.extension_connected, epoch: Some(status.extension_epoch) })
            }
            Err(ApiError::Status(404, _)) => match self.get_plain("/json/version").await {
                Ok(_) => Ok(Extension { connected: true, epoch: None }),
                Err(e) => Err(self.explain(e)),
            },
            Err(e) => Err(self.explain(e)),
        }
    }

    /// The endpoint the child is pointed at: the agent's, or (from a daemon that predates
    /// agents) the plain client endpoint, with a warning, since every client then shares the
    /// same tabs. Unreachable daemons get the agent's: the child connects lazily. A listener
    /// that failed the proof gets no child pointed at it (with the token).
    pub async fn child_endpoint(&self) -> Result<String, String> {
        Ok(match self.request("GET", "/json/version", None, QUICK).await {
            Err(ApiError::NotOurs(why)) => return Err(why),
            Err(ApiError::Status(404, _)) if self.get_plain("/json/version").await.is_ok() => {
                tracing::warn!(
                    "the daemon at {} does not serve agents (no /agent/<name>/json/version): agent {} \
                     uses the shared client endpoint and sees every shared tab",
                    super::endpoint::redact(self.endpoint.as_str()),
                    self.agent
                );
                self.endpoint.as_str().to_owned()
            }
            _ => self.agent_endpoint(),
        })
    }

    fn explain(&self, e: ApiError) -> String {
        match e {
            ApiError::Unreachable(_) => self.endpoint.nobody_listening(),
            ApiError::Status(401 | 403, _) => format!(
                "the daemon at {} refused the token: is --endpoint (or the config dir's token) the one \
                 `tabtunnel token` prints for that daemon?",
                super::endpoint::redact(self.endpoint.as_str())
            ),
            ApiError::NotOurs(why) => why,
            other => format!("the tabtunnel daemon: {other}"),
        }
    }

    /// A WebSocket saying this MCP session expects the agent (`/tabtunnel/session`), the daemon
    /// proven first as for every request. A daemon without that endpoint (404) gets a
    /// connection on the agent's browser endpoint (`/cdp`) instead, as a CDP client's.
    pub async fn session_socket(&self) -> Result<hyper::upgrade::Upgraded, ApiError> {
        match self.socket("/tabtunnel/session").await {
            Err(ApiError::Status(404, _)) => self.socket("/cdp").await,
            other => other,
        }
    }

    async fn socket(&self, path: &str) -> Result<hyper::upgrade::Upgraded, ApiError> {
        let authority = self.endpoint.authority();
        let url = format!("{}{path}", self.agent_endpoint());
        let opening = async {
            let mut sender = connect(&authority).await?;
            if let Some(key) = &self.proof {
                prove(&mut sender, &authority, key).await?;
            }
            let uri: hyper::Uri = url.parse().map_err(|e| ApiError::BadReply(format!("{e}")))?;
            let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
            let key = tokio_tungstenite::tungstenite::handshake::client::generate_key();
            let request = hyper::Request::builder()
                .method("GET")
                .uri(path)
                .header(hyper::header::HOST, &authority)
                .header(hyper::header::CONNECTION, "Upgrade")
                .header(hyper::header::UPGRADE, "websocket")
                .header(hyper::header::SEC_WEBSOCKET_VERSION, "13")
                .header(hyper::header::SEC_WEBSOCKET_KEY, key)
                .body(Full::new(Bytes::new()))
                .map_err(|e| ApiError::BadReply(e.to_string()))?;
            sender.ready().await.map_err(|e| ApiError::Unreachable(e.to_string()))?;
            let response =
                sender.send_request(request).await.map_err(|e| ApiError::Unreachable(e.to_string()))?;
            if response.status() != hyper::StatusCode::SWITCHING_PROTOCOLS {
                let status = response.status().as_u16();
                let body = response.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                return Err(ApiError::Status(status, String::from_utf8_lossy(&body).into_owned()));
            }
            hyper::upgrade::on(response).await.map_err(|e| ApiError::Unreachable(e.to_string()))
        };
        bounded(QUICK, &authority, opening).await
    }

    async fn get_plain(&self, path: &str) -> Result<Bytes, ApiError> {
        let url = format!("{}{path}", self.endpoint.as_str());
        send(&self.endpoint.authority(), "GET", &url, None, QUICK, self.proof.as_ref()).await
    }

    async fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<String>,
        bound: Duration,
    ) -> Result<Bytes, ApiError> {
        let url = format!("{}{path}", self.agent_endpoint());
        send(&self.endpoint.authority(), method, &url, body, bound, self.proof.as_ref()).await
    }
}

/// One HTTP/1.1 request on its own loopback connection (these are rare: one per browser tool
/// call at most), bounded by `bound`. With `proof`, the listener first proves on that connection
/// that it is this user's daemon ([`prove`]); nothing of the request is sent otherwise.
pub(crate) async fn send(
    authority: &str,
    method: &str,
    url: &str,
    body: Option<String>,
    bound: Duration,
    proof: Option<&Key>,
) -> Result<Bytes, ApiError> {
    let exchange = async {
        let mut sender = connect(authority).await?;
        if let Some(key) = proof {
            prove(&mut sender, authority, key).await?;
        }
        let uri: hyper::Uri = url.parse().map_err(|e| ApiError::BadReply(format!("{e}")))?;
        let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
        exchange(&mut sender, authority, method, path, body).await
    };
    bounded(bound, authority, exchange).await
}

/// The pid of the daemon listening at `authority`, once it has proved it holds `key`.
pub(crate) async fn proven_pid(authority: &str, key: &Key, bound: Duration) -> Result<u32, ApiError> {
    bounded(bound, authority, async { prove(&mut connect(authority).await?, authority, key).await }).await
}

/// The one check every client makes before it sends a secret: the listener answers a fresh
/// nonce with a MAC under the owner-only key (`crate::proof`). Its pid, or `NotOurs`.
async fn prove(sender: &mut Sender, authority: &str, key: &Key) -> Result<u32, ApiError> {
    let not_ours = |why: String| {
        ApiError::NotOurs(format!(
            "what listens on {authority} is not this user's tabtunnel daemon ({why}); nothing secret was sent to it"
        ))
    };
    let port = authority.rsplit_once(':').and_then(|(_, p)| p.parse::<u16>().ok()).unwrap_or(80);
    let (nonce, path) = crate::proof::challenge();
    match exchange(sender, authority, "GET", &path, None).await {
        Ok(reply) => crate::proof::check(key, port, &nonce, &reply).map_err(not_ours),
        Err(ApiError::Status(code, _)) => Err(not_ours(format!("its hello answer is HTTP {code}"))),
        Err(e) => Err(e),
    }
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn connect(authority: &str) -> Result<Sender, ApiError> {
    let stream = tokio::net::TcpStream::connect(authority)
        .await
        .map_err(|e| ApiError::Unreachable(format!("cannot connect to {authority}: {e}")))?;
    let _ = stream.set_nodelay(true);
    let (sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .map_err(|e| ApiError::Unreachable(e.to_string()))?;
    // With upgrades: `Daemon::session_socket` turns the connection into a WebSocket.
    tokio::spawn(connection.with_upgrades());
    Ok(sender)
}

async fn exchange(
    sender: &mut Sender,
    authority: &str,
    method: &str,
    path: &str,
    body: Option<String>,
) -> Result<Bytes, ApiError> {
    let mut request =
        hyper::Request::builder().method(method).uri(path).header(hyper::header::HOST, authority);
    if body.is_some() {
        request = request.header(hyper::header::CONTENT_TYPE, "application/json");
    }
    let request = request
        .body(Full::new(Bytes::from(body.unwrap_or_default())))
        .map_err(|e| ApiError::BadReply(e.to_string()))?;
    sender.ready().await.map_err(|e| ApiError::Unreachable(e.to_string()))?;
    let response = sender.send_request(request).await.map_err(|e| ApiError::Unreachable(e.to_string()))?;
    let status = response.status();
    let bytes =
        response.into_body().collect().await.map_err(|e| ApiError::Unreachable(e.to_string()))?.to_bytes();
    if !status.is_success() {
        return Err(ApiError::Status(status.as_u16(), String::from_utf8_lossy(&bytes).into_owned()));
    }
    Ok(bytes)
}

async fn bounded<T>(
    bound: Duration,
    authority: &str,
    work: impl std::future::Future<Output = Result<T, ApiError>>,
) -> Result<T, ApiError> {
    tokio::time::timeout(bound, work).await.unwrap_or_else(|_| {
        Err(ApiError::Unreachable(format!("no answer from {authority} within {}s", bound.as_secs())))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::{get, post};
    use axum::Router;

    async fn serve(router: Router) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, router).await });
        format!("http://127.0.0.1:{port}/tok")
    }

    fn daemon(base: &str) -> Daemon {
        Daemon::new(ClientEndpoint::parse(base).unwrap().0, "A".into(), None)
    }

    #[tokio::test]
    async fn reads_status_and_the_extension_from_an_agent_daemon() {
        let base = serve(
            Router::new()
                .route(
                    "/tok/agent/A/tabtunnel/status",
                    get(|| async {
                        axum::Json(serde_json::json!({"daemonVersion": "0.2.0", "extensionConnected": true,
                            "extensionEpoch": 3, "agent": "A", "tabs": [{"targetId": "T", "url": "u", "title": "t"}]}))
                    }),
                )
                .route("/tok/agent/A/json/version", get(|| async { "{}" }))
                .route(
                    "/tok/agent/A/tabtunnel/handover",
                    post(|body: String| async move {
                        let request: Value = serde_json::from_str(&body).unwrap();
                        assert_eq!(request["reason"], "log in");
                        assert_eq!(request["timeoutMs"], 5000);
                        axum::Json(serde_json::json!({"outcome": "denied"}))
                    }),
                ),
        )
        .await;
        let d = daemon(&base);
        let status = d.status().await.unwrap();
        assert_eq!(status.extension_epoch, 3);
        assert_eq!(status.tabs.len(), 1);
        assert_eq!(d.extension().await.unwrap(), Extension { connected: true, epoch: Some(3) });
        assert_eq!(d.child_endpoint().await, Ok(format!("{base}/agent/A")));
        let answer = d.handover("log in", Duration::from_secs(5)).await.unwrap();
        assert_eq!(answer["outcome"], "denied");
    }

    #[tokio::test]
    async fn a_daemon_without_agents_is_used_through_its_plain_endpoint() {
        let base = serve(Router::new().route("/tok/json/version", get(|| async { "{}" }))).await;
        let d = daemon(&base);
        assert_eq!(d.extension().await.unwrap(), Extension { connected: true, epoch: None });
        assert_eq!(d.child_endpoint().await, Ok(base));
        assert!(matches!(d.status().await, Err(ApiError::Status(404, _))));
    }

    /// `tabtunnel mcp` with a daemon found through daemon.json: a listener on that port that
    /// cannot prove it holds this user's key hears no token, and the error says so.
    #[tokio::test]
    async fn a_listener_that_is_not_our_daemon_gets_no_token() {
        let dir = tempfile::tempdir().unwrap();
        let key = crate::proof::Key::load_or_create(dir.path()).unwrap();
        let impostor = crate::proof::testing::Impostor::start().await;
        let token = crate::token::load_or_create(dir.path()).unwrap();
        let endpoint = ClientEndpoint::local(dir.path(), impostor.port).unwrap();
        let d = Daemon::new(endpoint.clone(), "A".into(), Some(key));
        assert!(matches!(d.status().await, Err(ApiError::NotOurs(_))));
        let why = d.extension().await.unwrap_err();
        assert!(why.contains("not this user's tabtunnel daemon"), "{why}");
        assert!(d.handover("x", Duration::from_secs(1)).await.is_err());
        assert!(d.child_endpoint().await.is_err(), "no child is pointed at it");
        let heard = impostor.heard();
        assert!(heard.contains("/tabtunnel/hello?nonce="), "{heard}");
        assert!(!heard.contains(&token), "the token reached the impostor: {heard}");
        // Without the proof (the code before), the same daemon was asked with the token.
        let unproven = Daemon::new(endpoint, "A".into(), None);
        assert!(unproven.status().await.is_err());
        assert!(impostor.heard().contains(&token));
    }

    #[tokio::test]
    async fn no_daemon_says_how_to_start_one() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let d = daemon(&format!("http://127.0.0.1:{port}/tok"));
        let why = d.extension().await.unwrap_err();
        assert!(why.contains("tabtunnel launch") && why.contains("tabtunnel serve"), "{why}");
    }
}
