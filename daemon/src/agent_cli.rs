//! `tabtunnel agent add|revoke`: change `agents.json` (`credentials.rs`), then have this config
//! dir's running daemon read it at once and wait for its answer
//! (`crate::live_credentials::PATH`), so that a revoked token is refused, and a new one taken,
//! before the command returns. With no daemon running, the next one reads the file at start.

use crate::credentials;
use crate::mcp::daemon_api;
use std::path::Path;
use std::time::Duration;

/// How long the daemon may take to confirm.
const CONFIRM_WAIT: Duration = Duration::from_secs(10);

/// What became of telling the daemon.
#[derive(Debug, PartialEq, Eq)]
pub enum Told {
    /// This config dir's daemon has the file's credentials in force (pid, port).
    Daemon { pid: u32, port: u16 },
    /// No daemon answers for this config dir.
    NoDaemon,
}

/// Has this config dir's running daemon read `agents.json` now; returns once it has.
pub async fn tell_daemon(config_dir: &Path) -> Result<Told, String> {
    // The daemon `daemon.json` names, once it has answered as ours.
    let Some(file) = crate::on_demand::running(config_dir).await else { return Ok(Told::NoDaemon) };
    let authority = format!("127.0.0.1:{}", file.port);
    let url = format!("{}{}", file.client_endpoint, crate::live_credentials::PATH);
    // Proved again on this request's own connection: the owner token goes to ours only.
    let key = crate::proof::Key::load_or_create(config_dir)?;
    daemon_api::send(&authority, "POST", &url, None, CONFIRM_WAIT, Some(&key)).await.map_err(|e| {
        format!(
            "the running daemon (pid {}, port {}) did not confirm ({e}); it reads {} again within a second",
            file.pid,
            file.port,
            credentials::path(config_dir).display()
        )
    })?;
    Ok(Told::Daemon { pid: file.pid, port: file.port })
}

/// Mints agent `name`'s token, has the daemon take it, and says how to give it to the agent.
pub async fn add(config_dir: &Path, name: &str) -> Result<String, String> {
    let token = credentials::add(config_dir, name)?;
    if let Err(e) = tell_daemon(config_dir).await {
        eprintln!("tabtunnel: {e}");
    }
    Ok(token)
}

/// How to hand a new token to its agent: in the environment, never a command line (which `ps`
/// shows every local user).
pub fn added_message(name: &str, token: &str) -> String {
    format!(
        "Agent {name}'s token, shown only now (only its hash is kept). It acts as {name} only, whatever \
         the path says.\n\
         Give it to the agent in its environment, not on a command line (`ps` shows command lines to \
         every local user):\n  \
           TABTUNNEL_TOKEN={token} tabtunnel mcp\n  \
           or in an MCP client's config: \"env\": {{ \"TABTUNNEL_TOKEN\": \"{token}\" }}\n\
         A CDP client takes the endpoint http://127.0.0.1:<port>/{token} (keep it in a config file or \
         the environment too)."
    )
}

/// Revokes agent `name`'s token; once this returns, a running daemon refuses it and has closed
/// the agent's connections (an error says when the daemon did not confirm).
pub async fn revoke(config_dir: &Path, name: &str) -> Result<Told, String> {
    if !credentials::revoke(config_dir, name)? {
        return Err(format!("agent {name:?} has no token"));
    }
    tell_daemon(config_dir).await.map_err(|e| format!("agent {name}'s token is revoked in the file, but {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_token_is_shown_in_the_environment_form_never_as_a_flag() {
        let token = format!("tta_{}", "ab".repeat(32));
        let message = added_message("reader", &token);
        assert!(message.contains(&format!("TABTUNNEL_TOKEN={token} tabtunnel mcp")), "{message}");
        assert!(message.contains(&format!("\"TABTUNNEL_TOKEN\": \"{token}\"")), "{message}");
        assert!(!message.contains("--token"), "{message}");
        assert!(message.contains("ps"), "{message}");
    }

    #[tokio::test]
    async fn with_no_daemon_the_file_alone_changes() {
        let dir = tempfile::tempdir().unwrap();
        let token = add(dir.path(), "reader").await.unwrap();
        assert_eq!(credentials::load(dir.path()).unwrap().agent_of(&token), Some("reader"));
        assert_eq!(revoke(dir.path(), "reader").await, Ok(Told::NoDaemon));
        assert_eq!(credentials::load(dir.path()).unwrap().agent_of(&token), None);
        assert!(revoke(dir.path(), "reader").await.unwrap_err().contains("no token"));
    }
}
