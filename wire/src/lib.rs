//! The frames exchanged between the tabtunnel extension and the daemon.
//!
//! One WebSocket carries them, one JSON text message per frame, from the extension's service
//! worker (which dials out) to the daemon's `/extension` endpoint. Both sides use these types, so
//! the wire cannot drift between them.
//!
//! CDP payloads (`params`, `result`, error `data`) stay raw JSON text ([`RawValue`]): the daemon
//! routes by the envelope and never re-parses what it only forwards; the two frames every
//! command and event makes are written and read by their layout ([`hot`]), and several frames
//! share one WebSocket message. Enums are externally tagged
//! (`{"command": {...}}`) because serde cannot buffer a `RawValue` inside an internally tagged enum.

use serde::{Deserialize, Serialize};
pub use serde_json::value::RawValue;

pub mod destinations;
pub mod gestures;
pub mod hot;
pub mod navigation_mac;

/// Chrome's tab id (`chrome.tabs.Tab.id`).
pub type TabId = i32;
/// Chrome's window id (`chrome.windows.Window.id`).
pub type WindowId = i32;
/// Daemon-assigned id of one command sent to the extension; unique per extension connection.
pub type RequestId = u64;

/// Version of this wire protocol; bumped on any incompatible change. The daemon refuses an
/// extension that speaks another one, with a message the side panel shows.
pub const PROTOCOL_VERSION: u32 = 7;

/// How often each side sends [`ToExtension::Heartbeat`] / [`FromExtension::Heartbeat`]. A data
/// message (not a WebSocket ping) is what keeps an MV3 service worker alive past ~30 s idle.
pub const HEARTBEAT_INTERVAL_MS: u32 = 15_000;

/// Frames the daemon sends to the extension.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ToExtension {
    /// First frame after the extension's [`FromExtension::Hello`] was accepted.
    Welcome(Welcome),
    /// The extension refused: wrong protocol version, or another reason to show the user.
    Rejected { reason: String },
    /// Run one CDP command on a shared tab with `chrome.debugger.sendCommand`.
    Command(Command),
    /// The last client session on this tab is gone: detach and re-attach its debugger, so the
    /// next client starts from a clean session (no enabled domains, scripts or overrides left
    /// behind), as it would on a fresh CDP connection. The tab stays shared; commands that
    /// arrive meanwhile wait for the re-attach. A failed re-attach unshares the tab
    /// (`TabUnshared { reason: Detached }`). A worker is detached and left so: the next command
    /// attaches it again, and meanwhile Chrome may end it as it would any unobserved worker.
    ResetTab {
        #[serde(rename = "tabId")]
        tab_id: TabId,
    },
    /// Do something with tabs or windows through `chrome.tabs` / `chrome.windows`; answered by a
    /// [`FromExtension::CommandResult`] with the same id.
    Browser(BrowserRequest),
    /// The daemon's agents as the side panel shows them; sent when they change. Times are on
    /// the daemon's clock: `now_ms` is its time at sending, to show "3 s ago".
    Agents {
        #[serde(rename = "nowMs")]
        now_ms: u64,
        agents: Vec<AgentStatus>,
    },
    /// An agent asks the human for their active tab; the side panel shows it until the human
    /// answers ([`FromExtension::HandoverAnswer`]) or the daemon withdraws it ([`ToExtension::HandoverWithdrawn`]).
    HandoverRequest(HandoverRequest),
    /// A hand-over request is no longer waiting (answered elsewhere, timed out, agent gone).
    HandoverWithdrawn { id: u64 },
    /// The policy asks the human before an agent does something; the side panel shows it until
    /// the human answers ([`FromExtension::ApprovalAnswer`]) or it is withdrawn.
    Approval(ApprovalRequest),
    /// An approval request is no longer waiting (timed out, its client gone).
    ApprovalWithdrawn { id: u64 },
    /// Which origins each agent's tabs may load top-level documents from; sent on every
    /// connection and when the policy changes. The extension enforces them for navigations
    /// the page starts itself (links, forms, scripts), sending the others to `navigation_url`.
    NavigationRules {
        rules: NavigationRules,
        /// `http://127.0.0.1:PORT/<token>/tabtunnel/navigation`: blocked and asked navigations
        /// are redirected to `<navigation_url>/<agent>/<tabId>?<url>`, which decides them.
        #[serde(rename = "navigationUrl")]
        navigation_url: String,
    },
    /// The agents that have a token of their own; sent at connection and when they change.
    AgentCredentials { agents: Vec<AgentCredential> },
    /// The answer to [`FromExtension::AgentToken`]'s `mint`: the token, which the side panel
    /// shows once (it is stored nowhere but as a hash), or why there is none.
    AgentTokenMinted {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// The agents that should each have a tab ready for their next [`BrowserOp::CreateTab`]: one
    /// blank tab in the background of the agent's window, attached, which `CreateTab` hands out
    /// at once. Sent whenever the list changes (and at connection); an agent no longer listed has
    /// its prepared tab closed. A prepared tab is not shared: the daemon never hears of it until
    /// `CreateTab` hands it out (a `TabShared` then, as for any new tab).
    PrepareTabs { agents: Vec<String> },
    /// The gesture guard's standing answers, as the side panel lists them; sent when they change
    /// and at connection. `now_ms` is the daemon's time at sending.
    StandingAnswers {
        #[serde(rename = "nowMs")]
        now_ms: u64,
        answers: Vec<gestures::StandingAnswer>,
    },
    /// Keeps the service worker alive; no answer expected.
    Heartbeat,
}

