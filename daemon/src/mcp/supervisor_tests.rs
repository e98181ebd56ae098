//! The supervisor against a scripted fake child: an MCP server over in-memory pipes that can be
//! told to die, and a scripted daemon view of the extension.

use super::*;
use crate::mcp::rpc::RpcPeer;
use std::sync::atomic::AtomicBool;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::oneshot;

/// Calls that ran, across every child (the page counter of the e2e test).
type Ran = Arc<Mutex<Vec<String>>>;

struct FakeBackend {
    extension: Mutex<Result<Extension, String>>,
    fail_launches: AtomicBool,
    launch_delay: Mutex<Duration>,
    launch_attempts: AtomicU64,
    ran: Ran,
    /// Kills the current fake child.
    kill_current: Mutex<Option<oneshot::Sender<()>>>,
    /// `notifications/cancelled` the children received.
    cancelled: Arc<Mutex<Vec<Value>>>,
}

impl FakeBackend {
    fn new() -> FakeBackend {
        FakeBackend {
            extension: Mutex::new(Ok(Extension { connected: true, epoch: Some(1) })),
            fail_launches: AtomicBool::new(false),
            launch_delay: Mutex::new(Duration::ZERO),
            launch_attempts: AtomicU64::new(0),
            ran: Ran::default(),
            kill_current: Mutex::new(None),
            cancelled: Arc::default(),
        }
    }

    fn set_extension(&self, extension: Result<Extension, String>) {
        *self.extension.lock().unwrap() = extension;
    }

    fn kill_child(&self) {
        if let Some(kill) = self.kill_current.lock().unwrap().take() {
            let _ = kill.send(());
        }
    }

    fn ran(&self) -> Vec<String> {
        self.ran.lock().unwrap().clone()
    }
}

impl Backend for FakeBackend {
    async fn extension(&self) -> Result<Extension, String> {
        self.extension.lock().unwrap().clone()
    }

    async fn launch(&self) -> Result<(Child, mpsc::Receiver<Notification>), String> {
        self.launch_attempts.fetch_add(1, Ordering::SeqCst);
        let delay = *self.launch_delay.lock().unwrap();
        tokio::time::sleep(delay).await;
        if self.fail_launches.load(Ordering::SeqCst) {
            return Err("node: not found".into());
        }
        let (to_child, child_reads) = tokio::io::duplex(1 << 16);
        let (child_writes, from_child) = tokio::io::duplex(1 << 16);
        let (kill, killed) = oneshot::channel();
        *self.kill_current.lock().unwrap() = Some(kill);
        // Dropping the `Child` kills it, as it kills a real process.
        let (on_drop, dropped) = oneshot::channel();
        let ends = async move {
            tokio::select! { _ = killed => {}, _ = dropped => {} }
        };
        tokio::spawn(fake_child(child_reads, child_writes, self.ran.clone(), self.cancelled.clone(), ends));
        let (peer, notifications) = RpcPeer::start(from_child, to_child);
        Ok((Child::handshake(peer, "2025-06-18", Some(on_drop)).await?, notifications))
    }
}

/// A minimal MCP server: `initialize`, `tools/list` (one tool with a non-standard annotation),
/// `tools/call` of `count` (records the call, answers its number), `hold` (never answers),
/// `die` (records the call, then exits without answering), `change_tools` (says its tools
/// changed). Exits when killed.
async fn fake_child(
    reads: tokio::io::DuplexStream,
    mut writes: tokio::io::DuplexStream,
    ran: Ran,
    cancelled: Arc<Mutex<Vec<Value>>>,
    killed: impl std::future::Future<Output = ()>,
) {
    let mut killed = std::pin::pin!(killed);
    let mut lines = BufReader::new(reads).lines();
    loop {
        let line = tokio::select! {
            line = lines.next_line() => match line { Ok(Some(line)) => line, _ => return },
            _ = &mut killed => return,
        };
        let message: Value = serde_json::from_str(&line).unwrap();
        let method = message["method"].as_str().unwrap_or_default();
        let result = match method {
            "initialize" => json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                                   "serverInfo": {"name": "fake", "version": "1"}}),
            "tools/list" => json!({"tools": [{"name": "count", "inputSchema": {"type": "object"},
                                              "annotations": {"category": "input", "readOnlyHint": false}}]}),
            "tools/call" => {
                let tool = message["params"]["name"].as_str().unwrap().to_owned();
                let tag = message["params"]["arguments"]["tag"].as_str().unwrap_or_default().to_owned();
                match tool.as_str() {
                    "hold" => continue,
                    "change_tools" => {
                        let note = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
                        let _ = writes.write_all(format!("{note}\n").as_bytes()).await;
                        json!({"content": []})
                    }
                    "die" => {
                        ran.lock().unwrap().push(tag);
                        return;
                    }
                    _ => {
                        let n = {
                            let mut ran = ran.lock().unwrap();
                            ran.push(tag);
                            ran.len()
                        };
                        json!({"content": [{"type": "text", "text": n.to_string()}]})
                    }
                }
            }
            "notifications/cancelled" => {
                cancelled.lock().unwrap().push(message["params"].clone());
                continue;
            }
            _ => continue,
        };
        let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
        if writes.write_all(format!("{reply}\n").as_bytes()).await.is_err() {
            return;
        }
    }
}

