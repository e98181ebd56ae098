//! Tabs coming and going, sessions attaching and detaching, children Chrome attaches under a
//! tab, and the tabs' events fanning out to the sessions attached to them.

use crate::audit::Outcome;
use crate::cookies::Redaction;
use crate::domains::TargetSession;
use crate::frames::{self, errors};
use crate::session::{ConnId, Session, SessionKind, Topology};
use crate::tab_state::{ChildTarget, TabState};
use crate::targets::Tab;
use crate::{Core, Output};
use serde_json::json;
use tabtunnel_wire::{Hello, TabId, TabInfo, PROTOCOL_VERSION};

/// How long a popup past the tab limit may wait for its first document before it is closed.
const POPUP_CLOSE_GRACE_MS: u64 = 1000;

/// An event from a tab's debugger session, borrowed from the extension's frame: its params are
/// passed on as they came.
#[derive(Debug, Clone, Copy)]
pub struct TabEvent<'a> {
    pub tab_id: TabId,
    /// The child (frame, worker) it came from; `None` for the page itself.
    pub child_session_id: Option<&'a str>,
    pub method: &'a str,
    /// JSON.
    pub params: &'a str,
}

impl Core {
    /// The extension connected and said `Hello`. Its tab list is the truth: tabs it no longer
    /// lists are gone, new ones are announced. `Err` carries the reason to reject it with.
    pub fn extension_connected(&mut self, now: u64, hello: Hello) -> Result<(), String> {
        self.advance(now);
        Self::check_hello(&hello)?;
        self.extension_connected = true;
        self.extension_epoch += 1;
        self.browser = Some(hello.browser);
        self.set_kill_switch(now, hello.kill_switch);
        let listed: Vec<TabId> = hello.tabs.iter().map(|t| t.tab_id).collect();
        let gone: Vec<TabId> = self.tabs.keys().copied().filter(|id| !listed.contains(id)).collect();
        for tab in gone {
            self.tab_unshared(tab);
        }
        for info in hello.tabs {
            self.tab_shared(info);
        }
        // A new worker knows nothing of what the last one showed.
        self.agents.forget_sent();
        self.resend_handovers();
        self.resend_questions();
        self.resend_standing();
        self.send_navigation_rules();
        self.prepared.forget_sent();
        self.update_prepared_tabs();
        Ok(())
    }

    /// Whether this daemon can work with an extension that says `hello`.
    pub fn check_hello(hello: &Hello) -> Result<(), String> {
        if hello.protocol_version != PROTOCOL_VERSION {
            return Err(format!(
                "the extension speaks wire protocol {} but this daemon speaks {}; update the one that is older",
                hello.protocol_version, PROTOCOL_VERSION
            ));
        }
        Ok(())
    }

    /// The extension's socket closed: its tabs are gone for now and nothing pending will be
    /// answered, so every waiting command gets an error.
    pub fn extension_disconnected(&mut self, now: u64) {
        self.advance(now);
        self.extension_connected = false;
        for pending in self.pending.drain() {
            self.fail_pending(pending, &errors::extension_gone());
        }
        self.hand_out_turns();
        let tabs: Vec<TabId> = self.tabs.keys().copied().collect();
        for tab in tabs {
            self.tab_unshared(tab);
        }
    }

    pub(crate) fn tab_shared(&mut self, info: TabInfo) {
        if self.tabs.contains_key(&info.tab_id) {
            return self.tab_changed(info);
        }
        let tab_id = info.tab_id;
        if self.popup_not_allowed(&info) {
            return;
        }
        let tab = Tab::new(info);
        let (is_page, kind) = (tab.is_page(), tab.info.kind.cdp_type());
        if is_page {
            // The agent has something again; its grace period starts anew if it is not there.
            self.agents.entry(&tab.owner).released = false;
            self.agents.look_at(self.now_ms);
        }
        let policy = self.policy_for(&tab.owner);
        let mut state = TabState::new(tab);
        state.policy = policy;
        self.tabs.insert(tab_id, state);
        for conn in self.conns_seeing(tab_id) {
            let c = &self.conns[&conn];
            if c.discover && (is_page || c.discover_filter.allows(kind)) {
                self.announce_created(conn, tab_id);
            }
            let c = &self.conns[&conn];
            if let Some(topology) = c.auto_attach.filter(|_| is_page || c.auto_attach_filter.allows(kind)) {
                self.attach_at_root(conn, tab_id, topology);
            }
        }
        self.close_popup_past_limit(tab_id);
    }

