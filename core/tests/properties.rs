//! Property tests of the core: random client frames (good and bad envelopes, ids, sessions,
//! params) interleaved at random with the extension's answers, events, tabs coming and going,
//! and clients and the extension connecting and disconnecting. Whatever happens:
//! - no panic, and every frame written to a client is a JSON object;
//! - every frame a client sends is answered exactly once: with its id when it has a valid one
//!   (once the extension has answered or gone), else by one error without an id;
//! - a client only ever receives answers to what it sent and events of sessions it was given;
//! - nothing but an object (or nothing) reaches the extension as a command's params.
//!
//! Case counts are bounded so that `cargo test` stays fast.

use proptest::prelude::*;
use proptest::test_runner::Config as ProptestConfig;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use tabtunnel_core::{AgentId, Config, ConnId, Core, Limits, Output, Root};
use tabtunnel_wire::{
    BrowserInfo, CdpError, Command, CommandResult, Event, FromExtension, Hello, RawValue, RequestId, TabInfo,
    ToExtension, UnshareReason,
};

const BROWSER_ID: &str = "BROWSER";
/// Client slots; each `Connect` gives its slot a fresh connection.
const SLOTS: u8 = 3;
const TABS: i32 = 3;

// ---- what a test case is made of ----

#[derive(Debug, Clone)]
enum Op {
    /// A new connection in the slot, which may do a handshake (`Some(puppeteer)`) at once.
    Connect {
        slot: u8,
        page_root: Option<i32>,
        handshake: Option<bool>,
    },
    Disconnect {
        slot: u8,
    },
    Client {
        slot: u8,
        frame: Frame,
    },
    /// A client's connect handshake, so that it holds sessions: Playwright's or puppeteer's.
    Handshake {
        slot: u8,
        puppeteer: bool,
        id: i32,
    },
    /// A well-formed command on one of the client's sessions.
    Command {
        slot: u8,
        session: usize,
        method: &'static str,
        id: i32,
    },
    Answer {
        pick: usize,
        ok: bool,
    },
    Event {
        tab: i32,
        method: &'static str,
        child: Option<u8>,
    },
    ChildAttached {
        tab: i32,
        child: u8,
    },
    ChildDetached {
        tab: i32,
        child: u8,
    },
    Share {
        tab: i32,
    },
    Unshare {
        tab: i32,
    },
    ExtensionDown,
    ExtensionUp {
        tabs: Vec<i32>,
    },
    /// Time passes: commands the tab never answered may time out (their late answers must not
    /// reach the client a second time).
    Tick {
        ms: u64,
    },
}

#[derive(Debug, Clone)]
enum Frame {
    Envelope {
        id: Id,
        method: Method,
        session: SessionPick,
        params: Params,
        extra: bool,
    },
    /// Text that is not a JSON object.
    Garbage(String),
}

#[derive(Debug, Clone, Copy)]
enum Id {
    Valid(i32),
    IntegralFloat(i16),
    Beyond32Bits(u32),
    Fraction,
    Text,
    Missing,
}

impl Id {
    /// The id the answer must carry, by Chromium's rules.
    fn valid(self) -> Option<i64> {
        match self {
            Id::Valid(n) => Some(n.into()),
            Id::IntegralFloat(n) => Some(n.into()),
            _ => None,
        }
    }

    fn json(self) -> Option<String> {
        match self {
            Id::Valid(n) => Some(n.to_string()),
            Id::IntegralFloat(n) => Some(format!("{n}.0")),
            Id::Beyond32Bits(n) => Some((i64::from(i32::MAX) + 1 + i64::from(n)).to_string()),
            Id::Fraction => Some("1.5".into()),
            Id::Text => Some("\"7\"".into()),
            Id::Missing => None,
        }
    }
}

