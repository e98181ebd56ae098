//! Tabs born while tabs are shared, held until it is known whose they are.
//!
//! A page's popup (`window.open`, a `target=_blank` link or form, with or without `noopener`)
//! is Chrome's to start: its first request, and the writes of its page's first scripts, go out
//! before the extension hears of the tab, let alone attaches to it and arms the guard there.
//! So while any tab is shared, the browser refuses the writes of every tab but the known ones
//! (`declarativeNetRequest`'s `excludedTabIds`, put in place by `off_tab_writes`). A tab is
//! known
//! - if it was there when the tabs were first listed;
//! - once a page of a tab no agent has opened it (`webNavigation.onCreatedNavigationTarget`),
//!   or, as it is created, when its tab strip opener is such a tab (a link the human opened in
//!   a new tab: its first request may already have been refused, but not what follows);
//! - once [`CLAIM_MS`] passed and no shared page claimed it (Ctrl+T, a bookmark, a new
//!   window: no page opened them, and Chrome tells a page's popup within moments); the
//!   documents it sends go through from the moment it is seen born ([`NewbornTabs::unclaimed`]);
//! - once it is shared: its guard is armed, and the guard holds its writes from then on;
//! - once a popup of a shared page is let go (its agent went, Chrome refused to attach).
//!
//! A popup of a shared page stays held until one of the last two.

use std::collections::{BTreeMap, BTreeSet};

use tabtunnel_wire::TabId;

/// How long a new tab no page claimed yet is held: `onCreatedNavigationTarget` comes within
/// moments of `tabs.onCreated`, before or after it.
pub const CLAIM_MS: f64 = 500.0;

#[derive(Debug, Default)]
pub struct NewbornTabs {
    /// Tabs whose writes are not held (`None` until the tabs were first listed: no rule then).
    known: Option<BTreeSet<TabId>>,
    held: BTreeMap<TabId, Hold>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Hold {
    /// No page is known to have opened it: known at this time unless a shared page claims it.
    /// `documents`: the documents it sends go meanwhile (no tab strip opener, in a normal
    /// window: another program, a bookmark in a new window); not when its opener is shared or
    /// held, or before its window is known to be normal (a shared page's popup, in a tab or a
    /// popup window, is told of a moment later, and may post a form into it at once).
    Until { at: f64, documents: bool },
    /// A shared page (or a popup of one) opened it.
    Popup,
}

impl NewbornTabs {
    /// Every tab there is (`tabs.query({})`); the ones born meanwhile stay as they are.
    pub fn listed(&mut self, tabs: impl IntoIterator<Item = TabId>) {
        let held = &self.held;
        let known = self.known.get_or_insert_with(BTreeSet::new);
        known.extend(tabs.into_iter().filter(|tab| !held.contains_key(tab)));
    }

    /// `tabs.onCreated`: `opener` is the tab strip's opener, if any, and whether it is shared.
    /// `true`: held without an opener; tell [`NewbornTabs::in_normal_window`] if its window is.
    pub fn created(&mut self, now: f64, tab: TabId, opener: Option<(TabId, bool)>) -> bool {
        if self.held.contains_key(&tab) || self.is_known(tab) {
            return false; // its page was told first
        }
        match opener {
            Some((opener, false)) if !self.held.contains_key(&opener) => {
                self.know(tab);
                false
            }
            _ => {
                self.held.insert(tab, Hold::Until { at: now + CLAIM_MS, documents: false });
                opener.is_none()
            }
        }
    }

    /// A tab [`NewbornTabs::created`] without an opener is in a normal window (not a popup
    /// window): unless a page claimed it meanwhile, the documents it sends go.
    pub fn in_normal_window(&mut self, tab: TabId) {
        if let Some(Hold::Until { documents, .. }) = self.held.get_mut(&tab) {
            *documents = true;
        }
    }

