//! Target and Browser methods that open, close and focus tabs or size windows: `chrome.debugger`
//! cannot do them, so the core asks the extension to, through `chrome.tabs` and
//! `chrome.windows` ([`BrowserOp`]). Each acts only on the calling agent's own tabs and windows;
//! an id of anything else is answered as Chrome answers an id that does not exist.

use crate::emulation::params;
use crate::frames::{errors, ClientCommand};
use crate::session::ConnId;
use crate::{Core, OnSuccess};
use tabtunnel_wire::{BrowserOp, TabId, WindowBounds, WindowId};

impl Core {
    /// `Target.createTarget`: a real tab in the agent's own window, attached before the reply
    /// (its `attachedToTarget` reaches auto-attaching clients when the extension reports it).
    /// `newWindow`, `background` and `browserContextId` are ignored: an agent's tabs always
    /// open in its window, in the user's profile, without taking the user's focus.
    pub(crate) fn create_target(&mut self, conn: ConnId, cmd: &ClientCommand) {
        let p = params(cmd);
        let url = match &p["url"] {
            serde_json::Value::String(url) if !url.is_empty() => url.clone(),
            serde_json::Value::Null => "about:blank".to_owned(),
            serde_json::Value::String(_) => "about:blank".to_owned(),
            _ => {
                return self.reply_error(
                    conn,
                    cmd,
                    &errors::invalid_params(cmd.method, "url: string expected"),
                )
            }
        };
        let agent = self.conns[&conn].agent.clone();
        let limit = self.config.limits.max_tabs_per_agent;
        let held =
            self.visible_tabs(&agent).count() + self.agents.get(&agent).map_or(0, |r| r.creating as usize);
        if held >= limit {
            return self.reply_error(conn, cmd, &errors::too_many_tabs(agent.as_str(), limit));
        }
        // The guard let it through: an origin the policy asks about was allowed by the human.
        let allow_once = self.conns[&conn]
            .policy
            .as_ref()
            .is_some_and(|p| matches!(p.navigation(&url), crate::policy::Decision::Ask(_)));
        let op = BrowserOp::CreateTab { agent: agent.as_str().to_owned(), url, allow_once };
        if self.browser_op(conn, cmd, op, Some(OnSuccess::TabCreated { agent: agent.clone() })) {
            let record = self.agents.entry(&agent);
            record.creating += 1;
            record.opened_pages = true;
            self.update_prepared_tabs();
        }
    }