/// One operation on tabs or windows the daemon needs done in the browser.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserRequest {
    pub id: RequestId,
    pub op: BrowserOp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum BrowserOp {
    /// Open a tab for `agent` in the agent's own window and tab group, never taking the human's
    /// focus, attach the debugger, and answer with its [`TabInfo`] (`created: true`).
    /// `allow_once`: the human allowed this URL past the agent's origin rules.
    CreateTab {
        agent: String,
        url: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        allow_once: bool,
    },
    /// Close a tab the agent created. Its `TabUnshared { reason: Closed }` follows.
    CloseTab { tab_id: TabId },
    /// Give a tab back to the human: detach the debugger, take it out of the agent's group, keep
    /// it open. Its `TabUnshared { reason: Released }` follows.
    ReleaseTab { tab_id: TabId },
    /// Make the tab the active one of its window when that window is the agent's own; never
    /// focuses a window and never changes the human's active tab. Answers `{}`.
    ActivateTab { tab_id: TabId },
    /// `{windowId, bounds}` of the window holding the tab, as CDP's `Browser.getWindowForTarget`.
    GetWindowForTab { tab_id: TabId },
    /// `{bounds}` of a window, as CDP's `Browser.getWindowBounds`.
    GetWindowBounds { window_id: WindowId },
    /// CDP's `Browser.setWindowBounds`; only for an agent's own window.
    SetWindowBounds { window_id: WindowId, bounds: WindowBounds },
    /// Let this tab load this exact URL once, past its agent's origin rules (the human allowed
    /// it). Answers `{}` once the browser's rules are in place.
    AllowNavigation { tab_id: TabId, url: String },
    /// Reads what the page shows where an agent acts, for the gesture guard: answers a
    /// [`gestures::GestureFacts`]. `selectors` are the agent's policy's `gesture_selectors`, matched
    /// in the page. Runs on the tab's (or its child's) debugger session, in an isolated world.
    Inspect {
        tab_id: TabId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        child_session_id: Option<String>,
        target: gestures::InspectTarget,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        selectors: Vec<String>,
    },
    /// The clients' own `Fetch.enable` on this target (every shared tab and child pauses
    /// [`gestures::GUARD_RESOURCE_TYPES`] for the guard; clients' patterns are added, never put
    /// in its place). With no client patterns, the extension continues paused reads itself.
    /// Answers `{}` once Chrome took the patterns.
    Intercept {
        tab_id: TabId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        child_session_id: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        client_patterns: Vec<serde_json::Value>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        handle_auth_requests: bool,
    },
    /// Sends a write again from the page's frame, as it was (the gesture guard answered it at
    /// once and the human allowed it, or it was a form submission answered `204` to read the
    /// page): a form made in the extension's isolated world with the URL-encoded body's fields
    /// (`as_form`), else a `fetch` with these headers and body. The guard lets the next
    /// request like it through once. Answers `{}`.
    Resend {
        tab_id: TabId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        child_session_id: Option<String>,
        frame_id: String,
        url: String,
        method: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        as_form: bool,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        headers: Vec<(String, String)>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<String>,
    },
    /// CDP's `Browser.setContentsSize`: resize the window so that its active tab's contents get
    /// this size; only for an agent's own window. Sent from a page session, `tab_id` is that page,
    /// made the window's active tab first (tabs share their window's size; a background tab is
    /// resized only when shown).
    SetContentsSize {
        window_id: WindowId,
        width: Option<u32>,
        height: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tab_id: Option<TabId>,
    },
}

