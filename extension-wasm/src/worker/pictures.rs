//! Live pictures of agents' tabs in the side panel: the chrome side of
//! `tabtunnel_extension_core::pictures`, which decides which tab and when. Here: panels' ports
//! counted into the machine (no panel open, no picture) and a click on a picture bringing its
//! tab forward; the capture and its broadcast are `picture_capture.rs`'s.
//!
//! `chrome.tabs.captureVisibleTab` would take the full-size tab (to be scaled down here) and
//! Chrome allows two calls a second per extension; both need the tab to be the visible one of
//! its window. The extension's own commands never pass the daemon, so no client sees them in
//! its events and the trail does not record them.

use serde_json::json;
use tabtunnel_extension_core::{Input, PanelInput};
use tabtunnel_wire::TabId;
use wasm_bindgen::prelude::*;

use super::daemon;
use super::state::{held_sender, owner_of, with};
use crate::chrome;

/// Counts the panels open: a port each, closed with its page.
pub fn listen() {
    let cb = Closure::<dyn FnMut(chrome::Port)>::new(|port: chrome::Port| {
        if port.name() != crate::messages::PANEL_PORT {
            return;
        }
        if let Some(tab_id) = held_sender(&port.sender()) {
            return warn!("no pictures for a page in tab {tab_id}, which a debugger of ours holds");
        }
        let _ = daemon::input(Input::Panel(PanelInput::Opened));
        let closed = Closure::once_into_js(|| {
            let _ = daemon::input(Input::Panel(PanelInput::Closed));
        });
        port.on_disconnect().add_listener(closed.unchecked_ref());
    });
    chrome::on_runtime_connect(&cb);
    cb.forget();
}

/// The human clicked an agent's picture: its tab becomes the visible one of its window (it
/// mostly is: only that one is pictured) and the window comes to the front. The agent's page
/// notices nothing: its focus is emulated, and the focus guard does not give the focus back.
pub async fn bring_forward(tab_id: TabId) -> Result<(), String> {
    if owner_of(tab_id).is_none() {
        return Err("That tab is no longer shared.".into());
    }
    let tab = chrome::get_tab(tab_id).await?;
    with(|w| w.focus.human_brings_forward(tab.window_id));
    if !tab.active {
        chrome::update_tab(tab_id, &json!({ "active": true })).await?;
    }
    chrome::update_window(tab.window_id, &json!({ "focused": true })).await
}
