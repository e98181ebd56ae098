//! Hand-written bindings for the chrome.* APIs we use, plus thin typed wrappers. Promise-based
//! calls are `async` imports with `catch`, so a rejection (e.g. `chrome.runtime.lastError`)
//! becomes an `Err` instead of an exception.
//!
//! But wasm-bindgen's `catch` on an `async` import catches only the rejection: a synchronous
//! throw (Chrome's "No matching signature" for arguments it refuses) escapes it, and is left
//! behind for the next `catch` import to report as its own. Calls that can throw so are bound
//! as synchronous imports returning the promise, and awaited with [`settle`].

use serde::Deserialize;
use tabtunnel_wire::{TabId, WindowId};
use wasm_bindgen::prelude::*;

use crate::js::{error_message, from_js, to_js};

#[wasm_bindgen]
extern "C" {
    // chrome.debugger
    #[wasm_bindgen(js_namespace = ["chrome", "debugger"], js_name = attach, catch)]
    async fn debugger_attach(target: &JsValue, version: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "debugger"], js_name = detach, catch)]
    async fn debugger_detach(target: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "debugger"], js_name = sendCommand, catch)]
    fn debugger_send_command(
        target: &JsValue,
        method: &str,
        params: &JsValue,
    ) -> Result<js_sys::Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "debugger", "onEvent"], js_name = addListener)]
    pub fn on_debugger_event(cb: &Closure<dyn FnMut(JsValue, String, JsValue)>);
    #[wasm_bindgen(js_namespace = ["chrome", "debugger", "onDetach"], js_name = addListener)]
    pub fn on_debugger_detach(cb: &Closure<dyn FnMut(JsValue, String)>);
    #[wasm_bindgen(js_namespace = ["chrome", "debugger"], js_name = getTargets, catch)]
    async fn debugger_get_targets() -> Result<JsValue, JsValue>;

    // chrome.alarms
    #[wasm_bindgen(js_namespace = ["chrome", "alarms"], js_name = get, catch)]
    fn alarms_get(name: &str) -> Result<js_sys::Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "alarms"], js_name = create, catch)]
    fn alarms_create(name: &str, info: &JsValue) -> Result<js_sys::Promise, JsValue>;
    /// `(alarm)`
    #[wasm_bindgen(js_namespace = ["chrome", "alarms", "onAlarm"], js_name = addListener)]
    pub fn on_alarm(cb: &Closure<dyn FnMut(JsValue)>);

    // chrome.tabs
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = get, catch)]
    async fn tabs_get(tab_id: TabId) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = query, catch)]
    async fn tabs_query(query: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs", "onRemoved"], js_name = addListener)]
    pub fn on_tab_removed(cb: &Closure<dyn FnMut(TabId, JsValue)>);
    /// `(tabId, changeInfo, tab)`
    #[wasm_bindgen(js_namespace = ["chrome", "tabs", "onUpdated"], js_name = addListener)]
    pub fn on_tab_updated(cb: &Closure<dyn FnMut(TabId, JsValue, JsValue)>);
    /// `(tabId, {newWindowId, newPosition})`: the tab moved to another window.
    #[wasm_bindgen(js_namespace = ["chrome", "tabs", "onAttached"], js_name = addListener)]
    pub fn on_tab_attached(cb: &Closure<dyn FnMut(TabId, JsValue)>);
    #[wasm_bindgen(js_namespace = ["chrome", "tabs", "onActivated"], js_name = addListener)]
    pub fn on_tab_activated(cb: &Closure<dyn FnMut(JsValue)>);
    #[wasm_bindgen(js_namespace = ["chrome", "tabs", "onCreated"], js_name = addListener)]
    pub fn on_tab_created(cb: &Closure<dyn FnMut(JsValue)>);
    /// `({tabId, sourceTabId, sourceFrameId, url, ...})`: a page opened a tab.
    #[wasm_bindgen(js_namespace = ["chrome", "webNavigation", "onCreatedNavigationTarget"], js_name = addListener)]
    pub fn on_created_navigation_target(cb: &Closure<dyn FnMut(JsValue)>);
    /// `({tabId, frameId, url, ...})`: a frame is about to navigate (nothing loaded yet).
    #[wasm_bindgen(js_namespace = ["chrome", "webNavigation", "onBeforeNavigate"], js_name = addListener)]
    pub fn on_before_navigate(cb: &Closure<dyn FnMut(JsValue)>);
    /// `({tabId, frameId, url, ...})`: a frame's navigation committed.
    #[wasm_bindgen(js_namespace = ["chrome", "webNavigation", "onCommitted"], js_name = addListener)]
    pub fn on_navigation_committed(cb: &Closure<dyn FnMut(JsValue)>);
    /// `({tabId, frameId, error, ...})`: a frame's navigation failed or was dropped.
    #[wasm_bindgen(js_namespace = ["chrome", "webNavigation", "onErrorOccurred"], js_name = addListener)]
    pub fn on_navigation_error(cb: &Closure<dyn FnMut(JsValue)>);
    #[wasm_bindgen(js_namespace = ["chrome", "webNavigation"], js_name = getFrame, catch)]
    async fn web_navigation_get_frame(details: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = reload, catch)]
    async fn tabs_reload(tab_id: TabId, properties: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = create, catch)]
    async fn tabs_create(properties: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = remove, catch)]
    async fn tabs_remove(tab_id: TabId) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = update, catch)]
    async fn tabs_update(tab_id: TabId, properties: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = group, catch)]
    async fn tabs_group(options: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = ungroup, catch)]
    async fn tabs_ungroup(tab_id: TabId) -> Result<JsValue, JsValue>;

    // chrome.tabGroups
    #[wasm_bindgen(js_namespace = ["chrome", "tabGroups"], js_name = update, catch)]
    async fn tab_groups_update(group_id: i32, properties: &JsValue) -> Result<JsValue, JsValue>;

    // chrome.windows
    #[wasm_bindgen(js_namespace = ["chrome", "windows"], js_name = getCurrent, catch)]
    async fn windows_get_current() -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "windows"], js_name = getLastFocused, catch)]
    async fn windows_get_last_focused(options: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "windows", "onFocusChanged"], js_name = addListener)]
    pub fn on_window_focus_changed(cb: &Closure<dyn FnMut(WindowId)>);
    #[wasm_bindgen(js_namespace = ["chrome", "windows", "onRemoved"], js_name = addListener)]
    pub fn on_window_removed(cb: &Closure<dyn FnMut(WindowId)>);
    #[wasm_bindgen(js_namespace = ["chrome", "windows"], js_name = get, catch)]
    async fn windows_get(window_id: WindowId) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "windows"], js_name = create, catch)]
    async fn windows_create(properties: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "windows"], js_name = update, catch)]
    async fn windows_update(window_id: WindowId, properties: &JsValue) -> Result<JsValue, JsValue>;

    // chrome.extension
    #[wasm_bindgen(js_namespace = ["chrome", "extension"], js_name = isAllowedFileSchemeAccess, catch)]
    async fn extension_is_allowed_file_scheme_access() -> Result<JsValue, JsValue>;

    // chrome.runtime
    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = getURL)]
    pub fn runtime_get_url(path: &str) -> String;
    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = getManifest)]
    fn runtime_get_manifest() -> JsValue;
    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = sendMessage, catch)]
    async fn runtime_send_message(message: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = sendNativeMessage, catch)]
    fn runtime_send_native_message(host: &str, message: &JsValue) -> Result<js_sys::Promise, JsValue>;
    /// `(message, sender, sendResponse) -> keepChannelOpen`
    #[wasm_bindgen(js_namespace = ["chrome", "runtime", "onMessage"], js_name = addListener)]
    pub fn on_runtime_message(cb: &Closure<dyn FnMut(JsValue, JsValue, js_sys::Function) -> bool>);
    /// A page of ours opened a [`Port`] to the worker.
    #[wasm_bindgen(js_namespace = ["chrome", "runtime", "onConnect"], js_name = addListener)]
    pub fn on_runtime_connect(cb: &Closure<dyn FnMut(Port)>);
    /// `chrome.runtime.connect({name})`: a port to the worker, open as long as the page is.
    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = connect)]
    pub fn runtime_connect(info: &JsValue) -> Port;

    /// `chrome.runtime.Port`.
    pub type Port;
    #[wasm_bindgen(method, getter)]
    pub fn name(this: &Port) -> String;
    #[wasm_bindgen(method, getter)]
    pub fn sender(this: &Port) -> JsValue;
    #[wasm_bindgen(method, getter, js_name = onDisconnect)]
    pub fn on_disconnect(this: &Port) -> PortEvent;
    pub type PortEvent;
    #[wasm_bindgen(method, js_name = addListener)]
    pub fn add_listener(this: &PortEvent, cb: &js_sys::Function);

    // chrome.storage
    #[wasm_bindgen(js_namespace = ["chrome", "storage", "local"], js_name = get, catch)]
    async fn storage_local_get(keys: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "storage", "local"], js_name = set, catch)]
    async fn storage_local_set(items: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "storage", "session"], js_name = get, catch)]
    async fn storage_session_get(keys: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "storage", "session"], js_name = set, catch)]
    async fn storage_session_set(items: &JsValue) -> Result<JsValue, JsValue>;

    // chrome.declarativeNetRequest
    #[wasm_bindgen(js_namespace = ["chrome", "declarativeNetRequest"], js_name = updateSessionRules, catch)]
    async fn dnr_update_session_rules(options: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "declarativeNetRequest"], js_name = getSessionRules, catch)]
    async fn dnr_get_session_rules() -> Result<JsValue, JsValue>;

    // chrome.commands
    #[wasm_bindgen(js_namespace = ["chrome", "commands", "onCommand"], js_name = addListener)]
    pub fn on_command(cb: &Closure<dyn FnMut(String)>);

    // chrome.sidePanel
    #[wasm_bindgen(js_namespace = ["chrome", "sidePanel"], js_name = setPanelBehavior, catch)]
    async fn side_panel_set_panel_behavior(behavior: &JsValue) -> Result<JsValue, JsValue>;

    // Not chrome.*, but browser globals the worker needs.
    #[wasm_bindgen(js_namespace = ["navigator", "userAgentData"], js_name = getHighEntropyValues, catch)]
    async fn ua_high_entropy_values(hints: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = fetch, catch)]
    async fn global_fetch(url: &str) -> Result<JsValue, JsValue>;
}

