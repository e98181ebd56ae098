//! `tabtunnel mcp`: an MCP server (stdio, rmcp) for one agent. It runs a browser tool server
//! (chrome-devtools-mcp or @playwright/mcp, pinned) as its child, pointed at the agent's
//! endpoint, forwards its tools unchanged, adds `tabtunnel_*` tools, and restarts the child
//! before forwarding when the child or the extension's connection died.
//!
//! | module | job |
//! |---|---|
//! | `agent_name` | name rules; a name from the MCP client's own |
//! | `endpoint` | `--endpoint` or the local daemon; agent endpoints; token redaction |
//! | `daemon_api` | the daemon's status, hand-over and version endpoints |
//! | `install`, `patches` | the pinned children: `npm ci` into the data dir, then `patches/` |
//! | `rpc` | raw JSON-RPC over the child's stdio |
//! | `child` | which child, its command line, process and handshake |
//! | `child_tools`, `work_dir` | the child's tools agents may call; the files they may name (the session's work dir) |
//! | `supervisor` | restart before forward |
//! | `presence` | the agent connected from the session's start |
//! | `proxy`, `own_tools` | the MCP server itself (knows nothing of HTTP) |
//! | `scrub` | the child's results, errors and notifications without a secret |
//! | `http` | the same server over Streamable HTTP at `<endpoint>/mcp`, a session per agent; reads what the request names |
//! | `slots` | sessions over HTTP at once, per agent and in all |
//! | `sessions` | an `/mcp` session is its opener's only (token and agent) |

mod agent_name;
mod child;
mod child_tools;
pub(crate) mod daemon_api;
mod endpoint;
mod http;
pub mod install;
mod own_tools;
mod patches;
mod presence;
mod proxy;
mod rpc;
mod scrub;
mod sessions;
mod slots;
mod supervisor;
mod work_dir;

pub use child::ToolKind;
pub use http::{service as http_service, HttpService};

use rmcp::ServiceExt;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct McpArgs {
    /// The client endpoint, `http://127.0.0.1:PORT/<token>` as `tabtunnel serve` prints it
    /// (default: this user's daemon, `<config dir>/daemon.json`, started when none answers).
    #[arg(long, value_name = "URL")]
    endpoint: Option<String>,
    /// Where the token is kept (default: the user's config dir, `tabtunnel/`), as for `serve`.
    #[arg(long, value_name = "DIR")]
    config_dir: Option<PathBuf>,
    /// The token to use (default: $TABTUNNEL_TOKEN, else the owner token from the config dir).
    /// An agent's own token (`tabtunnel agent add NAME`) makes this MCP server that agent.
    /// Prefer $TABTUNNEL_TOKEN: a command line is visible to every local user (`ps`), an
    /// environment is not.
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    /// The agent's name, 1-64 of A-Z a-z 0-9 . _ - (default: $TABTUNNEL_AGENT, else the MCP
    /// client's own name plus a short unique suffix).
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    /// The browser tool server to run.
    #[arg(long, value_enum, default_value_t = ToolKind::ChromeDevtools)]
    tools: ToolKind,
    /// Install the pinned browser tool servers (npm ci, once) and exit.
    #[arg(long)]
    install: bool,
}

