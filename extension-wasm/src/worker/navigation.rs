//! An agent's policy, enforced by the browser itself for everything its pages load:
//! `declarativeNetRequest` session rules scoped to the agent's tabs (one set of rules per agent,
//! naming all its tabs).
//!
//! - Top-level documents: requests to an origin that is not allowed, or that the policy asks
//!   about, are redirected to the daemon's navigation endpoint, which either answers `204 No
//!   Content` (the tab stays where it was) or, once the human allowed it, lets this one URL
//!   through and redirects back. Navigations clients ask for (`Page.navigate`,
//!   `Target.createTarget`) are checked by the daemon before they reach the tab; these rules are
//!   the net under everything else (a link, a form, a script).
//! - Frames load only from the allowed origins and `allow_frame_origins`; any other is blocked
//!   (a frame cannot wait for the human), so a forbidden site never loads inside an allowed page.
//! - Requests to any other origin (images, scripts, `fetch` with `no-cors`) go without the
//!   user's cookies, and their `Set-Cookie` is dropped: what they answer is what anybody gets.
//! - `read-only`: no top-level navigation at all, nothing but GET, HEAD and OPTIONS, no
//!   WebSocket or WebTransport.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};
use tabtunnel_extension_core::off_tab_writes::{self, SUBRESOURCES, WRITE_METHODS};
use tabtunnel_wire::{navigation_mac, NavigationRules, OriginRules, TabId};
use wasm_bindgen_futures::spawn_local;

use std::cell::RefCell;

use super::state::with;
use crate::chrome;
use crate::js::sleep;

/// Rule priorities: a later layer wins over an earlier one.
const CATCH_ALL: i32 = 1;
const ALLOWED: i32 = 2;
const ASKED: i32 = 3;
const READ_ONLY: i32 = 4;
const ALWAYS_THROUGH: i32 = 5;
/// How long a URL the human allowed stays let through (the navigation it was for happens at
/// once; a slow redirect chain has this long).
const ALLOWED_ONCE_MS: u32 = 10_000;
/// The rules in force, and which browser rules each agent's tabs hold.
#[derive(Debug, Default)]
struct Navigation {
    rules: NavigationRules,
    /// `http://127.0.0.1:PORT/<key>/tabtunnel/navigation`
    endpoint: String,
    agents: BTreeMap<String, AgentTabs>,
    next_rule_id: i32,
    /// Session rules outlive the worker: a new worker removes those it did not put in place
    /// (their ids would clash with its own, and their tabs may be the human's again).
    stale_removed: bool,
}

thread_local! {
    static NAVIGATION: RefCell<Navigation> = RefCell::new(Navigation::default());
}

fn nav<R>(f: impl FnOnce(&mut Navigation) -> R) -> R {
    NAVIGATION.with_borrow_mut(f)
}

/// One agent's shared tabs and the ids of the browser rules that cover them.
#[derive(Debug, Default)]
struct AgentTabs {
    tabs: BTreeSet<TabId>,
    installed: Vec<i32>,
}

/// The daemon's rules arrived (at connection, or the policy changed): every agent's rules are
/// put in place again.
pub fn rules_changed(rules: NavigationRules, endpoint: String) {
    // Tabs shared before the rules came (a restarted worker) are in `shared` only.
    let shared: Vec<(TabId, String)> =
        with(|w| w.shared.values().map(|t| (t.tab_id, t.agent.clone())).collect());
    let agents: Vec<String> = nav(|n| {
        n.rules = rules;
        n.endpoint = endpoint;
        for (tab, agent) in shared {
            n.agents.entry(agent).or_default().tabs.insert(tab);
        }
        n.agents.keys().cloned().collect()
    });
    spawn_local(async move {
        remove_stale_rules().await;
        update(agents).await;
    });
}

