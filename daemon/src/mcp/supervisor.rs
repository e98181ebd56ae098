//! Restart before forward: keeps one child tool server for the agent and hands browser tool
//! calls a child whose view of the browser is current.
//!
//! A child is stale when its process is gone, or when the extension's connection to the daemon
//! has been lost since it started (the daemon's `extensionEpoch` changed, or the extension is
//! not connected now): its CDP state (pages, sessions) no longer matches the browser. The next
//! browser tool call then starts a new child (after waiting, bounded, for the extension to be
//! back) before it forwards. Concurrent calls share that one start: whoever finds the child
//! stale starts it, the others await the same start, then each forwards its own call once. A
//! failed start fails every call that waited on it; none of them was sent.
//!
//! `tools/list` never restarts anything: it asks a live child, or answers from the pages the
//! last child listed (the tool set of a pinned child does not change between its runs). Only
//! when no child has ever listed its tools does a listing start one (a first start).

use super::child::Child;
use super::rpc::{Notification, RpcError};
use futures_util::future::{BoxFuture, FutureExt, Shared};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The extension's connection, as the daemon reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extension {
    pub connected: bool,
    /// Grows each time the extension (re)connects; `None` from a daemon that does not report it.
    pub epoch: Option<u64>,
}

/// What the supervisor needs from the world: the daemon's view of the extension, and a way to
/// start a child. Tests script both.
pub trait Backend: Send + Sync + 'static {
    fn extension(&self) -> impl Future<Output = Result<Extension, String>> + Send;
    /// Starts a child and completes its handshake; its notifications go to the receiver.
    fn launch(&self) -> impl Future<Output = Result<(Child, mpsc::Receiver<Notification>), String>> + Send;
}

#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// A first start (which may include installing the children on first use).
    pub first_start: Duration,
    /// A restart: waiting for the extension, spawning, handshake, listing.
    pub restart: Duration,
    /// How long a restart waits for the extension to be connected again.
    pub extension_wait: Duration,
    /// How often it asks meanwhile.
    pub extension_poll: Duration,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            first_start: Duration::from_secs(600),
            restart: Duration::from_secs(60),
            extension_wait: Duration::from_secs(20),
            extension_poll: Duration::from_millis(200),
        }
    }
}

/// Why a forwarded call got no answer from the child.
#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    /// No child could be had (start failed, daemon unreachable, extension absent): not sent.
    Unavailable(String),
    /// The child died after the call was written: it may or may not have run; not re-sent.
    Lost(String),
    /// The caller cancelled (the child was told).
    Cancelled,
    /// The child's own JSON-RPC error.
    Remote { code: i64, message: String, data: Option<Value> },
}

/// What the child's browser view was tied to when it started.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Freshness {
    /// The daemon reports no epoch: only the process dying makes it stale.
    Untracked,
    /// Current while the extension is connected with this epoch.
    Epoch(u64),
    /// Started while the extension was away: stale for browser calls.
    Disconnected,
}

impl Freshness {
    fn of(extension: Option<Extension>) -> Freshness {
        match extension {
            Some(Extension { connected: true, epoch: Some(epoch) }) => Freshness::Epoch(epoch),
            Some(Extension { connected: false, .. }) => Freshness::Disconnected,
            Some(Extension { epoch: None, .. }) | None => Freshness::Untracked,
        }
    }

    fn current_for(self, now: Extension) -> bool {
        match self {
            Freshness::Untracked => now.epoch.is_none(),
            Freshness::Epoch(epoch) => now.connected && now.epoch == Some(epoch),
            Freshness::Disconnected => false,
        }
    }
}

pub struct Live {
    pub child: Child,
    freshness: Freshness,
}

type Start = Shared<BoxFuture<'static, Result<Arc<Live>, String>>>;

enum Slot {
    /// Never started, or the last start failed.
    Empty,
    Running(Arc<Live>),
    Starting(Start),
}

struct Inner<B> {
    backend: B,
    bounds: Bounds,
    slot: Mutex<Slot>,
    /// Raw `tools/list` results by cursor, from the latest child (dropped when it says its
    /// tools changed).
    tool_pages: Arc<Mutex<HashMap<Option<String>, Value>>>,
    launches: AtomicU64,
    /// Some child has listed its tools (so later listings never start one).
    listed: AtomicBool,
    /// Every child's notifications, for the server to relay; the receiver ends when the
    /// supervisor and its children are gone.
    notifications: mpsc::Sender<Notification>,
}

