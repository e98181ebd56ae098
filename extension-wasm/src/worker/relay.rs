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
    let Command { id, tab_id, child_session_id, method, params } = command;
    if let Some(gate) = gate {
        let _ = wasm_bindgen_futures::JsFuture::from(gate).await;
    }
    let result = if sharing::epoch(tab_id) != epoch {
        CommandResult::err(id, server_error("Target closed: the tab's debugger session was lost".into()))
    } else if with(|w| w.shared.contains_key(&tab_id)) {
        if method == "Page.captureScreenshot" && child_session_id.is_none() {
            super::placement::bring_forward(tab_id).await;
        }
        if super::placement::is_press(&method, params.as_ref().map_or("", |p| p.get())) {
            super::placement::agent_pressing(tab_id);
        }
        let params = match &params {
            Some(p) => js_sys::JSON::parse(p.get()).unwrap_or(JsValue::UNDEFINED),
            None => JsValue::UNDEFINED,
        };
        match chrome::send_command(tab_id, child_session_id.as_deref(), &method, &params).await {
            Ok(value) => match raw_json(&value) {
                Some(raw) => CommandResult::ok(id, raw),
                None => CommandResult::err(id, server_error(format!("{method} returned no JSON"))),
            },
            Err(e) => CommandResult::err(id, cdp_error(&error_message(&e))),
        }
    } else {
        CommandResult::err(id, server_error(format!("Tab {tab_id} is not shared")))
    };
    daemon::send_on(generation, &FromExtension::CommandResult(result));
}

/// A JS value as raw JSON; `undefined` (commands without a result) becomes `{}`.
fn raw_json(value: &JsValue) -> Option<Box<RawValue>> {
    let text = json_text(value).unwrap_or_else(|| "{}".into());
    RawValue::from_string(text).ok()
}

fn server_error(message: String) -> CdpError {
    CdpError { code: -32000, message, data: None }
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
