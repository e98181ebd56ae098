//! The side panel's DOM: built once, then updated by [`View::render`]. The element ids are a
//! contract with the e2e tests (see docs/interfaces.md).

use wasm_bindgen::JsCast;
use web_sys::{Document, Element, HtmlButtonElement, HtmlElement, HtmlInputElement};

use crate::messages::{AgentView, DaemonState, PanelState, SharedTab};
use tabtunnel_wire::DEFAULT_AGENT;

/// The tab the "Share this tab" toggle is about.
#[derive(Debug, Clone, PartialEq)]
pub struct ActiveTab {
    pub id: i32,
    pub title: String,
    pub url: String,
}

pub struct View {
    doc: Document,
    status: HtmlElement,
    detail: HtmlElement,
    version_warning: HtmlElement,
    file_access_warning: HtmlElement,
    audit_trail_warning: HtmlElement,
    endpoint: HtmlElement,
    pub copy: HtmlButtonElement,
    pub toggle: HtmlInputElement,
    active_label: HtmlElement,
    notice: HtmlElement,
    pub list: HtmlElement,
    empty: HtmlElement,
    pub url_input: HtmlInputElement,
    pub save: HtmlButtonElement,
    /// Hand the active tab to an agent: its name (a known one from the list, or a new one).
    pub hand_input: HtmlInputElement,
    pub hand_button: HtmlButtonElement,
    agent_names: HtmlElement,
    held_by: HtmlElement,
    pub take_back: HtmlButtonElement,
    pub requests: HtmlElement,
    requests_section: HtmlElement,
    pub agents: HtmlElement,
    agents_empty: HtmlElement,
    pub approvals: HtmlElement,
    approvals_section: HtmlElement,
    /// The human's standing answers, each with a way to take it back.
    pub standing: HtmlElement,
    standing_section: HtmlElement,
    pub kill_switch: HtmlButtonElement,
    kill_note: HtmlElement,
    /// Shown while another browser holds the daemon: take it over for this one.
    pub use_this_browser: HtmlButtonElement,
    /// Agents with their own tokens: the list, minting one, the token just minted.
    pub agent_tokens: HtmlElement,
    pub new_agent_name: HtmlInputElement,
    pub mint: HtmlButtonElement,
    minted: HtmlElement,
    minted_value: HtmlElement,
    minted_note: HtmlElement,
    pub copy_minted: HtmlButtonElement,
    pub dismiss_minted: HtmlButtonElement,
    /// What each list was last built from, to rebuild only on change.
    built: std::cell::RefCell<std::collections::HashMap<&'static str, String>>,
    /// Each agent's live picture: its tab and element, kept across rebuilds of its card.
    pictures: std::cell::RefCell<std::collections::HashMap<String, (i32, Element)>>,
}

