//! Live pictures of agents' tabs for the side panel: which tab of each agent is pictured (the one
//! it last acted in, else its newest), when (at once when a panel opens, shortly after the agent
//! acts, every few seconds otherwise), one capture at a time, and none at all while no panel is
//! open. The shell takes each picture with `Page.captureScreenshot` on the extension's own
//! debugger session (scaled down in the renderer, JPEG); the extension's own commands never pass
//! the daemon, so they are in no agent's events or trail.

use std::collections::BTreeMap;

use tabtunnel_wire::{TabId, TabInfo, DEFAULT_AGENT};

use crate::effect::{ChromeCall, Effect, Level, OpId, Out};

/// How often a picture is refreshed while its agent does nothing ("every few seconds").
pub const REFRESH_MS: f64 = 4_000.0;
/// How long after an agent acts its picture is taken (what it did has painted by then).
pub const AFTER_ACT_MS: f64 = 300.0;
/// The least time between two pictures of one agent, however fast it acts.
pub const MIN_GAP_MS: f64 = 1_000.0;
/// How long after a failed picture (the tab not painted, not the visible one) it is tried again.
pub const RETRY_MS: f64 = 10_000.0;

#[derive(Debug)]
struct Pictured {
    /// The tab pictured: the one the agent last acted in.
    tab: TabId,
    /// When its next picture is due.
    due: f64,
    /// When its last picture was asked for.
    last_at: Option<f64>,
    /// The last picture sent to the panels (a data URL), so that an unchanged one is not sent.
    last: Option<String>,
}

#[derive(Debug, Default)]
pub struct Pictures {
    /// Open panels (a side panel, or the panel as a window): pictures are taken while any is.
    panels: u32,
    /// Shared pages and their agents.
    tabs: BTreeMap<TabId, String>,
    /// Each agent with a page: its picture's state.
    agents: BTreeMap<String, Pictured>,
    /// The capture running (one at a time): its operation and agent.
    in_flight: Option<(OpId, String)>,
}

impl Pictures {
    /// Whether anything is pictured now: the hot path asks before saying an agent acted.
    pub fn wanted(&self) -> bool {
        self.panels > 0
    }

    pub fn panel_opened(&mut self, now: f64) {
        self.panels += 1;
        if self.panels == 1 {
            // What the panel shows first is what is there now.
            for pictured in self.agents.values_mut() {
                pictured.due = now;
                pictured.last = None;
            }
        }
    }

    pub fn panel_closed(&mut self) {
        self.panels = self.panels.saturating_sub(1);
    }

    /// A page shared, changed or unshared. Workers are not pictured, nor a tab the human shared
    /// from the panel without naming an agent: it is in the human's own window, in view.
    pub fn target_shared(&mut self, now: f64, info: &TabInfo) {
        if !info.kind.is_page() {
            return;
        }
        if info.agent == DEFAULT_AGENT && !info.created {
            return self.target_unshared(now, info.tab_id);
        }
        let moved = self.tabs.insert(info.tab_id, info.agent.clone()).filter(|a| *a != info.agent);
        if let Some(old) = moved {
            self.tab_gone(now, info.tab_id, &old);
        }
        self.agents.entry(info.agent.clone()).or_insert(Pictured {
            tab: info.tab_id,
            due: now,
            last_at: None,
            last: None,
        });
    }

    pub fn target_unshared(&mut self, now: f64, tab_id: TabId) {
        if let Some(agent) = self.tabs.remove(&tab_id) {
            self.tab_gone(now, tab_id, &agent);
        }
    }

    /// The agent's pictured tab went: its newest other page is pictured, or nothing.
    fn tab_gone(&mut self, now: f64, tab_id: TabId, agent: &str) {
        let Some(pictured) = self.agents.get_mut(agent) else { return };
        if pictured.tab != tab_id {
            return;
        }
        match self.tabs.iter().filter(|(_, a)| *a == agent).map(|(t, _)| *t).max() {
            Some(other) => {
                *pictured = Pictured { tab: other, due: now, last_at: pictured.last_at, last: None }
            }
            None => {
                self.agents.remove(agent);
            }
        }
    }

    /// A command of an agent's reached tab `tab_id`: that tab is the one pictured, soon.
    pub fn acted(&mut self, now: f64, tab_id: TabId) {
        if !self.wanted() {
            return;
        }
        let Some(agent) = self.tabs.get(&tab_id) else { return };
        let Some(pictured) = self.agents.get_mut(agent) else { return };
        if pictured.tab != tab_id {
            pictured.tab = tab_id;
            pictured.last = None;
        }
        let soon = now + AFTER_ACT_MS;
        let allowed = pictured.last_at.map_or(soon, |at| soon.max(at + MIN_GAP_MS));
        pictured.due = pictured.due.min(allowed);
    }

