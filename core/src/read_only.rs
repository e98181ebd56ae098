//! Scripts of a `read-only` agent read the page but do not change it.
//!
//! The preset lets only reading methods through (`presets.rs`); the agent's scripts are the
//! other route, since one `Runtime.evaluate` can click, type, submit a form or write storage.
//! So every `Runtime.evaluate` and `Runtime.callFunctionOn` that runs in one of the page's own
//! worlds goes with V8's `throwOnSideEffect`: the script may read anything, and anything that
//! could change state outside the script (a DOM setter, `click()`, `localStorage.setItem`, a
//! page variable) throws `EvalError: Possible side-effect in debug-evaluate` instead.
//!
//! Isolated worlds a client made for its own scripts (`Page.createIsolatedWorld`) are the one
//! exception: Playwright keeps the state of its injected script there, and with the check its
//! snapshots, locators and screenshots all fail (measured: every call throws). A script in such
//! a world still shares the page's DOM and storage, so the browser holds a read-only agent's tab
//! still as well (`OriginRules::read_only`: no top-level navigation, no request but GET, HEAD
//! and OPTIONS, no WebSocket): what it can do there changes what that tab shows until it
//! reloads, and nothing that reaches a server. docs/policy.md says so.

use serde_json::{Map, Value};
use tabtunnel_wire::RawValue;

/// Whether a `Page.addScriptToEvaluateOnNewDocument` only makes a world for the client's own
/// scripts in each new document and runs nothing there: a `worldName`, and a source of nothing
/// but comments and white space (puppeteer sends `//# sourceURL=pptr:internal`, Playwright an
/// empty one). Read-only lets that through; any code is refused.
pub fn only_makes_a_world(method: &str, params: Option<&RawValue>) -> bool {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Params<'a> {
        #[serde(borrow)]
        source: std::borrow::Cow<'a, str>,
        world_name: Option<std::borrow::Cow<'a, str>>,
    }
    if method != "Page.addScriptToEvaluateOnNewDocument" {
        return false;
    }
    let Some(Ok(params)) = params.map(|p| serde_json::from_str::<Params>(p.get())) else { return false };
    params.world_name.is_some_and(|w| !w.is_empty()) && is_only_comments(&params.source)
}

/// Whether JavaScript source holds no code: white space, `// ...` and `/* ... */` only.
fn is_only_comments(source: &str) -> bool {
    let mut rest = source.trim_start();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.split_once(['\n', '\r', '\u{2028}', '\u{2029}']).map_or("", |(_, next)| next);
        } else if let Some(after) = rest.strip_prefix("/*") {
            let Some((_, next)) = after.split_once("*/") else { return false };
            rest = next;
        } else {
            return false;
        }
        rest = rest.trim_start();
    }
    true
}

/// What V8 says when the side-effect check stops a script.
const V8_REFUSAL: &str = "Possible side-effect in debug-evaluate";

/// A script's answer with V8's refusal explained, if it holds one: the agent (and its human)
/// learn that the policy, not the page, stopped it.
pub fn explain(result: &str) -> Option<String> {
    result.contains(V8_REFUSAL).then(|| {
        result.replace(
            V8_REFUSAL,
            "Possible side-effect in debug-evaluate (tabtunnel: this agent is read-only; its scripts may read the page but not change it)",
        )
    })
}

/// The context a `Runtime.evaluate` or `Runtime.callFunctionOn` runs in, as far as its params
/// say: an id, a unique id, or the context of the object it is called on. `None` for neither
/// (the target's default context, the page's own world).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ContextNamed {
    pub id: Option<i64>,
    pub unique_id: Option<String>,
}

/// The params of a script-running method, parsed once: what context they name, and the object
/// to rewrite.
pub struct ScriptParams {
    map: Map<String, Value>,
}

impl ScriptParams {
    /// Whether `method` runs a script of the agent's.
    pub fn runs_script(method: &str) -> bool {
        matches!(method, "Runtime.evaluate" | "Runtime.callFunctionOn")
    }

    /// `None` for methods that run no script of the agent's, or params that are not an object
    /// (already refused by `params_shape`).
    pub fn parse(method: &str, params: Option<&RawValue>) -> Option<ScriptParams> {
        if !Self::runs_script(method) {
            return None;
        }
        let map = match params {
            Some(raw) => serde_json::from_str(raw.get()).ok()?,
            None => Map::new(),
        };
        Some(ScriptParams { map })
    }

