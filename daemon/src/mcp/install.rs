//! Installs the pinned child tool servers: the package.json and package-lock.json embedded in
//! this binary, `npm ci` into `<data dir>/mcp-children/<hash>/`, then `patches/`. Once there,
//! children run from it with no network (no npx at run time). The hash covers the lock and the
//! patches, so a binary with other pins installs beside, never over, another's children.

use super::patches;
use std::path::{Path, PathBuf};

const PACKAGE_JSON: &str = include_str!("../../mcp-children/package.json");
const PACKAGE_LOCK: &str = include_str!("../../mcp-children/package-lock.json");
/// Written last: an install dir without it is not complete.
const MARKER: &str = ".tabtunnel-installed";
/// chrome-devtools-mcp 1.11.0's floor (`^20.19.0 || ^22.12.0 || >=23`).
const MIN_NODE: (u64, u64) = (20, 19);

/// A complete install: where the modules are and which node runs them.
pub struct Installed {
    pub modules: PathBuf,
    pub node: PathBuf,
}

/// `<data_dir>/mcp-children/<first 16 hex of the hash>`.
pub fn install_dir(data_dir: &Path) -> PathBuf {
    let fingerprint = format!("{PACKAGE_JSON}\n{PACKAGE_LOCK}\n{}", patches::fingerprint());
    data_dir.join("mcp-children").join(&patches::sha256_hex(fingerprint.as_bytes())[..16])
}

/// The install, if complete.
pub fn find(data_dir: &Path) -> Option<Installed> {
    let dir = install_dir(data_dir);
    let marker: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(MARKER)).ok()?).ok()?;
    // The node that installed them, if it is still there (MCP clients started from a desktop
    // often have a thinner PATH than the shell that ran the install); else node on PATH.
    let node = marker["node"]
        .as_str()
        .map(PathBuf::from)
        .filter(|node| node.is_file())
        .or_else(|| crate::launch::find_on_path(&["node"]))?;
    Some(Installed { modules: dir.join("node_modules"), node })
}

/// Installs unless already installed. npm's output goes to stderr (stdout may be the MCP
/// transport). File work runs off the runtime: the daemon serves every client on one thread.
pub async fn ensure_installed(data_dir: &Path) -> Result<Installed, String> {
    if let Some(installed) = blocking(data_dir, |dir| Ok(find(&dir))).await? {
        return Ok(installed);
    }
    let node = crate::launch::find_on_path(&["node"])
        .ok_or("node not found on PATH: the browser tool servers need Node.js 20.19 or later")?;
    check_node_version(&node).await?;
    let npm = crate::launch::find_on_path(&["npm"]).ok_or("npm not found on PATH (it comes with Node.js)")?;
    let dir = install_dir(data_dir);
    let parent = dir.parent().expect("has a parent");
    std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    // Build beside, then rename: a reader never sees half an install, and two installs at once
    // (two MCP clients starting) do not mix.
    let staging = parent.join(format!(".partial-{}-{}", std::process::id(), &crate::token::generate()[..8]));
    let outcome = install_into(&staging, &node, &npm).await;
    let outcome = outcome.and_then(|()| match std::fs::rename(&staging, &dir) {
        Ok(()) => Ok(()),
        // Someone else finished first: theirs is as good as ours.
        Err(_) if dir.join(MARKER).is_file() => Ok(()),
        Err(e) => Err(format!("cannot move the install to {}: {e}", dir.display())),
    });
    let _ = blocking(&staging, |staging| Ok(std::fs::remove_dir_all(staging))).await;
    outcome?;
    tracing::info!("installed the browser tool servers in {}", dir.display());
    blocking(data_dir, |dir| Ok(find(&dir)))
        .await?
        .ok_or_else(|| format!("the install in {} is incomplete", dir.display()))
}

/// `work(path)` on tokio's blocking pool.
async fn blocking<T: Send + 'static>(
    path: &Path,
    work: impl FnOnce(PathBuf) -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || work(path)).await.map_err(|e| e.to_string())?
}