    /// The earliest due picture, when no capture runs and a panel is open.
    pub fn poll_timeout(&self) -> Option<f64> {
        if !self.wanted() || self.in_flight.is_some() {
            return None;
        }
        self.agents.values().map(|p| p.due).min_by(f64::total_cmp)
    }

    /// Starts the most overdue picture, if one is due.
    pub fn timeout<F>(&mut self, now: f64, out: &mut Out<F>) {
        if !self.wanted() || self.in_flight.is_some() {
            return;
        }
        let due =
            self.agents.iter_mut().filter(|(_, p)| p.due <= now).min_by(|a, b| a.1.due.total_cmp(&b.1.due));
        let Some((agent, pictured)) = due else { return };
        pictured.last_at = Some(now);
        // Not due again until this one is done.
        pictured.due = f64::INFINITY;
        let op = out.call(ChromeCall::CapturePicture { tab_id: pictured.tab });
        self.in_flight = Some((op, agent.clone()));
    }

    /// A capture finished: `Some` if it was ours (whatever its result).
    pub fn completed<F>(
        &mut self,
        now: f64,
        op: OpId,
        result: Result<String, String>,
        out: &mut Out<F>,
    ) -> bool {
        let agent = match self.in_flight.take() {
            Some((running, agent)) if running == op => agent,
            other => {
                self.in_flight = other;
                return false;
            }
        };
        let Some(pictured) = self.agents.get_mut(&agent) else { return true };
        match result {
            Ok(data) => {
                pictured.due = pictured.due.min(now + REFRESH_MS);
                // A panel closed meanwhile, or the same picture: nothing to tell.
                if self.panels > 0 && pictured.last.as_deref() != Some(data.as_str()) {
                    pictured.last = Some(data.clone());
                    out.push(Effect::Picture { agent, tab_id: pictured.tab, data });
                }
            }
            Err(e) => {
                pictured.due = pictured.due.min(now + RETRY_MS);
                out.log(Level::Log, format!("no picture of tab {} for {agent}: {e}", pictured.tab));
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::tab;

    fn page(tab_id: TabId, agent: &str) -> TabInfo {
        TabInfo { agent: agent.into(), ..tab(tab_id) }
    }

    /// The pictures machine, its effects, and the pictures it sent the panels.
    #[derive(Default)]
    struct T {
        p: Pictures,
        out: Out<String>,
        sent: Vec<(String, TabId, String)>,
    }

    impl T {
        /// Captures started since last asked (pictures sent go to `sent`).
        fn captures(&mut self) -> Vec<(OpId, TabId)> {
            let mut started = vec![];
            while let Some(effect) = self.out.pop() {
                match effect {
                    Effect::Chrome { op, call: ChromeCall::CapturePicture { tab_id } } => {
                        started.push((op, tab_id))
                    }
                    Effect::Picture { agent, tab_id, data } => self.sent.push((agent, tab_id, data)),
                    _ => {}
                }
            }
            started
        }

        /// Runs every capture due at `now` to completion, each picture `{data}{tab}`: the tabs.
        fn run_due(&mut self, now: f64, data: &str) -> Vec<TabId> {
            let mut tabs = vec![];
            while self.p.poll_timeout().is_some_and(|t| t <= now) {
                self.p.timeout(now, &mut self.out);
                let started = self.captures();
                assert_eq!(started.len(), 1, "one capture at a time");
                assert_eq!(self.p.poll_timeout(), None, "nothing else while one runs");
                let (op, tab_id) = started[0];
                tabs.push(tab_id);
                assert!(self.p.completed(now, op, Ok(format!("{data}{tab_id}")), &mut self.out));
            }
            self.captures();
            tabs
        }
    }

    #[test]
    fn nothing_is_pictured_while_no_panel_is_open() {
        let mut t = T::default();
        t.p.target_shared(0.0, &page(1, "a"));
        t.p.acted(10.0, 1);
        assert!(!t.p.wanted());
        assert_eq!(t.p.poll_timeout(), None, "no timer at all");
        t.p.timeout(1e9, &mut t.out);
        assert!(t.captures().is_empty());

        t.p.panel_opened(100.0);
        assert_eq!(t.p.poll_timeout(), Some(100.0), "at once when a panel opens");
        t.p.panel_opened(100.0);
        t.p.panel_closed();
        assert!(t.p.wanted(), "another panel is still open");
        t.p.panel_closed();
        assert_eq!(t.p.poll_timeout(), None);
        t.p.timeout(1e9, &mut t.out);
        t.p.acted(1e9, 1);
        assert!(t.captures().is_empty());
    }

    #[test]
    fn each_agent_is_pictured_when_the_panel_opens_then_every_few_seconds() {
        let mut t = T::default();
        t.p.target_shared(0.0, &page(1, "a"));
        t.p.target_shared(0.0, &page(2, "b"));
        t.p.target_shared(0.0, &page(3, "a"));
        t.p.panel_opened(50.0);
        let mut first = t.run_due(50.0, "x");
        first.sort();
        assert_eq!(first, [1, 2], "a's first tab until it acts, and b's");
        assert_eq!(t.sent.len(), 2);
        assert_eq!(t.p.poll_timeout(), Some(50.0 + REFRESH_MS));
        assert!(t.run_due(50.0 + REFRESH_MS - 1.0, "x").is_empty());
        assert_eq!(t.run_due(50.0 + REFRESH_MS, "x").len(), 2);
        assert_eq!(t.sent.len(), 2, "an unchanged picture is not sent again");
        t.run_due(50.0 + 2.0 * REFRESH_MS, "z");
        assert_eq!(t.sent.len(), 4, "a changed one is");
    }

    #[test]
    fn an_agent_acting_is_pictured_soon_in_the_tab_it_acted_in_but_not_more_than_once_a_second() {
        let mut t = T::default();
        t.p.target_shared(0.0, &page(1, "a"));
        t.p.target_shared(0.0, &page(2, "a"));
        t.p.panel_opened(0.0);
        t.run_due(0.0, "x");
        t.p.acted(100.0, 1);
        assert_eq!(t.p.poll_timeout(), Some(MIN_GAP_MS), "at most one a second");
        assert_eq!(t.run_due(MIN_GAP_MS, "y"), [1]);
        assert_eq!(t.sent.last(), Some(&("a".into(), 1, "y1".into())));
        t.p.acted(4_500.0, 2);
        assert_eq!(t.p.poll_timeout(), Some(4_500.0 + AFTER_ACT_MS), "a moment after it acts");
        t.p.acted(4_600.0, 2);
        assert_eq!(t.p.poll_timeout(), Some(4_500.0 + AFTER_ACT_MS), "acting on does not put it off");
        assert_eq!(t.run_due(4_800.0, "y"), [2], "the tab it acted in last");
        t.p.acted(4_900.0, 9);
        assert_eq!(t.p.poll_timeout(), Some(4_800.0 + REFRESH_MS), "not a tab of an agent's");
    }

    #[test]
    fn a_failed_picture_is_tried_again_later_and_a_result_after_closing_is_not_sent() {
        let mut t = T::default();
        t.p.target_shared(0.0, &page(1, "a"));
        t.p.panel_opened(0.0);
        t.p.timeout(0.0, &mut t.out);
        let (op, _) = t.captures()[0];
        assert!(!t.p.completed(0.0, OpId(op.0 + 99), Ok("stale".into()), &mut t.out), "not ours");
        assert!(t.p.completed(2_000.0, op, Err("the tab did not paint".into()), &mut t.out));
        assert_eq!(t.p.poll_timeout(), Some(2_000.0 + RETRY_MS));
        t.p.timeout(20_000.0, &mut t.out);
        let (op, _) = t.captures()[0];
        t.p.panel_closed();
        assert!(t.p.completed(20_100.0, op, Ok("late".into()), &mut t.out));
        t.captures();
        assert!(t.sent.is_empty());
        t.p.panel_opened(30_000.0);
        assert_eq!(t.p.poll_timeout(), Some(30_000.0), "pictured afresh for the next panel");
    }

    #[test]
    fn an_unshared_tab_hands_the_picture_to_the_agents_other_tab_and_workers_are_not_pictured() {
        let mut t = T::default();
        t.p.target_shared(0.0, &page(1, "a"));
        t.p.target_shared(0.0, &page(2, "a"));
        let worker = TabInfo { kind: tabtunnel_wire::TargetKind::ServiceWorker, ..page(-5, "a") };
        t.p.target_shared(0.0, &worker);
        t.p.panel_opened(0.0);
        assert_eq!(t.run_due(0.0, "x"), [1]);
        t.p.acted(10.0, -5);
        t.p.target_unshared(2_000.0, 1);
        assert_eq!(t.run_due(2_000.0, "x"), [2]);
        // Handed to another agent: pictured for that one.
        t.p.target_shared(3_000.0, &page(2, "b"));
        assert_eq!(t.run_due(3_000.0, "x"), [2]);
        assert_eq!(t.sent.last().map(|s| s.0.as_str()), Some("b"));
        assert!(!t.p.agents.contains_key("a"), "a has no page left");
    }

    #[test]
    fn a_tab_the_human_shared_is_not_pictured_but_one_the_plain_endpoint_opened_is() {
        let mut t = T::default();
        t.p.panel_opened(0.0);
        t.p.target_shared(0.0, &tab(1));
        assert_eq!(t.p.poll_timeout(), None, "the human's own tab, in their window");
        t.p.target_shared(0.0, &TabInfo { created: true, ..tab(2) });
        assert_eq!(t.run_due(0.0, "x"), [2]);
        // Taken back by the human: no longer pictured.
        t.p.target_shared(0.0, &page(3, "a"));
        t.p.target_shared(10.0, &tab(3));
        assert_eq!(t.run_due(10.0, "x"), Vec::<TabId>::new());
        assert!(!t.p.agents.contains_key("a"));
    }
}
