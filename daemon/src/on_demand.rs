//! A daemon nobody has to keep open. Every daemon holds `<config dir>/daemon.lock` while it
//! runs (so two never serve one config dir) and writes `<config dir>/daemon.json` (owner-only:
//! it names the token and the extension's pairing URL) once it listens. [`ensure_running`]
//! (the native messaging host, `tabtunnel mcp`) reads that file, and when nothing answers
//! starts `tabtunnel serve --on-demand` fully detached, under `<config dir>/start.lock` so that
//! two starters at once start one daemon. A daemon started on demand exits once it has had no
//! extension and no client for its idle delay ([`exit_when_idle`]).

use crate::mcp::daemon_api::{self, ApiError};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `tabtunnel serve --on-demand` exits after this long without an extension or a client.
pub const DEFAULT_IDLE_EXIT: Duration = Duration::from_secs(300);
/// How long a starter waits for the daemon it started to answer.
const START_WAIT: Duration = Duration::from_secs(20);
const STATE_FILE: &str = "daemon.json";
const LOCK_FILE: &str = "daemon.lock";
const START_LOCK_FILE: &str = "start.lock";
pub const LOG_FILE: &str = "daemon.log";

/// What `<config dir>/daemon.json` holds: where this user's daemon listens.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct DaemonFile {
    pub port: u16,
    pub pid: u32,
    pub version: String,
    /// `http://127.0.0.1:PORT/<token>`.
    pub client_endpoint: String,
    /// What the extension dials (the pairing URL).
    pub extension_url: String,
    /// Started by [`ensure_running`] (and so exits when idle).
    #[serde(default)]
    pub on_demand: bool,
}

/// The lock a running daemon holds; released when the process ends, however it ends.
pub struct DaemonLock {
    _file: File,
}

/// Takes `<config dir>/daemon.lock`, or says which daemon holds it.
pub fn lock(config_dir: &Path) -> Result<DaemonLock, String> {
    crate::token::create_private_dir(config_dir)?;
    let path = config_dir.join(LOCK_FILE);
    let file = open_lock_file(&path)?;
    match file.try_lock() {
        Ok(()) => Ok(DaemonLock { _file: file }),
        Err(std::fs::TryLockError::WouldBlock) => {
            let who =
                read(config_dir).map(|d| format!(" (pid {}, port {})", d.pid, d.port)).unwrap_or_default();
            Err(format!(
                "another tabtunnel daemon is running for {}{who}; use it, stop it (`tabtunnel stop`), \
                 or give this one another --config-dir",
                config_dir.display()
            ))
        }
        Err(std::fs::TryLockError::Error(e)) => Err(format!("cannot lock {}: {e}", path.display())),
    }
}

fn open_lock_file(path: &Path) -> Result<File, String> {
    crate::platform::open_owner_only(OpenOptions::new().create(true).truncate(false).write(true), path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))
}

pub fn state_path(config_dir: &Path) -> PathBuf {
    config_dir.join(STATE_FILE)
}