/// What we read from `chrome.tabs.Tab`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tab {
    pub id: Option<TabId>,
    pub window_id: WindowId,
    #[serde(default)]
    pub url: String,
    /// Set while a navigation is committing; the URL the tab is about to show.
    #[serde(default)]
    pub pending_url: String,
    #[serde(default)]
    pub title: String,
    /// `loading`, `complete`, or `unloaded` (no renderer process: discarded, crashed, or never
    /// started).
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub active: bool,
    /// `-1` when the tab is in no group.
    #[serde(default = "no_group")]
    pub group_id: i32,
    /// The size of the tab's contents, in CSS pixels.
    pub width: Option<u32>,
    pub height: Option<u32>,
    /// The tab strip's opener (not necessarily the page that opened it).
    pub opener_tab_id: Option<TabId>,
}

/// `chrome.tabGroups.TAB_GROUP_ID_NONE`
pub const NO_GROUP: i32 = -1;

fn no_group() -> i32 {
    NO_GROUP
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Window {
    pub id: Option<WindowId>,
    #[serde(rename = "type", default)]
    pub kind: String,
    /// `normal`, `minimized`, `maximized`, `fullscreen` or `locked-fullscreen`.
    #[serde(default)]
    pub state: String,
    pub left: Option<i32>,
    pub top: Option<i32>,
    pub width: Option<i32>,
    pub height: Option<i32>,
    #[serde(default)]
    pub tabs: Vec<Tab>,
}

/// The `source` of debugger events: the tab, and the child session for OOPIFs and workers.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DebuggerSource {
    pub tab_id: Option<TabId>,
    /// Set instead of `tab_id` for a target attached by id (a worker).
    pub target_id: Option<String>,
    pub session_id: Option<String>,
}

