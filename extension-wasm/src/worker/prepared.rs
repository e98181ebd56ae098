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

use std::collections::{BTreeMap, BTreeSet};

use tabtunnel_wire::{TabId, TabInfo, WindowId};
use wasm_bindgen_futures::spawn_local;

use super::placement::{self, OpenedTab};
use super::sharing::{self, Owner};
use super::{browser_ops, gestures, with};
use crate::chrome;
use crate::js::{sleep, to_js};

/// `chrome.storage.session` key: the prepared tabs (and placeholders) open now, which a
/// restarted worker closes.
const STORAGE_KEY: &str = "preparedTabs";
/// How long after handing a tab out the next is prepared.
const REFILL_DELAY_MS: u32 = 1_000;

#[derive(Default)]
pub struct Prepared {
    /// The agents the daemon wants a tab ready for.
    wanted: BTreeSet<String>,
    /// Each agent's tab, ready.
    ready: BTreeMap<String, Ready>,
    /// Agents whose tab is being prepared now.
    preparing: BTreeSet<String>,
    /// Tabs opened by a preparation not done yet (remembered, so a restarted worker closes them).
    opening: BTreeSet<TabId>,
    /// Agents whose prepared tab the human closed: none again until their next page.
    declined: BTreeSet<String>,
}

/// A tab ready for its agent: opened in the background of its window and attached.
pub struct Ready {
    pub opened: OpenedTab,
    /// As `sharing::attach_and_describe` described it.
    pub info: TabInfo,
}

/// The daemon's list of agents that should have a tab ready; those no longer in it lose theirs.
pub fn wanted(agents: Vec<String>) {
    let wanted: BTreeSet<String> = agents.into_iter().collect();
    let gone = with(|w| {
        let p = &mut w.prepared;
        p.declined.retain(|a| wanted.contains(a));
        p.wanted = wanted.clone();
        let gone: Vec<String> = p.ready.keys().filter(|a| !p.wanted.contains(*a)).cloned().collect();
        gone.iter().filter_map(|a| p.ready.remove(a)).collect::<Vec<_>>()
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
/// (`browser_ops::serially`), so a preparation under way has finished.
pub async fn take(agent: &str) -> Option<Ready> {
    let ready = with(|w| w.prepared.ready.remove(agent))?;
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
    with(|w| w.prepared.declined.remove(agent));
    let agent = agent.to_owned();
    spawn_local(async move {
        sleep(REFILL_DELAY_MS).await;
        ensure(agent);
    });
}

/// Starts preparing a tab for `agent` unless it has one, is getting one, or is not wanted.
fn ensure(agent: String) {
    let start = with(|w| {
        let p = &mut w.prepared;
        p.wanted.contains(&agent)
            && !p.declined.contains(&agent)
            && !p.ready.contains_key(&agent)
            && p.preparing.insert(agent.clone())
    });
    if !start {
        return;
    }
    spawn_local(async move {
        // In the agent's queue: a CreateTab sent meanwhile waits for this tab and takes it.
        let outcome = browser_ops::serially(&agent, prepare(&agent)).await;
        with(|w| w.prepared.preparing.remove(&agent));
        match outcome {
            Ok(Some(ready)) => {
                let keep = with(|w| {
                    let p = &mut w.prepared;
                    let keep = p.wanted.contains(&agent) && !p.ready.contains_key(&agent);
                    if keep {
                        p.ready.insert(agent.clone(), ready);
                        None
                    } else {
                        Some(ready)
                    }
                });
                match keep {
                    None => persist(),
                    Some(unwanted) => discard(unwanted).await,
                }
            }
            Ok(None) => {}
            Err(e) => warn!("could not prepare a tab for {agent}: {e}"),
        }
    });
}

/// Opens and attaches a blank tab for `agent`, unless it is no longer wanted by now.
async fn prepare(agent: &str) -> Result<Option<Ready>, String> {
    let still_wanted = with(|w| w.prepared.wanted.contains(agent) && !w.prepared.ready.contains_key(agent));
    if !still_wanted || super::kill_switch::is_engaged() {
        return Ok(None);
    }
    let opened = placement::open_tab(agent, "about:blank").await?;
    let tab_id = opened.tab_id;
    with(|w| w.prepared.opening.extend(opened.tab_ids()));
    persist();
    let owner = Owner { agent: agent.to_owned(), created: true };
    let described = sharing::attach_unguarded_and_describe(tab_id, owner).await;
    with(|w| {
        for id in opened.tab_ids() {
            w.prepared.opening.remove(&id);
        }
    });
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

/// The agent whose prepared tab this is.
pub(super) fn owner(tab_id: TabId) -> Option<String> {
    with(|w| w.prepared.ready.iter().find(|(_, r)| r.info.tab_id == tab_id).map(|(a, _)| a.clone()))
}

/// A tab closed, or the debugger left a tab we did not share (the human cancelled debugging,
/// or Chrome took the session away): a prepared one is given up and closed with its window's
/// placeholder, and its agent gets none again until its next page.
pub fn lost(tab_id: TabId) {
    let Some(agent) = owner(tab_id) else { return };
    let ready = with(|w| {
        w.prepared.declined.insert(agent.clone());
        w.prepared.ready.remove(&agent)
    });
    persist();
    if let Some(ready) = ready {
        spawn_local(discard(ready));
    }
}

/// A tab navigated: a prepared one the human sent somewhere is theirs now.
pub fn navigated(tab_id: TabId, url: &str) {
    if url != "about:blank" {
        let_go(tab_id);
    }
}

/// A tab moved to another window: a prepared one the human dragged out is theirs now.
pub fn moved(tab_id: TabId, window_id: WindowId) {
    if owner(tab_id).is_some_and(|agent| with(|w| w.places.windows.get(&agent) != Some(&window_id))) {
        let_go(tab_id);
    }
}

/// A prepared tab the human took: the debugger leaves it, it leaves the agent's group, and its
/// window's placeholder closes.
fn let_go(tab_id: TabId) {
    let Some(agent) = owner(tab_id) else { return };
    log!("the prepared tab {tab_id} of {agent} is the human's now");
    let ready = with(|w| {
        w.prepared.declined.insert(agent.clone());
        w.prepared.ready.remove(&agent)
    });
    persist();
    spawn_local(async move {
        if let Err(e) = chrome::detach(tab_id).await {
            warn!("detach from tab {tab_id}: {e}");
        }
        placement::leave_group(tab_id).await;
        if let Some(ready) = ready {
            placement::close_placeholder_of(&ready.opened).await;
        }
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
    let tabs: Vec<TabId> = with(|w| {
        let p = &w.prepared;
        p.ready.values().flat_map(|r| r.opened.tab_ids()).chain(p.opening.iter().copied()).collect()
    });
    let items = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&items, &STORAGE_KEY.into(), &to_js(&tabs));
    spawn_local(async move {
        if let Err(e) = chrome::session_set(&items).await {
            warn!("storage.session.set failed: {e}");
        }
    });
}
