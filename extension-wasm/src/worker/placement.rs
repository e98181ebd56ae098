//! Where agents' tabs live. Each agent gets one window of its own, opened unfocused so the
//! human keeps theirs, with its tabs in a tab group titled with the agent's name in a colour of
//! its own. A tab is rendered only while it is the active tab of its window (a background tab in
//! headful Chrome paints nothing and its screenshots hang), which the agent's own window makes
//! possible without touching the human's tabs. A tab the human hands over stays where it is and
//! joins a group of the agent's in its own window. Dragging a tab out of an agent's group or
//! window gives it back to the human.

pub use tabtunnel_extension_core::placement::{color_of, is_press, OpenedTab, Places};
use tabtunnel_wire::{TabId, WindowId, DEFAULT_AGENT};
use wasm_bindgen_futures::spawn_local;

use super::state::{owner_of, with};
use super::tab_gate;
use crate::chrome::{self, NO_GROUP};
use crate::js::{from_js, sleep, to_js};

const STORAGE_KEY: &str = "agentPlaces";

/// Opens a tab for `agent` showing `url`: in its window (opened now, unfocused, if it has none)
/// and in its group, but not yet shown: [`show`] makes it the window's active tab once the
/// debugger is attached. The human's focused window and active tab do not change.
///
/// Why in the background first: Chrome's "started debugging this browser" bar is added to
/// every tab, and in a tab that is showing it slides in 40-350 ms later, shrinking the page's
/// viewport (by 56 px here) under a client that already has the page. A tab that gets the bar
/// while in the background shows it at once when it becomes active (measured headless and
/// headful), so the client's first look at the page is its last size. A new window's first
/// tab is shown at once, so a new window opens on a blank placeholder that [`show`] closes.
pub async fn open_tab(agent: &str, url: &str) -> Result<OpenedTab, String> {
    // The window is known to be there: windows.onRemoved forgets closed ones (and a failed
    // create falls back to a new window).
    let known = with(|w| w.places.windows.get(agent).copied());
    let opened = match known {
        Some(window_id) => {
            let properties = serde_json::json!({ "windowId": window_id, "url": url, "active": false });
            match chrome::create_tab(&properties).await {
                Ok(tab) => OpenedTab {
                    tab_id: tab.id.ok_or("Chrome opened a tab without an id")?,
                    window_id: tab.window_id,
                    placeholder: None,
                },
                Err(_) => open_window(agent, url).await?,
            }
        }
        None => open_window(agent, url).await?,
    };
    // Grouping runs beside the attach, off the client's path (createTarget waits for the
    // attach, not for the tab strip). Marked as placing first, so its group change is ours.
    let (tab_id, window_id, agent) = (opened.tab_id, opened.window_id, agent.to_owned());
    let grouping = with(|w| w.placing.begin(tab_id));
    spawn_local(async move {
        group(tab_id, window_id, &agent).await;
        with(|w| w.placing.finish(grouping));
    });
    Ok(opened)
}

/// Shows a tab [`open_tab`] opened (its debugger attached, so Chrome's bar is in it already):
/// the active tab of its window. Its window's placeholder, if any, closes behind it (not waited
/// for: the tab is shown already).
pub async fn show(opened: &OpenedTab) -> Result<(), String> {
    let tab_id = opened.tab_id;
    chrome::update_tab(tab_id, &serde_json::json!({ "active": true })).await?;
    if let Some(placeholder) = opened.placeholder {
        spawn_local(close_placeholder(placeholder));
    }
    Ok(())
}

/// Closes what [`open_tab`] opened, when the tab cannot be given to the agent after all.
pub async fn abandon(opened: &OpenedTab) {
    let _ = chrome::remove_tab(opened.tab_id).await;
    close_placeholder_of(opened).await;
}

/// Closes the blank tab a new window opened on, if `opened` has one.
pub async fn close_placeholder_of(opened: &OpenedTab) {
    if let Some(placeholder) = opened.placeholder {
        close_placeholder(placeholder).await;
    }
}

async fn close_placeholder(placeholder: TabId) {
    if let Err(e) = chrome::remove_tab(placeholder).await {
        warn!("could not close the placeholder tab {placeholder}: {e}");
    }
}

