//! Client sessions sharing one tab's debugger session: counting domain enables and
//! disables, replaying execution contexts, and cleaning up after a session that leaves.
//! See `domains.rs` for why.

use crate::domains::{self, Domain, DomainSet, PageSession};
use crate::frames::{self, ClientCommand};
use crate::session::ConnId;
use crate::{ContextReplay, Core, OnSuccess, Output};
use tabtunnel_wire::TabId;

impl Core {
    /// `X.enable` always reaches the tab (its params may matter), and marks the session as
    /// wanting `X`'s events.
    pub(crate) fn enable_domain(&mut self, conn: ConnId, cmd: &ClientCommand, tab: TabId, domain: Domain) {
        let state = self.tabs.get_mut(&tab).expect("a page session's tab is known");
        let Some(session) = state.page_session_mut(conn, cmd.session_id) else {
            return self.forward(conn, cmd, tab, None);
        };
        let first_in_session = !session.domains.contains(domain);
        session.domains.insert(domain);
        let replay = if domain != domains::RUNTIME {
            None
        } else if !state.real_domains.contains(domain) {
            // Chrome reports the contexts to this first enable itself; track them from now on.
            state.contexts.clear();
            None
        } else {
            // Contexts created from now on reach this session live; only those that exist
            // already need replaying, if they still do when the reply comes.
            first_in_session.then(|| ContextReplay { tab, context_ids: state.contexts.ids().collect() })
        };
        state.real_domains.insert(domain);
        self.forward_then(conn, cmd, tab, None, replay.map(OnSuccess::ReplayContexts));
    }

    /// `X.disable` reaches the tab only when no other session still wants `X`.
    pub(crate) fn disable_domain(&mut self, conn: ConnId, cmd: &ClientCommand, tab: TabId, domain: Domain) {
        let state = self.tabs.get_mut(&tab).expect("a page session's tab is known");
        if let Some(session) = state.page_session_mut(conn, cmd.session_id) {
            session.domains.remove(domain);
        }
        if state.page_sessions.iter().any(|p| p.domains.contains(domain)) {
            return self.reply(conn, cmd, "{}");
        }
        state.real_domains.remove(domain);
        if domain == domains::RUNTIME {
            state.contexts.clear();
        }
        self.forward(conn, cmd, tab, None);
    }

    pub(crate) fn replay_contexts(&mut self, replay: &ContextReplay, conn: ConnId, session_id: &str) {
        let Core { tabs, out, .. } = self;
        let Some(state) = tabs.get(&replay.tab) else { return };
        for params in state.contexts.announcements_of(&replay.context_ids) {
            let frame = frames::event("Runtime.executionContextCreated", params.get(), session_id);
            out.push_back(Output::ToClient { conn, frame });
        }
    }

    /// `Log.startViolationsReport` reaches the tab; its `violation` entries then go to this
    /// session only (not to every session with Log enabled).
    pub(crate) fn start_violations(&mut self, conn: ConnId, cmd: &ClientCommand, tab: TabId) {
        if let Some(session) = self.tabs.get_mut(&tab).and_then(|s| s.page_session_mut(conn, cmd.session_id))
        {
            session.violations = true;
        }
        self.forward(conn, cmd, tab, None);
    }

    /// The tab accepted this session's `Tracing.start`: the trace's events are for it (Chrome
    /// runs one trace at a time).
    pub(crate) fn trace_started(&mut self, tab: TabId, conn: ConnId, session_id: &str) {
        if let Some(session) = self.tabs.get_mut(&tab).and_then(|s| s.page_session_mut(conn, session_id)) {
            session.tracing = true;
        }
    }

    /// `Tracing.end` may only end this session's own trace, not another session's.
    pub(crate) fn end_tracing(&mut self, conn: ConnId, cmd: &ClientCommand, tab: TabId) {
        let state = self.tabs.get(&tab).expect("a page session's tab is known");
        let mine =
            state.page_sessions.iter().any(|p| p.conn == conn && p.session_id == cmd.session_id && p.tracing);
        if !mine && state.page_sessions.iter().any(|p| p.tracing) {
            return self.reply_error(
                conn,
                cmd,
                &crate::frames::errors::not_supported(
                    cmd.method,
                    "the running trace belongs to another session",
                ),
            );
        }
        self.forward(conn, cmd, tab, None);
    }

    /// `Log.stopViolationsReport` reaches the tab only when no other session still reports.
    pub(crate) fn stop_violations(&mut self, conn: ConnId, cmd: &ClientCommand, tab: TabId) {
        let state = self.tabs.get_mut(&tab).expect("a page session's tab is known");
        if let Some(session) = state.page_session_mut(conn, cmd.session_id) {
            session.violations = false;
        }
        if state.page_sessions.iter().any(|p| p.violations) {
            return self.reply(conn, cmd, "{}");
        }
        self.forward(conn, cmd, tab, None);
    }

    /// Client sessions left a tab that stays shared. The last one out resets the tab's
    /// debugger session; otherwise what only the leavers had turned on is turned off, as
    /// Chrome does when a session closes.
    pub(crate) fn sessions_left_tab(&mut self, tab: TabId, leavers: &[PageSession]) {
        let Some(state) = self.tabs.get_mut(&tab) else { return };
        if state.closing {
            return;
        }
        if state.page_sessions.is_empty() {
            return self.reset_tab(tab);
        }
        let had = leavers.iter().fold(DomainSet::default(), |all, p| all.union(p.domains));
        let still_wanted =
            state.page_sessions.iter().fold(DomainSet::default(), |all, p| all.union(p.domains));
        let orphaned: Vec<Domain> =
            had.iter().filter(|d| !still_wanted.contains(*d) && state.real_domains.contains(*d)).collect();
        for domain in &orphaned {
            state.real_domains.remove(*domain);
            if *domain == domains::RUNTIME {
                state.contexts.clear();
            }
        }
        let end_trace = leavers.iter().any(|p| p.tracing);
        let stop_violations =
            leavers.iter().any(|p| p.violations) && !state.page_sessions.iter().any(|p| p.violations);
        for domain in orphaned {
            self.send_housekeeping(tab, &format!("{}.disable", domain.name()));
        }
        if stop_violations {
            self.send_housekeeping(tab, "Log.stopViolationsReport");
        }
        if end_trace {
            // Left running, it would make every later Tracing.start fail.
            self.send_housekeeping(tab, "Tracing.end");
        }
    }
}
