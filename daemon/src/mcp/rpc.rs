//! A JSON-RPC client over newline-delimited JSON (MCP's stdio transport), for talking to the
//! child tool server. Results stay raw JSON: rmcp's typed client would drop what its model
//! does not know (chrome-devtools-mcp's `category` annotations, future fields), and we promise
//! to forward tools unchanged.

use futures_util::StreamExt;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::codec::{FramedRead, LinesCodec};

/// Screenshots come back as base64 in one line; anything past this is not a reply we want.
const MAX_LINE_BYTES: usize = 128 << 20;
/// Notifications from the child waiting to be handled; past this they are dropped (logged).
const NOTIFICATION_QUEUE: usize = 64;

#[derive(Debug, Clone, PartialEq)]
pub enum RpcError {
    /// The request was never written: the child is gone. Safe to send again elsewhere.
    NotSent(String),
    /// The child went away after the request was written: it may or may not have run.
    LostInFlight(String),
    /// The child answered with a JSON-RPC error.
    Remote { code: i64, message: String, data: Option<Value> },
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RpcError::NotSent(why) => write!(f, "not sent: {why}"),
            RpcError::LostInFlight(why) => write!(f, "lost in flight: {why}"),
            RpcError::Remote { code, message, .. } => write!(f, "error {code}: {message}"),
        }
    }
}

/// A notification the child sent (`method`, `params`).
#[derive(Debug, Clone)]
pub struct Notification {
    pub method: String,
    pub params: Value,
}

type Pending = Arc<Mutex<Option<HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>>>>;

pub struct RpcPeer {
    writer: tokio::sync::Mutex<Box<dyn AsyncWrite + Send + Unpin>>,
    /// `None` once the reader has ended: nothing more will be answered.
    pending: Pending,
    next_id: AtomicU64,
    closed: watch::Receiver<bool>,
}

impl RpcPeer {
    /// Starts reading `reader`; notifications go to the returned receiver.
    pub fn start(
        reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
    ) -> (Arc<RpcPeer>, mpsc::Receiver<Notification>) {
        let pending: Pending = Arc::new(Mutex::new(Some(HashMap::new())));
        let (closed_tx, closed) = watch::channel(false);
        let (notify_tx, notify_rx) = mpsc::channel(NOTIFICATION_QUEUE);
        let peer = Arc::new(RpcPeer {
            writer: tokio::sync::Mutex::new(Box::new(writer)),
            pending: pending.clone(),
            next_id: AtomicU64::new(1),
            closed,
        });
        let answerer = Arc::downgrade(&peer);
        tokio::spawn(async move {
            let mut lines = FramedRead::new(reader, LinesCodec::new_with_max_length(MAX_LINE_BYTES));
            let end = loop {
                let line = match lines.next().await {
                    Some(Ok(line)) => line,
                    Some(Err(e)) => break format!("unreadable output: {e}"),
                    None => break "its output ended".to_owned(),
                };
                match classify(&line) {
                    Incoming::Reply { id, outcome } => {
                        let waiter = pending.lock().unwrap().as_mut().and_then(|p| p.remove(&id));
                        if let Some(waiter) = waiter {
                            let _ = waiter.send(outcome);
                        }
                    }
                    Incoming::Request { id, method } => {
                        // We offer the child no client capabilities; only ping gets an answer.
                        let reply = if method == "ping" {
                            json!({"jsonrpc": "2.0", "id": id, "result": {}})
                        } else {
                            json!({"jsonrpc": "2.0", "id": id,
                                   "error": {"code": -32601, "message": format!("{method} is not supported by tabtunnel")}})
                        };
                        if let Some(peer) = answerer.upgrade() {
                            let _ = peer.write_line(&reply.to_string()).await;
                        }
                    }
                    Incoming::Notification(n) => {
                        if notify_tx.try_send(n).is_err() {
                            tracing::debug!("child notification dropped (queue full)");
                        }
                    }
                    Incoming::Junk => tracing::debug!("child wrote a line that is not JSON-RPC: {line:.200}"),
                }
            };
            let waiters = pending.lock().unwrap().take().unwrap_or_default();
            for (_, waiter) in waiters {
                let _ = waiter.send(Err(RpcError::LostInFlight(end.clone())));
            }
            let _ = closed_tx.send(true);
        });
        (peer, notify_rx)
    }

    pub fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }

    /// Resolves once the child's output has ended.
    #[cfg(test)]
    pub async fn closed(&self) {
        let mut closed = self.closed.clone();
        let _ = closed.wait_for(|c| *c).await;
    }

    /// Sends `method` and waits for its answer (no deadline here: tools may take long; the
    /// caller decides, and a child that exits answers every waiter with `LostInFlight`).
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        self.send(method, params).await?.answer().await
    }

    /// Writes request `method`; the returned call awaits its answer. `NotSent` means the child
    /// never got it.
    pub async fn send(&self, method: &str, params: Value) -> Result<SentRequest<'_>, RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        match self.pending.lock().unwrap().as_mut() {
            Some(pending) => pending.insert(id, tx),
            None => return Err(RpcError::NotSent("the tool server has exited".into())),
        };
        // From here on, a caller that gives up leaves no waiter behind.
        let sent = SentRequest { peer: self, id, answer: rx };
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        if let Err(e) = self.write_line(&line).await {
            return Err(RpcError::NotSent(format!("cannot write to the tool server: {e}")));
        }
        Ok(sent)
    }

    pub async fn notify(&self, method: &str, params: Value) -> std::io::Result<()> {
        self.write_line(&json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string()).await
    }

    async fn write_line(&self, line: &str) -> std::io::Result<()> {
        let mut writer = self.writer.lock().await;
        writer.write_all(line.as_bytes()).await?;
        writer.write_all(b"\n").await?;
        writer.flush().await
    }

    fn forget(&self, id: u64) {
        if let Some(pending) = self.pending.lock().unwrap().as_mut() {
            pending.remove(&id);
        }
    }
}

