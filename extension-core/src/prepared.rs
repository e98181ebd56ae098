//! Tabs prepared before an agent asks for them (see `extension-wasm`'s `worker/prepared.rs`
//! for the why): which agents want one, each agent's tab ready, the preparations under way
//! and the agents whose tab the human took or closed. A preparation is a ticket
//! ([`Preparation`]) from [`Prepared::begin`] to [`Prepared::finish`], which decides whether
//! the tab it made is kept: its agent may have left meanwhile.

use std::collections::{BTreeMap, BTreeSet};

use tabtunnel_wire::{TabId, TabInfo, WindowId};

use crate::placement::OpenedTab;

/// A tab ready for its agent: opened in the background of its window and attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ready {
    pub opened: OpenedTab,
    /// As the attach described it.
    pub info: TabInfo,
}

/// A preparation under way for one agent.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a preparation must be finished"]
pub struct Preparation {
    agent: String,
}

impl Preparation {
    pub fn agent(&self) -> &str {
        &self.agent
    }
}

#[derive(Debug, Default)]
pub struct Prepared {
    /// The agents the daemon wants a tab ready for.
    wanted: BTreeSet<String>,
    /// Each agent's tab, ready.
    ready: BTreeMap<String, Ready>,
    /// Agents whose tab is being prepared now.
    preparing: BTreeSet<String>,
    /// Tabs opened by a preparation not done yet (remembered, so a restarted worker closes them).
    opening: BTreeSet<TabId>,
    /// Agents whose prepared tab the human closed or took: none again until their next page.
    declined: BTreeSet<String>,
}

impl Prepared {
    /// The daemon's list of agents that should have a tab ready. Returns the tabs of those no
    /// longer in it, to close.
    pub fn wanted(&mut self, agents: impl IntoIterator<Item = String>) -> Vec<Ready> {
        self.wanted = agents.into_iter().collect();
        let wanted = &self.wanted;
        self.declined.retain(|a| wanted.contains(a));
        let gone: Vec<String> = self.ready.keys().filter(|a| !wanted.contains(*a)).cloned().collect();
        gone.iter().filter_map(|a| self.ready.remove(a)).collect()
    }

    pub fn wanted_agents(&self) -> impl Iterator<Item = &str> {
        self.wanted.iter().map(String::as_str)
    }

    /// Starts preparing a tab for `agent` unless it has one, is getting one, is not wanted or
    /// declined it.
    pub fn begin(&mut self, agent: &str) -> Option<Preparation> {
        let start = self.still_wanted(agent)
            && !self.declined.contains(agent)
            && self.preparing.insert(agent.to_owned());
        start.then(|| Preparation { agent: agent.to_owned() })
    }

    /// Whether a tab for `agent` is still worth opening (asked again after waiting its turn).
    pub fn still_wanted(&self, agent: &str) -> bool {
        self.wanted.contains(agent) && !self.ready.contains_key(agent)
    }

    /// The preparation opened these tabs (closed by a restarted worker if it dies now).
    pub fn opening(&mut self, tabs: impl IntoIterator<Item = TabId>) {
        self.opening.extend(tabs);
    }

    /// The preparation's attach is done, one way or the other.
    pub fn opened(&mut self, tabs: impl IntoIterator<Item = TabId>) {
        for tab in tabs {
            self.opening.remove(&tab);
        }
    }

    /// The preparation ended with `made`. Returns it back when nobody wants it any more (its
    /// agent left while it was made): the caller closes it.
    pub fn finish(&mut self, preparation: Preparation, made: Option<Ready>) -> Option<Ready> {
        self.preparing.remove(&preparation.agent);
        let ready = made?;
        if self.still_wanted(&preparation.agent) {
            self.ready.insert(preparation.agent, ready);
            None
        } else {
            Some(ready)
        }
    }

    /// The agent's prepared tab, handed out (the caller checks it is still as it was left).
    pub fn take(&mut self, agent: &str) -> Option<Ready> {
        self.ready.remove(agent)
    }

    /// After the agent got a page: it may have a prepared tab again.
    pub fn refilled(&mut self, agent: &str) {
        self.declined.remove(agent);
    }

    /// The agent whose prepared tab this is.
    pub fn owner(&self, tab_id: TabId) -> Option<&str> {
        self.ready.iter().find(|(_, r)| r.info.tab_id == tab_id).map(|(a, _)| a.as_str())
    }