/// CDP's `Browser.Bounds`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowBounds {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<i32>,
    /// `normal`, `minimized`, `maximized` or `fullscreen`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_state: Option<String>,
}

/// The browser's rules for one agent's tabs; URL patterns are RE2 regular expressions over
/// whole URLs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OriginRules {
    /// Top-level documents may load only from URLs matching one of these; `None`: from any.
    pub allow: Option<Vec<String>>,
    /// URLs matching one of these are asked of the human first (top level); refused in frames.
    pub ask: Vec<String>,
    /// With `allow`: frames may load documents from `allow` and from these, nothing else; and
    /// only requests to `allow` or these carry the user's cookies (to any other origin they
    /// go without, and their `Set-Cookie` is dropped).
    #[serde(default)]
    pub frames: Option<Vec<String>>,
    /// The `read-only` preset: no top-level navigation at all, no request but GET, HEAD and
    /// OPTIONS, no WebSocket or WebTransport.
    #[serde(default)]
    pub read_only: bool,
}

/// The origin rules of every agent: `default` for agents without a section of their own.
/// `None` means no restriction.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NavigationRules {
    pub default: Option<OriginRules>,
    pub agents: std::collections::BTreeMap<String, Option<OriginRules>>,
}

impl NavigationRules {
    pub fn for_agent(&self, agent: &str) -> Option<&OriginRules> {
        match self.agents.get(agent) {
            Some(own) => own.as_ref(),
            None => self.default.as_ref(),
        }
    }
}

/// Something an agent wants to do that the policy asks the human about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    pub id: u64,
    pub agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab_id: Option<TabId>,
    /// The CDP method.
    pub method: String,
    /// For a navigation, where to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The policy rule that asks (for a gesture: the gesture guard).
    pub rule: String,
    /// A gesture held by the gesture guard, with what the page showed: answered with Allow once,
    /// Deny, or one of `standing_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gesture: Option<Box<gestures::GestureQuestion>>,
    /// The standing answers a gesture question offers besides Allow once: allow its kinds on its
    /// origin for this agent for this long (ms each; [`ApprovalAnswer::AllowFor`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub standing_ms: Vec<u64>,
    /// Allow once is remembered for the daemon's life (signing in: asked once per site and agent).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub remembers: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ApprovalAnswer {
    /// This once.
    Allow,
    /// This and every like it (the method, or the origin) for this agent, until the daemon stops.
    Always,
    Deny,
    /// A gesture question's standing answer: its kinds on its origin for this agent, for `ms`
    /// (one of the question's `standing_ms`).
    AllowFor {
        ms: u64,
    },
}

/// One line of an agent's recent activity, as the side panel shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Activity {
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `allowed`, `denied by …`, `asked: allowed once` …
    pub outcome: String,
    pub at_ms: u64,
    /// The step it belongs to, in words; the records of one step share `step_id`.
    #[serde(default)]
    pub step: String,
    #[serde(default)]
    pub step_id: u64,
    /// The question the human answered, for the picture the extension keeps beside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<u64>,
}

/// One agent as the side panel shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentStatus {
    pub name: String,
    /// Open client connections (CDP sockets) of this agent.
    pub connections: u32,
    /// Its MCP sessions open (`tabtunnel mcp`, `/mcp`): it is expected, its window and a
    /// prepared tab ready, whether or not its tool server connected yet.
    #[serde(default)]
    pub sessions: u32,
    /// Its tabs, in tab order.
    pub tabs: Vec<TabId>,
    /// The last CDP method one of its clients sent, and when (daemon clock, ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_action: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_action_at_ms: Option<u64>,
    /// Set while the agent has no connection: when its tabs are released (daemon clock, ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub releases_at_ms: Option<u64>,
    /// Its last audited steps, newest last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recent: Vec<Activity>,
    /// The id of the agent token its client presented (never the token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_id: Option<String>,
    /// The client it came through: the MCP client's name and version, else its User-Agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandoverRequest {
    pub id: u64,
    pub agent: String,
    /// Why the agent asks, in its own words (shown to the human as such).
    pub reason: String,
}

