//! The one task that owns the emulation core. Sockets talk to it through a bounded channel; it
//! feeds the core, each input with the time it is handled, then hands each output to the
//! bounded outbox of the socket it is for. It wakes the core at the deadline the core names
//! (`Core::poll_timeout`), and checks the sockets' own queues a few times a second
//! ([`HOUSEKEEPING`]).
//!
//! A client whose outbox says it is not reading (more than `outbox::NOT_READING_BYTES` waiting)
//! is told to the core so: its commands wait in the core, not in Chrome, until the outbox says
//! it reads again (it wakes the hub then).
//!
//! A client whose outbox is full, or that has stopped taking frames off it, is not reading: it
//! is disconnected (see `outbox`) rather than allowed to stall the hub, and with it every other
//! client, or to pile up memory. The same goes for a stuck extension.

use crate::audit::AuditLog;
use crate::outbox::{self, Outbox, Overflow};
use bytes::Bytes;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicBool;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tabtunnel_core::policy::PolicySet;
use tabtunnel_core::{AgentId, ClientFrame, ConnId, Core, Output, ResultText, Root, TabEvent};
use tabtunnel_wire::hot::{self, Hot};
use tabtunnel_wire::{BrowserInfo, FromExtension, Hello, TabInfo, ToExtension, Welcome};
use tokio::sync::{mpsc, oneshot, Notify};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Utf8Bytes;

/// Frames queued for the extension before it counts as stuck.
pub const EXTENSION_OUTBOX: usize = 8192;
const HUB_INBOX: usize = 1024;
/// At most this many inputs are handled before the outputs are handed on.
const INPUTS_PER_FLUSH: usize = 64;
/// How often the hub looks at what is its own, not the core's: clients not reading their
/// queues, memory to give back, hand-over requests whose asker went.
const HOUSEKEEPING: Duration = Duration::from_millis(250);
/// After this much has gone out to clients, the first quiet round of housekeeping gives freed
/// memory back to the system (`crate::trim`): a flood's many small frames otherwise stay
/// resident.
const TRIM_AFTER_BYTES: usize = 4 << 20;
/// A round is quiet when it sends clients less than this and less than this waits for them
/// (a queue still full holds what a trim would free once it has drained).
const QUIET_BYTES: usize = 256 << 10;
/// Results from this size on may be passed on as the extension's own bytes
/// (`ClientFrame::Around`, [`shares_bytes`]); a smaller one is cheaper copied into one frame
/// than written as three fragments.
const SHARED_RESULT_MIN_BYTES: usize = 64 << 10;
/// Whether a result is passed on as the bytes of the extension's message it came in, rather
/// than copied. Those bytes keep alive the buffer tungstenite read the message into: the
/// message's own when it came in fragments (grown by doubling: up to twice the message), else
/// the socket's read buffer, which keeps the size of the largest message it has read (and a
/// 100 KiB result read after a 64 MiB one would hold all 64 MiB). So only a large result that
/// is at least half the largest message the socket has carried is shared: what a client's
/// queue holds is then at most four times what it counts.
fn shares_bytes(result_len: usize, largest_message: usize) -> bool {
    result_len >= SHARED_RESULT_MIN_BYTES && result_len * 2 >= largest_message
}

/// The answer of a one-shot request whose connection the core closed first.
const REQUEST_CLOSED: &str = r#"{"error":{"code":-32000,"message":"the request was cut off: the kill switch is on or the agent was disconnected"}}"#;

