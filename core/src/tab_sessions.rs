//! Client sessions sharing one target's debugger session (a tab's page, or one of its
//! children): counting domain enables and disables, replaying execution contexts, turning
//! auto-attach on for late joiners, and cleaning up after a session that leaves. See
//! `domains.rs` for why.

use crate::domains::{self, Domain, DomainSet, TargetSession};
use crate::frames::{self, ClientCommand};
use crate::session::ConnId;
use crate::{ContextReplay, Core, OnSuccess, Output};
use tabtunnel_wire::TabId;

impl Core {
    /// The target a page or child session's command was routed to (the routing checked it).
    fn routed_target(&mut self, tab: TabId, child: Option<&str>) -> &mut crate::tab_state::TargetState {
        self.tabs.get_mut(&tab).and_then(|s| s.target_mut(child)).expect("routed to a known target")
    }

    /// `X.enable` always reaches the tab (its params may matter), and marks the session as
    /// wanting `X`'s events.
    pub(crate) fn enable_domain(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        tab: TabId,
        child: Option<String>,
        domain: Domain,
    ) {
        let target = self.routed_target(tab, child.as_deref());
        let Some(session) = target.session_mut(conn, cmd.session_id) else {
            return self.forward(conn, cmd, tab, child);
        };
        let first_in_session = !session.domains.contains(domain);
        session.domains.insert(domain);
        let replay = if domain != domains::RUNTIME {
            None
        } else if !target.real_domains.contains(domain) {
            // Chrome reports the contexts to this first enable itself; track them from now on.
            target.contexts.clear();
            None
        } else {
            // Contexts created from now on reach this session live; only those that exist
            // already need replaying, if they still do when the reply comes.
            first_in_session.then(|| ContextReplay {
                tab,
                child: child.clone(),
                context_ids: target.contexts.ids().collect(),
            })
        };
        target.real_domains.insert(domain);
        self.forward_then(conn, cmd, tab, child, replay.map(OnSuccess::ReplayContexts));
    }

    /// `X.disable` reaches the tab only when no other session still wants `X` and the gesture
    /// guard does not hold it (`TabState::held_by_guard`).
    pub(crate) fn disable_domain(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        tab: TabId,
        child: Option<String>,
        domain: Domain,
    ) {
        let held = self.tabs.get(&tab).map(|s| s.held_by_guard(child.as_deref())).unwrap_or_default();
        let target = self.routed_target(tab, child.as_deref());
        if let Some(session) = target.session_mut(conn, cmd.session_id) {
            session.domains.remove(domain);
        }
        if held.contains(domain) || target.sessions.iter().any(|s| s.domains.contains(domain)) {
            return self.reply(conn, cmd, "{}");
        }
        target.real_domains.remove(domain);
        if domain == domains::RUNTIME {
            target.contexts.clear();
        }
        self.forward(conn, cmd, tab, child);
    }

    pub(crate) fn replay_contexts(&mut self, replay: &ContextReplay, conn: ConnId, session_id: &str) {
        let Core { tabs, out, .. } = self;
        let Some(target) = tabs.get(&replay.tab).and_then(|s| s.target(replay.child.as_deref())) else {
            return;
        };
        for params in target.contexts.announcements_of(&replay.context_ids) {
            let frame = frames::event("Runtime.executionContextCreated", params, session_id);
            out.push_back(Output::ToClient { conn, frame: frame.into() });
        }
    }

    /// `Target.setAutoAttach` on a page or child is answered here: Chrome's auto-attach is the
    /// gesture guard's, on from the moment the extension attached (waiting for the debugger, so
    /// that each child's interception is on before it runs). The session then wants children's
    /// attach events, learns those Chrome attached before, and with `waitForDebuggerOnStart`
    /// resumes the children it hears of itself (else the core does).
    pub(crate) fn target_set_auto_attach(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        tab: TabId,
        child: Option<String>,
    ) {
        let params = crate::emulation::params(cmd);
        let on = params["autoAttach"].as_bool().unwrap_or(false);
        let target = self.routed_target(tab, child.as_deref());
        if let Some(session) = target.session_mut(conn, cmd.session_id) {
            session.auto_attach = on;
            session.wait_for_debugger = on && params["waitForDebuggerOnStart"].as_bool().unwrap_or(false);
        }
        if on {
            // Before the reply, as Chrome announces the children it attaches now.
            self.replay_children(tab, child.as_deref(), conn, cmd.session_id);
        }
        self.reply(conn, cmd, "{}");
    }

