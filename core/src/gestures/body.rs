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
//!
//! [`operations`] names what a body asks its server to do, whatever the URL says: a GraphQL
//! mutation's name and its fields (`mutation DropDatabase { dropDatabase(id: 7) { id } }`), a
//! persisted query's `operationName`, a JSON-RPC `method` (Odoo's `unlink` inside `call`), an
//! action field (`action=delete-post`, Roundcube's `_action=send`, Grails' `_action_terminate`).
//! Also a JSON-RPC 1.0 `method` beside its `params` (bitcoind's `sendtoaddress`), an XML-RPC
//! `<methodName>`, a GraphQL block string (`"""…"""`) skipped whole, and an
//! `application/graphql` body read as the document it is.

/// An XML-RPC call's `<methodName>`s (a SOAP or other XML body names none).
fn xml_rpc(body: &str, out: &mut Fields) {
    // ASCII lower-casing keeps every byte where it was.
    let lower = body.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find("<methodname>") {
        let start = from + at + "<methodname>".len();
        let Some(len) = lower[start..].find("</methodname>") else { break };
        out.push("methodName".into(), body[start..start + len].trim().to_owned());
        from = start + len;
        if out.pairs.len() >= 32 {
            break;
        }
    }
}

/// Names and values a body carries.
#[derive(Debug, Default, PartialEq)]
pub struct Fields {
    pub names: Vec<String>,
    pub values: Vec<String>,
    /// Each name with its value, where the value is a string (in JSON, a member whose value is
    /// a string; in forms, every field).
    pub pairs: Vec<(String, String)>,
    /// It was read as JSON.
    pub json: bool,
}

/// The fields of a body, read as its content type says (a body that looks like JSON is read as
/// JSON whatever it says).
pub fn fields(body: &str, content_type: &str) -> Fields {
    let mut out = Fields::default();
    let lower = content_type.to_ascii_lowercase();
    let trimmed = body.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if lower.starts_with("application/graphql") && !lower.contains("json") {
        // A GraphQL document as the body (express-graphql, GraphQL Yoga).
        out.push("query".into(), body.to_owned());
    } else if trimmed.starts_with('{') || trimmed.starts_with('[') || lower.contains("json") {
        out.json = true;
        json(trimmed, &mut out);
    } else if lower.contains("multipart/") {
        // The boundary is case-sensitive.
        multipart(body, content_type, &mut out);
    } else if lower.starts_with("text/plain") {
        for line in body.lines() {
            let (name, value) = line.split_once('=').unwrap_or((line, ""));
            out.push(name.to_owned(), value.to_owned());
        }
    } else {
        for (name, value) in url::form_urlencoded::parse(body.as_bytes()) {
            out.push(name.into_owned(), value.into_owned());
        }
        // Some servers split on `;` too (older Rack, Python's `parse_qs`): what they read as
        // fields is read as well.
        if body.contains(';') {
            let split = body.replace(';', "&");
            for (name, value) in url::form_urlencoded::parse(split.as_bytes()) {
                let (name, value) = (name.into_owned(), value.into_owned());
                if !out.pairs.iter().any(|(n, v)| *n == name && *v == value) {
                    out.push(name, value);
                }
            }
        }
    }
    if !out.json {
        xml_rpc(body, &mut out); // whatever the type says (`text/xml`, `text/plain`, none)
    }
    out
}

impl Fields {
    fn push(&mut self, name: String, value: String) {
        self.pairs.push((name.clone(), value.clone()));
        self.names.push(name);
        self.values.push(value);
    }
}

/// Fields whose value names an action (`action=delete-post`, `_action=send`, `op=terminate`).
const ACTION_FIELDS: &[&str] =
    &["action", "_action", "op", "operation", "command", "cmd", "intent", "task", "mutation"];