pub enum Input {
    ClientConnected {
        conn: ConnId,
        agent: AgentId,
        root: Root,
        outbox: Outbox,
        identity: tabtunnel_core::Identity,
    },
    /// An MCP session expects its agent until `ClientDisconnected { conn }` (it sends nothing).
    SessionOpened {
        conn: ConnId,
        agent: AgentId,
        outbox: Outbox,
        identity: tabtunnel_core::Identity,
    },
    ClientMessage {
        conn: ConnId,
        text: Utf8Bytes,
    },
    ClientDisconnected {
        conn: ConnId,
    },
    /// The MCP client `tabtunnel mcp` serves the agent through (name and version).
    McpClient {
        agent: AgentId,
        client: String,
    },
    /// One CDP command on behalf of an HTTP request (`/json/new` and the like); `reply` gets
    /// the command's answer frame.
    Request {
        agent: AgentId,
        command: String,
        reply: oneshot::Sender<String>,
    },
    /// An agent asks the human for their active tab; `reply` gets the handed tab, or `None`.
    /// Dropping the receiver withdraws the request.
    Handover {
        agent: AgentId,
        reason: String,
        reply: oneshot::Sender<Option<TabInfo>>,
    },
    ExtensionHello {
        socket: u64,
        hello: Hello,
        outbox: mpsc::Sender<Utf8Bytes>,
        accepted: oneshot::Sender<Result<Welcome, String>>,
    },
    /// One WebSocket message from the extension: one frame or several, a line each.
    ExtensionMessage {
        socket: u64,
        text: Utf8Bytes,
    },
    ExtensionClosed {
        socket: u64,
    },
    Snapshot {
        agent: AgentId,
        reply: oneshot::Sender<Snapshot>,
    },
    /// A new policy (from the file, changed).
    SetPolicy(Option<PolicySet>),
    /// What the check at start found wrong with the audit trail: every Welcome says it (and the
    /// extension connected now is told again).
    AuditTrail(String),
    /// A navigation the page started, sent here by the browser's rules; `reply` says whether it
    /// may go on.
    Navigation {
        agent: AgentId,
        tab: i32,
        url: String,
        reply: oneshot::Sender<bool>,
    },
    /// The agents' credentials changed on disk: who is registered now, and whose token went.
    Credentials {
        registered: Vec<String>,
        revoked: Vec<String>,
    },
    /// A token the side panel asked for was minted (or not).
    AgentTokenMinted {
        name: String,
        outcome: Result<String, String>,
    },
}

/// Where the agents' credentials live, for the side panel's mint and revoke.
pub struct AgentTokens {
    pub config_dir: std::path::PathBuf,
    pub credentials: crate::credentials::SharedCredentials,
}

/// What the HTTP endpoints show.
pub struct Snapshot {
    pub browser: Option<BrowserInfo>,
    pub extension_connected: bool,
    pub extension_epoch: u64,
    /// The connected extension's version (`Hello::extension_version`).
    pub extension_version: Option<String>,
    /// Client WebSockets open now, every agent's (for the idle exit of a daemon started on
    /// demand).
    pub clients: usize,
    /// The agent's tabs.
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

    /// Runs one CDP command for `agent` as a one-shot connection; returns the answer frame.
    pub async fn request(&self, agent: AgentId, method: &str, params: serde_json::Value) -> Option<String> {
        let command = serde_json::json!({ "id": 1, "method": method, "params": params }).to_string();
        let (reply, answer) = oneshot::channel();
        self.send(Input::Request { agent, command, reply }).await.ok()?;
        answer.await.ok()
    }
}

struct Extension {
    socket: u64,
    outbox: mpsc::Sender<Utf8Bytes>,
    /// `Hello::instance_id`: which extension install this is.
    instance: String,
    /// `Hello::extension_version`.
    version: String,
    /// The largest message this socket has carried: about the size its read buffer grew to
    /// (see [`shares_bytes`]).
    largest_message: usize,
}

/// What the hub shares with the HTTP shell.
#[derive(Clone, Default)]
pub struct Shared {
    /// The kill switch is engaged: the shell refuses every client request.
    pub stopped: Arc<AtomicBool>,
}

