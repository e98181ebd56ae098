//! A fair share of the browser per client, over real sockets with the fake extension: a burst
//! from one client, or answers it does not read, do not stand in front of another's command.
mod common;
use common::*;

/// The fake extension's next command.
async fn next_command(ext: &mut ExtSocket) -> tabtunnel_wire::Command {
    match next_ext(ext).await {
        ToExtension::Command(cmd) => cmd,
        other => panic!("expected a command, got {other:?}"),
    }
}

/// A daemon on which a command in flight counts as waiting in line for as long as these tests
/// take (by default it stops counting after half a second: on a loaded machine that would let
/// more of a burst out than the window, and the counts below would depend on speed).
async fn patient_daemon() -> Daemon {
    daemon_with(Limits { in_line_ms: 3_600_000, ..Limits::default() }).await
}

/// Two clients attached to tabs 1 and 2: (client, its session on the tab of its own).
async fn two_clients(d: &Daemon) -> ((Socket, String), (Socket, String)) {
    let mut busy = client(d).await;
    let busy_session = attach_pages(&mut busy).await[0].clone();
    let mut victim = client(d).await;
    let victim_session = attach_pages(&mut victim).await[1].clone();
    ((busy, busy_session), (victim, victim_session))
}

#[tokio::test]
async fn another_clients_command_goes_before_a_burst_of_a_thousand_drains() {
    let d = patient_daemon().await;
    let mut ext = extension(&d, &[1, 2]).await;
    let ((mut busy, busy_session), (mut victim, victim_session)) = two_clients(&d).await;
    for id in 0..1000 {
        send(&mut busy, json!({"id": 100 + id, "sessionId": busy_session, "method": "Runtime.evaluate"}))
            .await;
    }
    // The burst is with the daemon: its first commands reached the extension.
    let mut flood_seen = vec![next_command(&mut ext).await];
    send(&mut victim, json!({"id": 1, "sessionId": victim_session, "method": "Page.reload"})).await;
    // The extension answers in the order it was handed commands, as chrome.debugger does.
    let mut answered = 0;
    loop {
        let cmd = match flood_seen.pop() {
            Some(cmd) => cmd,
            None => next_command(&mut ext).await,
        };
        ext_send(&mut ext, FromExtension::CommandResult(CommandResult::ok(cmd.id, raw("{}")))).await;
        if cmd.tab_id == 2 {
            break;
        }
        answered += 1;
    }
    assert_eq!(until_reply(&mut victim, 1).await.0["result"], json!({}));
    // Ahead of it: the window in flight when it came (32), not the burst.
    assert!(answered < 100, "{answered} of the burst's commands went first");
    // The burst still gets every answer, one each.
    let busy_answers = tokio::spawn(async move {
        for id in 0..1000 {
            assert!(until_reply(&mut busy, 100 + id).await.0["result"].is_object());
        }
    });
    for _ in answered..1000 {
        let cmd = next_command(&mut ext).await;
        ext_send(&mut ext, FromExtension::CommandResult(CommandResult::ok(cmd.id, raw("{}")))).await;
    }
    busy_answers.await.unwrap();
}

#[tokio::test]
async fn a_client_that_does_not_read_its_answers_gets_no_more_work_handed_on_until_it_reads() {
    let d = patient_daemon().await;
    let mut ext = extension(&d, &[1, 2]).await;
    let ((mut busy, busy_session), (mut victim, victim_session)) = two_clients(&d).await;
    const BURST: i64 = 64;
    for id in 0..BURST {
        send(&mut busy, json!({"id": 100 + id, "sessionId": busy_session, "method": "Runtime.evaluate"}))
            .await;
    }
    // The window's worth goes out before any answer tells their size (the extension answers
    // none until it has them all: however slowly the burst reaches the daemon, these 32 go).
    let mut first = Vec::new();
    for _ in 0..32 {
        let cmd = next_command(&mut ext).await;
        assert_eq!(cmd.tab_id, 1);
        first.push(cmd.id);
    }
    // 1 MiB answers that the busy client does not read.
    let big = raw(&format!(r#"{{"value":"{}"}}"#, "x".repeat(1 << 20)));
    for id in first {
        ext_send(&mut ext, FromExtension::CommandResult(CommandResult::ok(id, big.clone()))).await;
    }
    send(&mut victim, json!({"id": 1, "sessionId": victim_session, "method": "Page.reload"})).await;
    let mut handed_on = 32;
    loop {
        let cmd = next_command(&mut ext).await;
        if cmd.tab_id == 2 {
            ext_send(&mut ext, FromExtension::CommandResult(CommandResult::ok(cmd.id, raw("{}")))).await;
            break;
        }
        handed_on += 1;
        ext_send(&mut ext, FromExtension::CommandResult(CommandResult::ok(cmd.id, big.clone()))).await;
    }
    assert_eq!(until_reply(&mut victim, 1).await.0["result"], json!({}));
    // Its commands waited in the daemon, not in Chrome: once over a few MiB unread, no more (what
    // its socket's buffers take before that is bounded in bytes, not by anyone's speed).
    assert!(handed_on < BURST - 16, "{handed_on} of {BURST} handed on for a client that reads nothing");
    // It reads again: the rest go, and every command gets its one answer.
    let reader = tokio::spawn(async move {
        for id in 0..BURST {
            assert!(until_reply(&mut busy, 100 + id).await.0["result"]["value"].is_string());
        }
    });
    for _ in handed_on..BURST {
        let cmd = next_command(&mut ext).await;
        assert_eq!(cmd.tab_id, 1);
        ext_send(&mut ext, FromExtension::CommandResult(CommandResult::ok(cmd.id, big.clone()))).await;
    }
    reader.await.unwrap();
}
