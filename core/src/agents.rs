//! Agents: who a connection acts for, and what each agent holds.
//!
//! Every connection names its agent in its endpoint URL (`/agent/<name>`; the plain endpoint
//! is [`DEFAULT_AGENT`]). An agent sees only its own tabs. This module keeps, per agent, what
//! the emulation needs beyond its tabs: how many connections it has (its presence), what it did
//! last (for the side panel), since when it has been gone (its grace period), and the limits.
//! Time comes with every input; grace periods end at [`crate::Core::handle_timeout`].

use crate::deadline::Deadline;
use crate::{AgentId, Core, Output};
use std::collections::BTreeMap;
use tabtunnel_wire::{AgentStatus, BrowserOp, TabsFate, ToExtension};

pub use tabtunnel_wire::{is_valid_agent_name, DEFAULT_AGENT};

/// What the daemon allows, and how long it waits.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Agents at once (with a connection or tabs); connections of one more are refused.
    pub max_agents: usize,
    /// Tabs one agent may hold; `Target.createTarget` past it is refused.
    pub max_tabs_per_agent: usize,
    /// How long an agent's tabs wait for it after its last connection drops.
    pub agent_grace_ms: u64,
    /// How long a command may wait for its tab before it is answered with an error.
    pub command_timeout_ms: u64,
    /// How long a command handed to the extension counts as waiting in line for it
    /// (`fair_share.rs`): past it, it waits for something else (a promise, a navigation) and no
    /// longer holds back others' commands.
    pub in_line_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_agents: 32,
            max_tabs_per_agent: 32,
            agent_grace_ms: 60_000,
            command_timeout_ms: 120_000,
            in_line_ms: crate::fair_share::LONG_MS,
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct AgentRecord {
    /// Open connections that count as the agent being there (not one-shot HTTP requests):
    /// its CDP clients' and its MCP sessions'.
    pub connections: u32,
    /// Its MCP sessions among them: it is expected, whether or not a client of it connected.
    pub sessions: u32,
    /// `Target.createTarget`s waiting for their tab; they count against the tab limit.
    pub creating: u32,
    /// It opened a page since its first connection (a tab is prepared for its next then, see
    /// `prepared.rs`).
    pub opened_pages: bool,
    /// It had a connection (not only one-shot HTTP requests): during its grace period its
    /// window and prepared tab wait for it (`prepared.rs`).
    pub was_present: bool,
    /// The last method one of its clients sent (the buffer is reused, no allocation per
    /// command), and when.
    pub last_method: String,
    pub last_at_ms: Option<u64>,
    /// Since when it has had no connection; `None` while it has one.
    pub idle_since_ms: Option<u64>,
    /// Its tabs were let go after its grace period; nothing more to do until it comes back.
    pub released: bool,
    /// Its last audited steps, for the side panel.
    pub recent: crate::audit::Recent,
    /// Its steps in words, folding.
    pub steps: crate::steps::Steps,
    /// Its latest client's token id and name.
    pub identity: crate::audit::Identity,
}

#[derive(Debug, Default)]
pub(crate) struct Agents {
    records: BTreeMap<AgentId, AgentRecord>,
    /// The MCP client each agent came through, as `tabtunnel mcp` told (it may tell before the
    /// agent's first connection; one entry per agent name, replaced).
    mcp_clients: BTreeMap<AgentId, String>,
    /// Agents the human registered (each has a credential of its own): like the default agent,
    /// they never count toward `max_agents`, so names made up with the owner token cannot lock
    /// them out.
    registered: std::collections::BTreeSet<String>,
    /// What the side panel was last told, to send only changes.
    last_sent: Option<Vec<AgentStatus>>,
    /// When an agent's grace period may end, or an agent may have nothing left.
    grace_due: Deadline,
    /// When the side panel is next told what changed, and when it last was.
    report_due: Deadline,
    reported_at_ms: Option<u64>,
}

/// The side panel hears about agents at most this often: reporting compares every agent's
/// status, too much for every frame of a busy client.
pub(crate) const REPORT_EVERY_MS: u64 = 250;

impl Agents {
    pub fn mcp_client(&mut self, agent: &AgentId, client: String) {
        self.mcp_clients.insert(agent.clone(), client);
    }