/// One of `chrome.debugger.getTargets()`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DebuggerTarget {
    pub id: String,
    /// `page`, `background_page`, `worker` (service and shared workers alike) or `other`.
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub url: String,
}

/// What chrome.debugger calls address: a tab, or a target by its id (a service or shared
/// worker, which no tab holds).
#[derive(Debug, Clone, Copy)]
pub enum Debuggee<'a> {
    Tab(TabId),
    Target(&'a str),
}

/// The `target` of chrome.debugger calls, or one of its flat child sessions. Built directly,
/// not through JSON text: one is made for every command.
fn debuggee(to: Debuggee, session_id: Option<&str>) -> JsValue {
    let target = js_sys::Object::new();
    let _ = match to {
        Debuggee::Tab(tab_id) => js_sys::Reflect::set(&target, &"tabId".into(), &tab_id.into()),
        Debuggee::Target(target_id) => js_sys::Reflect::set(&target, &"targetId".into(), &target_id.into()),
    };
    if let Some(session_id) = session_id {
        let _ = js_sys::Reflect::set(&target, &"sessionId".into(), &session_id.into());
    }
    target.into()
}

pub type Result<T, E = String> = std::result::Result<T, E>;

fn unit(r: Result<JsValue, JsValue>) -> Result<()> {
    r.map(drop).map_err(|e| error_message(&e))
}

