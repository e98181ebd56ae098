//! Which tabs' pages reach into each other through their openers, and the browser's rule that
//! severs a tab from them as it reloads (the decisions: `tabtunnel_extension_core::relatives`).

use tabtunnel_extension_core::relatives::browsers_own;
pub use tabtunnel_extension_core::relatives::severable;
use tabtunnel_extension_core::relatives::StoredLink;
use tabtunnel_extension_core::sharing::Replace;
use tabtunnel_wire::TabId;
use wasm_bindgen_futures::spawn_local;

use super::off_tab_writes;
use super::state::with;
use crate::chrome;
use crate::js::{from_js, to_js};

/// `chrome.storage.session` key: which tab's page opened which tab.
const STORAGE_KEY: &str = "openedBy";

/// What the worker before this one learnt (the events of tabs opened then are not told again).
pub async fn restore() {
    match chrome::session_value(STORAGE_KEY).await {
        Ok(links) => {
            let links: Vec<StoredLink> = links.and_then(|l| from_js(&l)).unwrap_or_default();
            with(|w| w.relatives.restore(links));
        }
        Err(e) => warn!("storage.session.get failed: {e}"),
    }
}

/// A page in `source` opened `tab_id`.
pub fn opened(tab_id: TabId, source: TabId) {
    with(|w| w.relatives.opened(tab_id, source));
    persist();
}

/// The tab closed.
pub fn removed(tab_id: TabId) {
    with(|w| w.relatives.removed(tab_id));
    persist();
}

/// Whether a relative of the tab is held otherwise than `agent` will hold it (`None`: the
/// human, whose tabs are those no agent holds).
pub fn has_strangers(tab_id: TabId, agent: Option<&str>) -> bool {
    !strangers(tab_id, agent).is_empty()
}

/// The relatives of the tab held otherwise than `agent` will hold it.
pub fn strangers(tab_id: TabId, agent: Option<&str>) -> Vec<TabId> {
    with(|w| w.relatives.strangers(tab_id, |kin| w.shared.owner_of(kin).map(|o| o.agent).as_deref() == agent))
}

/// What is done to the document of a tab going to `agent` (`None`: back to the human): at
/// least a reload, which severs it, when a relative stays with another holder.
pub fn replace(tab_id: TabId, replace: Replace, agent: Option<&str>) -> Replace {
    let upgraded = with(|w| {
        w.relatives
            .replace(tab_id, replace, |kin| w.shared.owner_of(kin).map(|o| o.agent).as_deref() == agent)
    });
    if upgraded != replace {
        log!("tab {tab_id} is reloaded as it changes hands: a tab related to it stays with another");
    }
    upgraded
}

/// A tab no debugger of ours may hold any more, at `url` (it left the web, or an agent's page
/// opened it where none can attach): closed if a page an agent holds can still reach it, which
/// could send it back to the web and write from it unguarded. Whether it was closed.
pub async fn close_if_reachable(tab_id: TabId, url: &str) -> bool {
    if browsers_own(url) {
        with(|w| w.relatives.severed(tab_id));
        persist();
        return false;
    }
    if !has_strangers(tab_id, None) {
        return false;
    }
    warn!("tab {tab_id} is closed: no debugger of ours may hold it, and an agent's page reaches it");
    if let Err(e) = chrome::remove_tab(tab_id).await {
        warn!("could not close tab {tab_id}: {e}");
    }
    true
}

/// Puts in place (`true`) or takes away the browser's rule that gives the tab's next documents
/// an opener policy of their own; once this returns, it is in place or gone. Taken away after a
/// document came in under it, `severed`: the tab has no relatives any more.
pub async fn severing(tab_id: TabId, on: bool, severed: bool) {
    with(|w| {
        w.off_tab_writes.severing(tab_id, on);
        if severed {
            w.relatives.severed(tab_id);
        }
    });
    if severed {
        persist();
    }
    off_tab_writes::sync().await;
}

fn persist() {
    let links = with(|w| w.relatives.stored());
    let items = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&items, &STORAGE_KEY.into(), &to_js(&links));
    spawn_local(async move {
        if let Err(e) = chrome::session_set(&items).await {
            warn!("storage.session.set failed: {e}");
        }
    });
}
