//! The `Fetch` domain of a shared tab, which the guard and clients share. Every shared tab and
//! child runs with the guard's patterns (the extension enables them at attach); a client's
//! `Fetch.enable` adds its own (`BrowserOp::Intercept`), never replaces them, and its
//! `Fetch.disable` takes only its own away. A paused request goes to the guard first; a client
//! hears of it (one `Fetch.requestPaused`, to the first client session whose patterns match, as
//! a chain of interceptors would) only once the guard let it go, and may answer only requests it
//! heard of. Chrome lets a paused request go when interception ends, so a client that leaves
//! has its requests continued, as Chrome does for a closed session.

use serde::Deserialize;
use serde_json::Value;

/// One `Fetch.RequestPattern` of a client's.
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    url: String,
    resource_type: Option<String>,
    response_stage: bool,
}

impl Pattern {
    fn read(value: &Value) -> Pattern {
        Pattern {
            url: value["urlPattern"].as_str().unwrap_or("*").to_owned(),
            resource_type: value["resourceType"].as_str().map(str::to_owned),
            response_stage: value["requestStage"].as_str() == Some("Response"),
        }
    }

    fn matches(&self, url: &str, resource_type: &str, response_stage: bool) -> bool {
        self.response_stage == response_stage
            && self.resource_type.as_deref().is_none_or(|t| t == resource_type)
            && glob(&self.url, url)
    }
}

/// A client session's `Fetch.enable`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientFetch {
    /// As the client sent them, for Chrome.
    pub raw_patterns: Vec<Value>,
    patterns: Vec<Pattern>,
    pub handle_auth_requests: bool,
}

impl ClientFetch {
    /// `Fetch.enable`'s params; no patterns means every request at the request stage.
    pub fn from_params(params: &Value) -> ClientFetch {
        let raw_patterns = match params["patterns"].as_array() {
            Some(list) => list.clone(),
            None => vec![serde_json::json!({ "urlPattern": "*" })],
        };
        let patterns = raw_patterns.iter().map(Pattern::read).collect();
        ClientFetch { raw_patterns, patterns, handle_auth_requests: params["handleAuthRequests"] == true }
    }

    pub fn wants(&self, paused: &PausedRequest) -> bool {
        self.patterns
            .iter()
            .any(|p| p.matches(&paused.request.url, &paused.resource_type, paused.response_stage()))
    }
}

/// CDP's URL pattern: `*` any run of characters, `?` one, `\` escapes the next.
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative match with backtracking to the last `*`.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some('?') => {
                pi += 1;
                ti += 1;
            }
            Some('\\') if p.get(pi + 1) == Some(&t[ti]) => {
                pi += 2;
                ti += 1;
            }
            Some(c) if *c != '\\' && *c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// A `Fetch.requestPaused` (or `Fetch.authRequired`) as far as the guard reads it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PausedRequest {
    pub request_id: String,
    pub request: Request,
    #[serde(default)]
    pub resource_type: String,
    #[serde(default)]
    pub frame_id: String,
    #[serde(default)]
    pub response_status_code: Option<i64>,
    #[serde(default)]
    pub response_error_reason: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    pub url: String,
    #[serde(default)]
    pub url_fragment: Option<String>,
    pub method: String,
    #[serde(default)]
    pub headers: serde_json::Map<String, Value>,
    #[serde(default)]
    pub post_data: Option<String>,
    /// Chrome's word that a body exists, even when it sends none of it.
    #[serde(default)]
    pub has_post_data: Option<bool>,
    #[serde(default)]
    pub post_data_entries: Vec<PostDataEntry>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PostDataEntry {
    #[serde(default)]
    pub bytes: Option<String>,
}

impl PausedRequest {
    pub fn read(params: &str) -> Option<PausedRequest> {
        serde_json::from_str(params).ok()
    }

    pub fn response_stage(&self) -> bool {
        self.response_status_code.is_some() || self.response_error_reason.is_some()
    }

