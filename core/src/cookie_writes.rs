//! Cookies an agent held to some origins may write: only those of its own sites.
//!
//! The getters' answers and the events already hide other sites' cookies from such an agent
//! (`cookies.rs`), but the setters reach every site of the user's profile: `Network.setCookie`
//! with another site's URL plants a cookie there (a session fixed for the user's bank),
//! `Network.deleteCookies` signs the user out of it, `Network.clearBrowserCookies` out of every
//! site; a response it writes for another site's paused request can carry a `Set-Cookie`
//! ([`response_refusal`]). A cookie is the agent's to write when its own origins would be sent
//! it ([`AgentPolicy::sees_cookies_of`]), which is also what a page of those origins may set.

use serde_json::Value;

use crate::origins::{host_of, Reach};
use crate::policy::AgentPolicy;

/// Why the command may not run for this agent, if it writes cookies of another site (or of
/// sites it does not name). `None` for an agent held to no origins.
pub fn refusal(policy: &AgentPolicy, method: &str, params: Option<&str>) -> Option<String> {
    if !policy.restricts_origins() {
        return None;
    }
    writes(method, params).refusal(
        |domain| policy.sees_cookies_of(domain),
        "it writes the cookies of every site",
        |domain| format!("{} is another site's", domain.trim_start_matches('.')),
    )
}

/// Why a client's answer to a request paused for it (`Fetch.fulfillRequest`,
/// `Fetch.continueResponse`) may not go: its response sets a cookie and the request is another
/// site's. The browser's rules drop `Set-Cookie` of other sites' responses, but not of a
/// response the client writes (measured: a `fulfillRequest` planted a cookie on another site).
/// Headers it cannot read (`binaryResponseHeaders`) count as setting one.
pub fn response_refusal(
    policy: &AgentPolicy,
    method: &str,
    params: &Value,
    request_url: &str,
) -> Option<String> {
    let answers = matches!(method, "Fetch.fulfillRequest" | "Fetch.continueResponse");
    if !policy.restricts_origins() || !answers || !sets_cookie(params) {
        return None;
    }
    match host_of(request_url) {
        Some(host) if policy.sees_cookies_of(&host) => None,
        Some(host) => Some(format!("allow_origins: a Set-Cookie for {host}, another site's")),
        None => Some("allow_origins: a Set-Cookie for a request of no site".into()),
    }
}

fn sets_cookie(params: &Value) -> bool {
    let named = |header: &Value| {
        header
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| n.trim().eq_ignore_ascii_case("set-cookie"))
    };
    let listed = params.get("responseHeaders").and_then(Value::as_array).is_some_and(|h| h.iter().any(named));
    let binary = params.get("binaryResponseHeaders").and_then(Value::as_str).is_some_and(|b| !b.is_empty());
    listed || binary
}

/// Which sites' cookies a command writes: cookie domains as Chrome lists them (`.` first for a
/// domain cookie).
fn writes(method: &str, params: Option<&str>) -> Reach {
    let params = || params.and_then(|p| serde_json::from_str::<Value>(p).ok()).unwrap_or(Value::Null);
    match method {
        "Network.setCookie" | "Network.deleteCookies" => {
            cookie_domains(&params()).map_or(Reach::AllSites, Reach::Named)
        }
        // `Storage.setCookies` takes the same `CookieParam`s (Playwright's `addCookies`).
        "Network.setCookies" | "Storage.setCookies" => {
            match params().get("cookies").and_then(Value::as_array) {
                Some(cookies) => cookies
                    .iter()
                    .map(cookie_domains)
                    .collect::<Option<Vec<_>>>()
                    .map_or(Reach::AllSites, |domains| Reach::Named(domains.concat())),
                None => Reach::AllSites,
            }
        }
        "Storage.clearDataForOrigin" => {
            one_or_all(params().get("origin").and_then(Value::as_str).and_then(host_of))
        }
        "Storage.clearDataForStorageKey" => {
            one_or_all(params().get("storageKey").and_then(Value::as_str).and_then(host_of))
        }
        "Network.clearBrowserCookies" | "Storage.clearCookies" => Reach::AllSites,
        _ => Reach::Nothing,
    }
}

fn one_or_all(domain: Option<String>) -> Reach {
    Reach::of(domain.into_iter().collect())
}

