//! What the core knows about one shared tab: its targets (the page, and the child sessions
//! Chrome auto-attached under it: OOPIFs, workers) and, for each target, the client sessions
//! sharing its one debugger session and the state they share.

use crate::domains::{DomainSet, ExecutionContexts, TargetSession};
use crate::session::ConnId;
use crate::targets::Tab;
use std::collections::HashMap;

/// A shared tab and who is listening to it.
pub(crate) struct TabState {
    pub tab: Tab,
    /// The tab's page target.
    pub page: TargetState,
    /// Chrome's child sessions of this tab, by Chrome's sessionId. They live as long as Chrome
    /// keeps them attached, whoever listens, so a client that joins later can learn them.
    pub children: HashMap<String, ChildTarget>,
    /// Being unshared: sessions detaching now need no housekeeping.
    pub closing: bool,
    /// Being closed for a client (`Target.closeTarget`): see `closing.rs`.
    pub closing_for_client: bool,
    /// Its agent's policy (`None`: it restricts nothing), kept here for the events: what they
    /// may show depends on it (`cookies.rs`, children of forbidden origins).
    pub policy: Option<std::sync::Arc<crate::policy::AgentPolicy>>,
    /// A popup past its agent's tab limit: closed once it has a document, or at this time.
    pub close_at_ms: Option<u64>,
}

/// One target's debugger session as the clients sharing it see it.
#[derive(Default)]
pub(crate) struct TargetState {
    /// Every client session attached to this target; its events go to each that wants them.
    pub sessions: Vec<TargetSession>,
    /// Gated domains enabled on the real debugger session.
    pub real_domains: DomainSet,
    pub contexts: ExecutionContexts,
}

/// A child session Chrome auto-attached on a tab.
pub(crate) struct ChildTarget {
    pub target_id: Option<String>,
    /// Chrome's sessionId of the target it hangs under; `None` for the page.
    pub parent: Option<String>,
    /// The `Target.attachedToTarget` params Chrome announced it with, replayed to sessions that
    /// turn auto-attach on later (Chrome announces a child once per debugger session).
    pub announcement: String,
    pub state: TargetState,
}

impl ChildTarget {
    /// The type Chrome announced it with (`iframe`, `worker`, `service_worker`...).
    fn announced_type(&self) -> Option<String> {
        #[derive(serde::Deserialize)]
        struct Announced {
            #[serde(rename = "targetInfo")]
            target_info: Info,
        }
        #[derive(serde::Deserialize)]
        struct Info {
            r#type: String,
        }
        serde_json::from_str::<Announced>(&self.announcement).ok().map(|a| a.target_info.r#type)
    }

    /// A service or shared worker.
    fn is_long_lived_worker(&self) -> bool {
        matches!(self.announced_type().as_deref(), Some("service_worker" | "shared_worker"))
    }
}

impl TabState {
    pub fn new(tab: Tab) -> Self {
        TabState {
            tab,
            page: TargetState::default(),
            children: HashMap::new(),
            closing: false,
            closing_for_client: false,
            policy: None,
            close_at_ms: None,
        }
    }

    /// The page (`None`) or one of its children.
    pub fn target(&self, child: Option<&str>) -> Option<&TargetState> {
        match child {
            None => Some(&self.page),
            Some(id) => self.children.get(id).map(|c| &c.state),
        }
    }

    pub fn target_mut(&mut self, child: Option<&str>) -> Option<&mut TargetState> {
        match child {
            None => Some(&mut self.page),
            Some(id) => self.children.get_mut(id).map(|c| &mut c.state),
        }
    }

    /// The domains the gesture guard keeps on at a target whatever its clients do: `Page` on
    /// the page and on each frame, as Chrome runs the click hook (a script for new documents)
    /// only while `Page` is on, and `Page.disable` forgets it. A client's disable of one of
    /// them ends only its own events.
    pub fn held_by_guard(&self, child: Option<&str>) -> DomainSet {
        let mut held = DomainSet::default();
        let documents = match child {
            None => true,
            Some(id) => {
                self.children.get(id).is_some_and(|c| c.announced_type().as_deref() == Some("iframe"))
            }
        };
        if documents {
            held.insert(crate::domains::PAGE);
        }
        held
    }

    /// Whether any client session is attached to the page or one of its children.
    pub fn has_sessions(&self) -> bool {
        !self.page.sessions.is_empty() || self.children.values().any(|c| !c.state.sessions.is_empty())
    }

    /// Whether a child is a service or shared worker (a target Chrome keeps alive while a
    /// debugger is attached) that, with every child under it, has no client session left.
    /// Frames stay attached: the gesture guard's request interception lives in their sessions.
    pub fn worker_is_unwatched(&self, child: &str) -> bool {
        self.children.get(child).is_some_and(ChildTarget::is_long_lived_worker)
            && self.child_is_unwatched(child)
    }

    /// Whether a child and every child under it has no client session left.
    fn child_is_unwatched(&self, child: &str) -> bool {
        self.children.get(child).is_some_and(|c| c.state.sessions.is_empty())
            && self
                .children
                .iter()
                .filter(|(_, c)| c.parent.as_deref() == Some(child))
                .all(|(id, _)| self.child_is_unwatched(id))
    }

    /// Removes a child and every child under it; returns the child.
    pub fn forget_child(&mut self, child: &str) -> Option<ChildTarget> {
        let gone = self.children.remove(child)?;
        let below: Vec<String> = self
            .children
            .iter()
            .filter(|(_, c)| c.parent.as_deref() == Some(child))
            .map(|(id, _)| id.clone())
            .collect();
        for id in below {
            self.forget_child(&id);
        }
        Some(gone)
    }

    /// Forgets what the debugger session had: after a reset Chrome starts a fresh one, which
    /// announces its children again.
    pub fn forget_debugger_state(&mut self) {
        self.page.real_domains = DomainSet::default();
        self.page.contexts.clear();
        self.children.clear();
    }
}

impl TargetState {
    pub fn session_mut(&mut self, conn: ConnId, session_id: &str) -> Option<&mut TargetSession> {
        self.sessions.iter_mut().find(|s| s.conn == conn && s.session_id == session_id)
    }

    /// Removes and returns the sessions of `conn`.
    pub fn take_sessions_of(&mut self, conn: ConnId) -> Vec<TargetSession> {
        let (gone, kept): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.sessions).into_iter().partition(|s| s.conn == conn);
        self.sessions = kept;
        gone
    }
}
