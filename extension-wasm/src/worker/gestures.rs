//! The gesture guard's edge in the browser (the decisions are the daemon's: `core/src/gestures/`):
//!
//! - **Arming**: every tab the worker attaches, and each frame and worker Chrome attaches under
//!   it, pauses the requests that can write (`wire::gestures::GUARD_RESOURCE_TYPES`) from the
//!   start, and auto-attaches its children waiting for the debugger, so none runs unarmed.
//!   Paused reads go on at once, here, unless a client intercepts that target too; paused
//!   writes go to the daemon.
//! - **Reading a page** ([`BrowserOp::Inspect`]): a hit test or the focus, then
//!   `gesture_facts.js` in an isolated world of ours, named at random per worker. Its contexts
//!   are kept from clients: their creation events are dropped and commands naming them are
//!   refused, so no agent can change how the page is read.
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
use tabtunnel_wire::gestures::{guard_fetch_patterns, InspectTarget};
use tabtunnel_wire::{ApprovalRequest, CdpError, TabId};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use super::panel_state::broadcast;
use super::state::with;
use super::tab_gate;
use crate::chrome;
use crate::js::{error_message, from_js, sleep, to_js};

const FACTS_JS: &str = include_str!("gesture_facts.js");
/// The click hook every document of a shared tab gets in our world, before its own scripts.
const CLICKS_JS: &str = include_str!("gesture_clicks.js");
/// How long a picture may take (a tab in a background window paints nothing).
const PICTURE_TIMEOUT_MS: u32 = 2_000;
/// Room around the element in its picture, and the largest picture.
const PICTURE_MARGIN: f64 = 24.0;
const PICTURE_MAX: (f64, f64) = (720.0, 360.0);

