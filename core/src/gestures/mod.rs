//! The gesture guard: before an agent's gesture pays, deletes or changes a secret, the human is
//! asked, with what the browser shows. Two layers, both on every tab an agent can drive (every
//! shared tab; the human's own tabs have no debugger and are never touched):
//!
//! 1. **At the gesture** (`input.rs`): an agent's press, tap, Enter, Space or typed line break
//!    waits while the extension reads the element it acts on ([`BrowserOp::Inspect`]: hit test,
//!    then an isolated world of the extension's own reads the element, its form and the page's
//!    amounts); the rule (`rule.rs`) decides, and a held gesture reaches the page only if the
//!    human allows it once. Refused, the client gets a CDP error and the page never saw it. The
//!    connection's later `Input` commands wait behind it, in order.
//! 2. **At the network** (`interception.rs`): every request that can write leaves a shared tab,
//!    or any of its frames and workers, only after the guard saw it (`Fetch`, paused by the
//!    extension from the moment it attaches). This catches what no input shows: a script's
//!    `el.click()`, `form.submit()`, a click handler's `fetch`, scripts added for new documents,
//!    about:blank frames a script made, out-of-process frames. A write the rule holds waits for
//!    the human; refused, a form submission is answered `204 No Content` (the page stays as it
//!    was) and any other request fails as blocked by the client. A gesture the human allowed
//!    lets the one write it causes through without asking twice.
//!
//! Chrome runs no command on a target while a navigation of it is paused (measured: every
//! `Runtime`/`DOM`/`Page` command waits), so a form submission cannot be read while it is held.
//! One that follows an agent's gesture on its form is judged with what that gesture's reading
//! found; one a script sent is answered `204` at once (nothing reached the server, the page
//! stays), read, and sent again by the extension from the page, with the same fields, only if
//! the rule lets it go or the human allows it (`BrowserOp::Resubmit`).
//!
//! The vocabulary is `vocabulary.rs`; a policy adds triggers (`gesture_words`,
//! `gesture_selectors`, `gesture_origins`), never removes one. ARCHITECTURE.md lists what each
//! layer catches, measured, and the routes left open.

mod input;
pub mod interception;
pub mod rule;
pub mod vocabulary;

use crate::audit::Outcome;
use crate::frames::{errors, ClientCommand};
use crate::guard::Approved;
use crate::session::{ConnId, SessionKind};
use crate::{AgentId, Core, Output};
use interception::{ClientFetch, PausedRequest};
use rule::{Gesture, Held, Triggers};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use tabtunnel_wire::gestures::{GestureFacts, GestureQuestion, InspectTarget};
use tabtunnel_wire::{BrowserOp, CdpError, TabId};

/// `gesture_timeout` when the policy does not set it: this long without an answer is a no.
pub const DEFAULT_GESTURE_TIMEOUT_MS: u64 = 90_000;
/// An allowed gesture lets the first sensitive write of its tab through within this time.
const PASS_MS: u64 = 10_000;
/// How the guard's own questions name their rule.
pub const RULE: &str = "the gesture guard";

/// A paused request: tab, child session (`None`: the page), Chrome's requestId.
pub(crate) type PausedKey = (TabId, Option<String>, String);

/// The guard's state in the core.
#[derive(Debug, Default)]
pub(crate) struct Gestures {
    /// Connections with an input gesture being inspected or asked about: the `Input` commands
    /// they sent after it wait here, in order.
    inputs: HashMap<ConnId, VecDeque<String>>,
    /// Tabs where the human allowed a gesture: until this time, the first write the rule holds
    /// there goes through.
    passes: HashMap<TabId, u64>,
    /// Requests paused in the browser and not yet let go or refused.
    paused: HashMap<PausedKey, Paused>,
    /// Each tab's last gesture the guard read (when, and what it found): the form submission it
    /// sends is judged with it.
    last_gesture: HashMap<TabId, (u64, GestureFacts)>,
    /// Form submissions the guard sent again from the page, let through once until this time:
    /// tab, method, URL.
    replays: HashMap<(TabId, String, String), u64>,
    /// What the human refused (or let time out) a moment ago, per agent: the same gesture or
    /// request again (a client retrying, an agent wearing the human down) is refused at once.
    refused: HashMap<(AgentId, String), u64>,
}

