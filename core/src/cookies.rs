//! Cookies kept from agents.
//!
//! - An agent whose policy hides cookies (a cookie getter denied, or a preset that says so) sees
//!   no cookie value at all. Besides the getters, cookie values travel in the Network, Fetch and
//!   Audits domains' events and in some answers (request `Cookie` and response `Set-Cookie`
//!   headers, raw header text, the cookie lists of the `ExtraInfo` events, a cookie issue's raw
//!   line); all are rewritten before they reach the agent's clients, whatever session they come
//!   on.
//! - An agent held to some origins (`allow_origins`) never sees the cookies of the others: the
//!   browser sends them no cookies for it (`worker/navigation.rs`), but Chrome still lists them,
//!   values and all, among a request's `associatedCookies` (blocked, with a reason), and the
//!   getters, if its policy lets it use them, answer with every site's; those of domains outside
//!   the agent's origins are hidden.
//!
//! Only frames of those domains that mention a cookie at all are parsed; everything else passes
//! as it came.

use serde_json::{Map, Value};

/// What a hidden cookie value reads as.
pub const HIDDEN: &str = "<hidden by tabtunnel's policy>";

/// Which cookies an agent may not see.
#[derive(Clone, Copy)]
pub enum Hidden<'a> {
    /// Every one.
    All,
    /// Those of domains none of its origins would be sent (the policy says which).
    OutsideOf(&'a crate::policy::AgentPolicy),
}

impl<'a> Hidden<'a> {
    /// Which cookies `policy` keeps from its agent: all (it hides cookies), those of other
    /// origins (it is held to some), or none.
    pub fn by(policy: &'a crate::policy::AgentPolicy) -> Option<Self> {
        match (policy.hides_cookies(), policy.restricts_origins()) {
            (true, _) => Some(Hidden::All),
            (false, true) => Some(Hidden::OutsideOf(policy)),
            (false, false) => None,
        }
    }

    fn hides_cookie_of(&self, domain: Option<&str>) -> bool {
        match (self, domain) {
            (Hidden::All, _) | (Hidden::OutsideOf(_), None) => true,
            (Hidden::OutsideOf(policy), Some(domain)) => !policy.sees_cookies_of(domain),
        }
    }
}

/// Whether frames of `method` (its events, or its answers) can carry cookie values.
pub fn domain_carries_cookies(method: &str) -> bool {
    ["Network.", "Fetch.", "Audits.", "Storage.", "Page."].iter().any(|d| method.starts_with(d))
}

/// Whether JSON text names a cookie at all: a byte scan, no parse.
pub fn mentions_cookie(json: &str) -> bool {
    json.as_bytes().windows(5).any(|w| w.eq_ignore_ascii_case(b"ookie"))
}

/// Whether a frame of `method` may carry cookie values: its domain can, and its text names a
/// cookie.
pub fn may_carry(method: &str, json: &str) -> bool {
    domain_carries_cookies(method) && mentions_cookie(json)
}

/// What [`redact`] made of a frame's JSON.
#[derive(Debug, PartialEq, Eq)]
pub enum Redaction {
    /// It held no cookie value the agent may not see: it passes as it came.
    Unchanged,
    /// The same JSON with those values replaced by [`HIDDEN`].
    Hidden(String),
    /// It could not be read, so what it holds cannot be hidden: it must not reach the agent.
    /// The browser sends JSON, but serde_json reads fewer than 128 levels of nesting: what is
    /// nested that deep or deeper (or is not JSON at all) is unreadable here.
    Unreadable,
}

/// `json` with every cookie value the agent may not see replaced by [`HIDDEN`].
pub fn redact(json: &str, hidden: Hidden) -> Redaction {
    let Ok(mut value) = serde_json::from_str::<Value>(json) else { return Redaction::Unreadable };
    match redact_value(&mut value, hidden) {
        true => Redaction::Hidden(value.to_string()),
        false => Redaction::Unchanged,
    }
}

fn is_cookie_header(name: &str) -> bool {
    name.eq_ignore_ascii_case("cookie") || name.eq_ignore_ascii_case("set-cookie")
}