    /// Popups count toward the agent's tab limit like the tabs it opens: one past it is closed
    /// (its clients saw it come, and see it go) once it has its first document. Closed before
    /// that, Chrome left the opener's next `window.open` hanging (measured: over 60 s).
    fn close_popup_past_limit(&mut self, tab_id: TabId) {
        let info = &self.tabs[&tab_id].tab.info;
        if !info.created || info.opener_target_id.is_none() {
            return;
        }
        let agent = self.tabs[&tab_id].tab.owner.clone();
        let limit = self.config.limits.max_tabs_per_agent;
        if self.visible_tabs(&agent).count() <= limit {
            return;
        }
        let rule = format!("--max-tabs-per-agent {limit}");
        let url = info.url.clone();
        self.audit(&agent, Some(tab_id), "popup", Some(&url), crate::Outcome::Denied { rule });
        let deadline = self.now_ms + POPUP_CLOSE_GRACE_MS;
        self.tabs.get_mut(&tab_id).expect("known").close_at_ms = Some(deadline);
        self.popups_due.arm(deadline);
        if !crate::origins::is_local_document(&url) {
            self.close_overdue_popup(tab_id);
        }
    }

    /// Closes a popup past the limit now (see [`Core::close_popup_past_limit`]).
    fn close_overdue_popup(&mut self, tab_id: TabId) {
        if self.tabs.get_mut(&tab_id).and_then(|s| s.close_at_ms.take()).is_some() {
            self.browser_op_housekeeping(tabtunnel_wire::BrowserOp::CloseTab { tab_id });
        }
    }

    /// Popups past the limit that never got a document of their own go at their deadline.
    pub(crate) fn close_overdue_popups(&mut self) {
        let now = self.now_ms;
        if !self.popups_due.is_due(now) {
            return;
        }
        let due: Vec<TabId> = self
            .tabs
            .iter()
            .filter(|(_, s)| s.close_at_ms.is_some_and(|at| at <= now))
            .map(|(id, _)| *id)
            .collect();
        for tab_id in due {
            self.close_overdue_popup(tab_id);
        }
        let next = self.tabs.values().filter_map(|s| s.close_at_ms).min();
        self.popups_due.set(next);
    }

    pub(crate) fn tab_changed(&mut self, info: TabInfo) {
        let Some(state) = self.tabs.get_mut(&info.tab_id) else { return };
        if state.tab.info == info {
            return;
        }
        let tab_id = info.tab_id;
        if state.tab.info.agent != info.agent {
            // Handed to another agent: the old one's clients lose it as if it closed, the new
            // one's find it as if it opened, and nothing the old ones enabled stays behind.
            let had_sessions = state.has_sessions();
            self.tab_unshared(tab_id);
            self.tab_shared(info);
            if had_sessions {
                self.reset_tab(tab_id);
            }
            return;
        }
        let before = state.tab.page_target_info();
        let has_document = !crate::origins::is_local_document(&info.url);
        state.tab.set_info(info);
        if has_document && state.close_at_ms.is_some() {
            self.close_overdue_popup(tab_id);
        }
        let Some(state) = self.tabs.get_mut(&tab_id) else { return };
        let page = state.tab.page_target_info();
        // Only what a client can see changes anything for it (not the window, say); and only
        // the page's info: Chrome never reports a `tab` target's navigations, and puppeteer
        // would take such an event for a target of its own changing (a `targetchanged` for a
        // tab, or `waitForTarget` finding the tab instead of its page).
        if page == before {
            return;
        }
        for conn in self.conns_seeing(tab_id) {
            let attached = self.conns[&conn].sessions.values().any(|s| s.kind.tab() == Some(tab_id));
            if self.conns[&conn].discover || attached {
                self.emit(conn, "", "Target.targetInfoChanged", &json!({ "targetInfo": page }));
            }
        }
    }

