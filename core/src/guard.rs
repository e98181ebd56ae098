//! Applying each agent's policy: every command is allowed, refused (with an error naming the
//! rule), or held while the human is asked in the side panel; navigations are checked against
//! the agent's origins whether a client asks for them (`Page.navigate`, `Target.createTarget`)
//! or the page starts them itself (the extension sends those here through the daemon's
//! navigation endpoint). Also the kill switch, which stops every agent at once.

use crate::approved::Approved;
use crate::audit::{is_plumbing, Outcome};
use crate::awaiting_human::AwaitingHuman;
use crate::frames::{errors, ClientCommand};
use crate::origins::origin_key;
use crate::policy::{AgentPolicy, Decision, PolicySet};
use crate::session::{ConnId, SessionKind};
use crate::{AgentId, Core, OnSuccess, Output};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use tabtunnel_wire::{
    destinations, ApprovalAnswer, ApprovalRequest, BrowserOp, CdpError, TabId, ToExtension,
};

/// What the guard decided for a command.
enum Verdict {
    Go,
    Stop,
}

#[derive(Debug)]
struct Asked {
    request: ApprovalRequest,
    waiting: AwaitingHuman,
    asked_at_ms: u64,
    /// Its own time to wait (`gesture_timeout`); else the policy's `ask_timeout`.
    timeout_ms: Option<u64>,
}

impl Asked {
    /// When it is a refusal, `ask_timeout_ms` being the policy's.
    fn expires_at(&self, ask_timeout_ms: u64) -> u64 {
        self.asked_at_ms.saturating_add(self.timeout_ms.unwrap_or(ask_timeout_ms))
    }
}

/// The guard's state in the core.
#[derive(Debug, Default)]
pub(crate) struct Guard {
    policy: Option<Arc<PolicySet>>,
    asked: BTreeMap<u64, Asked>,
    /// When the first question in `asked` is a refusal.
    asked_due: crate::deadline::Deadline,
    next_id: u64,
    /// "Always for this agent": methods, and origins (`scheme://host:port`).
    always: HashMap<AgentId, (HashSet<String>, HashSet<String>)>,
    pub kill_switch: bool,
}

/// Where a command would load a document from, and whether into a frame (params are parsed
/// only for these methods): a navigation, a new tab, or `Network.loadNetworkResource` (which
/// fetches with the user's cookies and hands the agent the body, no frame needed).
struct Destination {
    url: String,
    in_frame: bool,
}

fn destination(cmd: &ClientCommand, kind: SessionKind, page_target: Option<&str>) -> Option<Destination> {
    if !matches!(cmd.method, "Page.navigate" | "Target.createTarget" | "Network.loadNetworkResource") {
        return None;
    }
    let params = crate::emulation::params(cmd);
    let url = params["url"].as_str().filter(|u| !u.is_empty()).unwrap_or("about:blank").to_owned();
    // A navigation of a frame: one named that is not the page's main frame (whose id is the
    // page's target id), or any navigation from a frame's own session.
    let in_frame = cmd.method == "Page.navigate"
        && (matches!(kind, SessionKind::Child { .. })
            || params["frameId"].as_str().is_some_and(|f| Some(f) != page_target));
    Some(Destination { url, in_frame })
}

/// The URL a client continues a paused request at, if it changes it.
fn continued_url(cmd: &ClientCommand) -> Option<String> {
    if !matches!(cmd.method, "Fetch.continueRequest" | "Network.continueInterceptedRequest") {
        return None;
    }
    crate::emulation::params(cmd)["url"].as_str().filter(|u| !u.is_empty()).map(str::to_owned)
}

impl Core {
    /// Replaces the policy (`None`: everything allowed). Every connection's agent gets its
    /// policy at once, and the browser its origin rules.
    pub fn set_policy(&mut self, now: u64, policy: Option<PolicySet>) {
        self.advance(now);
        self.guard.policy = policy.map(Arc::new);
        // The questions' time to wait may have changed.
        self.guard.asked_due.set(self.next_question_expiry());
        let agents: Vec<(ConnId, AgentId)> =
            self.conns.iter().map(|(id, c)| (*id, c.agent.clone())).collect();
        for (conn, agent) in agents {
            let policy = self.policy_for(&agent);
            if let Some(c) = self.conns.get_mut(&conn) {
                c.policy = policy;
            }
        }
        let tabs: Vec<(TabId, AgentId)> =
            self.tabs.iter().map(|(id, s)| (*id, s.tab.owner.clone())).collect();
        for (tab, owner) in tabs {
            let policy = self.policy_for(&owner);
            if let Some(state) = self.tabs.get_mut(&tab) {
                state.policy = policy;
            }
        }
        self.send_navigation_rules();
        self.update_prepared_tabs();
    }

    /// A read-only agent's script in one of the page's own worlds runs with V8's side-effect
    /// check (see `read_only.rs`): the params to send instead of the client's, if any.
    pub(crate) fn read_only_params(
        &self,
        conn: ConnId,
        cmd: &ClientCommand,
        kind: SessionKind,
    ) -> Option<Box<tabtunnel_wire::RawValue>> {
        if !self.conns[&conn].policy.as_ref().is_some_and(|p| p.is_read_only()) {
            return None;
        }
        let script = crate::read_only::ScriptParams::parse(cmd.method, cmd.params)?;
        let context = script.context();
        let contexts = match kind {
            SessionKind::Page { tab } => self.tabs.get(&tab).map(|s| &s.page.contexts),
            SessionKind::Child { tab } => {
                self.tabs.get(&tab).and_then(|s| s.target(Some(cmd.session_id))).map(|t| &t.contexts)
            }
            _ => None,
        };
        let isolated = contexts.is_some_and(|c| c.is_isolated(context.id, context.unique_id.as_deref()));
        (!isolated).then(|| script.without_side_effects())
    }

    /// What the answer to a read-only agent's script needs.
    pub(crate) fn answer_may_explain_read_only(&self, conn: ConnId, method: &str) -> Option<OnSuccess> {
        let read_only = self.conns.get(&conn)?.policy.as_ref()?.is_read_only();
        (read_only && crate::read_only::ScriptParams::runs_script(method))
            .then_some(OnSuccess::ExplainReadOnly)
    }

    /// What the answer to a command needs when its agent's policy hides cookies, or holds it
    /// to some origins (the getters answer with every site's cookies).
    pub(crate) fn answer_may_hide_cookies(&self, conn: ConnId, method: &str) -> Option<OnSuccess> {
        let policy = self.conns.get(&conn)?.policy.as_ref()?;
        let hides = crate::cookies::Hidden::by(policy).is_some();
        (hides && crate::cookies::domain_carries_cookies(method))
            .then(|| OnSuccess::HideCookies(policy.clone()))
    }

    /// The agent's policy, unless it restricts nothing (the fast path checks nothing then).
    pub(crate) fn policy_for(&self, agent: &AgentId) -> Option<Arc<AgentPolicy>> {
        let policy = self.guard.policy.as_ref()?.for_agent(agent.as_str());
        (!policy.is_open()).then(|| policy.clone())
    }

