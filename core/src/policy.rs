//! What each agent may do: methods it may call (denied, allowed, or asked of the human), the
//! origins its tabs may load, and what stays hidden from it. The daemon reads a TOML file into
//! a [`PolicySet`]; the core decides each command with the agent's [`AgentPolicy`], compiled
//! once.
//!
//! An agent's own section (`[agent.<name>]`) is laid over `[default]`: lists of denied and asked
//! methods and asked origins add up, an allowlist (`allow_methods`, `allow_origins`,
//! `allow_frame_origins`) or a preset set in the agent's section replaces the default's. So a
//! deny in `[default]` holds for every agent.

use crate::gestures::choices::Choices;
use crate::gestures::rule::Triggers;
use crate::origins::{is_local_document, origin_of, OriginPattern};
pub use crate::presets::Preset;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The policy file as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    /// How long a question to the human waits before it counts as a refusal, in seconds.
    #[serde(default)]
    pub ask_timeout: Option<f64>,
    /// The same for the gesture guard's questions (default 90).
    #[serde(default)]
    pub gesture_timeout: Option<f64>,
    #[serde(default)]
    pub default: Section,
    #[serde(default)]
    pub agent: BTreeMap<String, Section>,
}

/// One `[default]` or `[agent.<name>]` section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Section {
    pub preset: Option<Preset>,
    pub deny_methods: Option<Vec<String>>,
    pub allow_methods: Option<Vec<String>>,
    pub ask_methods: Option<Vec<String>>,
    pub allow_origins: Option<Vec<String>>,
    pub ask_origins: Option<Vec<String>>,
    /// Origins that may load in frames of the agent's pages besides `allow_origins` (payment
    /// and sign-in widgets, video players); with the user's cookies. Only with `allow_origins`.
    pub allow_frame_origins: Option<Vec<String>>,
    /// Added to the gesture guard's vocabulary: a gesture or request they name is held.
    pub gesture_words: Option<Vec<String>>,
    /// CSS selectors: a gesture on a matching element (or in a matching form) is held.
    pub gesture_selectors: Option<Vec<String>>,
    /// Origins on whose pages every gesture on something that acts, and every write, is held.
    pub gesture_origins: Option<Vec<String>>,
    /// Per kind of gesture (and per site): ask, allow or deny; and the standing answers a
    /// question offers (`gestures/choices.rs`).
    pub gestures: Option<crate::gestures::choices::ChoicesFile>,
    /// Directories whose files the agent may hand its pages (`DOM.setFileInputFiles`, a
    /// dragged file): absolute, never tabtunnel's own (`local_files.rs`). None by default.
    pub allow_file_uploads: Option<Vec<String>>,
}

/// A method pattern: `Domain.method`, `Domain.*`, `Domain.prefix*` (such as `Page.get*`),
/// `*.method` or `*`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum MethodPattern {
    Exact(String),
    /// `Domain.` or `Domain.prefix`: every method whose name starts so.
    Prefix(String),
    Verb(String),
    Any,
}

impl MethodPattern {
    fn parse(text: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "{text:?} is not a method pattern (Domain.method, Domain.*, Domain.prefix*, *.method or *)"
            )
        };
        if text == "*" {
            return Ok(MethodPattern::Any);
        }
        let (domain, verb) = text.split_once('.').ok_or_else(bad)?;
        let word = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        let prefix = verb.strip_suffix('*').filter(|p| p.is_empty() || word(p));
        match (domain, verb, prefix) {
            ("*", verb, _) if word(verb) => Ok(MethodPattern::Verb(format!(".{verb}"))),
            (domain, _, Some(prefix)) if word(domain) => {
                Ok(MethodPattern::Prefix(format!("{domain}.{prefix}")))
            }
            (domain, verb, _) if word(domain) && word(verb) => Ok(MethodPattern::Exact(text.to_owned())),
            _ => Err(bad()),
        }
    }

    fn matches(&self, method: &str) -> bool {
        match self {
            MethodPattern::Exact(m) => m == method,
            MethodPattern::Prefix(prefix) => method.starts_with(prefix.as_str()),
            MethodPattern::Verb(suffix) => method.ends_with(suffix.as_str()),
            MethodPattern::Any => true,
        }
    }
}

