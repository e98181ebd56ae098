//! CDP both ways: daemon commands to `chrome.debugger.sendCommand`, and
//! `chrome.debugger.onEvent` to daemon events. The payloads (params, results, event params) stay
//! JS: params go to Chrome as the object `JSON.parse` made of the daemon's message, and answers
//! and events leave as `JSON.stringify` text joined around a header written in Rust
//! (`wire::hot`). They never enter wasm, which would copy them twice and validate them again.

use js_sys::JsString;
use tabtunnel_extension_core::early_events::{self, Kept};
use tabtunnel_wire::{hot, CdpError, CommandResult, FromExtension, RequestId, TabId};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use super::state::with;
use super::{daemon, tab_gate, workers};
use crate::chrome::{self, Debuggee};
use crate::js::{error_message, json_js};

#[wasm_bindgen]
extern "C" {
    /// A parsed daemon frame: `{"command": {...}}` for a command.
    type DaemonFrame;
    #[wasm_bindgen(method, getter)]
    fn command(this: &DaemonFrame) -> Option<WireCommand>;

    /// `wire::Command`, as JSON.parse made it.
    type WireCommand;
    #[wasm_bindgen(method, getter)]
    fn id(this: &WireCommand) -> Option<f64>;
    #[wasm_bindgen(method, getter, js_name = tabId)]
    fn tab_id(this: &WireCommand) -> Option<f64>;
    #[wasm_bindgen(method, getter, js_name = childSessionId)]
    fn child_session_id(this: &WireCommand) -> Option<String>;
    #[wasm_bindgen(method, getter)]
    fn method(this: &WireCommand) -> Option<String>;
    #[wasm_bindgen(method, getter)]
    fn params(this: &WireCommand) -> JsValue;

    /// The `source` of a `chrome.debugger.onEvent`.
    type EventSource;
    #[wasm_bindgen(method, getter, js_name = tabId)]
    fn tab_id(this: &EventSource) -> Option<f64>;
    #[wasm_bindgen(method, getter, js_name = sessionId)]
    fn session_id(this: &EventSource) -> Option<String>;
    #[wasm_bindgen(method, getter, js_name = targetId)]
    fn target_id(this: &EventSource) -> Option<String>;

    /// Event params, as far as [`super::placement::is_press`] looks.
    type InputParams;
    #[wasm_bindgen(method, getter, js_name = type)]
    fn event_type(this: &InputParams) -> Option<String>;
}

/// A command from the daemon (`wire::Command`), its params still the JS object.
struct IncomingCommand {
    pub id: RequestId,
    pub tab_id: TabId,
    child_session_id: Option<String>,
    method: String,
    /// An object, or `undefined` for none.
    params: JsValue,
}

impl IncomingCommand {
    /// A screenshot of the tab's page (not of a child), which must be painted to be taken.
    fn is_page_screenshot(&self) -> bool {
        self.method == "Page.captureScreenshot" && self.child_session_id.is_none()
    }

    /// The command in a parsed daemon frame; `None` if the frame is something else.
    fn read(frame: &JsValue) -> Option<IncomingCommand> {
        if !frame.is_object() {
            return None;
        }
        let command = frame.unchecked_ref::<DaemonFrame>().command()?;
        Some(IncomingCommand {
            id: command.id()? as RequestId,
            tab_id: command.tab_id()? as TabId,
            child_session_id: command.child_session_id(),
            method: command.method()?,
            params: command.params(),
        })
    }
}

/// A daemon frame, parsed by JS: a command is run (true), anything else is not one (false).
pub fn receive(generation: u64, frame: &JsValue) -> bool {
    let Some(command) = IncomingCommand::read(frame) else { return false };
    if command.is_page_screenshot() {
        super::placement::bring_forward_first(command.tab_id);
    }
    // Taken now, in arrival order: a command waits only for steps begun before it.
    let gate = tab_gate::reset_gate(command.tab_id);
    let epoch = tab_gate::epoch(command.tab_id);
    // Only while a panel shows pictures: the agent's picture is taken again soon.
    if daemon::command_started() {
        daemon::acted(command.tab_id);
    }
    spawn_local(run_command(generation, command, gate, epoch));
    true
}

pub fn listen() {
    let cb = Closure::<dyn FnMut(JsValue, String, JsValue)>::new(on_debugger_event);
    chrome::on_debugger_event(&cb);
    cb.forget();
}