    pub(crate) fn send_navigation_rules(&mut self) {
        if !self.extension_connected {
            return;
        }
        let rules = self.guard.policy.as_ref().map(|p| p.origin_rules()).unwrap_or_default();
        let navigation_url = self.config.navigation_url.clone();
        self.out.push_back(Output::ToExtension(ToExtension::NavigationRules { rules, navigation_url }));
    }

    /// Applies the connection's policy to a command; `true` when it may go on. A command held
    /// for the human, or refused, has been dealt with.
    pub(crate) fn guard_command(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        kind: SessionKind,
        text: &str,
        approved: Approved,
    ) -> bool {
        let agent = self.conns[&conn].agent.clone();
        // Every agent's, whatever its policy, first: every rule below reads the command it is
        // given, never one carried inside it (`wrapped`).
        if crate::wrapped::refused(cmd.method) {
            let rule = crate::wrapped::RULE.to_owned();
            self.audit(&agent, kind.tab(), cmd.method, None, Outcome::Denied { rule });
            self.reply_error(conn, cmd, &errors::not_supported(cmd.method, crate::wrapped::RULE));
            return false;
        }
        // Every agent's, whatever its policy: the human's clipboard is nobody's to read.
        if crate::clipboard::refused(cmd.method, cmd.params.map(|p| p.get())) {
            let rule = crate::clipboard::RULE.to_owned();
            self.audit(&agent, kind.tab(), cmd.method, None, Outcome::Denied { rule });
            self.refuse(conn, cmd, kind, &errors::clipboard_refused(cmd.method));
            return false;
        }
        // Every agent's, whatever its policy: a local file is handed a page only from a
        // directory the agent's policy names (`local_files`).
        if let Some(why) = self.local_file_refusal(&agent, cmd) {
            let rule = crate::local_files::RULE.to_owned();
            self.audit(&agent, kind.tab(), cmd.method, None, Outcome::Denied { rule });
            self.reply_error(conn, cmd, &errors::local_file_refused(cmd.method, &why));
            return false;
        }
        let page_target =
            kind.tab().and_then(|t| self.tabs.get(&t)).map(|s| s.tab.page_target_id().to_owned());
        let destination = destination(cmd, kind, page_target.as_deref());
        let url = destination.as_ref().map(|d| d.url.clone());
        let in_frame = destination.is_some_and(|d| d.in_frame);
        // Every agent's, whatever its policy: the web only, never a page of the extension's or
        // the browser's, a local file or another program (`wire::destinations`).
        // (A session that cannot navigate gets the error it always got.)
        let navigates = cmd.method == "Target.createTarget"
            || matches!(kind, SessionKind::Page { .. } | SessionKind::Child { .. });
        if let Some(Err(why)) = url.as_deref().filter(|_| navigates).map(destinations::check) {
            let rule = destinations::RULE.to_owned();
            self.audit(&agent, kind.tab(), cmd.method, url.as_deref(), Outcome::Denied { rule });
            self.refuse(conn, cmd, kind, &errors::not_a_web_page(cmd.method, &why));
            return false;
        }
        // A paused request continued at another URL: the web only too (a `file:` one would
        // hand the page a local file's bytes as the response).
        if let Some(Err(why)) = continued_url(cmd).as_deref().map(destinations::check) {
            let rule = destinations::RULE.to_owned();
            self.audit(&agent, kind.tab(), cmd.method, None, Outcome::Denied { rule });
            self.reply_error(conn, cmd, &errors::not_a_web_page(cmd.method, &why));
            return false;
        }
        let verdict = match self.conns[&conn].policy.clone() {
            Some(policy) => {
                self.verdict(conn, cmd, kind, text, approved, &agent, &policy, url.as_deref(), in_frame)
            }
            None => Verdict::Go,
        };
        // A command the human allowed was audited with the answer.
        if matches!(verdict, Verdict::Go) && approved == Approved::No && !is_plumbing(cmd.method) {
            self.audit_allowed(&agent, kind.tab(), cmd, url.as_deref());
        }
        matches!(verdict, Verdict::Go)
    }

    /// Why a command that names local paths is refused for `agent`, if it is.
    fn local_file_refusal(&self, agent: &AgentId, cmd: &ClientCommand) -> Option<String> {
        let params = cmd.params.map(|p| p.get());
        let private: Vec<_> = self
            .config
            .private_dirs
            .iter()
            .filter_map(|d| crate::local_paths::LocalPath::parse(d).ok())
            .collect();
        let none = crate::local_files::Uploads::default();
        // The policy as written, even one that restricts nothing else (`policy_for` skips it).
        let uploads = self.guard.policy.as_ref().map_or(&none, |p| p.for_agent(agent.as_str()).uploads());
        crate::local_files::refusal(cmd.method, params, uploads, &private)
    }

    /// Refuses a command its agent's policy denies, naming the rule, and records it.
    fn deny_method(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        kind: SessionKind,
        agent: &AgentId,
        url: Option<&str>,
        rule: String,
    ) -> Verdict {
        self.audit(agent, kind.tab(), cmd.method, url, Outcome::Denied { rule: rule.clone() });
        self.refuse(conn, cmd, kind, &errors::denied_by_policy(cmd.method, &rule));
        Verdict::Stop
    }

    #[allow(clippy::too_many_arguments)]
    fn verdict(
        &mut self,
        conn: ConnId,
        cmd: &ClientCommand,
        kind: SessionKind,
        text: &str,
        approved: Approved,
        agent: &AgentId,
        policy: &AgentPolicy,
        url: Option<&str>,
        in_frame: bool,
    ) -> Verdict {
        let tab = kind.tab();
        let decision =
            if policy.is_read_only() && crate::read_only::only_makes_a_world(cmd.method, cmd.params) {
                Decision::Allow
            } else {
                policy.method(cmd.method)
            };
        if let Decision::Deny(rule) = decision {
            return self.deny_method(conn, cmd, kind, agent, url, rule);
        }
        // Not denied as a method, it may still write cookies of sites the agent is kept from, or
        // reach their storage: refused before the human is asked about the method.
        let params = cmd.params.map(|p| p.get());
        let refusal = crate::cookie_writes::refusal(policy, cmd.method, params)
            .or_else(|| crate::site_storage::refusal(policy, cmd.method, params))
            .or_else(|| crate::origin_routes::refusal(policy, cmd.method, params));
        if let Some(rule) = refusal {
            return self.deny_method(conn, cmd, kind, agent, url, rule);
        }
        if let Some((rule, request_url)) = self.paused_answer_refusal(conn, cmd, kind, policy) {
            return self.deny_method(conn, cmd, kind, agent, Some(&request_url), rule);
        }
        if let Decision::Ask(rule) = decision {
            if approved == Approved::No && !self.always_method(agent, cmd.method) {
                self.ask(
                    agent,
                    tab,
                    cmd.method,
                    url,
                    rule,
                    AwaitingHuman::Command { conn, text: text.to_owned() },
                );
                return Verdict::Stop;
            }
        }
        let Some(url) = url else { return Verdict::Go };
        let decision = if in_frame { policy.frame(url) } else { policy.navigation(url) };
        match decision {
            Decision::Allow => Verdict::Go,
            Decision::Deny(rule) => {
                self.audit(agent, tab, cmd.method, Some(url), Outcome::Denied { rule: rule.clone() });
                self.refuse(conn, cmd, kind, &errors::navigation_denied(url, &rule));
                Verdict::Stop
            }
            Decision::Ask(rule) if approved == Approved::No && !self.always_origin(agent, url) => {
                self.ask(
                    agent,
                    tab,
                    cmd.method,
                    Some(url),
                    rule,
                    AwaitingHuman::Command { conn, text: text.to_owned() },
                );
                Verdict::Stop
            }
            // Allowed by the human: the browser's rules would send this navigation to the human
            // again, so they let it through once first (a new tab is opened that way already).
            Decision::Ask(_) => match (cmd.method, tab, approved) {
                ("Page.navigate", Some(tab), Approved::Yes | Approved::No) => {
                    if approved == Approved::No {
                        // Always allowed for this agent: audited now, as its second pass is not.
                        self.audit(agent, Some(tab), cmd.method, Some(url), Outcome::Allowed);
                    }
                    let op = BrowserOp::AllowNavigation { tab_id: tab, url: url.to_owned() };
                    let then = OnSuccess::Redispatch { conn, text: text.to_owned() };
                    self.browser_op_housekeeping_then(op, then);
                    Verdict::Stop
                }
                _ => Verdict::Go,
            },
        }
    }

