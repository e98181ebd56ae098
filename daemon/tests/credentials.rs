//! Who a request is, over real sockets: agents' own tokens, the owner token, the extension's
//! secret, and what a web page can send. A scripted fake extension stands in for Chrome.

mod common;
use common::*;
use tabtunnel::{agent_cli, credentials};
use tabtunnel_wire::AgentTokenOp;
use tokio_tungstenite::tungstenite::{client::IntoClientRequest, http::HeaderValue};

fn owned_tab(tab_id: i32, agent: &str) -> TabInfo {
    TabInfo { agent: agent.into(), created: true, ..tab(tab_id) }
}

/// A daemon where alice and bob have their own tokens; its extension shares one tab each of
/// alice's, bob's and the human's (default).
async fn three_owners() -> (Daemon, ExtSocket, String, String) {
    let mut tokens = (String::new(), String::new());
    let d = daemon_configured(
        |dir| tokens = (credentials::add(dir, "alice").unwrap(), credentials::add(dir, "bob").unwrap()),
        |_| {},
    )
    .await;
    let mut ext = extension(&d, &[3]).await;
    ext_send(&mut ext, FromExtension::TabShared(owned_tab(1, "alice"))).await;
    ext_send(&mut ext, FromExtension::TabShared(owned_tab(2, "bob"))).await;
    (d, ext, tokens.0, tokens.1)
}

