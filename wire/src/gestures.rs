//! The gesture guard's share of the wire (see `core/src/gestures/`): what the extension reads of
//! a page where an agent acts ([`GestureFacts`], answering [`crate::BrowserOp::Inspect`]), the
//! question the human is asked ([`GestureQuestion`]), and the network interception every
//! shared tab runs with ([`GUARD_RESOURCE_TYPES`]).

use serde::{Deserialize, Serialize};

/// The resource types the guard pauses at the request stage on every shared tab and each of its
/// frames and workers: the ones a request that changes something on a server can have (a form
/// post is a `Document`, `fetch`/XHR are `Fetch`/`XHR`, `sendBeacon` and `<a ping>` are `Ping`).
/// Images, scripts, styles, fonts and media are never paused.
pub const GUARD_RESOURCE_TYPES: &[&str] =
    &["Document", "XHR", "Fetch", "Ping", "Other", "CSPViolationReport"];

/// The guard's `Fetch.enable` patterns, as CDP takes them.
pub fn guard_fetch_patterns() -> Vec<serde_json::Value> {
    GUARD_RESOURCE_TYPES
        .iter()
        .map(|t| serde_json::json!({ "urlPattern": "*", "resourceType": t, "requestStage": "Request" }))
        .collect()
}

/// What the extension inspects for the guard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum InspectTarget {
    /// The element a pointer press at this point of the viewport (CSS pixels) lands on.
    Point { x: f64, y: f64 },
    /// The element that has the keyboard focus (through shadow roots and same-process frames).
    Focus,
    /// The form in this frame that sends this request, if any: the one whose submission (by
    /// itself or by one of its submit buttons' `formaction`/`formmethod`) goes to this URL
    /// with this method, and whose `_method` field says what the body's does.
    Request {
        frame_id: String,
        url: String,
        method: String,
        /// The body's `_method` field (Rails-style method override), when it has one.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        method_override: String,
    },
}

/// What the page shows where an agent acts, read by the extension in an isolated world of its
/// own (the page's scripts cannot change how it is read, only what the DOM holds). Every string
/// is bounded by the extension; field values are never read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GestureFacts {
    /// The URL of the document the element is in.
    #[serde(default)]
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<ElementFacts>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<FormFacts>,
    /// The document's text (script and style left out), cut to a few KB: where amounts are
    /// looked for.
    #[serde(default)]
    pub page_text: String,
    /// The element's box in the tab's viewport, for its picture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rect: Option<Rect>,
    /// The policy's `gesture_selectors` the element (or an ancestor, or its form) matches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matched_selectors: Vec<String>,
    /// The element the frame's last click acted on (a person's, a client's input or a script's
    /// `el.click()`/`dispatchEvent`), read for a request: the write may be its handler's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clicked: Option<Clicked>,
    /// The elements clicked before `clicked` since a write was last judged (in this frame and
    /// the same-origin frames above it), newest first: a handler of theirs may write after the
    /// next click.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clicked_before: Vec<Clicked>,
    /// More elements were clicked than are kept: the write may follow one no longer named.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub clicks_dropped: bool,
}

/// The element a click acted on, and how long ago its handlers finished.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Clicked {
    pub element: ElementFacts,
    #[serde(default)]
    pub ms_ago: u64,
    /// Its default action was a navigation that reads (a link to another page, a GET form's
    /// button) and no handler prevented it (the click's, or the `submit` it started).
    #[serde(default)]
    pub navigates: bool,
}

/// The element acted on: the nearest one that acts (a button, link, form control, an element
/// with a role or a click handler attribute) at or above the node hit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElementFacts {
    /// Lower-case tag name.
    pub tag: String,
    /// `role` attribute, else the tag's implicit role (`button`, `link`, `textbox`...).
    #[serde(default)]
    pub role: String,
    /// Accessible name: `aria-labelledby`, `aria-label`, labels, `alt`/`title`/`value`, text.
    #[serde(default)]
    pub name: String,
    /// Its visible text (buttons and links; empty for fields).
    #[serde(default)]
    pub text: String,
    /// `type` of an input or button.
    #[serde(default)]
    pub input_type: String,
    #[serde(default)]
    pub href: String,
    /// Something acts here: a control, a link, a role, an `onclick`, a pointer cursor. A press on
    /// plain text or an empty area is no gesture on anything.
    #[serde(default)]
    pub actionable: bool,
    /// Activating it submits its form (a submit button; Enter in a field implicitly).
    #[serde(default)]
    pub submits: bool,
    /// It is a field one types into (Enter in it may submit its form).
    #[serde(default)]
    pub editable: bool,
    /// What it sits under: the heading of its nearest dialog, section, article, fieldset or
    /// form that has one, else its page's first heading (`API keys`, `Code PIN de la carte`).
    #[serde(default)]
    pub context: String,
    /// The text of its form, else of that dialog or section, for an amount next to a verb that
    /// moves money (`Subscribe to our newsletter` in a form of its own beside a plan's price
    /// has none).
    #[serde(default)]
    pub nearby: String,
}