struct Hub {
    core: Core,
    shared: Shared,
    audit: Option<AuditLog>,
    /// Audit records dropped because the writer fell behind, not yet reported.
    audit_dropped: u64,
    navigations: HashMap<u64, oneshot::Sender<bool>>,
    next_navigation: u64,
    clients: HashMap<ConnId, Outbox>,
    /// Clients told to the core as not reading (`Outbox::reading`).
    not_reading: HashSet<ConnId>,
    /// Woken by an outbox of theirs that reads again.
    drained: Arc<Notify>,
    /// One-shot connections of HTTP requests, waiting for their one answer.
    requests: HashMap<ConnId, oneshot::Sender<String>>,
    handovers: HashMap<u64, oneshot::Sender<Option<TabInfo>>>,
    extension: Option<Extension>,
    welcome: Welcome,
    next_request_conn: ConnId,
    /// The core's clock: ms since this, read once per wake of the hub's task.
    started: Instant,
    now_ms: u64,
    agent_tokens: Option<AgentTokens>,
    /// The hub's own inbox, for work done off its task that comes back to it.
    inbox: mpsc::Sender<Input>,
    /// Bytes pushed to clients since memory was last given back, and in the current round.
    sent_since_trim: usize,
    sent_this_round: usize,
    /// What may wait for all clients together (`outbox::Limits::max_total_bytes`).
    clients_max_total_bytes: usize,
}

/// Starts the hub task. `welcome` is what every accepted extension is told. The task only
/// ends if it fails; whoever runs the daemon watches the returned handle.
pub fn spawn(
    core: Core,
    welcome: Welcome,
    shared: Shared,
    audit: Option<AuditLog>,
    agent_tokens: Option<AgentTokens>,
    clients_max_total_bytes: usize,
) -> (HubHandle, tokio::task::JoinHandle<()>) {
    let (inbox, mut rx) = mpsc::channel(HUB_INBOX);
    let mut hub = Hub {
        core,
        shared,
        audit,
        audit_dropped: 0,
        navigations: HashMap::new(),
        next_navigation: 1,
        clients: HashMap::new(),
        not_reading: HashSet::new(),
        drained: Arc::new(Notify::new()),
        requests: HashMap::new(),
        handovers: HashMap::new(),
        extension: None,
        welcome,
        // Far from the ids sockets get from `next_id`.
        next_request_conn: 1 << 62,
        started: Instant::now(),
        now_ms: 0,
        agent_tokens,
        inbox: inbox.clone(),
        sent_since_trim: 0,
        sent_this_round: 0,
        clients_max_total_bytes,
    };
    let task = tokio::spawn(async move {
        let mut housekeeping = tokio::time::interval(HOUSEKEEPING);
        housekeeping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let timer = tokio::time::sleep_until(hub.started);
        tokio::pin!(timer);
        // The deadline the timer is set to. It is moved only to an earlier one, so a busy hub
        // does not reset it per frame: woken before the core's real deadline, the core does
        // nothing and names the next.
        let mut armed: Option<u64> = None;
        let drained = hub.drained.clone();
        loop {
            tokio::select! {
                // A deadline passed goes before any input that comes after it; the timer and
                // the housekeeping are seldom ready, so inputs are not starved.
                biased;
                () = &mut timer, if armed.is_some() => {
                    armed = None;
                    hub.read_clock();
                    hub.core.handle_timeout(hub.now_ms);
                }
                _ = housekeeping.tick() => {
                    hub.read_clock();
                    hub.housekeeping()
                }
                () = drained.notified() => {
                    hub.read_clock();
                    hub.reading_again();
                }
                input = rx.recv() => match input {
                    Some(input) => {
                        hub.read_clock();
                        // The timer may not have fired yet for a deadline the clock has passed.
                        hub.handle_due();
                        hub.handle(input)
                    }
                    None => break,
                },
            }
            // What else has arrived goes in before the outputs leave, so that the answers to a
            // burst leave together (each writer then writes them at once).
            // A deadline an input just made due (a grace period of 0) goes before the inputs after it.
            for _ in 0..INPUTS_PER_FLUSH {
                let Ok(input) = rx.try_recv() else { break };
                hub.handle_due();
                hub.handle(input);
            }
            hub.flush();
            if let Some(at) = hub.core.poll_timeout().filter(|at| armed.is_none_or(|a| *at < a)) {
                armed = Some(at);
                timer.as_mut().reset(hub.started + Duration::from_millis(at));
            }
        }
    });
    (HubHandle { inbox, next_id: Arc::new(AtomicU64::new(1)) }, task)
}

