//! The worker's state: one thread-local [`Worker`], borrowed briefly through [`with`] and never
//! across an await; and the small reads of it every part of the worker makes.

use std::cell::RefCell;
use std::collections::BTreeMap;

use tabtunnel_extension_core::agent_tabs::AgentTabs;
use tabtunnel_extension_core::early_events::EarlyEvents;
use tabtunnel_extension_core::epochs::Epochs;
use tabtunnel_extension_core::focus::FocusGuard;
use tabtunnel_extension_core::gestures::Gestures;
use tabtunnel_extension_core::inspect::Reads;
use tabtunnel_extension_core::late_documents::LateDocuments;
use tabtunnel_extension_core::off_tab_writes::OffTabWrites;
use tabtunnel_extension_core::placement::{Places, Placing};
use tabtunnel_extension_core::popups::{Adopting, Popups};
use tabtunnel_extension_core::reattach::Reattach;
use tabtunnel_extension_core::relatives::Relatives;
use tabtunnel_extension_core::sharing::{Owner, Sharing};
use tabtunnel_extension_core::steps::Steps;
use tabtunnel_extension_core::worker_scan::WorkerScan;
use tabtunnel_extension_core::workers::Workers;
use tabtunnel_extension_core::OpId;
use tabtunnel_wire::{ApprovalRequest, HandoverRequest, TabId};
use wasm_bindgen::prelude::*;

use crate::messages::AgentView;

/// A `chrome.debugger.onEvent` kept until its tab is announced: `(source, method, params)`.
pub type EarlyEvent = (JsValue, String, JsValue);

#[derive(Default)]
pub struct Worker {
    /// The shared tabs (read as a map), those being attached and those that left the web.
    pub shared: Sharing,
    /// Events of tabs attached with the gesture guard armed but not announced yet (see
    /// `relay::on_debugger_event`), replayed by `sharing::add` once they are.
    pub early_events: EarlyEvents<EarlyEvent>,
    /// Tabs with a step in progress that commands arriving meanwhile must wait for: their
    /// debugger session detached and re-attached (a reset, or after `target_closed`), or the tab
    /// made active for a screenshot; each promise resolves when that is done.
    pub resetting: BTreeMap<TabId, js_sys::Promise>,
    /// Which of those steps is the latest, so that only it clears `resetting`.
    pub tab_steps: Steps<TabId>,
    /// The holds a machine took on tabs (`tab_gate::hold`), by operation id: each, called, ends
    /// its step.
    pub holds: BTreeMap<OpId, js_sys::Function>,
    /// Bumped when a tab's debugger session was lost under its clients: commands they sent
    /// before are answered "Target closed" instead of running on the new session.
    pub epochs: Epochs,
    /// Tabs whose debugger session starts afresh (a reset, a re-attach after `target_closed`).
    pub reattach: Reattach,
    /// Agents' windows and tab groups.
    pub places: Places,
    /// Which tab's page opened which tab (`relatives.rs`).
    pub relatives: Relatives,
    /// New tabs and the pages that opened them, joined (see `agents::listen`).
    pub popups: Popups,
    /// Popups of agents' pages being adopted, and by whom.
    pub adopting: Adopting,
    /// The service and shared workers of shared pages, announced as targets.
    pub workers: Workers,
    /// The scan for them under way, if any.
    pub scan: WorkerScan,
    /// Tabs being put into or taken out of a group by us right now.
    pub placing: Placing,
    /// The daemon's agents, as it last reported them.
    pub agents: Vec<AgentView>,
    /// Agents' requests for the human's active tab, waiting for an answer.
    pub handovers: Vec<HandoverRequest>,
    /// Agents' new tabs: those being created, and a blank one ready for each agent's next page.
    pub agent_tabs: AgentTabs,
    /// The human's focus, and an agent's last pointer press, for `placement::focus_changed`.
    pub focus: FocusGuard,
    /// Questions the policy asks the human, waiting for an answer.
    pub approvals: Vec<ApprovalRequest>,
    /// The human's standing answers to the gesture guard, as the daemon last listed them.
    pub standing: Vec<crate::messages::StandingView>,
    /// The gesture guard's state in the browser.
    pub gestures: Gestures,
    /// The guard's reads of a page and resent writes under way (`gestures.rs`).
    pub page_reads: Reads,
    /// The sites shared tabs showed, whose workers outside any tab may not write.
    pub off_tab_writes: OffTabWrites,
    /// Documents begun before their tab's guard was armed (`late_documents.rs`).
    pub late_documents: LateDocuments,
    /// The `Fetch.enable` params last sent on each armed tab's own session (the guard's
    /// patterns and its clients'), to send again.
    pub fetch_params: BTreeMap<TabId, serde_json::Value>,
    /// Chrome lets the extension read local files: how to turn that off.
    pub file_access_warning: Option<String>,
    /// This browser's clock minus the daemon's, from its first report on this connection.
    pub clock_offset: Option<f64>,
    /// Agents with a token of their own, as the daemon last listed them.
    pub agent_credentials: Vec<tabtunnel_wire::AgentCredential>,
    /// A token the human just minted, until they dismiss it.
    pub minted_token: Option<crate::messages::MintedToken>,
}

thread_local! {
    static WORKER: RefCell<Worker> = RefCell::new(Worker::default());
}

pub fn with<R>(f: impl FnOnce(&mut Worker) -> R) -> R {
    WORKER.with_borrow_mut(f)
}

pub fn is_shared(tab_id: TabId) -> bool {
    with(|w| w.shared.contains_key(&tab_id))
}

/// The agent a shared tab belongs to.
pub fn owner_of(tab_id: TabId) -> Option<Owner> {
    with(|w| w.shared.owner_of(tab_id))
}

/// The tab a message came from, when a debugger of ours holds it (shared, being shared, or
/// prepared for an agent) or held it as it left the web: a page of ours there could be an agent's script, so it is told
/// nothing and may change nothing. The side panel, or the panel opened as a window, is in no
/// such tab (`restricted::check_debuggable` keeps our pages from being shared).
pub fn held_sender(sender: &JsValue) -> Option<TabId> {
    let tab = js_sys::Reflect::get(sender, &"tab".into()).ok().filter(|t| t.is_object())?;
    let tab_id = js_sys::Reflect::get(&tab, &"id".into()).ok()?.as_f64()? as TabId;
    let held = with(|w| w.shared.is_held(tab_id) || w.agent_tabs.owner(tab_id).is_some());
    held.then_some(tab_id)
}