impl View {
    pub fn build(doc: Document) -> View {
        let b = Builder(&doc);
        let body = doc.body().expect("the panel page has a body");

        let status = b.el("span", &[("id", "daemon-status"), ("class", "status")], "");
        let header = b.el("header", &[], "");
        header.append_child(&b.el("h1", &[], "tabtunnel")).unwrap();
        header.append_child(&status).unwrap();
        let kill_switch = b.el("button", &[("id", "kill-switch"), ("type", "button"), ("class", "kill")], "");
        let kill_note = b.el("p", &[("id", "kill-note"), ("class", "kill-note")], "");
        let kill_row = b.el("div", &[("class", "kill-row")], "");
        kill_row.append_child(&kill_switch).unwrap();
        kill_row.append_child(&kill_note).unwrap();

        let approvals = b.el("ul", &[("id", "approvals"), ("class", "requests")], "");
        let approvals_section = b.section("Asking you");
        approvals_section.append_child(&approvals).unwrap();
        let standing = b.el("ul", &[("id", "standing"), ("class", "requests")], "");
        let standing_section = b.section("Standing answers");
        standing_section.append_child(&standing).unwrap();
        let detail = b.el("p", &[("id", "daemon-detail"), ("class", "detail")], "");
        let use_this_browser = b.el(
            "button",
            &[("id", "use-this-browser"), ("type", "button"), ("hidden", "")],
            "Use this browser instead",
        );
        let version_warning = b.el("p", &[("id", "version-warning"), ("class", "detail")], "");
        let file_access_warning = b.el("p", &[("id", "file-access-warning"), ("class", "detail")], "");
        let audit_trail_warning = b.el("p", &[("id", "audit-trail-warning"), ("class", "detail")], "");

        let endpoint = b.el("code", &[("id", "client-endpoint"), ("class", "endpoint")], "");
        let copy = b.el("button", &[("id", "copy-endpoint"), ("type", "button")], "Copy");
        let endpoint_section = b.section("Client endpoint");
        endpoint_section.append_child(&b.row(&[&endpoint, &copy])).unwrap();
        endpoint_section
            .append_child(&b.el("p", &[("class", "hint")], "Give this URL to your CDP client or MCP server."))
            .unwrap();

        let toggle = b.el("input", &[("id", "share-toggle"), ("type", "checkbox")], "");
        let switch = b.el("label", &[("class", "switch")], "");
        switch.append_child(&toggle).unwrap();
        switch.append_child(&b.el("span", &[], "Share this tab")).unwrap();
        let active_label = b.el("p", &[("id", "active-tab"), ("class", "tab-meta")], "");
        let notice = b.el("p", &[("id", "notice"), ("class", "notice"), ("hidden", "")], "");
        let hand_input = b.el(
            "input",
            &[
                ("id", "handover-agent"),
                ("type", "text"),
                ("list", "agent-names"),
                ("spellcheck", "false"),
                ("placeholder", "agent name"),
            ],
            "",
        );
        let agent_names = b.el("datalist", &[("id", "agent-names")], "");
        let hand_button = b.el("button", &[("id", "handover-button"), ("type", "button")], "Hand to agent");
        let hand_row = b.row(&[&hand_input, &hand_button]);
        hand_row.append_child(&agent_names).unwrap();
        let held_by = b.el("span", &[("id", "held-by")], "");
        let take_back = b.el("button", &[("id", "take-back"), ("type", "button")], "Take back");
        let held_row = b.row(&[&held_by, &take_back]);
        held_row.set_attribute("class", "row held").unwrap();
        let share_section = b.section("Active tab");
        for child in [&switch, &active_label, &hand_row, &held_row, &notice] {
            share_section.append_child(child).unwrap();
        }

        let requests = b.el("ul", &[("id", "handover-requests"), ("class", "requests")], "");
        let requests_section = b.section("Requests");
        requests_section.append_child(&requests).unwrap();

        let agents = b.el("ul", &[("id", "agents"), ("class", "agents")], "");
        let agents_empty = b.el("p", &[("class", "hint")], "No agent is connected.");
        let agents_section = b.section("Agents");
        agents_section.append_child(&agents).unwrap();
        agents_section.append_child(&agents_empty).unwrap();

        let list = b.el("ul", &[("id", "shared-tabs"), ("class", "tabs")], "");
        let empty = b.el("p", &[("class", "hint")], "No tab is shared.");
        let list_section = b.section("Shared tabs");
        list_section.append_child(&list).unwrap();
        list_section.append_child(&empty).unwrap();

        let agent_tokens = b.el("ul", &[("id", "agent-tokens"), ("class", "tabs")], "");
        let new_agent_name = b.el(
            "input",
            &[
                ("id", "new-agent-name"),
                ("type", "text"),
                ("spellcheck", "false"),
                ("placeholder", "new agent's name"),
            ],
            "",
        );
        let mint = b.el("button", &[("id", "mint-agent-token"), ("type", "button")], "Mint token");
        let minted_value = b.el("code", &[("id", "minted-token-value"), ("class", "endpoint")], "");
        let minted_note = b.el("p", &[("id", "minted-token-note"), ("class", "hint")], "");
        let copy_minted = b.el("button", &[("id", "copy-minted-token"), ("type", "button")], "Copy");
        let dismiss_minted = b.el("button", &[("id", "dismiss-minted-token"), ("type", "button")], "Done");
        let minted = b.el("div", &[("id", "minted-token"), ("class", "minted"), ("hidden", "")], "");
        minted.append_child(&minted_note).unwrap();
        minted.append_child(&b.row(&[&minted_value, &copy_minted, &dismiss_minted])).unwrap();
        let tokens_section = b.section("Agent tokens");
        tokens_section.append_child(&agent_tokens).unwrap();
        tokens_section.append_child(&b.row(&[&new_agent_name, &mint])).unwrap();
        tokens_section.append_child(&minted).unwrap();
        tokens_section
            .append_child(&b.el(
                "p",
                &[("class", "hint")],
                "An agent given its own token acts as that agent only, with its policy, whatever URL it uses.",
            ))
            .unwrap();

        let url_input = b.el(
            "input",
            &[
                ("id", "daemon-url"),
                ("type", "url"),
                ("spellcheck", "false"),
                ("placeholder", "ws://127.0.0.1:9722/<secret>/extension"),
            ],
            "",
        );
        let save = b.el("button", &[("id", "save-daemon-url"), ("type", "button")], "Save");
        let settings = b.section("Daemon URL");
        settings.append_child(&b.row(&[&url_input, &save])).unwrap();

        for child in [
            &header,
            &detail,
            &use_this_browser,
            &version_warning,
            &file_access_warning,
            &audit_trail_warning,
            &kill_row,
            &approvals_section,
            &standing_section,
            &endpoint_section,
            &requests_section,
            &share_section,
            &agents_section,
            &list_section,
            &tokens_section,
            &settings,
        ] {
            body.append_child(child).unwrap();
        }

        View {
            doc,
            status: status.unchecked_into(),
            detail: detail.unchecked_into(),
            version_warning: version_warning.unchecked_into(),
            file_access_warning: file_access_warning.unchecked_into(),
            audit_trail_warning: audit_trail_warning.unchecked_into(),
            endpoint: endpoint.unchecked_into(),
            copy: copy.unchecked_into(),
            toggle: toggle.unchecked_into(),
            active_label: active_label.unchecked_into(),
            notice: notice.unchecked_into(),
            list: list.unchecked_into(),
            empty: empty.unchecked_into(),
            url_input: url_input.unchecked_into(),
            save: save.unchecked_into(),
            hand_input: hand_input.unchecked_into(),
            hand_button: hand_button.unchecked_into(),
            agent_names: agent_names.unchecked_into(),
            held_by: held_by.unchecked_into(),
            take_back: take_back.unchecked_into(),
            requests: requests.unchecked_into(),
            requests_section: requests_section.unchecked_into(),
            agents: agents.unchecked_into(),
            agents_empty: agents_empty.unchecked_into(),
            approvals: approvals.unchecked_into(),
            approvals_section: approvals_section.unchecked_into(),
            standing: standing.unchecked_into(),
            standing_section: standing_section.unchecked_into(),
            kill_switch: kill_switch.unchecked_into(),
            kill_note: kill_note.unchecked_into(),
            use_this_browser: use_this_browser.unchecked_into(),
            agent_tokens: agent_tokens.unchecked_into(),
            new_agent_name: new_agent_name.unchecked_into(),
            mint: mint.unchecked_into(),
            minted: minted.unchecked_into(),
            minted_value: minted_value.unchecked_into(),
            minted_note: minted_note.unchecked_into(),
            copy_minted: copy_minted.unchecked_into(),
            dismiss_minted: dismiss_minted.unchecked_into(),
            built: Default::default(),
            pictures: Default::default(),
        }
    }

