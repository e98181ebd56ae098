//! The tabtunnel daemon: the IO shell around [`tabtunnel_core`].

mod accept;
mod address;
pub mod agent_cli;
pub mod agent_path;
pub mod audit;
pub mod credential;
pub mod credentials;
pub mod gate;
pub mod hub;
pub mod install;
pub mod launch;
pub mod live_credentials;
pub mod log;
pub mod mcp;
pub mod native_host;
pub mod on_demand;
pub mod outbox;
pub mod paths;
pub mod platform;
pub mod policy_file;
pub mod proof;
pub mod server;
pub mod token;
mod trim;
mod upgrade;
mod watch;

use address::url;
pub use address::DEFAULT_PORT;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
pub use tabtunnel_core::Limits;
use tabtunnel_core::{Config, Core};
use tabtunnel_wire::Welcome;
use tokio::sync::oneshot;

/// Our extension's id, fixed by the `key` in `extension/manifest.json`.
pub const EXTENSION_ID: &str = "jmlcgbpniifikmbmclnhinffofckiihm";

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
    /// The owner token may not name agents: agents must use their own tokens.
    pub require_agent_tokens: bool,
    /// Started on demand (`serve --on-demand`): a busy port falls back to a free one, and
    /// `daemon.json` says so.
    pub on_demand: bool,
    /// Agents get a tab prepared before they ask for one (core `prepared.rs`).
    pub prepare_tabs: bool,
}

/// tabtunnel's own directories, as given and as they resolve: the config dir (tokens, keys),
/// the data dir (the audit trail) and the default ones (the launched browser's profile).
/// No agent hands a page a file from them (core `local_files.rs`).
fn private_dirs(options: &ServeOptions) -> Vec<String> {
    let dirs = [
        options.config_dir.clone(),
        options.data_dir.clone(),
        paths::default_config_dir(),
        paths::data_dir(None),
    ];
    let mut out: Vec<String> = Vec::new();
    for dir in dirs {
        let absolute = std::path::absolute(&dir).unwrap_or(dir);
        let resolved = std::fs::canonicalize(&absolute).ok();
        for path in std::iter::once(absolute).chain(resolved) {
            let text = path.to_string_lossy().into_owned();
            if !out.contains(&text) {
                out.push(text);
            }
        }
    }
    out
}

/// A daemon that is listening.
pub struct Running {
    pub port: u16,
    pub token: Option<String>,
    /// What the extension's socket takes (see `gate`).
    pub extension_secret: String,
    /// What the navigation endpoint takes (see `gate`).
    pub navigation_key: String,
    pub browser_target_id: String,
    shutdown: Option<oneshot::Sender<()>>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
    hub: tokio::task::JoinHandle<()>,
    /// Held while serving: one daemon per config dir.
    _lock: on_demand::DaemonLock,
    hub_handle: hub::HubHandle,
    /// Where `daemon.json` is, removed when this is dropped (see `Drop`).
    config_dir: PathBuf,
}

/// However the daemon ends cleanly (idle exit, `tabtunnel stop`'s SIGTERM, Ctrl-C, a failed
/// server), `daemon.json` goes with it, before the lock is released: no client is pointed at a
/// port that may be anyone's next.
impl Drop for Running {
    fn drop(&mut self) {
        on_demand::remove_if_ours(&self.config_dir, self.port);
    }
}

impl Running {
    /// `http://127.0.0.1:PORT[/<token>]`: what a CDP client is given.
    pub fn client_endpoint(&self) -> String {
        self.url("http", "")
    }

    pub fn ws_endpoint(&self) -> String {
        self.url("ws", &format!("/devtools/browser/{}", self.browser_target_id))
    }

