//! What the child tool server says, without a secret: its results, errors and notifications
//! go to the agent, and the child knows its endpoint (with a token in its path), which it
//! quotes in its errors ("Failed to fetch browser webSocket URL from http://…/<token>/…").
//! Every string (and key) of its JSON goes through the shared redaction
//! (`tabtunnel_core::redact`), which also hides anything shaped like an agent token or the
//! navigation key's path.

use serde_json::Value;
use tabtunnel_core::redact::Redactor;

/// `value` with every secret `redactor` knows hidden, in every string and object key, at any
/// depth. Strings without a secret are neither copied nor reallocated, so a screenshot's
/// base64 costs one scan.
pub fn value(redactor: &Redactor, value: &mut Value) {
    // An explicit stack: the child's JSON is as deep as it likes.
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(text) => redactor.string(text),
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => {
                let keys: Vec<String> = map
                    .keys()
                    .filter(|k| matches!(redactor.text(k), std::borrow::Cow::Owned(_)))
                    .cloned()
                    .collect();
                for key in keys {
                    if let Some(inner) = map.remove(&key) {
                        map.insert(redactor.text(&key).into_owned(), inner);
                    }
                }
                stack.extend(map.values_mut());
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
}

/// `text` without a secret.
pub fn text(redactor: &Redactor, text: String) -> String {
    let mut text = text;
    redactor.string(&mut text);
    text
}

/// The secrets of the endpoints the child may quote: the tokens in their paths.
pub fn redactor<'a>(endpoints: impl IntoIterator<Item = &'a str>) -> Redactor {
    Redactor::new(endpoints.into_iter().filter_map(|endpoint| {
        let (ep, _) = super::endpoint::ClientEndpoint::parse(endpoint).ok()?;
        ep.token().map(str::to_owned)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn every_string_and_key_of_the_childs_json_loses_the_token() {
        let r = redactor([format!("http://127.0.0.1:9722/{TOKEN}/agent/x").as_str()]);
        let leak = format!(
            "Failed to fetch browser webSocket URL from http://127.0.0.1:9722/{TOKEN}/agent/x/json/version"
        );
        let mut result = json!({
            "content": [{"type": "text", "text": leak}],
            "structuredContent": {"deep": [[[{"why": leak}]]], TOKEN: 1, "piece": &TOKEN[10..30]},
            "isError": true,
            "n": 3,
        });
        value(&r, &mut result);
        let shown = result.to_string();
        assert!(!shown.contains(&TOKEN[..8]) && !shown.contains(&TOKEN[10..30]), "{shown}");
        assert!(shown.contains("http://127.0.0.1:9722/<secret>/agent/x/json/version"), "{shown}");
        assert_eq!(result["n"], 3);
        assert_eq!(result["isError"], true);
        // An agent token the child was given goes by its shape.
        let agent = format!("tta_{}", "0f".repeat(32));
        assert_eq!(text(&r, format!("at http://h/{agent}/agent/x")), "at http://h/<secret>/agent/x");
    }

    #[test]
    fn an_endpoint_without_a_token_hides_nothing() {
        let r = redactor(["http://127.0.0.1:9722", "not a url"]);
        let mut v = json!({"text": "deadbeefcafe0123 stays"});
        value(&r, &mut v);
        assert_eq!(v["text"], "deadbeefcafe0123 stays");
    }

    /// A screenshot's base64 (a few MB) goes through once; printed for the commit message.
    #[test]
    fn a_big_screenshot_costs_one_scan() {
        let r = redactor([format!("http://127.0.0.1:9722/{TOKEN}").as_str()]);
        // Base64 of random bytes: runs of 8+ hex-looking characters do occur in it.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let data: String = (0..4_000_000)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                alphabet[(seed % 64) as usize] as char
            })
            .collect();
        let mut v = json!({"content": [{"type": "image", "mimeType": "image/png", "data": data.clone()}]});
        let started = std::time::Instant::now();
        value(&r, &mut v);
        eprintln!("redacting 4 MB of base64 took {:?}", started.elapsed());
        assert_eq!(v["content"][0]["data"].as_str(), Some(data.as_str()));
    }
}