    /// `webNavigation.onCreatedNavigationTarget`: a page in `source` opened `tab`;
    /// `source_shared` whether that tab is shared (or being shared).
    pub fn opened_by_page(&mut self, tab: TabId, source: TabId, source_shared: bool) {
        if source_shared || self.held.get(&source) == Some(&Hold::Popup) {
            // Known at its birth by a wrong opener: held now, for what its page sends next.
            if let Some(known) = &mut self.known {
                known.remove(&tab);
            }
            self.held.insert(tab, Hold::Popup);
        } else {
            self.know(tab);
        }
    }

    /// The tab is shared, its guard armed; or, a popup of a shared page, let go. Also before
    /// its `tabs.onCreated` came (a tab the extension opened and armed at once).
    pub fn settled(&mut self, tab: TabId) {
        self.know(tab);
    }

    /// `tabs.onRemoved`.
    pub fn removed(&mut self, tab: TabId) {
        self.held.remove(&tab);
        if let Some(known) = &mut self.known {
            known.remove(&tab);
        }
    }

    /// When [`NewbornTabs::handle_timeout`] is next due.
    pub fn poll_timeout(&self) -> Option<f64> {
        self.held
            .values()
            .filter_map(|hold| match hold {
                Hold::Until { at, .. } => Some(*at),
                Hold::Popup => None,
            })
            .reduce(f64::min)
    }

    /// Tabs no page claimed in time are known.
    pub fn handle_timeout(&mut self, now: f64) {
        let due: Vec<TabId> = self
            .held
            .iter()
            .filter(|(_, hold)| matches!(hold, Hold::Until { at, .. } if *at <= now))
            .map(|(tab, _)| *tab)
            .collect();
        for tab in due {
            self.know(tab);
        }
    }

    /// The tabs whose writes go through (`None`: not listed yet).
    pub fn known(&self) -> Option<&BTreeSet<TabId>> {
        self.known.as_ref()
    }

    /// Tabs seen born without a tab strip opener, in a normal window, that no page claimed
    /// yet: the documents they send go through (a page another program opened, posting as it
    /// loads); a shared page posting into its popup does so as the popup is born, before any
    /// event, or once it claimed it, and its popup has the shared tab as its opener or is a
    /// popup window.
    pub fn unclaimed(&self) -> impl Iterator<Item = TabId> + '_ {
        self.held
            .iter()
            .filter(|(_, hold)| matches!(hold, Hold::Until { documents: true, .. }))
            .map(|(tab, _)| *tab)
    }

    pub fn is_held(&self, tab: TabId) -> bool {
        self.held.contains_key(&tab)
    }

    fn is_known(&self, tab: TabId) -> bool {
        self.known.as_ref().is_some_and(|known| known.contains(&tab))
    }

