//! The browser's rules against writes the guard cannot see while tabs are shared: of workers
//! outside any tab, of a shared tab while its debugger is away, of tabs just born (the
//! decisions: `tabtunnel_extension_core::off_tab_writes` and `newborn_tabs`).

use serde::Deserialize;
use tabtunnel_extension_core::off_tab_writes::RULE_IDS;
use tabtunnel_wire::{TabId, WindowId};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::spawn_local;

use super::state::with;
use crate::chrome;
use crate::js::{from_js, performance_now, sleep_until};

/// Whatever an earlier worker left is replaced (or removed) at once; the tabs there are are
/// listed, so that only tabs born from now on are held.
pub fn start() {
    spawn_local(async {
        sync().await;
        match chrome::all_tabs().await {
            Ok(tabs) => with(|w| w.off_tab_writes.newborn.listed(tabs.iter().filter_map(|t| t.id))),
            // No rule for tabs born: a tab the listing missed would have its writes refused.
            Err(e) => return warn!("could not list the tabs: {e}"),
        }
        sync().await;
    });
}

/// Whether the tab is shared or being shared.
fn held_by_agent(tab_id: TabId) -> bool {
    with(|w| w.shared.get(&tab_id).is_some() || w.shared.is_attaching(tab_id))
}

/// `tabs.onCreated`: the tab's writes are refused (the rules excluded every tab but the known
/// ones before it was born) until it is known whose it is.
pub fn tab_created(tab_id: TabId, window_id: WindowId, opener: Option<TabId>) {
    let opener = opener.map(|o| (o, held_by_agent(o)));
    let no_opener = with(|w| w.off_tab_writes.newborn.created(performance_now(), tab_id, opener));
    spawn_local(async move {
        // At once: a tab without an opener in a normal window sends its documents from now (a
        // page another program opened, posting as it loads; a shared page's popup window is
        // told of only a moment later); then again as each tab's time to be claimed is up (this
        // one's or one born before it: every deadline, not only the first).
        if no_opener && chrome::get_window(window_id).await.is_ok_and(|w| w.kind == "normal") {
            with(|w| w.off_tab_writes.newborn.in_normal_window(tab_id));
        }
        sync().await;
        while let Some(at) = with(|w| w.off_tab_writes.newborn.poll_timeout()) {
            sleep_until(at).await;
            with(|w| w.off_tab_writes.newborn.handle_timeout(performance_now()));
            sync().await;
        }
    });
}

/// `webNavigation.onCreatedNavigationTarget`: a page in `source` opened `tab_id`.
pub fn opened_by_page(tab_id: TabId, source: TabId) {
    let shared = held_by_agent(source);
    with(|w| w.off_tab_writes.newborn.opened_by_page(tab_id, source, shared));
    spawn_local(sync());
}

/// A tab is shared (its guard armed), or a shared page's popup is let go: its writes go.
pub fn settled(tab_id: TabId) {
    with(|w| w.off_tab_writes.newborn.settled(tab_id));
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
    if held_by_agent(tab_id) {
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
