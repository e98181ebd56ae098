//! `tabtunnel doctor`: each link of the chain from an agent to a tab, checked in order, and for
//! each broken one the command or click that fixes it.

use super::places::{Browser, Os, Places, BROWSERS};
use super::Record;
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Serialize, Debug)]
pub struct Check {
    /// Which link: `on-path`, `extension-files`, `native-host`, `daemon`, `extension-connected`,
    /// `versions`, `node`, `tool-servers`, `policy`.
    pub link: &'static str,
    pub ok: bool,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

fn ok(link: &'static str, detail: impl Into<String>) -> Check {
    Check { link, ok: true, detail: detail.into(), fix: None }
}

fn broken(link: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Check {
    Check { link, ok: false, detail: detail.into(), fix: Some(fix.into()) }
}

const VERSION: &str = env!("CARGO_PKG_VERSION");

pub async fn run(json: bool) -> Result<(), String> {
    let places = Places::of_this_user()?;
    let config_dir = crate::paths::default_config_dir();
    let checks = checks(&places, &config_dir).await;
    let failed = checks.iter().filter(|c| !c.ok).count();
    if json {
        println!("{}", serde_json::to_string_pretty(&checks).expect("serializable"));
    } else {
        for check in &checks {
            println!("{} {}: {}", if check.ok { "ok  " } else { "FAIL" }, check.link, check.detail);
            if let Some(fix) = &check.fix {
                println!("       fix: {fix}");
            }
        }
    }
    match failed {
        0 => Ok(()),
        n => Err(format!("{n} link(s) broken")),
    }
}

pub async fn checks(places: &Places, config_dir: &Path) -> Vec<Check> {
    let record = Record::load(places);
    let mut checks = vec![on_path(places, &record)];
    checks.push(extension_files(places, &record));
    checks.extend(native_hosts(places, &record));
    checks.extend(daemon(config_dir, &record, places).await);
    checks.push(node().await);
    checks.push(tool_servers());
    checks.push(policy(config_dir));
    checks.push(audit_trail(config_dir));
    checks
}

fn on_path(places: &Places, record: &Record) -> Check {
    if let Some(found) = crate::launch::find_on_path(&[places.binary_name()]) {
        return ok("on-path", format!("{} is on PATH", found.display()));
    }
    match record.binary.as_ref().filter(|b| b.is_file()) {
        Some(binary) => {
            let dir = binary.parent().unwrap_or(Path::new("."));
            broken(
                "on-path",
                format!("tabtunnel is installed in {} but that directory is not on PATH", dir.display()),
                format!("add it to PATH in your shell's profile: export PATH=\"{}:$PATH\"", dir.display()),
            )
        }
        None => broken(
            "on-path",
            "tabtunnel is not on PATH",
            "run `tabtunnel install` (from a build: `./dev install`)",
        ),
    }
}

fn extension_files(places: &Places, record: &Record) -> Check {
    let dir = record.extension_dir.clone().unwrap_or_else(|| places.extension_dir());
    let manifest: Option<serde_json::Value> =
        std::fs::read_to_string(dir.join("manifest.json")).ok().and_then(|t| serde_json::from_str(&t).ok());
    match manifest.as_ref().and_then(|m| m["version"].as_str()) {
        None => broken(
            "extension-files",
            format!("no extension in {}", dir.display()),
            "run `tabtunnel install`, then in chrome://extensions: Developer mode, Load unpacked, and pick that directory",
        ),
        Some(version) if version != VERSION => broken(
            "extension-files",
            format!("version mismatch: the extension in {} is {version}, this tabtunnel is {VERSION}", dir.display()),
            "run `tabtunnel install` with this tabtunnel, then click the reload arrow on tabtunnel's card in chrome://extensions",
        ),
        Some(version) => ok("extension-files", format!("extension {version} in {}", dir.display())),
    }
}

/// One check per browser found (and per extra directory `install --browser-dir` registered).
fn native_hosts(places: &Places, record: &Record) -> Vec<Check> {
    let present: Vec<&Browser> = BROWSERS.iter().filter(|b| b.is_present(places)).collect();
    if present.is_empty() {
        return vec![broken(
            "native-host",
            "no Chrome, Chromium, Edge, Brave or Vivaldi found for this user",
            "install one (or start it once), then run `tabtunnel install` again",
        )];
    }
    let mut checks: Vec<Check> = present
        .iter()
        .map(|browser| {
            let manifest = match places.os {
                Os::Windows => super::registry_value(&browser.registry_key()).map(PathBuf::from),
                _ => browser.native_hosts_dir(places).map(|d| super::places::host_manifest_in(&d)),
            };
            host_check(browser.name, manifest.as_deref())
        })
        .collect();
    let defaults: Vec<PathBuf> = present
        .iter()
        .filter_map(|b| b.native_hosts_dir(places))
        .map(|d| super::places::host_manifest_in(&d))
        .collect();
    for extra in record.host_manifests.iter().filter(|m| places.os != Os::Windows && !defaults.contains(m)) {
        checks.push(host_check(&extra.display().to_string(), Some(extra)));
    }
    checks
}

fn host_check(browser: &str, manifest: Option<&Path>) -> Check {
    let fix = "run `tabtunnel install` (it registers the host for every browser it finds)";
    let Some(path) = manifest else {
        return broken("native-host", format!("{browser}: the native host is not registered"), fix);
    };
    let parsed: Option<serde_json::Value> =
        std::fs::read_to_string(path).ok().and_then(|t| serde_json::from_str(&t).ok());
    let Some(parsed) = parsed else {
        return broken(
            "native-host",
            format!("{browser}: the native host is not registered ({} missing)", path.display()),
            fix,
        );
    };
    let origin = crate::native_host::allowed_origin(crate::EXTENSION_ID);
    let binary = parsed["path"].as_str().map(PathBuf::from);
    if parsed["name"] != crate::native_host::HOST_NAME
        || !parsed["allowed_origins"].as_array().is_some_and(|a| a.iter().any(|o| o == &origin))
    {
        broken("native-host", format!("{browser}: {} is not our host manifest", path.display()), fix)
    } else if !binary.as_deref().is_some_and(Path::is_file) {
        broken("native-host", format!("{browser}: the host's program {} is gone", parsed["path"]), fix)
    } else {
        ok("native-host", format!("{browser}: registered ({})", path.display()))
    }
}

async fn daemon(config_dir: &Path, record: &Record, places: &Places) -> Vec<Check> {
    let start_fix = "nothing to keep open: it starts when the extension loads (open the browser, or reload \
                     tabtunnel in chrome://extensions) or when an agent runs `tabtunnel mcp`; to start it now: `tabtunnel serve`";
    let not_running = |why: String| {
        vec![
            broken("daemon", why, start_fix),
            broken("extension-connected", "unknown: the daemon is not running", start_fix),
        ]
    };
    let Some(file) = crate::on_demand::read(config_dir) else {
        return not_running("the daemon is not running".into());
    };
    // Asked only of a listener that proves it is this user's daemon: the port may be anyone's.
    let status = match crate::on_demand::status(config_dir, &file).await {
        Ok(status) => status,
        Err(e @ crate::mcp::daemon_api::ApiError::NotOurs(_)) => {
            return not_running(format!("the daemon is not running: {e}"))
        }
        Err(_) => return not_running("the daemon is not running".into()),
    };
    let mut checks = vec![ok(
        "daemon",
        format!(
            "running (pid {}, port {}, tabtunnel {}{})",
            file.pid,
            file.port,
            file.version,
            if file.on_demand { ", started on demand" } else { "" }
        ),
    )];
    let extension_dir = record.extension_dir.clone().unwrap_or_else(|| places.extension_dir());
    checks.push(if status["extensionConnected"] == true {
        ok(
            "extension-connected",
            format!("connected from {}", status["browser"].as_str().unwrap_or("a browser")),
        )
    } else {
        broken(
            "extension-connected",
            "no browser's extension is connected to the daemon",
            format!(
                "open the browser; if tabtunnel is not in chrome://extensions, Load unpacked {} there (Developer mode); its side panel says why it is not connected",
                extension_dir.display()
            ),
        )
    });
    let extension_version = status["extensionVersion"].as_str();
    checks.push(if file.version != VERSION {
        broken(
            "versions",
            format!(
                "version mismatch: the running daemon is tabtunnel {}, this one is {VERSION}",
                file.version
            ),
            "run `tabtunnel stop`; the next start (by the browser or an agent) is this version",
        )
    } else if let Some(extension) = extension_version.filter(|v| *v != file.version) {
        broken(
            "versions",
            format!(
                "version mismatch: the connected extension is {extension}, the daemon is {}",
                file.version
            ),
            "run `tabtunnel install`, then click the reload arrow on tabtunnel's card in chrome://extensions",
        )
    } else {
        ok(
            "versions",
            format!(
                "daemon {}{}",
                file.version,
                extension_version.map(|v| format!(", extension {v}")).unwrap_or_default()
            ),
        )
    });
    checks
}

async fn node() -> Check {
    let fix = "install Node.js 20.19 or later (the browser tool servers run on it)";
    match crate::launch::find_on_path(&["node"]) {
        None => broken("node", "node is not on PATH", fix),
        Some(node) => match crate::mcp::install::check_node_version(&node).await {
            Ok(()) => ok("node", format!("{}", node.display())),
            Err(e) => broken("node", e, fix),
        },
    }
}

fn tool_servers() -> Check {
    let data = crate::paths::data_dir(None);
    match crate::mcp::install::find(&data) {
        Some(installed) => ok("tool-servers", format!("installed in {}", installed.modules.display())),
        None => broken(
            "tool-servers",
            "the browser tool servers are not installed (the first `tabtunnel mcp` would install them, slowly)",
            "run `tabtunnel mcp --install`",
        ),
    }
}

fn audit_trail(config_dir: &Path) -> Check {
    let default = config_dir == crate::paths::default_config_dir();
    let data_dir = crate::paths::data_dir((!default).then_some(config_dir));
    if !crate::audit::current_file(&data_dir).exists() {
        return ok("audit-trail", "no audit trail yet");
    }
    match crate::audit::verify(&data_dir, config_dir) {
        Ok(report) if report.problem.is_none() => ok("audit-trail", report.to_string()),
        Ok(report) => broken(
            "audit-trail",
            report.to_string(),
            "something rewrote the trail: look at `tabtunnel audit` around that record; `tabtunnel audit verify` checks it again",
        ),
        Err(e) => broken("audit-trail", e, "the trail's key is gone: the trail cannot be checked"),
    }
}

fn policy(config_dir: &Path) -> Check {
    let path = config_dir.join("policy.toml");
    if !path.is_file() {
        return ok(
            "policy",
            format!("no policy file ({}): agents are limited to their own tabs only", path.display()),
        );
    }
    match crate::policy_file::load(&path) {
        Ok(_) => ok("policy", format!("{} is valid", path.display())),
        Err(e) => broken(
            "policy",
            format!("{}: {e}", path.display()),
            "fix the file (see docs/policy.md); the daemon keeps the last good rules meanwhile",
        ),
    }
}