fn ids(list: &str) -> Vec<String> {
    let pages: Vec<Value> = serde_json::from_str(list).unwrap();
    pages.iter().map(|p| p["id"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn an_agent_token_is_its_agent_whatever_the_path_says() {
    let (d, _ext, alice, _bob) = three_owners().await;
    let port = d.running.port;
    let (status, list) = get(port, &format!("/{alice}/json/list"), &[]).await;
    assert_eq!((status, ids(&list)), (200, vec!["PAGE1".to_owned()]), "the plain endpoint is alice's own");
    let (status, list) = get(port, &format!("/json/list?token={alice}"), &[]).await;
    assert_eq!((status, ids(&list)), (200, vec!["PAGE1".to_owned()]));
    let (status, _) = get(port, &format!("/{alice}/agent/alice/json/list"), &[]).await;
    assert_eq!(status, 200);
    for other in [format!("/{alice}/agent/bob/json/list"), format!("/{alice}/agent/default/json/list")] {
        let (status, body) = get(port, &other, &[]).await;
        assert_eq!(status, 403, "{other}: {body}");
        assert!(body.contains("alice"), "{body}");
    }
    // The URLs handed back carry her own token, never the owner's.
    let (_, version) = get(port, &format!("/{alice}/json/version"), &[]).await;
    let ws_url =
        serde_json::from_str::<Value>(&version).unwrap()["webSocketDebuggerUrl"].as_str().unwrap().to_owned();
    assert!(ws_url.starts_with(&format!("ws://127.0.0.1:{port}/{alice}/devtools/browser/")), "{ws_url}");
    assert!(!version.contains(&d.token()));
    let mut client = ws(&ws_url, None).await.unwrap();
    let pages = attach_pages(&mut client).await;
    assert_eq!(pages.len(), 1, "alice's socket sees alice's tab only");
}

#[tokio::test]
async fn a_revoked_token_stops_working_and_its_connections_close() {
    let (d, _ext, alice, bob) = three_owners().await;
    let port = d.running.port;
    let mut alices = ws(&format!("ws://127.0.0.1:{port}/{alice}/cdp"), None).await.unwrap();
    let mut bobs = ws(&format!("ws://127.0.0.1:{port}/{bob}/cdp"), None).await.unwrap();
    assert!(credentials::revoke(d.config_dir(), "alice").unwrap());
    assert!(closes_within(&mut alices, Duration::from_secs(10)).await, "alice's socket closes");
    let (status, _) = get(port, &format!("/{alice}/json/list"), &[]).await;
    assert_eq!(status, 401);
    send(&mut bobs, json!({"id": 1, "method": "Browser.getVersion"})).await;
    assert!(until_reply(&mut bobs, 1).await.0["result"].is_object(), "bob carries on");
}

#[tokio::test]
async fn a_revocation_is_in_force_the_moment_the_command_returns() {
    let (d, _ext, alice, bob) = three_owners().await;
    let port = d.running.port;
    let mut alices = ws(&format!("ws://127.0.0.1:{port}/{alice}/cdp"), None).await.unwrap();
    // Only the owner may have the daemon read the file.
    assert_eq!(request(port, "POST", &format!("/{bob}/tabtunnel/credentials"), "").await.0, 403);
    let owner = d.token();
    assert_eq!(request(port, "POST", &format!("/{owner}/agent/bob/tabtunnel/credentials"), "").await.0, 403);

    let told = agent_cli::revoke(d.config_dir(), "alice").await.unwrap();
    assert_eq!(told, agent_cli::Told::Daemon { pid: std::process::id(), port });
    assert_eq!(get(port, &format!("/{alice}/json/list"), &[]).await.0, 401, "refused at once");
    assert!(ws(&format!("ws://127.0.0.1:{port}/{alice}/cdp"), None).await.is_err());
    assert!(closes_within(&mut alices, WAIT).await, "her open socket was cut off");
    assert_eq!(get(port, &format!("/{bob}/json/list"), &[]).await.0, 200, "bob carries on");
    // A token minted now works at once, too.
    let carol = agent_cli::add(d.config_dir(), "carol").await.unwrap();
    assert_eq!(get(port, &format!("/{carol}/json/version"), &[]).await.0, 200);
}

#[tokio::test]
async fn with_require_agent_tokens_the_owner_token_names_no_agent() {
    let mut alice = String::new();
    let d = daemon_configured(
        |dir| alice = credentials::add(dir, "alice").unwrap(),
        |options| options.require_agent_tokens = true,
    )
    .await;
    let _ext = extension(&d, &[]).await;
    let port = d.running.port;
    let owner = d.token();
    assert_eq!(get(port, &format!("/{owner}/agent/alice/json/version"), &[]).await.0, 403);
    assert_eq!(get(port, &format!("/{owner}/agent/made-up/json/version"), &[]).await.0, 403);
    assert_eq!(get(port, &format!("/{owner}/json/version"), &[]).await.0, 200, "the human's own endpoint");
    assert_eq!(get(port, &format!("/{alice}/json/version"), &[]).await.0, 200);
}

#[tokio::test]
async fn made_up_names_cannot_lock_out_registered_agents_or_the_plain_endpoint() {
    let mut alice = String::new();
    let d = daemon_configured(
        |dir| alice = credentials::add(dir, "alice").unwrap(),
        |options| options.limits.max_agents = 2,
    )
    .await;
    let _ext = extension(&d, &[]).await;
    let port = d.running.port;
    let mut made_up = Vec::new();
    for name in ["x1", "x2", "x3"] {
        let mut socket =
            ws(&format!("{}/cdp", d.agent_endpoint(name).replace("http:", "ws:")), None).await.unwrap();
        send(&mut socket, json!({"id": 1, "method": "Browser.getVersion"})).await;
        let (reply, _) = until_reply(&mut socket, 1).await;
        made_up.push((name, reply["error"].is_object(), socket));
    }
    let refused: Vec<&str> = made_up.iter().filter(|(_, refused, _)| *refused).map(|(n, _, _)| *n).collect();
    assert_eq!(refused, ["x3"]);
    for url in [format!("ws://127.0.0.1:{port}/{alice}/cdp"), d.running.ws_endpoint()] {
        let mut socket = ws(&url, None).await.unwrap();
        send(&mut socket, json!({"id": 1, "method": "Browser.getVersion"})).await;
        assert!(until_reply(&mut socket, 1).await.0["result"].is_object(), "{url} got in");
    }
}

#[tokio::test]
async fn the_extension_socket_takes_its_own_secret_never_a_client_token() {
    let d = daemon().await;
    let port = d.running.port;
    let owner = d.token();
    for url in [
        format!("ws://127.0.0.1:{port}/{owner}/extension"),
        format!("ws://127.0.0.1:{port}/extension?token={owner}"),
    ] {
        assert!(ws(&url, Some(ORIGIN)).await.is_err(), "{url} with a forged origin is not the extension");
    }
    assert!(ws(&d.running.extension_url(), None).await.is_err(), "the secret needs our origin too");
    assert!(!d.running.extension_url().contains(&owner));
    let _first = extension(&d, &[]).await;
    // Another browser is refused while one is connected...
    let mut second = extension_socket(&d).await;
    ext_send(&mut second, hello_from("browser-2", false)).await;
    assert!(matches!(next_ext(&mut second).await, ToExtension::Rejected { .. }));
}

fn hello_from(instance: &str, take_over: bool) -> FromExtension {
    match hello(&[]) {
        FromExtension::Hello(h) => {
            FromExtension::Hello(Hello { instance_id: instance.into(), take_over, ..h })
        }
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn the_human_can_always_take_the_daemon_over_for_this_browser() {
    let d = daemon().await;
    let mut first = extension(&d, &[]).await;
    let mut second = extension_socket(&d).await;
    ext_send(&mut second, hello_from("browser-2", true)).await;
    assert!(matches!(next_ext(&mut second).await, ToExtension::Welcome(_)));
    assert!(closes_within(&mut first, Duration::from_secs(5)).await, "the other browser's socket closes");
}

#[tokio::test]
async fn json_new_needs_put_and_what_a_web_page_can_send_is_refused() {
    let d = daemon().await;
    let _ext = extension(&d, &[]).await;
    let port = d.running.port;
    let owner = d.token();
    let (status, body) = get(port, &format!("/{owner}/json/new?http://127.0.0.1:1/"), &[]).await;
    assert_eq!(status, 405, "{body}");
    assert!(body.contains("PUT"), "{body}");
    // A `no-cors` fetch carries no Origin, but the browser's fetch metadata.
    for metadata in [("Sec-Fetch-Mode", "no-cors"), ("Sec-Fetch-Site", "cross-site")] {
        let (status, _) = get(port, &format!("/{owner}/json/list"), &[metadata]).await;
        assert_eq!(status, 403, "{metadata:?}");
        let path = format!("/{owner}/json/new?http://127.0.0.1:1/");
        let request = format!(
            "PUT {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n{}: {}\r\nContent-Length: 0\r\n\r\n",
            metadata.0, metadata.1
        );
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        tokio::io::AsyncWriteExt::write_all(&mut stream, request.as_bytes()).await.unwrap();
        let mut response = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut stream, &mut response).await.unwrap();
        assert!(response.starts_with("HTTP/1.1 403"), "{response}");
    }
}

#[tokio::test]
async fn the_side_panel_mints_a_token_shown_once_and_it_works_at_once() {
    let d = daemon().await;
    let mut ext = extension(&d, &[]).await;
    ext_send(&mut ext, FromExtension::AgentToken(AgentTokenOp::Mint { name: "carol".into() })).await;
    let token = loop {
        match next_text(&mut ext).await {
            text if text.contains("agentTokenMinted") => {
                let frame: ToExtension = serde_json::from_str(&text).unwrap();
                match frame {
                    ToExtension::AgentTokenMinted { name, token: Some(token), .. } if name == "carol" => {
                        break token
                    }
                    other => panic!("{other:?}"),
                }
            }
            _ => continue,
        }
    };
    assert!(credentials::looks_like_agent_token(&token));
    assert!(!std::fs::read_to_string(credentials::path(d.config_dir())).unwrap().contains(&token[4..]));
    let port = d.running.port;
    let mut status = 0;
    for _ in 0..40 {
        status = get(port, &format!("/{token}/json/version"), &[]).await.0;
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200, "the daemon reads the new token within moments");
    ext_send(&mut ext, FromExtension::AgentToken(AgentTokenOp::Mint { name: "carol".into() })).await;
    loop {
        let text = next_text(&mut ext).await;
        if text.contains("agentTokenMinted") {
            assert!(text.contains("revoke"), "a second token for carol is refused: {text}");
            break;
        }
    }
}

/// An agent's records say, in words, what it did, and which token (by id, never the token)
/// and client it came through.
#[tokio::test]
async fn an_agents_records_carry_its_steps_in_words_its_token_id_and_client() {
    let (d, mut ext, alice, _bob) = three_owners().await;
    let (_, version) = get(d.running.port, &format!("/{alice}/json/version"), &[]).await;
    let version: Value = serde_json::from_str(&version).unwrap();
    let url = version["webSocketDebuggerUrl"].as_str().unwrap();
    let mut upgrade = url.into_client_request().unwrap();
    upgrade.headers_mut().insert("User-Agent", HeaderValue::from_static("Puppeteer 25.16.0"));
    let (mut client, _) = tokio_tungstenite::connect_async(upgrade).await.unwrap();
    let page = attach_pages(&mut client).await.remove(0);
    let mut commands =
        vec![json!({"method": "Page.navigate", "params": {"url": "https://shop.example/cart?session=x"}})];
    for c in ["a", "b", "c"] {
        commands.push(
            json!({"method": "Input.dispatchKeyEvent", "params": {"type": "keyDown", "key": c, "text": c}}),
        );
        commands.push(json!({"method": "Input.dispatchKeyEvent", "params": {"type": "keyUp", "key": c}}));
    }
    commands.push(json!({"method": "Page.captureScreenshot", "params": {}}));
    for (id, mut command) in (2..).zip(commands.clone()) {
        command["id"] = json!(id);
        command["sessionId"] = json!(page);
        send(&mut client, command).await;
        let ToExtension::Command(cmd) = next_ext(&mut ext).await else { panic!() };
        ext_send(&mut ext, FromExtension::CommandResult(CommandResult::ok(cmd.id, raw("{}")))).await;
        until_reply(&mut client, id).await;
        if id == 2 {
            // `tabtunnel mcp` tells the MCP client it serves the agent through.
            let body = r#"{"name":"claude-code","version":"2.1.0"}"#;
            let (status, _) =
                request(d.running.port, "POST", &format!("/{alice}/tabtunnel/client"), body).await;
            assert_eq!(status, 204);
        }
    }
    let file = d.config_dir().join("data/audit/audit.jsonl");
    let mut text = String::new();
    for _ in 0..250 {
        text = std::fs::read_to_string(&file).unwrap_or_default();
        if text.lines().count() >= commands.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let steps: Vec<(u64, &str)> =
        lines.iter().map(|l| (l["step_id"].as_u64().unwrap(), l["step"].as_str().unwrap())).collect();
    let typed = steps[1].0;
    assert_eq!(
        steps,
        [
            (steps[0].0, "opened shop.example/cart"),
            (typed, "typed 1 character"),
            (typed, "typed 1 character"),
            (typed, "typed 2 characters"),
            (typed, "typed 2 characters"),
            (typed, "typed 3 characters"),
            (typed, "typed 3 characters"),
            (typed + 1, "took a screenshot"),
        ]
    );
    for (n, line) in lines.iter().enumerate() {
        assert_eq!(line["agent"], "alice");
        assert_eq!(line["token_id"].as_str(), Some(credentials::Credentials::token_id(&alice).as_str()));
        let client = if n == 0 { "Puppeteer 25.16.0" } else { "claude-code 2.1.0 (MCP)" };
        assert_eq!(line["client"], client, "the MCP client, once told, over the User-Agent");
    }
    assert!(!text.contains(&alice[4..]), "never the token: {text}");
}
