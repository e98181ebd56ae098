//! The extension's machine: every input in through [`Machine::handle`], every effect out through
//! [`Machine::poll_effect`], the next deadline from [`Machine::poll_timeout`]. Time is the
//! shell's `performance.now()` in milliseconds, given with each input.
//!
//! It owns the sub-machines: the daemon [`Link`] and the [`KillSwitch`] today; sharing, prepared
//! tabs, placement and gestures join as sub-machines of their own, each handed the inputs it
//! reads and the shared [`Out`] for its effects.

use tabtunnel_wire::FromExtension;

use crate::batching::Queued;
use crate::effect::{ChromeCall, Effect, Level, OpId, Out, WorkerEffect};
use crate::input::{ChromeEvent, Completion, Input, PanelInput, TargetChange};
use crate::kill_switch::{self, KillSwitch};
use crate::link::{Frame, Link};
use crate::pictures::Pictures;
use crate::settings;
use crate::status::LinkStatus;

/// What the shell knows at start.
#[derive(Debug, Clone)]
pub struct Config {
    /// The manifest's version, for `Hello`, pairing and the version check.
    pub extension_version: String,
    /// Whether a flush can run as a task of its own (see [`crate::batching`]).
    pub has_tasks: bool,
}

/// Where the start is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    NotYet,
    /// Reading the kill switch: nothing may be shared or dialed before it is known.
    ReadingStore(OpId),
    /// The worker re-attaches the tabs that survived a restart.
    RestoringWorker,
    Running,
}

#[derive(Debug)]
pub struct Machine<F> {
    out: Out<F>,
    start: Start,
    link: Link<F>,
    kill_switch: KillSwitch,
    pictures: Pictures,
}

impl<F: Frame> Machine<F> {
    pub fn new(config: Config) -> Self {
        Machine {
            out: Out::default(),
            start: Start::NotYet,
            link: Link::new(config.extension_version, config.has_tasks),
            kill_switch: KillSwitch::default(),
            pictures: Pictures::default(),
        }
    }

    /// One input. An `Err` is a refusal to tell whoever asked (the panel, the sharing code).
    pub fn handle(&mut self, now: f64, input: Input) -> Result<(), String> {
        let out = &mut self.out;
        match input {
            Input::Start => {
                if self.start == Start::NotYet {
                    self.start =
                        Start::ReadingStore(out.call(ChromeCall::ReadStored(vec![kill_switch::STORAGE_KEY])));
                }
            }
            Input::Completed { op, completion: Completion::Stored(items) } => {
                if self.start == Start::ReadingStore(op) {
                    self.kill_switch.restore(items.as_ref());
                    self.start = Start::RestoringWorker;
                    let shares = !self.kill_switch.engaged();
                    out.push(Effect::Worker(WorkerEffect::Restore { shares }));
                }
            }
            Input::WorkerRestored => {
                if self.start == Start::RestoringWorker {
                    self.start = Start::Running;
                    self.link.restored(out);
                }
            }
            Input::Completed { op, completion: Completion::Picture(result) } => {
                self.pictures.completed(now, op, result, out);
            }
            Input::Completed { op, completion } => self.link.completed(now, op, completion, out),
            Input::Timeout => {
                self.link.timeout(now, out);
                self.pictures.timeout(now, out);
            }
            Input::FlushDue { from_timer } => self.link.flush_due(now, from_timer, out),
            Input::SocketOpened { generation } => {
                self.link.opened(now, generation, self.kill_switch.engaged(), out)
            }
            Input::SocketClosed { generation, code, reason } => {
                self.link.closed(now, generation, code, &reason, out)
            }
            Input::SocketFailed { generation, error } => self.link.socket_failed(generation, &error, out),
            Input::Frame { generation, frame } => self.link.frame(generation, frame, out),
            Input::Panel(PanelInput::SetDaemonUrl(url)) => {
                // Stored before the redial reads it: chrome.storage runs calls in order.
                out.push(Effect::Store(settings::stored_url(&url)?));
                self.link.reconnect_now(out);
            }
            Input::Panel(PanelInput::KillSwitch(engaged)) => self.set_kill_switch(now, engaged),
            Input::Panel(PanelInput::UseThisBrowser) => {
                self.link.take_over();
                self.link.reconnect_now(out);
            }
            Input::Panel(PanelInput::Send(frame)) => return self.link.send_if_connected(now, &frame, out),
            Input::Panel(PanelInput::Opened) => self.pictures.panel_opened(now),
            Input::Panel(PanelInput::Closed) => self.pictures.panel_closed(),
            Input::Chrome(ChromeEvent::Command(name)) => {
                if let Some(engaged) = KillSwitch::command(&name) {
                    self.set_kill_switch(now, engaged);
                }
            }
            Input::Target(TargetChange::Shared(_)) if self.kill_switch.engaged() => {
                // An attach that began before the switch was engaged ends here, unannounced.
                return Err("The kill switch is on: no tab is shared until you turn it off.".into());
            }
            Input::Target(change) => {
                match &change {
                    TargetChange::Shared(info) | TargetChange::Changed(info) => {
                        self.pictures.target_shared(now, info)
                    }
                    TargetChange::Unshared { tab_id, .. } => self.pictures.target_unshared(now, *tab_id),
                }
                self.link.target(now, change, out)
            }
        }
        Ok(())
    }

