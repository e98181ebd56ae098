//! The policy over real sockets: navigations the browser sends to the navigation endpoint, the
//! kill switch, and the audit trail on disk, with a scripted fake extension in place of Chrome.

mod common;
use common::*;

const POLICY: &str = r#"
[default]
deny_methods = ["Network.getAllCookies", "Network.getCookies", "Storage.getCookies"]
allow_origins = ["http://127.0.0.1:*", "https://*.example.com"]
ask_origins = ["https://mail.example.com"]
"#;

fn agent_tab(tab_id: i32, agent: &str) -> TabInfo {
    TabInfo { agent: agent.into(), created: true, ..tab(tab_id) }
}

/// An HTTP request to the navigation endpoint, as the browser's redirect makes it (a page's
/// Origin included): (status, Location).
async fn navigation(d: &Daemon, agent: &str, tab: i32, url: &str) -> (u16, String) {
    navigation_with(d, &mac(d, agent, tab), agent, tab, url).await
}

/// The credential the extension's redirect for `agent`'s `tab` carries.
fn mac(d: &Daemon, agent: &str, tab: i32) -> String {
    tabtunnel_wire::navigation_mac::sign(&d.running.navigation_key, agent, tab)
}

/// The same, with `credential` in the path.
async fn navigation_with(d: &Daemon, credential: &str, agent: &str, tab: i32, url: &str) -> (u16, String) {
    let path = format!("/{credential}/tabtunnel/navigation/{agent}/{tab}?{url}");
    let (status, _, location) =
        get_with_location(d.running.port, &path, &[("Origin", "https://shop.example.com")]).await;
    (status, location)
}

#[tokio::test]
async fn navigations_the_page_starts_are_blocked_let_through_or_asked() {
    let d = daemon_with_policy(Limits::default(), Some(POLICY)).await;
    let mut ext = extension(&d, &[]).await;
    ext_send(&mut ext, FromExtension::TabShared(agent_tab(4, "a"))).await;
    // Blocked: 204, the tab stays where it was.
    assert_eq!(navigation(&d, "a", 4, "https://evil.test/x").await, (204, String::new()));
    // Not a's tab: blocked too.
    assert_eq!(navigation(&d, "b", 4, "http://127.0.0.1:1/").await.0, 204);
    // Allowed (the rules were late, say): let through once, then redirected back.
    let allowed = tokio::spawn({
        let port = d.running.port;
        let path = format!("/{}/tabtunnel/navigation/a/4?http://127.0.0.1:1/ok", mac(&d, "a", 4));
        async move { request(port, "GET", &path, "").await }
    });
    let (id, op) = next_browser_op(&mut ext).await;
    assert_eq!(op, BrowserOp::AllowNavigation { tab_id: 4, url: "http://127.0.0.1:1/ok".into() });
    ext_send(&mut ext, FromExtension::CommandResult(CommandResult::ok(id, raw("{}")))).await;
    assert_eq!(allowed.await.unwrap().0, 307);
    // Asked: the side panel hears of it; a refusal leaves the tab where it was.
    let asked = tokio::spawn({
        let port = d.running.port;
        let path = format!("/{}/tabtunnel/navigation/a/4?https://mail.example.com/inbox", mac(&d, "a", 4));
        async move { request(port, "GET", &path, "").await }
    });
    let question = match next_ext(&mut ext).await {
        ToExtension::Approval(request) => request,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        (question.method.as_str(), question.url.as_deref()),
        ("navigation", Some("https://mail.example.com/inbox"))
    );
    ext_send(
        &mut ext,
        FromExtension::ApprovalAnswer { id: question.id, answer: tabtunnel_wire::ApprovalAnswer::Deny },
    )
    .await;
    assert_eq!(asked.await.unwrap().0, 204);
}

/// The redirect URL shows in the agent's own network events: what it carries speaks for that
/// agent and tab only. Every other agent, tab or credential gets the same 403, before the
/// policy is asked (no 307/204 to probe with, no question in another agent's name).
#[tokio::test]
async fn a_redirects_credential_speaks_for_its_own_agent_and_tab_only() {
    let d = daemon_with_policy(Limits::default(), Some(POLICY)).await;
    let mut ext = extension(&d, &[]).await;
    ext_send(&mut ext, FromExtension::TabShared(agent_tab(4, "alice"))).await;
    ext_send(&mut ext, FromExtension::TabShared(agent_tab(5, "eve"))).await;
    let eves = mac(&d, "eve", 5);
    assert_eq!(navigation_with(&d, &eves, "eve", 5, "https://evil.test/x").await.0, 204);
    let key = d.running.navigation_key.clone();
    for (credential, agent, tab) in [
        (eves.as_str(), "alice", 4),
        (eves.as_str(), "alice", 5),
        (eves.as_str(), "eve", 4),
        (key.as_str(), "alice", 4),
        (key.as_str(), "eve", 5),
        (&eves[..63], "eve", 5),
    ] {
        for url in ["http://127.0.0.1:1/", "https://mail.example.com/spoofed", "https://evil.test/"] {
            assert_eq!(navigation_with(&d, credential, agent, tab, url).await.0, 403, "{agent} {tab} {url}");
        }
    }
    // No question reached the side panel: the first one it hears of is eve's own.
    let own = tokio::spawn({
        let port = d.running.port;
        let path = format!("/{eves}/tabtunnel/navigation/eve/5?https://mail.example.com/own");
        async move { request(port, "GET", &path, "").await }
    });
    let question = match next_ext(&mut ext).await {
        ToExtension::Approval(request) => request,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        (question.agent.as_str(), question.url.as_deref()),
        ("eve", Some("https://mail.example.com/own"))
    );
    let deny = tabtunnel_wire::ApprovalAnswer::Deny;
    ext_send(&mut ext, FromExtension::ApprovalAnswer { id: question.id, answer: deny }).await;
    assert_eq!(own.await.unwrap().0, 204);
}