    /// Refuses a command: a navigation fails as Chrome's does when an extension blocks it (the
    /// tab stays where it was); anything else gets a CDP error naming the rule.
    fn refuse(&mut self, conn: ConnId, cmd: &ClientCommand, kind: SessionKind, error: &CdpError) {
        if cmd.method == "Page.navigate" {
            let frame_id = crate::emulation::params(cmd)["frameId"]
                .as_str()
                .map(str::to_owned)
                .or_else(|| self.session_target_of(conn, cmd.session_id, kind))
                .unwrap_or_default();
            let result =
                serde_json::json!({ "frameId": frame_id, "errorText": "net::ERR_BLOCKED_BY_CLIENT" });
            return self.reply_json(conn, cmd, &result);
        }
        self.reply_error(conn, cmd, error);
    }

    /// The targetId a session is attached to (a page's or a child's).
    fn session_target_of(&self, conn: ConnId, session_id: &str, kind: SessionKind) -> Option<String> {
        match kind {
            SessionKind::Child { tab } => self.tabs.get(&tab)?.children.get(session_id)?.target_id.clone(),
            _ => self.session_target_id(self.conns.get(&conn)?.sessions.get(session_id)?),
        }
    }

    fn always_method(&self, agent: &AgentId, method: &str) -> bool {
        self.guard.always.get(agent).is_some_and(|(methods, _)| methods.contains(method))
    }

    fn always_origin(&self, agent: &AgentId, url: &str) -> bool {
        self.guard.always.get(agent).is_some_and(|(_, origins)| origins.contains(&origin_key(url)))
    }

    fn ask(
        &mut self,
        agent: &AgentId,
        tab: Option<TabId>,
        method: &str,
        url: Option<&str>,
        rule: String,
        waiting: AwaitingHuman,
    ) {
        self.ask_human(agent, tab, method, url, rule, None, waiting, None);
    }