    /// Whether a list's content changed since it was last built (and remembers it).
    fn changed(&self, list: &'static str, key: String) -> bool {
        self.built.borrow_mut().insert(list, key.clone()).as_deref() != Some(key.as_str())
    }

    /// Moves every "3 s ago" and "in 42 s" on to `now`.
    pub fn show_times(&self, now: f64) {
        let Ok(elements) = self.doc.query_selector_all("[data-at]") else { return };
        for i in 0..elements.length() {
            if let Some(el) = elements.item(i).and_then(|n| n.dyn_into::<Element>().ok()) {
                if let Some(text) = clock_text(&el, now) {
                    el.set_text_content(Some(&text));
                }
            }
        }
    }

    /// Renders everything.
    pub fn render(&self, state: &PanelState, active: Option<&ActiveTab>, notice: Option<&str>) {
        let daemon = state.daemon;
        self.status.set_attribute("data-state", daemon.as_str()).unwrap();
        self.status.set_text_content(Some(match daemon {
            DaemonState::Connected => "Connected",
            DaemonState::Connecting => "Connecting…",
            DaemonState::Disconnected => "Disconnected",
            DaemonState::Rejected => "Rejected",
        }));
        self.detail.set_text_content(state.detail.as_deref());
        self.detail.set_hidden(state.detail.is_none());
        self.use_this_browser.set_hidden(daemon != DaemonState::Rejected);
        self.version_warning.set_text_content(state.version_warning.as_deref());
        self.version_warning.set_hidden(state.version_warning.is_none());
        self.file_access_warning.set_text_content(state.file_access_warning.as_deref());
        self.file_access_warning.set_hidden(state.file_access_warning.is_none());
        self.audit_trail_warning.set_text_content(state.audit_trail_warning.as_deref());
        self.audit_trail_warning.set_hidden(state.audit_trail_warning.is_none());

        self.endpoint.set_text_content(Some(state.client_endpoint.as_deref().unwrap_or("—")));
        self.copy.set_disabled(state.client_endpoint.is_none());

        let holder = active.and_then(|tab| state.shared_tabs.iter().find(|t| t.tab_id == tab.id));
        let held_by_agent = holder.filter(|t| t.agent != DEFAULT_AGENT);
        match held_by_agent {
            Some(t) => {
                self.held_by.set_text_content(Some(&format!("Held by {}", t.agent)));
                self.take_back.set_attribute("data-tab-id", &t.tab_id.to_string()).unwrap();
            }
            None => self.take_back.remove_attribute("data-tab-id").unwrap(),
        }
        self.held_by.parent_element().expect("in its row").set_hidden_attr(held_by_agent.is_none());
        self.hand_button.set_disabled(active.is_none() || state.daemon != DaemonState::Connected);
        self.agent_names.set_text_content(None);
        let b = Builder(&self.doc);
        for agent in state.agents.iter().filter(|a| a.name != DEFAULT_AGENT) {
            self.agent_names.append_child(&b.el("option", &[("value", &agent.name)], "")).unwrap();
        }

        match active {
            Some(tab) => {
                let shared =
                    holder.is_some_and(|t| t.agent == DEFAULT_AGENT) || state.pending_tabs.contains(&tab.id);
                self.toggle.set_attribute("data-tab-id", &tab.id.to_string()).unwrap();
                self.toggle.set_checked(shared);
                // A tab an agent holds is taken back, not unshared.
                self.toggle.set_disabled(held_by_agent.is_some());
                self.active_label.set_text_content(Some(if tab.title.is_empty() {
                    &tab.url
                } else {
                    &tab.title
                }));
                self.active_label.set_title(&tab.url);
            }
            None => {
                self.toggle.remove_attribute("data-tab-id").unwrap();
                self.toggle.set_checked(false);
                self.toggle.set_disabled(true);
                self.active_label.set_text_content(Some("No active tab"));
            }
        }
        self.notice.set_text_content(notice);
        self.notice.set_hidden(notice.is_none());

        self.render_kill_switch(state);
        self.render_approvals(state);
        self.render_standing(state);
        self.render_requests(state, active.is_some());
        self.render_agents(state);
        self.render_agent_tokens(state);

        self.list.set_text_content(None);
        let human_shared: Vec<&SharedTab> =
            state.shared_tabs.iter().filter(|t| t.agent == DEFAULT_AGENT).collect();
        for tab in &human_shared {
            let id = tab.tab_id.to_string();
            let item = b.el("li", &[("data-tab-id", &id)], "");
            let meta = b.el("div", &[("class", "tab-meta")], "");
            let title = if tab.title.is_empty() { &tab.url } else { &tab.title };
            meta.append_child(&b.el("span", &[("class", "title")], title)).unwrap();
            meta.append_child(&b.el("span", &[("class", "url")], &tab.url)).unwrap();
            item.append_child(&meta).unwrap();
            let stop =
                b.el("button", &[("class", "unshare"), ("type", "button"), ("data-tab-id", &id)], "Stop");
            item.append_child(&stop).unwrap();
            self.list.append_child(&item).unwrap();
        }
        self.empty.set_hidden(!human_shared.is_empty());
    }

