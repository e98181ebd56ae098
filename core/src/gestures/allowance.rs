//! What the human's **Allow once** allows: the one request the question was about, once.
//!
//! An answer is bound to the exact request the human was shown, read as the server will read
//! it: its tab and target, method, URL (without its fragment, which never leaves the browser)
//! and body. The first paused write that is that request spends it; any other write (another
//! request, the same one with another body, a second copy) is judged afresh. Nothing is allowed
//! tab-wide.
//!
//! Two answers need an allowance at all, because the request the human allowed is not the one
//! paused when the answer comes:
//! - **Resent** (`network.rs`): a held write was answered at once and is sent again from the
//!   page by the extension (`BrowserOp::Resend`); the copy Chrome pauses is a new request. It
//!   is bound to the bounced request's method, URL and body, which are what the extension sends.
//! - **Gesture** (`mod.rs`): an allowed click or Enter reaches the page only after the answer,
//!   and the form submission it causes is paused after that. It is bound to what the reading
//!   showed: the form's method and action, and the body the form would send at that moment
//!   (`FormFacts::body`, URL-encoded forms). A form whose body the extension cannot build
//!   (files, `text/plain`) binds its method and action, and only a form submission spends it.
//!   A gesture without such a form (a button whose script sends the write) binds nothing: the
//!   write it sends is asked about with the request itself.

use super::interception::PausedRequest;
use tabtunnel_wire::TabId;

/// How long an allowed gesture's form submission may take to be paused after the answer: the
/// click is dispatched with the answer and the page submits within milliseconds; three seconds
/// leave room for a loaded machine. The allowance is exact and spent once, so the window only
/// bounds how long an unspent one lingers (a page that never submitted).
pub(super) const GESTURE_MS: u64 = 3_000;
/// How long a write sent again may take to come back paused: the extension first makes a fresh
/// world in the frame and runs the resend there (seconds on a loaded machine).
pub(super) const RESEND_MS: u64 = 10_000;

/// A request as an answer binds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Exact {
    method: String,
    url: String,
    /// `None`: a form whose body could not be read when the human was asked (then only its
    /// submission, a `Document` request, matches).
    body: Option<Body>,
}

/// A body as a server reads it: URL-encoded bodies by their pairs (the extension rebuilds a
/// form from them, and the browser may encode a character differently), others as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Body {
    Empty,
    Pairs(Vec<(String, String)>),
    Text(String),
}

impl Body {
    fn read(body: Option<&str>, content_type: &str) -> Body {
        match body {
            None | Some("") => Body::Empty,
            Some(text) if url_encoded(content_type) => Body::Pairs(
                url::form_urlencoded::parse(text.as_bytes())
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect(),
            ),
            Some(text) => Body::Text(text.to_owned()),
        }
    }
}

fn url_encoded(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    essence.is_empty() || essence.eq_ignore_ascii_case("application/x-www-form-urlencoded")
}

fn without_fragment(url: &str) -> &str {
    url.split('#').next().unwrap_or_default()
}

impl Exact {
    /// A paused request as it is; `None` when Chrome did not give all of its body (it said it
    /// has one but sent none, or a part without its bytes: a file): nothing is bound to a body
    /// the guard never saw whole.
    pub(crate) fn of(request: &PausedRequest) -> Option<Exact> {
        let body = request.body();
        let unseen = request.request.post_data_entries.iter().any(|e| e.bytes.is_none());
        if unseen || (body.is_none() && request.request.has_post_data == Some(true)) {
            return None;
        }
        // The method the server acts on: a method-override header (which a form never sends)
        // makes another request of the same method, URL and body.
        let method = match request.method_override() {
            m if m.trim().is_empty() => request.request.method.to_ascii_uppercase(),
            m => m.trim().to_ascii_uppercase(),
        };
        Some(Exact {
            method,
            url: without_fragment(&request.request.url).to_owned(),
            body: Some(Body::read(body.as_deref(), &request.content_type())),
        })
    }

