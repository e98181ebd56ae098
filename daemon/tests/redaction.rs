//! No secret of the daemon's in anything a person reads, over real sockets (issue 31): the
//! trail on disk, `tabtunnel audit` (plain and `--json`), the daemon's log and the side panel's
//! frames, after a denied navigation, an asked one, a page's own navigation and refused requests
//! that name every kind of secret.

mod common;
use common::*;
use std::sync::{Arc, Mutex, OnceLock};
use tabtunnel::credentials;

/// The README's example: one allowed origin (and one to ask about).
const POLICY: &str = r#"
[default]
allow_origins = ["https://ok.test"]
ask_origins = ["https://ask.test"]
"#;

/// What the log writer wrote, this test binary's only subscriber (`main.rs` sets up the same
/// writer: `log::Redacting` over stderr).
fn log() -> Arc<Mutex<Vec<u8>>> {
    static LOG: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOG.get_or_init(|| {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || tabtunnel::log::Redacting(Sink(sink.clone())))
            .with_env_filter("debug")
            .with_ansi(false)
            .finish();
        tracing::subscriber::set_global_default(subscriber).unwrap();
        lines
    })
    .clone()
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The frames for the side panel (questions, hand-overs, agents and their activity), read until
/// `done` holds for one; every other frame is the browser's to act on, or the Welcome, which
/// shows the human their own endpoint on purpose.
async fn panel_until(
    ext: &mut ExtSocket,
    panel: &mut Vec<String>,
    done: impl Fn(&ToExtension) -> bool,
) -> ToExtension {
    loop {
        let text = next_text(ext).await;
        let frames: Vec<ToExtension> = match text.starts_with('[') {
            true => serde_json::from_str(&text).unwrap(),
            false => vec![serde_json::from_str(&text).unwrap()],
        };
        let mut found = None;
        for frame in frames {
            if matches!(
                frame,
                ToExtension::Approval(_)
                    | ToExtension::HandoverRequest(_)
                    | ToExtension::Agents { .. }
                    | ToExtension::Rejected { .. }
            ) {
                panel.push(frame.to_json());
            }
            if found.is_none() && done(&frame) {
                found = Some(frame);
            }
        }
        if let Some(frame) = found {
            return frame;
        }
    }
}

/// Any [`tabtunnel_core::redact::PIECE`] hex digits of `secret` in a row in `text`, in
/// either case, plain or percent-encoded (the forms the test writes them in).
fn holds_a_piece(text: &str, secret: &str) -> bool {
    let text = text.to_ascii_lowercase();
    let secret = secret.to_ascii_lowercase();
    let encoded: Vec<String> = secret.bytes().map(|b| format!("%{b:02x}")).collect();
    let piece = tabtunnel_core::redact::PIECE;
    secret.as_bytes().windows(piece).any(|w| text.contains(std::str::from_utf8(w).unwrap()))
        || encoded.windows(piece).any(|w| text.contains(&w.concat()))
}

fn audit_cli(config_dir: &std::path::Path, json: bool) -> String {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tabtunnel"));
    command.arg("audit").arg("--config-dir").arg(config_dir);
    if json {
        command.arg("--json");
    }
    let out = command.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap() + &String::from_utf8_lossy(&out.stderr)
}

