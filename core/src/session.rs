//! Client connections and the CDP sessions each one holds.
//!
//! Session ids are per connection: a client can only name sessions in its own table, so one
//! agent can never reach another's sessions by guessing an id. The root session is the empty id.

use crate::AgentId;
use std::collections::HashMap;
use tabtunnel_wire::TabId;

/// Identifies one client connection; assigned by the IO shell.
pub type ConnId = u64;

/// What a connection's root session (the frames without `sessionId`) talks to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Root {
    /// The browser-level endpoint (`/devtools/browser/<id>`).
    Browser,
    /// A page-level endpoint (`/devtools/page/<targetId>`): the root session is that page.
    Page(TabId),
}

/// The two shapes of root auto-attach real Chrome has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topology {
    /// Root `setAutoAttach` whose filter excludes `page` (puppeteer): `tab` targets at the root,
    /// each with its `page` attached on the tab session.
    TabsThenPages,
    /// Root `setAutoAttach` without such a filter (Playwright): `page` targets at the root.
    PagesAtRoot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionKind {
    /// The browser target: answered by the emulation.
    Browser,
    /// A `tab` target: answered by the emulation; `auto_attach` once it asked for its page.
    Tab { tab: TabId, auto_attach: bool },
    /// A tab's page: forwarded to the tab's `chrome.debugger` session.
    Page { tab: TabId },
    /// An OOPIF or worker found by the page's own auto-attach; its id is Chrome's.
    Child { tab: TabId },
}

impl SessionKind {
    pub fn tab(self) -> Option<TabId> {
        match self {
            SessionKind::Browser => None,
            SessionKind::Tab { tab, .. } | SessionKind::Page { tab } | SessionKind::Child { tab } => {
                Some(tab)
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct Session {
    pub kind: SessionKind,
    /// The session its attach and detach events are sent on (`""` = root).
    pub parent: String,
}

/// What a connection is to its agent's presence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// A one-shot HTTP request (`/json/new`, `/json/close/<id>`...): the agent is not kept.
    Request,
    /// A CDP client's socket.
    Client,
    /// An MCP session that expects the agent (`tabtunnel mcp`, `/mcp`): it keeps the agent
    /// present (its window and a prepared tab ready) before any CDP client of its connects;
    /// it sends no commands.
    Session,
}

impl Presence {
    /// Whether the connection keeps its agent present (its grace period starts when the last
    /// such one ends).
    pub fn keeps_agent(self) -> bool {
        self != Presence::Request
    }
}

#[derive(Debug)]
pub struct Connection {
    pub agent: AgentId,
    pub discover: bool,
    /// Which workers its discovery covers (tabs and pages are always covered).
    pub discover_filter: crate::target_filter::TargetFilter,
    pub auto_attach: Option<Topology>,
    /// Which workers its root auto-attach covers.
    pub auto_attach_filter: crate::target_filter::TargetFilter,
    pub sessions: HashMap<String, Session>,
    /// Its commands the tabs have not answered yet.
    pub in_flight: usize,
    /// Its commands held back until fewer are in flight (see `waiting.rs`).
    pub waiting: crate::backlog::Backlog,
    /// Its client has stopped reading (the shell says so): its commands wait (`fair_share.rs`).
    pub not_reading: bool,
    /// The size of its latest answer from the extension: what its next command is counted at.
    pub latest_answer_bytes: usize,
    /// What it is to its agent's presence.
    pub presence: Presence,
    /// Why every command of this connection is refused (its agent was over the limit).
    pub refused: Option<String>,
    /// Its agent's policy; `None` when nothing is restricted.
    pub policy: Option<std::sync::Arc<crate::policy::AgentPolicy>>,
}

impl Connection {
    pub fn new(agent: AgentId, root: SessionKind, presence: Presence) -> Self {
        let mut sessions = HashMap::new();
        sessions.insert(String::new(), Session { kind: root, parent: String::new() });
        Connection {
            agent,
            discover: false,
            discover_filter: Default::default(),
            auto_attach: None,
            auto_attach_filter: Default::default(),
            sessions,
            in_flight: 0,
            waiting: Default::default(),
            not_reading: false,
            latest_answer_bytes: 0,
            presence,
            refused: None,
            policy: None,
        }
    }

    /// Sessions of this connection on `tab` whose parent is `parent`.
    pub fn children_of<'a>(&'a self, parent: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.sessions
            .iter()
            .filter(move |(id, s)| s.parent == parent && !id.is_empty())
            .map(|(id, _)| id.as_str())
    }

    /// Whether this connection already shows `tab` at its root (as a tab or a page target).
    pub fn has_root_target_for(&self, tab: TabId) -> bool {
        self.sessions.iter().any(|(id, s)| {
            !id.is_empty()
                && s.parent.is_empty()
                && matches!(s.kind, SessionKind::Tab { tab: t, .. } | SessionKind::Page { tab: t } if t == tab)
        })
    }
}
