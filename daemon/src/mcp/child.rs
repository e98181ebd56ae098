//! The child browser tool server: which one, its command line, the process, its MCP handshake.

use super::rpc::{Notification, RpcPeer};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::{mpsc, oneshot};

/// The protocol version offered to the child when the client's is unknown.
pub const FALLBACK_PROTOCOL_VERSION: &str = "2025-06-18";

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ToolKind {
    /// chrome-devtools-mcp 1.11.0 (`--browserUrl`).
    ChromeDevtools,
    /// @playwright/mcp 0.0.83 (`--cdp-endpoint`).
    Playwright,
}

impl ToolKind {
    pub fn package(self) -> &'static str {
        match self {
            ToolKind::ChromeDevtools => "chrome-devtools-mcp",
            ToolKind::Playwright => "@playwright/mcp",
        }
    }

    /// The entry script inside the installed `node_modules` (the versions are pinned, so
    /// are these paths).
    fn script(self, modules: &Path) -> PathBuf {
        match self {
            ToolKind::ChromeDevtools => {
                modules.join("chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js")
            }
            ToolKind::Playwright => modules.join("@playwright/mcp/cli.js"),
        }
    }

    /// Arguments after the script: keep it offline and quiet, and (chrome-devtools-mcp) read
    /// its endpoint from `config`. The endpoint holds a token, so it is never an argument: any
    /// local user can read a process's command line, not its environment or an owner-only file.
    fn args(self, config: Option<&Path>) -> Vec<std::ffi::OsString> {
        match (self, config) {
            // No usage statistics, no CrUX lookups of the pages it traces.
            (ToolKind::ChromeDevtools, Some(config)) => vec![
                "--config".into(),
                config.into(),
                "--usageStatistics=false".into(),
                "--no-performance-crux".into(),
            ],
            _ => Vec::new(),
        }
    }

    /// Environment that keeps it from phoning home or reading config files of its own, and
    /// (Playwright's) points it at `endpoint` (an HTTP endpoint whose `/json/version` names the
    /// browser WebSocket): with a CDP endpoint it connects instead of launching a browser.
    fn env(self, endpoint: &str) -> Vec<(&'static str, String)> {
        match self {
            ToolKind::ChromeDevtools => vec![
                ("CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS", "1".into()),
                ("CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS", "1".into()),
                ("CHROME_DEVTOOLS_MCP_NO_CONFIG_DISCOVERY", "1".into()),
            ],
            ToolKind::Playwright => vec![("PLAYWRIGHT_MCP_CDP_ENDPOINT", endpoint.to_owned())],
        }
    }

    /// chrome-devtools-mcp's configuration file (its `--config`): the endpoint, owner-only, in
    /// the owner-only `dir`, removed when the [`ConfigFile`] is dropped.
    fn config_file(self, endpoint: &str, dir: &Path) -> Result<Option<ConfigFile>, String> {
        if self != ToolKind::ChromeDevtools {
            return Ok(None);
        }
        crate::token::create_private_dir(dir)?;
        let path = dir.join(format!("tabtunnel-child-{}.json", &crate::token::generate()[..16]));
        let text = json!({ "browserUrl": endpoint }).to_string();
        crate::token::write_owner_only(&path, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(Some(ConfigFile(path)))
    }
}