/// A section's `allow_file_uploads`: absolute directories, none a filesystem's root.
fn upload_dirs(section: &str, list: &[String]) -> Result<crate::local_files::Uploads, String> {
    let mut dirs = Vec::new();
    for text in list {
        let dir = crate::local_paths::LocalPath::parse(text).map_err(|why| {
            format!("[{section}]: allow_file_uploads: {why}; name a directory by its absolute path")
        })?;
        if dir.is_root() {
            return Err(format!("[{section}]: allow_file_uploads {text:?} would give every file; name a directory of files meant for agents"));
        }
        dirs.push(dir);
    }
    Ok(crate::local_files::Uploads { dirs, rule: format!("allow_file_uploads in [{section}]") })
}

fn patterns<T>(list: &[String], parse: impl Fn(&str) -> Result<T, String>) -> Result<Vec<T>, String> {
    list.iter().map(|t| parse(t)).collect()
}

/// What the policy says about one command or navigation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// Refused; the string names the rule.
    Deny(String),
    /// The human decides; the string names the rule.
    Ask(String),
}

/// One agent's policy, compiled.
#[derive(Debug, Clone)]
pub struct AgentPolicy {
    /// `default` or `agent.<name>`: where a rule came from, for error messages.
    section: String,
    deny: Vec<(MethodPattern, String)>,
    ask: Vec<(MethodPattern, String)>,
    /// Allowlists (the section's own, a preset's): a method must be on every one.
    allow: Vec<(Vec<MethodPattern>, String)>,
    allow_origins: Option<(Vec<OriginPattern>, String)>,
    ask_origins: Vec<(OriginPattern, String)>,
    allow_frame_origins: Vec<OriginPattern>,
    /// The `read-only` preset is in force: the page, its storage and its place do not change.
    read_only: bool,
    /// A cookie getter is denied: cookie values are kept from every other route too.
    hides_cookies: bool,
    /// The directories of `allow_file_uploads`.
    uploads: crate::local_files::Uploads,
}

impl AgentPolicy {
    /// No rules: everything allowed.
    pub fn open() -> Self {
        AgentPolicy {
            section: "default".into(),
            deny: Vec::new(),
            ask: Vec::new(),
            allow: Vec::new(),
            allow_origins: None,
            ask_origins: Vec::new(),
            allow_frame_origins: Vec::new(),
            read_only: false,
            hides_cookies: false,
            uploads: crate::local_files::Uploads::default(),
        }
    }

    fn compile(section: &str, own: &Section, base: Option<(&str, &Section)>) -> Result<Self, String> {
        let mut policy = AgentPolicy { section: section.to_owned(), ..AgentPolicy::open() };
        let layers = base.into_iter().chain(std::iter::once((section, own)));
        let mut preset = None;
        let mut own_allow = None;
        for (name, layer) in layers {
            for text in layer.deny_methods.iter().flatten() {
                let rule = format!("deny_methods {text:?} in [{name}]");
                policy.deny.push((MethodPattern::parse(text)?, rule));
            }
            for text in layer.ask_methods.iter().flatten() {
                let rule = format!("ask_methods {text:?} in [{name}]");
                policy.ask.push((MethodPattern::parse(text)?, rule));
            }
            if let Some(list) = &layer.allow_methods {
                own_allow =
                    Some((patterns(list, MethodPattern::parse)?, format!("allow_methods in [{name}]")));
            }
            if let Some(list) = &layer.allow_origins {
                let rule = format!("allow_origins in [{name}]");
                policy.allow_origins = Some((patterns(list, OriginPattern::parse)?, rule));
            }
            for text in layer.ask_origins.iter().flatten() {
                let rule = format!("ask_origins {text:?} in [{name}]");
                policy.ask_origins.push((OriginPattern::parse(text)?, rule));
            }
            if let Some(list) = &layer.allow_frame_origins {
                policy.allow_frame_origins = patterns(list, OriginPattern::parse)?;
            }
            if layer.preset.is_some() {
                preset = layer.preset.map(|p| (p, name.to_owned()));
            }
            if let Some(list) = &layer.allow_file_uploads {
                policy.uploads = upload_dirs(name, list)?;
            }
        }
        if !policy.allow_frame_origins.is_empty() && policy.allow_origins.is_none() {
            return Err(format!(
                "[{section}]: allow_frame_origins widens allow_origins for frames; without allow_origins every origin may load already"
            ));
        }
        policy.allow.extend(own_allow);
        if let Some((preset, name)) = preset {
            policy.read_only = preset == Preset::ReadOnly;
            for text in preset.denied().into_iter().flatten() {
                let rule = format!("preset \"{}\" in [{name}] (it denies {text})", preset.name());
                policy.deny.push((MethodPattern::parse(text)?, rule));
            }
            if let Some(allowed) = preset.allowed() {
                let patterns =
                    allowed.iter().map(|t| MethodPattern::parse(t)).collect::<Result<Vec<_>, _>>()?;
                policy.allow.push((patterns, format!("preset \"{}\" in [{name}]", preset.name())));
            }
        }
        policy.hides_cookies =
            crate::presets::COOKIE_GETTERS.iter().any(|m| matches!(policy.method(m), Decision::Deny(_)));
        Ok(policy)
    }