/// The agent's own window, opened unfocused on a blank placeholder tab with the agent's tab
/// behind it (one call: a window's first URL is its active tab, the others open in the
/// background).
async fn open_window(agent: &str, url: &str) -> Result<OpenedTab, String> {
    let properties = serde_json::json!({ "url": ["about:blank", url], "focused": false, "type": "normal" });
    let window = chrome::create_window(&properties)
        .await
        .map_err(|e| format!("Chrome could not open a window: {e}"))?;
    let window_id = window.id.ok_or("Chrome opened a window without an id")?;
    with(|w| w.places.windows.insert(agent.to_owned(), window_id));
    persist();
    match <[chrome::Tab; 2]>::try_from(window.tabs) {
        Ok([placeholder, tab]) => Ok(OpenedTab {
            tab_id: tab.id.ok_or("Chrome opened a tab without an id")?,
            window_id: tab.window_id,
            placeholder: placeholder.id,
        }),
        Err(tabs) => Err(format!("Chrome opened a window with {} tabs instead of two", tabs.len())),
    }
}

/// Puts a tab into `agent`'s group in the tab's window, creating and naming the group if needed.
/// The default agent (tabs the human shared from the panel) has no group.
pub async fn join_group(tab_id: TabId, window_id: WindowId, agent: &str) {
    if agent == DEFAULT_AGENT {
        return;
    }
    let grouping = with(|w| w.placing.begin(tab_id));
    group(tab_id, window_id, agent).await;
    with(|w| w.placing.finish(grouping));
}

async fn group(tab_id: TabId, window_id: WindowId, agent: &str) {
    let existing = with(|w| w.places.group_of(agent, window_id));
    let grouped = match existing {
        Some(group) => match chrome::group_tab(tab_id, window_id, Some(group)).await {
            Ok(group) => Ok(group),
            // The group is gone (its last tab left): start a new one.
            Err(_) => chrome::group_tab(tab_id, window_id, None).await,
        },
        None => chrome::group_tab(tab_id, window_id, None).await,
    };
    match grouped {
        Ok(group) => {
            if existing != Some(group) {
                if let Err(e) = chrome::name_group(group, agent, color_of(agent)).await {
                    warn!("could not name the group of {agent}: {e}");
                }
                if with(|w| w.places.grouped(agent, window_id, group)) {
                    persist();
                }
            }
        }
        Err(e) => warn!("could not group tab {tab_id} for {agent}: {e}"),
    }
}

/// Takes a tab out of its agent's group (it is going back to the human).
pub async fn leave_group(tab_id: TabId) {
    if let Ok(tab) = chrome::get_tab(tab_id).await {
        if tab.group_id != NO_GROUP && is_agent_group(tab.group_id) {
            if let Err(e) = chrome::ungroup_tab(tab_id).await {
                warn!("could not ungroup tab {tab_id}: {e}");
            }
        }
    }
}

fn is_agent_group(group_id: i32) -> bool {
    with(|w| w.places.is_agent_group(group_id))
}

/// Whether `window_id` is some agent's own window (its tabs may be activated and resized).
pub fn is_agent_window(window_id: WindowId) -> bool {
    with(|w| w.places.is_agent_window(window_id))
}

/// Before a screenshot of an agent's tab: it must be the active tab of its window to paint at
/// all (headful Chrome renders nothing in a background tab), which it may stop being when the
/// agent opens another. Done as a step of the tab that the screenshot and every later command
/// wait for, so none overtakes another.
pub fn bring_forward_first(tab_id: TabId) {
    if owner_of(tab_id).is_some_and(|owner| owner.agent != DEFAULT_AGENT) {
        tab_gate::exclusively(tab_id, bring_forward(tab_id));
    }
}

/// Makes an agent's tab the active one of its window. Only in the agent's own window, never
/// the human's.
pub async fn bring_forward(tab_id: TabId) {
    let Some(owner) = owner_of(tab_id) else { return };
    if owner.agent == DEFAULT_AGENT {
        return;
    }
    if let Ok(tab) = chrome::get_tab(tab_id).await {
        if !tab.active && is_agent_window(tab.window_id) {
            if let Err(e) = chrome::update_tab(tab_id, &serde_json::json!({ "active": true })).await {
                warn!("could not bring tab {tab_id} forward: {e}");
            }
        }
    }
}

