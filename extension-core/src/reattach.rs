//! A shared tab's debugger session started afresh, in explicit steps.
//!
//! - A reset (the daemon's `ResetTab`: the tab's last client left; or the daemon socket lost,
//!   whose clients all went): the writes the guard holds fail, the debugger detaches and attaches
//!   again, so the next client finds a clean session. The page runs on meanwhile, and an agent
//!   starts a reset at will (by leaving), so the browser refuses every write of the tab from
//!   before the detach until the guard is armed again ([`Step::Unguard`], [`Step::Guarded`]; a
//!   tab unshared meanwhile is no longer refused).
//! - A re-attach (the debugger detached with `target_closed` from a tab that may live on, e.g.
//!   one gone to a page Chrome lets no debugger on): after [`REATTACH_DELAY_MS`] the tab is looked
//!   at and attached again; its clients are told it went and came back
//!   ([`Reattached::StartOver`]) and their earlier commands are answered "Target closed"
//!   ([`Epochs`]).
//!
//! An attach that fails unshares the tab as `Detached`. One flow at a time per tab, after the
//! tab's other steps (the shell's gate, [`Step::Hold`]), its clients' commands held back until
//! [`Step::Release`]. Requests arriving meanwhile wait; one the same as the last waiting, or a
//! `target_closed` while a re-attach has not attached yet, asks for the same fresh session and
//! runs once. A tab closed or unshared, or the kill switch, ends a flow without re-sharing. The
//! shell runs each [`Step`] and reports its outcome with the step's [`OpId`]
//! ([`Reattach::completed`]); an outcome of any other operation changes nothing.

use std::collections::{BTreeMap, VecDeque};

use tabtunnel_wire::{TabId, TabInfo, UnshareReason};

use crate::effect::{OpId, OpIds};
use crate::epochs::Epochs;
use crate::sharing::{Owner, Reattached, Sharing};

/// After `target_closed` on a living tab, how long before it is attached again.
pub const REATTACH_DELAY_MS: f64 = 150.0;

/// Why a tab's session starts afresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// The tab's last client left (or the daemon went): detach, attach again.
    Reset,
    /// The session died under its clients (`target_closed`): attach again if the tab lives.
    TargetClosed,
}

/// What the flows read and change of the rest of the worker.
pub struct Tabs<'a> {
    pub sharing: &'a mut Sharing,
    pub epochs: &'a mut Epochs,
    pub kill_switch: bool,
}

/// What the shell does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// When the tab's steps begun before are done (a bring-forward), [`Done::Turn`]; its
    /// clients' commands wait from now until the [`Step::Release`] of this `op`.
    Hold {
        op: OpId,
        tab_id: TabId,
    },
    /// The flow of `hold` ended: the tab's commands go on.
    Release {
        hold: OpId,
    },
    /// The browser refuses every write of the tab (its debugger goes away): [`Done::Unguarded`].
    Unguard {
        op: OpId,
        tab_id: TabId,
    },
    /// The tab's guard is armed again: its writes are no longer refused.
    Guarded {
        tab_id: TabId,
    },
    /// Fail the writes the guard holds in the tab and forget its gestures:
    /// [`Done::GesturesDropped`].
    DropGestures {
        op: OpId,
        tab_id: TabId,
    },
    /// `chrome.debugger.detach`: [`Done::Detached`].
    Detach {
        op: OpId,
        tab_id: TabId,
    },
    /// Whether the tab still exists (`chrome.tabs.get`): [`Done::Looked`].
    Look {
        op: OpId,
        tab_id: TabId,
    },
    /// Attach with the guard armed and describe the tab as `owner`'s: [`Done::Attached`].
    Attach {
        op: OpId,
        tab_id: TabId,
        owner: Owner,
    },
    /// The tab's clients start over: the daemon hears it unshared (`Detached`), then shared.
    StartOver(TabInfo),
    /// The daemon hears the tab's new description.
    Changed(TabInfo),
    /// Unshare the tab.
    Unshare {
        tab_id: TabId,
        reason: UnshareReason,
    },
    Log(String),
    /// Call [`Reattach::timeout`] at this time (or later).
    WakeAt(f64),
}

/// The outcome of a step, for [`Reattach::completed`] (errors as messages).
#[derive(Debug)]
pub enum Done {
    Turn,
    Unguarded,
    GesturesDropped,
    Detached(Result<(), String>),
    /// Whether the tab exists.
    Looked(bool),
    Attached(Result<TabInfo, String>),
}

