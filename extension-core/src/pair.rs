//! The daemon's core and the worker's machine wired together in memory by wire frames, in the
//! shape of quinn-proto's test `Pair`: a client's command goes client frame → `tabtunnel-core`
//! → [`ToExtension`] text → the machine's shell → the fake Chrome's debugger → the answer's hot
//! frame → the machine's batching → the core → the client, with no browser and no socket.
//!
//! The pair plays the daemon's hub (the first frame of a connection is its `Hello`, answered by
//! a `Welcome`; answers and events read by their layout, as `wire::hot` reads them) and the
//! worker's relay (commands take the shell's fast path: the fake Chrome answers them and the
//! answer is queued on the connection the command came from, as `Machine::queue_on` does).

use std::collections::BTreeMap;

use serde_json::{json, Value};
use tabtunnel_core::{AgentId, ConnId, Core, Output, ResultText, Root, TabEvent};
use tabtunnel_wire::hot::{self, Hot};
use tabtunnel_wire::{Command, FromExtension, TabId, ToExtension, Welcome};

use crate::batching::Queued;
use crate::input::{Input, TargetChange};
use crate::testing::{tab, Harness};

pub struct Pair {
    /// The worker: the machine and the fake Chrome behind it.
    pub worker: Harness,
    pub core: Core,
    /// The connection attempt whose `Hello` the daemon accepted.
    socket: Option<u64>,
    /// How many of `worker.sent_text` reached the daemon.
    read: usize,
    /// Frames each client got, in order.
    pub clients: BTreeMap<ConnId, Vec<Value>>,
    pub closed: Vec<ConnId>,
    /// The core's other outputs (the kill switch, the trail).
    pub other: Vec<Output>,
    /// Commands the fake Chrome ran, and the connection each came on.
    pub ran: Vec<(u64, Command)>,
    /// Hold commands instead of answering them (a tab that is slow to answer).
    pub hold: bool,
    pub held: Vec<(u64, Command)>,
}

impl Pair {
    /// A worker started with its pairing in storage and a core with no extension yet.
    pub fn new() -> Self {
        let mut worker = Harness::paired();
        worker.start();
        Pair {
            worker,
            core: Core::new(tabtunnel_core::Config {
                browser_target_id: "BROWSER-1".into(),
                session_id_salt: 1,
                limits: Default::default(),
                navigation_url: "http://127.0.0.1:9722/key/tabtunnel/navigation".into(),
                secrets: vec!["secret".into()],
                prepare_tabs: false,
                private_dirs: Vec::new(),
            }),
            socket: None,
            read: 0,
            clients: BTreeMap::new(),
            closed: Vec::new(),
            other: Vec::new(),
            ran: Vec::new(),
            hold: false,
            held: Vec::new(),
        }
    }

    /// Started, the socket open, the `Hello` accepted and the `Welcome` received.
    pub fn connected() -> Self {
        let mut pair = Pair::new();
        pair.open();
        pair
    }

    /// Connected, tab 1 shared, and client 1 attached to it: the pair and the page's session.
    pub fn with_a_client_on_tab_1() -> (Self, String) {
        let mut pair = Pair::connected();
        pair.share(1).unwrap();
        pair.client_connects(1);
        let session = pair.attach(1);
        (pair, session)
    }

    fn now(&self) -> u64 {
        self.worker.now as u64
    }

    /// The worker's socket opens; the daemon reads its first frame as the `Hello`.
    pub fn open(&mut self) {
        self.worker.open();
        self.settle();
    }

    /// The socket drops under both (the daemon's side notices first).
    pub fn drop_socket(&mut self) {
        self.socket = None;
        self.core.extension_disconnected(self.now());
        self.worker.close();
        self.settle();
    }

    /// Moves both clocks on by `ms`, firing the worker's deadlines on the way.
    pub fn advance(&mut self, ms: f64) {
        self.worker.advance(ms);
        self.core.handle_timeout(self.now());
        self.settle();
    }

    pub fn input(&mut self, input: Input) -> Result<(), String> {
        let result = self.worker.input(input);
        self.settle();
        result
    }

    /// The worker shares tab `tab_id` (for agent `default`).
    pub fn share(&mut self, tab_id: TabId) -> Result<(), String> {
        self.input(Input::Target(TargetChange::Shared(tab(tab_id))))
    }

    pub fn client_connects(&mut self, conn: ConnId) {
        self.core.client_connected(self.now(), conn, AgentId::new("default"), Root::Browser);
        self.settle();
    }

