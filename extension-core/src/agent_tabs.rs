//! An agent's new tabs in explicit steps: creating one for a `CreateTab` (the prepared tab
//! handed out, or a tab opened, attached and armed), then preparing the next ([`Prepared`]
//! holds which agents want one and each one's tab ready).
//!
//! Each agent's jobs run one at a time, in the order they came ([`Job`]): two at once could each
//! open a window for an agent that has none, and a `CreateTab` sent while a tab is prepared
//! waits for it and takes it. The shell runs each [`Step`] and reports its outcome with the
//! step's [`OpId`] ([`AgentTabs::completed`]); an outcome of any other operation changes nothing.

use std::collections::{BTreeMap, VecDeque};

use tabtunnel_wire::{RequestId, TabId, TabInfo, WindowId};

use crate::effect::{OpId, OpIds};
use crate::placement::OpenedTab;
use crate::prepared::{Preparation, Prepared, Ready};

/// How long after handing a tab out the next is prepared. At once, opening it would take the
/// CPU from the client's first steps on the page it just got (measured: its answer 35-70 ms
/// later on a busy machine).
pub const REFILL_DELAY_MS: f64 = 1_000.0;

const BLANK: &str = "about:blank";

/// Whether a new tab's URL is the blank page it opens on. `about:blank#x` is too, its fragment
/// dropped: sent there from the blank page (a same-document navigation under our debugger),
/// Chromium crashes whole (a `CHECK`, SIGTRAP: every tab of the user's gone; red team of
/// issue 26, 4 runs of 4).
fn is_blank(url: &str) -> bool {
    url.eq_ignore_ascii_case(BLANK)
        || url.get(..BLANK.len() + 1).is_some_and(|head| head.eq_ignore_ascii_case("about:blank#"))
}

/// What the rest of the worker knows, read when a step is decided.
pub trait Facts {
    /// The agent's own window.
    fn window_of(&self, agent: &str) -> Option<WindowId>;
    fn kill_switch(&self) -> bool;
}

/// A prepared tab as Chrome has it when it is handed out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Looked {
    /// Still on the blank page it was opened on.
    pub blank: bool,
    /// Its page runs: it has a renderer process (`chrome.tabs` says `unloaded` when none) and
    /// answers a command. One was seen to answer none, ever, and to stay on the blank page
    /// when sent elsewhere (issue 30: ~1 in 40 runs of the bench's four new agents).
    pub renders: bool,
    pub window_id: WindowId,
}

/// What the shell does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// `chrome.tabs.get` of a prepared tab about to be handed out: [`Done::Looked`].
    Look { op: OpId, tab_id: TabId },
    /// Arm the gesture guard on a prepared tab handed out: [`Done::Armed`].
    Arm { op: OpId, tab_id: TabId },
    /// Open a tab for `agent` on `url`, in its window and group, in the background:
    /// [`Done::Opened`].
    Open { op: OpId, agent: String, url: String },
    /// Attach the debugger to an opened tab and describe it as `agent`'s; `guard`: with the
    /// gesture guard armed (a prepared tab is armed when handed out): [`Done::Described`].
    Attach { op: OpId, tab_id: TabId, agent: String, guard: bool },
    /// Make the tab the active one of its window: [`Done::Shown`].
    Show { op: OpId, opened: OpenedTab },
    /// Report the tab shared (its rules in place first), then send it to `navigate_to` (once
    /// allowed, if `allow_once`): [`Done::Shared`].
    Share { op: OpId, info: TabInfo, navigate_to: Option<String>, allow_once: bool },
    /// Close what was opened (the tab and its window's placeholder): nobody will have it.
    Abandon(OpenedTab),
    /// The human took a prepared tab: the debugger leaves it, it leaves the agent's group, and
    /// its window's placeholder closes.
    LetGo { tab_id: TabId, agent: String, opened: OpenedTab },
    /// Persist the tabs a restarted worker closes (`preparedTabs`).
    Store(Vec<TabId>),
    /// The answer to a `CreateTab`, on the connection it came from.
    Answer { generation: u64, id: RequestId, result: Result<TabInfo, String> },
    /// Call [`AgentTabs::timeout`] at this time (or later).
    WakeAt(f64),
}

/// The outcome of a step, for [`AgentTabs::completed`] (errors as messages).
#[derive(Debug)]
pub enum Done {
    /// The tab, or `None`: it is gone.
    Looked(Option<Looked>),
    Armed(Result<(), String>),
    Opened(Result<OpenedTab, String>),
    Described(Result<TabInfo, String>),
    Shown(Result<(), String>),
    Shared(Result<(), String>),
}

#[derive(Debug)]
struct Create {
    generation: u64,
    id: RequestId,
    url: String,
    allow_once: bool,
}

#[derive(Debug)]
enum Job {
    Create(Create),
    Prepare(Preparation),
}