#[derive(Debug, Clone, Copy)]
enum At {
    /// Waiting for [`Done::Turn`] of the flow's hold.
    Turn,
    Unguarding(OpId),
    DroppingGestures(OpId),
    Detaching(OpId),
    /// Until this time, after `target_closed`.
    Delay(f64),
    Looking(OpId),
    Attaching(OpId),
    /// Detaching a session attached for a tab unshared meanwhile.
    LettingGo(OpId),
}

#[derive(Debug)]
struct Flow {
    request: Request,
    hold: OpId,
    at: At,
    /// The tab closed or was unshared: nothing more is attached or announced.
    let_go: bool,
    /// Its writes are refused until it is attached again ([`Step::Unguard`]).
    unguarded: bool,
}

impl Flow {
    fn awaits(&self) -> Option<OpId> {
        match self.at {
            At::Turn => Some(self.hold),
            At::Unguarding(op)
            | At::DroppingGestures(op)
            | At::Detaching(op)
            | At::Looking(op)
            | At::Attaching(op)
            | At::LettingGo(op) => Some(op),
            At::Delay(_) => None,
        }
    }

    /// Nothing attached yet: ending now needs no detach.
    fn stoppable(&self) -> bool {
        matches!(self.at, At::Turn | At::Delay(_))
    }

    fn when(&self) -> &'static str {
        match self.request {
            Request::Reset => "after a reset",
            Request::TargetClosed => "after target_closed",
        }
    }
}

/// A tab's flow, and the requests waiting behind it.
#[derive(Debug)]
struct Tab {
    flow: Flow,
    waiting: VecDeque<Request>,
}

#[derive(Debug, Default)]
pub struct Reattach {
    tabs: BTreeMap<TabId, Tab>,
    ops: OpIds,
}

impl Reattach {
    /// A tab's session is to start afresh.
    pub fn request(&mut self, tab_id: TabId, request: Request) -> Vec<Step> {
        let mut steps = Vec::new();
        match self.tabs.get_mut(&tab_id) {
            Some(tab) => {
                // Not attached yet: the session it will attach is the fresh one asked for.
                let same_session = request == Request::TargetClosed
                    && tab.flow.request == Request::TargetClosed
                    && tab.waiting.is_empty()
                    && matches!(tab.flow.at, At::Turn | At::Delay(_) | At::Looking(_));
                if !same_session && tab.waiting.back() != Some(&request) {
                    tab.waiting.push_back(request);
                }
            }
            None => {
                let flow = self.begin(tab_id, request, &mut steps);
                self.tabs.insert(tab_id, Tab { flow, waiting: VecDeque::new() });
            }
        }
        steps
    }

