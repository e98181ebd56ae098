//! What each agent may do: methods it may call (denied, allowed, or asked of the human) and the
//! origins its tabs may load. The daemon reads a TOML file into a [`PolicySet`]; the core
//! decides each command with the agent's [`AgentPolicy`], compiled once.
//!
//! An agent's own section (`[agent.<name>]`) is laid over `[default]`: lists of denied and asked
//! methods and asked origins add up, an allowlist (`allow_methods`, `allow_origins`) or a preset
//! set in the agent's section replaces the default's. So a deny in `[default]` holds for every
//! agent.

use serde::Deserialize;
use std::collections::BTreeMap;

/// The policy file as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    /// How long a question to the human waits before it counts as a refusal, in seconds.
    #[serde(default)]
    pub ask_timeout: Option<f64>,
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// No input, no navigation away, no writes to storage or cookies; reading (snapshots,
    /// screenshots, scripts that read) stays possible.
    ReadOnly,
    /// No reading or writing cookies through CDP.
    NoCookies,
    /// Only what page-level tools need: the page, its DOM, scripts, input, screenshots.
    Minimal,
}

impl Preset {
    fn name(self) -> &'static str {
        match self {
            Preset::ReadOnly => "read-only",
            Preset::NoCookies => "no-cookies",
            Preset::Minimal => "minimal",
        }
    }

    fn denied(self) -> Vec<&'static [&'static str]> {
        // The cookie methods read or write the user's logins; interception rewrites what pages
        // load.
        const COOKIES: &[&str] = &[
            "Network.getCookies",
            "Network.getAllCookies",
            "Network.setCookie",
            "Network.setCookies",
            "Network.deleteCookies",
            "Network.clearBrowserCookies",
            "Storage.getCookies",
            "Storage.setCookies",
            "Storage.clearCookies",
        ];
        const INTERCEPTION: &[&str] = &["Fetch.*"];
        match self {
            Preset::NoCookies => vec![COOKIES],
            Preset::Minimal => vec![COOKIES, INTERCEPTION],
            Preset::ReadOnly => vec![&[
                "Input.*",
                "Page.navigate",
                "Page.navigateToHistoryEntry",
                "Page.setDocumentContent",
                "Page.setDownloadBehavior",
                "Page.handleJavaScriptDialog",
                "Target.createTarget",
                "Target.closeTarget",
                "DOM.setAttributeValue",
                "DOM.setAttributesAsText",
                "DOM.setNodeName",
                "DOM.setNodeValue",
                "DOM.setOuterHTML",
                "DOM.setFileInputFiles",
                "DOM.removeNode",
                "DOM.removeAttribute",
                "DOM.moveTo",
                "DOM.copyTo",
                "DOM.undo",
                "DOM.redo",
                "DOMStorage.setDOMStorageItem",
                "DOMStorage.removeDOMStorageItem",
                "DOMStorage.clear",
                "Storage.clearDataForOrigin",
                "Storage.clearDataForStorageKey",
                "Storage.setCookies",
                "Storage.clearCookies",
                "IndexedDB.clearObjectStore",
                "IndexedDB.deleteDatabase",
                "IndexedDB.deleteObjectStoreEntries",
                "CacheStorage.deleteCache",
                "CacheStorage.deleteEntry",
                "Network.setCookie",
                "Network.setCookies",
                "Network.deleteCookies",
                "Network.clearBrowserCookies",
                "Network.clearBrowserCache",
                "Fetch.*",
            ]],
        }
    }

    fn allowed(self) -> Option<&'static [&'static str]> {
        match self {
            Preset::Minimal => Some(&[
                "Browser.*",
                "Target.*",
                "Inspector.*",
                "Page.*",
                "Runtime.*",
                "DOM.*",
                "CSS.*",
                "Accessibility.*",
                "Input.*",
                "Emulation.*",
                "Overlay.*",
                "Log.*",
                // Clients turn domains on at start; their events are then gated as usual.
                "*.enable",
                "*.disable",
            ]),
            _ => None,
        }
    }
}

