//! What the gesture guard holds and what it awaits, shared by its files and the core's: a
//! paused request, a write answered at once (bounced), a gesture or request the human is asked
//! about, and what a page's reading is for.

use super::allowance;
use super::interception::PausedRequest;
use super::rule::Gesture;
use crate::session::ConnId;
use tabtunnel_wire::TabId;

/// A paused request: tab, child session (`None`: the page), Chrome's requestId.
pub(crate) type PausedKey = (TabId, Option<String>, String);

#[derive(Debug)]
pub(crate) struct Paused {
    pub request: PausedRequest,
    /// The event's params as Chrome sent them, for the client that gets it.
    pub params: String,
    /// The client session it was handed to (it alone may answer it).
    pub delivered: Option<(ConnId, String)>,
    /// A `Fetch.authRequired`, not a `requestPaused`.
    pub auth: bool,
    /// Let go as the human allowed it: a client may not change it into another request.
    pub allowed: bool,
}

/// A write answered at once: what it takes to send it again from its page.
#[derive(Debug)]
pub(crate) struct Bounced {
    pub tab: TabId,
    pub child: Option<String>,
    pub request: PausedRequest,
}

/// A gesture or request waiting for the human's answer.
#[derive(Debug)]
pub(crate) enum HeldGesture {
    /// A client's `Input` command, replayed if allowed; `form`: the submission of the form the
    /// human was shown, which the allowed gesture may send once.
    Input { conn: ConnId, text: String, tab: TabId, child: Option<String>, form: Option<allowance::Exact> },
    /// A write answered at once: sent again from the page if allowed.
    Resend(Box<Bounced>),
}

/// What the core does with the extension's reading of a page.
#[derive(Debug)]
pub(crate) enum Inspected {
    Input {
        conn: ConnId,
        text: String,
        tab: TabId,
        child: Option<String>,
        gesture: Gesture,
    },
    /// A write that waits paused for its reading.
    Paused {
        key: PausedKey,
    },
    /// A write answered at once, read afterwards.
    Bounced(Box<Bounced>),
}