    /// The outcome of the step `op`.
    pub fn completed(&mut self, now: f64, op: OpId, done: Done, tabs: &mut Tabs) -> Vec<Step> {
        let Some((&tab_id, _)) = self.tabs.iter().find(|(_, t)| t.flow.awaits() == Some(op)) else {
            return Vec::new();
        };
        let mut steps = Vec::new();
        let flow = &self.tabs[&tab_id].flow;
        let (request, let_go, when, unguarded) = (flow.request, flow.let_go, flow.when(), flow.unguarded);
        let stopped = let_go || tabs.kill_switch;
        let next = match (flow.at, done) {
            (At::Turn, Done::Turn) if stopped => None,
            // A tab being let go is detached soon; a reset would let its page run unguarded
            // meanwhile.
            (At::Turn, Done::Turn) if request == Request::Reset => {
                let resets = tabs.sharing.contains_key(&tab_id) && !tabs.sharing.is_leaving(tab_id);
                resets.then(|| {
                    let op = self.ops.issue();
                    steps.push(Step::Unguard { op, tab_id });
                    At::Unguarding(op)
                })
            }
            (At::Turn, Done::Turn) => {
                let at = now + REATTACH_DELAY_MS;
                steps.push(Step::WakeAt(at));
                Some(At::Delay(at))
            }
            (At::Unguarding(_), Done::Unguarded) => (!stopped).then(|| {
                let op = self.ops.issue();
                steps.push(Step::DropGestures { op, tab_id });
                At::DroppingGestures(op)
            }),
            (At::DroppingGestures(_), Done::GesturesDropped) => (!stopped).then(|| {
                let op = self.ops.issue();
                steps.push(Step::Detach { op, tab_id });
                At::Detaching(op)
            }),
            (At::Detaching(_), Done::Detached(detached)) => {
                if let Err(e) = detached {
                    steps.push(Step::Log(format!("reset: detach from tab {tab_id}: {e}")));
                }
                (!stopped).then(|| self.attach(tab_id, tabs, &mut steps)).flatten()
            }
            (At::Looking(_), Done::Looked(_)) if stopped => None,
            (At::Looking(_), Done::Looked(false)) => {
                self.unshare(tab_id, tabs.sharing.closed(tab_id), &mut steps);
                None
            }
            (At::Looking(_), Done::Looked(true)) => self.attach(tab_id, tabs, &mut steps),
            (At::Attaching(_), Done::Attached(Ok(_))) if let_go || !tabs.sharing.contains_key(&tab_id) => {
                let op = self.ops.issue();
                steps.push(Step::Detach { op, tab_id });
                Some(At::LettingGo(op))
            }
            // Unshared already, or the kill switch's stop lets the tab go: nothing is announced.
            (At::Attaching(_), Done::Attached(_)) if stopped => None,
            (At::Attaching(_), Done::Attached(Err(e))) => {
                steps.push(Step::Log(format!("could not re-attach tab {tab_id} {when}: {e}")));
                self.unshare(tab_id, UnshareReason::Detached, &mut steps);
                None
            }
            (At::Attaching(_), Done::Attached(Ok(info))) => {
                if unguarded {
                    steps.push(Step::Guarded { tab_id });
                }
                let clients_lost_state = request == Request::TargetClosed;
                match tabs.sharing.reattached(tabs.epochs, info, clients_lost_state) {
                    Reattached::StartOver(info) => {
                        steps.push(Step::Log(format!(
                            "re-attached tab {tab_id} {when}; its clients start over"
                        )));
                        steps.push(Step::StartOver(info));
                    }
                    Reattached::Changed(changed) => {
                        steps.push(Step::Log(format!("re-attached tab {tab_id} {when}")));
                        steps.extend(changed.map(Step::Changed));
                    }
                    Reattached::Gone => unreachable!("shared, checked above"),
                }
                None
            }
            (At::LettingGo(_), Done::Detached(_)) => None,
            // An outcome of another kind than the step's: nothing to go on with.
            (at, _) => Some(at),
        };
        match next {
            Some(at) => {
                let flow = &mut self.tabs.get_mut(&tab_id).expect("found above").flow;
                flow.unguarded |= matches!(at, At::Unguarding(_));
                flow.at = at;
            }
            None => self.end(tab_id, &mut steps),
        }
        steps
    }

    /// Delays that ran out: each tab still shared is looked at.
    pub fn timeout(&mut self, now: f64, tabs: &Tabs) -> Vec<Step> {
        let due: Vec<TabId> = self
            .tabs
            .iter()
            .filter(|(_, t)| matches!(t.flow.at, At::Delay(at) if at <= now))
            .map(|(id, _)| *id)
            .collect();
        let mut steps = Vec::new();
        for tab_id in due {
            // onRemoved (or an unshare) got there first.
            if tabs.kill_switch || !tabs.sharing.contains_key(&tab_id) {
                self.end(tab_id, &mut steps);
                continue;
            }
            let op = self.ops.issue();
            steps.push(Step::Look { op, tab_id });
            self.tabs.get_mut(&tab_id).expect("listed above").flow.at = At::Looking(op);
        }
        steps
    }

    /// When [`Reattach::timeout`] has something to do.
    pub fn next_deadline(&self) -> Option<f64> {
        let delays = self.tabs.values().filter_map(|t| match t.flow.at {
            At::Delay(at) => Some(at),
            _ => None,
        });
        delays.min_by(f64::total_cmp)
    }

    /// The tab closed or was unshared: its flow attaches nothing more and announces nothing,
    /// and what waited behind it is dropped. The holds to release now.
    pub fn let_go(&mut self, tab_id: TabId) -> Vec<OpId> {
        if let Some(tab) = self.tabs.get_mut(&tab_id) {
            tab.flow.let_go = true;
        }
        self.stop(tab_id)
    }

    /// The kill switch was engaged: no flow attaches anything more (its stop lets each tab go).
    /// The holds to release now.
    pub fn kill_switch_engaged(&mut self) -> Vec<OpId> {
        let tabs: Vec<TabId> = self.tabs.keys().copied().collect();
        tabs.into_iter().flat_map(|tab_id| self.stop(tab_id)).collect()
    }

