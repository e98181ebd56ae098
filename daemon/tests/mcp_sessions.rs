//! `/mcp` over real sockets: a session belongs to the credential and the agent that opened it.
//! Anybody else presenting its `Mcp-Session-Id` is answered as for an unknown session (404),
//! on every method, and cannot end it.

mod common;
use common::*;
use tabtunnel::{agent_cli, credentials};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const VERSION: &str = "2025-06-18";

/// No browser tool server is started by these tests: with no node to find, a session's child
/// fails to start at once (in the background) and the session itself carries on.
fn without_tool_servers() {
    let nowhere = std::env::temp_dir().join("tabtunnel-test-no-tool-servers");
    std::env::set_var("PATH", &nowhere);
    std::env::set_var("XDG_DATA_HOME", &nowhere);
}

/// One HTTP/1.1 request to `/mcp`; (status, head, body). An event stream that stays open (GET)
/// is read up to its head only.
async fn mcp(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
         Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
         MCP-Protocol-Version: {VERSION}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        loop {
            let n = stream.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            response.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&response);
            let streaming = method == "GET" && text.contains("text/event-stream");
            if streaming && text.contains("\r\n\r\n") {
                break;
            }
        }
    };
    tokio::time::timeout(WAIT, read).await.expect("the daemon answers");
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text[9..12].parse().unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (status, head.to_ascii_lowercase(), body.to_owned())
}

/// Opens a session at `path` (initialize, then initialized); its id.
async fn open(port: u16, path: &str, headers: &[(&str, &str)]) -> String {
    try_open(port, path, headers).await.unwrap_or_else(|refused| panic!("{refused}"))
}

/// Opens a session, or says why not.
async fn try_open(port: u16, path: &str, headers: &[(&str, &str)]) -> Result<String, String> {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}});
    let (status, head, body) = mcp(port, "POST", path, headers, &init.to_string()).await;
    let id = head.lines().find_map(|l| l.strip_prefix("mcp-session-id: "));
    let id = match id {
        Some(id) if status == 200 && body.contains("\"result\"") => id.trim().to_owned(),
        _ => return Err(format!("{head}\n{body}")),
    };
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let session = [headers, &[("Mcp-Session-Id", id.as_str())]].concat();
    let (status, _, body) = mcp(port, "POST", path, &session, &initialized).await;
    assert_eq!(status, 202, "{body}");
    Ok(id)
}

/// A `ping` in session `id` at `path`; the status.
async fn ping(port: u16, path: &str, id: &str, headers: &[(&str, &str)]) -> u16 {
    let ping = json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}).to_string();
    let session = [headers, &[("Mcp-Session-Id", id)]].concat();
    let (status, _, body) = mcp(port, "POST", path, &session, &ping).await;
    if status == 200 {
        assert!(body.contains("\"result\""), "{body}");
    }
    status
}

async fn delete(port: u16, path: &str, id: &str) -> u16 {
    mcp(port, "DELETE", path, &[("Mcp-Session-Id", id)], "").await.0
}

async fn listen(port: u16, path: &str, id: &str) -> u16 {
    mcp(port, "GET", path, &[("Mcp-Session-Id", id), ("Accept", "text/event-stream")], "").await.0
}

/// A session's tool server comes from the daemon's own data dir (`<config dir>/data` with
/// `--config-dir`), not the user's: a second instance, or a test, stays apart.
#[cfg(unix)]
#[tokio::test]
async fn a_session_runs_the_tool_server_of_the_daemon_s_data_dir() {
    use std::os::unix::fs::PermissionsExt;
    without_tool_servers();
    let d = daemon().await;
    let ran = d.config_dir().join("node-ran");
    // PATH leads nowhere here: only the shell's builtins run.
    let node = d.config_dir().join("fake-node");
    std::fs::write(&node, format!("#!/bin/sh\necho started > '{}'\n", ran.display())).unwrap();
    std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o700)).unwrap();
    plant_tool_servers(&d.config_dir().join("data"), &node);
    open(d.running.port, &format!("/{}/mcp", d.token()), &[]).await;
    let started = async {
        while !ran.exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(WAIT, started).await.expect("the child started from <config dir>/data");
}

