//! The user's local files, which no agent hands a page unless its policy names their directory.
//!
//! Chrome turns "Allow access to file URLs" on, without asking, for an unpacked extension
//! (`tabtunnel launch`'s `--load-extension`, and "Load unpacked"), and with it `chrome.debugger`
//! may name paths on the user's disk. Measured through tabtunnel: an agent's own page read the
//! owner token (`~/.config/tabtunnel/token`) dropped on it by `Input.dispatchDragEvent` with
//! `data.files`, and `/etc/hostname` by `DOM.setFileInputFiles`. So every method that names a
//! local path is refused, on every session, whatever the agent's policy, unless the path lies
//! in a directory of the agent's `allow_file_uploads`; never one under tabtunnel's own config
//! or data directories. A file chooser intercepted (`Page.fileChooserOpened`) is answered by
//! `DOM.setFileInputFiles`, a drag intercepted (`Input.dragIntercepted`) by
//! `Input.dispatchDragEvent`: the same rule. Paths are read as text (`local_paths`); Chrome
//! follows a symlink inside an allowed directory. URLs naming files (`file:`) are the
//! navigation rule's (`wire::destinations`).

use crate::local_paths::LocalPath;
use serde_json::Value;

/// The rule, as errors and the audit trail name it.
pub const RULE: &str = "local files: no agent hands a page the user's files, except from a directory its policy's allow_file_uploads names (never tabtunnel's own)";