#[derive(Debug)]
enum Running {
    /// `later`: the tab is blank until shared, then goes to the URL.
    Create {
        create: Create,
        later: bool,
        at: Creating,
    },
    Prepare {
        preparation: Preparation,
        at: Preparing,
    },
}

#[derive(Debug)]
enum Creating {
    Looking { op: OpId, ready: Ready },
    Arming { op: OpId, ready: Ready },
    Opening { op: OpId },
    Attaching { op: OpId, opened: OpenedTab },
    Showing { op: OpId, opened: OpenedTab, info: TabInfo },
    Sharing { op: OpId, info: TabInfo },
}

#[derive(Debug)]
enum Preparing {
    Opening { op: OpId },
    Attaching { op: OpId, opened: OpenedTab },
}

impl Running {
    fn op(&self) -> OpId {
        match self {
            Running::Create { at, .. } => match at {
                Creating::Looking { op, .. }
                | Creating::Arming { op, .. }
                | Creating::Opening { op }
                | Creating::Attaching { op, .. }
                | Creating::Showing { op, .. }
                | Creating::Sharing { op, .. } => *op,
            },
            Running::Prepare { at: Preparing::Opening { op } | Preparing::Attaching { op, .. }, .. } => *op,
        }
    }
}

/// One agent's jobs: the one running, and those waiting behind it.
#[derive(Debug, Default)]
struct Queue {
    running: Option<Running>,
    waiting: VecDeque<Job>,
}

#[derive(Debug, Default)]
pub struct AgentTabs {
    prepared: Prepared,
    queues: BTreeMap<String, Queue>,
    /// When each agent that got a page gets its next one prepared.
    refills: Vec<(f64, String)>,
    /// The daemon connection answers go to (`None`: lost).
    generation: Option<u64>,
    ops: OpIds,
}

impl AgentTabs {
    /// The daemon's `CreateTab`, on connection `generation`.
    pub fn create(
        &mut self,
        generation: u64,
        id: RequestId,
        agent: &str,
        url: String,
        allow_once: bool,
        facts: &impl Facts,
    ) -> Vec<Step> {
        self.heard_from(generation);
        let create = Create { generation, id, url, allow_once };
        self.queues.entry(agent.to_owned()).or_default().waiting.push_back(Job::Create(create));
        let mut steps = Vec::new();
        self.run_next(agent, facts, &mut steps);
        steps
    }

    /// The daemon's list of agents that should have a tab ready, on connection `generation`:
    /// those no longer in it lose theirs, the others get one.
    pub fn wanted(&mut self, generation: u64, agents: Vec<String>, facts: &impl Facts) -> Vec<Step> {
        self.heard_from(generation);
        self.want(agents, facts)
    }

    /// The daemon went (with its agents): every prepared tab closes, and no answer goes out
    /// until the next connection speaks.
    pub fn connection_lost(&mut self, facts: &impl Facts) -> Vec<Step> {
        self.generation = None;
        self.want(Vec::new(), facts)
    }

    /// The kill switch was engaged: every prepared tab closes, none is made.
    pub fn kill_switch_engaged(&mut self, facts: &impl Facts) -> Vec<Step> {
        self.want(Vec::new(), facts)
    }

    /// A tab closed, or the debugger left a tab we did not share: a prepared one is given up
    /// and closed, and its agent gets none again until its next page.
    pub fn lost(&mut self, tab_id: TabId) -> Vec<Step> {
        let Some((_, ready)) = self.prepared.give_up(tab_id) else { return Vec::new() };
        vec![self.store(), Step::Abandon(ready.opened)]
    }

    /// A tab navigated: a prepared one the human sent somewhere is theirs now.
    pub fn navigated(&mut self, tab_id: TabId, url: &str) -> Vec<Step> {
        if url == BLANK {
            return Vec::new();
        }
        self.let_go(tab_id)
    }

    /// A tab moved to another window: a prepared one the human dragged out is theirs now.
    pub fn moved(&mut self, tab_id: TabId, window_id: WindowId, facts: &impl Facts) -> Vec<Step> {
        if !self.prepared.dragged_out(tab_id, window_id, |agent| facts.window_of(agent)) {
            return Vec::new();
        }
        self.let_go(tab_id)
    }

    /// Refills whose time came: the agents still wanted get their next tab prepared.
    pub fn timeout(&mut self, now: f64, facts: &impl Facts) -> Vec<Step> {
        let (due, later): (Vec<_>, Vec<_>) = self.refills.drain(..).partition(|(at, _)| *at <= now);
        self.refills = later;
        let mut steps = Vec::new();
        for (_, agent) in due {
            self.ensure(&agent, facts, &mut steps);
        }
        steps
    }

