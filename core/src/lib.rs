//! The sans-IO heart of tabtunnel.
//!
//! `chrome.debugger` gives the extension one CDP session per shared tab and refuses the
//! browser-level `Browser` and `Target` domains. [`Core`] turns those tab sessions into what a
//! CDP client expects from a real browser endpoint: it answers the browser-level methods itself
//! (discovery, auto-attach in both of Chrome's topologies, target info, detach) or turns them
//! into tab and window operations the extension performs (`Target.createTarget`, `closeTarget`,
//! `activateTarget`, `Browser.*Window*`), gives each client its own sessionIds for the tabs and
//! routes their commands to the right tab, tags the tabs' events with those ids, and turns a tab
//! that goes away into `detachedFromTarget` plus `targetDestroyed`. Each connection acts for an
//! agent, and sees only that agent's tabs.
//!
//! It is a plain state machine: the IO shell feeds it client frames ([`Core::client_message`])
//! and extension frames ([`Core::extension_frame`]), each with the time it arrived (every input
//! takes `now` first, in ms on the shell's monotonic clock), then drains [`Output`]s with
//! [`Core::poll_output`]. [`Core::poll_timeout`] says when the earliest of its deadlines falls
//! due; the shell calls [`Core::handle_timeout`] then (or later), and at no other time. It owns
//! no sockets, timers or threads, so every behaviour is unit tested with frames alone.
//!
//! Invariants enforced here:
//! - every client command gets exactly one reply: a local answer, the tab's answer, or a CDP
//!   error (malformed frame, unknown session, unknown method, extension gone, timed out);
//! - a connection only names its own sessions, and only sees its agent's tabs;
//! - forwarded params, results and events stay raw JSON text.

mod agent_id;
mod agents;
mod approved;
pub mod audit;
mod audit_record;
mod awaited;
mod awaiting_human;
mod backlog;
mod client_frame;
pub use client_frame::{Around, ClientFrame, ResultText};
mod clipboard;
mod closing;
mod cookie_writes;
mod cookies;
mod deadline;
mod domains;
mod emulation;
pub mod envelope;
mod fair_share;
pub mod frames;
pub mod gestures;
mod guard;
mod handover;
mod lifecycle;
mod local_files;
mod local_paths;
pub use lifecycle::TabEvent;
mod null_values;
mod origin_routes;
pub mod origins;
mod output;
mod params_shape;
mod params_text;
mod pending;
pub mod policy;
mod prepared;
mod presets;
mod read_only;
pub mod redact;
pub mod session;
mod site_storage;
pub mod steps;
mod tab_ops;
mod tab_sessions;
mod tab_state;
mod target_filter;
pub mod targets;
#[cfg(test)]
mod testing;
mod waiting;
mod wrapped;

pub use agent_id::AgentId;
pub use agents::{is_valid_agent_name, Limits, DEFAULT_AGENT};
use approved::Approved;
pub use audit::{AuditRecord, Identity, Outcome};
use awaited::{ContextReplay, OnSuccess, Pending, ReplyTo, Then};
pub use backlog::MAX_IN_FLIGHT_PER_CLIENT;
use cookies::Redaction;
use domains::{Toggle, RUNTIME};
use frames::{errors, ClientCommand};
pub use output::Output;
use pending::PendingCommands;
pub use session::{ConnId, Root, SessionKind, Topology};
use session::{Connection, Presence, Session};
use std::collections::{BTreeMap, HashMap, VecDeque};
use tab_state::TabState;
pub use tabtunnel_wire::AGENT_TOKEN_PREFIX;
use tabtunnel_wire::{
    BrowserInfo, BrowserOp, BrowserRequest, CdpError, Command, FromExtension, RawValue, RequestId, TabId,
    TabInfo, ToExtension,
};
use targets::Tab;

pub struct Config {
    /// The id of the emulated browser target (`/devtools/browser/<id>`).
    pub browser_target_id: String,
    /// Mixed into minted sessionIds so that ids from an earlier daemon run never match.
    pub session_id_salt: u64,
    pub limits: Limits,
    /// The daemon's navigation endpoint, where the browser sends navigations a policy blocks or
    /// asks about (`http://127.0.0.1:PORT/<key>/tabtunnel/navigation`).
    pub navigation_url: String,
    /// The daemon's tokens and keys: no text for people to read (the trail, the side panel)
    /// shows one ([`redact`]).
    pub secrets: Vec<String>,
    /// Whether agents get a tab prepared before they ask for one (`prepared.rs`).
    pub prepare_tabs: bool,
    /// tabtunnel's own config and data directories (absolute): no agent hands a page a file
    /// from them, whatever its policy (`local_files.rs`).
    pub private_dirs: Vec<String>,
}