impl Hub {
    /// Handles the core's deadline if the clock has passed it.
    fn handle_due(&mut self) {
        if self.core.poll_timeout().is_some_and(|at| at <= self.now_ms) {
            self.core.handle_timeout(self.now_ms);
        }
    }

    fn handle(&mut self, input: Input) {
        match input {
            Input::ClientConnected { conn, agent, root, outbox, identity } => {
                self.clients.insert(conn, outbox);
                self.core.client_connected(self.now_ms, conn, agent, root);
                self.core.client_identified(conn, identity);
            }
            Input::SessionOpened { conn, agent, outbox, identity } => {
                self.clients.insert(conn, outbox);
                self.core.session_opened(self.now_ms, conn, agent);
                self.core.client_identified(conn, identity);
            }
            Input::ClientMessage { conn, text } => self.core.client_message(self.now_ms, conn, text.as_str()),
            Input::ClientDisconnected { conn } => self.drop_client(conn),
            Input::McpClient { agent, client } => self.core.mcp_client(&agent, client),
            Input::Request { agent, command, reply } => {
                let conn = self.next_request_conn;
                self.next_request_conn += 1;
                self.requests.insert(conn, reply);
                self.core.request_connected(self.now_ms, conn, agent);
                self.core.client_message(self.now_ms, conn, &command);
            }
            Input::Handover { agent, reason, reply } => {
                let id = self.core.request_handover(self.now_ms, &agent, &reason);
                self.handovers.insert(id, reply);
            }
            Input::AuditTrail(problem) => {
                self.welcome.audit_trail = Some(problem);
                if self.extension.is_some() {
                    self.send_to_extension(&ToExtension::Welcome(self.welcome.clone()));
                }
            }
            Input::ExtensionHello { socket, hello, outbox, accepted } => {
                if let Err(reason) = self.admit(&hello) {
                    let _ = accepted.send(Err(reason));
                    return;
                }
                // The same install's newer socket replaces its older one (a restarted service
                // worker reconnects before the old socket's close is noticed).
                if self.extension.take().is_some() {
                    self.core.extension_disconnected(self.now_ms);
                }
                let instance = hello.instance_id.clone();
                let version = hello.extension_version.clone();
                if version != self.welcome.daemon_version {
                    tracing::warn!(
                        "the extension is version {version}, this daemon {}: run `tabtunnel install`, then \
                         reload the extension in chrome://extensions (`tabtunnel doctor` says more)",
                        self.welcome.daemon_version
                    );
                }
                match self.core.extension_connected(self.now_ms, hello) {
                    Ok(()) => {
                        self.extension =
                            Some(Extension { socket, outbox, instance, version, largest_message: 0 });
                        let _ = accepted.send(Ok(self.welcome.clone()));
                        self.send_agent_credentials();
                    }
                    Err(reason) => {
                        let _ = accepted.send(Err(reason));
                    }
                }
            }
            Input::ExtensionMessage { socket, text } => {
                if let Some(extension) = self.extension.as_mut().filter(|e| e.socket == socket) {
                    extension.largest_message = extension.largest_message.max(text.len());
                    let largest = extension.largest_message;
                    for line in hot::split_lines(&text) {
                        self.extension_frame(line, &text, largest);
                    }
                }
            }
            Input::ExtensionClosed { socket } => {
                if self.is_current(socket) {
                    self.extension = None;
                    self.core.extension_disconnected(self.now_ms);
                }
            }
            Input::SetPolicy(policy) => self.core.set_policy(self.now_ms, policy),
            Input::Credentials { registered, revoked } => {
                self.core.set_registered_agents(self.now_ms, registered);
                for agent in revoked {
                    tracing::warn!(agent, "the agent's token was revoked; its connections are closed");
                    self.core.cut_off_agent(self.now_ms, &AgentId::new(&agent));
                }
                self.send_agent_credentials();
            }
            Input::AgentTokenMinted { name, outcome } => {
                let (token, error) = match outcome {
                    Ok(token) => (Some(token), None),
                    Err(e) => (None, Some(e)),
                };
                self.send_to_extension(&ToExtension::AgentTokenMinted { name, token, error });
            }
            Input::Navigation { agent, tab, url, reply } => {
                let id = self.next_navigation;
                self.next_navigation += 1;
                self.navigations.insert(id, reply);
                self.core.navigation_requested(self.now_ms, id, &agent, tab, &url);
            }
            Input::Snapshot { agent, reply } => {
                let snapshot = Snapshot {
                    browser: self.core.browser().cloned(),
                    extension_connected: self.core.is_extension_connected(),
                    extension_epoch: self.core.extension_epoch(),
                    extension_version: self.extension.as_ref().map(|e| e.version.clone()),
                    clients: self.clients.len(),
                    pages: self.core.visible_tabs(&agent).map(|t| t.info.clone()).collect(),
                };
                let _ = reply.send(snapshot);
            }
        }
    }

