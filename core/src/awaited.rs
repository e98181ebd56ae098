//! What the core awaits from the extension for each command it sent, and what it does once
//! the answer comes: shared by the files that send commands and `lib.rs`, which gets answers.

use crate::agent_id::AgentId;
use crate::gestures::{Inspected, PausedKey};
use crate::policy::AgentPolicy;
use crate::session::ConnId;
use std::sync::Arc;
use tabtunnel_wire::TabId;

/// A command waiting for the extension's answer.
pub(crate) enum Pending {
    /// A client's: it gets the answer.
    Client(ReplyTo),
    /// The core's own, with what to do once it is done, if anything.
    Core(Option<Then>),
}

/// What the core does when one of its own operations is done.
pub(crate) enum Then {
    /// The browser lets a navigation through once: run the client's command (the human
    /// allowed it).
    Redispatch { conn: ConnId, text: String },
    /// The browser lets a navigation through once: tell the navigation endpoint to go on.
    NavigationGo { id: u64 },
    /// The extension read a page for the gesture guard.
    Inspected(Box<Inspected>),
}

pub(crate) struct ReplyTo {
    pub(crate) conn: ConnId,
    pub(crate) client_id: i64,
    pub(crate) session_id: String,
    /// What a successful answer does besides reaching the client.
    pub(crate) on_success: Option<OnSuccess>,
    /// What it holds of the window in flight to the extension (`fair_share.rs`).
    pub(crate) share: crate::fair_share::Share,
}

pub(crate) enum OnSuccess {
    /// A `Runtime.enable` on a target whose Runtime was already on: before the reply, replay
    /// those of these contexts (live when the enable was sent) that are still live.
    ReplayContexts(ContextReplay),
    /// A `Tracing.start` the tab accepted: the trace's events are for this session.
    TraceStarted { tab: TabId, child: Option<String> },
    /// A `Target.createTarget`: the answer is the new tab; reply with its targetId.
    TabCreated { agent: AgentId },
    /// The agent's policy hides cookies, or some (`cookies::Hidden::by`): the answer loses
    /// those cookie values.
    HideCookies(Arc<AgentPolicy>),
    /// A read-only agent's script: V8's refusal of a side effect says why.
    ExplainReadOnly,
    /// The answer is not CDP's own; reply with this instead.
    ReplyWith(&'static str),
    /// See [`Then::Redispatch`].
    Redispatch { conn: ConnId, text: String },
    /// See [`Then::NavigationGo`].
    NavigationGo { id: u64 },
    /// A client's answer to a request paused for it: the request is no longer paused.
    PausedAnswered(PausedKey),
}

pub(crate) struct ContextReplay {
    pub(crate) tab: TabId,
    pub(crate) child: Option<String>,
    pub(crate) context_ids: Vec<i64>,
}