    fn know(&mut self, tab: TabId) {
        self.held.remove(&tab);
        // Before the listing, a tab let through now is in that listing anyway.
        if let Some(known) = &mut self.known {
            known.insert(tab);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(n: &NewbornTabs) -> Vec<TabId> {
        n.known().expect("listed").iter().copied().collect()
    }

    #[test]
    fn a_shared_pages_popup_is_held_until_shared_whichever_event_comes_first() {
        for navigation_target_first in [false, true] {
            let mut n = NewbornTabs::default();
            n.listed([1, 2]);
            if navigation_target_first {
                n.opened_by_page(9, 1, true);
                n.created(0.0, 9, Some((1, true)));
            } else {
                n.created(0.0, 9, Some((1, true)));
                n.opened_by_page(9, 1, true);
            }
            n.handle_timeout(10_000.0);
            assert!(n.is_held(9), "no deadline for a claimed popup");
            assert_eq!(known(&n), [1, 2]);
            assert_eq!(n.poll_timeout(), None);
            // Its own popup, opened before it is armed: held too.
            n.opened_by_page(10, 9, false);
            assert!(n.is_held(10));
            n.settled(9);
            assert_eq!(known(&n), [1, 2, 9]);
            n.settled(10); // let go
            assert_eq!(known(&n), [1, 2, 9, 10]);
        }
    }

    #[test]
    fn a_popup_window_without_a_tab_strip_opener_is_held_until_claimed_or_its_time_is_up() {
        let mut n = NewbornTabs::default();
        n.listed([1]);
        assert!(n.created(100.0, 5, None));
        assert!(n.created(200.0, 6, None));
        assert_eq!(n.unclaimed().count(), 0, "nothing goes before its window is known");
        n.in_normal_window(5);
        assert_eq!(n.unclaimed().collect::<Vec<_>>(), [5], "in a normal window its documents go");
        assert_eq!(n.poll_timeout(), Some(100.0 + CLAIM_MS));
        n.handle_timeout(100.0 + CLAIM_MS - 1.0);
        assert!(n.is_held(5) && n.is_held(6), "not yet");
        n.opened_by_page(6, 1, true);
        n.handle_timeout(100.0 + CLAIM_MS);
        assert_eq!(known(&n), [1, 5], "Ctrl+T, a bookmark: no page claimed it");
        assert!(n.is_held(6), "claimed in time by a shared page");
        assert_eq!(n.unclaimed().count(), 0, "its documents are held too");
        assert_eq!(n.poll_timeout(), None);
    }

    #[test]
    fn a_tab_beside_a_shared_one_sends_no_document_until_known() {
        let mut n = NewbornTabs::default();
        n.listed([1, 2]);
        // Its opener is shared (a popup whose page event has not come yet, or Ctrl+T in front of
        // a shared tab): nothing goes until no page claimed it in time.
        n.created(0.0, 7, Some((1, true)));
        assert!(n.is_held(7));
        assert_eq!(n.unclaimed().count(), 0, "a shared page may post into it at once");
        n.handle_timeout(CLAIM_MS);
        assert_eq!(known(&n), [1, 2, 7]);
        // Born of a tab still held: the same.
        assert!(n.created(0.0, 8, None));
        n.in_normal_window(8);
        assert!(!n.created(0.0, 9, Some((8, false))), "its window does not matter");
        assert_eq!(n.unclaimed().collect::<Vec<_>>(), [8], "no opener, a normal window: its documents go");
    }

    #[test]
    fn the_humans_tabs_are_known_as_soon_as_their_opener_is() {
        let mut n = NewbornTabs::default();
        n.listed([1, 2]);
        n.created(0.0, 3, Some((1, false)));
        assert_eq!(known(&n), [1, 2, 3], "a link opened in a new tab of an unshared one");
        n.opened_by_page(4, 2, false);
        n.created(0.0, 4, None);
        assert_eq!(known(&n), [1, 2, 3, 4], "its page told first: not held again");
        // A tab strip opener that is itself held says nothing.
        n.created(0.0, 5, Some((1, true)));
        n.created(0.0, 6, Some((5, false)));
        assert!(n.is_held(6));
        // Ctrl+T while a shared tab is active: held a moment, then known.
        n.handle_timeout(CLAIM_MS);
        assert_eq!(known(&n), [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn a_tab_known_by_a_wrong_opener_is_held_once_a_shared_page_claims_it() {
        let mut n = NewbornTabs::default();
        n.listed([1, 2]);
        n.created(0.0, 3, Some((2, false)));
        n.opened_by_page(3, 1, true);
        assert!(n.is_held(3));
        assert_eq!(known(&n), [1, 2]);
    }

    #[test]
    fn tabs_born_before_the_listing_stay_held_and_closed_ones_are_forgotten() {
        let mut n = NewbornTabs::default();
        assert_eq!(n.known(), None, "no rule before the tabs are listed");
        n.created(0.0, 7, Some((1, true)));
        n.opened_by_page(7, 1, true);
        n.listed([1, 7]);
        assert_eq!(known(&n), [1], "claimed before the listing came");
        n.removed(7);
        n.removed(1);
        assert!(!n.is_held(7));
        assert_eq!(known(&n), Vec::<TabId>::new());
    }

    #[test]
    fn a_tab_shared_before_chrome_told_of_its_birth_is_not_held_after() {
        let mut n = NewbornTabs::default();
        n.listed([1]);
        n.settled(8); // the extension opened it, attached and armed it, shared it
        n.created(0.0, 8, Some((1, true)));
        assert!(!n.is_held(8));
        assert_eq!(known(&n), [1, 8]);
    }
}