/// What a body asks its server to do, as names (`DropDatabase`, `dropDatabase`, `unlink`,
/// `delete-post`), at most 32: see the module's documentation. A GraphQL query that is no
/// mutation names nothing (its `operationName` is a read's). Action fields are a form's
/// (`action=delete-post`); in JSON an `action` member is as often an analytics event's
/// (`{"action":"share_click"}`), so only GraphQL and JSON-RPC name operations there.
pub fn operations(fields: &Fields) -> Vec<String> {
    let mut out = Vec::new();
    let (mut queries, mut operation_names, mut methods, mut json_rpc) = (0, Vec::new(), Vec::new(), false);
    for (name, value) in &fields.pairs {
        let lower = name.to_ascii_lowercase();
        match lower.as_str() {
            "query" => {
                queries += 1;
                out.extend(graphql_mutations(value));
            }
            "operationname" => operation_names.push(value.clone()),
            // Facebook's persisted queries name themselves (`useCometTrashPostMutation`); its
            // reads, sent by POST too, end in `Query`.
            "fb_api_req_friendly_name" if !value.ends_with("Query") => operation_names.push(value.clone()),
            "jsonrpc" => json_rpc = true,
            "method" => methods.push(value.clone()),
            "methodname" if !fields.json => out.push(value.clone()),
            // CloudKit's record operations (`{"operationType":"forceDelete"}`).
            "operationtype" => out.push(value.clone()),
            _ if fields.json => {}
            _ if ACTION_FIELDS.contains(&lower.as_str()) => out.push(value.clone()),
            _ => out.extend(lower.strip_prefix("_action_").map(str::to_owned)),
        }
    }
    // A persisted query (no text) or a mutation's: its name says what it does.
    if queries == 0 || !out.is_empty() {
        out.extend(operation_names);
    }
    // JSON-RPC 2.0 says so; 1.0 (bitcoind's) is a `method` with its `params`.
    let call = |n: &String| n == "jsonrpc" || n == "params";
    if json_rpc || (fields.json && fields.names.iter().any(call)) {
        out.extend(methods);
    }
    out.retain(|o| !o.trim().is_empty());
    out.truncate(32);
    out
}

/// The requests a batch carries (Microsoft Graph's `$batch`, the Azure portal's `/batch`,
/// Facebook's Graph batch): each `url` (or `relative_url`, `uri`, `path`) that is a path or a
/// URL, with the HTTP method named beside it in the same request (before or after it), at most
/// 32. Only JSON, where a batch's requests are members; a URL without a method is not one.
pub fn inner_requests(fields: &Fields) -> Vec<(String, String)> {
    const METHODS: &[&str] = &["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE", "MERGE"];
    if !fields.json {
        return Vec::new();
    }
    let mut out: Vec<(String, String)> = Vec::new();
    let (mut method, mut url): (Option<String>, Option<String>) = (None, None);
    for (name, value) in &fields.pairs {
        let name = name.to_ascii_lowercase().replace(['_', '-'], "");
        if matches!(name.as_str(), "method" | "httpmethod" | "verb") {
            let verb = value.trim().to_ascii_uppercase();
            if METHODS.contains(&verb.as_str()) {
                match url.take() {
                    Some(u) => out.push((verb, u)),
                    None => method = Some(verb),
                }
            }
        } else if matches!(name.as_str(), "url" | "relativeurl" | "uri" | "path") {
            let value = value.trim();
            if value.starts_with('/') || value.starts_with("http://") || value.starts_with("https://") {
                match method.take() {
                    Some(m) => out.push((m, value.to_owned())),
                    None => url = Some(value.to_owned()),
                }
            }
        }
    }
    out.truncate(32);
    out
}