#[derive(Debug, Clone)]
enum Method {
    Known(&'static str),
    LoneSurrogate,
    NotAString,
    Missing,
}

/// Methods the core answers itself at a browser session (and some it refuses).
const BROWSER_METHODS: &[&str] = &[
    "Browser.getVersion",
    "Browser.setDownloadBehavior",
    "Target.setDiscoverTargets",
    "Target.getTargets",
    "Target.getTargetInfo",
    "Target.attachToTarget",
    "Target.attachToBrowserTarget",
    "Target.detachFromTarget",
    "Target.getBrowserContexts",
    "Target.createTarget",
    "Target.closeTarget",
    "Target.activateTarget",
    "Browser.getWindowForTarget",
    "Runtime.runIfWaitingForDebugger",
    "Foo.bar",
];

/// Methods a page session sends on to its tab (some with the core's own bookkeeping).
const TAB_METHODS: &[&str] = &[
    "Runtime.enable",
    "Runtime.disable",
    "Runtime.evaluate",
    "Page.enable",
    "Page.reload",
    "Network.enable",
    "Network.disable",
    "Log.startViolationsReport",
    "Log.stopViolationsReport",
    "Tracing.start",
    "Tracing.end",
    "Target.setAutoAttach",
];

#[derive(Debug, Clone, Copy)]
enum SessionPick {
    Root,
    /// One of the sessions this connection was given, by index.
    Known(usize),
    Unknown,
    NotAString,
}

#[derive(Debug, Clone)]
enum Params {
    Absent,
    Null,
    Object(Value),
    /// An object naming one of the known targets or sessions, by index.
    NamingTarget(usize),
    NamingSession(usize),
    Array,
    Number,
    Bool,
    Text,
}

fn frame_strategy() -> impl Strategy<Value = Frame> {
    let id = prop_oneof![
        6 => (0..8i32).prop_map(Id::Valid),
        1 => any::<i32>().prop_map(Id::Valid),
        1 => (0..8i16).prop_map(Id::IntegralFloat),
        1 => any::<u32>().prop_map(Id::Beyond32Bits),
        1 => Just(Id::Fraction),
        1 => Just(Id::Text),
        1 => Just(Id::Missing),
    ];
    let method = prop_oneof![
        6 => proptest::sample::select(BROWSER_METHODS).prop_map(Method::Known),
        6 => proptest::sample::select(TAB_METHODS).prop_map(Method::Known),
        1 => Just(Method::LoneSurrogate),
        1 => Just(Method::NotAString),
        1 => Just(Method::Missing),
    ];
    let session = prop_oneof![
        3 => Just(SessionPick::Root),
        6 => (0..8usize).prop_map(SessionPick::Known),
        1 => Just(SessionPick::Unknown),
        1 => Just(SessionPick::NotAString),
    ];
    let params = prop_oneof![
        2 => Just(Params::Absent),
        1 => Just(Params::Null),
        1 => Just(Params::Object(json!({}))),
        2 => Just(Params::Object(json!({"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": false}))),
        1 => Just(Params::Object(json!({"autoAttach": true, "flatten": true, "filter": [{"type": "page", "exclude": true}, {}]}))),
        1 => Just(Params::Object(json!({"discover": true}))),
        1 => Just(Params::Object(json!({"expression": "1+1"}))),
        2 => (0..8usize).prop_map(Params::NamingTarget),
        1 => (0..8usize).prop_map(Params::NamingSession),
        1 => Just(Params::Array),
        1 => Just(Params::Number),
        1 => Just(Params::Bool),
        1 => Just(Params::Text),
    ];
    let envelope = (id, method, session, params, proptest::bool::weighted(0.05)).prop_map(
        |(id, method, session, params, extra)| Frame::Envelope { id, method, session, params, extra },
    );
    // Never `{`: garbage must not happen to be a valid command.
    let garbage = proptest::collection::vec(proptest::sample::select(&b"[]\":,0123abn \\}"[..]), 0..12)
        .prop_map(|bytes| Frame::Garbage(String::from_utf8(bytes).expect("ASCII")));
    prop_oneof![12 => envelope, 1 => garbage]
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let slot = 0..SLOTS;
    let tab = 1..=TABS;
    prop_oneof![
        3 => (slot.clone(), proptest::option::weighted(0.2, tab.clone()), proptest::option::weighted(0.7, any::<bool>()))
            .prop_map(|(slot, page_root, handshake)| Op::Connect { slot, page_root, handshake }),
        1 => slot.clone().prop_map(|slot| Op::Disconnect { slot }),
        16 => (slot.clone(), frame_strategy()).prop_map(|(slot, frame)| Op::Client { slot, frame }),
        6 => (slot.clone(), any::<bool>(), 0..8i32).prop_map(|(slot, puppeteer, id)| Op::Handshake { slot, puppeteer, id }),
        12 => (slot.clone(), any::<usize>(), proptest::sample::select(TAB_METHODS), 0..8i32)
            .prop_map(|(slot, session, method, id)| Op::Command { slot, session, method, id }),
        8 => (any::<usize>(), proptest::bool::weighted(0.8)).prop_map(|(pick, ok)| Op::Answer { pick, ok }),
        3 => (tab.clone(), proptest::sample::select(&["Runtime.consoleAPICalled", "Network.requestWillBeSent", "Page.loadEventFired", "Log.entryAdded", "Runtime.executionContextCreated", "Tracing.dataCollected"][..]), proptest::option::weighted(0.3, 0..3u8))
            .prop_map(|(tab, method, child)| Op::Event { tab, method, child }),
        1 => (tab.clone(), 0..3u8).prop_map(|(tab, child)| Op::ChildAttached { tab, child }),
        1 => (tab.clone(), 0..3u8).prop_map(|(tab, child)| Op::ChildDetached { tab, child }),
        1 => tab.clone().prop_map(|tab| Op::Share { tab }),
        1 => tab.prop_map(|tab| Op::Unshare { tab }),
        1 => Just(Op::ExtensionDown),
        2 => prop_oneof![0..1_000u64, 100_000..200_000u64].prop_map(|ms| Op::Tick { ms }),
        1 => proptest::collection::btree_set(1..=TABS, 0..=3)
            .prop_map(|tabs| Op::ExtensionUp { tabs: tabs.into_iter().collect() }),
    ]
}

// ---- running a case against the core, with what each client is owed ----

/// What one client connection sent and received.
#[derive(Default)]
struct Client {
    live: bool,
    /// Answers it is owed, by id; and errors owed for frames without a valid id.
    owed: HashMap<i64, i64>,
    owed_without_id: i64,
    /// Sessions it was given (attachedToTarget, attach replies).
    sessions: Vec<String>,
}

struct World {
    core: Core,
    next_conn: ConnId,
    slots: HashMap<u8, ConnId>,
    clients: HashMap<ConnId, Client>,
    extension_up: bool,
    shared: BTreeSet<i32>,
    pending: Vec<RequestId>,
    now_ms: u64,
}

fn tab_info(tab_id: i32) -> TabInfo {
    TabInfo {
        tab_id,
        window_id: 1,
        target_id: format!("PAGE{tab_id}"),
        browser_context_id: "CTX".into(),
        url: format!("http://127.0.0.1/{tab_id}"),
        title: format!("Tab {tab_id}"),
        opener_target_id: None,
        agent: "default".into(),
        created: false,
        kind: Default::default(),
    }
}

fn hello(tabs: &[i32]) -> Hello {
    Hello {
        protocol_version: tabtunnel_wire::PROTOCOL_VERSION,
        extension_version: "0.1.0".into(),
        instance_id: "browser".into(),
        browser: BrowserInfo {
            product: "Chrome/156".into(),
            user_agent: "Mozilla/5.0".into(),
            protocol_version: "1.3".into(),
            js_version: String::new(),
        },
        tabs: tabs.iter().map(|t| tab_info(*t)).collect(),
        kill_switch: false,
        take_over: false,
    }
}

fn raw(s: String) -> Box<RawValue> {
    RawValue::from_string(s).expect("valid JSON")
}

impl World {
    fn new() -> Self {
        let config = Config {
            browser_target_id: BROWSER_ID.into(),
            session_id_salt: 7,
            limits: Limits::default(),
            navigation_url: "http://127.0.0.1:9/navigation".into(),
            secrets: Vec::new(),
            prepare_tabs: true,
            private_dirs: Vec::new(),
        };
        World {
            core: Core::new(config),
            next_conn: 1,
            slots: HashMap::new(),
            clients: HashMap::new(),
            extension_up: false,
            shared: BTreeSet::new(),
            pending: Vec::new(),
            now_ms: 0,
        }
    }

