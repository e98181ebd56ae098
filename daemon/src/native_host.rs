//! The Chrome native messaging host (`dev.tabtunnel.host`): Chrome starts it when the
//! extension calls `chrome.runtime.sendNativeMessage` (or `connectNative`), with the caller's
//! origin as its first argument. It makes sure this user's daemon runs ([`on_demand`]) and
//! answers with the daemon's pairing URL, so the user never pastes one.
//!
//! Messages, both ways: a 4-byte length in native byte order, then that many bytes of UTF-8
//! JSON. Request `{"type":"pair","extensionVersion":"0.1.0"}`; answer `{"ok":true,
//! "daemonUrl","daemonVersion","hostVersion"}` or `{"ok":false,"error"}`. One answer per
//! request, until Chrome closes stdin.
//!
//! [`on_demand`]: crate::on_demand

use serde_json::{json, Value};
use std::io::{Read, Write};

/// The host's name in its manifest and in `sendNativeMessage`.
pub const HOST_NAME: &str = "dev.tabtunnel.host";
/// Chrome refuses bigger messages from a host; we refuse bigger requests (ours are tiny).
const MAX_MESSAGE: u32 = 1024 * 1024;

/// `chrome-extension://<id>/`, the only caller we answer.
pub fn allowed_origin(extension_id: &str) -> String {
    format!("chrome-extension://{extension_id}/")
}

/// Whether Chrome started us for a caller we serve. Chrome passes the origin as the first
/// argument (then, on Windows, `--parent-window=N`).
pub fn check_origin(args: &[String], extension_id: &str) -> Result<(), String> {
    let allowed = allowed_origin(extension_id);
    match args.first() {
        Some(origin) if origin.trim_end_matches('/') == allowed.trim_end_matches('/') => Ok(()),
        Some(origin) => Err(format!("refusing caller {origin}: this host serves {allowed} only")),
        None => Err(format!(
            "no caller origin: this is Chrome's native messaging host, started by the browser for {allowed}"
        )),
    }
}

/// Whether `args` (without the program name) are how Chrome starts a native host.
pub fn started_by_chrome(args: &[String]) -> bool {
    args.first().is_some_and(|a| a.starts_with("chrome-extension://"))
}

/// One message as Chrome frames it.
pub fn encode(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_ne_bytes());
    out.extend_from_slice(body.as_bytes());
    out
}

/// The next message, or `None` at the end of input.
pub fn read_message(input: &mut impl Read) -> Result<Option<Value>, String> {
    let mut length = [0u8; 4];
    match input.read_exact(&mut length) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(format!("reading from Chrome: {e}")),
    }
    let length = u32::from_ne_bytes(length);
    if length > MAX_MESSAGE {
        return Err(format!("a message of {length} bytes is more than a pairing request needs"));
    }
    let mut body = vec![0u8; length as usize];
    input.read_exact(&mut body).map_err(|e| format!("reading from Chrome: {e}"))?;
    serde_json::from_slice(&body).map(Some).map_err(|e| format!("a message that is not JSON: {e}"))
}

/// The answer to one request, given how finding the daemon went.
pub fn answer(request: &Value, daemon: Result<crate::on_demand::DaemonFile, String>) -> Value {
    match request["type"].as_str() {
        Some("pair") => match daemon {
            Ok(file) => json!({
                "ok": true,
                "daemonUrl": file.extension_url,
                "daemonVersion": file.version,
                "hostVersion": env!("CARGO_PKG_VERSION"),
            }),
            Err(error) => json!({ "ok": false, "error": error }),
        },
        other => json!({ "ok": false, "error": format!("unknown request type {other:?}") }),
    }
}

/// Runs the host: `args` are what Chrome passed (the origin first).
pub async fn run(args: &[String], config_dir: std::path::PathBuf) -> Result<(), String> {
    check_origin(args, crate::EXTENSION_ID)?;
    let options = crate::on_demand::StartOptions::this_binary(config_dir)?;
    loop {
        let request = tokio::task::spawn_blocking(|| read_message(&mut std::io::stdin().lock()))
            .await
            .map_err(|e| e.to_string())??;
        let Some(request) = request else { return Ok(()) };
        let daemon = if request["type"] == "pair" {
            crate::on_demand::ensure_running(&options).await
        } else {
            Err(String::new())
        };
        let reply = encode(&answer(&request, daemon));
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(&reply)
            .and_then(|()| stdout.flush())
            .map_err(|e| format!("writing to Chrome: {e}"))?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_extension_is_served() {
        let id = crate::EXTENSION_ID;
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(check_origin(&args(&[&format!("chrome-extension://{id}/")]), id).is_ok());
        assert!(check_origin(&args(&[&format!("chrome-extension://{id}/"), "--parent-window=0"]), id).is_ok());
        assert!(check_origin(&args(&["chrome-extension://abcdefghijklmnopabcdefghijklmnop/"]), id).is_err());
        assert!(check_origin(&args(&[]), id).is_err());
        assert!(started_by_chrome(&args(&[&format!("chrome-extension://{id}/")])));
        assert!(!started_by_chrome(&args(&["serve"])));
    }

    #[test]
    fn messages_are_length_prefixed_json() {
        let request = json!({"type": "pair", "extensionVersion": "0.1.0"});
        let mut bytes = encode(&request);
        assert_eq!(u32::from_ne_bytes(bytes[..4].try_into().unwrap()) as usize, bytes.len() - 4);
        bytes.extend(encode(&json!({"type": "other"})));
        let mut input = std::io::Cursor::new(bytes);
        assert_eq!(read_message(&mut input).unwrap(), Some(request));
        assert_eq!(read_message(&mut input).unwrap(), Some(json!({"type": "other"})));
        assert_eq!(read_message(&mut input).unwrap(), None);
        let mut huge = std::io::Cursor::new((MAX_MESSAGE + 1).to_ne_bytes().to_vec());
        assert!(read_message(&mut huge).is_err());
    }

    #[test]
    fn a_pair_request_gets_the_pairing_url() {
        let file = crate::on_demand::DaemonFile {
            port: 1,
            pid: 2,
            version: "9.9.9".into(),
            client_endpoint: "http://127.0.0.1:1/t".into(),
            extension_url: "ws://127.0.0.1:1/s/extension".into(),
            on_demand: true,
        };
        let ok = answer(&json!({"type": "pair"}), Ok(file));
        assert_eq!(ok["ok"], true);
        assert_eq!(ok["daemonUrl"], "ws://127.0.0.1:1/s/extension");
        assert_eq!(ok["daemonVersion"], "9.9.9");
        let failed = answer(&json!({"type": "pair"}), Err("no".into()));
        assert_eq!(failed, json!({"ok": false, "error": "no"}));
        assert_eq!(answer(&json!({"type": "x"}), Err(String::new()))["ok"], false);
    }
}