    /// Puts a question to the human in the side panel; `gesture` is the gesture guard's (shown
    /// with Allow once and Deny only), `timeout_ms` its own time to wait.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn ask_human(
        &mut self,
        agent: &AgentId,
        tab: Option<TabId>,
        method: &str,
        url: Option<&str>,
        rule: String,
        gesture: Option<(tabtunnel_wire::gestures::GestureQuestion, crate::gestures::Offers)>,
        waiting: AwaitingHuman,
        timeout_ms: Option<u64>,
    ) {
        self.guard.next_id += 1;
        let id = self.guard.next_id;
        let (gesture, offers) = gesture.map_or((None, Default::default()), |(q, o)| (Some(q), o));
        let request = ApprovalRequest {
            id,
            agent: agent.as_str().to_owned(),
            tab_id: tab,
            method: method.to_owned(),
            url: url.map(str::to_owned),
            rule,
            gesture: gesture.map(Box::new),
            standing_ms: offers.standing_ms,
            remembers: offers.remembers,
        };
        if self.extension_connected {
            self.out.push_back(Output::ToExtension(ToExtension::Approval(request.clone())));
        }
        let asked = Asked { request, waiting, asked_at_ms: self.now_ms, timeout_ms };
        self.guard.asked_due.arm(asked.expires_at(self.ask_timeout_ms()));
        self.guard.asked.insert(id, asked);
    }

    /// The policy's time to wait for an answer. Questions outlive a policy taken away while
    /// they wait: they still time out.
    fn ask_timeout_ms(&self) -> u64 {
        self.guard
            .policy
            .as_ref()
            .map_or(crate::policy::PolicySet::DEFAULT_ASK_TIMEOUT_MS, |p| p.ask_timeout_ms)
    }

    fn next_question_expiry(&self) -> Option<u64> {
        let timeout = self.ask_timeout_ms();
        self.guard.asked.values().map(|a| a.expires_at(timeout)).min()
    }

    /// When the first question nobody answers becomes a refusal (a lower bound: see
    /// `deadline.rs`).
    pub(crate) fn questions_due(&self) -> Option<u64> {
        self.guard.asked_due.get()
    }

    /// The policy in force, if any.
    pub(crate) fn guard_policy(&self) -> Option<Arc<PolicySet>> {
        self.guard.policy.clone()
    }

    /// Withdraws the gesture guard's questions whose wait `gone` says is moot (its tab reset).
    pub(crate) fn withdraw_gesture_questions(
        &mut self,
        gone: impl Fn(&crate::gestures::HeldGesture) -> bool,
    ) {
        let ids: Vec<u64> = self
            .guard
            .asked
            .iter()
            .filter(|(_, a)| matches!(&a.waiting, AwaitingHuman::Gesture(w) if gone(w)))
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            let asked = self.guard.asked.remove(&id).expect("listed");
            if self.extension_connected {
                self.out.push_back(Output::ToExtension(ToExtension::ApprovalWithdrawn { id }));
            }
            let agent = AgentId::new(&asked.request.agent);
            let outcome = Outcome::Asked {
                rule: asked.request.rule.clone(),
                answer: "withdrawn: the tab started over",
            };
            self.audit_question(
                &agent,
                asked.request.tab_id,
                &asked.request.method,
                asked.request.url.as_deref(),
                outcome,
                *asked.request.gesture.unwrap_or_default(),
                Some(id),
            );
        }
    }

    /// The human answered in the side panel.
    pub(crate) fn approval_answered(&mut self, id: u64, answer: ApprovalAnswer) {
        let Some(asked) = self.guard.asked.remove(&id) else { return };
        // A gesture has no "always", and stands only for what its question offered: else it is
        // this once.
        let standing = self.standing_of(&asked.request, answer);
        let answer = match answer {
            ApprovalAnswer::Always if asked.request.gesture.is_some() => ApprovalAnswer::Allow,
            ApprovalAnswer::AllowFor { .. } if standing.is_none() => ApprovalAnswer::Allow,
            // A method's or an origin's question offers no period: once.
            ApprovalAnswer::AllowFor { .. } if asked.request.gesture.is_none() => ApprovalAnswer::Allow,
            answer => answer,
        };
        let words = match answer {
            ApprovalAnswer::Allow if standing.is_some() => "allowed, and not asked again here",
            ApprovalAnswer::Allow => "allowed once",
            ApprovalAnswer::AllowFor { .. } => "allowed for a while",
            ApprovalAnswer::Always => "always allowed",
            ApprovalAnswer::Deny => "denied",
        };
        self.settle_asked(asked, answer != ApprovalAnswer::Deny, answer == ApprovalAnswer::Always, words);
        if let Some(standing) = standing {
            self.give_standing(standing);
        }
    }

    fn settle_asked(&mut self, asked: Asked, allowed: bool, always: bool, words: &'static str) {
        let Asked { request, waiting, .. } = asked;
        let agent = AgentId::new(&request.agent);
        let outcome = Outcome::Asked { rule: request.rule.clone(), answer: words };
        match request.gesture.clone() {
            Some(question) => self.audit_question(
                &agent,
                request.tab_id,
                &request.method,
                request.url.as_deref(),
                outcome,
                *question,
                Some(request.id),
            ),
            None => self.audit(&agent, request.tab_id, &request.method, request.url.as_deref(), outcome),
        }
        let is_origin_question = request.rule.starts_with("ask_origins");
        if always {
            let (methods, origins) = self.guard.always.entry(agent.clone()).or_default();
            match (&request.url, is_origin_question) {
                (Some(url), true) => {
                    origins.insert(origin_key(url));
                }
                _ => {
                    methods.insert(request.method.clone());
                }
            }
        }
        match waiting {
            AwaitingHuman::Command { conn, text } if allowed => self.dispatch(conn, &text, Approved::Yes),
            AwaitingHuman::Command { conn, text } => {
                let why =
                    if words == "denied" { "the user refused it" } else { "the user did not answer in time" };
                self.refuse_text(conn, &text, &errors::refused_by_user(&request.method, why));
            }
            AwaitingHuman::Navigation { id } if allowed => self.let_navigation_through(id, &request),
            AwaitingHuman::Navigation { id } => {
                self.out.push_back(Output::NavigationDecided { id, go: false })
            }
            AwaitingHuman::Gesture(waiting) => {
                let why =
                    if words == "denied" { "the user refused it" } else { "the user did not answer in time" };
                if let Some(question) = request.gesture.as_deref().filter(|_| !allowed) {
                    self.remember_refusal(&agent, question);
                }
                self.gesture_settled(*waiting, allowed, why)
            }
        }
    }

    /// Refuses a held command from its text (it was parsed once already).
    fn refuse_text(&mut self, conn: ConnId, text: &str, error: &CdpError) {
        if !self.conns.contains_key(&conn) {
            return;
        }
        let Ok(parsed) = crate::envelope::parse(text) else { return };
        let cmd = parsed.command();
        let Some(kind) = self.conns[&conn].sessions.get(cmd.session_id).map(|s| s.kind) else {
            return self.reply_error(conn, &cmd, &errors::session_not_found());
        };
        self.refuse(conn, &cmd, kind, error);
    }

    /// A navigation the page started reached the daemon's navigation endpoint (the browser's
    /// rules sent it there: its origin is not allowed, or asked). The answer comes as
    /// [`Output::NavigationDecided`] with `id`.
    pub fn navigation_requested(&mut self, now: u64, id: u64, agent: &AgentId, tab: TabId, url: &str) {
        self.advance(now);
        let owned = self.tabs.get(&tab).is_some_and(|s| s.tab.visible_to(agent));
        if !owned || self.guard.kill_switch {
            return self.out.push_back(Output::NavigationDecided { id, go: false });
        }
        let decision = match self.guard.policy.as_ref().map(|p| p.for_agent(agent.as_str())) {
            // The endpoint redirects to what it allows: never off the web.
            _ if !destinations::is_allowed(url) => Decision::Deny(destinations::RULE.to_owned()),
            // Read-only: the tab stays where it is, whatever starts the navigation.
            Some(policy) if policy.is_read_only() => Decision::Deny(format!(
                "preset \"read-only\" in [{}] (its tabs stay where they are)",
                policy.section()
            )),
            Some(policy) => policy.navigation(url),
            None => Decision::Allow,
        };
        let request = |rule: String| ApprovalRequest {
            id,
            agent: agent.as_str().to_owned(),
            tab_id: Some(tab),
            method: "navigation".into(),
            url: Some(url.to_owned()),
            rule,
            gesture: None,
            standing_ms: Vec::new(),
            remembers: false,
        };
        match decision {
            Decision::Deny(rule) => {
                self.audit(agent, Some(tab), "navigation", Some(url), Outcome::Denied { rule });
                self.out.push_back(Output::NavigationDecided { id, go: false });
            }
            Decision::Ask(rule) if !self.always_origin(agent, url) => {
                self.ask(agent, Some(tab), "navigation", Some(url), rule, AwaitingHuman::Navigation { id })
            }
            _ => {
                self.audit(agent, Some(tab), "navigation", Some(url), Outcome::Allowed);
                self.let_navigation_through(id, &request(String::new()));
            }
        }
    }

    /// A popup an agent's page opened loads before the browser's rules cover its tab: one going
    /// where the agent may not go (or would have to ask) is closed at once instead of shared.
    pub(crate) fn popup_not_allowed(&mut self, info: &tabtunnel_wire::TabInfo) -> bool {
        if !info.created || info.opener_target_id.is_none() {
            return false;
        }
        let agent = AgentId::new(&info.agent);
        if !info.url.is_empty() && !destinations::is_allowed(&info.url) {
            let rule = destinations::RULE.to_owned();
            self.audit(&agent, Some(info.tab_id), "popup", Some(&info.url), Outcome::Denied { rule });
            self.browser_op_housekeeping(BrowserOp::CloseTab { tab_id: info.tab_id });
            return true;
        }
        let Some(policy) = self.policy_for(&agent) else { return false };
        let rule = match policy.navigation(&info.url) {
            Decision::Allow => return false,
            Decision::Ask(_) if self.always_origin(&agent, &info.url) => return false,
            Decision::Deny(rule) | Decision::Ask(rule) => rule,
        };
        self.audit(&agent, Some(info.tab_id), "popup", Some(&info.url), Outcome::Denied { rule });
        self.browser_op_housekeeping(BrowserOp::CloseTab { tab_id: info.tab_id });
        true
    }

    /// The browser lets the tab load the URL once, then the navigation endpoint sends it on.
    fn let_navigation_through(&mut self, id: u64, request: &ApprovalRequest) {
        let (Some(tab_id), Some(url)) = (request.tab_id, request.url.clone()) else {
            return self.out.push_back(Output::NavigationDecided { id, go: false });
        };
        self.browser_op_housekeeping_then(
            BrowserOp::AllowNavigation { tab_id, url },
            OnSuccess::NavigationGo { id },
        );
    }

    /// Questions nobody answered in time are refusals.
    pub(crate) fn expire_questions(&mut self) {
        let now = self.now_ms;
        if !self.guard.asked_due.is_due(now) {
            return;
        }
        let timeout = self.ask_timeout_ms();
        let expired: Vec<u64> = self
            .guard
            .asked
            .iter()
            .filter(|(_, a)| a.expires_at(timeout) <= now)
            .map(|(id, _)| *id)
            .collect();
        for id in expired {
            let asked = self.guard.asked.remove(&id).expect("listed");
            if self.extension_connected {
                self.out.push_back(Output::ToExtension(ToExtension::ApprovalWithdrawn { id }));
            }
            self.settle_asked(asked, false, false, "not answered in time");
        }
        self.guard.asked_due.set(self.next_question_expiry());
    }

    /// A connection went: its held commands are no longer asked about.
    pub(crate) fn forget_questions_of(&mut self, conn: ConnId) {
        let gone: Vec<u64> = self
            .guard
            .asked
            .iter()
            .filter(|(_, a)| match &a.waiting {
                AwaitingHuman::Command { conn: c, .. } => *c == conn,
                AwaitingHuman::Gesture(w) => {
                    matches!(**w, crate::gestures::HeldGesture::Input { conn: c, .. } if c == conn)
                }
                _ => false,
            })
            .map(|(id, _)| *id)
            .collect();
        for id in gone {
            self.guard.asked.remove(&id);
            if self.extension_connected {
                self.out.push_back(Output::ToExtension(ToExtension::ApprovalWithdrawn { id }));
            }
        }
    }

    /// A new extension connection sees the questions still waiting.
    pub(crate) fn resend_questions(&mut self) {
        let requests: Vec<ApprovalRequest> = self.guard.asked.values().map(|a| a.request.clone()).collect();
        for request in requests {
            self.out.push_back(Output::ToExtension(ToExtension::Approval(request)));
        }
    }

    pub fn is_kill_switch_engaged(&self) -> bool {
        self.guard.kill_switch
    }

    /// The human's kill switch: engaged, every client connection closes at once and new ones are
    /// refused (the extension detaches every tab itself); released, agents may come back.
    pub fn set_kill_switch(&mut self, now: u64, engaged: bool) {
        self.advance(now);
        if self.guard.kill_switch == engaged {
            return;
        }
        self.guard.kill_switch = engaged;
        self.out.push_back(Output::KillSwitch { engaged });
        if !engaged {
            return;
        }
        let mut conns: Vec<ConnId> = self.conns.keys().copied().collect();
        conns.sort_unstable();
        for conn in conns {
            self.client_disconnected(now, conn);
            self.out.push_back(Output::CloseClient { conn });
        }
        let asked = std::mem::take(&mut self.guard.asked);
        for (id, asked) in asked {
            if self.extension_connected {
                self.out.push_back(Output::ToExtension(ToExtension::ApprovalWithdrawn { id }));
            }
            match asked.waiting {
                AwaitingHuman::Navigation { id } => {
                    self.out.push_back(Output::NavigationDecided { id, go: false })
                }
                // A held write is refused, never let go with everyone stopped.
                AwaitingHuman::Gesture(waiting) => {
                    self.gesture_settled(*waiting, false, "every agent was stopped")
                }
                AwaitingHuman::Command { .. } => {}
            }
        }
        self.floods_forget_all();
    }
}

