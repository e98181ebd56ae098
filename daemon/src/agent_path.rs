//! Agents named in the endpoint URL: `/<token>/agent/<name>/...` is agent `<name>`'s endpoint;
//! everything else is the [`DEFAULT_AGENT`]'s. The prefix is taken off before routing and kept
//! in the request, so that the URLs the daemon hands out (`webSocketDebuggerUrl`) name the agent
//! again. [`AgentRoute::apply`] then holds the route to the request's credential: an agent's own
//! token acts as that agent, whatever the path says.

use crate::credential::Credential;
use crate::gate::Admitted;
use axum::http::{StatusCode, Uri};
use tabtunnel_core::{is_valid_agent_name, AgentId, DEFAULT_AGENT};

const PREFIX: &str = "/agent/";

/// Who a request acts for, and how it said so.
#[derive(Debug, Clone)]
pub struct AgentRoute {
    pub agent: AgentId,
    /// The path prefix that named the agent: `""` or `/agent/<name>`.
    pub prefix: String,
    /// `/<token>` as the client presented it, for the URLs handed back to it (never another
    /// credential than its own); `""` without one.
    pub token_prefix: String,
    pub credential: Credential,
    /// Its token's id and its client's User-Agent, for the audit trail.
    pub identity: tabtunnel_core::Identity,
}

impl AgentRoute {
    pub fn default_agent() -> Self {
        AgentRoute {
            agent: AgentId::new(DEFAULT_AGENT),
            prefix: String::new(),
            token_prefix: String::new(),
            credential: Credential::Open,
            identity: Default::default(),
        }
    }

    /// Holds the route to what the request presented: an agent's token is that agent (another
    /// agent's path is refused), and with `--require-agent-tokens` the owner token names no
    /// agent.
    pub fn apply(
        mut self,
        admitted: &Admitted,
        require_agent_tokens: bool,
    ) -> Result<Self, (StatusCode, String)> {
        let named = !self.prefix.is_empty();
        match &admitted.credential {
            Credential::Agent(own) if named && self.agent.as_str() != own => {
                return Err((
                    StatusCode::FORBIDDEN,
                    format!("this token is agent {own:?}'s; it cannot act as agent {:?}", self.agent.as_str()),
                ))
            }
            Credential::Agent(own) => self.agent = AgentId::new(own),
            Credential::Owner if named && require_agent_tokens => {
                return Err((
                    StatusCode::FORBIDDEN,
                    "agents use their own tokens here (--require-agent-tokens): `tabtunnel agent add NAME` mints one".into(),
                ))
            }
            _ => {}
        }
        self.token_prefix = admitted.token_prefix.clone();
        self.credential = admitted.credential.clone();
        if let Credential::Agent(_) = &self.credential {
            let token = self.token_prefix.strip_prefix('/').unwrap_or_default();
            self.identity.token_id = Some(crate::credentials::Credentials::token_id(token));
        }
        Ok(self)
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
    let route = AgentRoute {
        agent: AgentId::new(name),
        prefix: format!("{PREFIX}{name}"),
        ..AgentRoute::default_agent()
    };
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

    fn admitted(credential: Credential) -> Admitted {
        Admitted { uri: None, credential, token_prefix: "/t".into() }
    }

    #[test]
    fn an_agent_token_is_its_own_agent_whatever_the_path_says() {
        let reader = admitted(Credential::Agent("reader".into()));
        let (plain, _) = split(&"/json/version".parse().unwrap()).unwrap();
        let route = plain.apply(&reader, false).unwrap();
        assert_eq!(
            (route.agent.as_str(), route.prefix.as_str(), route.token_prefix.as_str()),
            ("reader", "", "/t")
        );
        let (own, _) = split(&"/agent/reader/cdp".parse().unwrap()).unwrap();
        assert_eq!(own.apply(&reader, true).unwrap().agent.as_str(), "reader");
        let (other, _) = split(&"/agent/alice/cdp".parse().unwrap()).unwrap();
        let (status, message) = other.apply(&reader, false).unwrap_err();
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert!(message.contains("reader") && message.contains("alice"), "{message}");
    }

    #[test]
    fn the_owner_names_any_agent_unless_agents_must_use_their_own_tokens() {
        let owner = admitted(Credential::Owner);
        let (alice, _) = split(&"/agent/alice/cdp".parse().unwrap()).unwrap();
        assert_eq!(alice.clone().apply(&owner, false).unwrap().agent.as_str(), "alice");
        assert_eq!(alice.apply(&owner, true).unwrap_err().0, StatusCode::FORBIDDEN);
        let (plain, _) = split(&"/cdp".parse().unwrap()).unwrap();
        assert_eq!(plain.apply(&owner, true).unwrap().agent.as_str(), DEFAULT_AGENT);
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