    fn render_agent_tokens(&self, state: &PanelState) {
        let connected = state.daemon == DaemonState::Connected;
        self.mint.set_disabled(!connected);
        match &state.minted_token {
            Some(minted) => {
                let (note, value) = match (&minted.token, &minted.error) {
                    (Some(token), _) => (
                        format!("Agent {}'s token, shown only now: give it to that agent (its endpoint is http://127.0.0.1:PORT/<token>, or tabtunnel mcp --token).", minted.name),
                        token.as_str(),
                    ),
                    (None, error) => (format!("No token for {}: {}", minted.name, error.as_deref().unwrap_or("refused")), ""),
                };
                self.minted_note.set_text_content(Some(&note));
                self.minted_value.set_text_content(Some(value));
                self.copy_minted.set_hidden(value.is_empty());
                self.minted.set_hidden(false);
            }
            None => {
                self.minted_value.set_text_content(None);
                self.minted.set_hidden(true);
            }
        }
        if !self.changed(
            "agent-tokens",
            serde_json::to_string(&(&state.agent_credentials, connected)).unwrap_or_default(),
        ) {
            return;
        }
        let b = Builder(&self.doc);
        self.agent_tokens.set_text_content(None);
        for agent in &state.agent_credentials {
            let item = b.el("li", &[("data-agent", &agent.name)], "");
            let meta = b.el("div", &[("class", "tab-meta")], "");
            meta.append_child(&b.el("span", &[("class", "title")], &agent.name)).unwrap();
            meta.append_child(&b.el("span", &[("class", "url")], &format!("minted {}", agent.created)))
                .unwrap();
            item.append_child(&meta).unwrap();
            let revoke = b.el(
                "button",
                &[("class", "revoke"), ("type", "button"), ("data-agent", &agent.name)],
                "Revoke",
            );
            if !connected {
                revoke.set_attribute("disabled", "").unwrap();
            }
            item.append_child(&revoke).unwrap();
            self.agent_tokens.append_child(&item).unwrap();
        }
    }

    fn render_kill_switch(&self, state: &PanelState) {
        let engaged = state.kill_switch;
        self.kill_switch.set_attribute("data-engaged", if engaged { "true" } else { "false" }).unwrap();
        self.kill_switch.set_text_content(Some(if engaged {
            "Let agents in again"
        } else {
            "Stop all agents"
        }));
        self.kill_note.set_text_content(Some(if engaged {
            "Every agent is stopped: connections closed, tabs detached, new connections refused."
        } else {
            "Closes every agent's connection and detaches every tab at once (Alt+Shift+K)."
        }));
        self.toggle.set_disabled(self.toggle.disabled() || engaged);
        self.hand_button.set_disabled(self.hand_button.disabled() || engaged);
    }

