//! Per-session domain state on a shared tab.
//!
//! In Chrome every session has its own agents: enabling `Runtime` on one session reports the
//! page's execution contexts to it, and disabling it there leaves other sessions untouched.
//! Here all client sessions on a tab share one `chrome.debugger` session, so the core keeps
//! that separation itself:
//! - each page session records which event-gated domains it enabled, and a domain's events
//!   go only to the sessions that enabled it;
//! - `X.disable` reaches the tab only when no other session still has `X` enabled;
//! - a `Runtime.enable` on a tab whose Runtime is already on gets the live execution contexts
//!   replayed before its reply, since Chrome reports them only to the first enable.

use crate::session::ConnId;

/// Domains whose events Chrome sends only to a session that enabled them.
const GATED_DOMAINS: [&str; 19] = [
    "Accessibility",
    "Animation",
    "Audits",
    "CSS",
    "DOM",
    "DOMStorage",
    "Debugger",
    "Fetch",
    "LayerTree",
    "Log",
    "Media",
    "Network",
    "Overlay",
    "Page",
    "Performance",
    "Profiler",
    "Runtime",
    "WebAuthn",
    "WebMCP",
];

/// Index of `Page` in [`GATED_DOMAINS`].
pub const PAGE: Domain = Domain(13);
/// Index of `Runtime` in [`GATED_DOMAINS`].
pub const RUNTIME: Domain = Domain(16);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Domain(u8);

impl Domain {
    pub fn name(self) -> &'static str {
        GATED_DOMAINS[self.0 as usize]
    }
}