    /// Drops what waits behind the tab's flow, and ends the flow if it attached nothing yet
    /// (an answer to it later is stale).
    fn stop(&mut self, tab_id: TabId) -> Vec<OpId> {
        let Some(tab) = self.tabs.get_mut(&tab_id) else { return Vec::new() };
        tab.waiting.clear();
        if !tab.flow.stoppable() {
            return Vec::new();
        }
        let hold = tab.flow.hold;
        self.tabs.remove(&tab_id);
        vec![hold]
    }

    fn begin(&mut self, tab_id: TabId, request: Request, steps: &mut Vec<Step>) -> Flow {
        let hold = self.ops.issue();
        steps.push(Step::Hold { op: hold, tab_id });
        Flow { request, hold, at: At::Turn, let_go: false, unguarded: false }
    }

    fn attach(&mut self, tab_id: TabId, tabs: &Tabs, steps: &mut Vec<Step>) -> Option<At> {
        let owner = tabs.sharing.owner_of(tab_id)?;
        let op = self.ops.issue();
        steps.push(Step::Attach { op, tab_id, owner });
        Some(At::Attaching(op))
    }

    /// The tab is unshared: nothing waiting behind the flow runs.
    fn unshare(&mut self, tab_id: TabId, reason: UnshareReason, steps: &mut Vec<Step>) {
        if let Some(tab) = self.tabs.get_mut(&tab_id) {
            tab.waiting.clear();
        }
        steps.push(Step::Unshare { tab_id, reason });
    }