/// Hides what is cookie in `value`, in place; whether anything was.
fn redact_value(value: &mut Value, hidden: Hidden) -> bool {
    match value {
        Value::Object(map) => redact_object(map, hidden),
        Value::Array(items) => items.iter_mut().fold(false, |any, item| redact_value(item, hidden) | any),
        _ => false,
    }
}

fn hide(value: &mut Value) -> bool {
    if value.as_str() == Some(HIDDEN) {
        return false;
    }
    *value = Value::String(HIDDEN.into());
    true
}

/// A cookie as an object (`{name, value, domain, ...}`): its value, if the agent may not see it.
fn redact_cookie(cookie: &mut Map<String, Value>, hidden: Hidden) -> bool {
    let domain = cookie.get("domain").and_then(Value::as_str);
    hidden.hides_cookie_of(domain) && cookie.get_mut("value").is_some_and(hide)
}

fn redact_object(map: &mut Map<String, Value>, hidden: Hidden) -> bool {
    // Headers and raw lines name no domain: only an agent that sees no cookie loses them (one
    // held to origins gets no cookies of others sent, so none of theirs are in its headers).
    let all = matches!(hidden, Hidden::All);
    let mut changed = false;
    // A header as `{"name": "Cookie", "value": ...}` (Fetch's header entries).
    if all && map.get("name").and_then(Value::as_str).is_some_and(is_cookie_header) {
        if let Some(v) = map.get_mut("value").filter(|v| v.is_string()) {
            changed |= hide(v);
        }
    }
    // An entry of a cookie list with its raw line (`blockedCookies[]`): the line goes with the
    // cookie it holds.
    let line_hidden = match map.get("cookie") {
        Some(Value::Object(cookie)) => hidden.hides_cookie_of(cookie.get("domain").and_then(Value::as_str)),
        _ => all,
    };
    for (key, v) in map.iter_mut() {
        let key = key.as_str();
        changed |= if v.is_string() && all && is_cookie_header(key) {
            // A header in a headers object.
            hide(v)
        } else if v.is_string() && matches!(key, "cookieLine" | "rawCookieLine") {
            // A whole `Set-Cookie` line.
            line_hidden && hide(v)
        } else if let (Value::String(text), "headersText" | "requestHeadersText", true) = (&mut *v, key, all)
        {
            // Headers as raw HTTP text.
            redact_header_text(text)
        } else if let (Value::Object(cookie), "cookie") = (&mut *v, key) {
            // A cookie as an object (`associatedCookies[].cookie`, `blockedCookies[].cookie`).
            redact_cookie(cookie, hidden)
        } else if let (Value::Array(cookies), "cookies") = (&mut *v, key) {
            // Cookie objects in a list (the getters' answers).
            cookies
                .iter_mut()
                .fold(false, |any, c| any | c.as_object_mut().is_some_and(|c| redact_cookie(c, hidden)))
        } else {
            redact_value(v, hidden)
        };
    }
    changed
}

