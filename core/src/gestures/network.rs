//! The guard at the network: every write a shared tab sends is paused by the extension and
//! judged here (`rule::request`). What it may do goes on; what the human must decide is
//! answered at once and sent again from the page if allowed, never left paused while the human
//! reads the question (Chrome lets paused requests go when its debugger detaches, and a page can
//! make it detach: measured with an embedded PDF, which released a held write to the server).
//!
//! - Reads go on (the extension lets them go itself unless a client intercepts too).
//! - A write its own URL, body or the policy's origins hold is answered at once, then the page
//!   is read for the question.
//! - Any other write is judged with the page: a fetch is read while it waits a moment; a form
//!   submission (Chrome runs no command on a target whose navigation is paused) with what its
//!   gesture's reading found, else answered `204` first and read afterwards, then sent again if
//!   it may go.
//! - What an answer allows (`allowance.rs`: the resent copy, or the submission of the form an
//!   allowed gesture showed, as it was) goes on once; every other write is judged as above.

use super::allowance::{self, Allowance, Exact};
use super::held::{Bounced, HeldGesture, Inspected, Paused, PausedKey};
use super::interception::PausedRequest;
use super::{rule, RULE};
use crate::audit::Outcome;
use crate::{AgentId, Core, Output};
use tabtunnel_wire::gestures::{GestureFacts, GestureQuestion, InspectTarget};
use tabtunnel_wire::{BrowserOp, TabId};

/// How long after a gesture the form submission it sends is judged with its reading.
const GESTURE_SENDS_MS: u64 = 3_000;