#[tokio::test]
async fn another_credential_cannot_use_or_end_a_session() {
    without_tool_servers();
    let mut tokens = (String::new(), String::new());
    let d = daemon_configured(
        |dir| tokens = (credentials::add(dir, "alice").unwrap(), credentials::add(dir, "bob").unwrap()),
        |_| {},
    )
    .await;
    let (alice, bob) = tokens;
    let (port, owner) = (d.running.port, d.token());
    let alices = open(port, &format!("/{alice}/mcp"), &[]).await;
    assert_eq!(ping(port, &format!("/{alice}/mcp"), &alices, &[]).await, 200);
    // Alice's own token in its other forms is still Alice.
    let bearer = format!("Bearer {alice}");
    assert_eq!(ping(port, "/mcp", &alices, &[("Authorization", &bearer)]).await, 200);
    assert_eq!(ping(port, &format!("/mcp?token={alice}"), &alices, &[]).await, 200);

    // Bob, in every form and on every method, finds no such session.
    let bobs_bearer = format!("Bearer {bob}");
    assert_eq!(ping(port, &format!("/{bob}/mcp"), &alices, &[]).await, 404);
    assert_eq!(ping(port, "/mcp", &alices, &[("Authorization", &bobs_bearer)]).await, 404);
    assert_eq!(ping(port, &format!("/mcp?token={bob}"), &alices, &[]).await, 404);
    assert_eq!(listen(port, &format!("/{bob}/mcp"), &alices).await, 404);
    assert_eq!(delete(port, &format!("/{bob}/mcp"), &alices).await, 404);
    // Nor does the owner token: the session is Alice's token's, at any agent path.
    assert_eq!(ping(port, &format!("/{owner}/mcp"), &alices, &[]).await, 404);
    assert_eq!(ping(port, &format!("/{owner}/agent/alice/mcp"), &alices, &[]).await, 404);
    assert_eq!(delete(port, &format!("/{owner}/agent/alice/mcp"), &alices).await, 404);
    // A made-up or doubled id is nobody's either.
    assert_eq!(ping(port, &format!("/{alice}/mcp"), "not-a-session", &[]).await, 404);
    let doubled = [("Mcp-Session-Id", alices.as_str())];
    assert_eq!(ping(port, &format!("/{alice}/mcp"), &alices, &doubled).await, 400);

    // Alice's session survived all of that; she may listen to it and end it.
    assert_eq!(ping(port, &format!("/{alice}/mcp"), &alices, &[]).await, 200);
    assert_eq!(listen(port, &format!("/{alice}/mcp"), &alices).await, 200);
    assert_eq!(delete(port, &format!("/{alice}/mcp"), &alices).await, 202);
    assert_eq!(ping(port, &format!("/{alice}/mcp"), &alices, &[]).await, 404);

    // Once her token is revoked, her other session is nobody's to use.
    let again = open(port, &format!("/{alice}/mcp"), &[]).await;
    agent_cli::revoke(d.config_dir(), "alice").await.unwrap();
    assert_eq!(ping(port, &format!("/{alice}/mcp"), &again, &[]).await, 401);
    assert_eq!(delete(port, &format!("/{bob}/mcp"), &again).await, 404);
}

#[tokio::test]
async fn an_owner_session_is_bound_to_the_agent_its_path_named() {
    without_tool_servers();
    let d = daemon().await;
    let (port, owner) = (d.running.port, d.token());
    let xs = open(port, &format!("/{owner}/agent/x/mcp"), &[]).await;
    assert_eq!(ping(port, &format!("/{owner}/agent/x/mcp"), &xs, &[]).await, 200);
    assert_eq!(ping(port, &format!("/{owner}/agent/y/mcp"), &xs, &[]).await, 404);
    assert_eq!(ping(port, &format!("/{owner}/mcp"), &xs, &[]).await, 404);
    assert_eq!(delete(port, &format!("/{owner}/agent/y/mcp"), &xs).await, 404);
    assert_eq!(ping(port, &format!("/{owner}/agent/x/mcp"), &xs, &[]).await, 200);
}

