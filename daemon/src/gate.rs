//! Who gets in: every HTTP request and WebSocket upgrade passes [`Gate::check`] before routing.
//!
//! - `Host` must be a loopback name, so a web page cannot reach us through DNS rebinding.
//! - A request carrying an `Origin` comes from a browser page: only our extension's origin is
//!   let through, and the extension socket requires it.
//! - Clients present the token as a path prefix (`/<token>/json/version`: a client given
//!   `http://127.0.0.1:PORT/<token>` finds everything beneath it), as `?token=`, or as
//!   `Authorization: Bearer`. `--no-token` turns only this last check off.

use axum::http::{header, HeaderMap, StatusCode, Uri};

pub const EXTENSION_PATH: &str = "/extension";

#[derive(Clone)]
pub struct Gate {
    /// `None` with `--no-token`.
    pub token: Option<String>,
    /// `chrome-extension://<id>`.
    pub extension_origin: String,
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

impl Gate {
    /// Lets the request in or says why not. On success returns the URI to route, with a token
    /// path prefix removed.
    pub fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<Option<Uri>, Refusal> {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
        if !is_loopback_host(host) {
            return Err(refuse(
                StatusCode::FORBIDDEN,
                "Host must be a loopback name such as 127.0.0.1 or localhost",
            ));
        }
        let (path, token_in_path) = self.strip_token_prefix(uri.path());
        let origin = headers.get(header::ORIGIN).map(|o| o.to_str().unwrap_or("<invalid>"));
        let from_extension = origin == Some(self.extension_origin.as_str());
        if path == EXTENSION_PATH && !from_extension {
            return Err(refuse(StatusCode::FORBIDDEN, "only the tabtunnel extension may open this socket"));
        }
        // The browser's own navigation rules send a page's blocked navigations (a form post
        // carries the page's Origin) to the navigation endpoint; the token in the path is still
        // required, which no page has.
        let redirected_navigation = token_in_path && path.starts_with(crate::server::NAVIGATION_PATH);
        if origin.is_some() && !from_extension && !redirected_navigation {
            return Err(refuse(StatusCode::FORBIDDEN, "requests from web pages are refused"));
        }
        if let Some(expected) = &self.token {
            let presented = token_in_path
                || query_token(uri).is_some_and(|t| crate::token::matches(expected, t))
                || bearer_token(headers).is_some_and(|t| crate::token::matches(expected, t));
            if !presented {
                return Err(refuse(StatusCode::UNAUTHORIZED, "missing or wrong tabtunnel token"));
            }
        }
        if !token_in_path {
            return Ok(None);
        }
        let rewritten = match uri.query() {
            Some(q) => format!("{path}?{q}"),
            None => path.to_owned(),
        };
        Ok(Some(rewritten.parse().expect("a suffix of a valid path stays valid")))
    }

    /// Splits `/<token>/rest` into (`/rest`, true); anything else is returned unchanged.
    fn strip_token_prefix<'a>(&self, path: &'a str) -> (&'a str, bool) {
        let Some(token) = &self.token else { return (path, false) };
        let Some(rest) = path.strip_prefix('/') else { return (path, false) };
        let (first, rest) = rest.split_once('/').map_or((rest, ""), |(f, r)| (f, r));
        if !crate::token::matches(token, first) {
            return (path, false);
        }
        // `rest` is what followed "/<token>/", so re-add its slash by slicing the original.
        (if rest.is_empty() { "/" } else { &path[1 + first.len()..] }, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    const EXT: &str = "chrome-extension://jmlcgbpniifikmbmclnhinffofckiihm";

    fn gate(token: bool) -> Gate {
        Gate { token: token.then(|| TOKEN.to_owned()), extension_origin: EXT.to_owned() }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:9722"));
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn check(g: &Gate, uri: &str, h: &HeaderMap) -> Result<Option<String>, StatusCode> {
        g.check(&uri.parse().unwrap(), h).map(|u| u.map(|u| u.to_string())).map_err(|r| r.status)
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
    fn token_as_path_prefix_is_stripped_for_routing() {
        let g = gate(true);
        let h = headers(&[]);
        assert_eq!(check(&g, &format!("/{TOKEN}/json/version"), &h), Ok(Some("/json/version".into())));
        assert_eq!(check(&g, &format!("/{TOKEN}/json/version/"), &h), Ok(Some("/json/version/".into())));
        assert_eq!(
            check(&g, &format!("/{TOKEN}/devtools/browser/B?x=1"), &h),
            Ok(Some("/devtools/browser/B?x=1".into()))
        );
        assert_eq!(check(&g, &format!("/{TOKEN}"), &h), Ok(Some("/".into())));
    }

    #[test]
    fn token_in_query_or_bearer_header() {
        let g = gate(true);
        assert_eq!(check(&g, &format!("/json/version?token={TOKEN}"), &headers(&[])), Ok(None));
        let bearer = format!("Bearer {TOKEN}");
        assert_eq!(check(&g, "/json/version", &headers(&[("authorization", &bearer)])), Ok(None));
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
        ] {
            assert_eq!(check(&g, &uri, &h), Err(StatusCode::UNAUTHORIZED), "{uri}");
        }
        assert_eq!(
            check(&g, "/json", &headers(&[("authorization", "Bearer nope")])),
            Err(StatusCode::UNAUTHORIZED)
        );
    }

    #[test]
    fn no_token_mode_keeps_host_and_origin_checks() {
        let g = gate(false);
        assert_eq!(check(&g, "/json/version", &headers(&[])), Ok(None));
        assert_eq!(
            check(&g, "/json/version", &headers(&[("origin", "http://evil.example")])),
            Err(StatusCode::FORBIDDEN)
        );
    }

    #[test]
    fn web_origins_are_refused_even_with_the_token() {
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
        assert!(check(&g, &uri, &headers(&[("origin", EXT)])).is_ok());
    }

    #[test]
    fn redirected_navigations_need_the_token_in_the_path_but_may_carry_a_page_origin() {
        let g = gate(true);
        let page = [("origin", "https://shop.example.com")];
        let uri = format!("/{TOKEN}/tabtunnel/navigation/a/5?https://x/");
        assert_eq!(check(&g, &uri, &headers(&page)), Ok(Some("/tabtunnel/navigation/a/5?https://x/".into())));
        let query = format!("/tabtunnel/navigation/a/5?token={TOKEN}");
        assert_eq!(check(&g, &query, &headers(&page)), Err(StatusCode::FORBIDDEN));
        assert_eq!(check(&g, "/tabtunnel/navigation/a/5?x", &headers(&[])), Err(StatusCode::UNAUTHORIZED));
    }

    #[test]
    fn the_extension_socket_needs_our_origin_and_the_token() {
        let g = gate(true);
        let uri = format!("/{TOKEN}/extension");
        assert_eq!(check(&g, &uri, &headers(&[("origin", EXT)])), Ok(Some("/extension".into())));
        assert_eq!(check(&g, &uri, &headers(&[])), Err(StatusCode::FORBIDDEN));
        assert_eq!(check(&g, "/extension", &headers(&[("origin", EXT)])), Err(StatusCode::UNAUTHORIZED));
        assert_eq!(check(&gate(false), "/extension", &headers(&[("origin", EXT)])), Ok(None));
    }
}