/// The domain of a method or event name, if its events are gated by `enable`.
pub fn gated_domain(method: &str) -> Option<Domain> {
    let name = method.split_once('.').map_or(method, |(domain, _)| domain);
    GATED_DOMAINS.iter().position(|d| *d == name).map(|i| Domain(i as u8))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toggle {
    Enable(Domain),
    Disable(Domain),
}

/// `X.enable` / `X.disable` of a gated domain.
pub fn toggle(method: &str) -> Option<Toggle> {
    let (_, verb) = method.split_once('.')?;
    let domain = gated_domain(method)?;
    match verb {
        "enable" => Some(Toggle::Enable(domain)),
        "disable" => Some(Toggle::Disable(domain)),
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DomainSet(u32);

impl DomainSet {
    pub fn contains(self, domain: Domain) -> bool {
        self.0 & (1 << domain.0) != 0
    }

    pub fn insert(&mut self, domain: Domain) {
        self.0 |= 1 << domain.0;
    }

    pub fn remove(&mut self, domain: Domain) {
        self.0 &= !(1 << domain.0);
    }

    pub fn union(self, other: DomainSet) -> DomainSet {
        DomainSet(self.0 | other.0)
    }

    pub fn iter(self) -> impl Iterator<Item = Domain> {
        (0..GATED_DOMAINS.len() as u8).map(Domain).filter(move |d| self.contains(*d))
    }
}

/// One client session attached to a target (a tab's page, or one of Chrome's child sessions).
#[derive(Debug, Clone)]
pub struct TargetSession {
    pub conn: ConnId,
    /// The client's sessionId for it: minted for a page, Chrome's own for a child.
    pub session_id: String,
    pub domains: DomainSet,
    /// It called `Log.startViolationsReport`: `violation` log entries are for it.
    pub violations: bool,
    /// It started a trace: `Tracing` events are for it (until `tracingComplete`).
    pub tracing: bool,
    /// It turned `Target.setAutoAttach` on: children's attach and detach events are for it.
    pub auto_attach: bool,
    /// With `waitForDebuggerOnStart`: it resumes the children it hears of itself.
    pub wait_for_debugger: bool,
    /// Its own `Fetch.enable`, added to the gesture guard's interception (`gestures/`).
    pub fetch: Option<crate::gestures::interception::ClientFetch>,
}

impl TargetSession {
    pub fn new(conn: ConnId, session_id: String) -> Self {
        TargetSession {
            conn,
            session_id,
            domains: DomainSet::default(),
            violations: false,
            tracing: false,
            auto_attach: false,
            wait_for_debugger: false,
            fetch: None,
        }
    }

    /// Whether an event of `method` is for this session. Only a violation report's entries
    /// look at the params (a substring test, no parse).
    pub fn wants(&self, method: &str, params: &str) -> bool {
        if method.starts_with("Tracing.") {
            return self.tracing;
        }
        if matches!(method, "Target.attachedToTarget" | "Target.detachedFromTarget") {
            return self.auto_attach;
        }
        let gated_in = gated_domain(method).is_none_or(|d| self.domains.contains(d));
        gated_in
            && (self.violations || method != "Log.entryAdded" || !params.contains(r#""source":"violation""#))
    }
}

/// The tab's live execution contexts, as the `executionContextCreated` params that announced
/// them, kept while the tab's Runtime is enabled.
#[derive(Debug, Default)]
pub struct ExecutionContexts {
    live: Vec<LiveContext>,
}

#[derive(Debug)]
struct LiveContext {
    id: i64,
    /// Its `uniqueId`, which commands may name instead of the id.
    unique_id: Option<String>,
    /// A world a client made for its own scripts (`auxData.type` "isolated"), not the page's.
    isolated: bool,
    announcement: String,
}

impl ExecutionContexts {
    /// Follows the three Runtime events that change the set; parses only those.
    pub fn observe(&mut self, method: &str, params: &str) {
        #[derive(serde::Deserialize)]
        struct Created {
            context: Context,
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Context {
            id: i64,
            unique_id: Option<String>,
            aux_data: Option<AuxData>,
        }
        #[derive(serde::Deserialize)]
        struct AuxData {
            #[serde(rename = "type")]
            kind: Option<String>,
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Destroyed {
            execution_context_id: i64,
        }
        match method {
            "Runtime.executionContextCreated" => {
                if let Ok(Created { context }) = serde_json::from_str::<Created>(params) {
                    self.live.retain(|c| c.id != context.id);
                    let isolated = context.aux_data.and_then(|a| a.kind).as_deref() == Some("isolated");
                    self.live.push(LiveContext {
                        id: context.id,
                        unique_id: context.unique_id,
                        isolated,
                        announcement: params.to_owned(),
                    });
                }
            }
            "Runtime.executionContextDestroyed" => {
                if let Ok(destroyed) = serde_json::from_str::<Destroyed>(params) {
                    self.live.retain(|c| c.id != destroyed.execution_context_id);
                }
            }
            "Runtime.executionContextsCleared" => self.live.clear(),
            _ => {}
        }
    }

    pub fn clear(&mut self) {
        self.live.clear();
    }

    pub fn ids(&self) -> impl Iterator<Item = i64> + '_ {
        self.live.iter().map(|c| c.id)
    }

    /// The `executionContextCreated` params of those of `ids` still live, oldest first.
    pub fn announcements_of<'a>(&'a self, ids: &'a [i64]) -> impl Iterator<Item = &'a str> + 'a {
        self.live.iter().filter(|c| ids.contains(&c.id)).map(|c| c.announcement.as_str())
    }

    /// Whether the context a command names (by id or unique id) is known to be an isolated
    /// world; `false` for the page's own worlds and for contexts not seen.
    pub fn is_isolated(&self, id: Option<i64>, unique_id: Option<&str>) -> bool {
        self.live.iter().any(|c| {
            c.isolated && (id == Some(c.id) || (unique_id.is_some() && c.unique_id.as_deref() == unique_id))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_gated_domains_and_toggles() {
        assert_eq!(gated_domain("Runtime.consoleAPICalled"), Some(RUNTIME));
        assert_eq!(gated_domain("Page.javascriptDialogOpening"), Some(PAGE));
        assert!(gated_domain("Target.attachedToTarget").is_none());
        assert!(gated_domain("Inspector.detached").is_none());
        assert_eq!(toggle("Runtime.enable"), Some(Toggle::Enable(RUNTIME)));
        assert_eq!(toggle("Runtime.disable"), Some(Toggle::Disable(RUNTIME)));
        assert!(toggle("Runtime.evaluate").is_none());
        assert!(toggle("Inspector.enable").is_none());
        assert!(matches!(toggle("Network.enable"), Some(Toggle::Enable(_))));
    }

    #[test]
    fn a_session_wants_only_events_of_domains_it_enabled() {
        let mut s = TargetSession::new(1, "S".into());
        assert!(!s.wants("Runtime.executionContextCreated", "{}"));
        assert!(s.wants("Inspector.targetCrashed", "{}"), "ungated events go to every session");
        assert!(!s.wants("Target.attachedToTarget", "{}"), "children only for who auto-attaches");
        s.auto_attach = true;
        assert!(s.wants("Target.attachedToTarget", "{}"));
        s.domains.insert(RUNTIME);
        assert!(s.wants("Runtime.executionContextCreated", "{}"));
        assert!(!s.wants("Network.requestWillBeSent", "{}"));
        s.domains.remove(RUNTIME);
        assert!(!s.wants("Runtime.consoleAPICalled", "{}"));
        let log = gated_domain("Log.enable").unwrap();
        s.domains.insert(log);
        let violation = r#"{"entry":{"source":"violation","level":"verbose"}}"#;
        assert!(s.wants("Log.entryAdded", r#"{"entry":{"source":"network"}}"#));
        assert!(!s.wants("Log.entryAdded", violation), "violations only for who asked");
        s.violations = true;
        assert!(s.wants("Log.entryAdded", violation));
    }

    #[test]
    fn domain_sets_iterate_and_unite() {
        let mut a = DomainSet::default();
        a.insert(RUNTIME);
        let mut b = DomainSet::default();
        b.insert(gated_domain("Page.enable").unwrap());
        let names: Vec<&str> = a.union(b).iter().map(Domain::name).collect();
        assert_eq!(names, ["Page", "Runtime"]);
        assert_eq!(DomainSet::default().iter().count(), 0);
    }

    #[test]
    fn follows_execution_contexts() {
        let mut c = ExecutionContexts::default();
        c.observe("Runtime.executionContextCreated", r#"{"context":{"id":1,"name":""}}"#);
        c.observe("Runtime.executionContextCreated", r#"{"context":{"id":2,"name":"w"}}"#);
        c.observe("Runtime.consoleAPICalled", r#"{"executionContextId":1}"#);
        assert_eq!(c.ids().collect::<Vec<_>>(), [1, 2]);
        c.observe("Runtime.executionContextDestroyed", r#"{"executionContextId":1}"#);
        let left: Vec<&str> = c.announcements_of(&[1, 2]).collect();
        assert_eq!(left, [r#"{"context":{"id":2,"name":"w"}}"#]);
        assert_eq!(c.announcements_of(&[1]).count(), 0);
        c.observe("Runtime.executionContextsCleared", "{}");
        assert_eq!(c.ids().count(), 0);
    }
}
