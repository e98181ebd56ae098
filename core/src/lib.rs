//! The sans-IO heart of tabtunnel.
//!
//! `chrome.debugger` gives the extension one CDP session per shared tab and refuses the
//! browser-level `Browser` and `Target` domains. [`Core`] turns those tab sessions into what a
//! CDP client expects from a real browser endpoint: it answers the browser-level methods itself
//! (discovery, auto-attach in both of Chrome's topologies, target info, detach), gives each
//! client its own sessionIds for the tabs and routes their commands to the right tab, tags
//! the tabs' events with those ids, and turns a tab that goes away into `detachedFromTarget` plus
//! `targetDestroyed`.
//!
//! It is a plain state machine: the IO shell feeds it client frames ([`Core::client_message`])
//! and extension frames ([`Core::extension_frame`]), then drains [`Output`]s with
//! [`Core::poll_output`]. It owns no sockets, timers or threads, so every behaviour is unit
//! tested with frames alone.
//!
//! Invariants enforced here:
//! - every client command gets exactly one reply: a local answer, the tab's answer, or a CDP
//!   error (malformed frame, unknown session, unknown method, extension gone);
//! - a connection only names its own sessions, and only sees tabs visible to its agent;
//! - forwarded params, results and events stay raw JSON text.

mod domains;
mod emulation;
pub mod frames;
mod lifecycle;
pub mod session;
mod tab_sessions;
pub mod targets;

use domains::{DomainSet, ExecutionContexts, PageSession, Toggle};
use frames::{errors, BadFrame, ClientCommand};
pub use session::{ConnId, Root, SessionKind, Topology};
use session::{Connection, Session};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use tabtunnel_wire::{
    BrowserInfo, CdpError, Command, FromExtension, RawValue, RequestId, TabId, ToExtension,
};
use targets::Tab;

/// Commands one client may have waiting for the tabs at once.
pub const MAX_IN_FLIGHT_PER_CLIENT: usize = 1024;

/// The agent a connection acts for; tabs will be owned by agents.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AgentId(Arc<str>);

