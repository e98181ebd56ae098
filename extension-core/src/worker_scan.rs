//! The worker scan in explicit steps (the bookkeeping is [`crate::workers`]): list Chrome's
//! worker targets (an operation), end the known workers no longer listed, then describe each
//! new one whose origin is an agent's page's (an operation each, one at a time: a debugger
//! session opened for the question) and announce those that are service or shared workers.
//!
//! The shell runs each [`Step`] and reports its outcome with the step's [`OpId`]; one scan runs
//! at a time, and an outcome for any other operation (a scan given up meanwhile) changes nothing.

use std::collections::VecDeque;

use tabtunnel_wire::{TabId, TabInfo, UnshareReason};

use crate::effect::{OpId, OpIds};
use crate::workers::{owning_agent, Workers};

/// How often the browser's targets are looked at while tabs are shared. puppeteer's
/// `waitForTarget` and Playwright's `serviceWorker` event wait for as long as it takes.
pub const SCAN_MS: u32 = 500;

/// A worker target `chrome.debugger.getTargets()` listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub id: String,
    pub url: String,
}

/// What `Target.getTargetInfo` said of a worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Described {
    /// CDP's `type` (`service_worker`, `shared_worker`, `worker`, ...).
    pub cdp_type: String,
    pub url: String,
    pub title: String,
    pub browser_context_id: String,
}

/// What the shell does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// `chrome.debugger.getTargets()`, its workers; answered by [`WorkerScan::listed`].
    List { op: OpId },
    /// Attach to the target, `Target.getTargetInfo`, detach; answered by
    /// [`WorkerScan::described`].
    Describe { op: OpId, target_id: String },
    /// A known worker is gone: the daemon hears it (our session closed with it).
    End { handle: TabId, reason: UnshareReason },
    /// A service or shared worker to announce; recorded (`Workers::announce`) once the daemon
    /// took it (the kill switch refuses it).
    Announce(TabInfo),
}

#[derive(Debug, Default)]
enum State {
    #[default]
    Idle,
    Listing(OpId),
    /// Describing `target_id` for `agent`; `queue`: the listed targets still to look at.
    Describing {
        op: OpId,
        target_id: String,
        agent: String,
        queue: VecDeque<Listed>,
    },
}

#[derive(Debug, Default)]
pub struct WorkerScan {
    state: State,
    ops: OpIds,
}

impl WorkerScan {
    /// A scan begins, unless one runs (or it is not `worth_it`: nothing shared, or the kill
    /// switch is on).
    pub fn begin(&mut self, worth_it: bool) -> Option<Step> {
        if !worth_it || !matches!(self.state, State::Idle) {
            return None;
        }
        let op = self.ops.issue();
        self.state = State::Listing(op);
        Some(Step::List { op })
    }

    /// Chrome's worker targets, or why there are none: the known ones no longer listed end,
    /// then the first new one an agent's page owns is described. `pages`: the shared pages with
    /// the time each last changed its URL.
    pub fn listed<'a>(
        &mut self,
        op: OpId,
        listed: Result<Vec<Listed>, String>,
        workers: &mut Workers,
        pages: impl IntoIterator<Item = (&'a TabInfo, f64)> + Clone,
    ) -> Vec<Step> {
        if !matches!(self.state, State::Listing(o) if o == op) {
            return Vec::new();
        }
        let Ok(listed) = listed else {
            self.state = State::Idle;
            return Vec::new();
        };
        let ids: Vec<&str> = listed.iter().map(|t| t.id.as_str()).collect();
        let mut steps: Vec<Step> = workers
            .gone(&ids)
            .into_iter()
            .map(|handle| Step::End { handle, reason: UnshareReason::Closed })
            .collect();
        steps.extend(self.next(listed.into(), workers, pages));
        steps
    }