/// A tab moved into or out of a group. A shared agent tab that left its agent's group (the
/// human dragged it out) goes back to the human. Checked again a moment later against the tab
/// itself, since Chrome may report a group change of ours before our call to make it returns.
/// `None` for a tab no agent has; else whether it left its group, for the caller to release it.
pub fn group_changed(tab_id: TabId, _group_id: i32) -> Option<impl std::future::Future<Output = bool>> {
    let owner = owner_of(tab_id)?;
    if owner.agent == DEFAULT_AGENT {
        return None;
    }
    Some(async move {
        sleep(50).await;
        if with(|w| w.placing.contains(tab_id) || w.shared.is_attaching(tab_id)) {
            return false;
        }
        let (Some(now), Ok(tab)) = (owner_of(tab_id), chrome::get_tab(tab_id).await) else { return false };
        let left = with(|w| w.places.left_group(&now, tab.window_id, tab.group_id));
        if left {
            log!("tab {tab_id} left the group of {}: it goes back to the human", now.agent);
        }
        left
    })
}

/// A tab moved to another window. An agent's tab dragged out of the agent's window goes back to
/// the human (the caller releases it when this says so); a handed tab may move between the
/// human's windows (its group follows it).
pub fn window_changed(tab_id: TabId, window_id: WindowId) -> bool {
    let Some(owner) = owner_of(tab_id) else { return false };
    let left = with(|w| w.places.left_window(&owner, window_id));
    if left {
        log!("tab {tab_id} left the window of {}: it goes back to the human", owner.agent);
    }
    left
}

/// An agent is about to press (mouse or touch) in `tab_id`.
pub fn agent_pressing(tab_id: TabId) {
    let window = with(|w| w.shared.get(&tab_id).filter(|t| t.agent != DEFAULT_AGENT).map(|t| t.window_id));
    if let Some(window) = window.filter(|w| is_agent_window(*w)) {
        with(|w| w.focus.agent_pressing(window, js_sys::Date::now()));
    }
}

fn focus_changed(window_id: WindowId) {
    const NONE: WindowId = -1;
    if window_id == NONE {
        return;
    }
    if !is_agent_window(window_id) {
        // Only a normal window is where the human works (not a popup such as the side panel's).
        spawn_local(async move {
            if chrome::get_window(window_id).await.is_ok_and(|w| w.kind == "normal") {
                let changed = with(|w| w.focus.human_focused(window_id));
                if changed {
                    super::panel_state::broadcast();
                }
            }
        });
        return;
    }
    let give_back = with(|w| w.focus.agent_window_focused(window_id, js_sys::Date::now()));
    if let Some(human) = give_back {
        spawn_local(async move {
            if let Err(e) = chrome::update_window(human, &serde_json::json!({ "focused": true })).await {
                warn!("could not give the focus back to window {human}: {e}");
            }
        });
    }
}

/// Forgets windows the human (or an agent's last tab closing) closed; guards the human's focus.
pub fn listen() {
    use wasm_bindgen::prelude::*;
    let on_focus = Closure::<dyn FnMut(WindowId)>::new(focus_changed);
    chrome::on_window_focus_changed(&on_focus);
    on_focus.forget();
    spawn_local(async {
        if let Ok(window) = chrome::last_focused_normal_window().await {
            if let Some(id) = window.id.filter(|id| !is_agent_window(*id)) {
                with(|w| w.focus.human_window_found(id));
            }
        }
    });
    let on_removed = Closure::<dyn FnMut(WindowId)>::new(|window_id: WindowId| {
        let changed = with(|w| w.places.window_removed(window_id));
        if changed {
            persist();
        }
    });
    chrome::on_window_removed(&on_removed);
    on_removed.forget();
}

pub async fn restore() {
    let stored = chrome::session_value(STORAGE_KEY)
        .await
        .ok()
        .flatten()
        .and_then(|v| from_js::<Places>(&v))
        .unwrap_or_default();
    with(|w| w.places = stored);
}

fn persist() {
    let places = with(|w| w.places.clone());
    let items = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&items, &STORAGE_KEY.into(), &to_js(&places));
    spawn_local(async move {
        if let Err(e) = chrome::session_set(&items).await {
            warn!("storage.session.set failed: {e}");
        }
    });
}