#[cfg(test)]
mod tests {
    use crate::audit::{AuditRecord, Outcome};
    use crate::policy::{PolicyFile, PolicySet};
    use crate::testing::*;
    use crate::*;
    use serde_json::json;
    use tabtunnel_wire::{ApprovalAnswer, BrowserOp, TabInfo, ToExtension};

    fn policy(value: serde_json::Value) -> PolicySet {
        PolicySet::compile(&serde_json::from_value::<PolicyFile>(value).unwrap()).unwrap()
    }

    /// The issue's example policy, with a short question timeout.
    fn example() -> PolicySet {
        policy(json!({
            "ask_timeout": 2,
            "default": {
                "deny_methods": ["Network.getAllCookies", "Network.getCookies", "Storage.getCookies"],
                "allow_origins": ["http://127.0.0.1:*", "https://*.example.com"],
                "ask_origins": ["https://mail.example.com"],
                "ask_methods": ["Emulation.setGeolocationOverride"]
            },
            "agent": { "reader": { "preset": "read-only" } }
        }))
    }

    fn audits(step: &Step) -> Vec<&AuditRecord> {
        step.other
            .iter()
            .filter_map(|o| match o {
                Output::Audit(r) => Some(r),
                _ => None,
            })
            .collect()
    }

    fn approvals(step: &Step) -> Vec<&tabtunnel_wire::ApprovalRequest> {
        step.extension
            .iter()
            .filter_map(|f| match f {
                ToExtension::Approval(r) => Some(r),
                _ => None,
            })
            .collect()
    }

    fn guarded(agent: &str) -> (Harness, String) {
        let mut h = Harness::with_tabs(&[]);
        h.core.set_policy(h.now, Some(example()));
        h.ext(FromExtension::TabShared(agent_tab(1, agent, true)));
        h.connect_as(1, agent);
        let page = h.playwright_attach(1)[0].clone();
        h.drain();
        (h, page)
    }