fn bounds() -> Bounds {
    Bounds {
        first_start: Duration::from_secs(10),
        restart: Duration::from_secs(10),
        extension_wait: Duration::from_millis(300),
        extension_poll: Duration::from_millis(10),
    }
}

fn supervisor() -> Supervisor<FakeBackend> {
    Supervisor::new(FakeBackend::new(), bounds()).0
}

/// Tries `receive` until it gives something, boundedly.
async fn soon<T>(receive: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(5), receive).await.expect("in time")
}

fn call(tool: &str, tag: &str) -> Value {
    json!({"name": tool, "arguments": {"tag": tag}})
}

async fn count(s: &Supervisor<FakeBackend>, tag: &str) -> Result<Value, CallError> {
    s.call_tool(call("count", tag), &CancellationToken::new()).await
}

/// Waits until the supervisor has noticed its child died.
async fn until_child_gone(s: &Supervisor<FakeBackend>) {
    for _ in 0..500 {
        if s.current().is_none() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("the child never went away");
}

#[tokio::test]
async fn concurrent_calls_after_a_child_dies_share_one_restart_and_each_runs_once() {
    let s = supervisor();
    count(&s, "first").await.unwrap();
    assert_eq!(s.launches(), 1);
    s.backend().kill_child();
    until_child_gone(&s).await;
    // Slow restarts make the calls pile up on the one start.
    *s.backend().launch_delay.lock().unwrap() = Duration::from_millis(100);
    let calls: Vec<_> = (0..10)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move { count(&s, &format!("c{i}")).await })
        })
        .collect();
    let mut numbers = Vec::new();
    for call in calls {
        let answer = call.await.unwrap().expect("every call succeeds after the restart");
        numbers.push(answer["content"][0]["text"].as_str().unwrap().parse::<usize>().unwrap());
    }
    numbers.sort();
    assert_eq!(numbers, (2..=11).collect::<Vec<_>>(), "each call ran exactly once");
    assert_eq!(s.launches(), 2, "one restart for all of them");
    assert_eq!(s.backend().launch_attempts.load(Ordering::SeqCst), 2);
    let mut ran = s.backend().ran();
    ran.sort();
    let mut expected: Vec<String> = (0..10).map(|i| format!("c{i}")).chain(["first".to_owned()]).collect();
    expected.sort();
    assert_eq!(ran, expected);
}