/// Where Playwright puts files it names itself (`--output-dir`). Not `TMPDIR`: Playwright
/// keeps a Unix socket there, and a path this deep is too long for one.
fn work_env(dir: &Path) -> [(&'static str, &Path); 1] {
    [("PLAYWRIGHT_MCP_OUTPUT_DIR", dir)]
}

/// A file naming a token endpoint: removed when dropped, which happens however its child ends,
/// and when the process ends cleanly (the runtime drops the task that holds it).
struct ConfigFile(PathBuf);

impl Drop for ConfigFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A started child that completed the MCP handshake.
pub struct Child {
    pub peer: Arc<RpcPeer>,
    /// The child's `initialize` result (server info, capabilities, instructions).
    pub initialize: Value,
    /// Set when a request could not even be written: the child is gone even if its output
    /// has not ended yet.
    dead: AtomicBool,
    /// Dropping it kills the process (if any: test children run in-process).
    _kill: Option<oneshot::Sender<()>>,
}

impl Child {
    /// Completes the MCP handshake on `peer` (offering `protocol_version`).
    pub async fn handshake(
        peer: Arc<RpcPeer>,
        protocol_version: &str,
        kill: Option<oneshot::Sender<()>>,
    ) -> Result<Child, String> {
        let initialize = peer
            .request(
                "initialize",
                json!({
                    "protocolVersion": protocol_version,
                    "capabilities": {},
                    "clientInfo": {"name": "tabtunnel", "version": env!("CARGO_PKG_VERSION")},
                }),
            )
            .await
            .map_err(|e| format!("the browser tool server did not initialize: {e}"))?;
        peer.notify("notifications/initialized", json!({}))
            .await
            .map_err(|e| format!("the browser tool server went away after initialize: {e}"))?;
        Ok(Child { peer, initialize, dead: AtomicBool::new(false), _kill: kill })
    }

    pub fn is_alive(&self) -> bool {
        !self.dead.load(Ordering::Relaxed) && !self.peer.is_closed()
    }

    pub fn mark_dead(&self) {
        self.dead.store(true, Ordering::Relaxed);
    }

    /// `name version` from the child's server info, for status and logs.
    pub fn describe(&self) -> String {
        let info = &self.initialize["serverInfo"];
        format!("{} {}", info["name"].as_str().unwrap_or("?"), info["version"].as_str().unwrap_or("?"))
    }
}

/// How to run a child: node, the installed modules, the endpoint, and an owner-only directory
/// for the file that names it.
pub struct Command {
    pub kind: ToolKind,
    pub node: PathBuf,
    pub modules: PathBuf,
    pub endpoint: String,
    pub private_dir: PathBuf,
    /// Its working directory (`super::work_dir`): never the MCP client's, often `$HOME`.
    pub work_dir: PathBuf,
}

/// Spawns the child process (stdin/stdout are the MCP transport, its stderr goes to ours line
/// by line) and completes the handshake.
pub async fn spawn(
    command: &Command,
    protocol_version: &str,
) -> Result<(Child, mpsc::Receiver<Notification>), String> {
    let script = command.kind.script(&command.modules);
    if !script.is_file() {
        return Err(format!(
            "{} is not installed ({} is missing): run `tabtunnel mcp --install`",
            command.kind.package(),
            script.display()
        ));
    }
    let config = command.kind.config_file(&command.endpoint, &command.private_dir)?;
    let spawned = tokio::process::Command::new(&command.node)
        .arg(&script)
        .args(command.kind.args(config.as_ref().map(|c| c.0.as_path())))
        .envs(command.kind.env(&command.endpoint))
        .envs(work_env(&command.work_dir))
        .current_dir(&command.work_dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let mut process = match spawned {
        Ok(process) => process,
        Err(e) => {
            return Err(format!(
                "cannot start {} with {}: {e}",
                command.kind.package(),
                command.node.display()
            ));
        }
    };
    let pid = process.id().unwrap_or(0);
    let stdin = process.stdin.take().expect("piped");
    let stdout = process.stdout.take().expect("piped");
    let stderr = process.stderr.take().expect("piped");
    let label = command.kind.package();
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::info!("[{label} {pid}] {line}");
        }
    });
    let (kill, killed) = oneshot::channel::<()>();
    tokio::spawn(async move {
        // Held as long as the child runs.
        let _config = config;
        tokio::select! {
            status = process.wait() => match status {
                Ok(status) => tracing::warn!("{label} (pid {pid}) exited: {status}"),
                Err(e) => tracing::warn!("{label} (pid {pid}): {e}"),
            },
            _ = killed => {
                let _ = process.start_kill();
                let _ = process.wait().await;
            }
        }
    });
    tracing::info!("started {label} (pid {pid}) on {}", super::endpoint::redact(&command.endpoint));
    let (peer, notifications) = RpcPeer::start(stdout, stdin);
    let child = Child::handshake(peer, protocol_version, Some(kill)).await?;
    Ok((child, notifications))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENDPOINT: &str = "http://127.0.0.1:9/tta_0123/agent/a";

    #[test]
    fn the_endpoint_and_its_token_are_never_on_the_command_line() {
        let dir = tempfile::tempdir().unwrap();
        for kind in [ToolKind::ChromeDevtools, ToolKind::Playwright] {
            let config = kind.config_file(ENDPOINT, dir.path()).unwrap();
            let path = config.as_ref().map(|c| c.0.clone());
            let args: Vec<String> =
                kind.args(path.as_deref()).iter().map(|a| a.to_string_lossy().into_owned()).collect();
            assert!(!args.iter().any(|a| a.contains("tta_")), "{kind:?}: {args:?}");
            match (kind, path) {
                (ToolKind::ChromeDevtools, Some(config)) => {
                    let written: Value = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
                    assert_eq!(written["browserUrl"], ENDPOINT);
                    assert_eq!(args[..2], ["--config".to_owned(), config.display().to_string()]);
                    #[cfg(unix)]
                    {
                        use std::os::unix::fs::PermissionsExt;
                        assert_eq!(std::fs::metadata(&config).unwrap().permissions().mode() & 0o777, 0o600);
                    }
                }
                (ToolKind::Playwright, None) => {
                    assert!(kind
                        .env(ENDPOINT)
                        .contains(&("PLAYWRIGHT_MCP_CDP_ENDPOINT", ENDPOINT.to_owned())));
                }
                other => panic!("{other:?}"),
            }
        }
    }

    /// `tabtunnel mcp` ends (its runtime goes) while a child is starting: the file naming the
    /// endpoint goes with it, and it was only ever in the owner-only directory.
    #[cfg(unix)]
    #[test]
    fn no_file_names_the_endpoint_after_the_process_ends() {
        let dir = tempfile::tempdir().unwrap();
        let modules = dir.path().join("modules");
        let script = ToolKind::ChromeDevtools.script(&modules);
        std::fs::create_dir_all(script.parent().unwrap()).unwrap();
        // A child that never answers the handshake.
        std::fs::write(&script, "sleep 30\n").unwrap();
        let private_dir = dir.path().join("run");
        let command = Command {
            kind: ToolKind::ChromeDevtools,
            node: "/bin/sh".into(),
            modules,
            endpoint: ENDPOINT.into(),
            private_dir: private_dir.clone(),
            work_dir: dir.path().to_path_buf(),
        };
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let starting = spawn(&command, FALLBACK_PROTOCOL_VERSION);
            assert!(tokio::time::timeout(std::time::Duration::from_millis(300), starting).await.is_err());
            assert_eq!(std::fs::read_dir(&private_dir).unwrap().count(), 1, "the child's config is there");
        });
        assert!(!crate::platform::readable_by_others(&private_dir).unwrap());
        drop(runtime);
        assert_eq!(std::fs::read_dir(&private_dir).unwrap().count(), 0, "and gone with the process");
    }
}
