//! Agents named in the endpoint URL: `/<token>/agent/<name>/...` is agent `<name>`'s endpoint;
//! everything else is the [`DEFAULT_AGENT`]'s. The prefix is taken off before routing and kept
//! in the request, so that the URLs the daemon hands out (`webSocketDebuggerUrl`) name the agent
//! again.

use axum::http::{StatusCode, Uri};
use tabtunnel_core::{is_valid_agent_name, AgentId, DEFAULT_AGENT};

const PREFIX: &str = "/agent/";

/// Who a request acts for, and the path prefix that named it (`""` or `/agent/<name>`).
#[derive(Debug, Clone)]
pub struct AgentRoute {
    pub agent: AgentId,
    pub prefix: String,
}

impl AgentRoute {
    pub fn default_agent() -> Self {
        AgentRoute { agent: AgentId::new(DEFAULT_AGENT), prefix: String::new() }
    }
}

/// Splits `/agent/<name>/rest?q` into the agent and `/rest?q`; any other URI is the default
/// agent's, unchanged. A malformed name is refused with the reason.
pub fn split(uri: &Uri) -> Result<(AgentRoute, Option<Uri>), (StatusCode, String)> {
    let path = uri.path();
    let Some(rest) = path.strip_prefix(PREFIX).or_else(|| (path == "/agent").then_some("")) else {
        return Ok((AgentRoute::default_agent(), None));
    };
    let (name, tail) = rest.split_once('/').map_or((rest, ""), |(name, tail)| (name, tail));
    if !is_valid_agent_name(name) {
        let shown: String = name.chars().take(80).collect();
        return Err((
            StatusCode::BAD_REQUEST,
            format!(
                "agent name {shown:?} is not valid: use 1-64 letters, digits, '.', '_' or '-', as in /agent/my-agent/json/version"
            ),
        ));
    }
    let rewritten = match uri.query() {
        Some(q) => format!("/{tail}?{q}"),
        None => format!("/{tail}"),
    };
    let route = AgentRoute { agent: AgentId::new(name), prefix: format!("{PREFIX}{name}") };
    Ok((route, Some(rewritten.parse().expect("a suffix of a valid path stays valid"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_str(uri: &str) -> Result<(String, String, Option<String>), StatusCode> {
        split(&uri.parse().unwrap())
            .map(|(r, u)| (r.agent.as_str().to_owned(), r.prefix, u.map(|u| u.to_string())))
            .map_err(|(status, _)| status)
    }

    #[test]
    fn names_the_agent_and_strips_its_prefix() {
        assert_eq!(
            split_str("/agent/a-1/json/version"),
            Ok(("a-1".into(), "/agent/a-1".into(), Some("/json/version".into())))
        );
        assert_eq!(
            split_str("/agent/x.y_z/devtools/browser/B?token=t"),
            Ok(("x.y_z".into(), "/agent/x.y_z".into(), Some("/devtools/browser/B?token=t".into())))
        );
        assert_eq!(split_str("/agent/a"), Ok(("a".into(), "/agent/a".into(), Some("/".into()))));
        assert_eq!(split_str("/agent/a/cdp"), Ok(("a".into(), "/agent/a".into(), Some("/cdp".into()))));
    }

    #[test]
    fn other_paths_are_the_default_agents() {
        assert_eq!(split_str("/json/version"), Ok((DEFAULT_AGENT.into(), "".into(), None)));
        assert_eq!(split_str("/agents/x"), Ok((DEFAULT_AGENT.into(), "".into(), None)));
    }

    #[test]
    fn bad_names_are_a_clear_400() {
        for bad in [
            "/agent/",
            "/agent",
            "/agent//json",
            "/agent/a%20b/json",
            "/agent/..",
            &format!("/agent/{}/x", "n".repeat(65)),
        ] {
            assert_eq!(split_str(bad), Err(StatusCode::BAD_REQUEST), "{bad}");
        }
        let (_, message) = split(&"/agent/a%2Fb/json".parse().unwrap()).unwrap_err();
        assert!(message.contains("1-64 letters"), "{message}");
    }
}