    fn render_approvals(&self, state: &PanelState) {
        let b = Builder(&self.doc);
        if !self.changed("approvals", serde_json::to_string(&state.approvals).unwrap_or_default()) {
            // Only a picture arrived: put it in place without rebuilding the question, whose
            // buttons the human may be pressing right now.
            for (id, src) in &state.approval_pictures {
                let item = self.doc.query_selector(&format!("#approvals li[data-request-id=\"{id}\"]"));
                if let Ok(Some(item)) = item {
                    let slot = item.query_selector(".picture-slot").ok().flatten();
                    if let Some(slot) =
                        slot.filter(|s| s.query_selector("img.picture").ok().flatten().is_none())
                    {
                        let alt =
                            item.query_selector(".element").ok().flatten().and_then(|e| e.text_content());
                        let img = b.el(
                            "img",
                            &[("class", "picture"), ("src", src), ("alt", &alt.unwrap_or_default())],
                            "",
                        );
                        let _ = slot.append_child(&img);
                    }
                }
            }
            return;
        }
        self.approvals.set_text_content(None);
        for request in &state.approvals {
            if let Some(question) = &request.gesture {
                let picture = state
                    .approval_pictures
                    .iter()
                    .find(|(id, _)| *id == request.id)
                    .map(|(_, src)| src.as_str());
                self.approvals.append_child(&gesture_item(&b, request, question, picture)).unwrap();
                continue;
            }
            let item = b.el("li", &[("data-request-id", &request.id.to_string())], "");
            let text = b.el("p", &[("class", "request")], "");
            text.append_child(&b.el("strong", &[], &request.agent)).unwrap();
            let what = match &request.url {
                Some(url)
                    if request.method == "navigation"
                        || request.method.ends_with("navigate")
                        || request.method == "Target.createTarget" =>
                {
                    format!(" wants to open {url}")
                }
                Some(url) => format!(" wants to call {} ({url})", request.method),
                None => format!(" wants to call {}", request.method),
            };
            text.append_child(&b.el("span", &[], &what)).unwrap();
            item.append_child(&text).unwrap();
            item.append_child(&b.el("p", &[("class", "hint")], &format!("Asked by {}", request.rule)))
                .unwrap();
            let button =
                |answer, label| b.el("button", &[("type", "button"), ("data-answer", answer)], label);
            let row = b.row(&[
                &button("allow", "Allow once"),
                &button("always", "Always for this agent"),
                &button("deny", "Deny"),
            ]);
            item.append_child(&row).unwrap();
            self.approvals.append_child(&item).unwrap();
        }
        self.approvals_section.set_hidden(state.approvals.is_empty());
    }

    /// "shopper: Sending or publishing in your name on https://mail.example, for 9 min more
    /// [Take back]".
    fn render_standing(&self, state: &PanelState) {
        if !self.changed("standing", serde_json::to_string(&state.standing).unwrap_or_default()) {
            return;
        }
        let b = Builder(&self.doc);
        self.standing.set_text_content(None);
        for answer in &state.standing {
            let id = answer.id.to_string();
            let item = b.el("li", &[("data-standing", &id)], "");
            let text = b.el("p", &[("class", "request")], "");
            text.append_child(&b.el("strong", &[], &answer.agent)).unwrap();
            let kinds: Vec<&str> = answer.kinds.iter().map(|k| k.name()).collect();
            let what = format!(": {} on ", kind_names(&answer.kinds));
            text.append_child(&b.el("span", &[("class", "kinds"), ("data-kinds", &kinds.join(" "))], &what))
                .unwrap();
            text.append_child(&b.el("strong", &[("class", "origin")], &answer.origin)).unwrap();
            item.append_child(&text).unwrap();
            let until = match answer.until {
                Some(at) => b.time("p", &[("class", "hint")], "ends in ", at, Clock::In, ""),
                None => b.el("p", &[("class", "hint")], "until tabtunnel stops"),
            };
            item.append_child(&until).unwrap();
            let take_back = b.el("button", &[("type", "button"), ("data-standing-id", &id)], "Take back");
            item.append_child(&b.row(&[&take_back])).unwrap();
            self.standing.append_child(&item).unwrap();
        }
        self.standing_section.set_hidden(state.standing.is_empty());
    }

    fn render_requests(&self, state: &PanelState, has_active_tab: bool) {
        let key = serde_json::to_string(&(&state.handovers, has_active_tab)).unwrap_or_default();
        if !self.changed("requests", key) {
            return;
        }
        let b = Builder(&self.doc);
        self.requests.set_text_content(None);
        for request in &state.handovers {
            let item = b.el("li", &[("data-request-id", &request.id.to_string())], "");
            let text = b.el("p", &[("class", "request")], "");
            text.append_child(&b.el("strong", &[], &request.agent)).unwrap();
            text.append_child(&b.el("span", &[], " asks for your active tab")).unwrap();
            if !request.reason.is_empty() {
                text.append_child(&b.el("span", &[], ": ")).unwrap();
                text.append_child(&b.el("q", &[], &request.reason)).unwrap();
            }
            item.append_child(&text).unwrap();
            let give = b.el("button", &[("type", "button"), ("data-answer", "give")], "Give this tab");
            if !has_active_tab {
                give.set_attribute("disabled", "").unwrap();
            }
            let refuse = b.el("button", &[("type", "button"), ("data-answer", "refuse")], "Refuse");
            item.append_child(&b.row(&[&give, &refuse])).unwrap();
            self.requests.append_child(&item).unwrap();
        }
        self.requests_section.set_hidden(state.handovers.is_empty());
    }