    pub fn content_type(&self) -> String {
        self.request
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            .and_then(|(_, v)| v.as_str())
            .unwrap_or_default()
            .to_owned()
    }

    /// The method-override header a server may take a POST's method from (the first present).
    pub fn method_override(&self) -> String {
        // Servers differ in which one they read (ASP.NET and OData `X-HTTP-Method`, most
        // others `X-HTTP-Method-Override`): with several, the most consequential counts.
        let rank = |m: &str| match m.trim().to_ascii_uppercase().as_str() {
            "DELETE" => 3,
            "PUT" | "PATCH" => 2,
            "POST" => 1,
            _ => 0,
        };
        self.request
            .headers
            .iter()
            .filter(|(k, _)| {
                ["x-http-method-override", "x-http-method", "x-method-override"]
                    .iter()
                    .any(|name| k.eq_ignore_ascii_case(name))
            })
            .filter_map(|(_, v)| v.as_str())
            .max_by_key(|m| rank(m))
            .unwrap_or_default()
            .to_owned()
    }

    /// The body, as text: `postData`, or its entries (base64) joined.
    pub fn body(&self) -> Option<String> {
        if let Some(data) = &self.request.post_data {
            return Some(data.clone());
        }
        let bytes: Vec<u8> = self
            .request
            .post_data_entries
            .iter()
            .filter_map(|e| e.bytes.as_deref())
            .flat_map(|b| base64_decode(b).unwrap_or_default())
            .collect();
        (!bytes.is_empty()).then(|| String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// Standard base64 (CDP's `binary`), tolerant of missing padding.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|c| !c.is_ascii_whitespace() && *c != b'=') {
        acc = (acc << 6) | value(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// What a client's `Fetch.continueRequest` makes of a paused request: the request as it will
/// be sent, when the client changed its method, URL, headers or body.
pub fn continued_as(paused: &PausedRequest, params: &Value) -> Option<PausedRequest> {
    let method = params["method"].as_str();
    let url = params["url"].as_str();
    let body =
        params["postData"].as_str().and_then(base64_decode).map(|b| String::from_utf8_lossy(&b).into_owned());
    let headers = params["headers"].as_array().map(|list| {
        list.iter()
            .filter_map(|h| {
                Some((h["name"].as_str()?.to_owned(), Value::String(h["value"].as_str()?.to_owned())))
            })
            .collect::<serde_json::Map<String, Value>>()
    });
    if method.is_none() && url.is_none() && body.is_none() && headers.is_none() {
        return None;
    }
    let mut changed = paused.clone();
    if let Some(method) = method {
        changed.request.method = method.to_owned();
    }
    if let Some(url) = url {
        changed.request.url = url.to_owned();
    }
    if let Some(body) = body {
        changed.request.post_data = Some(body);
        changed.request.post_data_entries.clear();
    }
    if let Some(headers) = headers {
        changed.request.headers = headers;
    }
    Some(changed)
}

/// The `Fetch` commands that answer one paused request, and whether each settles it.
pub fn answers_paused(method: &str) -> Option<bool> {
    match method {
        "Fetch.continueRequest"
        | "Fetch.failRequest"
        | "Fetch.fulfillRequest"
        | "Fetch.continueWithAuth"
        | "Fetch.continueResponse" => Some(true),
        "Fetch.getResponseBody" | "Fetch.takeResponseBodyAsStream" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn url_patterns_are_cdp_globs() {
        assert!(glob("*", "https://a.test/x"));
        assert!(glob("*.png", "https://a.test/x.png"));
        assert!(!glob("*.png", "https://a.test/x.png?y"));
        assert!(glob("https://a.test/?", "https://a.test/x"));
        assert!(glob("*api*", "https://a.test/v1/api/pay"));
        assert!(glob(r"*\*", "lit*"));
        assert!(!glob(r"*\*", "lit"));
        assert!(glob("", ""));
        assert!(!glob("", "x"));
    }

    fn paused(url: &str, resource_type: &str, status: Option<i64>) -> PausedRequest {
        let mut p = json!({"requestId": "R", "request": {"url": url, "method": "GET", "headers": {}}, "resourceType": resource_type, "frameId": "F"});
        if let Some(s) = status {
            p["responseStatusCode"] = json!(s);
        }
        PausedRequest::read(&p.to_string()).unwrap()
    }

    #[test]
    fn a_client_wants_what_its_patterns_say_at_their_stage() {
        let playwright =
            ClientFetch::from_params(&json!({"patterns": [{"urlPattern": "*"}], "handleAuthRequests": true}));
        assert!(playwright.handle_auth_requests);
        assert!(playwright.wants(&paused("https://a.test/", "Document", None)));
        assert!(!playwright.wants(&paused("https://a.test/", "Document", Some(200))), "request stage only");
        let images = ClientFetch::from_params(
            &json!({"patterns": [{"urlPattern": "*.png", "resourceType": "Image", "requestStage": "Response"}]}),
        );
        assert!(images.wants(&paused("https://a.test/a.png", "Image", Some(200))));
        assert!(!images.wants(&paused("https://a.test/a.png", "Image", None)));
        assert!(!images.wants(&paused("https://a.test/a.png", "Script", Some(200))));
        let everything = ClientFetch::from_params(&json!({}));
        assert!(everything.wants(&paused("https://a.test/x", "XHR", None)));
        assert_eq!(everything.raw_patterns, [json!({"urlPattern": "*"})]);
    }

    #[test]
    fn reads_bodies_as_chrome_sends_them() {
        let p = PausedRequest::read(r#"{"requestId":"1","request":{"url":"u","method":"POST","headers":{"Content-Type":"application/json"},"postDataEntries":[{"bytes":"eyJhIjox"},{"bytes":"fQ=="}]}}"#).unwrap();
        assert_eq!(p.body().as_deref(), Some(r#"{"a":1}"#));
        assert_eq!(p.content_type(), "application/json");
        assert_eq!(base64_decode("cGF5").unwrap(), b"pay");
        assert_eq!(base64_decode("cGE"), Some(b"pa".to_vec()));
        assert!(base64_decode("!!").is_none());
    }

    /// Red team run 4: with a harmless override beside a DELETE, the DELETE counts (a server
    /// may read either header).
    #[test]
    fn of_several_method_overrides_the_most_consequential_counts() {
        let with = |headers: &str| {
            PausedRequest::read(&format!(
                r#"{{"requestId":"1","request":{{"url":"u","method":"POST","headers":{{{headers}}}}}}}"#
            ))
            .unwrap()
            .method_override()
        };
        assert_eq!(with(r#""X-HTTP-Method-Override":"PATCH","X-HTTP-Method":"DELETE""#), "DELETE");
        assert_eq!(with(r#""x-method-override":"delete","X-HTTP-Method-Override":"PUT""#), "delete");
        assert_eq!(with(r#""X-HTTP-Method":"PATCH""#), "PATCH");
        assert_eq!(with(r#""Content-Type":"text/plain""#), "");
    }

    #[test]
    fn a_continue_that_changes_the_request_is_a_new_request() {
        let p = paused("https://a.test/search", "Fetch", None);
        assert!(continued_as(&p, &json!({"requestId": "R"})).is_none());
        let changed =
            continued_as(&p, &json!({"requestId": "R", "method": "POST", "url": "https://a.test/pay", "postData": "Y2FyZD00MjQy"}))
                .unwrap();
        let r = &changed.request;
        assert_eq!(
            (r.method.as_str(), r.url.as_str(), changed.body().as_deref()),
            ("POST", "https://a.test/pay", Some("card=4242"))
        );
        assert_eq!(answers_paused("Fetch.fulfillRequest"), Some(true));
        assert_eq!(answers_paused("Fetch.getResponseBody"), Some(false));
        assert_eq!(answers_paused("Fetch.enable"), None);
    }
}
