//! The service worker: one daemon socket, the shared tabs, and the panel's requests; its state
//! is [`state::Worker`].

mod agent_tabs;
mod agents;
mod attach;
mod browser_ops;
mod daemon;
mod file_access;
mod gestures;
mod inspect;
mod kill_switch;
mod late_documents;
mod link_effects;
mod navigation;
mod off_tab_writes;
mod panel_state;
mod picture_capture;
mod pictures;
mod placement;
mod reattach;
mod relatives;
mod relay;
mod settings;
mod sharing;
mod state;
mod tab_events;
mod tab_gate;
mod wake;
mod web_only;
mod workers;

use tabtunnel_extension_core::{Input, PanelInput};
use tabtunnel_wire::{AgentTokenOp, FromExtension};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::chrome;
use crate::js::{from_js, to_js};
use crate::messages::{PanelReply, PanelRequest, PanelState};
use panel_state::{broadcast, snapshot};
use state::{held_sender, with};

pub fn start() {
    log!("service worker starting");
    daemon::install(daemon::Handlers {
        worker: link_effects::run,
        panel_changed: broadcast,
        command: relay::receive,
    });
    relay::listen();
    tab_events::listen();
    off_tab_writes::start();
    placement::listen();
    agents::listen();
    kill_switch::listen();
    listen_to_panel();
    pictures::listen();
    wake::listen();
    workers::watch();
    spawn_local(relatives::restore());
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