    pub fn section(&self) -> &str {
        &self.section
    }

    /// Whether this policy restricts anything at all.
    pub fn is_open(&self) -> bool {
        self.deny.is_empty()
            && self.ask.is_empty()
            && self.allow.is_empty()
            && self.allow_origins.is_none()
            && self.ask_origins.is_empty()
            && !self.read_only
    }

    /// Deny rules first, then questions, then the allowlists.
    pub fn method(&self, method: &str) -> Decision {
        if let Some((_, rule)) = self.deny.iter().find(|(p, _)| p.matches(method)) {
            return Decision::Deny(rule.clone());
        }
        if let Some((_, rule)) = self.ask.iter().find(|(p, _)| p.matches(method)) {
            return Decision::Ask(rule.clone());
        }
        match self.allow.iter().find(|(patterns, _)| !patterns.iter().any(|p| p.matches(method))) {
            Some((_, rule)) => Decision::Deny(format!("{rule} (it does not list {method})")),
            None => Decision::Allow,
        }
    }

    /// The directories whose files the agent may hand its pages.
    pub(crate) fn uploads(&self) -> &crate::local_files::Uploads {
        &self.uploads
    }

    /// Whether the `read-only` preset is in force.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Whether cookies are kept from the agent: any cookie getter is denied to it (by a rule or
    /// a preset). Then no cookie value reaches it by any other route either (`cookies.rs`).
    pub fn hides_cookies(&self) -> bool {
        self.hides_cookies
    }

    /// Whether the agent is held to some origins (`allow_origins`).
    pub fn restricts_origins(&self) -> bool {
        self.allow_origins.is_some()
    }

    /// Whether a cookie of `domain` (as Chrome lists it: a leading `.` for a domain cookie) is
    /// one the agent's own origins would be sent: with no origin rules, every one.
    pub fn sees_cookies_of(&self, domain: &str) -> bool {
        let Some((allowed, _)) = &self.allow_origins else { return true };
        allowed.iter().chain(&self.allow_frame_origins).any(|p| p.gets_cookies_of(domain))
    }

    /// Whether the origin of `url` (an origin or a URL) is one of `allow_origins`: its storage
    /// as a site the human visits is the agent's. With no origin rules, every one.
    pub fn owns_origin(&self, url: &str) -> bool {
        let Some((allowed, _)) = &self.allow_origins else { return true };
        origin_of(url).is_some_and(|origin| allowed.iter().any(|p| p.matches(&origin)))
    }

    /// Whether the origin of `url` may show in a frame of the agent's pages (`allow_origins`
    /// or `allow_frame_origins`): its storage partitioned under one of the agent's sites is
    /// the agent's.
    pub fn frames_origin(&self, url: &str) -> bool {
        let Some((allowed, _)) = &self.allow_origins else { return true };
        origin_of(url)
            .is_some_and(|origin| allowed.iter().chain(&self.allow_frame_origins).any(|p| p.matches(&origin)))
    }

