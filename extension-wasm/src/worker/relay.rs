//! CDP both ways: daemon `Command`s to `chrome.debugger.sendCommand`, and
//! `chrome.debugger.onEvent` to daemon `Event`s. Payloads stay JSON text on our side.

use tabtunnel_wire::{CdpError, Command, CommandResult, Event, FromExtension, RawValue};
use wasm_bindgen::prelude::*;

use super::{daemon, sharing, with};
use crate::chrome;
use crate::js::{error_message, from_js, json_text};

pub fn listen() {
    let cb = Closure::<dyn FnMut(JsValue, String, JsValue)>::new(
        |source: JsValue, method: String, params: JsValue| {
            let Some(chrome::DebuggerSource { tab_id: Some(tab_id), session_id }) = from_js(&source) else {
                return;
            };
            if !with(|w| w.shared.contains_key(&tab_id)) {
                return;
            }
            let Some(params) = raw_json(&params) else {
                warn!("dropping {method}: params are not JSON");
                return;
            };
            daemon::send(&FromExtension::Event(Event {
                tab_id,
                child_session_id: session_id,
                method,
                params,
            }));
        },
    );
    chrome::on_debugger_event(&cb);
    cb.forget();
}

/// Runs one command; always answers, since a client waits for every id. `gate` is a reset of
/// the tab in progress (see [`super::sharing::reset`]) that the command must wait for.
/// `epoch` is the tab's session generation when the command arrived (see [`sharing::epoch`]).
pub async fn run_command(generation: u64, command: Command, gate: Option<js_sys::Promise>, epoch: u64) {
    let id = command.id;
    if let Some(gate) = gate {
        let _ = wasm_bindgen_futures::JsFuture::from(gate).await;
    }
    let result = match outcome(command, epoch).await {
        Ok(raw) => CommandResult::ok(id, raw),
        Err(error) => CommandResult::err(id, error),
    };
    daemon::send_on(generation, &FromExtension::CommandResult(result));
}

/// What `chrome.debugger` made of the command; anything it or the params threw is a CDP error.
async fn outcome(command: Command, epoch: u64) -> Result<Box<RawValue>, CdpError> {
    let Command { tab_id, child_session_id, method, params, .. } = command;
    if sharing::epoch(tab_id) != epoch {
        return Err(server_error("Target closed: the tab's debugger session was lost".into()));
    }
    if !with(|w| w.shared.contains_key(&tab_id)) {
        return Err(server_error(format!("Tab {tab_id} is not shared")));
    }
    if method == "Page.captureScreenshot" && child_session_id.is_none() {
        super::placement::bring_forward(tab_id).await;
    }
    if super::placement::is_press(&method, params.as_ref().map_or("", |p| p.get())) {
        super::placement::agent_pressing(tab_id);
    }
    let params = match &params {
        Some(p) => params_object(p.get()).ok_or_else(|| invalid_params("params must be a JSON object"))?,
        None => JsValue::UNDEFINED,
    };
    match chrome::send_command(tab_id, child_session_id.as_deref(), &method, &params).await {
        Ok(value) => raw_json(&value).ok_or_else(|| server_error(format!("{method} returned no JSON"))),
        Err(e) => Err(cdp_error(&error_message(&e))),
    }
}

/// The params as a plain JS object; `None` for anything else (the daemon forwards only objects,
/// and `chrome.debugger` throws on the rest).
fn params_object(text: &str) -> Option<JsValue> {
    let value = js_sys::JSON::parse(text).ok()?;
    (value.is_object() && !js_sys::Array::is_array(&value)).then_some(value)
}

/// A JS value as raw JSON; `undefined` (commands without a result) becomes `{}`.
fn raw_json(value: &JsValue) -> Option<Box<RawValue>> {
    let text = json_text(value).unwrap_or_else(|| "{}".into());
    RawValue::from_string(text).ok()
}

fn server_error(message: String) -> CdpError {
    CdpError { code: -32000, message, data: None }
}

fn invalid_params(data: &str) -> CdpError {
    CdpError { code: -32602, message: "Invalid parameters".into(), data: Some(data.into()) }
}

/// chrome.debugger reports CDP's own errors as their JSON text in the message
/// (`{"code":-32601,"message":"'X' wasn't found"}`); anything else is a plain server error.
fn cdp_error(message: &str) -> CdpError {
    serde_json::from_str::<CdpError>(message).unwrap_or_else(|_| server_error(message.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::cdp_error;

    #[test]
    fn cdp_errors_keep_their_code() {
        let e = cdp_error(r#"{"code":-32601,"message":"'Foo.bar' wasn't found"}"#);
        assert_eq!((e.code, e.message.as_str()), (-32601, "'Foo.bar' wasn't found"));
        let e = cdp_error("Debugger is not attached to the tab with id: 4.");
        assert_eq!((e.code, e.message.as_str()), (-32000, "Debugger is not attached to the tab with id: 4."));
    }
}