    /// When [`AgentTabs::timeout`] has something to do.
    pub fn next_deadline(&self) -> Option<f64> {
        self.refills.iter().map(|(at, _)| *at).min_by(f64::total_cmp)
    }

    /// The outcome of the step `op`.
    pub fn completed(&mut self, now: f64, op: OpId, done: Done, facts: &impl Facts) -> Vec<Step> {
        let Some(agent) = self
            .queues
            .iter()
            .find(|(_, q)| q.running.as_ref().is_some_and(|r| r.op() == op))
            .map(|(a, _)| a.clone())
        else {
            return Vec::new();
        };
        let running = self.queues.get_mut(&agent).and_then(|q| q.running.take()).expect("found above");
        let mut steps = Vec::new();
        let next = match running {
            Running::Create { create, later, at } => {
                self.create_step(now, &agent, create, later, at, done, facts, &mut steps)
            }
            Running::Prepare { preparation, at } => {
                self.prepare_step(preparation, at, done, facts, &mut steps)
            }
        };
        self.queues.entry(agent.clone()).or_default().running = next;
        self.run_next(&agent, facts, &mut steps);
        steps
    }

    /// The agent whose prepared tab this is.
    pub fn owner(&self, tab_id: TabId) -> Option<&str> {
        self.prepared.owner(tab_id)
    }

    /// What a restarted worker closes: every prepared tab, placeholder and tab being opened.
    pub fn stored(&self) -> Vec<TabId> {
        self.prepared.stored()
    }

    fn heard_from(&mut self, generation: u64) {
        if self.generation.is_none_or(|current| current <= generation) {
            self.generation = Some(generation);
        }
    }

    fn want(&mut self, agents: Vec<String>, facts: &impl Facts) -> Vec<Step> {
        let gone = self.prepared.wanted(agents);
        let mut steps = Vec::new();
        if !gone.is_empty() {
            steps.push(self.store());
        }
        steps.extend(gone.into_iter().map(|ready| Step::Abandon(ready.opened)));
        let wanted: Vec<String> = self.prepared.wanted_agents().map(str::to_owned).collect();
        for agent in wanted {
            self.ensure(&agent, facts, &mut steps);
        }
        steps
    }

    /// Queues a preparation for `agent` unless it has a tab, is getting one, is not wanted or
    /// declined it.
    fn ensure(&mut self, agent: &str, facts: &impl Facts, steps: &mut Vec<Step>) {
        let Some(preparation) = self.prepared.begin(agent) else { return };
        self.queues.entry(agent.to_owned()).or_default().waiting.push_back(Job::Prepare(preparation));
        self.run_next(agent, facts, steps);
    }

    fn let_go(&mut self, tab_id: TabId) -> Vec<Step> {
        let Some((agent, ready)) = self.prepared.give_up(tab_id) else { return Vec::new() };
        vec![self.store(), Step::LetGo { tab_id, agent, opened: ready.opened }]
    }

    /// Starts the agent's jobs in turn while none runs (a job may end as it starts).
    fn run_next(&mut self, agent: &str, facts: &impl Facts, steps: &mut Vec<Step>) {
        loop {
            let Some(queue) = self.queues.get_mut(agent) else { return };
            if queue.running.is_some() {
                return;
            }
            let Some(job) = queue.waiting.pop_front() else {
                self.queues.remove(agent);
                return;
            };
            let running = match job {
                Job::Create(create) => self.start_create(agent, create, steps),
                Job::Prepare(preparation) => self.start_prepare(agent, preparation, facts, steps),
            };
            self.queues.entry(agent.to_owned()).or_default().running = running;
        }
    }

    /// The agent's prepared tab is looked at before it is handed out; without one, a blank tab
    /// opens. Either goes to the URL once armed.
    fn start_create(&mut self, agent: &str, create: Create, steps: &mut Vec<Step>) -> Option<Running> {
        // The daemon refused it already; `chrome.tabs` would read a relative URL as ours.
        if let Err(e) = tabtunnel_wire::destinations::check(&create.url) {
            self.answer(create, Err(e), steps);
            return None;
        }
        match self.prepared.take(agent) {
            Some(ready) => {
                steps.push(self.store());
                let op = self.ops.issue();
                steps.push(Step::Look { op, tab_id: ready.info.tab_id });
                let later = !is_blank(&create.url);
                Some(Running::Create { create, later, at: Creating::Looking { op, ready } })
            }
            None => Some(self.open_for(agent, create, steps)),
        }
    }

    fn open_for(&mut self, agent: &str, create: Create, steps: &mut Vec<Step>) -> Running {
        // Its page runs only once the tab is attached and armed (and its origin rules are in
        // place): opened on its URL, a page's first scripts wrote before the guard could see
        // them (red team 10, N8).
        let later = !is_blank(&create.url);
        let op = self.ops.issue();
        steps.push(Step::Open { op, agent: agent.to_owned(), url: BLANK.to_owned() });
        Running::Create { create, later, at: Creating::Opening { op } }
    }