    fn set_kill_switch(&mut self, now: f64, engaged: bool) {
        if !self.kill_switch.set(engaged) {
            return;
        }
        let out = &mut self.out;
        out.log(
            Level::Warn,
            if engaged { "kill switch engaged: stopping every agent" } else { "kill switch released" },
        );
        self.link.send(now, &FromExtension::KillSwitch { engaged }, out);
        out.push(Effect::PanelChanged);
        out.push(Effect::Store(self.kill_switch.stored()));
        if engaged {
            out.push(Effect::Worker(WorkerEffect::StopEverything));
        }
    }

    pub fn poll_effect(&mut self) -> Option<Effect<F>> {
        self.out.pop()
    }

    /// When to call `handle(now, Input::Timeout)` next.
    pub fn poll_timeout(&self) -> Option<f64> {
        [self.link.poll_timeout(), self.pictures.poll_timeout()].into_iter().flatten().min_by(f64::total_cmp)
    }

    /// The hot path: a frame already written as JSON, queued without a trip through `Input`.
    pub fn queue(&mut self, now: f64, frame: F, what: Queued) {
        self.link.queue(now, frame, what, &mut self.out);
    }

    pub fn send(&mut self, now: f64, frame: &FromExtension) {
        self.link.send(now, frame, &mut self.out);
    }

    /// An answer, sent only on the connection its command came from: a later connection's
    /// request ids mean something else.
    pub fn queue_on(&mut self, generation: u64, now: f64, frame: F) {
        if self.link.is_current(generation) {
            self.queue(now, frame, Queued::Other);
        }
    }

    pub fn send_on(&mut self, generation: u64, now: f64, frame: &FromExtension) {
        if self.link.is_current(generation) {
            self.send(now, frame);
        }
    }

    pub fn command_started(&mut self) {
        self.link.command_started();
    }

    pub fn command_done(&mut self) {
        self.link.command_done();
    }

    /// Whether a panel shows pictures: the hot path says [`Machine::acted`] only then.
    pub fn wants_pictures(&self) -> bool {
        self.pictures.wanted()
    }

    /// A client's command reached tab `tab_id`: its agent's picture is of it, soon.
    pub fn acted(&mut self, now: f64, tab_id: tabtunnel_wire::TabId) {
        self.pictures.acted(now, tab_id);
    }

    pub fn generation(&self) -> u64 {
        self.link.generation()
    }

    pub fn is_current(&self, generation: u64) -> bool {
        self.link.is_current(generation)
    }

    pub fn kill_switch(&self) -> bool {
        self.kill_switch.engaged()
    }