    /// `Log.startViolationsReport` reaches the tab; its `violation` entries then go to this
    /// session only (not to every session with Log enabled).
    pub(crate) fn start_violations(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        tab: TabId,
        child: Option<String>,
    ) {
        if let Some(session) = self
            .tabs
            .get_mut(&tab)
            .and_then(|s| s.target_mut(child.as_deref()))
            .and_then(|t| t.session_mut(conn, cmd.session_id))
        {
            session.violations = true;
        }
        self.forward(conn, cmd, tab, child);
    }

    /// The tab accepted this session's `Tracing.start`: the trace's events are for it (Chrome
    /// runs one trace at a time).
    pub(crate) fn trace_started(&mut self, tab: TabId, child: Option<&str>, conn: ConnId, session_id: &str) {
        if let Some(session) = self
            .tabs
            .get_mut(&tab)
            .and_then(|s| s.target_mut(child))
            .and_then(|t| t.session_mut(conn, session_id))
        {
            session.tracing = true;
        }
    }

    /// `Tracing.end` may only end this session's own trace, not another session's.
    pub(crate) fn end_tracing(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        tab: TabId,
        child: Option<String>,
    ) {
        let target =
            self.tabs.get(&tab).and_then(|s| s.target(child.as_deref())).expect("routed to a known target");
        let mine =
            target.sessions.iter().any(|s| s.conn == conn && s.session_id == cmd.session_id && s.tracing);
        if !mine && target.sessions.iter().any(|s| s.tracing) {
            return self.reply_error(
                conn,
                cmd,
                &crate::frames::errors::not_supported(
                    cmd.method,
                    "the running trace belongs to another session",
                ),
            );
        }
        self.forward(conn, cmd, tab, child);
    }

    /// `Log.stopViolationsReport` reaches the tab only when no other session still reports.
    pub(crate) fn stop_violations(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        tab: TabId,
        child: Option<String>,
    ) {
        let target = self.routed_target(tab, child.as_deref());
        if let Some(session) = target.session_mut(conn, cmd.session_id) {
            session.violations = false;
        }
        if target.sessions.iter().any(|s| s.violations) {
            return self.reply(conn, cmd, "{}");
        }
        self.forward(conn, cmd, tab, child);
    }

    /// A connection is gone: its sessions leave every target of the tab at once, so the tab is
    /// reset once when it was the last, or each target turns off what only it had on.
    pub(crate) fn conn_left_tab(&mut self, tab: TabId, conn: ConnId) {
        let Some(state) = self.tabs.get_mut(&tab) else { return };
        let mut left: Vec<(Option<String>, Vec<TargetSession>)> = Vec::new();
        let page = state.page.take_sessions_of(conn);
        if !page.is_empty() {
            left.push((None, page));
        }
        let mut children: Vec<&String> = state.children.keys().collect();
        children.sort();
        let children: Vec<String> = children.into_iter().cloned().collect();
        for child in children {
            let gone =
                state.children.get_mut(&child).map(|c| c.state.take_sessions_of(conn)).unwrap_or_default();
            if !gone.is_empty() {
                left.push((Some(child), gone));
            }
        }
        if left.is_empty() {
            return;
        }
        if !state.has_sessions() && !state.closing {
            return self.reset_tab(tab);
        }
        for (child, leavers) in left {
            self.sessions_left_target(tab, child.as_deref(), &leavers);
        }
    }

