//! Which new tabs a page opened (`window.open`, a `target=_blank` link), and from which tab.
//!
//! Chrome's `tabs.Tab.openerTabId` does not say: it is the tab strip's opener, which a tab
//! opened by the human (Ctrl+T) or by a client of Chrome's own debugging port
//! (`Target.createTarget`) inherits from whichever tab was active in that window. Taken as the
//! page's opener, it handed such tabs to the agent whose window was last in front. A page's
//! popups are told by `webNavigation.onCreatedNavigationTarget` (`sourceTabId`), which can come
//! before or after the tab's `tabs.onCreated`; this joins the two, so a popup is adopted once it
//! is in a tab strip and the page that opened it is known.

use std::collections::{BTreeMap, VecDeque};

use tabtunnel_wire::TabId;

use crate::sharing::Owner;

/// How many not-yet-joined tabs of each kind are remembered. The two events of one popup
/// arrive within moments of each other; the rest (tabs no page opened, a navigation target
/// that never reached a tab strip) are forgotten oldest first.
const REMEMBERED: usize = 64;

#[derive(Default)]
pub struct Popups {
    /// Tabs in a tab strip whose `onCreatedNavigationTarget` has not come (most never will).
    created: VecDeque<TabId>,
    /// Tabs a page opened, by the page's tab, not yet in a tab strip.
    opened_by: BTreeMap<TabId, TabId>,
    /// `opened_by`'s keys, oldest first, to forget the oldest past [`REMEMBERED`].
    opened_order: VecDeque<TabId>,
}

impl Popups {
    /// `tabs.onCreated`: the page that opened `tab`, if that is known already.
    pub fn tab_created(&mut self, tab: TabId) -> Option<TabId> {
        if let Some(source) = self.opened_by.remove(&tab) {
            self.opened_order.retain(|t| *t != tab);
            return Some(source);
        }
        if self.created.len() == REMEMBERED {
            self.created.pop_front();
        }
        self.created.push_back(tab);
        None
    }

    /// `webNavigation.onCreatedNavigationTarget`: a page in `source` opened `tab`. Returns
    /// `source` if `tab` is in a tab strip already.
    pub fn opened_by_page(&mut self, tab: TabId, source: TabId) -> Option<TabId> {
        if let Some(at) = self.created.iter().position(|t| *t == tab) {
            self.created.remove(at);
            return Some(source);
        }
        if self.opened_by.insert(tab, source).is_none() {
            if self.opened_order.len() == REMEMBERED {
                if let Some(oldest) = self.opened_order.pop_front() {
                    self.opened_by.remove(&oldest);
                }
            }
            self.opened_order.push_back(tab);
        }
        None
    }

    /// `tabs.onRemoved`: nothing more will come of `tab`.
    pub fn tab_removed(&mut self, tab: TabId) {
        self.created.retain(|t| *t != tab);
        if self.opened_by.remove(&tab).is_some() {
            self.opened_order.retain(|t| *t != tab);
        }
    }
}

/// Popups of agents' pages being adopted (attached, then announced as their opener's agent's),
/// and for whom. An adoption is a ticket ([`Adoption`]): the human disconnecting the agent
/// meanwhile cancels it, so the popup is let go rather than shared for an agent whose tabs were
/// just closed or released.
#[derive(Debug, Default)]
pub struct Adopting {
    by: BTreeMap<TabId, (Owner, u64)>,
    last: u64,
}

/// One popup's adoption under way.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "an adoption must be finished"]
pub struct Adoption {
    tab_id: TabId,
    id: u64,
}

impl Adopting {
    /// A page in `source` opened `tab_id`: adopted if that page is an agent's (`source_owner`,
    /// when shared) or a popup being adopted itself (a page opening popups in a row).
    pub fn begin(
        &mut self,
        tab_id: TabId,
        source: TabId,
        source_owner: Option<Owner>,
    ) -> Option<(Adoption, Owner)> {
        let owner = source_owner.or_else(|| self.by.get(&source).map(|(o, _)| o.clone()))?;
        self.last += 1;
        self.by.insert(tab_id, (owner.clone(), self.last));
        Some((Adoption { tab_id, id: self.last }, owner))
    }

    /// Whether the adoption may still announce its popup (its agent was not disconnected).
    pub fn confirmed(&self, adoption: &Adoption) -> bool {
        self.by.get(&adoption.tab_id).is_some_and(|(_, id)| *id == adoption.id)
    }