fn random() -> u64 {
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
    let fetch = to_js(&json!({ "patterns": guard_fetch_patterns() }));
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
    let (a, b) = futures_util::join!(
        chrome::send_command(tab_id, session, "Fetch.enable", &fetch),
        chrome::send_command(tab_id, session, "Target.setAutoAttach", &auto),
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

/// The tab's new document is in.
pub fn replaced(tab_id: TabId) {
    with(|w| w.gestures.replaced(tab_id));
}

async fn fail(tab_id: TabId, held: impl IntoIterator<Item = HeldWrite>) {
    for (session, id) in held {
        let params = to_js(&json!({ "requestId": id, "errorReason": "BlockedByClient" }));
        let _ = chrome::send_command(tab_id, session.as_deref(), "Fetch.failRequest", &params).await;
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
    with(|w| w.gestures.forget(tab_id));
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
    let params = to_js(&json!({ "patterns": guard_fetch_patterns() }));
    chrome::send_command(tab_id, None, "Fetch.enable", &params).await.map(drop).map_err(|e| error_message(&e))
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
    let params = to_js(&json!({ "patterns": patterns, "handleAuthRequests": handle_auth_requests }));
    chrome::send_command(tab_id, session.as_deref(), "Fetch.enable", &params)
        .await
        .map_err(|e| error_message(&e))?;
    Ok(json!({}))
}

/// A step on the tab (a reset, a screenshot's bring-forward) that this must come after.
async fn wait_for_tab(tab_id: TabId) {
    if let Some(gate) = tab_gate::reset_gate(tab_id) {
        let _ = wasm_bindgen_futures::JsFuture::from(gate).await;
    }
}

/// [`BrowserOp::Inspect`]: what the page shows where the agent acts.
pub async fn inspect(
    tab_id: TabId,
    session: Option<String>,
    target: InspectTarget,
    selectors: Vec<String>,
) -> Result<Value, String> {
    wait_for_tab(tab_id).await;
    let session = session.as_deref();
    let send = |method: &'static str, params: Value| async move {
        chrome::send_command(tab_id, session, method, &to_js(&params)).await.map_err(|e| error_message(&e))
    };
    let call = |context: Option<i64>, object: Option<String>, args: Value| {
        let mut params = json!({ "functionDeclaration": our_script(FACTS_JS), "arguments": args, "returnByValue": true, "silent": true });
        if let Some(object) = object {
            params["objectId"] = json!(object);
        } else {
            params["executionContextId"] = json!(context);
        }
        send("Runtime.callFunctionOn", params)
    };
    let (frame_id, object, mode, request) = match target {
        InspectTarget::Point { x, y } => {
            // Input takes the point in the viewport, the hit test in the document: add the
            // scroll offset (measured: a scrolled page hit what lay above the button).
            let metrics = send("Page.getLayoutMetrics", json!({})).await?;
            let viewport = get(&metrics, "cssVisualViewport");
            let (dx, dy) = (
                get(&viewport, "pageX").as_f64().unwrap_or(0.0),
                get(&viewport, "pageY").as_f64().unwrap_or(0.0),
            );
            let hit = send(
                "DOM.getNodeForLocation",
                json!({ "x": (x + dx).round(), "y": (y + dy).round(), "includeUserAgentShadowDOM": false, "ignorePointerEventsNone": true }),
            )
            .await?;
            let frame = get_str(&hit, "frameId").ok_or("no frame at that point")?;
            let node = get(&hit, "backendNodeId").as_f64().ok_or("no node at that point")?;
            (frame, Some(node), "point", Value::Null)
        }
        InspectTarget::Focus => (main_frame(tab_id, session).await?, None, "focus", Value::Null),
        InspectTarget::Request { frame_id, url, method, method_override } => (
            frame_id,
            None,
            "request",
            json!({ "url": url, "method": method, "methodOverride": method_override }),
        ),
    };
    let args = json!([{ "value": mode }, { "value": selectors }, { "value": request }]);
    // A context of ours may have gone with its document: make a new one once. (Chrome sends no
    // event we could forget it by unless Runtime is on, which would cost every page its events.)
    for attempt in 0..2 {
        let context = world(tab_id, session, &frame_id, attempt > 0).await?;
        let outcome = match object {
            Some(node) => {
                let resolved =
                    send("DOM.resolveNode", json!({ "backendNodeId": node, "executionContextId": context }))
                        .await;
                match resolved {
                    Ok(resolved) => {
                        let object_id =
                            get_str(&get(&resolved, "object"), "objectId").ok_or("node not resolved")?;
                        let result = call(None, Some(object_id.clone()), args.clone()).await;
                        // Nobody waits for the release.
                        let release = to_js(&json!({ "objectId": object_id }));
                        let owned = session.map(str::to_owned);
                        spawn_local(async move {
                            let _ = chrome::send_command(
                                tab_id,
                                owned.as_deref(),
                                "Runtime.releaseObject",
                                &release,
                            )
                            .await;
                        });
                        result
                    }
                    Err(e) => Err(e),
                }
            }
            None => call(Some(context), None, args.clone()).await,
        };
        match outcome {
            Ok(result) => {
                let thrown = get(&get(&result, "exceptionDetails"), "exception");
                if !thrown.is_undefined() {
                    return Err(format!(
                        "reading the page threw: {}",
                        get_str(&thrown, "description").unwrap_or_default()
                    ));
                }
                let value = get(&get(&result, "result"), "value");
                return from_js::<Value>(&value).ok_or_else(|| "the page gave no facts".to_owned());
            }
            // Most likely our world went with its document (a frame keeps its id across
            // navigations): once more in a new one.
            Err(_) if attempt == 0 => continue,
            Err(e) => return Err(e),
        }
    }
    Err("no context to read the page in".into())
}

/// [`BrowserOp::Resend`]: a write the guard answered at once, sent again from its frame as it
/// was, by our world's own prototypes (the page's scripts can neither intercept nor change it,
/// and see no submit event, as with `form.submit()`).
#[allow(clippy::too_many_arguments)]
pub async fn resend(
    tab_id: TabId,
    session: Option<String>,
    frame_id: &str,
    url: &str,
    method: &str,
    as_form: bool,
    headers: Vec<(String, String)>,
    body: Option<String>,
) -> Result<Value, String> {
    wait_for_tab(tab_id).await;
    let session = session.as_deref();
    let context = world(tab_id, session, frame_id, true).await?;
    let referrer = headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("referer")).map(|(_, v)| v.clone());
    let params = json!({
        "executionContextId": context,
        "functionDeclaration": our_script(RESEND_JS),
        "arguments": [
            { "value": url }, { "value": method }, { "value": as_form },
            { "value": headers }, { "value": body }, { "value": referrer },
        ],
        "silent": true,
    });
    chrome::send_command(tab_id, session, "Runtime.callFunctionOn", &to_js(&params))
        .await
        .map_err(|e| error_message(&e))?;
    Ok(json!({}))
}

const RESEND_JS: &str = "function (url, method, asForm, headers, body, referrer) {
  if (asForm) {
    const form = document.createElement('form');
    form.method = method.toLowerCase();
    form.action = url;
    form.acceptCharset = 'UTF-8';
    form.style.display = 'none';
    for (const [name, value] of new URLSearchParams(body || '')) {
      const input = document.createElement('input');
      input.type = 'hidden';
      input.name = name;
      input.value = value;
      form.append(input);
    }
    (document.body || document.documentElement).append(form);
    HTMLFormElement.prototype.submit.call(form);
    return;
  }
  const init = { method, headers, credentials: 'include', keepalive: false };
  if (body !== null && body !== undefined && method !== 'GET' && method !== 'HEAD') init.body = body;
  if (referrer) init.referrer = referrer;
  fetch(url, init).catch(() => {});
}";

/// The frame id of a target's main frame: a page's is its target id.
async fn main_frame(tab_id: TabId, session: Option<&str>) -> Result<String, String> {
    if session.is_none() {
        if let Some(id) = with(|w| w.shared.get(&tab_id).map(|t| t.target_id.clone())) {
            return Ok(id);
        }
    }
    let tree = chrome::send_command(tab_id, session, "Page.getFrameTree", &JsValue::UNDEFINED)
        .await
        .map_err(|e| error_message(&e))?;
    get_str(&get(&get(&tree, "frameTree"), "frame"), "id").ok_or_else(|| "no main frame".into())
}

/// Our isolated world in a frame, made when missing (or `fresh`).
async fn world(tab_id: TabId, session: Option<&str>, frame_id: &str, fresh: bool) -> Result<i64, String> {
    if !fresh {
        if let Some(id) = with(|w| w.gestures.world(tab_id, session, frame_id)) {
            return Ok(id);
        }
    }
    let name = world_name();
    let params = to_js(&json!({ "frameId": frame_id, "worldName": name, "grantUniveralAccess": false }));
    let made = chrome::send_command(tab_id, session, "Page.createIsolatedWorld", &params)
        .await
        .map_err(|e| error_message(&e))?;
    let id = get(&made, "executionContextId").as_f64().ok_or("no world made")? as i64;
    with(|w| w.gestures.world_made(tab_id, session, frame_id, id));
    Ok(id)
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
