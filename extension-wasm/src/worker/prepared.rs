//! Tabs prepared before an agent asks for them. Opening an agent's page means opening a tab
//! (for its first, a window), attaching the debugger and letting Chrome's debugging bar in
//! before the client may have it: two to three times what Chrome's own `Target.createTarget`
//! takes (BENCHMARKS.md). So each agent the daemon names (`ToExtension::PrepareTabs`: connected,
//! allowed to open pages) gets one blank tab ready in the background of its window, in its
//! group, attached, its focus emulated; its next `CreateTab` takes it ([`take`]) and the next
//! one is prepared behind it ([`refill`]).
//!
//! A prepared tab is not shared: the daemon never hears of it until it is handed out, so it
//! counts against no limit and no client sees it or its events. It closes when its agent leaves
//! the daemon's list (gone, or the daemon socket lost), when the worker restarts, and never
//! lingers without its agent: a new window holds only it and the placeholder a new window opens
//! on. One the human takes for themselves (navigates, drags away) is let go; one the human closes
//! is not made again for that agent until its next page.

pub use tabtunnel_extension_core::prepared::Ready;
use tabtunnel_wire::{TabId, WindowId};
use wasm_bindgen_futures::spawn_local;

use tabtunnel_extension_core::sharing::Owner;

use super::state::with;
use super::{agent_queue, attach, gestures, placement};
use crate::chrome;
use crate::js::{sleep, to_js};

/// `chrome.storage.session` key: the prepared tabs (and placeholders) open now, which a
/// restarted worker closes.
const STORAGE_KEY: &str = "preparedTabs";
/// How long after handing a tab out the next is prepared.
const REFILL_DELAY_MS: u32 = 1_000;

/// The daemon's list of agents that should have a tab ready; those no longer in it lose theirs.
pub fn wanted(agents: Vec<String>) {
    let (gone, wanted) = with(|w| {
        let gone = w.prepared.wanted(agents);
        (gone, w.prepared.wanted_agents().map(str::to_owned).collect::<Vec<_>>())
    });
    if !gone.is_empty() {
        persist();
    }
    for ready in gone {
        spawn_local(discard(ready));
    }
    for agent in wanted {
        ensure(agent);
    }
}

/// Nothing is wanted any more (the daemon socket closed, the kill switch): every prepared tab
/// closes.
pub fn drop_all() {
    wanted(Vec::new());
}

/// The agent's prepared tab, if it has one still as it was left (open, blank, in the agent's
/// window); it is the caller's now. Called inside the agent's queue of tab operations
/// (`agent_queue::serially`), so a preparation under way has finished.
pub async fn take(agent: &str) -> Option<Ready> {
    let ready = with(|w| w.prepared.take(agent))?;
    persist();
    let own_window = with(|w| w.places.windows.get(agent).copied());
    match chrome::get_tab(ready.info.tab_id).await {
        // Handed out, it is the agent's: never without the gesture guard.
        Ok(tab) if is_blank(&tab) && Some(tab.window_id) == own_window => {
            match gestures::arm(ready.info.tab_id).await {
                Ok(()) => Some(ready),
                Err(e) => {
                    warn!("prepared tab {}: {e}", ready.info.tab_id);
                    discard(ready).await;
                    None
                }
            }
        }
        _ => {
            discard(ready).await;
            None
        }
    }
}

/// After the agent got a page: the next one is prepared, if the agent is still wanted, a moment
/// later. At once, opening it would take the CPU from the client's first steps on the page it
/// just got (measured: its answer 35-70 ms later on a busy machine).
pub fn refill(agent: &str) {
    with(|w| w.prepared.refilled(agent));
    let agent = agent.to_owned();
    spawn_local(async move {
        sleep(REFILL_DELAY_MS).await;
        ensure(agent);
    });
}

