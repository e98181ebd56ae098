//! Pairing without pasting: the native messaging host `tabtunnel install` registers
//! (`dev.tabtunnel.host`) starts this user's daemon when none runs and answers with its pairing
//! URL. Asked at start and before every redial, so a daemon that died comes back by itself.
//! And the version handshake: the daemon's `Welcome` names its version, compared with ours.

use serde::Deserialize;

use crate::settings;

pub const HOST: &str = "dev.tabtunnel.host";

/// What the host answers (see the daemon's `native_host.rs`).
#[derive(Deserialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Answer {
    ok: bool,
    #[serde(default)]
    daemon_url: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

/// What we ask the host.
pub fn request(extension_version: &str) -> serde_json::Value {
    serde_json::json!({ "type": "pair", "extensionVersion": extension_version })
}

/// The daemon's pairing URL from the host's answer (or the error `sendNativeMessage` gave), or
/// what the user should do.
pub fn read_answer(answer: Result<serde_json::Value, String>) -> Result<String, String> {
    interpret(answer.and_then(|value| {
        serde_json::from_value::<Answer>(value).map_err(|_| "an answer we cannot read".to_owned())
    }))
}

/// The URL in a good answer (loopback only, as if pasted), else the problem in words that say
/// what to do.
fn interpret(answer: Result<Answer, String>) -> Result<String, String> {
    match answer {
        Ok(Answer { ok: true, daemon_url: Some(url), .. }) => settings::daemon_socket_url(&url)
            .map_err(|e| format!("The tabtunnel native host answered a URL we refuse: {e}")),
        Ok(Answer { error, .. }) => Err(format!(
            "The tabtunnel native host could not start the daemon: {}. Run `tabtunnel doctor` in a terminal.",
            error.as_deref().unwrap_or("no reason given")
        )),
        Err(e) if e.contains("not found") || e.contains("forbidden") => Err(format!(
            "Not paired: the tabtunnel native host is not registered for this browser ({e}). Run \
             `tabtunnel install` in a terminal (it starts and pairs the daemon by itself from then on), \
             or paste a pairing URL below."
        )),
        Err(e) => {
            Err(format!("The tabtunnel native host failed: {e}. Run `tabtunnel doctor` in a terminal."))
        }
    }
}

/// What to tell the user when the daemon's version is not ours.
pub fn version_warning(extension: &str, daemon: &str) -> Option<String> {
    (extension != daemon).then(|| {
        format!(
            "Version mismatch: this extension is {extension}, the daemon is {daemon}. Run \
             `tabtunnel install` with the tabtunnel you use, reload the extension in \
             chrome://extensions, and run `tabtunnel doctor` (it names a daemon to stop)."
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_good_answer_is_a_loopback_pairing_url() {
        let ok = |url: &str| Answer { ok: true, daemon_url: Some(url.into()), error: None };
        assert_eq!(
            interpret(Ok(ok("ws://127.0.0.1:9722/s/extension"))).unwrap(),
            "ws://127.0.0.1:9722/s/extension"
        );
        assert!(interpret(Ok(ok("ws://evil.example/s/extension"))).is_err());
        let failed = interpret(Ok(Answer { ok: false, daemon_url: None, error: Some("port busy".into()) }));
        assert!(failed.unwrap_err().contains("port busy"));
    }

    #[test]
    fn a_missing_host_says_what_to_run() {
        let missing = interpret(Err("Specified native messaging host not found.".into())).unwrap_err();
        assert!(missing.contains("tabtunnel install"), "{missing}");
        let crashed = interpret(Err("Native host has exited.".into())).unwrap_err();
        assert!(crashed.contains("tabtunnel doctor"), "{crashed}");
    }

    #[test]
    fn an_answer_of_another_shape_is_an_error_not_a_panic() {
        let odd = read_answer(Ok(serde_json::json!(["ok"]))).unwrap_err();
        assert!(odd.contains("cannot read"), "{odd}");
        let good = serde_json::json!({ "ok": true, "daemonUrl": "ws://127.0.0.1:9722/s/extension" });
        assert_eq!(read_answer(Ok(good)).unwrap(), "ws://127.0.0.1:9722/s/extension");
        assert_eq!(request("1.2.3")["extensionVersion"], "1.2.3");
    }

    #[test]
    fn versions_that_differ_are_named() {
        assert_eq!(version_warning("0.1.0", "0.1.0"), None);
        let warning = version_warning("0.1.0", "0.2.0").unwrap();
        assert!(warning.contains("0.1.0") && warning.contains("0.2.0") && warning.contains("reload"));
    }
}