    pub fn finish(&mut self, adoption: Adoption) {
        if self.confirmed(&adoption) {
            self.by.remove(&adoption.tab_id);
        }
    }

    /// The human disconnected `agent`: its adoptions under way are cancelled.
    pub fn agent_disconnected(&mut self, agent: &str) {
        self.by.retain(|_, (owner, _)| owner.agent != agent);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_open_popup_is_known_when_it_reaches_a_tab_strip() {
        let mut popups = Popups::default();
        assert_eq!(popups.opened_by_page(7, 3), None);
        assert_eq!(popups.tab_created(7), Some(3));
        // Joined once: a later `onCreated` of the same id (never sent by Chrome) is a new tab.
        assert_eq!(popups.tab_created(7), None);
    }

    #[test]
    fn a_link_popup_is_known_when_its_navigation_target_event_comes() {
        let mut popups = Popups::default();
        assert_eq!(popups.tab_created(7), None);
        assert_eq!(popups.opened_by_page(7, 3), Some(3));
        assert_eq!(popups.opened_by_page(7, 3), None, "joined once");
    }

    #[test]
    fn a_tab_no_page_opened_is_never_a_popup() {
        // The human's Ctrl+T or a direct client's `Target.createTarget` in an agent's window:
        // `openerTabId` names the agent's tab, but no page opened it.
        let mut popups = Popups::default();
        assert_eq!(popups.tab_created(7), None);
        assert_eq!(popups.tab_created(8), None);
        assert_eq!(popups.opened_by_page(9, 7), None);
    }

    #[test]
    fn a_removed_tab_is_forgotten() {
        let mut popups = Popups::default();
        popups.tab_created(7);
        popups.tab_removed(7);
        assert_eq!(popups.opened_by_page(7, 3), None);
        popups.tab_removed(7);
        assert_eq!(popups.tab_created(7), None, "its navigation target was forgotten too");
    }

    fn owner(agent: &str) -> Owner {
        Owner { agent: agent.into(), created: true }
    }

    #[test]
    fn a_popup_adopted_for_an_agent_that_left_is_let_go() {
        let mut adopting = Adopting::default();
        let (adoption, by) = adopting.begin(7, 3, Some(owner("a"))).unwrap();
        assert_eq!(by, owner("a"));
        let (other, _) = adopting.begin(8, 4, Some(owner("b"))).unwrap();
        adopting.agent_disconnected("a");
        assert!(!adopting.confirmed(&adoption), "a's clients and tabs are gone: not shared for it");
        assert!(adopting.confirmed(&other), "b's goes on");
        adopting.finish(adoption);
        adopting.finish(other);
        assert_eq!(adopting.begin(9, 8, None), None, "finished: no longer an opener of record");
    }

    #[test]
    fn a_popup_of_a_popup_being_adopted_is_the_same_agents() {
        let mut adopting = Adopting::default();
        assert_eq!(adopting.begin(7, 3, None), None, "a page nobody shares");
        let (first, _) = adopting.begin(7, 3, Some(owner("a"))).unwrap();
        let (second, by) = adopting.begin(8, 7, None).unwrap();
        assert_eq!(by, owner("a"));
        // The same tab's adoption begun again (a second event for it): only the latest counts.
        let (again, _) = adopting.begin(7, 3, Some(owner("a"))).unwrap();
        assert!(!adopting.confirmed(&first));
        adopting.finish(first);
        assert!(adopting.confirmed(&again), "the older ticket does not end the newer");
        adopting.finish(again);
        adopting.finish(second);
    }

    #[test]
    fn memory_is_bounded_and_the_newest_are_kept() {
        let mut popups = Popups::default();
        for tab in 0..1_000 {
            popups.tab_created(tab);
            popups.opened_by_page(10_000 + tab, 1);
        }
        assert_eq!(popups.created.len(), REMEMBERED);
        assert_eq!(popups.opened_by.len(), REMEMBERED);
        assert_eq!(popups.opened_order.len(), REMEMBERED);
        assert_eq!(popups.opened_by_page(999, 5), Some(5));
        assert_eq!(popups.opened_by_page(0, 5), None, "the oldest was forgotten");
        assert_eq!(popups.tab_created(10_999), Some(1));
        assert_eq!(popups.tab_created(10_000), None, "the oldest was forgotten");
    }
}
