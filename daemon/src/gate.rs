//! Who gets in, and as whom: every HTTP request and WebSocket upgrade passes [`Gate::check`]
//! before routing.
//!
//! - `Host` must be a loopback name, so a web page cannot reach us through DNS rebinding.
//! - Anything a web page can send is refused: a request carrying an `Origin` or the browser's
//!   fetch metadata (`Sec-Fetch-Site`, `Sec-Fetch-Mode`), unless it is our extension's own (its
//!   origin) or a navigation the browser's rules sent to the navigation endpoint. A `no-cors`
//!   fetch carries no `Origin`, but does carry fetch metadata.
//! - Clients present a token as a path prefix (`/<token>/json/version`: a client given
//!   `http://127.0.0.1:PORT/<token>` finds everything beneath it), as `?token=`, or as
//!   `Authorization: Bearer`. The owner token (`<config dir>/token`) is the human's; an agent's
//!   own token (`credentials.rs`) acts as that agent only. `--no-token` turns the token check
//!   off for clients.
//! - The extension's socket takes the extension's own secret in its path and our extension's
//!   origin; never a client token. The navigation endpoint takes a key of its own, made anew at
//!   every start, since its URL passes through the browser's network stack.

use crate::credential::Credential;
use crate::credentials::SharedCredentials;
use axum::http::{header, HeaderMap, StatusCode, Uri};

pub const EXTENSION_PATH: &str = "/extension";
/// Where the browser sends navigations an agent's policy blocks or asks about; it takes the
/// navigation key, not a token (`server.rs` serves it).
pub const NAVIGATION_PATH: &str = "/tabtunnel/navigation";

#[derive(Clone)]
pub struct Gate {
    /// The owner token; `None` with `--no-token`.
    pub token: Option<String>,
    /// What the extension's socket takes (`/<secret>/extension`).
    pub extension_secret: String,
    /// What the navigation endpoint takes (`/<key>/tabtunnel/navigation/...`).
    pub navigation_key: String,
    /// `chrome-extension://<id>`.
    pub extension_origin: String,
    /// Agents' own tokens.
    pub agents: SharedCredentials,
    /// `--require-agent-tokens`: the owner token may not name agents (`/agent/<name>`).
    pub require_agent_tokens: bool,
    /// What `/tabtunnel/hello` proves to clients (`crate::proof`).
    pub identity: crate::proof::Identity,
}

/// A request let in.
#[derive(Debug, PartialEq, Eq)]
pub struct Admitted {
    /// The URI to route, when a prefix was taken off.
    pub uri: Option<Uri>,
    pub credential: Credential,
    /// `/<token>` as the client presented it (in the path, a query or a header), for the URLs the
    /// daemon hands it back; `""` without one.
    pub token_prefix: String,
}

#[derive(Debug, PartialEq, Eq)]
pub struct Refusal {
    pub status: StatusCode,
    pub reason: &'static str,
}

fn refuse(status: StatusCode, reason: &'static str) -> Refusal {
    Refusal { status, reason }
}

/// The host part of a `Host` header value, without port or IPv6 brackets.
fn host_name(value: &str) -> &str {
    if let Some(rest) = value.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    value
        .rsplit_once(':')
        .map_or(value, |(host, port)| if port.bytes().all(|b| b.is_ascii_digit()) { host } else { value })
}

pub fn is_loopback_host(value: &str) -> bool {
    let host = host_name(value).to_ascii_lowercase();
    host == "localhost"
        || host == "::1"
        || host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
}

fn query_token(uri: &Uri) -> Option<&str> {
    uri.query()?.split('&').find_map(|pair| pair.strip_prefix("token="))
}

fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::AUTHORIZATION)?.to_str().ok()?.strip_prefix("Bearer ").map(str::trim)
}

/// What the first path segment turned out to be.
enum Prefix {
    None,
    Client(Credential),
    ExtensionSecret,
    NavigationKey,
}