    /// A client's frame; what every client got meanwhile is in `clients`.
    pub fn client_sends(&mut self, conn: ConnId, frame: Value) {
        self.core.client_message(self.now(), conn, &frame.to_string());
        self.settle();
    }

    /// The frames client `conn` got.
    pub fn got(&self, conn: ConnId) -> &[Value] {
        self.clients.get(&conn).map_or(&[], Vec::as_slice)
    }

    /// The answer to request `id` of client `conn`.
    pub fn answer(&self, conn: ConnId, id: u64) -> Option<&Value> {
        self.got(conn).iter().find(|f| f["id"] == id)
    }

    /// Playwright's attach: the page session of the client's first tab.
    pub fn attach(&mut self, conn: ConnId) -> String {
        self.client_sends(
            conn,
            json!({"id": 1, "method": "Target.setAutoAttach", "params": {
                "autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}}),
        );
        let attached = self.got(conn).iter().find(|f| f["method"] == "Target.attachedToTarget");
        attached.expect("attached")["params"]["sessionId"].as_str().unwrap().to_owned()
    }

    /// The fake Chrome's debugger emits an event of tab `tab_id`, as `onEvent` hands it over.
    pub fn chrome_event(&mut self, tab_id: TabId, method: &str, params: &str) {
        let now = self.worker.now;
        self.worker.machine.queue(now, hot::event(tab_id, None, method, params), Queued::Event);
        self.worker.settle();
        self.settle();
    }

    /// Answers a held command now, on the connection it came from.
    pub fn answer_held(&mut self) {
        for (generation, command) in std::mem::take(&mut self.held) {
            self.run(generation, command);
        }
        self.settle();
    }

    /// Carries frames both ways until neither side has anything left to say.
    pub fn settle(&mut self) {
        loop {
            let mut moved = false;
            while let Some((generation, text)) = self.worker.sent_text.get(self.read).cloned() {
                self.read += 1;
                moved = true;
                self.daemon_reads(generation, &text);
            }
            while let Some(output) = self.core.poll_output() {
                moved = true;
                match output {
                    Output::ToClient { conn, frame } => {
                        let frame = serde_json::from_str(&frame.text()).expect("the core writes JSON");
                        self.clients.entry(conn).or_default().push(frame);
                    }
                    Output::ToExtension(frame) => self.worker_reads(&frame.to_json()),
                    Output::CloseClient { conn } => self.closed.push(conn),
                    other => self.other.push(other),
                }
            }
            if !moved {
                return;
            }
        }
    }

    /// One frame on the worker's socket, read as the hub reads it.
    fn daemon_reads(&mut self, generation: u64, text: &str) {
        let now = self.now();
        if self.socket != Some(generation) {
            // A connection's first frame is its Hello; nothing else passes before it.
            let Ok(FromExtension::Hello(hello)) = serde_json::from_str(text) else { return };
            match self.core.extension_connected(now, hello) {
                Ok(()) => {
                    self.socket = Some(generation);
                    self.worker.frame(ToExtension::Welcome(Welcome {
                        daemon_version: crate::testing::VERSION.into(),
                        client_endpoint: "http://127.0.0.1:9722/client".into(),
                        audit_trail: None,
                    }));
                }
                Err(reason) => self.worker.frame(ToExtension::Rejected { reason }),
            }
            return;
        }
        match hot::read(text) {
            Some(Hot::CommandResult { id, result }) => {
                self.core.extension_result(now, id, Ok(ResultText::borrowed(result)))
            }
            Some(Hot::Event { tab_id, child_session_id, method, params }) => self.core.extension_event(
                now,
                TabEvent { tab_id, child_session_id: child_session_id.as_deref(), method: &method, params },
            ),
            None => self.core.extension_frame(now, serde_json::from_str(text).expect("a wire frame")),
        }
    }

    /// One daemon frame, as the worker's shell takes it: commands to the relay, the rest to the
    /// machine.
    fn worker_reads(&mut self, text: &str) {
        let Some(generation) = self.socket else { return };
        match serde_json::from_str::<ToExtension>(text).expect("a wire frame") {
            ToExtension::Command(command) if self.hold => self.held.push((generation, command)),
            ToExtension::Command(command) => self.run(generation, command),
            frame => self.worker.input(Input::Frame { generation, frame }).unwrap(),
        }
    }

    /// The fake Chrome's debugger runs a command: its answer says what it ran.
    fn run(&mut self, generation: u64, command: Command) {
        let params = command.params.as_ref().map_or("null", |p| p.get());
        let result =
            format!(r#"{{"ran":{},"params":{params}}}"#, serde_json::to_string(&command.method).unwrap());
        let now = self.worker.now;
        self.worker.machine.queue_on(generation, now, hot::command_result(command.id, &result));
        self.worker.settle();
        self.ran.push((generation, command));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Pair;
    use crate::effect::WorkerEffect;
    use crate::input::{Input, PanelInput};

    #[test]
    fn a_clients_command_goes_through_core_and_worker_to_chrome_and_its_answer_comes_back() {
        let (mut pair, session) = Pair::with_a_client_on_tab_1();
        pair.client_sends(
            1,
            json!({"id": 7, "sessionId": session, "method": "Runtime.evaluate", "params": {"expression": "1+1"}}),
        );
        let (_, ran) = pair.ran.last().expect("Chrome ran it");
        assert_eq!((ran.tab_id, ran.method.as_str()), (1, "Runtime.evaluate"));
        let answer = pair.answer(1, 7).expect("answered");
        assert_eq!(answer["sessionId"], session.as_str());
        assert_eq!(answer["result"], json!({"ran": "Runtime.evaluate", "params": {"expression": "1+1"}}));
    }

    #[test]
    fn a_tabs_events_reach_the_session_that_enabled_their_domain() {
        let (mut pair, session) = Pair::with_a_client_on_tab_1();
        pair.client_sends(1, json!({"id": 2, "sessionId": session, "method": "Page.enable"}));
        assert!(pair.answer(1, 2).is_some());
        pair.chrome_event(1, "Page.loadEventFired", r#"{"timestamp":1.5}"#);
        let event = pair.got(1).last().unwrap();
        assert_eq!(event["method"], "Page.loadEventFired");
        assert_eq!(
            (event["sessionId"].as_str(), &event["params"]),
            (Some(session.as_str()), &json!({"timestamp": 1.5}))
        );
    }

    #[test]
    fn a_tab_shared_while_connecting_is_listed_in_hello_and_seen_by_clients() {
        let mut pair = Pair::new();
        pair.share(3).unwrap();
        pair.open();
        assert_eq!(pair.worker.kinds(), ["hello"], "no TabShared before the Hello, nor after it");
        pair.client_connects(1);
        pair.client_sends(1, json!({"id": 1, "method": "Target.getTargets"}));
        let infos = pair.answer(1, 1).unwrap()["result"]["targetInfos"].as_array().unwrap().clone();
        assert!(infos.iter().any(|t| t["targetId"] == "T3" && t["type"] == "page"), "{infos:?}");
    }

    #[test]
    fn the_panels_kill_switch_closes_the_daemons_clients_and_stops_the_worker() {
        let (mut pair, _) = Pair::with_a_client_on_tab_1();
        pair.input(Input::Panel(PanelInput::KillSwitch(true))).unwrap();
        assert_eq!(pair.closed, [1], "the client is closed");
        assert!(pair.other.iter().any(|o| matches!(o, tabtunnel_core::Output::KillSwitch { engaged: true })));
        assert!(pair.worker.worker_effects().iter().any(|w| matches!(w, WorkerEffect::StopEverything)));
        // A tab whose attach ends now is not announced.
        assert!(pair.share(2).is_err());
        assert!(pair.worker.sent_text.iter().all(|(_, f)| !f.contains("tabShared\":{\"tabId\":2")));
    }

    #[test]
    fn an_answer_to_a_command_of_a_dropped_connection_never_goes_out_on_the_next() {
        let (mut pair, session) = Pair::with_a_client_on_tab_1();
        pair.hold = true;
        pair.client_sends(
            1,
            json!({"id": 5, "sessionId": session, "method": "Runtime.evaluate", "params": {}}),
        );
        assert_eq!(pair.held.len(), 1);
        pair.drop_socket();
        let answer = pair.answer(1, 5).expect("the client is answered when the extension goes");
        assert!(answer.get("error").is_some(), "{answer}");
        pair.advance(60_000.0);
        pair.open();
        assert_eq!(pair.worker.kinds().iter().filter(|k| *k == "hello").count(), 2, "reconnected");
        let before = pair.worker.sent_text.len();
        pair.answer_held();
        let later = &pair.worker.sent_text[before..];
        assert!(later.iter().all(|(_, f)| !f.contains("commandResult")), "{later:?}");
        assert_eq!(pair.got(1).iter().filter(|f| f["id"] == 5).count(), 1, "answered once");
    }
}