#[tokio::test]
async fn the_kill_switch_closes_every_client_and_refuses_new_ones_until_released() {
    let d = daemon().await;
    let mut ext = extension(&d, &[1]).await;
    let mut client = client(&d).await;
    attach_pages(&mut client).await;
    ext_send(&mut ext, FromExtension::KillSwitch { engaged: true }).await;
    assert!(closes_within(&mut client, Duration::from_secs(5)).await, "the client is closed");
    // The client's close shows the switch was seen.
    let (status, body) = get(d.running.port, &format!("/{}/json/version", d.token()), &[]).await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("kill switch"), "{body}");
    assert!(ws(&d.running.ws_endpoint(), None).await.is_err(), "new sockets are refused");
    ext_send(&mut ext, FromExtension::KillSwitch { engaged: false }).await;
    let mut again = None;
    for _ in 0..50 {
        if let Ok(socket) = ws(&d.running.ws_endpoint(), None).await {
            again = Some(socket);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(again.is_some(), "released: clients come back");
}

#[tokio::test]
async fn a_request_the_kill_switch_cuts_off_still_gets_an_answer() {
    let d = daemon().await;
    let mut ext = extension(&d, &[1]).await;
    let port = d.running.port;
    let path = format!("/{}/agent/a/json/new?http://127.0.0.1:1/x", d.token());
    let new = tokio::spawn(async move { request(port, "PUT", &path, "").await });
    let (_, op) = next_browser_op(&mut ext).await;
    assert!(matches!(op, BrowserOp::CreateTab { .. }), "{op:?}");
    // The switch before the tab is made: the one-shot request is closed with the rest.
    ext_send(&mut ext, FromExtension::KillSwitch { engaged: true }).await;
    let (status, body) = tokio::time::timeout(Duration::from_secs(10), new)
        .await
        .expect("answered, not left hanging")
        .unwrap();
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("cut off"), "{body}");
}

