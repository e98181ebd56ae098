//! What Chromium checks about `params` before a method runs, after the envelope let an object,
//! an array or `null` through (`null` arrives here as absent): a method without parameters
//! ignores them; any other method refuses an array; a method with a mandatory parameter also
//! refuses absent params. Measured against Chromium 156; the wording is Chromium's.
//!
//! The core knows the parameters of the methods it answers itself. Whatever it forwards to a
//! tab must never reach `chrome.debugger` with an array (it throws on one, or garbles the
//! tab's next answer), so on page and child sessions an array is refused for every other
//! method too: Chrome does the same for each method that has parameters.

use crate::frames::{errors, CdpError, ClientCommand};
use crate::session::SessionKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    Nothing,
    Optional,
    Required,
}

/// The parameters of the methods the core answers (or may answer) itself.
fn takes(method: &str) -> Option<Takes> {
    Some(match method {
        "Browser.getVersion"
        | "Browser.close"
        | "Target.getBrowserContexts"
        | "Target.attachToBrowserTarget"
        | "Runtime.runIfWaitingForDebugger" => Takes::Nothing,
        "Target.getTargetInfo"
        | "Target.getTargets"
        | "Target.detachFromTarget"
        | "Target.createBrowserContext" => Takes::Optional,
        "Browser.setDownloadBehavior"
        | "Target.setDiscoverTargets"
        | "Target.setAutoAttach"
        | "Target.autoAttachRelated"
        | "Target.attachToTarget"
        | "Target.getDevToolsTarget"
        | "Target.createTarget"
        | "Target.closeTarget"
        | "Target.activateTarget"
        | "Target.disposeBrowserContext" => Takes::Required,
        _ => return None,
    })
}

/// Chromium's answer when `cmd`'s params do not fit its method, sent on a session of `kind`.
pub fn refusal(kind: SessionKind, cmd: &ClientCommand) -> Option<CdpError> {
    let is_array = cmd.params.is_some_and(|p| p.get().starts_with('['));
    let forwards = matches!(kind, SessionKind::Page { .. } | SessionKind::Child { .. });
    match (takes(cmd.method), is_array) {
        (Some(Takes::Nothing), _) => None,
        (Some(_), true) => Some(errors::params_not_an_object()),
        (Some(Takes::Required), false) if cmd.params.is_none() => Some(errors::params_missing()),
        (None, true) if forwards => Some(errors::params_not_an_object()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::value::RawValue;

    fn check(kind: SessionKind, method: &str, params: Option<&str>) -> Option<String> {
        let raw = params.map(|p| RawValue::from_string(p.to_owned()).unwrap());
        let cmd = ClientCommand { id: 1, method, session_id: "", params: raw.as_deref() };
        refusal(kind, &cmd).map(|e| format!("{} {} {}", e.code, e.message, e.data.unwrap_or_default()))
    }

    /// Chromium 156's answers, on its browser endpoint and on a page session.
    #[test]
    fn chromium_answers() {
        const ARRAY: &str =
            "-32602 Invalid parameters Failed to deserialize params - CBOR: map start expected at position 7";
        const ABSENT: &str =
            "-32602 Invalid parameters Failed to deserialize params - CBOR: map start expected at position 0";
        let browser = SessionKind::Browser;
        let page = SessionKind::Page { tab: 1 };
        let cases: [(SessionKind, &str, Option<&str>, Option<&str>); 16] = [
            (browser, "Browser.getVersion", Some("[]"), None),
            (browser, "Browser.getVersion", Some("[1]"), None),
            (browser, "Target.getBrowserContexts", Some("[]"), None),
            (browser, "Target.attachToBrowserTarget", Some("[]"), None),
            (browser, "Target.getTargetInfo", None, None),
            (browser, "Target.getTargetInfo", Some("[]"), Some(ARRAY)),
            (browser, "Target.getTargets", Some("[1]"), Some(ARRAY)),
            (browser, "Target.setDiscoverTargets", Some("[]"), Some(ARRAY)),
            (browser, "Target.setDiscoverTargets", None, Some(ABSENT)),
            (browser, "Target.setAutoAttach", None, Some(ABSENT)),
            (browser, "Browser.setDownloadBehavior", None, Some(ABSENT)),
            (browser, "Foo.bar", Some("[]"), None), // then: -32601 'Foo.bar' wasn't found
            (page, "Runtime.runIfWaitingForDebugger", Some("[]"), None),
            (page, "Runtime.evaluate", Some("[]"), Some(ARRAY)),
            (page, "Target.setAutoAttach", None, Some(ABSENT)),
            (page, "Page.reload", None, None),
        ];
        for (kind, method, params, expected) in cases {
            assert_eq!(check(kind, method, params).as_deref(), expected, "{method} {params:?} on {kind:?}");
        }
    }

    #[test]
    fn nothing_but_objects_and_absent_params_is_forwarded() {
        for kind in [SessionKind::Page { tab: 1 }, SessionKind::Child { tab: 1 }] {
            for method in ["Page.enable", "Runtime.enable", "Network.enable", "Tracing.start", "X.y"] {
                assert!(check(kind, method, Some("[]")).is_some(), "{method}");
                assert!(check(kind, method, Some("{}")).is_none(), "{method}");
                assert!(check(kind, method, None).is_none(), "{method}");
            }
        }
    }
}