pub struct Supervisor<B> {
    inner: Arc<Inner<B>>,
}

impl<B> Clone for Supervisor<B> {
    fn clone(&self) -> Self {
        Supervisor { inner: self.inner.clone() }
    }
}

impl<B: Backend> Supervisor<B> {
    pub fn new(backend: B, bounds: Bounds) -> (Supervisor<B>, mpsc::Receiver<Notification>) {
        let (notifications, relay) = mpsc::channel(64);
        let inner = Inner {
            backend,
            bounds,
            slot: Mutex::new(Slot::Empty),
            tool_pages: Arc::default(),
            launches: AtomicU64::new(0),
            listed: AtomicBool::new(false),
            notifications,
        };
        (Supervisor { inner: Arc::new(inner) }, relay)
    }

    pub fn backend(&self) -> &B {
        &self.inner.backend
    }

    /// How many children were started so far (the first one included).
    pub fn launches(&self) -> u64 {
        self.inner.launches.load(Ordering::Relaxed)
    }

    /// The running child, if any, without starting one.
    pub fn current(&self) -> Option<Arc<Live>> {
        match &*self.inner.slot.lock().unwrap() {
            Slot::Running(live) if live.child.is_alive() => Some(live.clone()),
            _ => None,
        }
    }

    /// Starts the first child in the background (when the client has initialized), so that
    /// the first `tools/list` finds it ready.
    pub fn warm_up(&self) {
        let mut slot = self.inner.slot.lock().unwrap();
        if matches!(*slot, Slot::Empty) {
            drop(self.begin_start(&mut slot, false));
        }
    }

    /// One page of the child's tool list, raw. Never restarts a child: a live child answers,
    /// else the last child's list does; only before any child has started does it start one.
    pub async fn list_tools(&self, cursor: Option<String>) -> Result<Value, String> {
        let params = match &cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        for _ in 0..2 {
            if let Some(live) = self.current() {
                match live.child.peer.request("tools/list", params.clone()).await {
                    Ok(page) => {
                        self.inner.tool_pages.lock().unwrap().insert(cursor, page.clone());
                        return Ok(page);
                    }
                    Err(RpcError::Remote { message, .. }) => return Err(message),
                    Err(e) => tracing::info!(
                        "tools/list: the tool server went away ({e}); answering from its last list"
                    ),
                }
            }
            if let Some(page) = self.inner.tool_pages.lock().unwrap().get(&cursor) {
                return Ok(page.clone());
            }
            let start = {
                let mut slot = self.inner.slot.lock().unwrap();
                match &*slot {
                    Slot::Starting(start) => start.clone(),
                    Slot::Empty if !self.inner.listed.load(Ordering::Relaxed) => {
                        self.begin_start(&mut slot, false)
                    }
                    _ => break,
                }
            };
            start.await?;
        }
        Err("the browser tool server is not running; the next browser tool call restarts it".into())
    }

    /// Forwards one `tools/call` (raw params) to a current child, exactly once. `cancel`
    /// abandons it (and tells the child).
    pub async fn call_tool(&self, params: Value, cancel: &CancellationToken) -> Result<Value, CallError> {
        // A child found dead only when writing to it never got the call: one more try, on a
        // new child, is still "exactly once".
        for attempt in 0..2 {
            let live = tokio::select! {
                live = self.browser_child() => live.map_err(CallError::Unavailable)?,
                _ = cancel.cancelled() => return Err(CallError::Cancelled),
            };
            let sent = match live.child.peer.send("tools/call", params.clone()).await {
                Ok(sent) => sent,
                Err(RpcError::NotSent(why)) => {
                    live.child.mark_dead();
                    if attempt == 0 {
                        continue;
                    }
                    return Err(CallError::Unavailable(why));
                }
                Err(e) => return Err(e.into()),
            };
            let id = sent.id;
            return tokio::select! {
                answer = sent.answer() => answer.map_err(CallError::from),
                _ = cancel.cancelled() => {
                    let _ = live.child.peer
                        .notify("notifications/cancelled", json!({"requestId": id, "reason": "cancelled by the client"}))
                        .await;
                    Err(CallError::Cancelled)
                }
            };
        }
        unreachable!("the loop returns")
    }