/// Starts preparing a tab for `agent` unless it has one, is getting one, or is not wanted.
fn ensure(agent: String) {
    let Some(preparation) = with(|w| w.prepared.begin(&agent)) else { return };
    spawn_local(async move {
        // In the agent's queue: a CreateTab sent meanwhile waits for this tab and takes it.
        let outcome = agent_queue::serially(&agent, prepare(&agent)).await;
        let made = outcome.unwrap_or_else(|e| {
            warn!("could not prepare a tab for {agent}: {e}");
            None
        });
        let kept = made.is_some();
        match with(|w| w.prepared.finish(preparation, made)) {
            Some(unwanted) => discard(unwanted).await,
            None if kept => persist(),
            None => {}
        }
    });
}

/// Opens and attaches a blank tab for `agent`, unless it is no longer wanted by now.
async fn prepare(agent: &str) -> Result<Option<Ready>, String> {
    if !with(|w| w.prepared.still_wanted(agent)) || super::kill_switch::is_engaged() {
        return Ok(None);
    }
    let opened = placement::open_tab(agent, "about:blank").await?;
    let tab_id = opened.tab_id;
    with(|w| w.prepared.opening(opened.tab_ids()));
    persist();
    let owner = Owner { agent: agent.to_owned(), created: true };
    let described = attach::attach_unguarded_and_describe(tab_id, owner).await;
    with(|w| w.prepared.opened(opened.tab_ids()));
    match described {
        Ok(info) => Ok(Some(Ready { opened, info })),
        Err(e) => {
            placement::abandon(&opened).await;
            persist();
            Err(e)
        }
    }
}

/// Closes a prepared tab (and its window's placeholder) nobody will have.
async fn discard(ready: Ready) {
    placement::abandon(&ready.opened).await;
}

/// Still on the blank page it was opened on (a tab just opened may not have committed it yet).
fn is_blank(tab: &chrome::Tab) -> bool {
    let blank = |url: &str| url.is_empty() || url == "about:blank";
    blank(&tab.url) && blank(&tab.pending_url)
}

/// A tab closed, or the debugger left a tab we did not share (the human cancelled debugging,
/// or Chrome took the session away): a prepared one is given up and closed with its window's
/// placeholder, and its agent gets none again until its next page.
pub fn lost(tab_id: TabId) {
    let Some((_, ready)) = with(|w| w.prepared.give_up(tab_id)) else { return };
    persist();
    spawn_local(discard(ready));
}

/// A tab navigated: a prepared one the human sent somewhere is theirs now.
pub fn navigated(tab_id: TabId, url: &str) {
    if url != "about:blank" {
        let_go(tab_id);
    }
}

/// A tab moved to another window: a prepared one the human dragged out is theirs now.
pub fn moved(tab_id: TabId, window_id: WindowId) {
    if with(|w| w.prepared.dragged_out(tab_id, window_id, |agent| w.places.window_of(agent))) {
        let_go(tab_id);
    }
}

/// A prepared tab the human took: the debugger leaves it, it leaves the agent's group, and its
/// window's placeholder closes.
fn let_go(tab_id: TabId) {
    let Some((agent, ready)) = with(|w| w.prepared.give_up(tab_id)) else { return };
    log!("the prepared tab {tab_id} of {agent} is the human's now");
    persist();
    spawn_local(async move {
        if let Err(e) = chrome::detach(tab_id).await {
            warn!("detach from tab {tab_id}: {e}");
        }
        placement::leave_group(tab_id).await;
        placement::close_placeholder_of(&ready.opened).await;
    });
}

/// Closes the tabs an earlier worker prepared: their agents' next list prepares new ones.
pub async fn restore() {
    let stored: Vec<TabId> = chrome::session_value(STORAGE_KEY)
        .await
        .ok()
        .flatten()
        .and_then(|v| crate::js::from_js(&v))
        .unwrap_or_default();
    for tab_id in stored {
        let _ = chrome::remove_tab(tab_id).await;
    }
    persist();
}

fn persist() {
    let tabs: Vec<TabId> = with(|w| w.prepared.stored());
    let items = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&items, &STORAGE_KEY.into(), &to_js(&tabs));
    spawn_local(async move {
        if let Err(e) = chrome::session_set(&items).await {
            warn!("storage.session.set failed: {e}");
        }
    });
}