    #[allow(clippy::too_many_arguments)]
    fn create_step(
        &mut self,
        now: f64,
        agent: &str,
        create: Create,
        later: bool,
        at: Creating,
        done: Done,
        facts: &impl Facts,
        steps: &mut Vec<Step>,
    ) -> Option<Running> {
        let at = match (at, done) {
            // Handed out only as it was left: open, blank, rendering, in the agent's window.
            (Creating::Looking { ready, .. }, Done::Looked(looked)) => {
                let as_left = looked
                    .is_some_and(|l| l.blank && l.renders && Some(l.window_id) == facts.window_of(agent));
                if !as_left {
                    steps.push(Step::Abandon(ready.opened));
                    return Some(self.open_for(agent, create, steps));
                }
                let op = self.ops.issue();
                steps.push(Step::Arm { op, tab_id: ready.info.tab_id });
                Creating::Arming { op, ready }
            }
            // Handed out, it is the agent's: never without the gesture guard.
            (Creating::Arming { ready, .. }, Done::Armed(armed)) => {
                if armed.is_err() {
                    steps.push(Step::Abandon(ready.opened));
                    return Some(self.open_for(agent, create, steps));
                }
                self.show(ready.opened, ready.info, steps)
            }
            (Creating::Opening { .. }, Done::Opened(Ok(opened))) => {
                let op = self.ops.issue();
                steps.push(Step::Attach { op, tab_id: opened.tab_id, agent: agent.to_owned(), guard: true });
                Creating::Attaching { op, opened }
            }
            // Nothing was opened, and nothing is refilled.
            (Creating::Opening { .. }, Done::Opened(Err(e))) => {
                self.answer(create, Err(e), steps);
                return None;
            }
            (Creating::Attaching { opened, .. }, Done::Described(Ok(info))) => self.show(opened, info, steps),
            (Creating::Attaching { opened, .. }, Done::Described(Err(e)))
            | (Creating::Showing { opened, .. }, Done::Shown(Err(e))) => {
                steps.push(Step::Abandon(opened));
                self.finish_create(now, agent, create, Err(e), steps);
                return None;
            }
            (Creating::Showing { mut info, .. }, Done::Shown(Ok(()))) => {
                let navigate_to = later.then(|| create.url.clone());
                if let Some(url) = &navigate_to {
                    info.url.clone_from(url);
                }
                let op = self.ops.issue();
                steps.push(Step::Share {
                    op,
                    info: info.clone(),
                    navigate_to,
                    allow_once: create.allow_once,
                });
                Creating::Sharing { op, info }
            }
            (Creating::Sharing { info, .. }, Done::Shared(shared)) => {
                self.finish_create(now, agent, create, shared.map(|()| info), steps);
                return None;
            }
            // An outcome of another kind of step: not this one's.
            (at, _) => at,
        };
        Some(Running::Create { create, later, at })
    }

    fn show(&mut self, opened: OpenedTab, info: TabInfo, steps: &mut Vec<Step>) -> Creating {
        let op = self.ops.issue();
        steps.push(Step::Show { op, opened: opened.clone() });
        Creating::Showing { op, opened, info }
    }

    /// The agent got its page (or not): the answer goes out, and its next tab is prepared a
    /// moment later.
    fn finish_create(
        &mut self,
        now: f64,
        agent: &str,
        create: Create,
        result: Result<TabInfo, String>,
        steps: &mut Vec<Step>,
    ) {
        self.answer(create, result, steps);
        self.prepared.refilled(agent);
        let at = now + REFILL_DELAY_MS;
        self.refills.push((at, agent.to_owned()));
        steps.push(Step::WakeAt(at));
    }

    /// Only on the connection the `CreateTab` came from: a later one's request ids mean
    /// something else.
    fn answer(&mut self, create: Create, result: Result<TabInfo, String>, steps: &mut Vec<Step>) {
        if self.generation == Some(create.generation) {
            steps.push(Step::Answer { generation: create.generation, id: create.id, result });
        }
    }

    /// Opens a blank tab for `agent`, unless it is no longer wanted by now (it waited its turn).
    fn start_prepare(
        &mut self,
        agent: &str,
        preparation: Preparation,
        facts: &impl Facts,
        steps: &mut Vec<Step>,
    ) -> Option<Running> {
        if !self.prepared.still_wanted(agent) || facts.kill_switch() {
            let none = self.prepared.finish(preparation, None);
            debug_assert!(none.is_none());
            return None;
        }
        let op = self.ops.issue();
        steps.push(Step::Open { op, agent: agent.to_owned(), url: BLANK.to_owned() });
        Some(Running::Prepare { preparation, at: Preparing::Opening { op } })
    }