    /// The tab closed or is no longer shared: every session on it detaches, then its targets
    /// are destroyed, in Chrome's order.
    pub(crate) fn tab_unshared(&mut self, tab_id: TabId) {
        let Some(state) = self.tabs.get_mut(&tab_id) else { return };
        state.closing = true;
        // Its agent, if gone, may have nothing left now.
        self.agents.look_at(self.now_ms);
        let mut conns: Vec<ConnId> = self.conns.keys().copied().collect();
        conns.sort_unstable();
        for conn in conns {
            // The topmost sessions on this tab: their parent is the root or a browser session.
            let sessions = &self.conns[&conn].sessions;
            let on_tab = |s: &Session| s.kind.tab() == Some(tab_id);
            let mut roots: Vec<String> = sessions
                .iter()
                .filter(|(id, s)| !id.is_empty() && on_tab(s) && !sessions.get(&s.parent).is_some_and(on_tab))
                .map(|(id, _)| id.clone())
                .collect();
            roots.sort();
            for session in roots {
                self.detach_session(conn, &session);
            }
            let c = &self.conns[&conn];
            let tab = &self.tabs[&tab_id].tab;
            let announced = tab.is_page() || c.discover_filter.allows(tab.info.kind.cdp_type());
            if c.discover && announced && tab.visible_to(&c.agent) {
                let (page, tab_target) = (tab.page_target_id().to_owned(), tab.tab_target_id());
                let is_page = tab.is_page();
                self.emit(conn, "", "Target.targetDestroyed", &json!({ "targetId": page }));
                if is_page {
                    self.emit(conn, "", "Target.targetDestroyed", &json!({ "targetId": tab_target }));
                }
            }
        }
        self.close_page_sockets(tab_id);
        self.tabs.remove(&tab_id);
        self.gestures_forget_tab(tab_id);
    }

    /// A page socket is its tab: when the tab goes, Chrome says `Inspector.detached` and
    /// closes the socket.
    fn close_page_sockets(&mut self, tab_id: TabId) {
        let root_is_tab = |c: &crate::session::Connection| {
            c.sessions.get("").is_some_and(|s| s.kind == SessionKind::Page { tab: tab_id })
        };
        let mut sockets: Vec<ConnId> =
            self.conns.iter().filter(|(_, c)| root_is_tab(c)).map(|(id, _)| *id).collect();
        sockets.sort_unstable();
        for conn in sockets {
            // Forget it the normal way: it may hold extra sessions on other tabs.
            self.client_disconnected(self.now_ms, conn);
            self.close_page_socket(conn);
        }
    }

    pub(crate) fn close_page_socket(&mut self, conn: ConnId) {
        self.emit(conn, "", "Inspector.detached", &json!({ "reason": "target_closed" }));
        self.out.push_back(Output::CloseClient { conn });
    }

    /// `targetCreated` for a tab's two targets (a worker's one).
    pub(crate) fn announce_created(&mut self, conn: ConnId, tab_id: TabId) {
        let tab = &self.tabs[&tab_id].tab;
        let (tab_info, page) = (tab.is_page().then(|| tab.tab_target_info()), tab.page_target_info());
        if let Some(tab_info) = tab_info {
            self.emit(conn, "", "Target.targetCreated", &json!({ "targetInfo": tab_info }));
        }
        self.emit(conn, "", "Target.targetCreated", &json!({ "targetInfo": page }));
    }

    /// Attaches a tab at the connection's root in the topology it asked for; a worker is
    /// attached at the root in either.
    pub(crate) fn attach_at_root(&mut self, conn: ConnId, tab_id: TabId, topology: Topology) {
        let is_page = self.tabs[&tab_id].tab.is_page();
        match topology {
            _ if !is_page => {
                self.attach_page(conn, tab_id, "");
            }
            Topology::PagesAtRoot => {
                self.attach_page(conn, tab_id, "");
            }
            Topology::TabsThenPages => {
                let id = self.mint_session_id();
                let kind = SessionKind::Tab { tab: tab_id, auto_attach: false };
                self.insert_session(conn, id.clone(), Session { kind, parent: String::new() });
                let info = self.tabs[&tab_id].tab.tab_target_info();
                self.emit_attached(conn, "", &id, info);
            }
        }
    }

    /// Attaches the tab's page as a new session whose events arrive on `parent`.
    pub(crate) fn attach_page(&mut self, conn: ConnId, tab_id: TabId, parent: &str) -> String {
        let id = self.mint_session_id();
        let kind = SessionKind::Page { tab: tab_id };
        self.insert_session(conn, id.clone(), Session { kind, parent: parent.to_owned() });
        let state = self.tabs.get_mut(&tab_id).expect("attach to a known tab");
        state.page.sessions.push(TargetSession::new(conn, id.clone()));
        let info = state.tab.page_target_info();
        self.emit_attached(conn, parent, &id, info);
        id
    }

    fn emit_attached(
        &mut self,
        conn: ConnId,
        parent: &str,
        session_id: &str,
        target_info: serde_json::Value,
    ) {
        let params =
            json!({ "sessionId": session_id, "targetInfo": target_info, "waitingForDebugger": false });
        self.emit(conn, parent, "Target.attachedToTarget", &params);
    }