/// The names a GraphQL document's mutations give: each mutation's name and its top-level
/// fields (`mutation Drop { dropDatabase(id: 7) { id } }` → `Drop`, `dropDatabase`).
fn graphql_mutations(document: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut braces, mut parens) = (0usize, 0usize);
    let mut in_mutation = false;
    let mut after_colon = false;
    let mut chars = document.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '{' => braces += 1,
            '}' => {
                braces = braces.saturating_sub(1);
                in_mutation &= braces > 0;
            }
            '(' => parens += 1,
            ')' => parens = parens.saturating_sub(1),
            '#' => {
                // A comment, to the end of the line.
                while chars.next_if(|(_, c)| *c != '\n').is_some() {}
            }
            '"' if document[i..].starts_with(r#"""""#) => {
                // A block string, to its closing `"""` (`\"""` is one inside): skipped whole.
                let stop = i + 3 + block_string_len(&document[i + 3..]);
                while chars.next_if(|(j, _)| *j < stop).is_some() {}
            }
            '"' => {
                // A string (arguments' values): skipped whole.
                let mut escaped = false;
                for (_, c) in chars.by_ref() {
                    match c {
                        '\\' if !escaped => escaped = true,
                        '"' if !escaped => break,
                        _ => escaped = false,
                    }
                }
            }
            ':' => after_colon = true,
            c if c.is_alphabetic() || c == '_' => {
                let mut end = i + c.len_utf8();
                while let Some((j, d)) = chars.next_if(|(_, d)| d.is_alphanumeric() || *d == '_') {
                    end = j + d.len_utf8();
                }
                let word = &document[i..end];
                let aliased = std::mem::take(&mut after_colon);
                if braces == 0 && parens == 0 {
                    match word {
                        "mutation" => in_mutation = true,
                        "query" | "subscription" | "fragment" => in_mutation = false,
                        name if in_mutation => out.push(name.to_owned()),
                        _ => {}
                    }
                } else if in_mutation && braces == 1 && parens == 0 {
                    // A top-level field, or an alias whose field follows its `:`.
                    let is_alias = document[end..].trim_start().starts_with(':');
                    if !is_alias || aliased {
                        out.push(word.to_owned());
                    }
                }
                continue;
            }
            _ => {}
        }
        if !c.is_whitespace() && c != ':' {
            after_colon = false;
        }
    }
    out
}

/// The length of a GraphQL block string's rest (after its opening `"""`) with its closing
/// `"""`: all of it when unterminated.
fn block_string_len(rest: &str) -> usize {
    let mut from = 0;
    while let Some(at) = rest[from..].find(r#"""""#) {
        let at = from + at;
        if at > 0 && rest.as_bytes()[at - 1] == b'\\' {
            from = at + 3;
            continue;
        }
        return at + 3;
    }
    rest.len()
}

