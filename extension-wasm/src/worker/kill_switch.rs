//! The kill switch: one click in the side panel (or the keyboard shortcut) stops every agent at
//! once. Every tab is detached here, and the daemon closes every client connection and refuses
//! new ones until the human turns it off again. The state is kept in `chrome.storage.local`, so a
//! restarted worker or browser stays stopped.

use tabtunnel_wire::{FromExtension, TabId, UnshareReason};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use super::{broadcast, daemon, prepared, sharing, with, workers};
use crate::chrome;
use crate::js::to_js;

const STORAGE_KEY: &str = "killSwitch";
/// The command in `manifest.json` (`Alt+Shift+K` unless the user changed it).
const COMMAND: &str = "kill-switch";

pub fn listen() {
    let on_command = Closure::<dyn FnMut(String)>::new(|command: String| {
        if command == COMMAND {
            // The shortcut only stops; turning agents back on is a deliberate click.
            spawn_local(set(true));
        }
    });
    chrome::on_command(&on_command);
    on_command.forget();
}

pub fn is_engaged() -> bool {
    with(|w| w.kill_switch)
}

/// Reads the stored state (before the first `Hello`, which carries it).
pub async fn restore() {
    let engaged = chrome::local_value(STORAGE_KEY).await.and_then(|v| v.as_bool()).unwrap_or(false);
    with(|w| w.kill_switch = engaged);
}

/// Engages or releases the kill switch.
pub async fn set(engaged: bool) {
    if with(|w| std::mem::replace(&mut w.kill_switch, engaged)) == engaged {
        return;
    }
    warn!("kill switch {}", if engaged { "engaged: stopping every agent" } else { "released" });
    daemon::send(&FromExtension::KillSwitch { engaged });
    broadcast();
    let items = to_js(&serde_json::json!({ STORAGE_KEY: engaged }));
    if let Err(e) = chrome::local_set(&items).await {
        warn!("could not store the kill switch: {e}");
    }
    if engaged {
        prepared::drop_all();
        let tabs: Vec<TabId> = with(|w| w.shared.keys().copied().collect());
        for tab_id in tabs {
            sharing::stop_sharing(tab_id, UnshareReason::StoppedByUser).await;
        }
        workers::forget_all(UnshareReason::StoppedByUser);
    }
}