/// A method pattern: `Domain.method`, `Domain.*`, `*.method` or `*`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum MethodPattern {
    Exact(String),
    Domain(String),
    Verb(String),
    Any,
}

impl MethodPattern {
    fn parse(text: &str) -> Result<Self, String> {
        let bad = || format!("{text:?} is not a method pattern (Domain.method, Domain.*, *.method or *)");
        if text == "*" {
            return Ok(MethodPattern::Any);
        }
        let (domain, verb) = text.split_once('.').ok_or_else(bad)?;
        let word = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        match (domain, verb) {
            ("*", verb) if word(verb) => Ok(MethodPattern::Verb(format!(".{verb}"))),
            (domain, "*") if word(domain) => Ok(MethodPattern::Domain(format!("{domain}."))),
            (domain, verb) if word(domain) && word(verb) => Ok(MethodPattern::Exact(text.to_owned())),
            _ => Err(bad()),
        }
    }

    fn matches(&self, method: &str) -> bool {
        match self {
            MethodPattern::Exact(m) => m == method,
            MethodPattern::Domain(prefix) => method.starts_with(prefix.as_str()),
            MethodPattern::Verb(suffix) => method.ends_with(suffix.as_str()),
            MethodPattern::Any => true,
        }
    }
}

/// An origin pattern: `scheme://host[:port]`, where the host may start with `*.` (any
/// subdomain, not the domain itself) and the port may be `*` (any port; no port means the
/// scheme's default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginPattern {
    text: String,
    scheme: String,
    host: HostPattern,
    port: PortPattern,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    Exact(String),
    /// `*.example.com`: the suffix `.example.com`.
    Subdomains(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum PortPattern {
    Default,
    Exact(u16),
    Any,
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    }
}

impl OriginPattern {
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = |why: &str| {
            format!("{text:?} is not an origin pattern ({why}); write scheme://host[:port], e.g. https://*.example.com or http://127.0.0.1:*")
        };
        let (scheme, rest) = text.split_once("://").ok_or_else(|| bad("no scheme"))?;
        let rest = rest.trim_end_matches('/');
        if scheme.is_empty() || !scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-') {
            return Err(bad("bad scheme"));
        }
        if rest.contains('/') || rest.contains('@') {
            return Err(bad("an origin has no path or user"));
        }
        let (host, port) = match rest.rsplit_once(':') {
            Some((host, "*")) => (host, PortPattern::Any),
            Some((host, port)) => (host, PortPattern::Exact(port.parse().map_err(|_| bad("bad port"))?)),
            None => (rest, PortPattern::Default),
        };
        let host = host.to_ascii_lowercase();
        let host = match host.strip_prefix("*.") {
            Some(domain) if !domain.is_empty() && !domain.contains('*') => {
                HostPattern::Subdomains(format!(".{domain}"))
            }
            _ if host.is_empty() || host.contains('*') => return Err(bad("bad host")),
            _ => HostPattern::Exact(host),
        };
        Ok(OriginPattern { text: text.to_owned(), scheme: scheme.to_ascii_lowercase(), host, port })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    fn matches(&self, origin: &Origin) -> bool {
        let host_ok = match &self.host {
            HostPattern::Exact(h) => *h == origin.host,
            HostPattern::Subdomains(suffix) => origin.host.ends_with(suffix.as_str()),
        };
        let port_ok = match self.port {
            PortPattern::Any => true,
            PortPattern::Exact(p) => Some(p) == origin.port,
            PortPattern::Default => origin.port == default_port(&origin.scheme),
        };
        self.scheme == origin.scheme && host_ok && port_ok
    }

    /// The pattern as an RE2 regular expression over whole URLs, for the browser's own
    /// navigation rules (declarativeNetRequest).
    pub fn url_regex(&self) -> String {
        let escape = |s: &str| {
            s.chars().fold(String::new(), |mut out, c| {
                if !c.is_ascii_alphanumeric() && c != '-' {
                    out.push('\\');
                }
                out.push(c);
                out
            })
        };
        let host = match &self.host {
            HostPattern::Exact(h) => escape(h),
            HostPattern::Subdomains(suffix) => format!("[^/:@]+{}", escape(suffix)),
        };
        let port = match self.port {
            PortPattern::Any => "(:[0-9]+)?".to_owned(),
            PortPattern::Exact(p) if Some(p) == default_port(&self.scheme) => format!("(:{p})?"),
            PortPattern::Exact(p) => format!(":{p}"),
            PortPattern::Default => match default_port(&self.scheme) {
                Some(p) => format!("(:{p})?"),
                None => String::new(),
            },
        };
        format!("^{}://{host}{port}([/?#]|$)", escape(&self.scheme))
    }
}