async fn install_into(staging: &Path, node: &Path, npm: &Path) -> Result<(), String> {
    std::fs::create_dir_all(staging).map_err(|e| format!("cannot create {}: {e}", staging.display()))?;
    std::fs::write(staging.join("package.json"), PACKAGE_JSON).map_err(|e| e.to_string())?;
    std::fs::write(staging.join("package-lock.json"), PACKAGE_LOCK).map_err(|e| e.to_string())?;
    tracing::info!("installing chrome-devtools-mcp and @playwright/mcp (npm ci) into {}", staging.display());
    // No install scripts: none of the pinned packages needs one, and none may fetch anything.
    let status = tokio::process::Command::new(npm)
        .args(["ci", "--no-audit", "--no-fund", "--ignore-scripts", "--omit=dev", "--loglevel=error"])
        .current_dir(staging)
        .stdin(std::process::Stdio::null())
        .stdout(std::io::stderr())
        .stderr(std::io::stderr())
        .status()
        .await
        .map_err(|e| format!("cannot run {}: {e}", npm.display()))?;
    if !status.success() {
        return Err(format!("npm ci failed ({status}) in {}", staging.display()));
    }
    blocking(&staging.join("node_modules"), |modules| patches::apply_all(&modules)).await?;
    let marker = serde_json::json!({"node": node, "tabtunnel": env!("CARGO_PKG_VERSION")});
    std::fs::write(staging.join(MARKER), marker.to_string()).map_err(|e| e.to_string())
}

pub(crate) async fn check_node_version(node: &Path) -> Result<(), String> {
    let output = tokio::process::Command::new(node)
        .arg("--version")
        .output()
        .await
        .map_err(|e| format!("cannot run {}: {e}", node.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    match parse_node_version(&text) {
        Some(version) if version >= MIN_NODE => Ok(()),
        _ => Err(format!(
            "{} is Node.js {}: the browser tool servers need {}.{} or later",
            node.display(),
            text.trim(),
            MIN_NODE.0,
            MIN_NODE.1
        )),
    }
}

/// `v20.19.2` → (20, 19).
fn parse_node_version(text: &str) -> Option<(u64, u64)> {
    let mut parts = text.trim().trim_start_matches('v').split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_exact_versions_of_both_children() {
        let manifest: serde_json::Value = serde_json::from_str(PACKAGE_JSON).unwrap();
        assert_eq!(manifest["dependencies"]["chrome-devtools-mcp"], "1.11.0");
        assert_eq!(manifest["dependencies"]["@playwright/mcp"], "0.0.83");
        let lock: serde_json::Value = serde_json::from_str(PACKAGE_LOCK).unwrap();
        assert_eq!(lock["packages"]["node_modules/chrome-devtools-mcp"]["version"], "1.11.0");
        assert_eq!(lock["packages"]["node_modules/@playwright/mcp"]["version"], "0.0.83");
        for (name, package) in lock["packages"].as_object().unwrap() {
            if !name.is_empty() {
                assert!(package["integrity"].is_string(), "{name} has no integrity hash");
            }
        }
    }

    #[test]
    fn the_install_dir_is_named_by_the_pins() {
        let dir = install_dir(Path::new("/data"));
        assert!(dir.starts_with("/data/mcp-children"));
        assert_eq!(dir.file_name().unwrap().len(), 16);
        assert_eq!(install_dir(Path::new("/data")), dir);
    }

    #[test]
    fn an_install_without_its_marker_is_not_found() {
        let data = tempfile::tempdir().unwrap();
        let dir = install_dir(data.path());
        std::fs::create_dir_all(dir.join("node_modules")).unwrap();
        assert!(find(data.path()).is_none());
        let node = data.path().join("node");
        std::fs::write(&node, "").unwrap();
        std::fs::write(dir.join(MARKER), serde_json::json!({"node": node}).to_string()).unwrap();
        let found = find(data.path()).unwrap();
        assert_eq!(found.node, node);
        assert_eq!(found.modules, dir.join("node_modules"));
    }

    #[test]
    fn reads_node_versions() {
        assert_eq!(parse_node_version("v20.20.2\n"), Some((20, 20)));
        assert_eq!(parse_node_version("v22.1.0"), Some((22, 1)));
        assert_eq!(parse_node_version("garbage"), None);
        assert!((20, 18) < MIN_NODE && (20, 19) >= MIN_NODE && (22, 0) > MIN_NODE);
    }
}