/// How long a refusal stands for the same gesture or request of the same agent.
const REFUSAL_STANDS_MS: u64 = 30_000;

/// What makes two questions the same one.
fn signature(q: &GestureQuestion) -> String {
    format!("{}\n{}\n{}\n{}", q.origin, q.element, q.form, q.request)
}

/// A form submission a script sent, answered `204` and read: what it takes to send it again.
#[derive(Debug)]
pub(crate) struct Bounced {
    tab: TabId,
    child: Option<String>,
    request: PausedRequest,
}

#[derive(Debug)]
struct Paused {
    request: PausedRequest,
    /// The event's params as Chrome sent them, for the client that gets it.
    params: String,
    /// The client session it was handed to (it alone may answer it).
    delivered: Option<(ConnId, String)>,
    /// A `Fetch.authRequired`, not a `requestPaused`.
    auth: bool,
}

/// A gesture or request waiting for the human's answer.
#[derive(Debug)]
pub(crate) enum Waiting {
    /// A client's `Input` command, replayed if allowed.
    Input { conn: ConnId, text: String, tab: TabId },
    /// A request paused in the browser.
    Request { key: PausedKey },
    /// A client's `Fetch.continueRequest` that turned a request into one the rule holds.
    Continue { conn: ConnId, text: String, key: PausedKey },
    /// A form submission a script sent (answered `204`): sent again if allowed.
    Replay(Bounced),
}

/// What the core does with the extension's reading of a page.
#[derive(Debug)]
pub(crate) enum Inspected {
    Input { conn: ConnId, text: String, tab: TabId, gesture: Gesture },
    Request { key: PausedKey },
    Bounced(Bounced),
}

