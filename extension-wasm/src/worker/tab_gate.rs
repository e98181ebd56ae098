//! Steps on one tab that commands arriving meanwhile wait for (a detach and re-attach, bringing
//! it forward for a screenshot), and each tab's debugger-session epoch.

use tabtunnel_extension_core::OpId;
use tabtunnel_wire::TabId;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use super::state::with;

/// Runs a step on one tab (a detach/re-attach, bringing it forward) after any earlier one, with
/// commands arriving meanwhile held back (see [`reset_gate`]): two resets interleaved would
/// detach each other's session, and a command must not overtake one sent before it.
pub fn exclusively(tab_id: TabId, work: impl std::future::Future<Output = ()> + 'static) {
    let mut resolve = None;
    let done = js_sys::Promise::new(&mut |res, _| resolve = Some(res));
    let (token, previous) = with(|w| (w.tab_steps.begin(tab_id).0, w.resetting.insert(tab_id, done.clone())));
    spawn_local(async move {
        if let Some(previous) = previous {
            let _ = wasm_bindgen_futures::JsFuture::from(previous).await;
        }
        work.await;
        with(|w| {
            if w.tab_steps.finish(&tab_id, token) {
                w.resetting.remove(&tab_id);
            }
        });
        if let Some(resolve) = resolve {
            let _ = resolve.call0(&JsValue::NULL);
        }
    });
}

/// Which debugger session of the tab a command arriving now was meant for.
pub fn epoch(tab_id: TabId) -> u64 {
    with(|w| w.epochs.current(tab_id))
}

/// The step on this tab (see [`exclusively`]) a command arriving now must wait for, if any.
pub fn reset_gate(tab_id: TabId) -> Option<js_sys::Promise> {
    with(|w| w.resetting.get(&tab_id).cloned())
}

/// A step on the tab run by a machine (`reattach`): `turn` is called when the steps begun
/// before are done; the tab's commands wait from now until [`release_all`] of `op`.
pub fn hold(tab_id: TabId, op: OpId, turn: impl FnOnce() + 'static) {
    let mut release = None;
    let released = js_sys::Promise::new(&mut |res, _| release = Some(res));
    if let Some(release) = release {
        with(|w| w.holds.insert(op, release));
    }
    exclusively(tab_id, async move {
        turn();
        let _ = wasm_bindgen_futures::JsFuture::from(released).await;
    });
}

/// The steps of these holds ended (a hold not yet turned ends as soon as it turns).
pub fn release_all(holds: impl IntoIterator<Item = OpId>) {
    for op in holds {
        if let Some(release) = with(|w| w.holds.remove(&op)) {
            let _ = release.call0(&JsValue::NULL);
        }
    }
}