    /// One frame from the extension. An answer or an event, the frames every command makes, is
    /// read by its layout and its payload passed on as a slice; the rest go through serde.
    fn extension_frame(&mut self, text: &str, message: &Utf8Bytes, largest_message: usize) {
        match hot::read(text) {
            Some(Hot::CommandResult { id, result }) => {
                if shares_bytes(result.len(), largest_message) {
                    let shared = Bytes::from(message.clone()).slice_ref(result.as_bytes());
                    self.core.extension_result(self.now_ms, id, Ok(ResultText::shared(result, &shared)))
                } else {
                    self.core.extension_result(self.now_ms, id, Ok(ResultText::borrowed(result)))
                }
            }
            Some(Hot::Event { tab_id, child_session_id, method, params }) => self.core.extension_event(
                self.now_ms,
                TabEvent { tab_id, child_session_id: child_session_id.as_deref(), method: &method, params },
            ),
            None => match serde_json::from_str::<FromExtension>(text) {
                Ok(FromExtension::AgentToken(op)) => self.agent_token(op),
                Ok(frame) => self.core.extension_frame(self.now_ms, frame),
                Err(e) => tracing::warn!(
                    "ignoring a malformed frame from the extension ({e}): {}",
                    text.chars().take(200).collect::<String>()
                ),
            },
        }
    }

    /// The time now, for the inputs handled until the hub's task next waits.
    fn read_clock(&mut self) {
        self.now_ms = self.started.elapsed().as_millis() as u64;
    }

    /// The hub's own periodic checks ([`HOUSEKEEPING`]); the core's deadlines have their timer.
    fn housekeeping(&mut self) {
        let now = Instant::now();
        let mut queued = 0;
        let mut stalled = Vec::new();
        let mut backlogs = Vec::with_capacity(self.clients.len());
        for (conn, outbox) in &self.clients {
            match outbox.check_stalled(now) {
                Some(overflow) => stalled.push((*conn, overflow)),
                None => {
                    let backlog = outbox.backlog(now);
                    queued += backlog.bytes;
                    backlogs.push((*conn, backlog));
                }
            }
        }
        for (conn, overflow) in stalled {
            self.drop_slow_client(conn, overflow);
        }
        if queued > self.clients_max_total_bytes {
            self.give_up_over_the_total(backlogs, queued);
            queued = self.clients.values().map(|o| o.backlog(now).bytes).sum();
        }
        let quiet = self.sent_this_round < QUIET_BYTES && queued < QUIET_BYTES;
        if self.sent_since_trim >= TRIM_AFTER_BYTES && quiet {
            crate::trim::release_free_memory_soon();
            self.sent_since_trim = 0;
        }
        self.sent_this_round = 0;
        // Requests whose asker went away (or gave up waiting) are withdrawn from the panel.
        let abandoned: Vec<u64> =
            self.handovers.iter().filter(|(_, r)| r.is_closed()).map(|(id, _)| *id).collect();
        for id in abandoned {
            self.handovers.remove(&id);
            self.core.withdraw_handover(self.now_ms, id);
        }
        if self.audit_dropped > 0 {
            tracing::warn!(
                records = self.audit_dropped,
                "the audit trail's writer fell behind; records were dropped"
            );
            self.audit_dropped = 0;
        }
    }

