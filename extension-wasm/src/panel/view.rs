//! The side panel's DOM: built once, then updated by [`View::render`]. The element ids are a
//! contract with the e2e tests (see ARCHITECTURE.md).

use wasm_bindgen::JsCast;
use web_sys::{Document, Element, HtmlButtonElement, HtmlElement, HtmlInputElement};

use crate::messages::{DaemonState, PanelState};

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
    endpoint: HtmlElement,
    pub copy: HtmlButtonElement,
    pub toggle: HtmlInputElement,
    active_label: HtmlElement,
    notice: HtmlElement,
    pub list: HtmlElement,
    empty: HtmlElement,
    pub url_input: HtmlInputElement,
    pub save: HtmlButtonElement,
}

impl View {
    pub fn build(doc: Document) -> View {
        let b = Builder(&doc);
        let body = doc.body().expect("the panel page has a body");

        let status = b.el("span", &[("id", "daemon-status"), ("class", "status")], "");
        let header = b.el("header", &[], "");
        header.append_child(&b.el("h1", &[], "tabtunnel")).unwrap();
        header.append_child(&status).unwrap();
        let detail = b.el("p", &[("id", "daemon-detail"), ("class", "detail")], "");

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
        let share_section = b.section("Active tab");
        for child in [&switch, &active_label, &notice] {
            share_section.append_child(child).unwrap();
        }

        let list = b.el("ul", &[("id", "shared-tabs"), ("class", "tabs")], "");
        let empty = b.el("p", &[("class", "hint")], "No tab is shared.");
        let list_section = b.section("Shared tabs");
        list_section.append_child(&list).unwrap();
        list_section.append_child(&empty).unwrap();

        let url_input = b.el(
            "input",
            &[
                ("id", "daemon-url"),
                ("type", "url"),
                ("spellcheck", "false"),
                ("placeholder", "ws://127.0.0.1:9722/<token>/extension"),
            ],
            "",
        );
        let save = b.el("button", &[("id", "save-daemon-url"), ("type", "button")], "Save");
        let settings = b.section("Daemon URL");
        settings.append_child(&b.row(&[&url_input, &save])).unwrap();

        for child in [&header, &detail, &endpoint_section, &share_section, &list_section, &settings] {
            body.append_child(child).unwrap();
        }

        View {
            doc,
            status: status.unchecked_into(),
            detail: detail.unchecked_into(),
            endpoint: endpoint.unchecked_into(),
            copy: copy.unchecked_into(),
            toggle: toggle.unchecked_into(),
            active_label: active_label.unchecked_into(),
            notice: notice.unchecked_into(),
            list: list.unchecked_into(),
            empty: empty.unchecked_into(),
            url_input: url_input.unchecked_into(),
            save: save.unchecked_into(),
        }
    }

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

        self.endpoint.set_text_content(Some(state.client_endpoint.as_deref().unwrap_or("—")));
        self.copy.set_disabled(state.client_endpoint.is_none());

        match active {
            Some(tab) => {
                let shared = state.shared_tabs.iter().any(|t| t.tab_id == tab.id)
                    || state.pending_tabs.contains(&tab.id);
                self.toggle.set_attribute("data-tab-id", &tab.id.to_string()).unwrap();
                self.toggle.set_checked(shared);
                self.toggle.set_disabled(false);
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

        self.list.set_text_content(None);
        let b = Builder(&self.doc);
        for tab in &state.shared_tabs {
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
        self.empty.set_hidden(!state.shared_tabs.is_empty());
    }

    /// Shows the stored URL, unless the user is typing one.
    pub fn show_daemon_url(&self, url: Option<&str>) {
        if self.doc.active_element().as_ref() != Some(self.url_input.as_ref()) {
            self.url_input.set_value(url.unwrap_or_default());
        }
    }
}

struct Builder<'a>(&'a Document);

impl Builder<'_> {
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
