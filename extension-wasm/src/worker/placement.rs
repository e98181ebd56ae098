//! Where agents' tabs live. Each agent gets one window of its own, opened unfocused so the
//! human keeps theirs, with its tabs in a tab group titled with the agent's name in a colour of
//! its own. A tab is rendered only while it is the active tab of its window (a background tab in
//! headful Chrome paints nothing and its screenshots hang), which the agent's own window makes
//! possible without touching the human's tabs. A tab the human hands over stays where it is and
//! joins a group of the agent's in its own window. Dragging a tab out of an agent's group or
//! window gives it back to the human.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tabtunnel_wire::{TabId, WindowId, DEFAULT_AGENT};
use wasm_bindgen_futures::spawn_local;

use super::{sharing, with};
use crate::chrome::{self, NO_GROUP};
use crate::js::{from_js, sleep, to_js};

const STORAGE_KEY: &str = "agentPlaces";

/// Tab group colours Chrome offers, but grey (which reads as "inactive").
const COLORS: [&str; 8] = ["blue", "red", "yellow", "green", "pink", "purple", "cyan", "orange"];

/// An agent's window and its groups, remembered across worker restarts.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Places {
    /// Each agent's own window.
    pub windows: BTreeMap<String, WindowId>,
    /// Each agent's tab group in each window it has tabs in.
    pub groups: BTreeMap<String, BTreeMap<WindowId, i32>>,
}

/// The colour of an agent's groups: the same name always gets the same colour.
pub fn color_of(agent: &str) -> &'static str {
    // FNV-1a: stable across runs and platforms, unlike the std hasher.
    let hash = agent.bytes().fold(0x811c_9dc5_u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
    COLORS[hash as usize % COLORS.len()]
}

/// A tab opened for an agent by [`open_tab`], in the background of its window until [`show`].
pub struct OpenedTab {
    pub tab: chrome::Tab,
    /// The blank tab a new window opened with, closed once the agent's tab is shown.
    placeholder: Option<TabId>,
}

impl OpenedTab {
    /// The tab, and the placeholder if there is one.
    pub fn tab_ids(&self) -> impl Iterator<Item = TabId> + '_ {
        self.tab.id.into_iter().chain(self.placeholder)
    }
}

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
                Ok(tab) => OpenedTab { tab, placeholder: None },
                Err(_) => open_window(agent, url).await?,
            }
        }
        None => open_window(agent, url).await?,
    };
    let tab_id = opened.tab.id.ok_or("Chrome opened a tab without an id")?;
    // Grouping runs beside the attach, off the client's path (createTarget waits for the
    // attach, not for the tab strip). Marked as placing first, so its group change is ours.
    with(|w| w.placing.insert(tab_id));
    let (window_id, agent) = (opened.tab.window_id, agent.to_owned());
    spawn_local(async move {
        group(tab_id, window_id, &agent).await;
        with(|w| w.placing.remove(&tab_id));
    });
    Ok(opened)
}

/// Shows a tab [`open_tab`] opened (its debugger attached, so Chrome's bar is in it already):
/// the active tab of its window. Its window's placeholder, if any, closes behind it (not waited
/// for: the tab is shown already).
pub async fn show(opened: &OpenedTab) -> Result<(), String> {
    let tab_id = opened.tab.id.ok_or("Chrome opened a tab without an id")?;
    chrome::update_tab(tab_id, &serde_json::json!({ "active": true })).await?;
    if let Some(placeholder) = opened.placeholder {
        spawn_local(close_placeholder(placeholder));
    }
    Ok(())
}

/// Closes what [`open_tab`] opened, when the tab cannot be given to the agent after all.
pub async fn abandon(opened: &OpenedTab) {
    if let Some(tab_id) = opened.tab.id {
        let _ = chrome::remove_tab(tab_id).await;
    }
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
        Ok([placeholder, tab]) => Ok(OpenedTab { tab, placeholder: placeholder.id }),
        Err(tabs) => Err(format!("Chrome opened a window with {} tabs instead of two", tabs.len())),
    }
}