#[tokio::test]
async fn a_revoked_tokens_sessions_end_with_it() {
    without_tool_servers();
    let mut alice = String::new();
    let d = daemon_configured(|dir| alice = credentials::add(dir, "alice").unwrap(), |_| {}).await;
    let port = d.running.port;
    for _ in 0..4 {
        open(port, &format!("/{alice}/mcp"), &[]).await;
    }
    let refused = try_open(port, &format!("/{alice}/mcp"), &[]).await.unwrap_err();
    assert!(refused.contains("MCP sessions already"), "{refused}");
    agent_cli::revoke(d.config_dir(), "alice").await.unwrap();
    // Her sessions ended with her token: a new token of hers is not held back by them.
    let again = agent_cli::add(d.config_dir(), "alice").await.unwrap();
    open(port, &format!("/{again}/mcp"), &[]).await;
}

/// A session's agent is connected from the session's start, before its first tool call (here
/// no tool server ever starts): the extension is asked for its tab at once.
#[tokio::test]
async fn a_session_connects_its_agent_when_it_starts() {
    without_tool_servers();
    let d = daemon_configured(|_| {}, |options| options.prepare_tabs = true).await;
    let mut ext = extension(&d, &[]).await;
    let (port, owner) = (d.running.port, d.token());
    let id = open(port, &format!("/{owner}/agent/early/mcp"), &[]).await;
    let prepared = loop {
        if let ToExtension::PrepareTabs { agents } = next_ext(&mut ext).await {
            break agents;
        }
    };
    assert_eq!(prepared, ["early"]);
    assert_eq!(delete(port, &format!("/{owner}/agent/early/mcp"), &id).await, 202);
}

/// A session's agent is shown to the human as expected (an MCP session, no CDP client) while
/// the session lasts; once it ends, the window and prepared tab kept for the agent wait out its
/// grace period (the side panel says until when), then go.
#[tokio::test]
async fn a_sessions_agent_is_expected_and_its_tab_waits_out_its_grace_period_after_it() {
    without_tool_servers();
    const GRACE_MS: u64 = 1000;
    let d = daemon_configured(
        |_| {},
        |options| {
            options.prepare_tabs = true;
            options.limits.agent_grace_ms = GRACE_MS;
        },
    )
    .await;
    let mut ext = extension(&d, &[]).await;
    let (port, owner) = (d.running.port, d.token());
    let early = |agents: &[tabtunnel_wire::AgentStatus]| agents.iter().find(|a| a.name == "early").cloned();
    let id = open(port, &format!("/{owner}/agent/early/mcp"), &[]).await;
    let (mut prepared, mut expected) = (None, false);
    while prepared.is_none() || !expected {
        match next_ext_with_reports(&mut ext).await {
            ToExtension::PrepareTabs { agents } => prepared = Some(agents),
            ToExtension::Agents { agents, .. } => {
                if let Some(a) = early(&agents) {
                    assert_eq!((a.connections, a.sessions), (0, 1), "a session, no client: {a:?}");
                    expected = true;
                }
            }
            _ => {}
        }
    }
    assert_eq!(prepared.unwrap(), ["early"]);
    let ended = std::time::Instant::now();
    assert_eq!(delete(port, &format!("/{owner}/agent/early/mcp"), &id).await, 202);
    let mut window_waits = false;
    loop {
        match next_ext_with_reports(&mut ext).await {
            ToExtension::Agents { now_ms, agents } => {
                if let Some(a) = early(&agents).filter(|a| a.sessions == 0) {
                    assert_eq!(a.connections, 0);
                    assert!(a.releases_at_ms.is_some_and(|at| at > now_ms), "{a:?}");
                    window_waits = true;
                }
            }
            ToExtension::PrepareTabs { agents } => {
                assert!(agents.is_empty(), "{agents:?}");
                break;
            }
            _ => {}
        }
    }
    assert!(window_waits, "the side panel heard when its window goes");
    assert!(ended.elapsed().as_millis() as u64 >= GRACE_MS, "its tab waited out the grace period");
}