/// What to do with a disconnected agent's tabs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TabsFate {
    /// Tabs it created close; tabs the human handed it go back to the human.
    Release,
    /// Every tab it holds closes, handed ones too.
    Close,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Welcome {
    pub daemon_version: String,
    /// What a CDP client should be given, e.g. `http://127.0.0.1:9722/<token>`; shown in the
    /// side panel.
    pub client_endpoint: String,
    /// What the daemon found wrong with the audit trail's seals at start, for the side panel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_trail: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Command {
    pub id: RequestId,
    /// The tab, or a worker's handle ([`TabInfo::kind`]).
    pub tab_id: TabId,
    /// A child session of the tab (OOPIF, worker) from `Target.setAutoAttach {flatten:true}`;
    /// `None` addresses the tab itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_session_id: Option<String>,
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Box<RawValue>>,
}

/// Frames the extension sends to the daemon.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FromExtension {
    /// First frame on every connection: who we are and every tab already shared (after a
    /// service-worker restart these are the tabs it re-attached).
    Hello(Hello),
    /// A tab is now shared: `chrome.debugger` is attached to it.
    TabShared(TabInfo),
    /// A shared tab navigated, changed title or moved window.
    TabChanged(TabInfo),
    /// A tab is no longer shared; its debugger session is gone.
    TabUnshared {
        #[serde(rename = "tabId")]
        tab_id: TabId,
        reason: UnshareReason,
    },
    /// The answer to a [`ToExtension::Command`].
    CommandResult(CommandResult),
    /// A CDP event from `chrome.debugger.onEvent`.
    Event(Event),
    /// The human disconnected an agent in the side panel: its connections close at once and its
    /// tabs go as `tabs` says.
    DisconnectAgent { agent: String, tabs: TabsFate },
    /// The human answered a [`ToExtension::HandoverRequest`]: the tab handed over (already
    /// shared to the agent by then), or `None` for a refusal.
    HandoverAnswer {
        id: u64,
        #[serde(rename = "tabId", default, skip_serializing_if = "Option::is_none")]
        tab_id: Option<TabId>,
    },
    /// The human answered an [`ToExtension::Approval`].
    ApprovalAnswer { id: u64, answer: ApprovalAnswer },
    /// The human took back a standing answer ([`ToExtension::StandingAnswers`]).
    TakeBackStanding { id: u64 },
    /// The human pressed (or released) the kill switch: while engaged, every client connection
    /// is closed and new ones are refused; the extension has detached every tab.
    KillSwitch { engaged: bool },
    /// The human, in the side panel, mints a token for a new agent or revokes one; answered by
    /// [`ToExtension::AgentTokenMinted`] (mint) and a new [`ToExtension::AgentCredentials`].
    AgentToken(AgentTokenOp),
    /// Keeps the connection observably alive; no answer expected.
    Heartbeat,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AgentTokenOp {
    Mint { name: String },
    Revoke { name: String },
}

/// An agent with a token of its own, as the side panel lists it (never the token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCredential {
    pub name: String,
    /// When the token was minted (RFC 3339).
    pub created: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    pub protocol_version: u32,
    pub extension_version: String,
    /// Identifies this extension install (kept in its storage): the daemon serves one browser
    /// at a time and tells a second one so, instead of letting two take turns evicting each
    /// other. A restarted worker of the same install comes back with the same id.
    #[serde(default)]
    pub instance_id: String,
    pub browser: BrowserInfo,
    pub tabs: Vec<TabInfo>,
    /// The kill switch is engaged in this browser.
    #[serde(default)]
    pub kill_switch: bool,
    /// The human asked this browser to take the daemon over from another one connected now
    /// (the side panel's "Use this browser"); otherwise a second browser is refused.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub take_over: bool,
}

/// What `Browser.getVersion` and `/json/version` report; read by the extension from the real
/// browser, since `chrome.debugger` cannot call `Browser.getVersion`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserInfo {
    /// `Chrome/156.0.8078.73` (or `HeadlessChrome/...`), as Chrome's own `product`.
    pub product: String,
    pub user_agent: String,
    /// CDP protocol version, `1.3`.
    pub protocol_version: String,
    /// V8 version when known, else empty.
    #[serde(default)]
    pub js_version: String,
}