    /// Whether `site` (`scheme://registrable-domain`, a storage key's top-level site) is the
    /// site of one of `allow_origins`.
    pub fn owns_site(&self, site: &str) -> bool {
        let Some((allowed, _)) = &self.allow_origins else { return true };
        origin_of(site).is_some_and(|site| allowed.iter().any(|p| p.is_within_site(&site)))
    }

    /// Whether a top-level document may load from `url`. Asked origins are asked even when
    /// `allow_origins` also lists them.
    pub fn navigation(&self, url: &str) -> Decision {
        if is_local_document(url) {
            return Decision::Allow;
        }
        let origin = origin_of(url);
        if let Some(origin) = &origin {
            if let Some((_, rule)) = self.ask_origins.iter().find(|(p, _)| p.matches(origin)) {
                return Decision::Ask(rule.clone());
            }
        }
        match &self.allow_origins {
            None => Decision::Allow,
            Some((patterns, rule)) => match origin {
                Some(origin) if patterns.iter().any(|p| p.matches(&origin)) => Decision::Allow,
                _ => Decision::Deny(format!("{rule} (it does not list the origin of {url})")),
            },
        }
    }

    /// Whether a frame of the agent's pages may show a document from `url`: what may load at the
    /// top, or an origin of `allow_frame_origins`. Asked origins are refused in frames (a frame
    /// cannot wait for the human).
    pub fn frame(&self, url: &str) -> Decision {
        match self.navigation(url) {
            Decision::Allow => Decision::Allow,
            Decision::Ask(rule) => Decision::Deny(format!("{rule}; frames are not asked about")),
            Decision::Deny(rule) => match origin_of(url) {
                Some(origin) if self.allow_frame_origins.iter().any(|p| p.matches(&origin)) => {
                    Decision::Allow
                }
                _ => Decision::Deny(format!("{rule} nor allow_frame_origins")),
            },
        }
    }

    /// The rules the browser enforces on the agent's tabs: `None` when it restricts nothing
    /// there.
    pub fn origin_rules(&self) -> Option<tabtunnel_wire::OriginRules> {
        let allow = self
            .allow_origins
            .as_ref()
            .map(|(p, _)| p.iter().map(OriginPattern::url_regex).collect::<Vec<_>>());
        if allow.is_none() && self.ask_origins.is_empty() && !self.read_only {
            return None;
        }
        let ask = self.ask_origins.iter().map(|(p, _)| p.url_regex()).collect();
        let frames =
            allow.as_ref().map(|_| self.allow_frame_origins.iter().map(OriginPattern::url_regex).collect());
        Some(tabtunnel_wire::OriginRules { allow, ask, frames, read_only: self.read_only })
    }
}

/// Every agent's policy, compiled from a policy file.
#[derive(Debug, Clone)]
pub struct PolicySet {
    default: std::sync::Arc<AgentPolicy>,
    agents: BTreeMap<String, std::sync::Arc<AgentPolicy>>,
    pub ask_timeout_ms: u64,
    /// What each agent's policy adds to the gesture guard (`[default]`'s and its own, added up:
    /// a section can add triggers, never remove the built-in ones or the default's).
    default_gestures: std::sync::Arc<Triggers>,
    agent_gestures: BTreeMap<String, std::sync::Arc<Triggers>>,
    pub gesture_timeout_ms: u64,
    /// Each agent's choices per kind of gesture (its section's laid over `[default]`'s).
    default_choices: std::sync::Arc<Choices>,
    agent_choices: BTreeMap<String, std::sync::Arc<Choices>>,
}

/// A section's gesture triggers laid over `base`'s.
fn gesture_triggers(name: &str, own: &Section, base: Option<&Triggers>) -> Result<Triggers, String> {
    let mut triggers = base.cloned().unwrap_or_default();
    triggers.section = name.to_owned();
    triggers.words.extend(own.gesture_words.iter().flatten().cloned());
    for selector in own.gesture_selectors.iter().flatten() {
        if selector.trim().is_empty() || selector.len() > 512 {
            return Err(format!("[{name}]: gesture_selectors {selector:?} is not a CSS selector"));
        }
        triggers.selectors.push(selector.clone());
    }
    for origin in own.gesture_origins.iter().flatten() {
        triggers.origins.push(OriginPattern::parse(origin)?);
    }
    Ok(triggers)
}