impl Core {
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
        let paused = Paused {
            request: request.clone(),
            params: params.to_owned(),
            delivered: None,
            auth,
            allowed: false,
        };
        self.gestures.paused.insert(key.clone(), paused);
        // A read-only agent's tab writes nothing at all: the browser's own rules refuse it
        // (`worker/navigation.rs`), never a question the human could answer with Allow.
        let read_only =
            self.tabs.get(&tab).and_then(|s| self.policy_for(&s.tab.owner)).is_some_and(|p| p.is_read_only());
        if !write || read_only {
            self.paused_let_go(&key);
            return true;
        }
        // The one request an answer allowed, as it was shown: it alone spends it.
        if let Some(from) = self.gestures.allowed.spend(tab, child, &request, self.now_ms) {
            if from == allowance::From::Gesture {
                self.audit_with_gesture(&key, &request);
            }
            self.gestures.paused.get_mut(&key).expect("inserted").allowed = true;
            self.paused_let_go(&key);
            return true;
        }
        // At most a few writes of a tab wait on the guard (`flood.rs`): one past them is refused
        // as a denied one is, unread and unasked.
        if self.flooded(&key) {
            self.paused_refuse(&key);
            return true;
        }
        // What it carries holds it: answered now, asked about once the page is read.
        if self.judge(tab, &request, None).is_some_and(|held| held.is_some()) {
            self.bounce_then_read(key);
            return true;
        }
        if request.resource_type != "Document" {
            return self.inspect(key.clone(), form_sending(&request), Inspected::Paused { key });
        }
        if let Some(facts) = self.facts_of_gesture_sending(tab, &request) {
            self.paused_inspected(key, Some(&facts));
        } else if request.body().is_some() && resendable_form(&request) {
            self.bounce_then_read(key);
        } else {
            // Nothing more to read it by, and it could not be sent again as it was.
            self.paused_let_go(&key);
            self.write_done(&key);
        }
        true
    }

    fn inspect(&mut self, key: PausedKey, target: InspectTarget, then: Inspected) -> bool {
        let agent = self.tabs.get(&key.0).map(|s| s.tab.owner.clone());
        let selectors = agent.map(|a| self.gesture_triggers(&a).selectors.clone()).unwrap_or_default();
        let op = BrowserOp::Inspect { tab_id: key.0, child_session_id: key.1, target, selectors };
        self.browser_op_then(op, crate::Then::Inspected(Box::new(then)));
        true
    }

    /// Answers a write at once (nothing reaches the server), then reads its page.
    fn bounce_then_read(&mut self, key: PausedKey) {
        let Some(paused) = self.gestures.paused.get(&key) else { return };
        let request = paused.request.clone();
        self.paused_refuse(&key);
        let target = form_sending(&request);
        let bounced = Bounced { tab: key.0, child: key.1.clone(), request };
        self.inspect(key, target, Inspected::Bounced(Box::new(bounced)));
    }

    /// A write that waited for its page to be read (or for its gesture's reading).
    pub(super) fn paused_inspected(&mut self, key: PausedKey, facts: Option<&GestureFacts>) {
        let Some(request) = self.gestures.paused.get(&key).map(|p| p.request.clone()) else {
            return self.write_done(&key);
        };
        let Some(held) = self.judge(key.0, &request, facts) else { return self.write_done(&key) };
        let Some((agent, question)) = held else {
            self.paused_let_go(&key);
            return self.write_done(&key);
        };
        self.paused_refuse(&key);
        let url = request.request.url.clone();
        let bounced = Bounced { tab: key.0, child: key.1, request };
        self.ask_gesture(
            &agent,
            bounced.tab,
            "request",
            Some(&url),
            question,
            HeldGesture::Resend(Box::new(bounced)),
        );
    }

    /// A write answered at once, its page read: sent again, or asked about.
    pub(super) fn bounced_inspected(&mut self, bounced: Bounced, facts: Option<&GestureFacts>) {
        let (tab, key) = (bounced.tab, bounced.key());
        let Some(held) = self.judge(tab, &bounced.request, facts) else { return self.write_done(&key) };
        let Some((agent, question)) = held else {
            self.resend(bounced);
            return self.write_done(&key);
        };
        let url = bounced.request.request.url.clone();
        self.ask_gesture(
            &agent,
            tab,
            "request",
            Some(&url),
            question,
            HeldGesture::Resend(Box::new(bounced)),
        );
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
        let method_override = request.method_override();
        let req = rule::Request {
            method: &request.request.method,
            url: &request.request.url,
            content_type: &content_type,
            body: body.as_deref(),
            method_override: &method_override,
        };
        let held = rule::request(&req, facts, &self.gesture_triggers(&agent));
        if !held.is_held() {
            return Some(None);
        }
        let what = if request.resource_type == "Document" { "form submission" } else { "request" };
        Some(Some((agent, rule::question(what, facts, Some(&req), &held))))
    }

    /// The trail: the form submission an allowed gesture sent, as the rule reads it.
    fn audit_with_gesture(&mut self, key: &PausedKey, request: &PausedRequest) {
        let facts = self.facts_of_gesture_sending(key.0, request);
        let Some(agent) = self.tabs.get(&key.0).map(|s| s.tab.owner.clone()) else { return };
        let question = match self.judge(key.0, request, facts.as_ref()).flatten() {
            Some((_, question)) => question,
            None => {
                let (content_type, body) = (request.content_type(), request.body());
                let method_override = request.method_override();
                let req = rule::Request {
                    method: &request.request.method,
                    url: &request.request.url,
                    content_type: &content_type,
                    body: body.as_deref(),
                    method_override: &method_override,
                };
                rule::question("form submission", facts.as_ref(), Some(&req), &rule::Held::default())
            }
        };
        let outcome = Outcome::Asked { rule: RULE.into(), answer: "allowed once (with its gesture)" };
        self.audit_question(
            &agent,
            Some(key.0),
            "request",
            Some(&request.request.url),
            outcome,
            question,
            None,
        );
    }

    /// Sends a write answered at once again, from its page: that copy, as it was, goes through
    /// once.
    pub(super) fn resend(&mut self, bounced: Bounced) {
        let Bounced { tab, child, request } = bounced;
        let method = request.request.method.to_ascii_uppercase();
        if let Some(exact) = Exact::of(&request) {
            let until = self.now_ms + allowance::RESEND_MS;
            let allowed =
                Allowance { tab, child: child.clone(), exact, from: allowance::From::Resent, until };
            self.gestures.allowed.grant(allowed, self.now_ms);
        }
        let headers = request
            .request
            .headers
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect();
        let op = BrowserOp::Resend {
            tab_id: tab,
            child_session_id: child,
            frame_id: request.frame_id.clone(),
            url: request.request.url.clone(),
            method,
            as_form: request.resource_type == "Document",
            headers,
            body: request.body(),
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

    /// The guard lets a paused request go: to the first client session on its target whose
    /// patterns want it, else on to the network.
    pub(super) fn paused_let_go(&mut self, key: &PausedKey) {
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
                self.out.push_back(Output::ToClient { conn, frame: frame.into() });
            }
            None => self.paused_continue(key),
        }
    }

    /// On to the network, as Chrome would without interception.
    pub(super) fn paused_continue(&mut self, key: &PausedKey) {
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

    /// Answered at once: a form submission gets `204 No Content`, which leaves the page where
    /// it was; anything else fails as blocked by the client.
    pub(super) fn paused_refuse(&mut self, key: &PausedKey) {
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
}

/// A form submission the extension can send again as it was: a URL-encoded body (a form with
/// files, or `text/plain`, could not be rebuilt field by field).
fn resendable_form(request: &PausedRequest) -> bool {
    let content_type = request.content_type().to_ascii_lowercase();
    content_type.is_empty() || content_type.starts_with("application/x-www-form-urlencoded")
}

/// Where to read the page for a request: the form in its frame that sends it, if any (the one
/// whose `_method` field says what the body's does: Rails' edit and delete forms post to the
/// same action).
fn form_sending(request: &PausedRequest) -> InspectTarget {
    let body = request.body().filter(|b| b.contains("_method"));
    let read = body.map(|b| super::body::fields(&b, &request.content_type())).unwrap_or_default();
    InspectTarget::Request {
        frame_id: request.frame_id.clone(),
        url: request.request.url.clone(),
        method: request.request.method.clone(),
        method_override: super::body::method_override(&read).unwrap_or_default().to_ascii_lowercase(),
    }
}
