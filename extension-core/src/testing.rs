//! A fake Chrome and a harness: drives a [`Machine`] with inputs, answers its chrome calls from
//! a fake storage, native host and browser, plays the socket, and keeps a fake clock.

use serde_json::{json, Value};
use tabtunnel_wire::{BrowserInfo, TabInfo, ToExtension, Welcome};

use crate::batching::Flush;
use crate::effect::{ChromeCall, Effect, Level, OpId, WorkerEffect};
use crate::input::{Completion, Input, TargetChange};
use crate::machine::{Config, Machine};
use crate::settings::DialSettings;

pub const VERSION: &str = "1.0.0";
pub const URL: &str = "ws://127.0.0.1:9722/secret/extension";

/// What Chrome answers.
pub struct FakeChrome {
    /// `chrome.storage.local`.
    pub storage: serde_json::Map<String, Value>,
    pub pairing_json: Option<String>,
    /// What `sendNativeMessage` resolves to (or rejects with).
    pub native_host: Result<Value, String>,
    /// Answer chrome calls at once; else they wait in [`Harness::pending`].
    pub answer: bool,
}

impl Default for FakeChrome {
    fn default() -> Self {
        FakeChrome {
            storage: serde_json::Map::new(),
            pairing_json: None,
            native_host: Ok(json!({ "ok": true, "daemonUrl": URL })),
            answer: true,
        }
    }
}

impl FakeChrome {
    fn answer(&mut self, call: &ChromeCall) -> Completion {
        let get = |key: &str| self.storage.get(key).and_then(Value::as_str).map(str::to_owned);
        match call {
            ChromeCall::ReadStored(keys) => Completion::Stored(Some(Value::Object(
                keys.iter().filter_map(|k| Some((k.to_string(), self.storage.get(*k)?.clone()))).collect(),
            ))),
            ChromeCall::ReadDialSettings => Completion::DialSettings(DialSettings {
                daemon_url: get("daemonUrl"),
                last_pairing: get("lastPairing"),
                pairing_json: self.pairing_json.clone(),
            }),
            ChromeCall::SendNativeMessage { .. } => Completion::NativeMessage(self.native_host.clone()),
            ChromeCall::Identify => {
                Completion::Identity { browser: browser(), instance_id: "install-1".into() }
            }
            ChromeCall::CapturePicture { tab_id } => {
                Completion::Picture(Ok(format!("data:image/jpeg;base64,{tab_id}")))
            }
        }
    }
}

pub fn browser() -> BrowserInfo {
    BrowserInfo {
        product: "Chrome/156.0.0.1".into(),
        user_agent: "Mozilla/5.0".into(),
        protocol_version: "1.3".into(),
        js_version: String::new(),
    }
}

pub fn tab(tab_id: i32) -> TabInfo {
    serde_json::from_value(json!({
        "tabId": tab_id, "windowId": 1, "targetId": format!("T{tab_id}"), "browserContextId": "B", "url": "https://example.com/",
        "title": "Example", "agent": "default"
    }))
    .unwrap()
}

pub struct Harness {
    pub machine: Machine<String>,
    pub chrome: FakeChrome,
    /// The fake clock (ms).
    pub now: f64,
    /// Answer `WorkerEffect::Restore` with `Input::WorkerRestored` at once.
    pub restore_at_once: bool,
    /// Every effect, in order, except sends (in `sent`).
    pub effects: Vec<Effect<String>>,
    /// Messages sent: generation, frames.
    pub sent: Vec<(u64, Vec<Value>)>,
    /// Every frame sent, as the socket carried it: generation, text.
    pub sent_text: Vec<(u64, String)>,
    /// Chrome calls waiting for an answer (when `chrome.answer` is off).
    pub pending: Vec<(OpId, ChromeCall)>,
    flushes: Vec<Flush>,
}

impl Default for Harness {
    fn default() -> Self {
        Harness {
            machine: Machine::new(Config { extension_version: VERSION.into(), has_tasks: true }),
            chrome: FakeChrome::default(),
            now: 1000.0,
            restore_at_once: true,
            effects: Vec::new(),
            sent: Vec::new(),
            sent_text: Vec::new(),
            pending: Vec::new(),
            flushes: Vec::new(),
        }
    }
}

impl Harness {
    /// A harness whose storage holds the pasted pairing URL.
    pub fn paired() -> Self {
        let mut h = Harness::default();
        h.chrome.storage.insert("daemonUrl".into(), URL.into());
        h
    }