/// One `chrome.debugger.onEvent`: to the gesture guard, then to the daemon. A tab attached
/// with the guard armed but not yet announced (`sharing::add`) keeps its events for then: the
/// guard's `Fetch.requestPaused` for a popup's first request came in that gap and was dropped,
/// so the popup never loaded and every command to it waited (one adoption in a few, loaded).
pub fn on_debugger_event(source: JsValue, method: String, params: JsValue) {
    let events = source.unchecked_ref::<EventSource>();
    let tab_id = match events.tab_id().map(|t| t as TabId) {
        Some(tab_id) if with(|w| w.shared.contains_key(&tab_id)) => tab_id,
        Some(tab_id) => {
            let kept = with(|w| w.early_events.keep(tab_id, (source, method, params)));
            if kept == (Kept::Dropped { first: true }) {
                warn!("tab {tab_id}: dropping events past {} before it was announced", early_events::LIMIT);
            }
            return;
        }
        None => match events.target_id().and_then(|t| workers::handle_of(&t)) {
            Some(handle) => handle,
            None => return,
        },
    };
    let session = events.session_id();
    if super::gestures::on_event(tab_id, session.as_deref(), &method, &params) {
        return;
    }
    let Some(params) = json_js(&params) else {
        warn!("dropping {method}: params are not JSON");
        return;
    };
    let head = hot::event_head(tab_id, session.as_deref(), &method);
    daemon::send_event(JsString::from(head).concat(&params).concat(&hot::TAIL.into()));
}

/// Runs one command; always answers, since a client waits for every id. `gate` is a step of
/// the tab in progress (a reset, a screenshot's bring-forward: [`super::tab_gate::exclusively`])
/// that the command must wait for.
/// `epoch` is the tab's session generation when the command arrived (see `tab_gate::epoch`).
async fn run_command(generation: u64, command: IncomingCommand, gate: Option<js_sys::Promise>, epoch: u64) {
    let id = command.id;
    if let Some(gate) = gate {
        let _ = wasm_bindgen_futures::JsFuture::from(gate).await;
    }
    let outcome = outcome(command, epoch).await;
    daemon::command_done();
    match outcome {
        Ok(result) => {
            let frame =
                JsString::from(hot::command_result_head(id)).concat(&result).concat(&hot::TAIL.into());
            daemon::send_text_on(generation, frame);
        }
        Err(error) => {
            daemon::send_on(generation, &FromExtension::CommandResult(CommandResult::err(id, error)))
        }
    }
}

/// What `chrome.debugger` made of the command, as JSON text; anything it or the params threw is
/// a CDP error.
async fn outcome(command: IncomingCommand, epoch: u64) -> Result<JsString, CdpError> {
    let IncomingCommand { tab_id, child_session_id, method, params, .. } = command;
    with(|w| w.epochs.check(tab_id, epoch)).map_err(|closed| server_error(closed.into()))?;
    let worker = match workers::is_worker(tab_id) {
        true => Some(workers::attached(tab_id).await.map_err(server_error)?),
        false if with(|w| w.shared.contains_key(&tab_id)) => None,
        false => return Err(server_error(format!("Tab {tab_id} is not shared"))),
    };
    let to = worker.as_deref().map_or(Debuggee::Tab(tab_id), Debuggee::Target);
    // The daemon forwards only objects, and chrome.debugger throws on the rest.
    if !(params.is_undefined() || params.is_object() && !js_sys::Array::is_array(&params)) {
        return Err(invalid_params("params must be a JSON object"));
    }
    if method == "Page.navigateToHistoryEntry" && child_session_id.is_none() && worker.is_none() {
        if let Some(why) = super::web_only::history_entry_refusal(tab_id, &params).await {
            return Err(CdpError {
                code: -32000,
                message: format!("refused by tabtunnel: {why}"),
                data: None,
            });
        }
    }
    if worker.is_none() {
        // Checked last before it is sent, with no wait between: no command of a client runs
        // in a tab being let go (it could put the agent's code in its new document).
        if with(|w| w.shared.is_leaving(tab_id)) {
            return Err(server_error(format!("Tab {tab_id} is being unshared")));
        }
        with(|w| w.shared.drove(tab_id, &method));
    }
    super::gestures::command_sent(tab_id, child_session_id.as_deref(), &method, &params)?;
    let event_type =
        || params.dyn_ref::<js_sys::Object>().and_then(|p| p.unchecked_ref::<InputParams>().event_type());
    if super::placement::is_press(&method, event_type) {
        super::placement::agent_pressing(tab_id);
    }
    match chrome::send_command_to(to, child_session_id.as_deref(), &method, &params).await {
        Ok(value) => json_js(&value).ok_or_else(|| server_error(format!("{method} returned no JSON"))),
        Err(e) => Err(cdp_error(&error_message(&e))),
    }
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