#[tokio::test]
async fn no_secret_reaches_the_trail_the_audit_command_the_log_or_the_side_panel() {
    let log = log();
    let mut agent_token = String::new();
    let d = daemon_configured(
        |dir| {
            agent_token = credentials::add(dir, "scout").unwrap();
            std::fs::write(dir.join("policy.toml"), POLICY).unwrap();
        },
        |options| options.policy = Some(options.config_dir.join("policy.toml")),
    )
    .await;
    let (owner, extension_secret, key) =
        (d.token(), d.running.extension_secret.clone(), d.running.navigation_key.clone());
    let mac = tabtunnel_wire::navigation_mac::sign(&key, "scout", 1);
    let port = d.running.port;
    let mut ext = extension(&d, &[]).await;
    ext_send(&mut ext, FromExtension::TabShared(TabInfo { agent: "scout".into(), created: true, ..tab(1) }))
        .await;
    let browser =
        format!("ws://127.0.0.1:{port}/{agent_token}/devtools/browser/{}", d.running.browser_target_id);
    let mut client = ws(&browser, None).await.unwrap();
    let page = attach_pages(&mut client).await.remove(0);
    // Every kind of secret, in every form: whole, a 40-digit piece, upper case, encoded; the
    // navigation key and MAC in the paths they take.
    let named = format!(
        "/{owner}/json/version?e={}&E={}&t={agent_token}&n=%2F{key}%2Ftabtunnel&m=/{mac}/tabtunnel/navigation&o={}",
        &extension_secret[..40],
        extension_secret.to_ascii_uppercase(),
        owner.bytes().map(|b| format!("%{b:02X}")).collect::<String>(),
    );
    let mut panel = Vec::new();

    // The issue's case: the daemon's own endpoint, under a policy with one allowed origin.
    let denied = format!("http://127.0.0.1:{port}{named}");
    send(
        &mut client,
        json!({"id": 2, "sessionId": page, "method": "Page.navigate", "params": {"url": denied}}),
    )
    .await;
    let (reply, _) = until_reply(&mut client, 2).await;
    assert_eq!(reply["result"]["errorText"], "net::ERR_BLOCKED_BY_CLIENT", "{reply}");

    // Asked, and refused by the human.
    let asked = format!("https://ask.test{named}");
    send(
        &mut client,
        json!({"id": 3, "sessionId": page, "method": "Page.navigate", "params": {"url": asked}}),
    )
    .await;
    let ToExtension::Approval(question) =
        panel_until(&mut ext, &mut panel, |f| matches!(f, ToExtension::Approval(_))).await
    else {
        unreachable!()
    };
    let deny = tabtunnel_wire::ApprovalAnswer::Deny;
    ext_send(&mut ext, FromExtension::ApprovalAnswer { id: question.id, answer: deny }).await;
    let (reply, _) = until_reply(&mut client, 3).await;
    assert_eq!(reply["result"]["errorText"], "net::ERR_BLOCKED_BY_CLIENT", "{reply}");

    // The page's own navigation, through the navigation endpoint.
    let path = format!("/{mac}/tabtunnel/navigation/scout/1?https://no.test{named}");
    assert_eq!(get(port, &path, &[]).await.0, 204);

    // Errors: a method that names them, and requests the gate refuses (logged).
    let method = format!("Page.{agent_token}{}", &owner[..40]);
    send(&mut client, json!({"id": 4, "sessionId": page, "method": method, "params": {}})).await;
    let ToExtension::Command(command) =
        panel_until(&mut ext, &mut panel, |f| matches!(f, ToExtension::Command(_))).await
    else {
        unreachable!()
    };
    let error =
        tabtunnel_wire::CdpError { code: -32601, message: format!("'{method}' wasn't found"), data: None };
    ext_send(&mut ext, FromExtension::CommandResult(CommandResult::err(command.id, error))).await;
    until_reply(&mut client, 4).await;
    for refused in [
        format!("/json/version/{}.x%2F{owner}/{agent_token}", &owner[..40]),
        format!("/{}/json/version", &extension_secret[..40]),
        format!("/{key}0/tabtunnel/navigation/scout/1?x"),
    ] {
        assert!(get(port, &refused, &[]).await.0 >= 400, "{refused}");
    }

    // The side panel's view of the agent, with its recent activity, comes after the steps.
    panel_until(&mut ext, &mut panel, |f| match f {
        ToExtension::Agents { agents, .. } => agents.iter().any(|a| a.recent.len() >= 4),
        _ => false,
    })
    .await;

    let file = trail_lines(&d, 4).await.join("\n");
    let outputs = [
        ("the trail", file),
        ("tabtunnel audit", audit_cli(d.config_dir(), false)),
        ("tabtunnel audit --json", audit_cli(d.config_dir(), true)),
        ("the log", String::from_utf8_lossy(&log.lock().unwrap()).into_owned()),
        ("the side panel", panel.join("\n")),
    ];
    for (name, text) in &outputs {
        // `tabtunnel audit` says the steps in words, the others name the methods.
        let steps: &[&str] = match *name {
            "tabtunnel audit" => &["was refused: opening", "asked you: opening"],
            _ => &["Page.navigate", "navigation"],
        };
        for step in steps {
            assert!(text.contains(step) || *name == "the log", "{step} missing from {name}: {text}");
        }
        for (kind, secret) in [
            ("owner token", owner.as_str()),
            ("extension secret", &extension_secret),
            ("agent token", &agent_token[4..]),
            ("navigation key", &key),
            ("navigation MAC", &mac),
        ] {
            assert!(!holds_a_piece(text, secret), "{name} holds the {kind}: {text}");
        }
    }
    let (plain, panel) = (&outputs[1].1, &outputs[4].1);
    assert!(plain.contains("(allow_origins in [default]") && plain.contains("you denied"), "{plain}");
    assert!(panel.contains("approval") && panel.contains("denied by allow_origins"), "{panel}");
    assert!(outputs[3].1.contains("refused"), "the log has the refusals: {}", outputs[3].1);
}
