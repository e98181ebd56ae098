//! An agent's policy, enforced by the browser itself for everything its pages load:
//! `declarativeNetRequest` session rules scoped to the agent's tabs (one set of rules per agent,
//! naming all its tabs and no other).
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
//!
//! Each update replaces the rules of the agents it names (remove the ids that may be in force,
//! add fresh ones) in one call, all or nothing. Should the browser refuse it, nothing changed:
//! the ids it removed are still in force. An update of several agents is then tried agent by
//! agent (the browser does not say whose rules it refused, and a rule of one agent's, or the
//! limit of 1,000 regular expressions, must not close the others); an agent refused alone fails
//! closed ([`closed_rules`]: every top-level navigation goes to the endpoint, frames are
//! blocked, no cookie goes or is set) until the daemon's rules come again. A refused closed set
//! is not tried again.
//!
//! Session rules outlive the worker: before its first update a new worker reads the rules in
//! place (again a second apart if the read fails, three times at most) and counts its ids on
//! from the highest it found, so none clashes; those it did not put
//! there (their tabs may be the human's again; the rules against workers' writes,
//! [`off_tab_writes::RULE_IDS`], are not its) stay until the daemon's rules come, covering the
//! tabs it restored meanwhile, and go in the same update as its first rules. The shell runs each [`Step`] and reports its
//! outcome with the step's [`OpId`] ([`Navigation::completed`]).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};
use tabtunnel_wire::{navigation_mac, NavigationRules, OriginRules, TabId};

use crate::effect::{OpId, OpIds};
use crate::off_tab_writes::{self, SUBRESOURCES, WRITE_METHODS};
use crate::rule_priorities::{ALLOWED, ALWAYS_THROUGH, ASKED, CATCH_ALL, READ_ONLY};

/// How long a URL the human allowed stays let through (the navigation it was for happens at
/// once; a slow redirect chain has this long).
pub const ALLOWED_ONCE_MS: f64 = 10_000.0;
/// How soon the removal of allowed URLs' rules is tried again after the browser refused it.
const REMOVAL_RETRY_MS: f64 = 2_000.0;

/// What the shell does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The ids of the session rules in place: [`Done::RuleIds`].
    ReadRuleIds {
        op: OpId,
    },
    /// `chrome.declarativeNetRequest.updateSessionRules`: [`Done::Updated`].
    Update {
        op: OpId,
        remove: Vec<i32>,
        add: Vec<Value>,
    },
    /// The change `ticket` stands for is in the browser (or failed closed): whoever waits for it
    /// goes on.
    Settled {
        ticket: OpId,
        result: Result<(), String>,
    },
    Warn(String),
    /// Call [`Navigation::timeout`] at this time (or later).
    WakeAt(f64),
}

/// The outcome of a step, for [`Navigation::completed`] (errors as Chrome's messages).
#[derive(Debug)]
pub enum Done {
    RuleIds(Result<Vec<i32>, String>),
    Updated(Result<(), String>),
}

/// The rules in force, and which browser rules each agent's tabs hold.
#[derive(Debug, Default)]
pub struct Navigation {
    rules: NavigationRules,
    /// `http://127.0.0.1:PORT/<key>/tabtunnel/navigation`
    endpoint: String,
    agents: BTreeMap<String, AgentTabs>,
    /// Agents whose rules the browser refused: theirs are the closed set until the rules change.
    closed: BTreeSet<String>,
    next_rule_id: i32,
    read: Read,
    /// An earlier worker's rules, kept in force until the daemon's rules come (the tabs restored
    /// stay covered) and removed by the first update after.
    stale: Vec<i32>,
    /// The daemon's rules came.
    rules_known: bool,
    /// Asked for before the rules in place were read, in order.
    deferred: Vec<Deferred>,
    updates: BTreeMap<OpId, InFlight>,
    /// Rules letting one URL through, and when each goes.
    allowed_once: Vec<(f64, i32)>,
    ops: OpIds,
}

/// One agent's shared tabs and the ids of the browser rules that may be in force for it.
#[derive(Debug, Default)]
struct AgentTabs {
    tabs: BTreeSet<TabId>,
    in_force: BTreeSet<i32>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum Read {
    #[default]
    NotYet,
    /// The read under way, and how many failed before it.
    Reading(OpId, u32),
    /// The last read failed: again at this time.
    Again {
        at: f64,
        failed: u32,
    },
    Done,
}

/// How often the rules in place are read before ours go in without knowing them (their ids may
/// then clash with an earlier worker's, and the browser refuse ours), and how long apart.
const READS: u32 = 3;
const READ_AGAIN_MS: f64 = 1_000.0;

#[derive(Debug)]
enum Deferred {
    Replace { agents: Vec<String>, ticket: Option<OpId> },
    AllowOnce { ticket: OpId, tab_id: TabId, url: String },
}

#[derive(Debug)]
struct InFlight {
    what: Purpose,
    tickets: Vec<OpId>,
}

#[derive(Debug)]
enum Purpose {
    /// Each agent's ids removed and added, and an earlier worker's removed; `alone`: agents to
    /// try one at a time after this one (a refused update of several is tried agent by agent).
    Agents {
        closing: bool,
        changes: BTreeMap<String, (Vec<i32>, Vec<i32>)>,
        stale: Vec<i32>,
        alone: Vec<String>,
    },
    AllowOnce(i32),
    /// Allowed URLs' rules once their time is up.
    Removal(Vec<i32>),
}

impl Navigation {
    /// The daemon's rules arrived (at connection, or the policy changed): every agent's rules are
    /// put in place again, closed ones tried afresh. `shared`: the tabs shared and their agents
    /// (a restarted worker shares its tabs before the rules come).
    pub fn rules_changed(
        &mut self,
        rules: NavigationRules,
        endpoint: String,
        shared: impl IntoIterator<Item = (TabId, String)>,
    ) -> Vec<Step> {
        self.rules = rules;
        self.endpoint = endpoint;
        self.rules_known = true;
        self.closed.clear();
        for (tab, agent) in shared {
            self.agents.entry(agent).or_default().tabs.insert(tab);
        }
        let agents = self.agents.keys().cloned().collect();
        let mut steps = Vec::new();
        self.replace(agents, None, false, &mut steps);
        steps
    }

