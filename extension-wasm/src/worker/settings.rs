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

/// This install's id for `Hello`, created on first use and kept in `chrome.storage.local`.
pub async fn instance_id() -> String {
    const KEY: &str = "instanceId";
    let stored = chrome::local_get(&[KEY])
        .await
        .ok()
        .and_then(|v| js_sys::Reflect::get(&v, &KEY.into()).ok())
        .and_then(|v| v.as_string());
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

pub async fn save_daemon_url(url: Option<&str>) -> Result<(), String> {
    chrome::local_set(&to_js(&serde_json::json!({ "daemonUrl": url }))).await
}