    /// A prepared tab closed, lost its debugger, or was taken by the human: its agent gets none
    /// again until its next page. Returns it (with its agent) to close or let go of.
    pub fn give_up(&mut self, tab_id: TabId) -> Option<(String, Ready)> {
        let agent = self.owner(tab_id)?.to_owned();
        self.declined.insert(agent.clone());
        let ready = self.ready.remove(&agent)?;
        Some((agent, ready))
    }

    /// A tab moved to `window_id`: whether it is a prepared one the human dragged out of its
    /// agent's window (`own_window`).
    pub fn dragged_out(
        &self,
        tab_id: TabId,
        window_id: WindowId,
        own_window: impl Fn(&str) -> Option<WindowId>,
    ) -> bool {
        self.owner(tab_id).is_some_and(|agent| own_window(agent) != Some(window_id))
    }

    /// What a restarted worker closes: every prepared tab, placeholder and tab being opened.
    pub fn stored(&self) -> Vec<TabId> {
        self.ready.values().flat_map(|r| r.opened.tab_ids()).chain(self.opening.iter().copied()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharing::tests::tab;

    fn ready(tab_id: TabId, agent: &str) -> Ready {
        Ready {
            opened: OpenedTab { tab_id, window_id: 10, placeholder: Some(tab_id + 100) },
            info: tab(tab_id, agent, true),
        }
    }

    fn wanting(agents: &[&str]) -> Prepared {
        let mut p = Prepared::default();
        assert!(p.wanted(agents.iter().map(|a| (*a).to_owned())).is_empty());
        p
    }

    #[test]
    fn a_tab_prepared_for_an_agent_that_left_meanwhile_is_closed() {
        let mut p = wanting(&["a"]);
        let preparation = p.begin("a").unwrap();
        assert!(p.wanted(Vec::new()).is_empty(), "nothing ready yet");
        assert_eq!(p.finish(preparation, Some(ready(5, "a"))), Some(ready(5, "a")), "to close");
        assert_eq!(p.owner(5), None);
        assert!(p.stored().is_empty());
    }

    #[test]
    fn a_tab_prepared_for_an_agent_still_wanted_is_kept_and_taken_once() {
        let mut p = wanting(&["a"]);
        let preparation = p.begin("a").unwrap();
        assert_eq!(p.begin("a"), None, "one at a time");
        p.opening([5, 105]);
        assert_eq!(p.stored(), [5, 105], "a restarted worker closes what is being opened");
        p.opened([5, 105]);
        assert_eq!(p.finish(preparation, Some(ready(5, "a"))), None);
        assert_eq!(p.owner(5), Some("a"));
        assert_eq!(p.stored(), [5, 105]);
        assert_eq!(p.begin("a"), None, "has one");
        assert_eq!(p.take("a"), Some(ready(5, "a")));
        assert_eq!(p.take("a"), None);
        assert!(p.begin("a").is_some(), "the next one");
    }

    #[test]
    fn an_agent_leaving_closes_its_ready_tab_and_a_failed_preparation_may_be_tried_again() {
        let mut p = wanting(&["a", "b"]);
        let a = p.begin("a").unwrap();
        assert_eq!(p.finish(a, Some(ready(5, "a"))), None);
        let b = p.begin("b").unwrap();
        assert_eq!(p.finish(b, None), None);
        assert!(p.begin("b").is_some(), "failed: not stuck as preparing");
        assert_eq!(p.wanted(vec!["b".to_owned()]), [ready(5, "a")]);
        assert_eq!(p.begin("a"), None, "not wanted");
    }

    #[test]
    fn a_tab_the_human_closed_or_took_is_not_made_again_until_the_agents_next_page() {
        let mut p = wanting(&["a"]);
        let a = p.begin("a").unwrap();
        assert_eq!(p.finish(a, Some(ready(5, "a"))), None);
        assert_eq!(p.give_up(6), None, "not a prepared tab");
        assert_eq!(p.give_up(5), Some(("a".to_owned(), ready(5, "a"))));
        assert_eq!(p.begin("a"), None, "declined");
        assert!(p.wanted(vec!["a".to_owned()]).is_empty());
        assert_eq!(p.begin("a"), None, "still declined while wanted");
        p.refilled("a");
        assert!(p.begin("a").is_some());
    }

    #[test]
    fn a_prepared_tab_dragged_out_of_its_agents_window_is_the_humans() {
        let mut p = wanting(&["a"]);
        let a = p.begin("a").unwrap();
        assert_eq!(p.finish(a, Some(ready(5, "a"))), None);
        let own = |agent: &str| (agent == "a").then_some(10);
        assert!(!p.dragged_out(5, 10, own));
        assert!(p.dragged_out(5, 11, own));
        assert!(!p.dragged_out(6, 11, own), "not prepared");
    }
}
