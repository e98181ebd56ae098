//! Request bodies as servers read them: the field names and values a write carries, whatever
//! its encoding, and the method a server takes a POST for.
//!
//! - URL-encoded: as `application/x-www-form-urlencoded` decodes it.
//! - Multipart: every part's `Content-Disposition` name, quoted (`name="new_password"`), bare
//!   (`name=new_password`, which servers take too), or RFC 2231 (`name*=UTF-8''…`), in any case.
//! - JSON: every member name at any depth, read by a scanner that keeps no stack (a body nested
//!   deeper than a parser's recursion limit is still read; a server's parser may have none),
//!   with escapes decoded (`"pass\u0077ord"` is `password`); a string value that is itself
//!   JSON is read too.
//! - `text/plain` (a form's `enctype=text/plain`): `name=value` lines.
//!
//! Reading is tolerant: it finds at least what a server would, never less, within the body
//! Chrome hands the guard.

/// Names and values a body carries.
#[derive(Debug, Default, PartialEq)]
pub struct Fields {
    pub names: Vec<String>,
    pub values: Vec<String>,
}

/// The fields of a body, read as its content type says (a body that looks like JSON is read as
/// JSON whatever it says).
pub fn fields(body: &str, content_type: &str) -> Fields {
    let mut out = Fields::default();
    let lower = content_type.to_ascii_lowercase();
    let trimmed = body.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if trimmed.starts_with('{') || trimmed.starts_with('[') || lower.contains("json") {
        json(trimmed, &mut out);
    } else if lower.contains("multipart/") {
        // The boundary is case-sensitive.
        multipart(body, content_type, &mut out);
    } else if lower.starts_with("text/plain") {
        for line in body.lines() {
            let (name, value) = line.split_once('=').unwrap_or((line, ""));
            out.names.push(name.to_owned());
            out.values.push(value.to_owned());
        }
    } else {
        for (name, value) in url::form_urlencoded::parse(body.as_bytes()) {
            out.names.push(name.into_owned());
            out.values.push(value.into_owned());
        }
    }
    out
}

/// The method a server takes a request for: a POST's `_method` field (Rails, Laravel, Symfony,
/// Express's method-override: the last one wins, as in their parsers), upper-cased; else the
/// method sent.
pub fn server_method(method: &str, fields: &Fields) -> String {
    let sent = method.to_ascii_uppercase();
    if sent != "POST" {
        return sent;
    }
    method_override(fields).map_or(sent, |m| m.to_ascii_uppercase())
}

/// The body's `_method` field, if any (the last one).
pub fn method_override(fields: &Fields) -> Option<&str> {
    fields
        .names
        .iter()
        .zip(&fields.values)
        .rev()
        .find(|(n, _)| n.as_str() == "_method")
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty())
}

/// Every member name (a string followed by `:`) and every other string and number, at any
/// depth. No structure is kept, so no depth limits it; malformed JSON is read as far as it goes.
fn json(text: &str, out: &mut Fields) {
    // JSON held in string values, read after; each is shorter than what held it.
    let mut pending = vec![text.to_owned()];
    let mut budget = text.len().saturating_mul(4);
    while let Some(text) = pending.pop() {
        budget = budget.saturating_sub(text.len());
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'"' => {
                    let (string, end) = json_string(&text, i + 1);
                    i = end;
                    let mut j = i;
                    while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                        j += 1;
                    }
                    if bytes.get(j) == Some(&b':') {
                        out.names.push(string);
                    } else {
                        let inner = string.trim_start();
                        if (inner.starts_with('{') || inner.starts_with('[')) && budget > inner.len() {
                            pending.push(inner.to_owned());
                        }
                        out.values.push(string);
                    }
                }
                b'-' | b'0'..=b'9' => {
                    let end = bytes[i..]
                        .iter()
                        .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                        .map_or(bytes.len(), |n| i + n);
                    out.values.push(text[i..end].to_owned());
                    i = end;
                }
                _ => i += 1,
            }
        }
    }
}

