//! Events of tabs attached with the gesture guard armed but not announced yet. Armed, a tab's
//! requests pause from the attach on; their `Fetch.requestPaused` must reach the daemon once it
//! knows the tab, not be dropped as a stranger tab's (a popup's first request was, so it never
//! loaded). Each attach that will announce the tab or give up holds the tab's events
//! ([`EarlyEvents::hold`] gives a [`Hold`]); they are replayed on the announcement, and dropped
//! only when the last hold is given up (a popup's adoption and the human's "share" can overlap).

use std::collections::BTreeMap;

use tabtunnel_wire::TabId;

/// How many events a tab may gather between its attach and its announcement (milliseconds
/// apart, so a handful: a bound, not a budget).
pub const LIMIT: usize = 10_000;

/// One attach's claim on a tab's early events, given back by [`EarlyEvents::give_up`] when the
/// attach fails (an announcement takes every claim at once).
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a hold must be given up if its attach fails"]
pub struct Hold {
    tab_id: TabId,
}

/// What became of an event of a tab not announced.
#[derive(Debug, PartialEq, Eq)]
pub enum Kept {
    Kept,
    /// Past [`LIMIT`]; `first` is true for the first one dropped (said once).
    Dropped {
        first: bool,
    },
    /// No attach holds the tab: a stranger's event, not ours to keep.
    NotHeld,
}

/// The events one tab gathered between its attach and its announcement.
#[derive(Debug)]
pub struct Gathered<E> {
    pub events: Vec<E>,
    pub dropped: usize,
}

impl<E> Default for Gathered<E> {
    fn default() -> Self {
        Gathered { events: Vec::new(), dropped: 0 }
    }
}

#[derive(Debug)]
struct Held<E> {
    holders: u32,
    gathered: Gathered<E>,
}

#[derive(Debug)]
pub struct EarlyEvents<E> {
    tabs: BTreeMap<TabId, Held<E>>,
}

impl<E> Default for EarlyEvents<E> {
    fn default() -> Self {
        EarlyEvents { tabs: BTreeMap::new() }
    }
}

impl<E> EarlyEvents<E> {
    /// An armed attach of a tab begins; `announced` tabs need no hold (their events go
    /// straight on).
    pub fn hold(&mut self, tab_id: TabId, announced: bool) -> Option<Hold> {
        if announced {
            return None;
        }
        self.tabs.entry(tab_id).or_insert(Held { holders: 0, gathered: Gathered::default() }).holders += 1;
        Some(Hold { tab_id })
    }

    /// The attach of `hold` failed: when no other attach holds the tab, its events go.
    pub fn give_up(&mut self, hold: Hold) {
        if let Some(held) = self.tabs.get_mut(&hold.tab_id) {
            held.holders -= 1;
            if held.holders == 0 {
                self.tabs.remove(&hold.tab_id);
            }
        }
    }

    /// An event of a tab that is not announced.
    pub fn keep(&mut self, tab_id: TabId, event: E) -> Kept {
        let Some(held) = self.tabs.get_mut(&tab_id) else { return Kept::NotHeld };
        let gathered = &mut held.gathered;
        if gathered.events.len() < LIMIT {
            gathered.events.push(event);
            Kept::Kept
        } else {
            gathered.dropped += 1;
            Kept::Dropped { first: gathered.dropped == 1 }
        }
    }

    /// The tab is announced: what it gathered, to be sent on in order; its holds end.
    pub fn announced(&mut self, tab_id: TabId) -> Gathered<E> {
        self.tabs.remove(&tab_id).map(|held| held.gathered).unwrap_or_default()
    }

    /// An old session of ours was replaced (after a worker restart): its events (requests
    /// paused for a guard that is gone) are not the new session's. The holds stay.
    pub fn session_replaced(&mut self, tab_id: TabId) {
        if let Some(held) = self.tabs.get_mut(&tab_id) {
            held.gathered = Gathered::default();
        }
    }

    /// The tab closed: nothing will be announced.
    pub fn tab_removed(&mut self, tab_id: TabId) {
        self.tabs.remove(&tab_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_across_overlapping_attaches_wait_for_the_one_that_announces() {
        // A popup's adoption and the human's "share" attach the same tab at once; the share
        // fails ("being shared already" or Chrome's refusal) while the adoption goes on.
        let mut early = EarlyEvents::default();
        let adoption = early.hold(7, false).unwrap();
        let share = early.hold(7, false).unwrap();
        assert_eq!(early.keep(7, "requestPaused 1"), Kept::Kept);
        early.give_up(share);
        assert_eq!(early.keep(7, "requestPaused 2"), Kept::Kept, "the adoption still holds them");
        drop(adoption); // announced instead of given up
        let gathered = early.announced(7);
        assert_eq!(gathered.events, ["requestPaused 1", "requestPaused 2"]);
        assert_eq!(early.keep(7, "late"), Kept::NotHeld, "announced: events go straight on");
    }

    #[test]
    fn the_last_attach_giving_up_drops_the_events() {
        let mut early = EarlyEvents::default();
        let a = early.hold(7, false).unwrap();
        let b = early.hold(7, false).unwrap();
        early.give_up(a);
        early.give_up(b);
        assert_eq!(early.keep(7, 1), Kept::NotHeld);
        assert!(early.announced(7).events.is_empty());
    }

    #[test]
    fn an_announced_tab_needs_no_hold_and_a_stranger_tab_keeps_nothing() {
        let mut early: EarlyEvents<u8> = EarlyEvents::default();
        assert_eq!(early.hold(3, true), None);
        assert_eq!(early.keep(3, 1), Kept::NotHeld);
        assert_eq!(early.keep(4, 1), Kept::NotHeld);
    }

    #[test]
    fn events_past_the_limit_are_dropped_and_said_once() {
        let mut early = EarlyEvents::default();
        let _hold = early.hold(1, false).unwrap();
        for i in 0..LIMIT {
            assert_eq!(early.keep(1, i), Kept::Kept);
        }
        assert_eq!(early.keep(1, 0), Kept::Dropped { first: true });
        assert_eq!(early.keep(1, 0), Kept::Dropped { first: false });
        let gathered = early.announced(1);
        assert_eq!((gathered.events.len(), gathered.dropped), (LIMIT, 2));
    }

    #[test]
    fn a_worker_restart_drops_the_old_sessions_events_but_keeps_the_hold() {
        let mut early = EarlyEvents::default();
        let _hold = early.hold(2, false).unwrap();
        early.keep(2, "paused for the old guard");
        early.session_replaced(2);
        early.keep(2, "paused for the new guard");
        assert_eq!(early.announced(2).events, ["paused for the new guard"]);
    }

    #[test]
    fn a_closed_tab_forgets_its_events() {
        let mut early = EarlyEvents::default();
        let hold = early.hold(2, false).unwrap();
        early.keep(2, 1);
        early.tab_removed(2);
        early.give_up(hold); // the attach then fails: nothing to underflow
        assert_eq!(early.keep(2, 1), Kept::NotHeld);
    }
}
