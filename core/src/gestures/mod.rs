//! The gesture guard: before an agent's gesture pays, deletes or changes a secret, the human is
//! asked, with what the browser shows. Two layers, both on every tab an agent can drive (every
//! shared tab; the human's own tabs have no debugger and are never touched):
//!
//! 1. **At the gesture** (`input.rs`): an agent's press, tap, drop, Enter, Space or typed line break
//!    waits while the extension reads the element it acts on ([`BrowserOp::Inspect`]: hit test,
//!    then an isolated world of the extension's own reads the element, its form and the page's
//!    amounts); the rule (`rule.rs`) decides, and a held gesture reaches the page only if the
//!    human allows it once. Refused, the client gets a CDP error and the page never saw it. The
//!    connection's later `Input` commands wait behind it, in order.
//! 2. **At the network** (`network.rs`): every request that can write leaves a shared tab, or
//!    any of its frames and workers, only after the guard saw it (`Fetch`, paused by the
//!    extension from the moment it attaches). This catches what no input shows: a script's
//!    `el.click()`, `form.submit()`, a click handler's `fetch`, scripts added for new documents,
//!    about:blank frames a script made, out-of-process frames. A write the rule holds never
//!    waits paused for the human: Chrome lets every paused request go when its debugger
//!    detaches, and a page can make it detach (measured: embedding a PDF). It is answered at
//!    once instead (a form submission `204 No Content`, which leaves the page as it was; any
//!    other write fails as blocked by the client), and the extension sends it again from the
//!    page, as it was, only if the human allows it (`BrowserOp::Resend`). An answer allows the
//!    one request it was about, once (`allowance.rs`): the resent copy, or the submission of
//!    the form an allowed gesture showed, with the body it had; nothing tab-wide. At most sixteen
//!    writes of a tab wait on the guard at once (`flood.rs`); one past them is refused unasked.
//!
//! Clients share the tab's `Fetch` domain with the guard (`fetch_clients.rs`). Chrome runs no
//! command on a target while a navigation of it is paused (measured), so a form submission is
//! judged with what its gesture's reading found, or, sent by a script, answered `204` first and
//! read afterwards.
//!
//! The vocabulary is `vocabulary.rs`; a policy adds triggers (`gesture_words`,
//! `gesture_selectors`, `gesture_origins`), never removes one. docs/gesture-guard.md lists what each
//! layer catches, measured, and the routes left open.

mod allowance;
mod answers;
mod body;
pub mod choices;
mod context;
mod fetch_clients;
mod flood;
mod held;
mod input;
pub mod interception;
mod network;
mod refusals;
pub mod rule;
mod standing;
pub mod vocabulary;
mod written;

use crate::approved::Approved;
use crate::audit::Outcome;
use crate::frames::{errors, ClientCommand};
use crate::session::{ConnId, SessionKind};
use crate::{AgentId, Core};
pub(crate) use answers::Offers;
use held::Paused;
pub(crate) use held::{HeldGesture, Inspected, PausedKey};
use rule::Triggers;
pub use rule::DEFAULT_GESTURE_TIMEOUT_MS;
#[cfg(test)]
pub(crate) use standing::Standing;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use tabtunnel_wire::gestures::{GestureFacts, GestureQuestion, InspectTarget};
use tabtunnel_wire::{BrowserOp, CdpError, TabId};

/// How the guard's own questions name their rule.
pub const RULE: &str = "the gesture guard";

/// The guard's state in the core.
#[derive(Debug, Default)]
pub(crate) struct Gestures {
    /// Connections with an input gesture being inspected or asked about: the `Input` commands
    /// they sent after it wait here, in order.
    inputs: HashMap<ConnId, VecDeque<String>>,
    /// What the human's answers allow: each the one request it was about, once.
    allowed: allowance::Allowances,
    /// Requests paused in the browser and not yet let go or refused.
    paused: HashMap<PausedKey, Paused>,
    /// Each client session's pointer while it is down (`input.rs`): a release that moved
    /// drops.
    pointers: HashMap<(ConnId, TabId, Option<String>), input::PointerDown>,
    /// Each tab's last gesture the guard read (when, and what it found): the form submission it
    /// sends is judged with it.
    last_gesture: HashMap<TabId, (u64, GestureFacts)>,
    /// What the human refused (or let time out) a moment ago, per agent: the same gesture or
    /// request again is refused at once (`refusals.rs`).
    refused: refusals::Refusals,
    /// The human's standing answers (`standing.rs`).
    standing: standing::StandingAnswers,
    /// The writes waiting on the guard per tab, at most a few (`flood.rs`).
    floods: flood::Floods,
}

