//! Where the daemon is: `daemonUrl` in `chrome.storage.local`, overridden by a `pairing.json`
//! next to the manifest (written by `tabtunnel launch`) whenever that file changes. Decisions
//! only: the shell reads storage and the file ([`DialSettings`]) and stores what [`choose`] says.

use serde::Deserialize;

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
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Startup {
    pub open_urls: Vec<String>,
    pub share_tabs: bool,
}

/// What to dial now.
#[derive(Debug)]
pub struct Dial {
    pub url: Result<Option<String>, String>,
    pub startup: Startup,
}

/// What storage holds about the daemon, and the packaged `pairing.json` if there is one
/// (missing is the normal case for an extension the user installed by hand).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DialSettings {
    pub daemon_url: Option<String>,
    pub last_pairing: Option<String>,
    pub pairing_json: Option<String>,
}

/// What to dial, and what to store and say on the way.
#[derive(Debug)]
pub struct Choice {
    pub dial: Dial,
    /// Items for `chrome.storage.local` (a newly applied `pairing.json`).
    pub store: Option<serde_json::Value>,
    pub notes: Vec<String>,
}

/// The URL to dial now, applying a new `pairing.json` first (once: a user's later choices in
/// the panel are not overridden by the same file again). A stored URL is checked again, since
/// an older version may have saved one we no longer dial.
pub fn choose(settings: DialSettings) -> Choice {
    let mut notes = Vec::new();
    let pairing = settings.pairing_json.and_then(|text| match serde_json::from_str::<Pairing>(&text) {
        Ok(pairing) => Some((pairing, text)),
        Err(e) => {
            notes.push(format!("ignoring pairing.json: {e}"));
            None
        }
    });
    let startup = pairing
        .as_ref()
        .map(|(p, _)| Startup { open_urls: p.open_urls.clone(), share_tabs: p.share_startup_tabs })
        .unwrap_or_default();
    if let Some((pairing, text)) = pairing.filter(|(_, text)| settings.last_pairing.as_deref() != Some(text))
    {
        match daemon_socket_url(&pairing.daemon_url) {
            Ok(url) => {
                notes.push("applied pairing.json".into());
                let store = serde_json::json!({ "daemonUrl": url, "lastPairing": text });
                return Choice { dial: Dial { url: Ok(Some(url)), startup }, store: Some(store), notes };
            }
            Err(e) => notes.push(format!("ignoring pairing.json: {e}")),
        }
    }
    let url = match settings.daemon_url.filter(|u| !u.is_empty()) {
        Some(url) => {
            daemon_socket_url(&url).map(Some).map_err(|e| format!("The saved daemon URL is refused: {e}"))
        }
        None => Ok(None),
    };
    Choice { dial: Dial { url, startup }, store: None, notes }
}

/// What the panel's "daemon URL" field stores: an empty one clears it.
pub fn stored_url(given: &str) -> Result<serde_json::Value, String> {
    let url = match given.trim() {
        "" => None,
        given => Some(daemon_socket_url(given)?),
    };
    Ok(serde_json::json!({ "daemonUrl": url }))
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

#[cfg(test)]
mod tests {
    use super::*;

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

    fn settings(daemon_url: Option<&str>, last_pairing: Option<&str>, pairing: Option<&str>) -> DialSettings {
        DialSettings {
            daemon_url: daemon_url.map(Into::into),
            last_pairing: last_pairing.map(Into::into),
            pairing_json: pairing.map(Into::into),
        }
    }

    const PAIRING: &str = r#"{"daemonUrl":"ws://127.0.0.1:9722/new/extension","shareStartupTabs":true}"#;

    #[test]
    fn a_new_pairing_file_wins_once_and_is_stored() {
        let choice = choose(settings(Some("ws://127.0.0.1:1/old/extension"), None, Some(PAIRING)));
        assert_eq!(choice.dial.url.unwrap().as_deref(), Some("ws://127.0.0.1:9722/new/extension"));
        assert!(choice.dial.startup.share_tabs);
        let store = choice.store.unwrap();
        assert_eq!(store["lastPairing"], PAIRING);
        // The same file again: the user's later choice stands.
        let again = choose(settings(Some("ws://127.0.0.1:1/old/extension"), Some(PAIRING), Some(PAIRING)));
        assert_eq!(again.dial.url.unwrap().as_deref(), Some("ws://127.0.0.1:1/old/extension"));
        assert!(again.store.is_none());
        assert!(again.dial.startup.share_tabs, "the startup request still reads from the file");
    }

    #[test]
    fn a_bad_pairing_file_or_stored_url_is_refused_not_dialed() {
        let bad = choose(settings(None, None, Some(r#"{"daemonUrl":"ws://evil.example/t/extension"}"#)));
        assert_eq!(bad.dial.url.unwrap(), None, "falls back to asking the native host");
        assert!(bad.notes.iter().any(|n| n.contains("ignoring pairing.json")));
        let garbage = choose(settings(None, None, Some("{not json")));
        assert!(garbage.store.is_none() && garbage.notes[0].contains("ignoring"));
        let stored = choose(settings(Some("ws://10.0.0.1:9722/t/extension"), None, None));
        assert!(stored.dial.url.unwrap_err().contains("saved daemon URL is refused"));
        assert_eq!(choose(settings(Some(""), None, None)).dial.url.unwrap(), None);
    }

    #[test]
    fn the_panel_stores_a_checked_url_or_clears_it() {
        assert_eq!(stored_url("  ").unwrap(), serde_json::json!({ "daemonUrl": null }));
        assert!(stored_url("ws://evil.example/t/extension").is_err());
        assert_eq!(
            stored_url("ws://127.0.0.1:9722/s/extension").unwrap()["daemonUrl"],
            "ws://127.0.0.1:9722/s/extension"
        );
    }
}