    /// The tab's flow ended: its hold is released, and the next request waiting begins.
    fn end(&mut self, tab_id: TabId, steps: &mut Vec<Step>) {
        let Some(mut tab) = self.tabs.remove(&tab_id) else { return };
        steps.push(Step::Release { hold: tab.flow.hold });
        if let Some(request) = tab.waiting.pop_front() {
            let flow = self.begin(tab_id, request, steps);
            self.tabs.insert(tab_id, Tab { flow, waiting: tab.waiting });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::epochs::TARGET_CLOSED;
    use crate::sharing::tests::tab;

    /// A fake Chrome: shared tabs, the steps waiting for their outcome, what each answers.
    #[derive(Default)]
    struct Chrome {
        machine: Reattach,
        sharing: Sharing,
        epochs: Epochs,
        kill_switch: bool,
        closed: Vec<TabId>,
        /// Chrome refuses to attach (a restricted page).
        refuse: bool,
        /// The tab's title after an attach (a changed description).
        title: String,
        pending: VecDeque<Step>,
        log: Vec<Step>,
        /// Holds taken and not yet released, in order.
        holding: Vec<OpId>,
        now: f64,
    }

    fn op_of(step: &Step) -> Option<OpId> {
        match step {
            Step::Hold { op, .. }
            | Step::Unguard { op, .. }
            | Step::DropGestures { op, .. }
            | Step::Detach { op, .. }
            | Step::Look { op, .. }
            | Step::Attach { op, .. } => Some(*op),
            _ => None,
        }
    }

    impl Chrome {
        fn sharing(tab_ids: &[TabId]) -> Chrome {
            let mut chrome = Chrome::default();
            for &tab_id in tab_ids {
                chrome.sharing.add(tab(tab_id, "a", false), 0.0);
            }
            chrome
        }

        fn take(&mut self, steps: Vec<Step>) {
            for step in steps {
                self.log.push(step.clone());
                match step {
                    Step::Hold { op, .. } => {
                        self.holding.push(op);
                        self.pending.push_back(step);
                    }
                    Step::Release { hold } => self.holding.retain(|h| *h != hold),
                    Step::Unshare { tab_id, .. } => self.unshare(tab_id),
                    step if op_of(&step).is_some() => self.pending.push_back(step),
                    _ => {}
                }
            }
        }

        fn with(&mut self, f: impl FnOnce(&mut Reattach, &mut Tabs) -> Vec<Step>) {
            let mut machine = std::mem::take(&mut self.machine);
            let mut tabs =
                Tabs { sharing: &mut self.sharing, epochs: &mut self.epochs, kill_switch: self.kill_switch };
            let steps = f(&mut machine, &mut tabs);
            self.machine = machine;
            self.take(steps);
        }

        fn request(&mut self, tab_id: TabId, request: Request) {
            self.with(|m, _| m.request(tab_id, request));
        }

        /// The shell's `sharing::unshare`.
        fn unshare(&mut self, tab_id: TabId) {
            self.sharing.unshare(tab_id);
            let holds = self.machine.let_go(tab_id);
            self.holding.retain(|h| !holds.contains(h));
        }

        fn engage_kill_switch(&mut self) {
            self.kill_switch = true;
            let holds = self.machine.kill_switch_engaged();
            self.holding.retain(|h| !holds.contains(h));
        }

        fn outcome(&self, step: &Step) -> Done {
            let alive = |tab_id: &TabId| !self.closed.contains(tab_id);
            match step {
                Step::Hold { .. } => Done::Turn,
                Step::Unguard { .. } => Done::Unguarded,
                Step::DropGestures { .. } => Done::GesturesDropped,
                Step::Detach { .. } => Done::Detached(Ok(())),
                Step::Look { tab_id, .. } => Done::Looked(alive(tab_id)),
                Step::Attach { tab_id, owner, .. } => Done::Attached(match alive(tab_id) && !self.refuse {
                    true => {
                        Ok(TabInfo { title: self.title.clone(), ..tab(*tab_id, &owner.agent, owner.created) })
                    }
                    false => Err("Chrome refused to attach".into()),
                }),
                _ => unreachable!("no outcome"),
            }
        }

        /// Chrome does the oldest step waiting; false when none waits.
        fn step(&mut self) -> bool {
            let Some(step) = self.pending.pop_front() else { return false };
            let done = self.outcome(&step);
            let (now, op) = (self.now, op_of(&step).unwrap());
            self.with(|m, t| m.completed(now, op, done, t));
            true
        }

        /// Time passes to the next deadline.
        fn wake(&mut self) -> bool {
            let Some(at) = self.machine.next_deadline() else { return false };
            self.now = at;
            self.with(|m, t| m.timeout(at, t));
            true
        }

        fn run(&mut self) {
            while self.step() || self.wake() {}
        }

        fn count(&self, what: impl Fn(&Step) -> bool) -> usize {
            self.log.iter().filter(|s| what(s)).count()
        }

        fn attaches(&self) -> usize {
            self.count(|s| matches!(s, Step::Attach { .. }))
        }

        fn announced(&self) -> usize {
            self.count(|s| matches!(s, Step::StartOver(_) | Step::Changed(_)))
        }
    }

    #[test]
    fn after_target_closed_earlier_commands_are_answered_target_closed_not_sent_on() {
        let mut chrome = Chrome::sharing(&[1]);
        let before = chrome.epochs.current(1);
        chrome.request(1, Request::TargetClosed);
        chrome.step(); // its turn: the delay begins
        let during = chrome.epochs.current(1); // held back by the gate meanwhile
        chrome.run();
        assert!(matches!(chrome.log[..], [.., Step::StartOver(_), Step::Release { .. }]), "{:?}", chrome.log);
        assert_eq!(chrome.epochs.check(1, before), Err(TARGET_CLOSED));
        assert_eq!(chrome.epochs.check(1, during), Err(TARGET_CLOSED), "sent for the lost session");
        assert_eq!(chrome.epochs.check(1, chrome.epochs.current(1)), Ok(()));

        // A reset is between clients: the next one's commands run on the new session.
        let before = chrome.epochs.current(1);
        chrome.request(1, Request::Reset);
        chrome.run();
        assert_eq!(chrome.epochs.check(1, before), Ok(()));
    }

    #[test]
    fn a_reset_while_a_reattach_is_in_flight_runs_once_after_it() {
        let mut chrome = Chrome::sharing(&[1]);
        chrome.request(1, Request::TargetClosed);
        chrome.step();
        chrome.wake();
        chrome.request(1, Request::Reset);
        chrome.step(); // looked at
        chrome.request(1, Request::Reset); // the last client of the new session left too
        assert_eq!(chrome.holding.len(), 1, "one flow at a time");
        assert_eq!(chrome.count(|s| matches!(s, Step::Hold { .. })), 1);
        chrome.run();
        assert_eq!(chrome.count(|s| matches!(s, Step::DropGestures { .. })), 1, "the reset ran once");
        assert_eq!(chrome.attaches(), 2, "the re-attach, then the reset");
        let detach_then_attach = chrome.log.iter().skip_while(|s| !matches!(s, Step::Detach { .. })).nth(1);
        assert!(matches!(detach_then_attach, Some(Step::Attach { .. })), "{:?}", chrome.log);
        assert!(chrome.holding.is_empty(), "every hold released");
    }

    #[test]
    fn two_target_closed_in_a_row_make_one_reattach() {
        let mut chrome = Chrome::sharing(&[1]);
        chrome.request(1, Request::TargetClosed);
        chrome.request(1, Request::TargetClosed);
        chrome.step();
        chrome.request(1, Request::TargetClosed);
        chrome.wake();
        chrome.request(1, Request::TargetClosed);
        chrome.run();
        assert_eq!(chrome.attaches(), 1);
        assert_eq!(chrome.count(|s| matches!(s, Step::StartOver(_))), 1);
        assert_eq!(chrome.epochs.current(1), 1, "one new session");
        assert!(chrome.holding.is_empty());

        // Once attached, a new target_closed is a new lost session.
        chrome.request(1, Request::TargetClosed);
        chrome.run();
        assert_eq!((chrome.attaches(), chrome.epochs.current(1)), (2, 2));
    }

    #[test]
    fn a_tab_closed_or_unshared_during_a_reattach_is_not_shared_again() {
        // How far the re-attach got when the tab went: its turn, its delay, the look, the attach.
        for steps_before in 0..4 {
            for closed in [false, true] {
                let mut chrome = Chrome::sharing(&[1]);
                chrome.request(1, Request::TargetClosed);
                for _ in 0..steps_before {
                    let _ = chrome.step() || chrome.wake();
                }
                if closed {
                    chrome.closed.push(1); // onRemoved comes later than Chrome's answers
                }
                chrome.unshare(1);
                chrome.run();
                let case = format!("after {steps_before} steps, closed: {closed}: {:?}", chrome.log);
                assert_eq!(chrome.announced(), 0, "{case}");
                assert!(!chrome.sharing.contains_key(&1), "{case}");
                assert!(chrome.holding.is_empty(), "{case}");
                let attached = chrome.attaches() == 1 && !closed;
                let detaches = chrome.count(|s| matches!(s, Step::Detach { .. }));
                assert_eq!(detaches, usize::from(attached), "a session attached meanwhile is let go: {case}");
                assert_eq!(chrome.count(|s| matches!(s, Step::Unshare { .. })), 0, "{case}");
            }
        }
    }

    #[test]
    fn the_kill_switch_during_a_reattach_or_reset_attaches_nothing_more() {
        for request in [Request::TargetClosed, Request::Reset] {
            for steps_before in 0..4 {
                let mut chrome = Chrome::sharing(&[1]);
                chrome.request(1, request);
                for _ in 0..steps_before {
                    let _ = chrome.step() || chrome.wake();
                }
                let attached = chrome.attaches();
                chrome.engage_kill_switch();
                chrome.request(1, Request::Reset);
                chrome.run();
                let case = format!("{request:?} after {steps_before} steps: {:?}", chrome.log);
                assert_eq!(chrome.attaches(), attached, "{case}");
                assert_eq!(chrome.announced(), 0, "{case}");
                assert!(chrome.holding.is_empty(), "{case}");
                assert_eq!(chrome.epochs.current(1), 0, "{case}");
            }
        }
    }

    #[test]
    fn a_reattach_that_fails_unshares_the_tab_with_the_right_reason() {
        let mut chrome = Chrome::sharing(&[1, 2, 3]);
        chrome.refuse = true; // a page Chrome lets no debugger on
        chrome.request(1, Request::TargetClosed);
        chrome.request(2, Request::Reset);
        chrome.run();
        for tab_id in [1, 2] {
            assert!(chrome.log.contains(&Step::Unshare { tab_id, reason: UnshareReason::Detached }));
        }
        chrome.closed.push(3); // gone with its target; onRemoved not heard yet
        chrome.request(3, Request::TargetClosed);
        chrome.request(3, Request::Reset);
        chrome.run();
        assert!(chrome.log.contains(&Step::Unshare { tab_id: 3, reason: UnshareReason::Closed }));
        assert_eq!(chrome.attaches(), 2, "none for the closed tab, nor a reset after it");
        assert!(chrome.sharing.is_empty() && chrome.holding.is_empty());
    }

    #[test]
    fn a_reset_of_a_tab_being_let_go_or_not_shared_does_nothing_but_hold_its_turn() {
        let mut chrome = Chrome::sharing(&[1]);
        let _ = chrome.sharing.leave(1, crate::sharing::Departure::Released, UnshareReason::Released);
        chrome.request(1, Request::Reset);
        chrome.request(2, Request::Reset);
        chrome.run();
        assert_eq!(chrome.count(|s| op_of(s).is_some()), 2, "{:?}", chrome.log);
        assert!(chrome.holding.is_empty());
    }

    #[test]
    fn a_reset_detaches_then_attaches_and_tells_only_what_changed() {
        let mut chrome = Chrome::sharing(&[1]);
        chrome.request(1, Request::Reset);
        chrome.run();
        let kinds: Vec<_> = chrome.log.iter().filter_map(op_of).map(|_| ()).collect();
        assert_eq!(kinds.len(), 5);
        assert!(matches!(
            chrome.log[..],
            [
                Step::Hold { .. },
                Step::Unguard { .. },
                Step::DropGestures { .. },
                Step::Detach { .. },
                Step::Attach { .. },
                Step::Guarded { .. },
                Step::Log(_),
                Step::Release { .. }
            ]
        ));
        chrome.title = "New".into();
        chrome.request(1, Request::Reset);
        chrome.run();
        assert!(chrome.log.iter().any(|s| matches!(s, Step::Changed(info) if info.title == "New")));
    }

    #[test]
    fn a_resets_tab_has_its_writes_refused_from_before_the_detach_until_the_guard_is_back() {
        let position = |chrome: &Chrome, what: fn(&Step) -> bool| chrome.log.iter().position(what);
        let mut chrome = Chrome::sharing(&[1]);
        chrome.request(1, Request::Reset);
        chrome.run();
        let unguard = position(&chrome, |s| matches!(s, Step::Unguard { .. })).expect("unguarded");
        let detach = position(&chrome, |s| matches!(s, Step::Detach { .. })).expect("detached");
        let guarded = position(&chrome, |s| matches!(s, Step::Guarded { .. })).expect("guarded again");
        let attach = position(&chrome, |s| matches!(s, Step::Attach { .. })).expect("attached");
        assert!(unguard < detach && attach < guarded, "{:?}", chrome.log);

        // Stopped before the attach (the kill switch), the tab stays refused: its unshare (the
        // shell's `left`) lifts that, not the flow.
        for stop_after in [1, 2, 3] {
            let mut chrome = Chrome::sharing(&[1]);
            chrome.request(1, Request::Reset);
            for _ in 0..stop_after {
                chrome.step();
            }
            chrome.engage_kill_switch();
            chrome.run();
            assert_eq!(chrome.count(|s| matches!(s, Step::Guarded { .. })), 0, "{:?}", chrome.log);
            assert_eq!(chrome.attaches(), 0);
        }

        // A re-attach after target_closed: Chrome detached already; nothing to refuse first.
        let mut chrome = Chrome::sharing(&[1]);
        chrome.request(1, Request::TargetClosed);
        chrome.run();
        assert_eq!(chrome.count(|s| matches!(s, Step::Unguard { .. } | Step::Guarded { .. })), 0);
    }

    #[test]
    fn a_stale_or_unknown_operation_changes_nothing() {
        let mut chrome = Chrome::sharing(&[1]);
        chrome.request(1, Request::TargetClosed);
        let Some(Step::Hold { op: hold, .. }) = chrome.pending.front().cloned() else { panic!("hold") };
        chrome.with(|m, t| m.completed(0.0, OpId(99), Done::Turn, t));
        chrome.with(|m, t| m.completed(0.0, hold, Done::Looked(false), t));
        assert_eq!(chrome.log.len(), 1, "nothing new: {:?}", chrome.log);
        chrome.run();
        let steps = chrome.log.len();
        chrome.with(|m, t| m.completed(0.0, hold, Done::Turn, t));
        let Some(Step::Attach { op, .. }) =
            chrome.log.iter().find(|s| matches!(s, Step::Attach { .. })).cloned()
        else {
            panic!("attach")
        };
        chrome.with(|m, t| m.completed(0.0, op, Done::Attached(Err("late".into())), t));
        assert_eq!(chrome.log.len(), steps, "nothing new: {:?}", chrome.log);
        assert!(chrome.sharing.contains_key(&1));
        assert_eq!(chrome.machine.next_deadline(), None);
    }
}
