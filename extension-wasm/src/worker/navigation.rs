//! An agent's allowed origins, enforced in the browser for navigations its pages start
//! themselves (a link, a form, a script): `declarativeNetRequest` session rules scoped to the
//! agent's tabs. Top-level requests to an origin that is not allowed, or that the policy asks
//! about, are redirected to the daemon's navigation endpoint, which either answers `204 No
//! Content` (the tab stays where it was) or, once the human allowed it, lets this one URL through
//! and redirects back. Navigations clients ask for (`Page.navigate`, `Target.createTarget`) are
//! checked by the daemon before they reach the tab; these rules are the net under everything else.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use tabtunnel_wire::{NavigationRules, OriginRules, TabId};
use wasm_bindgen_futures::spawn_local;

use super::with;
use crate::chrome;
use crate::js::sleep;

/// Rule priorities: a later layer wins over an earlier one.
const CATCH_ALL: i32 = 1;
const ALLOWED: i32 = 2;
const ASKED: i32 = 3;
const ALWAYS_THROUGH: i32 = 4;
/// How long a URL the human allowed stays let through (the navigation it was for happens at
/// once; a slow redirect chain has this long).
const ALLOWED_ONCE_MS: u32 = 10_000;

/// The rules in force, and which browser rule ids each tab holds.
#[derive(Debug, Default)]
pub struct Navigation {
    rules: NavigationRules,
    /// `http://127.0.0.1:PORT/<token>/tabtunnel/navigation`
    endpoint: String,
    installed: BTreeMap<TabId, Vec<i32>>,
    next_rule_id: i32,
    /// Session rules outlive the worker: a new worker removes those it did not put in place
    /// (their ids would clash with its own, and their tabs may be the human's again).
    stale_removed: bool,
}

/// The daemon's rules arrived (at connection, or the policy changed): every shared tab's rules
/// are put in place again.
pub fn rules_changed(rules: NavigationRules, endpoint: String) {
    with(|w| {
        w.navigation.rules = rules;
        w.navigation.endpoint = endpoint;
    });
    let tabs: Vec<(TabId, String)> =
        with(|w| w.shared.values().map(|t| (t.tab_id, t.agent.clone())).collect());
    spawn_local(async move {
        remove_stale_rules().await;
        for (tab_id, agent) in tabs {
            apply(tab_id, Some(&agent)).await;
        }
    });
}

/// Once per worker: removes the session rules an earlier worker left (any rule this one did
/// not install).
async fn remove_stale_rules() {
    if with(|w| std::mem::replace(&mut w.navigation.stale_removed, true)) {
        return;
    }
    let ids = match chrome::session_rule_ids().await {
        Ok(ids) => ids,
        Err(e) => return warn!("could not read the navigation rules in place: {e}"),
    };
    let stale: Vec<i32> = with(|w| {
        let ours = &w.navigation.installed;
        ids.into_iter().filter(|id| !ours.values().any(|tab| tab.contains(id))).collect()
    });
    if !stale.is_empty() {
        if let Err(e) = chrome::update_session_rules(&stale, &[]).await {
            warn!("could not remove the navigation rules of an earlier worker: {e}");
        }
    }
}

/// Whether `agent`'s tabs have origin rules (a new tab is then opened blank, and navigated once
/// its rules are in place).
pub fn restricts(agent: &str) -> bool {
    with(|w| w.navigation.rules.for_agent(agent).is_some())
}

/// Puts a tab's rules in place for its agent (`None`: it is no longer shared; its rules go).
pub async fn apply(tab_id: TabId, agent: Option<&str>) {
    let (remove, add) = with(|w| {
        let nav = &mut w.navigation;
        let remove = nav.installed.remove(&tab_id).unwrap_or_default();
        let rules = agent.and_then(|a| nav.rules.for_agent(a).cloned());
        let add = match (agent, rules) {
            (Some(agent), Some(rules)) if !nav.endpoint.is_empty() => tab_rules(nav, tab_id, agent, &rules),
            _ => Vec::new(),
        };
        let ids: Vec<i32> = add.iter().filter_map(|r| r["id"].as_i64()).map(|id| id as i32).collect();
        if !ids.is_empty() {
            nav.installed.insert(tab_id, ids);
        }
        (remove, add)
    });
    if remove.is_empty() && add.is_empty() {
        return;
    }
    if let Err(e) = chrome::update_session_rules(&remove, &add).await {
        warn!("could not set the navigation rules of tab {tab_id}: {e}");
        // Nothing changed (the update is all or nothing): the old rules are still in place.
        with(|w| {
            if remove.is_empty() {
                w.navigation.installed.remove(&tab_id);
            } else {
                w.navigation.installed.insert(tab_id, remove);
            }
        });
    }
}

