//! The service worker: one daemon socket, the shared tabs, and the panel's requests. All state
//! lives in one thread-local [`Worker`]; handlers borrow it briefly and never across an await.

mod agents;
mod browser_ops;
mod daemon;
mod file_access;
mod gestures;
mod kill_switch;
mod link_effects;
mod navigation;
mod pictures;
mod placement;
mod prepared;
mod relay;
mod settings;
mod sharing;
mod wake;
mod web_only;
mod workers;

use std::cell::RefCell;
use std::collections::BTreeMap;

use tabtunnel_extension_core::early_events::EarlyEvents;
use tabtunnel_extension_core::epochs::Epochs;
use tabtunnel_extension_core::focus::FocusGuard;
use tabtunnel_extension_core::placement::Placing;
use tabtunnel_extension_core::popups::{Adopting, Popups};
use tabtunnel_extension_core::sharing::Sharing;
use tabtunnel_extension_core::steps::Steps;
use tabtunnel_extension_core::{Input, PanelInput};
use tabtunnel_wire::{AgentTokenOp, ApprovalRequest, FromExtension, HandoverRequest, TabId};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::chrome;
use crate::js::{from_js, to_js};
use crate::messages::{AgentView, PanelReply, PanelRequest, PanelState, SharedTab, WorkerBroadcast};

#[derive(Default)]
struct Worker {
    /// The shared tabs (read as a map), those being attached and those that left the web.
    shared: Sharing,
    /// Events of tabs attached with the gesture guard armed but not announced yet (see
    /// `relay::on_debugger_event`), replayed by `sharing::add` once they are.
    early_events: EarlyEvents<relay::EarlyEvent>,
    /// Tabs with a step in progress that commands arriving meanwhile must wait for: their
    /// debugger session detached and re-attached (a reset, or after `target_closed`), or the tab
    /// made active for a screenshot; each promise resolves when that is done.
    resetting: BTreeMap<TabId, js_sys::Promise>,
    /// Which of those steps is the latest, so that only it clears `resetting`.
    tab_steps: Steps<TabId>,
    /// Bumped when a tab's debugger session was lost under its clients: commands they sent
    /// before are answered "Target closed" instead of running on the new session.
    epochs: Epochs,
    /// Agents' windows and tab groups.
    places: placement::Places,
    /// New tabs and the pages that opened them, joined (see `agents::listen`).
    popups: Popups,
    /// Popups of agents' pages being adopted, and by whom.
    adopting: Adopting,
    /// The service and shared workers of shared pages, announced as targets.
    workers: workers::Workers,
    /// Tabs being put into or taken out of a group by us right now.
    placing: Placing,
    /// The daemon's agents, as it last reported them.
    agents: Vec<AgentView>,
    /// Agents' requests for the human's active tab, waiting for an answer.
    handovers: Vec<HandoverRequest>,
    /// A blank tab ready for each agent's next page.
    prepared: prepared::Prepared,
    /// Per agent, the tab operation running now; the next waits for it (two at once could
    /// open two windows for one agent).
    agent_queue: BTreeMap<String, js_sys::Promise>,
    /// Which of those operations is the latest, so that only it clears `agent_queue`.
    agent_steps: Steps<String>,
    /// The human's focus, and an agent's last pointer press, for [`placement::focus_changed`].
    focus: FocusGuard,
    /// The agents' origin rules in the browser.
    navigation: navigation::Navigation,
    /// Questions the policy asks the human, waiting for an answer.
    approvals: Vec<ApprovalRequest>,
    /// The human's standing answers to the gesture guard, as the daemon last listed them.
    standing: Vec<crate::messages::StandingView>,
    /// The gesture guard's state in the browser.
    gestures: gestures::Gestures,
    /// Chrome lets the extension read local files: how to turn that off.
    file_access_warning: Option<String>,
    /// This browser's clock minus the daemon's, from its first report on this connection.
    clock_offset: Option<f64>,
    /// Agents with a token of their own, as the daemon last listed them.
    agent_credentials: Vec<tabtunnel_wire::AgentCredential>,
    /// A token the human just minted, until they dismiss it.
    minted_token: Option<crate::messages::MintedToken>,
}

thread_local! {
    static WORKER: RefCell<Worker> = RefCell::new(Worker::default());
}

fn with<R>(f: impl FnOnce(&mut Worker) -> R) -> R {
    WORKER.with_borrow_mut(f)
}

pub fn start() {
    log!("service worker starting");
    daemon::install();
    relay::listen();
    sharing::listen();
    web_only::listen();
    placement::listen();
    agents::listen();
    kill_switch::listen();
    listen_to_panel();
    pictures::listen();
    wake::listen();
    workers::watch();
    spawn_local(wake::schedule());
    spawn_local(async {
        let warning = file_access::check().await;
        with(|w| w.file_access_warning = warning);
        broadcast();
    });
    spawn_local(async {
        if let Err(e) = chrome::open_panel_on_action_click().await {
            warn!("sidePanel.setPanelBehavior failed: {e}");
        }
        // The machine restores the kill switch, has the tabs re-attached, then dials.
        let _ = daemon::input(Input::Start);
    });
}