/// A URL's origin, as far as patterns care.
#[derive(Debug, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

fn origin_of(url: &str) -> Option<Origin> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (host, after) = v6.split_once(']')?;
            (format!("[{host}]"), after.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host.to_owned(), Some(port)),
            None => (authority.to_owned(), None),
        },
    };
    let port = match port {
        Some(p) => Some(p.parse().ok()?),
        None => default_port(&scheme),
    };
    Some(Origin { scheme, host: host.to_ascii_lowercase(), port })
}

/// Whether a URL needs no origin check: documents that load nothing from a site.
fn is_local_document(url: &str) -> bool {
    url.is_empty() || url == "about:blank" || url.starts_with("about:blank#") || url == "about:srcdoc"
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
    allow: Option<(Vec<MethodPattern>, String)>,
    allow_origins: Option<(Vec<OriginPattern>, String)>,
    ask_origins: Vec<(OriginPattern, String)>,
}

impl AgentPolicy {
    /// No rules: everything allowed.
    pub fn open() -> Self {
        AgentPolicy {
            section: "default".into(),
            deny: Vec::new(),
            ask: Vec::new(),
            allow: None,
            allow_origins: None,
            ask_origins: Vec::new(),
        }
    }

    fn compile(section: &str, own: &Section, base: Option<(&str, &Section)>) -> Result<Self, String> {
        let mut policy = AgentPolicy { section: section.to_owned(), ..AgentPolicy::open() };
        let layers = base.into_iter().chain(std::iter::once((section, own)));
        let mut preset = None;
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
                let patterns = list.iter().map(|t| MethodPattern::parse(t)).collect::<Result<_, _>>()?;
                policy.allow = Some((patterns, format!("allow_methods in [{name}]")));
            }
            if let Some(list) = &layer.allow_origins {
                let patterns = list.iter().map(|t| OriginPattern::parse(t)).collect::<Result<_, _>>()?;
                policy.allow_origins = Some((patterns, format!("allow_origins in [{name}]")));
            }
            for text in layer.ask_origins.iter().flatten() {
                let rule = format!("ask_origins {text:?} in [{name}]");
                policy.ask_origins.push((OriginPattern::parse(text)?, rule));
            }
            if layer.preset.is_some() {
                preset = layer.preset.map(|p| (p, name.to_owned()));
            }
        }
        if let Some((preset, name)) = preset {
            for text in preset.denied().into_iter().flatten() {
                let rule = format!("preset \"{}\" in [{name}] (it denies {text})", preset.name());
                policy.deny.push((MethodPattern::parse(text)?, rule));
            }
            if let Some(allowed) = preset.allowed() {
                let patterns =
                    allowed.iter().map(|t| MethodPattern::parse(t)).collect::<Result<Vec<_>, _>>()?;
                let rule = format!("preset \"{}\" in [{name}]", preset.name());
                // An explicit allowlist narrows further: both must allow.
                policy.allow = Some(match policy.allow.take() {
                    Some((mine, mine_rule)) => {
                        let both = mine
                            .into_iter()
                            .filter(|p| patterns.iter().any(|q| q == p || *q == MethodPattern::Any))
                            .collect();
                        (both, format!("{mine_rule} and {rule}"))
                    }
                    None => (patterns, rule),
                });
            }
        }
        Ok(policy)
    }

    pub fn section(&self) -> &str {
        &self.section
    }

    /// Whether this policy restricts anything at all.
    pub fn is_open(&self) -> bool {
        self.deny.is_empty()
            && self.ask.is_empty()
            && self.allow.is_none()
            && self.allow_origins.is_none()
            && self.ask_origins.is_empty()
    }

    /// Deny rules first, then questions, then the allowlist.
    pub fn method(&self, method: &str) -> Decision {
        if let Some((_, rule)) = self.deny.iter().find(|(p, _)| p.matches(method)) {
            return Decision::Deny(rule.clone());
        }
        if let Some((_, rule)) = self.ask.iter().find(|(p, _)| p.matches(method)) {
            return Decision::Ask(rule.clone());
        }
        match &self.allow {
            Some((patterns, rule)) if !patterns.iter().any(|p| p.matches(method)) => {
                Decision::Deny(format!("{rule} (it does not list {method})"))
            }
            _ => Decision::Allow,
        }
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

    /// The origins rules for the browser: `None` when every origin may load.
    pub fn origin_rules(&self) -> Option<tabtunnel_wire::OriginRules> {
        let allow =
            self.allow_origins.as_ref().map(|(p, _)| p.iter().map(OriginPattern::url_regex).collect());
        if allow.is_none() && self.ask_origins.is_empty() {
            return None;
        }
        let ask = self.ask_origins.iter().map(|(p, _)| p.url_regex()).collect();
        Some(tabtunnel_wire::OriginRules { allow, ask })
    }
}

