//! Service and shared workers of agents' pages, as targets of those agents. `chrome.debugger`
//! reaches them (`getTargets()` lists them, `attach({targetId})` attaches to one), but nothing
//! tells an extension when one starts or ends. So while tabs are shared the worker looks every
//! [`SCAN_MS`] (the scan's steps are `tabtunnel_extension_core::worker_scan`'s): a new service or shared worker is announced to the daemon as a target of the
//! agent whose shared page has the worker's origin ([`owning_agent`]), as a `TabShared` whose
//! `kind` says what it is and whose `tab_id` is a handle of ours (negative: never a tab's); one
//! no longer listed, or whose debugger session closed with it, is reported gone.
//!
//! A worker is attached only while a client uses it: the first command attaches it, and the
//! daemon's `ResetTab` (its last client session left) detaches it, so it ends when Chrome would
//! end it (an attached service worker is never stopped for being idle).

use std::collections::VecDeque;

use serde::Deserialize;
use tabtunnel_extension_core::sharing::Sharing;
use tabtunnel_extension_core::worker_scan::{Described, Listed, Step, SCAN_MS};
pub use tabtunnel_extension_core::workers::is_worker;
use tabtunnel_extension_core::workers::Ended;
use tabtunnel_extension_core::TargetChange;
use tabtunnel_wire::{TabId, TabInfo, UnshareReason};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::spawn_local;

use super::state::with;
use super::{daemon, tab_gate};
use crate::chrome::{self, Debuggee};
use crate::js::{error_message, from_js, sleep};

/// Looks for workers as long as the service worker lives, a scan every [`SCAN_MS`] after the
/// last one ended.
pub fn watch() {
    spawn_local(async {
        loop {
            sleep(SCAN_MS).await;
            scan().await;
        }
    });
}

/// One scan: its steps (`tabtunnel_extension_core::worker_scan`) run until none is left.
async fn scan() {
    let worth_it =
        !super::kill_switch::is_engaged() && with(|w| !w.shared.is_empty() || !w.workers.is_empty());
    let mut steps: VecDeque<Step> = with(|w| w.scan.begin(worth_it)).into_iter().collect();
    while let Some(step) = steps.pop_front() {
        match step {
            Step::List { op } => {
                let listed = match chrome::debugger_targets().await {
                    Ok(targets) => Ok(targets
                        .into_iter()
                        .filter(|t| t.kind == "worker")
                        .map(|t| Listed { id: t.id, url: t.url })
                        .collect()),
                    Err(e) => {
                        warn!("chrome.debugger.getTargets failed: {e}");
                        Err(e)
                    }
                };
                steps.extend(with(|w| w.scan.listed(op, listed, &mut w.workers, pages(&w.shared))));
            }
            Step::Describe { op, target_id } => {
                let described = describe(&target_id).await;
                if let Err(e) = &described {
                    log!("worker {target_id} not shared: {e}");
                }
                steps.extend(with(|w| w.scan.described(op, described, &mut w.workers, pages(&w.shared))));
            }
            Step::End { handle, reason } => end(handle, reason, false),
            Step::Announce(info) => announce(info),
        }
    }
}

/// The shared pages, with the time each last changed its URL (whose a worker is).
fn pages(shared: &Sharing) -> impl Iterator<Item = (&TabInfo, f64)> + Clone {
    shared.values().map(|t| (t, shared.navigated_at(t.tab_id)))
}

/// What the worker is, asked of Chrome through a debugger session opened for the question.
async fn describe(target_id: &str) -> Result<Described, String> {
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
    Ok(Described { cdp_type: t.kind, url: t.url, title: t.title, browser_context_id: t.browser_context_id })
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

/// Every worker stops being shared (the kill switch), and a scan under way is given up.
pub fn forget_all(reason: UnshareReason) {
    with(|w| w.scan.stop());
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
