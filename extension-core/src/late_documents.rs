//! Documents whose navigation was under way when a tab's guard was armed.
//!
//! The guard pauses a shared tab's writes with `Fetch`, armed (`Fetch.enable`) as the tab is
//! attached. Chrome applies it to the documents a tab has and to the ones it loads next; but a
//! document whose navigation had begun when `Fetch.enable` came (a page's popup, armed while
//! its first page loads) was seen to send its `sendBeacon` and `fetch(..., {keepalive: true})`
//! writes past `Fetch` for its whole life, while its other writes were paused (redteam10 N1-N3:
//! 3 of 4 runs). Such writes leave through Chrome's keep-alive loader, bound as the document
//! commits. A second `Fetch.enable` after the commit was seen to cover them (2 of 2).
//!
//! So a navigation that started before the tab's guard was armed (by the browser's clock:
//! `webNavigation`'s `timeStamp`) is late: the tab's writes are refused by the browser's rules
//! (`off_tab_writes`) from the moment it is known to be late until the guard is armed again
//! after its commit, or it failed; what the document sends as it is parsed meets the rules,
//! and what it sends later meets the guard.

use std::collections::{BTreeMap, BTreeSet};

use tabtunnel_wire::TabId;

/// A frame of a tab, as `webNavigation` names it (0: the top frame).
pub type FrameId = i64;

/// Navigations kept under way at most, over every tab.
const MAX_LOADING: usize = 4096;

#[derive(Debug, Default)]
pub struct LateDocuments {
    /// Armed tabs: when their guard's `Fetch.enable` was last answered (ms since the epoch;
    /// infinite while it is not yet).
    armed: BTreeMap<TabId, f64>,
    /// Navigations started and not yet committed or failed, of any tab: when they started.
    loading: BTreeMap<(TabId, FrameId), f64>,
    /// Tabs with a late document committed, whose guard is being armed again.
    rearming: BTreeSet<TabId>,
}

/// What to do as a frame commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commit {
    /// Nothing: its navigation began after the guard was armed (or the tab is not armed).
    Covered,
    /// Send the guard's `Fetch.enable` again, then report [`LateDocuments::rearmed`].
    Rearm,
}

impl LateDocuments {
    /// A frame starts to navigate (`webNavigation.onBeforeNavigate`) at `at`.
    pub fn started(&mut self, tab: TabId, frame: FrameId, at: f64) {
        self.loading.insert((tab, frame), at);
        if self.loading.len() > MAX_LOADING {
            // Frames removed as they loaded tell neither end: the oldest goes (its commit, if
            // ever, counts as late).
            if let Some(oldest) = self.loading.iter().min_by(|a, b| a.1.total_cmp(b.1)).map(|(key, _)| *key) {
                self.loading.remove(&oldest);
            }
        }
    }

    /// A frame's navigation failed or was dropped (`webNavigation.onErrorOccurred`).
    pub fn failed(&mut self, tab: TabId, frame: FrameId) {
        self.loading.remove(&(tab, frame));
    }

    /// The guard's `Fetch.enable` is sent on the tab's own session: until it is answered, every
    /// navigation of the tab is late (one may commit before the answer comes).
    pub fn arming(&mut self, tab: TabId) {
        self.armed.insert(tab, f64::INFINITY);
    }

    /// The guard's `Fetch.enable` was answered at `at` (`None`: refused, nothing armed).
    pub fn armed(&mut self, tab: TabId, at: Option<f64>) {
        match at {
            Some(at) => {
                self.armed.insert(tab, at);
            }
            None => self.disarmed(tab),
        }
    }

    /// A frame's navigation committed (`webNavigation.onCommitted`). One whose start was not
    /// seen (it began before this worker listened) counts as late.
    pub fn committed(&mut self, tab: TabId, frame: FrameId) -> Commit {
        let started = self.loading.remove(&(tab, frame));
        match self.armed.get(&tab) {
            Some(armed) if started.is_none_or(|at| at <= *armed) => {
                self.rearming.insert(tab);
                Commit::Rearm
            }
            _ => Commit::Covered,
        }
    }

    /// The guard's `Fetch.enable`, sent again after a late commit, was answered (or failed).
    pub fn rearmed(&mut self, tab: TabId) {
        self.rearming.remove(&tab);
    }

    /// Whether the browser's rules refuse the tab's writes: armed, with a late navigation
    /// still loading or its guard being armed again.
    pub fn held(&self, tab: TabId) -> bool {
        let Some(armed) = self.armed.get(&tab) else { return false };
        self.rearming.contains(&tab)
            || self.loading.range((tab, FrameId::MIN)..=(tab, FrameId::MAX)).any(|(_, at)| at <= armed)
    }