    /// A child current for the browser as it is now, restarting (once, shared) if needed.
    async fn browser_child(&self) -> Result<Arc<Live>, String> {
        let extension = self.inner.backend.extension().await?;
        let start = {
            let mut slot = self.inner.slot.lock().unwrap();
            match &*slot {
                Slot::Running(live) if live.child.is_alive() && live.freshness.current_for(extension) => {
                    return Ok(live.clone());
                }
                Slot::Starting(start) => start.clone(),
                Slot::Running(live) => {
                    tracing::info!(
                        "restarting the browser tool server ({})",
                        if live.child.is_alive() {
                            "the extension reconnected since it started"
                        } else {
                            "it exited"
                        }
                    );
                    self.begin_start(&mut slot, true)
                }
                Slot::Empty => self.begin_start(&mut slot, true),
            }
        };
        start.await
    }

    /// Starts a child in its own task (so a caller that gives up does not abandon it) and
    /// marks the slot as starting; the task publishes the outcome.
    fn begin_start(&self, slot: &mut Slot, wait_for_extension: bool) -> Start {
        let inner = self.inner.clone();
        let task = tokio::spawn(async move {
            let first = inner.launches.load(Ordering::Relaxed) == 0;
            let bound = if first { inner.bounds.first_start } else { inner.bounds.restart };
            let outcome =
                tokio::time::timeout(bound, inner.start(wait_for_extension)).await.unwrap_or_else(|_| {
                    Err(format!("the browser tool server did not start within {}s", bound.as_secs()))
                });
            if let Err(e) = &outcome {
                tracing::warn!("{e}");
            }
            let mut slot = inner.slot.lock().unwrap();
            *slot = match &outcome {
                Ok(live) => Slot::Running(live.clone()),
                Err(_) => Slot::Empty,
            };
            outcome
        });
        let start = async move {
            task.await.unwrap_or_else(|e| Err(format!("starting the browser tool server failed: {e}")))
        }
        .boxed()
        .shared();
        *slot = Slot::Starting(start.clone());
        start
    }
}

impl<B: Backend> Inner<B> {
    async fn start(&self, wait_for_extension: bool) -> Result<Arc<Live>, String> {
        // Read before launching: should the extension reconnect meanwhile, the next call sees a
        // newer epoch and restarts again, rather than trusting a child that may predate it.
        let extension = if wait_for_extension {
            Some(self.wait_for_extension().await?)
        } else {
            self.backend.extension().await.ok()
        };
        self.launches.fetch_add(1, Ordering::Relaxed);
        let (child, mut notifications) = self.backend.launch().await?;
        let first_page = child
            .peer
            .request("tools/list", json!({}))
            .await
            .map_err(|e| format!("the browser tool server did not list its tools: {e}"))?;
        {
            let mut pages = self.tool_pages.lock().unwrap();
            pages.clear();
            pages.insert(None, first_page);
        }
        self.listed.store(true, Ordering::Relaxed);
        // Holds no strong reference to the supervisor: dropping the supervisor drops (and
        // kills) the child, which ends this task.
        let relay = self.notifications.clone();
        let tool_pages = Arc::downgrade(&self.tool_pages);
        tokio::spawn(async move {
            while let Some(notification) = notifications.recv().await {
                if notification.method == "notifications/tools/list_changed" {
                    if let Some(pages) = tool_pages.upgrade() {
                        pages.lock().unwrap().clear();
                    }
                }
                if relay.send(notification).await.is_err() {
                    break;
                }
            }
        });
        tracing::info!("browser tool server ready: {}", child.describe());
        Ok(Arc::new(Live { child, freshness: Freshness::of(extension) }))
    }

    async fn wait_for_extension(&self) -> Result<Extension, String> {
        let deadline = tokio::time::Instant::now() + self.bounds.extension_wait;
        loop {
            let extension = self.backend.extension().await?;
            if extension.connected {
                return Ok(extension);
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(format!(
                    "the tabtunnel extension is not connected to the daemon (waited {}s): open the browser \
                     with the tabtunnel extension (or run `tabtunnel launch`) and check its side panel",
                    self.bounds.extension_wait.as_secs()
                ));
            }
            tokio::time::sleep(self.bounds.extension_poll).await;
        }
    }
}

impl From<RpcError> for CallError {
    fn from(e: RpcError) -> Self {
        match e {
            RpcError::NotSent(why) => CallError::Unavailable(why),
            RpcError::LostInFlight(why) => CallError::Lost(why),
            RpcError::Remote { code, message, data } => CallError::Remote { code, message, data },
        }
    }
}

#[cfg(test)]
#[path = "supervisor_tests.rs"]
mod tests;