    /// Whether `agent`'s tabs have origin rules (a new tab is then opened blank, and navigated
    /// once its rules are in place).
    pub fn restricts(&self, agent: &str) -> bool {
        self.rules.for_agent(agent).is_some()
    }

    /// A tab became `agent`'s (`None`: it is no longer shared): the rules of its old and new
    /// agent are put in place again, naming their tabs now. The ticket is settled once they are
    /// (or their agents failed closed).
    pub fn apply(&mut self, tab_id: TabId, agent: Option<&str>) -> (OpId, Vec<Step>) {
        let mut affected: Vec<String> = self
            .agents
            .iter_mut()
            .filter_map(|(name, a)| a.tabs.remove(&tab_id).then(|| name.clone()))
            .collect();
        if let Some(agent) = agent {
            self.agents.entry(agent.to_owned()).or_default().tabs.insert(tab_id);
            if !affected.iter().any(|a| a == agent) {
                affected.push(agent.to_owned());
            }
        }
        let ticket = self.ops.issue();
        let mut steps = Vec::new();
        self.replace(affected, Some(ticket), false, &mut steps);
        (ticket, steps)
    }

    /// The human allowed `url` for this tab: let it through once (for [`ALLOWED_ONCE_MS`]). The
    /// ticket is settled with the browser's answer.
    pub fn allow_once(&mut self, tab_id: TabId, url: &str) -> (OpId, Vec<Step>) {
        let ticket = self.ops.issue();
        let mut steps = Vec::new();
        if !self.read_done(&mut steps) {
            self.deferred.push(Deferred::AllowOnce { ticket, tab_id, url: url.to_owned() });
        } else {
            self.send_allow_once(ticket, tab_id, url, &mut steps);
        }
        (ticket, steps)
    }

    /// The outcome of the step `op`; any other operation's changes nothing.
    pub fn completed(&mut self, now: f64, op: OpId, done: Done) -> Vec<Step> {
        let mut steps = Vec::new();
        match done {
            Done::RuleIds(ids) => match self.read {
                Read::Reading(reading, failed) if reading == op => self.read(now, ids, failed, &mut steps),
                _ => {}
            },
            Done::Updated(result) => {
                let Some(InFlight { what, tickets }) = self.updates.remove(&op) else { return steps };
                match (what, result) {
                    (Purpose::AllowOnce(id), Ok(())) => {
                        let at = now + ALLOWED_ONCE_MS;
                        self.allowed_once.push((at, id));
                        steps.push(Step::WakeAt(at));
                        settle(tickets, Ok(()), &mut steps);
                    }
                    (Purpose::AllowOnce(_), Err(e)) => settle(tickets, Err(e), &mut steps),
                    (Purpose::Agents { alone, .. }, Ok(())) => self.next_alone(alone, tickets, &mut steps),
                    (Purpose::Removal(_), Ok(())) => settle(tickets, Ok(()), &mut steps),
                    (Purpose::Removal(ids), Err(e)) => {
                        // Still in force, each would let its URL through for good: again later.
                        let at = now + REMOVAL_RETRY_MS;
                        steps.push(Step::Warn(format!(
                            "could not remove the rules letting allowed URLs through ({e}): trying again"
                        )));
                        self.allowed_once.extend(ids.into_iter().map(|id| (at, id)));
                        steps.push(Step::WakeAt(at));
                        settle(tickets, Err(e), &mut steps);
                    }
                    (Purpose::Agents { closing, changes, stale, alone }, Err(e)) => {
                        // Nothing changed (all or nothing): what it removed is still in force,
                        // what it added is not.
                        self.stale.extend(stale);
                        let mut agents: Vec<String> = changes.keys().cloned().collect();
                        for (agent, (removed, added)) in changes {
                            let state = self.agents.entry(agent).or_default();
                            state.in_force.extend(removed);
                            for id in added {
                                state.in_force.remove(&id);
                            }
                        }
                        let names = agents.join(", ");
                        if closing {
                            steps.push(Step::Warn(format!(
                                "the browser refused even the closed navigation rules of {names}: {e}"
                            )));
                            match alone.is_empty() {
                                true => settle(tickets, Err(e), &mut steps),
                                false => self.next_alone(alone, tickets, &mut steps),
                            }
                        } else if agents.len() > 1 {
                            // Whose rules the browser refuses is not said: each agent alone, so
                            // only that one fails closed.
                            let first = agents.remove(0);
                            agents.extend(alone);
                            self.send(vec![first], tickets, false, agents, &mut steps);
                        } else {
                            steps.push(Step::Warn(format!(
                                "the browser refused the navigation rules of {names} ({e}): every navigation of theirs goes to the endpoint, frames are blocked and cookies stripped"
                            )));
                            self.closed.extend(agents.iter().cloned());
                            self.send(agents, tickets, true, alone, &mut steps);
                        }
                    }
                }
            }
        }
        steps
    }

    /// The time [`ALLOWED_ONCE_MS`] after an allowed URL went in, or a read is due again.
    pub fn poll_timeout(&self) -> Option<f64> {
        let again = match self.read {
            Read::Again { at, .. } => Some(at),
            _ => None,
        };
        self.allowed_once.iter().map(|(at, _)| *at).chain(again).min_by(f64::total_cmp)
    }

    /// Allowed URLs whose time is up are no longer let through; a failed read is tried again.
    pub fn timeout(&mut self, now: f64) -> Vec<Step> {
        let mut steps = Vec::new();
        if let Read::Again { at, failed } = self.read {
            if at <= now {
                let op = self.ops.issue();
                self.read = Read::Reading(op, failed);
                steps.push(Step::ReadRuleIds { op });
            }
        }
        let (due, later): (Vec<_>, Vec<_>) = self.allowed_once.iter().partition(|(at, _)| *at <= now);
        self.allowed_once = later;
        let remove: Vec<i32> = due.into_iter().map(|(_, id)| id).collect();
        if !remove.is_empty() {
            self.send_removal(remove, &mut steps);
        }
        steps
    }