#[tokio::test]
async fn a_failed_restart_fails_every_waiting_call_with_nothing_sent() {
    let s = supervisor();
    count(&s, "first").await.unwrap();
    s.backend().kill_child();
    until_child_gone(&s).await;
    s.backend().fail_launches.store(true, Ordering::SeqCst);
    *s.backend().launch_delay.lock().unwrap() = Duration::from_millis(50);
    let calls: Vec<_> = (0..5)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move { count(&s, &format!("c{i}")).await })
        })
        .collect();
    for call in calls {
        match call.await.unwrap() {
            Err(CallError::Unavailable(why)) => assert!(why.contains("node: not found"), "{why}"),
            other => panic!("expected the start's error, got {other:?}"),
        }
    }
    assert_eq!(s.backend().launch_attempts.load(Ordering::SeqCst), 2, "the failed restart was shared");
    assert_eq!(s.backend().ran(), ["first"], "nothing was sent");
    // A later call tries again.
    s.backend().fail_launches.store(false, Ordering::SeqCst);
    assert_eq!(count(&s, "later").await.unwrap()["content"][0]["text"], "2");
    assert_eq!(s.backend().launch_attempts.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn an_extension_reconnect_restarts_the_child_before_the_next_call_only() {
    let s = supervisor();
    count(&s, "a").await.unwrap();
    count(&s, "b").await.unwrap();
    assert_eq!(s.launches(), 1);
    s.backend().set_extension(Ok(Extension { connected: true, epoch: Some(2) }));
    count(&s, "c").await.unwrap();
    assert_eq!(s.launches(), 2, "a new epoch means a new child");
    count(&s, "d").await.unwrap();
    assert_eq!(s.launches(), 2);
    assert_eq!(s.backend().ran(), ["a", "b", "c", "d"]);
}

#[tokio::test]
async fn a_restart_waits_for_the_extension_within_a_bound() {
    let s = supervisor();
    count(&s, "a").await.unwrap();
    s.backend().set_extension(Ok(Extension { connected: false, epoch: Some(1) }));
    match count(&s, "b").await {
        Err(CallError::Unavailable(why)) => assert!(why.contains("extension is not connected"), "{why}"),
        other => panic!("expected an error, got {other:?}"),
    }
    assert_eq!(s.launches(), 1, "no child starts without the extension");
    // The extension comes back while the next call waits.
    let s2 = s.clone();
    let waiting = tokio::spawn(async move { count(&s2, "c").await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    s.backend().set_extension(Ok(Extension { connected: true, epoch: Some(2) }));
    waiting.await.unwrap().unwrap();
    assert_eq!(s.launches(), 2);
    assert_eq!(s.backend().ran(), ["a", "c"]);
}

#[tokio::test]
async fn a_daemon_without_epochs_restarts_only_dead_children() {
    let s = supervisor();
    s.backend().set_extension(Ok(Extension { connected: true, epoch: None }));
    count(&s, "a").await.unwrap();
    count(&s, "b").await.unwrap();
    assert_eq!(s.launches(), 1);
    s.backend().kill_child();
    until_child_gone(&s).await;
    count(&s, "c").await.unwrap();
    assert_eq!(s.launches(), 2);
}

#[tokio::test]
async fn an_unreachable_daemon_is_an_error_and_starts_nothing() {
    let s = supervisor();
    s.backend().set_extension(Err("no tabtunnel daemon answers".into()));
    assert_eq!(count(&s, "a").await, Err(CallError::Unavailable("no tabtunnel daemon answers".into())));
    assert_eq!(s.backend().launch_attempts.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_call_in_flight_when_the_child_dies_is_lost_not_sent_again() {
    let s = supervisor();
    match s.call_tool(call("die", "x"), &CancellationToken::new()).await {
        Err(CallError::Lost(_)) => {}
        other => panic!("expected a lost call, got {other:?}"),
    }
    count(&s, "y").await.unwrap();
    assert_eq!(s.backend().ran(), ["x", "y"], "the lost call was not sent again");
    assert_eq!(s.launches(), 2);
}

#[tokio::test]
async fn listing_never_restarts_and_keeps_the_tools_raw() {
    let s = supervisor();
    let page = s.list_tools(None).await.unwrap();
    assert_eq!(page["tools"][0]["annotations"]["category"], "input", "non-standard fields survive");
    assert_eq!(s.launches(), 1, "the first listing starts the first child");
    s.backend().kill_child();
    until_child_gone(&s).await;
    assert_eq!(s.list_tools(None).await.unwrap(), page, "answered from the last list");
    assert!(s.list_tools(Some("unknown".into())).await.is_err());
    assert_eq!(s.launches(), 1, "listing did not restart");
    count(&s, "a").await.unwrap();
    assert_eq!(s.launches(), 2);
}

#[tokio::test]
async fn warm_up_and_a_listing_share_the_first_start() {
    let s = supervisor();
    *s.backend().launch_delay.lock().unwrap() = Duration::from_millis(50);
    s.warm_up();
    s.warm_up();
    s.list_tools(None).await.unwrap();
    assert_eq!(s.backend().launch_attempts.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn cancelling_a_call_tells_the_child() {
    let s = supervisor();
    let cancel = CancellationToken::new();
    let s2 = s.clone();
    let cancel2 = cancel.clone();
    let held = tokio::spawn(async move { s2.call_tool(call("hold", "h"), &cancel2).await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    cancel.cancel();
    assert_eq!(held.await.unwrap(), Err(CallError::Cancelled));
    for _ in 0..200 {
        if !s.backend().cancelled.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let cancelled = s.backend().cancelled.lock().unwrap().clone();
    assert_eq!(cancelled.len(), 1);
    assert!(cancelled[0]["requestId"].is_u64(), "{cancelled:?}");
}

#[tokio::test]
async fn a_tool_list_change_is_relayed_and_drops_the_cached_list() {
    let (s, mut relay) = Supervisor::new(FakeBackend::new(), bounds());
    s.list_tools(None).await.unwrap();
    s.call_tool(call("change_tools", "t"), &CancellationToken::new()).await.unwrap();
    assert_eq!(soon(relay.recv()).await.unwrap().method, "notifications/tools/list_changed");
    s.backend().kill_child();
    until_child_gone(&s).await;
    assert!(s.list_tools(None).await.is_err(), "the stale list is not served");
    assert_eq!(s.launches(), 1);
}

#[tokio::test]
async fn dropping_the_supervisor_ends_its_child_and_the_relay() {
    let (s, mut relay) = Supervisor::new(FakeBackend::new(), bounds());
    count(&s, "a").await.unwrap();
    let peer = s.current().unwrap().child.peer.clone();
    drop(s);
    soon(peer.closed()).await;
    assert!(soon(relay.recv()).await.is_none(), "the relay ends");
}