/// The cookie domains a `CookieParam` (or `deleteCookies`' params) names, as Chrome reads
/// them: its `url`'s host, and its `domain`: with a leading `.` a domain cookie of that host,
/// without one a host-only cookie of it (Chrome builds the URL `http(s)://` + domain, and
/// `deleteCookies` matches the domain exactly). `None` when it names none, or a `domain` that is
/// not a plain host (`bank.test/.shop.test` is bank.test's URL to Chrome): every site, then.
fn cookie_domains(cookie: &Value) -> Option<Vec<String>> {
    let mut domains = Vec::new();
    if let Some(url) = cookie.get("url").and_then(Value::as_str).filter(|u| !u.is_empty()) {
        domains.push(host_of(url)?);
    }
    if let Some(domain) = cookie.get("domain").and_then(Value::as_str).filter(|d| !d.is_empty()) {
        let (dot, name) = match domain.strip_prefix('.') {
            Some(name) => (".", name),
            None => ("", domain),
        };
        let host = host_of(&format!("http://{name}/"))?;
        if host != name.to_ascii_lowercase() {
            return None;
        }
        domains.push(format!("{dot}{host}"));
    }
    (!domains.is_empty()).then_some(domains)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicySet;
    use crate::testing::default_policy as policy;
    use serde_json::json;

    fn refused(set: &PolicySet, method: &str, params: Value) -> Option<String> {
        refusal(set.for_agent("a"), method, Some(&params.to_string()))
    }

    #[test]
    fn an_agent_held_to_origins_writes_the_cookies_of_its_own_sites_only() {
        let set = policy(json!({ "allow_origins": ["http://127.0.0.1:*", "https://*.shop.test"] }));
        let own = [
            ("Network.setCookie", json!({"name": "a", "value": "1", "url": "http://127.0.0.1:8000/"})),
            ("Network.setCookie", json!({"name": "a", "value": "1", "domain": ".shop.test"})),
            ("Network.setCookie", json!({"name": "a", "value": "1", "domain": "www.shop.test"})),
            ("Network.setCookie", json!({"name": "a", "value": "1", "domain": ".WWW.shop.test"})),
            (
                "Storage.setCookies",
                json!({"cookies": [{"name": "a", "value": "1", "domain": "www.shop.test"}]}),
            ),
            ("Storage.setCookies", json!({"cookies": []})),
            ("Network.deleteCookies", json!({"name": "a", "url": "https://www.shop.test/"})),
            (
                "Network.setCookies",
                json!({"cookies": [{"name": "a", "value": "1", "url": "http://127.0.0.1:1/"}]}),
            ),
            ("Storage.clearDataForOrigin", json!({"origin": "http://127.0.0.1:8000", "storageTypes": "all"})),
            ("Network.getCookies", json!({"urls": ["https://bank.test/"]})),
        ];
        for (method, params) in own {
            assert_eq!(refused(&set, method, params.clone()), None, "{method} {params}");
        }
        let other = [
            (
                "Network.setCookie",
                json!({"name": "a", "value": "1", "url": "https://bank.test/"}),
                "bank.test",
            ),
            (
                "Network.setCookie",
                json!({"name": "a", "value": "1", "domain": "bank.test", "url": "http://127.0.0.1:1/"}),
                "bank.test",
            ),
            ("Network.deleteCookies", json!({"name": "session", "domain": "bank.test"}), "bank.test"),
            // A backslash is a slash to Chrome: this URL is localhost's.
            (
                "Network.deleteCookies",
                json!({"name": "s", "url": r"http://localhost:1\@127.0.0.1:2/"}),
                "localhost",
            ),
            (
                "Network.setCookies",
                json!({"cookies": [{"name": "a", "value": "1", "url": "http://127.0.0.1:1/"}, {"name": "b", "value": "2", "domain": "bank.test"}]}),
                "bank.test",
            ),
            (
                "Storage.clearDataForOrigin",
                json!({"origin": "https://bank.test", "storageTypes": "cookies"}),
                "bank.test",
            ),
            (
                "Storage.clearDataForStorageKey",
                json!({"storageKey": "https://bank.test/", "storageTypes": "all"}),
                "bank.test",
            ),
            (
                "Storage.setCookies",
                json!({"cookies": [{"name": "b", "value": "2", "url": "https://bank.test/"}]}),
                "bank.test",
            ),
            // Without a dot, a host-only cookie of that host: `*.` does not cover the apex.
            ("Network.setCookie", json!({"name": "a", "value": "1", "domain": "shop.test"}), "shop.test"),
            ("Network.deleteCookies", json!({"name": "a", "domain": "shop.test"}), "shop.test"),
        ];
        for (method, params, site) in other {
            let rule = refused(&set, method, params.clone()).unwrap_or_else(|| panic!("{method} {params}"));
            assert_eq!(rule, format!("allow_origins: {site} is another site's"));
        }
        for (method, params) in [
            ("Network.clearBrowserCookies", json!({})),
            ("Storage.clearCookies", json!({})),
            // Naming no site, or one that cannot be read: every site as far as it can tell.
            ("Network.deleteCookies", json!({"name": "session"})),
            ("Network.setCookie", json!({"name": "a", "value": "1", "url": "not a url"})),
            // A `domain` Chrome reads as a URL of another host: bank.test's, whatever it ends with.
            ("Network.setCookie", json!({"name": "a", "value": "1", "domain": "bank.test/.shop.test"})),
            ("Network.setCookie", json!({"name": "a", "value": "1", "domain": "bank.test?.shop.test"})),
            ("Network.setCookie", json!({"name": "a", "value": "1", "domain": "bank.test#.shop.test"})),
            ("Network.setCookie", json!({"name": "a", "value": "1", "domain": r"bank.test\.shop.test"})),
            ("Network.deleteCookies", json!({"name": "a", "domain": ".bank.test/.shop.test"})),
        ] {
            assert!(
                refused(&set, method, params.clone()).is_some_and(|r| r.starts_with("allow_origins")),
                "{method} {params}"
            );
        }
    }

    #[test]
    fn an_agent_held_to_no_origins_writes_any_cookie() {
        let set = policy(json!({ "deny_methods": ["Input.*"] }));
        assert_eq!(refused(&set, "Network.clearBrowserCookies", json!({})), None);
        assert_eq!(
            refused(
                &set,
                "Network.setCookie",
                json!({"name": "a", "value": "1", "url": "https://bank.test/"})
            ),
            None
        );
    }

    /// Agent `scout` under `section`, on tab 1 through connection 1: the harness, its session,
    /// and its command planting a cookie on bank.test.
    fn scout_planting(section: Value) -> (crate::testing::Harness, String, Value) {
        let (h, session) = crate::testing::scout_on_its_tab(Some(section));
        let plant = json!({"id": 4, "sessionId": session, "method": "Network.setCookie", "params": {"name": "s", "value": "x", "url": "https://bank.test/"}});
        (h, session, plant)
    }

    /// Through the core: refused before the extension hears of it, naming the rule, recorded.
    #[test]
    fn the_core_refuses_another_sites_cookie_write_and_records_it() {
        use crate::Output;
        let (mut h, session, plant) = scout_planting(json!({ "allow_origins": ["http://127.0.0.1:*"] }));
        let step = h.send(1, plant);
        assert!(step.commands().is_empty(), "the extension heard of it");
        let reply = step.only_reply(1);
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .contains("allow_origins: bank.test is another site's"),
            "{reply}"
        );
        let denied = |o: &Output| {
            matches!(o, Output::Audit(r) if r.method == "Network.setCookie"
                && matches!(&r.outcome, crate::Outcome::Denied { rule } if rule.contains("allow_origins")))
        };
        assert!(step.other.iter().any(denied));
        let own = json!({"id": 5, "sessionId": session, "method": "Network.setCookie", "params": {"name": "s", "value": "x", "url": "http://127.0.0.1:8000/"}});
        assert_eq!(h.send(1, own).commands().len(), 1, "its own site's goes through");
    }

    /// A method the human would be asked about is refused first when it writes another site's
    /// cookie: the human is never asked about what the policy refuses anyway.
    #[test]
    fn another_sites_cookie_write_is_refused_before_the_human_is_asked() {
        let section =
            json!({ "allow_origins": ["http://127.0.0.1:*"], "ask_methods": ["Network.setCookie"] });
        let (mut h, _, plant) = scout_planting(section);
        let step = h.send(1, plant);
        assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("allow_origins"));
        assert!(
            step.extension.is_empty() && step.commands().is_empty(),
            "nothing asked: {:?}",
            step.extension
        );
    }
}
