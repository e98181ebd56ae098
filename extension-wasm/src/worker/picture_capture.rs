//! A picture of a shared tab for the side panel (see `pictures.rs`), and its broadcast.
//!
//! A picture is `Page.captureScreenshot` on the extension's own debugger session, clipped to
//! the viewport and scaled down by the renderer (a small JPEG, nothing decoded or scaled here).

use serde_json::json;
use tabtunnel_wire::TabId;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use super::tab_gate;
use crate::chrome;
use crate::js::{error_message, sleep, to_js};
use crate::messages::WorkerBroadcast;

/// The picture's width at most, in CSS pixels of the page.
const WIDTH: f64 = 320.0;
const QUALITY: u32 = 60;
/// How long a picture may take (a tab that does not paint never answers).
const TIMEOUT_MS: u32 = 2_000;

fn get(value: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(value, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

/// A small picture of the tab's viewport, as a data URL.
pub async fn capture(tab_id: TabId) -> Result<String, String> {
    // Only the visible tab of a window paints (headful); another would never answer.
    if !chrome::get_tab(tab_id).await?.active {
        return Err("not the visible tab of its window".into());
    }
    if tab_gate::reset_gate(tab_id).is_some() {
        return Err("the tab is being reset".into());
    }
    let send = |method: &'static str, params: serde_json::Value| async move {
        chrome::send_command(tab_id, None, method, &to_js(&params)).await.map_err(|e| error_message(&e))
    };
    let viewport = get(&send("Page.getLayoutMetrics", json!({})).await?, "cssVisualViewport");
    let number = |key| get(&viewport, key).as_f64().unwrap_or(0.0);
    let (width, height) = (number("clientWidth"), number("clientHeight"));
    if width < 1.0 || height < 1.0 {
        return Err("the page has no viewport".into());
    }
    // The clip is in the document's coordinates: the viewport where it is scrolled to.
    let clip = json!({
        "x": number("pageX"), "y": number("pageY"), "width": width, "height": height,
        "scale": (WIDTH / width).min(1.0),
    });
    let params = json!({ "format": "jpeg", "quality": QUALITY, "clip": clip, "optimizeForSpeed": true });
    let shot = send("Page.captureScreenshot", params);
    let timeout = sleep(TIMEOUT_MS);
    futures_util::pin_mut!(shot, timeout);
    match futures_util::future::select(shot, timeout).await {
        futures_util::future::Either::Left((result, _)) => {
            let data = get(&result?, "data").as_string().ok_or("no picture data")?;
            Ok(format!("data:image/jpeg;base64,{data}"))
        }
        futures_util::future::Either::Right(_) => Err("the tab did not paint in time".into()),
    }
}

/// Tells every open panel of a new picture.
pub fn broadcast(agent: String, tab_id: TabId, src: String) {
    let message = to_js(&WorkerBroadcast::Picture { agent, tab_id, src });
    spawn_local(async move {
        let _ = chrome::send_message(&message).await;
    });
}
