//! Closing an agent's tab as Chrome's `Target.closeTarget` does: without the page's
//! `beforeunload` handlers. The extension can only close a tab with `chrome.tabs.remove`, which
//! closes it as a user would: a page that was interacted with asks "Leave site?" first, and the
//! close waits on that dialog forever (puppeteer's `page.close()` hung on it). So while the core
//! closes a tab for a client, it accepts a `beforeunload` dialog on its page itself and keeps
//! the dialog from the clients, who would not see one in Chrome. The dialog's event needs the
//! `Page` domain on: the core turns it on first if no client has.

use crate::domains::PAGE;
use crate::Core;
use crate::TabEvent;
use tabtunnel_wire::{RawValue, TabId};

const DIALOG_OPENING: &str = "Page.javascriptDialogOpening";

impl Core {
    /// The core is about to ask the extension to close `tab` for a client: from now on its
    /// page's `beforeunload` dialog is answered here.
    pub(crate) fn closing_for_client(&mut self, tab: TabId) {
        let Some(state) = self.tabs.get_mut(&tab) else { return };
        state.closing_for_client = true;
        if !state.page.real_domains.contains(PAGE) {
            state.page.real_domains.insert(PAGE);
            self.send_housekeeping(tab, None, "Page.enable");
        }
    }

    /// Accepts the `beforeunload` dialog of a page the core is closing for a client; `true`
    /// when `event` was that dialog (and is for nobody else).
    pub(crate) fn beforeunload_while_closing(&mut self, event: &TabEvent) -> bool {
        if event.method != DIALOG_OPENING || event.child_session_id.is_some() {
            return false;
        }
        let closing = self.tabs.get(&event.tab_id).is_some_and(|s| s.closing_for_client);
        if !closing || !is_beforeunload(event.params) {
            return false;
        }
        let accept = RawValue::from_string(r#"{"accept":true}"#.to_owned()).expect("valid JSON");
        self.send_housekeeping_with(event.tab_id, None, "Page.handleJavaScriptDialog", accept);
        true
    }
}

fn is_beforeunload(params: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Dialog<'a> {
        #[serde(borrow, rename = "type")]
        kind: &'a str,
    }
    serde_json::from_str::<Dialog>(params).is_ok_and(|d| d.kind == "beforeunload")
}

#[cfg(test)]
mod tests {
    use crate::testing::*;
    use crate::*;
    use serde_json::json;
    use tabtunnel_wire::Event;

    fn dialog(tab_id: TabId, kind: &str) -> FromExtension {
        FromExtension::Event(Event {
            tab_id,
            child_session_id: None,
            method: "Page.javascriptDialogOpening".into(),
            params: raw(&json!({"url": "http://x/", "message": "", "type": kind, "hasBrowserHandler": true, "defaultPrompt": ""}).to_string()),
        })
    }

    /// An agent's own tab, attached by a Playwright-like client with `Page` on; returns its
    /// page session.
    fn agent_page(h: &mut Harness) -> String {
        h.ext(FromExtension::TabShared(agent_tab(5, "a", true)));
        h.connect_as(1, "a");
        let page = h.playwright_attach(1)[0].clone();
        let id = h.send(1, json!({"id": 2, "sessionId": page, "method": "Page.enable"})).commands()[0].id;
        h.answer(id, json!({}));
        page
    }

    #[test]
    fn closing_a_tab_accepts_its_beforeunload_dialog_unseen_by_clients() {
        let mut h = Harness::with_tabs(&[]);
        let page = agent_page(&mut h);
        let step =
            h.send(1, json!({"id": 3, "method": "Target.closeTarget", "params": {"targetId": "PAGE5"}}));
        assert_eq!(step.browser_ops()[0].1, &BrowserOp::CloseTab { tab_id: 5 });
        assert!(step.commands().is_empty(), "Page is on already");
        let step = h.ext(dialog(5, "beforeunload"));
        assert!(step.client.is_empty(), "no dialog in Chrome's closeTarget: {:?}", step.client);
        let accept = step.commands();
        assert_eq!(accept.len(), 1);
        assert_eq!(accept[0].method, "Page.handleJavaScriptDialog");
        assert_eq!(accept[0].params.as_ref().unwrap().get(), r#"{"accept":true}"#);
        // Other dialogs, and the same dialog on a tab nobody is closing, are the clients'.
        let step = h.ext(dialog(5, "alert"));
        assert_eq!(step.to(1)[0]["sessionId"], page.as_str());
        assert!(step.commands().is_empty());
    }

    #[test]
    fn a_beforeunload_dialog_of_a_tab_not_being_closed_reaches_the_clients() {
        let mut h = Harness::with_tabs(&[]);
        let page = agent_page(&mut h);
        let step = h.ext(dialog(5, "beforeunload"));
        assert_eq!(step.methods(1), ["Page.javascriptDialogOpening"]);
        assert_eq!(step.to(1)[0]["sessionId"], page.as_str());
        assert!(step.commands().is_empty());
    }

    #[test]
    fn closing_a_tab_without_page_on_turns_it_on_before_the_close() {
        let mut h = Harness::with_tabs(&[]);
        h.ext(FromExtension::TabShared(agent_tab(5, "a", true)));
        h.connect_as(1, "a");
        h.playwright_attach(1);
        let step =
            h.send(1, json!({"id": 3, "method": "Target.closeTarget", "params": {"targetId": "PAGE5"}}));
        assert!(
            matches!(&step.extension[..], [ToExtension::Command(c), ToExtension::Browser(_)] if c.method == "Page.enable")
        );
        assert!(h.ext(dialog(5, "beforeunload")).client.is_empty());
    }
}