    /// A form's submission as a gesture's reading showed it (`body` URL-encoded, if read).
    pub(crate) fn form(method: &str, action: &str, body: Option<&str>) -> Exact {
        Exact {
            method: method.to_ascii_uppercase(),
            url: without_fragment(action).to_owned(),
            body: body.map(|b| Body::read(Some(b), "")),
        }
    }

    fn covers(&self, request: &PausedRequest) -> bool {
        let Some(actual) = Exact::of(request) else { return false };
        if self.method != actual.method || self.url != actual.url {
            return false;
        }
        match &self.body {
            Some(body) => actual.body.as_ref() == Some(body),
            None => request.resource_type == "Document",
        }
    }
}

/// Which answer an allowance comes from (the trail says so when it is spent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum From {
    Resent,
    Gesture,
}

/// One answer's allowance: spent by the first paused request it covers.
#[derive(Debug)]
pub(crate) struct Allowance {
    pub tab: TabId,
    /// The target the request comes from (`None`: the page).
    pub child: Option<String>,
    pub exact: Exact,
    pub from: From,
    pub until: u64,
}

/// The allowances not yet spent.
#[derive(Debug, Default)]
pub(crate) struct Allowances(Vec<Allowance>);

impl Allowances {
    pub fn grant(&mut self, allowance: Allowance, now: u64) {
        self.0.retain(|a| a.until >= now);
        self.0.push(allowance);
    }

    /// Spends the allowance that covers this request, if any: it allows this request alone.
    pub fn spend(
        &mut self,
        tab: TabId,
        child: Option<&str>,
        request: &PausedRequest,
        now: u64,
    ) -> Option<From> {
        self.0.retain(|a| a.until >= now);
        let i = self
            .0
            .iter()
            .position(|a| a.tab == tab && a.child.as_deref() == child && a.exact.covers(request))?;
        Some(self.0.remove(i).from)
    }

