//! The daemon's copy of the agents' credentials, kept to `<config dir>/agents.json`: read again
//! when the file changes (polled, `watch.rs`), and at once when `tabtunnel agent add|revoke`
//! asks ([`PATH`], the owner's credential only). That request is answered once the gate takes
//! the new credentials, the hub has closed the revoked agents' connections and their `/mcp`
//! sessions have ended, so a revocation is in force before the command returns.
//!
//! The core hears who is registered before the gate lets a new token in: a registered agent
//! never counts toward `max_agents`, and its first connection, let in and counted as a made-up
//! name, was refused when those filled the limit (a loaded run of trust.test.mjs). The revoked
//! agents' connections are closed once the gate refuses their token, so none slips in between.

use crate::credentials::{self, SharedCredentials};
use crate::hub::{self, HubHandle};
use std::path::PathBuf;
use std::sync::Arc;

/// `POST <owner endpoint>/tabtunnel/credentials`: read `agents.json` now.
pub const PATH: &str = "/tabtunnel/credentials";

/// Brings the gate's and the hub's credentials up to the file, one reload at a time.
#[derive(Clone)]
pub struct Reloader {
    config_dir: PathBuf,
    shared: SharedCredentials,
    hub: HubHandle,
    /// Each reload reads the file under this lock: an older read can never be applied after a
    /// newer one (the watcher and a request racing would bring a revoked token back).
    one_at_a_time: Arc<tokio::sync::Mutex<()>>,
    /// `/mcp`, whose sessions opened with a revoked token end with it.
    mcp: crate::mcp::HttpService,
}

impl Reloader {
    pub fn new(
        config_dir: PathBuf,
        shared: SharedCredentials,
        hub: HubHandle,
        mcp: crate::mcp::HttpService,
    ) -> Reloader {
        Reloader { config_dir, shared, hub, one_at_a_time: Arc::default(), mcp }
    }

    /// Reads the file and puts it in force: returns once the gate refuses a revoked token, the
    /// hub has cut off its agent and the sessions its token opened on `/mcp` have ended. A file that does not read leaves the last good one.
    pub async fn reload(&self) -> Result<(), String> {
        let _turn = self.one_at_a_time.lock().await;
        let fresh = credentials::load(&self.config_dir)?;
        let revoked: Vec<String> = {
            let old = self.shared.read().unwrap_or_else(|e| e.into_inner());
            old.agents().iter().filter(|a| !fresh.agents().contains(a)).map(|a| a.name.clone()).collect()
        };
        let names: Vec<String> = fresh.names().map(str::to_owned).collect();
        let registered = hub::Input::Credentials { registered: names.clone(), revoked: Vec::new() };
        let _ = self.hub.send(registered).await;
        *self.shared.write().unwrap_or_else(|e| e.into_inner()) = fresh;
        let cut_off = hub::Input::Credentials { registered: names, revoked: revoked.clone() };
        let _ = self.hub.send(cut_off).await;
        self.mcp.end_sessions_of(&revoked).await;
        // The hub takes its inputs in order: once it answers this, the cut-off is done.
        self.hub
            .snapshot(tabtunnel_core::AgentId::default_agent())
            .await
            .ok_or("the daemon is shutting down")?;
        Ok(())
    }

    /// Reloads whenever the file changes (the side panel's mint and revoke, an edit by hand).
    pub async fn watch(self) {
        let path = credentials::path(&self.config_dir);
        crate::watch::watch(path, "agents' credentials", credentials::load_file, move |_| {
            let reloader = self.clone();
            async move {
                if let Err(e) = reloader.reload().await {
                    tracing::warn!("the agents' credentials changed but did not reload: {e}");
                }
            }
        })
        .await
    }
}