    /// `Target.closeTarget`: closes a tab the agent opened; a tab the human handed over is given
    /// back instead (it stays open for the human). Either way the client sees the target go.
    pub(crate) fn close_target(&mut self, conn: ConnId, cmd: &ClientCommand) {
        let Some(tab) = self.named_tab(conn, cmd) else { return };
        let op = if self.tabs[&tab].tab.info.created {
            self.closing_for_client(tab);
            BrowserOp::CloseTab { tab_id: tab }
        } else {
            BrowserOp::ReleaseTab { tab_id: tab }
        };
        self.browser_op(conn, cmd, op, Some(OnSuccess::ReplyWith(r#"{"success":true}"#)));
    }

    /// `Target.activateTarget`: the active tab among the agent's own tabs, without focusing its
    /// window or touching the human's.
    pub(crate) fn activate_target(&mut self, conn: ConnId, cmd: &ClientCommand) {
        let Some(tab) = self.named_tab(conn, cmd) else { return };
        self.browser_op(conn, cmd, BrowserOp::ActivateTab { tab_id: tab }, Some(OnSuccess::ReplyWith("{}")));
    }

    /// `Browser.getWindowForTarget {targetId}` at the browser level (on a page session the
    /// target defaults to the session's own).
    pub(crate) fn get_window_for_target(&mut self, conn: ConnId, cmd: &ClientCommand) {
        let Some(tab) = self.named_tab(conn, cmd) else { return };
        self.browser_op(conn, cmd, BrowserOp::GetWindowForTab { tab_id: tab }, None);
    }

    /// `Browser.getWindowBounds`, `setWindowBounds` and `setContentsSize`: only for a window
    /// holding one of the agent's tabs (the extension further refuses to resize a window that is
    /// the human's).
    /// `tab` is the page whose session sent it, if any.
    pub(crate) fn window_command(&mut self, conn: ConnId, cmd: &ClientCommand, tab: Option<TabId>) {
        let p = params(cmd);
        let Some(window_id) = p["windowId"].as_i64().and_then(|w| WindowId::try_from(w).ok()) else {
            return self.reply_error(
                conn,
                cmd,
                &errors::invalid_params(cmd.method, "windowId: integer expected"),
            );
        };
        let agent = &self.conns[&conn].agent;
        if !self.visible_tabs(agent).any(|t| t.info.window_id == window_id) {
            return self.reply_error(conn, cmd, &errors::window_not_found());
        }
        let op = match cmd.method {
            "Browser.getWindowBounds" => BrowserOp::GetWindowBounds { window_id },
            "Browser.setWindowBounds" => match serde_json::from_value::<WindowBounds>(p["bounds"].clone()) {
                Ok(bounds) if !p["bounds"].is_null() => BrowserOp::SetWindowBounds { window_id, bounds },
                _ => {
                    return self.reply_error(
                        conn,
                        cmd,
                        &errors::invalid_params(cmd.method, "bounds: object expected"),
                    )
                }
            },
            _ => {
                let size = |key: &str| p[key].as_f64().map(|v| v.max(0.0).round() as u32);
                let (width, height) = (size("width"), size("height"));
                if width.is_none() && height.is_none() {
                    let what = "width or height: number expected";
                    return self.reply_error(conn, cmd, &errors::invalid_params(cmd.method, what));
                }
                let tab_id =
                    tab.filter(|t| self.tabs.get(t).is_some_and(|s| s.tab.info.window_id == window_id));
                BrowserOp::SetContentsSize { window_id, width, height, tab_id }
            }
        };
        self.browser_op(conn, cmd, op, None);
    }

    /// The agent's tab named by `params.targetId` (page or tab target); replies with Chrome's
    /// error and returns `None` when there is none.
    fn named_tab(&mut self, conn: ConnId, cmd: &ClientCommand) -> Option<TabId> {
        let p = params(cmd);
        let Some(target_id) = p["targetId"].as_str() else {
            self.reply_error(conn, cmd, &errors::invalid_params(cmd.method, "targetId: string expected"));
            return None;
        };
        let tab = self.visible_tab_by_any_target(conn, target_id);
        if tab.is_none() {
            self.reply_error(conn, cmd, &errors::no_target());
        }
        tab
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::*;
    use crate::*;
    use serde_json::json;
    use tabtunnel_wire::{UnshareReason, WindowBounds};

    fn created_tab(tab_id: TabId, agent: &str) -> TabInfo {
        agent_tab(tab_id, agent, true)
    }

    #[test]
    fn create_target_opens_a_tab_for_the_agent_and_attaches_it_before_the_reply() {
        let mut h = Harness::with_tabs(&[]);
        h.connect_as(1, "a");
        h.playwright_attach(1);
        let step = h.send(1, json!({"id": 7, "method": "Target.createTarget", "params": {"url": "about:blank", "newWindow": true}}));
        assert!(step.client.is_empty(), "no reply before the tab exists");
        let (id, op) = step.browser_ops()[0];
        assert_eq!(
            op,
            &BrowserOp::CreateTab { agent: "a".into(), url: "about:blank".into(), allow_once: false }
        );
        // The extension reports the tab, then answers with it.
        let step = h.ext(FromExtension::TabShared(created_tab(5, "a")));
        assert_eq!(step.methods(1), ["Target.attachedToTarget"]);
        let step = h.answer(id, serde_json::to_value(created_tab(5, "a")).unwrap());
        assert_eq!(step.only_reply(1)["result"], json!({"targetId": "PAGE5"}));
    }

    #[test]
    fn create_target_on_a_child_session_opens_the_agents_own_tab_never_chromes() {
        let limits = Limits { max_tabs_per_agent: 2, ..Limits::default() };
        let mut h = Harness::with_limits(limits);
        h.core.extension_connected(h.now, hello(&[])).unwrap();
        h.ext(FromExtension::TabShared(created_tab(1, "a")));
        h.connect_as(1, "a");
        let page = h.playwright_attach(1)[0].clone();
        h.send(1, json!({"id": 1, "sessionId": page, "method": "Target.setAutoAttach", "params": {"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": false}}));
        h.ext(event(
            1,
            None,
            "Target.attachedToTarget",
            r#"{"sessionId":"W1","targetInfo":{"targetId":"W1T","type":"worker","url":"http://x/w.js"},"waitingForDebugger":false}"#,
        ));
        // A worker's session asks for a tab: the agent's own, in its window, counted.
        let create = json!({"id": 2, "sessionId": "W1", "method": "Target.createTarget", "params": {"url": "http://x/"}});
        let step = h.send(1, create.clone());
        assert!(step.commands().is_empty(), "not sent to Chrome's session of the worker");
        assert_eq!(
            step.browser_ops()[0].1,
            &BrowserOp::CreateTab { agent: "a".into(), url: "http://x/".into(), allow_once: false }
        );
        // And its limit holds there too.
        let step = h.send(1, create);
        assert!(step.commands().is_empty() && step.browser_ops().is_empty());
        let error = &step.only_reply(1)["error"];
        assert!(error["message"].as_str().unwrap().contains("already has 2 tabs"), "{error}");
    }

    #[test]
    fn create_target_learns_the_tab_from_the_answer_alone_and_puppeteer_gets_a_tab_target() {
        let mut h = Harness::with_tabs(&[]);
        h.connect_as(1, "a");
        h.send(1, json!({"id": 1, "method": "Target.setDiscoverTargets", "params": {"discover": true}}));
        h.send(1, json!({"id": 2, "method": "Target.setAutoAttach", "params": {"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": true, "filter": [{"type": "page", "exclude": true}, {}]}}));
        let step = h.send(1, json!({"id": 3, "method": "Target.createTarget", "params": {}}));
        let (id, op) = step.browser_ops()[0];
        assert_eq!(
            op,
            &BrowserOp::CreateTab { agent: "a".into(), url: "about:blank".into(), allow_once: false }
        );
        let step = h.answer(id, serde_json::to_value(created_tab(5, "a")).unwrap());
        assert_eq!(
            step.methods(1),
            ["Target.targetCreated", "Target.targetCreated", "Target.attachedToTarget", "reply#3"]
        );
        assert_eq!(step.to(1)[2]["params"]["targetInfo"]["type"], "tab");
        assert_eq!(step.to(1)[3]["result"]["targetId"], "PAGE5");
    }

    #[test]
    fn create_target_failures_and_the_tab_limit() {
        let limits = Limits { max_tabs_per_agent: 2, ..Limits::default() };
        let mut h = Harness::with_limits(limits);
        h.core.extension_connected(h.now, hello(&[])).unwrap();
        h.ext(FromExtension::TabShared(created_tab(1, "a")));
        h.connect_as(1, "a");
        let step =
            h.send(1, json!({"id": 1, "method": "Target.createTarget", "params": {"url": "http://x/"}}));
        let (pending, _) = step.browser_ops()[0];
        let step =
            h.send(1, json!({"id": 2, "method": "Target.createTarget", "params": {"url": "http://x/"}}));
        let error = &step.only_reply(1)["error"];
        assert!(error["message"].as_str().unwrap().contains("already has 2 tabs"), "{error}");
        assert!(step.extension.is_empty());
        // The one in flight fails: room again.
        let refused = CdpError { code: -32000, message: "Chrome refused to attach".into(), data: None };
        let step = h.ext(FromExtension::CommandResult(tabtunnel_wire::CommandResult::err(pending, refused)));
        assert_eq!(step.only_reply(1)["error"]["message"], "Chrome refused to attach");
        let step = h.send(1, json!({"id": 3, "method": "Target.createTarget", "params": {"url": 5}}));
        assert_eq!(step.only_reply(1)["error"]["code"], -32602);
        let step =
            h.send(1, json!({"id": 4, "method": "Target.createTarget", "params": {"url": "http://x/"}}));
        assert_eq!(step.browser_ops().len(), 1);
        // Another agent has its own count.
        h.connect_as(2, "b");
        let step =
            h.send(2, json!({"id": 1, "method": "Target.createTarget", "params": {"url": "about:blank"}}));
        assert_eq!(step.browser_ops().len(), 1);
    }

    #[test]
    fn close_target_closes_created_tabs_and_gives_handed_ones_back() {
        let mut h = Harness::with_tabs(&[]);
        h.ext(FromExtension::TabShared(created_tab(1, "a")));
        h.ext(FromExtension::TabShared(agent_tab(2, "a", false)));
        h.ext(FromExtension::TabShared(created_tab(3, "b")));
        h.connect_as(1, "a");
        let pages = h.playwright_attach(1);
        assert_eq!(pages.len(), 2, "only its own tabs");
        let step =
            h.send(1, json!({"id": 1, "method": "Target.closeTarget", "params": {"targetId": "PAGE1"}}));
        let (id, op) = step.browser_ops()[0];
        assert_eq!(op, &BrowserOp::CloseTab { tab_id: 1 });
        let step = h.ext(FromExtension::TabUnshared { tab_id: 1, reason: UnshareReason::Closed });
        assert_eq!(step.methods(1), ["Target.detachedFromTarget"]);
        let step = h.answer(id, json!({}));
        assert_eq!(step.only_reply(1)["result"], json!({"success": true}));
        let step =
            h.send(1, json!({"id": 2, "method": "Target.closeTarget", "params": {"targetId": "TAB-PAGE2"}}));
        assert_eq!(step.browser_ops()[0].1, &BrowserOp::ReleaseTab { tab_id: 2 });
        for (id, target) in [(3, "PAGE3"), (4, "TAB-PAGE3"), (5, "NOPE")] {
            let step =
                h.send(1, json!({"id": id, "method": "Target.closeTarget", "params": {"targetId": target}}));
            assert_eq!(step.only_reply(1)["error"]["message"], "No target with given id found");
            assert!(step.extension.is_empty());
        }
    }

    #[test]
    fn page_close_gives_a_handed_tab_back_and_closes_only_what_the_agent_opened() {
        let mut h = Harness::with_tabs(&[]);
        h.ext(FromExtension::TabShared(agent_tab(1, "a", false)));
        h.ext(FromExtension::TabShared(created_tab(2, "a")));
        h.connect_as(1, "a");
        let pages = h.playwright_attach(1);
        let step = h.send(1, json!({"id": 1, "sessionId": pages[0], "method": "Page.close"}));
        assert!(step.commands().is_empty(), "the human's tab is never closed");
        let (id, op) = step.browser_ops()[0];
        assert_eq!(op, &BrowserOp::ReleaseTab { tab_id: 1 });
        assert_eq!(h.answer(id, json!({})).only_reply(1)["result"], json!({}));
        let step = h.send(1, json!({"id": 2, "sessionId": pages[1], "method": "Page.close"}));
        assert_eq!(step.commands()[0].method, "Page.close");
    }

    #[test]
    fn activating_never_focuses_and_bring_to_front_is_an_activation() {
        let mut h = Harness::with_tabs(&[]);
        h.ext(FromExtension::TabShared(created_tab(1, "a")));
        h.connect_as(1, "a");
        let page = h.playwright_attach(1)[0].clone();
        let step =
            h.send(1, json!({"id": 1, "method": "Target.activateTarget", "params": {"targetId": "PAGE1"}}));
        let (id, op) = step.browser_ops()[0];
        assert_eq!(op, &BrowserOp::ActivateTab { tab_id: 1 });
        assert_eq!(h.answer(id, json!({})).only_reply(1)["result"], json!({}));
        let step = h.send(1, json!({"id": 2, "sessionId": page, "method": "Page.bringToFront"}));
        assert!(step.commands().is_empty(), "Chrome's bringToFront would focus the window");
        let (id, op) = step.browser_ops()[0];
        assert_eq!(op, &BrowserOp::ActivateTab { tab_id: 1 });
        let step = h.answer(id, json!({}));
        assert_eq!(step.only_reply(1)["sessionId"], page);
    }

    #[test]
    fn window_methods_reach_only_the_agents_own_windows() {
        let mut h = Harness::with_tabs(&[]);
        h.ext(FromExtension::TabShared(TabInfo { window_id: 40, ..created_tab(1, "a") }));
        h.ext(FromExtension::TabShared(TabInfo { window_id: 50, ..created_tab(2, "b") }));
        h.connect_as(1, "a");
        let page = h.playwright_attach(1)[0].clone();
        let step = h.send(1, json!({"id": 1, "sessionId": page, "method": "Browser.getWindowForTarget"}));
        let (id, op) = step.browser_ops()[0];
        assert_eq!(op, &BrowserOp::GetWindowForTab { tab_id: 1 });
        let window = json!({"windowId": 40, "bounds": {"left": 0, "top": 0, "width": 800, "height": 600, "windowState": "normal"}});
        assert_eq!(h.answer(id, window.clone()).only_reply(1)["result"], window);
        let step = h.send(
            1,
            json!({"id": 2, "method": "Browser.getWindowForTarget", "params": {"targetId": "PAGE2"}}),
        );
        assert_eq!(step.only_reply(1)["error"]["message"], "No target with given id found");
        let step =
            h.send(1, json!({"id": 3, "method": "Browser.getWindowBounds", "params": {"windowId": 50}}));
        assert_eq!(step.only_reply(1)["error"]["message"], "Browser window not found");
        let step =
            h.send(1, json!({"id": 4, "method": "Browser.getWindowBounds", "params": {"windowId": 40}}));
        assert_eq!(step.browser_ops()[0].1, &BrowserOp::GetWindowBounds { window_id: 40 });
        let step = h.send(1, json!({"id": 5, "sessionId": page, "method": "Browser.setWindowBounds", "params": {"windowId": 40, "bounds": {"width": 1000, "windowState": "normal"}}}));
        let bounds = WindowBounds {
            width: Some(1000),
            window_state: Some("normal".into()),
            ..WindowBounds::default()
        };
        assert_eq!(step.browser_ops()[0].1, &BrowserOp::SetWindowBounds { window_id: 40, bounds });
        let step = h.send(1, json!({"id": 6, "sessionId": page, "method": "Browser.setContentsSize", "params": {"windowId": 40, "width": 640}}));
        assert_eq!(
            step.browser_ops()[0].1,
            &BrowserOp::SetContentsSize { window_id: 40, width: Some(640), height: None, tab_id: Some(1) }
        );
        for (id, params) in [(7, json!({"windowId": 40})), (8, json!({"windowId": "x", "width": 1}))] {
            let step = h.send(1, json!({"id": id, "method": "Browser.setContentsSize", "params": params}));
            assert_eq!(step.only_reply(1)["error"]["code"], -32602);
        }
        let step =
            h.send(1, json!({"id": 9, "method": "Browser.setWindowBounds", "params": {"windowId": 40}}));
        assert_eq!(step.only_reply(1)["error"]["code"], -32602);
    }

    #[test]
    fn a_command_times_out_at_the_deadline_its_own_arrival_set() {
        let limits = Limits { command_timeout_ms: 1000, ..Limits::default() };
        let mut h = Harness::with_tabs_and_limits(&[1], limits);
        h.connect(1);
        let page = h.playwright_attach(1)[0].clone();
        h.tick(100);
        // It comes between two wakes of the shell: its time is its own, not the last wake's.
        h.now = 1234;
        h.send(1, json!({"id": 1, "sessionId": page, "method": "Runtime.evaluate"}));
        assert_eq!(h.next_deadline(), Some(2234));
        assert!(h.tick(2233).client.is_empty(), "not yet");
        let step = h.tick(2234);
        assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("did not answer"));
        assert_eq!(h.next_deadline(), None, "nothing left to wait for");
    }

    #[test]
    fn a_command_the_tab_never_answers_times_out_and_frees_its_slot() {
        let limits = Limits { command_timeout_ms: 1000, ..Limits::default() };
        let mut h = Harness::with_limits(limits);
        h.core.extension_connected(h.now, hello(&[1])).unwrap();
        h.drain();
        h.tick(100);
        h.connect(1);
        let page = h.playwright_attach(1)[0].clone();
        let id =
            h.send(1, json!({"id": 1, "sessionId": page, "method": "Runtime.evaluate"})).commands()[0].id;
        h.tick(600);
        let answered =
            h.send(1, json!({"id": 2, "sessionId": page, "method": "Runtime.evaluate"})).commands()[0].id;
        assert!(h.tick(1099).client.is_empty(), "not yet");
        let step = h.tick(1100);
        let reply = step.only_reply(1);
        assert_eq!(reply["id"], 1);
        assert!(reply["error"]["message"].as_str().unwrap().contains("did not answer within 1 s"), "{reply}");
        assert!(h.answer(id, json!({})).client.is_empty(), "a late answer is dropped");
        assert_eq!(h.answer(answered, json!({})).only_reply(1)["id"], 2);
        assert_eq!(h.core.conns[&1].in_flight, 0);
    }
}