fn listen_to_panel() {
    let cb = Closure::<dyn FnMut(JsValue, JsValue, js_sys::Function) -> bool>::new(
        |message: JsValue, sender: JsValue, send_response: js_sys::Function| {
            let Some(request) = from_js::<PanelRequest>(&message) else {
                return false; // not ours (e.g. another panel's broadcast)
            };
            if let Some(tab_id) = held_sender(&sender) {
                warn!("refused {request:?} from a page in tab {tab_id}, which a debugger of ours holds");
                let reply = PanelReply { state: PanelState::default(), error: Some(HELD_SENDER.into()) };
                let _ = send_response.call1(&JsValue::NULL, &to_js(&reply));
                return false;
            }
            spawn_local(async move {
                let error = handle(request).await.err();
                let reply = PanelReply { state: snapshot(), error };
                let _ = send_response.call1(&JsValue::NULL, &to_js(&reply));
            });
            true // the answer comes asynchronously
        },
    );
    chrome::on_runtime_message(&cb);
    cb.forget();
}

const HELD_SENDER: &str =
    "tabtunnel's pages answer only where no agent's debugger can reach them (not in a shared tab)";

/// The tab a message came from, when a debugger of ours holds it (shared, being shared, or
/// prepared for an agent) or held it as it left the web: a page of ours there could be an agent's script, so it is told
/// nothing and may change nothing. The side panel, or the panel opened as a window, is in no
/// such tab (`restricted::check_debuggable` keeps our pages from being shared).
fn held_sender(sender: &JsValue) -> Option<TabId> {
    let tab = js_sys::Reflect::get(sender, &"tab".into()).ok().filter(|t| t.is_object())?;
    let tab_id = js_sys::Reflect::get(&tab, &"id".into()).ok()?.as_f64()? as TabId;
    let held = with(|w| w.shared.is_held(tab_id)) || prepared::owner(tab_id).is_some();
    held.then_some(tab_id)
}

async fn handle(request: PanelRequest) -> Result<(), String> {
    match request {
        PanelRequest::GetState => Ok(()),
        PanelRequest::Share { tab_id } => sharing::share(tab_id).await,
        PanelRequest::Unshare { tab_id } => {
            sharing::unshare_by_user(tab_id).await;
            Ok(())
        }
        PanelRequest::SetDaemonUrl { url } => daemon::input(Input::Panel(PanelInput::SetDaemonUrl(url))),
        PanelRequest::HandTab { tab_id, agent } => agents::hand_tab(tab_id, &agent).await.map(drop),
        PanelRequest::TakeBack { tab_id } => {
            sharing::release(tab_id).await;
            Ok(())
        }
        PanelRequest::DisconnectAgent { agent, close_tabs } => agents::disconnect(&agent, close_tabs),
        PanelRequest::AnswerHandover { id, tab_id } => agents::answer_handover(id, tab_id).await,
        PanelRequest::AnswerApproval { id, answer } => agents::answer_approval(id, answer),
        PanelRequest::TakeBackStanding { id } => agents::take_back_standing(id),
        PanelRequest::KillSwitch { engaged } => daemon::input(Input::Panel(PanelInput::KillSwitch(engaged))),
        PanelRequest::MintAgentToken { name } => {
            let name = name.trim().to_owned();
            if !tabtunnel_wire::is_valid_agent_name(&name) {
                return Err("An agent's name is 1-64 letters, digits, '.', '_' or '-'.".into());
            }
            daemon::input(Input::Panel(PanelInput::Send(FromExtension::AgentToken(AgentTokenOp::Mint {
                name,
            }))))
        }
        PanelRequest::RevokeAgentToken { name } => {
            daemon::input(Input::Panel(PanelInput::Send(FromExtension::AgentToken(AgentTokenOp::Revoke {
                name,
            }))))
        }
        PanelRequest::DismissMintedToken => {
            with(|w| w.minted_token = None);
            Ok(())
        }
        PanelRequest::UseThisBrowser => daemon::input(Input::Panel(PanelInput::UseThisBrowser)),
        PanelRequest::BringForward { tab_id } => pictures::bring_forward(tab_id).await,
    }
}

fn snapshot() -> PanelState {
    let link = daemon::status();
    let kill_switch = daemon::kill_switch();
    with(|w| {
        PanelState {
        daemon: link.daemon,
        detail: link.detail,
        daemon_url: link.daemon_url,
        client_endpoint: link.client_endpoint,
        shared_tabs: w
            .shared
            .values()
            .map(|t| SharedTab {
                tab_id: t.tab_id,
                title: t.title.clone(),
                url: t.url.clone(),
                agent: t.agent.clone(),
            })
            .collect(),
        pending_tabs: w.shared.attaching().collect(),
        agents: w.agents.clone(),
        handovers: w.handovers.clone(),
        human_window: w.focus.human_window(),
        approvals: w.approvals.clone(),
        standing: w.standing.clone(),
        approval_pictures: w.gestures.shown_pictures(|id| {
            w.agents.iter().flat_map(|a| &a.recent).any(|step| step.question == Some(id))
        }),
        kill_switch,
        agent_credentials: w.agent_credentials.clone(),
        minted_token: w.minted_token.clone(),
        version_warning: link.version_warning,
        file_access_warning: w.file_access_warning.clone(),
        audit_trail_warning: link.audit_trail.map(|problem| {
            format!("The audit trail was changed since it was written: {problem}. `tabtunnel audit verify` says more.")
        }),
    }
    })
}

/// Tells every open panel. Fails harmlessly when none is open.
fn broadcast() {
    let state = snapshot();
    let secrets = state.secrets_fingerprint();
    let message = to_js(&WorkerBroadcast::State { state: Box::new(state.withholding_secrets()), secrets });
    spawn_local(async move {
        let _ = chrome::send_message(&message).await;
    });
}