    fn live_conn(&self, slot: u8) -> Option<ConnId> {
        self.slots.get(&slot).copied().filter(|c| self.clients[c].live)
    }

    fn apply(&mut self, op: &Op) -> Result<(), TestCaseError> {
        match op {
            Op::Connect { slot, page_root, handshake } => {
                if let Some(old) = self.live_conn(*slot) {
                    self.disconnect(old);
                }
                let conn = self.next_conn;
                self.next_conn += 1;
                let root = match page_root {
                    Some(tab) if self.shared.contains(tab) => Root::Page(*tab),
                    _ => Root::Browser,
                };
                self.slots.insert(*slot, conn);
                self.clients.insert(conn, Client { live: true, ..Client::default() });
                self.core.client_connected(self.now_ms, conn, AgentId::new("default"), root);
                if let Some(puppeteer) = *handshake {
                    self.apply(&Op::Handshake { slot: *slot, puppeteer, id: 0 })?;
                }
            }
            Op::Disconnect { slot } => {
                if let Some(conn) = self.live_conn(*slot) {
                    self.disconnect(conn);
                }
            }
            Op::Client { slot, frame } => {
                if let Some(conn) = self.live_conn(*slot) {
                    let text = self.render(conn, frame);
                    let id = match frame {
                        Frame::Envelope { id, .. } => id.valid(),
                        Frame::Garbage(_) => None,
                    };
                    self.send(conn, &text, id)?;
                }
            }
            Op::Handshake { slot, puppeteer, id } => {
                if let Some(conn) = self.live_conn(*slot) {
                    let filter =
                        if *puppeteer { json!([{"type": "page", "exclude": true}, {}]) } else { json!([{}]) };
                    let params = json!({"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": true, "filter": filter});
                    let root = json!({"id": id, "method": "Target.setAutoAttach", "params": params});
                    let known_before = self.clients[&conn].sessions.len();
                    self.send(conn, &root.to_string(), Some((*id).into()))?;
                    // Puppeteer then asks each tab session for its page.
                    let tab_sessions = self.clients[&conn].sessions[known_before..].to_vec();
                    for session in tab_sessions.iter().filter(|_| *puppeteer) {
                        let frame = json!({"id": id, "sessionId": session, "method": "Target.setAutoAttach", "params": params});
                        self.send(conn, &frame.to_string(), Some((*id).into()))?;
                    }
                }
            }
            Op::Command { slot, session, method, id } => {
                if let Some(conn) = self.live_conn(*slot) {
                    let sessions = &self.clients[&conn].sessions;
                    let session = sessions.get(session % sessions.len().max(1)).cloned().unwrap_or_default();
                    let frame = json!({"id": id, "sessionId": session, "method": method, "params": {"expression": "1"}});
                    self.send(conn, &frame.to_string(), Some((*id).into()))?;
                }
            }
            Op::Answer { pick, ok } => {
                if !self.pending.is_empty() {
                    let id = self.pending.remove(pick % self.pending.len());
                    let result = if *ok {
                        CommandResult::ok(id, raw("{}".into()))
                    } else {
                        CommandResult::err(id, CdpError { code: -32000, message: "no".into(), data: None })
                    };
                    self.extension(FromExtension::CommandResult(result));
                }
            }
            Op::Event { tab, method, child } => {
                let event = Event {
                    tab_id: *tab,
                    child_session_id: child.map(|c| format!("CHILD{tab}-{c}")),
                    method: (*method).into(),
                    params: raw(r#"{"context":{"id":1},"type":"log"}"#.into()),
                };
                self.extension(FromExtension::Event(event));
            }
            Op::ChildAttached { tab, child } => {
                let params = format!(
                    r#"{{"sessionId":"CHILD{tab}-{child}","targetInfo":{{"targetId":"F{tab}-{child}","type":"iframe","url":"http://x/"}},"waitingForDebugger":false}}"#
                );
                let method = "Target.attachedToTarget".into();
                self.extension(FromExtension::Event(Event {
                    tab_id: *tab,
                    child_session_id: None,
                    method,
                    params: raw(params),
                }));
            }
            Op::ChildDetached { tab, child } => {
                let params = format!(r#"{{"sessionId":"CHILD{tab}-{child}","targetId":"F{tab}-{child}"}}"#);
                let method = "Target.detachedFromTarget".into();
                self.extension(FromExtension::Event(Event {
                    tab_id: *tab,
                    child_session_id: None,
                    method,
                    params: raw(params),
                }));
            }
            Op::Share { tab } => {
                if self.extension_up {
                    self.shared.insert(*tab);
                    self.extension(FromExtension::TabShared(tab_info(*tab)));
                }
            }
            Op::Unshare { tab } => {
                if self.extension_up {
                    self.shared.remove(tab);
                    let reason = UnshareReason::StoppedByUser;
                    self.extension(FromExtension::TabUnshared { tab_id: *tab, reason });
                }
            }
            Op::ExtensionDown => self.extension_down(),
            Op::Tick { ms } => {
                let until = self.now_ms + ms;
                // As the shell does: woken at each deadline the core names on the way.
                while let Some(at) = self.core.poll_timeout().filter(|at| *at <= until) {
                    self.now_ms = self.now_ms.max(at);
                    self.core.handle_timeout(self.now_ms);
                    let next = self.core.poll_timeout();
                    prop_assert!(
                        next.is_none_or(|n| n > self.now_ms),
                        "the core names a deadline it has handled: {next:?}"
                    );
                }
                self.now_ms = until;
            }
            Op::ExtensionUp { tabs } => {
                self.extension_down();
                self.core.extension_connected(self.now_ms, hello(tabs)).expect("our protocol version");
                self.extension_up = true;
                self.shared = tabs.iter().copied().collect();
            }
        }
        self.drain()
    }

    /// One client frame, owed one answer (with `id` when it has a valid one).
    fn send(&mut self, conn: ConnId, text: &str, id: Option<i64>) -> Result<(), TestCaseError> {
        let client = self.clients.get_mut(&conn).expect("live");
        match id {
            Some(id) => *client.owed.entry(id).or_default() += 1,
            None => client.owed_without_id += 1,
        }
        self.core.client_message(self.now_ms, conn, text);
        self.drain()
    }

    fn extension(&mut self, frame: FromExtension) {
        if self.extension_up {
            self.core.extension_frame(self.now_ms, frame);
        }
    }

    fn extension_down(&mut self) {
        if self.extension_up {
            self.core.extension_disconnected(self.now_ms);
            self.extension_up = false;
            self.shared.clear();
            self.pending.clear();
        }
    }

    fn disconnect(&mut self, conn: ConnId) {
        self.clients.get_mut(&conn).expect("known").live = false;
        self.core.client_disconnected(self.now_ms, conn);
    }

    /// The frame's text, with session and target picks resolved against what `conn` knows.
    fn render(&self, conn: ConnId, frame: &Frame) -> String {
        let (id, method, session, params, extra) = match frame {
            Frame::Garbage(text) => return text.clone(),
            Frame::Envelope { id, method, session, params, extra } => (id, method, session, params, extra),
        };
        let sessions = &self.clients[&conn].sessions;
        let known = |i: usize| sessions.get(i % sessions.len().max(1)).cloned().unwrap_or_default();
        let mut fields = Vec::new();
        if let Some(id) = id.json() {
            fields.push(format!(r#""id":{id}"#));
        }
        match method {
            Method::Known(m) => fields.push(format!(r#""method":"{m}""#)),
            Method::LoneSurrogate => fields.push(r#""method":"\ud800""#.into()),
            Method::NotAString => fields.push(r#""method":7"#.into()),
            Method::Missing => {}
        }
        match session {
            SessionPick::Root => {}
            SessionPick::Known(i) => fields.push(format!(r#""sessionId":{}"#, json!(known(*i)))),
            SessionPick::Unknown => fields.push(r#""sessionId":"NOPE""#.into()),
            SessionPick::NotAString => fields.push(r#""sessionId":5"#.into()),
        }
        let targets =
            [BROWSER_ID.to_owned(), "PAGE1".into(), "PAGE2".into(), "TAB-PAGE3".into(), "GONE".into()];
        let params = match params {
            Params::Absent => None,
            Params::Null => Some("null".into()),
            Params::Object(v) => Some(v.to_string()),
            Params::NamingTarget(i) => {
                Some(json!({"targetId": targets[i % targets.len()], "flatten": true}).to_string())
            }
            Params::NamingSession(i) => Some(json!({"sessionId": known(*i)}).to_string()),
            Params::Array => Some("[]".into()),
            Params::Number => Some("5".into()),
            Params::Bool => Some("true".into()),
            Params::Text => Some("\"s\"".into()),
        };
        if let Some(params) = params {
            fields.push(format!(r#""params":{params}"#));
        }
        if *extra {
            fields.push(r#""extra":1"#.into());
        }
        format!("{{{}}}", fields.join(","))
    }

    /// Hands every output to its recipient, checking each against what that recipient is owed.
    fn drain(&mut self) -> Result<(), TestCaseError> {
        while let Some(output) = self.core.poll_output() {
            match output {
                Output::ToClient { conn, frame } => self.deliver(conn, &frame.text())?,
                Output::ToExtension(ToExtension::Command(Command { id, params, .. })) => {
                    if let Some(params) = &params {
                        prop_assert!(
                            params.get().starts_with('{'),
                            "params reached the extension: {}",
                            params.get()
                        );
                    }
                    prop_assert!(self.extension_up, "a command while the extension is away");
                    self.pending.push(id);
                }
                // Tab and window operations are answered when the extension goes (`settle`).
                Output::ToExtension(_)
                | Output::HandoverAnswered { .. }
                | Output::Audit(_)
                | Output::NavigationDecided { .. }
                | Output::KillSwitch { .. } => {}
                Output::CloseClient { conn } => {
                    // The core forgot it (a page socket whose tab went): it is owed nothing more.
                    if let Some(client) = self.clients.get_mut(&conn) {
                        client.live = false;
                    }
                }
            }
        }
        Ok(())
    }

    fn deliver(&mut self, conn: ConnId, frame: &str) -> Result<(), TestCaseError> {
        let value: Value =
            serde_json::from_str(frame).map_err(|e| TestCaseError::fail(format!("{frame}: {e}")))?;
        prop_assert!(value.is_object(), "not an object: {frame}");
        let client = self
            .clients
            .get_mut(&conn)
            .ok_or_else(|| TestCaseError::fail(format!("to a stranger: {frame}")))?;
        prop_assert!(client.live, "to a closed connection: {frame}");
        if let Some(id) = value.get("id") {
            let id = id.as_i64().ok_or_else(|| TestCaseError::fail(format!("bad id: {frame}")))?;
            let owed = client.owed.entry(id).or_default();
            prop_assert!(*owed > 0, "an answer nobody asked for: {frame}");
            *owed -= 1;
            // `attachToTarget` and `attachToBrowserTarget` name their new session.
            if let Some(session) = value["result"]["sessionId"].as_str() {
                client.sessions.push(session.to_owned());
            }
        } else if value.get("error").is_some() {
            prop_assert!(client.owed_without_id > 0, "an error nobody asked for: {frame}");
            client.owed_without_id -= 1;
        } else {
            let method = value["method"].as_str().unwrap_or_default();
            if let Some(session) = value.get("sessionId") {
                let session = session.as_str().unwrap_or_default();
                prop_assert!(
                    client.sessions.iter().any(|s| s == session),
                    "an event of another's session: {frame}"
                );
            }
            let named = value["params"]["sessionId"].as_str().unwrap_or_default().to_owned();
            match method {
                "Target.attachedToTarget" => client.sessions.push(named),
                // From now on, nothing may come on it.
                "Target.detachedFromTarget" => client.sessions.retain(|s| *s != named),
                _ => {}
            }
        }
        Ok(())
    }

    /// Once the extension is gone, every live client has had every answer it is owed.
    fn settle(&mut self) -> Result<(), TestCaseError> {
        self.extension_down();
        self.drain()?;
        for (conn, client) in &self.clients {
            if client.live {
                let unanswered: Vec<_> = client.owed.iter().filter(|(_, n)| **n != 0).collect();
                prop_assert!(unanswered.is_empty(), "connection {conn} still waits for {unanswered:?}");
                prop_assert_eq!(client.owed_without_id, 0, "connection {} owed id-less errors", conn);
            }
        }
        Ok(())
    }
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn every_frame_is_answered_once_and_only_to_its_sender(ops in proptest::collection::vec(op_strategy(), 1..120)) {
        let mut world = World::new();
        // Cases start with a browser and connected clients, so that there are sessions to use.
        world.apply(&Op::ExtensionUp { tabs: vec![1, 2] })?;
        for slot in 0..SLOTS {
            world.apply(&Op::Connect { slot, page_root: None, handshake: Some(slot == 0) })?;
        }
        for op in &ops {
            world.apply(op)?;
        }
        world.settle()?;
    }
}

proptest! {
    #![proptest_config(config(512))]

    /// Any text at all: one answer, never a panic.
    #[test]
    fn any_text_gets_exactly_one_answer(text in proptest::collection::vec(any::<char>(), 0..64).prop_map(|c| c.into_iter().collect::<String>())) {
        let mut world = World::new();
        world.apply(&Op::ExtensionUp { tabs: vec![1] })?;
        world.apply(&Op::Connect { slot: 0, page_root: None, handshake: None })?;
        let conn = world.slots[&0];
        world.core.client_message(world.now_ms, conn, &text);
        let mut answers = Vec::new();
        while let Some(output) = world.core.poll_output() {
            if let Output::ToClient { frame, .. } = output {
                answers.push(frame.into_text());
            }
        }
        prop_assert_eq!(answers.len(), 1, "{:?} got {:?}", text, answers);
    }
}
