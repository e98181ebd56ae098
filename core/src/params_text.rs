//! A command's params as Chrome will read them, before any rule reads them.
//!
//! The rules read params with serde_json, which refuses three things the extension's
//! `JSON.parse` hands to Chrome: a lone surrogate escape (`"\ud800"`; Chrome reads U+FFFD),
//! nesting 128 levels deep or more, and a number out of a double's range (`1e400`: Chrome drops
//! it, so the rest of the params go on as they are). (serde_json reads every other number as
//! V8 does, correctly rounded, with its `float_roundtrip` feature: without it `2.000000000000000207454`
//! was 2.0000000000000004 to the clipboard rule and 2 to Chrome.) A rule that could not read the params saw nothing to refuse:
//! measured through tabtunnel, `Network.loadNetworkResource` of a forbidden origin with
//! `#\ud800` at the end of its URL was judged as a load of `about:blank` and fetched the
//! forbidden site. So a lone surrogate is written as U+FFFD here (the rules and Chrome then read
//! the same text), and params nested too deep or holding a number out of range are refused.
//! One pass over the bytes; params are copied only when they hold a lone surrogate, and a
//! number is parsed only when it has an exponent or 300 digits or more (practically never).

use serde_json::value::RawValue;

/// How deep serde_json reads (its recursion limit of 128 stops at the 128th level): params
/// nested deeper are refused.
pub const MAX_DEPTH: usize = 127;

#[derive(Debug)]
pub enum Checked {
    /// As they came.
    Unchanged,
    /// With each lone surrogate escape written as `\ufffd`.
    Rewritten(Box<RawValue>),
    /// Nested deeper than [`MAX_DEPTH`], or holding a number no double holds.
    Unreadable,
}

/// What the refusal says.
pub const UNREADABLE: &str =
    "params tabtunnel cannot read as Chrome will (nested deeper than 127 levels, or a number out of range)";