    #[test]
    fn a_denied_method_names_its_rule_and_the_session_carries_on() {
        let (mut h, page) = guarded("a");
        let step = h.send(1, json!({"id": 1, "sessionId": page, "method": "Network.getAllCookies"}));
        let message = step.only_reply(1)["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains("deny_methods \"Network.getAllCookies\" in [default]"), "{message}");
        assert!(step.commands().is_empty());
        assert!(matches!(
            &audits(&step)[..],
            [AuditRecord { outcome: Outcome::Denied { .. }, url: None, .. }]
        ));
        let step = h.send(1, json!({"id": 2, "sessionId": page, "method": "Runtime.evaluate", "params": {"expression": "document.cookie"}}));
        assert_eq!(step.commands().len(), 1, "the connection lives on");
        let audited = audits(&step);
        assert_eq!(
            (audited[0].method.as_str(), &audited[0].outcome),
            ("Runtime.evaluate", &Outcome::Allowed)
        );
        assert!(
            audits(&h.send(1, json!({"id": 3, "sessionId": page, "method": "Page.enable"}))).is_empty(),
            "plumbing"
        );
    }

    #[test]
    fn navigations_outside_the_allowed_origins_fail_and_the_tab_stays() {
        let (mut h, page) = guarded("a");
        let step = h.send(1, json!({"id": 1, "sessionId": page, "method": "Page.navigate", "params": {"url": "https://evil.test/"}}));
        assert_eq!(
            step.only_reply(1)["result"],
            json!({"frameId": "PAGE1", "errorText": "net::ERR_BLOCKED_BY_CLIENT"})
        );
        assert!(step.commands().is_empty(), "nothing reaches the tab");
        let record = audits(&step)[0].clone();
        assert_eq!(record.url.as_deref(), Some("https://evil.test/"));
        assert!(matches!(record.outcome, Outcome::Denied { rule } if rule.contains("allow_origins")));
        let step = h.send(
            1,
            json!({"id": 2, "method": "Target.createTarget", "params": {"url": "https://evil.test/"}}),
        );
        assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("allow_origins"));
        let step = h.send(1, json!({"id": 3, "sessionId": page, "method": "Page.navigate", "params": {"url": "https://shop.example.com/"}}));
        assert_eq!(step.commands()[0].method, "Page.navigate");
        let step = h.send(
            1,
            json!({"id": 4, "method": "Target.createTarget", "params": {"url": "http://127.0.0.1:9/x"}}),
        );
        assert!(matches!(step.browser_ops()[0].1, BrowserOp::CreateTab { allow_once: false, .. }));
    }

    #[test]
    fn an_unanswered_question_is_a_refusal_at_the_deadline_its_own_arrival_set() {
        let (mut h, page) = guarded("a");
        h.now = 1234;
        let step =
            h.send(1, json!({"id": 1, "sessionId": page, "method": "Emulation.setGeolocationOverride"}));
        assert_eq!(approvals(&step).len(), 1);
        // The example's `ask_timeout` is 2 s.
        assert_eq!(h.next_deadline(), Some(3234));
        assert!(h.tick(3233).client.is_empty(), "not yet");
        let step = h.tick(3234);
        assert!(step.extension.iter().any(|f| matches!(f, ToExtension::ApprovalWithdrawn { .. })));
        assert!(step.only_reply(1)["error"].is_object(), "a refusal");
        assert!(matches!(&audits(&step)[0].outcome, Outcome::Asked { answer: "not answered in time", .. }));
        let status = h.core.agent_statuses().into_iter().find(|s| s.name == "a").unwrap();
        assert_eq!(status.recent.last().unwrap().at_ms, 3234, "the side panel's step has the time it came");
        assert_eq!(status.recent.last().unwrap().question, None, "no gesture, no picture");
        assert_eq!(h.next_deadline(), None);
        // A new policy with a shorter wait moves the deadline of a question asked already.
        h.now = 5000;
        h.send(1, json!({"id": 2, "sessionId": page, "method": "Emulation.setGeolocationOverride"}));
        assert_eq!(h.next_deadline(), Some(7000));
        let mut shorter = example();
        shorter.ask_timeout_ms = 500;
        h.now = 5300;
        h.core.set_policy(h.now, Some(shorter));
        assert_eq!(h.next_deadline(), Some(5500));
    }

    #[test]
    fn an_asked_navigation_waits_for_the_human() {
        let (mut h, page) = guarded("a");
        let ask = |h: &mut Harness, id: i64| {
            let step = h.send(1, json!({"id": id, "sessionId": page, "method": "Page.navigate", "params": {"url": "https://mail.example.com/inbox"}}));
            assert!(step.client.is_empty() && step.commands().is_empty(), "it waits");
            let request = approvals(&step)[0].clone();
            assert_eq!(
                (request.agent.as_str(), request.tab_id, request.url.as_deref()),
                ("a", Some(1), Some("https://mail.example.com/inbox"))
            );
            assert!(request.rule.contains("ask_origins"));
            request.id
        };
        // Allowed once: the browser lets the URL through once, then the command goes.
        let id = ask(&mut h, 1);
        let step = h.ext(FromExtension::ApprovalAnswer { id, answer: ApprovalAnswer::Allow });
        let (op_id, op) = step.browser_ops()[0];
        assert_eq!(
            op,
            &BrowserOp::AllowNavigation { tab_id: 1, url: "https://mail.example.com/inbox".into() }
        );
        assert!(matches!(&audits(&step)[0].outcome, Outcome::Asked { answer: "allowed once", .. }));
        let step = h.answer(op_id, json!({}));
        assert_eq!(step.commands()[0].method, "Page.navigate");
        assert!(audits(&step).is_empty(), "audited once, when answered");
        // Denied: a failed navigation.
        let id = ask(&mut h, 2);
        let step = h.ext(FromExtension::ApprovalAnswer { id, answer: ApprovalAnswer::Deny });
        assert_eq!(step.only_reply(1)["result"]["errorText"], "net::ERR_BLOCKED_BY_CLIENT");
        // Silence past the timeout: refused, and the panel is told to drop it.
        let id = ask(&mut h, 3);
        h.tick(1000);
        let step = h.tick(2000);
        assert_eq!(step.only_reply(1)["id"], 3);
        assert!(step
            .extension
            .iter()
            .any(|f| matches!(f, ToExtension::ApprovalWithdrawn { id: w } if *w == id)));
        assert!(matches!(&audits(&step)[0].outcome, Outcome::Asked { answer: "not answered in time", .. }));
        // Always for this agent: the next navigation to that origin is not asked.
        let id = ask(&mut h, 4);
        h.ext(FromExtension::ApprovalAnswer { id, answer: ApprovalAnswer::Always });
        let step = h.send(1, json!({"id": 5, "sessionId": page, "method": "Page.navigate", "params": {"url": "https://mail.example.com/other"}}));
        assert!(approvals(&step).is_empty());
        assert!(matches!(step.browser_ops()[0].1, BrowserOp::AllowNavigation { .. }));
        assert!(matches!(&audits(&step)[0].outcome, Outcome::Allowed), "audited though not asked");
        let op_id = step.browser_ops()[0].0;
        let step = h.answer(op_id, json!({}));
        assert_eq!(step.commands()[0].method, "Page.navigate");
        assert!(audits(&step).is_empty(), "and only once");
    }

    #[test]
    fn asked_methods_wait_and_go_or_fail_as_answered() {
        let (mut h, page) = guarded("a");
        let step = h.send(1, json!({"id": 1, "sessionId": page, "method": "Emulation.setGeolocationOverride", "params": {"latitude": 1}}));
        let id = approvals(&step)[0].id;
        let step = h.ext(FromExtension::ApprovalAnswer { id, answer: ApprovalAnswer::Allow });
        assert_eq!(
            step.commands()[0].params.as_ref().unwrap().get(),
            r#"{"latitude":1}"#,
            "replayed as sent"
        );
        let step =
            h.send(1, json!({"id": 2, "sessionId": page, "method": "Emulation.setGeolocationOverride"}));
        let id = approvals(&step)[0].id;
        let step = h.ext(FromExtension::ApprovalAnswer { id, answer: ApprovalAnswer::Deny });
        assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("the user refused"));
        // A question whose client left is withdrawn.
        let step =
            h.send(1, json!({"id": 3, "sessionId": page, "method": "Emulation.setGeolocationOverride"}));
        let id = approvals(&step)[0].id;
        h.core.client_disconnected(h.now, 1);
        let step = h.drain();
        assert!(step
            .extension
            .iter()
            .any(|f| matches!(f, ToExtension::ApprovalWithdrawn { id: w } if *w == id)));
    }

    #[test]
    fn a_read_only_agent_reads_but_does_not_type_or_navigate() {
        let (mut h, page) = guarded("reader");
        for (id, method) in
            [(1, "Page.captureScreenshot"), (2, "Accessibility.getFullAXTree"), (3, "Runtime.callFunctionOn")]
        {
            assert_eq!(
                h.send(1, json!({"id": id, "sessionId": page, "method": method})).commands().len(),
                1,
                "{method}"
            );
        }
        let step = h.send(
            1,
            json!({"id": 4, "sessionId": page, "method": "Input.insertText", "params": {"text": "x"}}),
        );
        assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("read-only"));
        let step = h.send(1, json!({"id": 5, "sessionId": page, "method": "Page.navigate", "params": {"url": "http://127.0.0.1:1/"}}));
        assert_eq!(step.only_reply(1)["result"]["errorText"], "net::ERR_BLOCKED_BY_CLIENT");
    }

    #[test]
    fn navigations_the_page_starts_are_decided_for_the_endpoint() {
        let (mut h, _) = guarded("a");
        h.ext(FromExtension::TabShared(agent_tab(2, "b", true)));
        let decided = |step: &Step| {
            step.other.iter().find_map(|o| match o {
                Output::NavigationDecided { id, go } => Some((*id, *go)),
                _ => None,
            })
        };
        h.core.navigation_requested(h.now, 7, &AgentId::new("a"), 1, "https://evil.test/");
        let step = h.drain();
        assert_eq!(decided(&step), Some((7, false)));
        assert_eq!(audits(&step)[0].method, "navigation");
        h.core.navigation_requested(h.now, 8, &AgentId::new("a"), 2, "http://127.0.0.1:1/");
        assert_eq!(decided(&h.drain()), Some((8, false)), "not a's tab");
        h.core.navigation_requested(h.now, 9, &AgentId::new("a"), 1, "https://mail.example.com/");
        let step = h.drain();
        let id = approvals(&step)[0].id;
        let step = h.ext(FromExtension::ApprovalAnswer { id, answer: ApprovalAnswer::Allow });
        let (op, _) = step.browser_ops()[0];
        assert_eq!(decided(&h.answer(op, json!({}))), Some((9, true)));
    }

    #[test]
    fn a_popup_going_where_its_agent_may_not_is_closed_not_shared() {
        let (mut h, _) = guarded("a");
        let popup = |tab: TabId, url: &str| TabInfo {
            url: url.into(),
            opener_target_id: Some("PAGE1".into()),
            ..agent_tab(tab, "a", true)
        };
        let step = h.ext(FromExtension::TabShared(popup(5, "https://evil.test/")));
        assert_eq!(step.browser_ops()[0].1, &BrowserOp::CloseTab { tab_id: 5 });
        assert!(step.to(1).is_empty(), "never announced");
        assert_eq!(audits(&step)[0].method, "popup");
        let step = h.ext(FromExtension::TabShared(popup(6, "http://127.0.0.1:5/ok")));
        assert!(step.browser_ops().is_empty());
        assert_eq!(step.methods(1), ["Target.attachedToTarget"]);
    }

    #[test]
    fn the_kill_switch_closes_everyone_and_refuses_newcomers_until_released() {
        let (mut h, _) = guarded("a");
        h.connect_as(2, "b");
        let step = h.ext(FromExtension::KillSwitch { engaged: true });
        assert_eq!(step.closed, [1, 2]);
        assert!(step.other.iter().any(|o| matches!(o, Output::KillSwitch { engaged: true })));
        h.connect_as(3, "c");
        assert_eq!(h.drain().closed, [3]);
        h.ext(FromExtension::KillSwitch { engaged: false });
        h.connect_as(4, "c");
        assert!(
            h.send(4, json!({"id": 1, "method": "Browser.getVersion"})).only_reply(4)["result"].is_object()
        );
    }

    #[test]
    fn a_new_policy_reaches_connections_already_open_and_the_browser() {
        let mut h = Harness::with_tabs(&[1]);
        h.connect(1);
        let page = h.playwright_attach(1)[0].clone();
        assert_eq!(
            h.send(1, json!({"id": 1, "sessionId": page, "method": "Network.getCookies"})).commands().len(),
            1
        );
        h.core.set_policy(h.now, Some(example()));
        let step = h.drain();
        let rules = step.extension.iter().find_map(|f| match f {
            ToExtension::NavigationRules { rules, navigation_url } => {
                Some((rules.clone(), navigation_url.clone()))
            }
            _ => None,
        });
        let (rules, url) = rules.expect("the browser is told");
        assert_eq!(url, NAVIGATION_URL);
        assert_eq!(rules.for_agent("anyone").unwrap().ask.len(), 1);
        assert!(
            rules.for_agent("reader").unwrap().allow.is_some(),
            "the reader inherits the default's origins"
        );
        let step = h.send(1, json!({"id": 2, "sessionId": page, "method": "Network.getCookies"}));
        assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("policy"));
        h.core.set_policy(h.now, None);
        assert_eq!(
            h.send(1, json!({"id": 3, "sessionId": page, "method": "Network.getCookies"})).commands().len(),
            1
        );
    }

    #[test]
    fn everything_an_agent_can_read_a_document_through_is_held_to_its_origins() {
        let (mut h, page) = guarded("a");
        // A credentialed fetch by DevTools needs no frame at all.
        let step = h.send(1, json!({"id": 1, "sessionId": page, "method": "Network.loadNetworkResource", "params": {"frameId": "PAGE1", "url": "http://localhost:5/inbox", "options": {"disableCache": true, "includeCredentials": true}}}));
        assert!(step.commands().is_empty());
        assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("allow_origins"));
        // Not even from an own origin, with cookies or without: a redirect could take the load
        // to any site, or to this machine's servers.
        for (id, credentials) in [(2, false), (5, true)] {
            let step = h.send(1, json!({"id": id, "sessionId": page, "method": "Network.loadNetworkResource", "params": {"frameId": "PAGE1", "url": "http://127.0.0.1:5/ok", "options": {"disableCache": true, "includeCredentials": credentials}}}));
            assert!(step.commands().is_empty());
            assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("redirects"));
        }
        // A frame navigated by id: frames never ask, they are refused.
        let step = h.send(1, json!({"id": 3, "sessionId": page, "method": "Page.navigate", "params": {"frameId": "FRAME-2", "url": "https://mail.example.com/"}}));
        assert_eq!(step.only_reply(1)["result"]["errorText"], "net::ERR_BLOCKED_BY_CLIENT");
        assert!(approvals(&step).is_empty() && step.commands().is_empty());
        // The page's own frame is the page: asked as before.
        let step = h.send(1, json!({"id": 4, "sessionId": page, "method": "Page.navigate", "params": {"frameId": "PAGE1", "url": "https://mail.example.com/"}}));
        assert_eq!(approvals(&step).len(), 1);
        // A URL read as Chrome reads it: this one is localhost:1, not the allowed 127.0.0.1.
        let step = h.send(1, json!({"id": 5, "sessionId": page, "method": "Page.navigate", "params": {"url": "http://localhost:1\\@127.0.0.1:2/"}}));
        assert_eq!(step.only_reply(1)["result"]["errorText"], "net::ERR_BLOCKED_BY_CLIENT");
    }

    /// An agent with no policy at all, on its own tab.
    fn unrestricted(agent: &str) -> (Harness, String) {
        let mut h = Harness::with_tabs(&[]);
        h.ext(FromExtension::TabShared(agent_tab(1, agent, true)));
        h.connect_as(1, agent);
        let page = h.playwright_attach(1)[0].clone();
        h.drain();
        (h, page)
    }

    const OUR_PAGE: &str = "chrome-extension://jmlcgbpniifikmbmclnhinffofckiihm/sidepanel.html";

    #[test]
    fn no_agent_opens_the_extensions_or_the_browsers_pages_whatever_its_policy() {
        for (mut h, page) in [unrestricted("a"), guarded("a")] {
            for (id, url) in [
                (1, OUR_PAGE),
                (2, "  CHROME-EXTENSION://jmlcgbpniifikmbmclnhinffofckiihm/sidepanel.html"),
                (3, "chrome://settings/resetProfileSettings"),
                (4, "devtools://devtools/bundled/inspector.html"),
                (5, "file:///home/user/.config/tabtunnel/daemon.json"),
                (6, "sidepanel.html"),
            ] {
                let step = h.send(
                    1,
                    json!({"id": id, "sessionId": page, "method": "Page.navigate", "params": {"url": url}}),
                );
                assert_eq!(step.only_reply(1)["result"]["errorText"], "net::ERR_BLOCKED_BY_CLIENT", "{url}");
                assert!(step.commands().is_empty(), "{url}: nothing reaches the tab");
                let record = audits(&step)[0].clone();
                assert!(
                    matches!(&record.outcome, Outcome::Denied { rule } if rule.contains("web pages only")),
                    "{url}: {record:?}"
                );
                // A frame of the page, and a new tab (what /json/new sends too).
                let step = h.send(1, json!({"id": id + 100, "sessionId": page, "method": "Page.navigate", "params": {"frameId": "FRAME-2", "url": url}}));
                assert_eq!(step.only_reply(1)["result"]["errorText"], "net::ERR_BLOCKED_BY_CLIENT");
                assert!(step.commands().is_empty());
                let step = h.send(
                    1,
                    json!({"id": id + 200, "method": "Target.createTarget", "params": {"url": url}}),
                );
                let message = step.only_reply(1)["error"]["message"].as_str().unwrap().to_owned();
                assert!(message.contains("not a web page"), "{message}");
                assert!(step.browser_ops().is_empty(), "{url}: no tab opened");
                let step = h.send(1, json!({"id": id + 300, "sessionId": page, "method": "Network.loadNetworkResource", "params": {"frameId": "PAGE1", "url": url, "options": {"disableCache": true, "includeCredentials": true}}}));
                assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("not a web page"));
                assert!(step.commands().is_empty());
            }
            // The web, and a blank tab, still go.
            let step = h.send(1, json!({"id": 9, "sessionId": page, "method": "Page.navigate", "params": {"url": "http://127.0.0.1:5/"}}));
            assert_eq!(step.commands().len(), 1);
            let step = h.send(1, json!({"id": 10, "method": "Target.createTarget", "params": {"url": ""}}));
            assert_eq!(step.browser_ops().len(), 1);
        }
    }

    #[test]
    fn the_navigation_endpoint_sends_no_page_off_the_web() {
        // Even where a policy would ask about (or allow) the extension's origin.
        let (mut h, _) = unrestricted("a");
        let origin = "chrome-extension://jmlcgbpniifikmbmclnhinffofckiihm";
        h.core.set_policy(
            h.now,
            Some(policy(
                json!({"default": {"ask_origins": [origin], "allow_origins": ["https://*.example.com"]}}),
            )),
        );
        h.core.navigation_requested(h.now, 7, &AgentId::new("a"), 1, OUR_PAGE);
        let step = h.drain();
        assert!(step.other.iter().any(|o| matches!(o, Output::NavigationDecided { id: 7, go: false })));
        assert!(approvals(&step).is_empty(), "not even asked");
    }

    #[test]
    fn no_frame_or_popup_of_the_extensions_or_the_browsers_reaches_an_agent() {
        let (mut h, page) = unrestricted("a");
        h.send(1, json!({"id": 1, "sessionId": page, "method": "Target.setAutoAttach", "params": {"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}}));
        let attach = |session: &str, kind: &str, url: &str| {
            event(1, None, "Target.attachedToTarget", &json!({"sessionId": session, "targetInfo": {"targetId": format!("T-{session}"), "type": kind, "url": url}, "waitingForDebugger": false}).to_string())
        };
        for (session, kind) in [("F1", "iframe"), ("W1", "worker")] {
            let step = h.ext(attach(session, kind, OUR_PAGE));
            assert!(step.to(1).is_empty(), "{kind}: not announced");
            let step = h.send(1, json!({"id": 2, "sessionId": session, "method": "Runtime.evaluate", "params": {"expression": "chrome.runtime.id"}}));
            assert!(step.commands().is_empty(), "{kind}: its session does not exist for the agent");
        }
        // A frame that failed to load, and the web, are announced.
        assert_eq!(
            h.ext(attach("F2", "iframe", "chrome-error://chromewebdata/")).methods(1),
            ["Target.attachedToTarget"]
        );
        assert_eq!(
            h.ext(attach("F3", "iframe", "https://example.com/")).methods(1),
            ["Target.attachedToTarget"]
        );
        // A popup of the agent's page showing a browser page is closed, not shared.
        let mut popup = agent_tab(2, "a", true);
        popup.url = "chrome://settings/".into();
        popup.opener_target_id = Some("PAGE1".into());
        let step = h.ext(FromExtension::TabShared(popup));
        assert!(step.to(1).is_empty());
        assert!(step.extension.iter().any(
            |f| matches!(f, ToExtension::Browser(r) if matches!(r.op, BrowserOp::CloseTab { tab_id: 2 }))
        ));
    }

    #[test]
    fn a_frame_of_a_forbidden_origin_never_becomes_the_agents_target() {
        let (mut h, page) = guarded("a");
        // Answered by the core: Chrome's auto-attach is the gesture guard's, always on.
        h.send(1, json!({"id": 1, "sessionId": page, "method": "Target.setAutoAttach", "params": {"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}}));
        let attach = |session: &str, url: &str| {
            event(1, None, "Target.attachedToTarget", &json!({"sessionId": session, "targetInfo": {"targetId": format!("T-{session}"), "type": "iframe", "url": url}, "waitingForDebugger": false}).to_string())
        };
        let step = h.ext(attach("F1", "http://localhost:5/mail"));
        assert!(step.to(1).is_empty(), "not announced");
        assert!(
            matches!(&audits(&step)[0].outcome, Outcome::Denied { rule } if rule.contains("allow_origins"))
        );
        let step = h.send(1, json!({"id": 2, "sessionId": "F1", "method": "Runtime.evaluate", "params": {"expression": "document.body.innerText"}}));
        assert!(step.commands().is_empty(), "its session does not exist for the agent");
        let step = h.ext(attach("F2", "http://127.0.0.1:5/widget"));
        assert_eq!(step.methods(1), ["Target.attachedToTarget"]);
    }

    #[test]
    fn a_read_only_agents_page_goes_nowhere_whatever_starts_it() {
        let (mut h, _) = guarded("reader");
        h.core.navigation_requested(h.now, 7, &AgentId::new("reader"), 1, "http://127.0.0.1:5/order");
        let step = h.drain();
        assert!(step.other.iter().any(|o| matches!(o, Output::NavigationDecided { id: 7, go: false })));
        assert!(matches!(&audits(&step)[0].outcome, Outcome::Denied { rule } if rule.contains("read-only")));
        h.core.navigation_requested(h.now, 8, &AgentId::new("reader"), 1, "https://mail.example.com/");
        assert!(approvals(&h.drain()).is_empty(), "nothing to ask: it stays");
    }

    #[test]
    fn the_trail_never_holds_a_secret() {
        let (mut h, page) = guarded("a");
        let url = format!("http://127.0.0.1:9/{SECRET}/json/version");
        let step =
            h.send(1, json!({"id": 1, "sessionId": page, "method": "Page.navigate", "params": {"url": url}}));
        assert_eq!(audits(&step)[0].url.as_deref(), Some("http://127.0.0.1:9/<secret>/json/version"));
    }
}