    fn prepare_step(
        &mut self,
        preparation: Preparation,
        at: Preparing,
        done: Done,
        facts: &impl Facts,
        steps: &mut Vec<Step>,
    ) -> Option<Running> {
        let at = match (at, done) {
            (Preparing::Opening { .. }, Done::Opened(Ok(opened))) => {
                // Nothing more is opened or attached for an agent that left meanwhile.
                if !self.prepared.still_wanted(preparation.agent()) || facts.kill_switch() {
                    steps.push(Step::Abandon(opened));
                    let none = self.prepared.finish(preparation, None);
                    debug_assert!(none.is_none());
                    return None;
                }
                // Remembered, so that a restarted worker closes it.
                self.prepared.opening(opened.tab_ids());
                steps.push(self.store());
                let op = self.ops.issue();
                let agent = preparation.agent().to_owned();
                steps.push(Step::Attach { op, tab_id: opened.tab_id, agent, guard: false });
                Preparing::Attaching { op, opened }
            }
            (Preparing::Opening { .. }, Done::Opened(Err(_))) => {
                let none = self.prepared.finish(preparation, None);
                debug_assert!(none.is_none());
                return None;
            }
            (Preparing::Attaching { opened, .. }, Done::Described(described)) => {
                self.prepared.opened(opened.tab_ids());
                match described {
                    Ok(info) => {
                        // Its agent may have left while it was made.
                        if let Some(unwanted) =
                            self.prepared.finish(preparation, Some(Ready { opened, info }))
                        {
                            steps.push(Step::Abandon(unwanted.opened));
                        }
                    }
                    Err(_) => {
                        steps.push(Step::Abandon(opened));
                        let none = self.prepared.finish(preparation, None);
                        debug_assert!(none.is_none());
                    }
                }
                steps.push(self.store());
                return None;
            }
            (at, _) => at,
        };
        Some(Running::Prepare { preparation, at })
    }

