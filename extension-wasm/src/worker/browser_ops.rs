//! The daemon's tab and window operations ([`BrowserOp`]) done with `chrome.tabs` and
//! `chrome.windows`, which `chrome.debugger` cannot do. Each is answered once, like a command.

use serde_json::{json, Value};
use tabtunnel_wire::{
    BrowserOp, BrowserRequest, CdpError, CommandResult, FromExtension, RawValue, RequestId, WindowBounds,
    WindowId,
};
use wasm_bindgen_futures::spawn_local;

use super::sharing;
use super::{daemon, gestures, navigation, placement};
use crate::chrome;
use crate::js::sleep;

/// Runs one operation and answers it on the connection it came from (a `CreateTab` runs in its
/// agent's queue of new tabs instead: `link_effects` hands it to `agent_tabs`; an `Inspect` or
/// `Resend` as the gesture guard's steps: to `inspect`).
pub fn run(generation: u64, request: BrowserRequest) {
    let BrowserRequest { id, op } = request;
    spawn_local(async move { answer(generation, id, perform(op).await) });
}

/// Answers an operation on connection `generation` (a later one's request ids mean something
/// else).
pub fn answer(generation: u64, id: RequestId, outcome: Result<Value, String>) {
    let result = match outcome {
        Ok(value) => match RawValue::from_string(value.to_string()) {
            Ok(raw) => CommandResult::ok(id, raw),
            Err(e) => CommandResult::err(id, error(e.to_string())),
        },
        Err(message) => CommandResult::err(id, error(message)),
    };
    daemon::send_on(generation, &FromExtension::CommandResult(result));
}

fn error(message: String) -> CdpError {
    CdpError { code: -32000, message, data: None }
}

async fn perform(op: BrowserOp) -> Result<Value, String> {
    match op {
        // Taken by `link_effects` for its agent's queue.
        BrowserOp::CreateTab { .. } => Err("a CreateTab runs in its agent's queue".into()),
        BrowserOp::AllowNavigation { tab_id, url } => {
            tabtunnel_wire::destinations::check(&url)?;
            navigation::allow_once(tab_id, &url).await?;
            Ok(json!({}))
        }
        // Taken by `link_effects` for `inspect`.
        BrowserOp::Inspect { .. } | BrowserOp::Resend { .. } => Err("a gesture read runs as steps".into()),
        BrowserOp::Intercept { tab_id, child_session_id, client_patterns, handle_auth_requests } => {
            // A client's `Fetch.enable`: what it answers paused requests with may be a page.
            super::state::with(|w| w.shared.drove(tab_id, "Fetch.enable"));
            gestures::intercept(tab_id, child_session_id, client_patterns, handle_auth_requests).await
        }
        BrowserOp::CloseTab { tab_id } => {
            chrome::remove_tab(tab_id).await?;
            Ok(json!({}))
        }
        BrowserOp::ReleaseTab { tab_id } => {
            sharing::release(tab_id).await;
            Ok(json!({}))
        }
        BrowserOp::ActivateTab { tab_id } => {
            let tab = chrome::get_tab(tab_id).await?;
            // Only among the agent's own tabs: in the human's window it would switch their tab.
            if placement::is_agent_window(tab.window_id) && !tab.active {
                chrome::update_tab(tab_id, &json!({ "active": true })).await?;
            }
            Ok(json!({}))
        }
        BrowserOp::GetWindowForTab { tab_id } => {
            let tab = chrome::get_tab(tab_id).await?;
            let window = chrome::get_window(tab.window_id).await?;
            Ok(json!({ "windowId": tab.window_id, "bounds": bounds_of(&window) }))
        }
        BrowserOp::GetWindowBounds { window_id } => {
            let window = chrome::get_window(window_id).await?;
            Ok(json!({ "bounds": bounds_of(&window) }))
        }
        BrowserOp::SetWindowBounds { window_id, bounds } => {
            agents_window(window_id)?;
            chrome::update_window(window_id, &window_update(&bounds)?).await?;
            Ok(json!({}))
        }
        BrowserOp::SetContentsSize { window_id, width, height, tab_id } => {
            agents_window(window_id)?;
            if let Some(tab_id) = tab_id {
                placement::bring_forward(tab_id).await;
            }
            set_contents_size(window_id, width, height).await?;
            Ok(json!({}))
        }
    }
}