/// Puts a tab into `agent`'s group in the tab's window, creating and naming the group if needed.
/// The default agent (tabs the human shared from the panel) has no group.
pub async fn join_group(tab_id: TabId, window_id: WindowId, agent: &str) {
    if agent == DEFAULT_AGENT {
        return;
    }
    with(|w| w.placing.insert(tab_id));
    group(tab_id, window_id, agent).await;
    with(|w| w.placing.remove(&tab_id));
}

async fn group(tab_id: TabId, window_id: WindowId, agent: &str) {
    let existing = with(|w| w.places.groups.get(agent).and_then(|g| g.get(&window_id)).copied());
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
                with(|w| w.places.groups.entry(agent.to_owned()).or_default().insert(window_id, group));
                persist();
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
    with(|w| w.places.groups.values().any(|g| g.values().any(|id| *id == group_id)))
}

/// Whether `window_id` is some agent's own window (its tabs may be activated and resized).
pub fn is_agent_window(window_id: WindowId) -> bool {
    with(|w| w.places.windows.values().any(|id| *id == window_id))
}

/// Before a screenshot of an agent's tab: it must be the active tab of its window to paint at
/// all (headful Chrome renders nothing in a background tab), which it may stop being when the
/// agent opens another. Done as a step of the tab that the screenshot and every later command
/// wait for, so none overtakes another.
pub fn bring_forward_first(tab_id: TabId) {
    if sharing::owner_of(tab_id).is_some_and(|owner| owner.agent != DEFAULT_AGENT) {
        sharing::exclusively(tab_id, bring_forward(tab_id));
    }
}

