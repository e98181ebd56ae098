//! The daemon over real sockets, with a scripted fake extension in place of Chrome.

mod common;
use common::*;
use tabtunnel_wire::hot;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[tokio::test]
async fn discovery_names_the_real_browser_and_the_token_url() {
    let d = daemon().await;
    let token = d.running.token.clone().unwrap();
    let (status, body) = get(d.running.port, &format!("/{token}/json/version"), &[]).await;
    assert_eq!(status, 503, "no browser before the extension: {body}");
    let _ext = extension(&d, &[3]).await;
    for path in [
        format!("/{token}/json/version"),
        format!("/{token}/json/version/"),
        format!("/json/version?token={token}"),
    ] {
        let (status, body) = get(d.running.port, &path, &[]).await;
        assert_eq!(status, 200, "{path}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["Browser"], "HeadlessChrome/156.0.8078.73");
        assert_eq!(v["User-Agent"], "Mozilla/5.0 HeadlessChrome/156.0.0.0 Safari/537.36");
        assert_eq!(v["webSocketDebuggerUrl"], d.running.ws_endpoint());
    }
    let bearer = format!("Bearer {token}");
    let (status, body) = get(d.running.port, "/json/list", &[("Authorization", &bearer)]).await;
    assert_eq!(status, 200);
    let list: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(list[0]["id"], "PAGE3");
    assert_eq!(
        list[0]["webSocketDebuggerUrl"],
        format!("ws://127.0.0.1:{}/{token}/devtools/page/PAGE3", d.running.port)
    );
}

#[tokio::test]
async fn strangers_are_refused() {
    let d = daemon().await;
    let port = d.running.port;
    let token = d.running.token.clone().unwrap();
    assert_eq!(get(port, "/json/version", &[]).await.0, 401);
    assert_eq!(get(port, &format!("/{}/json/version", "0".repeat(64)), &[]).await.0, 401);
    assert_eq!(
        get(port, &format!("/{token}/json/version"), &[("Origin", "http://evil.example")]).await.0,
        403
    );
    assert_eq!(get(port, &format!("/{token}/json/version"), &[("Host", "evil.example")]).await.0, 403);
    let loopback = format!("127.0.0.1:{port}");
    let two_hosts = [("Host", loopback.as_str()), ("Host", "evil.example")];
    assert_eq!(get(port, &format!("/{token}/json/version"), &two_hosts).await.0, 400);
    let no_token_ws = format!("ws://127.0.0.1:{port}/devtools/browser/{}", d.running.browser_target_id);
    assert!(ws(&no_token_ws, None).await.is_err());
    assert!(ws(&d.running.ws_endpoint(), Some("http://evil.example")).await.is_err());
    assert!(ws(&d.running.extension_url(), None).await.is_err(), "the extension socket needs our origin");
    assert!(ws(&d.running.extension_url(), Some("chrome-extension://someoneelse")).await.is_err());
    let wrong_browser = format!("ws://127.0.0.1:{port}/{token}/devtools/browser/NOPE");
    assert!(ws(&wrong_browser, None).await.is_err());
}

#[tokio::test]
async fn a_command_travels_to_the_tab_and_back_with_events() {
    let d = daemon().await;
    let mut ext = extension(&d, &[7]).await;
    let mut c = client(&d).await;
    let pages = attach_pages(&mut c).await;
    assert_eq!(pages.len(), 1);
    send(&mut c, json!({"id": 3, "sessionId": pages[0], "method": "Runtime.enable"})).await;
    let ToExtension::Command(enable) = next_ext(&mut ext).await else { panic!("expected a command") };
    ext_send(&mut ext, FromExtension::CommandResult(CommandResult::ok(enable.id, raw("{}")))).await;
    assert_eq!(until_reply(&mut c, 3).await.0["result"], json!({}));
    send(&mut c, json!({"id": 2, "sessionId": pages[0], "method": "Runtime.evaluate", "params": {"expression": "6*7", "returnByValue": true}})).await;
    let ToExtension::Command(cmd) = next_ext(&mut ext).await else { panic!("expected a command") };
    assert_eq!((cmd.tab_id, cmd.method.as_str()), (7, "Runtime.evaluate"));
    assert_eq!(cmd.params.unwrap().get(), r#"{"expression":"6*7","returnByValue":true}"#);
    ext_send(
        &mut ext,
        FromExtension::Event(Event {
            tab_id: 7,
            child_session_id: None,
            method: "Runtime.consoleAPICalled".into(),
            params: raw(r#"{"type":"log"}"#),
        }),
    )
    .await;
    ext_send(
        &mut ext,
        FromExtension::CommandResult(CommandResult::ok(
            cmd.id,
            raw(r#"{"result":{"type":"number","value":42}}"#),
        )),
    )
    .await;
    let (reply, events) = until_reply(&mut c, 2).await;
    assert_eq!(reply["result"]["result"]["value"], 42);
    assert_eq!(reply["sessionId"], pages[0]);
    assert_eq!(events[0]["method"], "Runtime.consoleAPICalled");
    assert_eq!(events[0]["sessionId"], pages[0]);
    ext_send(&mut ext, FromExtension::TabUnshared { tab_id: 7, reason: UnshareReason::Closed }).await;
    let detached = next_json(&mut c).await;
    assert_eq!(detached["method"], "Target.detachedFromTarget");
    assert_eq!(detached["params"]["targetId"], "PAGE7");
}

#[tokio::test]
async fn bad_frames_get_errors_and_the_socket_stays_usable() {
    let d = daemon().await;
    let _ext = extension(&d, &[]).await;
    let mut c = client(&d).await;
    c.send(Message::text("{oops")).await.unwrap();
    assert_eq!(next_json(&mut c).await["error"]["code"], -32700);
    c.send(Message::text(r#"{"method":"Browser.getVersion"}"#)).await.unwrap();
    assert_eq!(next_json(&mut c).await["error"]["code"], -32600);
    send(&mut c, json!({"id": 5, "sessionId": "NOPE", "method": "Page.enable"})).await;
    assert_eq!(next_json(&mut c).await["error"]["code"], -32001);
    send(&mut c, json!({"id": 6, "method": "Browser.getVersion"})).await;
    assert_eq!(next_json(&mut c).await["result"]["product"], "HeadlessChrome/156.0.8078.73");
}

#[tokio::test]
async fn a_lost_extension_fails_what_is_in_flight_and_a_new_one_takes_over() {
    let d = daemon().await;
    let mut ext = extension(&d, &[1]).await;
    let mut c = client(&d).await;
    let pages = attach_pages(&mut c).await;
    send(&mut c, json!({"id": 9, "sessionId": pages[0], "method": "Page.reload"})).await;
    let ToExtension::Command(_) = next_ext(&mut ext).await else { panic!() };
    drop(ext);
    let (reply, _) = until_reply(&mut c, 9).await;
    assert!(reply["error"]["message"].as_str().unwrap().contains("disconnected"), "{reply}");
    let detached = next_json(&mut c).await;
    assert_eq!(detached["method"], "Target.detachedFromTarget");
    let mut ext2 = extension(&d, &[1]).await;
    let attached = next_json(&mut c).await;
    assert_eq!(attached["method"], "Target.attachedToTarget", "the auto-attaching client gets the tab back");
    let session = attached["params"]["sessionId"].as_str().unwrap().to_owned();
    send(&mut c, json!({"id": 10, "sessionId": session, "method": "Page.enable"})).await;
    let ToExtension::Command(cmd) = next_ext(&mut ext2).await else { panic!() };
    ext_send(&mut ext2, FromExtension::CommandResult(CommandResult::ok(cmd.id, raw("{}")))).await;
    assert_eq!(until_reply(&mut c, 10).await.0["result"], json!({}));
}

#[tokio::test]
async fn a_client_that_stops_reading_is_dropped_without_stalling_others() {
    // The default bounds but a shorter patience: the stall rule's own figures are tested below.
    let limits = OutboxLimits { stall_timeout: Duration::from_secs(2), ..OutboxLimits::default() };
    let d = daemon_with_outbox(limits).await;
    let mut ext = extension(&d, &[1]).await;
    let mut slow = client(&d).await;
    let pages = attach_pages(&mut slow).await;
    send(&mut slow, json!({"id": 2, "sessionId": pages[0], "method": "Network.enable"})).await;
    let ToExtension::Command(_) = next_ext(&mut ext).await else { panic!("expected Network.enable") };
    let mut fast = client(&d).await;
    let params = format!(r#"{{"data":"{}"}}"#, "x".repeat(4096));
    // 64 MiB: far more than its socket buffers; it is dropped for taking nothing meanwhile.
    for _ in 0..(64 << 20) / 4096 {
        ext_send(
            &mut ext,
            FromExtension::Event(Event {
                tab_id: 1,
                child_session_id: None,
                method: "Network.dataReceived".into(),
                params: raw(&params),
            }),
        )
        .await;
    }
    send(&mut fast, json!({"id": 1, "method": "Browser.getVersion"})).await;
    assert!(next_json(&mut fast).await["result"]["product"].is_string());
    // Left alone past its patience, the slow client's socket was closed by the daemon:
    // draining it ends.
    tokio::time::sleep(limits.stall_timeout * 2).await;
    assert!(closes_within(&mut slow, Duration::from_secs(30)).await, "the slow client was disconnected");
}

#[tokio::test]
async fn a_page_endpoint_drives_its_tab_directly() {
    let d = daemon().await;
    let mut ext = extension(&d, &[4]).await;
    let url =
        format!("ws://127.0.0.1:{}/{}/devtools/page/PAGE4", d.running.port, d.running.token.clone().unwrap());
    let mut page = ws(&url, None).await.unwrap();
    send(&mut page, json!({"id": 1, "method": "Page.enable"})).await;
    let ToExtension::Command(cmd) = next_ext(&mut ext).await else { panic!() };
    assert_eq!(cmd.tab_id, 4);
    ext_send(&mut ext, FromExtension::CommandResult(CommandResult::ok(cmd.id, raw("{}")))).await;
    let reply = next_json(&mut page).await;
    assert_eq!(reply["id"], 1);
    assert!(reply.get("sessionId").is_none());
    let missing =
        format!("ws://127.0.0.1:{}/{}/devtools/page/NOPE", d.running.port, d.running.token.clone().unwrap());
    assert!(ws(&missing, None).await.is_err());
    ext_send(&mut ext, FromExtension::TabUnshared { tab_id: 4, reason: UnshareReason::Closed }).await;
    assert_eq!(next_json(&mut page).await["method"], "Inspector.detached");
    assert!(closes_within(&mut page, WAIT).await, "the page socket closes with its tab");
}

#[tokio::test]
async fn an_extension_of_another_protocol_version_is_told_why() {
    let d = daemon().await;
    let mut socket = extension_socket(&d).await;
    let FromExtension::Hello(mut h) = hello(&[]) else { unreachable!() };
    h.protocol_version += 1;
    socket.send(Message::text(FromExtension::Hello(h).to_json())).await.unwrap();
    match next_ext(&mut socket).await {
        ToExtension::Rejected { reason } => assert!(reason.contains("protocol"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_second_browser_is_told_no_while_the_first_is_connected() {
    let d = daemon().await;
    let mut first = extension(&d, &[1]).await;
    let mut c = client(&d).await;
    let pages = attach_pages(&mut c).await;
    let mut other = extension_socket(&d).await;
    let FromExtension::Hello(mut h) = hello(&[2]) else { unreachable!() };
    h.instance_id = "browser-2".into();
    other.send(Message::text(FromExtension::Hello(h).to_json())).await.unwrap();
    match next_ext(&mut other).await {
        ToExtension::Rejected { reason } => assert!(reason.contains("another browser"), "{reason}"),
        frame => panic!("{frame:?}"),
    }
    // The first browser and its client carry on untouched.
    send(&mut c, json!({"id": 2, "sessionId": pages[0], "method": "Page.reload"})).await;
    let ToExtension::Command(cmd) = next_ext(&mut first).await else { panic!("expected a command") };
    ext_send(&mut first, FromExtension::CommandResult(CommandResult::ok(cmd.id, raw("{}")))).await;
    assert_eq!(until_reply(&mut c, 2).await.0["result"], json!({}));
    // Once the first is gone, the second gets in.
    drop(first);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut second = extension_socket(&d).await;
    let FromExtension::Hello(mut h) = hello(&[2]) else { unreachable!() };
    h.instance_id = "browser-2".into();
    second.send(Message::text(FromExtension::Hello(h).to_json())).await.unwrap();
    assert!(matches!(next_ext(&mut second).await, ToExtension::Welcome(_)));
}

/// A client with a session on tab 1 and `Network` enabled there (the fake extension answers).
async fn network_client(d: &Daemon, ext: &mut ExtSocket) -> Socket {
    network_enabled(client(d).await, ext).await
}

async fn network_enabled(mut c: Socket, ext: &mut ExtSocket) -> Socket {
    let pages = attach_pages(&mut c).await;
    send(&mut c, json!({"id": 2, "sessionId": pages[0], "method": "Network.enable"})).await;
    let ToExtension::Command(enable) = next_ext(ext).await else { panic!("expected Network.enable") };
    ext_send(ext, FromExtension::CommandResult(CommandResult::ok(enable.id, raw("{}")))).await;
    until_reply(&mut c, 2).await;
    c
}

/// Events of `bytes` each on tab 1, from the fake extension.
async fn flood(ext: &mut Socket, count: usize, bytes: usize) {
    let params = format!(r#"{{"data":"{}"}}"#, "x".repeat(bytes));
    for _ in 0..count {
        let event = Event {
            tab_id: 1,
            child_session_id: None,
            method: "Network.dataReceived".into(),
            params: raw(&params),
        };
        ext_send(ext, FromExtension::Event(event)).await;
    }
}

#[tokio::test]
async fn a_client_over_its_byte_limit_is_disconnected_at_once_while_others_carry_on() {
    let d = daemon_with_outbox(OutboxLimits { max_bytes: 4 << 20, ..OutboxLimits::default() }).await;
    let mut ext = extension(&d, &[1]).await;
    let (mut slow, mut fast) = (network_client(&d, &mut ext).await, network_client(&d, &mut ext).await);
    // 64 MiB of events, in steps the fast client reads as they come; the slow one reads nothing.
    for _ in 0..128 {
        flood(&mut ext, 16, 32 << 10).await;
        for _ in 0..16 {
            assert_eq!(next_json(&mut fast).await["method"], "Network.dataReceived");
        }
    }
    send(&mut fast, json!({"id": 3, "method": "Browser.getVersion"})).await;
    assert!(until_reply(&mut fast, 3).await.0["result"]["product"].is_string());
    // The slow one was closed: it finds its socket ended after what its socket buffers held,
    // not the whole flood.
    let mut received = 0usize;
    let drained = async {
        while let Some(Ok(message)) = slow.next().await {
            received += message.len();
        }
    };
    tokio::time::timeout(WAIT, drained).await.expect("the slow client's socket is closed");
    assert!(received < 16 << 20, "the slow client got {received} bytes of a 64 MiB flood");
}

#[tokio::test]
async fn a_client_that_stops_reading_is_dropped_once_it_stalls_while_a_slow_reader_is_kept() {
    // The flood (16 MiB) stays under the byte bound: only the stall can end the stopped client.
    let limits = OutboxLimits {
        max_bytes: 64 << 20,
        stall_bytes: 256 << 10,
        stall_timeout: Duration::from_secs(1),
        ..OutboxLimits::default()
    };
    let d = daemon_with_outbox(limits).await;
    let mut ext = extension(&d, &[1]).await;
    let (mut stopped, mut slow) = (network_client(&d, &mut ext).await, network_client(&d, &mut ext).await);
    // The slow one reads every event, a little behind and at its own pace.
    for _ in 0..32 {
        flood(&mut ext, 16, 32 << 10).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
        for _ in 0..16 {
            assert_eq!(next_json(&mut slow).await["method"], "Network.dataReceived");
        }
    }
    // The stopped one is closed once it has taken nothing for a second:
    // reading again later, it finds what its socket buffers held, then the end.
    tokio::time::sleep(limits.stall_timeout * 2).await;
    let mut received = 0usize;
    let drained = async {
        while let Some(Ok(message)) = stopped.next().await {
            received += message.len();
        }
    };
    tokio::time::timeout(WAIT, drained).await.expect("the stopped client's socket is closed");
    assert!(received < 16 << 20, "the stopped client got {received} bytes of a 16 MiB flood");
    send(&mut slow, json!({"id": 3, "method": "Browser.getVersion"})).await;
    assert!(
        until_reply(&mut slow, 3).await.0["result"]["product"].is_string(),
        "the slow reader is still there"
    );
}

#[tokio::test]
async fn a_client_that_reads_a_long_burst_slowly_but_steadily_is_kept() {
    // Patience 2 s once 256 KiB wait. The reader takes 32 KiB every 40 ms (800 KB/s) with its
    // socket buffers full: it takes something every few tens of milliseconds, however much of
    // the burst is still to come, and the daemon must see that as reading. (It did not while
    // the kernel's send buffer grew to megabytes: the writer woke only when a third of it had
    // drained, seconds of such reading.)
    let limits = OutboxLimits {
        max_bytes: 64 << 20,
        stall_bytes: 256 << 10,
        stall_timeout: Duration::from_secs(2),
        ..OutboxLimits::default()
    };
    let d = daemon_with_outbox(limits).await;
    let mut ext = extension(&d, &[1]).await;
    let mut reader = network_enabled(client_with_receive_buffer(&d, 64 << 10).await, &mut ext).await;
    flood(&mut ext, 512, 32 << 10).await;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(40)).await;
        assert_eq!(next_json(&mut reader).await["method"], "Network.dataReceived");
    }
    send(&mut reader, json!({"id": 3, "method": "Browser.getVersion"})).await;
    let (reply, events) = until_reply(&mut reader, 3).await;
    assert!(reply["result"]["product"].is_string(), "the slow reader is still there: {reply}");
    assert_eq!(events.len(), 412, "and got every event");
}

#[tokio::test]
async fn a_client_that_pauses_for_seconds_with_megabytes_waiting_is_kept() {
    // The default bounds. On two loaded cores a reading puppeteer took nothing for 5.2 s with
    // 3.5 MiB of a flood waiting for it, and was dropped by a 5 s rule; Chrome keeps it.
    let d = daemon().await;
    let mut ext = extension(&d, &[1]).await;
    let mut reader = network_enabled(client_with_receive_buffer(&d, 64 << 10).await, &mut ext).await;
    flood(&mut ext, 128, 32 << 10).await;
    tokio::time::sleep(Duration::from_secs(7)).await;
    send(&mut reader, json!({"id": 3, "method": "Browser.getVersion"})).await;
    let (reply, events) = until_reply(&mut reader, 3).await;
    assert!(reply["result"]["product"].is_string(), "the paused reader is still there: {reply}");
    assert_eq!(events.len(), 128, "and got every event");
}

#[tokio::test]
async fn clients_that_stop_reading_hold_no_more_than_the_bound_for_all_clients() {
    // Patience far past the test: only the bound for all clients (8 MiB) can end a stopped one.
    let limits = OutboxLimits {
        max_bytes: 64 << 20,
        stall_timeout: Duration::from_secs(600),
        max_total_bytes: 8 << 20,
        ..OutboxLimits::default()
    };
    let d = daemon_with_outbox(limits).await;
    let mut ext = extension(&d, &[1]).await;
    let mut stopped = Vec::new();
    for _ in 0..2 {
        stopped.push(network_enabled(client_with_receive_buffer(&d, 64 << 10).await, &mut ext).await);
    }
    let mut reader = network_client(&d, &mut ext).await;
    // 6 MiB for each of three clients: the two stopped ones pass 8 MiB together, the reader
    // keeps up.
    for _ in 0..12 {
        flood(&mut ext, 16, 32 << 10).await;
        for _ in 0..16 {
            assert_eq!(next_json(&mut reader).await["method"], "Network.dataReceived");
        }
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    // One of the stopped clients was given up on (its socket ends after what its buffers
    // held); the other, under the bound alone, still gets its answer behind the whole flood.
    let mut outcomes = Vec::new();
    for mut client in stopped {
        send(&mut client, json!({"id": 3, "method": "Browser.getVersion"})).await;
        let outcome = async {
            let mut events = 0;
            while let Some(Ok(message)) = client.next().await {
                let Message::Text(text) = message else { continue };
                let frame: Value = serde_json::from_str(&text).unwrap();
                if frame["id"] == 3 {
                    return format!("answered after {events} events");
                }
                events += 1;
            }
            "closed".to_owned()
        };
        outcomes.push(tokio::time::timeout(WAIT, outcome).await.expect("an answer or the end"));
    }
    outcomes.sort();
    assert_eq!(outcomes, ["answered after 192 events", "closed"]);
    send(&mut reader, json!({"id": 4, "method": "Browser.getVersion"})).await;
    assert!(until_reply(&mut reader, 4).await.0["result"]["product"].is_string(), "the reader stays");
}

#[tokio::test]
async fn a_connection_that_sends_no_request_is_closed() {
    let d = daemon().await;
    let mut idle = TcpStream::connect(("127.0.0.1", d.running.port)).await.unwrap();
    let mut buf = [0u8; 64];
    let read = tokio::time::timeout(Duration::from_secs(30), idle.read(&mut buf)).await;
    assert!(matches!(read, Ok(Ok(0)) | Ok(Err(_))), "the daemon closes it: {read:?}");
    // A connection carries one request: its answer says so and the connection ends with it,
    // so no client reuses one the daemon is closing (Node's HTTP agent did, and got a reset).
    let mut once = TcpStream::connect(("127.0.0.1", d.running.port)).await.unwrap();
    let token = d.running.token.clone().unwrap();
    let request = format!("GET /{token}/json/version HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    once.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(30), once.read_to_end(&mut response)).await;
    assert!(read.is_ok(), "the daemon closes the connection");
    let response = String::from_utf8_lossy(&response).to_ascii_lowercase();
    assert!(response.starts_with("http/1.1 503"), "it got its answer first: {response}");
    assert!(response.contains("\r\nconnection: close\r\n"), "and was told: {response}");
}

#[tokio::test]
async fn without_the_extension_discovery_and_browser_requests_say_so() {
    let d = daemon().await;
    let ext = extension(&d, &[1]).await;
    let mut c = client(&d).await;
    drop(ext);
    let token = d.running.token.clone().unwrap();
    for path in ["json/version", "json/list"] {
        let status = async {
            loop {
                let (status, body) = get(d.running.port, &format!("/{token}/{path}"), &[]).await;
                if status == 503 {
                    return body;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        let body = tokio::time::timeout(WAIT, status).await.expect("503 once the extension is gone");
        assert!(body.contains("extension is not connected"), "{path}: {body}");
    }
    send(&mut c, json!({"id": 1, "method": "Target.getTargets"})).await;
    let (reply, _) = until_reply(&mut c, 1).await;
    assert!(reply["error"]["message"].as_str().unwrap().contains("extension is not connected"), "{reply}");
}

#[tokio::test]
async fn several_frames_in_one_message_arrive_in_order_and_a_bad_one_costs_only_itself() {
    let d = daemon().await;
    let mut ext = extension(&d, &[7]).await;
    let mut c = client(&d).await;
    let pages = attach_pages(&mut c).await;
    for id in 2..5 {
        send(&mut c, json!({"id": id, "sessionId": pages[0], "method": "Runtime.evaluate", "params": {"expression": "1"}}))
            .await;
    }
    let mut ids = Vec::new();
    while ids.len() < 3 {
        let ToExtension::Command(cmd) = next_ext(&mut ext).await else { panic!("expected a command") };
        ids.push(cmd.id);
    }
    // As the extension writes them: the hot frames by layout, the rest through serde, a line each.
    let tricky = r#"{"result":{"type":"string","value":"}}\n\"quoted\"\\ {\"id\":1}"}}"#;
    let error = CommandResult::err(
        ids[1],
        tabtunnel_wire::CdpError { code: -32000, message: "nope".into(), data: None },
    );
    let message = [
        hot::event(7, None, "Inspector.targetReloadedAfterCrash", "{}"),
        hot::command_result(ids[0], r#"{"result":{"type":"number","value":1}}"#),
        "{\"commandResult\":{\"id\":".to_owned(),
        FromExtension::CommandResult(error).to_json(),
        hot::command_result(ids[2], tricky),
    ]
    .join("\n");
    ext.send(Message::text(message)).await.unwrap();
    let (first, events) = until_reply(&mut c, 2).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        (events[0]["method"].as_str(), events[0]["sessionId"].as_str()),
        (Some("Inspector.targetReloadedAfterCrash"), Some(pages[0].as_str()))
    );
    assert_eq!(first["result"]["result"]["value"], 1);
    assert_eq!(next_json(&mut c).await["error"]["message"], "nope");
    let third = next_json(&mut c).await;
    assert_eq!(third["id"], 4);
    assert_eq!(third["result"]["result"]["value"], "}}\n\"quoted\"\\ {\"id\":1}");
}

#[tokio::test]
async fn a_large_answer_reaches_the_client_whole_in_fragments_of_a_quarter_megabyte() {
    let d = daemon().await;
    let mut ext = extension(&d, &[7]).await;
    // A client that takes frames of a megabyte at most, so the 6 MiB answer must come in
    // fragments (written whole, it was one frame, copied whole into tungstenite's write buffer).
    let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .max_frame_size(Some(1 << 20))
        .max_message_size(Some(64 << 20));
    let (mut c, _) =
        tokio_tungstenite::connect_async_with_config(d.running.ws_endpoint(), Some(config), false)
            .await
            .unwrap();
    let pages = attach_pages(&mut c).await;
    for id in [2, 3] {
        send(&mut c, json!({"id": id, "sessionId": pages[0], "method": "Runtime.evaluate", "params": {"expression": "x"}}))
            .await;
    }
    let mut ids = Vec::new();
    while ids.len() < 2 {
        let ToExtension::Command(cmd) = next_ext(&mut ext).await else { panic!("expected a command") };
        ids.push(cmd.id);
    }
    // Characters of two and three bytes: fragments end inside some of them, as they may.
    let value = "é€x".repeat(1 << 20);
    let large = json!({"result": {"type": "string", "value": value}}).to_string();
    // As the extension sends a large answer: its own message, binary (UTF-8).
    ext.send(Message::binary(hot::command_result(ids[0], &large).into_bytes())).await.unwrap();
    ext.send(Message::text(hot::command_result(ids[1], r#"{"result":{"type":"number","value":1}}"#)))
        .await
        .unwrap();
    let (first, events) = until_reply(&mut c, 2).await;
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(first["sessionId"], pages[0]);
    assert!(first["result"]["result"]["value"] == value.as_str(), "the large answer differs");
    let second = next_json(&mut c).await;
    assert_eq!((second["id"].as_i64(), &second["result"]["result"]["value"]), (Some(3), &json!(1)));
}
