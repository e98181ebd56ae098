//! Which agents get a tab prepared before they ask for one. The extension keeps one blank tab
//! attached in the background of each listed agent's window (`worker/prepared.rs`) and hands it
//! out at that agent's next `Target.createTarget`, which then costs about what Chrome's own does.
//!
//! An agent is listed while it is connected and may open pages: a named agent from its first
//! connection (an agent endpoint exists to get tabs of its own) until its grace period ends (an
//! agent that comes back, as an MCP client's next session does, finds its window and a tab
//! ready), the default agent (the plain endpoint, mostly clients of the tabs the human shares)
//! only while connected and once it opened a page. Not while
//! the policy denies it `Target.createTarget`, nor with `Config::prepare_tabs` off. The list
//! goes to the extension whenever it changes, and again to every new extension connection; a
//! prepared tab is never shared, so the core knows nothing else of it (it counts against no
//! limit and no client sees it) until the extension reports it as a new tab.

use tabtunnel_wire::ToExtension;

use crate::agents::{grace_ends_at, DEFAULT_AGENT};
use crate::policy::Decision;
use crate::{AgentId, Core, Output};

#[derive(Debug, Default)]
pub(crate) struct PreparedTabs {
    /// The list the extension has: the last one sent on this connection (a new connection
    /// starts with none; the extension drops every prepared tab when its socket closes).
    sent: Vec<String>,
}

impl PreparedTabs {
    /// A new extension connection has none.
    pub fn forget_sent(&mut self) {
        self.sent.clear();
    }

    /// Whether the extension keeps a tab ready for `agent` (and so its window open).
    pub fn lists(&self, agent: &AgentId) -> bool {
        self.sent.iter().any(|a| a == agent.as_str())
    }
}

impl Core {
    /// Sends the extension the agents that should have a tab ready, if that changed.
    pub(crate) fn update_prepared_tabs(&mut self) {
        if !self.extension_connected {
            return;
        }
        let agents = self.agents_with_prepared_tabs();
        if self.prepared.sent == agents {
            return;
        }
        self.prepared.sent = agents.clone();
        self.out.push_back(Output::ToExtension(ToExtension::PrepareTabs { agents }));
    }