    /// Detaches a session and, first, everything attached under it; each detach is announced on
    /// its parent with `detachedFromTarget {sessionId, targetId}`.
    pub(crate) fn detach_session(&mut self, conn: ConnId, session_id: &str) {
        let Some(connection) = self.conns.get(&conn) else { return };
        let mut children: Vec<String> = connection.children_of(session_id).map(str::to_owned).collect();
        children.sort();
        for child in children {
            self.detach_session(conn, &child);
        }
        let Some(session) = self.conns.get_mut(&conn).and_then(|c| c.sessions.remove(session_id)) else {
            return;
        };
        let mut target_id = self.session_target_id(&session);
        if let Some(tab) = session.kind.tab() {
            let child = matches!(session.kind, SessionKind::Child { .. }).then_some(session_id);
            if let Some(state) = self.tabs.get_mut(&tab) {
                if let Some(c) = child.and_then(|id| state.children.get(id)) {
                    target_id = c.target_id.clone();
                }
                let target = match session.kind {
                    SessionKind::Page { .. } | SessionKind::Child { .. } => state.target_mut(child),
                    _ => None,
                };
                if let Some(target) = target {
                    if let Some(i) =
                        target.sessions.iter().position(|s| s.conn == conn && s.session_id == session_id)
                    {
                        let leaver = target.sessions.remove(i);
                        self.sessions_left_target(tab, child, &[leaver]);
                    }
                }
            }
        }
        let mut params = json!({ "sessionId": session_id });
        if let Some(target_id) = target_id {
            params["targetId"] = json!(target_id);
        }
        self.emit(conn, &session.parent, "Target.detachedFromTarget", &params);
    }

    /// An event from a tab's debugger session (or one of its children), delivered to every
    /// session attached to that target that wants it. The only events parsed are the rare child
    /// attach/detach ones, which add and remove child targets, and the execution-context ones
    /// while the target's Runtime is on.
    pub fn extension_event(&mut self, now: u64, event: TabEvent) {
        self.advance(now);
        if self.beforeunload_while_closing(&event) {
            return;
        }
        // An agent kept from cookies never sees one (nor one held to some origins the others'),
        // whichever event would carry it.
        let redacted;
        let event = match self.cookies_hidden_from(&event) {
            Redaction::Unchanged => event,
            Redaction::Hidden(text) => {
                redacted = text;
                TabEvent { params: &redacted, ..event }
            }
            Redaction::Unreadable => return self.withhold_unreadable(&event),
        };
        if self.other_sites_storage(&event) {
            return;
        }
        if matches!(event.method, "Fetch.requestPaused" | "Fetch.authRequired")
            && self.tabs.contains_key(&event.tab_id)
        {
            self.request_paused(event.tab_id, event.child_session_id, event.method, event.params);
            return;
        }
        if event.method == "Target.attachedToTarget" {
            self.child_may_run(event.tab_id, event.child_session_id, event.params);
            if self.child_not_allowed(&event) {
                return;
            }
        }
        if event.method == "Target.detachedFromTarget" && !self.child_known(&event) {
            // One the agent never heard of (see `child_not_allowed`).
            return;
        }
        if let Some(target) =
            self.tabs.get_mut(&event.tab_id).and_then(|s| s.target_mut(event.child_session_id))
        {
            if target.real_domains.contains(crate::RUNTIME) {
                target.contexts.observe(event.method, event.params);
            }
        }
        self.deliver(&event);
        match event.method {
            "Target.attachedToTarget" => self.child_attached(&event),
            "Target.detachedFromTarget" => self.child_detached(&event),
            _ => {}
        }
    }

    /// The hot path: one frame per session that wants the event, no other allocation.
    fn deliver(&mut self, event: &TabEvent) {
        let Core { tabs, out, .. } = self;
        let Some(target) = tabs.get_mut(&event.tab_id).and_then(|s| s.target_mut(event.child_session_id))
        else {
            return;
        };
        let TabEvent { method, params, .. } = *event;
        for session in target.sessions.iter_mut().filter(|s| s.wants(method, params)) {
            let frame = frames::event(method, params, &session.session_id);
            out.push_back(Output::ToClient { conn: session.conn, frame: frame.into() });
            if method == "Tracing.tracingComplete" {
                session.tracing = false;
            }
        }
    }

