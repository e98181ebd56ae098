//! `chrome.debugger.sendCommand` drops every object property whose value is `null` (measured on
//! Chromium 156: `{"value": null}` reaches the page as `{}`, `{"x": null}` as `{}`; nulls in
//! arrays survive). For most params an absent property means what `null` meant, but not for a
//! call argument's `value`, which is data: `Runtime.callFunctionOn` with `{"value": null}` would
//! pass `undefined` (puppeteer's `page.evaluate(fn, null)`, a binding that throws `null`) and an
//! object with a null field would lose it.
//!
//! Such an argument is sent as `unserializableValue` instead: V8 evaluates that text as a
//! script in the page's context (it is how `NaN` and `1n` arrive), so the JSON written as a
//! JavaScript literal rebuilds the same value, `__proto__` keys included, without touching any
//! of the page's globals. Everything else passes through untouched, and only argument lists
//! whose text mentions `null` are parsed at all.

use serde_json::{Map, Value};
use std::fmt::Write;
use tabtunnel_wire::RawValue;

/// The params to give `chrome.debugger` for `method`: `params` itself, or a rewritten copy when
/// a call argument's value holds a null that `chrome.debugger` would drop.
pub fn params_for_debugger(method: &str, params: &RawValue) -> Box<RawValue> {
    if method == "Runtime.callFunctionOn" && params.get().contains("null") {
        if let Some(rewritten) = rewrite_call_arguments(params.get()) {
            return rewritten;
        }
    }
    params.to_owned()
}

fn rewrite_call_arguments(text: &str) -> Option<Box<RawValue>> {
    let mut params: Map<String, Value> = serde_json::from_str(text).ok()?;
    let arguments = params.get_mut("arguments")?.as_array_mut()?;
    let mut changed = false;
    for argument in arguments.iter_mut().filter_map(Value::as_object_mut) {
        let Some(value) = argument.get("value") else { continue };
        if !loses_nulls(value) {
            continue;
        }
        let mut literal = String::new();
        write_literal(&mut literal, value);
        argument.remove("value");
        argument.insert("unserializableValue".into(), Value::String(literal));
        changed = true;
    }
    if !changed {
        return None;
    }
    RawValue::from_string(Value::Object(params).to_string()).ok()
}

/// Whether `chrome.debugger` would change `value` as an argument's `value`: it is `null`, or
/// holds an object with a null property.
fn loses_nulls(value: &Value) -> bool {
    fn inside(value: &Value) -> bool {
        match value {
            Value::Object(map) => map.values().any(|v| v.is_null() || inside(v)),
            Value::Array(items) => items.iter().any(inside),
            _ => false,
        }
    }
    value.is_null() || inside(value)
}

/// `value` as a JavaScript expression evaluating to the same value. JSON text is one, except
/// that `"__proto__": x` in an object literal sets the prototype; a computed key does not.
fn write_literal(out: &mut String, value: &Value) {
    match value {
        Value::Object(map) => {
            out.push_str("({");
            for (i, (key, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let key_json = Value::String(key.clone()).to_string();
                if key == "__proto__" {
                    let _ = write!(out, "[{key_json}]:");
                } else {
                    let _ = write!(out, "{key_json}:");
                }
                write_literal(out, v);
            }
            out.push_str("})");
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_literal(out, v);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rewrite(method: &str, params: Value) -> Value {
        let raw = RawValue::from_string(params.to_string()).unwrap();
        serde_json::from_str(params_for_debugger(method, &raw).get()).unwrap()
    }

    #[test]
    fn a_null_argument_becomes_an_unserializable_null() {
        let params = json!({"functionDeclaration": "(a, b) => a", "objectId": "1",
            "arguments": [{"value": null}, {"value": "foo"}]});
        assert_eq!(
            rewrite("Runtime.callFunctionOn", params),
            json!({"functionDeclaration": "(a, b) => a", "objectId": "1",
                "arguments": [{"unserializableValue": "null"}, {"value": "foo"}]})
        );
    }

    #[test]
    fn an_object_with_a_null_field_becomes_a_literal_that_keeps_it() {
        let params = json!({"arguments": [{"value": {"a": null, "b": [null, {"c": null}], "d": "null"}}]});
        let out = rewrite("Runtime.callFunctionOn", params);
        assert_eq!(
            out["arguments"][0],
            json!({"unserializableValue": r#"({"a":null,"b":[null,({"c":null})],"d":"null"})"#})
        );
    }

    #[test]
    fn a_proto_key_stays_an_own_property() {
        let params = json!({"arguments": [{"value": {"__proto__": null, "x": 1}}]});
        let out = rewrite("Runtime.callFunctionOn", params);
        assert_eq!(out["arguments"][0]["unserializableValue"], r#"({["__proto__"]:null,"x":1})"#);
    }

    #[test]
    fn what_chrome_debugger_keeps_passes_through_as_sent() {
        // Nulls only in arrays, the word in a string, other methods, other argument kinds.
        for (method, text) in [
            ("Runtime.callFunctionOn", r#"{"arguments":[{"value":[null,1]},{"value":"null"}]}"#),
            ("Runtime.callFunctionOn", r#"{"arguments":[{"objectId":"null-ish"}]}"#),
            ("Runtime.callFunctionOn", r#"{"functionDeclaration":"() => null"}"#),
            ("Runtime.evaluate", r#"{"expression":"null","arguments":[{"value":null}]}"#),
        ] {
            let raw = RawValue::from_string(text.to_owned()).unwrap();
            assert_eq!(params_for_debugger(method, &raw).get(), text, "{method} {text}");
        }
    }

    #[test]
    fn a_client_s_null_argument_reaches_the_tab_as_a_null() {
        use crate::testing::Harness;
        let mut h = Harness::with_tabs(&[1]);
        h.connect(1);
        let page = h.playwright_attach(1)[0].clone();
        let step = h.send(
            1,
            json!({"id": 5, "sessionId": page, "method": "Runtime.callFunctionOn", "params": {
            "functionDeclaration": "(a, b) => Object.is(a, null) && b === 'foo'", "executionContextId": 1,
            "arguments": [{"value": null}, {"value": "foo"}], "returnByValue": true}}),
        );
        let sent: Value = serde_json::from_str(step.commands()[0].params.as_ref().unwrap().get()).unwrap();
        assert_eq!(sent["arguments"], json!([{"unserializableValue": "null"}, {"value": "foo"}]));
        assert_eq!(sent["returnByValue"], true);
    }

    #[test]
    fn unreadable_params_pass_through_for_chrome_to_judge() {
        let raw = RawValue::from_string(r#"{"arguments":"null"}"#.to_owned()).unwrap();
        assert_eq!(params_for_debugger("Runtime.callFunctionOn", &raw).get(), r#"{"arguments":"null"}"#);
    }
}