/// Writes `daemon.json` (owner-only, replaced atomically).
pub fn write(config_dir: &Path, file: &DaemonFile) -> Result<(), String> {
    let path = state_path(config_dir);
    let text = serde_json::to_string_pretty(file).expect("serializable");
    crate::token::write_owner_only(&path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The last daemon's `daemon.json`, whether or not it still runs.
pub fn read(config_dir: &Path) -> Option<DaemonFile> {
    serde_json::from_str(&std::fs::read_to_string(state_path(config_dir)).ok()?).ok()
}

/// Removes `daemon.json` if it still names this process listening on `port` (a daemon that
/// exits; a newer daemon's file stays).
pub fn remove_if_ours(config_dir: &Path, port: u16) {
    if read(config_dir).is_some_and(|d| d.pid == std::process::id() && d.port == port) {
        let _ = std::fs::remove_file(state_path(config_dir));
    }
}

/// Bound on the status and hello requests.
const QUICK: Duration = Duration::from_secs(3);

fn authority(file: &DaemonFile) -> String {
    format!("127.0.0.1:{}", file.port)
}

/// The status of the daemon `file` describes (`GET <client endpoint>/tabtunnel/status`), asked
/// only once it has proved it is this user's (`crate::proof`): a stale file's port may be
/// anyone's now.
pub async fn status(config_dir: &Path, file: &DaemonFile) -> Result<serde_json::Value, ApiError> {
    let key = crate::proof::Key::load_or_create(config_dir).map_err(ApiError::Unreachable)?;
    let url = format!("{}/tabtunnel/status", file.client_endpoint);
    let body = daemon_api::send(&authority(file), "GET", &url, None, QUICK, Some(&key)).await?;
    serde_json::from_slice(&body).map_err(|e| ApiError::BadReply(e.to_string()))
}

/// The running daemon of `config_dir`, if one answers and proves it is this user's.
pub async fn running(config_dir: &Path) -> Option<DaemonFile> {
    let file = read(config_dir)?;
    status(config_dir, &file).await.ok().map(|_| file)
}

/// Stops the daemon of `config_dir` (`tabtunnel stop`, `uninstall`) and waits for it to be gone.
/// Only a process that proved it is this user's daemon is signalled, by the pid it proved:
/// never a pid merely read from `daemon.json`.
pub async fn stop(config_dir: &Path) -> Result<(), String> {
    let nobody = || println!("no tabtunnel daemon is running for {}", config_dir.display());
    let Some(file) = read(config_dir) else {
        nobody();
        return Ok(());
    };
    let key = crate::proof::Key::load_or_create(config_dir)?;
    let pid = match daemon_api::proven_pid(&authority(&file), &key, QUICK).await {
        Ok(pid) => pid,
        Err(e) => {
            if matches!(e, ApiError::NotOurs(_)) {
                println!("{e}; nothing was signalled");
            }
            match lock(config_dir) {
                // No daemon holds the lock: the file is a stale one's.
                Ok(_lock) => {
                    let _ = std::fs::remove_file(state_path(config_dir));
                    nobody();
                    return Ok(());
                }
                // One does (this user's: the lock is in the owner-only dir), but it does not
                // prove it (starting, or a version without the proof): its pid is not known.
                Err(_) => {
                    return Err(format!(
                        "a tabtunnel daemon holds {} but did not prove which process it is ({e}); \
                         stop it yourself (daemon.json names pid {}, which may be stale)",
                        config_dir.join(LOCK_FILE).display(),
                        file.pid
                    ))
                }
            }
        }
    };
    if !crate::platform::stop_process(pid) {
        return Err(format!("could not stop the daemon (pid {pid})"));
    }
    for _ in 0..100 {
        if daemon_api::proven_pid(&authority(&file), &key, QUICK).await.is_err() {
            println!("stopped the tabtunnel daemon (pid {pid}, port {})", file.port);
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(format!("the daemon (pid {pid}) is still answering"))
}

/// [`stop`] from code that is not async (`uninstall`, on a blocking thread of the runtime).
pub fn stop_blocking(config_dir: &Path) -> Result<(), String> {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle.block_on(stop(config_dir)),
        Err(_) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?
            .block_on(stop(config_dir)),
    }
}

/// How [`ensure_running`] starts a daemon.
pub struct StartOptions {
    /// The binary to run (this one, normally).
    pub exe: PathBuf,
    pub config_dir: PathBuf,
}

impl StartOptions {
    pub fn this_binary(config_dir: PathBuf) -> Result<StartOptions, String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find this program's path: {e}"))?;
        Ok(StartOptions { exe, config_dir })
    }

    /// `serve --on-demand` with the port to try first: `$TABTUNNEL_PORT`, else the last
    /// daemon's (so clients holding its endpoint find the next one), else the default; the
    /// daemon takes a free one when that is busy. The idle delay from `$TABTUNNEL_IDLE_EXIT`
    /// (seconds), and `<config dir>/policy.toml` when there is one.
    pub fn serve_args(&self) -> Vec<String> {
        let port = std::env::var("TABTUNNEL_PORT")
            .ok()
            .and_then(|p| p.parse::<u16>().ok())
            .or_else(|| read(&self.config_dir).map(|d| d.port))
            .unwrap_or(crate::address::DEFAULT_PORT);
        let mut args = vec![
            "serve".to_owned(),
            "--on-demand".to_owned(),
            "--port".to_owned(),
            port.to_string(),
            "--config-dir".to_owned(),
            self.config_dir.display().to_string(),
        ];
        if let Some(secs) = std::env::var("TABTUNNEL_IDLE_EXIT").ok().filter(|s| s.parse::<f64>().is_ok()) {
            args.extend(["--exit-when-idle".to_owned(), secs]);
        }
        let policy = self.config_dir.join("policy.toml");
        if policy.is_file() {
            args.extend(["--policy".to_owned(), policy.display().to_string()]);
        }
        args
    }
}

/// This user's daemon: the one running, else one started now (detached, so it outlives us).
pub async fn ensure_running(options: &StartOptions) -> Result<DaemonFile, String> {
    if let Some(file) = read(&options.config_dir) {
        match status(&options.config_dir, &file).await {
            Ok(_) => return Ok(file),
            // Its port is someone else's now: ours starts on another (serve_args falls back).
            Err(e @ ApiError::NotOurs(_)) => tracing::warn!("{e}; starting this user's daemon"),
            Err(_) => {}
        }
    }
    crate::token::create_private_dir(&options.config_dir)?;
    // One starter at a time; the others find its daemon when they get the lock.
    let start_lock = open_lock_file(&options.config_dir.join(START_LOCK_FILE))?;
    let start_lock = tokio::task::spawn_blocking(move || start_lock.lock().map(|()| start_lock))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("cannot take the start lock: {e}"))?;
    let outcome = start_locked(options).await;
    drop(start_lock);
    outcome
}

async fn start_locked(options: &StartOptions) -> Result<DaemonFile, String> {
    if let Some(file) = running(&options.config_dir).await {
        return Ok(file);
    }
    // A daemon holding the lock but not answering yet is starting (or shutting down): wait for
    // it rather than start a second one.
    let busy = lock(&options.config_dir).is_err();
    let started_pid = if busy { None } else { Some(spawn_detached(options)?) };
    let deadline = tokio::time::Instant::now() + START_WAIT;
    loop {
        if let Some(file) = running(&options.config_dir).await {
            return Ok(file);
        }
        if let Some(pid) = started_pid {
            if !crate::platform::process_alive(pid) {
                return Err(format!(
                    "the tabtunnel daemon it started exited at once; see {}",
                    options.config_dir.join(LOG_FILE).display()
                ));
            }
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(format!(
                "the tabtunnel daemon did not answer within {}s; see {}",
                START_WAIT.as_secs(),
                options.config_dir.join(LOG_FILE).display()
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Starts `exe serve --on-demand ...` in its own session, stdio away from ours (the native
/// host's stdout is Chrome's channel; `tabtunnel mcp`'s is the MCP client's), its log in
/// `<config dir>/daemon.log`. The child is not waited for: it is not ours to reap.
fn spawn_detached(options: &StartOptions) -> Result<u32, String> {
    let log_path = options.config_dir.join(LOG_FILE);
    // Truncated at every start: never through a link, whose target would be truncated instead.
    let log = crate::platform::open_owner_only_no_follow(
        OpenOptions::new().create(true).write(true).truncate(true),
        &log_path,
    )
    .map_err(|e| format!("cannot open {} (a link is refused): {e}", log_path.display()))?;
    let log_err = log.try_clone().map_err(|e| e.to_string())?;
    let mut command = std::process::Command::new(&options.exe);
    command.args(options.serve_args()).stdin(std::process::Stdio::null()).stdout(log).stderr(log_err);
    let child = crate::platform::spawn_detached(&mut command)
        .map_err(|e| format!("cannot start {}: {e}", options.exe.display()))?;
    tracing::info!(pid = child.id(), "started a tabtunnel daemon on demand");
    Ok(child.id())
}

/// Resolves once the daemon has had no extension and no client WebSocket for `idle` in a row
/// (checked every second; one-shot HTTP requests do not count as a client).
pub async fn exit_when_idle(hub: crate::hub::HubHandle, idle: Duration) {
    let mut idle_since = tokio::time::Instant::now();
    loop {
        tokio::time::sleep(Duration::from_secs(1).min(idle)).await;
        let Some(snapshot) = hub.snapshot(tabtunnel_core::AgentId::default_agent()).await else { return };
        if snapshot.extension_connected || snapshot.clients > 0 {
            idle_since = tokio::time::Instant::now();
        } else if idle_since.elapsed() >= idle {
            tracing::info!("no extension and no client for {}s: exiting", idle.as_secs_f64());
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_lock_per_config_dir() {
        let dir = tempfile::tempdir().unwrap();
        let held = lock(dir.path()).unwrap();
        write(
            dir.path(),
            &DaemonFile {
                port: 9,
                pid: 42,
                version: "0".into(),
                client_endpoint: "http://127.0.0.1:9/t".into(),
                extension_url: "ws://127.0.0.1:9/t/extension".into(),
                on_demand: true,
            },
        )
        .unwrap();
        let refused = lock(dir.path()).err().unwrap();
        assert!(refused.contains("pid 42, port 9"), "{refused}");
        assert!(!crate::platform::readable_by_others(&state_path(dir.path())).unwrap());
        drop(held);
        assert!(lock(dir.path()).is_ok());
    }

    #[test]
    fn serve_args_reuse_the_last_port_and_the_policy_file() {
        let dir = tempfile::tempdir().unwrap();
        let options = StartOptions { exe: "tabtunnel".into(), config_dir: dir.path().to_owned() };
        let args = options.serve_args();
        let port_at = args.iter().position(|a| a == "--port").unwrap() + 1;
        if std::env::var_os("TABTUNNEL_PORT").is_none() {
            assert_eq!(args[port_at], crate::address::DEFAULT_PORT.to_string());
        }
        std::fs::write(dir.path().join("policy.toml"), "").unwrap();
        let file = DaemonFile {
            port: 4321,
            pid: 1,
            version: "0".into(),
            client_endpoint: String::new(),
            extension_url: String::new(),
            on_demand: true,
        };
        write(dir.path(), &file).unwrap();
        let args = options.serve_args();
        assert!(args.contains(&"--on-demand".to_owned()));
        if std::env::var_os("TABTUNNEL_PORT").is_none() {
            assert_eq!(args[port_at], "4321");
        }
        assert!(args.windows(2).any(|w| w[0] == "--policy" && w[1].ends_with("policy.toml")));
    }

    #[tokio::test]
    async fn nothing_answers_for_a_stale_file() {
        let dir = tempfile::tempdir().unwrap();
        assert!(running(dir.path()).await.is_none());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let file = DaemonFile {
            port,
            pid: 1,
            version: "0".into(),
            client_endpoint: format!("http://127.0.0.1:{port}/t"),
            extension_url: String::new(),
            on_demand: true,
        };
        write(dir.path(), &file).unwrap();
        assert!(running(dir.path()).await.is_none());
    }

    /// The port of a stale daemon.json is anyone's: a listener there that cannot prove it holds
    /// this user's key is not running, hears no token, and `stop` leaves alone the pid named.
    #[tokio::test]
    async fn a_listener_on_a_stale_port_is_not_our_daemon() {
        let dir = tempfile::tempdir().unwrap();
        let token = crate::token::load_or_create(dir.path()).unwrap();
        let impostor = crate::proof::testing::Impostor::start().await;
        let port = impostor.port;
        let file = DaemonFile {
            port,
            pid: std::process::id(),
            version: "0".into(),
            client_endpoint: format!("http://127.0.0.1:{port}/{token}"),
            extension_url: format!("ws://127.0.0.1:{port}/secret/extension"),
            on_demand: true,
        };
        write(dir.path(), &file).unwrap();
        assert!(matches!(status(dir.path(), &file).await, Err(ApiError::NotOurs(_))));
        assert!(running(dir.path()).await.is_none());
        // The pid it names is ours: were it signalled, this test would end here.
        stop(dir.path()).await.unwrap();
        assert!(read(dir.path()).is_none(), "no daemon holds the lock: the stale file is gone");
        assert!(!impostor.heard().contains(&token), "{}", impostor.heard());
    }

    #[test]
    fn a_linked_log_is_refused_and_its_target_kept() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "precious").unwrap();
        let config_dir = dir.path().join("config");
        crate::token::create_private_dir(&config_dir).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&target, config_dir.join(LOG_FILE)).unwrap();
        #[cfg(windows)]
        std::os::windows::fs::symlink_file(&target, config_dir.join(LOG_FILE)).unwrap();
        let options = StartOptions { exe: "/nonexistent/tabtunnel".into(), config_dir };
        let refused = spawn_detached(&options).unwrap_err();
        assert!(refused.contains(LOG_FILE), "{refused}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
    }
}