    pub fn context(&self) -> ContextNamed {
        let id = ["contextId", "executionContextId"].iter().find_map(|k| self.map.get(*k)?.as_i64());
        // A remote object's id is `<isolate>.<context>.<object>` (V8's RemoteObjectId).
        let from_object = || {
            let object = self.map.get("objectId")?.as_str()?;
            object.split('.').nth(1)?.parse().ok()
        };
        let unique_id = self.map.get("uniqueContextId").and_then(Value::as_str).map(str::to_owned);
        ContextNamed { id: id.or_else(from_object), unique_id }
    }

    /// The params with V8's side-effect check on.
    pub fn without_side_effects(mut self) -> Box<RawValue> {
        self.map.insert("throwOnSideEffect".into(), Value::Bool(true));
        RawValue::from_string(Value::Object(self.map).to_string()).expect("a JSON object")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(method: &str, json: &str) -> Option<ScriptParams> {
        let raw = RawValue::from_string(json.to_owned()).unwrap();
        ScriptParams::parse(method, Some(&raw))
    }

    #[test]
    fn names_the_context_by_id_unique_id_or_object() {
        let ctx = |m: &str, j: &str| params(m, j).unwrap().context();
        assert_eq!(ctx("Runtime.evaluate", r#"{"expression":"1"}"#), ContextNamed::default());
        assert_eq!(ctx("Runtime.evaluate", r#"{"expression":"1","contextId":7}"#).id, Some(7));
        assert_eq!(
            ctx("Runtime.evaluate", r#"{"expression":"1","uniqueContextId":"-5.9"}"#).unique_id.as_deref(),
            Some("-5.9")
        );
        assert_eq!(
            ctx("Runtime.callFunctionOn", r#"{"functionDeclaration":"f","executionContextId":3}"#).id,
            Some(3)
        );
        assert_eq!(
            ctx("Runtime.callFunctionOn", r#"{"functionDeclaration":"f","objectId":"-8149.4.12"}"#).id,
            Some(4)
        );
        assert_eq!(
            ctx("Runtime.callFunctionOn", r#"{"functionDeclaration":"f","objectId":"junk"}"#).id,
            None
        );
        assert!(params("Runtime.getProperties", r#"{"objectId":"1.2.3"}"#).is_none());
        assert!(ScriptParams::parse("Runtime.evaluate", None).is_some());
    }

    #[test]
    fn a_world_for_new_documents_may_be_made_but_no_script_run_there() {
        let make = |json: &str| {
            only_makes_a_world(
                "Page.addScriptToEvaluateOnNewDocument",
                Some(&RawValue::from_string(json.into()).unwrap()),
            )
        };
        assert!(make(r#"{"source":"","worldName":"__playwright_utility_world__"}"#));
        assert!(make(
            r#"{"source":"//# sourceURL=pptr:internal","worldName":"__puppeteer_utility_world__"}"#
        ));
        assert!(make(r#"{"source":"  /* a */ // b\n","worldName":"w"}"#));
        for refused in [
            r#"{"source":"document.forms[0].submit()","worldName":"w"}"#,
            r#"{"source":"// hi\nlocalStorage.x=1","worldName":"w"}"#,
            r#"{"source":"/* unclosed","worldName":"w"}"#,
            r#"{"source":""}"#,
            r#"{"source":"","worldName":""}"#,
            r#"{"source":"","worldName":"w","runImmediately":true,"extra":1}"#,
        ] {
            assert_eq!(make(refused), refused.contains("runImmediately"), "{refused}");
        }
        assert!(!only_makes_a_world("Page.addScriptToEvaluateOnNewDocument", None));
        assert!(!only_makes_a_world(
            "Runtime.evaluate",
            Some(&RawValue::from_string(r#"{"source":"","worldName":"w"}"#.into()).unwrap())
        ));
    }

    #[test]
    fn the_rewrite_turns_the_side_effect_check_on_whatever_the_client_said() {
        let p = params(
            "Runtime.evaluate",
            r#"{"expression":"1","throwOnSideEffect":false,"returnByValue":true}"#,
        );
        let rewritten: Value = serde_json::from_str(p.unwrap().without_side_effects().get()).unwrap();
        assert_eq!(rewritten["throwOnSideEffect"], true);
        assert_eq!(rewritten["returnByValue"], true);
        assert_eq!(rewritten["expression"], "1");
    }
}

/// What the core sends for a read-only agent's scripts.
#[cfg(test)]
mod wiring {
    use crate::policy::{PolicyFile, PolicySet};
    use crate::testing::*;
    use crate::*;
    use serde_json::json;

    fn reader() -> (Harness, String) {
        let file: PolicyFile =
            serde_json::from_value(json!({ "agent": { "reader": { "preset": "read-only" } } })).unwrap();
        let mut h = Harness::with_tabs(&[]);
        h.core.set_policy(h.now, Some(PolicySet::compile(&file).unwrap()));
        h.ext(FromExtension::TabShared(agent_tab(1, "reader", true)));
        h.connect_as(1, "reader");
        let page = h.playwright_attach(1)[0].clone();
        let step = h.send(1, json!({"id": 2, "sessionId": page, "method": "Runtime.enable"}));
        let id = step.commands()[0].id;
        h.ext(event(
            1,
            None,
            "Runtime.executionContextCreated",
            r#"{"context":{"id":1,"uniqueId":"u1","auxData":{"isDefault":true,"type":"default"}}}"#,
        ));
        h.ext(event(1, None, "Runtime.executionContextCreated", r#"{"context":{"id":2,"uniqueId":"u2","name":"__playwright_utility_world__","auxData":{"isDefault":false,"type":"isolated"}}}"#));
        h.answer(id, json!({}));
        (h, page)
    }

    fn sent_params(step: &Step) -> serde_json::Value {
        serde_json::from_str(step.commands()[0].params.as_ref().unwrap().get()).unwrap()
    }

    #[test]
    fn scripts_in_the_pages_worlds_run_without_side_effects() {
        let (mut h, page) = reader();
        for (id, params) in [
            (10, json!({"expression": "document.querySelector('button').click()"})),
            (11, json!({"expression": "1", "contextId": 1, "throwOnSideEffect": false})),
            (12, json!({"expression": "1", "uniqueContextId": "u1"})),
            (13, json!({"expression": "1", "contextId": 99})),
        ] {
            let step = h.send(
                1,
                json!({"id": id, "sessionId": page, "method": "Runtime.evaluate", "params": params}),
            );
            assert_eq!(sent_params(&step)["throwOnSideEffect"], true, "{id}");
        }
        let step = h.send(1, json!({"id": 14, "sessionId": page, "method": "Runtime.callFunctionOn", "params": {"functionDeclaration": "function(){this.click()}", "objectId": "77.1.5"}}));
        assert_eq!(sent_params(&step)["throwOnSideEffect"], true);
    }

    #[test]
    fn a_clients_isolated_world_keeps_its_scripts_as_they_are() {
        let (mut h, page) = reader();
        let step = h.send(1, json!({"id": 10, "sessionId": page, "method": "Runtime.evaluate", "params": {"expression": "1", "contextId": 2}}));
        assert!(sent_params(&step).get("throwOnSideEffect").is_none());
        let step = h.send(1, json!({"id": 11, "sessionId": page, "method": "Runtime.callFunctionOn", "params": {"functionDeclaration": "f", "objectId": "77.2.5"}}));
        assert!(sent_params(&step).get("throwOnSideEffect").is_none());
        // The world goes with its document.
        h.ext(event(1, None, "Runtime.executionContextsCleared", "{}"));
        let step = h.send(1, json!({"id": 12, "sessionId": page, "method": "Runtime.evaluate", "params": {"expression": "1", "contextId": 2}}));
        assert_eq!(sent_params(&step)["throwOnSideEffect"], true);
    }

    #[test]
    fn a_refused_side_effect_says_why() {
        let (mut h, page) = reader();
        let step = h.send(1, json!({"id": 10, "sessionId": page, "method": "Runtime.evaluate", "params": {"expression": "localStorage.x=1"}}));
        let id = step.commands()[0].id;
        let refusal = json!({"result": {"type": "object", "subtype": "error", "className": "EvalError", "description": "EvalError: Possible side-effect in debug-evaluate"}, "exceptionDetails": {"text": "Uncaught"}});
        let step = h.answer(id, refusal);
        let description = step.only_reply(1)["result"]["result"]["description"].as_str().unwrap().to_owned();
        assert!(description.contains("read-only"), "{description}");
    }

    #[test]
    fn other_agents_scripts_are_sent_as_written() {
        let (mut h, _) = reader();
        h.ext(FromExtension::TabShared(agent_tab(2, "writer", true)));
        h.connect_as(2, "writer");
        let page = h.playwright_attach(2)[0].clone();
        let text = json!({"id": 1, "sessionId": page, "method": "Runtime.evaluate", "params": {"expression": "x=1"}});
        let step = h.send(2, text);
        assert_eq!(step.commands()[0].params.as_ref().unwrap().get(), r#"{"expression":"x=1"}"#);
    }
}