    fn store(&self) -> Step {
        Step::Store(self.prepared.stored())
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use std::collections::BTreeSet;

    /// A fake Chrome: tabs in windows, opened, closed and navigated as the steps say.
    #[derive(Default)]
    struct Chrome {
        tabs: AgentTabs,
        windows: BTreeMap<String, WindowId>,
        kill: bool,
        /// Open tabs: their window and URL.
        open: BTreeMap<TabId, (WindowId, String)>,
        /// Open tabs whose page never got a renderer process.
        unrendered: BTreeSet<TabId>,
        windows_opened: usize,
        last_id: i32,
        /// Steps waiting for their outcome, in order.
        pending: VecDeque<Step>,
        /// Every step, in order.
        log: Vec<Step>,
        now: f64,
    }

    impl Facts for Chrome {
        fn window_of(&self, agent: &str) -> Option<WindowId> {
            self.windows.get(agent).copied()
        }
        fn kill_switch(&self) -> bool {
            self.kill
        }
    }

    fn op_of(step: &Step) -> Option<OpId> {
        match step {
            Step::Look { op, .. }
            | Step::Arm { op, .. }
            | Step::Open { op, .. }
            | Step::Attach { op, .. }
            | Step::Show { op, .. }
            | Step::Share { op, .. } => Some(*op),
            _ => None,
        }
    }

    impl Chrome {
        fn new_id(&mut self) -> i32 {
            self.last_id += 1;
            self.last_id
        }

        /// Takes steps the machine gave: those with an outcome wait; the others are done now.
        fn take(&mut self, steps: Vec<Step>) {
            for step in steps {
                self.log.push(step.clone());
                match step {
                    Step::Abandon(opened) => {
                        for tab in opened.tab_ids() {
                            self.open.remove(&tab);
                        }
                    }
                    Step::LetGo { opened, .. } => {
                        if let Some(p) = opened.placeholder {
                            self.open.remove(&p);
                        }
                    }
                    step if op_of(&step).is_some() => self.pending.push_back(step),
                    _ => {}
                }
            }
        }

        fn create(&mut self, generation: u64, agent: &str, url: &str) {
            let id = self.new_id() as RequestId;
            self.with_tabs(|t, c| t.create(generation, id, agent, url.into(), false, c));
        }

        fn with_tabs(&mut self, f: impl FnOnce(&mut AgentTabs, &Chrome) -> Vec<Step>) {
            let mut tabs = std::mem::take(&mut self.tabs);
            let steps = f(&mut tabs, self);
            self.tabs = tabs;
            self.take(steps);
        }

        fn want(&mut self, generation: u64, agents: &[&str]) {
            let agents = agents.iter().map(|a| (*a).to_owned()).collect();
            self.with_tabs(|t, c| t.wanted(generation, agents, c));
        }

        /// What Chrome answers to a step.
        fn outcome(&mut self, step: &Step) -> Done {
            match step {
                Step::Look { tab_id, .. } => {
                    Done::Looked(self.open.get(tab_id).map(|(window_id, url)| Looked {
                        blank: url == BLANK,
                        renders: !self.unrendered.contains(tab_id),
                        window_id: *window_id,
                    }))
                }
                Step::Arm { .. } => Done::Armed(Ok(())),
                Step::Open { agent, url, .. } => {
                    let tab_id = self.new_id();
                    let opened = match self.windows.get(agent) {
                        Some(window_id) => OpenedTab { tab_id, window_id: *window_id, placeholder: None },
                        None => {
                            let window_id = self.new_id();
                            self.windows.insert(agent.clone(), window_id);
                            self.windows_opened += 1;
                            let placeholder = self.new_id();
                            self.open.insert(placeholder, (window_id, BLANK.into()));
                            OpenedTab { tab_id, window_id, placeholder: Some(placeholder) }
                        }
                    };
                    self.open.insert(tab_id, (opened.window_id, url.clone()));
                    Done::Opened(Ok(opened))
                }
                Step::Attach { tab_id, agent, .. } => {
                    let mut info = crate::sharing::tests::tab(*tab_id, agent, true);
                    info.window_id = self.open[tab_id].0;
                    Done::Described(Ok(info))
                }
                Step::Show { .. } => Done::Shown(Ok(())),
                Step::Share { .. } => Done::Shared(Ok(())),
                _ => unreachable!("no outcome"),
            }
        }

        /// Chrome does the oldest step waiting.
        fn step(&mut self) -> bool {
            let Some(step) = self.pending.pop_front() else { return false };
            let done = self.outcome(&step);
            let op = op_of(&step).unwrap();
            let now = self.now;
            self.with_tabs(|t, c| t.completed(now, op, done, c));
            true
        }

        fn run(&mut self) {
            while self.step() {}
        }

        fn opens(&self) -> usize {
            self.log.iter().filter(|s| matches!(s, Step::Open { .. })).count()
        }

        fn answers(&self) -> Vec<&Result<TabInfo, String>> {
            self.log
                .iter()
                .filter_map(|s| match s {
                    Step::Answer { result, .. } => Some(result),
                    _ => None,
                })
                .collect()
        }

        fn ready(agents: &[&str]) -> Chrome {
            let mut chrome = Chrome::default();
            chrome.want(1, agents);
            chrome.run();
            chrome
        }

        fn prepared_tab(&self, agent: &str) -> TabId {
            *self.open.keys().find(|t| self.tabs.owner(**t) == Some(agent)).expect("a prepared tab")
        }
    }

    #[test]
    fn a_tab_prepared_for_an_agent_that_left_meanwhile_is_closed() {
        let mut chrome = Chrome::default();
        chrome.want(1, &["a"]);
        assert!(chrome.step(), "opened");
        chrome.want(1, &[]);
        chrome.run();
        assert!(chrome.log.iter().any(|s| matches!(s, Step::Abandon(_))));
        assert!(chrome.open.is_empty(), "the tab and its placeholder closed: {:?}", chrome.open);
        assert!(chrome.tabs.stored().is_empty(), "nothing left for a restarted worker to close");
    }

    #[test]
    fn a_create_tab_during_a_preparation_takes_that_tab_when_it_is_ready() {
        let mut chrome = Chrome::default();
        chrome.want(1, &["a"]);
        chrome.create(1, "a", "https://shop.example/");
        chrome.run();
        assert_eq!((chrome.opens(), chrome.windows_opened), (1, 1), "not a second tab or window");
        let answers = chrome.answers();
        let [Ok(info)] = answers[..] else { panic!("{answers:?}") };
        assert_eq!(info.url, "https://shop.example/");
        assert!(chrome.log.iter().any(|s| matches!(s, Step::Arm { tab_id, .. } if *tab_id == info.tab_id)));
        assert!(
            chrome.log.iter().any(
                |s| matches!(s, Step::Share { navigate_to: Some(u), .. } if u == "https://shop.example/")
            ),
            "a prepared tab goes to its URL once shared"
        );
    }

    #[test]
    fn two_create_tabs_for_a_new_agent_open_one_window() {
        let mut chrome = Chrome::default();
        chrome.create(1, "a", "https://one.example/");
        chrome.create(1, "a", "https://two.example/");
        assert_eq!(chrome.pending.len(), 1, "the second waits for the first");
        chrome.run();
        assert_eq!(chrome.windows_opened, 1);
        assert_eq!(chrome.opens(), 2);
        let answers = chrome.answers();
        assert!(matches!(answers[..], [Ok(one), Ok(two)] if one.window_id == two.window_id), "{answers:?}");
    }

    #[test]
    fn a_prepared_tab_that_navigated_is_let_go_and_not_reused() {
        let mut chrome = Chrome::ready(&["a"]);
        let tab = chrome.prepared_tab("a");
        chrome.with_tabs(|t, _| t.navigated(tab, BLANK));
        assert_eq!(chrome.tabs.owner(tab), Some("a"), "its own blank page");
        chrome.with_tabs(|t, _| t.navigated(tab, "https://human.example/"));
        assert!(matches!(chrome.log.last(), Some(Step::LetGo { tab_id, .. }) if *tab_id == tab));
        chrome.create(1, "a", "https://shop.example/");
        chrome.run();
        assert!(!chrome.log.iter().any(|s| matches!(s, Step::Look { .. })), "not handed out");
        let answers = chrome.answers();
        assert!(matches!(answers[..], [Ok(info)] if info.tab_id != tab));
    }

    #[test]
    fn a_prepared_tab_moved_out_of_its_window_is_let_go_and_not_reused() {
        let mut chrome = Chrome::ready(&["a"]);
        let tab = chrome.prepared_tab("a");
        let own = chrome.windows["a"];
        chrome.with_tabs(|t, c| t.moved(tab, own, c));
        assert_eq!(chrome.tabs.owner(tab), Some("a"), "still in its window");
        chrome.with_tabs(|t, c| t.moved(tab, own + 100, c));
        assert!(matches!(chrome.log.last(), Some(Step::LetGo { tab_id, .. }) if *tab_id == tab));
        assert_eq!(chrome.tabs.owner(tab), None);
        chrome.create(1, "a", "https://shop.example/");
        chrome.run();
        assert!(!chrome.log.iter().any(|s| matches!(s, Step::Look { .. })), "not handed out");
    }

    #[test]
    fn a_prepared_tab_changed_before_it_is_handed_out_is_closed_and_another_opened() {
        let mut chrome = Chrome::ready(&["a"]);
        let tab = chrome.prepared_tab("a");
        chrome.open.get_mut(&tab).unwrap().1 = "https://human.example/".into(); // not heard yet
        chrome.create(1, "a", "https://shop.example/");
        chrome.run();
        assert!(!chrome.open.contains_key(&tab), "closed");
        let answers = chrome.answers();
        assert!(matches!(answers[..], [Ok(info)] if info.tab_id != tab));
    }

    #[test]
    fn a_prepared_tab_with_no_renderer_is_closed_and_another_opened() {
        let mut chrome = Chrome::ready(&["a"]);
        let tab = chrome.prepared_tab("a");
        chrome.unrendered.insert(tab);
        chrome.create(1, "a", "https://shop.example/");
        chrome.run();
        assert!(!chrome.open.contains_key(&tab), "closed");
        assert!(
            !chrome.log.iter().any(|s| matches!(s, Step::Arm { tab_id, .. } if *tab_id == tab)),
            "never armed"
        );
        let answers = chrome.answers();
        assert!(matches!(answers[..], [Ok(info)] if info.tab_id != tab), "{answers:?}");
    }

    #[test]
    fn the_kill_switch_during_a_preparation_opens_nothing_more_and_closes_the_tab_made() {
        for attaching in [false, true] {
            let mut chrome = Chrome::default();
            chrome.want(1, &["a"]);
            if attaching {
                chrome.step();
            }
            chrome.kill = true;
            chrome.with_tabs(|t, c| t.kill_switch_engaged(c));
            chrome.run();
            let attaches = chrome.log.iter().filter(|s| matches!(s, Step::Attach { .. })).count();
            assert_eq!(attaches, usize::from(attaching), "nothing attached once it is engaged");
            assert!(chrome.open.is_empty(), "the tab made is closed: {:?}", chrome.open);
            chrome.want(1, &["a"]);
            chrome.run();
            assert_eq!(chrome.opens(), 1, "none made while it is engaged");
        }
    }

    #[test]
    fn an_answer_for_an_old_connection_is_not_sent_on_a_new_one() {
        let mut chrome = Chrome::default();
        chrome.create(1, "a", "https://shop.example/");
        chrome.step();
        chrome.with_tabs(|t, c| t.connection_lost(c));
        chrome.run();
        assert!(chrome.answers().is_empty(), "no connection");

        chrome.create(2, "a", "https://one.example/");
        chrome.step();
        chrome.want(3, &[]);
        chrome.run();
        assert!(chrome.answers().is_empty(), "the connection it came from is gone");
        chrome.create(3, "a", "https://two.example/");
        chrome.run();
        assert!(matches!(chrome.log.last(), Some(Step::WakeAt(_))));
        assert!(chrome.log.iter().any(|s| matches!(s, Step::Answer { generation: 3, .. })));
    }

    #[test]
    fn a_stale_or_unknown_operation_changes_nothing() {
        let mut chrome = Chrome::default();
        chrome.create(1, "a", "https://shop.example/");
        let now = chrome.now;
        chrome.with_tabs(|t, c| t.completed(now, OpId(99), Done::Opened(Err("no".into())), c));
        let Some(Step::Open { op, .. }) = chrome.pending.front().cloned() else { panic!("open") };
        chrome.with_tabs(|t, c| t.completed(now, op, Done::Shown(Ok(())), c));
        assert_eq!(chrome.log.len(), 1, "nothing new: {:?}", chrome.log);
        chrome.run();
        chrome.with_tabs(|t, c| t.completed(now, op, Done::Opened(Err("late".into())), c));
        let answers = chrome.answers();
        assert!(matches!(answers[..], [Ok(_)]), "answered once: {answers:?}");
    }

    #[test]
    fn the_next_tab_is_prepared_after_the_delay_and_only_for_agents_still_wanted() {
        let mut chrome = Chrome::ready(&["a", "b"]);
        let opening = |chrome: &Chrome| -> Vec<String> {
            let agents = chrome.pending.iter().filter_map(|s| match s {
                Step::Open { agent, url, .. } if url == BLANK => Some(agent.clone()),
                _ => None,
            });
            agents.collect()
        };
        chrome.now = 10.0;
        chrome.create(1, "a", "https://shop.example/");
        chrome.create(1, "b", "https://blog.example/");
        chrome.run();
        assert_eq!(chrome.opens(), 2, "both had a tab ready");
        let due = 10.0 + REFILL_DELAY_MS;
        assert_eq!(chrome.tabs.next_deadline(), Some(due));
        assert!(chrome.log.contains(&Step::WakeAt(due)));
        chrome.with_tabs(|t, c| t.timeout(due - 1.0, c));
        assert!(chrome.pending.is_empty(), "not yet");
        chrome.with_tabs(|t, c| t.timeout(due, c));
        assert_eq!(opening(&chrome), ["a", "b"]);
        assert_eq!(chrome.tabs.next_deadline(), None);
        chrome.run();

        chrome.now = 2_000.0;
        chrome.create(1, "a", "https://shop.example/");
        chrome.create(1, "b", "https://blog.example/");
        chrome.run();
        chrome.want(1, &["a"]);
        assert_eq!(opening(&chrome), ["a"], "a list of the daemon's prepares at once");
        chrome.with_tabs(|t, c| t.timeout(2_000.0 + REFILL_DELAY_MS, c));
        assert_eq!(opening(&chrome), ["a"], "b left, and a is being prepared already");
    }

    #[test]
    fn a_new_tab_opens_blank_and_goes_to_its_url_once_armed_and_shared() {
        let mut chrome = Chrome::default();
        chrome.create(1, "a", "https://shop.example/");
        chrome.run();
        let open = chrome.log.iter().position(|s| matches!(s, Step::Open { url, .. } if url == BLANK));
        let armed = chrome.log.iter().position(|s| matches!(s, Step::Attach { guard: true, .. }));
        let shared = chrome.log.iter().position(
            |s| matches!(s, Step::Share { info, navigate_to: Some(u), .. } if *u == info.url && u == "https://shop.example/"),
        );
        assert!(open.is_some(), "opened on its URL: {:?}", chrome.log);
        assert!(open < armed && armed < shared, "{:?}", chrome.log);
        assert!(!chrome.log.iter().any(|s| matches!(s, Step::Open { url, .. } if url != BLANK)));
    }

    #[test]
    fn a_blank_page_with_a_fragment_is_opened_blank_and_never_sent_there() {
        for url in ["about:blank#x", "About:Blank#", "about:blank"] {
            let mut chrome = Chrome::default();
            chrome.create(1, "a", url);
            chrome.run();
            assert!(chrome.log.iter().any(|s| matches!(s, Step::Share { navigate_to: None, .. })), "{url}");
            assert!(!chrome.log.iter().any(|s| matches!(s, Step::Open { url, .. } if url != BLANK)), "{url}");
            assert!(matches!(chrome.answers()[..], [Ok(_)]), "{url}");
        }
        // Another page's fragment is a page of its own.
        let mut chrome = Chrome::default();
        chrome.create(1, "a", "about:blank?x#y");
        chrome.run();
        assert!(chrome.log.iter().any(|s| matches!(s, Step::Share { navigate_to: Some(_), .. })));
    }

    #[test]
    fn a_url_no_agent_may_open_is_refused_before_anything_opens() {
        let mut chrome = Chrome::default();
        chrome.create(1, "a", "chrome://settings");
        assert_eq!(chrome.opens(), 0);
        assert!(matches!(chrome.answers()[..], [Err(_)]));
        chrome.create(1, "a", "https://shop.example/");
        assert_eq!(chrome.pending.len(), 1, "the queue goes on");
    }
}