pub async fn run(args: McpArgs) -> Result<(), String> {
    let data_dir = crate::paths::data_dir(args.config_dir.as_deref());
    if args.install {
        let installed = install::ensure_installed(&data_dir).await?;
        eprintln!("tabtunnel: browser tool servers installed in {}", installed.modules.display());
        return Ok(());
    }
    let config_dir = args.config_dir.clone().unwrap_or_else(crate::paths::default_config_dir);
    let token =
        args.token.clone().or_else(|| std::env::var("TABTUNNEL_TOKEN").ok().filter(|t| !t.is_empty()));
    let (mut endpoint, mut endpoint_agent, on_demand) = match &args.endpoint {
        Some(url) => {
            let (endpoint, agent) = endpoint::ClientEndpoint::parse(url)?;
            (endpoint, agent, None)
        }
        None => {
            // This user's own daemon, started if none answers (its port from daemon.json).
            let options = crate::on_demand::StartOptions::this_binary(config_dir.clone())?;
            let endpoint = match crate::on_demand::ensure_running(&options).await {
                Ok(daemon) => endpoint::ClientEndpoint::parse(&daemon.client_endpoint)?.0,
                Err(e) => {
                    tracing::warn!("could not start the tabtunnel daemon: {e}");
                    endpoint::ClientEndpoint::local(&config_dir, crate::address::DEFAULT_PORT)?
                }
            };
            (endpoint, None, Some(options))
        }
    };
    if let Some(token) = &token {
        endpoint = endpoint.with_token_prefix(&format!("/{token}"));
    }
    // An agent's own token is that agent: its name comes with it.
    if let Some(own) = endpoint.token().filter(|t| crate::credentials::looks_like_agent_token(t)) {
        let creds = crate::credentials::load(&config_dir)?;
        let name = creds.agent_of(own).ok_or_else(|| {
            format!(
                "this agent token is not one of {}'s (revoked, or minted with another --config-dir)",
                crate::credentials::path(&config_dir).display()
            )
        })?;
        if endpoint_agent.as_deref().is_some_and(|named| named != name) {
            return Err(format!(
                "the endpoint names agent {} but the token is agent {name}'s",
                endpoint_agent.unwrap()
            ));
        }
        endpoint_agent = Some(name.to_owned());
    }
    let agent = fixed_agent(args.agent, std::env::var("TABTUNNEL_AGENT").ok(), endpoint_agent)?;
    let session = proxy::Session::Stdio { agent, kind: args.tools };
    // A daemon found through daemon.json proves it is this user's before each request; one the
    // user named with --endpoint may have another config dir, hence another key.
    let proof = match &on_demand {
        Some(options) => Some(crate::proof::Key::load_or_create(&options.config_dir)?),
        None => None,
    };
    let backend = proxy::RealBackend::new(data_dir, endpoint).starting_daemons(on_demand).proven_by(proof);
    let proxy = Arc::new(proxy::Proxy::new(backend, session));
    let running = proxy::McpServer { proxy }
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("MCP session did not start: {e}"))?;
    running.waiting().await.map_err(|e| format!("MCP session ended abnormally: {e}"))?;
    Ok(())
}

/// The agent named by `--agent`, else `TABTUNNEL_AGENT`, else an agent endpoint; `None` means
/// "from the client's name". Two different names are an error, not a guess.
fn fixed_agent(
    flag: Option<String>,
    env: Option<String>,
    from_endpoint: Option<String>,
) -> Result<Option<String>, String> {
    let chosen = flag.or(env.filter(|name| !name.is_empty()));
    if let Some(name) = &chosen {
        agent_name::validate(name)?;
    }
    match (chosen, from_endpoint) {
        (Some(a), Some(b)) if a != b => {
            Err(format!("--endpoint names agent {b} but the agent is {a}: pick one"))
        }
        (chosen, from_endpoint) => Ok(chosen.or(from_endpoint)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_comes_from_the_flag_then_the_environment_then_the_endpoint() {
        let s = |v: &str| Some(v.to_owned());
        assert_eq!(fixed_agent(s("a"), s("b"), None), Ok(s("a")));
        assert_eq!(fixed_agent(None, s("b"), None), Ok(s("b")));
        assert_eq!(fixed_agent(None, s(""), None), Ok(None));
        assert_eq!(fixed_agent(None, None, s("c")), Ok(s("c")));
        assert_eq!(fixed_agent(s("c"), None, s("c")), Ok(s("c")));
        assert_eq!(fixed_agent(None, None, None), Ok(None));
        assert!(fixed_agent(s("a"), None, s("c")).is_err());
        assert!(fixed_agent(s("bad name"), None, None).is_err());
        assert!(fixed_agent(None, s("bad/name"), None).is_err());
    }
}