pub struct Core {
    config: Config,
    /// Keeps `config.secrets` out of the trail and the side panel.
    redactor: redact::Redactor,
    /// The browser the extension runs in; kept across extension reconnects.
    browser: Option<BrowserInfo>,
    extension_connected: bool,
    /// Bumped on every extension connection: a change tells a client's helpers (such as an MCP
    /// child) that tabs and sessions they knew are gone.
    extension_epoch: u64,
    tabs: BTreeMap<TabId, TabState>,
    conns: HashMap<ConnId, Connection>,
    agents: agents::Agents,
    pending: PendingCommands<Pending>,
    handovers: handover::Handovers,
    guard: guard::Guard,
    prepared: prepared::PreparedTabs,
    gestures: gestures::Gestures,
    next_session: u64,
    /// The latest time an input carried (ms on the shell's clock): every stamp's.
    now_ms: u64,
    /// When the oldest command waiting behind the in-flight limit times out (`waiting.rs`).
    waiting_due: deadline::Deadline,
    /// When the first popup past the tab limit is closed (`lifecycle.rs`).
    popups_due: deadline::Deadline,
    /// The window of commands in flight to the extension, and whose turn is next (`fair_share.rs`).
    fair: fair_share::FairShare,
    /// Turns are being handed out (`waiting.rs`): a command sent meanwhile does not start another round.
    handing_turns: bool,
    out: VecDeque<Output>,
}

impl Core {
    pub fn new(config: Config) -> Self {
        let fair = fair_share::FairShare::new(config.limits.in_line_ms);
        Core {
            redactor: redact::Redactor::new(&config.secrets),
            config,
            browser: None,
            extension_connected: false,
            extension_epoch: 0,
            tabs: BTreeMap::new(),
            conns: HashMap::new(),
            agents: agents::Agents::default(),
            pending: PendingCommands::default(),
            handovers: handover::Handovers::default(),
            guard: guard::Guard::default(),
            prepared: prepared::PreparedTabs::default(),
            gestures: gestures::Gestures::default(),
            next_session: 1,
            now_ms: 0,
            waiting_due: deadline::Deadline::default(),
            popups_due: deadline::Deadline::default(),
            fair,
            handing_turns: false,
            out: VecDeque::new(),
        }
    }

    pub fn poll_output(&mut self) -> Option<Output> {
        let mut output = self.out.pop_front()?;
        // Here, once, for everything a person reads: the trail, the side panel (`redact`).
        self.redactor.output(&mut output);
        Some(output)
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

    pub fn extension_epoch(&self) -> u64 {
        self.extension_epoch
    }

    /// The shared tabs `agent` may see, in tab order.
    pub fn visible_tabs<'a>(&'a self, agent: &'a AgentId) -> impl Iterator<Item = &'a Tab> + 'a {
        self.tabs.values().map(|t| &t.tab).filter(move |t| t.is_page() && t.visible_to(agent))
    }

    /// The tab whose page target is `target_id`, if `agent` may see it.
    pub fn visible_tab_by_target(&self, agent: &AgentId, target_id: &str) -> Option<TabId> {
        self.visible_tabs(agent).find(|t| t.page_target_id() == target_id).map(Tab::id)
    }