/// Every agent's policy, compiled from a policy file.
#[derive(Debug, Clone)]
pub struct PolicySet {
    default: std::sync::Arc<AgentPolicy>,
    agents: BTreeMap<String, std::sync::Arc<AgentPolicy>>,
    pub ask_timeout_ms: u64,
}

impl PolicySet {
    pub const DEFAULT_ASK_TIMEOUT_MS: u64 = 60_000;

    pub fn compile(file: &PolicyFile) -> Result<Self, String> {
        let default = std::sync::Arc::new(AgentPolicy::compile("default", &file.default, None)?);
        let mut agents = BTreeMap::new();
        for (name, section) in &file.agent {
            if !crate::is_valid_agent_name(name) {
                return Err(format!("[agent.{name}]: {name:?} is not an agent name"));
            }
            let policy =
                AgentPolicy::compile(&format!("agent.{name}"), section, Some(("default", &file.default)))?;
            agents.insert(name.clone(), std::sync::Arc::new(policy));
        }
        let ask_timeout_ms = match file.ask_timeout {
            None => Self::DEFAULT_ASK_TIMEOUT_MS,
            Some(secs) if secs.is_finite() && secs > 0.0 => (secs * 1000.0) as u64,
            Some(_) => return Err("ask_timeout must be a positive number of seconds".into()),
        };
        Ok(PolicySet { default, agents, ask_timeout_ms })
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
            "Page.reload",
        ] {
            assert_eq!(reader.method(ok), Decision::Allow, "{ok}");
        }
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
    }

    #[test]
    fn origin_patterns_become_url_regexes_with_the_same_meaning() {
        let sub = OriginPattern::parse("https://*.example.com").unwrap();
        assert_eq!(sub.url_regex(), r"^https://[^/:@]+\.example\.com(:443)?([/?#]|$)");
        let any_port = OriginPattern::parse("http://127.0.0.1:*").unwrap();
        assert_eq!(any_port.url_regex(), r"^http://127\.0\.0\.1(:[0-9]+)?([/?#]|$)");
        let plain = OriginPattern::parse("https://mail.example.com").unwrap();
        assert_eq!(plain.url_regex(), r"^https://mail\.example\.com(:443)?([/?#]|$)");
        for bad in ["example.com", "https://", "https://a/b", "https://*", "https://a.*.com", "http://h:port"]
        {
            assert!(OriginPattern::parse(bad).is_err(), "{bad}");
        }
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
}
