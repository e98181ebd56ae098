//! Which daemon `tabtunnel mcp` talks to: `--endpoint URL`, else the daemon on this machine's
//! default port with the token from the config dir; and the agent's endpoint beneath it.

use std::path::Path;

/// A client endpoint, `http://HOST:PORT[/<token>]`, without a trailing slash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientEndpoint {
    base: String,
}

impl ClientEndpoint {
    /// Parses `--endpoint`. An agent endpoint (`.../agent/<name>`) is accepted too: the agent
    /// it names is returned beside the client endpoint.
    pub fn parse(url: &str) -> Result<(ClientEndpoint, Option<String>), String> {
        let trimmed = url.trim().trim_end_matches('/');
        let uri: hyper::Uri = trimmed.parse().map_err(|e| format!("--endpoint {url:?} is not a URL: {e}"))?;
        if uri.scheme_str() != Some("http") || uri.authority().is_none() {
            return Err(format!(
                "--endpoint {url:?}: give the client endpoint, http://127.0.0.1:PORT/<token> (as `tabtunnel serve` prints)"
            ));
        }
        if uri.query().is_some() {
            return Err(format!("--endpoint {url:?}: put the token in the path, not a query"));
        }
        match trimmed.rsplit_once("/agent/") {
            Some((base, name)) if !name.contains('/') => {
                super::agent_name::validate(name)?;
                Ok((ClientEndpoint { base: base.to_owned() }, Some(name.to_owned())))
            }
            _ => Ok((ClientEndpoint { base: trimmed.to_owned() }, None)),
        }
    }

    /// The daemon on this machine's `port`, with the token kept in `config_dir`.
    pub fn local(config_dir: &Path, port: u16) -> Result<ClientEndpoint, String> {
        let token = crate::token::load_or_create(config_dir)?;
        Ok(ClientEndpoint::loopback(port, Some(&token)))
    }

    /// `http://127.0.0.1:PORT[/<token>]`: a daemon's own endpoint.
    pub fn loopback(port: u16, token: Option<&str>) -> ClientEndpoint {
        ClientEndpoint { base: crate::address::url(port, token, "http", "") }
    }

    /// The same daemon with another credential: `prefix` is `/<token>` (or `""` for none).
    pub fn with_token_prefix(&self, prefix: &str) -> ClientEndpoint {
        ClientEndpoint { base: format!("http://{}{prefix}", self.authority()) }
    }

    /// The token in the endpoint's path, if any.
    pub fn token(&self) -> Option<&str> {
        let after_scheme = self.base.strip_prefix("http://")?;
        after_scheme.split_once('/').map(|(_, path)| path.split('/').next().unwrap_or(path))
    }

    pub fn as_str(&self) -> &str {
        &self.base
    }

    /// `host:port`, for the TCP connection and the `Host` header.
    pub fn authority(&self) -> String {
        let uri: hyper::Uri = self.base.parse().expect("parsed before");
        uri.authority().expect("checked in parse").to_string()
    }

    /// The endpoint of agent `name` (a valid name).
    pub fn agent(&self, name: &str) -> String {
        format!("{}/agent/{name}", self.base)
    }

    /// What to tell a user when nothing answers there.
    pub fn nobody_listening(&self) -> String {
        format!(
            "no tabtunnel daemon answers at {}. Start one: `tabtunnel launch` (a Chromium with the \
             extension, already paired) or `tabtunnel serve` (for the extension in your own Chrome); \
             or pass the endpoint it prints with --endpoint",
            redact(&self.base)
        )
    }
}

pub use crate::token::redact;

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn parses_client_and_agent_endpoints() {
        let (e, agent) = ClientEndpoint::parse(&format!("http://127.0.0.1:9722/{TOKEN}/")).unwrap();
        assert_eq!(e.as_str(), format!("http://127.0.0.1:9722/{TOKEN}"));
        assert_eq!(agent, None);
        assert_eq!(e.authority(), "127.0.0.1:9722");
        assert_eq!(e.agent("A"), format!("http://127.0.0.1:9722/{TOKEN}/agent/A"));

        let (e, agent) = ClientEndpoint::parse(&format!("http://127.0.0.1:9/{TOKEN}/agent/bot-1")).unwrap();
        assert_eq!(e.as_str(), format!("http://127.0.0.1:9/{TOKEN}"));
        assert_eq!(agent.as_deref(), Some("bot-1"));

        let (e, _) = ClientEndpoint::parse("http://localhost:9722").unwrap();
        assert_eq!(e.as_str(), "http://localhost:9722");
    }

    #[test]
    fn refuses_what_is_not_a_client_endpoint() {
        for bad in [
            "",
            "127.0.0.1:9722",
            "ws://127.0.0.1:9722/x/devtools/browser/1",
            "https://127.0.0.1:9722/x",
            "http://127.0.0.1:9722/x?token=y",
            "http://127.0.0.1:9722/x/agent/bad name",
        ] {
            assert!(ClientEndpoint::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn local_reads_the_token_from_the_config_dir() {
        let dir = tempfile::tempdir().unwrap();
        let token = crate::token::load_or_create(dir.path()).unwrap();
        let e = ClientEndpoint::local(dir.path(), 9722).unwrap();
        assert_eq!(e.as_str(), format!("http://127.0.0.1:9722/{token}"));
        let message = e.nobody_listening();
        assert!(message.contains("tabtunnel launch") && message.contains("tabtunnel serve"), "{message}");
        assert!(!message.contains(&token), "the message names the token: {message}");
    }

    #[test]
    fn another_credential_on_the_same_daemon() {
        let (e, _) = ClientEndpoint::parse(&format!("http://127.0.0.1:9722/{TOKEN}")).unwrap();
        assert_eq!(e.token(), Some(TOKEN));
        let agent = e.with_token_prefix("/tta_x");
        assert_eq!(agent.as_str(), "http://127.0.0.1:9722/tta_x");
        assert_eq!(agent.token(), Some("tta_x"));
        assert_eq!(ClientEndpoint::loopback(1, None).token(), None);
    }

    #[test]
    fn redacts_tokens() {
        assert_eq!(
            redact(&format!("http://127.0.0.1:9722/{TOKEN}/agent/A")),
            "http://127.0.0.1:9722/<token>/agent/A"
        );
        assert_eq!(redact("http://127.0.0.1:9722"), "http://127.0.0.1:9722");
        let agent = format!("tta_{}", "ab".repeat(32));
        assert_eq!(
            redact(&format!("http://127.0.0.1:1/{agent}/agent/x")),
            "http://127.0.0.1:1/<token>/agent/x"
        );
    }
}