/// The form an element belongs to (or a request comes from).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FormFacts {
    /// Absolute action URL the submission goes to (the submitter's `formaction` if it has one).
    pub action: String,
    /// `get`, `post` or `dialog` (the submitter's `formmethod` if it has one).
    pub method: String,
    /// The value its `_method` field sends (Rails-style method override), if it has one.
    #[serde(default)]
    pub method_override: String,
    #[serde(default)]
    pub target: String,
    #[serde(default)]
    pub fields: Vec<FieldFacts>,
    /// Texts of its submit buttons, first the default one.
    #[serde(default)]
    pub buttons: Vec<String>,
    /// Its heading or legend, if any, and its `aria-label`.
    #[serde(default)]
    pub label: String,
    /// Titles and names of frames inside it (card fields of payment providers live in frames).
    #[serde(default)]
    pub frames: Vec<String>,
    /// The body it would send now, URL-encoded (`None`: not such a form, or not read). It binds
    /// the human's answer to this submission; never shown, never recorded.
    #[serde(default)]
    pub body: Option<String>,
}

/// What a form field says it is (never its value).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldFacts {
    #[serde(default)]
    pub input_type: String,
    #[serde(default)]
    pub autocomplete: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub id: String,
    /// Its label, `aria-label` or placeholder.
    #[serde(default)]
    pub label: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// What a held gesture or request does: the kinds the human is asked about (and that choices
/// per kind will be made for). Serialized as `paying`, `deleting`, `secrets`, `sending`,
/// `sharing`, `signing-in`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GestureKind {
    /// Buying, ordering, sending or transferring money, subscribing to something paid,
    /// donating, bidding, trading.
    Paying,
    /// Deleting, emptying a trash, terminating, dropping, purging, wiping, closing an account.
    Deleting,
    /// Passwords, two-factor settings, keys and tokens, the recovery email or phone, an app's
    /// access.
    Secrets,
    /// Sending or publishing in the human's name: a message, an email, a post, a review.
    Sending,
    /// Sharing with people or with anyone with a link, inviting, making something public,
    /// changing someone's role.
    Sharing,
    /// Signing in: a form with a password (or a one-time code) and nothing else sensitive.
    SigningIn,
}

impl GestureKind {
    pub const ALL: [GestureKind; 6] = [
        GestureKind::Paying,
        GestureKind::Deleting,
        GestureKind::Secrets,
        GestureKind::Sending,
        GestureKind::Sharing,
        GestureKind::SigningIn,
    ];

    /// Its name on the wire and in the panel's `data-kinds`: `paying`, `signing-in`.
    pub fn name(self) -> &'static str {
        match self {
            GestureKind::Paying => "paying",
            GestureKind::Deleting => "deleting",
            GestureKind::Secrets => "secrets",
            GestureKind::Sending => "sending",
            GestureKind::Sharing => "sharing",
            GestureKind::SigningIn => "signing-in",
        }
    }

    /// As a reason says it: `"pay" (English: paying)`.
    pub fn describe(self) -> &'static str {
        match self {
            GestureKind::Paying => "paying",
            GestureKind::Deleting => "deleting",
            GestureKind::Secrets => "changing a secret",
            GestureKind::Sending => "sending in your name",
            GestureKind::Sharing => "sharing",
            GestureKind::SigningIn => "signing in",
        }
    }

    /// As the side panel names it.
    pub fn title(self) -> &'static str {
        match self {
            GestureKind::Paying => "Paying",
            GestureKind::Deleting => "Deleting or destroying",
            GestureKind::Secrets => "Secrets and account recovery",
            GestureKind::Sending => "Sending or publishing in your name",
            GestureKind::Sharing => "Sharing and visibility",
            GestureKind::SigningIn => "Signing in",
        }
    }
}

/// A gesture held for the human, with what the browser showed: the side panel shows it with a
/// picture of the element, and the audit trail keeps it (without the picture).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GestureQuestion {
    /// `click`, `Enter`, `Space`, `tap`, `typing a line break`, or `request` for a request the
    /// page sent (a script's click, a form submitted by script, a `fetch`).
    pub gesture: String,
    /// The origin of the page acted on.
    pub origin: String,
    /// The element's accessible name or text.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub element: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub role: String,
    /// Where its form goes: `POST https://shop.example/pay`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub form: String,
    /// For a request: its method and URL.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub request: String,
    /// Amounts of money on the page, those on the element first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amounts: Vec<String>,
    /// Kinds of sensitive fields in the form: `card number`, `card security code`, `password`...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<String>,
    /// What it does, by the reasons below (empty when only the policy's triggers hold it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<GestureKind>,
    /// Why it is held: `"Pay" (English: paying)`, `a card number field`, `gesture_origins ...`.
    pub reasons: Vec<String>,
    /// The element's box, for the picture the extension takes when it shows the question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rect: Option<Rect>,
}