    /// What the worker being described is (or why it could not be told: it ended meanwhile):
    /// announced if it is a service or shared worker, passed over for good if not; then the
    /// next new one.
    pub fn described<'a>(
        &mut self,
        op: OpId,
        described: Result<Described, String>,
        workers: &mut Workers,
        pages: impl IntoIterator<Item = (&'a TabInfo, f64)> + Clone,
    ) -> Vec<Step> {
        let State::Describing { op: current, .. } = &self.state else { return Vec::new() };
        if *current != op {
            return Vec::new();
        }
        let State::Describing { target_id, agent, queue, .. } = std::mem::take(&mut self.state) else {
            unreachable!("matched above")
        };
        let mut steps = Vec::new();
        if let Ok(d) = described {
            match workers.describe(&target_id, &d.cdp_type, d.url, d.title, d.browser_context_id, agent) {
                Some(info) => steps.push(Step::Announce(info)),
                None => workers.pass_over(target_id),
            }
        }
        steps.extend(self.next(queue, workers, pages));
        steps
    }

    /// The scan in progress is given up (the kill switch stops every worker): what its
    /// operations answer later is dropped.
    pub fn stop(&mut self) {
        self.state = State::Idle;
    }

    /// The next listed target to describe (new, and of an agent's page's origin), or the end of
    /// the scan.
    fn next<'a>(
        &mut self,
        mut queue: VecDeque<Listed>,
        workers: &Workers,
        pages: impl IntoIterator<Item = (&'a TabInfo, f64)> + Clone,
    ) -> Option<Step> {
        while let Some(target) = queue.pop_front() {
            if !workers.is_new(&target.id) {
                continue;
            }
            let Some(agent) = owning_agent(&target.url, pages.clone()) else { continue };
            let op = self.ops.issue();
            self.state =
                State::Describing { op, target_id: target.id.clone(), agent: agent.to_owned(), queue };
            return Some(Step::Describe { op, target_id: target.id });
        }
        self.state = State::Idle;
        None
    }
}

#[cfg(test)]
mod tests {
    use tabtunnel_wire::TargetKind;

    use super::*;
    use crate::testing::FakeTargets;

    fn with_pages() -> FakeTargets {
        let mut chrome = FakeTargets::default();
        chrome.page(1, "scout", "https://shop.example/cart", 10.0);
        chrome.page(2, "writer", "https://blog.example/", 20.0);
        chrome
    }

    #[test]
    fn a_service_worker_of_an_agents_page_is_announced_as_that_agents() {
        let mut chrome = with_pages();
        chrome.worker("W1", "https://shop.example/sw.js", "service_worker");
        chrome.worker("W2", "https://elsewhere.example/sw.js", "service_worker");
        chrome.scan();
        let announced: Vec<_> =
            chrome.announced.iter().map(|t| (t.target_id.as_str(), t.agent.as_str())).collect();
        assert_eq!(announced, [("W1", "scout")]);
        assert_eq!(chrome.announced[0].kind, TargetKind::ServiceWorker);
        assert!(chrome.announced[0].tab_id < 0, "a handle, never a tab's id");
        assert_eq!(chrome.described, ["W1"], "a worker of no shared page's origin is not looked at");
        chrome.scan();
        assert_eq!((chrome.announced.len(), chrome.described.len()), (1, 1), "once");
    }

    #[test]
    fn new_workers_are_described_one_at_a_time_and_a_dedicated_one_only_once() {
        let mut chrome = with_pages();
        chrome.worker("D1", "https://shop.example/worker.js", "worker");
        chrome.worker("S1", "https://blog.example/shared.js", "shared_worker");
        let first = chrome.scan.begin(true).unwrap();
        let after_list = chrome.step(first);
        assert!(matches!(&after_list[..], [Step::Describe { target_id, .. }] if target_id == "D1"));
        let after_d1 = chrome.step(after_list[0].clone());
        assert!(matches!(&after_d1[..], [Step::Describe { target_id, .. }] if target_id == "S1"));
        chrome.run(after_d1.into());
        assert_eq!(chrome.announced.iter().map(|t| t.agent.as_str()).collect::<Vec<_>>(), ["writer"]);
        chrome.scan();
        assert_eq!(chrome.described, ["D1", "S1"], "the dedicated worker is passed over for good");
    }