/// Replaces the value of every `Cookie:` and `Set-Cookie:` line of raw HTTP header text.
fn redact_header_text(text: &mut String) -> bool {
    let mut changed = false;
    let redacted: Vec<String> = text
        .split('\n')
        .map(|line| match line.split_once(':') {
            Some((name, _)) if is_cookie_header(name.trim()) => {
                changed = true;
                let cr = if line.ends_with('\r') { "\r" } else { "" };
                format!("{name}: {HIDDEN}{cr}")
            }
            _ => line.to_owned(),
        })
        .collect();
    if changed {
        *text = redacted.join("\n");
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn redacted(params: Value) -> Value {
        hidden_text(redact(&params.to_string(), Hidden::All))
    }

    fn hidden_text(redaction: Redaction) -> Value {
        match redaction {
            Redaction::Hidden(text) => serde_json::from_str(&text).unwrap(),
            other => panic!("nothing hidden: {other:?}"),
        }
    }

    /// `depth` arrays, one inside the other, around a `Set-Cookie` header.
    pub(super) fn nested(depth: usize) -> String {
        let header = json!({ "headers": { "set-cookie": "session=s3cret" } }).to_string();
        format!("{}{header}{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn the_extra_info_events_lose_their_cookie_headers_and_lists() {
        let sent = redacted(json!({
            "requestId": "1",
            "headers": { "Cookie": "session=s3cret", "Accept": "*/*" },
            "associatedCookies": [
                { "cookie": { "name": "session", "value": "s3cret", "httpOnly": true }, "blockedReasons": [] }
            ],
            "connectTiming": { "requestTime": 1.0 }
        }));
        assert_eq!(sent["headers"]["Cookie"], HIDDEN);
        assert_eq!(sent["headers"]["Accept"], "*/*");
        assert_eq!(sent["associatedCookies"][0]["cookie"]["value"], HIDDEN);
        assert_eq!(sent["associatedCookies"][0]["cookie"]["name"], "session");
        let received = redacted(json!({
            "requestId": "1",
            "headers": { "set-cookie": "a=1; HttpOnly\nb=2", "content-type": "text/html" },
            "headersText": "HTTP/1.1 200 OK\r\nSet-Cookie: a=1; HttpOnly\r\nContent-Type: text/html\r\n",
            "blockedCookies": [{ "cookie": { "name": "b", "value": "2" }, "cookieLine": "b=2", "blockedReasons": [] }],
            "exemptedCookies": [{ "cookie": { "name": "c", "value": "3" }, "exemptionReason": "x" }]
        }));
        assert_eq!(received["headers"]["set-cookie"], HIDDEN);
        assert_eq!(
            received["headersText"],
            format!("HTTP/1.1 200 OK\r\nSet-Cookie: {HIDDEN}\r\nContent-Type: text/html\r\n")
        );
        assert_eq!(received["blockedCookies"][0]["cookie"]["value"], HIDDEN);
        assert_eq!(received["blockedCookies"][0]["cookieLine"], HIDDEN);
        assert_eq!(received["exemptedCookies"][0]["cookie"]["value"], HIDDEN);
    }

    #[test]
    fn interception_redirects_websockets_and_issues_too() {
        let paused = redacted(json!({
            "request": { "url": "http://x/", "headers": { "COOKIE": "k=v" } },
            "responseHeaders": [{ "name": "Set-Cookie", "value": "k=v" }, { "name": "Server", "value": "x" }]
        }));
        assert_eq!(paused["request"]["headers"]["COOKIE"], HIDDEN);
        assert_eq!(paused["responseHeaders"][0]["value"], HIDDEN);
        assert_eq!(paused["responseHeaders"][1]["value"], "x");
        let redirect = redacted(json!({
            "request": { "headers": {} },
            "redirectResponse": { "headers": { "Set-Cookie": "k=v" }, "requestHeaders": { "Cookie": "k=v" },
                                  "requestHeadersText": "GET / HTTP/1.1\ncookie: k=v\nHost: x" }
        }));
        assert_eq!(redirect["redirectResponse"]["headers"]["Set-Cookie"], HIDDEN);
        assert_eq!(redirect["redirectResponse"]["requestHeaders"]["Cookie"], HIDDEN);
        assert_eq!(
            redirect["redirectResponse"]["requestHeadersText"],
            format!("GET / HTTP/1.1\ncookie: {HIDDEN}\nHost: x")
        );
        let issue = redacted(
            json!({ "issue": { "details": { "cookieIssueDetails": { "rawCookieLine": "k=v; SameSite=None" } } } }),
        );
        assert_eq!(issue["issue"]["details"]["cookieIssueDetails"]["rawCookieLine"], HIDDEN);
        let getter = redacted(json!({ "cookies": [{ "name": "k", "value": "v" }] }));
        assert_eq!(getter["cookies"][0]["value"], HIDDEN);
    }

    #[test]
    fn an_agent_held_to_origins_loses_the_cookies_of_the_others_only() {
        let file: crate::policy::PolicyFile = serde_json::from_value(json!({
            "default": { "allow_origins": ["http://127.0.0.1:*", "https://*.shop.test"] }
        }))
        .unwrap();
        let set = crate::policy::PolicySet::compile(&file).unwrap();
        let policy = set.for_agent("a");
        let params = json!({
            "headers": { "Cookie": "own=1" },
            "associatedCookies": [
                { "cookie": { "name": "own", "value": "1", "domain": "127.0.0.1" }, "blockedReasons": [] },
                { "cookie": { "name": "mail", "value": "s3cret", "domain": "localhost" }, "blockedReasons": ["SameSiteLax"] },
                { "cookie": { "name": "sso", "value": "2", "domain": ".shop.test" }, "blockedReasons": [] },
                { "cookie": { "name": "evil", "value": "3", "domain": "shop.test.evil" }, "blockedReasons": [] }
            ],
            "blockedCookies": [{ "cookie": { "name": "m", "value": "4", "domain": "localhost" }, "cookieLine": "m=4", "blockedReasons": [] }]
        });
        let out: Value = hidden_text(redact(&params.to_string(), Hidden::OutsideOf(policy)));
        assert_eq!(out["headers"]["Cookie"], "own=1", "headers are the agent's own origin's");
        let values: Vec<&str> = out["associatedCookies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["cookie"]["value"].as_str().unwrap())
            .collect();
        assert_eq!(values, ["1", HIDDEN, "2", HIDDEN]);
        assert_eq!(out["blockedCookies"][0]["cookieLine"], HIDDEN);
    }

    #[test]
    fn frames_without_cookies_are_left_alone_and_not_parsed() {
        assert!(!may_carry("Network.requestWillBeSent", r#"{"request":{"url":"http://x/"}}"#));
        assert!(may_carry("Network.requestWillBeSentExtraInfo", r#"{"headers":{"Cookie":"a"}}"#));
        assert!(may_carry("Fetch.requestPaused", r#"{"x":"COOKIE"}"#));
        assert!(!may_carry("Runtime.consoleAPICalled", r#"{"args":[{"value":"cookie"}]}"#));
        // A page that merely mentions cookies has nothing redacted.
        let unchanged = r#"{"request":{"url":"http://x/cookies","headers":{}}}"#;
        assert_eq!(redact(unchanged, Hidden::All), Redaction::Unchanged);
        // What is already hidden stays as it is.
        assert_eq!(
            redact(&json!({ "headers": { "Cookie": HIDDEN } }).to_string(), Hidden::All),
            Redaction::Unchanged
        );
    }

    #[test]
    fn what_cannot_be_read_is_unreadable_not_passed_as_it_came() {
        assert_eq!(redact("not json", Hidden::All), Redaction::Unreadable);
        // Deeper than serde_json reads: the header in it cannot be hidden, so none of it passes.
        assert_eq!(redact(&nested(200), Hidden::All), Redaction::Unreadable);
        // Within its depth, the header is found and hidden.
        let shallow = hidden_text(redact(&nested(100), Hidden::All));
        let mut inner = &shallow;
        for _ in 0..100 {
            inner = &inner[0];
        }
        assert_eq!(inner["headers"]["set-cookie"], HIDDEN);
    }
}

/// The core keeps cookies from hiding agents on every route: events of the page and of its
/// children, and answers.
#[cfg(test)]
mod wiring {
    use super::HIDDEN;
    use crate::policy::{PolicyFile, PolicySet};
    use crate::testing::*;
    use crate::*;
    use serde_json::json;

    fn policy() -> PolicySet {
        let file: PolicyFile = serde_json::from_value(json!({
            "agent": { "baker": { "preset": "no-cookies" } }
        }))
        .unwrap();
        PolicySet::compile(&file).unwrap()
    }

    /// Agent `baker` (cookies hidden) on tab 1 and `free` on tab 2, each with Network on.
    fn two_agents() -> (Harness, String, String) {
        let mut h = Harness::with_tabs(&[]);
        h.core.set_policy(h.now, Some(policy()));
        h.ext(FromExtension::TabShared(agent_tab(1, "baker", true)));
        h.ext(FromExtension::TabShared(agent_tab(2, "free", true)));
        h.connect_as(1, "baker");
        h.connect_as(2, "free");
        let baker = h.playwright_attach(1)[0].clone();
        let free = h.playwright_attach(2)[0].clone();
        h.send(1, json!({"id": 5, "sessionId": baker, "method": "Network.enable"}));
        h.send(2, json!({"id": 5, "sessionId": free, "method": "Network.enable"}));
        h.drain();
        (h, baker, free)
    }

    const EXTRA_INFO: &str = r#"{"requestId":"9","headers":{"Cookie":"session=s3cret"},"associatedCookies":[{"cookie":{"name":"session","value":"s3cret"},"blockedReasons":[]}]}"#;

    #[test]
    fn events_of_a_hiding_agents_tab_lose_their_cookies_and_others_keep_theirs() {
        let (mut h, _, _) = two_agents();
        let step = h.ext(event(1, None, "Network.requestWillBeSentExtraInfo", EXTRA_INFO));
        let sent = &step.to(1)[0]["params"];
        assert_eq!(sent["headers"]["Cookie"], HIDDEN);
        assert_eq!(sent["associatedCookies"][0]["cookie"]["value"], HIDDEN);
        assert!(!step.to(1)[0].to_string().contains("s3cret"));
        let step = h.ext(event(2, None, "Network.requestWillBeSentExtraInfo", EXTRA_INFO));
        assert_eq!(step.to(2)[0]["params"]["headers"]["Cookie"], "session=s3cret", "not hidden from others");
    }

    #[test]
    fn childrens_events_and_answers_are_covered_too() {
        let (mut h, baker, _) = two_agents();
        // Answered by the core: Chrome's auto-attach is the gesture guard's, always on.
        h.send(1, json!({"id": 6, "sessionId": baker, "method": "Target.setAutoAttach", "params": {"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}}));
        h.ext(event(
            1,
            None,
            "Target.attachedToTarget",
            r#"{"sessionId":"W1","targetInfo":{"targetId":"W","type":"worker","url":"http://127.0.0.1:8000/w.js"},"waitingForDebugger":false}"#,
        ));
        let step = h.send(1, json!({"id": 8, "sessionId": "W1", "method": "Network.enable"}));
        let id = step.commands()[0].id;
        h.answer(id, json!({}));
        let step = h.ext(event(
            1,
            Some("W1"),
            "Network.responseReceivedExtraInfo",
            r#"{"requestId":"3","headers":{"set-cookie":"a=1"}}"#,
        ));
        assert_eq!(step.to(1)[0]["params"]["headers"]["set-cookie"], HIDDEN);
        // An answer that carries headers (loadNetworkResource's).
        let step = h.send(1, json!({"id": 7, "sessionId": baker, "method": "Network.loadNetworkResource", "params": {"url": "http://127.0.0.1:8000/x", "options": {"disableCache": false, "includeCredentials": true}}}));
        let id = step.commands()[0].id;
        let step = h.answer(
            id,
            json!({"resource": {"success": true, "headers": {"Set-Cookie": "a=1"}, "stream": "5"}}),
        );
        assert_eq!(step.only_reply(1)["result"]["resource"]["headers"]["Set-Cookie"], HIDDEN);
        assert_eq!(step.only_reply(1)["result"]["resource"]["stream"], "5");
    }

    #[test]
    fn an_answer_passed_on_as_the_extensions_own_bytes_is_hidden_all_the_same() {
        let (mut h, baker, free) = two_agents();
        let answer = r#"{"resource":{"success":true,"headers":{"Set-Cookie":"a=s3cret"},"stream":"5"}}"#;
        let load = |session: &str| json!({"id": 9, "sessionId": session, "method": "Network.loadNetworkResource", "params": {"url": "http://127.0.0.1:8000/x", "options": {"disableCache": false, "includeCredentials": true}}});
        let step = h.send(1, load(&baker));
        let frames = h.answer_shared(step.commands()[0].id, answer);
        assert_eq!(frames.len(), 1);
        assert!(matches!(frames[0].1, ClientFrame::Whole(_)), "rewritten, so not the shared bytes");
        assert!(!frames[0].1.text().contains("s3cret"), "{:?}", frames[0].1);
        let step = h.send(2, load(&free));
        let frames = h.answer_shared(step.commands()[0].id, answer);
        assert!(matches!(frames[0].1, ClientFrame::Around(_)), "passed on unchanged");
        assert!(frames[0].1.text().contains("s3cret"));
    }

    /// An agent held to some origins may use the getters, whose answers list every site's
    /// cookies (`Network.getAllCookies`, `Storage.getCookies`): those of other sites lose their
    /// values.
    #[test]
    fn a_getter_answers_an_agent_held_to_origins_with_its_own_sites_cookies_only() {
        let file: PolicyFile = serde_json::from_value(json!({
            "agent": { "scout": { "allow_origins": ["http://127.0.0.1:*"] } }
        }))
        .unwrap();
        let mut h = Harness::with_tabs(&[]);
        h.core.set_policy(h.now, Some(PolicySet::compile(&file).unwrap()));
        h.ext(FromExtension::TabShared(agent_tab(1, "scout", true)));
        h.connect_as(1, "scout");
        let session = h.playwright_attach(1)[0].clone();
        h.drain();
        let answer = json!({"cookies": [
            {"name": "own", "value": "1", "domain": "127.0.0.1", "httpOnly": false},
            {"name": "bank", "value": "s3cret", "domain": ".bank.example", "httpOnly": true}
        ]});
        for method in ["Network.getAllCookies", "Network.getCookies", "Storage.getCookies"] {
            let step = h.send(1, json!({"id": 3, "sessionId": session, "method": method}));
            let step = h.answer(step.commands()[0].id, answer.clone());
            let cookies = &step.only_reply(1)["result"]["cookies"];
            assert_eq!(cookies[0]["value"], "1", "{method}: its own site's");
            assert_eq!(cookies[1]["value"], HIDDEN, "{method}");
            assert_eq!(cookies[1]["name"], "bank", "{method}: only the value goes");
        }
    }

    #[test]
    fn what_is_too_deep_to_hide_cookies_in_never_reaches_a_hiding_agent() {
        let (mut h, baker, free) = two_agents();
        let deep = super::tests::nested(200);
        // An event: withheld from the hiding agent, and recorded; another agent's comes whole.
        let step = h.ext(event(1, None, "Network.responseReceivedExtraInfo", &deep));
        assert!(step.to(1).is_empty(), "{:?}", step.to(1));
        let audited: Vec<_> = step
            .other
            .iter()
            .filter_map(|o| match o {
                Output::Audit(r) => Some(r),
                _ => None,
            })
            .collect();
        assert_eq!(audited.len(), 1);
        assert_eq!((audited[0].agent.as_str(), audited[0].tab), ("baker", Some(1)));
        assert!(matches!(&audited[0].outcome, Outcome::Denied { rule } if rule.contains("cookie")));
        // (Too deep for the test harness's parser too: read as text.)
        h.core.extension_frame(h.now, event(2, None, "Network.responseReceivedExtraInfo", &deep));
        let mut delivered = Vec::new();
        while let Some(output) = h.core.poll_output() {
            if let Output::ToClient { conn, frame } = output {
                delivered.push((conn, frame.text().into_owned()));
            }
        }
        assert_eq!(delivered.len(), 1);
        assert!(delivered[0].0 == 2 && delivered[0].1.contains("s3cret"));
        // An answer: an error instead.
        let load = |session: &str| json!({"id": 9, "sessionId": session, "method": "Network.loadNetworkResource", "params": {"url": "http://127.0.0.1:8000/x", "options": {"disableCache": false, "includeCredentials": true}}});
        let step = h.send(1, load(&baker));
        let frames = h.answer_shared(step.commands()[0].id, &deep);
        assert_eq!(frames.len(), 1);
        let reply: serde_json::Value = serde_json::from_str(&frames[0].1.text()).unwrap();
        assert_eq!(reply["id"], 9);
        assert!(reply["error"]["message"].as_str().unwrap().contains("withheld"), "{reply}");
        let step = h.send(2, load(&free));
        let frames = h.answer_shared(step.commands()[0].id, &deep);
        assert!(frames[0].1.text().contains("s3cret"));
    }
}