    /// Clients whose outboxes read again: their commands may go. One that stopped again since
    /// its outbox woke the hub stays as it is (its outbox wakes the hub again when it reads).
    fn reading_again(&mut self) {
        let drained: Vec<ConnId> = self
            .not_reading
            .iter()
            .filter(|conn| self.clients.get(conn).is_none_or(Outbox::reading))
            .copied()
            .collect();
        for conn in drained {
            self.not_reading.remove(&conn);
            self.core.client_reading(self.now_ms, conn, true);
        }
    }

    /// One browser at a time: a second one is told so rather than taking turns with the first,
    /// unless the human asked this one to take over (the side panel's "Use this browser").
    fn admit(&self, hello: &Hello) -> Result<(), String> {
        Core::check_hello(hello)?;
        match &self.extension {
            Some(current) if current.instance != hello.instance_id && !hello.take_over => Err(
                "another browser is already connected to this tabtunnel daemon; use this browser instead (the side panel's button), or start a second daemon on another port for this one".into(),
            ),
            _ => Ok(()),
        }
    }

    /// The side panel mints or revokes an agent's token. The file changes off the hub's task;
    /// the watcher then tells the gate and the hub (`Input::Credentials`).
    fn agent_token(&mut self, op: tabtunnel_wire::AgentTokenOp) {
        let Some(tokens) = &self.agent_tokens else { return };
        let config_dir = tokens.config_dir.clone();
        let inbox = self.inbox.clone();
        tokio::task::spawn_blocking(move || match op {
            tabtunnel_wire::AgentTokenOp::Mint { name } => {
                let outcome = crate::credentials::add(&config_dir, &name);
                let _ = inbox.blocking_send(Input::AgentTokenMinted { name, outcome });
            }
            tabtunnel_wire::AgentTokenOp::Revoke { name } => {
                if let Err(e) = crate::credentials::revoke(&config_dir, &name) {
                    tracing::warn!("could not revoke agent {name}'s token: {e}");
                }
            }
        });
    }

    /// The side panel's list of agents with their own tokens.
    fn send_agent_credentials(&mut self) {
        let Some(tokens) = &self.agent_tokens else { return };
        let agents = tokens
            .credentials
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .agents()
            .iter()
            .map(|a| tabtunnel_wire::AgentCredential { name: a.name.clone(), created: a.created.clone() })
            .collect();
        self.send_to_extension(&ToExtension::AgentCredentials { agents });
    }

    fn is_current(&self, socket: u64) -> bool {
        self.extension.as_ref().is_some_and(|e| e.socket == socket)
    }

    /// All clients' queues together hold more than their bound: those that have taken nothing
    /// for longest go ([`outbox::over_the_total`]).
    fn give_up_over_the_total(&mut self, backlogs: Vec<(ConnId, outbox::Backlog)>, queued: usize) {
        let max_total = self.clients_max_total_bytes;
        for conn in outbox::over_the_total(backlogs, max_total) {
            let Some(outbox) = self.clients.get(&conn) else { continue };
            tracing::warn!(all_clients_bytes = queued, max_total, "all clients' queues are over their bound");
            let overflow = outbox.give_up();
            self.drop_slow_client(conn, overflow);
        }
    }

    /// A client that is not reading (its outbox overflowed or stalled): its queue is already
    /// freed and its writer stopped.
    fn drop_slow_client(&mut self, conn: ConnId, overflow: Overflow) {
        tracing::warn!(
            conn,
            queued_bytes = overflow.bytes,
            queued_frames = overflow.frames,
            stalled_ms = overflow.stalled_for.map(|d| d.as_millis() as u64),
            "client disconnected: it is not reading fast enough"
        );
        self.drop_client(conn);
    }