    /// Whether the rules in place were read; if not yet, reads them.
    fn read_done(&mut self, steps: &mut Vec<Step>) -> bool {
        match self.read {
            Read::Done => true,
            Read::Reading(..) | Read::Again { .. } => false,
            Read::NotYet => {
                let op = self.ops.issue();
                self.read = Read::Reading(op, 0);
                steps.push(Step::ReadRuleIds { op });
                false
            }
        }
    }

    /// The rules in place were read: an earlier worker's are noted (ours count on past theirs),
    /// then what waited goes.
    fn read(&mut self, now: f64, ids: Result<Vec<i32>, String>, failed: u32, steps: &mut Vec<Step>) {
        self.read = Read::Done;
        match ids {
            Ok(ids) => {
                self.stale = ids.into_iter().filter(|id| !off_tab_writes::RULE_IDS.contains(id)).collect();
                self.next_rule_id = self.stale.iter().copied().fold(self.next_rule_id, i32::max);
            }
            Err(e) if failed + 1 < READS => {
                steps.push(Step::Warn(format!(
                    "could not read the navigation rules in place: {e}; trying again"
                )));
                let at = now + READ_AGAIN_MS;
                self.read = Read::Again { at, failed: failed + 1 };
                return steps.push(Step::WakeAt(at));
            }
            Err(e) => steps.push(Step::Warn(format!(
                "could not read the navigation rules in place: {e}; ours go in without them (an id may clash)"
            ))),
        }
        for deferred in std::mem::take(&mut self.deferred) {
            match deferred {
                Deferred::Replace { agents, ticket } => self.replace(agents, ticket, false, steps),
                Deferred::AllowOnce { ticket, tab_id, url } => {
                    self.send_allow_once(ticket, tab_id, &url, steps)
                }
            }
        }
    }

    /// Replaces the browser rules of these agents by what their rules and tabs say now, once the
    /// rules in place are known.
    fn replace(&mut self, agents: Vec<String>, ticket: Option<OpId>, closing: bool, steps: &mut Vec<Step>) {
        if !self.read_done(steps) {
            return self.deferred.push(Deferred::Replace { agents, ticket });
        }
        self.send(agents, ticket.into_iter().collect(), closing, Vec::new(), steps);
    }

    /// The next of the agents tried one at a time, or, when none is left, `tickets` settled.
    fn next_alone(&mut self, mut alone: Vec<String>, tickets: Vec<OpId>, steps: &mut Vec<Step>) {
        if alone.is_empty() {
            return settle(tickets, Ok(()), steps);
        }
        let next = alone.remove(0);
        self.send(vec![next], tickets, false, alone, steps);
    }

    /// One update for these agents (all or nothing), and an earlier worker's rules out once the
    /// daemon's are known; then those `alone`, one at a time; `tickets` settled when all is done.
    fn send(
        &mut self,
        agents: Vec<String>,
        tickets: Vec<OpId>,
        closing: bool,
        alone: Vec<String>,
        steps: &mut Vec<Step>,
    ) {
        let stale = if self.rules_known { std::mem::take(&mut self.stale) } else { Vec::new() };
        let (mut remove, mut add, mut changes) = (stale.clone(), Vec::new(), BTreeMap::new());
        for agent in agents {
            let Some(state) = self.agents.get_mut(&agent) else { continue };
            let removed: Vec<i32> = std::mem::take(&mut state.in_force).into_iter().collect();
            let tabs: Vec<TabId> = state.tabs.iter().copied().collect();
            let fresh = match self.rules.for_agent(&agent) {
                _ if tabs.is_empty() => Vec::new(),
                _ if self.closed.contains(&agent) => {
                    closed_rules(&self.endpoint, &mut self.next_rule_id, &tabs, &agent)
                }
                Some(rules) if !self.endpoint.is_empty() => {
                    agent_rules(&self.endpoint, &mut self.next_rule_id, &tabs, &agent, rules)
                }
                _ => Vec::new(),
            };
            let added: Vec<i32> = fresh.iter().filter_map(|r| r["id"].as_i64()).map(|id| id as i32).collect();
            if let Some(state) = self.agents.get_mut(&agent) {
                state.in_force.extend(added.iter().copied());
                if state.tabs.is_empty() && state.in_force.is_empty() {
                    self.agents.remove(&agent);
                }
            }
            remove.extend(removed.iter().copied());
            add.extend(fresh);
            changes.insert(agent, (removed, added));
        }
        if remove.is_empty() && add.is_empty() {
            return self.next_alone(alone, tickets, steps);
        }
        let op = self.ops.issue();
        steps.push(Step::Update { op, remove, add });
        self.updates
            .insert(op, InFlight { what: Purpose::Agents { closing, changes, stale, alone }, tickets });
    }

    fn send_allow_once(&mut self, ticket: OpId, tab_id: TabId, url: &str, steps: &mut Vec<Step>) {
        self.next_rule_id += 1;
        let id = self.next_rule_id;
        let condition = json!({ "regexFilter": format!("^{}$", escape(url)), "resourceTypes": ["main_frame"], "tabIds": [tab_id] });
        let rule = json!({ "id": id, "priority": ALWAYS_THROUGH, "action": { "type": "allow" }, "condition": condition });
        let op = self.ops.issue();
        steps.push(Step::Update { op, remove: Vec::new(), add: vec![rule] });
        self.updates.insert(op, InFlight { what: Purpose::AllowOnce(id), tickets: vec![ticket] });
    }