    /// Who the agent is: its token's id, and its MCP client if one was told, else the User-Agent
    /// of its latest connection.
    pub fn identity(&self, agent: &AgentId) -> crate::audit::Identity {
        let mut identity = self.get(agent).map(|a| a.identity.clone()).unwrap_or_default();
        if let Some(client) = self.mcp_clients.get(agent) {
            identity.client = Some(client.clone());
        }
        identity
    }

    pub fn get(&self, agent: &AgentId) -> Option<&AgentRecord> {
        self.records.get(agent)
    }

    pub fn get_mut(&mut self, agent: &AgentId) -> Option<&mut AgentRecord> {
        self.records.get_mut(agent)
    }

    pub fn entry(&mut self, agent: &AgentId) -> &mut AgentRecord {
        self.records.entry(agent.clone()).or_default()
    }

    pub fn contains(&self, agent: &AgentId) -> bool {
        self.records.contains_key(agent)
    }

    /// Whether `agent` counts toward `max_agents`: not the default agent, not a registered one.
    pub fn counted(&self, agent: &AgentId) -> bool {
        agent.as_str() != DEFAULT_AGENT && !self.registered.contains(agent.as_str())
    }

    /// How many agents known now count toward `max_agents`.
    pub fn counted_len(&self) -> usize {
        self.records.keys().filter(|a| self.counted(a)).count()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&AgentId, &AgentRecord)> {
        self.records.iter()
    }

    pub fn names(&self) -> Vec<AgentId> {
        self.records.keys().cloned().collect()
    }

    pub fn remove(&mut self, agent: &AgentId) {
        self.records.remove(agent);
    }

    /// A connection of `agent` opened (`session`: an MCP session's, not a CDP client's).
    pub fn connected(&mut self, agent: &AgentId, session: bool) {
        let record = self.entry(agent);
        record.connections += 1;
        record.sessions += u32::from(session);
        record.idle_since_ms = None;
        record.released = false;
        record.was_present = true;
    }

    /// A connection of `agent` closed; the grace period starts with its last one.
    pub fn disconnected(&mut self, agent: &AgentId, now_ms: u64, session: bool) {
        if let Some(record) = self.records.get_mut(agent) {
            record.connections = record.connections.saturating_sub(1);
            record.sessions = record.sessions.saturating_sub(u32::from(session));
            if record.connections == 0 {
                record.idle_since_ms = Some(now_ms);
                record.opened_pages = false;
            }
        }
    }

    /// Records what a client of `agent` just did.
    pub fn acted(&mut self, agent: &AgentId, method: &str, now_ms: u64) {
        if let Some(record) = self.records.get_mut(agent) {
            record.last_method.clear();
            record.last_method.push_str(method);
            record.last_at_ms = Some(now_ms);
        }
    }

    /// The statuses if they differ from what was sent last (and remembers them as sent).
    pub fn changed_statuses(&mut self, statuses: Vec<AgentStatus>) -> Option<Vec<AgentStatus>> {
        if self.last_sent.as_ref() == Some(&statuses) {
            return None;
        }
        self.last_sent = Some(statuses.clone());
        Some(statuses)
    }

    /// The side panel must be told everything again (a new extension connection).
    pub fn forget_sent(&mut self) {
        self.last_sent = None;
    }

    /// Something may have changed at `now`: the side panel hears of it now, or
    /// [`REPORT_EVERY_MS`] after it last did.
    pub fn report_soon(&mut self, now: u64) {
        if self.report_due.get().is_none() {
            self.report_due.arm(self.reported_at_ms.map_or(now, |at| now.max(at + REPORT_EVERY_MS)));
        }
    }

    pub fn report_due(&self) -> Option<u64> {
        self.report_due.get()
    }

    /// Whether the report is due at `now` (it is then no longer).
    pub fn take_report_due(&mut self, now: u64) -> bool {
        if !self.report_due.is_due(now) {
            return false;
        }
        self.report_due.set(None);
        self.reported_at_ms = Some(now);
        true
    }

    /// Agents without a connection are looked at again at `at`
    /// ([`Core::release_idle_agents`]).
    pub fn look_at(&mut self, at: u64) {
        self.grace_due.arm(at);
    }

    pub fn grace_due(&self) -> Option<u64> {
        self.grace_due.get()
    }
}

/// When an agent's grace period ends, if it is running.
pub(crate) fn grace_ends_at(record: &AgentRecord, limits: &Limits) -> Option<u64> {
    let since = record.idle_since_ms?;
    (record.connections == 0 && !record.released).then(|| since.saturating_add(limits.agent_grace_ms))
}