/// A standing answer of the human's: gestures of these kinds on this origin by this agent go
/// without a question until `until_ms` (the daemon's clock; `None`: for the daemon's life, a
/// sign-in remembered).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StandingAnswer {
    pub id: u64,
    pub agent: String,
    pub origin: String,
    pub kinds: Vec<GestureKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ms: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guard_pauses_only_what_can_carry_a_write() {
        let patterns = guard_fetch_patterns();
        assert_eq!(patterns.len(), GUARD_RESOURCE_TYPES.len());
        assert_eq!(
            patterns[0],
            serde_json::json!({"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"})
        );
        for never in ["Image", "Script", "Stylesheet", "Font", "Media"] {
            assert!(!GUARD_RESOURCE_TYPES.contains(&never));
        }
    }

    #[test]
    fn facts_read_what_the_extension_writes_and_tolerate_what_it_leaves_out() {
        let facts: GestureFacts = serde_json::from_str(
            r#"{"url":"https://shop.test/checkout","element":{"tag":"button","role":"button","name":"Pay €1,240.00","submits":true,"actionable":true},
                "form":{"action":"https://shop.test/pay","method":"post","fields":[{"autocomplete":"cc-number"}],"buttons":["Pay €1,240.00"]},
                "pageText":"Total €1,240.00","rect":{"x":1,"y":2,"width":3,"height":4}}"#,
        )
        .unwrap();
        assert_eq!(facts.element.as_ref().unwrap().name, "Pay €1,240.00");
        assert_eq!(facts.form.as_ref().unwrap().fields[0].autocomplete, "cc-number");
        assert!(facts.matched_selectors.is_empty());
        let target = serde_json::to_string(&InspectTarget::Request {
            frame_id: "F".into(),
            url: "u".into(),
            method: "POST".into(),
            method_override: String::new(),
        })
        .unwrap();
        assert_eq!(target, r#"{"request":{"frameId":"F","url":"u","method":"POST"}}"#);
        assert_eq!(serde_json::to_string(&InspectTarget::Focus).unwrap(), r#""focus""#);
    }

    #[test]
    fn standing_answers_and_their_offers_on_the_wire() {
        let answer = crate::ApprovalAnswer::AllowFor { ms: 600_000 };
        assert_eq!(serde_json::to_string(&answer).unwrap(), r#"{"allowFor":{"ms":600000}}"#);
        assert_eq!(serde_json::to_string(&crate::ApprovalAnswer::Allow).unwrap(), r#""allow""#);
        let frame = crate::FromExtension::TakeBackStanding { id: 3 };
        assert_eq!(serde_json::to_string(&frame).unwrap(), r#"{"takeBackStanding":{"id":3}}"#);
        let listed = StandingAnswer {
            id: 1,
            agent: "a".into(),
            origin: "https://m.test".into(),
            kinds: vec![GestureKind::SigningIn],
            until_ms: None,
        };
        assert_eq!(
            serde_json::to_string(&listed).unwrap(),
            r#"{"id":1,"agent":"a","origin":"https://m.test","kinds":["signing-in"]}"#
        );
        // A request from an older daemon offers nothing.
        let old: crate::ApprovalRequest = serde_json::from_str(
            r#"{"id":1,"agent":"a","method":"m","rule":"r","gesture":{"gesture":"click","origin":"o","reasons":[]}}"#,
        )
        .unwrap();
        assert!(old.standing_ms.is_empty() && !old.remembers);
    }

    #[test]
    fn a_question_names_its_kinds_and_reads_one_without_them() {
        let q = GestureQuestion {
            kinds: vec![GestureKind::Sending, GestureKind::SigningIn],
            reasons: vec!["x".into()],
            ..Default::default()
        };
        let text = serde_json::to_string(&q).unwrap();
        assert!(text.contains(r#""kinds":["sending","signing-in"]"#), "{text}");
        assert_eq!(serde_json::from_str::<GestureQuestion>(&text).unwrap(), q);
        let old: GestureQuestion =
            serde_json::from_str(r#"{"gesture":"click","origin":"o","reasons":[]}"#).unwrap();
        assert!(old.kinds.is_empty());
        for kind in GestureKind::ALL {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.name(), "the wire and the panel agree");
        }
    }
}