    fn send_removal(&mut self, remove: Vec<i32>, steps: &mut Vec<Step>) {
        let op = self.ops.issue();
        steps.push(Step::Update { op, remove: remove.clone(), add: Vec::new() });
        self.updates.insert(op, InFlight { what: Purpose::Removal(remove), tickets: Vec::new() });
    }
}

fn settle(tickets: Vec<OpId>, result: Result<(), String>, steps: &mut Vec<Step>) {
    for ticket in tickets {
        steps.push(Step::Settled { ticket, result: result.clone() });
    }
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
    let types =
        |first: &[&'static str]| -> Vec<&'static str> { first.iter().chain(SUBRESOURCES).copied().collect() };
    if let Some(allowed) = &rules.allow {
        b.redirect_each_tab(CATCH_ALL, "^.*$");
        b.all_tabs(CATCH_ALL, block(), json!({ "resourceTypes": ["sub_frame"] }));
        b.all_tabs(CATCH_ALL, strip_cookies(), json!({ "resourceTypes": SUBRESOURCES }));
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
    b.endpoint_through();
    b.out
}

/// The rules of an agent whose own the browser refused: every top-level navigation goes to the
/// endpoint (blocked, if there is none to go to), every frame is blocked, no request carries a
/// cookie or sets one.
fn closed_rules(endpoint: &str, next_id: &mut i32, tabs: &[TabId], agent: &str) -> Vec<Value> {
    let mut b = Rules { endpoint, agent, tabs, next_id, out: Vec::new() };
    for &tab in tabs {
        match navigation_mac::redirect_base(endpoint, agent, tab) {
            Some(base) => b.redirect(CATCH_ALL, tab, &base, "^.*$"),
            None => b.push(CATCH_ALL, block(), json!({ "resourceTypes": ["main_frame"], "tabIds": [tab] })),
        }
    }
    b.all_tabs(CATCH_ALL, block(), json!({ "resourceTypes": ["sub_frame"] }));
    let every_type: Vec<&str> = ["main_frame", "sub_frame"].iter().chain(SUBRESOURCES).copied().collect();
    b.all_tabs(CATCH_ALL, strip_cookies(), json!({ "resourceTypes": every_type }));
    b.endpoint_through();
    b.out
}

fn block() -> Value {
    json!({ "type": "block" })
}

fn allow() -> Value {
    json!({ "type": "allow" })
}

fn strip_cookies() -> Value {
    json!({
        "type": "modifyHeaders",
        "requestHeaders": [{ "header": "cookie", "operation": "remove" }],
        "responseHeaders": [{ "header": "set-cookie", "operation": "remove" }],
    })
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
            self.redirect(priority, tab, &base, regex);
        }
    }

    fn redirect(&mut self, priority: i32, tab: TabId, base: &str, regex: &str) {
        let action =
            json!({ "type": "redirect", "redirect": { "regexSubstitution": format!("{base}?\\0") } });
        let condition = json!({ "regexFilter": regex, "resourceTypes": ["main_frame"], "tabIds": [tab] });
        self.push(priority, action, condition);
    }

    /// The endpoint itself, or the redirect would loop.
    fn endpoint_through(&mut self) {
        if let Some(origin) = navigation_mac::origin(self.endpoint) {
            // (`+`, not `{64}`: a counted repeat exceeds the rules' regex memory bound.)
            let through = format!("^{}/[0-9a-f]+{}/", escape(origin), escape(navigation_mac::PATH));
            self.all_tabs(
                ALWAYS_THROUGH,
                allow(),
                json!({ "regexFilter": through, "resourceTypes": ["main_frame"] }),
            );
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
    use std::collections::VecDeque;

    use super::*;

    const ENDPOINT: &str = "http://127.0.0.1:9/k/tabtunnel/navigation";
    /// A regular expression RE2 refuses (look-behind), as Chrome does.
    const BAD_REGEX: &str = "^https://(?<=a)b\\.test/";

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

    fn allowing(regex: &str) -> OriginRules {
        OriginRules { allow: Some(vec![regex.into()]), ask: vec![], frames: None, read_only: false }
    }

    fn policy(agents: &[(&str, Option<OriginRules>)]) -> NavigationRules {
        NavigationRules {
            default: None,
            agents: agents.iter().map(|(name, rules)| (name.to_string(), rules.clone())).collect(),
        }
    }

    /// The browser's session rules: updates all or nothing, ids unique, regular expressions
    /// RE2 takes (no look-behind).
    #[derive(Default)]
    struct Browser {
        rules: BTreeMap<i32, Value>,
        /// Refuse every update (a browser out of rule space).
        refuse_all: bool,
        updates: usize,
    }

    impl Browser {
        fn update(&mut self, remove: &[i32], add: &[Value]) -> Result<(), String> {
            self.updates += 1;
            assert!(self.updates < 100, "updates sent in a loop");
            if self.refuse_all {
                return Err("Internal error.".into());
            }
            let mut after = self.rules.clone();
            for id in remove {
                after.remove(id);
            }
            for rule in add {
                let id = rule["id"].as_i64().unwrap() as i32;
                if rule["condition"]["regexFilter"].as_str().is_some_and(|r| r.contains("(?<")) {
                    return Err(format!("Rule with id {id} specified an invalid regexFilter."));
                }
                if after.insert(id, rule.clone()).is_some() {
                    return Err(format!("Rule with id {id} does not have a unique ID."));
                }
            }
            self.rules = after;
            Ok(())
        }

        /// The tabs each rule in place names.
        fn tab_sets(&self) -> Vec<Vec<TabId>> {
            self.rules
                .values()
                .filter_map(|r| r["condition"]["tabIds"].as_array())
                .map(|tabs| tabs.iter().map(|t| t.as_i64().unwrap() as TabId).collect())
                .collect()
        }

        fn actions(&self) -> Vec<&str> {
            self.rules.values().map(|r| r["action"]["type"].as_str().unwrap()).collect()
        }
    }

    /// A navigation machine against a [`Browser`]; updates are answered as they come unless
    /// held.
    #[derive(Default)]
    struct H {
        nav: Navigation,
        browser: Browser,
        now: f64,
        steps: VecDeque<Step>,
        /// Updates sent and not answered yet (while `hold`).
        held: Vec<(OpId, Vec<i32>, Vec<Value>)>,
        hold: bool,
        settled: Vec<(OpId, Result<(), String>)>,
        warnings: Vec<String>,
        wakes: Vec<f64>,
        /// Reads of the rules in place that fail before one works.
        failing_reads: u32,
    }

    impl H {
        fn with_rules(rules: NavigationRules) -> H {
            let mut h = H::default();
            let steps = h.nav.rules_changed(rules, ENDPOINT.into(), []);
            h.run(steps);
            h
        }

        fn run(&mut self, steps: Vec<Step>) {
            self.steps.extend(steps);
            while let Some(step) = self.steps.pop_front() {
                match step {
                    Step::ReadRuleIds { op } => {
                        let ids = match self.failing_reads {
                            0 => Ok(self.browser.rules.keys().copied().collect()),
                            _ => {
                                self.failing_reads -= 1;
                                Err("Internal error.".to_owned())
                            }
                        };
                        let more = self.nav.completed(self.now, op, Done::RuleIds(ids));
                        self.steps.extend(more);
                    }
                    Step::Update { op, remove, add } if self.hold => self.held.push((op, remove, add)),
                    Step::Update { op, remove, add } => {
                        let result = self.browser.update(&remove, &add);
                        self.steps.extend(self.nav.completed(self.now, op, Done::Updated(result)));
                    }
                    Step::Settled { ticket, result } => self.settled.push((ticket, result)),
                    Step::Warn(message) => self.warnings.push(message),
                    Step::WakeAt(at) => self.wakes.push(at),
                }
            }
        }

        fn apply(&mut self, tab: TabId, agent: Option<&str>) -> OpId {
            let (ticket, steps) = self.nav.apply(tab, agent);
            self.run(steps);
            ticket
        }

        /// Answers a held update as the browser does (or `refuse`s it).
        fn answer(&mut self, index: usize, refuse: bool) {
            let (op, remove, add) = self.held.remove(index);
            let result = if refuse { Err("refused".into()) } else { self.browser.update(&remove, &add) };
            let steps = self.nav.completed(self.now, op, Done::Updated(result));
            self.run(steps);
        }

        fn settled(&self, ticket: OpId) -> Option<&Result<(), String>> {
            self.settled.iter().find(|(t, _)| *t == ticket).map(|(_, r)| r)
        }
    }

    /// The browser holds `agent`'s closed set over `tabs` and nothing else of it: each tab's
    /// top-level requests redirected to the endpoint, frames blocked, cookies stripped from
    /// every request, the endpoint let through; no rule allows anything else.
    fn assert_closed(browser: &Browser, agent: &str, tabs: &[TabId]) {
        let rules: Vec<&Value> = browser.rules.values().collect();
        for &tab in tabs {
            let base = navigation_mac::redirect_base(ENDPOINT, agent, tab).unwrap();
            assert!(
                rules.iter().any(|r| r["action"]["redirect"]["regexSubstitution"] == format!("{base}?\\0")
                    && r["condition"]["regexFilter"] == "^.*$"
                    && r["condition"]["tabIds"] == json!([tab])),
                "tab {tab}'s top-level requests go to the endpoint: {rules:#?}"
            );
        }
        let all = json!(tabs);
        let blocked_frames = rules.iter().any(|r| {
            r["action"]["type"] == "block"
                && r["condition"]["resourceTypes"] == json!(["sub_frame"])
                && r["condition"]["tabIds"] == all
        });
        assert!(blocked_frames, "frames are blocked: {rules:#?}");
        let stripped = rules.iter().any(|r| {
            let types = r["condition"]["resourceTypes"].as_array().unwrap();
            r["action"]["type"] == "modifyHeaders"
                && ["main_frame", "sub_frame", "xmlhttprequest", "script"]
                    .iter()
                    .all(|t| types.contains(&json!(t)))
                && r["condition"]["tabIds"] == all
        });
        assert!(stripped, "cookies are stripped from every request: {rules:#?}");
        for r in &rules {
            if r["action"]["type"] == "allow" {
                let filter = r["condition"]["regexFilter"].as_str().unwrap();
                assert!(filter.contains("tabtunnel\\/navigation"), "only the endpoint is let through: {r}");
            }
        }
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

    #[test]
    fn a_failed_read_of_the_rules_in_place_is_tried_again_before_ours_go_in() {
        let mut h = H { failing_reads: 2, ..H::default() };
        // An earlier worker's rule 7.
        h.browser
            .rules
            .insert(7, json!({ "id": 7, "action": { "type": "block" }, "condition": { "tabIds": [40] } }));
        let steps = h.nav.rules_changed(
            policy(&[("bot", Some(allowing("^https://a\\.test/")))]),
            ENDPOINT.into(),
            [],
        );
        h.run(steps);
        let ticket = h.apply(5, Some("bot"));
        assert_eq!(h.browser.updates, 0, "nothing goes in before the rules in place are known");
        assert!(h.settled(ticket).is_none());
        for again in [READ_AGAIN_MS, 2.0 * READ_AGAIN_MS] {
            assert_eq!(h.nav.poll_timeout(), Some(again));
            h.now = again;
            let steps = h.nav.timeout(again);
            h.run(steps);
        }
        assert_eq!(h.settled(ticket), Some(&Ok(())));
        assert!(
            h.browser.rules.keys().all(|id| *id > 7),
            "the earlier worker's removed, ours counted on past it"
        );
        assert_eq!(h.warnings.len(), 2, "{:?}", h.warnings);
        assert_eq!(h.nav.poll_timeout(), None);
    }

    #[test]
    fn reads_that_keep_failing_stop_and_ours_go_in_all_the_same() {
        let mut h = H { failing_reads: READS, ..H::default() };
        let steps = h.nav.rules_changed(
            policy(&[("bot", Some(allowing("^https://a\\.test/")))]),
            ENDPOINT.into(),
            [],
        );
        h.run(steps);
        let ticket = h.apply(5, Some("bot"));
        while let Some(at) = h.nav.poll_timeout() {
            h.now = at;
            let steps = h.nav.timeout(at);
            h.run(steps);
        }
        assert_eq!(h.settled(ticket), Some(&Ok(())));
        assert_eq!(h.warnings.len() as u32, READS, "{:?}", h.warnings);
        assert!(!h.browser.rules.is_empty());
    }

    #[test]
    fn a_new_worker_replaces_an_earlier_workers_rules_in_one_update_and_counts_on_past_them() {
        let mut h = H::default();
        // An earlier worker's navigation rules 1..=7 (one on a tab the human has now), and the
        // rule against workers' writes, which is not ours to remove.
        for id in 1..=7 {
            h.browser.rules.insert(
                id,
                json!({ "id": id, "action": { "type": "block" }, "condition": { "tabIds": [40] } }),
            );
        }
        let theirs = off_tab_writes::RULE_IDS[0];
        h.browser
            .rules
            .insert(theirs, json!({ "id": theirs, "action": { "type": "block" }, "condition": {} }));
        // A tab restored before the daemon's rules came.
        let (ticket, steps) = h.nav.apply(5, Some("bot"));
        assert!(
            matches!(steps[..], [Step::ReadRuleIds { .. }]),
            "the rules in place are read first: {steps:?}"
        );
        h.run(steps);
        // Until the daemon's rules come, the earlier worker's cover the tabs it restored.
        assert_eq!(h.settled(ticket), Some(&Ok(())));
        assert_eq!(h.browser.rules.len(), 8);
        h.browser.updates = 0;
        let steps = h.nav.rules_changed(
            policy(&[("bot", Some(allowing("^https://a\\.test/")))]),
            ENDPOINT.into(),
            [(5, "bot".into())],
        );
        h.run(steps);
        assert_eq!(h.browser.updates, 1, "the earlier worker's out and ours in, at once");
        assert!(h.warnings.is_empty(), "{:?}", h.warnings);
        assert!(h.browser.rules.contains_key(&theirs));
        assert!(
            h.browser.rules.keys().all(|&id| id > 7),
            "no earlier rule is left and no id clashes: {:?}",
            h.browser.rules.keys()
        );
        assert!(!h.browser.tab_sets().contains(&vec![40]));
        assert!(h.browser.actions().contains(&"redirect"));
    }

    #[test]
    fn each_update_removes_exactly_the_ids_its_agent_had_in_force() {
        let mut h = H::with_rules(policy(&[("bot", Some(allowing("^https://a\\.test/")))]));
        h.apply(5, Some("bot"));
        let first: BTreeSet<i32> = h.browser.rules.keys().copied().collect();
        assert_eq!(first.len(), 5, "{:?}", h.browser.rules);
        h.hold = true;
        h.apply(6, Some("bot"));
        let (_, remove, add) = &h.held[0];
        assert_eq!(remove.iter().copied().collect::<BTreeSet<_>>(), first);
        assert!(add.iter().all(|r| !first.contains(&(r["id"].as_i64().unwrap() as i32))), "fresh ids");
        h.answer(0, false);
        assert_eq!(h.browser.rules.len(), 6, "one more redirect: {:?}", h.browser.rules);
        // The last tab unshared: nothing of the agent's stays.
        h.hold = false;
        h.apply(5, None);
        h.apply(6, None);
        assert!(h.browser.rules.is_empty(), "{:?}", h.browser.rules);
        assert!(h.nav.agents.is_empty());
    }

    #[test]
    fn an_agents_rules_name_only_its_tabs_and_a_change_of_one_agent_leaves_the_others() {
        let rules = allowing("^https://a\\.test/");
        let mut h = H::with_rules(policy(&[("a", Some(rules.clone())), ("b", Some(rules))]));
        h.apply(1, Some("a"));
        h.apply(2, Some("a"));
        h.apply(3, Some("b"));
        let covered = |h: &H, tabs: &[TabId]| {
            h.browser.tab_sets().iter().filter(|set| set.iter().all(|t| tabs.contains(t))).count()
        };
        let sets = h.browser.tab_sets();
        assert!(sets.iter().all(|set| set.iter().all(|t| [1, 2].contains(t)) || set == &vec![3]), "{sets:?}");
        let bs: BTreeSet<i32> = h
            .browser
            .rules
            .iter()
            .filter(|(_, r)| r["condition"]["tabIds"] == json!([3]))
            .map(|(id, _)| *id)
            .collect();
        // A new tab of a's: b's rules stay as they are.
        h.hold = true;
        h.apply(4, Some("a"));
        assert!(h.held[0].1.iter().all(|id| !bs.contains(id)), "b's rules are not touched");
        h.answer(0, false);
        assert!(bs.iter().all(|id| h.browser.rules.contains_key(id)));
        h.hold = false;
        // Tab 2 goes to b: both agents' rules are made again, each naming its own tabs only.
        h.apply(2, Some("b"));
        let sets = h.browser.tab_sets();
        assert!(
            sets.iter()
                .all(|set| set.iter().all(|t| [1, 4].contains(t)) || set.iter().all(|t| [2, 3].contains(t))),
            "{sets:?}"
        );
        assert!(sets.contains(&vec![1, 4]) && sets.contains(&vec![2, 3]));
        assert_eq!(covered(&h, &[2, 3]), 6, "b: two redirects, frames, cookies, allowed, endpoint");
        // The MAC of a redirect names the tab's agent now.
        let base = navigation_mac::redirect_base(ENDPOINT, "b", 2).unwrap();
        assert!(h
            .browser
            .rules
            .values()
            .any(|r| r["action"]["redirect"]["regexSubstitution"] == format!("{base}?\\0")));
    }

    #[test]
    fn a_refused_update_fails_closed_for_the_agents_in_it() {
        let mut h = H::with_rules(policy(&[("bot", Some(allowing(BAD_REGEX)))]));
        h.hold = true;
        let ticket = h.apply(5, Some("bot"));
        h.answer(0, false);
        assert!(h.settled(ticket).is_none(), "the share waits until the closed set is in place");
        assert_eq!(h.held.len(), 1, "the closed set is sent");
        h.answer(0, false);
        assert_eq!(h.settled(ticket), Some(&Ok(())));
        assert_closed(&h.browser, "bot", &[5]);
        assert_eq!(h.warnings.len(), 1, "{:?}", h.warnings);
        assert!(h.warnings[0].contains("bot"));
    }

    #[test]
    fn after_a_refusal_the_rules_still_in_force_are_removed_by_the_next_update() {
        let mut h = H::with_rules(policy(&[("bot", Some(allowing("^https://a\\.test/")))]));
        h.apply(5, Some("bot"));
        let old: Vec<i32> = h.browser.rules.keys().copied().collect();
        // The policy changes to rules the browser refuses: the old ones are still in force, and
        // the closed set replaces them (an old `allow` would outrank its catch-all).
        let steps = h.nav.rules_changed(policy(&[("bot", Some(allowing(BAD_REGEX)))]), ENDPOINT.into(), []);
        h.run(steps);
        assert!(old.iter().all(|id| !h.browser.rules.contains_key(id)), "{:?}", h.browser.rules);
        assert_closed(&h.browser, "bot", &[5]);
    }

    #[test]
    fn a_refused_closed_set_is_not_tried_again_and_its_ids_are_kept() {
        let mut h = H::with_rules(policy(&[("bot", Some(allowing("^https://a\\.test/")))]));
        h.apply(5, Some("bot"));
        let old: BTreeSet<i32> = h.browser.rules.keys().copied().collect();
        h.browser.refuse_all = true;
        h.browser.updates = 0;
        let ticket = h.apply(6, Some("bot"));
        assert_eq!(h.browser.updates, 2, "the rules, then the closed set, then nothing more");
        assert!(matches!(h.settled(ticket), Some(Err(_))));
        assert_eq!(h.warnings.len(), 2, "{:?}", h.warnings);
        // Still known to be in force: the next update removes them.
        h.browser.refuse_all = false;
        h.hold = true;
        h.apply(7, Some("bot"));
        assert_eq!(h.held[0].1.iter().copied().collect::<BTreeSet<_>>(), old);
        h.answer(0, false);
        assert_closed(&h.browser, "bot", &[5, 6, 7]);
    }

    #[test]
    fn a_closed_agent_stays_closed_until_the_rules_come_again() {
        let mut h = H::with_rules(policy(&[("bot", Some(allowing(BAD_REGEX)))]));
        h.apply(5, Some("bot"));
        h.browser.updates = 0;
        h.apply(6, Some("bot"));
        assert_eq!(h.browser.updates, 1, "the closed set at once");
        assert_closed(&h.browser, "bot", &[5, 6]);
        let steps = h.nav.rules_changed(
            policy(&[("bot", Some(allowing("^https://a\\.test/")))]),
            ENDPOINT.into(),
            [],
        );
        h.run(steps);
        assert_eq!(
            h.browser.rules.len(),
            6,
            "two redirects, frames, cookies, allowed, endpoint: {:?}",
            h.browser.rules
        );
        assert!(h.browser.rules.values().any(|r| r["condition"]["regexFilter"] == "^https://a\\.test/"));
    }

    #[test]
    fn overlapping_updates_keep_track_of_every_id_when_the_first_is_refused() {
        let mut h = H::with_rules(policy(&[("bot", Some(allowing("^https://a\\.test/")))]));
        h.apply(5, Some("bot"));
        h.hold = true;
        h.apply(6, Some("bot"));
        h.apply(7, Some("bot"));
        h.answer(0, true);
        // The closed set is sent behind the second update, and removes what that one adds.
        h.answer(0, false);
        h.answer(0, false);
        assert!(h.held.is_empty());
        assert_eq!(
            h.browser.rules.len(),
            3 + 3,
            "closed: three redirects, frames, cookies, endpoint: {:#?}",
            h.browser.rules
        );
        assert_closed(&h.browser, "bot", &[5, 6, 7]);
    }

    #[test]
    fn a_refused_update_of_two_agents_closes_only_the_one_refused_alone() {
        let good = allowing("^https://a\\.test/");
        let mut h = H::with_rules(policy(&[("a", Some(good)), ("b", Some(allowing(BAD_REGEX)))]));
        h.apply(1, Some("a"));
        // Tab 1 goes from a to b: one update for both, refused; then each alone.
        let ticket = h.apply(1, Some("b"));
        assert_eq!(h.settled(ticket), Some(&Ok(())));
        assert_closed(&h.browser, "b", &[1]);
        assert!(!h.nav.closed.contains("a") && h.nav.closed.contains("b"));
        // a has no tab left: no rule of its stays.
        let base = navigation_mac::redirect_base(ENDPOINT, "a", 1).unwrap();
        assert!(!h.browser.rules.values().any(|r| r.to_string().contains(&base)));
        assert_eq!(h.warnings.len(), 1, "b's, not a's: {:?}", h.warnings);
    }

    #[test]
    fn rules_one_agent_gets_refused_close_no_other_agent() {
        let good = || Some(allowing("^https://a\\.test/"));
        let rules = policy(&[("a", good()), ("b", Some(allowing(BAD_REGEX))), ("c", good()), ("free", None)]);
        let mut h = H::with_rules(rules);
        for (tab, agent) in [(1, "a"), (2, "b"), (3, "c"), (4, "free")] {
            h.apply(tab, Some(agent));
        }
        h.browser.updates = 0;
        // The policy comes again (a new connection): one update for all, refused for b's rules.
        let steps = h.nav.rules_changed(h.nav.rules.clone(), ENDPOINT.into(), []);
        h.run(steps);
        assert_eq!(h.nav.closed.iter().collect::<Vec<_>>(), ["b"]);
        let names_tab = |r: &Value, tab: TabId| {
            r["condition"]["tabIds"].as_array().is_some_and(|t| t.contains(&json!(tab)))
        };
        let bs = Browser {
            rules: h
                .browser
                .rules
                .iter()
                .filter(|(_, r)| names_tab(r, 2))
                .map(|(id, r)| (*id, r.clone()))
                .collect(),
            ..Browser::default()
        };
        assert_closed(&bs, "b", &[2]);
        for (agent, tab) in [("a", 1), ("c", 3)] {
            let theirs: Vec<&Value> =
                h.browser.rules.values().filter(|r| r["condition"]["tabIds"] == json!([tab])).collect();
            // Their own origins allowed: not the closed set.
            assert!(
                theirs.iter().any(|r| r["action"]["type"] == "allow"),
                "{agent}'s own rules: {theirs:#?}"
            );
        }
        // All, then a, b (refused), b closed, c: nothing for the agent without rules.
        assert_eq!(h.browser.updates, 5);
        // A browser refusing everything: each tried once and its closed set once, then settled.
        h.browser.refuse_all = true;
        h.browser.updates = 0;
        h.warnings.clear();
        let steps = h.nav.rules_changed(h.nav.rules.clone(), ENDPOINT.into(), []);
        h.run(steps);
        assert_eq!(h.browser.updates, 1 + 3 * 2);
        assert_eq!(h.warnings.len(), 6, "{:?}", h.warnings);
    }

    #[test]
    fn a_share_waits_for_every_agent_tried_alone() {
        let good = allowing("^https://a\\.test/");
        let mut h = H::with_rules(policy(&[("a", Some(good)), ("b", Some(allowing(BAD_REGEX)))]));
        h.apply(1, Some("a"));
        h.hold = true;
        let ticket = h.apply(1, Some("b"));
        h.answer(0, true);
        for _ in 0..3 {
            assert!(h.settled(ticket).is_none(), "settled before every agent's rules were in place");
            assert_eq!(h.held.len(), 1, "one at a time");
            h.answer(0, false);
        }
        assert_eq!(h.settled(ticket), Some(&Ok(())));
    }

    #[test]
    fn an_agent_without_rules_gets_none_and_its_share_goes_on_at_once() {
        let mut h = H::with_rules(policy(&[("free", None), ("bot", Some(allowing("^https://a\\.test/")))]));
        assert!(!h.nav.restricts("free") && h.nav.restricts("bot") && !h.nav.restricts("other"));
        let ticket = h.apply(5, Some("free"));
        assert_eq!(h.settled(ticket), Some(&Ok(())));
        assert_eq!(h.browser.updates, 0);
        assert!(h.browser.rules.is_empty());
        // Without an endpoint (the rules not come yet) nobody's rules are sent either.
        let mut early = H::default();
        early.apply(5, Some("bot"));
        assert!(early.browser.rules.is_empty() && early.settled.len() == 1);
        // A closed set without an endpoint blocks top-level requests instead.
        let mut next = 0;
        let closed = closed_rules("", &mut next, &[5], "bot");
        assert_eq!(
            summary(&closed),
            [
                (1, "block", vec!["main_frame"], 1),
                (1, "block", vec!["sub_frame"], 1),
                (1, "modifyHeaders", vec!["main_frame", "sub_frame"], 1)
            ]
        );
    }

    #[test]
    fn an_allowed_url_goes_through_once_until_its_time_is_up() {
        let mut h = H::with_rules(policy(&[("bot", Some(allowing("^https://a\\.test/")))]));
        h.apply(5, Some("bot"));
        let before = h.browser.rules.len();
        h.now = 1000.0;
        let (ticket, steps) = h.nav.allow_once(5, "https://b.test/?x=1");
        h.run(steps);
        assert_eq!(h.settled(ticket), Some(&Ok(())));
        let allowed: Vec<&Value> = h
            .browser
            .rules
            .values()
            .filter(|r| r["condition"]["regexFilter"] == "^https\\:\\/\\/b\\.test\\/\\?x\\=1$")
            .collect();
        assert_eq!(allowed.len(), 1);
        assert_eq!(allowed[0]["priority"], ALWAYS_THROUGH);
        assert_eq!(allowed[0]["condition"]["tabIds"], json!([5]));
        assert_eq!(h.wakes, [1000.0 + ALLOWED_ONCE_MS]);
        assert_eq!(h.nav.poll_timeout(), Some(1000.0 + ALLOWED_ONCE_MS));
        let steps = h.nav.timeout(1000.0 + ALLOWED_ONCE_MS - 1.0);
        assert!(steps.is_empty());
        let steps = h.nav.timeout(1000.0 + ALLOWED_ONCE_MS);
        h.run(steps);
        assert_eq!(h.browser.rules.len(), before);
        assert_eq!(h.nav.poll_timeout(), None);
        // Refused: the caller hears why.
        h.browser.refuse_all = true;
        let (ticket, steps) = h.nav.allow_once(5, "https://b.test/");
        h.run(steps);
        assert!(matches!(h.settled(ticket), Some(Err(_))));
    }

    #[test]
    fn a_refused_removal_of_an_allowed_url_is_tried_again_until_it_goes() {
        let mut h = H::with_rules(policy(&[("bot", Some(allowing("^https://a\\.test/")))]));
        h.apply(5, Some("bot"));
        let before = h.browser.rules.len();
        let (_, steps) = h.nav.allow_once(5, "https://b.test/");
        h.run(steps);
        assert_eq!(h.browser.rules.len(), before + 1);
        h.browser.refuse_all = true;
        h.now = ALLOWED_ONCE_MS;
        let steps = h.nav.timeout(h.now);
        h.run(steps);
        assert_eq!(h.browser.rules.len(), before + 1, "still in force");
        assert_eq!(h.warnings.len(), 1, "{:?}", h.warnings);
        let again = ALLOWED_ONCE_MS + REMOVAL_RETRY_MS;
        assert_eq!(h.nav.poll_timeout(), Some(again));
        assert!(h.wakes.contains(&again));
        // Refused once more: tried again after as long.
        h.now = again;
        let steps = h.nav.timeout(h.now);
        h.run(steps);
        assert_eq!(h.nav.poll_timeout(), Some(again + REMOVAL_RETRY_MS));
        h.browser.refuse_all = false;
        h.now = again + REMOVAL_RETRY_MS;
        let steps = h.nav.timeout(h.now);
        h.run(steps);
        assert_eq!(h.browser.rules.len(), before, "gone");
        assert_eq!(h.nav.poll_timeout(), None);
    }

    #[test]
    fn an_answer_to_another_operation_changes_nothing() {
        let mut h = H::with_rules(policy(&[("bot", Some(allowing("^https://a\\.test/")))]));
        h.hold = true;
        let ticket = h.apply(5, Some("bot"));
        let stranger = OpId(9_999);
        assert!(h.nav.completed(0.0, stranger, Done::Updated(Err("x".into()))).is_empty());
        assert!(h.nav.completed(0.0, stranger, Done::RuleIds(Ok(vec![1, 2]))).is_empty());
        h.answer(0, false);
        assert_eq!(h.settled(ticket), Some(&Ok(())));
        assert!(h.nav.closed.is_empty());
    }
}