    pub fn status(&self) -> &LinkStatus {
        self.link.status()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::effect::{Effect, WorkerEffect};
    use crate::input::{ChromeEvent, Completion, Input, PanelInput, TargetChange};
    use crate::testing::{Harness, VERSION};

    fn engaged_storage() -> Harness {
        let mut h = Harness::paired();
        h.chrome.storage.insert("killSwitch".into(), json!(true));
        h
    }

    #[test]
    fn the_kill_switch_is_restored_before_anything_is_shared_or_dialed() {
        let mut h = engaged_storage();
        h.restore_at_once = false;
        h.start();
        assert!(h.machine.kill_switch());
        assert!(
            matches!(h.worker_effects()[..], [WorkerEffect::Restore { shares: false }]),
            "an engaged switch restores no shares"
        );
        assert_eq!(h.dials(), 0, "no dial while the worker restores its tabs");
        h.input(Input::WorkerRestored).unwrap();
        h.open();
        assert_eq!(h.frames()[0].1["hello"]["killSwitch"], true, "the first Hello says it");
    }

    #[test]
    fn a_reconnect_asked_for_before_the_restore_waits_for_it() {
        let mut h = Harness::paired();
        h.chrome.answer = false;
        h.start();
        h.input(Input::Panel(PanelInput::UseThisBrowser)).unwrap();
        h.input(Input::Panel(PanelInput::SetDaemonUrl(crate::testing::URL.into()))).unwrap();
        assert_eq!(h.calls(|c| matches!(c, crate::effect::ChromeCall::ReadDialSettings)), 0);
        let (op, _) = h.pending.pop().unwrap();
        h.chrome.answer = true;
        h.answer(op, Completion::Stored(None));
        assert_eq!(h.dials(), 1, "dialed once, after the restore");
    }

    #[test]
    fn start_runs_once_and_a_stale_storage_answer_is_ignored() {
        let mut h = Harness::paired();
        h.chrome.answer = false;
        h.start();
        h.start();
        assert_eq!(h.pending.len(), 1);
        let (op, _) = h.pending.pop().unwrap();
        h.answer(crate::effect::OpId(op.0 + 100), Completion::Stored(Some(json!({ "killSwitch": true }))));
        assert!(!h.machine.kill_switch() && h.worker_effects().is_empty());
        h.answer(op, Completion::Stored(None));
        assert!(!h.machine.kill_switch());
        assert!(matches!(h.worker_effects()[..], [WorkerEffect::Restore { shares: true }]));
    }

    #[test]
    fn engaging_while_connecting_is_carried_by_hello() {
        let mut h = Harness::paired();
        h.start();
        h.input(Input::Panel(PanelInput::KillSwitch(true))).unwrap();
        assert!(h.sent.is_empty());
        assert!(h.worker_effects().iter().any(|w| matches!(w, WorkerEffect::StopEverything)));
        assert_eq!(h.chrome.storage["killSwitch"], true, "kept for a restarted worker");
        h.open();
        assert_eq!(h.kinds(), ["hello"]);
        assert_eq!(h.frames()[0].1["hello"]["killSwitch"], true);
    }

    #[test]
    fn engaging_while_connected_tells_the_daemon_once() {
        let mut h = Harness::connected();
        h.input(Input::Chrome(ChromeEvent::Command("kill-switch".into()))).unwrap();
        h.input(Input::Panel(PanelInput::KillSwitch(true))).unwrap();
        assert_eq!(h.kinds(), ["hello", "killSwitch"]);
        assert_eq!(h.frames()[1].1["killSwitch"]["engaged"], true);
        let stops = h.worker_effects().iter().filter(|w| matches!(w, WorkerEffect::StopEverything)).count();
        assert_eq!(stops, 1);
        h.input(Input::Panel(PanelInput::KillSwitch(false))).unwrap();
        assert_eq!(h.kinds(), ["hello", "killSwitch", "killSwitch"]);
        assert_eq!(h.chrome.storage["killSwitch"], false);
        assert_eq!(stops, 1, "releasing stops nothing");
    }

    #[test]
    fn the_shortcut_never_releases_and_other_commands_do_nothing() {
        let mut h = Harness::connected();
        h.input(Input::Chrome(ChromeEvent::Command("_execute_action".into()))).unwrap();
        assert!(!h.machine.kill_switch());
        h.input(Input::Panel(PanelInput::KillSwitch(true))).unwrap();
        h.input(Input::Chrome(ChromeEvent::Command("kill-switch".into()))).unwrap();
        assert!(h.machine.kill_switch());
    }

    #[test]
    fn an_attach_ending_after_the_switch_is_engaged_is_not_announced() {
        let mut h = Harness::connected();
        h.share(1).unwrap();
        h.input(Input::Panel(PanelInput::KillSwitch(true))).unwrap();
        // Tab 2's attach began before; it completes now.
        let refused = h.share(2).unwrap_err();
        assert!(refused.contains("kill switch"), "{refused}");
        assert_eq!(h.kinds(), ["hello", "tabShared", "killSwitch"]);
        h.close();
        h.advance(100.0);
        h.open();
        let frames = h.frames();
        let tabs = frames.last().unwrap().1["hello"]["tabs"].as_array().unwrap().clone();
        assert!(tabs.iter().all(|t| t["tabId"] != 2), "nor listed in a later Hello");
    }

    #[test]
    fn a_daemon_url_the_panel_gives_is_checked_before_it_is_stored() {
        let mut h = Harness::connected();
        let refused = h.input(Input::Panel(PanelInput::SetDaemonUrl("ws://evil.example/s/extension".into())));
        assert!(refused.is_err());
        assert_eq!(h.dials(), 1, "no reconnect");
        h.input(Input::Panel(PanelInput::SetDaemonUrl(String::new()))).unwrap();
        assert_eq!(h.chrome.storage["daemonUrl"], serde_json::Value::Null);
        assert!(h.effects.iter().any(|e| matches!(e, Effect::Hangup { .. })));
        assert_eq!(h.machine.status().daemon_url, None);
        h.open();
        h.welcome(VERSION);
        assert_eq!(h.machine.status().daemon, crate::status::DaemonState::Connected);
    }

    #[test]
    fn pictures_are_taken_through_the_machine_only_while_a_panel_is_open() {
        let mut h = Harness::connected();
        // A page the plain endpoint opened (one the human shared is in view already).
        let opened = tabtunnel_wire::TabInfo { created: true, ..crate::testing::tab(1) };
        h.input(Input::Target(TargetChange::Shared(opened))).unwrap();
        let captures =
            |h: &Harness| h.calls(|c| matches!(c, crate::effect::ChromeCall::CapturePicture { .. }));
        h.advance(60_000.0);
        assert!(!h.machine.wants_pictures());
        h.machine.acted(h.now, 1);
        h.advance(60_000.0);
        assert_eq!(captures(&h), 0, "no panel, no picture");

        h.input(Input::Panel(PanelInput::Opened)).unwrap();
        h.advance(0.0);
        assert_eq!(captures(&h), 1, "at once");
        let pictures: Vec<_> = h
            .effects
            .iter()
            .filter_map(|e| match e {
                Effect::Picture { agent, tab_id, data } => Some((agent.clone(), *tab_id, data.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(pictures, [("default".into(), 1, "data:image/jpeg;base64,1".into())]);
        h.advance(crate::pictures::REFRESH_MS);
        assert_eq!(captures(&h), 2, "again a few seconds later");

        h.input(Input::Panel(PanelInput::Closed)).unwrap();
        h.machine.acted(h.now, 1);
        h.advance(60_000.0);
        assert_eq!(captures(&h), 2, "none once it closed");
        h.input(Input::Target(TargetChange::Unshared {
            tab_id: 1,
            reason: tabtunnel_wire::UnshareReason::Closed,
        }))
        .unwrap();
        h.input(Input::Panel(PanelInput::Opened)).unwrap();
        h.advance(60_000.0);
        assert_eq!(captures(&h), 2, "nothing left to picture");
    }
}
