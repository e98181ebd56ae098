//! The tabtunnel daemon: the IO shell around [`tabtunnel_core`].

mod accept;
pub mod agent_path;
pub mod audit;
pub mod gate;
pub mod hub;
pub mod launch;
pub mod mcp;
pub mod outbox;
pub mod policy_file;
pub mod server;
pub mod token;
mod trim;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
pub use tabtunnel_core::Limits;
use tabtunnel_core::{Config, Core};
use tabtunnel_wire::Welcome;
use tokio::sync::oneshot;

/// Our extension's id, fixed by the `key` in `extension/manifest.json`.
pub const EXTENSION_ID: &str = "jmlcgbpniifikmbmclnhinffofckiihm";
pub const DEFAULT_PORT: u16 = 9722;

pub struct ServeOptions {
    pub port: u16,
    /// Off: no token is required (the protection level of Chrome's own debugging port).
    pub require_token: bool,
    pub config_dir: PathBuf,
    pub extension_id: String,
    /// Agents, tabs per agent, grace period, command timeout.
    pub limits: Limits,
    /// The per-agent policy file, watched for changes.
    pub policy: Option<PathBuf>,
    /// Where the audit trail goes (`<data_dir>/audit/`).
    pub data_dir: PathBuf,
    /// How much may wait for one client before it is disconnected as too slow.
    pub client_outbox: outbox::Limits,
    /// Agents get a tab prepared before they ask for one (core `prepared.rs`).
    pub prepare_tabs: bool,
}

/// A daemon that is listening.
pub struct Running {
    pub port: u16,
    pub token: Option<String>,
    pub browser_target_id: String,
    shutdown: Option<oneshot::Sender<()>>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
    hub: tokio::task::JoinHandle<()>,
}

impl Running {
    /// `http://127.0.0.1:PORT[/<token>]`: what a CDP client is given.
    pub fn client_endpoint(&self) -> String {
        self.url("http", "")
    }

    pub fn ws_endpoint(&self) -> String {
        self.url("ws", &format!("/devtools/browser/{}", self.browser_target_id))
    }

    /// What the extension is paired with.
    pub fn extension_url(&self) -> String {
        self.url("ws", gate::EXTENSION_PATH)
    }

    fn url(&self, scheme: &str, path: &str) -> String {
        url(self.port, self.token.as_deref(), scheme, path)
    }

    /// The endpoints as JSON, for `--ready-file`.
    pub fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "port": self.port,
            "clientEndpoint": self.client_endpoint(),
            "wsEndpoint": self.ws_endpoint(),
            "extensionUrl": self.extension_url(),
        })
    }

    /// Serves until the server fails or [`Running::stop`] is called. Should the hub ever stop
    /// (a bug), this returns an error rather than leave a daemon that answers nothing.
    pub async fn wait(&mut self) -> std::io::Result<()> {
        tokio::select! {
            served = &mut self.server => served.unwrap_or_else(|e| Err(std::io::Error::other(e))),
            hub = &mut self.hub => Err(std::io::Error::other(match hub {
                Err(e) if e.is_panic() => "the hub task panicked; this is a tabtunnel bug",
                _ => "the hub task stopped",
            })),
        }
    }

    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = self.wait().await;
    }
}

/// Binds 127.0.0.1 and starts serving.
pub async fn start(options: ServeOptions) -> Result<Running, String> {
    let token = if options.require_token { Some(token::load_or_create(&options.config_dir)?) } else { None };
    let listener = tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, options.port)))
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1:{}: {e}", options.port))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let browser_target_id = token::generate()[..32].to_ascii_uppercase();
    let salt = u64::from_str_radix(&token::generate()[..16], 16).expect("hex");
    let policy = options.policy.as_deref().map(policy_file::load).transpose()?;
    let mut core = Core::new(Config {
        browser_target_id: browser_target_id.clone(),
        session_id_salt: salt,
        limits: options.limits,
        navigation_url: url(port, token.as_deref(), "http", server::NAVIGATION_PATH),
        prepare_tabs: options.prepare_tabs,
    });
    core.set_policy(policy);
    let audit = audit::AuditLog::start(&options.data_dir)?;
    let (shutdown, shutdown_rx) = oneshot::channel::<()>();
    let welcome = Welcome {
        daemon_version: env!("CARGO_PKG_VERSION").into(),
        client_endpoint: url(port, token.as_deref(), "http", ""),
    };
    let shared = hub::Shared::default();
    let (hub, hub_task) = hub::spawn(core, welcome, shared.clone(), Some(audit));
    if let Some(path) = options.policy.clone() {
        let hub = hub.clone();
        tokio::spawn(policy_file::watch(path, move |policy| {
            let hub = hub.clone();
            tokio::spawn(async move { hub.send(hub::Input::SetPolicy(Some(policy))).await });
        }));
    }
    let state = server::AppState {
        hub,
        gate: gate::Gate {
            token: token.clone(),
            extension_origin: format!("chrome-extension://{}", options.extension_id),
        },
        browser_target_id: browser_target_id.clone(),
        shared,
        mcp: mcp::http_service(port, token.as_deref()),
        client_outbox: options.client_outbox,
    };
    let server = tokio::spawn(server::serve(listener, state, async move {
        let _ = shutdown_rx.await;
    }));
    Ok(Running { port, token, browser_target_id, shutdown: Some(shutdown), server, hub: hub_task })
}

/// `scheme://127.0.0.1:PORT[/<token>]path`
pub(crate) fn url(port: u16, token: Option<&str>, scheme: &str, path: &str) -> String {
    match token {
        Some(token) => format!("{scheme}://127.0.0.1:{port}/{token}{path}"),
        None => format!("{scheme}://127.0.0.1:{port}{path}"),
    }
}