/// How long after a gesture the form submission it sends is judged with its reading.
const GESTURE_SENDS_MS: u64 = 3_000;
/// How long a form submission sent again waits to be let through.
const REPLAY_MS: u64 = 10_000;

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
            return self.fetch_command(conn, cmd, tab, child, text, approved);
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
        let Some(gesture) = input::gesture_of(cmd.method, cmd.params.map(|p| p.get())) else { return false };
        self.gestures.inputs.insert(conn, VecDeque::new());
        let target = match gesture.point() {
            Some((x, y)) => InspectTarget::Point { x, y },
            None => InspectTarget::Focus,
        };
        let agent = self.conns[&conn].agent.clone();
        let selectors = self.gesture_triggers(&agent).selectors.clone();
        let op = BrowserOp::Inspect { tab_id: tab, child_session_id: child, target, selectors };
        let next = Inspected::Input { conn, text: text.to_owned(), tab, gesture };
        self.browser_op_then(op, crate::Then::Inspected(next));
        true
    }

    /// The extension read the page (`None`: it could not; the network layer still holds what
    /// the gesture would send).
    pub(crate) fn gesture_inspected(&mut self, inspected: Inspected, result: Option<&str>) {
        let facts: Option<GestureFacts> = result.and_then(|r| serde_json::from_str(r).ok());
        match inspected {
            Inspected::Input { conn, text, tab, gesture } => {
                let Some(agent) = self.conns.get(&conn).map(|c| c.agent.clone()) else {
                    return self.gestures_forget_conn(conn);
                };
                let facts = facts.unwrap_or_default();
                let held = rule::gesture(gesture, &facts, &self.gesture_triggers(&agent));
                self.gestures.last_gesture.insert(tab, (self.now_ms, facts.clone()));
                if !held.is_held() {
                    return self.input_let_go(conn, &text);
                }
                let question = rule::question(gesture.describe(), Some(&facts), None, &held);
                let method =
                    crate::envelope::parse(&text).map(|p| p.command().method.to_owned()).unwrap_or_default();
                let url = (!facts.url.is_empty()).then_some(facts.url.as_str());
                self.ask_gesture(
                    &agent,
                    tab,
                    &method,
                    url,
                    question,
                    Waiting::Input { conn, text: text.clone(), tab },
                );
            }
            Inspected::Request { key } => {
                let Some(paused) = self.gestures.paused.get(&key) else { return };
                let request = paused.request.clone();
                self.judge_paused(key, &request, facts.as_ref());
            }
            Inspected::Bounced(bounced) => {
                let tab = bounced.tab;
                let Some(held) = self.judge(tab, &bounced.request, facts.as_ref()) else { return };
                let Some((agent, question)) = held else { return self.replay(bounced) };
                if self.take_pass(tab) {
                    self.audit_with_gesture(&agent, tab, &bounced.request, question);
                    return self.replay(bounced);
                }
                let url = bounced.request.request.url.clone();
                self.ask_gesture(&agent, tab, "request", Some(&url), question, Waiting::Replay(bounced));
            }
        }
    }

    /// The rule for a request: `None` when its tab is gone, `Some(None)` when it may go, else
    /// the agent and the question.
    #[allow(clippy::option_option)]
    fn judge(
        &self,
        tab: TabId,
        request: &PausedRequest,
        facts: Option<&GestureFacts>,
    ) -> Option<Option<(AgentId, GestureQuestion)>> {
        let agent = self.tabs.get(&tab).map(|s| s.tab.owner.clone())?;
        let body = request.body();
        let content_type = request.content_type();
        let req = rule::Request {
            method: &request.request.method,
            url: &request.request.url,
            content_type: &content_type,
            body: body.as_deref(),
        };
        let held = rule::request(&req, facts, &self.gesture_triggers(&agent));
        if !held.is_held() {
            return Some(None);
        }
        let what = if request.resource_type == "Document" { "form submission" } else { "request" };
        Some(Some((agent, rule::question(what, facts, Some(&req), &held))))
    }

    /// A paused request, judged: let go, let go with the gesture the human allowed, or asked
    /// about while it waits.
    fn judge_paused(&mut self, key: PausedKey, request: &PausedRequest, facts: Option<&GestureFacts>) {
        let Some(held) = self.judge(key.0, request, facts) else { return };
        let Some((agent, question)) = held else { return self.paused_let_go(&key) };
        if self.take_pass(key.0) {
            self.audit_with_gesture(&agent, key.0, request, question);
            return self.paused_let_go(&key);
        }
        let url = request.request.url.clone();
        self.ask_gesture(&agent, key.0, "request", Some(&url), question, Waiting::Request { key });
    }

    fn audit_with_gesture(
        &mut self,
        agent: &AgentId,
        tab: TabId,
        request: &PausedRequest,
        question: GestureQuestion,
    ) {
        let outcome = Outcome::Asked { rule: RULE.into(), answer: "allowed once (with its gesture)" };
        self.audit_question(agent, Some(tab), "request", Some(&request.request.url), outcome, question);
    }

    /// Sends a bounced form submission again from its page; the next one like it goes through.
    fn replay(&mut self, bounced: Bounced) {
        let Bounced { tab, child, request } = bounced;
        let until = self.now_ms + REPLAY_MS;
        let key = (tab, request.request.method.to_ascii_uppercase(), request.request.url.clone());
        self.gestures.replays.insert(key, until);
        let fields = url::form_urlencoded::parse(request.body().unwrap_or_default().as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        let op = BrowserOp::Resubmit {
            tab_id: tab,
            child_session_id: child,
            frame_id: request.frame_id.clone(),
            url: request.request.url.clone(),
            method: request.request.method.to_ascii_lowercase(),
            fields,
        };
        self.browser_op_housekeeping(op);
    }

    /// The facts of the tab's last gesture, if it sent this form submission (its form's action
    /// and method) a moment ago.
    fn facts_of_gesture_sending(&self, tab: TabId, request: &PausedRequest) -> Option<GestureFacts> {
        let (at, facts) = self.gestures.last_gesture.get(&tab)?;
        let form = facts.form.as_ref()?;
        let same_url = |a: &str, b: &str| a.split('#').next() == b.split('#').next();
        let sends = same_url(&form.action, &request.request.url)
            && form.method.eq_ignore_ascii_case(&request.request.method);
        (self.now_ms.saturating_sub(*at) <= GESTURE_SENDS_MS && sends).then(|| facts.clone())
    }

    fn take_pass(&mut self, tab: TabId) -> bool {
        let now = self.now_ms;
        self.gestures.passes.remove(&tab).is_some_and(|until| now <= until)
    }

    fn ask_gesture(
        &mut self,
        agent: &AgentId,
        tab: TabId,
        method: &str,
        url: Option<&str>,
        question: GestureQuestion,
        waiting: Waiting,
    ) {
        let key = (agent.clone(), signature(&question));
        if self.gestures.refused.get(&key).is_some_and(|until| self.now_ms <= *until) {
            let outcome = Outcome::Asked { rule: RULE.into(), answer: "denied: refused moments ago" };
            self.audit_question(agent, Some(tab), method, url, outcome, question);
            return self.gesture_settled(waiting, false, "the user refused it moments ago");
        }
        let timeout = self.gesture_timeout_ms();
        let rule = format!("{RULE}: {}", question.reasons.join("; "));
        self.ask_human(
            agent,
            Some(tab),
            method,
            url,
            rule,
            Some(question),
            crate::guard::Waiting::Gesture(waiting),
            Some(timeout),
        );
    }

    /// The human refused (or did not answer) this question: it stands a while.
    pub(crate) fn remember_refusal(&mut self, agent: &AgentId, question: &GestureQuestion) {
        let now = self.now_ms;
        self.gestures.refused.retain(|_, until| *until >= now);
        self.gestures.refused.insert((agent.clone(), signature(question)), now + REFUSAL_STANDS_MS);
    }

    /// The human answered (or did not, in time) a question of the guard's.
    pub(crate) fn gesture_settled(&mut self, waiting: Waiting, allowed: bool, why: &str) {
        match waiting {
            Waiting::Input { conn, text, tab } if allowed => {
                self.gestures.passes.insert(tab, self.now_ms + PASS_MS);
                self.input_let_go(conn, &text);
            }
            Waiting::Input { conn, text, .. } => {
                self.refuse_gesture_text(conn, &text, why);
                self.release_inputs(conn);
            }
            Waiting::Request { key } if allowed => self.paused_let_go(&key),
            Waiting::Request { key } => self.paused_refuse(&key),
            Waiting::Continue { conn, text, .. } if allowed => {
                self.dispatch(conn, &text, Approved::GestureChecked)
            }
            Waiting::Continue { conn, text, key } => {
                self.refuse_gesture_text(conn, &text, why);
                self.paused_refuse(&key);
            }
            Waiting::Replay(bounced) if allowed => self.replay(bounced),
            // Answered `204` already: nothing reached the server.
            Waiting::Replay(_) => {}
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

    /// A tab's debugger session is gone or starts over: the extension fails the writes it still
    /// holds there (Chrome would let them go), and their questions are withdrawn.
    pub(crate) fn gestures_forget_tab(&mut self, tab: TabId) {
        self.gestures.passes.remove(&tab);
        self.gestures.last_gesture.remove(&tab);
        self.gestures.paused.retain(|(t, _, _), _| *t != tab);
        self.gestures.replays.retain(|(t, _, _), _| *t != tab);
        self.withdraw_gesture_questions(|w| match w {
            Waiting::Request { key } | Waiting::Continue { key, .. } => key.0 == tab,
            Waiting::Replay(bounced) => bounced.tab == tab,
            Waiting::Input { .. } => false,
        });
    }

    // ---- the network layer ----

    /// A `Fetch.requestPaused` or `Fetch.authRequired` of a shared tab: the guard's to decide
    /// (`true`, always: no client hears of it otherwise).
    pub(crate) fn request_paused(
        &mut self,
        tab: TabId,
        child: Option<&str>,
        method: &str,
        params: &str,
    ) -> bool {
        let Some(request) = PausedRequest::read(params) else { return true };
        let key: PausedKey = (tab, child.map(str::to_owned), request.request_id.clone());
        let auth = method == "Fetch.authRequired";
        let write = !auth && !request.response_stage() && rule::is_write(&request.request.method);
        let frame_id = request.frame_id.clone();
        let (url, http_method) = (request.request.url.clone(), request.request.method.clone());
        self.gestures
            .paused
            .insert(key.clone(), Paused { request, params: params.to_owned(), delivered: None, auth });
        if !write {
            self.paused_let_go(&key);
            return true;
        }
        let request = self.gestures.paused[&key].request.clone();
        if request.resource_type == "Document" {
            self.form_submission_paused(key, request);
            return true;
        }
        let agent = self.tabs.get(&tab).map(|s| s.tab.owner.clone());
        let selectors = agent.map(|a| self.gesture_triggers(&a).selectors.clone()).unwrap_or_default();
        let target = InspectTarget::Request { frame_id, url, method: http_method };
        let op = BrowserOp::Inspect { tab_id: tab, child_session_id: key.1.clone(), target, selectors };
        self.browser_op_then(op, crate::Then::Inspected(Inspected::Request { key }));
        true
    }

    /// A form submission (a navigation that writes) is paused: Chrome runs nothing on its
    /// target until it goes on, so it is judged with its gesture's reading, or answered `204`
    /// and read afterwards (see the module's documentation).
    fn form_submission_paused(&mut self, key: PausedKey, request: PausedRequest) {
        let (tab, child, _) = key.clone();
        let replayed = (tab, request.request.method.to_ascii_uppercase(), request.request.url.clone());
        if self.gestures.replays.remove(&replayed).is_some_and(|until| self.now_ms <= until) {
            return self.paused_let_go(&key);
        }
        if let Some(facts) = self.facts_of_gesture_sending(tab, &request) {
            return self.judge_paused(key, &request, Some(&facts));
        }
        let replayable = request.body().is_some()
            && !request.content_type().to_ascii_lowercase().starts_with("multipart/")
            && !request.content_type().to_ascii_lowercase().starts_with("text/plain");
        if !replayable {
            // Sent as it is or not at all: judged by what it carries.
            return self.judge_paused(key, &request, None);
        }
        self.paused_refuse(&key);
        let agent = self.tabs.get(&tab).map(|s| s.tab.owner.clone());
        let selectors = agent.map(|a| self.gesture_triggers(&a).selectors.clone()).unwrap_or_default();
        let target = InspectTarget::Request {
            frame_id: request.frame_id.clone(),
            url: request.request.url.clone(),
            method: request.request.method.clone(),
        };
        let op = BrowserOp::Inspect { tab_id: tab, child_session_id: child.clone(), target, selectors };
        let bounced = Bounced { tab, child, request };
        self.browser_op_then(op, crate::Then::Inspected(Inspected::Bounced(bounced)));
    }

    /// The guard lets a paused request go: to the first client session on its target whose
    /// patterns want it, else on to the network.
    fn paused_let_go(&mut self, key: &PausedKey) {
        let (tab, child, _) = key;
        let Some(paused) = self.gestures.paused.get(key) else { return };
        let wanted = self.tabs.get(tab).and_then(|s| s.target(child.as_deref())).and_then(|target| {
            target.sessions.iter().find_map(|s| {
                let fetch = s.fetch.as_ref()?;
                let wants =
                    if paused.auth { fetch.handle_auth_requests } else { fetch.wants(&paused.request) };
                wants.then(|| (s.conn, s.session_id.clone()))
            })
        });
        match wanted {
            Some((conn, session_id)) => {
                let method = if paused.auth { "Fetch.authRequired" } else { "Fetch.requestPaused" };
                let frame = crate::frames::event(method, &paused.params, &session_id);
                self.gestures.paused.get_mut(key).expect("looked up").delivered = Some((conn, session_id));
                self.out.push_back(Output::ToClient { conn, frame });
            }
            None => self.paused_continue(key),
        }
    }

    /// On to the network, as Chrome would without interception.
    fn paused_continue(&mut self, key: &PausedKey) {
        let Some(paused) = self.gestures.paused.remove(key) else { return };
        let (method, params) = if paused.auth {
            (
                "Fetch.continueWithAuth",
                serde_json::json!({"requestId": key.2, "authChallengeResponse": {"response": "Default"}}),
            )
        } else {
            ("Fetch.continueRequest", serde_json::json!({"requestId": key.2}))
        };
        self.paused_command(key, method, params);
    }

    /// Refused: a form submission gets `204 No Content`, which leaves the page where it was;
    /// anything else fails as blocked by the client.
    fn paused_refuse(&mut self, key: &PausedKey) {
        let Some(paused) = self.gestures.paused.remove(key) else { return };
        let (method, params) = if paused.request.resource_type == "Document" {
            (
                "Fetch.fulfillRequest",
                serde_json::json!({"requestId": key.2, "responseCode": 204, "responseHeaders": []}),
            )
        } else {
            ("Fetch.failRequest", serde_json::json!({"requestId": key.2, "errorReason": "BlockedByClient"}))
        };
        self.paused_command(key, method, params);
    }

    fn paused_command(&mut self, key: &PausedKey, method: &str, params: serde_json::Value) {
        if !self.extension_connected || !self.tabs.contains_key(&key.0) {
            return;
        }
        let raw = tabtunnel_wire::RawValue::from_string(params.to_string()).expect("JSON");
        self.send_command(crate::Pending::Core(None), key.0, key.1.clone(), method.to_owned(), Some(raw));
    }

    /// A client's `Fetch` command on a shared tab: its interception is added to the guard's,
    /// and it answers only requests it was handed.
    fn fetch_command(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        tab: TabId,
        child: Option<String>,
        text: &str,
        approved: Approved,
    ) -> bool {
        match cmd.method {
            "Fetch.enable" => {
                let wish = ClientFetch::from_params(&crate::emulation::params(cmd));
                self.set_client_fetch(conn, cmd, tab, child, Some(wish));
                true
            }
            "Fetch.disable" => {
                self.set_client_fetch(conn, cmd, tab, child, None);
                true
            }
            method => {
                let Some(settles) = interception::answers_paused(method) else { return false };
                let params = crate::emulation::params(cmd);
                let id = params["requestId"].as_str().unwrap_or_default().to_owned();
                let key: PausedKey = (tab, child, id);
                let handed = self.gestures.paused.get(&key).and_then(|p| p.delivered.clone());
                if handed.as_ref().is_none_or(|(c, s)| *c != conn || s != cmd.session_id) {
                    self.reply_error(conn, cmd, &errors::invalid_params(method, "Invalid InterceptionId."));
                    return true;
                }
                if method == "Fetch.continueRequest" && approved != Approved::GestureChecked {
                    let paused = &self.gestures.paused[&key].request;
                    if let Some((m, url, body)) = interception::continued_as(paused, &params) {
                        let content_type = paused.content_type();
                        let req = rule::Request {
                            method: &m,
                            url: &url,
                            content_type: &content_type,
                            body: body.as_deref(),
                        };
                        let agent = self.conns[&conn].agent.clone();
                        let held: Held = rule::request(&req, None, &self.gesture_triggers(&agent));
                        if held.is_held() {
                            let question = rule::question(
                                "request changed by the agent's interception",
                                None,
                                Some(&req),
                                &held,
                            );
                            let waiting = Waiting::Continue { conn, text: text.to_owned(), key };
                            self.ask_gesture(&agent, tab, method, Some(&url), question, waiting);
                            return true;
                        }
                    }
                }
                if settles {
                    self.gestures.paused.remove(&key);
                }
                false // forwarded as sent
            }
        }
    }

    /// Records a client session's `Fetch.enable` (or its end) and gives Chrome the guard's
    /// patterns plus every client session's on that target.
    fn set_client_fetch(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        tab: TabId,
        child: Option<String>,
        wish: Option<ClientFetch>,
    ) {
        let Some(target) = self.tabs.get_mut(&tab).and_then(|s| s.target_mut(child.as_deref())) else {
            return;
        };
        if let Some(session) = target.session_mut(conn, cmd.session_id) {
            session.fetch = wish.clone();
        }
        let op = intercept_op(tab, child.clone(), target);
        if wish.is_none() {
            // Chrome lets a session's paused requests go when it disables Fetch.
            let mine: Vec<PausedKey> = self
                .gestures
                .paused
                .iter()
                .filter(|((t, c, _), p)| {
                    *t == tab
                        && *c == child
                        && p.delivered.as_ref().is_some_and(|(pc, s)| *pc == conn && s == cmd.session_id)
                })
                .map(|(k, _)| k.clone())
                .collect();
            for key in mine {
                self.paused_continue(&key);
            }
        }
        self.browser_op(conn, cmd, op, Some(crate::OnSuccess::ReplyWith("{}")));
    }

    /// Client sessions with their own interception left a target that stays: the guard's and
    /// the others' patterns stay, and what they were handed goes on.
    pub(crate) fn fetch_sessions_left(
        &mut self,
        tab: TabId,
        child: Option<&str>,
        leavers: &[crate::domains::TargetSession],
    ) {
        if leavers.iter().all(|s| s.fetch.is_none()) {
            return;
        }
        for leaver in leavers {
            let mine: Vec<PausedKey> = self
                .gestures
                .paused
                .iter()
                .filter(|(k, p)| {
                    k.0 == tab
                        && k.1.as_deref() == child
                        && p.delivered
                            .as_ref()
                            .is_some_and(|(c, s)| *c == leaver.conn && *s == leaver.session_id)
                })
                .map(|(k, _)| k.clone())
                .collect();
            for key in mine {
                self.paused_continue(&key);
            }
        }
        let Some(target) = self.tabs.get(&tab).and_then(|s| s.target(child)) else { return };
        let op = intercept_op(tab, child.map(str::to_owned), target);
        self.browser_op_housekeeping(op);
    }

    /// A child Chrome attached waits for a debugger (the guard's auto-attach asks that, so its
    /// interception is on before it runs): it runs once the extension armed it, unless a client
    /// session asked to resume it itself.
    pub(crate) fn child_may_run(&mut self, tab: TabId, parent: Option<&str>, params: &str) {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Attached {
            session_id: String,
            #[serde(default)]
            waiting_for_debugger: bool,
        }
        let Ok(attached) = serde_json::from_str::<Attached>(params) else { return };
        if !attached.waiting_for_debugger {
            return;
        }
        let client_resumes = self
            .tabs
            .get(&tab)
            .and_then(|s| s.target(parent))
            .is_some_and(|t| t.sessions.iter().any(|s| s.auto_attach && s.wait_for_debugger));
        if !client_resumes {
            self.send_housekeeping(tab, Some(attached.session_id), "Runtime.runIfWaitingForDebugger");
        }
    }
}

/// The extension's `Fetch.enable` for a target: the guard's patterns and its clients'.
fn intercept_op(tab: TabId, child: Option<String>, target: &crate::tab_state::TargetState) -> BrowserOp {
    let wishes: Vec<&ClientFetch> = target.sessions.iter().filter_map(|s| s.fetch.as_ref()).collect();
    BrowserOp::Intercept {
        tab_id: tab,
        child_session_id: child,
        client_patterns: wishes.iter().flat_map(|w| w.raw_patterns.iter().cloned()).collect(),
        handle_auth_requests: wishes.iter().any(|w| w.handle_auth_requests),
    }
}

#[cfg(test)]
mod tests;
