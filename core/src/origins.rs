//! Origins as the policy names them (`scheme://host[:port]` patterns) and as Chrome reads URLs.
//!
//! URLs are parsed by a WHATWG URL parser (the `url` crate), the standard Chrome implements: a
//! hand-written split on `://`, `@` and `:` reads `http://localhost:1\@127.0.0.1:2/` as host
//! 127.0.0.1 where Chrome loads localhost:1 (a backslash is a slash in special schemes).

use url::{Host, Url};

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
    /// A host as the URL parser writes it (lowercase, IDNA, IPv6 in brackets).
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
    Url::parse(&format!("{scheme}://x")).ok()?.port_or_known_default()
}

/// A host written in a pattern, as the URL parser would write it in a URL.
fn canonical_host(host: &str) -> Option<String> {
    match Host::parse(host).ok()? {
        Host::Domain(domain) => Some(domain),
        Host::Ipv4(ip) => Some(ip.to_string()),
        Host::Ipv6(ip) => Some(format!("[{ip}]")),
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
        if rest.contains(['/', '@', '\\', '?', '#']) {
            return Err(bad("an origin has no path or user"));
        }
        // An IPv6 host has colons of its own: the port follows its closing bracket.
        let host_end = rest.find(']').map_or(0, |i| i + 1);
        let (host, port) = match rest[host_end..].rfind(':').map(|i| rest.split_at(host_end + i)) {
            Some((host, ":*")) => (host, PortPattern::Any),
            Some((host, port)) => (host, PortPattern::Exact(port[1..].parse().map_err(|_| bad("bad port"))?)),
            None => (rest, PortPattern::Default),
        };
        let host = match host.strip_prefix("*.") {
            Some(domain) if !domain.contains('*') => {
                let domain = canonical_host(domain).ok_or_else(|| bad("bad host"))?;
                HostPattern::Subdomains(format!(".{domain}"))
            }
            _ if host.is_empty() || host.contains('*') => return Err(bad("bad host")),
            _ => HostPattern::Exact(canonical_host(host).ok_or_else(|| bad("bad host"))?),
        };
        Ok(OriginPattern { text: text.to_owned(), scheme: scheme.to_ascii_lowercase(), host, port })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub(crate) fn matches(&self, origin: &Origin) -> bool {
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

    /// Whether every origin this pattern matches is of `site` (a top-level site: a scheme and a
    /// registrable domain, ports playing no part): its host is the site's or under it.
    pub(crate) fn is_within_site(&self, site: &Origin) -> bool {
        let under = format!(".{}", site.host);
        let host_ok = match &self.host {
            HostPattern::Exact(host) => *host == site.host || host.ends_with(&under),
            HostPattern::Subdomains(suffix) => *suffix == under || suffix.ends_with(&under),
        };
        self.scheme == site.scheme && host_ok
    }

    /// Whether a host this pattern matches would be sent a cookie of `domain` (as Chrome lists
    /// cookies: a leading `.` for a domain cookie, sent to its subdomains too; ports play no
    /// part in cookies).
    pub(crate) fn gets_cookies_of(&self, domain: &str) -> bool {
        let domain = domain.to_ascii_lowercase();
        let (domain, subdomains_too) = match domain.strip_prefix('.') {
            Some(d) => (d.to_owned(), true),
            None => (domain, false),
        };
        let within = |host: &str| host == domain || (subdomains_too && host.ends_with(&format!(".{domain}")));
        match &self.host {
            HostPattern::Exact(host) => within(host),
            // Some host of `*.x` gets it: one under the cookie's domain, or the cookie's host
            // itself when it is under `x`.
            HostPattern::Subdomains(suffix) => {
                domain.ends_with(suffix.as_str()) || (subdomains_too && within(&suffix[1..]))
            }
        }
    }

    /// The pattern as an RE2 regular expression over whole URLs (as Chrome writes them), for
    /// the browser's own rules (declarativeNetRequest).
    pub fn url_regex(&self) -> String {
        let host = match &self.host {
            HostPattern::Exact(h) => escape_regex(h),
            HostPattern::Subdomains(suffix) => format!("[^/:@]+{}", escape_regex(suffix)),
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
        format!("^{}://{host}{port}([/?#]|$)", escape_regex(&self.scheme))
    }
}

/// A literal for an RE2 regular expression.
fn escape_regex(text: &str) -> String {
    text.chars().fold(String::new(), |mut out, c| {
        if !c.is_ascii_alphanumeric() && c != '-' {
            out.push('\\');
        }
        out.push(c);
        out
    })
}

/// Which of the profile's sites a command reaches (the cookies it writes, the storage it
/// touches), for the rules of an agent held to some origins (`cookie_writes`, `site_storage`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reach {
    /// None: not a command of that kind, or one of the page's own.
    Nothing,
    /// These, as the command names them (cookie domains, origins, storage keys).
    Named(Vec<String>),
    /// Every site, or sites the command does not name.
    AllSites,
}

impl Reach {
    /// The names a command gave: none means sites it does not name.
    pub(crate) fn of(names: Vec<String>) -> Reach {
        if names.is_empty() {
            Reach::AllSites
        } else {
            Reach::Named(names)
        }
    }

    /// The rule it breaks (`allow_origins: ...`) if it reaches a site that is not `own`:
    /// `every` when it reaches all of them, else `other` of the first such name.
    pub(crate) fn refusal(
        self,
        own: impl Fn(&str) -> bool,
        every: &str,
        other: impl Fn(&str) -> String,
    ) -> Option<String> {
        match self {
            Reach::Nothing => None,
            Reach::AllSites => Some(format!("allow_origins: {every}")),
            Reach::Named(names) => {
                names.iter().find(|name| !own(name)).map(|name| format!("allow_origins: {}", other(name)))
            }
        }
    }
}

/// A URL's origin, as far as patterns care.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

/// The origin Chrome gives a document loaded from `url`; `None` for an opaque one (`data:`,
/// `javascript:`, a URL that does not parse). `blob:` and `filesystem:` URLs have the origin of
/// the URL inside them.
pub(crate) fn origin_of(url: &str) -> Option<Origin> {
    let parsed = Url::parse(url).ok()?;
    match parsed.origin() {
        url::Origin::Tuple(scheme, host, port) => {
            let host = match host {
                Host::Domain(domain) => domain,
                Host::Ipv4(ip) => ip.to_string(),
                Host::Ipv6(ip) => format!("[{ip}]"),
            };
            Some(Origin { scheme, host, port: Some(port) })
        }
        url::Origin::Opaque(_) => None,
    }
}

/// The host of a URL's origin, as [`origin_of`] reads it.
pub(crate) fn host_of(url: &str) -> Option<String> {
    origin_of(url).map(|origin| origin.host)
}

/// `scheme://host:port` of a URL, for "always allow this origin"; the URL itself when its
/// origin is opaque (nothing else shares it).
pub(crate) fn origin_key(url: &str) -> String {
    match origin_of(url) {
        Some(Origin { scheme, host, port: Some(port) }) => format!("{scheme}://{host}:{port}"),
        _ => url.to_owned(),
    }
}

/// Whether a URL needs no origin check: documents that load nothing from a site.
pub(crate) fn is_local_document(url: &str) -> bool {
    url.is_empty() || url == "about:blank" || url.starts_with("about:blank#") || url == "about:srcdoc"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allows(pattern: &str, url: &str) -> bool {
        let pattern = OriginPattern::parse(pattern).unwrap();
        origin_of(url).is_some_and(|o| pattern.matches(&o))
    }

    #[test]
    fn urls_are_read_as_chrome_reads_them() {
        // A backslash is a slash in special schemes: this URL loads localhost:1.
        assert!(!allows("http://127.0.0.1:*", r"http://localhost:1\@127.0.0.1:2/"));
        assert!(allows("http://localhost:*", r"http://localhost:1\@127.0.0.1:2/"));
        // Userinfo is not the host.
        assert!(!allows("https://good.test", "https://good.test@evil.test/"));
        assert!(allows("https://evil.test", "https://good.test@evil.test/"));
        // Case, default ports, IDNA and IPv4 forms are normalised on both sides.
        assert!(allows("https://Shop.Example.com", "HTTPS://SHOP.example.COM:443/x"));
        assert!(allows("http://127.0.0.1:8080", "http://127.1:8080/"));
        assert!(allows("http://127.0.0.1:8080", "http://0x7f.0.0.1:8080/"));
        assert!(allows("https://bücher.example", "https://xn--bcher-kva.example/"));
        assert!(allows("http://[::1]:*", "http://[0:0:0:0:0:0:0:1]:9/"));
        // A trailing dot names another host for Chrome's origins.
        assert!(!allows("https://*.example.com", "https://shop.example.com./"));
        // blob: URLs carry their creator's origin; data: and javascript: have none.
        assert!(allows("https://a.test", "blob:https://a.test/0b6e1f2a"));
        assert!(origin_of("data:text/html,hi").is_none());
        assert!(origin_of("javascript:alert(1)").is_none());
        assert!(origin_of("not a url").is_none());
        // Tabs and newlines inside a URL are dropped, as Chrome does.
        assert!(allows("https://evil.test", "https://ev\til.test/"));
    }

    #[test]
    fn subdomain_patterns_do_not_match_the_domain_or_lookalikes() {
        assert!(allows("https://*.example.com", "https://a.b.example.com/"));
        assert!(!allows("https://*.example.com", "https://example.com/"));
        assert!(!allows("https://*.example.com", "https://example.com.evil.com/"));
        assert!(!allows("https://*.example.com", "https://notexample.com/"));
        assert!(!allows("https://*.example.com", "http://a.example.com/"));
        assert!(!allows("https://*.example.com", "https://a.example.com:8443/"));
        assert!(allows("https://*.example.com:*", "https://a.example.com:8443/"));
    }

    #[test]
    fn cookies_are_those_of_hosts_a_pattern_matches() {
        let gets =
            |pattern: &str, domain: &str| OriginPattern::parse(pattern).unwrap().gets_cookies_of(domain);
        assert!(gets("http://127.0.0.1:*", "127.0.0.1"));
        assert!(!gets("http://127.0.0.1:*", "localhost"));
        assert!(gets("https://a.example.com", ".example.com"));
        assert!(!gets("https://a.example.com", "example.com"), "a host-only cookie of another host");
        assert!(!gets("https://a.example.com", ".b.example.com"));
        assert!(gets("https://*.example.com", "x.example.com"));
        assert!(gets("https://*.example.com", ".example.com"));
        assert!(gets("https://*.example.com", ".x.example.com"));
        assert!(!gets("https://*.example.com", "example.com"));
        assert!(!gets("https://*.example.com", "example.com.evil"));
    }

    #[test]
    fn origin_keys_name_scheme_host_and_port() {
        assert_eq!(origin_key("https://Mail.Example.com/inbox?x"), "https://mail.example.com:443");
        assert_eq!(origin_key(r"http://localhost:1\@127.0.0.1:2/"), "http://localhost:1");
        assert_eq!(origin_key("data:text/html,x"), "data:text/html,x");
    }

    #[test]
    fn patterns_become_url_regexes_with_the_same_meaning() {
        let sub = OriginPattern::parse("https://*.example.com").unwrap();
        assert_eq!(sub.url_regex(), r"^https://[^/:@]+\.example\.com(:443)?([/?#]|$)");
        let any_port = OriginPattern::parse("http://127.0.0.1:*").unwrap();
        assert_eq!(any_port.url_regex(), r"^http://127\.0\.0\.1(:[0-9]+)?([/?#]|$)");
        let plain = OriginPattern::parse("https://mail.example.com").unwrap();
        assert_eq!(plain.url_regex(), r"^https://mail\.example\.com(:443)?([/?#]|$)");
        let v6 = OriginPattern::parse("http://[::1]:8080").unwrap();
        assert_eq!(v6.url_regex(), r"^http://\[\:\:1\]:8080([/?#]|$)");
        for bad in [
            "example.com",
            "https://",
            "https://a/b",
            "https://*",
            "https://a.*.com",
            "http://h:port",
            "https://u@h",
            r"https://h\x",
            "https://h?x",
        ] {
            assert!(OriginPattern::parse(bad).is_err(), "{bad}");
        }
    }
}
