//! Agents over real sockets: endpoints named `/agent/<name>`, tabs opened for an agent, the
//! HTTP helpers beneath an agent's endpoint, grace periods and timeouts, with a scripted fake
//! extension in place of Chrome.

mod common;
use common::*;

fn agent_tab(tab_id: i32, agent: &str, created: bool) -> TabInfo {
    TabInfo { agent: agent.into(), created, ..tab(tab_id) }
}

async fn agent_client(d: &Daemon, agent: &str) -> Socket {
    let url = format!("{}/cdp", d.agent_endpoint(agent).replacen("http://", "ws://", 1));
    ws(&url, None).await.unwrap()
}

fn path_of(d: &Daemon, agent: &str, rest: &str) -> String {
    let endpoint = d.agent_endpoint(agent);
    format!("{}{rest}", &endpoint[endpoint.find("/agent").unwrap() - d.token().len() - 1..])
}

#[tokio::test]
async fn each_agent_has_its_own_endpoint_and_sees_only_its_tabs() {
    let d = daemon().await;
    let mut ext = extension(&d, &[]).await;
    ext_send(&mut ext, FromExtension::TabShared(agent_tab(1, "a", true))).await;
    ext_send(&mut ext, FromExtension::TabShared(agent_tab(2, "b", true))).await;
    ext_send(&mut ext, FromExtension::TabShared(tab(3))).await;
    let port = d.running.port;
    let (status, body) = get(port, &path_of(&d, "a", "/json/version"), &[]).await;
    assert_eq!(status, 200, "{body}");
    let version: Value = serde_json::from_str(&body).unwrap();
    let ws_url = version["webSocketDebuggerUrl"].as_str().unwrap();
    assert!(ws_url.contains(&format!("/{}/agent/a/devtools/browser/", d.token())), "{ws_url}");
    let (_, body) = get(port, &path_of(&d, "a", "/json/list"), &[]).await;
    let list: Value = serde_json::from_str(&body).unwrap();
    let ids: Vec<&str> = list.as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["PAGE1"]);
    assert!(list[0]["webSocketDebuggerUrl"].as_str().unwrap().contains("/agent/a/devtools/page/PAGE1"));
    // The extension's frames and this request come over different sockets: wait for tab 3.
    let mut body = String::new();
    for _ in 0..100 {
        body = get(port, &format!("/{}/json/list", d.token()), &[]).await.1;
        if body.contains("PAGE3") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        body.contains("PAGE3") && !body.contains("PAGE1"),
        "the plain endpoint is the default agent: {body}"
    );

    // The advertised WebSocket and the short form both act for the agent.
    let mut by_url = ws(ws_url, None).await.unwrap();
    assert_eq!(attach_pages(&mut by_url).await.len(), 1);
    let mut b = agent_client(&d, "b").await;
    send(&mut b, json!({"id": 1, "method": "Target.getTargets"})).await;
    let (reply, _) = until_reply(&mut b, 1).await;
    assert_eq!(reply["result"]["targetInfos"][0]["targetId"], "PAGE2");
    // Page sockets beneath another agent's endpoint do not exist.
    let page = format!("{}/devtools/page/PAGE1", d.agent_endpoint("b").replacen("http://", "ws://", 1));
    assert!(ws(&page, None).await.is_err());
    // Bad names are refused clearly.
    for bad in ["/agent/a%20b/json/version", "/agent//json/version", "/agent/"] {
        let (status, body) = get(port, &format!("/{}{bad}", d.token()), &[]).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(body.contains("not valid"), "{body}");
    }
}