/// One shared tab as CDP sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TabInfo {
    pub tab_id: TabId,
    pub window_id: WindowId,
    /// The real CDP targetId of the tab's page (its main frame id), from `Target.getTargetInfo`.
    pub target_id: String,
    pub browser_context_id: String,
    pub url: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opener_target_id: Option<String>,
    /// The agent this tab belongs to: only that agent's clients see it. Tabs the human shares
    /// without choosing an agent belong to [`DEFAULT_AGENT`].
    pub agent: String,
    /// The agent opened it (`Target.createTarget`, a popup of its page): it closes when the
    /// agent is done. Otherwise the human handed it over and it goes back to the human.
    #[serde(default)]
    pub created: bool,
    /// A tab's page, or a service or shared worker the agent's pages use. A worker's `tab_id` is
    /// a handle the extension gives it (negative, never a tab's), its `target_id` Chrome's; its
    /// `window_id` means nothing. It is not attached while no client uses it (see
    /// [`ToExtension::ResetTab`]), so that it ends when Chrome would end it.
    #[serde(default, skip_serializing_if = "TargetKind::is_page")]
    pub kind: TargetKind,
}

/// What a shared target is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    #[default]
    Page,
    ServiceWorker,
    SharedWorker,
}

impl TargetKind {
    pub fn is_page(&self) -> bool {
        *self == TargetKind::Page
    }

    /// CDP's `TargetInfo.type`.
    pub fn cdp_type(self) -> &'static str {
        match self {
            TargetKind::Page => "page",
            TargetKind::ServiceWorker => "service_worker",
            TargetKind::SharedWorker => "shared_worker",
        }
    }

    /// The kind of a CDP `TargetInfo.type`, for the worker types tabtunnel shares.
    pub fn of_worker_type(cdp_type: &str) -> Option<TargetKind> {
        match cdp_type {
            "service_worker" => Some(TargetKind::ServiceWorker),
            "shared_worker" => Some(TargetKind::SharedWorker),
            _ => None,
        }
    }
}

impl TabInfo {
    /// See [`emulates_focus`].
    pub fn emulates_focus(&self) -> bool {
        self.kind.is_page() && emulates_focus(&self.agent, self.created)
    }
}

/// Whether a tab of `agent`'s is shown to its page as focused, whatever window has the OS
/// focus: the extension holds `Emulation.setFocusEmulationEnabled` on in its debugger session,
/// and the daemon answers clients' own calls of it without passing them on (one client
/// turning it off would take it from every other). An agent's tabs, which never have the OS
/// focus (their window opens unfocused and the focus guard gives it back to the human), so
/// that `document.hasFocus()`, focus events and the clipboard behave as in a focused browser;
/// not the tabs the human shares from the side panel, which are where the human works.
pub fn emulates_focus(agent: &str, created: bool) -> bool {
    created || agent != DEFAULT_AGENT
}

/// The agent of the plain endpoint, and of the tabs the human shares without naming an agent.
pub const DEFAULT_AGENT: &str = "default";

/// How an agent's own credential starts (`tta_` and 64 hex digits): recognisable in a URL, so it
/// can be kept out of logs and the audit trail, and by secret scanners.
pub const AGENT_TOKEN_PREFIX: &str = "tta_";

/// Whether `name` can name an agent: 1-64 of `[A-Za-z0-9._-]`, and not `.` or `..`, which
/// clients would resolve away as URL path segments.
pub fn is_valid_agent_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && name != "."
        && name != ".."
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum UnshareReason {
    /// The tab was closed.
    Closed,
    /// The user turned sharing off in the side panel, or engaged the kill switch (a tab it
    /// closes too).
    StoppedByUser,
    /// The user dismissed Chrome's "started debugging this browser" bar (`canceled_by_user`).
    CanceledByUser,
    /// Chrome detached the debugger and re-attaching failed (restricted page, crash).
    Detached,
    /// Given back to the human (taken back in the side panel, dragged out of the agent's group
    /// or window, or released when the agent was done); the tab stays open.
    Released,
}

