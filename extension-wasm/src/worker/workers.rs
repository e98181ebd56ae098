//! Service and shared workers of agents' pages, as targets of those agents. `chrome.debugger`
//! reaches them (`getTargets()` lists them, `attach({targetId})` attaches to one), but nothing
//! tells an extension when one starts or ends. So while tabs are shared the worker looks every
//! [`SCAN_MS`]: a new service or shared worker is announced to the daemon as a target of the
//! agent whose shared page has the worker's origin ([`owning_agent`]), as a `TabShared` whose
//! `kind` says what it is and whose `tab_id` is a handle of ours (negative: never a tab's); one
//! no longer listed, or whose debugger session closed with it, is reported gone.
//!
//! A worker is attached only while a client uses it: the first command attaches it, and the
//! daemon's `ResetTab` (its last client session left) detaches it, so it ends when Chrome would
//! end it (an attached service worker is never stopped for being idle).

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use tabtunnel_extension_core::TargetChange;
use tabtunnel_wire::{TabId, TabInfo, TargetKind, UnshareReason, WindowId};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::spawn_local;

use super::{daemon, sharing, with};
use crate::chrome::{self, Debuggee};
use crate::js::{error_message, from_js, sleep};

/// How often the browser's targets are looked at while tabs are shared. puppeteer's
/// `waitForTarget` and Playwright's `serviceWorker` event wait for as long as it takes.
const SCAN_MS: u32 = 500;
/// A worker has no window.
const NO_WINDOW: WindowId = -1;

/// The workers announced to the daemon, by handle.
#[derive(Default)]
pub struct Workers {
    known: BTreeMap<TabId, KnownWorker>,
    /// Listed targets that are neither service nor shared workers (dedicated workers, which
    /// their pages' own auto-attach finds), so each is looked at once.
    passed_over: BTreeSet<String>,
    last_handle: TabId,
}

struct KnownWorker {
    info: TabInfo,
    /// Our debugger session on it is open.
    attached: bool,
}

/// Whether a `tab_id` of the wire is a worker's handle.
pub fn is_worker(tab_id: TabId) -> bool {
    tab_id < 0
}

/// The origin (`scheme://host[:port]`) of an http(s) URL, or of the page that made a `blob:`
/// URL; `None` for the rest (a `data:` worker has no origin of its own to tell whose it is).
pub fn origin_of(url: &str) -> Option<&str> {
    let url = url.strip_prefix("blob:").unwrap_or(url);
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"))?;
    let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    (host_end > 0).then(|| &url[..url.len() - rest.len() + host_end])
}

/// The agent a worker at `worker_url` belongs to: the owner of the shared page of the worker's
/// origin that navigated last (`pages` come with the time each last changed its URL), the page
/// most likely to have started it. A worker serves, and can be reached by, any page of its
/// origin; an agent with a page there can already do there what the page can.
pub fn owning_agent<'a>(
    worker_url: &str,
    pages: impl IntoIterator<Item = (&'a TabInfo, f64)>,
) -> Option<&'a str> {
    let origin = origin_of(worker_url)?;
    pages
        .into_iter()
        .filter(|(t, _)| origin_of(&t.url) == Some(origin))
        .fold(None, |last: Option<(&TabInfo, f64)>, (t, at)| match last {
            Some((_, latest)) if latest >= at => last,
            _ => Some((t, at)),
        })
        .map(|(t, _)| t.agent.as_str())
}

/// Looks for workers as long as the service worker lives.
pub fn watch() {
    spawn_local(async {
        loop {
            sleep(SCAN_MS).await;
            scan().await;
        }
    });
}

