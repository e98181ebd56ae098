//! What the machine's settings decisions read (`tabtunnel_extension_core::settings`), and this
//! browser's own ids and once-per-session marks.

use serde::Deserialize;
use tabtunnel_extension_core::settings::DialSettings;

use crate::chrome;
use crate::js::{from_js, to_js};

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Stored {
    daemon_url: Option<String>,
    last_pairing: Option<String>,
}

/// Storage's `daemonUrl` and `lastPairing`, and the packaged `pairing.json` (missing is the
/// normal case for an extension the user installed by hand).
pub async fn read() -> DialSettings {
    let stored: Stored = match chrome::local_get(&["daemonUrl", "lastPairing"]).await {
        Ok(v) => from_js(&v).unwrap_or_default(),
        Err(e) => {
            warn!("storage.local.get failed: {e}");
            Stored::default()
        }
    };
    let pairing_json = chrome::read_packaged_file("pairing.json").await.ok();
    DialSettings { daemon_url: stored.daemon_url, last_pairing: stored.last_pairing, pairing_json }
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