/// The answer the trail gives a retry of what the human refused moments ago.
const REFUSED_MOMENTS_AGO: &str = "denied: refused moments ago";

/// What makes two questions the same one.
fn signature(q: &GestureQuestion) -> String {
    format!("{}\n{}\n{}\n{}", q.origin, q.element, q.form, q.request)
}

impl Core {
    /// What the agent's policy adds to the built-in rule.
    fn gesture_triggers(&self, agent: &AgentId) -> Arc<Triggers> {
        match &self.guard_policy() {
            Some(policy) => policy.gesture_triggers(agent.as_str()),
            None => Arc::new(Triggers { section: "default".into(), ..Default::default() }),
        }
    }

    pub(crate) fn gesture_timeout_ms(&self) -> u64 {
        self.guard_policy().map_or(DEFAULT_GESTURE_TIMEOUT_MS, |p| p.gesture_timeout_ms)
    }

    /// The guard's share of a client command on a page or child session, after the policy let
    /// it through: `true` when the guard took it (held, queued, or answered).
    pub(crate) fn gesture_command(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        kind: SessionKind,
        text: &str,
        approved: Approved,
    ) -> bool {
        let (tab, child) = match kind {
            SessionKind::Page { tab } => (tab, None),
            SessionKind::Child { tab } => (tab, Some(cmd.session_id.to_owned())),
            _ => return false,
        };
        if self.tabs.get(&tab).and_then(|s| s.target(child.as_deref())).is_none() {
            return false; // routing answers that the session is gone
        }
        if cmd.method.starts_with("Input.") {
            return self.input_gesture(conn, cmd, tab, child, text, approved);
        }
        if cmd.method.starts_with("Fetch.") {
            return self.fetch_command(conn, cmd, tab, child);
        }
        if matches!(cmd.method, "Network.setRequestInterception" | "Network.continueInterceptedRequest") {
            let why = "tabtunnel's gesture guard intercepts requests with the Fetch domain; use Fetch.enable";
            self.reply_error(conn, cmd, &errors::not_supported(cmd.method, why));
            return true;
        }
        false
    }

    fn input_gesture(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        tab: TabId,
        child: Option<String>,
        text: &str,
        approved: Approved,
    ) -> bool {
        if approved == Approved::GestureChecked {
            return false;
        }
        if let Some(queue) = self.gestures.inputs.get_mut(&conn) {
            queue.push_back(text.to_owned());
            return true;
        }
        let pointer = (conn, tab, child.clone());
        let down = self.gestures.pointers.remove(&pointer);
        let (gesture, down) = input::read(cmd.method, cmd.params.map(|p| p.get()), down);
        if let Some(down) = down {
            self.gestures.pointers.insert(pointer, down);
        }
        let Some(gesture) = gesture else { return false };
        self.gestures.inputs.insert(conn, VecDeque::new());
        let target = match gesture.point() {
            Some((x, y)) => InspectTarget::Point { x, y },
            None => InspectTarget::Focus,
        };
        let agent = self.conns[&conn].agent.clone();
        let selectors = self.gesture_triggers(&agent).selectors.clone();
        let op = BrowserOp::Inspect { tab_id: tab, child_session_id: child.clone(), target, selectors };
        let next = Inspected::Input { conn, text: text.to_owned(), tab, child, gesture };
        self.browser_op_then(op, crate::Then::Inspected(Box::new(next)));
        true
    }