pub fn check(params: &RawValue) -> Checked {
    let text = params.get();
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut in_string = false;
    // Where each lone surrogate escape (`\uXXXX`, six bytes) starts.
    let mut lone = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match (in_string, bytes[i]) {
            (false, b'[' | b'{') => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Checked::Unreadable;
                }
            }
            (false, b'-' | b'0'..=b'9') => {
                let length = bytes[i..]
                    .iter()
                    .take_while(|b| matches!(b, b'-' | b'+' | b'.' | b'0'..=b'9' | b'e' | b'E'))
                    .count();
                let token = &text[i..i + length];
                if (length >= 300 || token.contains(['e', 'E'])) && !readable_number(token) {
                    return Checked::Unreadable;
                }
                i += length;
                continue;
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            (_, b'"') => in_string = !in_string,
            (true, b'\\') => {
                if let Some(unit) = escaped_unit(bytes, i) {
                    if (0xD800..0xDC00).contains(&unit) {
                        // A high surrogate stands only right before a low one.
                        match escaped_unit(bytes, i + 6) {
                            Some(next) if (0xDC00..0xE000).contains(&next) => i += 6,
                            _ => lone.push(i),
                        }
                    } else if (0xDC00..0xE000).contains(&unit) {
                        lone.push(i);
                    }
                    i += 6;
                } else {
                    // Any other escape is two bytes: the backslash and what it escapes.
                    i += 2;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if lone.is_empty() {
        return Checked::Unchanged;
    }
    let mut fixed = String::with_capacity(text.len());
    let mut from = 0;
    for at in lone {
        fixed.push_str(&text[from..at]);
        fixed.push_str("\\ufffd");
        from = at + 6;
    }
    fixed.push_str(&text[from..]);
    match RawValue::from_string(fixed) {
        Ok(raw) => Checked::Rewritten(raw),
        // Cannot happen (one escape was swapped for another); refused rather than passed.
        Err(_) => Checked::Unreadable,
    }
}

/// Whether serde_json reads the number (a finite double, as `JSON.parse` would).
fn readable_number(token: &str) -> bool {
    serde_json::from_str::<f64>(token).is_ok_and(f64::is_finite)
}

/// The UTF-16 unit of a `\uXXXX` escape starting at `at`, if there is one.
fn escaped_unit(bytes: &[u8], at: usize) -> Option<u32> {
    let escape = bytes.get(at..at + 6)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    let hex = std::str::from_utf8(&escape[2..]).ok()?;
    u32::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn checked(text: &str) -> Checked {
        check(&RawValue::from_string(text.to_owned()).unwrap())
    }

    fn rewritten(text: &str) -> String {
        match checked(text) {
            Checked::Rewritten(raw) => raw.get().to_owned(),
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn lone_surrogates_become_the_replacement_character_and_the_rest_stays() {
        assert_eq!(rewritten(r#"{"url":"http://a/#\ud800"}"#), r#"{"url":"http://a/#\ufffd"}"#);
        assert_eq!(rewritten(r#"{"a":"\uDC00x","b":"\ud83d"}"#), r#"{"a":"\ufffdx","b":"\ufffd"}"#);
        // A high surrogate then a low one that is not right after it: both alone.
        assert_eq!(rewritten(r#"{"a":"\ud800 \udc00"}"#), r#"{"a":"\ufffd \ufffd"}"#);
        // Each rewritten text is one serde_json reads, as the rules must.
        for text in [r#"{"url":"http://a/#\ud800"}"#, r#"["\ud800\ud800\udc00"]"#] {
            let fixed = rewritten(text);
            assert!(serde_json::from_str::<Value>(&fixed).is_ok(), "{fixed}");
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text} was readable already");
        }
    }

    #[test]
    fn well_formed_params_are_left_alone() {
        for text in [
            r#"{"text":"\ud83d\ude00 emoji, a pair"}"#,
            r#"{"text":"\\ud800 is an escaped backslash and letters"}"#,
            r#"{"text":"quote \" and [brackets] {in} a string","n":[1,{"a":[]}]}"#,
            r#"{"text":"\u00e9\n\t\/"}"#,
            "{}",
        ] {
            assert!(matches!(checked(text), Checked::Unchanged), "{text}");
        }
    }

    #[test]
    fn params_deeper_than_the_rules_read_are_refused() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        for depth in [MAX_DEPTH - 1, MAX_DEPTH] {
            let text = nested(depth);
            assert!(matches!(checked(&text), Checked::Unchanged), "{depth}");
            assert!(serde_json::from_str::<Value>(&text).is_ok(), "serde_json reads {depth} levels");
        }
        let text = nested(MAX_DEPTH + 1);
        assert!(matches!(checked(&text), Checked::Unreadable));
        assert!(serde_json::from_str::<Value>(&text).is_err(), "serde_json stops past {MAX_DEPTH}");
        // Brackets in strings are text.
        let in_string = format!(r#"{{"a":"{}"}}"#, "[".repeat(500));
        assert!(matches!(checked(&in_string), Checked::Unchanged));
    }

    #[test]
    fn numbers_no_double_holds_are_refused_and_the_rest_read_as_v8_reads_them() {
        let huge = format!(r#"{{"n":1{}}}"#, "0".repeat(400));
        for text in [r#"{"x":{"y":1e400}}"#, r#"[-1E400]"#, r#"{"n":1.7976931348623158e309}"#, &huge] {
            assert!(matches!(checked(text), Checked::Unreadable), "{text}");
            assert!(serde_json::from_str::<Value>(text).is_err(), "serde_json reads {text}");
        }
        let long = format!(r#"{{"n":{}}}"#, "9".repeat(300));
        for text in [
            r#"{"n":1e308,"m":-0,"k":1e-400,"j":123456789012345678901234567890}"#,
            r#"{"s":"1e400 in a string","t":[0.5,-2.5e-3]}"#,
            &long,
        ] {
            assert!(matches!(checked(text), Checked::Unchanged), "{text}");
            assert!(serde_json::from_str::<Value>(text).is_ok(), "{text}");
        }
        // Correctly rounded, as V8 reads them (serde_json's `float_roundtrip`).
        for (text, value) in [("2.000000000000000207454", 2.0), ("859999999999.999948754932086305e-10", 86.0)]
        {
            assert_eq!(serde_json::from_str::<f64>(text).unwrap(), value, "{text}");
        }
    }

    /// Through the core: the origin rule reads a URL with a lone surrogate as Chrome does and
    /// refuses it (it was judged as `about:blank`), what goes on carries U+FFFD, and params too
    /// deep to read are refused.
    #[test]
    fn the_rules_read_what_chrome_will() {
        use crate::testing::*;
        use serde_json::json;
        let (mut h, session) = scout_on_its_tab(Some(json!({ "allow_origins": ["http://127.0.0.1:*"] })));
        let navigate = |id: u64, url: &str| {
            format!(
                r#"{{"id":{id},"sessionId":"{session}","method":"Page.navigate","params":{{"url":"{url}"}}}}"#
            )
        };
        let step = h.send_text(1, &navigate(4, r"https://mail.test/inbox#\ud800"));
        assert!(step.commands().is_empty(), "forwarded: {:?}", step.commands());
        let reply = step.only_reply(1);
        assert_eq!(reply["result"]["errorText"], "net::ERR_BLOCKED_BY_CLIENT", "{reply}");
        let step = h.send_text(1, &navigate(5, r"http://127.0.0.1:8000/a#\ud800"));
        let forwarded = step.commands();
        assert_eq!(forwarded.len(), 1);
        assert!(format!("{:?}", forwarded[0]).contains(r"\ufffd"), "{:?}", forwarded[0]);
        let deep = format!(
            r#"{{"id":6,"sessionId":"{session}","method":"Runtime.evaluate","params":{{"expression":"1","x":{}{}}}}}"#,
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        );
        let step = h.send_text(1, &deep);
        assert!(step.commands().is_empty());
        assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("cannot read"));
        // A number out of range made the params unreadable: the URL was read as about:blank.
        let out_of_range = format!(
            r#"{{"id":7,"sessionId":"{session}","method":"Page.navigate","params":{{"url":"https://mail.test/","x":1e400}}}}"#
        );
        let step = h.send_text(1, &out_of_range);
        assert!(step.commands().is_empty(), "forwarded: {:?}", step.commands());
        assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("out of range"));
    }
}