    fn agents_with_prepared_tabs(&self) -> Vec<String> {
        if !self.config.prepare_tabs || self.guard.kill_switch {
            return Vec::new();
        }
        let limits = &self.config.limits;
        self.agents
            .iter()
            .filter(|(agent, record)| {
                let in_grace = record.was_present && grace_ends_at(record, limits).is_some();
                (record.connections > 0 || in_grace)
                    && (agent.as_str() != DEFAULT_AGENT || record.opened_pages)
                    && self
                        .policy_for(agent)
                        .is_none_or(|p| !matches!(p.method("Target.createTarget"), Decision::Deny(_)))
            })
            .map(|(agent, _)| agent.as_str().to_owned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::{PolicyFile, PolicySet};
    use crate::testing::*;
    use crate::*;
    use serde_json::json;
    use tabtunnel_wire::ToExtension;

    fn lists(step: &Step) -> Vec<Vec<String>> {
        step.extension
            .iter()
            .filter_map(|f| match f {
                ToExtension::PrepareTabs { agents } => Some(agents.clone()),
                _ => None,
            })
            .collect()
    }

    /// The lists sent when `agent`'s connection `conn` opens.
    fn connected(h: &mut Harness, conn: ConnId, agent: &str) -> Vec<Vec<String>> {
        h.connect_as(conn, agent);
        lists(&h.drain())
    }

    #[test]
    fn a_named_agent_gets_a_tab_ready_from_its_first_connection_until_its_grace_period_ends() {
        let limits = Limits { agent_grace_ms: 1000, ..Limits::default() };
        let mut h = Harness::with_tabs_and_limits(&[], limits);
        assert_eq!(connected(&mut h, 1, "a"), [vec!["a".to_owned()]]);
        // A second connection changes nothing; another agent joins the list.
        assert!(connected(&mut h, 2, "a").is_empty());
        assert_eq!(connected(&mut h, 3, "b"), [vec!["a".to_owned(), "b".to_owned()]]);
        h.tick(100);
        h.core.client_disconnected(h.now, 1);
        h.core.client_disconnected(h.now, 2);
        assert!(lists(&h.drain()).is_empty(), "a's window and tab wait out its grace period");
        assert!(lists(&h.tick(1099)).is_empty());
        // Back within it: nothing to prepare again.
        assert!(connected(&mut h, 4, "a").is_empty());
        h.core.client_disconnected(h.now, 4);
        assert!(lists(&h.tick(2098)).is_empty());
        assert_eq!(lists(&h.tick(2099)), [vec!["b".to_owned()]], "gone past its grace period");
        // One-shot HTTP requests do not make an agent present, nor does their grace period.
        h.core.request_connected(h.now, 9, AgentId::new("c"));
        assert!(lists(&h.drain()).is_empty());
        h.core.client_disconnected(h.now, 9);
        assert!(lists(&h.tick(2100)).is_empty());
        assert!(lists(&h.tick(3200)).is_empty());
    }

    #[test]
    fn an_mcp_session_gets_its_agent_a_tab_ready_before_any_client_until_its_grace_period_ends() {
        let limits = Limits { agent_grace_ms: 1000, ..Limits::default() };
        let mut h = Harness::with_tabs_and_limits(&[], limits);
        h.core.session_opened(h.now, 1, AgentId::new("a"));
        assert_eq!(lists(&h.drain()), [vec!["a".to_owned()]], "expected before any client connects");
        // Its tool server connects and goes between calls: the tab stays ready throughout.
        assert!(connected(&mut h, 2, "a").is_empty());
        h.core.client_disconnected(h.now, 2);
        assert!(lists(&h.drain()).is_empty());
        // The session ends: its window and tab wait out the grace period, then go.
        h.tick(100);
        h.core.client_disconnected(h.now, 1);
        assert!(lists(&h.drain()).is_empty());
        assert!(lists(&h.tick(1099)).is_empty());
        assert_eq!(lists(&h.tick(1100)), [Vec::<String>::new()], "gone past its grace period");
        assert!(h.core.agent_statuses().is_empty(), "nothing of it is left");
    }

    #[test]
    fn an_agent_the_human_disconnects_gets_none_at_once() {
        let mut h = Harness::with_tabs(&[]);
        assert_eq!(connected(&mut h, 1, "a"), [vec!["a".to_owned()]]);
        h.core.disconnect_agent(h.now, &AgentId::new("a"), tabtunnel_wire::TabsFate::Close);
        assert_eq!(lists(&h.drain()), [Vec::<String>::new()]);
    }

    #[test]
    fn the_default_agent_gets_one_only_once_it_opened_a_page() {
        let mut h = Harness::with_tabs(&[]);
        assert!(connected(&mut h, 1, DEFAULT_AGENT).is_empty());
        let step = h.send(1, json!({"id": 1, "method": "Target.createTarget", "params": {}}));
        assert_eq!(lists(&step), [vec![DEFAULT_AGENT.to_owned()]]);
        h.core.client_disconnected(h.now, 1);
        assert_eq!(lists(&h.drain()), [Vec::<String>::new()]);
        // Back: not until it opens a page again.
        assert!(connected(&mut h, 2, DEFAULT_AGENT).is_empty());
    }

    #[test]
    fn every_new_extension_connection_gets_the_list_and_none_is_sent_without_one() {
        let mut h = Harness::with_limits(Limits::default());
        assert!(connected(&mut h, 1, "a").is_empty(), "no extension to tell");
        h.core.extension_connected(h.now, hello(&[])).unwrap();
        assert_eq!(lists(&h.drain()), [vec!["a".to_owned()]]);
        h.core.extension_disconnected(h.now);
        h.drain();
        h.core.extension_connected(h.now, hello(&[])).unwrap();
        assert_eq!(lists(&h.drain()), [vec!["a".to_owned()]]);
    }

    #[test]
    fn agents_the_policy_keeps_from_opening_pages_and_the_kill_switch_get_none() {
        let mut h = Harness::with_tabs(&[]);
        let file: PolicyFile =
            serde_json::from_value(json!({"agent": {"reader": {"deny_methods": ["Target.createTarget"]}}}))
                .unwrap();
        h.core.set_policy(h.now, Some(PolicySet::compile(&file).unwrap()));
        h.drain();
        assert!(connected(&mut h, 1, "reader").is_empty());
        assert_eq!(connected(&mut h, 2, "writer"), [vec!["writer".to_owned()]]);
        h.core.set_kill_switch(h.now, true);
        assert_eq!(lists(&h.drain()), [Vec::<String>::new()]);
    }

    #[test]
    fn turned_off_no_agent_gets_one() {
        let mut h = Harness::with_tabs(&[]);
        h.core.config.prepare_tabs = false;
        assert!(connected(&mut h, 1, "a").is_empty());
    }
}