fn typed<T: serde::de::DeserializeOwned>(r: Result<JsValue, JsValue>, what: &str) -> Result<T> {
    let value = r.map_err(|e| error_message(&e))?;
    from_js(&value).ok_or_else(|| format!("unexpected {what} from Chrome"))
}

pub async fn attach(tab_id: TabId) -> Result<()> {
    attach_to(Debuggee::Tab(tab_id)).await
}

pub async fn detach(tab_id: TabId) -> Result<()> {
    detach_from(Debuggee::Tab(tab_id)).await
}

pub async fn attach_to(to: Debuggee<'_>) -> Result<()> {
    unit(debugger_attach(&debuggee(to, None), "1.3").await)
}

pub async fn detach_from(to: Debuggee<'_>) -> Result<()> {
    unit(debugger_detach(&debuggee(to, None)).await)
}

/// Every target the browser could debug.
pub async fn debugger_targets() -> Result<Vec<DebuggerTarget>> {
    typed(debugger_get_targets().await, "debugger targets")
}

/// The outcome of a call bound as returning a promise: its synchronous throw or its rejection
/// as `Err`, else what it resolved to.
async fn settle(call: Result<js_sys::Promise, JsValue>) -> Result<JsValue, JsValue> {
    wasm_bindgen_futures::JsFuture::from(call?).await
}

/// Runs a CDP command. `Err` keeps the raw JS error, thrown or rejected: its message may carry a
/// CDP error object.
pub async fn send_command(
    tab_id: TabId,
    session_id: Option<&str>,
    method: &str,
    params: &JsValue,
) -> Result<JsValue, JsValue> {
    send_command_to(Debuggee::Tab(tab_id), session_id, method, params).await
}

/// [`send_command`] to any debuggee.
pub async fn send_command_to(
    to: Debuggee<'_>,
    session_id: Option<&str>,
    method: &str,
    params: &JsValue,
) -> Result<JsValue, JsValue> {
    settle(debugger_send_command(&debuggee(to, session_id), method, params)).await
}

/// Creates the repeating alarm `name` unless it exists (creating it anew would restart its
/// period).
pub async fn ensure_alarm(name: &str, period_minutes: f64) -> Result<()> {
    let existing = settle(alarms_get(name)).await.map_err(|e| error_message(&e))?;
    if !existing.is_undefined() && !existing.is_null() {
        return Ok(());
    }
    let info = serde_json::json!({ "periodInMinutes": period_minutes });
    unit(settle(alarms_create(name, &to_js(&info))).await)
}

pub async fn get_tab(tab_id: TabId) -> Result<Tab> {
    typed(tabs_get(tab_id).await, "tab")
}