    fn drop_client(&mut self, conn: ConnId) {
        // Dropping the outbox ends the client's writer, which closes its socket.
        self.clients.remove(&conn);
        self.not_reading.remove(&conn);
        self.core.client_disconnected(self.now_ms, conn);
    }

    /// Hands every output to its socket's outbox without ever waiting.
    fn flush(&mut self) {
        while let Some(output) = self.core.poll_output() {
            match output {
                Output::ToClient { conn, frame } => {
                    // Nearly always empty: skip the lookup on the hot path.
                    if !self.requests.is_empty() {
                        if let Some(reply) = self.requests.remove(&conn) {
                            self.request_frame(conn, reply, frame);
                            continue;
                        }
                    }
                    let Some(outbox) = self.clients.get(&conn) else { continue };
                    let len = frame.len();
                    match outbox.push(frame) {
                        Ok(()) => {
                            self.sent_since_trim += len;
                            self.sent_this_round += len;
                            if !outbox.reading() && self.not_reading.insert(conn) {
                                outbox.wake_when_reading(self.drained.clone());
                                self.core.client_reading(self.now_ms, conn, false);
                            }
                        }
                        Err(overflow) => self.drop_slow_client(conn, overflow),
                    }
                }
                Output::ToExtension(frame) => self.send_to_extension(&frame),
                // Dropping the outbox closes the socket once its queued frames are written.
                Output::CloseClient { conn } => {
                    self.clients.remove(&conn);
                    self.not_reading.remove(&conn);
                    // A one-shot request closed before its answer (the kill switch, the agent
                    // disconnected by the human) still gets one.
                    if let Some(reply) = self.requests.remove(&conn) {
                        let _ = reply.send(REQUEST_CLOSED.to_owned());
                        self.core.client_disconnected(self.now_ms, conn);
                    }
                }
                Output::HandoverAnswered { id, tab } => {
                    if let Some(reply) = self.handovers.remove(&id) {
                        let _ = reply.send(tab);
                    }
                }
                Output::Audit(record) => {
                    if let Some(audit) = &self.audit {
                        if !audit.record(record) {
                            self.audit_dropped += 1;
                        }
                    }
                }
                Output::NavigationDecided { id, go } => {
                    if let Some(reply) = self.navigations.remove(&id) {
                        let _ = reply.send(go);
                    }
                }
                Output::KillSwitch { engaged } => {
                    tracing::warn!(engaged, "kill switch");
                    self.shared.stopped.store(engaged, Ordering::SeqCst);
                }
            }
        }
    }

    /// A frame for a one-shot request connection: its answer ends it; events before it are not
    /// for anyone.
    fn request_frame(&mut self, conn: ConnId, reply: oneshot::Sender<String>, frame: ClientFrame) {
        let frame = frame.into_text();
        if frame.starts_with("{\"id\":") || frame.starts_with("{\"error\":") {
            let _ = reply.send(frame);
            self.core.client_disconnected(self.now_ms, conn);
        } else {
            self.requests.insert(conn, reply);
        }
    }

    fn send_to_extension(&mut self, frame: &ToExtension) {
        let Some(extension) = &self.extension else { return };
        if extension.outbox.try_send(frame.to_json().into()).is_err() {
            tracing::warn!("the extension is not reading its socket; dropping it");
            self.extension = None;
            self.core.extension_disconnected(self.now_ms);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_large_results_near_the_largest_message_are_passed_on_as_shared_bytes() {
        let mib = 1 << 20;
        assert!(shares_bytes(64 * mib, 64 * mib));
        assert!(shares_bytes(40 * mib, 64 * mib), "its buffer is at most 1.6 times it");
        assert!(!shares_bytes(100 << 10, 64 * mib), "would hold a 64 MiB read buffer");
        assert!(!shares_bytes(1000, 1000), "small: copied");
    }
}