    /// The extension read the page (`None`: it could not; the network layer still holds what
    /// the gesture would send).
    pub(crate) fn gesture_inspected(&mut self, inspected: Inspected, result: Option<&str>) {
        let facts: Option<GestureFacts> = result.and_then(|r| serde_json::from_str(r).ok());
        match inspected {
            Inspected::Input { conn, text, tab, child, gesture } => {
                let Some(agent) = self.conns.get(&conn).map(|c| c.agent.clone()) else {
                    return self.gestures_forget_conn(conn);
                };
                let facts = facts.unwrap_or_default();
                let held = rule::gesture(gesture, &facts, &self.gesture_triggers(&agent));
                self.gestures.last_gesture.insert(tab, (self.now_ms, facts.clone()));
                // (The step a drag makes is named after what it picked up, not where it let go.)
                if let Some(element) =
                    facts.element.as_ref().filter(|_| !matches!(gesture, rule::Gesture::Drop { .. }))
                {
                    self.step_element(&agent, tab, element);
                }
                if !held.is_held() {
                    return self.input_let_go(conn, &text);
                }
                let question = rule::question(gesture.describe(), Some(&facts), None, &held);
                let method =
                    crate::envelope::parse(&text).map(|p| p.command().method.to_owned()).unwrap_or_default();
                let url = (!facts.url.is_empty()).then_some(facts.url.as_str());
                // The one request the answer allows: the submission of the form it showed.
                let form = facts.form.as_ref().filter(|f| f.method.eq_ignore_ascii_case("post"));
                let form = form.map(|f| allowance::Exact::form(&f.method, &f.action, f.body.as_deref()));
                self.ask_gesture(
                    &agent,
                    tab,
                    &method,
                    url,
                    question,
                    HeldGesture::Input { conn, text: text.clone(), tab, child, form },
                );
            }
            Inspected::Paused { key } => self.paused_inspected(key, facts.as_ref()),
            Inspected::Bounced(bounced) => self.bounced_inspected(*bounced, facts.as_ref()),
        }
    }

    fn ask_gesture(
        &mut self,
        agent: &AgentId,
        tab: TabId,
        method: &str,
        url: Option<&str>,
        question: GestureQuestion,
        waiting: HeldGesture,
    ) {
        // The policy's choice for its kinds, or a standing answer, may settle it unasked.
        let offers = match self.before_asking(agent, &question) {
            answers::Before::Ask(offers) => offers,
            answers::Before::Go(outcome) => {
                self.audit_question(agent, Some(tab), method, url, outcome, question, None);
                return self.gesture_settled(waiting, true, "");
            }
            answers::Before::Refuse(rule) => {
                let why = format!("the policy refuses it ({rule})");
                self.audit_question(agent, Some(tab), method, url, Outcome::Denied { rule }, question, None);
                return self.gesture_settled(waiting, false, &why);
            }
        };
        let key = (agent.clone(), signature(&question));
        match self.gestures.refused.retry(&key, self.now_ms, Some(tab), method, url, &question) {
            refusals::Retry::Ask => {}
            refusals::Retry::First => {
                let outcome = Outcome::Asked { rule: RULE.into(), answer: REFUSED_MOMENTS_AGO };
                self.audit_question(agent, Some(tab), method, url, outcome, question, None);
                return self.gesture_settled(waiting, false, "the user refused it moments ago");
            }
            refusals::Retry::Counted => {
                return self.gesture_settled(waiting, false, "the user refused it moments ago");
            }
        }
        let timeout = self.gesture_timeout_ms();
        let rule = format!("{RULE}: {}", question.reasons.join("; "));
        self.ask_human(
            agent,
            Some(tab),
            method,
            url,
            rule,
            Some((question, offers)),
            crate::awaiting_human::AwaitingHuman::Gesture(Box::new(waiting)),
            Some(timeout),
        );
    }

    /// The human refused (or did not answer) this question: it stands a while.
    pub(crate) fn remember_refusal(&mut self, agent: &AgentId, question: &GestureQuestion) {
        let ended = self.gestures.refused.remember((agent.clone(), signature(question)), self.now_ms);
        self.audit_retries(ended);
    }

    /// When refused retries wait to be counted in the trail.
    pub(crate) fn refusals_due(&self) -> Option<u64> {
        self.gestures.refused.due()
    }

