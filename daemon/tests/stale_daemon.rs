//! Secrets go only to a daemon that proves it is this user's: what `daemon.json` names after our
//! daemon has gone may be anyone's port and anyone's pid. Real sockets, the real binary.

mod common;
use common::*;
use tabtunnel::install::places::{Os, Places};
use tabtunnel::on_demand::{self, DaemonFile, StartOptions};
use tabtunnel::proof::testing::Impostor;

/// A daemon.json as our last daemon left it, naming the impostor's port and `pid`.
fn stale_file(dir: &std::path::Path, port: u16, pid: u32) -> (String, String) {
    let token = tabtunnel::token::load_or_create(dir).unwrap();
    let secret = tabtunnel::token::load_or_create_extension_secret(dir).unwrap();
    let file = DaemonFile {
        port,
        pid,
        version: env!("CARGO_PKG_VERSION").into(),
        client_endpoint: format!("http://127.0.0.1:{port}/{token}"),
        extension_url: format!("ws://127.0.0.1:{port}/{secret}/extension"),
        on_demand: true,
    };
    on_demand::write(dir, &file).unwrap();
    (token, secret)
}

fn places(root: &std::path::Path) -> Places {
    Places {
        os: Os::current(),
        home: root.to_owned(),
        config: root.join("config"),
        local_data: root.join("local"),
        data: root.join("data"),
    }
}

#[tokio::test]
async fn our_daemon_proves_itself_and_takes_its_file_with_it() {
    let d = daemon().await;
    let dir = d.config_dir().to_owned();
    let found = on_demand::running(&dir).await.expect("our daemon proves it is ours");
    assert_eq!(found.port, d.running.port);
    // The hello is answered without a token, and tells nothing but the pid and the proof.
    let (status, body) =
        get(d.running.port, &format!("/tabtunnel/hello?nonce={}", "ab".repeat(32)), &[]).await;
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer.as_object().unwrap().len(), 2, "{body}");
    assert_eq!(answer["pid"], std::process::id());
    assert!(!body.contains(&d.token()));
    let (status, _) = get(d.running.port, "/tabtunnel/hello", &[]).await;
    assert_eq!(status, 400);
    let (status, _) =
        get(d.running.port, "/tabtunnel/hello?nonce=00", &[("origin", "https://evil.example")]).await;
    assert_eq!(status, 403);
    d.running.stop().await;
    assert!(on_demand::read(&dir).is_none(), "daemon.json is removed when the daemon stops");
}

/// `tabtunnel stop` (and `uninstall`, which calls it) with daemon.json naming a port someone
/// else listens on and a pid that is now another process of ours: nothing is signalled.
#[tokio::test]
async fn stop_signals_only_a_daemon_that_proves_it_is_ours() {
    let dir = tempfile::tempdir().unwrap();
    let impostor = Impostor::start().await;
    let mut unrelated = std::process::Command::new("sleep").arg("60").spawn().unwrap();
    let (token, _) = stale_file(dir.path(), impostor.port, unrelated.id());
    on_demand::stop(dir.path()).await.unwrap();
    // Were it signalled, it would be gone by the time stop returned (or soon after).
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(unrelated.try_wait().unwrap().is_none(), "an unrelated process was signalled");
    assert!(!impostor.heard().contains(&token));
    unrelated.kill().unwrap();
    unrelated.wait().unwrap();
}

/// The native host's and doctor's paths: a listener on the stale port hears neither the owner
/// token nor the extension's secret; the host starts our own daemon on another port and hands
/// the extension that one; `stop` stops it, and its daemon.json goes with it.
#[tokio::test]
async fn a_listener_on_the_stale_port_gets_no_secret_and_the_extension_not_its_port() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("tabtunnel");
    let impostor = Impostor::start().await;
    let (token, secret) = stale_file(&dir, impostor.port, 1);

    let checks = tabtunnel::install::doctor::checks(&places(root.path()), &dir).await;
    let daemon = checks.iter().find(|c| c.link == "daemon").unwrap();
    assert!(!daemon.ok && daemon.detail.contains("not this user's tabtunnel daemon"), "{daemon:?}");

    let options = StartOptions { exe: env!("CARGO_BIN_EXE_tabtunnel").into(), config_dir: dir.clone() };
    let started = on_demand::ensure_running(&options).await;
    let answer = tabtunnel::native_host::answer(&json!({"type": "pair"}), started.clone());
    let started = started.unwrap();
    assert_ne!(started.port, impostor.port);
    assert_eq!(answer["daemonUrl"], format!("ws://127.0.0.1:{}/{secret}/extension", started.port));

    let heard = impostor.heard();
    assert!(heard.contains("/tabtunnel/hello?nonce="), "the impostor was asked to prove itself: {heard}");
    assert!(!heard.contains(&token) && !heard.contains(&secret), "a secret reached the impostor: {heard}");

    on_demand::stop(&dir).await.unwrap();
    assert!(on_demand::read(&dir).is_none(), "daemon.json is removed when the daemon stops");
    assert!(on_demand::running(&dir).await.is_none());
}