    #[test]
    fn a_worker_no_longer_listed_ends_before_anything_is_described() {
        let mut chrome = with_pages();
        chrome.worker("W1", "https://shop.example/sw.js", "service_worker");
        chrome.scan();
        let handle = chrome.announced[0].tab_id;
        chrome.targets.clear();
        chrome.worker("W2", "https://shop.example/other-sw.js", "service_worker");
        let list = chrome.scan.begin(true).unwrap();
        let steps = chrome.step(list);
        assert!(
            matches!(&steps[..], [Step::End { handle: h, reason: UnshareReason::Closed }, Step::Describe { .. }] if *h == handle)
        );
    }

    #[test]
    fn a_worker_that_ends_while_it_is_described_is_not_announced_and_is_looked_at_again() {
        let mut chrome = with_pages();
        chrome.worker("W1", "https://shop.example/sw.js", "service_worker");
        let list = chrome.scan.begin(true).unwrap();
        let describe = chrome.step(list).remove(0);
        let saved = std::mem::take(&mut chrome.targets); // it ends now
        chrome.step(describe);
        assert!(chrome.announced.is_empty());
        chrome.targets = saved; // a worker of the same id listed again is new
        chrome.scan();
        assert_eq!(chrome.announced.len(), 1);
    }

    #[test]
    fn one_scan_at_a_time_and_none_while_nothing_is_shared_or_the_switch_is_on() {
        let mut chrome = with_pages();
        assert_eq!(chrome.scan.begin(false), None);
        let list = chrome.scan.begin(true).unwrap();
        assert_eq!(chrome.scan.begin(true), None, "one scan at a time");
        chrome.step(list);
        assert!(chrome.scan.begin(true).is_some(), "a scan that found nothing new has ended");
    }

    #[test]
    fn a_describe_answered_after_the_scan_was_stopped_is_dropped() {
        let mut chrome = with_pages();
        chrome.worker("W1", "https://shop.example/sw.js", "service_worker");
        let list = chrome.scan.begin(true).unwrap();
        let Step::Describe { op: stale, .. } = chrome.step(list).remove(0) else { panic!("describe") };
        // The kill switch is engaged and released while Chrome describes W1; a new scan starts.
        chrome.scan.stop();
        let list = chrome.scan.begin(true).unwrap();
        let describe = chrome.step(list).remove(0);
        let late = chrome.describe("W1");
        let pages = chrome.pages.iter().map(|(t, at)| (t, *at));
        assert_eq!(chrome.scan.described(stale, late, &mut chrome.workers, pages), []);
        chrome.run([describe].into());
        assert_eq!(chrome.announced.len(), 1, "announced once, by the scan that asked");
    }

    #[test]
    fn a_list_answered_after_the_scan_was_stopped_is_dropped() {
        let mut chrome = with_pages();
        chrome.worker("W1", "https://shop.example/sw.js", "service_worker");
        let Some(Step::List { op: stale }) = chrome.scan.begin(true) else { panic!("list") };
        chrome.scan.stop();
        let pages = chrome.pages.iter().map(|(t, at)| (t, *at));
        assert_eq!(chrome.scan.listed(stale, Ok(chrome.listed()), &mut chrome.workers, pages.clone()), []);
        let list = chrome.scan.begin(true).expect("not running: a new scan may begin");
        assert_eq!(chrome.scan.listed(stale, Ok(chrome.listed()), &mut chrome.workers, pages), []);
        chrome.run([list].into());
        assert_eq!(chrome.described, ["W1"], "described once, for the scan that asked");
    }

    #[test]
    fn a_worker_the_daemon_refused_is_offered_again_by_the_next_scan() {
        let mut chrome = with_pages();
        chrome.worker("W1", "https://shop.example/sw.js", "service_worker");
        chrome.refuse = true;
        chrome.scan();
        chrome.refuse = false;
        chrome.scan();
        assert_eq!(chrome.announced.len(), 1);
        assert_eq!(chrome.described, ["W1", "W1"]);
    }

    #[test]
    fn a_failed_listing_ends_the_scan() {
        let mut chrome = with_pages();
        let Some(Step::List { op }) = chrome.scan.begin(true) else { panic!("list") };
        let pages = chrome.pages.iter().map(|(t, at)| (t, *at));
        assert_eq!(chrome.scan.listed(op, Err("no".into()), &mut chrome.workers, pages), []);
        assert!(chrome.scan.begin(true).is_some());
    }
}
