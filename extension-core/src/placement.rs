//! Where agents' tabs live (see `extension-wasm`'s `worker/placement.rs` for the why): each
//! agent's own window and its tab groups, which tabs are being grouped by us right now, and
//! whether a tab's move gives it back to the human.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tabtunnel_wire::{TabId, WindowId, DEFAULT_AGENT};

use crate::sharing::Owner;

/// Tab group colours Chrome offers, but grey (which reads as "inactive").
const COLORS: [&str; 8] = ["blue", "red", "yellow", "green", "pink", "purple", "cyan", "orange"];

/// The colour of an agent's groups: the same name always gets the same colour.
pub fn color_of(agent: &str) -> &'static str {
    // FNV-1a: stable across runs and platforms, unlike the std hasher.
    let hash = agent.bytes().fold(0x811c_9dc5_u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
    COLORS[hash as usize % COLORS.len()]
}

/// Whether an `Input.*` command presses: what makes Chrome activate the tab's window.
/// `event_type` reads the params' `type`, asked only of the methods that have one.
pub fn is_press(method: &str, event_type: impl FnOnce() -> Option<String>) -> bool {
    match method {
        "Input.dispatchMouseEvent" => event_type().as_deref() == Some("mousePressed"),
        "Input.dispatchTouchEvent" => event_type().as_deref() == Some("touchStart"),
        "Input.synthesizeTapGesture" | "Input.emulateTouchFromMouseEvent" => true,
        _ => false,
    }
}

/// A tab opened for an agent, in the background of its window until shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenedTab {
    pub tab_id: TabId,
    pub window_id: WindowId,
    /// The blank tab a new window opened with, closed once the agent's tab is shown.
    pub placeholder: Option<TabId>,
}

impl OpenedTab {
    /// The tab, and the placeholder if there is one.
    pub fn tab_ids(&self) -> impl Iterator<Item = TabId> + '_ {
        std::iter::once(self.tab_id).chain(self.placeholder)
    }
}

/// An agent's window and its groups, remembered across worker restarts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Places {
    /// Each agent's own window.
    pub windows: BTreeMap<String, WindowId>,
    /// Each agent's tab group in each window it has tabs in.
    pub groups: BTreeMap<String, BTreeMap<WindowId, i32>>,
}

impl Places {
    pub fn window_of(&self, agent: &str) -> Option<WindowId> {
        self.windows.get(agent).copied()
    }

    pub fn group_of(&self, agent: &str, window_id: WindowId) -> Option<i32> {
        self.groups.get(agent).and_then(|g| g.get(&window_id)).copied()
    }

    /// A group of ours was made (or found anew) for `agent` in `window_id`: true when that
    /// changed anything (to be named and remembered).
    pub fn grouped(&mut self, agent: &str, window_id: WindowId, group: i32) -> bool {
        self.groups.entry(agent.to_owned()).or_default().insert(window_id, group) != Some(group)
    }

    /// Whether `window_id` is some agent's own window (its tabs may be activated and resized).
    pub fn is_agent_window(&self, window_id: WindowId) -> bool {
        self.windows.values().any(|id| *id == window_id)
    }

    pub fn is_agent_group(&self, group_id: i32) -> bool {
        self.groups.values().any(|g| g.values().any(|id| *id == group_id))
    }

    /// A window closed: forgotten as anyone's. True when that changed anything.
    pub fn window_removed(&mut self, window_id: WindowId) -> bool {
        let before = self.clone();
        self.windows.retain(|_, id| *id != window_id);
        for groups in self.groups.values_mut() {
            groups.remove(&window_id);
        }
        self.groups.retain(|_, g| !g.is_empty());
        *self != before
    }

    /// A shared tab of `owner`'s, now in `group_id` of `window_id`: whether it left its agent's
    /// group (the human dragged it out), so it goes back to the human.
    pub fn left_group(&self, owner: &Owner, window_id: WindowId, group_id: i32) -> bool {
        owner.agent != DEFAULT_AGENT && self.group_of(&owner.agent, window_id) != Some(group_id)
    }

    /// A shared tab of `owner`'s moved to `window_id`: whether it left the agent's own window
    /// (a tab the agent opened; a handed tab may move between the human's windows).
    pub fn left_window(&self, owner: &Owner, window_id: WindowId) -> bool {
        owner.agent != DEFAULT_AGENT
            && owner.created
            && self.window_of(&owner.agent).is_some_and(|own| own != window_id)
    }
}