/// Makes an agent's tab the active one of its window. Only in the agent's own window, never
/// the human's.
pub async fn bring_forward(tab_id: TabId) {
    let Some(owner) = sharing::owner_of(tab_id) else { return };
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
pub fn group_changed(tab_id: TabId, _group_id: i32) {
    let Some(owner) = sharing::owner_of(tab_id) else { return };
    if owner.agent == DEFAULT_AGENT {
        return;
    }
    spawn_local(async move {
        sleep(50).await;
        if with(|w| w.placing.contains(&tab_id) || w.attaching.contains(&tab_id)) {
            return;
        }
        let (Some(now), Ok(tab)) = (sharing::owner_of(tab_id), chrome::get_tab(tab_id).await) else { return };
        let own = with(|w| w.places.groups.get(&now.agent).and_then(|g| g.get(&tab.window_id)).copied());
        if now.agent != DEFAULT_AGENT && own != Some(tab.group_id) {
            log!("tab {tab_id} left the group of {}: it goes back to the human", now.agent);
            sharing::release(tab_id).await;
        }
    });
}

/// A tab moved to another window. An agent's tab dragged out of the agent's window goes back to
/// the human; a handed tab may move between the human's windows (its group follows it).
pub fn window_changed(tab_id: TabId, window_id: WindowId) {
    let Some(owner) = sharing::owner_of(tab_id) else { return };
    if owner.agent == DEFAULT_AGENT {
        return;
    }
    let own_window = with(|w| w.places.windows.get(&owner.agent).copied());
    if owner.created && own_window.is_some_and(|own| own != window_id) {
        log!("tab {tab_id} left the window of {}: it goes back to the human", owner.agent);
        spawn_local(sharing::release(tab_id));
    }
}

/// How long after an agent's pointer press a focus change to its window counts as caused by it.
const PRESS_FOCUS_WINDOW_MS: f64 = 1500.0;

/// Chrome activates a tab's window when a page gets a mouse press or a touch, synthetic ones
/// included (measured: `Input.dispatchMouseEvent mousePressed` and `dispatchTouchEvent
/// touchStart` do; moves, releases, keys and `insertText` do not; focus emulation does not
/// prevent it). So an agent's click would take the human's focus. The guard remembers the
/// human's window and gives focus straight back when it moves to an agent's window right after
/// that agent pressed there.
#[derive(Debug, Default)]
pub struct FocusGuard {
    /// The last focused window that is not an agent's.
    human_window: Option<WindowId>,
    /// The agent window an agent last pressed in, and when (`Date.now()`).
    pressed: Option<(WindowId, f64)>,
}

impl FocusGuard {
    pub fn human_window(&self) -> Option<WindowId> {
        self.human_window
    }
}

/// An agent is about to press (mouse or touch) in `tab_id`.
pub fn agent_pressing(tab_id: TabId) {
    let window = with(|w| w.shared.get(&tab_id).filter(|t| t.agent != DEFAULT_AGENT).map(|t| t.window_id));
    if let Some(window) = window.filter(|w| is_agent_window(*w)) {
        with(|w| w.focus.pressed = Some((window, js_sys::Date::now())));
    }
}

/// Whether an `Input.*` command presses: what makes Chrome activate the tab's window.
/// `event_type` reads the params' `type`, asked only of the methods that have one.
pub fn is_press(method: &str, event_type: impl FnOnce() -> Option<String>) -> bool {
    match method {
        "Input.dispatchMouseEvent" => event_type().as_deref() == Some("mousePressed"),
        "Input.dispatchTouchEvent" => event_type().as_deref() == Some("touchStart"),
        "Input.synthesizeTapGesture" | "Input.emulateTouchFromMouseEvent" => true,
        _ => false,
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
                let changed = with(|w| w.focus.human_window.replace(window_id) != Some(window_id));
                if changed {
                    super::broadcast();
                }
            }
        });
        return;
    }
    let give_back = with(|w| match (w.focus.pressed, w.focus.human_window) {
        (Some((pressed, at)), Some(human))
            if pressed == window_id && js_sys::Date::now() - at < PRESS_FOCUS_WINDOW_MS =>
        {
            Some(human)
        }
        _ => None,
    });
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
                with(|w| {
                    w.focus.human_window.get_or_insert(id);
                });
            }
        }
    });
    let on_removed = Closure::<dyn FnMut(WindowId)>::new(|window_id: WindowId| {
        let changed = with(|w| {
            let before = (w.places.windows.len(), w.places.groups.values().map(BTreeMap::len).sum::<usize>());
            w.places.windows.retain(|_, id| *id != window_id);
            for groups in w.places.groups.values_mut() {
                groups.remove(&window_id);
            }
            w.places.groups.retain(|_, g| !g.is_empty());
            before != (w.places.windows.len(), w.places.groups.values().map(BTreeMap::len).sum::<usize>())
        });
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

#[cfg(test)]
mod tests {
    use super::{color_of, is_press};

    #[test]
    fn presses_are_what_activates_a_window() {
        let of = |t: &str| {
            let t = t.to_owned();
            move || Some(t)
        };
        assert!(is_press("Input.dispatchMouseEvent", of("mousePressed")));
        assert!(!is_press("Input.dispatchMouseEvent", of("mouseMoved")));
        assert!(!is_press("Input.dispatchMouseEvent", of("mouseReleased")));
        assert!(!is_press("Input.dispatchMouseEvent", || None));
        assert!(is_press("Input.dispatchTouchEvent", of("touchStart")));
        assert!(!is_press("Input.dispatchKeyEvent", || panic!("keys have no press")));
        assert!(is_press("Input.synthesizeTapGesture", || None));
    }

    #[test]
    fn an_agent_keeps_its_colour_and_agents_spread_over_them() {
        assert_eq!(color_of("claude"), color_of("claude"));
        let colors: std::collections::BTreeSet<&str> =
            (0..40).map(|i| color_of(&format!("agent-{i}"))).collect();
        assert!(colors.len() >= 6, "{colors:?}");
    }
}