/// A JSON string starting after its opening quote, escapes decoded (a lone surrogate as U+FFFD):
/// the string, and the index after its closing quote (the end, unterminated).
fn json_string(text: &str, start: usize) -> (String, usize) {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut i = start;
    let hex = |at: usize| text.get(at..at + 4).and_then(|h| u32::from_str_radix(h, 16).ok());
    while i < bytes.len() {
        match bytes[i] {
            b'"' => return (out, i + 1),
            b'\\' => {
                let escaped = bytes.get(i + 1).copied();
                i += 2;
                match escaped {
                    Some(b'n') => out.push('\n'),
                    Some(b't') => out.push('\t'),
                    Some(b'r') => out.push('\r'),
                    Some(b'b') => out.push('\u{8}'),
                    Some(b'f') => out.push('\u{c}'),
                    Some(b'u') => {
                        let Some(unit) = hex(i) else { continue };
                        i += 4;
                        let low = (0xd800..0xdc00)
                            .contains(&unit)
                            .then(|| (text.get(i..i + 2) == Some("\\u")).then(|| hex(i + 2)).flatten());
                        let c = match low.flatten().filter(|l| (0xdc00..0xe000).contains(l)) {
                            Some(low) => {
                                i += 6;
                                char::from_u32(0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00))
                            }
                            None => char::from_u32(unit),
                        };
                        out.push(c.unwrap_or('\u{fffd}'));
                    }
                    Some(other) if other.is_ascii() => out.push(other as char),
                    // A backslash before a multi-byte character: keep the character whole.
                    Some(_) => i -= 1,
                    None => {}
                }
            }
            _ => {
                let c = text[i..].chars().next().expect("in bounds");
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    (out, bytes.len())
}

/// Each part's name (its `Content-Disposition`) and value, split by the boundary the content
/// type names (else the body's first `--` line).
fn multipart(body: &str, content_type: &str, out: &mut Fields) {
    let boundary = parameters(content_type)
        .into_iter()
        .find(|(k, _)| k == "boundary")
        .map(|(_, v)| v)
        .filter(|b| !b.is_empty())
        .or_else(|| body.lines().next().and_then(|l| l.strip_prefix("--")).map(|b| b.trim_end().to_owned()));
    let Some(boundary) = boundary else { return };
    for part in body.split(&format!("--{boundary}")).skip(1) {
        let part = part.strip_prefix("\r\n").or_else(|| part.strip_prefix('\n')).unwrap_or(part);
        let split = [part.find("\r\n\r\n").map(|i| (i, 4)), part.find("\n\n").map(|i| (i, 2))]
            .into_iter()
            .flatten()
            .min();
        let (head, value) = match split {
            Some((i, n)) => (&part[..i], &part[i + n..]),
            None => (part, ""),
        };
        let value = value.strip_suffix("\r\n").or_else(|| value.strip_suffix('\n')).unwrap_or(value);
        for line in head.lines() {
            let Some((header, rest)) = line.split_once(':') else { continue };
            if !header.trim().eq_ignore_ascii_case("content-disposition") {
                continue;
            }
            let name = parameters(rest).into_iter().find(|(k, _)| k == "name" || k == "name*");
            if let Some((key, name)) = name {
                out.names.push(if key == "name*" { extended_value(&name) } else { name });
                out.values.push(value.to_owned());
            }
        }
    }
}

/// A header's `; key=value` parameters (keys lower-cased; values bare or quoted, with
/// backslash escapes).
fn parameters(header: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = header;
    while let Some(at) = rest.find(';') {
        rest = &rest[at + 1..];
        let Some((key, after)) = rest.split_once('=') else { break };
        if key.contains(';') {
            continue; // a parameter without a value: the next one starts after its `;`
        }
        let after = after.trim_start();
        let (value, next) = match after.strip_prefix('"') {
            Some(quoted) => {
                let mut value = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => value.extend(chars.next().map(|(_, c)| c)),
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        c => value.push(c),
                    }
                }
                (value, &quoted[end..])
            }
            None => {
                let end = after.find(';').unwrap_or(after.len());
                (after[..end].trim().to_owned(), &after[end..])
            }
        };
        out.push((key.trim().to_ascii_lowercase(), value));
        rest = next;
    }
    out
}

