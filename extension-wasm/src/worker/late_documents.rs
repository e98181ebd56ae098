//! Documents begun before their tab's guard was armed: the browser's rules refuse the tab's
//! writes until the guard is armed again after they commit (the decisions:
//! `tabtunnel_extension_core::late_documents`).

use serde::Deserialize;
use serde_json::Value;
use tabtunnel_extension_core::late_documents::{Commit, FrameId};
use tabtunnel_wire::gestures::guard_fetch_patterns;
use tabtunnel_wire::TabId;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::spawn_local;

use super::off_tab_writes;
use super::state::with;
use crate::chrome;
use crate::js::{error_message, from_js, to_js};

/// `webNavigation`'s details, as far as they matter here.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Details {
    tab_id: TabId,
    frame_id: FrameId,
    #[serde(default)]
    time_stamp: f64,
}

/// `Fetch.enable` with `params` is sent on the tab's own session.
pub fn enabling(tab_id: TabId, params: &Value) {
    with(|w| w.fetch_params.insert(tab_id, params.clone()));
}

/// The guard's `Fetch.enable` is about to be sent on the tab's own session.
pub fn arming(tab_id: TabId) {
    with(|w| w.late_documents.arming(tab_id));
    if hold(tab_id) {
        spawn_local(off_tab_writes::sync());
    }
}

/// The guard's `Fetch.enable` was answered on the tab's own session (`false`: refused): a
/// navigation under way now is late. Returns once the browser's rules refuse the tab's writes,
/// if it holds one.
pub async fn armed(tab_id: TabId, armed: bool) {
    with(|w| w.late_documents.armed(tab_id, armed.then(js_sys::Date::now)));
    if hold(tab_id) {
        off_tab_writes::sync().await;
    } else {
        release(tab_id);
    }
}

/// `webNavigation.onBeforeNavigate`.
pub fn started(details: &JsValue) {
    let Some(Details { tab_id, frame_id, time_stamp }) = from_js(details) else { return };
    with(|w| w.late_documents.started(tab_id, frame_id, time_stamp));
    if hold(tab_id) {
        spawn_local(off_tab_writes::sync());
    }
}

/// `webNavigation.onErrorOccurred`.
pub fn failed(details: &JsValue) {
    let Some(Details { tab_id, frame_id, .. }) = from_js(details) else { return };
    with(|w| w.late_documents.failed(tab_id, frame_id));
    release(tab_id);
}

/// `webNavigation.onCommitted`: a late document gets the guard's `Fetch.enable` again (the
/// params last sent, clients' patterns included), then its tab's writes go to the guard.
pub fn committed(details: &JsValue) {
    let Some(Details { tab_id, frame_id, .. }) = from_js(details) else { return };
    if with(|w| w.late_documents.committed(tab_id, frame_id)) == Commit::Covered {
        return;
    }
    hold(tab_id);
    spawn_local(async move {
        off_tab_writes::sync().await;
        let params = with(|w| w.fetch_params.get(&tab_id).cloned())
            .unwrap_or_else(|| serde_json::json!({ "patterns": guard_fetch_patterns() }));
        if let Err(e) = chrome::send_command(tab_id, None, "Fetch.enable", &to_js(&params)).await {
            // Detached meanwhile: a reset arms it again, else it is no longer shared.
            log!("tab {tab_id}: the guard was not armed again after a late commit: {}", error_message(&e));
        }
        with(|w| w.late_documents.rearmed(tab_id));
        release(tab_id);
    });
}

/// The tab is no longer shared (`removed`: closed).
pub fn forget(tab_id: TabId, removed: bool) {
    with(|w| {
        if removed {
            w.late_documents.removed(tab_id);
        } else {
            w.late_documents.disarmed(tab_id);
        }
        w.fetch_params.remove(&tab_id);
    });
    release(tab_id);
}

/// Puts the tab's hold in the rules' state; whether it holds.
fn hold(tab_id: TabId) -> bool {
    with(|w| {
        let held = w.late_documents.held(tab_id);
        w.off_tab_writes.late(tab_id, held);
        held
    })
}

fn release(tab_id: TabId) {
    if !hold(tab_id) {
        spawn_local(off_tab_writes::sync());
    }
}