    fn render_agents(&self, state: &PanelState) {
        // Rebuilt only when what it shows changed (times tick on in place, see `show_times`), so
        // its buttons stay put under the pointer.
        let pictured: Vec<u64> = state.approval_pictures.iter().map(|(id, _)| *id).collect();
        let key = serde_json::to_string(&(&state.agents, &state.shared_tabs, pictured)).unwrap_or_default();
        if !self.changed("agents", key) {
            return;
        }
        let b = Builder(&self.doc);
        self.agents.set_text_content(None);
        for agent in &state.agents {
            let item = b.el(
                "li",
                &[
                    ("data-agent", &agent.name),
                    ("data-connected", if present(agent) { "true" } else { "false" }),
                ],
                "",
            );
            let slot = b.el("div", &[("class", "agent-picture-slot")], "");
            self.place_picture(&slot, agent);
            let head = b.el("div", &[("class", "agent-head")], "");
            head.append_child(&b.el("span", &[("class", "swatch"), ("data-color", &agent.color)], ""))
                .unwrap();
            let name = if agent.name == DEFAULT_AGENT { "default (plain endpoint)" } else { &agent.name };
            head.append_child(&b.el("span", &[("class", "agent-name")], name)).unwrap();
            head.append_child(&presence(&b, agent)).unwrap();
            item.append_child(&head).unwrap();
            if agent.client.is_some() || agent.token_id.is_some() {
                let mut who = String::new();
                if let Some(client) = &agent.client {
                    who.push_str(&format!("via {client}"));
                }
                if let Some(id) = &agent.token_id {
                    who.push_str(&format!("{}token {id}", if who.is_empty() { "" } else { " · " }));
                }
                item.append_child(&b.el("p", &[("class", "agent-client")], &who)).unwrap();
            }
            item.append_child(&slot).unwrap();
            if let (Some(action), Some(at)) = (&agent.last_action, agent.last_action_at) {
                // The last step in words, where there is one.
                let action = agent.recent.last().map(|s| &s.step).filter(|s| !s.is_empty()).unwrap_or(action);
                let before = format!("Last: {action}, ");
                item.append_child(&b.time("p", &[("class", "agent-last")], &before, at, Clock::Ago, ""))
                    .unwrap();
            }
            if !agent.recent.is_empty() {
                let steps = b.el("ul", &[("class", "activity")], "");
                for step in agent.recent.iter().rev() {
                    let mut text = step.step.clone();
                    if text.is_empty() {
                        text = step.method.clone();
                        if let Some(url) = &step.url {
                            text.push(' ');
                            text.push_str(url);
                        }
                    }
                    let line =
                        b.el("li", &[("data-outcome", step.outcome.split(' ').next().unwrap_or(""))], "");
                    line.append_child(&b.el("span", &[("class", "step")], &text)).unwrap();
                    // A held gesture's answer, beside the picture it was asked with.
                    let picture =
                        step.question.and_then(|id| state.approval_pictures.iter().find(|(q, _)| *q == id));
                    if let Some((_, src)) = picture {
                        line.append_child(&b.el(
                            "img",
                            &[("class", "picture"), ("src", src), ("alt", "")],
                            "",
                        ))
                        .unwrap();
                    }
                    let before = format!("{}, ", step.outcome);
                    line.append_child(&b.time(
                        "span",
                        &[("class", "when")],
                        &before,
                        step.at,
                        Clock::Ago,
                        "",
                    ))
                    .unwrap();
                    steps.append_child(&line).unwrap();
                }
                item.append_child(&steps).unwrap();
            }
            let tabs = b.el("ul", &[("class", "agent-tabs")], "");
            for tab_id in &agent.tabs {
                let id = tab_id.to_string();
                let shared = state.shared_tabs.iter().find(|t| t.tab_id == *tab_id);
                let title =
                    shared.map_or(id.as_str(), |t| if t.title.is_empty() { &t.url } else { &t.title });
                let row = b.el("li", &[("data-tab-id", &id)], "");
                row.append_child(&b.el("span", &[("class", "title")], title)).unwrap();
                let label = if agent.name == DEFAULT_AGENT { "Stop" } else { "Take back" };
                row.append_child(&b.el(
                    "button",
                    &[("class", "take-back"), ("type", "button"), ("data-tab-id", &id)],
                    label,
                ))
                .unwrap();
                tabs.append_child(&row).unwrap();
            }
            item.append_child(&tabs).unwrap();
            let attrs =
                |action| [("type", "button"), ("data-action", action), ("data-agent", agent.name.as_str())];
            let buttons = if present(agent) {
                Some(("Disconnect", "Disconnect and close its tabs"))
            } else if !agent.tabs.is_empty() && agent.name != DEFAULT_AGENT {
                Some(("Let go of its tabs now", "Close its tabs"))
            } else {
                None
            };
            if let Some((release, close)) = buttons {
                let release = b.el("button", &attrs("disconnect"), release);
                let close = b.el("button", &attrs("disconnect-close"), close);
                item.append_child(&b.row(&[&release, &close])).unwrap();
            }
            self.agents.append_child(&item).unwrap();
        }
        self.agents_empty.set_hidden(!state.agents.is_empty());
    }

