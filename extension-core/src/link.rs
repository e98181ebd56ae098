//! The link to the daemon: where it is (settings, then the native host's pairing), dialing,
//! `Hello`, heartbeats, the frames it sends, reconnecting with backoff, and the queue of frames
//! for it ([`crate::batching`] decides when they leave).
//!
//! Each connection attempt has a `generation`; socket callbacks, completions and answers of an
//! older one find it stale and do nothing. Dialing is explicit steps, each waiting on one
//! operation: read settings, ask the native host (when no URL is stored), learn the browser's
//! identity (once), dial.

use std::collections::BTreeMap;

use tabtunnel_wire::{
    BrowserInfo, FromExtension, Hello, TabId, TabInfo, ToExtension, HEARTBEAT_INTERVAL_MS, PROTOCOL_VERSION,
};

use crate::backoff::Backoff;
use crate::batching::{Flush, Queued, Schedule};
use crate::effect::{ChromeCall, Effect, Level, OpId, Out, WorkerEffect};
use crate::input::{Completion, TargetChange};
use crate::pairing;
use crate::settings;
use crate::status::{DaemonState, LinkStatus};

/// A frame already written as JSON (a JS string in the worker, a `String` in tests).
pub trait Frame: From<String> {}
impl<F: From<String>> Frame for F {}

#[derive(Debug)]
pub struct Link<F> {
    extension_version: String,
    /// Whether a flush can run as a task of its own (the worker's `MessageChannel`).
    has_tasks: bool,
    /// Bumped on every connection attempt.
    generation: u64,
    backoff: Backoff,
    status: LinkStatus,
    /// The daemon's last `Rejected` reason; kept (and shown) while we retry.
    rejection: Option<String>,
    /// The human chose this browser over another one the daemon serves: the next `Hello` says
    /// so (until a `Welcome`).
    take_over: bool,
    /// The worker restored its tabs: dialing may begin (the first `Hello` lists them).
    may_dial: bool,
    dialing: Option<Dialing>,
    identity: Option<(BrowserInfo, String)>,
    connection: Option<Connection<F>>,
    redial_at: Option<f64>,
    /// What the daemon is told is shared (tabs and workers): what `Hello` lists.
    targets: BTreeMap<TabId, TabInfo>,
    schedule: Schedule,
}

/// A dialing step waiting on operation `op`.
#[derive(Debug)]
struct Dialing {
    op: OpId,
    step: Step,
}

#[derive(Debug)]
enum Step {
    Settings,
    Pairing,
    Identity { url: String },
}

#[derive(Debug)]
struct Connection<F> {
    generation: u64,
    /// Frames other than `Hello` wait for it, so the daemon always hears `Hello` first.
    hello_sent: bool,
    /// We closed it (a rejection): nothing more leaves.
    closing: bool,
    /// Frames waiting to leave together; they die with the connection.
    queue: Vec<F>,
    heartbeat_at: Option<f64>,
}

impl<F: Frame> Link<F> {
    pub fn new(extension_version: String, has_tasks: bool) -> Self {
        Link {
            extension_version,
            has_tasks,
            generation: 0,
            backoff: Backoff::default(),
            status: LinkStatus::default(),
            rejection: None,
            take_over: false,
            may_dial: false,
            dialing: None,
            identity: None,
            connection: None,
            redial_at: None,
            targets: BTreeMap::new(),
            schedule: Schedule::default(),
        }
    }