/// `chrome.tabs.create(properties)`.
pub async fn create_tab(properties: &serde_json::Value) -> Result<Tab> {
    typed(tabs_create(&to_js(properties)).await, "tab")
}

pub async fn remove_tab(tab_id: TabId) -> Result<()> {
    unit(tabs_remove(tab_id).await)
}

/// `chrome.tabs.reload(tabId, {bypassCache})`: `bypassCache` also goes past the site's service
/// worker, as a forced reload does.
pub async fn reload_tab(tab_id: TabId, bypass_cache: bool) -> Result<()> {
    unit(tabs_reload(tab_id, &to_js(&serde_json::json!({ "bypassCache": bypass_cache }))).await)
}

/// The `documentId` of the tab's main frame now (a new one once a navigation commits).
pub async fn main_document(tab_id: TabId) -> Result<String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Frame {
        document_id: String,
    }
    let details = serde_json::json!({ "tabId": tab_id, "frameId": 0 });
    let frame: Option<Frame> = typed(web_navigation_get_frame(&to_js(&details)).await, "frame")?;
    frame.map(|f| f.document_id).ok_or_else(|| format!("tab {tab_id} has no main frame"))
}

/// `chrome.tabs.update(tabId, properties)`.
pub async fn update_tab(tab_id: TabId, properties: &serde_json::Value) -> Result<()> {
    unit(tabs_update(tab_id, &to_js(properties)).await)
}

/// Puts a tab into `group`, or into a new group in `window_id` (the tab's own window: Chrome
/// would otherwise create the group in the focused window and move the tab there); returns the
/// group's id.
pub async fn group_tab(tab_id: TabId, window_id: WindowId, group: Option<i32>) -> Result<i32> {
    let options = match group {
        Some(group_id) => serde_json::json!({ "tabIds": [tab_id], "groupId": group_id }),
        None => serde_json::json!({ "tabIds": [tab_id], "createProperties": { "windowId": window_id } }),
    };
    typed(tabs_group(&to_js(&options)).await, "group id")
}

pub async fn ungroup_tab(tab_id: TabId) -> Result<()> {
    unit(tabs_ungroup(tab_id).await)
}

/// `chrome.tabGroups.update(groupId, {title, color})`.
pub async fn name_group(group_id: i32, title: &str, color: &str) -> Result<()> {
    let properties = serde_json::json!({ "title": title, "color": color, "collapsed": false });
    unit(tab_groups_update(group_id, &to_js(&properties)).await)
}

pub async fn get_window(window_id: WindowId) -> Result<Window> {
    typed(windows_get(window_id).await, "window")
}

/// `chrome.windows.create(properties)`, with the tabs it opened.
pub async fn create_window(properties: &serde_json::Value) -> Result<Window> {
    typed(windows_create(&to_js(properties)).await, "window")
}

/// `chrome.windows.update(windowId, properties)`.
pub async fn update_window(window_id: WindowId, properties: &serde_json::Value) -> Result<()> {
    unit(windows_update(window_id, &to_js(properties)).await)
}

/// The tabs of every normal window.
pub async fn normal_tabs() -> Result<Vec<Tab>> {
    let query = serde_json::json!({ "windowType": "normal" });
    typed(tabs_query(&to_js(&query)).await, "tab list")
}

/// Every tab of every window.
pub async fn all_tabs() -> Result<Vec<Tab>> {
    typed(tabs_query(&to_js(&serde_json::json!({}))).await, "tab list")
}

/// The active tab of a window.
pub async fn active_tab(window_id: WindowId) -> Result<Option<Tab>> {
    let query = serde_json::json!({ "active": true, "windowId": window_id });
    let tabs: Vec<Tab> = typed(tabs_query(&to_js(&query)).await, "tab list")?;
    Ok(tabs.into_iter().next())
}

pub async fn current_window() -> Result<Window> {
    typed(windows_get_current().await, "window")
}

pub async fn last_focused_normal_window() -> Result<Window> {
    let options = serde_json::json!({ "windowTypes": ["normal"] });
    typed(windows_get_last_focused(&to_js(&options)).await, "window")
}

