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
}

/// What the core does with the extension's reading of a page.
#[derive(Debug)]
pub(crate) enum Inspected {
    Input { conn: ConnId, text: String, tab: TabId, gesture: Gesture },
    Request { key: PausedKey },
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
                if !held.is_held() {
                    return self.input_let_go(conn, &text);
                }
                let question = rule::question(gesture.describe(), Some(&facts), None, &held);
                let method = crate::envelope::parse(&text).map(|p| p.command().method.to_owned()).unwrap_or_default();
                let url = (!facts.url.is_empty()).then_some(facts.url.as_str());
                self.ask_gesture(&agent, tab, &method, url, question, Waiting::Input { conn, text: text.clone(), tab });
            }
            Inspected::Request { key } => {
                let Some(paused) = self.gestures.paused.get(&key) else { return };
                let request = &paused.request;
                let body = request.body();
                let content_type = request.content_type();
                let req = rule::Request {
                    method: &request.request.method,
                    url: &request.request.url,
                    content_type: &content_type,
                    body: body.as_deref(),
                };
                let Some(agent) = self.tabs.get(&key.0).map(|s| s.tab.owner.clone()) else { return };
                let held = rule::request(&req, facts.as_ref(), &self.gesture_triggers(&agent));
                if !held.is_held() {
                    return self.paused_let_go(&key);
                }
                let what = if request.resource_type == "Document" { "form submission" } else { "request" };
                let question = rule::question(what, facts.as_ref(), Some(&req), &held);
                let url = request.request.url.clone();
                if self.take_pass(key.0) {
                    let outcome = Outcome::Asked { rule: RULE.into(), answer: "allowed once (with its gesture)" };
                    self.audit_question(&agent, Some(key.0), "request", Some(&url), outcome, question);
                    return self.paused_let_go(&key);
                }
                self.ask_gesture(&agent, key.0, "request", Some(&url), question, Waiting::Request { key });
            }
        }
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
        let timeout = self.gesture_timeout_ms();
        let rule = format!("{RULE}: {}", question.reasons.join("; "));
        self.ask_human(agent, Some(tab), method, url, rule, Some(question), crate::guard::Waiting::Gesture(waiting), Some(timeout));
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
            Waiting::Continue { conn, text, .. } if allowed => self.dispatch(conn, &text, Approved::GestureChecked),
            Waiting::Continue { conn, text, key } => {
                self.refuse_gesture_text(conn, &text, why);
                self.paused_refuse(&key);
            }
        }
    }

    fn refuse_gesture_text(&mut self, conn: ConnId, text: &str, why: &str) {
        let method = crate::envelope::parse(text).map(|p| p.command().method.to_owned()).unwrap_or_default();
        let error = CdpError {
            code: -32000,
            message: format!("'{method}' was held by tabtunnel's gesture guard and {why}: nothing reached the page"),
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
        self.gestures.paused.retain(|(t, _, _), _| *t != tab);
        self.withdraw_gesture_questions(|w| matches!(w, Waiting::Request { key } | Waiting::Continue { key, .. } if key.0 == tab));
    }

    // ---- the network layer ----

    /// A `Fetch.requestPaused` or `Fetch.authRequired` of a shared tab: the guard's to decide
    /// (`true`, always: no client hears of it otherwise).
    pub(crate) fn request_paused(&mut self, tab: TabId, child: Option<&str>, method: &str, params: &str) -> bool {
        let Some(request) = PausedRequest::read(params) else { return true };
        let key: PausedKey = (tab, child.map(str::to_owned), request.request_id.clone());
        let auth = method == "Fetch.authRequired";
        let write = !auth && !request.response_stage() && rule::is_write(&request.request.method);
        let frame_id = request.frame_id.clone();
        let (url, http_method) = (request.request.url.clone(), request.request.method.clone());
        self.gestures.paused.insert(key.clone(), Paused { request, params: params.to_owned(), delivered: None, auth });
        if !write {
            self.paused_let_go(&key);
            return true;
        }
        let agent = self.tabs.get(&tab).map(|s| s.tab.owner.clone());
        let selectors = agent.map(|a| self.gesture_triggers(&a).selectors.clone()).unwrap_or_default();
        let target = InspectTarget::Request { frame_id, url, method: http_method };
        let op = BrowserOp::Inspect { tab_id: tab, child_session_id: key.1.clone(), target, selectors };
        self.browser_op_then(op, crate::Then::Inspected(Inspected::Request { key }));
        true
    }

    /// The guard lets a paused request go: to the first client session on its target whose
    /// patterns want it, else on to the network.
    fn paused_let_go(&mut self, key: &PausedKey) {
        let (tab, child, _) = key;
        let Some(paused) = self.gestures.paused.get(key) else { return };
        let wanted = self.tabs.get(tab).and_then(|s| s.target(child.as_deref())).and_then(|target| {
            target.sessions.iter().find_map(|s| {
                let fetch = s.fetch.as_ref()?;
                let wants = if paused.auth { fetch.handle_auth_requests } else { fetch.wants(&paused.request) };
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
            ("Fetch.continueWithAuth", serde_json::json!({"requestId": key.2, "authChallengeResponse": {"response": "Default"}}))
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
            ("Fetch.fulfillRequest", serde_json::json!({"requestId": key.2, "responseCode": 204, "responseHeaders": []}))
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
                        let req = rule::Request { method: &m, url: &url, content_type: &content_type, body: body.as_deref() };
                        let agent = self.conns[&conn].agent.clone();
                        let held: Held = rule::request(&req, None, &self.gesture_triggers(&agent));
                        if held.is_held() {
                            let question = rule::question("request changed by the agent's interception", None, Some(&req), &held);
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
        let Some(target) = self.tabs.get_mut(&tab).and_then(|s| s.target_mut(child.as_deref())) else { return };
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
                .filter(|((t, c, _), p)| *t == tab && *c == child && p.delivered.as_ref().is_some_and(|(pc, s)| *pc == conn && s == cmd.session_id))
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
    pub(crate) fn fetch_sessions_left(&mut self, tab: TabId, child: Option<&str>, leavers: &[crate::domains::TargetSession]) {
        if leavers.iter().all(|s| s.fetch.is_none()) {
            return;
        }
        for leaver in leavers {
            let mine: Vec<PausedKey> = self
                .gestures
                .paused
                .iter()
                .filter(|(k, p)| k.0 == tab && k.1.as_deref() == child && p.delivered.as_ref().is_some_and(|(c, s)| *c == leaver.conn && *s == leaver.session_id))
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
