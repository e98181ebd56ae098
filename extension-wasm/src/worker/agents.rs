//! The human's side of agents: handing a tab to an agent, answering an agent's request for the
//! active tab, disconnecting an agent, and the daemon's reports of its agents for the panel.
//! Also popups: a tab an agent's page opens is that agent's too.

use tabtunnel_wire::{
    AgentStatus, ApprovalAnswer, ApprovalRequest, FromExtension, HandoverRequest, TabId, TabInfo, TabsFate,
    DEFAULT_AGENT,
};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use tabtunnel_extension_core::popups::Adoption;

use tabtunnel_extension_core::sharing::Owner;

use super::panel_state::broadcast;
use super::sharing;
use super::state::with;
use super::{daemon, off_tab_writes, placement, relatives};
use crate::chrome;
use crate::js::from_js;
use crate::messages::{AgentView, RecentStep};

pub fn listen() {
    let on_created = Closure::<dyn FnMut(JsValue)>::new(|tab: JsValue| {
        let Some(tab) = from_js::<chrome::Tab>(&tab) else { return };
        let Some(tab_id) = tab.id else { return };
        off_tab_writes::tab_created(tab_id, tab.window_id, tab.opener_tab_id);
        if let Some(source) = with(|w| w.popups.tab_created(tab_id)) {
            popup_opened(tab_id, source);
        }
    });
    chrome::on_tab_created(&on_created);
    on_created.forget();

    let on_navigation_target = Closure::<dyn FnMut(JsValue)>::new(|details: JsValue| {
        let Some(target) = from_js::<NavigationTarget>(&details) else { return };
        off_tab_writes::opened_by_page(target.tab_id, target.source_tab_id);
        relatives::opened(target.tab_id, target.source_tab_id);
        if let Some(source) = with(|w| w.popups.opened_by_page(target.tab_id, target.source_tab_id)) {
            popup_opened(target.tab_id, source);
        }
    });
    chrome::on_created_navigation_target(&on_navigation_target);
    on_navigation_target.forget();
}

/// `webNavigation.onCreatedNavigationTarget`'s details, as far as they matter here.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct NavigationTarget {
    tab_id: TabId,
    source_tab_id: TabId,
}

/// A page in `source` opened `tab_id`, now in a tab strip: if that page is an agent's (or a
/// popup of its being adopted: a page opening popups in a row), the tab is that agent's too.
fn popup_opened(tab_id: TabId, source: TabId) {
    let begun = with(|w| w.adopting.begin(tab_id, source, w.shared.owner_of(source)));
    let Some((adoption, owner)) = begun else {
        // No agent's page (one being shared that went back to the human meanwhile).
        return off_tab_writes::settled(tab_id);
    };
    spawn_local(async move {
        adopt_popup(tab_id, owner, &adoption).await;
        with(|w| w.adopting.finish(adoption));
    });
}

/// A page of an agent opened a tab (`window.open`, a `target=_blank` link): it is that agent's,
/// as Chrome would make it a new target of the same browser; it closes when the agent is done if
/// the opener was one the agent opened. Let go if the human disconnected the agent meanwhile.
async fn adopt_popup(tab_id: TabId, opener: Owner, adoption: &Adoption) {
    if super::state::is_shared(tab_id) {
        return;
    }
    if !adopt(tab_id, opener, adoption).await {
        // Not the agent's after all: the human's, whose writes go; unless the agent's page
        // still reaches it (a page no debugger may hold: the agent's script would send it back
        // to the web and write from it).
        let url = chrome::get_tab(tab_id).await.map(|t| t.url).unwrap_or_default();
        if !relatives::close_if_reachable(tab_id, &url).await {
            off_tab_writes::settled(tab_id);
        }
    }
}

/// Whether the popup is shared now.
async fn adopt(tab_id: TabId, opener: Owner, adoption: &Adoption) -> bool {
    let agent = opener.agent.clone();
    let tab = match chrome::get_tab(tab_id).await {
        Ok(tab) => tab,
        Err(e) => {
            log!("not sharing tab {tab_id} opened by a page of {agent}: {e}");
            return false;
        }
    };
    placement::join_group(tab_id, tab.window_id, &opener.agent).await;
    match super::attach::attach_and_describe(tab_id, false, opener).await {
        Ok(info) if with(|w| w.adopting.confirmed(adoption)) => {
            log!("tab {tab_id}, opened by a page of {agent}, is {agent}'s");
            match sharing::add(info).await {
                Ok(()) => true,
                Err(e) => {
                    log!("not sharing tab {tab_id} opened by a page of {agent}: {e}");
                    false
                }
            }
        }
        Ok(_) => {
            log!("not sharing tab {tab_id}: {agent}, whose page opened it, was disconnected");
            let _ = chrome::detach(tab_id).await;
            placement::leave_group(tab_id).await;
            false
        }
        Err(e) => {
            log!("not sharing tab {tab_id} opened by a page of {agent}: {e}");
            false
        }
    }
}

/// Hands a tab to `agent` at the human's request: it stays where it is, joins a group of the
/// agent's, and only that agent's clients see it from now on.
pub async fn hand_tab(tab_id: TabId, agent: &str) -> Result<TabInfo, String> {
    let agent = agent.trim();
    if !tabtunnel_wire::is_valid_agent_name(agent) {
        return Err(format!("{agent:?} is not an agent name (1-64 letters, digits, '.', '_' or '-')"));
    }
    let tab = chrome::get_tab(tab_id).await.map_err(|e| format!("No such tab: {e}"))?;
    let owner = Owner { agent: agent.to_owned(), created: false };
    // Refused before the grouping: leaving the group again would count as the tab dragged out
    // of its agent's (given back to the human with its relatives).
    sharing::check_hand_over(tab_id, &owner)?;
    // Grouped first: a tab changing groups while it is an agent's counts as dragged out.
    placement::join_group(tab_id, tab.window_id, agent).await;
    let info = sharing::share_with(tab_id, owner).await;
    if info.is_err() {
        placement::leave_group(tab_id).await;
    }
    info
}