/// Whether Chrome lets the extension at file URLs ("Allow access to file URLs").
pub async fn is_allowed_file_scheme_access() -> Result<bool> {
    typed(extension_is_allowed_file_scheme_access().await, "file access answer")
}

pub fn manifest_version() -> String {
    js_sys::Reflect::get(&runtime_get_manifest(), &"version".into())
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default()
}

/// Sends to the extension's other pages (or, from a page, to the worker) and awaits the reply.
pub async fn send_message(message: &JsValue) -> Result<JsValue> {
    runtime_send_message(message).await.map_err(|e| error_message(&e))
}

/// Sends one message to a native messaging host (Chrome starts it, and stops it after its
/// answer) and awaits the answer.
pub async fn send_native_message(host: &str, message: &serde_json::Value) -> Result<JsValue> {
    settle(runtime_send_native_message(host, &to_js(message))).await.map_err(|e| error_message(&e))
}

pub async fn local_get(keys: &[&str]) -> Result<JsValue> {
    storage_local_get(&to_js(keys)).await.map_err(|e| error_message(&e))
}

pub async fn local_set(items: &JsValue) -> Result<()> {
    unit(storage_local_set(items).await)
}

/// One value kept in `chrome.storage.local`; `None` when missing or unreadable.
pub async fn local_value(key: &str) -> Option<JsValue> {
    stored_value(local_get(&[key]).await, key)
}

/// One value kept in `chrome.storage.session`; `Err` when storage failed, `Ok(None)` when the
/// key is not set.
pub async fn session_value(key: &str) -> Result<Option<JsValue>> {
    let items = session_get(&[key]).await?;
    Ok(stored_value(Ok(items), key))
}

fn stored_value(items: Result<JsValue>, key: &str) -> Option<JsValue> {
    let value = js_sys::Reflect::get(&items.ok()?, &key.into()).ok()?;
    (!value.is_undefined()).then_some(value)
}

pub async fn session_get(keys: &[&str]) -> Result<JsValue> {
    storage_session_get(&to_js(keys)).await.map_err(|e| error_message(&e))
}

pub async fn session_set(items: &JsValue) -> Result<()> {
    unit(storage_session_set(items).await)
}

/// `chrome.declarativeNetRequest.updateSessionRules({removeRuleIds, addRules})`.
pub async fn update_session_rules(remove: &[i32], add: &[serde_json::Value]) -> Result<()> {
    let options = serde_json::json!({ "removeRuleIds": remove, "addRules": add });
    unit(dnr_update_session_rules(&to_js(&options)).await)
}

/// The ids of every `declarativeNetRequest` session rule in place (they outlive the worker).
pub async fn session_rule_ids() -> Result<Vec<i32>> {
    #[derive(Deserialize)]
    struct Rule {
        id: i32,
    }
    let rules: Vec<Rule> = typed(dnr_get_session_rules().await, "session rules")?;
    Ok(rules.into_iter().map(|r| r.id).collect())
}

pub async fn open_panel_on_action_click() -> Result<()> {
    let behavior = serde_json::json!({ "openPanelOnActionClick": true });
    unit(side_panel_set_panel_behavior(&to_js(&behavior)).await)
}

/// `navigator.userAgentData.getHighEntropyValues(hints)`; `Err` where it does not exist.
pub async fn high_entropy_values(hints: &[&str]) -> Result<JsValue> {
    ua_high_entropy_values(&to_js(hints)).await.map_err(|e| error_message(&e))
}

/// The text of a file packaged with the extension; `Err` when it is missing.
pub async fn read_packaged_file(path: &str) -> Result<String> {
    use wasm_bindgen::JsCast;
    let response: web_sys::Response =
        global_fetch(&runtime_get_url(path)).await.map_err(|e| error_message(&e))?.unchecked_into();
    if !response.ok() {
        return Err(format!("HTTP {}", response.status()));
    }
    let text = response.text().map_err(|e| error_message(&e))?;
    let text = wasm_bindgen_futures::JsFuture::from(text).await.map_err(|e| error_message(&e))?;
    Ok(text.as_string().unwrap_or_default())
}
