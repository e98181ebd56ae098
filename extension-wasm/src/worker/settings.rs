//! Where the daemon is: `daemonUrl` in `chrome.storage.local`, overridden by a `pairing.json`
//! next to the manifest (written by `tabtunnel launch`) whenever that file changes.

use serde::Deserialize;

use crate::chrome;
use crate::js::{from_js, to_js};

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Stored {
    daemon_url: Option<String>,
    last_pairing: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Pairing {
    daemon_url: String,
    /// `tabtunnel launch` started this browser for automation: share the tabs it opened with.
    #[serde(default)]
    share_startup_tabs: bool,
    /// `tabtunnel launch --open URL...`: the pages to open at start (see [`Startup`]).
    #[serde(default)]
    open_urls: Vec<String>,
}

/// What `pairing.json` asks of this browser's start: pages to open, and whether to share the
/// tabs it starts with. The pages are opened by us rather than by Chromium's command line:
/// Chrome holds the requests of its startup tabs until a declarativeNetRequest extension's
/// rules are loaded, and a debugger attaching meanwhile (ours, or a client's) left such a tab
/// on no page at all (Chromium 156, about half the launches).
#[derive(Default, Clone)]
pub struct Startup {
    pub open_urls: Vec<String>,
    pub share_tabs: bool,
}

/// What to dial now.
pub struct Dial {
    pub url: Result<Option<String>, String>,
    pub startup: Startup,
}

/// The URL to dial now, applying a new `pairing.json` first (once: a user's later choices in
/// the panel are not overridden by the same file again). A stored URL is checked again, since
/// an older version may have saved one we no longer dial.
pub async fn daemon_url() -> Dial {
    let stored: Stored = match chrome::local_get(&["daemonUrl", "lastPairing"]).await {
        Ok(v) => from_js(&v).unwrap_or_default(),
        Err(e) => {
            warn!("storage.local.get failed: {e}");
            Stored::default()
        }
    };
    // Missing is the normal case for an extension the user installed by hand.
    let pairing = match chrome::read_packaged_file("pairing.json").await {
        Ok(text) => match serde_json::from_str::<Pairing>(&text) {
            Ok(pairing) => Some((pairing, text)),
            Err(e) => {
                warn!("ignoring pairing.json: {e}");
                None
            }
        },
        Err(_) => None,
    };
    let startup = pairing
        .as_ref()
        .map(|(p, _)| Startup { open_urls: p.open_urls.clone(), share_tabs: p.share_startup_tabs })
        .unwrap_or_default();
    if let Some((pairing, text)) = pairing.filter(|(_, text)| stored.last_pairing.as_deref() != Some(text)) {
        match daemon_socket_url(&pairing.daemon_url) {
            Ok(url) => {
                let items = serde_json::json!({ "daemonUrl": url, "lastPairing": text });
                if let Err(e) = chrome::local_set(&to_js(&items)).await {
                    warn!("could not store the pairing: {e}");
                }
                log!("applied pairing.json");
                return Dial { url: Ok(Some(url)), startup };
            }
            Err(e) => warn!("ignoring pairing.json: {e}"),
        }
    }
    let url = match stored.daemon_url.filter(|u| !u.is_empty()) {
        Some(url) => {
            daemon_socket_url(&url).map(Some).map_err(|e| format!("The saved daemon URL is refused: {e}"))
        }
        None => Ok(None),
    };
    Dial { url, startup }
}

/// Whether the startup tabs of this browser session were shared already. Session storage
/// outlives worker restarts but not the browser, which is exactly "once per launch".
pub async fn claim_startup_sharing() -> bool {
    const KEY: &str = "startupTabsShared";
    let done = chrome::session_value(KEY).await.ok().flatten().and_then(|v| v.as_bool()).unwrap_or(false);
    if done {
        return false;
    }
    if let Err(e) = chrome::session_set(&to_js(&serde_json::json!({ KEY: true }))).await {
        warn!("could not remember that the startup tabs were shared: {e}");
    }
    true
}

/// This install's id for `Hello`, created on first use and kept in `chrome.storage.local`.
pub async fn instance_id() -> String {
    const KEY: &str = "instanceId";
    let stored = chrome::local_value(KEY).await.and_then(|v| v.as_string());
    if let Some(id) = stored {
        return id;
    }
    // Not a secret, just unique enough to tell two browsers apart.
    let word = || (js_sys::Math::random() * 4_294_967_296.0) as u32;
    let id = format!("{:08x}{:08x}{:08x}{:08x}", word(), word(), word(), word());
    if let Err(e) = chrome::local_set(&to_js(&serde_json::json!({ KEY: id }))).await {
        warn!("could not store the instance id: {e}");
    }
    id
}

/// The daemon's extension socket URL from what the user pasted: the pairing URL
/// (`ws://127.0.0.1:9722/<secret>/extension`). The secret is the extension's own: a client
/// endpoint (with the client token) does not open the extension's socket, and is refused here
/// with that said. Only loopback hosts: pointing the extension at another machine would hand
/// that machine the user's tabs.
pub fn daemon_socket_url(given: &str) -> Result<String, String> {
    let given = given.trim();
    let (scheme, rest) = given
        .split_once("://")
        .ok_or_else(|| format!("{given} is not a URL; paste the pairing URL tabtunnel printed"))?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "ws" => "ws",
        "wss" => "wss",
        "http" | "https" => {
            return Err(
                "That is the endpoint for clients; paste the extension pairing URL (ws://…/extension) that tabtunnel printed.".into(),
            )
        }
        other => return Err(format!("{other}: URLs are not tabtunnel daemon URLs")),
    };
    let (authority, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.rsplit_once(':').map_or(authority, |(host, _port)| host),
    };
    // The daemon listens on 127.0.0.1 only, so [::1] would never answer.
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback());
    if !loopback || authority.contains('@') {
        return Err(format!(
            "the tabtunnel daemon runs on this computer: {host} is not 127.0.0.1 or localhost"
        ));
    }
    let secret = path.trim_end_matches('/').strip_suffix("/extension").unwrap_or("");
    if secret.is_empty() || secret.contains(['/', '?', '#']) {
        return Err(
            "paste the extension pairing URL (ws://127.0.0.1:PORT/<secret>/extension) that tabtunnel printed"
                .into(),
        );
    }
    Ok(format!("{scheme}://{authority}/{secret}/extension"))
}

