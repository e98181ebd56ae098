//! Attaching `chrome.debugger` to a tab and describing it as a CDP target: for a share, a
//! reset's re-attach, a restore and a prepared tab.

use serde::Deserialize;
use tabtunnel_extension_core::sharing::Owner;
use tabtunnel_wire::TabId;
use tabtunnel_wire::TabInfo;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use super::state::with;
use super::{gestures, web_only};
use crate::chrome;
use crate::js::{error_message, from_js, to_js};
use crate::restricted::check_debuggable;

/// Attaches (or confirms our existing attachment) and describes the tab as `owner`'s. `check_url`
/// refuses pages Chrome will not let us debug, with a message for the user.
pub async fn attach_and_describe(tab_id: TabId, check_url: bool, owner: Owner) -> Result<TabInfo, String> {
    attach_then_describe(tab_id, check_url, owner, true).await
}

/// As [`attach_and_describe`], for a tab no agent has yet (a prepared one): the gesture guard
/// is armed when it is handed out (`agent_tabs`), so the human who takes the tab instead
/// navigates it with nothing paused.
pub async fn attach_unguarded_and_describe(tab_id: TabId, owner: Owner) -> Result<TabInfo, String> {
    attach_then_describe(tab_id, false, owner, false).await
}

async fn attach_then_describe(
    tab_id: TabId,
    check_url: bool,
    owner: Owner,
    guard: bool,
) -> Result<TabInfo, String> {
    // Armed, the tab's requests pause for the guard from the attach on: their events wait for
    // the announcement (`add`) rather than being dropped as a stranger tab's.
    let hold = guard.then(|| with(|w| w.early_events.hold(tab_id, w.shared.contains_key(&tab_id)))).flatten();
    let described = attach_armed_and_describe(tab_id, check_url, owner, guard).await;
    if let (Err(_), Some(hold)) = (&described, hold) {
        with(|w| w.early_events.give_up(hold));
    }
    described
}

async fn attach_armed_and_describe(
    tab_id: TabId,
    check_url: bool,
    owner: Owner,
    guard: bool,
) -> Result<TabInfo, String> {
    if check_url {
        let tab = chrome::get_tab(tab_id).await.map_err(|e| format!("No such tab: {e}"))?;
        let url = if tab.pending_url.is_empty() { &tab.url } else { &tab.pending_url };
        check_debuggable(url)?;
    }
    match chrome::attach(tab_id).await {
        Ok(()) => {}
        // After a worker restart our old session is still there, with whatever its clients
        // enabled: start a clean one, as the daemon's clients were all dropped with the worker.
        Err(e) if e.contains("Another debugger is already attached") => {
            let _ = chrome::detach(tab_id).await;
            // The old session's events (its requests paused for a guard that is gone) are
            // not the new one's.
            with(|w| w.early_events.session_replaced(tab_id));
            chrome::attach(tab_id).await.map_err(|e| format!("Chrome refused to attach: {e}"))?;
        }
        Err(e) => return Err(format!("Chrome refused to attach: {e}")),
    }
    // An agent's tab is never without the gesture guard: not armed, not shared.
    if guard {
        if let Err(e) = gestures::arm(tab_id).await {
            let _ = chrome::detach(tab_id).await;
            return Err(e);
        }
    }
    // Every attach starts a session with no emulation: an agent's page gets its focus back
    // before any client hears of it (a reset's re-attach included). Sent now, not waited for:
    // a new tab's renderer answers it only once it runs (40-120 ms here), and the session runs
    // its commands in order, so every client command comes after it anyway.
    if owner.emulates_focus() {
        spawn_local(emulate_focus(tab_id, true));
    }
    match describe(tab_id, owner).await {
        Ok(info) => Ok(info),
        Err(e) => {
            let _ = chrome::detach(tab_id).await;
            Err(e)
        }
    }
}

/// Turns the page's focus emulation on or off in our debugger session; the tab stays shared
/// either way, only its page's idea of having the focus is at stake.
pub async fn emulate_focus(tab_id: TabId, enabled: bool) {
    let params = to_js(&serde_json::json!({ "enabled": enabled }));
    if let Err(e) = chrome::send_command(tab_id, None, "Emulation.setFocusEmulationEnabled", &params).await {
        warn!("focus emulation of tab {tab_id}: {}", error_message(&e));
    }
}

async fn describe(tab_id: TabId, owner: Owner) -> Result<TabInfo, String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct TargetInfo {
        target_id: String,
        #[serde(default)]
        browser_context_id: String,
        opener_id: Option<String>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Reply {
        target_info: TargetInfo,
    }
    // Both at once: a new tab waits on them before its client hears of it.
    let no_params = JsValue::UNDEFINED;
    let (reply, tab) = futures_util::join!(
        chrome::send_command(tab_id, None, "Target.getTargetInfo", &no_params),
        chrome::get_tab(tab_id)
    );
    let reply = reply.map_err(|e| error_message(&e))?;
    let target = from_js::<Reply>(&reply).ok_or("unexpected Target.getTargetInfo reply")?.target_info;
    let tab = tab?;
    let url = if tab.pending_url.is_empty() { &tab.url } else { &tab.pending_url };
    web_only::check_tab(tab_id, url).await?;
    Ok(TabInfo {
        tab_id,
        window_id: tab.window_id,
        target_id: target.target_id,
        browser_context_id: target.browser_context_id,
        // A tab opened on a URL commits it a moment later; the URL it is loading is the one a
        // client asked for (Chrome's own targetInfo shows it too).
        url: if tab.pending_url.is_empty() { tab.url } else { tab.pending_url },
        title: tab.title,
        opener_target_id: target.opener_id,
        agent: owner.agent,
        created: owner.created,
        kind: Default::default(),
    })
}