impl Core {
    /// The agents the human registered, each with its own credential (the daemon's
    /// `agents.json`); they are always let in, whatever `max_agents` says.
    pub fn set_registered_agents(&mut self, now: u64, names: impl IntoIterator<Item = String>) {
        self.advance(now);
        self.agents.registered = names.into_iter().collect();
    }

    /// `agent`'s last connection closed: its grace period runs from now.
    pub(crate) fn grace_started(&mut self, agent: &AgentId) {
        if let Some(at) = self.agents.get(agent).and_then(|r| grace_ends_at(r, &self.config.limits)) {
            self.agents.look_at(at);
        }
    }

    /// Agents gone past their grace period lose their tabs: those they opened close, those the
    /// human handed them go back to the human. Agents with nothing left are forgotten. Runs when
    /// a grace period ends, or when an agent without a connection gained or lost a tab.
    pub(crate) fn release_idle_agents(&mut self) {
        let now = self.now_ms;
        if !self.agents.grace_due.is_due(now) {
            return;
        }
        let grace = self.config.limits.agent_grace_ms;
        for agent in self.agents.names() {
            let has_tabs = self.visible_tabs(&agent).next().is_some();
            let record = self.agents.get_mut(&agent).expect("listed");
            if record.connections > 0 {
                continue;
            }
            // Tabs but never a connection (announced by a reconnecting extension, opened
            // through /json/new): the grace period starts now.
            let since = *record.idle_since_ms.get_or_insert(now);
            if since.saturating_add(grace) > now {
                continue;
            }
            if has_tabs && !record.released {
                record.released = true;
                self.release_agent_tabs(&agent, TabsFate::Release);
            } else if !has_tabs && record.creating == 0 {
                self.agents.remove(&agent);
            }
        }
        // Those past their grace period wait for a tab or a creation to end (which looks again).
        let next = self
            .agents
            .iter()
            .filter(|(_, r)| r.connections == 0)
            .filter_map(|(_, r)| r.idle_since_ms.map(|since| since.saturating_add(grace)))
            .filter(|at| *at > now)
            .min();
        self.agents.grace_due.set(next);
    }

    /// Lets go of an agent's tabs: `Close` closes all; `Release` closes those it opened and
    /// gives the human back those the human handed it (the default agent keeps the tabs the
    /// human shared from the side panel: that sharing lasts until the human stops it).
    pub(crate) fn release_agent_tabs(&mut self, agent: &AgentId, fate: TabsFate) {
        let ops: Vec<BrowserOp> = self
            .visible_tabs(agent)
            .filter_map(|t| match (fate, t.info.created) {
                (TabsFate::Close, _) | (TabsFate::Release, true) => {
                    Some(BrowserOp::CloseTab { tab_id: t.id() })
                }
                (TabsFate::Release, false) if agent.as_str() != DEFAULT_AGENT => {
                    Some(BrowserOp::ReleaseTab { tab_id: t.id() })
                }
                (TabsFate::Release, false) => None,
            })
            .collect();
        for op in ops {
            self.browser_op_housekeeping(op);
        }
    }

    /// The human revoked the agent's token: its connections close now; its tabs wait out the
    /// grace period as after any disconnect (a new token lets it find them again).
    pub fn cut_off_agent(&mut self, now: u64, agent: &AgentId) {
        self.advance(now);
        let mut conns: Vec<_> =
            self.conns.iter().filter(|(_, c)| &c.agent == agent).map(|(id, _)| *id).collect();
        conns.sort_unstable();
        for conn in conns {
            self.client_disconnected(now, conn);
            self.out.push_back(Output::CloseClient { conn });
        }
    }

    /// The human disconnected an agent: its connections close now and its tabs go as asked.
    pub fn disconnect_agent(&mut self, now: u64, agent: &AgentId, fate: TabsFate) {
        self.cut_off_agent(now, agent);
        if let Some(record) = self.agents.get_mut(agent) {
            record.released = true;
        }
        self.release_agent_tabs(agent, fate);
        // Released: no grace period, so no prepared tab waits for it.
        self.update_prepared_tabs();
    }