    /// Client sessions left a target of a tab that stays shared. The last one out of the tab
    /// resets its debugger session; otherwise what only the leavers had turned on is turned
    /// off, as Chrome does when a session closes.
    pub(crate) fn sessions_left_target(
        &mut self,
        tab: TabId,
        child: Option<&str>,
        leavers: &[TargetSession],
    ) {
        let Some(state) = self.tabs.get_mut(&tab) else { return };
        if state.closing {
            return;
        }
        if !state.has_sessions() {
            return self.reset_tab(tab);
        }
        self.fetch_sessions_left(tab, child, leavers);
        let Some(state) = self.tabs.get_mut(&tab) else { return };
        if let Some(child) = child.filter(|c| state.worker_is_unwatched(c)) {
            return self.let_go_of_child(tab, child);
        }
        let held = state.held_by_guard(child);
        let Some(target) = state.target_mut(child) else { return };
        let had = leavers.iter().fold(DomainSet::default(), |all, s| all.union(s.domains));
        let still_wanted = target.sessions.iter().fold(held, |all, s| all.union(s.domains));
        let orphaned: Vec<Domain> =
            had.iter().filter(|d| !still_wanted.contains(*d) && target.real_domains.contains(*d)).collect();
        for domain in &orphaned {
            target.real_domains.remove(*domain);
            if *domain == domains::RUNTIME {
                target.contexts.clear();
            }
        }
        let end_trace = leavers.iter().any(|s| s.tracing);
        let stop_violations =
            leavers.iter().any(|s| s.violations) && !target.sessions.iter().any(|s| s.violations);
        let child = child.map(str::to_owned);
        for domain in orphaned {
            self.send_housekeeping(tab, child.clone(), &format!("{}.disable", domain.name()));
        }
        if stop_violations {
            self.send_housekeeping(tab, child.clone(), "Log.stopViolationsReport");
        }
        if end_trace {
            // Left running, it would make every later Tracing.start fail.
            self.send_housekeeping(tab, child, "Tracing.end");
        }
    }
}