/// The answer to one command: CDP's `result` or its `error`. (Two optional fields rather than an
/// enum, because serde cannot flatten a `RawValue`.) A frame with neither counts as an error.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandResult {
    pub id: RequestId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Box<RawValue>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<CdpError>,
}

impl CommandResult {
    pub fn ok(id: RequestId, result: Box<RawValue>) -> Self {
        CommandResult { id, result: Some(result), error: None }
    }

    pub fn err(id: RequestId, error: CdpError) -> Self {
        CommandResult { id, result: None, error: Some(error) }
    }

    /// The outcome, with an error taking precedence and a frame carrying neither reported as
    /// an error too, so that the client always gets exactly one answer.
    pub fn into_outcome(self) -> Result<Box<RawValue>, CdpError> {
        match (self.error, self.result) {
            (Some(e), _) => Err(e),
            (None, Some(r)) => Ok(r),
            (None, None) => Err(CdpError {
                code: -32603,
                message: "The extension answered with neither result nor error".into(),
                data: None,
            }),
        }
    }
}

/// A CDP error object, `{code, message, data?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CdpError {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub tab_id: TabId,
    /// Set when the event came from a child session (`source.sessionId`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_session_id: Option<String>,
    pub method: String,
    pub params: Box<RawValue>,
}

impl ToExtension {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("wire frames always serialize")
    }
}

impl FromExtension {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("wire frames always serialize")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn command_round_trips_with_raw_params_untouched() {
        let frame = ToExtension::Command(Command {
            id: 7,
            tab_id: 3,
            child_session_id: None,
            method: "Runtime.evaluate".into(),
            params: Some(raw(r#"{"expression":"1 + 1","returnByValue":true}"#)),
        });
        let text = frame.to_json();
        assert_eq!(
            text,
            r#"{"command":{"id":7,"tabId":3,"method":"Runtime.evaluate","params":{"expression":"1 + 1","returnByValue":true}}}"#
        );
        match serde_json::from_str::<ToExtension>(&text).unwrap() {
            ToExtension::Command(c) => {
                assert_eq!(c.params.unwrap().get(), r#"{"expression":"1 + 1","returnByValue":true}"#)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn command_result_is_result_xor_error() {
        let outcome = |text: &str| match serde_json::from_str::<FromExtension>(text).unwrap() {
            FromExtension::CommandResult(r) => r.into_outcome(),
            other => panic!("{other:?}"),
        };
        let ok = outcome(r#"{"commandResult":{"id":1,"result":{"a":1}}}"#);
        assert_eq!(ok.unwrap().get(), r#"{"a":1}"#);
        let err = outcome(r#"{"commandResult":{"id":2,"error":{"code":-32000,"message":"Not allowed"}}}"#);
        assert_eq!(err.unwrap_err().message, "Not allowed");
        assert_eq!(outcome(r#"{"commandResult":{"id":3}}"#).unwrap_err().code, -32603);
        let round = FromExtension::CommandResult(CommandResult::ok(4, raw("[1,2]"))).to_json();
        assert_eq!(round, r#"{"commandResult":{"id":4,"result":[1,2]}}"#);
    }

    #[test]
    fn unit_frames_and_unshare_reasons_have_stable_spellings() {
        assert_eq!(ToExtension::Heartbeat.to_json(), r#""heartbeat""#);
        assert_eq!(FromExtension::Heartbeat.to_json(), r#""heartbeat""#);
        assert_eq!(ToExtension::ResetTab { tab_id: 2 }.to_json(), r#"{"resetTab":{"tabId":2}}"#);
        let f = FromExtension::TabUnshared { tab_id: 4, reason: UnshareReason::CanceledByUser };
        assert_eq!(f.to_json(), r#"{"tabUnshared":{"tabId":4,"reason":"canceledByUser"}}"#);
    }

    #[test]
    fn event_keeps_child_session() {
        let f: FromExtension = serde_json::from_str(
            r#"{"event":{"tabId":9,"childSessionId":"AB","method":"Runtime.consoleAPICalled","params":{"type":"log"}}}"#,
        )
        .unwrap();
        match f {
            FromExtension::Event(e) => {
                assert_eq!(e.child_session_id.as_deref(), Some("AB"));
                assert_eq!(e.params.get(), r#"{"type":"log"}"#);
            }
            other => panic!("{other:?}"),
        }
    }
}