    /// The tab is no longer shared: its guard is gone, nothing is held.
    pub fn disarmed(&mut self, tab: TabId) {
        self.armed.remove(&tab);
        self.rearming.remove(&tab);
    }

    /// `tabs.onRemoved`.
    pub fn removed(&mut self, tab: TabId) {
        self.disarmed(tab);
        self.loading.retain(|(t, _), _| *t != tab);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_navigation_under_way_as_the_guard_is_armed_is_held_until_armed_again_after_its_commit() {
        let mut late = LateDocuments::default();
        late.started(7, 0, 100.0);
        assert!(!late.held(7), "not armed: nothing of the guard's");
        late.armed(7, Some(150.0));
        assert!(late.held(7));
        assert_eq!(late.committed(7, 0), Commit::Rearm);
        assert!(late.held(7), "until the guard is armed again");
        late.rearmed(7);
        assert!(!late.held(7));
    }

    #[test]
    fn a_navigation_begun_after_the_guard_was_armed_is_covered() {
        let mut late = LateDocuments::default();
        late.armed(7, Some(150.0));
        late.started(7, 0, 151.0);
        assert!(!late.held(7));
        assert_eq!(late.committed(7, 0), Commit::Covered);
        assert!(!late.held(7));
    }

    #[test]
    fn a_start_heard_after_the_arming_but_dated_before_it_is_late() {
        let mut late = LateDocuments::default();
        late.armed(7, Some(150.0));
        late.started(7, 3, 140.0); // a frame's, heard late
        assert!(late.held(7));
        assert_eq!(late.committed(7, 3), Commit::Rearm);
    }

    #[test]
    fn a_commit_whose_start_was_not_seen_is_late() {
        let mut late = LateDocuments::default();
        late.armed(7, Some(150.0));
        assert!(!late.held(7), "nothing known to be loading");
        assert_eq!(late.committed(7, 0), Commit::Rearm);
        assert!(late.held(7));
    }

    #[test]
    fn navigations_never_ended_are_bounded_and_the_oldest_goes() {
        let mut late = LateDocuments::default();
        for frame in 0..=MAX_LOADING as FrameId {
            late.started(1, frame, 1000.0 + frame as f64);
        }
        assert_eq!(late.loading.len(), MAX_LOADING);
        assert!(!late.loading.contains_key(&(1, 0)));
        assert!(late.loading.contains_key(&(1, MAX_LOADING as FrameId)));
    }

    #[test]
    fn a_failed_navigation_holds_nothing() {
        let mut late = LateDocuments::default();
        late.started(7, 0, 100.0);
        late.armed(7, Some(150.0));
        late.failed(7, 0);
        assert!(!late.held(7), "a download, a 204, a navigation replaced");
    }

    #[test]
    fn unshared_or_closed_tabs_hold_nothing_and_other_tabs_are_apart() {
        let mut late = LateDocuments::default();
        late.started(7, 0, 100.0);
        late.started(8, 0, 100.0);
        late.armed(7, Some(150.0));
        late.armed(8, Some(150.0));
        late.disarmed(7);
        assert!(!late.held(7));
        assert!(late.held(8));
        assert_eq!(late.committed(7, 0), Commit::Covered, "not armed any more");
        late.removed(8);
        assert!(!late.held(8));
        assert_eq!(late.committed(8, 0), Commit::Covered);
    }

    #[test]
    fn while_the_guard_is_being_armed_every_navigation_is_late_even_one_begun_after() {
        let mut late = LateDocuments::default();
        late.arming(7);
        late.started(7, 0, 500.0);
        assert!(late.held(7));
        assert_eq!(late.committed(7, 0), Commit::Rearm, "it may commit before the answer");
        late.armed(7, Some(510.0));
        late.rearmed(7);
        assert!(!late.held(7));
        late.started(7, 0, 520.0);
        assert_eq!(late.committed(7, 0), Commit::Covered);
    }

    #[test]
    fn a_guard_refused_holds_nothing() {
        let mut late = LateDocuments::default();
        late.started(7, 0, 500.0);
        late.arming(7);
        assert!(late.held(7));
        late.armed(7, None);
        assert!(!late.held(7));
        assert_eq!(late.committed(7, 0), Commit::Covered);
    }

    #[test]
    fn a_tab_armed_again_for_a_reset_judges_by_the_last_arming() {
        let mut late = LateDocuments::default();
        late.armed(7, Some(100.0));
        late.started(7, 0, 120.0);
        assert!(!late.held(7));
        late.armed(7, Some(130.0)); // re-attached while it loads
        assert!(late.held(7));
        assert_eq!(late.committed(7, 0), Commit::Rearm);
    }
}