    /// Started and connected: `Hello` sent, `Welcome` received.
    pub fn connected() -> Self {
        let mut h = Harness::paired();
        h.start();
        h.open();
        h.welcome(VERSION);
        h
    }

    pub fn input(&mut self, input: Input) -> Result<(), String> {
        let result = self.machine.handle(self.now, input);
        self.settle();
        result
    }

    /// Interprets effects (answering chrome calls, running flushes) until none is left.
    pub fn settle(&mut self) {
        loop {
            while let Some(effect) = self.machine.poll_effect() {
                self.interpret(effect);
            }
            if self.flushes.is_empty() {
                return;
            }
            for flush in std::mem::take(&mut self.flushes) {
                let input = Input::FlushDue { from_timer: flush == Flush::Timer };
                self.machine.handle(self.now, input).unwrap();
            }
        }
    }

    fn interpret(&mut self, effect: Effect<String>) {
        match effect {
            Effect::Chrome { op, call } if self.chrome.answer => {
                let completion = self.chrome.answer(&call);
                self.effects.push(Effect::Chrome { op, call });
                self.machine.handle(self.now, Input::Completed { op, completion }).unwrap();
            }
            Effect::Chrome { op, call } => {
                self.pending.push((op, call.clone()));
                self.effects.push(Effect::Chrome { op, call });
            }
            Effect::Send { generation, frames } => {
                self.sent_text.extend(frames.iter().map(|f| (generation, f.clone())));
                let frames = frames.iter().map(|f| serde_json::from_str(f).unwrap()).collect();
                self.sent.push((generation, frames));
            }
            Effect::Store(items) => {
                if let Value::Object(items) = &items {
                    self.chrome.storage.extend(items.clone());
                }
                self.effects.push(Effect::Store(items));
            }
            Effect::ScheduleFlush(flush) => {
                self.flushes.push(flush);
                self.effects.push(Effect::ScheduleFlush(flush));
            }
            Effect::Worker(WorkerEffect::Restore { shares }) => {
                self.effects.push(Effect::Worker(WorkerEffect::Restore { shares }));
                if self.restore_at_once {
                    self.machine.handle(self.now, Input::WorkerRestored).unwrap();
                }
            }
            other => self.effects.push(other),
        }
    }

    /// Answers a waiting chrome call.
    pub fn answer(&mut self, op: OpId, completion: Completion) {
        self.pending.retain(|(o, _)| *o != op);
        self.input(Input::Completed { op, completion }).unwrap();
    }

    pub fn start(&mut self) {
        self.input(Input::Start).unwrap();
    }

    /// The generation of the last dial.
    pub fn dialed(&self) -> Option<u64> {
        self.effects.iter().rev().find_map(|e| match e {
            Effect::Dial { generation, .. } => Some(*generation),
            _ => None,
        })
    }

    pub fn dials(&self) -> usize {
        self.effects.iter().filter(|e| matches!(e, Effect::Dial { .. })).count()
    }

    pub fn calls(&self, wanted: fn(&ChromeCall) -> bool) -> usize {
        self.effects.iter().filter(|e| matches!(e, Effect::Chrome { call, .. } if wanted(call))).count()
    }

    /// The socket of the last dial opens.
    pub fn open(&mut self) {
        let generation = self.dialed().expect("dialed");
        self.input(Input::SocketOpened { generation }).unwrap();
    }

    pub fn close(&mut self) {
        let generation = self.machine.generation();
        self.input(Input::SocketClosed { generation, code: 1006, reason: String::new() }).unwrap();
    }

    pub fn frame(&mut self, frame: ToExtension) {
        let generation = self.machine.generation();
        self.input(Input::Frame { generation, frame }).unwrap();
    }

    pub fn welcome(&mut self, daemon_version: &str) {
        self.frame(ToExtension::Welcome(Welcome {
            daemon_version: daemon_version.into(),
            client_endpoint: "http://127.0.0.1:9722/client".into(),
            audit_trail: None,
        }));
    }

    pub fn share(&mut self, tab_id: i32) -> Result<(), String> {
        self.input(Input::Target(TargetChange::Shared(tab(tab_id))))
    }

    /// Moves the fake clock on by `ms`, firing every deadline on the way at its time.
    pub fn advance(&mut self, ms: f64) {
        let until = self.now + ms;
        while let Some(deadline) = self.machine.poll_timeout().filter(|d| *d <= until) {
            self.now = self.now.max(deadline);
            self.input(Input::Timeout).unwrap();
        }
        self.now = until;
    }