#[tokio::test]
async fn create_target_opens_a_tab_in_the_agents_name_and_json_helpers_work() {
    let d = daemon().await;
    let mut ext = extension(&d, &[]).await;
    let mut a = agent_client(&d, "a").await;
    attach_pages(&mut a).await;
    send(&mut a, json!({"id": 2, "method": "Target.createTarget", "params": {"url": "about:blank"}})).await;
    let (id, op) = next_browser_op(&mut ext).await;
    assert_eq!(op, BrowserOp::CreateTab { agent: "a".into(), url: "about:blank".into(), allow_once: false });
    let created = agent_tab(7, "a", true);
    ext_send(&mut ext, FromExtension::TabShared(created.clone())).await;
    let result = raw(&serde_json::to_string(&created).unwrap());
    ext_send(&mut ext, FromExtension::CommandResult(CommandResult::ok(id, result))).await;
    let (reply, events) = until_reply(&mut a, 2).await;
    assert_eq!(reply["result"]["targetId"], "PAGE7");
    assert_eq!(events[0]["method"], "Target.attachedToTarget", "attached before the reply");

    // /json/new, /json/activate and /json/close beneath the agent's endpoint.
    let port = d.running.port;
    let new = tokio::spawn({
        let path = path_of(&d, "a", "/json/new?http://127.0.0.1:1/x");
        async move { request(port, "PUT", &path, "").await }
    });
    let (id, op) = next_browser_op(&mut ext).await;
    assert_eq!(
        op,
        BrowserOp::CreateTab { agent: "a".into(), url: "http://127.0.0.1:1/x".into(), allow_once: false }
    );
    let created = TabInfo { url: "http://127.0.0.1:1/x".into(), ..agent_tab(8, "a", true) };
    ext_send(&mut ext, FromExtension::TabShared(created.clone())).await;
    let result = raw(&serde_json::to_string(&created).unwrap());
    ext_send(&mut ext, FromExtension::CommandResult(CommandResult::ok(id, result))).await;
    let (status, body) = new.await.unwrap();
    assert_eq!(status, 200, "{body}");
    let entry: Value = serde_json::from_str(&body).unwrap();
    assert_eq!((entry["id"].as_str(), entry["url"].as_str()), (Some("PAGE8"), Some("http://127.0.0.1:1/x")));

    let activate = tokio::spawn({
        let path = path_of(&d, "a", "/json/activate/PAGE8");
        async move { get(port, &path, &[]).await }
    });
    let (id, op) = next_browser_op(&mut ext).await;
    assert_eq!(op, BrowserOp::ActivateTab { tab_id: 8 });
    ext_send(&mut ext, FromExtension::CommandResult(CommandResult::ok(id, raw("{}")))).await;
    assert_eq!(activate.await.unwrap(), (200, "Target activated".into()));

    let (status, _) = get(port, &path_of(&d, "b", "/json/close/PAGE8"), &[]).await;
    assert_eq!(status, 404, "another agent's tab does not exist for b");
    let close = tokio::spawn({
        let path = path_of(&d, "a", "/json/close/PAGE8");
        async move { get(port, &path, &[]).await }
    });
    // Closing for a client first turns on Page, to answer the page's beforeunload itself.
    match next_ext(&mut ext).await {
        ToExtension::Command(command) if command.method == "Page.enable" && command.tab_id == 8 => {
            ext_send(&mut ext, FromExtension::CommandResult(CommandResult::ok(command.id, raw("{}")))).await
        }
        other => panic!("expected Page.enable on the tab being closed, got {other:?}"),
    }
    let (id, op) = next_browser_op(&mut ext).await;
    assert_eq!(op, BrowserOp::CloseTab { tab_id: 8 });
    ext_send(&mut ext, FromExtension::TabUnshared { tab_id: 8, reason: UnshareReason::Closed }).await;
    ext_send(&mut ext, FromExtension::CommandResult(CommandResult::ok(id, raw("{}")))).await;
    assert_eq!(close.await.unwrap(), (200, "Target is closing".into()));
}

#[tokio::test]
async fn status_tells_an_agents_helper_about_its_tabs_and_the_extension() {
    let d = daemon().await;
    let port = d.running.port;
    let (status, body) = get(port, &path_of(&d, "a", "/tabtunnel/status"), &[]).await;
    assert_eq!(status, 200);
    let before: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(before["extensionConnected"], false);
    assert_eq!(before["agent"], "a");
    let mut ext = extension(&d, &[]).await;
    ext_send(&mut ext, FromExtension::TabShared(agent_tab(4, "a", false))).await;
    // Frames from one socket arrive in order: a status read after a command round trip sees it.
    let mut a = agent_client(&d, "a").await;
    send(&mut a, json!({"id": 1, "method": "Target.getTargets"})).await;
    until_reply(&mut a, 1).await;
    let (_, body) = get(port, &path_of(&d, "a", "/tabtunnel/status"), &[]).await;
    let after: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(after["extensionConnected"], true);
    assert_eq!(after["tabs"][0]["targetId"], "PAGE4");
    assert!(after["extensionEpoch"].as_u64() > before["extensionEpoch"].as_u64());
    let (status, _) = get(port, "/agent/a/tabtunnel/status", &[]).await;
    assert_eq!(status, 401, "the token is needed here too");
}

