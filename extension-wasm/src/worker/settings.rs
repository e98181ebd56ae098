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
}

/// The URL to dial now, applying a new `pairing.json` first.
pub async fn daemon_url() -> Option<String> {
    let stored: Stored = match chrome::local_get(&["daemonUrl", "lastPairing"]).await {
        Ok(v) => from_js(&v).unwrap_or_default(),
        Err(e) => {
            warn!("storage.local.get failed: {e}");
            Stored::default()
        }
    };
    // Missing is the normal case for an extension the user installed by hand.
    if let Ok(text) = chrome::read_packaged_file("pairing.json").await {
        if stored.last_pairing.as_deref() != Some(text.as_str()) {
            match serde_json::from_str::<Pairing>(&text) {
                Ok(pairing) => {
                    let items = serde_json::json!({ "daemonUrl": pairing.daemon_url, "lastPairing": text });
                    if let Err(e) = chrome::local_set(&to_js(&items)).await {
                        warn!("could not store the pairing: {e}");
                    }
                    log!("applied pairing.json");
                    return Some(pairing.daemon_url);
                }
                Err(e) => warn!("ignoring pairing.json: {e}"),
            }
        }
    }
    stored.daemon_url.filter(|u| !u.is_empty())
}

pub async fn save_daemon_url(url: Option<&str>) -> Result<(), String> {
    chrome::local_set(&to_js(&serde_json::json!({ "daemonUrl": url }))).await
}