    /// Every frame sent, in order, as `(generation, frame)`.
    pub fn frames(&self) -> Vec<(u64, Value)> {
        self.sent.iter().flat_map(|(g, frames)| frames.iter().map(move |f| (*g, f.clone()))).collect()
    }

    /// The type of every frame sent: its single key (`hello`, `tabShared`, ...).
    pub fn kinds(&self) -> Vec<String> {
        self.frames().iter().map(|(_, f)| kind(f)).collect()
    }

    pub fn worker_effects(&self) -> Vec<&WorkerEffect> {
        self.effects
            .iter()
            .filter_map(|e| match e {
                Effect::Worker(w) => Some(w),
                _ => None,
            })
            .collect()
    }

    pub fn warned(&self, part: &str) -> bool {
        self.effects.iter().any(|e| matches!(e, Effect::Log(Level::Warn, m) if m.contains(part)))
    }
}

/// A frame's type: the key of an externally tagged frame, or the string of a unit one.
pub fn kind(frame: &Value) -> String {
    match frame {
        Value::Object(map) => map.keys().next().cloned().unwrap_or_default(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Chrome's worker targets, for the worker scan (`worker_scan.rs`): what `getTargets` lists and
/// what `Target.getTargetInfo` says of each; and the pages shared, with when each navigated.
#[derive(Default)]
pub struct FakeTargets {
    /// Listed workers: id, URL, CDP type.
    pub targets: Vec<(String, String, String)>,
    pub pages: Vec<(TabInfo, f64)>,
    pub workers: crate::workers::Workers,
    pub scan: crate::worker_scan::WorkerScan,
    /// Announced: whether the daemon takes them (the kill switch refuses).
    pub refuse: bool,
    pub announced: Vec<TabInfo>,
    pub ended: Vec<tabtunnel_wire::TabId>,
    /// How many times each target was described.
    pub described: Vec<String>,
}

impl FakeTargets {
    /// An agent's shared page at `url`, navigated at `at`.
    pub fn page(&mut self, tab_id: i32, agent: &str, url: &str, at: f64) {
        let info = TabInfo { agent: agent.into(), url: url.into(), ..tab(tab_id) };
        self.pages.push((info, at));
    }

    pub fn worker(&mut self, id: &str, url: &str, cdp_type: &str) {
        self.targets.push((id.into(), url.into(), cdp_type.into()));
    }

    /// One whole scan, each step answered from the targets as they are.
    pub fn scan(&mut self) {
        let first = self.scan.begin(true);
        self.run(first.into_iter().collect());
    }

    /// Runs steps until none is left.
    pub fn run(&mut self, mut steps: std::collections::VecDeque<crate::worker_scan::Step>) {
        while let Some(step) = steps.pop_front() {
            steps.extend(self.step(step));
        }
    }

    /// Runs one step; the steps that follow.
    pub fn step(&mut self, step: crate::worker_scan::Step) -> Vec<crate::worker_scan::Step> {
        use crate::worker_scan::Step;
        let pages = self.pages.iter().map(|(t, at)| (t, *at));
        match step {
            Step::List { op } => {
                let listed = self.listed();
                self.scan.listed(op, Ok(listed), &mut self.workers, pages)
            }
            Step::Describe { op, target_id } => {
                self.described.push(target_id.clone());
                let described = self.describe(&target_id);
                self.scan.described(op, described, &mut self.workers, pages)
            }
            Step::End { handle, .. } => {
                self.workers.end(handle);
                self.ended.push(handle);
                Vec::new()
            }
            Step::Announce(info) => {
                if !self.refuse {
                    self.workers.announce(info.clone());
                    self.announced.push(info);
                }
                Vec::new()
            }
        }
    }

    pub fn listed(&self) -> Vec<crate::worker_scan::Listed> {
        let listed = self
            .targets
            .iter()
            .map(|(id, url, _)| crate::worker_scan::Listed { id: id.clone(), url: url.clone() });
        listed.collect()
    }

    /// What `Target.getTargetInfo` says, or Chrome's error for a target gone.
    pub fn describe(&self, target_id: &str) -> Result<crate::worker_scan::Described, String> {
        let (_, url, cdp_type) = self
            .targets
            .iter()
            .find(|(id, _, _)| id == target_id)
            .ok_or_else(|| format!("No target with given id {target_id}"))?;
        Ok(crate::worker_scan::Described {
            cdp_type: cdp_type.clone(),
            url: url.clone(),
            title: String::new(),
            browser_context_id: "B".into(),
        })
    }
}