impl Gate {
    /// Lets the request in, saying as whom, or says why not.
    pub fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<Admitted, Refusal> {
        // HTTP/1.1 answers a request naming two hosts with 400 (RFC 9112, 3.2); two Origins
        // are as ambiguous. Only the first would be read below, so neither gets that far.
        if headers.get_all(header::HOST).iter().nth(1).is_some()
            || headers.get_all(header::ORIGIN).iter().nth(1).is_some()
        {
            return Err(refuse(StatusCode::BAD_REQUEST, "a request names one Host and at most one Origin"));
        }
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
        if !is_loopback_host(host) {
            return Err(refuse(
                StatusCode::FORBIDDEN,
                "Host must be a loopback name such as 127.0.0.1 or localhost",
            ));
        }
        let (first, rest) = split_first_segment(uri.path());
        let prefix = first.map_or(Prefix::None, |segment| self.classify(segment));
        let path = if matches!(prefix, Prefix::None) { uri.path() } else { rest };
        let origin = headers.get(header::ORIGIN).map(|o| o.to_str().unwrap_or("<invalid>"));
        let from_extension = origin == Some(self.extension_origin.as_str());
        if path == EXTENSION_PATH {
            if !matches!(prefix, Prefix::ExtensionSecret) || !from_extension {
                return Err(refuse(
                    StatusCode::FORBIDDEN,
                    "only the tabtunnel extension may open this socket",
                ));
            }
            return Ok(self.admitted(uri, path, Credential::Browser, String::new()));
        }
        if path.starts_with(NAVIGATION_PATH) || rest.starts_with(NAVIGATION_PATH) {
            // The browser's own navigation rules send a page's blocked navigations here (a form
            // post carries the page's Origin): only the MAC of the path's agent and tab under
            // the navigation key counts (the agent sees its own redirect URL: it speaks for that
            // agent and tab only); every wrong one gets the same answer.
            let key = &self.navigation_key;
            if !first.is_some_and(|mac| tabtunnel_wire::navigation_mac::check_path(key, mac, rest)) {
                return Err(refuse(StatusCode::FORBIDDEN, "the navigation endpoint takes its own key"));
            }
            return Ok(self.admitted(uri, rest, Credential::Browser, String::new()));
        }
        if (origin.is_some() || from_a_browser(headers)) && !from_extension {
            return Err(refuse(StatusCode::FORBIDDEN, "requests from web pages are refused"));
        }
        if matches!(prefix, Prefix::None) && path == crate::proof::HELLO_PATH {
            return Ok(Admitted { uri: None, credential: Credential::Hello, token_prefix: String::new() });
        }
        if let Prefix::Client(credential) = prefix {
            let token_prefix = format!("/{}", first.unwrap_or_default());
            return Ok(self.admitted(uri, path, credential, token_prefix));
        }
        let presented = query_token(uri).or_else(|| bearer_token(headers));
        match presented.map(|t| (t, self.client_credential(t))) {
            Some((token, Some(credential))) => {
                Ok(Admitted { uri: None, credential, token_prefix: format!("/{token}") })
            }
            _ if self.token.is_none() => {
                Ok(Admitted { uri: None, credential: Credential::Open, token_prefix: String::new() })
            }
            _ => Err(refuse(StatusCode::UNAUTHORIZED, "missing or wrong tabtunnel token")),
        }
    }

    fn admitted(&self, uri: &Uri, path: &str, credential: Credential, token_prefix: String) -> Admitted {
        let stripped = path.len() != uri.path().len();
        let rewritten = stripped.then(|| {
            let path = if path.is_empty() { "/" } else { path };
            let text = match uri.query() {
                Some(q) => format!("{path}?{q}"),
                None => path.to_owned(),
            };
            text.parse().expect("a suffix of a valid path stays valid")
        });
        Admitted { uri: rewritten, credential, token_prefix }
    }

    /// The owner's or an agent's token, as a client credential.
    fn client_credential(&self, presented: &str) -> Option<Credential> {
        if self.token.as_deref().is_some_and(|t| crate::token::matches(t, presented)) {
            return Some(Credential::Owner);
        }
        let agents = self.agents.read().unwrap_or_else(|e| e.into_inner());
        agents.agent_of(presented).map(|name| Credential::Agent(name.to_owned()))
    }

    fn classify(&self, segment: &str) -> Prefix {
        if crate::token::matches(&self.extension_secret, segment) {
            return Prefix::ExtensionSecret;
        }
        if crate::token::matches(&self.navigation_key, segment) {
            return Prefix::NavigationKey;
        }
        match self.client_credential(segment) {
            Some(credential) => Prefix::Client(credential),
            None => Prefix::None,
        }
    }
}