    /// Refusals whose time is up: their retries' count goes into the trail.
    pub(crate) fn expire_refusals(&mut self) {
        let ended = self.gestures.refused.expired(self.now_ms);
        self.audit_retries(ended);
    }

    fn audit_retries(&mut self, ended: Vec<(AgentId, refusals::Retries)>) {
        for (agent, r) in ended {
            let rule =
                format!("{RULE}: {} more like it, each refused unasked while the refusal stood", r.uncounted);
            let outcome = Outcome::Asked { rule, answer: REFUSED_MOMENTS_AGO };
            self.audit_question(&agent, r.tab, &r.method, r.url.as_deref(), outcome, r.question, None);
        }
    }

    /// The human answered (or did not, in time) a question of the guard's.
    pub(crate) fn gesture_settled(&mut self, waiting: HeldGesture, allowed: bool, why: &str) {
        match waiting {
            HeldGesture::Input { conn, text, tab, child, form } if allowed => {
                if let Some(exact) = form {
                    let until = self.now_ms + allowance::GESTURE_MS;
                    let allowed =
                        allowance::Allowance { tab, child, exact, from: allowance::From::Gesture, until };
                    self.gestures.allowed.grant(allowed, self.now_ms);
                }
                self.input_let_go(conn, &text);
            }
            HeldGesture::Input { conn, text, .. } => {
                self.refuse_gesture_text(conn, &text, why);
                self.release_inputs(conn);
            }
            HeldGesture::Resend(bounced) => {
                let key = bounced.key();
                if allowed {
                    self.resend(*bounced);
                }
                // Else answered at once already: nothing reached the server.
                self.write_done(&key);
            }
        }
    }

    fn refuse_gesture_text(&mut self, conn: ConnId, text: &str, why: &str) {
        let method = crate::envelope::parse(text).map(|p| p.command().method.to_owned()).unwrap_or_default();
        let error = CdpError {
            code: -32000,
            message: format!(
                "'{method}' was held by tabtunnel's gesture guard and {why}: nothing reached the page"
            ),
            data: None,
        };
        self.fail_text(conn, text, &error);
    }

    /// A held input goes to the page, then those that waited behind it, until one is held.
    fn input_let_go(&mut self, conn: ConnId, text: &str) {
        self.dispatch(conn, text, Approved::GestureChecked);
        self.release_inputs(conn);
    }

    fn release_inputs(&mut self, conn: ConnId) {
        let Some(mut queue) = self.gestures.inputs.remove(&conn) else { return };
        while let Some(next) = queue.pop_front() {
            self.dispatch(conn, &next, Approved::No);
            if let Some(again) = self.gestures.inputs.get_mut(&conn) {
                // Held again: the rest wait behind that one.
                again.extend(queue);
                return;
            }
        }
    }

    /// A connection went: its inputs waiting here go with it, and requests it was handed are
    /// let go (as Chrome continues a closed session's paused requests).
    pub(crate) fn gestures_forget_conn(&mut self, conn: ConnId) {
        self.gestures.inputs.remove(&conn);
        self.gestures.pointers.retain(|(c, _, _), _| *c != conn);
        let mine: Vec<PausedKey> = self
            .gestures
            .paused
            .iter()
            .filter(|(_, p)| p.delivered.as_ref().is_some_and(|(c, _)| *c == conn))
            .map(|(k, _)| k.clone())
            .collect();
        for key in mine {
            self.paused_continue(&key);
        }
    }

    /// A tab's debugger session is gone or starts over: what the guard knew of it goes, and its
    /// questions about writes are withdrawn (the extension fails what it still holds paused
    /// there, as Chrome would let it go).
    pub(crate) fn gestures_forget_tab(&mut self, tab: TabId) {
        self.gestures.allowed.forget_tab(tab);
        self.gestures.last_gesture.remove(&tab);
        self.gestures.paused.retain(|(t, _, _), _| *t != tab);
        self.withdraw_gesture_questions(|w| matches!(w, HeldGesture::Resend(bounced) if bounced.tab == tab));
        self.floods_forget_tab(tab);
    }
}

#[cfg(test)]
mod tests;