pub async fn save_daemon_url(url: Option<&str>) -> Result<(), String> {
    chrome::local_set(&to_js(&serde_json::json!({ "daemonUrl": url }))).await
}

#[cfg(test)]
mod tests {
    use super::daemon_socket_url;

    #[test]
    fn accepts_the_pairing_url_only() {
        let pairing = "ws://127.0.0.1:9722/abc/extension";
        assert_eq!(daemon_socket_url(pairing).unwrap(), pairing);
        assert_eq!(daemon_socket_url(" ws://127.0.0.1:9722/abc/extension/ ").unwrap(), pairing);
        assert_eq!(
            daemon_socket_url("ws://localhost:9722/abc/extension").unwrap(),
            "ws://localhost:9722/abc/extension"
        );
        // A client endpoint carries the client token, which the extension's socket does not take.
        for client in [
            "http://127.0.0.1:9722/abc",
            "ws://127.0.0.1:9722/abc/devtools/browser/B1",
            "ws://127.0.0.1:9722/extension",
            "ws://127.0.0.1:9722/extension?token=abc",
        ] {
            assert!(daemon_socket_url(client).is_err(), "{client}");
        }
        assert!(daemon_socket_url("http://127.0.0.1:9722/abc").unwrap_err().contains("pairing URL"));
    }

    #[test]
    fn refuses_other_machines_and_non_urls() {
        for bad in [
            "ws://evil.example:9722/t/extension",
            "http://10.0.0.2:9722/t",
            "ws://127.0.0.1.evil.example/extension",
            "ws://user@evil.example/extension",
            "ftp://127.0.0.1/x",
            "127.0.0.1:9722",
            "ws://[::1]:9722/t/extension",
        ] {
            assert!(daemon_socket_url(bad).is_err(), "{bad}");
        }
    }
}
