//! The gesture guard's edge in the browser (the decisions are the daemon's: `core/src/gestures/`):
//!
//! - **Arming**: every tab the worker attaches, and each frame and worker Chrome attaches under
//!   it, pauses the requests that can write (`wire::gestures::GUARD_RESOURCE_TYPES`) from the
//!   start, and auto-attaches its children waiting for the debugger, so none runs unarmed.
//!   Paused reads go on at once, here, unless a client intercepts that target too; paused
//!   writes go to the daemon.
//! - **Reading a page** (`BrowserOp::Inspect`, in steps: `inspect.rs`): a hit test or the
//!   focus, then `gesture_facts.js` in an isolated world of ours, named at random per worker.
//!   Its contexts are kept from clients: their creation events are dropped and commands naming
//!   them are refused, so no agent can change how the page is read.
//! - **Clicks**: every document of a shared tab gets `gesture_clicks.js` in our world at its
//!   start, which remembers the element its last click acted on (a script's `el.click()` too);
//!   a write read afterwards is judged with it. Its identifier is kept from clients' removal.
//! - **No write slips out**: Chrome lets every paused request go when the debugger detaches, so
//!   before the worker detaches a tab (unsharing, a reset, the kill switch) it fails the writes
//!   still held there, and it fails them all when the daemon connection is lost.
//! - **The picture**: a question about a gesture gets a screenshot of the element, shown in the
//!   side panel, and beside the answer in the agent's history; it never leaves the browser.

use serde_json::{json, Value};
use tabtunnel_extension_core::gestures::{is_read, HeldWrite, OurEvent, Paused};
use tabtunnel_wire::gestures::guard_fetch_patterns;
use tabtunnel_wire::{ApprovalRequest, CdpError, TabId};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use super::panel_state::broadcast;
use super::state::with;
use super::{late_documents, tab_gate};
use crate::chrome;
use crate::js::{error_message, sleep, to_js, within};

pub(super) const FACTS_JS: &str = include_str!("gesture_facts.js");
/// The click hook every document of a shared tab gets in our world, before its own scripts.
const CLICKS_JS: &str = include_str!("gesture_clicks.js");
/// How long a picture may take (a tab in a background window paints nothing).
const PICTURE_TIMEOUT_MS: u32 = 2_000;
/// Room around the element in its picture, and the largest picture.
const PICTURE_MARGIN: f64 = 24.0;
const PICTURE_MAX: (f64, f64) = (720.0, 360.0);

pub(super) fn random() -> u64 {
    (js_sys::Math::random() * 1e15) as u64 ^ ((js_sys::Math::random() * 1e15) as u64) << 12
}

fn world_name() -> String {
    with(|w| w.gestures.world_name(random))
}

/// A script of ours, with the `sourceURL` that keeps it from clients' `Debugger`.
fn our_script(source: &str) -> String {
    with(|w| w.gestures.our_script(source, random))
}