fn seconds_to_ms(value: Option<f64>, default: u64, name: &str) -> Result<u64, String> {
    match value {
        None => Ok(default),
        Some(secs) if secs.is_finite() && secs > 0.0 => Ok((secs * 1000.0) as u64),
        Some(_) => Err(format!("{name} must be a positive number of seconds")),
    }
}

impl PolicySet {
    pub const DEFAULT_ASK_TIMEOUT_MS: u64 = 60_000;

    pub fn compile(file: &PolicyFile) -> Result<Self, String> {
        let default = std::sync::Arc::new(AgentPolicy::compile("default", &file.default, None)?);
        let default_gestures = gesture_triggers("default", &file.default, None)?;
        let default_choices = Choices::compile("default", file.default.gestures.as_ref(), None)?;
        let mut agents = BTreeMap::new();
        let mut agent_gestures = BTreeMap::new();
        let mut agent_choices = BTreeMap::new();
        for (name, section) in &file.agent {
            if !crate::is_valid_agent_name(name) {
                return Err(format!("[agent.{name}]: {name:?} is not an agent name"));
            }
            let policy =
                AgentPolicy::compile(&format!("agent.{name}"), section, Some(("default", &file.default)))?;
            agents.insert(name.clone(), std::sync::Arc::new(policy));
            let triggers = gesture_triggers(&format!("agent.{name}"), section, Some(&default_gestures))?;
            agent_gestures.insert(name.clone(), std::sync::Arc::new(triggers));
            let choices = Choices::compile(
                &format!("agent.{name}"),
                section.gestures.as_ref(),
                Some(&default_choices),
            )?;
            agent_choices.insert(name.clone(), std::sync::Arc::new(choices));
        }
        let ask_timeout_ms = seconds_to_ms(file.ask_timeout, Self::DEFAULT_ASK_TIMEOUT_MS, "ask_timeout")?;
        let gesture_timeout_ms = seconds_to_ms(
            file.gesture_timeout,
            crate::gestures::rule::DEFAULT_GESTURE_TIMEOUT_MS,
            "gesture_timeout",
        )?;
        Ok(PolicySet {
            default,
            agents,
            ask_timeout_ms,
            default_gestures: std::sync::Arc::new(default_gestures),
            agent_gestures,
            gesture_timeout_ms,
            default_choices: std::sync::Arc::new(default_choices),
            agent_choices,
        })
    }

    /// The policy's choices per kind of gesture for `agent`.
    pub fn gesture_choices(&self, agent: &str) -> std::sync::Arc<Choices> {
        self.agent_choices.get(agent).unwrap_or(&self.default_choices).clone()
    }

    /// What the policy adds to the gesture guard for `agent`.
    pub fn gesture_triggers(&self, agent: &str) -> std::sync::Arc<Triggers> {
        self.agent_gestures.get(agent).unwrap_or(&self.default_gestures).clone()
    }

    /// The policy of `agent`: its own section laid over `[default]`, or `[default]`.
    pub fn for_agent(&self, agent: &str) -> &std::sync::Arc<AgentPolicy> {
        self.agents.get(agent).unwrap_or(&self.default)
    }