/// Once per worker: removes the session rules an earlier worker left (any rule this one did
/// not install).
async fn remove_stale_rules() {
    if nav(|n| std::mem::replace(&mut n.stale_removed, true)) {
        return;
    }
    let ids = match chrome::session_rule_ids().await {
        Ok(ids) => ids,
        Err(e) => return warn!("could not read the navigation rules in place: {e}"),
    };
    let stale: Vec<i32> = nav(|n| {
        let ours = &n.agents;
        // The rules against workers' writes are `off_tab_writes`'s, replaced as it starts.
        let others = |id: &i32| !off_tab_writes::RULE_IDS.contains(id);
        ids.into_iter().filter(|id| others(id) && !ours.values().any(|a| a.installed.contains(id))).collect()
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
    nav(|n| n.rules.for_agent(agent).is_some())
}

/// A tab became `agent`'s (`None`: it is no longer shared): the rules of its old and new agent
/// are put in place again, naming their tabs now.
pub async fn apply(tab_id: TabId, agent: Option<&str>) {
    let affected: Vec<String> = nav(|n| {
        let agents = &mut n.agents;
        let mut affected: Vec<String> =
            agents.iter_mut().filter_map(|(name, a)| a.tabs.remove(&tab_id).then(|| name.clone())).collect();
        if let Some(agent) = agent {
            agents.entry(agent.to_owned()).or_default().tabs.insert(tab_id);
            affected.push(agent.to_owned());
        }
        affected.dedup();
        affected
    });
    update(affected).await;
}

/// Replaces the browser rules of these agents by what their rules and tabs say now, in one
/// update (all or nothing).
async fn update(agents: Vec<String>) {
    let (remove, add) = nav(|nav| {
        let mut remove = Vec::new();
        let mut add = Vec::new();
        for agent in &agents {
            let Some(state) = nav.agents.get_mut(agent) else { continue };
            remove.append(&mut state.installed);
            let tabs: Vec<TabId> = state.tabs.iter().copied().collect();
            let rules = nav.rules.for_agent(agent).cloned();
            let fresh = match rules {
                Some(rules) if !tabs.is_empty() && !nav.endpoint.is_empty() => {
                    agent_rules(&nav.endpoint, &mut nav.next_rule_id, &tabs, agent, &rules)
                }
                _ => Vec::new(),
            };
            let state = nav.agents.get_mut(agent).expect("looked up above");
            state.installed = fresh.iter().filter_map(|r| r["id"].as_i64()).map(|id| id as i32).collect();
            add.extend(fresh);
            if state.tabs.is_empty() {
                nav.agents.remove(agent);
            }
        }
        (remove, add)
    });
    if remove.is_empty() && add.is_empty() {
        return;
    }
    if let Err(e) = chrome::update_session_rules(&remove, &add).await {
        warn!("could not set the agents' navigation rules: {e}");
        // Nothing changed (the update is all or nothing): the old rules are still in place. The
        // next change for these agents tries again.
        nav(|n| {
            for agent in &agents {
                if let Some(state) = n.agents.get_mut(agent) {
                    state.installed.clone_from(&remove);
                }
            }
        });
    }
}

/// The human allowed `url` for this tab: let it through once.
pub async fn allow_once(tab_id: TabId, url: &str) -> Result<(), String> {
    let id = nav(|n| {
        n.next_rule_id += 1;
        n.next_rule_id
    });
    let condition = json!({ "regexFilter": format!("^{}$", escape(url)), "resourceTypes": ["main_frame"], "tabIds": [tab_id] });
    let rule = json!({ "id": id, "priority": ALWAYS_THROUGH, "action": { "type": "allow" }, "condition": condition });
    chrome::update_session_rules(&[], &[rule]).await?;
    spawn_local(async move {
        sleep(ALLOWED_ONCE_MS).await;
        let _ = chrome::update_session_rules(&[id], &[]).await;
    });
    Ok(())
}

/// One agent's browser rules, covering `tabs`.
fn agent_rules(
    endpoint: &str,
    next_id: &mut i32,
    tabs: &[TabId],
    agent: &str,
    rules: &OriginRules,
) -> Vec<Value> {
    let mut b = Rules { endpoint, agent, tabs, next_id, out: Vec::new() };
    let block = || json!({ "type": "block" });
    let allow = || json!({ "type": "allow" });
    let types =
        |first: &[&'static str]| -> Vec<&'static str> { first.iter().chain(SUBRESOURCES).copied().collect() };
    if let Some(allowed) = &rules.allow {
        b.redirect_each_tab(CATCH_ALL, "^.*$");
        b.all_tabs(CATCH_ALL, block(), json!({ "resourceTypes": ["sub_frame"] }));
        let strip_cookies = json!({
            "type": "modifyHeaders",
            "requestHeaders": [{ "header": "cookie", "operation": "remove" }],
            "responseHeaders": [{ "header": "set-cookie", "operation": "remove" }],
        });
        b.all_tabs(CATCH_ALL, strip_cookies, json!({ "resourceTypes": SUBRESOURCES }));
        for regex in allowed {
            let condition =
                json!({ "regexFilter": regex, "resourceTypes": types(&["main_frame", "sub_frame"]) });
            b.all_tabs(ALLOWED, allow(), condition);
        }
        for regex in rules.frames.iter().flatten() {
            b.all_tabs(
                ALLOWED,
                allow(),
                json!({ "regexFilter": regex, "resourceTypes": types(&["sub_frame"]) }),
            );
        }
    }
    for regex in &rules.ask {
        b.redirect_each_tab(ASKED, regex);
        b.all_tabs(ASKED, block(), json!({ "regexFilter": regex, "resourceTypes": ["sub_frame"] }));
    }
    if rules.read_only {
        b.redirect_each_tab(READ_ONLY, "^.*$");
        let writes = json!({ "resourceTypes": types(&["sub_frame"]), "requestMethods": WRITE_METHODS });
        b.all_tabs(READ_ONLY, block(), writes);
        b.all_tabs(READ_ONLY, block(), json!({ "resourceTypes": ["websocket", "webtransport"] }));
    }
    // The endpoint itself, or the redirect would loop.
    if let Some(origin) = navigation_mac::origin(endpoint) {
        // (`+`, not `{64}`: a counted repeat exceeds the rules' regex memory bound.)
        let through = format!("^{}/[0-9a-f]+{}/", escape(origin), escape(navigation_mac::PATH));
        b.all_tabs(
            ALWAYS_THROUGH,
            allow(),
            json!({ "regexFilter": through, "resourceTypes": ["main_frame"] }),
        );
    }
    b.out
}

/// Writes an agent's rules.
struct Rules<'a> {
    endpoint: &'a str,
    agent: &'a str,
    tabs: &'a [TabId],
    next_id: &'a mut i32,
    out: Vec<Value>,
}

impl Rules<'_> {
    fn push(&mut self, priority: i32, action: Value, condition: Value) {
        *self.next_id += 1;
        self.out.push(
            json!({ "id": *self.next_id, "priority": priority, "action": action, "condition": condition }),
        );
    }

    /// One rule for all the agent's tabs.
    fn all_tabs(&mut self, priority: i32, action: Value, mut condition: Value) {
        condition["tabIds"] = json!(self.tabs);
        self.push(priority, action, condition);
    }

    /// Top-level requests matching `regex` go to the navigation endpoint, which decides them. A
    /// redirect names its tab (the endpoint learns the tab from the URL) and carries the MAC of
    /// agent and tab, never the key (the agent sees the URL in its own network events): one
    /// rule per tab.
    fn redirect_each_tab(&mut self, priority: i32, regex: &str) {
        for &tab in self.tabs {
            let Some(base) = navigation_mac::redirect_base(self.endpoint, self.agent, tab) else { continue };
            let action = json!({
                "type": "redirect",
                "redirect": { "regexSubstitution": format!("{base}?\\0") },
            });
            let condition = json!({ "regexFilter": regex, "resourceTypes": ["main_frame"], "tabIds": [tab] });
            self.push(priority, action, condition);
        }
    }
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

    const ENDPOINT: &str = "http://127.0.0.1:9/k/tabtunnel/navigation";

    fn summary(rules: &[Value]) -> Vec<(i64, &str, Vec<&str>, usize)> {
        rules
            .iter()
            .map(|r| {
                let types = r["condition"]["resourceTypes"].as_array().unwrap();
                (
                    r["priority"].as_i64().unwrap(),
                    r["action"]["type"].as_str().unwrap(),
                    types.iter().take(2).map(|t| t.as_str().unwrap()).collect(),
                    r["condition"]["tabIds"].as_array().unwrap().len(),
                )
            })
            .collect()
    }

    #[test]
    fn an_agent_gets_top_level_frame_and_cookie_rules_over_all_its_tabs() {
        let rules = OriginRules {
            allow: Some(vec!["^https://a\\.test([/?#]|$)".into()]),
            ask: vec!["^https://m\\.test([/?#]|$)".into()],
            frames: Some(vec!["^https://pay\\.test([/?#]|$)".into()]),
            read_only: false,
        };
        let mut next = 0;
        let out = agent_rules(ENDPOINT, &mut next, &[5, 6], "bot", &rules);
        assert_eq!(
            summary(&out),
            [
                (1, "redirect", vec!["main_frame"], 1),
                (1, "redirect", vec!["main_frame"], 1),
                (1, "block", vec!["sub_frame"], 2),
                (1, "modifyHeaders", vec!["stylesheet", "script"], 2),
                (2, "allow", vec!["main_frame", "sub_frame"], 2),
                (2, "allow", vec!["sub_frame", "stylesheet"], 2),
                (3, "redirect", vec!["main_frame"], 1),
                (3, "redirect", vec!["main_frame"], 1),
                (3, "block", vec!["sub_frame"], 2),
                (5, "allow", vec!["main_frame"], 2),
            ]
        );
        // The redirect carries the MAC of (bot, 6), never the key.
        let mac = navigation_mac::sign("k", "bot", 6);
        assert_eq!(
            out[1]["action"]["redirect"]["regexSubstitution"],
            format!("http://127.0.0.1:9/{mac}/tabtunnel/navigation/bot/6?\\0")
        );
        assert_eq!(out[3]["action"]["requestHeaders"][0]["header"], "cookie");
        assert_eq!(out[3]["action"]["responseHeaders"][0]["header"], "set-cookie");
        assert_eq!(
            out[9]["condition"]["regexFilter"],
            "^http\\:\\/\\/127\\.0\\.0\\.1\\:9/[0-9a-f]+\\/tabtunnel\\/navigation/"
        );
        assert!(!out.iter().any(|r| r.to_string().contains("/k/")), "no rule shows the key");
        let ids: Vec<i64> = out.iter().map(|r| r["id"].as_i64().unwrap()).collect();
        assert_eq!(ids, (1..=10).collect::<Vec<_>>());
        // Only asked origins: no catch-all, frames and cookies as they are.
        let asked_only = OriginRules { allow: None, ask: vec!["^x".into()], frames: None, read_only: false };
        assert_eq!(agent_rules(ENDPOINT, &mut next, &[5], "bot", &asked_only).len(), 3);
        assert_eq!(escape("a.b?c=1&d"), "a\\.b\\?c\\=1\\&d");
    }

    #[test]
    fn read_only_holds_the_tab_still() {
        let rules = OriginRules { allow: None, ask: vec![], frames: None, read_only: true };
        let mut next = 0;
        let out = agent_rules(ENDPOINT, &mut next, &[5], "reader", &rules);
        assert_eq!(
            summary(&out),
            [
                (4, "redirect", vec!["main_frame"], 1),
                (4, "block", vec!["sub_frame", "stylesheet"], 1),
                (4, "block", vec!["websocket", "webtransport"], 1),
                (5, "allow", vec!["main_frame"], 1),
            ]
        );
        assert_eq!(out[1]["condition"]["requestMethods"], json!(WRITE_METHODS));
    }
}