#[tokio::test]
async fn a_handover_request_waits_for_the_human() {
    let d = daemon().await;
    let mut ext = extension(&d, &[]).await;
    let port = d.running.port;
    let ask = tokio::spawn({
        let path = path_of(&d, "a", "/tabtunnel/handover");
        async move { request(port, "POST", &path, r#"{"reason":"your mail tab, please"}"#).await }
    });
    let request_id = match next_ext(&mut ext).await {
        ToExtension::HandoverRequest(r) => {
            assert_eq!((r.agent.as_str(), r.reason.as_str()), ("a", "your mail tab, please"));
            r.id
        }
        other => panic!("{other:?}"),
    };
    ext_send(&mut ext, FromExtension::TabShared(agent_tab(5, "a", false))).await;
    ext_send(&mut ext, FromExtension::HandoverAnswer { id: request_id, tab_id: Some(5) }).await;
    let (status, body) = ask.await.unwrap();
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["outcome"], "granted");
    assert_eq!(answer["tab"]["targetId"], "PAGE5");

    // Unanswered, it times out and leaves the side panel.
    let path = path_of(&d, "a", "/tabtunnel/handover");
    let (status, body) = request(port, "POST", &path, r#"{"timeoutMs":300}"#).await;
    assert_eq!(
        (status, serde_json::from_str::<Value>(&body).unwrap()["outcome"].clone()),
        (200, json!("timeout"))
    );
    assert!(matches!(next_ext(&mut ext).await, ToExtension::HandoverRequest(_)));
    assert!(matches!(next_ext(&mut ext).await, ToExtension::HandoverWithdrawn { .. }));
}

/// The daemon wakes at the core's deadlines, not on a fixed tick: with no grace period, the
/// agent's tab closes as its last client leaves, before anything a client sends after that. On
/// a 250 ms tick, a command sent once the leaving was seen would nearly always overtake the close.
#[tokio::test]
async fn a_grace_period_ends_at_its_deadline_not_at_the_next_tick() {
    let d = daemon_with(Limits { agent_grace_ms: 0, ..Limits::default() }).await;
    let mut ext = extension(&d, &[2]).await;
    // Its tab comes once it is there (without it, no grace: the tab would go at once).
    let mut a = agent_client(&d, "a").await;
    assert!(attach_pages(&mut a).await.is_empty());
    ext_send(&mut ext, FromExtension::TabShared(agent_tab(1, "a", true))).await;
    let attached = next_json(&mut a).await;
    assert_eq!(attached["method"], "Target.attachedToTarget", "{attached}");
    let mut b = client(&d).await;
    let page = attach_pages(&mut b).await.remove(0);
    drop(a);
    // The daemon handled the leaving: the tab's debugger session is reset for the next client.
    assert!(matches!(next_ext(&mut ext).await, ToExtension::ResetTab { tab_id: 1 }));
    send(&mut b, json!({"id": 2, "sessionId": page, "method": "Runtime.evaluate"})).await;
    let (_, op) = next_browser_op(&mut ext).await;
    assert_eq!(op, BrowserOp::CloseTab { tab_id: 1 }, "the grace period ended first");
    assert!(matches!(next_ext(&mut ext).await, ToExtension::Command(c) if c.method == "Runtime.evaluate"));
}

#[tokio::test]
async fn an_agent_gone_past_its_grace_period_loses_its_tabs_and_a_hung_tab_times_out() {
    let limits = Limits { agent_grace_ms: 300, command_timeout_ms: 1000, ..Limits::default() };
    let d = daemon_with(limits).await;
    let mut ext = extension(&d, &[]).await;
    ext_send(&mut ext, FromExtension::TabShared(agent_tab(1, "a", true))).await;
    let mut a = agent_client(&d, "a").await;
    let page = attach_pages(&mut a).await.remove(0);
    send(&mut a, json!({"id": 2, "sessionId": page, "method": "Runtime.evaluate", "params": {"expression": "while(1);"}})).await;
    assert!(matches!(next_ext(&mut ext).await, ToExtension::Command(_)));
    let (reply, _) = until_reply(&mut a, 2).await;
    assert!(reply["error"]["message"].as_str().unwrap().contains("did not answer"), "{reply}");
    drop(a);
    assert!(matches!(next_ext(&mut ext).await, ToExtension::ResetTab { tab_id: 1 }), "the last client left");
    let (_, op) = next_browser_op(&mut ext).await;
    assert_eq!(op, BrowserOp::CloseTab { tab_id: 1 });
}
