//! The `Browser` and `Target` methods `chrome.debugger` refuses, answered by the emulation.

use crate::frames::{errors, ClientCommand};
use crate::session::{ConnId, Connection, Session, SessionKind, Topology};
use crate::target_filter::TargetFilter;
use crate::targets::browser_target_info;
use crate::Core;
use serde_json::{json, Value};
use tabtunnel_wire::TabId;

/// Parses a local method's params; absent params are an empty object.
pub(crate) fn params(cmd: &ClientCommand) -> Value {
    cmd.params.and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or_else(|| json!({}))
}

/// Whether a root `Target.setAutoAttach` filter excludes pages, which is how puppeteer asks
/// for Chrome's tab-then-page topology.
fn topology_of(params: &Value) -> Topology {
    let excludes_pages = params["filter"]
        .as_array()
        .is_some_and(|filter| filter.iter().any(|entry| entry["type"] == "page" && entry["exclude"] == true));
    if excludes_pages {
        Topology::TabsThenPages
    } else {
        Topology::PagesAtRoot
    }
}

impl Core {
    pub(crate) fn browser_session_command(&mut self, conn: ConnId, cmd: &ClientCommand) {
        match cmd.method {
            "Browser.getVersion" => self.browser_get_version(conn, cmd),
            // Downloads follow the user's own Chrome settings; clients only need this to succeed.
            "Browser.setDownloadBehavior" => self.reply(conn, cmd, "{}"),
            "Browser.close" => self.reply_error(
                conn,
                cmd,
                &errors::not_supported(
                    cmd.method,
                    "it would close the user's own browser; disconnect instead",
                ),
            ),
            "Target.getBrowserContexts" => self.get_browser_contexts(conn, cmd),
            "Target.setDiscoverTargets" => self.set_discover_targets(conn, cmd),
            "Target.setAutoAttach" => self.root_set_auto_attach(conn, cmd),
            "Target.getTargetInfo" => self.get_target_info(conn, cmd),
            "Target.getTargets" => self.get_targets(conn, cmd),
            "Target.getDevToolsTarget" => self.get_devtools_target(conn, cmd),
            "Target.detachFromTarget" => self.detach_from_target(conn, cmd),
            "Target.attachToTarget" => self.attach_to_target(conn, cmd),
            "Target.attachToBrowserTarget" => self.attach_to_browser_target(conn, cmd),
            "Target.createTarget" => self.create_target(conn, cmd),
            "Target.closeTarget" => self.close_target(conn, cmd),
            "Target.activateTarget" => self.activate_target(conn, cmd),
            "Browser.getWindowForTarget" => self.get_window_for_target(conn, cmd),
            "Browser.getWindowBounds" | "Browser.setWindowBounds" | "Browser.setContentsSize" => {
                self.window_command(conn, cmd, None)
            }
            "Target.createBrowserContext" | "Target.disposeBrowserContext" => self.reply_error(
                conn,
                cmd,
                &errors::not_supported(cmd.method, "tabs live in the user's own profile"),
            ),
            other => self.reply_error(conn, cmd, &errors::method_not_found(other)),
        }
    }

    fn browser_get_version(&mut self, conn: ConnId, cmd: &ClientCommand) {
        let Some(browser) = &self.browser else {
            return self.reply_error(conn, cmd, &errors::no_extension());
        };
        let result = json!({
            "protocolVersion": browser.protocol_version,
            "product": browser.product,
            "revision": "",
            "userAgent": browser.user_agent,
            "jsVersion": browser.js_version,
        });
        self.reply_json(conn, cmd, &result);
    }

    /// The user's profile is the default context, which Chrome does not list; naming its id in
    /// `browserContextIds` would make puppeteer treat the tabs as an isolated context.
    fn get_browser_contexts(&mut self, conn: ConnId, cmd: &ClientCommand) {
        let mut result = json!({ "browserContextIds": [] });
        if let Some(first) = self.tabs.values().next() {
            result["defaultBrowserContextId"] = json!(first.tab.info.browser_context_id);
        }
        self.reply_json(conn, cmd, &result);
    }

    fn set_discover_targets(&mut self, conn: ConnId, cmd: &ClientCommand) {
        let discover = params(cmd)["discover"].as_bool();
        let Some(discover) = discover else {
            return self.reply_error(
                conn,
                cmd,
                &errors::invalid_params(cmd.method, "discover: boolean expected"),
            );
        };
        let connection = self.conns.get_mut(&conn).expect("live conn");
        let was = std::mem::replace(&mut connection.discover, discover);
        connection.discover_filter = TargetFilter::of(&params(cmd));
        if discover && !was {
            self.emit(
                conn,
                "",
                "Target.targetCreated",
                &json!({ "targetInfo": browser_target_info(&self.config.browser_target_id) }),
            );
            for tab in self.visible_tab_ids(conn) {
                self.announce_created(conn, tab);
            }
            for worker in self.visible_worker_ids(conn, |c| &c.discover_filter) {
                self.announce_created(conn, worker);
            }
        }
        self.reply(conn, cmd, "{}");
    }