    /// Chrome attached a child under the page (or under a child): it becomes a target of its
    /// own, and a session of every connection whose session on the parent auto-attaches. Ids
    /// Chrome would never send (empty, the parent's own, one already known) are ignored, so a
    /// misbehaving extension cannot make a session its own ancestor.
    fn child_attached(&mut self, event: &TabEvent) {
        let Some(ChildAttach { session_id: child, target_id, .. }) = child_session_in(event.params) else {
            return;
        };
        let tab_id = event.tab_id;
        let parent = event.child_session_id.map(str::to_owned);
        let Some(state) = self.tabs.get_mut(&tab_id) else { return };
        if child.is_empty()
            || parent.as_deref() == Some(child.as_str())
            || state.children.contains_key(&child)
        {
            return;
        }

        let Some(parent_target) = state.target(parent.as_deref()) else { return };
        let listeners: Vec<(ConnId, String)> = parent_target
            .sessions
            .iter()
            .filter(|s| s.auto_attach)
            .map(|s| (s.conn, s.session_id.clone()))
            .collect();
        let announcement = event.params.to_owned();
        state.children.insert(
            child.clone(),
            ChildTarget { target_id, parent, announcement, state: Default::default() },
        );
        for (conn, parent_session) in listeners {
            self.add_child_session(tab_id, &child, conn, parent_session);
        }
    }

    /// The event's params with the cookies its tab's agent may not see hidden, if any.
    fn cookies_hidden_from(&self, event: &TabEvent) -> Redaction {
        use crate::cookies::{may_carry, redact, Hidden};
        let policy = self.tabs.get(&event.tab_id).and_then(|t| t.policy.as_deref());
        let Some(hidden) = policy.and_then(Hidden::by) else { return Redaction::Unchanged };
        match may_carry(event.method, event.params) {
            true => redact(event.params, hidden),
            false => Redaction::Unchanged,
        }
    }

    /// An event of another site's storage, or of the browser's service workers and background
    /// services, which the tab's agent held to some origins may not hear (`site_storage`).
    fn other_sites_storage(&self, event: &TabEvent) -> bool {
        let storage = ["Storage.", "ServiceWorker.", "BackgroundService."];
        if !storage.iter().any(|domain| event.method.starts_with(domain)) {
            return false;
        }
        let policy = self.tabs.get(&event.tab_id).and_then(|t| t.policy.as_deref());
        policy.is_some_and(|policy| crate::site_storage::event_withheld(policy, event.method, event.params))
    }

    /// An event that may hold cookies its agent may not see, and that cannot be read to hide
    /// them, reaches none of its clients: it is recorded in the audit trail instead.
    fn withhold_unreadable(&mut self, event: &TabEvent) {
        let Some(owner) = self.tabs.get(&event.tab_id).map(|t| t.tab.owner.clone()) else { return };
        let rule = "its policy's cookie rule: the event could not be read to hide its cookies".to_owned();
        self.audit(&owner, Some(event.tab_id), event.method, None, Outcome::Denied { rule });
    }

    /// A frame of an origin the agent may not load never becomes one of its targets, nor is
    /// announced (the browser's rules keep such frames from loading; this holds for any that
    /// got through). Chrome keeps it attached to the tab's debugger, unheard of.
    fn child_not_allowed(&mut self, event: &TabEvent) -> bool {
        let Some(state) = self.tabs.get(&event.tab_id) else { return false };
        let Some(ChildAttach { kind: Some(kind), url: Some(url), .. }) = child_session_in(event.params)
        else {
            return false;
        };
        // Whatever the policy, no agent reaches into a frame (or any child) of an extension's
        // or the browser's own; the policy's frame rules hold frames to its origins.
        let refused = match &state.policy {
            // (A frame that failed to load shows Chrome's error page, which is not one of these.)
            _ if !url.is_empty()
                && !url.starts_with("chrome-error:")
                && !tabtunnel_wire::destinations::is_allowed(&url) =>
            {
                Some(tabtunnel_wire::destinations::RULE.to_owned())
            }
            Some(policy) if kind == "iframe" => match policy.frame(&url) {
                crate::policy::Decision::Deny(rule) => Some(rule),
                _ => None,
            },
            _ => None,
        };
        let Some(rule) = refused else { return false };
        let agent = state.tab.owner.clone();
        self.audit(&agent, Some(event.tab_id), "frame", Some(&url), crate::Outcome::Denied { rule });
        true
    }