fn get(value: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(value, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

/// A field of CDP params by a dotted path (`callFrames.0.location.scriptId`), as text (numbers
/// too).
fn field(params: &JsValue, path: &str) -> Option<String> {
    let value = path.split('.').try_fold(params.clone(), |v, key| (v.is_object()).then(|| get(&v, key)))?;
    value.as_string().or_else(|| value.as_f64().map(|n| (n as i64).to_string()))
}

/// JavaScript's `new RegExp(pattern).test(text)`; a pattern it refuses matches nothing (V8's
/// breakpoints refuse it too).
fn regex_matches(pattern: &str, text: &str) -> bool {
    let Ok(class) = js_sys::Reflect::get(&js_sys::global(), &"RegExp".into()) else { return false };
    let args = js_sys::Array::of1(&pattern.into());
    match js_sys::Reflect::construct(class.unchecked_ref::<js_sys::Function>(), &args) {
        Ok(regex) => regex.unchecked_into::<js_sys::RegExp>().test(text),
        Err(_) => false,
    }
}

fn get_str(value: &JsValue, key: &str) -> Option<String> {
    get(value, key).as_string()
}

/// The guard's interception and auto-attach on a tab just attached, before anything else runs
/// on its session.
pub async fn arm(tab_id: TabId) -> Result<(), String> {
    arm_target(tab_id, None, true).await
}

/// `documents`: a page or frame (a worker has none), which gets the click hook in our world
/// (the document it has now, and every next one, before the page's scripts). Chrome runs such
/// a script only while `Page` is on for the session, so `Page` is turned on with it and stays
/// on (the daemon never passes a client's `Page.disable` on: `held_by_guard`). The hook is sent
/// before arming ends, so it comes before any client's command, but not waited for
/// (`hook_sent`): a popup whose initial empty document was replaced while the hook ran in it
/// was seen never to answer, and its adoption hung with it.
async fn arm_target(tab_id: TabId, session: Option<&str>, documents: bool) -> Result<(), String> {
    let fetch = json!({ "patterns": guard_fetch_patterns() });
    if session.is_none() {
        late_documents::enabling(tab_id, &fetch);
        late_documents::arming(tab_id);
    }
    let fetch = to_js(&fetch);
    let auto = to_js(&json!({ "autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true }));
    if documents {
        let hook = to_js(
            &json!({ "source": our_script(CLICKS_JS), "worldName": world_name(), "runImmediately": true }),
        );
        with(|w| w.gestures.hook_sent(tab_id, session));
        let session = session.map(str::to_owned);
        // Sent once this function first waits (a microtask): before any answer of Chrome's comes.
        spawn_local(async move {
            let session = session.as_deref();
            // `join!` sends them in this order (one session's commands run in order).
            let no_params = to_js(&json!({}));
            let (page_on, hooked) = futures_util::join!(
                chrome::send_command(tab_id, session, "Page.enable", &no_params),
                chrome::send_command(tab_id, session, "Page.addScriptToEvaluateOnNewDocument", &hook),
            );
            if let Err(e) = page_on {
                warn!("tab {tab_id}: Page stays off, new documents get no click hook: {}", error_message(&e));
            }
            // Without the hook the guard still holds what writes carry and what forms say.
            let identifier = match hooked {
                Ok(answer) => get_str(&answer, "identifier"),
                Err(e) => {
                    warn!("tab {tab_id}: no click hook: {}", error_message(&e));
                    None
                }
            };
            with(|w| w.gestures.hook_answered(tab_id, session, identifier));
        });
    }
    let intercepting = async {
        let answer = chrome::send_command(tab_id, session, "Fetch.enable", &fetch).await;
        // As soon as it is answered: a document may commit before the auto-attach's answer.
        if session.is_none() {
            late_documents::armed(tab_id, answer.is_ok()).await;
        }
        answer
    };
    let (a, b) = futures_util::join!(
        intercepting,
        chrome::send_command(tab_id, session, "Target.setAutoAttach", &auto)
    );
    a.and(b).map(drop).map_err(|e| format!("could not arm the gesture guard: {}", error_message(&e)))
}

/// An event of a shared tab, before it goes to the daemon: `true` when it stays here.
pub fn on_event(tab_id: TabId, session: Option<&str>, method: &str, params: &JsValue) -> bool {
    if method.starts_with("Debugger.")
        || matches!(
            method,
            "Runtime.consoleAPICalled" | "Runtime.exceptionThrown" | "Runtime.executionContextDestroyed"
        )
    {
        match with(|w| w.gestures.event(tab_id, session, method, |path| field(params, path))) {
            OurEvent::Deliver => {}
            OurEvent::Hide => return true,
            OurEvent::HideAndResume => {
                send_unanswered(tab_id, session, "Debugger.resume", json!({}));
                return true;
            }
        }
    }
    match method {
        "Fetch.requestPaused" => request_paused(tab_id, session, params),
        "Target.attachedToTarget" => {
            // Frames and dedicated workers pause at start (waitForDebuggerOnStart): arm them
            // first; the daemon lets them run. Service and shared workers are not the tab's
            // alone (the human's tabs use them too), and are not paused here.
            let info = get(params, "targetInfo");
            let kind = get_str(&info, "type").unwrap_or_default();
            let Some(child) = get_str(params, "sessionId") else { return false };
            match kind.as_str() {
                "iframe" | "worker" => {
                    let documents = kind == "iframe";
                    spawn_local(async move {
                        if let Err(e) = arm_target(tab_id, Some(&child), documents).await {
                            warn!("tab {tab_id} child {child}: {e}");
                        }
                    });
                    false
                }
                // Attached under the page only by the guard's auto-attach, such a worker would
                // never end (Chrome does not stop an attached one). Clients get it as a target
                // of its own (`workers.rs`), so its session here is let go at once.
                "service_worker" | "shared_worker" => {
                    let params = json!({ "sessionId": child });
                    send_unanswered(tab_id, session, "Target.detachFromTarget", params);
                    true
                }
                _ => false,
            }
        }
        "Target.detachedFromTarget" => {
            if let Some(child) = get_str(params, "sessionId") {
                with(|w| w.gestures.child_detached(tab_id, &child));
            }
            false
        }
        "Runtime.executionContextCreated" => {
            let context = get(params, "context");
            let Some(name) = get_str(&context, "name") else { return false };
            let id = get(&context, "id").as_f64().map(|i| (i as i64).to_string());
            let ids = id.into_iter().chain(get_str(&context, "uniqueId"));
            // Ours is never announced to a client.
            with(|w| w.gestures.context_created(tab_id, &name, ids))
        }
        _ => false,
    }
}

/// A command of ours whose answer nobody waits for (a failure is logged).
fn send_unanswered(tab_id: TabId, session: Option<&str>, method: &'static str, params: Value) {
    let session = session.map(str::to_owned);
    spawn_local(async move {
        if let Err(e) = chrome::send_command(tab_id, session.as_deref(), method, &to_js(&params)).await {
            warn!("tab {tab_id}: {method}: {}", error_message(&e));
        }
    });
}

fn request_paused(tab_id: TabId, session: Option<&str>, params: &JsValue) -> bool {
    let method = get_str(&get(params, "request"), "method").unwrap_or_default();
    let response_stage = !get(params, "responseStatusCode").is_undefined()
        || !get(params, "responseErrorReason").is_undefined();
    let Some(id) = get_str(params, "requestId") else { return false };
    let read = is_read(&method, response_stage);
    let (method, params) = match with(|w| w.gestures.paused(tab_id, session, read, id.clone())) {
        Paused::ToDaemon => return false,
        Paused::ContinueHere => ("Fetch.continueRequest", json!({ "requestId": id })),
        Paused::FailHere => {
            ("Fetch.failRequest", json!({ "requestId": id, "errorReason": "BlockedByClient" }))
        }
    };
    let session = session.map(str::to_owned);
    spawn_local(async move {
        let _ = chrome::send_command(tab_id, session.as_deref(), method, &to_js(&params)).await;
    });
    true
}

/// A command about to reach Chrome for a client (or the daemon): refused if it names one of our
/// worlds or scripts (`tabtunnel_extension_core::gestures::Gestures::command_sent`); a paused
/// request it answers is no longer held.
pub fn command_sent(
    tab_id: TabId,
    session: Option<&str>,
    method: &str,
    params: &JsValue,
) -> Result<(), CdpError> {
    with(|w| w.gestures.command_sent(tab_id, session, method, |path| field(params, path), regex_matches))
}

/// Fails the writes still held on a tab before the debugger lets go of it (Chrome would send
/// them on).
pub async fn fail_held(tab_id: TabId) {
    fail(tab_id, with(|w| w.gestures.take_held(tab_id))).await;
}

/// A tab's document is replaced as it leaves its agent: what it holds fails now, and its writes
/// as they come until [`replaced`] (`tabtunnel_extension_core::gestures::Gestures::replacing`).
pub async fn replacing(tab_id: TabId) {
    fail(tab_id, with(|w| w.gestures.replacing(tab_id))).await;
}

/// A replacement of the tab's document ended.
pub fn replaced(tab_id: TabId) {
    with(|w| w.gestures.replaced(tab_id));
}

/// Each answered within this, so that a tab that answers nothing holds up no leave.
const FAIL_MS: u32 = 2_000;

async fn fail(tab_id: TabId, held: impl IntoIterator<Item = HeldWrite>) {
    for (session, id) in held {
        let params = to_js(&json!({ "requestId": id, "errorReason": "BlockedByClient" }));
        let _ =
            within(FAIL_MS, chrome::send_command(tab_id, session.as_deref(), "Fetch.failRequest", &params))
                .await;
    }
}

/// The daemon is gone, and its questions with it: every held write fails.
pub fn fail_all_held() {
    let tabs: Vec<TabId> = with(|w| w.gestures.held_tabs());
    for tab_id in tabs {
        spawn_local(fail_held(tab_id));
    }
}

/// A tab is no longer ours: forget what we knew of it.
pub fn forget(tab_id: TabId) {
    with(|w| {
        w.gestures.forget(tab_id);
        // A world being made for a read is not kept either.
        w.page_reads.forgotten(tab_id);
    });
}

/// A tab closed: its held writes went with it.
pub fn tab_closed(tab_id: TabId) {
    with(|w| w.gestures.tab_closed(tab_id));
}

/// A tab leaving its agent: the guard's patterns only, so that no request of the new document
/// waits for a client (none may answer any more, and Chrome runs no command on a tab while its
/// navigation is paused).
pub async fn guard_only(tab_id: TabId) -> Result<(), String> {
    with(|w| w.gestures.intercept(tab_id, None, false));
    let params = json!({ "patterns": guard_fetch_patterns() });
    late_documents::enabling(tab_id, &params);
    chrome::send_command(tab_id, None, "Fetch.enable", &to_js(&params))
        .await
        .map(drop)
        .map_err(|e| error_message(&e))
}

/// [`BrowserOp::Intercept`]: the guard's patterns plus the clients'.
pub async fn intercept(
    tab_id: TabId,
    session: Option<String>,
    client_patterns: Vec<Value>,
    handle_auth_requests: bool,
) -> Result<Value, String> {
    wait_for_tab(tab_id).await;
    let clients = !client_patterns.is_empty() || handle_auth_requests;
    with(|w| w.gestures.intercept(tab_id, session.as_deref(), clients));
    let mut patterns = guard_fetch_patterns();
    patterns.extend(client_patterns);
    let params = json!({ "patterns": patterns, "handleAuthRequests": handle_auth_requests });
    if session.is_none() {
        late_documents::enabling(tab_id, &params);
    }
    chrome::send_command(tab_id, session.as_deref(), "Fetch.enable", &to_js(&params))
        .await
        .map_err(|e| error_message(&e))?;
    Ok(json!({}))
}

/// A step on the tab (a reset, a screenshot's bring-forward) that this must come after.
pub(super) async fn wait_for_tab(tab_id: TabId) {
    if let Some(gate) = tab_gate::reset_gate(tab_id) {
        let _ = wasm_bindgen_futures::JsFuture::from(gate).await;
    }
}

/// A question about a gesture: its element's picture, for the side panel.
pub fn picture(request: &ApprovalRequest) {
    let (Some(tab_id), Some(rect)) = (request.tab_id, request.gesture.as_ref().and_then(|g| g.rect)) else {
        log!("no picture for question {}: {:?}", request.id, request.gesture.as_ref().map(|g| g.rect));
        return;
    };
    let id = request.id;
    spawn_local(async move {
        let width = (rect.width + 2.0 * PICTURE_MARGIN).clamp(1.0, PICTURE_MAX.0);
        let height = (rect.height + 2.0 * PICTURE_MARGIN).clamp(1.0, PICTURE_MAX.1);
        let clip = json!({
            "x": (rect.x + rect.width / 2.0 - width / 2.0).max(0.0),
            "y": (rect.y + rect.height / 2.0 - height / 2.0).max(0.0),
            "width": width, "height": height, "scale": 1
        });
        let params = to_js(&json!({ "format": "jpeg", "quality": 80, "clip": clip }));
        let shot = chrome::send_command(tab_id, None, "Page.captureScreenshot", &params);
        let timeout = sleep(PICTURE_TIMEOUT_MS);
        futures_util::pin_mut!(shot, timeout);
        let data = match futures_util::future::select(shot, timeout).await {
            futures_util::future::Either::Left((Ok(result), _)) => get_str(&result, "data"),
            futures_util::future::Either::Left((Err(e), _)) => {
                warn!("no picture for question {id}: {}", error_message(&e));
                None
            }
            futures_util::future::Either::Right(_) => {
                warn!("no picture for question {id}: the tab did not paint in time");
                None
            }
        };
        let Some(data) = data else { return };
        let waiting = with(|w| {
            let waiting = w.approvals.iter().any(|r| r.id == id);
            if waiting {
                w.gestures.pictures.insert(id, format!("data:image/jpeg;base64,{data}"));
            }
            waiting
        });
        if waiting {
            broadcast();
        }
    });
}

/// A question was answered or withdrawn: its picture stays for the agent's history.
pub fn question_settled(id: u64) {
    with(|w| w.gestures.question_settled(id));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The selector of what acts, as one script has it.
    fn acts(script: &str) -> String {
        let start = script.find("const ACTS = ").expect("an ACTS selector");
        let end = start + script[start..].find(";\n").expect("its end");
        script[start..end].to_owned()
    }

    #[test]
    fn the_click_hook_and_the_reader_agree_on_what_acts() {
        // A click the hook does not keep lends no label; one it keeps and the reader does not
        // resolve is lost the same way.
        assert_eq!(acts(CLICKS_JS).trim(), acts(FACTS_JS).trim());
    }
}
