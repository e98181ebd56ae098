//! Requests an agent held to some origins could send with the human's cookies past the
//! browser's rules. Those rules (`navigation_rules` in the extension) drop the cookies of a
//! request to another origin by the URL the request starts at; two commands take a request to
//! a URL the rules never judge:
//! - `Fetch.continueRequest` (or `Network.continueInterceptedRequest`) with a `url`: the
//!   agent's interception sends its page's request on to another URL, where the network stack
//!   adds that site's cookies (measured: the human's bank answered a rewritten `fetch`);
//! - `Network.loadNetworkResource`: the browser follows redirects itself, from one of the
//!   agent's origins to any (measured: a 302 to the bank, answered with the human's session,
//!   which the agent read with `IO.read`; without credentials, a 302 to this machine's or the
//!   local network's servers, which the agent's pages may not reach).
//!
//! So the first goes only to the agent's own origins (or its frames'), and the second not at
//! all (a page's own `fetch` is held to the rules at every redirect). Agents held to no origins
//! are not concerned.

use serde_json::Value;

use crate::policy::AgentPolicy;

/// Why the command may not run for this agent, if it is one of the routes above.
pub fn refusal(policy: &AgentPolicy, method: &str, params: Option<&str>) -> Option<String> {
    if !policy.restricts_origins() {
        return None;
    }
    let params = || params.and_then(|p| serde_json::from_str::<Value>(p).ok()).unwrap_or(Value::Null);
    match method {
        "Fetch.continueRequest" | "Network.continueInterceptedRequest" => {
            let params = params();
            let url = params["url"].as_str().filter(|u| !u.is_empty())?;
            (!policy.frames_origin(url))
                .then(|| format!("allow_origins: a paused request is not sent on to another origin ({url})"))
        }
        "Network.loadNetworkResource" => Some(
            "allow_origins: Network.loadNetworkResource is refused (the browser follows its \
             redirects to any site, with the human's cookies or to this machine's servers); \
             fetch from the page instead"
                .to_owned(),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::default_policy as policy;
    use serde_json::json;

    fn refused(policy_json: Value, method: &str, params: Value) -> Option<String> {
        let set = policy(policy_json);
        refusal(set.for_agent("a"), method, Some(&params.to_string()))
    }

    #[test]
    fn a_paused_request_goes_on_only_to_the_agents_own_origins() {
        let held =
            json!({ "allow_origins": ["http://a.shop.test:*"], "allow_frame_origins": ["https://cdn.test"] });
        let at = |url: &str| json!({ "requestId": "R1", "url": url });
        for own in ["http://a.shop.test:9851/api", "https://cdn.test/x.js"] {
            assert_eq!(refused(held.clone(), "Fetch.continueRequest", at(own)), None, "{own}");
        }
        assert_eq!(
            refused(held.clone(), "Fetch.continueRequest", json!({ "requestId": "R1" })),
            None,
            "unchanged"
        );
        assert_eq!(
            refused(held.clone(), "Fetch.continueRequest", json!({ "requestId": "R1", "headers": [] })),
            None
        );
        for method in ["Fetch.continueRequest", "Network.continueInterceptedRequest"] {
            let rule =
                refused(held.clone(), method, at("http://bank.shop.test:9851/api/me")).expect("refused");
            assert!(rule.starts_with("allow_origins: a paused request"), "{rule}");
        }
        assert_eq!(
            refused(json!({}), "Fetch.continueRequest", at("http://bank.shop.test/")),
            None,
            "no origin rules"
        );
    }

    #[test]
    fn a_resource_the_browser_loads_itself_is_refused_under_origin_rules() {
        let held = json!({ "allow_origins": ["http://a.shop.test:*"] });
        let load = |credentials: bool| json!({ "frameId": "F", "url": "http://a.shop.test:9851/redir", "options": { "disableCache": true, "includeCredentials": credentials } });
        for credentials in [true, false] {
            let rule =
                refused(held.clone(), "Network.loadNetworkResource", load(credentials)).expect("refused");
            assert!(rule.contains("redirects"), "{rule}");
        }
        assert_eq!(refused(json!({}), "Network.loadNetworkResource", load(true)), None, "no origin rules");
        assert_eq!(refused(held, "Runtime.evaluate", json!({ "expression": "1" })), None);
    }
}