impl AgentId {
    pub fn new(name: &str) -> Self {
        AgentId(name.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What the core asks its shell to do.
#[derive(Debug)]
pub enum Output {
    /// Send one text frame to a client connection.
    ToClient { conn: ConnId, frame: String },
    /// Send one frame to the extension.
    ToExtension(ToExtension),
    /// Close a client connection after its queued frames (a page socket whose tab is gone).
    /// The core has already forgotten it.
    CloseClient { conn: ConnId },
}

pub struct Config {
    /// The id of the emulated browser target (`/devtools/browser/<id>`).
    pub browser_target_id: String,
    /// Mixed into minted sessionIds so that ids from an earlier daemon run never match.
    pub session_id_salt: u64,
}

/// A client command waiting for the extension's answer.
/// A command waiting for the extension's answer.
struct Pending {
    /// Who waits for it; `None` for the core's own housekeeping commands.
    reply_to: Option<ReplyTo>,
}

struct ReplyTo {
    conn: ConnId,
    client_id: i64,
    session_id: String,
    /// What a successful answer does besides reaching the client.
    on_success: Option<OnSuccess>,
}

enum OnSuccess {
    /// A `Runtime.enable` on a tab whose Runtime was already on: before the reply, replay those
    /// of these contexts (live when the enable was sent) that are still live.
    ReplayContexts(ContextReplay),
    /// A `Tracing.start` the tab accepted: the trace's events are for this session.
    TraceStarted { tab: TabId },
}

struct ContextReplay {
    tab: TabId,
    context_ids: Vec<i64>,
}

/// A tab and who is listening to it.
struct TabState {
    tab: Tab,
    /// Every client session attached to this tab's page; its events go to each that wants them.
    page_sessions: Vec<PageSession>,
    /// Chrome's child sessions (OOPIFs, workers) of this tab, by Chrome's sessionId.
    children: HashMap<String, Child>,
    /// Gated domains enabled on the tab's real debugger session.
    real_domains: DomainSet,
    contexts: ExecutionContexts,
    /// Being unshared: sessions detaching now need no housekeeping.
    closing: bool,
}

/// A child session Chrome auto-attached on a tab.
struct Child {
    target_id: Option<String>,
    /// The connections that were told about it (each once).
    conns: Vec<ConnId>,
}

impl TabState {
    fn new(tab: Tab) -> Self {
        TabState {
            tab,
            page_sessions: Vec::new(),
            children: HashMap::new(),
            real_domains: DomainSet::default(),
            contexts: ExecutionContexts::default(),
            closing: false,
        }
    }

    fn page_session_mut(&mut self, conn: ConnId, session_id: &str) -> Option<&mut PageSession> {
        self.page_sessions.iter_mut().find(|p| p.conn == conn && p.session_id == session_id)
    }
}

pub struct Core {
    config: Config,
    /// The browser the extension runs in; kept across extension reconnects.
    browser: Option<BrowserInfo>,
    extension_connected: bool,
    tabs: BTreeMap<TabId, TabState>,
    conns: HashMap<ConnId, Connection>,
    pending: HashMap<RequestId, Pending>,
    next_request: RequestId,
    next_session: u64,
    out: VecDeque<Output>,
}

impl Core {
    pub fn new(config: Config) -> Self {
        Core {
            config,
            browser: None,
            extension_connected: false,
            tabs: BTreeMap::new(),
            conns: HashMap::new(),
            pending: HashMap::new(),
            next_request: 1,
            next_session: 1,
            out: VecDeque::new(),
        }
    }

    pub fn poll_output(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    pub fn browser_target_id(&self) -> &str {
        &self.config.browser_target_id
    }

    /// The browser as last reported by the extension.
    pub fn browser(&self) -> Option<&BrowserInfo> {
        self.browser.as_ref()
    }

    pub fn is_extension_connected(&self) -> bool {
        self.extension_connected
    }

    /// The shared tabs `agent` may see, in tab order.
    pub fn visible_tabs<'a>(&'a self, agent: &'a AgentId) -> impl Iterator<Item = &'a Tab> + 'a {
        self.tabs.values().map(|t| &t.tab).filter(move |t| t.visible_to(agent))
    }

    /// The tab whose page target is `target_id`, if `agent` may see it.
    pub fn visible_tab_by_target(&self, agent: &AgentId, target_id: &str) -> Option<TabId> {
        self.visible_tabs(agent).find(|t| t.page_target_id() == target_id).map(Tab::id)
    }

    pub fn client_connected(&mut self, conn: ConnId, agent: AgentId, root: Root) {
        let root = match root {
            Root::Browser => SessionKind::Browser,
            Root::Page(tab) => SessionKind::Page { tab },
        };
        if let SessionKind::Page { tab } = root {
            let Some(state) = self.tabs.get_mut(&tab) else {
                // The tab went between the shell's lookup and now: close at once, as Chrome.
                return self.close_page_socket(conn);
            };
            state.page_sessions.push(PageSession::new(conn, String::new()));
        }
        self.conns.insert(conn, Connection::new(agent, root));
    }

    pub fn client_disconnected(&mut self, conn: ConnId) {
        if self.conns.remove(&conn).is_none() {
            return;
        }
        let tabs: Vec<TabId> = self.tabs.keys().copied().collect();
        for tab in tabs {
            let state = self.tabs.get_mut(&tab).expect("listed tab");
            state.children.retain(|_, child| {
                child.conns.retain(|c| *c != conn);
                !child.conns.is_empty()
            });
            let (gone, kept): (Vec<_>, Vec<_>) =
                std::mem::take(&mut state.page_sessions).into_iter().partition(|p| p.conn == conn);
            state.page_sessions = kept;
            if !gone.is_empty() {
                self.sessions_left_tab(tab, &gone);
            }
        }
        // Answers still in flight for this connection are dropped when they arrive.
        self.pending.retain(|_, p| p.reply_to.as_ref().is_none_or(|to| to.conn != conn));
    }

    /// One text frame from a client. Always produces exactly one reply for it, now or when the
    /// tab answers.
    pub fn client_message(&mut self, conn: ConnId, text: &str) {
        if !self.conns.contains_key(&conn) {
            return;
        }
        let parsed = match frames::parse_client_frame(text) {
            Ok(parsed) => parsed,
            Err(bad) => {
                let (id, session, error) = match bad {
                    BadFrame::NotJson => (None, String::new(), errors::not_json()),
                    BadFrame::NoId => (None, String::new(), errors::no_id()),
                    BadFrame::NoMethod { id, session_id } => (Some(id), session_id, errors::no_method()),
                };
                self.reply_error_raw(conn, id, &session, &error);
                return;
            }
        };
        let cmd = parsed.command();
        let Some(kind) = self.conns[&conn].sessions.get(cmd.session_id).map(|s| s.kind) else {
            self.reply_error(conn, &cmd, &errors::session_not_found());
            return;
        };
        match kind {
            SessionKind::Browser => self.browser_session_command(conn, &cmd),
            SessionKind::Tab { tab, .. } => self.tab_session_command(conn, &cmd, tab),
            SessionKind::Page { tab } => self.page_session_command(conn, &cmd, tab),
            SessionKind::Child { tab } => self.child_session_command(conn, &cmd, tab),
        }
    }

    /// One frame from the extension (after its `Hello`, see [`Core::extension_connected`]).
    pub fn extension_frame(&mut self, frame: FromExtension) {
        match frame {
            FromExtension::Hello(hello) => {
                // A second Hello on the same connection restates the tab list.
                let _ = self.extension_connected(hello);
            }
            FromExtension::TabShared(info) => self.tab_shared(info),
            FromExtension::TabChanged(info) => self.tab_changed(info),
            FromExtension::TabUnshared { tab_id, .. } => self.tab_unshared(tab_id),
            FromExtension::CommandResult(result) => {
                let Some(Pending { reply_to: Some(to) }) = self.pending.remove(&result.id) else { return };
                if let Some(c) = self.conns.get_mut(&to.conn) {
                    c.in_flight = c.in_flight.saturating_sub(1);
                }
                let frame = match result.into_outcome() {
                    Ok(raw) => {
                        match &to.on_success {
                            Some(OnSuccess::ReplayContexts(replay)) => {
                                self.replay_contexts(replay, to.conn, &to.session_id)
                            }
                            Some(OnSuccess::TraceStarted { tab }) => {
                                self.trace_started(*tab, to.conn, &to.session_id)
                            }
                            None => {}
                        }
                        frames::response(to.client_id, &to.session_id, raw.get())
                    }
                    Err(e) => frames::error_response(Some(to.client_id), &to.session_id, &e),
                };
                self.send(to.conn, frame);
            }
            FromExtension::Event(event) => self.tab_event(event),
            FromExtension::Heartbeat => {}
        }
    }

    // ---- routing of client commands ----

    fn page_session_command(&mut self, conn: ConnId, cmd: &ClientCommand, tab: TabId) {
        if !self.tabs.contains_key(&tab) {
            // Only a page socket outlives its tab: its root session has nothing to talk to.
            return self.reply_error(conn, cmd, &errors::session_not_found());
        }
        match cmd.method {
            // Pages are never paused by us, so there is nothing to resume.
            "Runtime.runIfWaitingForDebugger" => self.reply(conn, cmd, "{}"),
            "Target.setAutoAttach" | "Target.autoAttachRelated" => self.forward(conn, cmd, tab, None),
            m if m.starts_with("Browser.") || m.starts_with("Target.") => {
                self.target_level_command(conn, cmd, self.tabs[&tab].tab.page_target_info())
            }
            "Log.startViolationsReport" => self.start_violations(conn, cmd, tab),
            "Tracing.start" => self.forward_then(conn, cmd, tab, None, Some(OnSuccess::TraceStarted { tab })),
            "Tracing.end" => self.end_tracing(conn, cmd, tab),
            "Log.stopViolationsReport" => self.stop_violations(conn, cmd, tab),
            method => match domains::toggle(method) {
                Some(Toggle::Enable(domain)) => self.enable_domain(conn, cmd, tab, domain),
                Some(Toggle::Disable(domain)) => self.disable_domain(conn, cmd, tab, domain),
                None => self.forward(conn, cmd, tab, None),
            },
        }
    }

    fn child_session_command(&mut self, conn: ConnId, cmd: &ClientCommand, tab: TabId) {
        if cmd.method.starts_with("Browser.") {
            return self.browser_session_command(conn, cmd);
        }
        let child = cmd.session_id.to_owned();
        self.forward(conn, cmd, tab, Some(child));
    }

    fn tab_session_command(&mut self, conn: ConnId, cmd: &ClientCommand, tab: TabId) {
        match cmd.method {
            "Target.setAutoAttach" => self.tab_set_auto_attach(conn, cmd, tab),
            "Runtime.runIfWaitingForDebugger" => self.reply(conn, cmd, "{}"),
            m if m.starts_with("Browser.") || m.starts_with("Target.") => {
                self.target_level_command(conn, cmd, self.tabs[&tab].tab.tab_target_info())
            }
            other => self.reply_error(conn, cmd, &errors::method_not_found(other)),
        }
    }

    /// `Browser.*` and `Target.*` on a page or tab session: its own target's info and detaches
    /// of what it attached are about this session; the rest is browser-wide, as at the root.
    fn target_level_command(&mut self, conn: ConnId, cmd: &ClientCommand, own_info: serde_json::Value) {
        match cmd.method {
            "Target.getTargetInfo" if !self.names_other_target(conn, cmd) => {
                self.reply_json(conn, cmd, &serde_json::json!({ "targetInfo": own_info }))
            }
            "Target.detachFromTarget" => self.detach_from_target(conn, cmd),
            _ => self.browser_session_command(conn, cmd),
        }
    }

    /// Sends a command to the tab's debugger session; the reply comes with the extension's
    /// answer.
    fn forward(&mut self, conn: ConnId, cmd: &ClientCommand, tab: TabId, child: Option<String>) {
        self.forward_then(conn, cmd, tab, child, None);
    }

    fn forward_then(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        tab: TabId,
        child: Option<String>,
        on_success: Option<OnSuccess>,
    ) {
        // Tabs go with the extension, so a session that can forward implies a connected
        // extension; should that ever change, the client still gets its one answer.
        if !self.extension_connected {
            return self.reply_error(conn, cmd, &errors::extension_gone());
        }
        // One client pipelining without bound would fill the extension's queue for everyone.
        let connection = self.conns.get_mut(&conn).expect("a live connection sent this");
        if connection.in_flight >= MAX_IN_FLIGHT_PER_CLIENT {
            return self.reply_error(conn, cmd, &errors::too_many_in_flight(MAX_IN_FLIGHT_PER_CLIENT));
        }
        connection.in_flight += 1;
        let session_id = cmd.session_id.to_owned();
        let reply_to = ReplyTo { conn, client_id: cmd.id, session_id, on_success };
        self.send_command(Some(reply_to), tab, child, cmd.method, cmd.params.map(RawValue::to_owned));
    }

    fn send_command(
        &mut self,
        reply_to: Option<ReplyTo>,
        tab: TabId,
        child_session_id: Option<String>,
        method: &str,
        params: Option<Box<RawValue>>,
    ) {
        let id = self.next_request;
        self.next_request += 1;
        self.pending.insert(id, Pending { reply_to });
        let method = method.to_owned();
        let command = Command { id, tab_id: tab, child_session_id, method, params };
        self.out.push_back(Output::ToExtension(ToExtension::Command(command)));
    }

    /// A command of the core's own whose answer nobody waits for.
    fn send_housekeeping(&mut self, tab: TabId, method: &str) {
        if self.extension_connected {
            self.send_command(None, tab, None, method, None);
        }
    }

    // ---- replies ----

    fn send(&mut self, conn: ConnId, frame: String) {
        self.out.push_back(Output::ToClient { conn, frame });
    }

    fn reply(&mut self, conn: ConnId, cmd: &ClientCommand, result: &str) {
        let frame = frames::response(cmd.id, cmd.session_id, result);
        self.send(conn, frame);
    }

    fn reply_json(&mut self, conn: ConnId, cmd: &ClientCommand, result: &serde_json::Value) {
        self.reply(conn, cmd, &result.to_string());
    }

    fn reply_error(&mut self, conn: ConnId, cmd: &ClientCommand, error: &CdpError) {
        self.reply_error_raw(conn, Some(cmd.id), cmd.session_id, error);
    }

    fn reply_error_raw(&mut self, conn: ConnId, id: Option<i64>, session: &str, error: &CdpError) {
        let frame = frames::error_response(id, session, error);
        self.send(conn, frame);
    }

    fn emit(&mut self, conn: ConnId, session_id: &str, method: &str, params: &serde_json::Value) {
        let frame = frames::event(method, &params.to_string(), session_id);
        self.send(conn, frame);
    }

    /// The tab's last client session is gone. In Chrome a closed session takes its state
    /// (enabled domains, injected scripts, overrides) with it; here one debugger session
    /// outlives its clients, so the extension re-attaches it to give the next client that same
    /// clean start. Without this, a reconnecting client's `Runtime.enable` would report no
    /// execution contexts, since the domain is still enabled.
    pub(crate) fn reset_tab(&mut self, tab_id: TabId) {
        let Some(state) = self.tabs.get_mut(&tab_id) else { return };
        // The re-attached session starts with nothing enabled.
        state.real_domains = DomainSet::default();
        state.contexts.clear();
        if self.extension_connected {
            self.out.push_back(Output::ToExtension(ToExtension::ResetTab { tab_id }));
        }
    }

    fn mint_session_id(&mut self) -> String {
        let n = self.next_session;
        self.next_session += 1;
        format!("{:016X}{:016X}", self.config.session_id_salt, n)
    }

    fn insert_session(&mut self, conn: ConnId, id: String, session: Session) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.sessions.insert(id, session);
        }
    }
}

#[cfg(test)]
mod tests;