    pub fn status(&self) -> &LinkStatus {
        &self.status
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn is_current(&self, generation: u64) -> bool {
        self.generation == generation
    }

    pub fn take_over(&mut self) {
        self.take_over = true;
    }

    /// Drops the current connection (if any) and dials again at once: at start and when the URL
    /// changes. Before the worker restored its tabs, it only forgets the old attempt: the
    /// restore dials.
    pub fn reconnect_now(&mut self, out: &mut Out<F>) {
        self.generation += 1;
        self.backoff.reset();
        self.rejection = None;
        self.dialing = None;
        self.redial_at = None;
        self.hang_up(out);
        if self.may_dial {
            self.dial_step_settings(out);
        }
    }

    /// The worker restored its tabs: dial.
    pub fn restored(&mut self, out: &mut Out<F>) {
        self.may_dial = true;
        self.reconnect_now(out);
    }

    fn hang_up(&mut self, out: &mut Out<F>) {
        if let Some(c) = self.connection.take() {
            out.push(Effect::Hangup { generation: c.generation });
        }
    }

    fn dial_step_settings(&mut self, out: &mut Out<F>) {
        let op = out.call(ChromeCall::ReadDialSettings);
        self.dialing = Some(Dialing { op, step: Step::Settings });
    }

    /// An operation finished; ignored unless it is the step dialing waits for.
    pub fn completed(&mut self, now: f64, op: OpId, completion: Completion, out: &mut Out<F>) {
        let Some(dialing) = self.dialing.take_if(|d| d.op == op) else { return };
        match (dialing.step, completion) {
            (Step::Settings, Completion::DialSettings(found)) => self.settings_read(found, out),
            (Step::Pairing, Completion::NativeMessage(answer)) => match pairing::read_answer(answer) {
                Ok(url) => self.dial_step_identity(url, out),
                Err(problem) => self.retry_later(now, problem, out),
            },
            (Step::Identity { url }, Completion::Identity { browser, instance_id }) => {
                self.identity = Some((browser, instance_id));
                self.dial(url, out);
            }
            (step, completion) => {
                out.log(Level::Warn, format!("dialing: {completion:?} does not answer {step:?}"));
                self.retry_later(now, "An internal error interrupted dialing.".into(), out);
            }
        }
    }

    fn settings_read(&mut self, found: settings::DialSettings, out: &mut Out<F>) {
        let choice = settings::choose(found);
        for note in choice.notes {
            out.log(Level::Log, note);
        }
        if let Some(items) = choice.store {
            out.push(Effect::Store(items));
        }
        let startup = choice.dial.startup;
        if startup.share_tabs || !startup.open_urls.is_empty() {
            out.push(Effect::Worker(WorkerEffect::StartUp(startup)));
        }
        let url = match choice.dial.url {
            Ok(url) => url,
            Err(problem) => {
                self.rejection = None;
                return self.set_status(DaemonState::Disconnected, Some(problem), out);
            }
        };
        // A URL the user pasted (or `tabtunnel launch` paired) is theirs to keep; without one,
        // the native host starts the daemon if needed and tells us where it is (not shown: it
        // names a secret the user never needs). Asked before every redial, so a daemon that
        // died comes back by itself.
        self.status.daemon_url.clone_from(&url);
        match url {
            Some(url) => self.dial_step_identity(url, out),
            None => {
                let message = pairing::request(&self.extension_version);
                let op = out.call(ChromeCall::SendNativeMessage { host: pairing::HOST, message });
                self.dialing = Some(Dialing { op, step: Step::Pairing });
            }
        }
    }

    fn dial_step_identity(&mut self, url: String, out: &mut Out<F>) {
        if self.identity.is_some() {
            return self.dial(url, out);
        }
        let op = out.call(ChromeCall::Identify);
        self.dialing = Some(Dialing { op, step: Step::Identity { url } });
    }

    fn dial(&mut self, url: String, out: &mut Out<F>) {
        self.connection = Some(Connection {
            generation: self.generation,
            hello_sent: false,
            closing: false,
            queue: Vec::new(),
            heartbeat_at: None,
        });
        out.push(Effect::Dial { generation: self.generation, url: url.clone() });
        // A rejection stays visible while we keep retrying.
        if self.rejection.is_none() {
            self.set_status(DaemonState::Connecting, Some(format!("Connecting to {url}")), out);
        }
    }

    fn current(&mut self, generation: u64) -> Option<&mut Connection<F>> {
        self.connection.as_mut().filter(|c| c.generation == generation && generation == self.generation)
    }

    /// `new WebSocket(url)` threw: the URL is wrong, and retrying will not fix it.
    pub fn socket_failed(&mut self, generation: u64, error: &str, out: &mut Out<F>) {
        if self.current(generation).is_none() {
            return;
        }
        self.connection = None;
        self.set_status(DaemonState::Disconnected, Some(format!("Invalid daemon URL: {error}")), out);
    }

    /// The socket opened: `Hello`, alone and first, listing what is shared now; marking it sent
    /// in the same step, so no `TabShared` can fall between.
    pub fn opened(&mut self, now: f64, generation: u64, kill_switch: bool, out: &mut Out<F>) {
        // Dialing learned the identity before it dialed.
        let Some(hello) = self.hello(kill_switch) else { return };
        let Some(c) = self.current(generation) else { return };
        c.hello_sent = true;
        c.heartbeat_at = Some(now + f64::from(HEARTBEAT_INTERVAL_MS));
        out.push(Effect::Send { generation, frames: vec![F::from(hello.to_json())] });
    }

    fn hello(&self, kill_switch: bool) -> Option<FromExtension> {
        let (browser, instance_id) = self.identity.clone()?;
        // Tabs first, then workers (negative handles), as the daemon always heard them.
        let tabs = self.targets.range(0..).chain(self.targets.range(..0)).map(|(_, t)| t.clone()).collect();
        Some(FromExtension::Hello(Hello {
            protocol_version: PROTOCOL_VERSION,
            extension_version: self.extension_version.clone(),
            instance_id,
            browser,
            tabs,
            kill_switch,
            take_over: self.take_over,
        }))
    }

    /// A frame from the daemon. What the link does not handle goes to the worker.
    pub fn frame(&mut self, generation: u64, frame: ToExtension, out: &mut Out<F>) {
        if generation != self.generation {
            return;
        }
        match frame {
            ToExtension::Heartbeat => {}
            ToExtension::Command(_) => out.log(Level::Warn, "ignoring a command without a method"),
            ToExtension::Welcome(welcome) => {
                out.log(Level::Log, format!("daemon {} welcomed us", welcome.daemon_version));
                let warning = pairing::version_warning(&self.extension_version, &welcome.daemon_version);
                if let Some(warning) = &warning {
                    out.log(Level::Warn, warning.clone());
                }
                self.backoff.reset();
                self.rejection = None;
                self.take_over = false;
                self.status.client_endpoint = Some(welcome.client_endpoint);
                self.status.version_warning = warning;
                self.status.audit_trail = welcome.audit_trail;
                self.set_status(DaemonState::Connected, None, out);
            }
            ToExtension::Rejected { reason } => {
                out.log(Level::Warn, format!("daemon rejected us: {reason}"));
                self.rejection = Some(reason.clone());
                self.set_status(DaemonState::Rejected, Some(reason), out);
                // The close event schedules the retry.
                if let Some(c) = self.current(generation) {
                    c.closing = true;
                    out.push(Effect::Close { generation });
                }
            }
            frame => out.push(Effect::Worker(WorkerEffect::Deliver { generation, frame })),
        }
    }

    /// The socket closed: the daemon's agents and questions went with it; dial again after the
    /// backoff's delay.
    pub fn closed(&mut self, now: f64, generation: u64, code: u16, reason: &str, out: &mut Out<F>) {
        if generation != self.generation {
            return;
        }
        let was_open = self.connection.as_ref().is_some_and(|c| c.hello_sent);
        out.push(Effect::Worker(WorkerEffect::ConnectionLost { was_open }));
        self.generation += 1;
        self.hang_up(out);
        self.status.client_endpoint = None;
        let delay = self.backoff.next_delay();
        out.log(Level::Log, format!("daemon socket closed (code {code} {reason}); retrying in {delay} ms"));
        let retry = format!("retrying in {:.1} s", f64::from(delay) / 1000.0);
        match self.rejection.clone() {
            Some(reason) => self.set_status(DaemonState::Rejected, Some(format!("{reason} ({retry})")), out),
            None => self.set_status(DaemonState::Disconnected, Some(format!("Not connected; {retry}.")), out),
        }
        self.redial_at = Some(now + f64::from(delay));
    }

    /// Nothing to dial yet: says why, and asks again after the backoff's delay (the user may run
    /// `tabtunnel install` meanwhile).
    fn retry_later(&mut self, now: f64, problem: String, out: &mut Out<F>) {
        self.generation += 1;
        self.rejection = None;
        let delay = self.backoff.next_delay();
        out.log(Level::Log, format!("not paired: {problem}; asking again in {delay} ms"));
        self.set_status(DaemonState::Disconnected, Some(problem), out);
        self.redial_at = Some(now + f64::from(delay));
    }

    /// Deadlines that passed: a redial, a heartbeat.
    pub fn timeout(&mut self, now: f64, out: &mut Out<F>) {
        if self.redial_at.is_some_and(|at| at <= now) {
            self.redial_at = None;
            self.dial_step_settings(out);
        }
        let generation = self.generation;
        let heartbeat_due = match self.current(generation) {
            Some(c) if c.heartbeat_at.is_some_and(|at| at <= now) => {
                c.heartbeat_at = Some(now + f64::from(HEARTBEAT_INTERVAL_MS));
                true
            }
            _ => false,
        };
        if heartbeat_due {
            // A data frame: it keeps the MV3 worker alive, where WebSocket pings do not.
            self.send(now, &FromExtension::Heartbeat, out);
        }
    }

    pub fn poll_timeout(&self) -> Option<f64> {
        let heartbeat = self.connection.as_ref().filter(|c| c.generation == self.generation);
        [self.redial_at, heartbeat.and_then(|c| c.heartbeat_at)].into_iter().flatten().reduce(f64::min)
    }

    /// Queues a frame on the current connection once `Hello` went out; dropped otherwise (the
    /// next `Hello` carries the state that matters).
    pub fn queue(&mut self, now: f64, frame: F, what: Queued, out: &mut Out<F>) {
        let generation = self.generation;
        match self.current(generation) {
            Some(c) if c.hello_sent && !c.closing => c.queue.push(frame),
            _ => return,
        }
        match self.schedule.queued(what, now, self.has_tasks) {
            Flush::AlreadyDue => {}
            flush => out.push(Effect::ScheduleFlush(flush)),
        }
    }

    pub fn send(&mut self, now: f64, frame: &FromExtension, out: &mut Out<F>) {
        self.queue(now, F::from(frame.to_json()), Queued::Other, out);
    }

    /// A flush runs: what is queued leaves as one message.
    pub fn flush_due(&mut self, now: f64, from_timer: bool, out: &mut Out<F>) {
        let sent = match self.connection.as_mut() {
            Some(c) if !c.queue.is_empty() => {
                let frames = std::mem::take(&mut c.queue);
                if !c.closing {
                    out.push(Effect::Send { generation: c.generation, frames });
                }
                !c.closing
            }
            _ => false,
        };
        self.schedule.flushed(from_timer, sent, now);
    }

    pub fn command_started(&mut self) {
        self.schedule.running += 1;
    }

    pub fn command_done(&mut self) {
        self.schedule.running = self.schedule.running.saturating_sub(1);
    }

    /// Sends a frame the human asked for, or says why it cannot go.
    pub fn send_if_connected(
        &mut self,
        now: f64,
        frame: &FromExtension,
        out: &mut Out<F>,
    ) -> Result<(), String> {
        if self.status.daemon != DaemonState::Connected {
            return Err("The daemon is not connected.".into());
        }
        self.send(now, frame, out);
        Ok(())
    }

    /// A target shared, changed or unshared: recorded for the next `Hello`, told to the daemon
    /// now if connected.
    pub fn target(&mut self, now: f64, change: TargetChange, out: &mut Out<F>) {
        let frame = match change {
            TargetChange::Shared(info) => {
                self.targets.insert(info.tab_id, info.clone());
                FromExtension::TabShared(info)
            }
            TargetChange::Changed(info) => {
                self.targets.insert(info.tab_id, info.clone());
                FromExtension::TabChanged(info)
            }
            TargetChange::Unshared { tab_id, reason } => {
                self.targets.remove(&tab_id);
                FromExtension::TabUnshared { tab_id, reason }
            }
        };
        self.send(now, &frame, out);
    }

    pub fn targets(&self) -> impl Iterator<Item = &TabInfo> {
        self.targets.values()
    }

    fn set_status(&mut self, daemon: DaemonState, detail: Option<String>, out: &mut Out<F>) {
        self.status.daemon = daemon;
        self.status.detail = detail;
        out.push(Effect::PanelChanged);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tabtunnel_wire::{FromExtension, ToExtension, UnshareReason};

    use crate::effect::{ChromeCall, Effect, WorkerEffect};
    use crate::input::{Completion, Input, PanelInput, TargetChange};
    use crate::settings::DialSettings;
    use crate::status::DaemonState;
    use crate::testing::{Harness, URL, VERSION};

    fn is_native(call: &ChromeCall) -> bool {
        matches!(call, ChromeCall::SendNativeMessage { .. })
    }

    fn is_settings(call: &ChromeCall) -> bool {
        matches!(call, ChromeCall::ReadDialSettings)
    }

    #[test]
    fn connects_and_says_hello_alone_and_first() {
        let mut h = Harness::paired();
        h.start();
        assert_eq!(h.dials(), 1);
        assert_eq!(h.machine.status().daemon, DaemonState::Connecting);
        assert_eq!(h.machine.status().daemon_url.as_deref(), Some(URL));
        assert!(h.sent.is_empty(), "nothing before the socket opens");
        h.open();
        assert_eq!(h.sent.len(), 1);
        let (generation, frames) = &h.sent[0];
        assert_eq!((*generation, frames.len()), (h.dialed().unwrap(), 1), "Hello leaves alone");
        let hello = &frames[0]["hello"];
        assert_eq!(hello["extensionVersion"], VERSION);
        assert_eq!(hello["instanceId"], "install-1");
        assert_eq!(hello["browser"]["product"], "Chrome/156.0.0.1");
        h.welcome(VERSION);
        assert_eq!(h.machine.status().daemon, DaemonState::Connected);
        assert_eq!(h.machine.status().client_endpoint.as_deref(), Some("http://127.0.0.1:9722/client"));
    }

    #[test]
    fn hello_lists_the_tabs_shared_while_connecting_and_no_tab_shared_goes_before_it() {
        let mut h = Harness::paired();
        h.start();
        h.share(5).unwrap();
        h.share(-2).unwrap(); // a worker's handle
        assert!(h.sent.is_empty(), "no TabShared before Hello");
        h.open();
        let frames = h.frames();
        let hello = &frames[0].1["hello"];
        let tabs: Vec<_> = hello["tabs"].as_array().unwrap().iter().map(|t| t["tabId"].clone()).collect();
        assert_eq!(tabs, [json!(5), json!(-2)], "tabs first, then workers");
        h.share(7).unwrap();
        h.input(Input::Target(TargetChange::Unshared { tab_id: 5, reason: UnshareReason::Closed })).unwrap();
        assert_eq!(h.kinds(), ["hello", "tabShared", "tabUnshared"]);
        // The next connection's Hello lists what is shared then.
        h.close();
        h.advance(100.0);
        h.open();
        let frames = h.frames();
        let hello = &frames.last().unwrap().1["hello"];
        let tabs: Vec<_> = hello["tabs"].as_array().unwrap().iter().map(|t| t["tabId"].clone()).collect();
        assert_eq!(tabs, [json!(7), json!(-2)]);
    }

    #[test]
    fn reconnects_with_a_doubling_backoff_after_close_and_a_welcome_resets_it() {
        let mut h = Harness::connected();
        h.close();
        assert_eq!(h.machine.status().daemon, DaemonState::Disconnected);
        assert_eq!(h.machine.status().detail.as_deref(), Some("Not connected; retrying in 0.1 s."));
        assert_eq!(h.machine.status().client_endpoint, None);
        assert_eq!(h.machine.poll_timeout(), Some(h.now + 100.0));
        h.advance(99.0);
        assert_eq!(h.dials(), 1, "not before the delay");
        h.advance(1.0);
        assert_eq!(h.dials(), 2);
        h.close(); // refused at once
        h.advance(199.0);
        assert_eq!(h.dials(), 2);
        h.advance(1.0);
        assert_eq!(h.dials(), 3, "the second delay doubled");
        h.open();
        h.welcome(VERSION);
        h.close();
        assert_eq!(h.machine.poll_timeout(), Some(h.now + 100.0), "a welcome resets the backoff");
    }

    #[test]
    fn callbacks_of_a_stale_socket_do_nothing() {
        let mut h = Harness::paired();
        h.start();
        let old = h.dialed().unwrap();
        h.input(Input::Panel(PanelInput::SetDaemonUrl("ws://127.0.0.1:9723/other/extension".into())))
            .unwrap();
        let new = h.dialed().unwrap();
        assert_ne!(old, new);
        assert!(h.effects.iter().any(|e| matches!(e, Effect::Hangup { generation } if *generation == old)));
        h.input(Input::SocketOpened { generation: old }).unwrap();
        assert!(h.sent.is_empty(), "no Hello on the old socket");
        h.input(Input::SocketClosed { generation: old, code: 1006, reason: String::new() }).unwrap();
        assert_eq!(h.machine.poll_timeout(), None, "no retry scheduled for the old socket");
        assert_eq!(h.machine.status().daemon, DaemonState::Connecting);
        let welcome = ToExtension::Welcome(tabtunnel_wire::Welcome {
            daemon_version: VERSION.into(),
            client_endpoint: "x".into(),
            audit_trail: None,
        });
        h.input(Input::Frame { generation: old, frame: welcome }).unwrap();
        assert_eq!(
            h.machine.status().daemon,
            DaemonState::Connecting,
            "the old daemon's Welcome is not ours"
        );
        h.open();
        assert_eq!(h.kinds(), ["hello"]);
    }

    #[test]
    fn an_answer_to_a_stale_dialing_step_is_ignored() {
        let mut h = Harness::default();
        h.chrome.answer = false;
        h.start();
        let (op, _) = h.pending.pop().unwrap();
        h.answer(op, Completion::Stored(None));
        let (settings, _) = h.pending.pop().unwrap();
        h.answer(settings, Completion::DialSettings(Default::default()));
        let (pairing, _) = h.pending.pop().unwrap();
        // The user pastes a URL meanwhile: a new attempt reads the settings again...
        h.input(Input::Panel(PanelInput::SetDaemonUrl(URL.into()))).unwrap();
        let (settings, _) = h.pending.pop().unwrap();
        // ...while the host's late answer to the old attempt arrives: it is not the awaited step.
        let late = json!({ "ok": true, "daemonUrl": "ws://127.0.0.1:1/late/extension" });
        h.answer(pairing, Completion::NativeMessage(Ok(late)));
        assert_eq!(h.dials(), 0, "the stale answer dials nothing");
        let stored = DialSettings { daemon_url: Some(URL.into()), ..Default::default() };
        h.answer(settings, Completion::DialSettings(stored));
        let (identify, _) = h.pending.pop().unwrap();
        h.answer(
            identify,
            Completion::Identity { browser: crate::testing::browser(), instance_id: "i".into() },
        );
        assert_eq!(h.dials(), 1, "the current attempt goes on");
        assert!(h.effects.iter().all(|e| !matches!(e, Effect::Dial { url, .. } if url.contains("late"))));
    }

    #[test]
    fn the_native_host_is_asked_before_every_redial() {
        let mut h = Harness::default();
        h.start();
        assert_eq!(h.calls(is_native), 1);
        assert_eq!(h.machine.status().daemon_url, None, "the host's URL names a secret: not shown");
        h.open();
        h.close();
        h.advance(100.0);
        assert_eq!(h.calls(is_native), 2);
        assert_eq!(h.dials(), 2, "and the host's URL dialed");
        assert_eq!(h.calls(is_settings), 2, "settings are read again too");
        assert_eq!(h.calls(|c| matches!(c, ChromeCall::Identify)), 1, "the identity only once");
    }

    #[test]
    fn an_unpaired_browser_says_what_to_run_and_asks_again_later() {
        let mut h = Harness::default();
        h.chrome.native_host = Err("Specified native messaging host not found.".into());
        h.start();
        assert_eq!(h.dials(), 0);
        assert_eq!(h.machine.status().daemon, DaemonState::Disconnected);
        assert!(h.machine.status().detail.as_ref().unwrap().contains("tabtunnel install"));
        h.chrome.native_host = Ok(json!({ "ok": true, "daemonUrl": URL }));
        h.advance(100.0);
        assert_eq!(h.dials(), 1, "the user ran `tabtunnel install` meanwhile");
    }

    #[test]
    fn a_daemon_of_another_version_is_named_in_a_warning() {
        let mut h = Harness::paired();
        h.start();
        h.open();
        h.welcome("2.0.0");
        let warning = h.machine.status().version_warning.clone().unwrap();
        assert!(warning.contains(VERSION) && warning.contains("2.0.0"), "{warning}");
        assert!(h.warned("Version mismatch"));
        h.close();
        h.advance(100.0);
        h.open();
        h.welcome(VERSION);
        assert_eq!(h.machine.status().version_warning, None, "cleared by a matching daemon");
    }

    #[test]
    fn what_the_daemon_found_wrong_with_the_trail_is_shown_until_a_welcome_without_it() {
        let mut h = Harness::paired();
        h.start();
        h.open();
        let broken = "BROKEN: record 1 was removed (before audit.jsonl line 2)";
        h.frame(ToExtension::Welcome(tabtunnel_wire::Welcome {
            daemon_version: VERSION.into(),
            client_endpoint: "http://127.0.0.1:9722/client".into(),
            audit_trail: Some(broken.into()),
        }));
        assert_eq!(h.machine.status().audit_trail.as_deref(), Some(broken));
        h.welcome(VERSION);
        assert_eq!(h.machine.status().audit_trail, None);
    }

    #[test]
    fn a_rejection_closes_and_stays_visible_while_retrying() {
        let mut h = Harness::paired();
        h.start();
        h.open();
        // Queued just before the rejection, flushed just after.
        h.machine.send(h.now, &FromExtension::Heartbeat);
        h.frame(ToExtension::Rejected { reason: "Another browser holds the daemon".into() });
        let generation = h.machine.generation();
        assert!(h.effects.iter().any(|e| matches!(e, Effect::Close { generation: g } if *g == generation)));
        assert_eq!(h.machine.status().daemon, DaemonState::Rejected);
        h.machine.send(h.now, &FromExtension::Heartbeat);
        h.settle();
        assert_eq!(h.kinds(), ["hello"], "nothing leaves on a closing socket");
        h.close();
        assert_eq!(
            h.machine.status().detail.as_deref(),
            Some("Another browser holds the daemon (retrying in 0.1 s)")
        );
        h.advance(100.0);
        assert_eq!(h.machine.status().daemon, DaemonState::Rejected, "not Connecting: the reason stays");
    }

    #[test]
    fn heartbeats_follow_poll_timeout_while_open_only() {
        let mut h = Harness::connected();
        let interval = f64::from(tabtunnel_wire::HEARTBEAT_INTERVAL_MS);
        assert_eq!(h.machine.poll_timeout(), Some(h.now + interval));
        h.advance(interval - 1.0);
        assert_eq!(h.kinds(), ["hello"]);
        h.advance(1.0);
        assert_eq!(h.kinds(), ["hello", "heartbeat"]);
        h.advance(interval);
        assert_eq!(h.kinds(), ["hello", "heartbeat", "heartbeat"]);
        h.close();
        let redial = h.machine.poll_timeout().unwrap();
        assert_eq!(redial, h.now + 100.0, "only the redial is due: no heartbeat on a closed socket");
        h.advance(interval * 2.0);
        assert_eq!(h.kinds().iter().filter(|k| *k == "heartbeat").count(), 2);
    }

    #[test]
    fn a_lost_connection_tells_the_worker_whether_clients_were_there() {
        let mut h = Harness::paired();
        h.start();
        h.close();
        h.advance(100.0);
        h.open();
        h.close();
        let lost: Vec<_> = h
            .worker_effects()
            .into_iter()
            .filter_map(|w| match w {
                WorkerEffect::ConnectionLost { was_open } => Some(*was_open),
                _ => None,
            })
            .collect();
        assert_eq!(lost, [false, true]);
    }

    #[test]
    fn answers_go_only_on_the_connection_their_command_came_from() {
        let mut h = Harness::connected();
        let old = h.machine.generation();
        h.close();
        h.advance(100.0);
        h.open();
        h.machine.queue_on(old, h.now, r#"{"commandResult":{"id":1}}"#.into());
        h.machine.send_on(old, h.now, &FromExtension::Heartbeat);
        h.settle();
        assert_eq!(h.kinds(), ["hello", "hello"]);
        let current = h.machine.generation();
        h.machine.queue_on(current, h.now, r#"{"commandResult":{"id":1}}"#.into());
        h.settle();
        assert_eq!(h.kinds(), ["hello", "hello", "commandResult"]);
    }

    #[test]
    fn frames_queued_together_leave_as_one_message() {
        let mut h = Harness::connected();
        let (effects, sent) = (h.effects.len(), h.sent.len());
        h.machine.queue(h.now, r#"{"event":1}"#.into(), crate::batching::Queued::Event);
        h.machine.queue(h.now, r#"{"commandResult":2}"#.into(), crate::batching::Queued::Other);
        h.settle();
        let schedules = h.effects[effects..].iter().filter(|e| matches!(e, Effect::ScheduleFlush(_))).count();
        assert_eq!(schedules, 1, "one flush for both");
        assert_eq!(h.sent.len(), sent + 1);
        assert_eq!(h.sent.last().unwrap().1.len(), 2);
    }

    #[test]
    fn frames_before_hello_are_dropped_not_kept() {
        let mut h = Harness::paired();
        h.start();
        h.machine.send(h.now, &FromExtension::Heartbeat);
        h.machine.queue(h.now, r#"{"event":1}"#.into(), crate::batching::Queued::Event);
        h.settle();
        assert!(h.effects.iter().all(|e| !matches!(e, Effect::ScheduleFlush(_))));
        h.open();
        assert_eq!(h.kinds(), ["hello"]);
    }

    #[test]
    fn a_url_the_websocket_refuses_is_shown_and_not_retried() {
        let mut h = Harness::paired();
        h.start();
        let generation = h.dialed().unwrap();
        h.input(Input::SocketFailed { generation, error: "SyntaxError".into() }).unwrap();
        assert_eq!(h.machine.status().daemon, DaemonState::Disconnected);
        assert_eq!(h.machine.status().detail.as_deref(), Some("Invalid daemon URL: SyntaxError"));
        assert_eq!(h.machine.poll_timeout(), None);
    }

    #[test]
    fn a_refused_saved_url_is_shown_and_nothing_dialed() {
        let mut h = Harness::default();
        h.chrome.storage.insert("daemonUrl".into(), "ws://10.1.1.1:9722/s/extension".into());
        h.start();
        assert_eq!(h.dials(), 0);
        assert_eq!(h.calls(is_native), 0, "a refused URL is not replaced by the host's");
        assert!(h.machine.status().detail.as_ref().unwrap().contains("refused"));
    }

    #[test]
    fn frames_the_human_asks_for_need_a_connected_daemon() {
        let mut h = Harness::paired();
        h.start();
        h.open();
        let mint = || Input::Panel(PanelInput::Send(FromExtension::KillSwitch { engaged: false }));
        assert_eq!(h.input(mint()).unwrap_err(), "The daemon is not connected.");
        h.welcome(VERSION);
        h.input(mint()).unwrap();
        assert_eq!(h.kinds(), ["hello", "killSwitch"]);
    }

    #[test]
    fn taking_the_daemon_over_is_said_in_the_next_hello_only() {
        let mut h = Harness::connected();
        h.input(Input::Panel(PanelInput::UseThisBrowser)).unwrap();
        h.open();
        assert_eq!(h.frames().last().unwrap().1["hello"]["takeOver"], true);
        h.welcome(VERSION);
        h.close();
        h.advance(100.0);
        h.open();
        assert_ne!(h.frames().last().unwrap().1["hello"]["takeOver"], true);
    }

    #[test]
    fn other_frames_go_to_the_worker_with_their_connection() {
        let mut h = Harness::connected();
        h.frame(ToExtension::ResetTab { tab_id: 3 });
        h.frame(ToExtension::Heartbeat);
        let generation = h.machine.generation();
        let delivered: Vec<_> =
            h.worker_effects().into_iter().filter(|w| matches!(w, WorkerEffect::Deliver { .. })).collect();
        assert_eq!(delivered.len(), 1);
        assert!(matches!(
            delivered[0],
            WorkerEffect::Deliver { generation: g, frame: ToExtension::ResetTab { tab_id: 3 } } if *g == generation
        ));
    }

    #[test]
    fn a_pairing_file_asking_for_startup_tabs_reaches_the_worker() {
        let mut h = Harness::default();
        h.chrome.pairing_json = Some(format!(r#"{{"daemonUrl":"{URL}","openUrls":["https://a.example/"]}}"#));
        h.start();
        assert_eq!(h.chrome.storage["daemonUrl"], URL, "applied and stored");
        assert!(h.worker_effects().iter().any(|w| matches!(
            w,
            WorkerEffect::StartUp(s) if s.open_urls == ["https://a.example/"] && !s.share_tabs
        )));
        assert_eq!(h.calls(is_native), 0);
    }
}