/// An RFC 2231 value (`UTF-8''new%5Fpassword`), decoded.
fn extended_value(value: &str) -> String {
    let encoded = value.splitn(3, '\'').nth(2).unwrap_or(value);
    let escaped = format!("v={}", encoded.replace('+', "%2B").replace('&', "%26"));
    url::form_urlencoded::parse(escaped.as_bytes()).next().map(|(_, v)| v.into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(body: &str, content_type: &str) -> Vec<String> {
        fields(body, content_type).names
    }

    #[test]
    fn multipart_names_bare_quoted_escaped_and_extended() {
        let ct = "multipart/form-data; boundary=XyZ";
        let body = "--XyZ\r\nContent-Disposition: form-data; name=new_password\r\n\r\nhunter2\r\n\
                    --XyZ\r\ncontent-disposition: form-data; NAME=\"a\\\"b\"; filename=\"f.txt\"\r\n\r\nx\r\n\
                    --XyZ\r\nContent-Disposition: form-data; name*=UTF-8''card%5Fnumber\r\n\r\n4242\r\n--XyZ--\r\n";
        let read = fields(body, ct);
        assert_eq!(read.names, ["new_password", "a\"b", "card_number"]);
        assert_eq!(read.values, ["hunter2", "x", "4242"]);
        // A quoted boundary, bare newlines, and none in the content type at all.
        let lf = "--b\nContent-Disposition: form-data;name=otp\n\n123456\n--b--";
        assert_eq!(names(lf, "multipart/form-data; boundary=\"b\""), ["otp"]);
        assert_eq!(names(lf, "multipart/form-data"), ["otp"]);
    }

    #[test]
    fn json_names_at_any_depth_with_escapes_and_json_in_strings() {
        let mut deep = String::from(r#"{"password":"x"}"#);
        for i in 0..10 {
            deep = format!(r#"{{"level{i}":{deep}}}"#);
        }
        assert!(names(&deep, "application/json").contains(&"password".to_owned()));
        // Deeper than any recursion limit: 100,000 arrays around it.
        let abyss = format!("{}{{\"new_password\":1}}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(names(&abyss, "application/json"), ["new_password"]);
        assert_eq!(names(r#"{"pass\u0077ord" : "x"}"#, ""), ["password"]);
        assert_eq!(names(r#"{"\ud83d\ude00":1,"\ud800":2}"#, ""), ["😀", "\u{fffd}"]);
        let wrapped = fields(r#"{"payload":"{\"cvc\":\"123\"}","n":-4.2e1}"#, "text/plain");
        assert_eq!(wrapped.names, ["payload", "n", "cvc"]);
        assert!(wrapped.values.contains(&"-4.2e1".to_owned()));
        // Malformed or cut: read as far as it goes, never a panic.
        for broken in [r#"{"password""#, r#"{"a":"\"#, r#"{"a":"\u12"#, "{\"\\", "[\"é\\é\"]", "{"] {
            let _ = fields(broken, "application/json");
        }
        assert_eq!(names(r#"{"password":"#, ""), ["password"]);
    }

    #[test]
    fn urlencoded_and_text_plain_forms() {
        assert_eq!(names("user%5Bpassword%5D=a&b+c=2", ""), ["user[password]", "b c"]);
        assert_eq!(
            names("note=hi\r\nnew_password=x\r\n", "text/plain;charset=UTF-8"),
            ["note", "new_password"]
        );
    }

    #[test]
    fn a_posts_method_field_says_what_the_server_does() {
        let read = fields("_method=patch&x=1&_method=delete", "application/x-www-form-urlencoded");
        assert_eq!(server_method("post", &read), "DELETE");
        assert_eq!(server_method("PUT", &read), "PUT", "only a POST is overridden");
        assert_eq!(server_method("POST", &fields("x=1", "")), "POST");
        assert_eq!(server_method("POST", &fields("_method=", "")), "POST");
        let multipart = "--b\r\nContent-Disposition: form-data; name=\"_method\"\r\n\r\ndelete\r\n--b--";
        assert_eq!(server_method("POST", &fields(multipart, "multipart/form-data; boundary=b")), "DELETE");
    }
}
