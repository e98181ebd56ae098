//! `<endpoint>/mcp` on the daemon: the same MCP server over Streamable HTTP (rmcp's
//! `StreamableHttpService`), for clients that connect by URL. It sits behind the daemon's gate
//! like every route (token in the path or as `Authorization: Bearer`, loopback `Host`, no web
//! `Origin`). Every MCP session is an agent of its own, with its own child tool server and
//! tabs: named by `/agent/<name>/mcp` or `?agent=NAME`, else by the client's name plus a
//! suffix; `?tools=playwright` picks @playwright/mcp. A session ends with `DELETE` or after
//! [`IDLE_TIMEOUT`] without requests; its child ends with it. A session is its opener's only
//! (`sessions.rs`): another credential or agent presenting its id gets `404`.

use super::child::ToolKind;
use super::endpoint::ClientEndpoint;
use super::proxy::{Chosen, Proxy, RealBackend};
use super::slots::Slots;
use crate::agent_path::AgentRoute;
use crate::credential::Credential;
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::RoleServer;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A session nobody has used for this long is closed (and its child with it).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(600);
pub type HttpService = super::sessions::Owned;

/// The service for the daemon listening on `port` (with `token`, unless `--no-token`), whose
/// data (the tool servers, their run dir) is in `data_dir`.
pub fn service(port: u16, token: Option<&str>, data_dir: PathBuf) -> HttpService {
    let endpoint = ClientEndpoint::loopback(port, token);
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(IDLE_TIMEOUT);
    let slots = Slots::default();
    let sessions = Arc::new(sessions);
    let service = StreamableHttpService::new(
        move || {
            let backend = RealBackend::new(data_dir.clone(), endpoint.clone());
            Ok(Proxy::over_http(backend, slots.clone(), chosen))
        },
        sessions.clone(),
        // The gate has checked Host and Origin already, with the daemon's own rules.
        StreamableHttpServerConfig::default(),
    );
    super::sessions::Owned::new(service, sessions)
}

/// A session's agent (`None`: from the client's name), tool server, and the credential its
/// child uses (`None`: the backend's own), from the request that opened it.
fn chosen(context: &RequestContext<RoleServer>) -> Result<Chosen, String> {
    let parts = context.extensions.get::<axum::http::request::Parts>();
    let route = parts.and_then(|p| p.extensions.get::<AgentRoute>());
    // An agent's own token is its agent, path or not; and its child uses that token, never the
    // owner's.
    let own = route.filter(|r| matches!(r.credential, Credential::Agent(_)));
    let from_path =
        route.filter(|r| !r.prefix.is_empty() || own.is_some()).map(|r| r.agent.as_str().to_owned());
    let (agent, kind) = choose(from_path, parts.and_then(|p| p.uri.query()))?;
    Ok((agent, kind, own.map(|r| r.token_prefix.clone())))
}

/// The agent (`None`: from the client's name) and tool server a request names: the agent's
/// path, else `?agent=`; `?tools=`.
pub fn choose(from_path: Option<String>, query: Option<&str>) -> Result<(Option<String>, ToolKind), String> {
    let mut agent = from_path.clone();
    let mut kind = ToolKind::ChromeDevtools;
    for (key, value) in query.unwrap_or_default().split('&').filter_map(|pair| pair.split_once('=')) {
        match key {
            "agent" => {
                super::agent_name::validate(value)?;
                if from_path.as_deref().is_some_and(|named| named != value) {
                    return Err(format!("the path names agent {} but ?agent= {value}", from_path.unwrap()));
                }
                agent = Some(value.to_owned());
            }
            "tools" => {
                kind = <ToolKind as clap::ValueEnum>::from_str(value, false)
                    .map_err(|_| format!("?tools={value}: use chrome-devtools or playwright"))?;
            }
            _ => {}
        }
    }
    Ok((agent, kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_names_the_agent_and_the_tools() {
        assert_eq!(choose(None, None), Ok((None, ToolKind::ChromeDevtools)));
        assert_eq!(choose(None, Some("agent=bot-1")), Ok((Some("bot-1".into()), ToolKind::ChromeDevtools)));
        assert_eq!(choose(Some("x".into()), None), Ok((Some("x".into()), ToolKind::ChromeDevtools)));
        assert_eq!(
            choose(Some("x".into()), Some("agent=x&tools=playwright")),
            Ok((Some("x".into()), ToolKind::Playwright))
        );
        assert_eq!(choose(None, Some("token=t&tools=chrome-devtools")), Ok((None, ToolKind::ChromeDevtools)));
        assert!(choose(None, Some("agent=bad%20name")).is_err());
        assert!(choose(None, Some("agent=")).is_err());
        assert!(choose(Some("x".into()), Some("agent=y")).is_err());
        assert!(choose(None, Some("tools=selenium")).is_err());
    }
}
