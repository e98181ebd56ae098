//! The one task that owns the emulation core. Sockets talk to it through a bounded channel; it
//! feeds the core, then hands each output to the bounded outbox of the socket it is for.
//!
//! A client whose outbox is full is too slow to keep up: it is disconnected rather than allowed
//! to stall the hub, and with it every other client. The same goes for a stuck extension.

use axum::extract::ws::Utf8Bytes;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tabtunnel_core::{AgentId, ConnId, Core, Output, Root};
use tabtunnel_wire::{BrowserInfo, FromExtension, Hello, TabInfo, ToExtension, Welcome};
use tokio::sync::{mpsc, oneshot};

/// Frames queued for one client before it counts as too slow.
pub const CLIENT_OUTBOX: usize = 8192;
/// Frames queued for the extension before it counts as stuck.
pub const EXTENSION_OUTBOX: usize = 8192;
const HUB_INBOX: usize = 1024;

pub enum Input {
    ClientConnected {
        conn: ConnId,
        agent: AgentId,
        root: Root,
        outbox: mpsc::Sender<Utf8Bytes>,
    },
    ClientMessage {
        conn: ConnId,
        text: Utf8Bytes,
    },
    ClientDisconnected {
        conn: ConnId,
    },
    ExtensionHello {
        socket: u64,
        hello: Hello,
        outbox: mpsc::Sender<Utf8Bytes>,
        accepted: oneshot::Sender<Result<Welcome, String>>,
    },
    ExtensionFrame {
        socket: u64,
        frame: FromExtension,
    },
    ExtensionClosed {
        socket: u64,
    },
    Snapshot {
        agent: AgentId,
        reply: oneshot::Sender<Snapshot>,
    },
}

/// What the HTTP discovery endpoints show.
pub struct Snapshot {
    pub browser: Option<BrowserInfo>,
    pub extension_connected: bool,
    pub pages: Vec<TabInfo>,
}

#[derive(Clone)]
pub struct HubHandle {
    inbox: mpsc::Sender<Input>,
    next_id: Arc<AtomicU64>,
}

impl HubHandle {
    /// A fresh id for a client connection or an extension socket.
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Sends an input, waiting while the hub is busy (backpressure on the sender's socket only).
    /// Fails only when the hub has stopped.
    pub async fn send(&self, input: Input) -> Result<(), ()> {
        self.inbox.send(input).await.map_err(|_| ())
    }

    pub async fn snapshot(&self, agent: AgentId) -> Option<Snapshot> {
        let (reply, answer) = oneshot::channel();
        self.send(Input::Snapshot { agent, reply }).await.ok()?;
        answer.await.ok()
    }
}

struct Extension {
    socket: u64,
    outbox: mpsc::Sender<Utf8Bytes>,
    /// `Hello::instance_id`: which extension install this is.
    instance: String,
}

struct Hub {
    core: Core,
    clients: HashMap<ConnId, mpsc::Sender<Utf8Bytes>>,
    extension: Option<Extension>,
    welcome: Welcome,
}

/// Starts the hub task. `welcome` is what every accepted extension is told. The task only
/// ends if it fails; whoever runs the daemon watches the returned handle.
pub fn spawn(core: Core, welcome: Welcome) -> (HubHandle, tokio::task::JoinHandle<()>) {
    let (inbox, mut rx) = mpsc::channel(HUB_INBOX);
    let mut hub = Hub { core, clients: HashMap::new(), extension: None, welcome };
    let task = tokio::spawn(async move {
        while let Some(input) = rx.recv().await {
            hub.handle(input);
            hub.flush();
        }
    });
    (HubHandle { inbox, next_id: Arc::new(AtomicU64::new(1)) }, task)
}

impl Hub {
    fn handle(&mut self, input: Input) {
        match input {
            Input::ClientConnected { conn, agent, root, outbox } => {
                self.clients.insert(conn, outbox);
                self.core.client_connected(conn, agent, root);
            }
            Input::ClientMessage { conn, text } => self.core.client_message(conn, text.as_str()),
            Input::ClientDisconnected { conn } => self.drop_client(conn),
            Input::ExtensionHello { socket, hello, outbox, accepted } => {
                if let Err(reason) = self.admit(&hello) {
                    let _ = accepted.send(Err(reason));
                    return;
                }
                // The same install's newer socket replaces its older one (a restarted service
                // worker reconnects before the old socket's close is noticed).
                if self.extension.take().is_some() {
                    self.core.extension_disconnected();
                }
                let instance = hello.instance_id.clone();
                match self.core.extension_connected(hello) {
                    Ok(()) => {
                        self.extension = Some(Extension { socket, outbox, instance });
                        let _ = accepted.send(Ok(self.welcome.clone()));
                    }
                    Err(reason) => {
                        let _ = accepted.send(Err(reason));
                    }
                }
            }
            Input::ExtensionFrame { socket, frame } => {
                if self.is_current(socket) {
                    self.core.extension_frame(frame);
                }
            }
            Input::ExtensionClosed { socket } => {
                if self.is_current(socket) {
                    self.extension = None;
                    self.core.extension_disconnected();
                }
            }
            Input::Snapshot { agent, reply } => {
                let snapshot = Snapshot {
                    browser: self.core.browser().cloned(),
                    extension_connected: self.core.is_extension_connected(),
                    pages: self.core.visible_tabs(&agent).map(|t| t.info.clone()).collect(),
                };
                let _ = reply.send(snapshot);
            }
        }
    }

    /// One browser at a time: a second one is told so rather than taking turns with the first.
    fn admit(&self, hello: &Hello) -> Result<(), String> {
        Core::check_hello(hello)?;
        match &self.extension {
            Some(current) if current.instance != hello.instance_id => Err(
                "another browser is already connected to this tabtunnel daemon; disconnect it, or start a second daemon on another port for this one".into(),
            ),
            _ => Ok(()),
        }
    }

    fn is_current(&self, socket: u64) -> bool {
        self.extension.as_ref().is_some_and(|e| e.socket == socket)
    }

    fn drop_client(&mut self, conn: ConnId) {
        // Dropping the outbox sender ends the client's writer, which closes its socket.
        self.clients.remove(&conn);
        self.core.client_disconnected(conn);
    }

    /// Hands every output to its socket's outbox without ever waiting.
    fn flush(&mut self) {
        while let Some(output) = self.core.poll_output() {
            match output {
                Output::ToClient { conn, frame } => {
                    let Some(outbox) = self.clients.get(&conn) else { continue };
                    if let Err(e) = outbox.try_send(frame.into()) {
                        if matches!(e, mpsc::error::TrySendError::Full(_)) {
                            tracing::warn!(conn, "client is not reading fast enough; disconnecting it");
                        }
                        self.drop_client(conn);
                    }
                }
                Output::ToExtension(frame) => self.send_to_extension(&frame),
                // Dropping the outbox closes the socket once its queued frames are written.
                Output::CloseClient { conn } => {
                    self.clients.remove(&conn);
                }
            }
        }
    }

    fn send_to_extension(&mut self, frame: &ToExtension) {
        let Some(extension) = &self.extension else { return };
        if extension.outbox.try_send(frame.to_json().into()).is_err() {
            tracing::warn!("the extension is not reading its socket; dropping it");
            self.extension = None;
            self.core.extension_disconnected();
        }
    }
}