/// The human allowed `url` for this tab: let it through once.
pub async fn allow_once(tab_id: TabId, url: &str) -> Result<(), String> {
    let id = with(|w| {
        w.navigation.next_rule_id += 1;
        w.navigation.next_rule_id
    });
    let rule = rule(id, ALWAYS_THROUGH, tab_id, &format!("^{}$", escape(url)), json!({ "type": "allow" }));
    chrome::update_session_rules(&[], &[rule]).await?;
    spawn_local(async move {
        sleep(ALLOWED_ONCE_MS).await;
        let _ = chrome::update_session_rules(&[id], &[]).await;
    });
    Ok(())
}

fn tab_rules(nav: &mut Navigation, tab_id: TabId, agent: &str, rules: &OriginRules) -> Vec<Value> {
    let mut next = || {
        nav.next_rule_id += 1;
        nav.next_rule_id
    };
    let redirect = json!({
        "type": "redirect",
        "redirect": { "regexSubstitution": format!("{}/{agent}/{tab_id}?\\0", nav.endpoint) },
    });
    let mut out = Vec::new();
    if let Some(allowed) = &rules.allow {
        out.push(rule(next(), CATCH_ALL, tab_id, "^.*$", redirect.clone()));
        for regex in allowed {
            out.push(rule(next(), ALLOWED, tab_id, regex, json!({ "type": "allow" })));
        }
    }
    for regex in &rules.ask {
        out.push(rule(next(), ASKED, tab_id, regex, redirect.clone()));
    }
    // The endpoint itself, or the redirect would loop.
    let endpoint = format!("^{}/", escape(&nav.endpoint));
    out.push(rule(next(), ALWAYS_THROUGH, tab_id, &endpoint, json!({ "type": "allow" })));
    out
}

fn rule(id: i32, priority: i32, tab_id: TabId, regex: &str, action: Value) -> Value {
    json!({
        "id": id,
        "priority": priority,
        "action": action,
        "condition": { "regexFilter": regex, "resourceTypes": ["main_frame"], "tabIds": [tab_id] },
    })
}

/// A literal for an RE2 regular expression.
fn escape(text: &str) -> String {
    text.chars().fold(String::with_capacity(text.len() * 2), |mut out, c| {
        if !c.is_ascii_alphanumeric() {
            out.push('\\');
        }
        out.push(c);
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agents_tab_gets_a_catch_all_its_allowed_and_asked_origins_and_a_way_back() {
        let mut nav = Navigation {
            endpoint: "http://127.0.0.1:9/t/tabtunnel/navigation".into(),
            ..Navigation::default()
        };
        let rules = OriginRules {
            allow: Some(vec!["^https://a\\.test([/?#]|$)".into()]),
            ask: vec!["^https://m\\.test([/?#]|$)".into()],
        };
        let out = tab_rules(&mut nav, 5, "bot", &rules);
        let summary: Vec<(i64, &str)> = out
            .iter()
            .map(|r| (r["priority"].as_i64().unwrap(), r["action"]["type"].as_str().unwrap()))
            .collect();
        assert_eq!(summary, [(1, "redirect"), (2, "allow"), (3, "redirect"), (4, "allow")]);
        assert_eq!(
            out[0]["action"]["redirect"]["regexSubstitution"],
            "http://127.0.0.1:9/t/tabtunnel/navigation/bot/5?\\0"
        );
        assert_eq!(out[0]["condition"]["tabIds"], json!([5]));
        assert_eq!(out[0]["condition"]["resourceTypes"], json!(["main_frame"]));
        assert_eq!(
            out[3]["condition"]["regexFilter"],
            "^http\\:\\/\\/127\\.0\\.0\\.1\\:9\\/t\\/tabtunnel\\/navigation/"
        );
        let ids: Vec<i64> = out.iter().map(|r| r["id"].as_i64().unwrap()).collect();
        assert_eq!(ids, [1, 2, 3, 4]);
        // Only asked origins: no catch-all.
        let asked_only = OriginRules { allow: None, ask: vec!["^x".into()] };
        assert_eq!(tab_rules(&mut nav, 6, "bot", &asked_only).len(), 2);
        assert_eq!(escape("a.b?c=1&d"), "a\\.b\\?c\\=1\\&d");
    }
}
