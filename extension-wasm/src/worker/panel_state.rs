//! The side panel's view of the worker: its state, and the broadcast telling every open panel.

use wasm_bindgen_futures::spawn_local;

use super::daemon;
use super::state::with;
use crate::chrome;
use crate::js::to_js;
use crate::messages::{PanelState, SharedTab, WorkerBroadcast};

pub fn snapshot() -> PanelState {
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
pub fn broadcast() {
    let state = snapshot();
    let secrets = state.secrets_fingerprint();
    let message = to_js(&WorkerBroadcast::State { state: Box::new(state.withholding_secrets()), secrets });
    spawn_local(async move {
        let _ = chrome::send_message(&message).await;
    });
}
