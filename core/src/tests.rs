//! Unit tests of the emulation: frames in, frames out.

use super::*;
use crate::testing::*;
use serde_json::{json, Value};
use tabtunnel_wire::{CommandResult, Event, TargetKind, UnshareReason};

// ---- Browser domain ----

#[test]
fn browser_get_version_reports_the_real_browser() {
    let mut h = Harness::new();
    h.connect(1);
    let early = h.send(1, json!({"id": 1, "method": "Browser.getVersion"}));
    assert_eq!(early.only_reply(1)["error"]["code"], -32000, "no browser before the extension connects");
    h.core.extension_connected(h.now, hello(&[])).unwrap();
    let step = h.send(1, json!({"id": 2, "method": "Browser.getVersion"}));
    let r = &step.only_reply(1)["result"];
    assert_eq!(r["product"], "Chrome/156.0.8078.73");
    assert_eq!(r["userAgent"], "Mozilla/5.0 Chrome/156.0.0.0");
    assert_eq!(r["protocolVersion"], "1.3");
}

#[test]
fn browser_methods_are_answered_on_page_sessions_too() {
    let mut h = Harness::with_tabs(&[7]);
    h.connect(1);
    let pages = h.playwright_attach(1);
    let step = h.send(1, json!({"id": 9, "sessionId": pages[0], "method": "Browser.getVersion"}));
    let reply = step.only_reply(1);
    assert_eq!(reply["result"]["product"], "Chrome/156.0.8078.73");
    assert_eq!(reply["sessionId"], pages[0]);
    assert!(step.extension.is_empty());
}

#[test]
fn set_download_behavior_succeeds_and_browser_close_is_refused() {
    let mut h = Harness::with_tabs(&[]);
    h.connect(1);
    let step = h.send(1, json!({"id": 1, "method": "Browser.setDownloadBehavior", "params": {"behavior": "allowAndName", "downloadPath": "/tmp"}}));
    assert_eq!(step.only_reply(1)["result"], json!({}));
    let step = h.send(1, json!({"id": 2, "method": "Browser.close"}));
    let msg = step.only_reply(1)["error"]["message"].as_str().unwrap().to_owned();
    assert!(msg.contains("Browser.close"), "{msg}");
}

// ---- Target domain at the root ----

#[test]
fn get_browser_contexts_lists_none_and_names_the_default() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    let step = h.send(1, json!({"id": 1, "method": "Target.getBrowserContexts"}));
    assert_eq!(
        step.only_reply(1)["result"],
        json!({"browserContextIds": [], "defaultBrowserContextId": "CTX"})
    );
}

#[test]
fn discover_announces_browser_then_tab_and_page_before_the_reply() {
    let mut h = Harness::with_tabs(&[1, 2]);
    h.connect(1);
    let step =
        h.send(1, json!({"id": 1, "method": "Target.setDiscoverTargets", "params": {"discover": true}}));
    let frames = step.to(1);
    let types: Vec<&str> =
        frames[..5].iter().map(|f| f["params"]["targetInfo"]["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["browser", "tab", "page", "tab", "page"]);
    assert_eq!(frames[2]["params"]["targetInfo"]["targetId"], "PAGE1");
    assert_eq!(frames[5]["id"], 1);
    // Asking again announces nothing new.
    let again =
        h.send(1, json!({"id": 2, "method": "Target.setDiscoverTargets", "params": {"discover": true}}));
    assert_eq!(again.methods(1), ["reply#2"]);
    let bad = h.send(1, json!({"id": 3, "method": "Target.setDiscoverTargets", "params": {}}));
    assert_eq!(bad.only_reply(1)["error"]["code"], -32602);
}

#[test]
fn puppeteer_topology_attaches_tabs_then_pages_before_each_reply() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    h.send(
        1,
        json!({"id": 1, "method": "Target.setDiscoverTargets", "params": {"discover": true, "filter": [{}]}}),
    );
    let step = h.send(
        1,
        json!({"id": 2, "method": "Target.setAutoAttach", "params": {
        "waitForDebuggerOnStart": true, "flatten": true, "autoAttach": true,
        "filter": [{"type": "page", "exclude": true}, {}]}}),
    );
    assert_eq!(step.methods(1), ["Target.attachedToTarget", "reply#2"]);
    let attached = &step.to(1)[0];
    assert!(attached.get("sessionId").is_none(), "tab attaches at the root");
    assert_eq!(attached["params"]["targetInfo"]["type"], "tab");
    assert_eq!(attached["params"]["waitingForDebugger"], false);
    let tab_session = attached["params"]["sessionId"].as_str().unwrap().to_owned();

    let step = h.send(
        1,
        json!({"id": 3, "sessionId": tab_session, "method": "Target.setAutoAttach", "params": {
        "waitForDebuggerOnStart": true, "flatten": true, "autoAttach": true, "filter": [{}]}}),
    );
    assert_eq!(step.methods(1), ["Target.attachedToTarget", "reply#3"]);
    let page = &step.to(1)[0];
    assert_eq!(page["sessionId"], tab_session, "page attaches on the tab session");
    assert_eq!(page["params"]["targetInfo"]["type"], "page");
    assert_eq!(page["params"]["targetInfo"]["targetId"], "PAGE1");
    assert_eq!(page["params"]["targetInfo"]["browserContextId"], "CTX");
    assert_eq!(step.to(1)[1]["sessionId"], tab_session);

    let step =
        h.send(1, json!({"id": 4, "sessionId": tab_session, "method": "Runtime.runIfWaitingForDebugger"}));
    assert_eq!(step.only_reply(1)["result"], json!({}));
    assert!(step.extension.is_empty(), "tab sessions are answered locally");
    // A second setAutoAttach on the tab does not attach the page twice.
    let step = h.send(1, json!({"id": 5, "sessionId": tab_session, "method": "Target.setAutoAttach", "params": {"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": true}}));
    assert_eq!(step.methods(1), ["reply#5"]);
    let step = h.send(
        1,
        json!({"id": 6, "sessionId": tab_session, "method": "Page.navigate", "params": {"url": "x"}}),
    );
    assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("Page.navigate"));
}