/// The body's `_method` field, if any (the last one, as in the parsers of Rails, Laravel,
/// Symfony and Express's method-override): the method a server takes a POST for.
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
        let mut named: Option<String> = None;
        // The member whose value is the array being read (strings in it are its values).
        let mut in_array: Option<String> = None;
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
                        // A member whose value is a string, a literal or an array of strings:
                        // the name goes with each.
                        let mut k = j + 1;
                        while k < bytes.len() && bytes[k].is_ascii_whitespace() {
                            k += 1;
                        }
                        in_array = None;
                        match bytes.get(k) {
                            Some(b'"') => named = Some(string.clone()),
                            Some(b'[') => in_array = Some(string.clone()),
                            _ => {
                                named = None;
                                let rest = &text[k.min(text.len())..];
                                if let Some(literal) =
                                    ["true", "false"].into_iter().find(|l| rest.starts_with(l))
                                {
                                    out.pairs.push((string.clone(), literal.to_owned()));
                                }
                            }
                        }
                        out.names.push(string);
                    } else {
                        let inner = string.trim_start();
                        if (inner.starts_with('{') || inner.starts_with('[')) && budget > inner.len() {
                            pending.push(inner.to_owned());
                        }
                        if let Some(name) = named.take().or_else(|| in_array.clone()) {
                            out.pairs.push((name, string.clone()));
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
                b']' | b'{' => {
                    in_array = None;
                    i += 1;
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
                out.push(if key == "name*" { extended_value(&name) } else { name }, value.to_owned());
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

    fn ops(body: &str) -> Vec<String> {
        operations(&fields(body, ""))
    }

    #[test]
    fn graphql_mutations_name_themselves_and_their_fields_queries_name_nothing() {
        let drop = r#"{"operationName":"DropDatabase","query":"mutation DropDatabase($id: ID!) { dropDatabase(id: $id, note: \"{ x }\") { id owner { name } } }","variables":{"id":"db-7"}}"#;
        assert_eq!(ops(drop), ["DropDatabase", "dropDatabase", "DropDatabase"]);
        let anonymous =
            r##"{"query":"# terminate\nmutation { gone: instanceTerminate(id: 3) { ok } other { x } }"}"##;
        assert_eq!(ops(anonymous), ["instanceTerminate", "other"]);
        let read =
            r#"{"operationName":"DeleteDialogQuery","query":"query DeleteDialogQuery { viewer { id } }"}"#;
        assert!(ops(read).is_empty(), "a query's name is a read's");
        assert!(ops(r#"{"query":"{ cart { id } }"}"#).is_empty());
        let persisted =
            r#"{"operationName":"deleteProject","extensions":{"persistedQuery":{"sha256Hash":"ab"}}}"#;
        assert_eq!(ops(persisted), ["deleteProject"]);
        // Batched, and a document with a query before its mutation.
        let batch = r#"[{"query":"query A { a } mutation B { sendMessage(to: 1) }"}]"#;
        assert_eq!(ops(batch), ["B", "sendMessage"]);
        for broken in ["mutation", "mutation {", "mutation { a(", "mutation \"", "}}}} mutation x"] {
            let _ = graphql_mutations(broken);
        }
    }

    #[test]
    fn graphql_block_strings_are_skipped_whole() {
        // A lone `"` inside: a reader of plain strings is desynchronised by it.
        let doc = r#"{"query":"mutation { addComment(body: \"\"\" \" \"\"\") { id } deleteRepository(input: {id: 1}) { id } }"}"#;
        assert_eq!(graphql_mutations(&fields(doc, "").pairs[0].1), ["addComment", "deleteRepository"]);
        // An escaped `\"""` inside one does not end it.
        let escaped = r#"mutation { a(x: """ \""" " """) { id } deleteRepository { id } }"#;
        assert_eq!(graphql_mutations(escaped), ["a", "deleteRepository"]);
        assert_eq!(ops(doc), ["addComment", "deleteRepository"]);
        assert_eq!(graphql_mutations(r#"mutation { a(x: """""") { id } b }"#), ["a", "b"]);
        for broken in
            [r#"mutation { a(x: """ "#, r#"mutation { a(x: ""#, r#"""""#, r#"""#, r#"mutation { a(x: """"#]
        {
            let _ = graphql_mutations(broken);
        }
    }

    #[test]
    fn an_application_graphql_body_is_a_document() {
        let doc = "mutation { deleteRepository(input: {repositoryId: \"R_1\"}) { clientMutationId } }";
        assert_eq!(operations(&fields(doc, "application/graphql; charset=utf-8")), ["deleteRepository"]);
        assert!(operations(&fields("{ viewer { id } }", "application/graphql")).is_empty());
        assert!(operations(&fields(doc, "application/x-www-form-urlencoded")).is_empty());
    }

    #[test]
    fn json_rpc_1_and_xml_rpc_methods_name_operations() {
        let v1 = r#"{"method":"deleteRepository","params":["acme/rocket"],"id":1}"#;
        assert_eq!(ops(v1), ["deleteRepository"]);
        let bitcoind = r#"{"method":"sendtoaddress","params":["bc1qxy",1.24],"id":1}"#;
        assert_eq!(operations(&fields(bitcoind, "text/plain")), ["sendtoaddress"]);
        assert!(ops(r#"{"method":"unlink","note":"x"}"#).is_empty(), "no params: no call");
        let xml = "<?xml version=\"1.0\"?><methodCall><methodName> deleteRepository </methodName>\
                   <params><param><value><string>acme/rocket</string></value></param></params></methodCall>";
        assert_eq!(operations(&fields(xml, "text/xml")), ["deleteRepository"]);
        assert_eq!(operations(&fields(xml, "")), ["deleteRepository"]);
        let cased = "<methodCall><METHODNAME>wp.deletePost</METHODNAME></methodCall>";
        assert_eq!(operations(&fields(cased, "application/xml")), ["wp.deletePost"]);
        for broken in
            ["<methodName>", "<methodName>x", "</methodName><methodName>", "<methodCall><methodName><"]
        {
            let _ = operations(&fields(broken, "text/xml"));
        }
    }

    const FRAGMENTS: &[&str] = &[
        "\"",
        "\"\"\"",
        "\\",
        "\\\"\"\"",
        "{",
        "}",
        "(",
        ")",
        "[",
        "]",
        ":",
        "#",
        "\n",
        "\r\n",
        "é",
        "😀",
        "mutation",
        "query",
        " x",
        "<methodName>",
        "</methodName>",
        "<METHODNAME>",
        "<",
        "--b",
        "\r\n\r\n",
        "Content-Disposition: form-data; name=",
        "name*=UTF-8''",
        "_method",
        "=",
        "&",
        "%",
        "%e9",
        "\\u12",
        "\\ud800",
        "\"method\"",
        "\"params\"",
        "\"jsonrpc\"",
        "\"query\"",
        "deleteRepository",
    ];
    const TYPES: &[&str] = &[
        "",
        "application/json",
        "application/graphql",
        "text/xml",
        "text/plain",
        "multipart/form-data; boundary=b",
        "multipart/form-data; boundary=\"",
        "application/x-www-form-urlencoded",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(512))]
        /// Whatever a body holds, in whatever type: read, never a panic.
        #[test]
        fn no_body_makes_the_reader_panic(
            parts in proptest::collection::vec(proptest::sample::select(FRAGMENTS), 0..48),
            noise in proptest::collection::vec(proptest::prelude::any::<char>(), 0..16),
            content_type in proptest::sample::select(TYPES),
        ) {
            let body = format!("{}{}", parts.concat(), noise.into_iter().collect::<String>());
            let read = fields(&body, content_type);
            let _ = operations(&read);
            let _ = method_override(&read);
            let _ = graphql_mutations(&body);
        }
    }

    #[test]
    fn json_rpc_methods_and_action_fields_name_operations() {
        let odoo = r#"{"jsonrpc":"2.0","method":"call","params":{"model":"res.partner","method":"unlink","args":[[7]]}}"#;
        assert_eq!(ops(odoo), ["call", "unlink"]);
        assert!(ops(r#"{"method":"unlink"}"#).is_empty(), "no JSON-RPC, no method");
        assert_eq!(ops("action=delete-post&post=7"), ["delete-post"]);
        assert_eq!(ops("_task=mail&_action=send&_to=a%40b"), ["send"]);
        assert_eq!(ops("appNames=x&_action_terminate=Terminate"), ["terminate"]);
        assert!(ops("q=delete&name=drop").is_empty());
        let analytics = r#"{"event":"click","action":"share_click","op":"delete"}"#;
        assert!(ops(analytics).is_empty(), "a JSON body's action is an analytics event's");
        let pairs = fields(r#"{"a":{"b":"c"},"d":1,"e":"f","g":["h"]}"#, "").pairs;
        let pair = |n: &str, v: &str| (n.to_owned(), v.to_owned());
        assert_eq!(pairs, [pair("b", "c"), pair("e", "f"), pair("g", "h")]);
    }

    #[test]
    fn json_members_pair_with_their_literals_and_arrays_of_strings() {
        let read =
            fields(r#"{"public": true, "groups": ["admin", "x"], "list": [{"role": "editor"}], "n": 3}"#, "");
        let pair = |n: &str, v: &str| (n.to_owned(), v.to_owned());
        assert_eq!(
            read.pairs,
            [pair("public", "true"), pair("groups", "admin"), pair("groups", "x"), pair("role", "editor")]
        );
    }

    #[test]
    fn a_posts_method_field_says_what_the_server_does() {
        let read = fields("_method=patch&x=1&_method=delete", "application/x-www-form-urlencoded");
        assert_eq!(method_override(&read), Some("delete"));
        assert_eq!(method_override(&fields("x=1", "")), None);
        // Fields after a `;`, as servers that split on it read them.
        let read = fields("a=1;new_password=hunter2;_method=delete", "application/x-www-form-urlencoded");
        assert!(read.names.contains(&"new_password".to_owned()));
        assert_eq!(method_override(&read), Some("delete"));
        assert_eq!(fields("a=1;b=2", "").pairs.len(), 3, "a=\"1;b=2\" as well as a, b");
        assert_eq!(method_override(&fields("_method=", "")), None);
        let multipart = "--b\r\nContent-Disposition: form-data; name=\"_method\"\r\n\r\ndelete\r\n--b--";
        assert_eq!(method_override(&fields(multipart, "multipart/form-data; boundary=b")), Some("delete"));
    }
}