    /// Root auto-attach: attaches every visible tab in the topology the filter asks for, all
    /// before the reply (puppeteer's `connect` and Playwright's `connectOverCDP` wait on that).
    fn root_set_auto_attach(&mut self, conn: ConnId, cmd: &ClientCommand) {
        let p = params(cmd);
        let Some(auto_attach) = p["autoAttach"].as_bool() else {
            return self.reply_error(
                conn,
                cmd,
                &errors::invalid_params(cmd.method, "autoAttach: boolean expected"),
            );
        };
        if p["flatten"] != true {
            return self.reply_error(
                conn,
                cmd,
                &errors::not_supported(cmd.method, "only flatten:true sessions are available"),
            );
        }
        let topology = auto_attach.then(|| topology_of(&p));
        let connection = self.conns.get_mut(&conn).expect("live conn");
        connection.auto_attach = topology;
        connection.auto_attach_filter = TargetFilter::of(&p);
        if let Some(topology) = topology {
            let workers = self.visible_worker_ids(conn, |c| &c.auto_attach_filter);
            for tab in self.visible_tab_ids(conn).into_iter().chain(workers) {
                if !self.conns[&conn].has_root_target_for(tab) {
                    self.attach_at_root(conn, tab, topology);
                }
            }
        }
        self.reply(conn, cmd, "{}");
    }

    /// `setAutoAttach` on a `tab` session: attach its page (puppeteer's second level).
    pub(crate) fn tab_set_auto_attach(&mut self, conn: ConnId, cmd: &ClientCommand, tab: TabId) {
        let auto_attach = params(cmd)["autoAttach"].as_bool().unwrap_or(false);
        let tab_session = cmd.session_id.to_owned();
        if let Some(session) = self.conns.get_mut(&conn).and_then(|c| c.sessions.get_mut(&tab_session)) {
            session.kind = SessionKind::Tab { tab, auto_attach };
        }
        let has_page = self.conns[&conn].children_of(&tab_session).next().is_some();
        if auto_attach && !has_page {
            self.attach_page(conn, tab, &tab_session);
        }
        self.reply(conn, cmd, "{}");
    }

    /// An extra session on a tab (puppeteer's `createCDPSession`, chrome-devtools-mcp's
    /// DevTools universe, Playwright's `newCDPSession`): one more page session on the same
    /// debugger session, with its own domain state. Its `attachedToTarget` comes before the
    /// reply, on the session that asked.
    fn attach_to_target(&mut self, conn: ConnId, cmd: &ClientCommand) {
        let p = params(cmd);
        if p["flatten"] != true {
            return self.reply_error(
                conn,
                cmd,
                &errors::not_supported(cmd.method, "only flatten:true sessions are available"),
            );
        }
        let Some(target_id) = p["targetId"].as_str() else {
            return self.reply_error(
                conn,
                cmd,
                &errors::invalid_params(cmd.method, "targetId: string expected"),
            );
        };
        if target_id == self.config.browser_target_id {
            return self.attach_to_browser_target(conn, cmd);
        }
        let agent = &self.conns[&conn].agent;
        let worker = || self.visible_workers(agent).find(|w| w.page_target_id() == target_id).map(|w| w.id());
        let Some(tab) = self.visible_tab_by_target(agent, target_id).or_else(worker) else {
            return self.reply_error(conn, cmd, &errors::no_target());
        };
        let session_id = self.attach_page(conn, tab, cmd.session_id);
        self.reply_json(conn, cmd, &json!({ "sessionId": session_id }));
    }

    /// A session on the browser target, answered by the emulation like the root.
    fn attach_to_browser_target(&mut self, conn: ConnId, cmd: &ClientCommand) {
        let id = self.mint_session_id();
        let session = Session { kind: SessionKind::Browser, parent: cmd.session_id.to_owned() };
        self.insert_session(conn, id.clone(), session);
        let info = browser_target_info(&self.config.browser_target_id);
        self.emit(
            conn,
            cmd.session_id,
            "Target.attachedToTarget",
            &json!({ "sessionId": id, "targetInfo": info, "waitingForDebugger": false }),
        );
        self.reply_json(conn, cmd, &json!({ "sessionId": id }));
    }

    fn get_target_info(&mut self, conn: ConnId, cmd: &ClientCommand) {
        let target_id = params(cmd)["targetId"].as_str().map(str::to_owned);
        let info = match target_id.as_deref() {
            None => Some(browser_target_info(&self.config.browser_target_id)),
            Some(id) if id == self.config.browser_target_id => Some(browser_target_info(id)),
            Some(id) => self.target_info_by_id(conn, id),
        };
        match info {
            Some(info) => self.reply_json(conn, cmd, &json!({ "targetInfo": info })),
            None => self.reply_error(conn, cmd, &errors::no_target()),
        }
    }

