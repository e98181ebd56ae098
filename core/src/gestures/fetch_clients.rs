//! Clients share each shared tab's `Fetch` domain with the gesture guard. Every tab and child
//! runs with the guard's patterns (the extension enables them at attach); a client's
//! `Fetch.enable` adds its own (`BrowserOp::Intercept`), never replaces them, and its
//! `Fetch.disable` takes only its own away. A paused request goes to the guard first; a client
//! hears of it (one `Fetch.requestPaused`, to the first client session whose patterns match, as
//! a chain of interceptors would) once the guard let it go, and may answer only requests it was
//! handed. Chrome lets a paused request go when interception ends, so a client that leaves has
//! its requests continued, as Chrome does for a closed session. The guard's auto-attach (each
//! child waits for the debugger until the extension armed it) is resumed here for clients that
//! do not resume children themselves.

use super::allowance::Exact;
use super::held::{Bounced, HeldGesture, PausedKey};
use super::interception::{self, ClientFetch, PausedRequest};
use super::rule;
use crate::frames::{errors, ClientCommand};
use crate::session::{ConnId, SessionKind};
use crate::Core;
use tabtunnel_wire::{BrowserOp, TabId};

impl Core {
    /// Why the policy refuses a client's answer to a request paused for it, and the request's
    /// URL: an agent held to origins sets no other site's cookie through a response it writes
    /// (`cookie_writes::response_refusal`). Judged with the other rules of the policy, before
    /// the command is recorded as allowed. A request not handed to this client is
    /// `fetch_command`'s to refuse, naming nothing of it.
    pub(crate) fn paused_answer_refusal(
        &self,
        conn: ConnId,
        cmd: &ClientCommand,
        kind: SessionKind,
        policy: &crate::policy::AgentPolicy,
    ) -> Option<(String, String)> {
        interception::answers_paused(cmd.method)?;
        let (tab, child) = match kind {
            SessionKind::Page { tab } => (tab, None),
            SessionKind::Child { tab } => (tab, Some(cmd.session_id.to_owned())),
            _ => return None,
        };
        let params = crate::emulation::params(cmd);
        let id = params["requestId"].as_str().unwrap_or_default().to_owned();
        let paused = self.gestures.paused.get(&(tab, child, id))?;
        // Only one handed to this client: another is `fetch_command`'s "Invalid InterceptionId".
        let (to, session) = paused.delivered.as_ref()?;
        if *to != conn || session != cmd.session_id {
            return None;
        }
        let url = &paused.request.request.url;
        let rule = crate::cookie_writes::response_refusal(policy, cmd.method, &params, url)?;
        Some((rule, url.clone()))
    }

    pub(super) fn fetch_command(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        tab: TabId,
        child: Option<String>,
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
                if method == "Fetch.continueRequest" {
                    let paused = &self.gestures.paused[&key];
                    if let Some(changed) = interception::continued_as(&paused.request, &params) {
                        // The human allowed the request as it was shown, not another one.
                        let unlike_allowed =
                            paused.allowed && Exact::of(&changed) != Exact::of(&paused.request);
                        let agent = self.conns[&conn].agent.clone();
                        if self.held_as_changed(conn, cmd, &agent, key.clone(), changed, unlike_allowed) {
                            return true;
                        }
                    }
                }
                if settles {
                    // Settled once Chrome took the answer: one it refuses (a header it finds
                    // invalid) leaves the request paused for the client to answer again.
                    let settled = Some(crate::OnSuccess::PausedAnswered(key.clone()));
                    self.forward_then(conn, cmd, tab, key.1, settled);
                    return true;
                }
                false // forwarded as sent
            }
        }
    }

    /// Chrome took a client's answer to a request paused for it.
    pub(crate) fn paused_answered(&mut self, key: &PausedKey) {
        self.gestures.paused.remove(key);
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

    /// A client's `Fetch.continueRequest` that changes a request into one the rule holds (or
    /// changes what the human allowed): the request is answered at once and the client's
    /// command refused, and the human is asked; if allowed, the extension sends the changed
    /// request from the page.
    fn held_as_changed(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        agent: &crate::AgentId,
        key: PausedKey,
        changed: PausedRequest,
        unlike_allowed: bool,
    ) -> bool {
        let body = changed.body();
        let content_type = changed.content_type();
        let method_override = changed.method_override();
        let req = rule::Request {
            method: &changed.request.method,
            url: &changed.request.url,
            content_type: &content_type,
            body: body.as_deref(),
            method_override: &method_override,
        };
        let mut held = rule::request(&req, None, &self.gesture_triggers(agent));
        if unlike_allowed {
            held.reasons.push("the user allowed this request as it was, not as the agent changed it".into());
        }
        if !held.is_held() {
            return false;
        }
        let question = rule::question("request changed by the agent's interception", None, Some(&req), &held);
        let url = changed.request.url.clone();
        // Bounded as the tab's own writes are (`flood.rs`).
        let flooded = self.flooded(&key);
        self.paused_refuse(&key);
        let why = if flooded {
            "the changed request was held by tabtunnel's gesture guard and refused unasked: as many writes of this tab as may wait on the user already do"
        } else {
            "the changed request was held by tabtunnel's gesture guard: if the user allows it, tabtunnel sends it"
        };
        self.reply_error(conn, cmd, &errors::not_supported(cmd.method, why));
        if flooded {
            return true;
        }
        let bounced = Bounced { tab: key.0, child: key.1, request: changed };
        self.ask_gesture(
            agent,
            bounced.tab,
            cmd.method,
            Some(&url),
            question,
            HeldGesture::Resend(Box::new(bounced)),
        );
        true
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
