//! No debugger of ours stays on a page that is not the web (`wire::destinations`).
//!
//! `chrome.debugger` stays attached when a tab goes to one of this extension's own pages, and a
//! client's script there runs with the extension's privileges. The daemon refuses every
//! navigation an agent asks for to such a page; this covers the routes it cannot see (a
//! history entry, a page's own navigation): the moment a shared tab's main frame is about to
//! go there, or has, the tab is unshared (commands arriving after that are refused by the
//! relay, which runs only those of shared tabs) and the debugger leaves it. A prepared tab
//! already gives itself up on any navigation (`prepared::navigated`).

use serde::Deserialize;
use tabtunnel_wire::{destinations, TabId, UnshareReason};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use super::sharing;
use crate::chrome;
use crate::js::from_js;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NavigationDetails {
    tab_id: TabId,
    frame_id: i64,
    #[serde(default)]
    url: String,
}

pub fn listen() {
    let on_navigation = || {
        Closure::<dyn FnMut(JsValue)>::new(|details: JsValue| {
            if let Some(d) = from_js::<NavigationDetails>(&details).filter(|d| d.frame_id == 0) {
                navigated(d.tab_id, &d.url);
            }
        })
    };
    let before = on_navigation();
    chrome::on_before_navigate(&before);
    before.forget();
    let committed = on_navigation();
    chrome::on_navigation_committed(&committed);
    committed.forget();
}

/// A shared tab's main frame goes to `url` (or shows it: `tabs.onUpdated`).
pub fn navigated(tab_id: TabId, url: &str) {
    if url.is_empty() || destinations::is_allowed(url) || !sharing::is_shared(tab_id) {
        return;
    }
    warn!("tab {tab_id} goes to {url}, which no agent may reach: it is no longer shared");
    // Unshared now, in this task: no command of the tab's is run after this one.
    sharing::unshare(tab_id, UnshareReason::Detached);
    spawn_local(async move {
        if let Err(e) = chrome::detach(tab_id).await {
            warn!("detach from tab {tab_id}: {e}");
        }
    });
}