    /// The service and shared workers of `agent`'s pages (kept with the tabs, by a handle of
    /// their own: see `TabInfo::kind`).
    pub(crate) fn visible_workers<'a>(&'a self, agent: &'a AgentId) -> impl Iterator<Item = &'a Tab> + 'a {
        self.tabs.values().map(|t| &t.tab).filter(move |t| !t.is_page() && t.visible_to(agent))
    }

    /// An input arrived at `now`: what it stamps, it stamps with that time. The clock never
    /// goes back, whatever the shell says.
    fn advance(&mut self, now: u64) {
        self.now_ms = self.now_ms.max(now);
        // Whatever the input changed, the side panel hears of it soon.
        self.agents.report_soon(self.now_ms);
    }

    /// A client socket opened for `agent`.
    pub fn client_connected(&mut self, now: u64, conn: ConnId, agent: AgentId, root: Root) {
        self.advance(now);
        self.connect(conn, agent, root, Presence::Client);
    }

    /// An MCP session of `agent` started (`tabtunnel mcp`, an `/mcp` session): the agent is
    /// expected, and kept present from now (its window and a prepared tab open before its tool
    /// server connects) until `client_disconnected(conn)`; the side panel shows it as a session,
    /// not a CDP client. `conn` sends nothing; [`Output::CloseClient`] closes it like a client's.
    pub fn session_opened(&mut self, now: u64, conn: ConnId, agent: AgentId) {
        self.advance(now);
        self.connect(conn, agent, Root::Browser, Presence::Session);
    }

    /// A one-shot HTTP request (`/json/new`, `/json/close/<id>`...) acting for `agent` through
    /// one command; it does not keep the agent present.
    /// Who a connection's client is (its token's id, its name): its agent's records carry it.
    pub fn client_identified(&mut self, conn: ConnId, identity: audit::Identity) {
        let Some(agent) = self.conns.get(&conn).map(|c| c.agent.clone()) else { return };
        self.agent_identified(&agent, identity);
    }

    /// The MCP client an agent came through (told before or after its tool server connects):
    /// named rather than the tool server's User-Agent.
    pub fn mcp_client(&mut self, agent: &AgentId, client: String) {
        let client = self.redactor.text(&client).into_owned();
        self.agents.mcp_client(agent, client);
        self.report_agents();
    }

    /// A connection came in: the latest word about the agent's token and client wins, a known
    /// part kept over an unknown one.
    fn agent_identified(&mut self, agent: &AgentId, identity: audit::Identity) {
        let Some(record) = self.agents.get_mut(agent) else { return };
        if identity.token_id.is_some() {
            record.identity.token_id = identity.token_id;
        }
        if identity.client.is_some() {
            record.identity.client = identity.client;
        }
        self.report_agents();
    }

    pub fn request_connected(&mut self, now: u64, conn: ConnId, agent: AgentId) {
        self.advance(now);
        self.connect(conn, agent, Root::Browser, Presence::Request);
    }

    fn connect(&mut self, conn: ConnId, agent: AgentId, root: Root, presence: Presence) {
        if self.guard.kill_switch {
            // The shell refuses connections while the kill switch is engaged; should one slip
            // through, it closes at once.
            return self.out.push_back(Output::CloseClient { conn });
        }
        let root = match root {
            Root::Browser => SessionKind::Browser,
            Root::Page(tab) => SessionKind::Page { tab },
        };
        if let SessionKind::Page { tab } = root {
            let Some(state) = self.tabs.get_mut(&tab).filter(|s| s.tab.visible_to(&agent)) else {
                // The tab went (or went to another agent) between the shell's lookup and now:
                // close at once, as Chrome does for a target that is not there.
                return self.close_page_socket(conn);
            };
            state.page.sessions.push(domains::TargetSession::new(conn, String::new()));
        }
        let limit = self.config.limits.max_agents;
        let mut connection = Connection::new(agent.clone(), root, presence);
        connection.policy = self.policy_for(&agent);
        if !self.agents.contains(&agent) && self.agents.counted(&agent) && self.agents.counted_len() >= limit
        {
            connection.refused = Some(agent.as_str().to_owned());
        } else if presence.keeps_agent() {
            self.agents.connected(&agent, presence == Presence::Session);
        } else {
            self.agents.entry(&agent);
            // Present or not, its grace period starts now (`release_idle_agents`).
            self.agents.look_at(self.now_ms);
        }
        self.conns.insert(conn, connection);
        self.update_prepared_tabs();
    }

    pub fn client_disconnected(&mut self, now: u64, conn: ConnId) {
        self.advance(now);
        let Some(connection) = self.conns.remove(&conn) else { return };
        if connection.presence.keeps_agent() && connection.refused.is_none() {
            self.agents.disconnected(
                &connection.agent,
                self.now_ms,
                connection.presence == Presence::Session,
            );
            self.grace_started(&connection.agent);
            self.update_prepared_tabs();
        }
        let tabs: Vec<TabId> = self.tabs.keys().copied().collect();
        for tab in tabs {
            self.conn_left_tab(tab, conn);
        }
        self.forget_questions_of(conn);
        self.gestures_forget_conn(conn);
        // Answers still in flight for this connection are dropped when they arrive; a tab being
        // created for it is still learnt (its TabShared comes anyway). What the dropped ones held
        // of the window is given back now.
        let mut freed = Vec::new();
        self.pending.retain(|p| match p {
            Pending::Client(to) => {
                let keep = to.conn != conn || matches!(to.on_success, Some(OnSuccess::TabCreated { .. }));
                if !keep {
                    freed.push(to.share);
                }
                keep
            }
            Pending::Core(_) => true,
        });
        for share in freed {
            self.fair.give_back(share);
        }
        self.hand_out_turns();
    }

    /// One text frame from a client. Always produces exactly one reply for it, now or when the
    /// tab answers (or the human, when the policy asks).
    pub fn client_message(&mut self, now: u64, conn: ConnId, text: &str) {
        self.advance(now);
        if self.wait_if_busy(conn, text) {
            return;
        }
        self.dispatch(conn, text, Approved::No);
    }

    fn dispatch(&mut self, conn: ConnId, text: &str, approved: Approved) {
        let Some(connection) = self.conns.get(&conn) else { return };
        let parsed = match envelope::parse(text) {
            Ok(parsed) => parsed,
            // As Chromium: the envelope's errors name no session.
            Err(rejected) => return self.reply_error_raw(conn, rejected.id, "", &rejected.error),
        };
        let cmd = parsed.command();
        if let Some(agent) = &connection.refused {
            let error = errors::too_many_agents(agent, self.config.limits.max_agents);
            return self.reply_error(conn, &cmd, &error);
        }
        let Some(kind) = connection.sessions.get(cmd.session_id).map(|s| s.kind) else {
            // As Chromium: no sessionId on this answer.
            return self.reply_error_raw(conn, Some(cmd.id), "", &errors::session_not_found());
        };
        let agent = connection.agent.clone();
        if let Some(error) = params_shape::refusal(kind, &cmd) {
            return self.reply_error(conn, &cmd, &error);
        }
        // The rules read the params as Chrome will (`params_text`).
        let readable;
        let cmd = match cmd.params.map(params_text::check) {
            Some(params_text::Checked::Unreadable) => {
                let error = errors::invalid_params(cmd.method, params_text::UNREADABLE);
                return self.reply_error(conn, &cmd, &error);
            }
            Some(params_text::Checked::Rewritten(params)) => {
                readable = params;
                ClientCommand { params: Some(&readable), ..cmd }
            }
            Some(params_text::Checked::Unchanged) | None => cmd,
        };
        self.agents.acted(&agent, cmd.method, self.now_ms);
        if !self.guard_command(conn, &cmd, kind, text, approved) {
            return;
        }
        if self.gesture_command(conn, &cmd, kind, text, approved) {
            return;
        }
        let rewritten = self.read_only_params(conn, &cmd, kind);
        let cmd = ClientCommand { params: rewritten.as_deref().or(cmd.params), ..cmd };
        match kind {
            // Without the extension there is no browser: saying so beats showing an empty one.
            // Detaching one's own session needs no browser.
            SessionKind::Browser if !self.extension_connected && cmd.method != "Target.detachFromTarget" => {
                self.reply_error(conn, &cmd, &errors::no_extension())
            }
            SessionKind::Browser => self.browser_session_command(conn, &cmd),
            SessionKind::Tab { tab, .. } => self.tab_session_command(conn, &cmd, tab),
            SessionKind::Page { tab } => self.target_session_command(conn, &cmd, tab, None),
            SessionKind::Child { tab } => {
                let child = cmd.session_id.to_owned();
                self.target_session_command(conn, &cmd, tab, Some(child))
            }
        }
    }

    /// One frame from the extension (after its `Hello`, see [`Core::extension_connected`]).
    pub fn extension_frame(&mut self, now: u64, frame: FromExtension) {
        self.advance(now);
        match frame {
            FromExtension::Hello(hello) => {
                // A second Hello on the same connection restates the tab list.
                let _ = self.extension_connected(now, hello);
            }
            FromExtension::TabShared(info) => self.tab_shared(info),
            FromExtension::TabChanged(info) => self.tab_changed(info),
            FromExtension::TabUnshared { tab_id, .. } => self.tab_unshared(tab_id),
            FromExtension::CommandResult(result) => {
                let id = result.id;
                match result.into_outcome() {
                    Ok(raw) => self.extension_result(now, id, Ok(ResultText::borrowed(raw.get()))),
                    Err(error) => self.extension_result(now, id, Err(error)),
                }
            }
            FromExtension::Event(event) => self.extension_event(
                now,
                TabEvent {
                    tab_id: event.tab_id,
                    child_session_id: event.child_session_id.as_deref(),
                    method: &event.method,
                    params: event.params.get(),
                },
            ),
            FromExtension::DisconnectAgent { agent, tabs } => {
                self.disconnect_agent(now, &AgentId::new(&agent), tabs)
            }
            FromExtension::HandoverAnswer { id, tab_id } => self.handover_answered(id, tab_id),
            FromExtension::ApprovalAnswer { id, answer } => self.approval_answered(id, answer),
            FromExtension::TakeBackStanding { id } => self.take_back_standing(id),
            FromExtension::KillSwitch { engaged } => self.set_kill_switch(now, engaged),
            // Credentials are files of the shell's; it answers these itself.
            FromExtension::AgentToken(_) | FromExtension::Heartbeat => {}
        }
    }

    /// The extension's answer to command `id`: the result's JSON, passed on as it is, or the
    /// error. The hot path's entry, for a frame the shell read by its layout (`wire::hot`).
    pub fn extension_result(&mut self, now: u64, id: RequestId, outcome: Result<ResultText<'_>, CdpError>) {
        self.advance(now);
        match self.pending.take(id) {
            Some(Pending::Client(to)) => {
                self.command_answered(to, outcome);
                self.hand_out_turns();
            }
            Some(Pending::Core(Some(then))) => self.then(then, outcome.ok().map(|r| r.as_str())),
            Some(Pending::Core(None)) | None => {}
        }
    }

    /// When the core next has something to do with no input: the earliest deadline it holds
    /// (ms on the shell's clock), `None` for none. The shell calls [`Core::handle_timeout`] once
    /// it is reached; it may be in the past (call at once). Cheap: no module's state is scanned.
    pub fn poll_timeout(&self) -> Option<u64> {
        earliest([self.next_expiry(), self.agents.report_due(), self.fair.next_expiry()])
    }

    /// The earliest deadline that changes state: everything [`Core::poll_timeout`] waits for
    /// but the side panel's report.
    fn next_expiry(&self) -> Option<u64> {
        let timeout = self.config.limits.command_timeout_ms;
        earliest([
            self.pending.oldest_sent_at().map(|at| at.saturating_add(timeout)),
            self.waiting_due.get(),
            self.questions_due(),
            self.agents.grace_due(),
            self.popups_due.get(),
            self.standing_due(),
            self.refusals_due(),
        ])
    }

    /// The time is `now` (ms on the shell's monotonic clock) and a deadline of
    /// [`Core::poll_timeout`]'s may have come: commands a tab never answered time out, questions
    /// nobody answered are refusals, agents gone past their grace period lose their tabs,
    /// popups past the limit close, and the side panel hears what changed. Called early, it
    /// does nothing.
    pub fn handle_timeout(&mut self, now: u64) {
        self.now_ms = self.now_ms.max(now);
        let now = self.now_ms;
        // Commands out for long stop counting (`Limits::in_line_ms`): those waiting may go.
        if self.fair.next_expiry().is_some_and(|at| at <= now) {
            self.hand_out_turns();
        }
        if self.next_expiry().is_some_and(|at| at <= now) {
            let timeout = self.config.limits.command_timeout_ms;
            let timed_out = self.pending.take_older_than(now, timeout);
            for pending in timed_out {
                self.fail_pending(pending, &errors::timed_out(timeout));
            }
            self.hand_out_turns();
            self.expire_waiting();
            self.expire_questions();
            self.expire_standing();
            self.expire_refusals();
            self.release_idle_agents();
            // An agent whose grace period ended has no tab prepared any more.
            self.update_prepared_tabs();
            self.close_overdue_popups();
            self.agents.report_soon(now);
        }
        if self.agents.take_report_due(now) {
            self.report_agents();
        }
    }

    // ---- routing of client commands ----

    /// A command on a page or child session: forwarded to the tab's debugger session, with the
    /// per-session bookkeeping a shared debugger session needs.
    fn target_session_command(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        tab: TabId,
        child: Option<String>,
    ) {
        let Some(state) = self.tabs.get(&tab) else {
            // Only a page socket outlives its tab: its root session has nothing to talk to.
            return self.reply_error_raw(conn, Some(cmd.id), "", &errors::session_not_found());
        };
        if state.target(child.as_deref()).is_none() {
            return self.reply_error_raw(conn, Some(cmd.id), "", &errors::session_not_found());
        }
        let handed = !state.tab.info.created;
        match cmd.method {
            // Pages are never paused by us, so there is nothing to resume; children may be.
            "Runtime.runIfWaitingForDebugger" if child.is_none() => self.reply(conn, cmd, "{}"),
            "Target.setAutoAttach" => self.target_set_auto_attach(conn, cmd, tab, child),
            "Target.autoAttachRelated" => self.forward(conn, cmd, tab, child),
            // Held on by the extension for an agent's page (`wire::emulates_focus`): a client
            // turning it off would take it from the others, and on it is already.
            "Emulation.setFocusEmulationEnabled"
                if child.is_none()
                    && state.tab.info.emulates_focus()
                    && emulation::params(cmd)["enabled"].is_boolean() =>
            {
                self.reply(conn, cmd, "{}")
            }
            // A tab the human handed over is given back, never closed (as `Target.closeTarget`).
            "Page.close" if child.is_none() && handed => {
                let op = BrowserOp::ReleaseTab { tab_id: tab };
                self.browser_op(conn, cmd, op, Some(OnSuccess::ReplyWith("{}")));
            }
            "Page.bringToFront" if child.is_none() && state.tab.is_page() => {
                // Chrome would also focus the window, taking it from the human.
                let op = BrowserOp::ActivateTab { tab_id: tab };
                self.browser_op(conn, cmd, op, Some(OnSuccess::ReplyWith("{}")));
            }
            m if m.starts_with("Browser.") || m.starts_with("Target.") => match child {
                None => self.target_level_command(conn, cmd, tab, true),
                // A new tab is the agent's, counted and placed, whichever session asks: Chrome
                // would open one for a worker's or frame's session outside all of that.
                Some(_) if m.starts_with("Browser.") || m == "Target.createTarget" => {
                    self.browser_session_command(conn, cmd)
                }
                Some(_) => self.forward(conn, cmd, tab, child),
            },
            "Log.startViolationsReport" => self.start_violations(conn, cmd, tab, child),
            "Tracing.start" => {
                let then = OnSuccess::TraceStarted { tab, child: child.clone() };
                self.forward_then(conn, cmd, tab, child, Some(then))
            }
            "Tracing.end" => self.end_tracing(conn, cmd, tab, child),
            "Log.stopViolationsReport" => self.stop_violations(conn, cmd, tab, child),
            method => match domains::toggle(method) {
                Some(Toggle::Enable(domain)) => self.enable_domain(conn, cmd, tab, child, domain),
                Some(Toggle::Disable(domain)) => self.disable_domain(conn, cmd, tab, child, domain),
                None => self.forward(conn, cmd, tab, child),
            },
        }
    }

    fn tab_session_command(&mut self, conn: ConnId, cmd: &ClientCommand, tab: TabId) {
        match cmd.method {
            "Target.setAutoAttach" => self.tab_set_auto_attach(conn, cmd, tab),
            "Runtime.runIfWaitingForDebugger" => self.reply(conn, cmd, "{}"),
            m if m.starts_with("Browser.") || m.starts_with("Target.") => {
                self.target_level_command(conn, cmd, tab, false)
            }
            other => self.reply_error(conn, cmd, &errors::method_not_found(other)),
        }
    }

    /// `Browser.*` and `Target.*` on a page, tab or child session: its own target's info, its
    /// window, and detaches of what it attached are about this session; the rest is
    /// browser-wide, as at the root.
    fn target_level_command(&mut self, conn: ConnId, cmd: &ClientCommand, tab: TabId, is_page: bool) {
        match cmd.method {
            "Target.getTargetInfo" if !self.names_other_target(conn, cmd) => {
                let own = &self.tabs[&tab].tab;
                let info = if is_page { own.page_target_info() } else { own.tab_target_info() };
                self.reply_json(conn, cmd, &serde_json::json!({ "targetInfo": info }))
            }
            "Target.detachFromTarget" => self.detach_from_target(conn, cmd),
            "Browser.getWindowForTarget" if emulation::params(cmd)["targetId"].is_null() => {
                self.browser_op(conn, cmd, BrowserOp::GetWindowForTab { tab_id: tab }, None);
            }
            "Browser.setContentsSize" if is_page => self.window_command(conn, cmd, Some(tab)),
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
        let on_success = on_success
            .or_else(|| self.answer_may_hide_cookies(conn, cmd.method))
            .or_else(|| self.answer_may_explain_read_only(conn, cmd.method));
        let Some(reply_to) = self.reply_to_for_extension(conn, cmd, on_success) else { return };
        // `chrome.debugger` takes an object or nothing. `params_shape` refused arrays except for
        // methods without parameters, which ignore them.
        let params = cmd
            .params
            .filter(|p| p.get().starts_with('{'))
            .map(|p| null_values::params_for_debugger(cmd.method, p));
        self.send_command(reply_to, tab, child, cmd.method.to_owned(), params);
    }

    /// Asks the extension for a tab or window operation on behalf of a client command; `false`
    /// when it could not be sent (the client has its error already).
    fn browser_op(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        op: BrowserOp,
        on_success: Option<OnSuccess>,
    ) -> bool {
        let Some(reply_to) = self.reply_to_for_extension(conn, cmd, on_success) else { return false };
        let id = self.pending.insert(self.now_ms, reply_to);
        self.out.push_back(Output::ToExtension(ToExtension::Browser(BrowserRequest { id, op })));
        true
    }

    /// A browser operation of the core's own, whose answer nobody awaits.
    fn browser_op_housekeeping(&mut self, op: BrowserOp) {
        if self.extension_connected {
            let id = self.pending.insert(self.now_ms, Pending::Core(None));
            self.out.push_back(Output::ToExtension(ToExtension::Browser(BrowserRequest { id, op })));
        }
    }

    /// A browser operation of the core's own, and what to do once it is done.
    fn browser_op_housekeeping_then(&mut self, op: BrowserOp, then: OnSuccess) {
        let then = match then {
            OnSuccess::Redispatch { conn, text } => Then::Redispatch { conn, text },
            OnSuccess::NavigationGo { id } => Then::NavigationGo { id },
            _ => unreachable!("only the core's own follow-ups"),
        };
        self.browser_op_then(op, then);
    }

    /// A browser operation of the core's own, and what to do with its answer.
    fn browser_op_then(&mut self, op: BrowserOp, then: Then) {
        if !self.extension_connected {
            return self.then(then, None);
        }
        let id = self.pending.insert(self.now_ms, Pending::Core(Some(then)));
        self.out.push_back(Output::ToExtension(ToExtension::Browser(BrowserRequest { id, op })));
    }

    /// One of the core's own operations is done (its result), or failed (`None`).
    fn then(&mut self, then: Then, result: Option<&str>) {
        let done = result.is_some();
        match then {
            Then::Redispatch { conn, text } if done => {
                self.dispatch(conn, &text, Approved::YesAndBrowserAllowed)
            }
            Then::Redispatch { conn, text } => self.fail_text(conn, &text, &errors::extension_gone()),
            Then::NavigationGo { id } => self.out.push_back(Output::NavigationDecided { id, go: done }),
            Then::Inspected(inspected) => self.gesture_inspected(*inspected, result),
        }
    }

    /// A command that will never be answered by the extension (timed out, extension gone).
    fn fail_pending(&mut self, pending: Pending, error: &CdpError) {
        match pending {
            Pending::Client(to) => {
                self.settle(&to);
                let frame = frames::error_response(Some(to.client_id), &to.session_id, error);
                self.send_if_open(to.conn, frame);
            }
            Pending::Core(Some(then)) => self.then(then, None),
            Pending::Core(None) => {}
        }
    }

    /// Answers a client's command, known only by its text, with an error.
    /// A text whose envelope is bad gets the envelope's own error, as it would have at once.
    fn fail_text(&mut self, conn: ConnId, text: &str, error: &CdpError) {
        if !self.conns.contains_key(&conn) {
            return;
        }
        match envelope::parse(text) {
            Ok(parsed) => self.reply_error(conn, &parsed.command(), error),
            Err(rejected) => self.reply_error_raw(conn, rejected.id, "", &rejected.error),
        }
    }

    /// Where the extension's answer to this command goes; `None` (after replying with an
    /// error) when it cannot be sent: no extension, or too many commands in flight.
    fn reply_to_for_extension(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        on_success: Option<OnSuccess>,
    ) -> Option<Pending> {
        // Tabs go with the extension, so a session that can forward implies a connected
        // extension; should that ever change, the client still gets its one answer.
        if !self.extension_connected {
            self.reply_error(conn, cmd, &errors::extension_gone());
            return None;
        }
        // One client pipelining without bound would fill the extension's queue for everyone.
        let connection = self.conns.get_mut(&conn).expect("a live connection sent this");
        if connection.in_flight >= MAX_IN_FLIGHT_PER_CLIENT {
            self.reply_error(conn, cmd, &errors::too_many_in_flight(MAX_IN_FLIGHT_PER_CLIENT));
            return None;
        }
        connection.in_flight += 1;
        let cost = fair_share::FairShare::cost(connection.latest_answer_bytes);
        let share = self.fair.take(self.now_ms, cost);
        let session_id = cmd.session_id.to_owned();
        Some(Pending::Client(ReplyTo { conn, client_id: cmd.id, session_id, on_success, share }))
    }

    fn send_command(
        &mut self,
        reply_to: Pending,
        tab: TabId,
        child_session_id: Option<String>,
        method: String,
        params: Option<Box<RawValue>>,
    ) {
        let id = self.pending.insert(self.now_ms, reply_to);
        let command = Command { id, tab_id: tab, child_session_id, method, params };
        self.out.push_back(Output::ToExtension(ToExtension::Command(command)));
    }

    /// A command of the core's own whose answer nobody waits for.
    fn send_housekeeping(&mut self, tab: TabId, child: Option<String>, method: &str) {
        if self.extension_connected {
            self.send_command(Pending::Core(None), tab, child, method.to_owned(), None);
        }
    }

    /// [`Core::send_housekeeping`] with params.
    fn send_housekeeping_with(
        &mut self,
        tab: TabId,
        child: Option<String>,
        method: &str,
        params: Box<RawValue>,
    ) {
        if self.extension_connected {
            self.send_command(Pending::Core(None), tab, child, method.to_owned(), Some(params));
        }
    }

    /// The extension answered a client's command.
    fn command_answered(&mut self, to: ReplyTo, outcome: Result<ResultText<'_>, CdpError>) {
        self.settle(&to);
        let ReplyTo { conn, client_id, session_id, on_success, .. } = to;
        if let (Some(c), Ok(passed)) = (self.conns.get_mut(&conn), &outcome) {
            c.latest_answer_bytes = passed.as_str().len();
        }
        let passed = match outcome {
            Err(e) => {
                return self.send_if_open(conn, frames::error_response(Some(client_id), &session_id, &e))
            }
            Ok(passed) => passed,
        };
        // Passed on unchanged, the result keeps the extension's own bytes (`ClientFrame::Around`).
        let unchanged = |passed: ResultText| passed.response(client_id, &session_id);
        let result = passed.as_str();
        let reply: ClientFrame = match on_success {
            None => unchanged(passed),
            Some(OnSuccess::ReplyWith(text)) => frames::response(client_id, &session_id, text).into(),
            Some(OnSuccess::ExplainReadOnly) => match read_only::explain(result) {
                Some(explained) => frames::response(client_id, &session_id, &explained).into(),
                None => unchanged(passed),
            },
            Some(OnSuccess::HideCookies(policy)) if cookies::mentions_cookie(result) => {
                let hidden = cookies::Hidden::by(&policy).unwrap_or(cookies::Hidden::All);
                match cookies::redact(result, hidden) {
                    Redaction::Unchanged => unchanged(passed),
                    Redaction::Hidden(text) => frames::response(client_id, &session_id, &text).into(),
                    Redaction::Unreadable => {
                        frames::error_response(Some(client_id), &session_id, &errors::cookies_unreadable())
                            .into()
                    }
                }
            }
            Some(OnSuccess::HideCookies(_)) => unchanged(passed),
            Some(OnSuccess::ReplayContexts(replay)) => {
                self.replay_contexts(&replay, conn, &session_id);
                unchanged(passed)
            }
            Some(OnSuccess::PausedAnswered(key)) => {
                self.paused_answered(&key);
                unchanged(passed)
            }
            Some(OnSuccess::TraceStarted { tab, child }) => {
                self.trace_started(tab, child.as_deref(), conn, &session_id);
                unchanged(passed)
            }
            Some(OnSuccess::Redispatch { .. } | OnSuccess::NavigationGo { .. }) => {
                unreachable!("the core's own follow-ups are never a client's")
            }
            Some(OnSuccess::TabCreated { .. }) => match serde_json::from_str::<TabInfo>(result) {
                Ok(info) => {
                    let target_id = info.target_id.clone();
                    // Normally known already from the TabShared sent just before.
                    self.tab_shared(info);
                    let result = serde_json::json!({ "targetId": target_id }).to_string();
                    frames::response(client_id, &session_id, &result).into()
                }
                Err(e) => frames::error_response(
                    Some(client_id),
                    &session_id,
                    &errors::not_supported(
                        "Target.createTarget",
                        &format!("the extension's answer was unreadable: {e}"),
                    ),
                )
                .into(),
            },
        };
        self.send_if_open(conn, reply);
    }

    /// Bookkeeping for a client command that got (or will never get) its answer.
    fn settle(&mut self, to: &ReplyTo) {
        self.fair.give_back(to.share);
        if let Some(c) = self.conns.get_mut(&to.conn) {
            c.in_flight = c.in_flight.saturating_sub(1);
        }
        if let Some(OnSuccess::TabCreated { agent }) = &to.on_success {
            if let Some(record) = self.agents.get_mut(agent) {
                record.creating = record.creating.saturating_sub(1);
                // An agent gone past its grace period may now have nothing left.
                self.agents.look_at(self.now_ms);
            }
        }
    }

    // ---- replies ----

    fn send(&mut self, conn: ConnId, frame: impl Into<ClientFrame>) {
        self.out.push_back(Output::ToClient { conn, frame: frame.into() });
    }

    fn send_if_open(&mut self, conn: ConnId, frame: impl Into<ClientFrame>) {
        if self.conns.contains_key(&conn) {
            self.send(conn, frame);
        }
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
        // The re-attached session starts with nothing enabled and no children.
        state.forget_debugger_state();
        self.gestures_forget_tab(tab_id);
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

/// The earliest of some deadlines.
fn earliest<const N: usize>(deadlines: [Option<u64>; N]) -> Option<u64> {
    deadlines.into_iter().flatten().min()
}

#[cfg(test)]
mod tests;