    /// What the extension is paired with: its socket, with its own secret (never the client
    /// token).
    pub fn extension_url(&self) -> String {
        url(self.port, Some(&self.extension_secret), "ws", gate::EXTENSION_PATH)
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

    pub fn hub(&self) -> hub::HubHandle {
        self.hub_handle.clone()
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
    let lock = on_demand::lock(&options.config_dir)?;
    let token = if options.require_token { Some(token::load_or_create(&options.config_dir)?) } else { None };
    let extension_secret = token::load_or_create_extension_secret(&options.config_dir)?;
    // Made anew at every start: its URL passes through the browser's network stack.
    let navigation_key = token::generate()[..32].to_owned();
    let agents = credentials::load(&options.config_dir)?;
    let listener =
        match tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, options.port))).await {
            Ok(listener) => listener,
            // Started on demand, any port will do: daemon.json tells clients which.
            Err(e) if options.on_demand && e.kind() == std::io::ErrorKind::AddrInUse => {
                tracing::warn!("port {} is busy; listening on a free one", options.port);
                tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
                    .await
                    .map_err(|e| format!("cannot listen on 127.0.0.1: {e}"))?
            }
            Err(e) => return Err(format!("cannot listen on 127.0.0.1:{}: {e}", options.port)),
        };
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let browser_target_id = token::generate()[..32].to_ascii_uppercase();
    let salt = u64::from_str_radix(&token::generate()[..16], 16).expect("hex");
    let policy = options.policy.as_deref().map(policy_file::load).transpose()?;
    let secrets: Vec<String> = [token.clone(), Some(extension_secret.clone()), Some(navigation_key.clone())]
        .into_iter()
        .flatten()
        .collect();
    log::keep_out(&secrets);
    let private_dirs = private_dirs(&options);
    let mut core = Core::new(Config {
        browser_target_id: browser_target_id.clone(),
        session_id_salt: salt,
        limits: options.limits,
        navigation_url: url(port, Some(&navigation_key), "http", gate::NAVIGATION_PATH),
        secrets,
        prepare_tabs: options.prepare_tabs,
        private_dirs,
    });
    // The core's clock starts with the hub (`hub::spawn`).
    core.set_policy(0, policy);
    core.set_registered_agents(0, agents.names().map(str::to_owned));
    let agents = std::sync::Arc::new(std::sync::RwLock::new(agents));
    let (audit, audit_check) = audit::AuditLog::start(&options.data_dir, &options.config_dir)?;
    let (shutdown, shutdown_rx) = oneshot::channel::<()>();
    let welcome = Welcome {
        daemon_version: env!("CARGO_PKG_VERSION").into(),
        client_endpoint: url(port, token.as_deref(), "http", ""),
        audit_trail: None,
    };
    let shared = hub::Shared::default();
    let agent_tokens =
        hub::AgentTokens { config_dir: options.config_dir.clone(), credentials: agents.clone() };
    let (hub, hub_task) = hub::spawn(
        core,
        welcome,
        shared.clone(),
        Some(audit),
        Some(agent_tokens),
        options.client_outbox.max_total_bytes,
    );
    let hub_handle = hub.clone();
    let audit_hub = hub.clone();
    tokio::spawn(async move {
        if let Ok(Some(problem)) = audit_check.await {
            let _ = audit_hub.send(hub::Input::AuditTrail(problem)).await;
        }
    });
    if let Some(path) = options.policy.clone() {
        let hub = hub.clone();
        // In the hub's inbox before the file is said to be reloaded: every client frame read
        // after that line comes after the new policy.
        tokio::spawn(policy_file::watch(path, move |policy| {
            let hub = hub.clone();
            async move {
                let _ = hub.send(hub::Input::SetPolicy(Some(policy))).await;
            }
        }));
    }
    let mcp = mcp::http_service(port, token.as_deref(), options.data_dir.clone());
    let credentials =
        live_credentials::Reloader::new(options.config_dir.clone(), agents.clone(), hub.clone(), mcp.clone());
    tokio::spawn(credentials.clone().watch());
    let state = server::AppState {
        hub,
        gate: gate::Gate {
            token: token.clone(),
            extension_secret: extension_secret.clone(),
            navigation_key: navigation_key.clone(),
            extension_origin: format!("chrome-extension://{}", options.extension_id),
            agents,
            require_agent_tokens: options.require_agent_tokens,
            identity: proof::Identity {
                key: proof::Key::load_or_create(&options.config_dir)?,
                port,
                pid: std::process::id(),
            },
        },
        browser_target_id: browser_target_id.clone(),
        shared,
        mcp,
        credentials,
        client_outbox: options.client_outbox,
    };
    let server = tokio::spawn(server::serve(listener, state, async move {
        let _ = shutdown_rx.await;
    }));
    let running = Running {
        port,
        token,
        extension_secret,
        navigation_key,
        browser_target_id,
        shutdown: Some(shutdown),
        server,
        hub: hub_task,
        _lock: lock,
        hub_handle,
        config_dir: options.config_dir.clone(),
    };
    on_demand::write(
        &options.config_dir,
        &on_demand::DaemonFile {
            port,
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").into(),
            client_endpoint: running.client_endpoint(),
            extension_url: running.extension_url(),
            on_demand: options.on_demand,
        },
    )?;
    Ok(running)
}