    /// A new picture of the tab `agent` works in: shown in its card (a button: a click brings
    /// that tab forward), kept for the card's next rebuild.
    pub fn show_picture(&self, agent: &str, tab_id: i32, src: &str, state: &PanelState) {
        let b = Builder(&self.doc);
        let element = {
            let mut pictures = self.pictures.borrow_mut();
            let (tab, element) = pictures.entry(agent.to_owned()).or_insert_with(|| {
                let button = b.el("button", &[("type", "button"), ("class", "agent-picture")], "");
                button.append_child(&b.el("img", &[("alt", "")], "")).unwrap();
                (tab_id, button)
            });
            *tab = tab_id;
            let title = format!("{agent}'s tab: click to see it");
            for (name, value) in
                [("data-picture-tab", tab_id.to_string().as_str()), ("title", title.as_str())]
            {
                element.set_attribute(name, value).unwrap();
            }
            if let Ok(Some(img)) = element.query_selector("img") {
                img.set_attribute("src", src).unwrap();
            }
            element.clone()
        };
        let slot = self.agents.query_selector(&format!("li[data-agent=\"{agent}\"] .agent-picture-slot"));
        if let (Ok(Some(slot)), Some(agent)) = (slot, state.agents.iter().find(|a| a.name == agent)) {
            if element.parent_element().as_ref() != Some(&slot) {
                self.place_picture(&slot, agent);
            }
        }
    }

    /// Puts the agent's picture in its card, if it is of one of the agent's tabs.
    fn place_picture(&self, slot: &Element, agent: &AgentView) {
        if let Some((tab, element)) = self.pictures.borrow().get(&agent.name) {
            if agent.tabs.contains(tab) {
                slot.append_child(element).unwrap();
            }
        }
    }

    /// Shows the stored URL, unless the user is typing one.
    pub fn show_daemon_url(&self, url: Option<&str>) {
        if self.doc.active_element().as_ref() != Some(self.url_input.as_ref()) {
            self.url_input.set_value(url.unwrap_or_default());
        }
    }
}

/// Whether the agent is there: a CDP client of its connected, or an MCP session expecting it.
fn present(agent: &AgentView) -> bool {
    agent.connections > 0 || agent.sessions > 0
}

/// "2 connections", an MCP session waiting for its first call, or how long a gone agent's
/// tabs (or the window kept ready for it) still wait for it.
fn presence(b: &Builder, agent: &AgentView) -> Element {
    let attrs = [("class", "agent-state")];
    match (agent.connections, agent.sessions, agent.releases_at) {
        (1, _, _) => b.el("span", &attrs, "connected"),
        (n, _, _) if n > 1 => b.el("span", &attrs, &format!("{n} connections")),
        (_, s, _) if s > 0 => b.el("span", &attrs, "expected: its MCP session is open"),
        (_, _, Some(at)) if !agent.tabs.is_empty() => {
            b.time("span", &attrs, "disconnected; its tabs are let go in ", at, Clock::In, "")
        }
        (_, _, Some(at)) => b.time("span", &attrs, "disconnected; its window closes in ", at, Clock::In, ""),
        _ => b.el("span", &attrs, "disconnected"),
    }
}

/// How a time reads: "3 s ago", or "in 42 s".
#[derive(Clone, Copy)]
enum Clock {
    Ago,
    In,
}

/// The text of a `data-at` element at `now`.
fn clock_text(element: &Element, now: f64) -> Option<String> {
    let at: f64 = element.get_attribute("data-at")?.parse().ok()?;
    let before = element.get_attribute("data-before").unwrap_or_default();
    let after = element.get_attribute("data-after").unwrap_or_default();
    let time = match element.get_attribute("data-clock").as_deref() {
        Some("in") => duration((at - now).max(0.0)),
        _ => format!("{} ago", duration((now - at).max(0.0))),
    };
    Some(format!("{before}{time}{after}"))
}

fn duration(ms: f64) -> String {
    let secs = (ms / 1000.0).round() as u64;
    match secs {
        0..=59 => format!("{secs} s"),
        60..=3599 => format!("{} min", secs / 60),
        _ => format!("{} h", secs / 3600),
    }
}

trait SetHidden {
    fn set_hidden_attr(&self, hidden: bool);
}

impl SetHidden for Element {
    fn set_hidden_attr(&self, hidden: bool) {
        if hidden {
            self.set_attribute("hidden", "").unwrap();
        } else {
            self.remove_attribute("hidden").unwrap();
        }
    }
}