/// Closes an agent's connections (through the daemon); its tabs close or go back to the human.
pub fn disconnect(agent: &str, close_tabs: bool) -> Result<(), String> {
    if !with(|w| w.agents.iter().any(|a| a.name == agent)) {
        return Err(format!("No agent named {agent}."));
    }
    with(|w| w.adopting.agent_disconnected(agent));
    let tabs = if close_tabs { TabsFate::Close } else { TabsFate::Release };
    daemon::send(&FromExtension::DisconnectAgent { agent: agent.to_owned(), tabs });
    Ok(())
}

/// The human answered an agent's request: hand it this tab, or refuse (`None`).
pub async fn answer_handover(id: u64, tab_id: Option<TabId>) -> Result<(), String> {
    let Some(request) = with(|w| w.handovers.iter().find(|r| r.id == id).cloned()) else {
        return Err("That request is no longer waiting.".into());
    };
    let handed = match tab_id {
        Some(tab_id) => Some(hand_tab(tab_id, &request.agent).await?.tab_id),
        None => None,
    };
    with(|w| w.handovers.retain(|r| r.id != id));
    daemon::send(&FromExtension::HandoverAnswer { id, tab_id: handed });
    broadcast();
    Ok(())
}

/// The daemon's report of its agents, with times turned into this browser's clock (by one
/// offset per connection, so that the same time reads the same in every report).
pub fn reported(daemon_now_ms: u64, statuses: Vec<AgentStatus>) {
    let offset = with(|w| *w.clock_offset.get_or_insert_with(|| js_sys::Date::now() - daemon_now_ms as f64));
    let local = |t: u64| t as f64 + offset;
    let agents = statuses
        .into_iter()
        .map(|s| AgentView {
            color: if s.name == DEFAULT_AGENT { "grey".into() } else { placement::color_of(&s.name).into() },
            last_action_at: s.last_action_at_ms.map(local),
            releases_at: s.releases_at_ms.map(local),
            name: s.name,
            connections: s.connections,
            sessions: s.sessions,
            tabs: s.tabs,
            last_action: s.last_action,
            recent: s
                .recent
                .into_iter()
                .map(|a| RecentStep {
                    at: local(a.at_ms),
                    step: a.step,
                    method: a.method,
                    url: a.url,
                    outcome: a.outcome,
                    question: a.question,
                })
                .collect(),
            token_id: s.token_id,
            client: s.client,
        })
        .collect();
    with(|w| w.agents = agents);
    broadcast();
}

pub fn handover_requested(request: HandoverRequest) {
    with(|w| {
        w.handovers.retain(|r| r.id != request.id);
        w.handovers.push(request);
    });
    broadcast();
}

pub fn handover_withdrawn(id: u64) {
    with(|w| w.handovers.retain(|r| r.id != id));
    broadcast();
}

/// The policy asks the human: shown in the panel until answered or withdrawn.
pub fn approval_requested(request: ApprovalRequest) {
    super::gestures::picture(&request);
    with(|w| {
        w.approvals.retain(|r| r.id != request.id);
        w.approvals.push(request);
    });
    broadcast();
}

pub fn approval_withdrawn(id: u64) {
    super::gestures::question_settled(id);
    with(|w| w.approvals.retain(|r| r.id != id));
    broadcast();
}

pub fn answer_approval(id: u64, answer: ApprovalAnswer) -> Result<(), String> {
    if !with(|w| w.approvals.iter().any(|r| r.id == id)) {
        return Err("That question is no longer waiting.".into());
    }
    with(|w| w.approvals.retain(|r| r.id != id));
    super::gestures::question_settled(id);
    daemon::send(&FromExtension::ApprovalAnswer { id, answer });
    broadcast();
    Ok(())
}

/// The daemon's standing answers, on this browser's clock.
pub fn standing_reported(daemon_now_ms: u64, answers: Vec<tabtunnel_wire::gestures::StandingAnswer>) {
    let offset = with(|w| *w.clock_offset.get_or_insert_with(|| js_sys::Date::now() - daemon_now_ms as f64));
    let standing = answers
        .into_iter()
        .map(|a| crate::messages::StandingView {
            id: a.id,
            agent: a.agent,
            origin: a.origin,
            kinds: a.kinds,
            until: a.until_ms.map(|t| t as f64 + offset),
        })
        .collect();
    with(|w| w.standing = standing);
    broadcast();
}

/// The human takes a standing answer back.
pub fn take_back_standing(id: u64) -> Result<(), String> {
    if !with(|w| w.standing.iter().any(|s| s.id == id)) {
        return Err("That standing answer is no longer there.".into());
    }
    with(|w| w.standing.retain(|s| s.id != id));
    daemon::send(&FromExtension::TakeBackStanding { id });
    broadcast();
    Ok(())
}

/// The daemon connection is gone: what it reported is stale.
pub fn forget_reports() {
    with(|w| {
        w.clock_offset = None;
        w.agents.clear();
        w.handovers.clear();
        w.approvals.clear();
        w.gestures.forget_pictures();
        w.standing.clear();
    });
}
