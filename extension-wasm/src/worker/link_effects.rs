//! What the machine hands to the part of the worker it does not hold yet: frames for sharing,
//! agents and the rest, the restore at start, a lost daemon, the kill switch's stop.

use tabtunnel_extension_core::{Input, WorkerEffect};
use tabtunnel_wire::{BrowserOp, BrowserRequest, TabId, ToExtension, UnshareReason};
use wasm_bindgen_futures::spawn_local;

use super::panel_state::broadcast;
use super::state::with;
use super::{agent_tabs, agents, browser_ops, daemon, gestures, navigation, reattach, sharing, workers};

pub fn run(effect: WorkerEffect) {
    match effect {
        WorkerEffect::Restore { shares } => spawn_local(async move {
            // Re-attach before dialing, so the first Hello lists the tabs that survived a restart.
            if shares {
                sharing::restore().await;
            }
            agent_tabs::restore().await;
            let _ = daemon::input(Input::WorkerRestored);
        }),
        WorkerEffect::StartUp(startup) => spawn_local(sharing::start_up(startup)),
        WorkerEffect::Deliver { generation, frame } => deliver(generation, frame),
        WorkerEffect::ConnectionLost { was_open } => {
            agents::forget_reports();
            // The agents went with the daemon's clients.
            agent_tabs::connection_lost();
            // The daemon's questions went with it: nothing it held may go through unasked.
            gestures::fail_all_held();
            if was_open {
                // Every client session went with that daemon (a new one knows nothing of what
                // they enabled): start each shared tab's debugger session afresh, as when a
                // tab's last client leaves, so the next daemon's clients find Chrome in the
                // state they expect (a second `Runtime.enable` on a live session reports no
                // execution contexts).
                let tabs: Vec<TabId> = with(|w| w.shared.keys().copied().collect());
                for tab_id in tabs {
                    reattach::reset(tab_id);
                }
            }
        }
        WorkerEffect::StopEverything => spawn_local(async {
            agent_tabs::kill_switch_engaged();
            reattach::kill_switch_engaged();
            let tabs: Vec<TabId> = with(|w| w.shared.keys().copied().collect());
            // At once: each may wait for its reload.
            futures_util::future::join_all(tabs.into_iter().map(sharing::stop_for_kill_switch)).await;
            workers::forget_all(UnshareReason::StoppedByUser);
        }),
    }
}

fn deliver(generation: u64, frame: ToExtension) {
    match frame {
        ToExtension::ResetTab { tab_id } if workers::is_worker(tab_id) => workers::reset(tab_id),
        ToExtension::ResetTab { tab_id } => reattach::reset(tab_id),
        ToExtension::Browser(BrowserRequest { id, op: BrowserOp::CreateTab { agent, url, allow_once } }) => {
            agent_tabs::create(generation, id, agent, url, allow_once)
        }
        ToExtension::Browser(request) => browser_ops::run(generation, request),
        ToExtension::Agents { now_ms, agents: statuses } => agents::reported(now_ms, statuses),
        ToExtension::HandoverRequest(request) => agents::handover_requested(request),
        ToExtension::HandoverWithdrawn { id } => agents::handover_withdrawn(id),
        ToExtension::Approval(request) => agents::approval_requested(request),
        ToExtension::ApprovalWithdrawn { id } => agents::approval_withdrawn(id),
        ToExtension::StandingAnswers { now_ms, answers } => agents::standing_reported(now_ms, answers),
        ToExtension::NavigationRules { rules, navigation_url } => {
            navigation::rules_changed(rules, navigation_url)
        }
        ToExtension::PrepareTabs { agents } => agent_tabs::wanted(generation, agents),
        ToExtension::AgentCredentials { agents } => {
            with(|w| w.agent_credentials = agents);
            broadcast();
        }
        ToExtension::AgentTokenMinted { name, token, error } => {
            with(|w| w.minted_token = Some(crate::messages::MintedToken { name, token, error }));
            broadcast();
        }
        // The machine's own.
        ToExtension::Command(_)
        | ToExtension::Heartbeat
        | ToExtension::Welcome(_)
        | ToExtension::Rejected { .. } => {}
    }
}
