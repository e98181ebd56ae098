//! The harness of the core's unit tests: a core fed frames, and what each step produced.

use crate::*;
use serde_json::{json, Value};
use tabtunnel_wire::{BrowserInfo, BrowserOp, BrowserRequest, Hello, RequestId, TabInfo};

pub const BROWSER_ID: &str = "BROWSER-1";
pub const NAVIGATION_URL: &str = "http://127.0.0.1:1/T/tabtunnel/navigation";
/// A secret of the daemon's, which the audit trail must never hold.
pub const SECRET: &str = "5ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7";

/// tabtunnel's config dir, whose files no agent hands a page.
pub const PRIVATE_DIR: &str = "/home/me/.config/tabtunnel";

pub struct Harness {
    pub core: Core,
    /// The time the harness's inputs carry; [`Harness::tick`] moves it.
    pub now: u64,
}

/// Agent `scout` on a tab of its own (tab 1), attached through connection 1 as Playwright
/// attaches, under the `[default]` policy `section` if any: the harness, drained, and the page's
/// session.
pub fn scout_on_its_tab(section: Option<Value>) -> (Harness, String) {
    let mut h = Harness::with_tabs(&[]);
    if let Some(section) = section {
        h.core.set_policy(h.now, Some(default_policy(section)));
    }
    h.ext(FromExtension::TabShared(agent_tab(1, "scout", true)));
    h.connect_as(1, "scout");
    let session = h.playwright_attach(1)[0].clone();
    h.drain();
    (h, session)
}

/// The rules of a policy file whose `[default]` section is `section` (JSON for TOML).
pub fn default_policy(section: Value) -> crate::policy::PolicySet {
    let file: crate::policy::PolicyFile = serde_json::from_value(json!({ "default": section })).unwrap();
    crate::policy::PolicySet::compile(&file).unwrap()
}

/// What one step produced, split by destination.
#[derive(Debug, Default)]
pub struct Step {
    pub client: Vec<(ConnId, Value)>,
    pub extension: Vec<ToExtension>,
    pub closed: Vec<ConnId>,
    pub other: Vec<Output>,
}

impl Step {
    pub fn to(&self, conn: ConnId) -> Vec<&Value> {
        self.client.iter().filter(|(c, _)| *c == conn).map(|(_, v)| v).collect()
    }

    pub fn only_reply(&self, conn: ConnId) -> &Value {
        let frames = self.to(conn);
        assert_eq!(frames.len(), 1, "expected exactly one frame, got {frames:#?}");
        assert!(frames[0].get("id").is_some(), "expected a reply, got {}", frames[0]);
        frames[0]
    }

    pub fn methods(&self, conn: ConnId) -> Vec<String> {
        self.to(conn)
            .iter()
            .map(|f| match f.get("method") {
                Some(m) => m.as_str().unwrap().to_owned(),
                None => format!("reply#{}", f["id"]),
            })
            .collect()
    }

    /// The tab and window operations asked of the extension, with their request ids.
    pub fn browser_ops(&self) -> Vec<(RequestId, &BrowserOp)> {
        self.extension
            .iter()
            .filter_map(|f| match f {
                ToExtension::Browser(BrowserRequest { id, op }) => Some((*id, op)),
                _ => None,
            })
            .collect()
    }

    pub fn commands(&self) -> Vec<&Command> {
        self.extension
            .iter()
            .filter_map(|f| match f {
                ToExtension::Command(c) => Some(c),
                _ => None,
            })
            .collect()
    }
}

pub fn tab_info(tab_id: TabId) -> TabInfo {
    TabInfo {
        tab_id,
        window_id: 1,
        target_id: format!("PAGE{tab_id}"),
        browser_context_id: "CTX".into(),
        url: format!("http://127.0.0.1:8000/{tab_id}.html"),
        title: format!("Tab {tab_id}"),
        opener_target_id: None,
        agent: DEFAULT_AGENT.into(),
        created: false,
        kind: Default::default(),
    }
}

/// A tab of `agent`'s.
pub fn agent_tab(tab_id: TabId, agent: &str, created: bool) -> TabInfo {
    TabInfo { agent: agent.into(), created, ..tab_info(tab_id) }
}

pub fn hello(tabs: &[TabId]) -> Hello {
    Hello {
        protocol_version: tabtunnel_wire::PROTOCOL_VERSION,
        extension_version: "0.1.0".into(),
        instance_id: "browser-1".into(),
        browser: BrowserInfo {
            product: "Chrome/156.0.8078.73".into(),
            user_agent: "Mozilla/5.0 Chrome/156.0.0.0".into(),
            protocol_version: "1.3".into(),
            js_version: "15.6".into(),
        },
        tabs: tabs.iter().map(|t| tab_info(*t)).collect(),
        kill_switch: false,
        take_over: false,
    }
}

/// An event of tab `tab`'s debugger session (or of its child `child`).
pub fn event(tab: TabId, child: Option<&str>, method: &str, params: &str) -> FromExtension {
    FromExtension::Event(tabtunnel_wire::Event {
        tab_id: tab,
        child_session_id: child.map(str::to_owned),
        method: method.into(),
        params: raw(params),
    })
}

pub fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).unwrap()
}

impl Harness {
    pub fn new() -> Self {
        Harness::with_limits(Limits::default())
    }