#[tokio::test]
async fn the_audit_trail_records_steps_and_outcomes_but_no_params() {
    let d = daemon_with_policy(Limits::default(), Some(POLICY)).await;
    let mut ext = extension(&d, &[1]).await;
    let mut client = client(&d).await;
    let page = attach_pages(&mut client).await.remove(0);
    send(&mut client, json!({"id": 2, "sessionId": page, "method": "Network.getCookies", "params": {"urls": ["https://secret.test/"]}})).await;
    let (denied, _) = until_reply(&mut client, 2).await;
    assert!(denied["error"]["message"].as_str().unwrap().contains("deny_methods"));
    send(&mut client, json!({"id": 3, "sessionId": page, "method": "Runtime.evaluate", "params": {"expression": "'a secret value'"}})).await;
    let ToExtension::Command(cmd) = next_ext(&mut ext).await else { panic!() };
    ext_send(
        &mut ext,
        FromExtension::CommandResult(CommandResult::ok(
            cmd.id,
            raw(r#"{"result":{"value":"a secret value"}}"#),
        )),
    )
    .await;
    until_reply(&mut client, 3).await;
    let file = d.config_dir().join("data/audit/audit.jsonl");
    let mut text = String::new();
    for _ in 0..100 {
        text = std::fs::read_to_string(&file).unwrap_or_default();
        if text.lines().count() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let steps: Vec<(&str, &str)> =
        lines.iter().map(|l| (l["method"].as_str().unwrap(), l["outcome"].as_str().unwrap())).collect();
    assert_eq!(steps, [("Network.getCookies", "denied"), ("Runtime.evaluate", "allowed")]);
    assert!(lines[0]["rule"].as_str().unwrap().contains("deny_methods"));
    assert!(!text.contains("secret"), "no params or results in the trail: {text}");
    assert!(!text.contains(&d.token()));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
}

#[tokio::test]
async fn a_rewritten_trail_is_named_by_verify_and_by_the_next_daemon() {
    let d = daemon().await;
    let mut ext = extension(&d, &[1]).await;
    let mut client = client(&d).await;
    let page = attach_pages(&mut client).await.remove(0);
    for id in 2..6 {
        send(
            &mut client,
            json!({"id": id, "sessionId": page, "method": "Runtime.evaluate", "params": {"expression": "1"}}),
        )
        .await;
        let ToExtension::Command(cmd) = next_ext(&mut ext).await else { panic!() };
        ext_send(&mut ext, FromExtension::CommandResult(CommandResult::ok(cmd.id, raw("{}")))).await;
        until_reply(&mut client, id).await;
    }
    let lines = trail_lines(&d, 4).await;
    let data_dir = d.config_dir().join("data");
    let report = tabtunnel::audit::verify(&data_dir, d.config_dir()).unwrap();
    assert_eq!(report.problem, None, "{report}");
    let sealed: Value = serde_json::from_str(&lines[1]).unwrap();
    assert_eq!((sealed["seq"].as_u64(), sealed["mac"].as_str().map(str::len)), (Some(1), Some(64)));

    // Something takes the second line out while the daemon is stopped.
    drop((ext, client));
    let d = d.restart().await;
    let file = data_dir.join("audit/audit.jsonl");
    let mut kept = std::fs::read_to_string(&file).unwrap().lines().map(str::to_owned).collect::<Vec<_>>();
    kept.remove(1);
    std::fs::write(&file, kept.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let report = tabtunnel::audit::verify(&data_dir, d.config_dir()).unwrap();
    assert_eq!(report.to_string(), "BROKEN: record 1 was removed (before audit.jsonl line 2)");
    // The daemon after it says so to the extension (the side panel shows it).
    let d = d.restart().await;
    let mut ext = extension_socket(&d).await;
    ext.send(Message::text(hello(&[]).to_json())).await.unwrap();
    // The check runs beside serving: the first Welcome says it, or a second one does.
    let ToExtension::Welcome(mut welcome) = next_ext(&mut ext).await else { panic!("a Welcome") };
    while welcome.audit_trail.is_none() {
        match next_ext(&mut ext).await {
            ToExtension::Welcome(again) => welcome = again,
            other => panic!("expected the Welcome again, got {other:?}"),
        }
    }
    assert_eq!(
        welcome.audit_trail.as_deref(),
        Some("BROKEN: record 1 was removed (before audit.jsonl line 2)")
    );
}

/// The next frame for the extension that is not a command (commands are answered `{}`, as a tab
/// would).
async fn next_not_command(ext: &mut ExtSocket) -> ToExtension {
    loop {
        match next_ext(ext).await {
            ToExtension::Command(cmd) => {
                ext_send(ext, FromExtension::CommandResult(CommandResult::ok(cmd.id, raw("{}")))).await
            }
            frame => return frame,
        }
    }
}

/// A standing answer ends by the daemon's own clock, with no input to wake it: the side panel
/// hears of it, and the trail holds it given and expired.
#[tokio::test]
async fn a_standing_answer_expires_by_the_daemons_clock_and_the_panel_and_trail_hear_of_it() {
    let policy = "[default.gestures]\nstanding_minutes = [0.01]\n"; // 600 ms
    let d = daemon_with_policy(Limits::default(), Some(policy)).await;
    let mut ext = extension(&d, &[1]).await;
    let mut client = client(&d).await;
    let page = attach_pages(&mut client).await.remove(0);
    send(&mut client, json!({"id": 2, "sessionId": page, "method": "Input.dispatchMouseEvent", "params": {"type": "mousePressed", "x": 5, "y": 5, "button": "left", "clickCount": 1}})).await;
    let ToExtension::Browser(BrowserRequest { id, op: BrowserOp::Inspect { .. } }) =
        next_not_command(&mut ext).await
    else {
        panic!("the press is read first")
    };
    let facts = json!({
        "url": "https://mail.test/inbox",
        "element": {"tag": "button", "name": "Send message", "actionable": true, "submits": true},
        "form": {"action": "https://mail.test/compose", "method": "post", "buttons": ["Send message"]},
    });
    ext_send(&mut ext, FromExtension::CommandResult(CommandResult::ok(id, raw(&facts.to_string())))).await;
    let ToExtension::Approval(asked) = next_not_command(&mut ext).await else { panic!("asked") };
    assert_eq!(asked.standing_ms, [600]);
    let answer = tabtunnel_wire::ApprovalAnswer::AllowFor { ms: 600 };
    ext_send(&mut ext, FromExtension::ApprovalAnswer { id: asked.id, answer }).await;
    let ToExtension::StandingAnswers { answers, .. } = next_not_command(&mut ext).await else {
        panic!("listed")
    };
    assert_eq!((answers.len(), answers[0].origin.as_str()), (1, "https://mail.test"));
    // Nothing more is sent: the daemon wakes at the answer's end by itself.
    let ToExtension::StandingAnswers { answers, .. } = next_not_command(&mut ext).await else {
        panic!("ended")
    };
    assert!(answers.is_empty());
    let mut standing: Vec<Value> = Vec::new();
    for _ in 0..250 {
        standing = trail_lines(&d, 1)
            .await
            .iter()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|l| l["outcome"] == "standing")
            .collect();
        if standing.len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let events: Vec<&str> = standing.iter().map(|l| l["answer"].as_str().unwrap()).collect();
    assert_eq!(events, ["given", "expired"], "{standing:?}");
    assert!(standing[0]["rule"].as_str().unwrap().contains("sending on https://mail.test"));
}
