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
