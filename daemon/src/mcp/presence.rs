//! An MCP session's agent is connected from the session's start, not from its first browser
//! tool call (when the child tool server first connects): the daemon then has its window and a
//! prepared tab open by the time the first call asks for a page (`core/src/prepared.rs`). The
//! connection is a WebSocket at the agent's `/tabtunnel/session` that sends nothing (the side
//! panel shows the agent's MCP session, apart from its CDP clients); should it end (the
//! daemon restarted, the human disconnected the agent, the kill switch), the next tool call
//! opens it again. It closes with the session.

use super::daemon_api::Daemon;
use futures_util::StreamExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

pub struct Presence {
    connected: Arc<AtomicBool>,
    wake: Arc<Notify>,
    task: tokio::task::AbortHandle,
}

impl Presence {
    /// Connects `daemon`'s agent now, and holds the connection until this is dropped.
    pub fn hold(daemon: Daemon) -> Presence {
        let connected = Arc::new(AtomicBool::new(false));
        let wake = Arc::new(Notify::new());
        let task = tokio::spawn(run(daemon, connected.clone(), wake.clone())).abort_handle();
        Presence { connected, wake, task }
    }

    /// A tool call: the agent is connected again if its connection ended.
    pub fn renew(&self) {
        if !self.connected.load(Ordering::Acquire) {
            self.wake.notify_one();
        }
    }
}

impl Drop for Presence {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn run(daemon: Daemon, connected: Arc<AtomicBool>, wake: Arc<Notify>) {
    loop {
        match daemon.session_socket().await {
            Ok(upgraded) => {
                connected.store(true, Ordering::Release);
                let io = hyper_util::rt::TokioIo::new(upgraded);
                let mut socket = tokio_tungstenite::WebSocketStream::from_raw_socket(
                    io,
                    tokio_tungstenite::tungstenite::protocol::Role::Client,
                    None,
                )
                .await;
                // Nothing is sent; whatever comes (nothing, unless a close) is read and dropped.
                while let Some(Ok(_)) = socket.next().await {}
                connected.store(false, Ordering::Release);
                tracing::debug!("agent {}: its connection ended", daemon.agent());
            }
            Err(e) => tracing::debug!("agent {}: not connected ahead of its tool calls: {e}", daemon.agent()),
        }
        wake.notified().await;
    }
}