    pub fn forget_tab(&mut self, tab: TabId) {
        self.0.retain(|a| a.tab != tab);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paused(
        id: &str,
        method: &str,
        url: &str,
        content_type: &str,
        body: Option<&str>,
        kind: &str,
    ) -> PausedRequest {
        let mut request = serde_json::json!({"requestId": id, "request": {"url": url, "method": method, "headers": {"Content-Type": content_type}}, "resourceType": kind});
        if let Some(body) = body {
            request["request"]["postData"] = body.into();
            request["request"]["hasPostData"] = true.into();
        }
        PausedRequest::read(&request.to_string()).unwrap()
    }

    fn allowance(exact: Exact) -> Allowance {
        Allowance { tab: 1, child: None, exact, from: From::Resent, until: 100 }
    }

    const FORM: &str = "application/x-www-form-urlencoded";

    #[test]
    fn an_allowance_covers_its_own_request_once_and_nothing_else() {
        let pay =
            paused("R1", "POST", "https://shop.test/pay", FORM, Some("amount=1240&to=shop"), "Document");
        let mut allowed = Allowances::default();
        allowed.grant(allowance(Exact::of(&pay).unwrap()), 0);
        let other_body =
            paused("R2", "POST", "https://shop.test/pay", FORM, Some("amount=99999&to=agent"), "Fetch");
        let other_url =
            paused("R3", "POST", "https://shop.test/password", FORM, Some("amount=1240&to=shop"), "Fetch");
        let other_method =
            paused("R4", "PUT", "https://shop.test/pay", FORM, Some("amount=1240&to=shop"), "Fetch");
        let no_body = paused("R5", "POST", "https://shop.test/pay", FORM, None, "Fetch");
        for other in [&other_body, &other_url, &other_method, &no_body] {
            assert_eq!(allowed.spend(1, None, other, 1), None, "{other:?}");
        }
        assert_eq!(allowed.spend(2, None, &pay, 1), None, "another tab");
        assert_eq!(allowed.spend(1, Some("child"), &pay, 1), None, "another target");
        // The same pairs encoded otherwise are the same request to a server, and a fragment
        // never leaves the browser.
        let again =
            paused("R6", "post", "https://shop.test/pay#x", FORM, Some("amount=1240&to=sh%6Fp"), "Document");
        assert_eq!(allowed.spend(1, None, &again, 1), Some(From::Resent));
        assert_eq!(allowed.spend(1, None, &pay, 1), None, "spent");
    }

    #[test]
    fn an_allowance_ends_and_a_body_chrome_did_not_give_matches_nothing() {
        let json = "application/json";
        let pay = paused("R1", "POST", "https://shop.test/api/pay", json, Some(r#"{"amount":1}"#), "Fetch");
        let mut allowed = Allowances::default();
        allowed.grant(allowance(Exact::of(&pay).unwrap()), 0);
        assert_eq!(allowed.spend(1, None, &pay, 101), None, "too late");
        let mut hidden = paused("R2", "POST", "https://shop.test/api/pay", json, None, "Fetch");
        hidden.request.has_post_data = Some(true);
        assert!(Exact::of(&hidden).is_none());
        allowed.grant(allowance(Exact::of(&pay).unwrap()), 0);
        assert_eq!(allowed.spend(1, None, &hidden, 1), None);
        // Its bytes, then a part Chrome gives without them: not the body allowed.
        let mut partial = paused("R4", "POST", "https://shop.test/api/pay", json, None, "Fetch");
        partial.request.post_data_entries = serde_json::from_value(
            serde_json::json!([{"bytes": "eyJhbW91bnQiOjF9"}, {}]), // {"amount":1}, a file
        )
        .unwrap();
        assert_eq!(partial.body().as_deref(), Some(r#"{"amount":1}"#));
        assert_eq!(allowed.spend(1, None, &partial, 1), None);
        // A text body is compared as sent: another spelling is another body.
        let spaced =
            paused("R3", "POST", "https://shop.test/api/pay", json, Some(r#"{"amount": 1}"#), "Fetch");
        assert_eq!(allowed.spend(1, None, &spaced, 1), None);
    }

    #[test]
    fn a_copy_with_a_method_override_header_is_another_request() {
        let pay = paused("R1", "POST", "https://shop.test/orders/7", FORM, Some("amount=1240"), "Document");
        let mut allowed = Allowances::default();
        allowed.grant(allowance(Exact::form("post", "https://shop.test/orders/7", Some("amount=1240"))), 0);
        let mut deleting =
            paused("R2", "POST", "https://shop.test/orders/7", FORM, Some("amount=1240"), "Fetch");
        deleting.request.headers.insert("X-HTTP-Method-Override".into(), "DELETE".into());
        assert_eq!(allowed.spend(1, None, &deleting, 1), None, "the server deletes: not what was allowed");
        assert_eq!(allowed.spend(1, None, &pay, 1), Some(From::Resent));
        // A resent request keeps the override it was asked about.
        allowed.grant(allowance(Exact::of(&deleting).unwrap()), 0);
        assert_eq!(allowed.spend(1, None, &pay, 1), None);
        assert_eq!(allowed.spend(1, None, &deleting, 1), Some(From::Resent));
    }

    #[test]
    fn a_form_read_without_its_body_covers_only_its_submission() {
        let mut allowed = Allowances::default();
        allowed.grant(allowance(Exact::form("post", "https://shop.test/pay", None)), 0);
        let fetch = paused(
            "R1",
            "POST",
            "https://shop.test/pay",
            "multipart/form-data; boundary=b",
            Some("x"),
            "Fetch",
        );
        assert_eq!(allowed.spend(1, None, &fetch, 1), None);
        let form = paused(
            "R2",
            "POST",
            "https://shop.test/pay",
            "multipart/form-data; boundary=b",
            Some("x"),
            "Document",
        );
        assert_eq!(allowed.spend(1, None, &form, 1), Some(From::Resent));
        // Read with its body: only that body.
        allowed.grant(allowance(Exact::form("post", "https://shop.test/pay", Some("a=1"))), 0);
        let changed = paused("R3", "POST", "https://shop.test/pay", FORM, Some("a=2"), "Document");
        assert_eq!(allowed.spend(1, None, &changed, 1), None);
        let same = paused("R4", "POST", "https://shop.test/pay", FORM, Some("a=1"), "Document");
        assert_eq!(allowed.spend(1, None, &same, 1), Some(From::Resent));
    }
}