#[test]
fn playwright_topology_attaches_pages_at_the_root() {
    let mut h = Harness::with_tabs(&[1, 2]);
    h.connect(1);
    let step = h.send(1, json!({"id": 1, "method": "Target.setAutoAttach", "params": {"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}}));
    assert_eq!(step.methods(1), ["Target.attachedToTarget", "Target.attachedToTarget", "reply#1"]);
    for (frame, target) in step.to(1).iter().zip(["PAGE1", "PAGE2"]) {
        assert!(frame.get("sessionId").is_none());
        assert_eq!(frame["params"]["targetInfo"]["type"], "page");
        assert_eq!(frame["params"]["targetInfo"]["targetId"], target);
        assert_eq!(frame["params"]["targetInfo"]["browserContextId"], "CTX");
    }
    let ids: Vec<&str> = step.to(1)[..2].iter().map(|f| f["params"]["sessionId"].as_str().unwrap()).collect();
    assert_ne!(ids[0], ids[1]);
    // Repeating the call attaches nothing twice.
    let step = h.send(1, json!({"id": 2, "method": "Target.setAutoAttach", "params": {"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}}));
    assert_eq!(step.methods(1), ["reply#2"]);
}

#[test]
fn set_auto_attach_requires_flat_sessions_and_a_flag() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    let step = h.send(1, json!({"id": 1, "method": "Target.setAutoAttach", "params": {"autoAttach": true, "waitForDebuggerOnStart": false}}));
    assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("flatten"));
    let step = h.send(1, json!({"id": 2, "method": "Target.setAutoAttach", "params": {"flatten": true}}));
    assert_eq!(step.only_reply(1)["error"]["code"], -32602);
}

#[test]
fn get_target_info_without_params_is_the_browser() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    let step = h.send(1, json!({"id": 1, "method": "Target.getTargetInfo"}));
    let info = &step.only_reply(1)["result"]["targetInfo"];
    assert_eq!(info["type"], "browser");
    assert_eq!(info["targetId"], BROWSER_ID);
    let step = h.send(1, json!({"id": 2, "method": "Target.getTargetInfo", "params": {"targetId": "PAGE1"}}));
    assert_eq!(step.only_reply(1)["result"]["targetInfo"]["url"], "http://127.0.0.1:8000/1.html");
    let step =
        h.send(1, json!({"id": 3, "method": "Target.getTargetInfo", "params": {"targetId": "TAB-PAGE1"}}));
    assert_eq!(step.only_reply(1)["result"]["targetInfo"]["type"], "tab");
    let step = h.send(1, json!({"id": 4, "method": "Target.getTargetInfo", "params": {"targetId": "NOPE"}}));
    assert_eq!(step.only_reply(1)["error"]["message"], "No target with given id found");
}

#[test]
fn get_target_info_on_a_page_session_is_that_page_and_is_local() {
    let mut h = Harness::with_tabs(&[1, 2]);
    h.connect(1);
    let pages = h.playwright_attach(1);
    let step = h.send(1, json!({"id": 5, "sessionId": pages[1], "method": "Target.getTargetInfo"}));
    assert_eq!(step.only_reply(1)["result"]["targetInfo"]["targetId"], "PAGE2");
    assert!(step.extension.is_empty());
    let step = h.send(1, json!({"id": 6, "sessionId": pages[1], "method": "Target.getTargetInfo", "params": {"targetId": "PAGE1"}}));
    assert_eq!(step.only_reply(1)["result"]["targetInfo"]["targetId"], "PAGE1");
}

#[test]
fn get_targets_lists_the_shared_pages() {
    let mut h = Harness::with_tabs(&[1, 2]);
    h.connect(1);
    let step = h.send(1, json!({"id": 1, "method": "Target.getTargets"}));
    let infos = step.only_reply(1)["result"]["targetInfos"].as_array().unwrap().clone();
    let ids: Vec<&str> = infos.iter().map(|i| i["targetId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["PAGE1", "PAGE2"]);
    assert!(infos.iter().all(|i| i["type"] == "page" && i["title"].is_string()));
}

#[test]
fn get_devtools_target_is_empty_for_known_targets() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    let step =
        h.send(1, json!({"id": 1, "method": "Target.getDevToolsTarget", "params": {"targetId": "PAGE1"}}));
    assert_eq!(step.only_reply(1)["result"], json!({}));
    let step =
        h.send(1, json!({"id": 2, "method": "Target.getDevToolsTarget", "params": {"targetId": "GONE"}}));
    assert_eq!(step.only_reply(1)["error"]["code"], -32602);
}

#[test]
fn unknown_and_unavailable_browser_methods_get_errors_naming_them() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    for (id, method) in [
        (1, "Storage.getCookies"),
        (2, "Target.closeTarget"),
        (3, "Target.activateTarget"),
        (4, "Target.createBrowserContext"),
        (5, "Bogus.method"),
    ] {
        let step = h.send(1, json!({"id": id, "method": method, "params": {}}));
        let error = &step.only_reply(1)["error"];
        assert!(error["message"].as_str().unwrap().contains(method), "{error}");
        assert!(step.extension.is_empty());
    }
}

// ---- forwarding and events ----

#[test]
fn page_commands_go_to_the_right_tab_with_params_untouched() {
    let mut h = Harness::with_tabs(&[1, 2]);
    h.connect(1);
    let pages = h.playwright_attach(1);
    let text = format!(
        r#"{{"id":42,"method":"Runtime.evaluate","sessionId":"{}","params":{{"expression":"6 * 7" , "returnByValue":true}}}}"#,
        pages[1]
    );
    let step = h.send_text(1, &text);
    assert!(step.client.is_empty(), "no reply before the tab answers");
    let cmd = step.commands()[0];
    assert_eq!(
        (cmd.tab_id, cmd.method.as_str(), cmd.child_session_id.as_deref()),
        (2, "Runtime.evaluate", None)
    );
    assert_eq!(cmd.params.as_ref().unwrap().get(), r#"{"expression":"6 * 7" , "returnByValue":true}"#);
    let step = h.ext(FromExtension::CommandResult(CommandResult::ok(
        cmd.id,
        raw(r#"{"result":{"type":"number","value":42}}"#),
    )));
    let reply = step.only_reply(1);
    assert_eq!(reply["id"], 42);
    assert_eq!(reply["sessionId"], pages[1]);
    assert_eq!(reply["result"]["result"]["value"], 42);
}

#[test]
fn focus_emulation_of_an_agents_page_is_held_on_whatever_a_client_asks() {
    let mut h = Harness::with_tabs(&[1]);
    h.ext(FromExtension::TabShared(agent_tab(2, "a", true)));
    h.ext(FromExtension::TabShared(agent_tab(3, "a", false)));
    h.connect_as(1, "a");
    let pages = h.playwright_attach(1);
    let set = |id: u32, session: &str, params: Value| json!({"id": id, "sessionId": session, "method": "Emulation.setFocusEmulationEnabled", "params": params});
    // The agent's pages, created or handed: answered here, never reaching the tab.
    for (i, page) in pages.iter().enumerate() {
        for enabled in [false, true] {
            let step = h.send(1, set(i as u32, page, json!({ "enabled": enabled })));
            assert!(step.commands().is_empty(), "{step:?}");
            assert_eq!(step.only_reply(1)["result"], json!({}));
        }
    }
    // Malformed params get Chrome's own answer.
    assert_eq!(h.send(1, set(7, &pages[0], json!({}))).commands().len(), 1);
    // The human's own shared tab keeps its real focus: a client's call reaches it.
    h.connect(2);
    let human = h.playwright_attach(2);
    let step = h.send(2, set(8, &human[0], json!({ "enabled": true })));
    assert_eq!(step.commands()[0].method, "Emulation.setFocusEmulationEnabled");
}

#[test]
fn tab_errors_reach_the_client_unchanged() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    let pages = h.playwright_attach(1);
    let step = h.send(1, json!({"id": 3, "sessionId": pages[0], "method": "HeapProfiler.enable"}));
    let id = step.commands()[0].id;
    let error = CdpError { code: -32601, message: "'HeapProfiler.enable' wasn't found".into(), data: None };
    let step = h.ext(FromExtension::CommandResult(CommandResult::err(id, error)));
    assert_eq!(step.only_reply(1)["error"]["message"], "'HeapProfiler.enable' wasn't found");
    // An answer for nobody (duplicate or unknown id) is dropped, not sent twice.
    let step = h.ext(FromExtension::CommandResult(CommandResult::ok(id, raw("{}"))));
    assert!(step.client.is_empty());
}

#[test]
fn concurrent_commands_from_two_clients_are_answered_to_their_senders() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    h.connect(2);
    let p1 = h.playwright_attach(1)[0].clone();
    let p2 = h.playwright_attach(2)[0].clone();
    assert_ne!(p1, p2, "each connection has its own session ids");
    let a = h.send(1, json!({"id": 10, "sessionId": p1, "method": "Page.enable"})).commands()[0].id;
    let b = h.send(2, json!({"id": 10, "sessionId": p2, "method": "Page.enable"})).commands()[0].id;
    assert_ne!(a, b);
    let step = h.ext(FromExtension::CommandResult(CommandResult::ok(b, raw("{}"))));
    assert_eq!(step.only_reply(2)["sessionId"], p2);
    let step = h.ext(FromExtension::CommandResult(CommandResult::ok(a, raw("{}"))));
    assert_eq!(step.only_reply(1)["sessionId"], p1);
}

#[test]
fn events_are_tagged_with_each_attached_session() {
    let mut h = Harness::with_tabs(&[1, 2]);
    h.connect(1);
    h.connect(2);
    h.connect(3); // attached to nothing
    let p1 = h.playwright_attach(1);
    let (_, p2) = h.puppeteer_attach(2, 1);
    h.send(1, json!({"id": 7, "sessionId": p1[0], "method": "Page.enable"}));
    h.send(2, json!({"id": 7, "sessionId": p2, "method": "Page.enable"}));
    let step = h.ext(FromExtension::Event(Event {
        tab_id: 1,
        child_session_id: None,
        method: "Page.loadEventFired".into(),
        params: raw(r#"{"timestamp":12.5}"#),
    }));
    assert_eq!(step.to(1).len(), 1);
    assert_eq!(step.to(1)[0]["sessionId"], p1[0]);
    assert_eq!(step.to(2)[0]["sessionId"], p2);
    assert_eq!(step.to(2)[0]["params"]["timestamp"], 12.5);
    assert!(step.to(3).is_empty());
    let other = h.ext(FromExtension::Event(Event {
        tab_id: 9,
        child_session_id: None,
        method: "X.y".into(),
        params: raw("{}"),
    }));
    assert!(other.client.is_empty(), "events of unknown tabs are dropped");
}

#[test]
fn child_sessions_from_page_auto_attach_are_routed() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    let page = h.playwright_attach(1)[0].clone();
    let step = h.send(1, json!({"id": 5, "sessionId": page, "method": "Target.setAutoAttach", "params": {"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": true}}));
    assert!(step.commands().is_empty(), "Chrome's auto-attach is on already: the gesture guard's");
    assert_eq!(step.only_reply(1)["result"], json!({}));
    let step = h.ext(FromExtension::Event(Event {
        tab_id: 1,
        child_session_id: None,
        method: "Target.attachedToTarget".into(),
        params: raw(r#"{"sessionId":"CHILD1","targetInfo":{"targetId":"F1","type":"iframe","url":"http://x/"},"waitingForDebugger":true}"#),
    }));
    assert_eq!(step.to(1)[0]["sessionId"], page);
    assert_eq!(step.to(1)[0]["params"]["sessionId"], "CHILD1");
    let step =
        h.send(1, json!({"id": 6, "sessionId": "CHILD1", "method": "Runtime.runIfWaitingForDebugger"}));
    let cmd = step.commands()[0];
    assert_eq!(cmd.child_session_id.as_deref(), Some("CHILD1"));
    let id = cmd.id;
    let step = h.ext(FromExtension::CommandResult(CommandResult::ok(id, raw("{}"))));
    assert_eq!(step.only_reply(1)["sessionId"], "CHILD1");
    let step = h.ext(FromExtension::Event(Event {
        tab_id: 1,
        child_session_id: Some("CHILD1".into()),
        method: "Runtime.consoleAPICalled".into(),
        params: raw(r#"{"type":"log"}"#),
    }));
    assert!(step.client.is_empty(), "a child's Runtime events only after Runtime.enable on it");
    runtime_on(&mut h, 1, "CHILD1");
    let step = h.ext(FromExtension::Event(Event {
        tab_id: 1,
        child_session_id: Some("CHILD1".into()),
        method: "Runtime.consoleAPICalled".into(),
        params: raw(r#"{"type":"log"}"#),
    }));
    assert_eq!(step.to(1)[0]["sessionId"], "CHILD1");
    let step = h.ext(FromExtension::Event(Event {
        tab_id: 1,
        child_session_id: None,
        method: "Target.detachedFromTarget".into(),
        params: raw(r#"{"sessionId":"CHILD1","targetId":"F1"}"#),
    }));
    assert_eq!(step.to(1)[0]["sessionId"], page);
    let step = h.send(1, json!({"id": 7, "sessionId": "CHILD1", "method": "Runtime.evaluate"}));
    assert_eq!(step.only_reply(1)["error"]["code"], -32001);
}

#[test]
fn a_child_its_last_client_detached_from_is_let_go_in_chrome_too() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    h.connect(2);
    let page = h.playwright_attach(1)[0].clone();
    let other = h.playwright_attach(2)[0].clone();
    auto_attach_on(&mut h, 1, &page);
    auto_attach_on(&mut h, 2, &other);
    h.ext(FromExtension::Event(Event {
        tab_id: 1,
        child_session_id: None,
        method: "Target.attachedToTarget".into(),
        params: raw(r#"{"sessionId":"W1","targetInfo":{"targetId":"W","type":"service_worker","url":"http://x/sw.js"},"waitingForDebugger":false}"#),
    }));
    let detach = |id: u32, session: &str| json!({"id": id, "sessionId": session, "method": "Target.detachFromTarget", "params": {"sessionId": "W1"}});
    let step = h.send(1, detach(8, &page));
    assert_eq!(step.methods(1), ["Target.detachedFromTarget", "reply#8"]);
    assert_eq!(step.to(1)[0]["sessionId"], page);
    assert!(step.extension.is_empty(), "another client is still on the child");
    let step = h.ext(FromExtension::Event(Event {
        tab_id: 1,
        child_session_id: Some("W1".into()),
        method: "Inspector.workerScriptLoaded".into(),
        params: raw("{}"),
    }));
    assert_eq!(
        step.methods(2),
        ["Inspector.workerScriptLoaded"],
        "a detached child's events stop for it alone"
    );
    // The last one out: the tab's own debugger session lets go of the child (so a service
    // worker can end), on the child's parent.
    let step = h.send(2, detach(9, &other));
    assert_eq!(step.methods(2), ["Target.detachedFromTarget", "reply#9"]);
    let cmd = step.commands()[0];
    assert_eq!((cmd.method.as_str(), cmd.child_session_id.as_deref()), ("Target.detachFromTarget", None));
    assert_eq!(cmd.params.as_ref().unwrap().get(), r#"{"sessionId":"W1"}"#);
    let step = h.ext(FromExtension::Event(Event {
        tab_id: 1,
        child_session_id: None,
        method: "Target.detachedFromTarget".into(),
        params: raw(r#"{"sessionId":"W1","targetId":"W"}"#),
    }));
    assert!(step.client.is_empty(), "Chrome's own detach reaches no one a second time");
}

// ---- service and shared workers of agents' pages ----

/// A worker of agent `agent`'s pages, under the extension's handle `handle`.
fn worker(handle: TabId, agent: &str, kind: TargetKind) -> TabInfo {
    TabInfo {
        target_id: format!("WORKER{}", -handle),
        url: "http://127.0.0.1:8000/sw.js".into(),
        title: String::new(),
        kind,
        ..agent_tab(handle, agent, false)
    }
}

#[test]
fn a_worker_is_its_agents_target_only_discovered_auto_attached_and_listed() {
    let mut h = Harness::with_tabs(&[]);
    h.ext(FromExtension::TabShared(agent_tab(1, "a", true)));
    for (conn, agent) in [(1, "a"), (2, "a"), (3, "b")] {
        h.connect_as(conn, agent);
    }
    // puppeteer: discovery, and root auto-attach of everything but pages.
    h.puppeteer_attach(1, 1);
    h.playwright_attach(2);
    h.send(3, json!({"id": 1, "method": "Target.setDiscoverTargets", "params": {"discover": true}}));
    h.playwright_attach(3);
    let step = h.ext(FromExtension::TabShared(worker(-1, "a", TargetKind::ServiceWorker)));
    assert_eq!(step.methods(1), ["Target.targetCreated", "Target.attachedToTarget"], "one target, no tab");
    assert_eq!(step.to(1)[0]["params"]["targetInfo"]["type"], "service_worker");
    assert_eq!(step.to(1)[1]["params"]["targetInfo"]["targetId"], "WORKER1");
    assert!(step.to(1)[1].get("sessionId").is_none(), "attached at the root");
    assert_eq!(step.methods(2), ["Target.attachedToTarget"]);
    assert!(step.to(3).is_empty(), "another agent never hears of it");
    let step = h.send(1, json!({"id": 9, "method": "Target.getTargets"}));
    let types: Vec<&Value> =
        step.only_reply(1)["result"]["targetInfos"].as_array().unwrap().iter().map(|t| &t["type"]).collect();
    assert_eq!(types, [&json!("page"), &json!("service_worker")]);
    let step = h.send(3, json!({"id": 9, "method": "Target.attachToTarget", "params": {"targetId": "WORKER1", "flatten": true}}));
    assert_eq!(step.only_reply(3)["error"]["message"], "No target with given id found");
    // A filter that leaves workers out is honoured.
    h.connect_as(4, "a");
    let step = h.send(4, json!({"id": 1, "method": "Target.setAutoAttach", "params": {"autoAttach": true, "flatten": true, "filter": [{"type": "page"}]}}));
    assert_eq!(step.methods(4), ["Target.attachedToTarget", "reply#1"]);
    assert_eq!(step.to(4)[0]["params"]["targetInfo"]["type"], "page");
}

#[test]
fn a_worker_is_attached_by_id_runs_commands_hears_events_and_ends() {
    let mut h = Harness::with_tabs(&[]);
    h.ext(FromExtension::TabShared(worker(-2, "a", TargetKind::SharedWorker)));
    h.connect_as(1, "a");
    h.send(1, json!({"id": 1, "method": "Target.setDiscoverTargets", "params": {"discover": true}}));
    let step = h.send(1, json!({"id": 2, "method": "Target.attachToTarget", "params": {"targetId": "WORKER2", "flatten": true}}));
    assert_eq!(step.methods(1), ["Target.attachedToTarget", "reply#2"]);
    assert_eq!(step.to(1)[0]["params"]["targetInfo"]["type"], "shared_worker");
    let session = step.to(1)[1]["result"]["sessionId"].as_str().unwrap().to_owned();
    let step = h.send(1, json!({"id": 3, "sessionId": session, "method": "Runtime.evaluate", "params": {"expression": "self.name"}}));
    let cmd = step.commands()[0];
    assert_eq!((cmd.tab_id, cmd.child_session_id.as_deref()), (-2, None));
    // Focus emulation is a page's: a worker session's call reaches the worker.
    let step = h.send(1, json!({"id": 4, "sessionId": session, "method": "Emulation.setFocusEmulationEnabled", "params": {"enabled": true}}));
    assert_eq!(step.commands().len(), 1);
    let step = h.ext(FromExtension::Event(Event {
        tab_id: -2,
        child_session_id: None,
        method: "Inspector.workerScriptLoaded".into(),
        params: raw("{}"),
    }));
    assert_eq!(step.to(1)[0]["sessionId"], session);
    let step = h.ext(FromExtension::TabUnshared { tab_id: -2, reason: UnshareReason::Closed });
    assert_eq!(step.methods(1), ["Target.detachedFromTarget", "Target.targetDestroyed"]);
    assert_eq!(step.to(1)[1]["params"]["targetId"], "WORKER2");
}

#[test]
fn a_worker_whose_last_session_leaves_is_let_go_and_never_counts_as_a_tab() {
    let mut h = Harness::with_tabs(&[]);
    h.ext(FromExtension::TabShared(worker(-3, "a", TargetKind::ServiceWorker)));
    h.connect_as(1, "a");
    let step = h.send(1, json!({"id": 1, "method": "Target.attachToTarget", "params": {"targetId": "WORKER3", "flatten": true}}));
    let session = step.to(1)[1]["result"]["sessionId"].clone();
    let step =
        h.send(1, json!({"id": 2, "method": "Target.detachFromTarget", "params": {"sessionId": session}}));
    assert!(
        step.extension.iter().any(|f| matches!(f, ToExtension::ResetTab { tab_id: -3 })),
        "the extension detaches, so the worker may end as Chrome would end it"
    );
    // Not a tab: the agent's tab list and the human's view leave it out.
    assert_eq!(h.core.visible_tabs(&AgentId::new("a")).count(), 0);
}

// ---- tabs coming and going ----

#[test]
fn a_tab_shared_later_is_announced_and_auto_attached() {
    let mut h = Harness::with_tabs(&[]);
    h.connect(1);
    h.connect(2);
    h.send(1, json!({"id": 1, "method": "Target.setDiscoverTargets", "params": {"discover": true}}));
    h.send(1, json!({"id": 2, "method": "Target.setAutoAttach", "params": {"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": true, "filter": [{"type": "page", "exclude": true}, {}]}}));
    h.playwright_attach(2);
    let step = h.ext(FromExtension::TabShared(tab_info(5)));
    assert_eq!(step.methods(1), ["Target.targetCreated", "Target.targetCreated", "Target.attachedToTarget"]);
    assert_eq!(step.to(1)[2]["params"]["targetInfo"]["type"], "tab");
    assert_eq!(step.methods(2), ["Target.attachedToTarget"]);
    assert_eq!(step.to(2)[0]["params"]["targetInfo"]["type"], "page");
}

#[test]
fn a_closed_tab_detaches_every_session_then_destroys_its_targets() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    h.connect(2);
    let (tab_session, page_session) = h.puppeteer_attach(1, 1);
    let pw_page = h.playwright_attach(2)[0].clone();
    let pending =
        h.send(2, json!({"id": 77, "sessionId": pw_page, "method": "Runtime.evaluate"})).commands()[0].id;
    let step = h.ext(FromExtension::TabUnshared { tab_id: 1, reason: UnshareReason::Closed });
    assert_eq!(
        step.methods(1),
        [
            "Target.detachedFromTarget",
            "Target.detachedFromTarget",
            "Target.targetDestroyed",
            "Target.targetDestroyed"
        ]
    );
    let f = step.to(1);
    assert_eq!(
        (&f[0]["sessionId"], &f[0]["params"]["sessionId"], &f[0]["params"]["targetId"]),
        (&json!(tab_session), &json!(page_session), &json!("PAGE1"))
    );
    assert!(f[1].get("sessionId").is_none());
    assert_eq!(
        (&f[1]["params"]["sessionId"], &f[1]["params"]["targetId"]),
        (&json!(tab_session), &json!("TAB-PAGE1"))
    );
    assert_eq!(f[2]["params"]["targetId"], "PAGE1");
    assert_eq!(step.methods(2), ["Target.detachedFromTarget"], "no discovery, no targetDestroyed");
    assert_eq!(step.to(2)[0]["params"]["targetId"], "PAGE1");
    // The extension still answers the command that was in flight; the client hears it once.
    let step = h.ext(FromExtension::CommandResult(CommandResult::err(
        pending,
        CdpError { code: -32000, message: "Detached while handling command.".into(), data: None },
    )));
    assert_eq!(step.only_reply(2)["id"], 77);
    let step = h.send(1, json!({"id": 9, "sessionId": page_session, "method": "Page.enable"}));
    assert_eq!(step.only_reply(1)["error"]["message"], "Session with given id not found.");
    let step = h.send(1, json!({"id": 10, "method": "Target.getTargets"}));
    assert_eq!(step.only_reply(1)["result"]["targetInfos"], json!([]));
}

#[test]
fn tab_changes_reach_discovering_and_attached_clients() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    h.connect(2);
    h.connect(3);
    h.send(1, json!({"id": 1, "method": "Target.setDiscoverTargets", "params": {"discover": true}}));
    h.playwright_attach(2);
    let mut info = tab_info(1);
    info.url = "http://127.0.0.1:8000/next.html".into();
    let step = h.ext(FromExtension::TabChanged(info.clone()));
    // The page's info only: Chrome never reports a tab target's navigations.
    assert_eq!(step.methods(1), ["Target.targetInfoChanged"]);
    assert_eq!(step.to(1)[0]["params"]["targetInfo"]["type"], "page");
    assert_eq!(step.to(1)[0]["params"]["targetInfo"]["url"], "http://127.0.0.1:8000/next.html");
    assert_eq!(step.to(2).len(), 1);
    assert!(step.to(3).is_empty());
    let same = h.ext(FromExtension::TabChanged(info.clone()));
    assert!(same.client.is_empty(), "no change, no event");
    info.window_id = 7;
    let moved = h.ext(FromExtension::TabChanged(info));
    assert!(moved.client.is_empty(), "nothing a client sees changed: {:?}", moved.client);
}

#[test]
fn a_client_detach_leaves_the_tab_shared() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    let page = h.playwright_attach(1)[0].clone();
    let step =
        h.send(1, json!({"id": 4, "method": "Target.detachFromTarget", "params": {"sessionId": page}}));
    assert_eq!(step.methods(1), ["Target.detachedFromTarget", "reply#4"]);
    assert_eq!(step.to(1)[0]["params"]["targetId"], "PAGE1");
    assert!(matches!(step.extension[..], [ToExtension::ResetTab { tab_id: 1 }]), "{:?}", step.extension);
    let step = h.ext(FromExtension::Event(Event {
        tab_id: 1,
        child_session_id: None,
        method: "Page.loadEventFired".into(),
        params: raw("{}"),
    }));
    assert!(step.client.is_empty());
    let step =
        h.send(1, json!({"id": 5, "method": "Target.detachFromTarget", "params": {"sessionId": page}}));
    assert_eq!(step.only_reply(1)["error"]["message"], "No session with given id");
    let step = h.send(1, json!({"id": 6, "method": "Target.getTargets"}));
    assert_eq!(step.only_reply(1)["result"]["targetInfos"][0]["targetId"], "PAGE1");
}

#[test]
fn detaching_a_tab_session_by_target_id_detaches_its_page_first() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    let (tab_session, page_session) = h.puppeteer_attach(1, 1);
    let step = h
        .send(1, json!({"id": 20, "method": "Target.detachFromTarget", "params": {"targetId": "TAB-PAGE1"}}));
    assert_eq!(step.methods(1), ["Target.detachedFromTarget", "Target.detachedFromTarget", "reply#20"]);
    assert_eq!(step.to(1)[0]["params"]["sessionId"], page_session);
    assert_eq!(step.to(1)[1]["params"]["sessionId"], tab_session);
}

#[test]
fn extension_loss_fails_pending_commands_and_detaches_tabs() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    let page = h.playwright_attach(1)[0].clone();
    h.send(1, json!({"id": 30, "sessionId": page, "method": "Runtime.evaluate"}));
    h.send(1, json!({"id": 31, "sessionId": page, "method": "Runtime.evaluate"}));
    h.core.extension_disconnected(h.now);
    let step = h.drain();
    assert_eq!(step.methods(1), ["reply#30", "reply#31", "Target.detachedFromTarget"]);
    assert!(step.to(1)[0]["error"]["message"].as_str().unwrap().contains("disconnected"));
    assert_eq!(step.to(1)[0]["sessionId"], page);
    let step = h.send(1, json!({"id": 32, "sessionId": page, "method": "Runtime.evaluate"}));
    assert_eq!(step.only_reply(1)["error"]["code"], -32001);
    // Until it reconnects, there is no browser to describe, and clients are told why.
    let step = h.send(1, json!({"id": 33, "method": "Browser.getVersion"}));
    assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("not connected"));
    // It comes back with the tab re-attached; the auto-attaching client gets it again.
    h.core.extension_connected(h.now, hello(&[1])).unwrap();
    let step = h.drain();
    assert_eq!(step.methods(1), ["Target.attachedToTarget"]);
}

#[test]
fn hello_reconciles_the_tab_list_and_checks_the_protocol() {
    let mut h = Harness::with_tabs(&[1, 2]);
    h.connect(1);
    h.playwright_attach(1);
    h.core.extension_connected(h.now, hello(&[2, 3])).unwrap();
    let step = h.drain();
    assert_eq!(step.methods(1), ["Target.detachedFromTarget", "Target.attachedToTarget"]);
    assert_eq!(step.to(1)[0]["params"]["targetId"], "PAGE1");
    assert_eq!(step.to(1)[1]["params"]["targetInfo"]["targetId"], "PAGE3");
    let mut old = hello(&[]);
    old.protocol_version = 999;
    let reason = h.core.extension_connected(h.now, old).unwrap_err();
    assert!(reason.contains("999"), "{reason}");
}

#[test]
fn a_disconnected_client_is_forgotten_and_others_carry_on() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    h.connect(2);
    let p1 = h.playwright_attach(1)[0].clone();
    let p2 = h.playwright_attach(2)[0].clone();
    h.send(1, json!({"id": 7, "sessionId": p1, "method": "Page.enable"}));
    h.send(2, json!({"id": 7, "sessionId": p2, "method": "Page.enable"}));
    let id = h.send(1, json!({"id": 1, "sessionId": p1, "method": "Runtime.evaluate"})).commands()[0].id;
    h.core.client_disconnected(h.now, 1);
    let step = h.ext(FromExtension::CommandResult(CommandResult::ok(id, raw("{}"))));
    assert!(step.client.is_empty());
    let step = h.ext(FromExtension::Event(Event {
        tab_id: 1,
        child_session_id: None,
        method: "Page.frameNavigated".into(),
        params: raw("{}"),
    }));
    assert_eq!(step.client.len(), 1);
    assert_eq!(step.to(2)[0]["sessionId"], p2);
    let step = h.send(1, json!({"id": 2, "method": "Browser.getVersion"}));
    assert!(step.client.is_empty(), "frames of a closed connection are ignored");
}

#[test]
fn a_page_endpoint_connection_talks_to_its_tab_without_session_ids() {
    let mut h = Harness::with_tabs(&[1]);
    h.core.client_connected(h.now, 4, AgentId::new("default"), Root::Page(1));
    let step = h.send(4, json!({"id": 1, "method": "Runtime.evaluate", "params": {"expression": "1"}}));
    let cmd = step.commands()[0];
    assert_eq!(cmd.tab_id, 1);
    let id = cmd.id;
    let step = h.ext(FromExtension::CommandResult(CommandResult::ok(id, raw("{}"))));
    assert!(step.only_reply(4).get("sessionId").is_none());
    h.send(4, json!({"id": 2, "method": "Page.enable"}));
    let step = h.ext(FromExtension::Event(Event {
        tab_id: 1,
        child_session_id: None,
        method: "Page.loadEventFired".into(),
        params: raw("{}"),
    }));
    assert_eq!(step.to(4).len(), 1);
    assert!(step.to(4)[0].get("sessionId").is_none());
}

// ---- bad input ----

#[test]
fn malformed_frames_get_errors_and_the_connection_lives_on() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    let cases: [(&str, Value); 5] = [
        ("{not json", json!(null)),
        ("[]", json!(null)),
        (r#"{"method":"Browser.getVersion"}"#, json!(null)),
        (r#"{"id":"1","method":"Browser.getVersion"}"#, json!(null)),
        (r#"{"id":4,"params":{}}"#, json!(4)),
    ];
    for (text, id) in cases {
        let step = h.send_text(1, text);
        assert_eq!(step.client.len(), 1, "{text}");
        let reply = &step.client[0].1;
        assert_eq!(reply.get("id").cloned().unwrap_or(json!(null)), id, "{text}");
        assert!(reply["error"]["code"].as_i64().unwrap() < 0, "{text}");
    }
    let step = h.send(1, json!({"id": 5, "sessionId": "NOPE", "method": "Runtime.evaluate"}));
    let reply = step.only_reply(1);
    assert_eq!(reply["error"], json!({"code": -32001, "message": "Session with given id not found."}));
    // As Chromium: no sessionId. Puppeteer finds the waiting session by the id, and Playwright
    // drops a -32001 it cannot place.
    assert!(reply.get("sessionId").is_none(), "{reply}");
    let step = h.send(1, json!({"id": 6, "method": "Browser.getVersion"}));
    assert!(step.only_reply(1)["result"].is_object());
}

#[test]
fn params_that_are_not_an_object_never_reach_the_tab() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    h.connect(2);
    let p1 = h.playwright_attach(1)[0].clone();
    let p2 = h.playwright_attach(2)[0].clone();
    for (id, params) in [(1, "5"), (2, "true"), (3, "\"s\""), (4, "[]"), (5, "[1]")] {
        let text =
            format!(r#"{{"id":{id},"method":"Runtime.evaluate","params":{params},"sessionId":"{p1}"}}"#);
        let step = h.send_text(1, &text);
        let reply = step.only_reply(1);
        assert_eq!(reply["id"], id, "{text}");
        let code = if params.starts_with('[') { -32602 } else { -32600 };
        assert_eq!(reply["error"]["code"], code, "{text}");
        assert!(step.extension.is_empty(), "{text} must not reach the extension");
    }
    // An array on `Runtime.enable` changes nobody's domain state.
    let text = format!(r#"{{"id":6,"method":"Runtime.enable","params":[],"sessionId":"{p1}"}}"#);
    assert_eq!(h.send_text(1, &text).only_reply(1)["error"]["code"], -32602);
    let step = h.send(2, json!({"id": 7, "sessionId": p2, "method": "Runtime.enable"}));
    assert_eq!(step.commands()[0].method, "Runtime.enable", "the tab's Runtime is still off");
    // `null` is as if absent, and a method without parameters ignores an array, as in Chrome.
    let step =
        h.send_text(1, &format!(r#"{{"id":8,"method":"Page.reload","params":null,"sessionId":"{p1}"}}"#));
    assert!(step.commands()[0].params.is_none());
    let text =
        format!(r#"{{"id":9,"method":"Runtime.runIfWaitingForDebugger","params":[],"sessionId":"{p1}"}}"#);
    assert_eq!(h.send_text(1, &text).only_reply(1)["result"], json!({}));
}

#[test]
fn refused_frames_take_no_in_flight_slot() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    let page = h.playwright_attach(1)[0].clone();
    for id in 0..(MAX_IN_FLIGHT_PER_CLIENT as i64 + 100) {
        let text = format!(r#"{{"id":{id},"method":"Runtime.evaluate","params":[],"sessionId":"{page}"}}"#);
        assert_eq!(h.send_text(1, &text).only_reply(1)["error"]["code"], -32602);
    }
    let step = h.send(1, json!({"id": 5000, "sessionId": page, "method": "Runtime.evaluate"}));
    assert_eq!(step.commands().len(), 1);
}

#[test]
fn browser_methods_say_when_the_extension_is_not_connected() {
    let mut h = Harness::new();
    h.connect(1);
    for (id, method, params) in [
        (1, "Target.getTargets", json!({})),
        (2, "Target.setDiscoverTargets", json!({"discover": true})),
        (3, "Target.setAutoAttach", json!({"autoAttach": true, "flatten": true})),
        (4, "Target.getBrowserContexts", json!({})),
    ] {
        let step = h.send(1, json!({"id": id, "method": method, "params": params}));
        let error = &step.only_reply(1)["error"];
        assert_eq!(error["code"], -32000, "{method}");
        assert!(
            error["message"].as_str().unwrap().contains("extension is not connected"),
            "{method}: {error}"
        );
    }
    // Detaching one's own session needs no browser.
    let step = h.send(1, json!({"id": 5, "method": "Target.attachToBrowserTarget"}));
    assert_eq!(step.only_reply(1)["error"]["code"], -32000);
    h.core.extension_connected(h.now, hello(&[])).unwrap();
    let step = h.send(1, json!({"id": 6, "method": "Target.attachToBrowserTarget"}));
    let session = step.to(1).last().unwrap()["result"]["sessionId"].clone();
    h.core.extension_disconnected(h.now);
    let step =
        h.send(1, json!({"id": 7, "method": "Target.detachFromTarget", "params": {"sessionId": session}}));
    assert_eq!(step.methods(1), ["Target.detachedFromTarget", "reply#7"]);
    assert_eq!(step.to(1)[1]["result"], json!({}));
}

#[test]
fn page_sockets_close_when_the_extension_goes_away() {
    let mut h = Harness::with_tabs(&[3]);
    h.core.client_connected(h.now, 1, AgentId::new("default"), Root::Page(3));
    h.core.client_connected(h.now, 2, AgentId::new("default"), Root::Browser);
    h.core.extension_disconnected(h.now);
    let step = h.drain();
    assert_eq!(step.closed, [1]);
    let step = h.send(2, json!({"id": 1, "method": "Target.getTargets"}));
    assert!(step.only_reply(2)["error"]["message"].as_str().unwrap().contains("not connected"));
}

#[test]
fn the_last_session_leaving_a_tab_resets_its_debugger_session() {
    let mut h = Harness::with_tabs(&[1, 2]);
    h.connect(1);
    h.connect(2);
    h.playwright_attach(1);
    h.send(2, json!({"id": 1, "method": "Target.setAutoAttach", "params": {"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": true, "filter": [{"type": "page", "exclude": true}, {}]}}));
    // Connection 2 has only tab sessions, no page sessions: it holds no debugger state.
    h.core.client_disconnected(h.now, 2);
    assert!(h.drain().extension.is_empty());
    h.connect(3);
    h.puppeteer_attach(3, 1);
    h.core.client_disconnected(h.now, 1);
    let step = h.drain();
    assert!(
        matches!(step.extension[..], [ToExtension::ResetTab { tab_id: 2 }]),
        "tab 1 still has a client: {:?}",
        step.extension
    );
    h.core.client_disconnected(h.now, 3);
    let step = h.drain();
    assert!(matches!(step.extension[..], [ToExtension::ResetTab { tab_id: 1 }]), "{:?}", step.extension);
}

#[test]
fn a_closed_tab_or_a_lost_extension_is_not_reset() {
    let mut h = Harness::with_tabs(&[1, 2]);
    h.connect(1);
    h.playwright_attach(1);
    let step = h.ext(FromExtension::TabUnshared { tab_id: 1, reason: UnshareReason::Closed });
    assert!(step.extension.is_empty());
    h.core.extension_disconnected(h.now);
    h.core.client_disconnected(h.now, 1);
    assert!(h.drain().extension.is_empty());
}

// ---- per-session domain state ----

fn runtime_event(method: &str, params: &str) -> FromExtension {
    FromExtension::Event(Event {
        tab_id: 1,
        child_session_id: None,
        method: method.into(),
        params: raw(params),
    })
}

/// Sends `method` on `session` and answers it `{}` from the tab if it was forwarded.
fn call(h: &mut Harness, conn: ConnId, session: &str, id: i64, method: &str) -> Step {
    let step = h.send(conn, json!({"id": id, "sessionId": session, "method": method}));
    if step.client.is_empty() {
        let request = step.commands()[0].id;
        h.ext(FromExtension::CommandResult(CommandResult::ok(request, raw("{}"))))
    } else {
        step
    }
}

#[test]
fn a_domains_events_go_only_to_sessions_that_enabled_it() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    h.connect(2);
    let p1 = h.playwright_attach(1)[0].clone();
    let p2 = h.playwright_attach(2)[0].clone();
    call(&mut h, 1, &p1, 1, "Network.enable");
    let step = h.ext(runtime_event("Network.requestWillBeSent", r#"{"requestId":"1"}"#));
    assert_eq!(step.to(1).len(), 1);
    assert!(step.to(2).is_empty(), "session 2 never enabled Network");
    let step = h.ext(runtime_event("Target.targetCrashed", "{}"));
    assert_eq!((step.to(1).len(), step.to(2).len()), (1, 1), "ungated events go to everyone");
    let _ = p2;
}

#[test]
fn a_disable_reaches_the_tab_only_when_no_other_session_wants_the_domain() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    h.connect(2);
    let p1 = h.playwright_attach(1)[0].clone();
    let p2 = h.playwright_attach(2)[0].clone();
    call(&mut h, 1, &p1, 1, "Log.enable");
    call(&mut h, 2, &p2, 1, "Log.enable");
    let step = h.send(2, json!({"id": 2, "sessionId": p2, "method": "Log.disable"}));
    assert!(step.extension.is_empty(), "session 1 still has Log on");
    assert_eq!(step.only_reply(2)["result"], json!({}));
    let step = h.ext(runtime_event("Log.entryAdded", r#"{"entry":{}}"#));
    assert_eq!((step.to(1).len(), step.to(2).len()), (1, 0));
    let step = h.send(1, json!({"id": 3, "sessionId": p1, "method": "Log.disable"}));
    assert_eq!(step.commands()[0].method, "Log.disable", "the last one out turns it off");
}

#[test]
fn a_late_runtime_enable_gets_the_live_contexts_before_its_reply() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    h.connect(2);
    let p1 = h.playwright_attach(1)[0].clone();
    let p2 = h.playwright_attach(2)[0].clone();
    let id = h.send(1, json!({"id": 1, "sessionId": p1, "method": "Runtime.enable"})).commands()[0].id;
    // Chrome reports existing contexts to the first enable itself.
    let step = h.ext(runtime_event(
        "Runtime.executionContextCreated",
        r#"{"context":{"id":1,"auxData":{"isDefault":true}}}"#,
    ));
    assert_eq!((step.to(1).len(), step.to(2).len()), (1, 0));
    h.ext(runtime_event("Runtime.executionContextCreated", r#"{"context":{"id":2,"name":"utility"}}"#));
    h.ext(runtime_event("Runtime.executionContextCreated", r#"{"context":{"id":3}}"#));
    h.ext(runtime_event("Runtime.executionContextDestroyed", r#"{"executionContextId":3}"#));
    let step = h.ext(FromExtension::CommandResult(CommandResult::ok(id, raw("{}"))));
    assert_eq!(step.methods(1), ["reply#1"], "the first enable is not replayed to");

    let step = call(&mut h, 2, &p2, 5, "Runtime.enable");
    assert_eq!(
        step.methods(2),
        ["Runtime.executionContextCreated", "Runtime.executionContextCreated", "reply#5"]
    );
    assert_eq!(step.to(2)[0]["params"]["context"]["id"], 1);
    assert_eq!(step.to(2)[1]["params"]["context"]["id"], 2);
    assert_eq!(step.to(2)[0]["sessionId"], p2);
    // Enabling twice in one session reports nothing new, as in Chrome.
    let step = call(&mut h, 2, &p2, 6, "Runtime.enable");
    assert_eq!(step.methods(2), ["reply#6"]);
    // A navigation clears the contexts for everyone who listens.
    let step = h.ext(runtime_event("Runtime.executionContextsCleared", "{}"));
    assert_eq!((step.to(1).len(), step.to(2).len()), (1, 1));
    h.connect(3);
    let p3 = h.playwright_attach(3)[0].clone();
    let step = call(&mut h, 3, &p3, 1, "Runtime.enable");
    assert_eq!(step.methods(3), ["reply#1"]);
}

#[test]
fn after_a_reset_the_tab_reports_its_own_contexts_again() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    let p1 = h.playwright_attach(1)[0].clone();
    call(&mut h, 1, &p1, 1, "Runtime.enable");
    h.ext(runtime_event("Runtime.executionContextCreated", r#"{"context":{"id":1}}"#));
    h.core.client_disconnected(h.now, 1);
    h.drain();
    h.connect(2);
    let p2 = h.playwright_attach(2)[0].clone();
    let step = call(&mut h, 2, &p2, 1, "Runtime.enable");
    assert_eq!(step.methods(2), ["reply#1"], "a fresh debugger session reports contexts itself");
}

#[test]
fn a_page_socket_is_closed_when_its_tab_goes_away() {
    let mut h = Harness::with_tabs(&[1, 2]);
    h.core.client_connected(h.now, 4, AgentId::new("default"), Root::Page(1));
    h.core.client_connected(h.now, 5, AgentId::new("default"), Root::Page(2));
    let step = h.ext(FromExtension::TabUnshared { tab_id: 1, reason: UnshareReason::Closed });
    assert_eq!(step.methods(4), ["Inspector.detached"]);
    assert_eq!(step.closed, [4]);
    assert!(step.to(5).is_empty());
    let step = h.send(4, json!({"id": 1, "method": "Runtime.evaluate"}));
    assert!(step.client.is_empty(), "the connection is gone");
}

#[test]
fn attach_to_target_adds_a_session_on_the_same_tab_before_its_reply() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    let (_, primary) = h.puppeteer_attach(1, 1);
    let step = h.send(1, json!({"id": 20, "method": "Target.attachToTarget", "params": {"targetId": "PAGE1", "flatten": true}}));
    assert_eq!(step.methods(1), ["Target.attachedToTarget", "reply#20"]);
    let alias = step.to(1)[0]["params"]["sessionId"].as_str().unwrap().to_owned();
    assert_ne!(alias, primary, "a new id: clients key sessions by id");
    assert!(step.to(1)[0].get("sessionId").is_none(), "announced on the session that asked");
    assert_eq!(step.to(1)[0]["params"]["targetInfo"]["targetId"], "PAGE1");
    assert_eq!(step.to(1)[1]["result"]["sessionId"], alias);
    let step = h.send(1, json!({"id": 21, "sessionId": alias, "method": "DOM.getDocument"}));
    assert_eq!(step.commands()[0].tab_id, 1);
    let step = h.send(
        1,
        json!({"id": 22, "method": "Target.attachToTarget", "params": {"targetId": "NOPE", "flatten": true}}),
    );
    assert_eq!(step.only_reply(1)["error"]["code"], -32602);
    let step =
        h.send(1, json!({"id": 23, "method": "Target.attachToTarget", "params": {"targetId": "PAGE1"}}));
    assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("flatten"));
}

#[test]
fn an_extra_session_keeps_its_own_domains_and_violation_reports() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    let (_, primary) = h.puppeteer_attach(1, 1);
    call(&mut h, 1, &primary, 30, "Log.enable");
    let step = h.send(1, json!({"id": 31, "method": "Target.attachToTarget", "params": {"targetId": "PAGE1", "flatten": true}}));
    let alias = step.to(1)[1]["result"]["sessionId"].as_str().unwrap().to_owned();
    call(&mut h, 1, &alias, 32, "Log.enable");
    call(&mut h, 1, &alias, 33, "Log.startViolationsReport");
    call(&mut h, 1, &alias, 34, "Debugger.enable");
    let step =
        h.ext(runtime_event("Log.entryAdded", r#"{"entry":{"source":"violation","text":"long task"}}"#));
    assert_eq!(step.client.len(), 1);
    assert_eq!(step.to(1)[0]["sessionId"], alias, "violations only for the session that asked");
    let step = h.ext(runtime_event("Log.entryAdded", r#"{"entry":{"source":"network"}}"#));
    assert_eq!(step.client.len(), 2, "other log entries for both");
    let step = h.ext(runtime_event("Debugger.scriptParsed", r#"{"scriptId":"1"}"#));
    assert_eq!(step.client.len(), 1);
    assert_eq!(step.to(1)[0]["sessionId"], alias);
    // The alias's Log.disable must not silence the primary.
    let step = h.send(1, json!({"id": 35, "sessionId": alias, "method": "Log.disable"}));
    assert!(step.extension.is_empty());
    let step = h.ext(runtime_event("Log.entryAdded", r#"{"entry":{"source":"network"}}"#));
    assert_eq!(step.client.len(), 1);
    assert_eq!(step.to(1)[0]["sessionId"], primary);
}

#[test]
fn a_leaving_extra_session_turns_off_only_what_it_alone_had_on() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    let (_, primary) = h.puppeteer_attach(1, 1);
    call(&mut h, 1, &primary, 40, "Runtime.enable");
    let step = h.send(1, json!({"id": 41, "method": "Target.attachToTarget", "params": {"targetId": "PAGE1", "flatten": true}}));
    let alias = step.to(1)[1]["result"]["sessionId"].as_str().unwrap().to_owned();
    call(&mut h, 1, &alias, 42, "Runtime.enable");
    call(&mut h, 1, &alias, 43, "Debugger.enable");
    call(&mut h, 1, &alias, 44, "Log.startViolationsReport");
    let step =
        h.send(1, json!({"id": 45, "method": "Target.detachFromTarget", "params": {"sessionId": alias}}));
    assert_eq!(step.methods(1), ["Target.detachedFromTarget", "reply#45"]);
    assert_eq!(step.to(1)[0]["params"]["targetId"], "PAGE1");
    let housekeeping: Vec<&str> = step.commands().iter().map(|c| c.method.as_str()).collect();
    assert_eq!(
        housekeeping,
        ["Debugger.disable", "Log.stopViolationsReport"],
        "Runtime stays on for the primary"
    );
    // Their answers go to nobody.
    let ids: Vec<u64> = step.commands().iter().map(|c| c.id).collect();
    for id in ids {
        assert!(h.ext(FromExtension::CommandResult(CommandResult::ok(id, raw("{}")))).client.is_empty());
    }
}

#[test]
fn playwright_new_cdp_session_goes_through_a_browser_session() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    h.playwright_attach(1);
    let step = h.send(1, json!({"id": 50, "method": "Target.attachToBrowserTarget"}));
    assert_eq!(step.methods(1), ["Target.attachedToTarget", "reply#50"]);
    assert_eq!(step.to(1)[0]["params"]["targetInfo"]["type"], "browser");
    let browser_session = step.to(1)[1]["result"]["sessionId"].as_str().unwrap().to_owned();
    let step = h.send(1, json!({"id": 51, "sessionId": browser_session, "method": "Browser.getVersion"}));
    assert!(step.only_reply(1)["result"]["product"].is_string());
    let step = h.send(1, json!({"id": 52, "sessionId": browser_session, "method": "Target.attachToTarget", "params": {"targetId": "PAGE1", "flatten": true}}));
    assert_eq!(step.methods(1), ["Target.attachedToTarget", "reply#52"]);
    assert_eq!(step.to(1)[0]["sessionId"], browser_session, "announced on the browser session");
    let alias = step.to(1)[1]["result"]["sessionId"].as_str().unwrap().to_owned();
    // Closing the tab detaches the alias too, on the browser session.
    let step = h.ext(FromExtension::TabUnshared { tab_id: 1, reason: UnshareReason::Closed });
    let detached: Vec<(&Value, &Value)> = step
        .to(1)
        .iter()
        .filter(|f| f["method"] == "Target.detachedFromTarget")
        .map(|f| (&f["sessionId"], &f["params"]["sessionId"]))
        .collect();
    assert!(detached.contains(&(&json!(browser_session), &json!(alias))), "{detached:?}");
    assert!(step.extension.is_empty(), "no housekeeping for a tab that is gone");
}

// ---- review findings, kept as regression tests ----

/// Turns auto-attach on for a page (or child) session (answered by the core: Chrome's is on).
fn auto_attach_on(h: &mut Harness, conn: ConnId, session: &str) {
    let step = h.send(conn, json!({"id": 900, "sessionId": session, "method": "Target.setAutoAttach", "params": {"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": false}}));
    assert_eq!(step.to(conn).last().unwrap()["id"], 900);
}

/// A session enables Runtime (Chrome answers at once).
fn runtime_on(h: &mut Harness, conn: ConnId, session: &str) {
    let step = h.send(conn, json!({"id": 901, "sessionId": session, "method": "Runtime.enable"}));
    let id = step.commands()[0].id;
    h.ext(FromExtension::CommandResult(CommandResult::ok(id, raw("{}"))));
}

fn child_attached(tab: TabId, source: Option<&str>, child: &str) -> FromExtension {
    FromExtension::Event(Event {
        tab_id: tab,
        child_session_id: source.map(str::to_owned),
        method: "Target.attachedToTarget".into(),
        params: raw(&format!(
            r#"{{"sessionId":"{child}","targetInfo":{{"targetId":"T-{child}","type":"iframe","url":"http://x/"}},"waitingForDebugger":false}}"#
        )),
    })
}

#[test]
fn a_closed_page_socket_leaves_nothing_behind_on_other_tabs() {
    let mut h = Harness::with_tabs(&[1, 2]);
    h.core.client_connected(h.now, 4, AgentId::new("default"), Root::Page(1));
    let step = h.send(
        4,
        json!({"id": 1, "method": "Target.attachToTarget", "params": {"targetId": "PAGE2", "flatten": true}}),
    );
    assert_eq!(step.methods(4), ["Target.attachedToTarget", "reply#1"]);
    h.ext(child_attached(2, None, "CHILD1"));
    let step = h.ext(FromExtension::TabUnshared { tab_id: 1, reason: UnshareReason::Closed });
    assert_eq!(step.closed, [4]);
    assert!(matches!(step.extension[..], [ToExtension::ResetTab { tab_id: 2 }]), "{:?}", step.extension);
    // Chrome later reports the child gone: nobody to tell, and no panic.
    let step = h.ext(FromExtension::Event(Event {
        tab_id: 2,
        child_session_id: None,
        method: "Target.detachedFromTarget".into(),
        params: raw(r#"{"sessionId":"CHILD1","targetId":"T-CHILD1"}"#),
    }));
    assert!(step.client.is_empty());
}

#[test]
fn a_page_socket_whose_tab_is_already_gone_closes_at_once() {
    let mut h = Harness::with_tabs(&[1]);
    h.core.client_connected(h.now, 4, AgentId::new("default"), Root::Page(9));
    let step = h.drain();
    assert_eq!(step.methods(4), ["Inspector.detached"]);
    assert_eq!(step.closed, [4]);
}

#[test]
fn a_page_socket_for_another_agents_tab_closes_at_once() {
    // Tab 1 is the default agent's: an agent that looked it up before a hand-over gets nothing.
    let mut h = Harness::with_tabs(&[1]);
    h.core.client_connected(h.now, 4, AgentId::new("other"), Root::Page(1));
    let step = h.drain();
    assert_eq!(step.methods(4), ["Inspector.detached"]);
    assert_eq!(step.closed, [4]);
    h.core.client_connected(h.now, 5, AgentId::new("default"), Root::Page(1));
    assert!(h.drain().closed.is_empty(), "the owner's page socket stays");
}

#[test]
fn concurrent_runtime_enables_announce_each_context_once() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    h.connect(2);
    let p1 = h.playwright_attach(1)[0].clone();
    let p2 = h.playwright_attach(2)[0].clone();
    let a = h.send(1, json!({"id": 1, "sessionId": p1, "method": "Runtime.enable"})).commands()[0].id;
    let b = h.send(2, json!({"id": 1, "sessionId": p2, "method": "Runtime.enable"})).commands()[0].id;
    // Chrome answers the first enable with the existing context; both sessions are listening.
    let step = h.ext(runtime_event("Runtime.executionContextCreated", r#"{"context":{"id":1}}"#));
    assert_eq!((step.to(1).len(), step.to(2).len()), (1, 1));
    h.ext(FromExtension::CommandResult(CommandResult::ok(a, raw("{}"))));
    let step = h.ext(FromExtension::CommandResult(CommandResult::ok(b, raw("{}"))));
    assert_eq!(step.methods(2), ["reply#1"], "context 1 was already announced to session 2");
}

#[test]
fn contexts_seen_while_runtime_is_off_are_never_replayed() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    h.connect(2);
    let p1 = h.playwright_attach(1)[0].clone();
    let p2 = h.playwright_attach(2)[0].clone();
    call(&mut h, 1, &p1, 1, "Runtime.enable");
    call(&mut h, 1, &p1, 2, "Runtime.disable");
    // In flight when Runtime went off; its end will never be reported.
    h.ext(runtime_event("Runtime.executionContextCreated", r#"{"context":{"id":9}}"#));
    call(&mut h, 1, &p1, 3, "Runtime.enable");
    h.ext(runtime_event("Runtime.executionContextCreated", r#"{"context":{"id":1}}"#));
    let step = call(&mut h, 2, &p2, 4, "Runtime.enable");
    let replayed: Vec<&Value> =
        step.to(2).iter().filter_map(|f| f.get("params")).map(|p| &p["context"]["id"]).collect();
    assert_eq!(replayed, [&json!(1)]);
}

#[test]
fn a_child_cannot_become_its_own_ancestor() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    let page = h.playwright_attach(1)[0].clone();
    auto_attach_on(&mut h, 1, &page);
    h.ext(child_attached(1, None, "A"));
    runtime_on(&mut h, 1, "A");
    h.ext(child_attached(1, Some("A"), "A"));
    h.ext(child_attached(1, Some("A"), ""));
    h.ext(child_attached(1, None, "A")); // announced twice: still one session, events once
    let step = h.ext(FromExtension::Event(Event {
        tab_id: 1,
        child_session_id: Some("A".into()),
        method: "Runtime.consoleAPICalled".into(),
        params: raw("{}"),
    }));
    assert_eq!(step.client.len(), 1);
    let step = h.send(1, json!({"id": 1, "sessionId": page, "method": "Target.detachFromTarget", "params": {"sessionId": "A"}}));
    assert_eq!(step.methods(1), ["Target.detachedFromTarget", "reply#1"]);
    assert_eq!(step.to(1)[0]["params"]["targetId"], "T-A", "a child's detach names its target");
    let step = h.send(1, json!({"id": 2, "method": "Browser.getVersion"}));
    assert!(step.only_reply(1)["result"].is_object(), "the root session is intact");
}

#[test]
fn one_reset_per_tab_however_many_sessions_a_client_had_there() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    h.playwright_attach(1);
    h.send(
        1,
        json!({"id": 2, "method": "Target.attachToTarget", "params": {"targetId": "PAGE1", "flatten": true}}),
    );
    h.core.client_disconnected(h.now, 1);
    let step = h.drain();
    assert!(matches!(step.extension[..], [ToExtension::ResetTab { tab_id: 1 }]), "{:?}", step.extension);
}

#[test]
fn a_trace_goes_to_the_session_that_started_it() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    h.connect(2);
    let p1 = h.playwright_attach(1)[0].clone();
    h.playwright_attach(2);
    call(&mut h, 1, &p1, 1, "Tracing.start");
    let step = h.ext(runtime_event("Tracing.dataCollected", r#"{"value":[]}"#));
    assert_eq!((step.to(1).len(), step.to(2).len()), (1, 0));
    let step = h.ext(runtime_event("Tracing.tracingComplete", r#"{"stream":"S"}"#));
    assert_eq!(step.to(1).len(), 1);
    let step = h.ext(runtime_event("Tracing.dataCollected", r#"{"value":[]}"#));
    assert!(step.client.is_empty(), "the trace is over");
}

#[test]
fn a_client_cannot_pile_up_unanswered_commands_without_bound() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    h.connect(2);
    let p1 = h.playwright_attach(1)[0].clone();
    let p2 = h.playwright_attach(2)[0].clone();
    let mut sent = Vec::new();
    for id in 0..2000 {
        let step = h.send(1, json!({"id": id, "sessionId": p1, "method": "Runtime.evaluate"}));
        sent.extend(step.commands().iter().map(|c| c.id));
    }
    // Past the window a command waits in the core (bounded: see waiting.rs), not at the extension.
    assert!(sent.len() < MAX_IN_FLIGHT_PER_CLIENT && sent.len() < 100, "{}", sent.len());
    // Another client's command goes at the next answer.
    assert!(h.send(2, json!({"id": 1, "sessionId": p2, "method": "Page.reload"})).extension.is_empty());
    let step = h.ext(FromExtension::CommandResult(CommandResult::ok(sent[0], raw("{}"))));
    assert_eq!(step.commands()[0].method, "Page.reload");
}

#[test]
fn a_refused_trace_start_routes_nothing_and_a_trace_is_its_owners() {
    let mut h = Harness::with_tabs(&[1]);
    h.connect(1);
    h.connect(2);
    let p1 = h.playwright_attach(1)[0].clone();
    let p2 = h.playwright_attach(2)[0].clone();
    call(&mut h, 1, &p1, 1, "Tracing.start");
    let id = h.send(2, json!({"id": 1, "sessionId": p2, "method": "Tracing.start"})).commands()[0].id;
    let busy = CdpError { code: -32000, message: "Tracing has already been started".into(), data: None };
    h.ext(FromExtension::CommandResult(CommandResult::err(id, busy)));
    let step = h.ext(runtime_event("Tracing.dataCollected", r#"{"value":[]}"#));
    assert_eq!((step.to(1).len(), step.to(2).len()), (1, 0), "a refused start gets no events");
    let step = h.send(2, json!({"id": 2, "sessionId": p2, "method": "Tracing.end"}));
    assert!(step.only_reply(2)["error"]["message"].as_str().unwrap().contains("another session"));
    assert!(step.extension.is_empty());
    // The tracer leaving ends its trace, so later starts can work.
    h.core.client_disconnected(h.now, 1);
    let step = h.drain();
    let methods: Vec<&str> = step.commands().iter().map(|c| c.method.as_str()).collect();
    assert_eq!(methods, ["Tracing.end"]);
}