    /// Every agent the daemon knows, as the side panel shows them.
    pub fn agent_statuses(&self) -> Vec<AgentStatus> {
        self.agents
            .iter()
            .map(|(agent, record)| AgentStatus {
                name: agent.as_str().to_owned(),
                connections: record.connections - record.sessions,
                sessions: record.sessions,
                tabs: self.visible_tabs(agent).map(|t| t.id()).collect(),
                last_action: (!record.last_method.is_empty()).then(|| record.last_method.clone()),
                last_action_at_ms: record.last_at_ms,
                // Only when going would let go of something: its tabs (the default agent keeps
                // what the human shared), or the window a prepared tab keeps open for it.
                releases_at_ms: grace_ends_at(record, &self.config.limits).filter(|_| {
                    self.visible_tabs(agent).any(|t| t.info.created || agent.as_str() != DEFAULT_AGENT)
                        || self.prepared.lists(agent)
                }),
                recent: record.recent.to_vec(),
                token_id: record.identity.token_id.clone(),
                client: self.agents.identity(agent).client.map(|c| self.redactor.text(&c).into_owned()),
            })
            .collect()
    }

    /// Tells the side panel about agents when anything changed since it was last told.
    pub(crate) fn report_agents(&mut self) {
        if !self.extension_connected {
            return;
        }
        let statuses = self.agent_statuses();
        if let Some(agents) = self.agents.changed_statuses(statuses) {
            self.out.push_back(Output::ToExtension(ToExtension::Agents { now_ms: self.now_ms, agents }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_endpoint_rules() {
        for ok in ["a", "agent-1", "Claude_Code.2", &"x".repeat(64)] {
            assert!(is_valid_agent_name(ok), "{ok}");
        }
        for bad in ["", "a b", "a/b", "ä", "a%20", &"x".repeat(65), ".", ".."] {
            assert!(!is_valid_agent_name(bad), "{bad}");
        }
    }

    #[test]
    fn presence_and_grace() {
        let limits = Limits { agent_grace_ms: 1000, ..Limits::default() };
        let mut agents = Agents::default();
        let a = AgentId::new("a");
        agents.connected(&a, false);
        agents.connected(&a, true);
        agents.disconnected(&a, 10, false);
        assert_eq!(grace_ends_at(agents.get(&a).unwrap(), &limits), None, "its session is left");
        agents.disconnected(&a, 20, true);
        assert_eq!(grace_ends_at(agents.get(&a).unwrap(), &limits), Some(1020));
        agents.connected(&a, false);
        assert_eq!(grace_ends_at(agents.get(&a).unwrap(), &limits), None, "back within the grace");
    }

    #[test]
    fn last_action_reuses_its_buffer_and_statuses_are_sent_on_change() {
        let mut agents = Agents::default();
        let a = AgentId::new("a");
        agents.connected(&a, false);
        agents.acted(&a, "Runtime.evaluate", 5);
        agents.acted(&a, "Page.navigate", 6);
        assert_eq!(agents.get(&a).unwrap().last_method, "Page.navigate");
        let status = |n: u32| {
            vec![AgentStatus {
                name: "a".into(),
                connections: n,
                sessions: 0,
                tabs: vec![],
                last_action: None,
                last_action_at_ms: None,
                releases_at_ms: None,
                recent: vec![],
                token_id: None,
                client: None,
            }]
        };
        assert!(agents.changed_statuses(status(1)).is_some());
        assert!(agents.changed_statuses(status(1)).is_none());
        assert!(agents.changed_statuses(status(2)).is_some());
        agents.forget_sent();
        assert!(agents.changed_statuses(status(2)).is_some());
    }

    // ---- agents in the core ----

    use crate::testing::*;
    use crate::Limits as CoreLimits;
    use serde_json::{json, Value};
    use tabtunnel_wire::{BrowserOp, FromExtension, TabId, TabInfo, TabsFate, ToExtension, UnshareReason};

    fn two_agents() -> Harness {
        let mut h = Harness::with_tabs(&[]);
        h.ext(FromExtension::TabShared(agent_tab(1, "a", true)));
        h.ext(FromExtension::TabShared(agent_tab(2, "b", true)));
        h.ext(FromExtension::TabShared(tab_info(3)));
        h.connect_as(1, "a");
        h.connect_as(2, "b");
        h.drain(); // their prepared tabs' list
        h
    }

    fn target_ids(infos: &Value) -> Vec<&str> {
        infos.as_array().unwrap().iter().map(|i| i["targetId"].as_str().unwrap()).collect()
    }

    #[test]
    fn the_panel_tells_an_expected_agent_from_a_connected_one_and_when_its_window_goes() {
        let limits = CoreLimits { agent_grace_ms: 1000, ..CoreLimits::default() };
        let mut h = Harness::with_tabs_and_limits(&[], limits);
        let seen = |h: &Harness| {
            let s = h.core.agent_statuses().into_iter().find(|s| s.name == "a").unwrap();
            (s.connections, s.sessions, s.releases_at_ms)
        };
        h.core.session_opened(h.now, 1, AgentId::new("a"));
        assert_eq!(seen(&h), (0, 1, None), "expected: its MCP session is open, no client yet");
        h.connect_as(2, "a");
        assert_eq!(seen(&h), (1, 1, None));
        h.tick(10);
        h.core.client_disconnected(h.now, 2);
        h.core.client_disconnected(h.now, 1);
        assert_eq!(seen(&h), (0, 0, Some(1010)), "no tabs, but its window waits until then");
        h.tick(1010);
        assert!(h.core.agent_statuses().is_empty());
        // Without a prepared tab nothing waits for it: no time to show.
        h.core.config.prepare_tabs = false;
        h.core.session_opened(h.now, 3, AgentId::new("a"));
        h.core.client_disconnected(h.now, 3);
        assert_eq!(seen(&h), (0, 0, None));
    }

    #[test]
    fn an_agent_sees_only_its_own_tabs_everywhere() {
        let mut h = two_agents();
        let step = h.send(1, json!({"id": 1, "method": "Target.getTargets"}));
        assert_eq!(target_ids(&step.only_reply(1)["result"]["targetInfos"]), ["PAGE1"]);
        let step =
            h.send(2, json!({"id": 1, "method": "Target.setDiscoverTargets", "params": {"discover": true}}));
        let created: Vec<&str> =
            step.to(2).iter().filter_map(|f| f["params"]["targetInfo"]["targetId"].as_str()).collect();
        assert_eq!(created, [crate::testing::BROWSER_ID, "TAB-PAGE2", "PAGE2"]);
        assert_eq!(h.playwright_attach(1).len(), 1);
        h.connect(3);
        assert_eq!(h.playwright_attach(3).len(), 1, "the plain endpoint's agent has the human's shared tab");
        // Naming another agent's target is naming one that does not exist.
        for (id, method, params) in [
            (2, "Target.attachToTarget", json!({"targetId": "PAGE2", "flatten": true})),
            (3, "Target.getTargetInfo", json!({"targetId": "PAGE2"})),
            (4, "Target.activateTarget", json!({"targetId": "PAGE2"})),
            (5, "Target.closeTarget", json!({"targetId": "PAGE3"})),
            (6, "Target.getDevToolsTarget", json!({"targetId": "PAGE2"})),
        ] {
            let step = h.send(1, json!({"id": id, "method": method, "params": params}));
            assert_eq!(step.only_reply(1)["error"]["message"], "No target with given id found", "{method}");
        }
        // And another agent's session ids do not exist on this connection.
        let b_page = h.playwright_attach(2)[0].clone();
        let step = h.send(1, json!({"id": 7, "sessionId": b_page, "method": "Runtime.evaluate"}));
        assert_eq!(step.only_reply(1)["error"]["code"], -32001);
        // Events of b's tab never reach a.
        let step = h.ext(FromExtension::Event(tabtunnel_wire::Event {
            tab_id: 2,
            child_session_id: None,
            method: "Inspector.targetCrashed".into(),
            params: raw("{}"),
        }));
        assert!(step.to(1).is_empty() && step.to(3).is_empty());
        assert_eq!(step.to(2).len(), 1);
    }

    #[test]
    fn a_tab_handed_to_another_agent_leaves_one_and_reaches_the_other_clean() {
        let mut h = Harness::with_tabs(&[1]);
        h.connect(1);
        h.connect_as(2, "b");
        let page = h.playwright_attach(1)[0].clone();
        h.playwright_attach(2);
        h.send(1, json!({"id": 1, "method": "Target.setDiscoverTargets", "params": {"discover": true}}));
        let _ = page;
        let step = h.ext(FromExtension::TabChanged(agent_tab(1, "b", false)));
        assert_eq!(
            step.methods(1),
            ["Target.detachedFromTarget", "Target.targetDestroyed", "Target.targetDestroyed"]
        );
        assert_eq!(step.methods(2), ["Target.attachedToTarget"]);
        assert!(matches!(step.extension[..], [ToExtension::ResetTab { tab_id: 1 }]), "{:?}", step.extension);
    }

    #[test]
    fn after_its_grace_period_an_agents_tabs_close_or_go_back_to_the_human() {
        let limits = CoreLimits { agent_grace_ms: 1000, ..CoreLimits::default() };
        let mut h = Harness::with_limits(limits);
        h.core.extension_connected(h.now, hello(&[])).unwrap();
        h.tick(0);
        h.ext(FromExtension::TabShared(agent_tab(1, "a", true)));
        h.ext(FromExtension::TabShared(agent_tab(2, "a", false)));
        h.ext(FromExtension::TabShared(tab_info(3)));
        h.ext(FromExtension::TabShared(agent_tab(4, DEFAULT_AGENT, true)));
        h.connect_as(1, "a");
        h.connect(2);
        h.tick(10);
        h.core.client_disconnected(h.now, 1);
        h.tick(500);
        h.connect_as(1, "a"); // back within the grace period
        assert!(h.tick(5000).browser_ops().is_empty());
        h.core.client_disconnected(h.now, 1);
        h.core.client_disconnected(h.now, 2);
        assert!(h.tick(5999).browser_ops().is_empty());
        let step = h.tick(6000);
        let ops: Vec<&BrowserOp> = step.browser_ops().into_iter().map(|(_, op)| op).collect();
        assert_eq!(
            ops,
            [
                &BrowserOp::CloseTab { tab_id: 1 },
                &BrowserOp::ReleaseTab { tab_id: 2 },
                &BrowserOp::CloseTab { tab_id: 4 },
            ],
            "the default agent keeps what the human shared from the side panel"
        );
        assert!(h.tick(7000).browser_ops().is_empty(), "released once");
        for tab in [1, 2] {
            h.ext(FromExtension::TabUnshared { tab_id: tab, reason: UnshareReason::Closed });
        }
        h.tick(8000);
        let names: Vec<String> = h.core.agent_statuses().into_iter().map(|s| s.name).collect();
        assert_eq!(names, [DEFAULT_AGENT], "an agent with nothing left is forgotten");
    }

    #[test]
    fn a_grace_period_ends_at_the_deadline_the_disconnect_set() {
        let limits = CoreLimits { agent_grace_ms: 1000, ..CoreLimits::default() };
        let mut h = Harness::with_tabs_and_limits(&[], limits);
        h.ext(FromExtension::TabShared(agent_tab(1, "a", true)));
        h.connect_as(1, "a");
        h.tick(100);
        h.now = 1234;
        h.core.client_disconnected(h.now, 1);
        assert_eq!(h.next_deadline(), Some(2234));
        assert!(h.tick(2233).browser_ops().is_empty(), "not yet");
        assert_eq!(h.tick(2234).browser_ops()[0].1, &BrowserOp::CloseTab { tab_id: 1 });
        let close_times_out = 2234 + CoreLimits::default().command_timeout_ms;
        assert_eq!(h.next_deadline(), Some(close_times_out), "released: it waits for its tab to go");
        h.ext(FromExtension::TabUnshared { tab_id: 1, reason: UnshareReason::Closed });
        assert_eq!(h.core.poll_timeout(), Some(2234), "looked at again at once");
        h.tick(2234);
        assert!(h.core.agent_statuses().iter().all(|s| s.name != "a"), "forgotten");
    }

    #[test]
    fn a_popup_past_the_limit_closes_at_the_deadline_its_arrival_set() {
        let limits = CoreLimits { max_tabs_per_agent: 1, ..CoreLimits::default() };
        let mut h = Harness::with_tabs_and_limits(&[], limits);
        h.connect_as(1, "a");
        h.ext(FromExtension::TabShared(agent_tab(1, "a", true)));
        h.tick(100);
        h.now = 1234;
        let blank = TabInfo {
            url: "about:blank".into(),
            opener_target_id: Some("PAGE1".into()),
            ..agent_tab(2, "a", true)
        };
        assert!(h.ext(FromExtension::TabShared(blank)).browser_ops().is_empty());
        assert_eq!(h.next_deadline(), Some(2234));
        assert!(h.tick(2233).browser_ops().is_empty(), "not yet");
        assert_eq!(h.tick(2234).browser_ops()[0].1, &BrowserOp::CloseTab { tab_id: 2 });
        let close_times_out = 2234 + CoreLimits::default().command_timeout_ms;
        assert_eq!(h.next_deadline(), Some(close_times_out), "only the close's answer is waited for");
    }

    #[test]
    fn agents_over_the_limit_are_refused_with_a_cdp_error() {
        let limits = CoreLimits { max_agents: 2, ..CoreLimits::default() };
        let mut h = Harness::with_limits(limits);
        h.core.extension_connected(h.now, hello(&[])).unwrap();
        h.connect_as(1, "a");
        h.connect_as(2, "b");
        h.connect_as(3, "c");
        h.connect_as(4, "a");
        let step = h.send(3, json!({"id": 1, "method": "Browser.getVersion"}));
        let error = step.only_reply(3)["error"]["message"].as_str().unwrap().to_owned();
        assert!(error.contains("at most 2 agents") && error.contains("'c'"), "{error}");
        let step = h.send(4, json!({"id": 1, "method": "Browser.getVersion"}));
        assert!(step.only_reply(4)["result"].is_object(), "a known agent's second connection is fine");
        h.core.client_disconnected(h.now, 3);
        assert_eq!(h.core.agent_statuses().len(), 2, "the refused one never counted");
    }

    #[test]
    fn made_up_names_cannot_lock_out_registered_agents_or_the_plain_endpoint() {
        let limits = CoreLimits { max_agents: 2, ..CoreLimits::default() };
        let mut h = Harness::with_limits(limits);
        h.core.extension_connected(h.now, hello(&[])).unwrap();
        h.core.set_registered_agents(h.now, ["alice".to_owned()]);
        for (conn, name) in [(1, "x1"), (2, "x2"), (3, "x3")] {
            h.connect_as(conn, name);
        }
        let refused = h.send(3, json!({"id": 1, "method": "Browser.getVersion"}));
        assert!(refused.only_reply(3)["error"].is_object(), "a third made-up name is over the limit");
        h.connect_as(4, "alice");
        h.connect_as(5, DEFAULT_AGENT);
        for conn in [4, 5] {
            let step = h.send(conn, json!({"id": 1, "method": "Browser.getVersion"}));
            assert!(step.only_reply(conn)["result"].is_object(), "{conn} got in");
        }
    }

    #[test]
    fn popups_count_toward_the_tab_limit_and_one_past_it_is_closed() {
        let limits = CoreLimits { max_tabs_per_agent: 2, ..CoreLimits::default() };
        let mut h = Harness::with_tabs_and_limits(&[], limits);
        h.connect_as(1, "a");
        h.send(1, json!({"id": 1, "method": "Target.setDiscoverTargets", "params": {"discover": true}}));
        h.ext(FromExtension::TabShared(agent_tab(1, "a", true)));
        let popup =
            |tab: TabId| TabInfo { opener_target_id: Some("PAGE1".into()), ..agent_tab(tab, "a", true) };
        let step = h.ext(FromExtension::TabShared(popup(2)));
        assert!(step.browser_ops().is_empty(), "the second tab is within the limit");
        let step = h.ext(FromExtension::TabShared(popup(3)));
        assert_eq!(
            step.methods(1),
            ["Target.targetCreated", "Target.targetCreated"],
            "the client sees it come"
        );
        assert_eq!(step.browser_ops()[0].1, &BrowserOp::CloseTab { tab_id: 3 });
        let step = h.ext(FromExtension::TabUnshared { tab_id: 3, reason: UnshareReason::Closed });
        assert_eq!(step.methods(1), ["Target.targetDestroyed", "Target.targetDestroyed"], "and go");
        // One still on its first, blank document goes once it has one, or at the deadline.
        let blank = |tab: TabId| TabInfo { url: "about:blank".into(), ..popup(tab) };
        let step = h.ext(FromExtension::TabShared(blank(4)));
        assert!(step.browser_ops().is_empty(), "not while Chrome still makes it");
        let step = h.ext(FromExtension::TabChanged(popup(4)));
        assert_eq!(step.browser_ops()[0].1, &BrowserOp::CloseTab { tab_id: 4 });
        h.ext(FromExtension::TabUnshared { tab_id: 4, reason: UnshareReason::Closed });
        h.ext(FromExtension::TabShared(blank(5)));
        assert!(h.tick(500).browser_ops().is_empty());
        assert_eq!(h.tick(1000).browser_ops()[0].1, &BrowserOp::CloseTab { tab_id: 5 });
        assert!(h.tick(2000).browser_ops().is_empty(), "once");
    }

    #[test]
    fn the_human_disconnecting_an_agent_closes_its_connections_and_lets_go_of_its_tabs() {
        let mut h = two_agents();
        h.ext(FromExtension::TabShared(agent_tab(4, "a", false)));
        h.connect_as(5, "a");
        let step = h.ext(FromExtension::DisconnectAgent { agent: "a".into(), tabs: TabsFate::Release });
        assert_eq!(step.closed, [1, 5]);
        let ops: Vec<&BrowserOp> = step.browser_ops().into_iter().map(|(_, op)| op).collect();
        assert_eq!(ops, [&BrowserOp::CloseTab { tab_id: 1 }, &BrowserOp::ReleaseTab { tab_id: 4 }]);
        let step = h.send(2, json!({"id": 1, "method": "Target.getTargets"}));
        assert_eq!(target_ids(&step.only_reply(2)["result"]["targetInfos"]), ["PAGE2"], "b carries on");
        let step = h.ext(FromExtension::DisconnectAgent { agent: "b".into(), tabs: TabsFate::Close });
        assert_eq!(step.closed, [2]);
        assert_eq!(step.browser_ops()[0].1, &BrowserOp::CloseTab { tab_id: 2 });
    }

    #[test]
    fn the_side_panel_hears_of_agents_when_they_change_at_most_every_250_ms() {
        let mut h = two_agents();
        assert_eq!(h.core.poll_timeout(), Some(0), "at once after a quiet time");
        let step = h.tick(100);
        let [ToExtension::Agents { now_ms: 100, agents }] = &step.extension[..] else {
            panic!("{:?}", step.extension)
        };
        let summary: Vec<(&str, u32, &[TabId])> =
            agents.iter().map(|a| (a.name.as_str(), a.connections, a.tabs.as_slice())).collect();
        assert_eq!(summary, [("a", 1, &[1][..]), ("b", 1, &[2][..]), (DEFAULT_AGENT, 0, &[3][..])]);
        let grace = CoreLimits::default().agent_grace_ms;
        assert_eq!(h.core.poll_timeout(), Some(100 + grace), "no report to wait for: only a grace period");
        assert!(h.tick(200).extension.is_empty(), "nothing changed");
        h.now = 230;
        h.send(1, json!({"id": 1, "method": "Target.getTargets"}));
        assert_eq!(h.core.poll_timeout(), Some(100 + REPORT_EVERY_MS));
        assert!(h.tick(349).extension.is_empty(), "not yet");
        let step = h.tick(350);
        let [ToExtension::Agents { agents, .. }] = &step.extension[..] else { panic!() };
        assert_eq!(agents[0].last_action.as_deref(), Some("Target.getTargets"));
        assert_eq!(agents[0].last_action_at_ms, Some(230), "the time the command came");
        h.now = 400;
        h.core.client_disconnected(h.now, 2);
        h.drain(); // the prepared tabs' list
        assert_eq!(h.core.poll_timeout(), Some(350 + REPORT_EVERY_MS));
        let step = h.tick(600);
        let [ToExtension::Agents { agents, .. }] = &step.extension[..] else { panic!() };
        assert_eq!(agents[1].connections, 0);
        assert_eq!(agents[1].releases_at_ms, Some(400 + grace));
    }

    #[test]
    fn one_shot_requests_do_not_keep_an_agent_present() {
        let limits = CoreLimits { agent_grace_ms: 1000, ..CoreLimits::default() };
        let mut h = Harness::with_limits(limits);
        h.core.extension_connected(h.now, hello(&[])).unwrap();
        h.tick(0);
        h.core.request_connected(h.now, 9, AgentId::new("a"));
        let step =
            h.send(9, json!({"id": 1, "method": "Target.createTarget", "params": {"url": "http://x/"}}));
        let (id, _) = step.browser_ops()[0];
        h.ext(FromExtension::TabShared(agent_tab(1, "a", true)));
        let step = h.answer(id, serde_json::to_value(agent_tab(1, "a", true)).unwrap());
        assert_eq!(step.only_reply(9)["result"]["targetId"], "PAGE1");
        h.core.client_disconnected(h.now, 9);
        h.tick(500);
        let step = h.tick(1600);
        assert_eq!(step.browser_ops()[0].1, &BrowserOp::CloseTab { tab_id: 1 }, "nobody came for it");
    }
}
