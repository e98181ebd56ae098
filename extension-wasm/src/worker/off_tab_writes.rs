//! The browser's rules against writes of workers outside any tab while tabs are shared (the
//! decision: `tabtunnel_extension_core::off_tab_writes`).

use serde::Deserialize;
use tabtunnel_extension_core::off_tab_writes::RULE_IDS;
use tabtunnel_wire::TabId;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::spawn_local;

use super::state::with;
use crate::chrome;
use crate::js::from_js;

/// Whatever an earlier worker left is replaced (or removed) at once.
pub fn start() {
    spawn_local(sync());
}

/// A frame's navigation starts or commits (`webNavigation`): a frame of a held tab (shared, or
/// being shared) adds its host; starting to load puts the rules in place before the document
/// runs.
pub fn frame_navigated(details: &JsValue) {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Details {
        tab_id: TabId,
        #[serde(default)]
        url: String,
    }
    let Some(Details { tab_id, url }) = from_js::<Details>(details) else { return };
    // (Not a tab that left the web: it is no longer shared, whatever it shows next.)
    if with(|w| w.shared.get(&tab_id).is_some() || w.shared.is_attaching(tab_id)) {
        showed(tab_id, &url);
    }
}

/// A held tab shows or loads `url`.
pub fn showed(tab_id: TabId, url: &str) {
    with(|w| w.off_tab_writes.showed(tab_id, url));
    spawn_local(sync());
}

/// A shared tab's debugger goes away for a reset: once this returns, the browser refuses its
/// writes (until [`guarded`], or it is no longer shared).
pub async fn unguard(tab_id: TabId) {
    with(|w| w.off_tab_writes.unguarded(tab_id, true));
    sync().await;
}

/// The tab's guard is armed again.
pub fn guarded(tab_id: TabId) {
    with(|w| w.off_tab_writes.unguarded(tab_id, false));
    spawn_local(sync());
}

/// The tab is no longer shared.
pub fn left(tab_id: TabId) {
    with(|w| w.off_tab_writes.left(tab_id));
    spawn_local(sync());
}

/// Puts the rules the hosts call for in place, if it is not. The update is read and sent in one
/// step (Chrome applies an extension's rule updates in the order they were made), so the last
/// one sent is always the latest.
pub async fn sync() {
    loop {
        let Some(update) = with(|w| w.off_tab_writes.update()) else { return };
        match chrome::update_session_rules(&RULE_IDS, &update.rules).await {
            Ok(()) => return with(|w| w.off_tab_writes.applied(update)),
            // Nothing changed in the browser: rules covering every site instead, in place
            // before whatever awaits this (a tab announced) goes on.
            Err(e) => {
                warn!("could not set the rules against workers' writes: {e}");
                if !with(|w| w.off_tab_writes.refused(update)) {
                    return;
                }
            }
        }
    }
}