    fn get_targets(&mut self, conn: ConnId, cmd: &ClientCommand) {
        let agent = &self.conns[&conn].agent;
        let infos: Vec<Value> = self
            .visible_tabs(agent)
            .chain(self.visible_workers(agent))
            .map(|t| t.page_target_info())
            .collect();
        self.reply_json(conn, cmd, &json!({ "targetInfos": infos }));
    }

    /// No DevTools window is ever open on a shared tab as far as clients are concerned.
    fn get_devtools_target(&mut self, conn: ConnId, cmd: &ClientCommand) {
        let target_id = params(cmd)["targetId"].as_str().map(str::to_owned);
        match target_id {
            Some(id) if self.target_info_by_id(conn, &id).is_some() => self.reply(conn, cmd, "{}"),
            Some(_) => self.reply_error(conn, cmd, &errors::no_target()),
            None => {
                self.reply_error(conn, cmd, &errors::invalid_params(cmd.method, "targetId: string expected"))
            }
        }
    }

    /// Detaches one of the connection's sessions by `sessionId` (or the root-attached session of
    /// `targetId`). The tab's debugger session stays: the user shared the tab, not the client.
    pub(crate) fn detach_from_target(&mut self, conn: ConnId, cmd: &ClientCommand) {
        let p = params(cmd);
        let connection = &self.conns[&conn];
        let session_id = match (p["sessionId"].as_str(), p["targetId"].as_str()) {
            (Some(session_id), _) => Some(session_id.to_owned()),
            (None, Some(target_id)) => connection
                .sessions
                .iter()
                .find(|(id, s)| {
                    !id.is_empty()
                        && s.parent.is_empty()
                        && self.session_target_id(s).as_deref() == Some(target_id)
                })
                .map(|(id, _)| id.clone()),
            (None, None) => {
                return self.reply_error(
                    conn,
                    cmd,
                    &errors::invalid_params(cmd.method, "sessionId or targetId expected"),
                );
            }
        };
        match session_id {
            Some(id) if !id.is_empty() && connection.sessions.contains_key(&id) => {
                self.detach_session(conn, &id);
                self.reply(conn, cmd, "{}");
            }
            _ => self.reply_error(conn, cmd, &errors::no_session()),
        }
    }

    /// Whether `Target.getTargetInfo` names a target other than the session's own.
    pub(crate) fn names_other_target(&self, conn: ConnId, cmd: &ClientCommand) -> bool {
        let own = self.conns[&conn].sessions.get(cmd.session_id).and_then(|s| self.session_target_id(s));
        params(cmd)["targetId"].as_str().is_some_and(|id| own.as_deref() != Some(id))
    }

    pub(crate) fn session_target_id(&self, session: &Session) -> Option<String> {
        if session.kind == SessionKind::Browser {
            return Some(self.config.browser_target_id.clone());
        }
        let tab = &self.tabs.get(&session.kind.tab()?)?.tab;
        match session.kind {
            SessionKind::Tab { .. } => Some(tab.tab_target_id()),
            SessionKind::Page { .. } => Some(tab.page_target_id().to_owned()),
            _ => None,
        }
    }

    fn target_info_by_id(&self, conn: ConnId, target_id: &str) -> Option<Value> {
        let agent = &self.conns[&conn].agent;
        self.visible_tabs(agent).chain(self.visible_workers(agent)).find_map(|t| {
            if t.page_target_id() == target_id {
                Some(t.page_target_info())
            } else if t.tab_target_id() == target_id {
                Some(t.tab_target_info())
            } else {
                None
            }
        })
    }

    pub(crate) fn visible_tab_ids(&self, conn: ConnId) -> Vec<TabId> {
        let agent = &self.conns[&conn].agent;
        self.visible_tabs(agent).map(|t| t.id()).collect()
    }

    /// The workers the connection sees that its discovery or auto-attach `filter` covers.
    pub(crate) fn visible_worker_ids(
        &self,
        conn: ConnId,
        filter: impl Fn(&Connection) -> &TargetFilter,
    ) -> Vec<TabId> {
        let connection = &self.conns[&conn];
        let filter = filter(connection);
        self.visible_workers(&connection.agent)
            .filter(|w| filter.allows(w.info.kind.cdp_type()))
            .map(|w| w.id())
            .collect()
    }

    /// The tab whose page or tab target is `target_id`, if this connection's agent may see it.
    pub(crate) fn visible_tab_by_any_target(&self, conn: ConnId, target_id: &str) -> Option<TabId> {
        let agent = &self.conns[&conn].agent;
        self.visible_tabs(agent)
            .find(|t| t.page_target_id() == target_id || t.tab_target_id() == target_id)
            .map(|t| t.id())
    }
}