/// A question of the gesture guard's: what the agent is doing where, with what the page showed
/// and a picture of the element; Allow once or Deny, nothing for always.
fn gesture_item(
    b: &Builder,
    request: &tabtunnel_wire::ApprovalRequest,
    q: &tabtunnel_wire::gestures::GestureQuestion,
    picture: Option<&str>,
) -> Element {
    let item = b.el("li", &[("data-request-id", &request.id.to_string()), ("class", "gesture")], "");
    let text = b.el("p", &[("class", "request")], "");
    text.append_child(&b.el("strong", &[], &request.agent)).unwrap();
    let what = if q.gesture == "request" || q.gesture == "form submission" {
        format!(" wants to send a {} on ", q.gesture)
    } else {
        format!(" wants to {} on ", q.gesture)
    };
    text.append_child(&b.el("span", &[], &what)).unwrap();
    text.append_child(&b.el("strong", &[("class", "origin")], &q.origin)).unwrap();
    item.append_child(&text).unwrap();
    // What it does, first: the kinds the human decides about.
    if !q.kinds.is_empty() {
        let names = kind_names(&q.kinds);
        let kinds: Vec<&str> = q.kinds.iter().map(|k| k.name()).collect();
        item.append_child(&b.el("p", &[("class", "kinds"), ("data-kinds", &kinds.join(" "))], &names))
            .unwrap();
    }
    // The picture comes a moment after the question: its place is kept from the start, so that
    // nothing moves under the human's pointer (a click meant for Allow once landed elsewhere).
    let slot = b.el("div", &[("class", "picture-slot")], "");
    if let Some(src) = picture {
        slot.append_child(&b.el("img", &[("class", "picture"), ("src", src), ("alt", &q.element)], ""))
            .unwrap();
    }
    item.append_child(&slot).unwrap();
    let facts = b.el("dl", &[("class", "facts")], "");
    let amounts = q.amounts.join(", ");
    let fields = q.fields.join(", ");
    for (class, label, value) in [
        ("element", "Element", q.element.as_str()),
        ("form", "Form sends", q.form.as_str()),
        ("sent", "Request", q.request.as_str()),
        ("amounts", "Amounts", amounts.as_str()),
        ("fields", "Fields", fields.as_str()),
    ] {
        if !value.is_empty() {
            facts.append_child(&b.el("dt", &[], label)).unwrap();
            facts.append_child(&b.el("dd", &[("class", class)], value)).unwrap();
        }
    }
    item.append_child(&facts).unwrap();
    item.append_child(&b.el("p", &[("class", "hint")], &format!("Held because {}", q.reasons.join("; "))))
        .unwrap();
    let button = |answer, label: &str| b.el("button", &[("type", "button"), ("data-answer", answer)], label);
    let allow = if request.remembers { "Allow, and don't ask again here" } else { "Allow once" };
    let mut buttons = vec![button("allow", allow)];
    // Standing answers, as the daemon offers them (never for paying unless the policy says so).
    let kinds = kind_names(&q.kinds).to_lowercase();
    for ms in &request.standing_ms {
        let label = format!("Allow {kinds} on {} for {}", q.origin, how_long(*ms));
        let for_ = button("for", &label);
        for_.set_attribute("data-ms", &ms.to_string()).unwrap();
        buttons.push(for_);
    }
    buttons.push(button("deny", "Deny"));
    item.append_child(&b.row(&buttons.iter().collect::<Vec<_>>())).unwrap();
    item
}

/// `10 minutes`, `1 hour`, `6 seconds`.
fn how_long(ms: u64) -> String {
    let plural = |n: u64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
    match ms {
        ms if ms % 3_600_000 == 0 => plural(ms / 3_600_000, "hour"),
        ms if ms % 60_000 == 0 => plural(ms / 60_000, "minute"),
        ms => plural(ms.div_ceil(1000), "second"),
    }
}

/// The kinds of a question as the panel names them: `Sending or publishing in your name ·
/// Sharing and visibility`.
fn kind_names(kinds: &[tabtunnel_wire::gestures::GestureKind]) -> String {
    kinds.iter().map(|k| k.title()).collect::<Vec<_>>().join(" · ")
}

struct Builder<'a>(&'a Document);

impl Builder<'_> {
    /// An element whose text tells a time relative to now, kept current by `View::show_times`.
    fn time(
        &self,
        tag: &str,
        attrs: &[(&str, &str)],
        before: &str,
        at: f64,
        clock: Clock,
        after: &str,
    ) -> Element {
        let el = self.el(tag, attrs, "");
        let clock = match clock {
            Clock::Ago => "ago",
            Clock::In => "in",
        };
        for (name, value) in [
            ("data-at", at.to_string().as_str()),
            ("data-clock", clock),
            ("data-before", before),
            ("data-after", after),
        ] {
            el.set_attribute(name, value).expect("valid attribute");
        }
        el.set_text_content(clock_text(&el, js_sys::Date::now()).as_deref());
        el
    }

    fn el(&self, tag: &str, attrs: &[(&str, &str)], text: &str) -> Element {
        let el = self.0.create_element(tag).expect("valid tag");
        for (name, value) in attrs {
            el.set_attribute(name, value).expect("valid attribute");
        }
        if !text.is_empty() {
            el.set_text_content(Some(text));
        }
        el
    }

    fn section(&self, heading: &str) -> Element {
        let section = self.el("section", &[], "");
        section.append_child(&self.el("h2", &[], heading)).unwrap();
        section
    }

    fn row(&self, children: &[&Element]) -> Element {
        let row = self.el("div", &[("class", "row")], "");
        for child in children {
            row.append_child(child).unwrap();
        }
        row
    }
}