async fn scan() {
    let worth_it =
        !super::kill_switch::is_engaged() && with(|w| !w.shared.is_empty() || !w.workers.known.is_empty());
    if !worth_it {
        return;
    }
    let listed: Vec<chrome::DebuggerTarget> = match chrome::debugger_targets().await {
        Ok(targets) => targets.into_iter().filter(|t| t.kind == "worker").collect(),
        Err(e) => return warn!("chrome.debugger.getTargets failed: {e}"),
    };
    let gone: Vec<TabId> = with(|w| {
        let still = |k: &KnownWorker| listed.iter().any(|t| t.id == k.info.target_id);
        w.workers.known.iter().filter(|(_, k)| !still(k)).map(|(handle, _)| *handle).collect()
    });
    for handle in gone {
        end(handle, UnshareReason::Closed, false);
    }
    for target in listed {
        let agent = with(|w| {
            let seen = w.workers.passed_over.contains(&target.id)
                || w.workers.known.values().any(|k| k.info.target_id == target.id);
            let pages = w.shared.values().map(|t| (t, w.navigated_at.get(&t.tab_id).copied().unwrap_or(0.0)));
            (!seen).then(|| owning_agent(&target.url, pages).map(str::to_owned)).flatten()
        });
        if let Some(agent) = agent {
            match describe(&target.id, agent).await {
                Ok(Some(info)) => announce(info),
                Ok(None) => {
                    with(|w| w.workers.passed_over.insert(target.id));
                }
                Err(e) => log!("worker {} not shared: {e}", target.url),
            }
        }
    }
}

/// What the worker is, asked of Chrome through a debugger session opened for the question;
/// `None` when it is not a service or shared worker.
async fn describe(target_id: &str, agent: String) -> Result<Option<TabInfo>, String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct TargetInfo {
        #[serde(rename = "type")]
        kind: String,
        #[serde(default)]
        title: String,
        #[serde(default)]
        url: String,
        #[serde(default)]
        browser_context_id: String,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Reply {
        target_info: TargetInfo,
    }
    let to = Debuggee::Target(target_id);
    chrome::attach_to(to).await?;
    let reply = chrome::send_command_to(to, None, "Target.getTargetInfo", &JsValue::UNDEFINED).await;
    if let Err(e) = chrome::detach_from(to).await {
        warn!("detach from worker {target_id}: {e}");
    }
    let reply = reply.map_err(|e| error_message(&e))?;
    let target = from_js::<Reply>(&reply).ok_or("unexpected Target.getTargetInfo reply")?.target_info;
    let Some(kind) = TargetKind::of_worker_type(&target.kind) else { return Ok(None) };
    let handle = with(|w| {
        w.workers.last_handle -= 1;
        w.workers.last_handle
    });
    Ok(Some(TabInfo {
        tab_id: handle,
        window_id: NO_WINDOW,
        target_id: target_id.to_owned(),
        browser_context_id: target.browser_context_id,
        url: target.url,
        title: target.title,
        opener_target_id: None,
        agent,
        created: false,
        kind,
    }))
}

fn announce(info: TabInfo) {
    log!("sharing {} {} with {}", info.kind.cdp_type(), info.url, info.agent);
    let known = KnownWorker { info: info.clone(), attached: false };
    if let Err(e) = daemon::target(TargetChange::Shared(info)) {
        return log!("not sharing the worker: {e}");
    }
    with(|w| w.workers.known.insert(known.info.tab_id, known));
}

/// The worker is gone (or no longer shared): the daemon hears it, and our session on it, if
/// `detach` and one is open, closes.
fn end(handle: TabId, reason: UnshareReason, detach: bool) {
    let Some(known) = with(|w| w.workers.known.remove(&handle)) else { return };
    log!("{} {} unshared: {reason:?}", known.info.kind.cdp_type(), known.info.url);
    let _ = daemon::target(TargetChange::Unshared { tab_id: handle, reason });
    if detach && known.attached {
        spawn_local(async move {
            let _ = chrome::detach_from(Debuggee::Target(&known.info.target_id)).await;
        });
    }
}

/// Every worker stops being shared (the kill switch).
pub fn forget_all(reason: UnshareReason) {
    let handles: Vec<TabId> = with(|w| w.workers.known.keys().copied().collect());
    for handle in handles {
        end(handle, reason, true);
    }
}

/// The worker a debugger event or detach came from.
pub fn handle_of(target_id: &str) -> Option<TabId> {
    with(|w| w.workers.known.iter().find(|(_, k)| k.info.target_id == target_id).map(|(handle, _)| *handle))
}

