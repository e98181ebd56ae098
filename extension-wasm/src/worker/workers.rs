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

use serde::Deserialize;
pub use tabtunnel_extension_core::workers::is_worker;
use tabtunnel_extension_core::workers::{owning_agent, Ended};
use tabtunnel_extension_core::TargetChange;
use tabtunnel_wire::{TabId, TabInfo, UnshareReason};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::spawn_local;

use super::state::with;
use super::{daemon, tab_gate};
use crate::chrome::{self, Debuggee};
use crate::js::{error_message, from_js, sleep};

/// How often the browser's targets are looked at while tabs are shared. puppeteer's
/// `waitForTarget` and Playwright's `serviceWorker` event wait for as long as it takes.
const SCAN_MS: u32 = 500;

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
        !super::kill_switch::is_engaged() && with(|w| !w.shared.is_empty() || !w.workers.is_empty());
    if !worth_it {
        return;
    }
    let listed: Vec<chrome::DebuggerTarget> = match chrome::debugger_targets().await {
        Ok(targets) => targets.into_iter().filter(|t| t.kind == "worker").collect(),
        Err(e) => return warn!("chrome.debugger.getTargets failed: {e}"),
    };
    let ids: Vec<&str> = listed.iter().map(|t| t.id.as_str()).collect();
    let gone = with(|w| w.workers.gone(&ids));
    for handle in gone {
        end(handle, UnshareReason::Closed, false);
    }
    for target in listed {
        let agent = with(|w| {
            let pages = w.shared.values().map(|t| (t, w.shared.navigated_at(t.tab_id)));
            w.workers
                .is_new(&target.id)
                .then(|| owning_agent(&target.url, pages).map(str::to_owned))
                .flatten()
        });
        if let Some(agent) = agent {
            match describe(&target.id, agent).await {
                Ok(Some(info)) => announce(info),
                Ok(None) => with(|w| w.workers.pass_over(target.id)),
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
    let t = from_js::<Reply>(&reply).ok_or("unexpected Target.getTargetInfo reply")?.target_info;
    Ok(with(|w| w.workers.describe(target_id, &t.kind, t.url, t.title, t.browser_context_id, agent)))
}

fn announce(info: TabInfo) {
    log!("sharing {} {} with {}", info.kind.cdp_type(), info.url, info.agent);
    if let Err(e) = daemon::target(TargetChange::Shared(info.clone())) {
        return log!("not sharing the worker: {e}");
    }
    with(|w| w.workers.announce(info));
}

/// The worker is gone (or no longer shared): the daemon hears it, and our session on it, if
/// `detach` and one is open, closes.
fn end(handle: TabId, reason: UnshareReason, detach: bool) {
    let Some(Ended { info, attached }) = with(|w| w.workers.end(handle)) else { return };
    log!("{} {} unshared: {reason:?}", info.kind.cdp_type(), info.url);
    let _ = daemon::target(TargetChange::Unshared { tab_id: handle, reason });
    if detach && attached {
        spawn_local(async move {
            let _ = chrome::detach_from(Debuggee::Target(&info.target_id)).await;
        });
    }
}

/// Every worker stops being shared (the kill switch).
pub fn forget_all(reason: UnshareReason) {
    for handle in with(|w| w.workers.handles()) {
        end(handle, reason, true);
    }
}

/// The worker a debugger event or detach came from.
pub fn handle_of(target_id: &str) -> Option<TabId> {
    with(|w| w.workers.handle_of(target_id))
}

/// The worker's target id, attached for a command (the first since a reset attaches it).
pub async fn attached(handle: TabId) -> Result<String, String> {
    let (target_id, attach) = with(|w| w.workers.target(handle))?;
    if attach {
        match chrome::attach_to(Debuggee::Target(&target_id)).await {
            Ok(()) => {}
            // Another command of the same moment attached it.
            Err(e) if e.contains("already attached") => {}
            Err(e) => return Err(e),
        }
        with(|w| w.workers.attached(handle));
    }
    Ok(target_id)
}

/// The daemon's `ResetTab` for a worker: its last client left, so our session closes (the next
/// command opens a fresh one), as a step of the worker that later commands wait for.
pub fn reset(handle: TabId) {
    tab_gate::exclusively(handle, async move {
        if let Some(target_id) = with(|w| w.workers.reset(handle)) {
            if let Err(e) = chrome::detach_from(Debuggee::Target(&target_id)).await {
                warn!("detach from worker {target_id}: {e}");
            }
        }
    });
}

/// Chrome closed our session on a worker: it ended (`target_closed`), or the human cancelled
/// debugging, which ends every session.
pub fn detached(target_id: &str, reason: &str) {
    if let Some((handle, Some(why))) = with(|w| w.workers.detached(target_id, reason)) {
        end(handle, why, false);
    }
}
