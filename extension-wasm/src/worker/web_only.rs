//! No debugger of ours on a page that is not the web (`wire::destinations`).
//!
//! `chrome.debugger` stays attached when a tab goes to one of this extension's own pages, and a
//! client's script there runs with the extension's privileges. The daemon refuses every
//! navigation an agent asks for to such a page. What it cannot see is the tab's history, so:
//! - a tab becomes an agent's only while it shows the web, and with no history entry off it
//!   ([`check_tab`]: the entries are dropped, or the tab is not shared);
//! - `Page.navigateToHistoryEntry` goes only to an entry on the web ([`history_entry_refusal`]);
//! - a shared tab whose main frame starts to go elsewhere anyway (the human's own navigation)
//!   is unshared at once, its page blanked if it is ours (a script armed before, e.g. by
//!   `Page.addScriptToEvaluateOnNewDocument`, may have run in it: the commit of a local page
//!   beats the detach), and the tab is answered no panel request for the worker's life.
//!
//! A prepared tab already gives itself up on any navigation (`agent_tabs::navigated`).

use serde::Deserialize;
use tabtunnel_wire::{destinations, TabId};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use super::relatives;
use super::state::{is_shared, with};
use crate::chrome;
use crate::js::{error_message, from_js};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NavigationDetails {
    tab_id: TabId,
    frame_id: i64,
    #[serde(default)]
    url: String,
}

/// The tab and URL of a `webNavigation` event (`onBeforeNavigate`, `onCommitted`) of a main
/// frame; `None` for a subframe's.
pub fn main_frame(details: &JsValue) -> Option<(TabId, String)> {
    from_js::<NavigationDetails>(details).filter(|d| d.frame_id == 0).map(|d| (d.tab_id, d.url))
}

/// A shared tab's main frame goes to `url` (or shows it: `tabs.onUpdated`): whether that leaves
/// the web. Then the caller unshares it at once, in this task (no command of the tab's is run
/// after this one), and lets it go with [`let_go`].
pub fn leaves_the_web(tab_id: TabId, url: &str) -> bool {
    if url.is_empty() || destinations::is_allowed(url) || !is_shared(tab_id) {
        return false;
    }
    warn!("tab {tab_id} goes to {url}, which no agent may reach: it is no longer shared");
    true
}

/// A tab that left the web, unshared: answered no panel request for the worker's life, the
/// debugger detached, closed if an agent's page still reaches it (`relatives`), and its page
/// blanked if it is ours.
pub fn let_go(tab_id: TabId, url: &str) {
    with(|w| w.shared.taint(tab_id));
    let ours = url.starts_with(&chrome::runtime_get_url(""));
    let url = url.to_owned();
    spawn_local(async move {
        if let Err(e) = chrome::detach(tab_id).await {
            warn!("detach from tab {tab_id}: {e}");
        }
        if relatives::close_if_reachable(tab_id, &url).await {
            return;
        }
        if ours {
            if let Err(e) = chrome::update_tab(tab_id, &serde_json::json!({ "url": "about:blank" })).await {
                warn!("blanking tab {tab_id}: {e}");
            }
        }
    });
}

/// An entry of `Page.getNavigationHistory`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    id: i64,
    #[serde(default)]
    url: String,
    #[serde(default, rename = "userTypedURL")]
    user_typed_url: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct History {
    entries: Vec<Entry>,
}

impl Entry {
    fn on_the_web(&self) -> bool {
        [&self.url, &self.user_typed_url].iter().all(|u| u.is_empty() || destinations::is_allowed(u))
    }
}

async fn history(tab_id: TabId) -> Result<History, String> {
    let reply = chrome::send_command(tab_id, None, "Page.getNavigationHistory", &JsValue::UNDEFINED)
        .await
        .map_err(|e| error_message(&e))?;
    from_js::<History>(&reply).ok_or_else(|| "unexpected Page.getNavigationHistory reply".into())
}

/// Before a tab attached for an agent is announced: `Err` when it shows no web page, and its
/// history entries off the web are dropped (`Page.resetNavigationHistory` keeps the current
/// one only), so that no history navigation leads there.
pub async fn check_tab(tab_id: TabId, url: &str) -> Result<(), String> {
    if !url.is_empty() {
        destinations::check(url)?;
    }
    // A tab in the middle of a navigation (a reload as the worker restarts) may not answer at
    // once: a few tries, then it is not shared.
    let mut tries = 0;
    loop {
        match forget_history_off_the_web(tab_id).await {
            Err(e) if tries < HISTORY_TRIES => {
                tries += 1;
                log!("tab {tab_id}: {e}; trying again");
                crate::js::sleep(HISTORY_RETRY_MS).await;
            }
            done => return done,
        }
    }
}

const HISTORY_TRIES: u32 = 10;
const HISTORY_RETRY_MS: u32 = 200;

async fn forget_history_off_the_web(tab_id: TabId) -> Result<(), String> {
    let history = history(tab_id).await?;
    if history.entries.iter().all(Entry::on_the_web) {
        return Ok(());
    }
    log!("tab {tab_id}: its history leaves the web; only its current page is kept");
    chrome::send_command(tab_id, None, "Page.resetNavigationHistory", &JsValue::UNDEFINED)
        .await
        .map(drop)
        .map_err(|e| format!("its history could not be cleared: {}", error_message(&e)))
}

/// `Page.navigateToHistoryEntry` of a page: `Some(why)` when its entry is not on the web (or
/// cannot be found).
pub async fn history_entry_refusal(tab_id: TabId, params: &JsValue) -> Option<String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Params {
        entry_id: i64,
    }
    let entry_id = from_js::<Params>(params)?.entry_id; // no id: Chrome's own error
    let found = match history(tab_id).await {
        Ok(history) => history.entries.into_iter().find(|e| e.id == entry_id),
        Err(e) => return Some(format!("its history could not be read: {e}")),
    };
    match found {
        Some(entry) if entry.on_the_web() => None,
        Some(entry) => {
            Some(destinations::check(&entry.url).err().unwrap_or_else(|| destinations::RULE.into()))
        }
        None => None, // Chrome answers an unknown id itself
    }
}