/// Whether the browser's fetch metadata says a browser made the request (a page, a link, a typed
/// URL). Chrome sends `Sec-Fetch-Site` and `Sec-Fetch-Dest` on every request to a loopback
/// address; Node's `fetch` (which CDP clients use) sends only `Sec-Fetch-Mode: cors`.
fn from_a_browser(headers: &HeaderMap) -> bool {
    let mode = headers.get("sec-fetch-mode").map(|m| m.as_bytes());
    headers.contains_key("sec-fetch-site")
        || headers.contains_key("sec-fetch-dest")
        || headers.contains_key("sec-fetch-user")
        || mode.is_some_and(|m| !m.eq_ignore_ascii_case(b"cors"))
}

/// `/first/rest` into (`first`, `/rest`); `/first` into (`first`, ``).
fn split_first_segment(path: &str) -> (Option<&str>, &str) {
    let Some(rest) = path.strip_prefix('/') else { return (None, path) };
    match rest.find('/') {
        Some(i) => (Some(&rest[..i]), &rest[i..]),
        None if rest.is_empty() => (None, path),
        None => (Some(rest), ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use std::sync::{Arc, RwLock};

    const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    const SECRET: &str = "5ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7";
    const KEY: &str = "4e74e74e74e74e74e74e74e74e74e74e";
    const EXT: &str = "chrome-extension://jmlcgbpniifikmbmclnhinffofckiihm";

    struct Fixture {
        gate: Gate,
        reader: String,
        _dir: tempfile::TempDir,
    }

    fn fixture(token: bool) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let reader = crate::credentials::add(dir.path(), "reader").unwrap();
        let agents = Arc::new(RwLock::new(crate::credentials::load(dir.path()).unwrap()));
        let gate = Gate {
            token: token.then(|| TOKEN.to_owned()),
            extension_secret: SECRET.into(),
            navigation_key: KEY.into(),
            extension_origin: EXT.into(),
            agents,
            require_agent_tokens: false,
            identity: crate::proof::Identity {
                key: crate::proof::Key::load_or_create(dir.path()).unwrap(),
                port: 9722,
                pid: 1,
            },
        };
        Fixture { gate, reader, _dir: dir }
    }

    fn gate(token: bool) -> Gate {
        fixture(token).gate
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:9722"));
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn check(g: &Gate, uri: &str, h: &HeaderMap) -> Result<(Option<String>, Credential), StatusCode> {
        g.check(&uri.parse().unwrap(), h)
            .map(|a| (a.uri.map(|u| u.to_string()), a.credential))
            .map_err(|r| r.status)
    }

    fn rewritten(g: &Gate, uri: &str, h: &HeaderMap) -> Result<Option<String>, StatusCode> {
        check(g, uri, h).map(|(u, _)| u)
    }

    #[test]
    fn loopback_hosts_only() {
        for ok in
            ["127.0.0.1", "127.0.0.1:9722", "localhost:1", "LOCALHOST", "[::1]:9722", "[::1]", "127.1.2.3:80"]
        {
            assert!(is_loopback_host(ok), "{ok}");
        }
        for bad in [
            "",
            "evil.example",
            "evil.example:9722",
            "127.0.0.1.evil.example",
            "localhost.evil",
            "10.0.0.1:9722",
            "[::2]:1",
        ] {
            assert!(!is_loopback_host(bad), "{bad}");
        }
        let g = gate(false);
        let mut h = headers(&[]);
        h.insert(header::HOST, HeaderValue::from_static("evil.example:9722"));
        assert_eq!(check(&g, "/json/version", &h), Err(StatusCode::FORBIDDEN));
        h.remove(header::HOST);
        assert_eq!(check(&g, "/json/version", &h), Err(StatusCode::FORBIDDEN));
    }

    #[test]
    fn a_second_host_or_origin_is_refused() {
        let g = gate(false);
        let mut h = headers(&[]);
        assert!(check(&g, "/json/version", &h).is_ok());
        h.append(header::HOST, HeaderValue::from_static("evil.example"));
        assert_eq!(check(&g, "/json/version", &h), Err(StatusCode::BAD_REQUEST));
        let mut h = headers(&[]);
        h.append(header::ORIGIN, HeaderValue::from_str(&g.extension_origin).unwrap());
        h.append(header::ORIGIN, HeaderValue::from_static("https://evil.example"));
        assert_eq!(check(&g, "/json/version", &h), Err(StatusCode::BAD_REQUEST));
    }

    #[test]
    fn token_as_path_prefix_is_stripped_for_routing() {
        let g = gate(true);
        let h = headers(&[]);
        assert_eq!(rewritten(&g, &format!("/{TOKEN}/json/version"), &h), Ok(Some("/json/version".into())));
        assert_eq!(rewritten(&g, &format!("/{TOKEN}/json/version/"), &h), Ok(Some("/json/version/".into())));
        assert_eq!(
            rewritten(&g, &format!("/{TOKEN}/devtools/browser/B?x=1"), &h),
            Ok(Some("/devtools/browser/B?x=1".into()))
        );
        assert_eq!(rewritten(&g, &format!("/{TOKEN}"), &h), Ok(Some("/".into())));
        let admitted = g.check(&format!("/{TOKEN}/json").parse().unwrap(), &h).unwrap();
        assert_eq!((admitted.credential, admitted.token_prefix), (Credential::Owner, format!("/{TOKEN}")));
    }

    #[test]
    fn token_in_query_or_bearer_header() {
        let g = gate(true);
        assert_eq!(
            check(&g, &format!("/json/version?token={TOKEN}"), &headers(&[])),
            Ok((None, Credential::Owner))
        );
        let bearer = format!("Bearer {TOKEN}");
        assert_eq!(
            check(&g, "/json/version", &headers(&[("authorization", &bearer)])),
            Ok((None, Credential::Owner))
        );
    }

    #[test]
    fn missing_or_wrong_tokens_are_unauthorized() {
        let g = gate(true);
        let h = headers(&[]);
        let wrong = TOKEN.replace('0', "1");
        for uri in [
            "/json/version".to_owned(),
            format!("/{wrong}/json/version"),
            format!("/json/version?token={wrong}"),
            format!("/x/{TOKEN}/json/version"),
            "/devtools/browser/B".to_owned(),
            // The extension's secret and the navigation key are no client tokens.
            format!("/{SECRET}/json/version"),
            format!("/{KEY}/json/version"),
            format!("/json/version?token={SECRET}"),
        ] {
            assert_eq!(check(&g, &uri, &h), Err(StatusCode::UNAUTHORIZED), "{uri}");
        }
        assert_eq!(
            check(&g, "/json", &headers(&[("authorization", "Bearer nope")])),
            Err(StatusCode::UNAUTHORIZED)
        );
    }

    #[test]
    fn an_agent_token_is_its_agent_in_every_form() {
        let f = fixture(true);
        let h = headers(&[]);
        let reader = Credential::Agent("reader".into());
        assert_eq!(
            check(&f.gate, &format!("/{}/json/list", f.reader), &h),
            Ok((Some("/json/list".into()), reader.clone()))
        );
        assert_eq!(check(&f.gate, &format!("/cdp?token={}", f.reader), &h), Ok((None, reader.clone())));
        let bearer = format!("Bearer {}", f.reader);
        assert_eq!(
            check(&f.gate, "/mcp", &headers(&[("authorization", &bearer)])),
            Ok((None, reader.clone()))
        );
        // Also with --no-token, a presented agent token still makes the request that agent's.
        let open = Gate { token: None, ..f.gate.clone() };
        assert_eq!(
            check(&open, &format!("/{}/json/list", f.reader), &h),
            Ok((Some("/json/list".into()), reader))
        );
        assert_eq!(check(&open, "/json/list", &h), Ok((None, Credential::Open)));
    }

    #[test]
    fn web_pages_are_refused_with_or_without_an_origin() {
        let g = gate(true);
        let uri = format!("/{TOKEN}/json/version");
        for origin in
            ["http://evil.example", "https://127.0.0.1", "null", "chrome-extension://otherextensionid"]
        {
            assert_eq!(
                check(&g, &uri, &headers(&[("origin", origin)])),
                Err(StatusCode::FORBIDDEN),
                "{origin}"
            );
        }
        // A `no-cors` fetch or a link carries no Origin but the browser's fetch metadata.
        for metadata in [
            ("sec-fetch-site", "cross-site"),
            ("sec-fetch-mode", "no-cors"),
            ("sec-fetch-site", "none"),
            ("sec-fetch-dest", "document"),
            ("sec-fetch-mode", "navigate"),
        ] {
            assert_eq!(check(&g, &uri, &headers(&[metadata])), Err(StatusCode::FORBIDDEN), "{metadata:?}");
        }
        // Node's fetch, which CDP clients use, says only `Sec-Fetch-Mode: cors`.
        assert!(check(&g, &uri, &headers(&[("sec-fetch-mode", "cors")])).is_ok());
        assert!(check(&g, &uri, &headers(&[("origin", EXT), ("sec-fetch-site", "none")])).is_ok());
        assert_eq!(
            check(&gate(false), "/json/version", &headers(&[("sec-fetch-mode", "navigate")])),
            Err(StatusCode::FORBIDDEN),
            "--no-token keeps the web out too"
        );
    }

    #[test]
    fn the_hello_needs_no_token_but_keeps_the_web_out() {
        for g in [gate(true), gate(false)] {
            assert_eq!(check(&g, "/tabtunnel/hello?nonce=00", &headers(&[])), Ok((None, Credential::Hello)));
            for metadata in
                [("origin", "http://evil.example"), ("sec-fetch-mode", "no-cors"), ("origin", "null")]
            {
                assert_eq!(
                    check(&g, "/tabtunnel/hello?nonce=00", &headers(&[metadata])),
                    Err(StatusCode::FORBIDDEN),
                    "{metadata:?}"
                );
            }
            let mut foreign = headers(&[]);
            foreign.insert(header::HOST, HeaderValue::from_static("evil.example:9722"));
            assert_eq!(check(&g, "/tabtunnel/hello", &foreign), Err(StatusCode::FORBIDDEN));
        }
        // Only the bare path: beneath a token or an agent it is no hello.
        let g = gate(true);
        assert_ne!(
            check(&g, &format!("/{TOKEN}/tabtunnel/hello"), &headers(&[])).map(|a| a.1),
            Ok(Credential::Hello)
        );
        assert_eq!(check(&g, "/agent/a/tabtunnel/hello", &headers(&[])), Err(StatusCode::UNAUTHORIZED));
        assert_eq!(check(&g, "/tabtunnel/hello/x", &headers(&[])), Err(StatusCode::UNAUTHORIZED));
    }

    #[test]
    fn redirected_navigations_need_their_agent_and_tabs_mac_but_may_carry_a_page_origin() {
        let g = gate(true);
        let page = [("origin", "https://shop.example.com"), ("sec-fetch-mode", "navigate")];
        let mac = tabtunnel_wire::navigation_mac::sign(KEY, "a", 5);
        let uri = format!("/{mac}/tabtunnel/navigation/a/5?https://x/");
        assert_eq!(
            check(&g, &uri, &headers(&page)),
            Ok((Some("/tabtunnel/navigation/a/5?https://x/".into()), Credential::Browser))
        );
        // The key itself, a token, or the MAC of (a, 5) for another agent or tab: all the same.
        for other in [
            format!("/{KEY}/tabtunnel/navigation/a/5?x"),
            format!("/{TOKEN}/tabtunnel/navigation/a/5?x"),
            format!("/{mac}/tabtunnel/navigation/b/5?x"),
            format!("/{mac}/tabtunnel/navigation/a/6?x"),
            format!("/{mac}/tabtunnel/navigation/a/5/x"),
            "/tabtunnel/navigation/a/5?x".into(),
        ] {
            assert_eq!(check(&g, &other, &headers(&[])), Err(StatusCode::FORBIDDEN), "{other}");
        }
    }

    #[test]
    fn the_extension_socket_needs_its_own_secret_and_our_origin() {
        let g = gate(true);
        let ours = headers(&[("origin", EXT)]);
        assert_eq!(
            check(&g, &format!("/{SECRET}/extension"), &ours),
            Ok((Some("/extension".into()), Credential::Browser))
        );
        assert_eq!(check(&g, &format!("/{SECRET}/extension"), &headers(&[])), Err(StatusCode::FORBIDDEN));
        // A client token, with a forged origin, is not the extension.
        assert_eq!(check(&g, &format!("/{TOKEN}/extension"), &ours), Err(StatusCode::FORBIDDEN));
        assert_eq!(check(&g, &format!("/extension?token={TOKEN}"), &ours), Err(StatusCode::FORBIDDEN));
        assert_eq!(check(&gate(false), "/extension", &ours), Err(StatusCode::FORBIDDEN));
        // The secret opens nothing else.
        assert_eq!(check(&g, &format!("/{SECRET}/json/list"), &ours), Err(StatusCode::UNAUTHORIZED));
    }
}
