//! A shared tab's session started afresh (a reset, a re-attach after `target_closed`): the steps
//! of `tabtunnel_extension_core::reattach` run against Chrome, their outcomes fed back.

use tabtunnel_extension_core::reattach::{Done, Reattach, Request, Step, Tabs};
use tabtunnel_extension_core::{OpId, TargetChange};
use tabtunnel_wire::{TabId, UnshareReason};
use wasm_bindgen_futures::spawn_local;

use super::attach::attach_and_describe;
use super::panel_state::broadcast;
use super::state::with;
use super::{daemon, gestures, off_tab_writes, sharing, tab_gate};
use crate::chrome;
use crate::js::{performance_now, sleep_until};

/// Runs `f` on the machine, then the steps it gives.
fn drive(f: impl FnOnce(&mut Reattach, &mut Tabs) -> Vec<Step>) {
    let kill_switch = super::kill_switch::is_engaged();
    let steps = with(|w| {
        let mut tabs = Tabs { sharing: &mut w.shared, epochs: &mut w.epochs, kill_switch };
        f(&mut w.reattach, &mut tabs)
    });
    run(steps);
}

/// The machine's clock: the one `sleep_until` waits on.
fn now() -> f64 {
    performance_now()
}

/// The daemon's `ResetTab` (the tab's last client left), or its socket lost: detach and
/// re-attach to give the next client a clean session.
pub fn reset(tab_id: TabId) {
    drive(|m, _| m.request(tab_id, Request::Reset));
}

/// `target_closed` on a tab that may live on: re-attach once, else report why it is gone.
pub fn target_closed(tab_id: TabId) {
    drive(|m, _| m.request(tab_id, Request::TargetClosed));
}

/// The kill switch was engaged: nothing more is attached.
pub fn kill_switch_engaged() {
    tab_gate::release_all(with(|w| w.reattach.kill_switch_engaged()));
}

fn completed(op: OpId, done: Done) {
    let now = now();
    drive(|m, t| m.completed(now, op, done, t));
}

fn run(steps: Vec<Step>) {
    for step in steps {
        match step {
            Step::Hold { op, tab_id } => tab_gate::hold(tab_id, op, move || completed(op, Done::Turn)),
            Step::Release { hold } => tab_gate::release_all([hold]),
            Step::Unguard { op, tab_id } => spawn_local(async move {
                off_tab_writes::unguard(tab_id).await;
                completed(op, Done::Unguarded);
            }),
            Step::Guarded { tab_id } => off_tab_writes::guarded(tab_id),
            Step::DropGestures { op, tab_id } => spawn_local(async move {
                gestures::fail_held(tab_id).await;
                gestures::forget(tab_id);
                completed(op, Done::GesturesDropped);
            }),
            Step::Detach { op, tab_id } => spawn_local(async move {
                completed(op, Done::Detached(chrome::detach(tab_id).await));
            }),
            Step::Look { op, tab_id } => spawn_local(async move {
                completed(op, Done::Looked(chrome::get_tab(tab_id).await.is_ok()));
            }),
            Step::Attach { op, tab_id, owner } => spawn_local(async move {
                completed(op, Done::Attached(attach_and_describe(tab_id, false, owner).await));
            }),
            Step::StartOver(info) => {
                let tab_id = info.tab_id;
                let _ = daemon::target(TargetChange::Unshared { tab_id, reason: UnshareReason::Detached });
                // Refused only while the kill switch is on, whose stop unshares this tab.
                let _ = daemon::target(TargetChange::Shared(info));
                broadcast();
            }
            Step::Changed(info) => {
                let _ = daemon::target(TargetChange::Changed(info));
                broadcast();
            }
            Step::Unshare { tab_id, reason } => sharing::unshare(tab_id, reason),
            Step::Log(message) => log!("{message}"),
            Step::WakeAt(at) => spawn_local(async move {
                sleep_until(at).await;
                let now = now();
                drive(|m, t| m.timeout(now, t));
            }),
        }
    }
}