/// Where a method names local paths.
enum Route {
    /// A path, or a list of paths, at this JSON pointer of its params.
    Paths(&'static str),
    /// Loads code from the disk: never an agent's.
    Never,
}

fn route(method: &str) -> Option<Route> {
    Some(match method {
        "DOM.setFileInputFiles" | "PWA.launchFilesInApp" => Route::Paths("/files"),
        "Input.dispatchDragEvent" => Route::Paths("/data/files"),
        // Removed from Chrome (M77), refused all the same should a build still take it.
        "Page.handleFileChooser" => Route::Paths("/files"),
        // Where downloads are written (`Browser.setDownloadBehavior` is answered by the core).
        "Page.setDownloadBehavior" => Route::Paths("/downloadPath"),
        "Extensions.loadUnpacked" => Route::Never,
        _ => return None,
    })
}

/// The directories an agent may hand files from, and the policy section that names them.
#[derive(Debug, Clone, Default)]
pub struct Uploads {
    pub dirs: Vec<LocalPath>,
    pub rule: String,
}

/// Why the command is refused, if it names a local path it may not: unreadable params, a path
/// that is not absolute and plain, one under `private`, or one outside `allowed`'s directories.
/// Parses params only for the methods that name paths.
pub fn refusal(
    method: &str,
    params: Option<&str>,
    allowed: &Uploads,
    private: &[LocalPath],
) -> Option<String> {
    let found = route(method)?;
    let params: Value = match params.map(serde_json::from_str) {
        None => return None,
        Some(Ok(params)) => params,
        Some(Err(_)) => return Some("its params could not be read to see which files they name".into()),
    };
    match found {
        Route::Never => Some("it would load code from the user's disk".into()),
        Route::Paths(pointer) => match params.pointer(pointer) {
            None | Some(Value::Null) => None,
            Some(Value::String(path)) => path_refusal(path, allowed, private),
            Some(Value::Array(paths)) => paths.iter().find_map(|p| match p.as_str() {
                Some(path) => path_refusal(path, allowed, private),
                None => Some(format!("{p} is not a path")),
            }),
            Some(other) => Some(format!("{other} is not a path or a list of paths")),
        },
    }
}

fn path_refusal(text: &str, allowed: &Uploads, private: &[LocalPath]) -> Option<String> {
    let path = match LocalPath::parse(text) {
        Ok(path) => path,
        Err(why) => return Some(format!("{why}: a file is given by its absolute path")),
    };
    if private.iter().any(|dir| path.is_within_any_case(dir)) {
        return Some(format!(
            "{text:?} is in tabtunnel's own config or data directory, which no agent reads"
        ));
    }
    if allowed.dirs.iter().any(|dir| path.is_within(dir)) {
        return None;
    }
    Some(if allowed.dirs.is_empty() {
        format!("{text:?} is a local file, and this agent's policy names no directory in allow_file_uploads")
    } else {
        format!("{text:?} is not in a directory of {}", allowed.rule)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CONFIG: &str = "/home/me/.config/tabtunnel";

    fn uploads(dirs: &[&str]) -> Uploads {
        let dirs = dirs.iter().map(|d| LocalPath::parse(d).unwrap()).collect();
        Uploads { dirs, rule: "allow_file_uploads in [agent.scout]".into() }
    }

    fn refused(method: &str, params: Value, allowed: &Uploads) -> Option<String> {
        let private =
            [LocalPath::parse(CONFIG).unwrap(), LocalPath::parse("/home/me/.local/share/tabtunnel").unwrap()];
        refusal(method, Some(&params.to_string()), allowed, &private)
    }

    /// Each route that names a path, as clients send it.
    fn routes(path: &str) -> Vec<(&'static str, Value)> {
        vec![
            ("DOM.setFileInputFiles", json!({"files": [path], "nodeId": 5})),
            (
                "DOM.setFileInputFiles",
                json!({"files": ["/home/me/agent-uploads/ok.txt", path], "backendNodeId": 5}),
            ),
            (
                "Input.dispatchDragEvent",
                json!({"type": "drop", "x": 1, "y": 2, "data": {"items": [], "files": [path], "dragOperationsMask": 1}}),
            ),
            ("Page.handleFileChooser", json!({"action": "accept", "files": [path]})),
            ("PWA.launchFilesInApp", json!({"manifestId": "https://a.example/", "files": [path]})),
            ("Page.setDownloadBehavior", json!({"behavior": "allow", "downloadPath": path})),
        ]
    }

    #[test]
    fn no_path_is_given_without_allow_file_uploads() {
        for path in ["/home/me/.config/tabtunnel/token", "/etc/hostname", "/home/me/agent-uploads/ok.txt"] {
            for (method, params) in routes(path) {
                let why = refused(method, params.clone(), &Uploads::default());
                assert!(why.is_some(), "{method} {params}");
            }
        }
        let why = refused("DOM.setFileInputFiles", json!({"files": ["/etc/hostname"]}), &Uploads::default());
        assert!(why.unwrap().contains("names no directory in allow_file_uploads"));
    }

    #[test]
    fn a_path_in_an_allowed_directory_is_given() {
        let allowed = uploads(&["/home/me/agent-uploads"]);
        for (method, params) in routes("/home/me/agent-uploads/sub/cv.pdf") {
            assert_eq!(refused(method, params.clone(), &allowed), None, "{method} {params}");
        }
        for path in [
            "/home/me/cv.pdf",
            "/home/me/agent-uploads-2/cv.pdf",
            "/home/me/agent-uploads/../.ssh/id_ed25519",
            "agent-uploads/cv.pdf",
            "~/agent-uploads/cv.pdf",
        ] {
            for (method, params) in routes(path) {
                assert!(refused(method, params.clone(), &allowed).is_some(), "{method} {params}");
            }
        }
        let why = refused("DOM.setFileInputFiles", json!({"files": ["/home/me/cv.pdf"]}), &allowed);
        assert!(why.unwrap().contains("allow_file_uploads in [agent.scout]"));
    }

    #[test]
    fn tabtunnels_own_directories_are_never_given() {
        // Even when the policy names them, or a directory holding them, in any case.
        let allowed = uploads(&["/home/me", CONFIG]);
        for path in [
            "/home/me/.config/tabtunnel/token",
            "/home/me/.config/tabtunnel/extension-secret",
            "/HOME/me/.Config/TabTunnel/token",
            "/home/me/.local/share/tabtunnel/chromium-profile/Default/Cookies",
        ] {
            for (method, params) in routes(path) {
                let why = refused(method, params.clone(), &allowed);
                assert!(why.is_some_and(|w| w.contains("tabtunnel's own")), "{method} {params}");
            }
        }
        assert_eq!(
            refused("DOM.setFileInputFiles", json!({"files": ["/home/me/.config/other"]}), &allowed),
            None
        );
    }

    #[test]
    fn what_names_no_path_goes_through() {
        let none = Uploads::default();
        for (method, params) in [
            (
                "Input.dispatchDragEvent",
                json!({"type": "dragEnter", "x": 1, "y": 2, "data": {"items": [{"mimeType": "text/plain", "data": "hi"}], "dragOperationsMask": 1}}),
            ),
            (
                "Input.dispatchDragEvent",
                json!({"type": "drop", "x": 1, "y": 2, "data": {"items": [], "files": [], "dragOperationsMask": 1}}),
            ),
            ("DOM.setFileInputFiles", json!({"files": [], "nodeId": 5})),
            ("Page.setDownloadBehavior", json!({"behavior": "deny"})),
            ("Page.setInterceptFileChooserDialog", json!({"enabled": true})),
            ("Input.setInterceptDrags", json!({"enabled": true})),
            ("Runtime.evaluate", json!({"expression": "'/etc/hostname'"})),
        ] {
            assert_eq!(refused(method, params.clone(), &none), None, "{method} {params}");
        }
        assert_eq!(refusal("DOM.setFileInputFiles", None, &none, &[]), None, "Chrome refuses it itself");
    }

    #[test]
    fn params_it_cannot_read_and_code_from_disk_are_refused() {
        let allowed = uploads(&["/home/me/agent-uploads"]);
        assert!(refusal("DOM.setFileInputFiles", Some("{"), &allowed, &[]).is_some());
        for (method, params) in [
            ("DOM.setFileInputFiles", json!({"files": "/etc/hostname"})),
            ("DOM.setFileInputFiles", json!({"files": [7]})),
            ("Input.dispatchDragEvent", json!({"type": "drop", "data": {"files": {"0": "/etc/hostname"}}})),
            ("Extensions.loadUnpacked", json!({"path": "/home/me/agent-uploads/ext"})),
        ] {
            assert!(refused(method, params.clone(), &allowed).is_some(), "{method} {params}");
        }
    }

    /// Through the core, on the page, a frame's and a worker's session: refused before the
    /// extension hears of it, recorded as denied naming the rule, whatever the policy; a path
    /// in an allowed directory goes to the tab.
    #[test]
    fn the_core_refuses_a_local_file_on_every_session() {
        use crate::testing::*;
        use crate::Output;
        for section in [None, Some(json!({})), Some(json!({"deny_methods": ["Network.getCookies"]}))] {
            let (mut h, page) = scout_on_its_tab(section);
            let auto = json!({"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": false});
            h.send(1, json!({"id": 1, "sessionId": page, "method": "Target.setAutoAttach", "params": auto}));
            let frame = r#"{"sessionId":"C1","targetInfo":{"targetId":"F1","type":"iframe","url":"http://localhost/child.html"},"waitingForDebugger":false}"#;
            h.ext(event(1, None, "Target.attachedToTarget", frame));
            h.send(1, json!({"id": 2, "sessionId": "C1", "method": "Target.setAutoAttach", "params": auto}));
            let worker = r#"{"sessionId":"W1","targetInfo":{"targetId":"W","type":"worker","url":"http://x/w.js"},"waitingForDebugger":false}"#;
            h.ext(event(1, Some("C1"), "Target.attachedToTarget", worker));
            h.drain();
            let token = format!("{PRIVATE_DIR}/token");
            for session in [page.as_str(), "C1", "W1"] {
                for (method, params) in routes(&token) {
                    let step =
                        h.send(1, json!({"id": 9, "sessionId": session, "method": method, "params": params}));
                    assert!(
                        step.commands().is_empty() && step.extension.is_empty(),
                        "{method} reached the tab"
                    );
                    let reply = step.only_reply(1);
                    let message = reply["error"]["message"].as_str().unwrap();
                    assert!(message.contains(RULE) && message.contains("tabtunnel's own"), "{reply}");
                    let records: Vec<_> = step
                        .other
                        .iter()
                        .filter_map(|o| match o {
                            Output::Audit(r) if r.method == method => Some(&r.outcome),
                            _ => None,
                        })
                        .collect();
                    assert!(
                        matches!(records.as_slice(), [crate::Outcome::Denied { rule }] if rule == RULE),
                        "{records:?}"
                    );
                }
            }
        }
        // Opted in: a file of the allowed directory goes to the tab, any other does not.
        let (mut h, page) = scout_on_its_tab(Some(json!({"allow_file_uploads": ["/home/me/agent-uploads"]})));
        let upload = |files: Value| json!({"id": 3, "sessionId": page, "method": "DOM.setFileInputFiles", "params": {"files": files, "nodeId": 4}});
        let step = h.send(1, upload(json!(["/home/me/agent-uploads/cv.pdf"])));
        assert_eq!(step.commands().len(), 1, "{:?}", step.client);
        assert_eq!(step.commands()[0].method, "DOM.setFileInputFiles");
        let step = h.send(1, upload(json!(["/etc/hostname"])));
        assert!(step.commands().is_empty(), "outside the directory");
    }
}