fn agents_window(window_id: WindowId) -> Result<(), String> {
    if placement::is_agent_window(window_id) {
        Ok(())
    } else {
        Err("That window is the user's own; tabtunnel resizes only an agent's own window (open a page with Target.createTarget to get one)".into())
    }
}

/// A `chrome.windows.Window` as CDP's `Browser.Bounds`.
fn bounds_of(window: &chrome::Window) -> Value {
    let state = match window.state.as_str() {
        "minimized" | "maximized" | "fullscreen" => window.state.as_str(),
        "locked-fullscreen" => "fullscreen",
        _ => "normal",
    };
    json!({
        "left": window.left.unwrap_or(0),
        "top": window.top.unwrap_or(0),
        "width": window.width.unwrap_or(0),
        "height": window.height.unwrap_or(0),
        "windowState": state,
    })
}

/// CDP's bounds as `chrome.windows.update` properties; never `focused`.
fn window_update(bounds: &WindowBounds) -> Result<Value, String> {
    let mut update = serde_json::Map::new();
    for (key, value) in
        [("left", bounds.left), ("top", bounds.top), ("width", bounds.width), ("height", bounds.height)]
    {
        if let Some(value) = value {
            update.insert(key.into(), json!(value));
        }
    }
    if let Some(state) = &bounds.window_state {
        if state != "normal" && !update.is_empty() {
            return Err("The 'minimized', 'maximized', and 'fullscreen' states cannot be combined with 'left', 'top', 'width' or 'height'".into());
        }
        match state.as_str() {
            "normal" | "minimized" | "maximized" | "fullscreen" => {
                update.insert("state".into(), json!(state));
            }
            other => return Err(format!("Invalid window state: {other}")),
        }
    }
    Ok(Value::Object(update))
}

/// Resizes the window so that its active tab's contents get `width` x `height`.
async fn set_contents_size(
    window_id: WindowId,
    width: Option<u32>,
    height: Option<u32>,
) -> Result<(), String> {
    let window = chrome::get_window(window_id).await?;
    let tab = chrome::active_tab(window_id).await?.ok_or("the window has no active tab")?;
    let grow = |want: Option<u32>, now: Option<u32>, outer: Option<i32>| match (want, now, outer) {
        (Some(want), Some(now), Some(outer)) => Some(outer + want as i32 - now as i32),
        _ => None,
    };
    let mut update = serde_json::Map::new();
    if let Some(w) = grow(width, tab.width, window.width) {
        update.insert("width".into(), json!(w));
    }
    if let Some(h) = grow(height, tab.height, window.height) {
        update.insert("height".into(), json!(h));
    }
    if window.state != "normal" {
        update.insert("state".into(), json!("normal"));
    }
    chrome::update_window(window_id, &Value::Object(update)).await?;
    // Chrome resizes the contents after the window; answer once the page has its new size, as
    // CDP's own setContentsSize does (a client reads the viewport right after).
    let tab_id = tab.id.ok_or("the active tab has no id")?;
    for _ in 0..50 {
        let now = chrome::get_tab(tab_id).await?;
        let fits = |want: Option<u32>, got: Option<u32>| want.is_none() || want == got;
        if fits(width, now.width) && fits(height, now.height) {
            break;
        }
        sleep(20).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdp_bounds_become_window_updates() {
        let bounds = WindowBounds { width: Some(800), height: Some(600), ..WindowBounds::default() };
        assert_eq!(window_update(&bounds).unwrap(), json!({"width": 800, "height": 600}));
        let maximized = WindowBounds { window_state: Some("maximized".into()), ..WindowBounds::default() };
        assert_eq!(window_update(&maximized).unwrap(), json!({"state": "maximized"}));
        let both =
            WindowBounds { left: Some(1), window_state: Some("minimized".into()), ..WindowBounds::default() };
        assert!(window_update(&both).is_err());
        let normal =
            WindowBounds { left: Some(1), window_state: Some("normal".into()), ..WindowBounds::default() };
        assert_eq!(window_update(&normal).unwrap(), json!({"left": 1, "state": "normal"}));
    }
}