impl Core {
    /// No client session is left on an auto-attached child (its clients detached or went): the
    /// tab's debugger session detaches from it too, as a client's own session would in Chrome
    /// (`chrome.debugger` allows that for a child), so that a service worker whose last client
    /// left can end. The core forgets it (and what hung under it) now, so Chrome's
    /// `detachedFromTarget` for it then reaches no one (`lifecycle::child_known`).
    fn let_go_of_child(&mut self, tab: TabId, child: &str) {
        let Some(state) = self.tabs.get_mut(&tab) else { return };
        let Some(gone) = state.forget_child(child) else { return };
        let params = serde_json::json!({ "sessionId": child }).to_string();
        let params = serde_json::value::RawValue::from_string(params).expect("valid JSON");
        self.send_housekeeping_with(tab, gone.parent, "Target.detachFromTarget", params);
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::*;
    use crate::*;
    use serde_json::json;
    use tabtunnel_wire::CommandResult;

    /// Turns auto-attach on or off for a session: answered by the core (Chrome's is the gesture
    /// guard's, always on).
    fn auto_attach(h: &mut Harness, conn: ConnId, session: &str, id: i64, params: serde_json::Value) -> Step {
        let step = h.send(
            conn,
            json!({"id": id, "sessionId": session, "method": "Target.setAutoAttach", "params": params}),
        );
        assert!(step.commands().is_empty());
        step
    }

    /// Sends `method` on `session` and has the tab answer it at once.
    fn call(
        h: &mut Harness,
        conn: ConnId,
        session: &str,
        id: i64,
        method: &str,
        params: serde_json::Value,
    ) -> crate::testing::Step {
        let step = h.send(conn, json!({"id": id, "sessionId": session, "method": method, "params": params}));
        let sent = step.commands()[0].id;
        h.ext(FromExtension::CommandResult(CommandResult::ok(sent, raw("{}"))))
    }

    const IFRAME: &str = r#"{"sessionId":"C1","targetInfo":{"targetId":"F1","type":"iframe","url":"http://localhost/child.html"},"waitingForDebugger":false}"#;

    const WORKER: &str = r#"{"sessionId":"W1","targetInfo":{"targetId":"D1","type":"worker","url":"http://localhost/w.js"},"waitingForDebugger":false}"#;

    /// The gesture guard keeps `Page` on at the page and its frames (the click hook runs only
    /// then, and `Page.disable` would forget it): a client's disable, the last one's too, ends
    /// only its own Page events; so does its leaving. A worker has no Page of the guard's.
    #[test]
    fn page_stays_on_at_pages_and_frames_whatever_clients_disable() {
        let mut h = Harness::with_tabs(&[1]);
        h.connect(1);
        h.connect(2);
        let first = h.playwright_attach(1)[0].clone();
        auto_attach(&mut h, 1, &first, 1, json!({"autoAttach": true, "flatten": true}));
        h.ext(event(1, None, "Target.attachedToTarget", IFRAME));
        h.ext(event(1, None, "Target.attachedToTarget", WORKER));
        for target in [first.as_str(), "C1"] {
            call(&mut h, 1, target, 2, "Page.enable", json!({}));
            let step = h.send(1, json!({"id": 3, "sessionId": target, "method": "Page.disable"}));
            assert!(step.commands().is_empty(), "{target}: Page.disable reached the tab");
            assert_eq!(step.only_reply(1)["result"], json!({}));
            let child = (target == "C1").then_some("C1");
            let step = h.ext(event(1, child, "Page.frameNavigated", r#"{"frame":{"id":"F"}}"#));
            assert!(step.to(1).is_empty(), "{target}: Page events after the client's disable");
        }
        // A worker's Page.disable is Chrome's to answer (it has no Page domain).
        let step = h.send(1, json!({"id": 4, "sessionId": "W1", "method": "Page.disable"}));
        assert_eq!(step.commands()[0].child_session_id.as_deref(), Some("W1"));
        // Leaving with Page on turns nothing off either.
        let second = h.playwright_attach(2)[0].clone();
        call(&mut h, 2, &second, 1, "Page.enable", json!({}));
        h.core.client_disconnected(h.now, 2);
        let step = h.drain();
        assert!(
            !step.commands().iter().any(|c| c.method == "Page.disable"),
            "{:?}",
            step.commands().iter().map(|c| &c.method).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_late_joiner_learns_the_children_chrome_announced_earlier() {
        let mut h = Harness::with_tabs(&[1]);
        h.connect(1);
        h.connect(2);
        let first = h.playwright_attach(1)[0].clone();
        let auto = json!({"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": false});
        auto_attach(&mut h, 1, &first, 1, auto.clone());
        let step = h.ext(event(1, None, "Target.attachedToTarget", IFRAME));
        assert_eq!(step.methods(1), ["Target.attachedToTarget"]);
        assert!(step.to(2).is_empty());
        // The first client turns Runtime on in the child; Chrome reports its context once.
        call(&mut h, 1, "C1", 2, "Runtime.enable", json!({}));
        h.ext(event(1, Some("C1"), "Runtime.executionContextCreated", r#"{"context":{"id":7}}"#));

        let second = h.playwright_attach(2)[0].clone();
        let step = auto_attach(&mut h, 2, &second, 1, auto);
        assert_eq!(step.methods(2), ["Target.attachedToTarget", "reply#1"]);
        assert_eq!(step.to(2)[0]["sessionId"], second);
        assert_eq!(step.to(2)[0]["params"]["targetInfo"]["targetId"], "F1");
        // The child is a session of the second client now, with its own domain state.
        let step = h.send(2, json!({"id": 2, "sessionId": "C1", "method": "Runtime.enable"}));
        let cmd = step.commands()[0];
        assert_eq!(cmd.child_session_id.as_deref(), Some("C1"));
        let id = cmd.id;
        let step = h.ext(FromExtension::CommandResult(CommandResult::ok(id, raw("{}"))));
        assert_eq!(
            step.methods(2),
            ["Runtime.executionContextCreated", "reply#2"],
            "the child's live context is replayed, as for a page"
        );
        assert_eq!(step.to(2)[0]["params"]["context"]["id"], 7);
        let step = h.ext(event(1, Some("C1"), "Runtime.consoleAPICalled", "{}"));
        assert_eq!((step.to(1).len(), step.to(2).len()), (1, 1));
        // One leaving turns off nothing the other still wants in the child.
        let step = h.send(2, json!({"id": 3, "sessionId": "C1", "method": "Runtime.disable"}));
        assert_eq!(step.only_reply(2)["result"], json!({}));
        assert!(step.commands().is_empty());
        h.core.client_disconnected(h.now, 1);
        let step = h.drain();
        let methods: Vec<(&str, Option<&str>)> =
            step.commands().iter().map(|c| (c.method.as_str(), c.child_session_id.as_deref())).collect();
        assert_eq!(methods, [("Runtime.disable", Some("C1"))], "what only the leaver had on, in the child");
    }

    #[test]
    fn auto_attach_never_goes_off_in_chrome_and_children_go_to_who_wants_them() {
        let mut h = Harness::with_tabs(&[1]);
        h.connect(1);
        h.connect(2);
        let first = h.playwright_attach(1)[0].clone();
        let second = h.playwright_attach(2)[0].clone();
        let on = json!({"autoAttach": true, "flatten": true});
        let off = json!({"autoAttach": false, "flatten": true});
        auto_attach(&mut h, 1, &first, 1, on.clone());
        auto_attach(&mut h, 2, &second, 1, on);
        let step = auto_attach(&mut h, 2, &second, 2, off.clone());
        assert_eq!(step.only_reply(2)["result"], json!({}));
        let step = h.ext(event(1, None, "Target.attachedToTarget", IFRAME));
        assert_eq!((step.to(1).len(), step.to(2).len()), (1, 0));
        auto_attach(&mut h, 1, &first, 2, off);
        let step = h.ext(event(1, None, "Target.attachedToTarget", &IFRAME.replace("C1", "C2")));
        assert!(step.client.is_empty(), "nobody wants children now; Chrome still attaches them");
    }

    #[test]
    fn children_are_announced_only_to_sessions_that_auto_attach_and_go_with_a_reset() {
        let mut h = Harness::with_tabs(&[1]);
        h.connect(1);
        h.playwright_attach(1);
        let step = h.ext(event(1, None, "Target.attachedToTarget", IFRAME));
        assert!(step.client.is_empty(), "this session never asked for children");
        let step = h.send(1, json!({"id": 1, "sessionId": "C1", "method": "Runtime.evaluate"}));
        assert_eq!(step.only_reply(1)["error"]["code"], -32001);
        // The last client leaving resets the tab; Chrome's new debugger session announces its
        // children again, so none are replayed from before.
        h.core.client_disconnected(h.now, 1);
        h.drain();
        h.connect(2);
        let page2 = h.playwright_attach(2)[0].clone();
        let step = auto_attach(&mut h, 2, &page2, 1, json!({"autoAttach": true, "flatten": true}));
        assert_eq!(step.methods(2), ["reply#1"]);
    }

    #[test]
    fn a_detached_child_takes_its_own_children_along() {
        let mut h = Harness::with_tabs(&[1]);
        h.connect(1);
        let page = h.playwright_attach(1)[0].clone();
        auto_attach(&mut h, 1, &page, 1, json!({"autoAttach": true, "flatten": true}));
        h.ext(event(1, None, "Target.attachedToTarget", IFRAME));
        auto_attach(&mut h, 1, "C1", 2, json!({"autoAttach": true, "flatten": true}));
        let worker = r#"{"sessionId":"W1","targetInfo":{"targetId":"W","type":"worker","url":"http://x/w.js"},"waitingForDebugger":false}"#;
        let step = h.ext(event(1, Some("C1"), "Target.attachedToTarget", worker));
        assert_eq!(step.to(1)[0]["sessionId"], "C1");
        let step =
            h.ext(event(1, None, "Target.detachedFromTarget", r#"{"sessionId":"C1","targetId":"F1"}"#));
        assert_eq!(step.methods(1)[0], "Target.detachedFromTarget");
        for session in ["C1", "W1"] {
            let step = h.send(1, json!({"id": 3, "sessionId": session, "method": "Runtime.evaluate"}));
            assert_eq!(step.only_reply(1)["error"]["code"], -32001, "{session}");
        }
    }
}