/// A request written to the child, waiting for its answer.
pub struct SentRequest<'a> {
    peer: &'a RpcPeer,
    pub id: u64,
    answer: oneshot::Receiver<Result<Value, RpcError>>,
}

impl SentRequest<'_> {
    pub async fn answer(mut self) -> Result<Value, RpcError> {
        (&mut self.answer)
            .await
            .unwrap_or_else(|_| Err(RpcError::LostInFlight("the tool server has exited".into())))
    }
}

impl Drop for SentRequest<'_> {
    fn drop(&mut self) {
        self.peer.forget(self.id);
    }
}

enum Incoming {
    Reply { id: u64, outcome: Result<Value, RpcError> },
    Request { id: Value, method: String },
    Notification(Notification),
    Junk,
}

fn classify(line: &str) -> Incoming {
    let Ok(Value::Object(mut message)) = serde_json::from_str::<Value>(line) else {
        return Incoming::Junk;
    };
    let method = message.get("method").and_then(Value::as_str).map(str::to_owned);
    match (message.remove("id"), method) {
        (Some(id), Some(method)) => Incoming::Request { id, method },
        (None, Some(method)) => Incoming::Notification(Notification {
            method,
            params: message.remove("params").unwrap_or(Value::Null),
        }),
        (Some(id), None) => {
            let Some(id) = id.as_u64() else { return Incoming::Junk };
            let outcome = match (message.remove("result"), message.remove("error")) {
                (Some(result), None) => Ok(result),
                (_, Some(error)) => Err(RpcError::Remote {
                    code: error.get("code").and_then(Value::as_i64).unwrap_or(-32603),
                    message: error.get("message").and_then(Value::as_str).unwrap_or("error").to_owned(),
                    data: error.get("data").cloned(),
                }),
                (None, None) => return Incoming::Junk,
            };
            Incoming::Reply { id, outcome }
        }
        (None, None) => Incoming::Junk,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, BufReader};

    #[tokio::test]
    async fn matches_replies_to_requests_and_passes_results_raw() {
        let (to_peer, peer_reads) = tokio::io::duplex(1 << 16);
        let (peer_writes, from_peer) = tokio::io::duplex(1 << 16);
        let (peer, mut notes) = RpcPeer::start(peer_reads, peer_writes);
        let mut from_peer = BufReader::new(from_peer).lines();
        let mut to_peer = to_peer;

        let call = tokio::spawn({
            let peer = peer.clone();
            async move { peer.request("tools/list", json!({})).await }
        });
        let sent: Value = serde_json::from_str(&from_peer.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(sent["method"], "tools/list");
        let id = sent["id"].clone();
        // A notification and a ping from the child in between.
        to_peer
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n")
            .await
            .unwrap();
        to_peer.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"method\":\"ping\"}\n").await.unwrap();
        let pong: Value = serde_json::from_str(&from_peer.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(pong, json!({"jsonrpc": "2.0", "id": "p1", "result": {}}));
        let reply = json!({"jsonrpc": "2.0", "id": id,
            "result": {"tools": [{"name": "t", "annotations": {"category": "input"}}]}});
        to_peer.write_all(format!("{reply}\n").as_bytes()).await.unwrap();
        let result = call.await.unwrap().unwrap();
        assert_eq!(result["tools"][0]["annotations"]["category"], "input");
        assert_eq!(notes.recv().await.unwrap().method, "notifications/tools/list_changed");
    }

    #[tokio::test]
    async fn remote_errors_come_back_as_such() {
        let (mut to_peer, peer_reads) = tokio::io::duplex(1 << 16);
        let (peer_writes, from_peer) = tokio::io::duplex(1 << 16);
        let (peer, _notes) = RpcPeer::start(peer_reads, peer_writes);
        let mut from_peer = BufReader::new(from_peer).lines();
        let call = tokio::spawn({
            let peer = peer.clone();
            async move { peer.request("tools/call", json!({"name": "x"})).await }
        });
        let sent: Value = serde_json::from_str(&from_peer.next_line().await.unwrap().unwrap()).unwrap();
        let reply = json!({"jsonrpc": "2.0", "id": sent["id"], "error": {"code": -32602, "message": "bad"}});
        to_peer.write_all(format!("not json\n{reply}\n").as_bytes()).await.unwrap();
        assert_eq!(
            call.await.unwrap(),
            Err(RpcError::Remote { code: -32602, message: "bad".into(), data: None })
        );
    }

    #[tokio::test]
    async fn a_child_that_exits_fails_calls_in_flight_and_refuses_new_ones() {
        let (to_peer, peer_reads) = tokio::io::duplex(1 << 16);
        let (peer_writes, from_peer) = tokio::io::duplex(1 << 16);
        let (peer, _notes) = RpcPeer::start(peer_reads, peer_writes);
        let mut from_peer = BufReader::new(from_peer).lines();
        let call = tokio::spawn({
            let peer = peer.clone();
            async move { peer.request("tools/call", json!({})).await }
        });
        from_peer.next_line().await.unwrap().unwrap();
        drop(to_peer);
        assert!(matches!(call.await.unwrap(), Err(RpcError::LostInFlight(_))));
        peer.closed().await;
        assert!(peer.is_closed());
        assert!(matches!(peer.request("tools/call", json!({})).await, Err(RpcError::NotSent(_))));
    }
}