    fn child_known(&self, event: &TabEvent) -> bool {
        let Some(ChildAttach { session_id, .. }) = child_session_in(event.params) else { return true };
        self.tabs.get(&event.tab_id).is_none_or(|s| s.children.contains_key(&session_id))
    }

    /// Makes `child` a session of `conn` under `parent_session`, unless the connection already
    /// has a session by that id.
    fn add_child_session(
        &mut self,
        tab_id: TabId,
        child: &str,
        conn: ConnId,
        parent_session: String,
    ) -> bool {
        let Some(connection) = self.conns.get_mut(&conn) else { return false };
        if connection.sessions.contains_key(child) {
            return false;
        }
        let session = Session { kind: SessionKind::Child { tab: tab_id }, parent: parent_session };
        connection.sessions.insert(child.to_owned(), session);
        if let Some(target) = self.tabs.get_mut(&tab_id).and_then(|s| s.target_mut(Some(child))) {
            target.sessions.push(TargetSession::new(conn, child.to_owned()));
        }
        true
    }

    /// A session turned auto-attach on a target other sessions already had it on: Chrome will
    /// not announce the children it attached earlier again, so announce them to this session,
    /// before its reply as Chrome would.
    pub(crate) fn replay_children(
        &mut self,
        tab_id: TabId,
        parent: Option<&str>,
        conn: ConnId,
        session_id: &str,
    ) {
        let Some(state) = self.tabs.get(&tab_id) else { return };
        let mut known: Vec<(String, String)> = state
            .children
            .iter()
            .filter(|(_, c)| c.parent.as_deref() == parent)
            .map(|(id, c)| (id.clone(), c.announcement.clone()))
            .collect();
        known.sort_by(|a, b| a.0.cmp(&b.0));
        for (child, announcement) in known {
            if self.add_child_session(tab_id, &child, conn, session_id.to_owned()) {
                let frame = frames::event("Target.attachedToTarget", &announcement, session_id);
                self.send(conn, frame);
            }
        }
    }

    /// Chrome detached a child: it and what hung under it are gone for every connection.
    fn child_detached(&mut self, event: &TabEvent) {
        let Some(ChildAttach { session_id: child, .. }) = child_session_in(event.params) else { return };
        let Some(state) = self.tabs.get_mut(&event.tab_id) else { return };
        let Some(gone) = state.children.remove(&child) else { return };
        // Its own children go with it (Chrome may not report each).
        let orphans: Vec<String> = state
            .children
            .iter()
            .filter(|(_, c)| c.parent.as_deref() == Some(child.as_str()))
            .map(|(id, _)| id.clone())
            .collect();
        for orphan in orphans {
            state.children.remove(&orphan);
        }
        for session in gone.state.sessions {
            let conn = session.conn;
            let Some(connection) = self.conns.get(&conn) else { continue };
            let mut below: Vec<String> = connection.children_of(&child).map(str::to_owned).collect();
            below.sort();
            for orphan in below {
                self.detach_session(conn, &orphan);
            }
            if let Some(c) = self.conns.get_mut(&conn) {
                c.sessions.remove(&child);
            }
        }
    }

    /// Connections whose agent may see the tab.
    pub(crate) fn conns_seeing(&self, tab_id: TabId) -> Vec<ConnId> {
        let Some(state) = self.tabs.get(&tab_id) else { return Vec::new() };
        let mut conns: Vec<ConnId> =
            self.conns.iter().filter(|(_, c)| state.tab.visible_to(&c.agent)).map(|(id, _)| *id).collect();
        conns.sort_unstable();
        conns
    }
}

/// What a child attach/detach event says of the child.
struct ChildAttach {
    session_id: String,
    /// `targetInfo.targetId`, or `targetId`.
    target_id: Option<String>,
    /// `targetInfo.type` (`iframe`, `worker`...) and `url`.
    kind: Option<String>,
    url: Option<String>,
}

fn child_session_in(params: &str) -> Option<ChildAttach> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Params {
        session_id: String,
        target_info: Option<TargetInfo>,
        target_id: Option<String>,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct TargetInfo {
        target_id: String,
        #[serde(rename = "type")]
        kind: Option<String>,
        url: Option<String>,
    }
    let p = serde_json::from_str::<Params>(params).ok()?;
    let (target_id, kind, url) = match p.target_info {
        Some(t) => (Some(t.target_id), t.kind, t.url),
        None => (p.target_id, None, None),
    };
    Some(ChildAttach { session_id: p.session_id, target_id, kind, url })
}