    /// The browser's origin rules: `[default]`'s and each agent section's.
    pub fn origin_rules(&self) -> tabtunnel_wire::NavigationRules {
        tabtunnel_wire::NavigationRules {
            default: self.default.origin_rules(),
            agents: self.agents.iter().map(|(name, p)| (name.clone(), p.origin_rules())).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The issue's example, as JSON (the daemon reads TOML into the same types).
    fn example() -> PolicySet {
        let file: PolicyFile = serde_json::from_value(serde_json::json!({
            "default": {
                "deny_methods": ["Network.getAllCookies", "Network.getCookies", "Storage.getCookies"],
                "allow_origins": ["http://127.0.0.1:*", "https://*.example.com"],
                "ask_origins": ["https://mail.example.com"]
            },
            "agent": { "reader": { "preset": "read-only" } }
        }))
        .unwrap();
        PolicySet::compile(&file).unwrap()
    }

    #[test]
    fn denied_methods_name_their_rule() {
        let p = example();
        let anyone = p.for_agent("someone");
        assert_eq!(
            anyone.method("Network.getAllCookies"),
            Decision::Deny("deny_methods \"Network.getAllCookies\" in [default]".into())
        );
        assert_eq!(anyone.method("Runtime.evaluate"), Decision::Allow);
        // The reader's own section keeps the default's denials and adds its preset's.
        let reader = p.for_agent("reader");
        assert!(matches!(reader.method("Storage.getCookies"), Decision::Deny(r) if r.contains("[default]")));
        assert!(
            matches!(reader.method("Input.dispatchKeyEvent"), Decision::Deny(r) if r.contains("read-only") && r.contains("[agent.reader]"))
        );
        assert!(matches!(reader.method("Page.navigate"), Decision::Deny(_)));
        for ok in [
            "Page.captureScreenshot",
            "Accessibility.getFullAXTree",
            "Runtime.callFunctionOn",
            "DOM.describeNode",
            "Page.getLayoutMetrics",
            "Runtime.enable",
            "Target.setAutoAttach",
            "Page.createIsolatedWorld",
        ] {
            assert_eq!(reader.method(ok), Decision::Allow, "{ok}");
        }
        // Read-only is an allowlist: what is not known to only read is refused, whatever the
        // domain (the issue's probes: each of these changed the page or its place).
        for changes in [
            "Page.reload",
            "Page.close",
            "Page.addScriptToEvaluateOnNewDocument",
            "Emulation.setUserAgentOverride",
            "Emulation.setGeolocationOverride",
            "Network.setExtraHTTPHeaders",
            "Network.emulateNetworkConditions",
            "Runtime.runScript",
            "Runtime.terminateExecution",
            "Debugger.enable",
            "Fetch.enable",
            "DOM.focus",
            "CSS.setStyleTexts",
            "Page.setWebLifecycleState",
            "Target.createTarget",
            "Input.insertText",
            "SomeFuture.method",
        ] {
            assert!(matches!(reader.method(changes), Decision::Deny(_)), "{changes}");
        }
        assert!(reader.is_read_only());
        assert!(!anyone.is_read_only());
    }

    #[test]
    fn origins_are_allowed_asked_or_denied() {
        let p = example();
        let a = p.for_agent("a");
        assert_eq!(a.navigation("http://127.0.0.1:8123/app?x=1"), Decision::Allow);
        assert_eq!(a.navigation("https://shop.example.com/"), Decision::Allow);
        assert_eq!(a.navigation("https://a.b.example.com:443/x"), Decision::Allow);
        assert_eq!(a.navigation("about:blank"), Decision::Allow);
        assert!(
            matches!(a.navigation("https://mail.example.com/inbox"), Decision::Ask(r) if r.contains("ask_origins"))
        );
        for denied in [
            "https://example.com/",
            "https://evil.com/?https://x.example.com",
            "http://shop.example.com/",
            "https://shop.example.com:8443/",
            "http://localhost:8000/",
            "https://example.com.evil.com/",
            "https://user@evil.com/",
            "data:text/html,hi",
            "javascript:alert(1)",
        ] {
            assert!(
                matches!(a.navigation(denied), Decision::Deny(r) if r.contains("allow_origins")),
                "{denied}"
            );
        }
        // No origin rules: anything loads.
        assert_eq!(AgentPolicy::open().navigation("https://anywhere.test/"), Decision::Allow);
        // As Chrome parses it, this URL is localhost:1, which the rules do not list.
        assert!(matches!(a.navigation(r"http://localhost:1\@127.0.0.1:2/"), Decision::Deny(_)));
    }

    #[test]
    fn frames_load_from_allowed_and_frame_origins_and_never_ask() {
        let file: PolicyFile = serde_json::from_value(serde_json::json!({
            "default": {
                "allow_origins": ["http://127.0.0.1:*"],
                "ask_origins": ["http://127.0.0.1:9999"],
                "allow_frame_origins": ["https://js.stripe.com"]
            },
            "agent": { "open": { "allow_origins": ["https://*.example.com"], "allow_frame_origins": [] } }
        }))
        .unwrap();
        let p = PolicySet::compile(&file).unwrap();
        let a = p.for_agent("a");
        assert_eq!(a.frame("http://127.0.0.1:5/x"), Decision::Allow);
        assert_eq!(a.frame("https://js.stripe.com/v3/"), Decision::Allow);
        assert_eq!(a.frame("about:blank"), Decision::Allow);
        assert!(matches!(a.frame("http://127.0.0.1:9999/"), Decision::Deny(r) if r.contains("not asked")));
        assert!(matches!(a.frame("http://localhost:5/"), Decision::Deny(_)));
        // Frame origins never open a top-level document.
        assert!(matches!(a.navigation("https://js.stripe.com/v3/"), Decision::Deny(_)));
        assert!(matches!(p.for_agent("open").frame("https://js.stripe.com/"), Decision::Deny(_)));
        let rules = a.origin_rules().unwrap();
        assert_eq!(rules.frames.as_deref().map(<[String]>::len), Some(1));
        assert!(!rules.read_only);
        // Frame origins widen allow_origins; alone they mean nothing.
        let alone: PolicyFile = serde_json::from_value(
            serde_json::json!({"default": {"allow_frame_origins": ["https://a.test"]}}),
        )
        .unwrap();
        assert!(PolicySet::compile(&alone).unwrap_err().contains("allow_frame_origins"));
    }

    #[test]
    fn cookies_are_hidden_when_a_getter_is_denied() {
        let p = example();
        assert!(p.for_agent("a").hides_cookies(), "the example denies the getters in [default]");
        let presets: PolicyFile = serde_json::from_value(serde_json::json!({
            "agent": { "baker": { "preset": "no-cookies" }, "tools": { "preset": "minimal" }, "reader": { "preset": "read-only" } }
        }))
        .unwrap();
        let p = PolicySet::compile(&presets).unwrap();
        assert!(p.for_agent("baker").hides_cookies());
        assert!(p.for_agent("tools").hides_cookies());
        assert!(!p.for_agent("reader").hides_cookies());
        assert!(!p.for_agent("someone").hides_cookies());
        let one: PolicyFile =
            serde_json::from_value(serde_json::json!({"default": {"deny_methods": ["Storage.getCookies"]}}))
                .unwrap();
        assert!(PolicySet::compile(&one).unwrap().for_agent("x").hides_cookies());
        // Read-only tells the browser to hold the tab still, even without origin rules.
        let reader = PolicySet::compile(&presets).unwrap();
        let rules = reader.for_agent("reader").origin_rules().unwrap();
        assert!(rules.read_only && rules.allow.is_none() && rules.frames.is_none());
        assert!(reader.for_agent("baker").origin_rules().is_none());
    }

    #[test]
    fn allowlists_and_presets() {
        let file: PolicyFile = serde_json::from_value(serde_json::json!({
            "default": { "allow_methods": ["Runtime.*", "Page.captureScreenshot", "*.enable"], "ask_methods": ["Runtime.evaluate"] },
            "agent": { "tools": { "preset": "minimal" }, "baker": { "preset": "no-cookies" } }
        }))
        .unwrap();
        let p = PolicySet::compile(&file).unwrap();
        let d = p.for_agent("x");
        assert!(matches!(d.method("Runtime.evaluate"), Decision::Ask(_)), "asked before the allowlist");
        assert_eq!(d.method("Runtime.callFunctionOn"), Decision::Allow);
        assert_eq!(d.method("Network.enable"), Decision::Allow);
        assert!(
            matches!(d.method("Input.insertText"), Decision::Deny(r) if r.contains("allow_methods in [default]"))
        );
        let tools = p.for_agent("tools");
        assert!(matches!(tools.method("Input.insertText"), Decision::Deny(_)), "both allowlists must allow");
        assert!(
            matches!(p.for_agent("baker").method("Network.setCookie"), Decision::Deny(r) if r.contains("no-cookies"))
        );
        assert!(PolicySet::compile(
            &serde_json::from_value(serde_json::json!({"default": {"deny_methods": ["Network"]}})).unwrap()
        )
        .is_err());
        assert!(
            serde_json::from_value::<PolicyFile>(serde_json::json!({"default": {"deny": []}})).is_err(),
            "unknown keys are refused"
        );
        // Prefix patterns.
        let prefixed: PolicyFile = serde_json::from_value(
            serde_json::json!({"default": {"allow_methods": ["Page.get*", "*.enable"]}}),
        )
        .unwrap();
        let prefixed = PolicySet::compile(&prefixed).unwrap();
        assert_eq!(prefixed.for_agent("x").method("Page.getFrameTree"), Decision::Allow);
        assert!(matches!(prefixed.for_agent("x").method("Page.navigate"), Decision::Deny(_)));
        for bad in ["Page.get**", "Page.*get", "*.*", "Page.ge t*"] {
            let file: PolicyFile =
                serde_json::from_value(serde_json::json!({"default": {"deny_methods": [bad]}})).unwrap();
            assert!(PolicySet::compile(&file).is_err(), "{bad}");
        }
    }

    #[test]
    fn minimal_lets_clients_start() {
        let minimal = PolicySet::compile(
            &serde_json::from_value(serde_json::json!({"default": {"preset": "minimal"}})).unwrap(),
        )
        .unwrap();
        let policy = minimal.for_agent("x");
        // What puppeteer, Playwright and chrome-devtools-mcp send to open a page and use it.
        for method in [
            "Target.setAutoAttach",
            "Target.createTarget",
            "Browser.getVersion",
            "Page.enable",
            "Runtime.enable",
            "Network.enable",
            "Performance.enable",
            "Audits.enable",
            "Log.enable",
            "Page.navigate",
            "Runtime.callFunctionOn",
            "Input.dispatchMouseEvent",
            "Page.captureScreenshot",
            "Accessibility.getFullAXTree",
            "Emulation.setFocusEmulationEnabled",
            "DOM.describeNode",
        ] {
            assert_eq!(policy.method(method), Decision::Allow, "{method}");
        }
        for method in [
            "Network.getCookies",
            "Storage.clearDataForOrigin",
            "Fetch.enable",
            "Debugger.pause",
            "Browser_.x",
        ] {
            assert!(matches!(policy.method(method), Decision::Deny(_)), "{method}");
        }
    }

    #[test]
    fn allow_file_uploads_is_absolute_directories_replaced_per_agent() {
        let compile = |file: serde_json::Value| {
            PolicySet::compile(&serde_json::from_value::<PolicyFile>(file).unwrap())
        };
        let set = compile(serde_json::json!({
            "default": {"allow_file_uploads": ["/home/me/agent-uploads"]},
            "agent": {"mine": {"allow_file_uploads": ["/srv/mine/"]}, "other": {}}
        }))
        .unwrap();
        let given = |agent: &str, path: &str| {
            let private = [];
            let params = serde_json::json!({"files": [path]}).to_string();
            let uploads = set.for_agent(agent).uploads();
            crate::local_files::refusal("DOM.setFileInputFiles", Some(&params), uploads, &private).is_none()
        };
        assert!(given("other", "/home/me/agent-uploads/a.pdf"), "[default]'s");
        assert!(
            given("mine", "/srv/mine/a.pdf") && !given("mine", "/home/me/agent-uploads/a.pdf"),
            "replaced"
        );
        assert!(set.for_agent("other").is_open(), "naming upload dirs restricts nothing else");
        for bad in ["agent-uploads", "~/agent-uploads", "/home/me/../../etc", "/", "C:\\"] {
            let error = compile(serde_json::json!({"default": {"allow_file_uploads": [bad]}})).unwrap_err();
            assert!(error.contains("allow_file_uploads"), "{bad}: {error}");
        }
    }
}