/// Tabs being put into or taken out of a group by us right now: a group change Chrome reports
/// for one of them is ours, not the human dragging it. Counted, since a tab can be grouped by
/// two of our steps at once (an opened tab's grouping, a hand-over's).
#[derive(Debug, Default)]
pub struct Placing {
    tabs: BTreeMap<TabId, u32>,
}

/// One grouping of a tab under way; [`Placing::finish`] takes it back.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a grouping must be finished"]
pub struct Grouping {
    tab_id: TabId,
}

impl Placing {
    pub fn begin(&mut self, tab_id: TabId) -> Grouping {
        *self.tabs.entry(tab_id).or_default() += 1;
        Grouping { tab_id }
    }

    pub fn finish(&mut self, grouping: Grouping) {
        if let Some(n) = self.tabs.get_mut(&grouping.tab_id) {
            *n -= 1;
            if *n == 0 {
                self.tabs.remove(&grouping.tab_id);
            }
        }
    }

    pub fn contains(&self, tab_id: TabId) -> bool {
        self.tabs.contains_key(&tab_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(agent: &str, created: bool) -> Owner {
        Owner { agent: agent.into(), created }
    }

    #[test]
    fn presses_are_what_activates_a_window() {
        let of = |t: &str| {
            let t = t.to_owned();
            move || Some(t)
        };
        assert!(is_press("Input.dispatchMouseEvent", of("mousePressed")));
        assert!(!is_press("Input.dispatchMouseEvent", of("mouseMoved")));
        assert!(!is_press("Input.dispatchMouseEvent", of("mouseReleased")));
        assert!(!is_press("Input.dispatchMouseEvent", || None));
        assert!(is_press("Input.dispatchTouchEvent", of("touchStart")));
        assert!(!is_press("Input.dispatchKeyEvent", || panic!("keys have no press")));
        assert!(is_press("Input.synthesizeTapGesture", || None));
    }

    #[test]
    fn an_agent_keeps_its_colour_and_agents_spread_over_them() {
        assert_eq!(color_of("claude"), color_of("claude"));
        let colors: std::collections::BTreeSet<&str> =
            (0..40).map(|i| color_of(&format!("agent-{i}"))).collect();
        assert!(colors.len() >= 6, "{colors:?}");
    }

    #[test]
    fn a_tab_grouped_twice_at_once_stays_placing_until_both_end() {
        // An opened tab's grouping and a hand-over's overlap: the first to end must not make
        // the second's group change look like the human dragging the tab out.
        let mut placing = Placing::default();
        let opened = placing.begin(4);
        let handed = placing.begin(4);
        placing.finish(opened);
        assert!(placing.contains(4), "the hand-over's grouping is still ours");
        placing.finish(handed);
        assert!(!placing.contains(4));
    }

    #[test]
    fn a_tab_out_of_its_agents_group_or_window_goes_back_to_the_human() {
        let mut places = Places::default();
        places.windows.insert("a".into(), 10);
        assert!(places.grouped("a", 10, 100));
        assert!(!places.grouped("a", 10, 100), "known already");
        assert!(!places.left_group(&owner("a", true), 10, 100));
        assert!(places.left_group(&owner("a", true), 10, -1), "ungrouped");
        assert!(places.left_group(&owner("a", true), 11, 100), "another window's group");
        assert!(!places.left_group(&Owner::human_shared(), 10, -1), "the human's own tabs have none");
        assert!(places.left_window(&owner("a", true), 11));
        assert!(!places.left_window(&owner("a", false), 11), "a handed tab may move");
        assert!(!places.left_window(&owner("b", true), 11), "no window of its own");
    }

    #[test]
    fn a_closed_window_is_forgotten_with_its_groups() {
        let mut places = Places::default();
        places.windows.insert("a".into(), 10);
        places.grouped("a", 10, 100);
        places.grouped("a", 11, 101);
        assert!(places.is_agent_window(10) && places.is_agent_group(100));
        assert!(places.window_removed(10));
        assert!(!places.is_agent_window(10) && !places.is_agent_group(100));
        assert!(places.is_agent_group(101));
        assert!(!places.window_removed(10), "nothing changed");
        let stored: Places = serde_json::from_str(&serde_json::to_string(&places).unwrap()).unwrap();
        assert_eq!(stored, places);
    }
}