    pub fn with_limits(limits: Limits) -> Self {
        Harness {
            core: Core::new(Config {
                browser_target_id: BROWSER_ID.into(),
                session_id_salt: 0xAB,
                limits,
                navigation_url: NAVIGATION_URL.into(),
                secrets: vec![SECRET.into()],
                prepare_tabs: true,
                private_dirs: vec![PRIVATE_DIR.into()],
            }),
            now: 0,
        }
    }

    /// A harness whose extension is connected with `tabs` shared.
    pub fn with_tabs(tabs: &[TabId]) -> Self {
        Harness::with_tabs_and_limits(tabs, Limits::default())
    }

    pub fn with_tabs_and_limits(tabs: &[TabId], limits: Limits) -> Self {
        let mut h = Harness::with_limits(limits);
        h.core.extension_connected(0, hello(tabs)).unwrap();
        h.drain();
        h
    }

    pub fn drain(&mut self) -> Step {
        let mut step = Step::default();
        while let Some(out) = self.core.poll_output() {
            match out {
                Output::ToClient { conn, frame } => {
                    let frame = frame.text();
                    let value: Value = serde_json::from_str(&frame)
                        .unwrap_or_else(|e| panic!("core wrote invalid JSON {frame}: {e}"));
                    step.client.push((conn, value));
                }
                Output::ToExtension(frame) => step.extension.push(frame),
                Output::CloseClient { conn } => step.closed.push(conn),
                other => step.other.push(other),
            }
        }
        step
    }

    /// The extension answers request `id` with `result`.
    pub fn answer(&mut self, id: RequestId, result: Value) -> Step {
        let result = tabtunnel_wire::CommandResult::ok(id, raw(&result.to_string()));
        self.ext(FromExtension::CommandResult(result))
    }

    /// The extension answers request `id` with `result` as the shell's hot path hands answers
    /// over: the result's bytes shared with the message they came in. The client frames as the
    /// core wrote them (the rest of what the step produced is dropped).
    pub fn answer_shared(&mut self, id: RequestId, result: &str) -> Vec<(ConnId, ClientFrame)> {
        let message = bytes::Bytes::copy_from_slice(result.as_bytes());
        let text = std::str::from_utf8(&message).expect("a result is text");
        self.core.extension_result(self.now, id, Ok(ResultText::shared(text, &message)));
        let mut frames = Vec::new();
        while let Some(output) = self.core.poll_output() {
            if let Output::ToClient { conn, frame } = output {
                frames.push((conn, frame));
            }
        }
        frames
    }

    pub fn ext(&mut self, frame: FromExtension) -> Step {
        self.core.extension_frame(self.now, frame);
        self.drain()
    }

    /// The time is `now_ms`, and the core is told it may be time for its deadlines.
    pub fn tick(&mut self, now_ms: u64) -> Step {
        self.now = now_ms;
        self.core.handle_timeout(now_ms);
        self.drain()
    }

    /// The core's next deadline once the side panel heard what the inputs so far changed (a
    /// report is due right after an input: see `agents::REPORT_EVERY_MS`).
    pub fn next_deadline(&mut self) -> Option<u64> {
        self.tick(self.now);
        self.core.poll_timeout()
    }

    pub fn connect(&mut self, conn: ConnId) {
        self.connect_as(conn, DEFAULT_AGENT);
    }

    pub fn connect_as(&mut self, conn: ConnId, agent: &str) {
        self.core.client_connected(self.now, conn, AgentId::new(agent), Root::Browser);
    }

    pub fn send(&mut self, conn: ConnId, frame: Value) -> Step {
        self.send_text(conn, &frame.to_string())
    }

    pub fn send_text(&mut self, conn: ConnId, text: &str) -> Step {
        self.core.client_message(self.now, conn, text);
        self.drain()
    }

    /// Puppeteer's connect handshake; returns (tab session, page session) of tab `tab`.
    pub fn puppeteer_attach(&mut self, conn: ConnId, tab: TabId) -> (String, String) {
        self.send(conn, json!({"id": 1, "method": "Target.setDiscoverTargets", "params": {"discover": true, "filter": [{}]}}));
        let step = self.send(
            conn,
            json!({"id": 2, "method": "Target.setAutoAttach", "params": {
            "waitForDebuggerOnStart": true, "flatten": true, "autoAttach": true,
            "filter": [{"type": "page", "exclude": true}, {}]}}),
        );
        let tab_session = step
            .to(conn)
            .iter()
            .find(|f| {
                f["method"] == "Target.attachedToTarget"
                    && f["params"]["targetInfo"]["url"].as_str().unwrap().contains(&format!("/{tab}.html"))
            })
            .map(|f| f["params"]["sessionId"].as_str().unwrap().to_owned())
            .expect("tab attached");
        let step = self.send(
            conn,
            json!({"id": 3, "sessionId": tab_session, "method": "Target.setAutoAttach", "params": {
            "waitForDebuggerOnStart": true, "flatten": true, "autoAttach": true, "filter": [{}]}}),
        );
        let page_session = step.to(conn)[0]["params"]["sessionId"].as_str().unwrap().to_owned();
        (tab_session, page_session)
    }

    /// Playwright's connect handshake; returns the page session of each tab, in tab order.
    pub fn playwright_attach(&mut self, conn: ConnId) -> Vec<String> {
        let step = self.send(
            conn,
            json!({"id": 1, "method": "Target.setAutoAttach", "params": {
            "autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}}),
        );
        step.to(conn)
            .iter()
            .filter(|f| f["method"] == "Target.attachedToTarget")
            .map(|f| f["params"]["sessionId"].as_str().unwrap().to_owned())
            .collect()
    }
}
