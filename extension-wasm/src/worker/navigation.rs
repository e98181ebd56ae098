//! An agent's policy as `declarativeNetRequest` session rules on its tabs: the steps of
//! `tabtunnel_extension_core::navigation_rules` run against Chrome, their outcomes fed back.

use std::cell::RefCell;
use std::collections::BTreeMap;

use tabtunnel_extension_core::navigation_rules::{Done, Navigation, Step};
use tabtunnel_extension_core::OpId;
use tabtunnel_wire::{NavigationRules, TabId};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::{spawn_local, JsFuture};

use super::state::with;
use crate::chrome;
use crate::js::{performance_now, sleep_until};

/// The machine, and who waits for which ticket (its promise's `resolve`, then its result).
#[derive(Default)]
struct Shell {
    machine: Navigation,
    waiting: BTreeMap<OpId, js_sys::Function>,
    results: BTreeMap<OpId, Result<(), String>>,
}

thread_local! {
    static NAVIGATION: RefCell<Shell> = RefCell::new(Shell::default());
}

fn nav<R>(f: impl FnOnce(&mut Shell) -> R) -> R {
    NAVIGATION.with_borrow_mut(f)
}

/// The daemon's rules arrived (at connection, or the policy changed).
pub fn rules_changed(rules: NavigationRules, endpoint: String) {
    // Tabs shared before the rules came (a restarted worker) are in `shared` only.
    let shared: Vec<(TabId, String)> =
        with(|w| w.shared.values().map(|t| (t.tab_id, t.agent.clone())).collect());
    run(nav(|n| n.machine.rules_changed(rules, endpoint, shared)));
}

/// A tab became `agent`'s (`None`: it is no longer shared): returns once the rules of its old
/// and new agent are in place (or closed).
pub async fn apply(tab_id: TabId, agent: Option<&str>) {
    let _ = wait(nav(|n| n.machine.apply(tab_id, agent))).await;
}

/// The human allowed `url` for this tab: let it through once.
pub async fn allow_once(tab_id: TabId, url: &str) -> Result<(), String> {
    wait(nav(|n| n.machine.allow_once(tab_id, url))).await
}

/// Runs `steps` and waits until `ticket` is settled.
async fn wait((ticket, steps): (OpId, Vec<Step>)) -> Result<(), String> {
    let mut resolve = None;
    let settled = js_sys::Promise::new(&mut |res, _| resolve = Some(res));
    nav(|n| n.waiting.extend(resolve.map(|r| (ticket, r))));
    run(steps);
    let _ = JsFuture::from(settled).await;
    nav(|n| n.results.remove(&ticket)).unwrap_or(Ok(()))
}

fn completed(op: OpId, done: Done) {
    let now = performance_now();
    run(nav(|n| n.machine.completed(now, op, done)));
}

/// Chrome runs an extension's rule updates in the order they were made, as they are here.
fn run(steps: Vec<Step>) {
    for step in steps {
        match step {
            Step::ReadRuleIds { op } => spawn_local(async move {
                completed(op, Done::RuleIds(chrome::session_rule_ids().await));
            }),
            Step::Update { op, remove, add } => spawn_local(async move {
                completed(op, Done::Updated(chrome::update_session_rules(&remove, &add).await));
            }),
            Step::Settled { ticket, result } => {
                if let Some(resolve) = nav(|n| n.waiting.remove(&ticket)) {
                    nav(|n| n.results.insert(ticket, result));
                    let _ = resolve.call0(&JsValue::NULL);
                }
            }
            Step::Warn(message) => warn!("{message}"),
            Step::WakeAt(at) => spawn_local(async move {
                sleep_until(at).await;
                let now = performance_now();
                run(nav(|n| n.machine.timeout(now)));
            }),
        }
    }
}