/// The worker's target id, attached for a command (the first since a reset attaches it).
pub async fn attached(handle: TabId) -> Result<String, String> {
    let known = with(|w| w.workers.known.get(&handle).map(|k| (k.info.target_id.clone(), k.attached)));
    let Some((target_id, attached)) = known else {
        return Err(format!("Worker {handle} is no longer shared"));
    };
    if !attached {
        match chrome::attach_to(Debuggee::Target(&target_id)).await {
            Ok(()) => {}
            // Another command of the same moment attached it.
            Err(e) if e.contains("already attached") => {}
            Err(e) => return Err(e),
        }
        with(|w| {
            if let Some(k) = w.workers.known.get_mut(&handle) {
                k.attached = true;
            }
        });
    }
    Ok(target_id)
}

/// The daemon's `ResetTab` for a worker: its last client left, so our session closes (the next
/// command opens a fresh one), as a step of the worker that later commands wait for.
pub fn reset(handle: TabId) {
    sharing::exclusively(handle, async move {
        let target = with(|w| {
            let known = w.workers.known.get_mut(&handle)?;
            std::mem::replace(&mut known.attached, false).then(|| known.info.target_id.clone())
        });
        if let Some(target_id) = target {
            if let Err(e) = chrome::detach_from(Debuggee::Target(&target_id)).await {
                warn!("detach from worker {target_id}: {e}");
            }
        }
    });
}

/// Chrome closed our session on a worker: it ended (`target_closed`), or the human cancelled
/// debugging, which ends every session.
pub fn detached(target_id: &str, reason: &str) {
    let Some(handle) = handle_of(target_id) else { return };
    with(|w| {
        if let Some(k) = w.workers.known.get_mut(&handle) {
            k.attached = false;
        }
    });
    match reason {
        "target_closed" => end(handle, UnshareReason::Closed, false),
        "canceled_by_user" => end(handle, UnshareReason::CanceledByUser, false),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::{origin_of, owning_agent};
    use tabtunnel_wire::TabInfo;

    fn page(tab_id: i32, agent: &str, url: &str) -> TabInfo {
        TabInfo {
            tab_id,
            window_id: 1,
            target_id: format!("T{tab_id}"),
            browser_context_id: String::new(),
            url: url.into(),
            title: String::new(),
            opener_target_id: None,
            agent: agent.into(),
            created: true,
            kind: Default::default(),
        }
    }

    #[test]
    fn origins_of_http_and_blob_urls_only() {
        assert_eq!(origin_of("http://127.0.0.1:8000/sw.js"), Some("http://127.0.0.1:8000"));
        assert_eq!(origin_of("https://example.com"), Some("https://example.com"));
        assert_eq!(origin_of("https://example.com?x#y"), Some("https://example.com"));
        assert_eq!(origin_of("blob:https://a.test/8c4e-11"), Some("https://a.test"));
        for none in ["data:text/javascript,1", "chrome-extension://abc/sw.js", "about:blank", "http:///x", ""]
        {
            assert_eq!(origin_of(none), None, "{none}");
        }
    }

    #[test]
    fn a_worker_is_the_agent_whose_page_has_its_origin() {
        let pages = [
            page(1, "human", "https://mail.test/inbox"),
            page(2, "a", "http://127.0.0.1:8000/app.html"),
            page(3, "b", "http://127.0.0.1:8000/other.html"),
            page(4, "human", "http://127.0.0.1:8000/form.html"),
        ];
        let at = |times: [f64; 4]| pages.iter().zip(times);
        let owner = |url: &str, times| owning_agent(url, at(times));
        assert_eq!(
            owner("http://127.0.0.1:8000/sw.js", [0.0, 20.0, 10.0, 5.0]),
            Some("a"),
            "the page that navigated last"
        );
        assert_eq!(owner("http://127.0.0.1:8000/sw.js", [0.0, 20.0, 30.0, 5.0]), Some("b"));
        assert_eq!(owner("https://mail.test/worker.js", [0.0; 4]), Some("human"));
        assert_eq!(owner("http://127.0.0.1:9000/sw.js", [0.0; 4]), None, "another port is another origin");
        assert_eq!(owner("data:text/javascript,1", [0.0; 4]), None);
    }
}
