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
use super::proxy::{Proxy, RealBackend};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A session nobody has used for this long is closed (and its child with it).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(600);
/// Sessions at once, per agent and in all: each runs a child tool server (a Node process), so one
/// client (or one agent's token) opening sessions without end would starve everyone else.
pub const SESSIONS_PER_AGENT: usize = 4;
pub const SESSIONS_IN_ALL: usize = 32;

/// The sessions running, per agent.
#[derive(Clone, Default, Debug)]
pub struct Slots(Arc<Mutex<HashMap<String, usize>>>);

/// One session's place among [`Slots`]; freed when the session ends.
#[derive(Debug)]
pub struct Slot {
    slots: Slots,
    agent: String,
}

impl Slots {
    pub fn take(&self, agent: &str) -> Result<Slot, String> {
        let mut running = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if running.values().sum::<usize>() >= SESSIONS_IN_ALL {
            return Err(format!("tabtunnel runs at most {SESSIONS_IN_ALL} MCP sessions over HTTP at once; end one (DELETE) first"));
        }
        let mine = running.entry(agent.to_owned()).or_default();
        if *mine >= SESSIONS_PER_AGENT {
            return Err(format!(
                "agent {agent} has {SESSIONS_PER_AGENT} MCP sessions already; end one (DELETE) first"
            ));
        }
        *mine += 1;
        Ok(Slot { slots: self.clone(), agent: agent.to_owned() })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut running = self.slots.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = running.get_mut(&self.agent) {
            *n -= 1;
            if *n == 0 {
                running.remove(&self.agent);
            }
        }
    }
}

pub type HttpService = super::sessions::Owned;

/// The service for the daemon listening on `port` (with `token`, unless `--no-token`).
pub fn service(port: u16, token: Option<&str>) -> HttpService {
    let endpoint = ClientEndpoint::loopback(port, token);
    let data_dir = crate::launch::data_dir();
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(IDLE_TIMEOUT);
    let slots = Slots::default();
    let sessions = Arc::new(sessions);
    let service = StreamableHttpService::new(
        move || {
            let backend = RealBackend::new(data_dir.clone(), endpoint.clone());
            Ok(Proxy::over_http(backend, slots.clone()))
        },
        sessions.clone(),
        // The gate has checked Host and Origin already, with the daemon's own rules.
        StreamableHttpServerConfig::default(),
    );
    super::sessions::Owned::new(service, sessions)
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
    fn sessions_are_bounded_per_agent_and_in_all_and_freed_when_they_end() {
        let slots = Slots::default();
        let held: Vec<Slot> = (0..SESSIONS_PER_AGENT).map(|_| slots.take("a").unwrap()).collect();
        assert!(slots.take("a").unwrap_err().contains("agent a"));
        drop(held);
        let mut many = Vec::new();
        for i in 0..SESSIONS_IN_ALL {
            many.push(slots.take(&format!("x{}", i / SESSIONS_PER_AGENT)).unwrap());
        }
        assert!(slots.take("newcomer").unwrap_err().contains("at most"));
        many.pop();
        assert!(slots.take("newcomer").is_ok());
    }

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
