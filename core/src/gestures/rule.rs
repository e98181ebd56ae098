//! The written rule: which gestures and which requests are held for the human. Pure functions
//! of what the page showed ([`GestureFacts`]) and what a request carries; every case is a test
//! below.
//!
//! Everything held is of one or more **kinds** ([`Kind`]: paying, deleting, secrets, sending,
//! sharing, signing in), named in the question and the trail; a reason that only the policy
//! gives has none.
//!
//! **A gesture** (a press, a tap, Enter, Space, a typed line break) is held when
//! 1. it activates an element whose label pays, deletes or changes a secret (the vocabulary;
//!    a verb that moves money pays next to an amount: `Send $25`), or, when it sends a write,
//!    sends or shares in the human's name (`Send`, `Share`: a button that only opens a dialog
//!    asks nothing), or
//! 2. it sends a form (a submit button; Enter or a line break in one of its fields) whose
//!    method is not GET and that carries a card, bank account, password or one-time-code field,
//!    or whose submit buttons, heading, action URL, `_method=delete` or action fields say so.
//!    A form whose only sensitive field is a password or one-time code, and that says nothing
//!    else, is **signing in**, not a secret's change;
//! 3. or the agent's policy adds it: its `gesture_words` in those labels, a `gesture_selectors`
//!    match on the element or its form, or a page of `gesture_origins` (any gesture that acts
//!    on something there).
//!
//! A press on nothing that acts (text, an empty area) and Space in a text field are no gestures.
//! **Reading never pays**: a form sent with GET (a search, a filter, pagination) and a link's
//! URL are never held for their words; a link labelled with the vocabulary (`Delete account`)
//! is, since its page is where the deletion starts.
//!
//! **A request** the page sends (whatever started it: a script's `el.click()`, `form.submit()`,
//! a click handler's `fetch`) is held when it writes (any method but GET, HEAD and OPTIONS) and
//! 1. its URL's path or query names a kind (`/checkout/pay`, `/p2p/transfers`,
//!    `/settings/delete`, `/instances/1/terminate`, `/account/password`, `/messages/send`,
//!    `/docs/7/share`, `/repo/visibility`), or its method is `DELETE` (or `_method=delete`) on
//!    something that is data (not a sign-out, a reaction, a cart), or the operation its body
//!    names does (`body.rs`: `mutation DropDatabase`, a JSON-RPC `unlink`, `_action=send`), or
//! 2. its body carries a card number (a number with a card's prefix, length and check digit)
//!    or a field named as a card, a bank account, a password or a one-time code, or
//! 3. it is the submission of a form that the gesture rule (2.) holds, or
//! 4. the policy adds it (`gesture_words` in the URL or the form, `gesture_selectors` on the
//!    form, any write to or from a page of `gesture_origins`).
//!
//! What a request carries is the server's own vocabulary, which no script in the page can
//! change; what a page shows is read too but only ever adds a reason. Amounts of money on the
//! page are shown to the human, never a reason on their own ("Add to cart – €9.99" is not
//! paying).

use super::body;
use super::context::{self, label_of};
pub use super::vocabulary::Kind;
use super::vocabulary::{self, FieldKind, Found, Label};
use super::written;
use crate::origins::{origin_of, OriginPattern};
use tabtunnel_wire::gestures::{Clicked, ElementFacts, FormFacts, GestureFacts, GestureQuestion};

/// `gesture_timeout` when the policy does not set it: this long without an answer is a no.
pub const DEFAULT_GESTURE_TIMEOUT_MS: u64 = 90_000;

/// What an agent's input does to the page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gesture {
    /// A mouse press (`Input.dispatchMouseEvent` `mousePressed`, `emulateTouchFromMouseEvent`).
    Press { x: f64, y: f64 },
    /// A touch or a synthesized tap.
    Tap { x: f64, y: f64 },
    /// What is dragged let go here (`input.rs`): the target under it acts, whatever it is.
    Drop { x: f64, y: f64 },
    /// Enter (a key event, or `\r`/`\n` typed as text through a key event).
    Enter,
    /// Space.
    Space,
    /// `Input.insertText` with a line break (Chrome submits a single-line field's form).
    LineBreak,
}

impl Gesture {
    pub fn describe(self) -> &'static str {
        match self {
            Gesture::Press { .. } => "click",
            Gesture::Tap { .. } => "tap",
            Gesture::Drop { .. } => "drop",
            Gesture::Enter => "Enter",
            Gesture::Space => "Space",
            Gesture::LineBreak => "typing a line break",
        }
    }

    /// The point it acts on, for pointer gestures; keys act on the focused element.
    pub fn point(self) -> Option<(f64, f64)> {
        match self {
            Gesture::Press { x, y } | Gesture::Tap { x, y } | Gesture::Drop { x, y } => Some((x, y)),
            _ => None,
        }
    }
}

/// What an agent's policy adds to the built-in rule.
#[derive(Debug, Clone, Default)]
pub struct Triggers {
    pub words: Vec<String>,
    pub selectors: Vec<String>,
    pub origins: Vec<OriginPattern>,
    /// Where each came from, for the reasons: `[default]`, `[agent.x]`.
    pub section: String,
}

impl Triggers {
    fn origin_listed(&self, url: &str) -> Option<&OriginPattern> {
        let origin = origin_of(url)?;
        self.origins.iter().find(|p| p.matches(&origin))
    }
}

/// A request as the network layer paused it.
#[derive(Debug, Clone, Default)]
pub struct Request<'a> {
    pub method: &'a str,
    pub url: &'a str,
    pub content_type: &'a str,
    pub body: Option<&'a str>,
    /// Its `X-HTTP-Method-Override` (or `X-HTTP-Method`, `X-Method-Override`) header.
    pub method_override: &'a str,
}

impl Request<'_> {
    /// The method the server takes it for: a POST's `_method` field (in its body, else its
    /// query: Laravel, Symfony), else its method-override header (Rack, Express) decides.
    pub fn server_method(&self) -> String {
        let sent = self.method.to_ascii_uppercase();
        if sent != "POST" {
            return sent;
        }
        // Read whole: a server decodes the name (`%5Fmethod=delete` is `_method`).
        let from_body = self.body.and_then(|b| {
            let read = body::fields(b, self.content_type);
            body::method_override(&read).map(str::to_ascii_uppercase)
        });
        let from_query = || {
            let query = self.url.split('#').next().unwrap_or_default().split_once('?')?.1;
            let read = body::fields(query, "application/x-www-form-urlencoded");
            body::method_override(&read).map(str::to_ascii_uppercase)
        };
        let header = Some(self.method_override.trim().to_ascii_uppercase()).filter(|m| !m.is_empty());
        from_body.or_else(from_query).or(header).unwrap_or(sent)
    }
}

/// Why something is held, and what the human is shown about it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Held {
    pub reasons: Vec<String>,
    pub fields: Vec<FieldKind>,
    /// What it does, by its reasons ([`Held::finish`] settles signing in).
    pub kinds: Vec<Kind>,
    /// Kinds this gesture or write is shown not to be, whatever words say them (a draft's save
    /// sends nothing, a switch sends nothing now, a cart's line deletes no data): their
    /// reasons are not added. Cleared by [`Held::finish`].
    ruled_out: Vec<Kind>,
}

impl Held {
    pub fn is_held(&self) -> bool {
        !self.reasons.is_empty()
    }

    fn add(&mut self, reason: String) {
        if !self.reasons.contains(&reason) {
            self.reasons.push(reason);
        }
    }

    fn add_kind(&mut self, reason: String, kind: Kind) {
        if self.ruled_out.contains(&kind) {
            return;
        }
        self.add(reason);
        self.kinds.push(kind);
    }

    fn rule_out(&mut self, kind: Kind) {
        self.ruled_out.push(kind);
    }

    fn found(&mut self, found: Vec<Found>, where_: &str) {
        for f in found {
            if f.kind.is_some_and(|k| self.ruled_out.contains(&k)) {
                continue;
            }
            self.add(format!("{} {where_}", f.describe()));
            self.kinds.extend(f.kind);
        }
    }

    /// A password or one-time code is signing in only when nothing else is sensitive: with a
    /// deletion, a new password or a payment it is that one's confirmation.
    fn finish(mut self) -> Self {
        self.ruled_out.clear();
        self.kinds.sort();
        self.kinds.dedup();
        if self.kinds.len() > 1 {
            self.kinds.retain(|k| *k != Kind::SigningIn);
        }
        self.fields.sort();
        self.fields.dedup();
        self
    }
}

/// The vocabulary's words in an element's or button's label, with an amount on it read as such.
fn label_words(label: &str, triggers: &Triggers) -> Vec<Found> {
    vocabulary::find_priced(label, &triggers.words, !amounts(label, 1).is_empty())
}

/// Whether an HTTP method can change something on a server.
pub fn is_write(method: &str) -> bool {
    !matches!(method.to_ascii_uppercase().as_str(), "GET" | "HEAD" | "OPTIONS")
}

/// The gesture rule (see the module's documentation).
pub fn gesture(gesture: Gesture, facts: &GestureFacts, triggers: &Triggers) -> Held {
    let mut held = Held::default();
    let Some(element) = &facts.element else { return held };
    let activates = match gesture {
        Gesture::Press { .. } | Gesture::Tap { .. } => element.actionable,
        // A drop zone is a plain element with a handler no page reading can see.
        Gesture::Drop { .. } => true,
        Gesture::Space => element.actionable && !element.editable,
        Gesture::Enter => element.actionable || element.editable,
        Gesture::LineBreak => element.editable,
    };
    if !activates {
        return held;
    }
    // Typing into a field acts through its form; activating anything else acts through itself.
    let typing = element.editable && matches!(gesture, Gesture::Enter | Gesture::LineBreak);
    let sends_form = element.submits || typing;
    let form = facts.form.as_ref().filter(|f| sends_form && sends_a_write(f));
    let reads = sends_form && facts.form.as_ref().is_some_and(|f| !sends_a_write(f));
    rule_out_by_element(facts, &mut held);
    // A tab shows a panel: its label (`Kaufen`, `Verkaufen`) is the panel's name, no action
    // (unless it submits a form that writes: then the label is the submitter's, as any).
    let shows_a_panel = element.role == "tab" && form.is_none();
    if !typing && !reads && !shows_a_panel {
        let mut found = label_words(&label_of(element), triggers);
        // Sending and sharing are what a write does: a `Share` that opens a dialog is none.
        if form.is_none() {
            found.retain(|f| !matches!(f.kind, Some(Kind::Sending | Kind::Sharing)));
        }
        held.found(found, "on the element");
    }
    if let Some(form) = form {
        form_reasons(form, triggers, &mut held);
        if !typing {
            held.found(said_around(element, triggers), "where the element writes");
        }
    }
    // A GET form writes all the same when its fields say so (WordPress's `delete_all`).
    if let Some(sent) = facts.form.as_ref().filter(|_| reads).and_then(|f| f.body.as_deref()) {
        for said in written::said_by_get(&body::fields(sent, "application/x-www-form-urlencoded")) {
            held.add_kind(format!("{} (though sent with GET)", said.why), said.kind);
        }
    }
    if !facts.matched_selectors.is_empty() {
        held.add(format!("gesture_selectors {:?} in [{}]", facts.matched_selectors, triggers.section));
    }
    if let Some(pattern) = triggers.origin_listed(&facts.url) {
        held.add(format!("gesture_origins \"{}\" in [{}]", pattern.as_str(), triggers.section));
    }
    held.finish()
}

/// The request rule (see the module's documentation). `facts` are the page's, with the form
/// that sends this request when there is one.
pub fn request(request: &Request, facts: Option<&GestureFacts>, triggers: &Triggers) -> Held {
    let mut held = Held::default();
    if !is_write(request.method) {
        return held;
    }
    let words = url_words(request.url);
    let read = request.body.map(|b| body::fields(b, request.content_type)).unwrap_or_default();
    if written::is_draft(&read) {
        held.rule_out(Kind::Sending);
    }
    if vocabulary::names_no_data(&words) {
        held.rule_out(Kind::Deleting);
    }
    if let Some(facts) = facts {
        rule_out_by_element(facts, &mut held);
    }
    let mut in_url = vocabulary::find_in_url(&words, &triggers.words);
    if vocabulary::is_reaction(&words) {
        in_url.retain(|f| f.kind.is_none()); // a reaction's path says only what it reacts to
    }
    held.found(in_url, "in its URL");
    if request.server_method() == "DELETE"
        && !vocabulary::deletes_no_data(&words, &removed_words(request.url))
    {
        held.add_kind("its method is DELETE".into(), Kind::Deleting);
    }
    // (A WebDAV `PROPFIND` reads what a trash holds: `/dav/trashbin/alice/trash`.)
    let moves = matches!(request.server_method().as_str(), "POST" | "PUT" | "PATCH");
    if moves && last_segment(request.url).is_some_and(|s| trashes(&s, true)) {
        held.add_kind("its URL puts something in the trash".into(), Kind::Deleting);
    }
    if request.server_method() == "POST" {
        if let Some((collection, kind)) = posted_collection(request.url) {
            held.add_kind(format!("it posts a new one to a collection of {collection}"), kind);
        }
    }
    operation_reasons(&read, triggers, &mut held);
    // Only a batch's: a monitoring beacon reports the requests a page made the same way.
    let batch = vocabulary::Label::new(&words).words().iter().any(|w| w.ends_with("batch"));
    let inner = if batch { body::inner_requests(&read) } else { Vec::new() };
    for (method, url) in inner.iter().filter(|(m, _)| is_write(m)) {
        let inner = url_words(url);
        let found = vocabulary::find_in_url(&inner, &triggers.words);
        held.found(found, &format!("in a request it carries ({method} {})", clip(url, 60)));
        if method == "DELETE" && !vocabulary::deletes_no_data(&inner, &removed_words(url)) {
            held.add_kind(format!("a request it carries is DELETE ({})", clip(url, 60)), Kind::Deleting);
        }
    }
    for said in written::said(&read, &words, false) {
        held.add_kind(said.why, said.kind);
    }
    for (kind, how) in fields_sent(&read) {
        held.fields.push(kind);
        held.add_kind(format!("a {} is sent ({how})", kind.describe()), kind.kind());
    }
    if let Some(facts) = facts {
        if let Some(form) = facts.form.as_ref().filter(|f| sends_a_write(f)) {
            form_reasons(form, triggers, &mut held);
            if let Some(submitter) = &facts.element {
                held.found(said_around(submitter, triggers), "where its submitter writes");
            }
        }
        if let Some(clicked) = facts.clicked.as_ref().filter(|c| acts_through_handlers(c)) {
            held.found(
                label_words(&label_of(&clicked.element), triggers),
                "on the element clicked before it",
            );
            held.found(said_around(&clicked.element, triggers), "for the element clicked before it");
        }
        // A handler of an earlier click may write after the next one: each lends its label.
        for clicked in facts.clicked_before.iter().filter(|c| acts_through_handlers(c)) {
            held.found(label_words(&label_of(&clicked.element), triggers), "on an element clicked earlier");
            held.found(said_around(&clicked.element, triggers), "for an element clicked earlier");
        }
        if facts.clicks_dropped {
            held.add("more elements were clicked before it than the guard keeps".into());
        }
        if !facts.matched_selectors.is_empty() {
            held.add(format!("gesture_selectors {:?} in [{}]", facts.matched_selectors, triggers.section));
        }
    }
    let page = facts.map(|f| f.url.as_str()).unwrap_or_default();
    if let Some(pattern) = triggers.origin_listed(request.url).or_else(|| triggers.origin_listed(page)) {
        held.add(format!("gesture_origins \"{}\" in [{}]", pattern.as_str(), triggers.section));
    }
    held.finish()
}

/// What the operations a body names do (`body::operations`).
fn operation_reasons(read: &body::Fields, triggers: &Triggers, held: &mut Held) {
    for operation in body::operations(read) {
        let found = vocabulary::find_in_url(&vocabulary::split_identifier(&operation), &triggers.words);
        held.found(found, &format!("in the operation it names ({})", clip(&operation, 60)));
        if trashes(&operation, false) {
            held.add_kind(
                format!("the operation it names puts something in the trash ({})", clip(&operation, 60)),
                Kind::Deleting,
            );
        }
    }
}

/// Whether an identifier (an operation's name, a path's last segment) puts something in the
/// trash: `trash` first is a verb (`TrashPostMutation`, `/recordings/2/trash`, and a path's
/// `/status/trashed.json`); anywhere else, or in a query, a trash is a place (`emptyTrash` is
/// read as emptying, `/dav/trashbin/alice/trash/a.pdf`, `TrashItemsQuery`), and an operation
/// named `Trashed…` lists what is there (a persisted query names no `query`).
fn trashes(identifier: &str, in_path: bool) -> bool {
    let words = vocabulary::split_identifier(identifier).to_lowercase();
    let mut words = words.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty());
    let verb = match words.next() {
        Some("trash") => true,
        Some("trashed") => in_path,
        _ => false,
    };
    verb && words.next_back() != Some("query")
}

/// The last segment of a URL's path, percent-decoded, if it has one.
fn last_segment(url: &str) -> Option<String> {
    let before_query = url.split(['?', '#']).next()?;
    let path = before_query.split_once("://").map_or(before_query, |(_, rest)| rest);
    path.split_once('/')?.1.rsplit('/').find(|s| !s.is_empty()).map(percent_decoded)
}

fn clip(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// The document's last click, on something that acts, whose default action was not a read (a
/// link to another page, a GET form's button, unless a handler prevented it or its form's
/// `submit`, as a form sent by `fetch` does): the page's
/// handlers act for it, and their writes are the element's until the next click, however long
/// they take (a handler can wait, and an agent can slow the network or the page down).
fn acts_through_handlers(clicked: &Clicked) -> bool {
    clicked.element.actionable && !clicked.navigates
}

/// The clicked element a request is shown with: the first (newest) whose label names
/// something sensitive, else the last one clicked.
fn lending_click(facts: &GestureFacts) -> Option<&ElementFacts> {
    let acting: Vec<&ElementFacts> = facts
        .clicked
        .iter()
        .chain(&facts.clicked_before)
        .filter(|c| acts_through_handlers(c))
        .map(|c| &c.element)
        .collect();
    let sensitive = |e: &&ElementFacts| {
        let label = label_of(e);
        !vocabulary::find_priced(&label, &[], !amounts(&label, 1).is_empty()).is_empty()
    };
    acting.iter().copied().find(sensitive).or(acting.first().copied())
}

/// The method a form's submission is taken for by its server: a POST's `_method` field decides.
pub fn form_method(form: &FormFacts) -> String {
    let method = form.method.to_ascii_uppercase();
    if method == "POST" && !form.method_override.trim().is_empty() {
        return form.method_override.trim().to_ascii_uppercase();
    }
    method
}

fn sends_a_write(form: &FormFacts) -> bool {
    !matches!(form.method.to_ascii_lowercase().as_str(), "get" | "dialog")
}

/// The form part of both rules: its fields, its buttons and heading, its action URL.
fn form_reasons(form: &FormFacts, triggers: &Triggers, held: &mut Held) {
    let mut kinds: Vec<FieldKind> = form.fields.iter().filter_map(vocabulary::field_kind).collect();
    let card_frame = form.frames.iter().any(|f| {
        let label = Label::new(&vocabulary::split_identifier(f));
        ["card", "payment", "cvc", "karte", "carte", "tarjeta", "carta", "cartão"]
            .iter()
            .any(|w| label.has(w))
    });
    if card_frame {
        kinds.push(FieldKind::CardNumber);
    }
    kinds.sort();
    kinds.dedup();
    for kind in &kinds {
        let how = if *kind == FieldKind::CardNumber && card_frame { " (in a payment frame)" } else { "" };
        held.add_kind(format!("the form has a {} field{how}", kind.describe()), kind.kind());
    }
    held.fields.extend(kinds);
    if let Some(button) = form.buttons.first() {
        held.found(label_words(button, triggers), "on the form's button");
    }
    held.found(vocabulary::find(&form.label, &triggers.words), "in the form's heading");
    let action = url_words(&form.action);
    held.found(vocabulary::find_in_url(&action, &triggers.words), "in the form's action");
    if form_method(form) == "DELETE" && !vocabulary::deletes_no_data(&action, &removed_words(&form.action)) {
        held.add_kind("the form sends DELETE".into(), Kind::Deleting);
    }
    if let Some(sent) = &form.body {
        let read = body::fields(sent, "application/x-www-form-urlencoded");
        if written::is_draft(&read) {
            held.rule_out(Kind::Sending);
        }
        operation_reasons(&read, triggers, held);
        for said in written::said(&read, &action, false) {
            held.add_kind(said.why, said.kind);
        }
    }
}

/// What the element acted on shows a gesture, or the write that follows it, is not: a switch
/// or checkbox changes a setting and sends nothing now (`Send a weekly email report`); a
/// deletion in a form about a cart or a filter deletes no data (`Artikel löschen` posting to
/// `/checkout/cart/delete`).
fn rule_out_by_element(facts: &GestureFacts, held: &mut Held) {
    let toggles = |e: &ElementFacts| matches!(e.role.as_str(), "switch" | "checkbox" | "menuitemcheckbox");
    let acted = facts.element.as_ref().or(facts.clicked.as_ref().map(|c| &c.element));
    if acted.is_some_and(toggles) {
        held.rule_out(Kind::Sending);
    }
    // A reaction (`Star pay-gateway`) pays nothing, whatever the name it reacts to says; one
    // with a price on it is bought (`5 Super Like ₺149,99`).
    let reacts = |e: &ElementFacts| {
        let label = label_of(e);
        vocabulary::is_reaction(&label) && amounts(&label, 1).is_empty()
    };
    if acted.is_some_and(reacts) {
        held.rule_out(Kind::Paying);
    }
    if facts.form.as_ref().is_some_and(|f| vocabulary::names_no_data(&url_words(&f.action))) {
        held.rule_out(Kind::Deleting);
    }
}

/// What the element's surroundings say of the write it sends (`context.rs`).
fn said_around(element: &ElementFacts, triggers: &Triggers) -> Vec<Found> {
    context::said_around(element, !amounts(&element.nearby, 1).is_empty(), &triggers.words)
}

/// A URL's path and query as words (`/repo/settings/delete?confirm=1` → `repo settings delete
/// confirm 1`); the host says nothing of what a request does.
pub fn url_words(url: &str) -> String {
    let Ok(parsed) = url::Url::parse(url) else { return vocabulary::split_identifier(url) };
    let query = parsed.query().unwrap_or_default();
    let decoded: String =
        url::form_urlencoded::parse(query.as_bytes()).map(|(k, v)| format!("{k} {v} ")).collect();
    let path = percent_decoded(parsed.path()).replace('/', " ");
    vocabulary::split_identifier(&format!("{path} {decoded}"))
}

/// The words of what a `DELETE` to `url` removes: the last three segments of its path (a
/// collection, an id, an action: `/user/starred/acme/rocket`, `/users/sign_out`) and its query.
fn removed_words(url: &str) -> String {
    let Ok(parsed) = url::Url::parse(url) else { return url_words(url) };
    let segments: Vec<&str> = parsed.path().split('/').filter(|s| !s.is_empty()).collect();
    let end = segments[segments.len().saturating_sub(3)..].join("/");
    let mut end_only = parsed.clone();
    end_only.set_path(&end);
    url_words(end_only.as_str())
}

/// Collections, as REST names them, a POST to which makes one in the human's name: what the
/// human writes for others to read (`POST /channels/9/messages`, `/posts/5/comments`,
/// `/conversations/4/replies`, `/api/questions`, `/review/v2/reviews`), and orders (`POST
/// /orders/` places one: a broker's, a delivery's).
const POSTED_COLLECTIONS: &[(&str, Kind)] = &[
    ("messages", Kind::Sending),
    ("comments", Kind::Sending),
    ("replies", Kind::Sending),
    ("reviews", Kind::Sending),
    ("ratings", Kind::Sending),
    ("questions", Kind::Sending),
    ("orders", Kind::Paying),
];

/// The collection a URL's path ends in, if it is one of [`POSTED_COLLECTIONS`]; a flag, a
/// reaction or a search under one (`/messages/flags`, `/messages/4/reactions`) is none.
fn posted_collection(url: &str) -> Option<(&'static str, Kind)> {
    let parsed = url::Url::parse(url).ok()?;
    let last = parsed.path_segments().and_then(|mut s| s.rfind(|s| !s.is_empty()).map(str::to_owned))?;
    POSTED_COLLECTIONS.iter().find(|(c, _)| last.eq_ignore_ascii_case(c)).copied()
}

fn percent_decoded(text: &str) -> String {
    let escaped = format!("p={}", text.replace('+', "%2B").replace('&', "%26"));
    url::form_urlencoded::parse(escaped.as_bytes()).next().map(|(_, v)| v.into_owned()).unwrap_or_default()
}

/// Sensitive fields a request body carries, read as servers read it (`body.rs`): by their
/// names, and card numbers by their digits wherever they are.
pub fn body_fields(body: &str, content_type: &str) -> Vec<(FieldKind, &'static str)> {
    fields_sent(&body::fields(body, content_type))
}

fn fields_sent(read: &body::Fields) -> Vec<(FieldKind, &'static str)> {
    let mut names: Vec<&String> = read.names.iter().collect();
    names.sort();
    names.dedup();
    let mut found = Vec::new();
    for name in names {
        let field = tabtunnel_wire::gestures::FieldFacts { name: name.clone(), ..Default::default() };
        if let Some(kind) = vocabulary::field_kind(&field) {
            found.push((kind, "a field named so"));
        }
    }
    if read.values.iter().any(|v| is_card_number(v)) {
        found.push((FieldKind::CardNumber, "its digits"));
    }
    found.sort();
    found.dedup_by(|a, b| a.0 == b.0);
    found
}

/// A payment card's number: 13 to 19 digits (in groups or not) with a card network's prefix and
/// a valid check digit (Luhn). Long ids in JSON rarely have all three.
pub fn is_card_number(value: &str) -> bool {
    let value = value.trim();
    if !value.chars().all(|c| c.is_ascii_digit() || c == ' ' || c == '-') {
        return false;
    }
    let digits: Vec<u32> = value.chars().filter_map(|c| c.to_digit(10)).collect();
    if !(13..=19).contains(&digits.len()) {
        return false;
    }
    let prefix = |n: usize| digits[..n].iter().fold(0u32, |acc, d| acc * 10 + d);
    let network = digits[0] == 4
        || (51..=55).contains(&prefix(2))
        || (2221..=2720).contains(&prefix(4))
        || matches!(prefix(2), 34 | 37 | 35 | 36 | 38 | 62 | 65)
        || prefix(4) == 6011;
    let luhn: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| {
            if i % 2 == 1 {
                if d * 2 > 9 {
                    d * 2 - 9
                } else {
                    d * 2
                }
            } else {
                *d
            }
        })
        .sum();
    network && luhn.is_multiple_of(10)
}

/// Amounts of money in a text (`€1,240.00`, `1.240,00 €`, `US$ 9.99`, `CHF 12.50`, `¥1,000`,
/// `12,50 zł`, `500 บาท`, `۱۲۰٬۰۰۰ تومان`), in the order they appear, each once, at most `limit`.
pub fn amounts(text: &str, limit: usize) -> Vec<String> {
    const SIGNS: &[&str] = &[
        "US$",
        "R$",
        "A$",
        "C$",
        "HK$",
        "€",
        "$",
        "£",
        "¥",
        "₹",
        "₩",
        "₽",
        "₺",
        "฿",
        "zł",
        "kr",
        "CHF",
        "EUR",
        "USD",
        "GBP",
        "JPY",
        "PLN",
        "CNY",
        "RMB",
        "元",
        "円",
        "บาท",
        "تومان",
        "ریال",
        "ريال",
    ];
    // Persian and Arabic-Indic digits, and their thousands and decimal separators, too.
    let is_digit = |c: char| {
        c.is_ascii_digit() || ('\u{6f0}'..='\u{6f9}').contains(&c) || ('\u{660}'..='\u{669}').contains(&c)
    };
    let is_separator =
        |c: char| matches!(c, ',' | '.' | '\'' | '\u{a0}' | '\u{202f}' | '\u{66b}' | '\u{66c}');
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut found: Vec<String> = Vec::new();
    let number_at = |start: usize| -> Option<usize> {
        // The end (byte index) of a number beginning at char index `start`.
        let mut i = start;
        while i < chars.len() && matches!(chars[i].1, ' ' | '\u{a0}' | '\u{202f}') {
            i += 1;
        }
        if i >= chars.len() || !is_digit(chars[i].1) {
            return None;
        }
        let mut end = i;
        while end < chars.len()
            && (is_digit(chars[end].1)
                || ((is_separator(chars[end].1) || chars[end].1 == ' ')
                    && chars.get(end + 1).is_some_and(|(_, c)| is_digit(*c))))
        {
            end += 1;
        }
        Some(end)
    };
    let byte = |i: usize| chars.get(i).map_or(text.len(), |(b, _)| *b);
    let mut i = 0;
    while i < chars.len() && found.len() < limit {
        let rest = &text[chars[i].0..];
        let Some(sign) = SIGNS.iter().find(|s| rest.starts_with(**s)) else {
            i += 1;
            continue;
        };
        let sign_chars = sign.chars().count();
        // Letters glued to a code are a word, not a currency (`EURO`, `Krone` is fine as `kr`?).
        let glued = |c: Option<&(usize, char)>| c.is_some_and(|(_, c)| c.is_alphabetic());
        if sign.chars().all(|c| c.is_ascii_alphabetic())
            && (glued(chars.get(i + sign_chars)) || (i > 0 && glued(chars.get(i - 1))))
        {
            i += sign_chars;
            continue;
        }
        let after = number_at(i + sign_chars).map(|end| text[chars[i].0..byte(end)].to_owned());
        let before = || {
            // A number ending just before the sign (`1.240,00 €`).
            let mut j = i;
            while j > 0 && matches!(chars[j - 1].1, ' ' | '\u{a0}' | '\u{202f}') {
                j -= 1;
            }
            let end = j;
            while j > 0
                && (is_digit(chars[j - 1].1)
                    || (is_separator(chars[j - 1].1) && j >= 2 && is_digit(chars[j - 2].1)))
            {
                j -= 1;
            }
            (j < end).then(|| text[chars[j].0..byte(i + sign_chars)].to_owned())
        };
        if let Some(amount) = after.or_else(before) {
            let amount = amount.split_whitespace().collect::<Vec<_>>().join(" ");
            if !found.contains(&amount) {
                found.push(amount);
            }
        }
        i += sign_chars;
    }
    found
}

/// The question the human is asked about a held gesture or request.
pub fn question(
    what: &str,
    facts: Option<&GestureFacts>,
    request: Option<&Request>,
    held: &Held,
) -> GestureQuestion {
    let url = facts
        .map(|f| f.url.as_str())
        .filter(|u| !u.is_empty())
        .or(request.map(|r| r.url))
        .unwrap_or_default();
    let origin =
        url::Url::parse(url).map(|u| u.origin().ascii_serialization()).unwrap_or_else(|_| url.to_owned());
    // A request's element is the one whose click it follows, when no form's button sent it.
    let element = facts.and_then(|f| f.element.as_ref().or_else(|| lending_click(f)));
    let form = facts.and_then(|f| f.form.as_ref());
    // The element's own amounts first, then the form's button's, then the page's.
    let mut texts: Vec<&str> = Vec::new();
    if let Some(e) = element {
        texts.push(&e.name);
        texts.push(&e.text);
    }
    if let Some(f) = form {
        texts.extend(f.buttons.iter().map(String::as_str));
    }
    if let Some(f) = facts {
        texts.push(&f.page_text);
    }
    let mut found = Vec::new();
    for text in texts {
        for amount in amounts(text, 8) {
            if !found.contains(&amount) && found.len() < 8 {
                found.push(amount);
            }
        }
    }
    // Enter in a field presses its form's default button: that is what it acts on.
    let typing = element.is_some_and(|e| e.editable) && matches!(what, "Enter" | "typing a line break");
    let default_button = || form.and_then(|f| f.buttons.first().cloned()).filter(|b| !b.is_empty());
    let element_label = if typing { default_button() } else { None }
        .or_else(|| element.map(label_of).filter(|l| !l.is_empty()))
        .or_else(default_button)
        .unwrap_or_default();
    GestureQuestion {
        gesture: what.to_owned(),
        origin,
        element: element_label,
        role: element.map(|e| e.role.clone()).unwrap_or_default(),
        form: form.map(|f| format!("{} {}", form_method(f), f.action)).unwrap_or_default(),
        request: request.map(|r| format!("{} {}", r.server_method(), r.url)).unwrap_or_default(),
        amounts: found,
        fields: held.fields.iter().map(|k| k.describe().to_owned()).collect(),
        reasons: held.reasons.clone(),
        kinds: held.kinds.clone(),
        rect: facts.and_then(|f| f.rect),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabtunnel_wire::gestures::FieldFacts;

    fn button(name: &str) -> ElementFacts {
        ElementFacts {
            tag: "button".into(),
            role: "button".into(),
            name: name.into(),
            text: name.into(),
            actionable: true,
            submits: true,
            ..Default::default()
        }
    }

    fn field_el(label: &str) -> ElementFacts {
        ElementFacts {
            tag: "input".into(),
            role: "textbox".into(),
            name: label.into(),
            input_type: "text".into(),
            actionable: true,
            editable: true,
            ..Default::default()
        }
    }

    fn form(method: &str, action: &str, fields: &[(&str, &str)], buttons: &[&str]) -> FormFacts {
        FormFacts {
            action: action.into(),
            method: method.into(),
            fields: fields
                .iter()
                .map(|(t, a)| FieldFacts {
                    input_type: (*t).into(),
                    autocomplete: (*a).into(),
                    ..Default::default()
                })
                .collect(),
            buttons: buttons.iter().map(|b| (*b).to_owned()).collect(),
            ..Default::default()
        }
    }

    fn facts(element: ElementFacts, form: Option<FormFacts>) -> GestureFacts {
        GestureFacts {
            url: "https://shop.test/checkout".into(),
            element: Some(element),
            form,
            page_text: "Total €1,240.00".into(),
            ..Default::default()
        }
    }

    const PRESS: Gesture = Gesture::Press { x: 1.0, y: 2.0 };

    fn none() -> Triggers {
        Triggers { section: "default".into(), ..Default::default() }
    }

    #[test]
    fn the_pay_button_of_a_card_form_is_held_for_its_words_and_its_fields() {
        let checkout = form(
            "post",
            "https://shop.test/pay",
            &[("text", "cc-number"), ("text", "cc-csc")],
            &["Pay €1,240.00"],
        );
        let held = gesture(PRESS, &facts(button("Pay €1,240.00"), Some(checkout.clone())), &none());
        assert!(
            held.reasons.iter().any(|r| r.starts_with("\"pay\" (English: paying) on the element")),
            "{held:?}"
        );
        assert!(held.reasons.contains(&"the form has a card number field".to_owned()));
        assert!(held.reasons.contains(&"\"pay\" (English: paying) in the form's action".to_owned()));
        assert_eq!(held.fields, [FieldKind::CardNumber, FieldKind::CardSecurityCode]);
        // Enter in its card field sends it too; Space there only types.
        let enter = gesture(Gesture::Enter, &facts(field_el("Card number"), Some(checkout.clone())), &none());
        assert!(enter.reasons.contains(&"the form has a card number field".to_owned()), "{enter:?}");
        assert!(!gesture(Gesture::Space, &facts(field_el("Card number"), Some(checkout.clone())), &none())
            .is_held());
        assert!(
            gesture(Gesture::LineBreak, &facts(field_el("Card number"), Some(checkout)), &none()).is_held()
        );
    }

    #[test]
    fn a_form_with_a_password_or_one_time_code_is_held_whatever_its_button_says() {
        let login = form(
            "post",
            "https://x.test/session",
            &[("text", "username"), ("password", "current-password")],
            &["Continue"],
        );
        let held = gesture(PRESS, &facts(button("Continue"), Some(login)), &none());
        assert_eq!(held.reasons, ["the form has a password field"]);
        let otp = form("post", "https://x.test/verify", &[("text", "one-time-code")], &["Verify"]);
        assert!(gesture(Gesture::Enter, &facts(field_el("Code"), Some(otp)), &none()).is_held());
    }

    #[test]
    fn reading_is_never_held_searches_next_and_links_that_say_nothing() {
        let search = form("get", "https://shop.test/search", &[("search", "")], &["Search"]);
        assert!(!gesture(PRESS, &facts(button("Search"), Some(search.clone())), &none()).is_held());
        assert!(!gesture(Gesture::Enter, &facts(field_el("Search"), Some(search)), &none()).is_held());
        // A GET form whose button has a paying word is still a read.
        let get_buy = form("get", "https://shop.test/buy", &[], &["Buy"]);
        assert!(!gesture(PRESS, &facts(button("Buy"), Some(get_buy)), &none()).is_held());
        let next = ElementFacts {
            tag: "a".into(),
            role: "link".into(),
            name: "Next".into(),
            href: "https://shop.test/?page=2".into(),
            actionable: true,
            ..Default::default()
        };
        assert!(!gesture(PRESS, &facts(next, None), &none()).is_held());
        let add = ElementFacts { submits: true, ..button("Add to cart – €9.99") };
        let cart = form("post", "https://shop.test/cart/add", &[("hidden", "")], &["Add to cart – €9.99"]);
        assert!(!gesture(PRESS, &facts(add, Some(cart)), &none()).is_held(), "an amount alone is not paying");
        let remove = ElementFacts { submits: false, ..button("Remove filter") };
        assert!(!gesture(PRESS, &facts(remove, None), &none()).is_held());
    }

    #[test]
    fn a_button_or_link_that_deletes_is_held_without_a_form() {
        let danger =
            ElementFacts { submits: false, input_type: "button".into(), ..button("Delete this repository") };
        let held = gesture(PRESS, &facts(danger, None), &none());
        assert_eq!(held.reasons, ["\"delete\" (English: deleting) on the element"]);
        let link = ElementFacts {
            tag: "a".into(),
            role: "link".into(),
            name: "Konto löschen".into(),
            actionable: true,
            ..Default::default()
        };
        assert!(gesture(Gesture::Enter, &facts(link, None), &none()).is_held());
    }

    #[test]
    fn a_press_on_nothing_that_acts_is_no_gesture() {
        let text = ElementFacts {
            tag: "p".into(),
            text: "Delete your data any time from settings".into(),
            ..Default::default()
        };
        assert!(!gesture(PRESS, &facts(text, None), &none()).is_held());
        assert!(!gesture(PRESS, &GestureFacts::default(), &none()).is_held());
    }

    #[test]
    fn a_policy_adds_words_selectors_and_origins_and_removes_nothing() {
        let triggers = Triggers {
            words: vec!["launch".into()],
            selectors: vec!["#go".into()],
            origins: vec![OriginPattern::parse("https://rockets.test").unwrap()],
            section: "agent.bot".into(),
        };
        let launch = ElementFacts { submits: false, ..button("Launch") };
        assert!(gesture(PRESS, &facts(launch.clone(), None), &triggers).reasons[0].contains("your policy"));
        assert!(!gesture(PRESS, &facts(launch.clone(), None), &none()).is_held());
        let mut matched = facts(ElementFacts { submits: false, ..button("Go") }, None);
        matched.matched_selectors = vec!["#go".into()];
        assert_eq!(
            gesture(PRESS, &matched, &triggers).reasons,
            ["gesture_selectors [\"#go\"] in [agent.bot]"]
        );
        let mut there = facts(ElementFacts { submits: false, ..button("Go") }, None);
        there.url = "https://rockets.test/pad".into();
        assert_eq!(
            gesture(PRESS, &there, &triggers).reasons,
            ["gesture_origins \"https://rockets.test\" in [agent.bot]"]
        );
        assert!(gesture(PRESS, &facts(button("Pay"), None), &triggers).is_held(), "the built-in words stay");
    }

    fn post(url: &str, body: &str, content_type: &str) -> Held {
        request(
            &Request { method: "POST", url, content_type, body: Some(body), ..Default::default() },
            None,
            &none(),
        )
    }

    #[test]
    fn requests_are_held_by_what_they_carry() {
        assert!(post("https://shop.test/checkout/pay", "", "").reasons[0].contains("in its URL"));
        assert!(post("https://git.test/acme/rocket/settings/delete", "", "").is_held());
        assert!(post("https://x.test/account/password", "", "").is_held());
        assert!(post("https://git.test/settings/tokens", "", "").is_held());
        let held = post(
            "https://x.test/api/checkout",
            "cardnumber=4242424242424242&cvc=123",
            "application/x-www-form-urlencoded",
        );
        assert_eq!(held.fields, [FieldKind::CardNumber, FieldKind::CardSecurityCode]);
        let held = post(
            "https://x.test/api/v1/charge",
            r#"{"source":{"number":"4242 4242 4242 4242"}}"#,
            "application/json",
        );
        assert!(held.reasons.iter().any(|r| r == "a card number is sent (its digits)"), "{held:?}");
        let held = post("https://x.test/session", "user=a&password=b", "application/x-www-form-urlencoded");
        assert_eq!(held.fields, [FieldKind::Password]);
        let multipart = "--b\r\nContent-Disposition: form-data; name=\"new_password\"\r\n\r\nx\r\n--b--";
        assert_eq!(
            post("https://x.test/u", multipart, "multipart/form-data; boundary=b").fields,
            [FieldKind::NewPassword]
        );
    }

    #[test]
    fn bodies_are_read_as_servers_read_them() {
        // A bare multipart name, which servers accept.
        let bare = "--b\r\nContent-Disposition: form-data; name=new_password\r\n\r\nx\r\n--b--";
        assert_eq!(
            post("https://x.test/u", bare, "multipart/form-data; boundary=b").fields,
            [FieldKind::NewPassword]
        );
        // A password ten levels down a JSON body, and far below any parser's recursion limit.
        let mut deep = r#"{"password":"hunter2"}"#.to_owned();
        for i in 0..10 {
            deep = format!(r#"{{"l{i}":[{deep}]}}"#);
        }
        assert_eq!(
            post("https://x.test/api/v1/save", &deep, "application/json").fields,
            [FieldKind::Password]
        );
        let abyss = format!("{}{{\"cvc\":\"123\"}}{}", "[".repeat(5_000), "]".repeat(5_000));
        assert_eq!(
            post("https://x.test/api", &abyss, "application/json").fields,
            [FieldKind::CardSecurityCode]
        );
        // The name after the first 512, and escaped.
        let many: String = (0..600).map(|i| format!(r#""k{i}":1,"#)).collect();
        let late = format!(r#"{{{many}"pass\u0077ord":"x"}}"#);
        assert_eq!(post("https://x.test/api", &late, "application/json").fields, [FieldKind::Password]);
    }

    #[test]
    fn a_write_is_judged_with_every_element_clicked_since_the_last_one() {
        let neutral = Request { method: "POST", url: "https://shop.test/api/v1/ops", ..Default::default() };
        let click = |label: &str| Clicked {
            element: ElementFacts { submits: false, input_type: "button".into(), ..button(label) },
            ms_ago: 200,
            navigates: false,
        };
        // "Pay", then "Close" 200 ms later: the write of Pay's handler comes after Close's click.
        let page = GestureFacts {
            url: "https://shop.test/checkout".into(),
            clicked: Some(click("Close")),
            clicked_before: vec![
                click("Add to cart"),
                click("Pay €1,240.00"),
                click("Delete this repository"),
            ],
            ..Default::default()
        };
        let held = request(&neutral, Some(&page), &none());
        assert!(held.kinds.contains(&Kind::Paying) && held.kinds.contains(&Kind::Deleting), "{held:?}");
        assert!(held.reasons.iter().any(|r| r.ends_with("on an element clicked earlier")), "{held:?}");
        let q = question("request", Some(&page), Some(&neutral), &held);
        assert_eq!(q.element, "Pay €1,240.00", "the newest sensitive one is shown");
        // Harmless clicks only: nothing, and a link that went to its page lends nothing.
        let harmless = GestureFacts {
            clicked: Some(click("Close")),
            clicked_before: vec![
                click("Sort by price"),
                Clicked { navigates: true, ..click("Delete account") },
            ],
            ..page.clone()
        };
        assert!(!request(&neutral, Some(&harmless), &none()).is_held());
        assert_eq!(question("request", Some(&harmless), Some(&neutral), &Held::default()).element, "Close");
        // Clicks pushed out of the list: asked.
        let flooded = GestureFacts { clicks_dropped: true, ..harmless };
        assert!(request(&neutral, Some(&flooded), &none()).is_held());
    }

    #[test]
    fn the_red_teams_forms_of_a_deletion_are_each_held() {
        let gql = r#"mutation { deleteRepository(input: {repositoryId: "R_1"}) { clientMutationId } }"#;
        let block = r#"{"query":"mutation { addComment(body: \"\"\" \" \"\"\") { id } deleteRepository(input: {repositoryId: \"R_1\"}) { clientMutationId } }"}"#;
        let form = "------WebKitFormBoundaryq\r\nContent-Disposition: form-data; name=\"_method\"\r\n\r\nDELETE\r\n------WebKitFormBoundaryq--\r\n";
        let xml = "<?xml version=\"1.0\"?><methodCall><methodName>deleteRepository</methodName><params/></methodCall>";
        let cases: &[(&str, &str, &str, &str, Kind)] = &[
            ("/api/graphql", "application/json", block, "", Kind::Deleting),
            ("/api/graphql", "application/graphql", gql, "", Kind::Deleting),
            (
                "/api/rpc",
                "application/json",
                r#"{"method":"deleteRepository","params":["acme/rocket"],"id":1}"#,
                "",
                Kind::Deleting,
            ),
            (
                "/api/rpc",
                "text/plain",
                r#"{"method":"sendtoaddress","params":["bc1qxy",1.24],"id":1}"#,
                "",
                Kind::Paying,
            ),
            ("/acme/rocket", "", "", "DELETE", Kind::Deleting),
            (
                "/acme/rocket",
                "multipart/form-data; boundary=----WebKitFormBoundaryq",
                form,
                "",
                Kind::Deleting,
            ),
            ("/api/rpc", "text/xml", xml, "", Kind::Deleting),
            (
                "/rpc",
                "application/json",
                r#"{"jsonrpc":"2.0","method":"eth_sendTransaction","params":[{}],"id":1}"#,
                "",
                Kind::Paying,
            ),
        ];
        for &(path, content_type, body, method_override, kind) in cases {
            let url = format!("https://git.test{path}");
            let r = Request { method: "POST", url: &url, content_type, body: Some(body), method_override };
            let held = request(&r, None, &none());
            assert!(held.kinds.contains(&kind), "{path} {content_type} {body}: {held:?}");
        }
    }

    #[test]
    fn a_method_override_header_or_query_field_is_the_servers_method() {
        let post =
            |url, method_override| Request { method: "POST", url, method_override, ..Default::default() };
        for header in ["DELETE", " delete "] {
            let r = post("https://git.test/acme/rocket", header);
            assert_eq!(r.server_method(), "DELETE");
            assert_eq!(request(&r, None, &none()).reasons, ["its method is DELETE"]);
        }
        assert_eq!(post("https://git.test/acme/rocket?_method=delete", "").server_method(), "DELETE");
        assert_eq!(post("https://git.test/acme/rocket?x=1#_method=delete", "").server_method(), "POST");
        assert_eq!(post("https://git.test/acme/rocket", "").server_method(), "POST");
        // A body's field name is decoded as the server decodes it.
        let form = "application/x-www-form-urlencoded";
        for body in ["%5Fmethod=delete", "_m%65thod=delete", "authenticity_token=abc&%5f%6dethod=DELETE"] {
            let r = Request { body: Some(body), content_type: form, ..post("https://git.test/repos/1", "") };
            assert_eq!(r.server_method(), "DELETE", "{body}");
        }
        let semicolons = Request {
            body: Some("a=1;new_password=hunter2"),
            content_type: form,
            ..post("https://x.test/api/save", "")
        };
        assert!(request(&semicolons, None, &none()).is_held(), "a password field after a ;");
        // Only a POST is overridden; the body's field comes before the header (Rack).
        let put = Request { method: "PUT", ..post("https://git.test/acme/rocket", "DELETE") };
        assert_eq!(put.server_method(), "PUT");
        let both = Request { body: Some("_method=patch"), ..post("https://git.test/acme/rocket", "DELETE") };
        assert_eq!(both.server_method(), "PATCH");
    }

    #[test]
    fn a_write_after_a_click_is_judged_with_the_clicked_elements_label() {
        let neutral =
            Request { method: "POST", url: "https://git.test/api/v3/actions", ..Default::default() };
        let after = |label: &str, ms_ago: u64, navigates: bool| {
            let element = ElementFacts { submits: false, input_type: "button".into(), ..button(label) };
            let page = GestureFacts {
                url: "https://git.test/acme/rocket/settings".into(),
                clicked: Some(Clicked { element, ms_ago, navigates }),
                ..Default::default()
            };
            let held = request(&neutral, Some(&page), &none());
            let q = question("request", Some(&page), Some(&neutral), &held);
            (held, q)
        };
        let (held, q) = after("Delete this repository", 40, false);
        assert_eq!(held.reasons, ["\"delete\" (English: deleting) on the element clicked before it"]);
        assert_eq!(q.element, "Delete this repository");
        assert!(after("Pay €1,240.00", 0, false).0.is_held());
        // Harmless labels, a link that went to its page: nothing.
        for label in ["Add to cart – €9.99", "Sort by price", "Search", "Remove filter", "Save"] {
            assert!(!after(label, 10, false).0.is_held(), "{label}");
        }
        // However long ago (a handler that waits, a network the agent slowed down).
        assert!(after("Delete this repository", 3_600_000, false).0.is_held());
        assert!(!after("Delete account", 10, true).0.is_held());
        // A read is never held for it.
        let page = after("Pay", 0, false);
        let get = Request { method: "GET", ..neutral.clone() };
        let facts = GestureFacts {
            clicked: Some(Clicked { element: button("Pay"), ..Default::default() }),
            ..Default::default()
        };
        assert!(!request(&get, Some(&facts), &none()).is_held() && page.0.is_held());
    }

    #[test]
    fn a_generic_button_writes_what_its_section_names_and_a_tab_names_nothing() {
        let neutral = Request { method: "POST", url: "https://app.test/api/v2/items", ..Default::default() };
        let after = |label: &str, context: &str, nearby: &str| {
            let element = ElementFacts {
                submits: false,
                input_type: "button".into(),
                context: context.into(),
                nearby: nearby.into(),
                ..button(label)
            };
            let page = GestureFacts {
                clicked: Some(Clicked { element, ..Default::default() }),
                ..Default::default()
            };
            kinds_of(&request(&neutral, Some(&page), &none()))
        };
        assert_eq!(after("Set up", "Two-factor authentication", ""), [Kind::Secrets]);
        assert_eq!(after("Save changes", "Visibility", ""), [Kind::Sharing]);
        assert_eq!(after("Empty", "Empty assets-prod?", ""), [Kind::Deleting]);
        assert_eq!(after("Jetzt verkaufen", "Handeln", "Du erhältst ca. 612,04 €"), [Kind::Paying]);
        // Harmless: a button naming its own object, a cancel, a save of something else.
        assert_eq!(after("Power cycle", "Reset root password", ""), []);
        assert_eq!(after("Cancel", "Delete this repository", ""), []);
        assert_eq!(after("Save", "Language and time zone", ""), []);
        // A form's generic submit button writes what its section names, asked before it acts.
        let save = ElementFacts { context: "Visibility".into(), ..button("Save") };
        let sends = facts(save, Some(form("post", "https://app.test/settings", &[], &["Save"])));
        assert_eq!(gesture(PRESS, &sends, &none()).kinds, [Kind::Sharing]);
        // Where nothing is written, nothing of the section counts: a `Set up` opening a dialog.
        let opens =
            ElementFacts { submits: false, context: "Two-factor authentication".into(), ..button("Set up") };
        assert!(!gesture(PRESS, &facts(opens, None), &none()).is_held());
        // A tab shows its panel: `Kaufen` pays nothing; a tab that submits a form is a button.
        let tab = ElementFacts { role: "tab".into(), submits: false, ..button("Kaufen") };
        assert!(!gesture(PRESS, &facts(tab.clone(), None), &none()).is_held());
        assert!(gesture(PRESS, &facts(ElementFacts { submits: false, ..button("Kaufen") }, None), &none())
            .is_held());
        let submitting = ElementFacts { submits: true, ..tab };
        assert!(gesture(
            PRESS,
            &facts(submitting, Some(form("post", "https://shop.test/api/items", &[], &[]))),
            &none()
        )
        .is_held());
    }

    #[test]
    fn a_posts_method_field_names_the_request_and_the_form_in_the_question() {
        let rails = FormFacts {
            method_override: "delete".into(),
            ..form("post", "https://git.test/repos/1", &[("hidden", "")], &["Delete this repository"])
        };
        let page = facts(button("Delete this repository"), Some(rails));
        let r = Request {
            method: "POST",
            url: "https://git.test/repos/1",
            content_type: "application/x-www-form-urlencoded",
            body: Some("_method=delete&authenticity_token=abc"),
            ..Default::default()
        };
        let held = request(&r, Some(&page), &none());
        assert!(held.reasons.iter().any(|x| x.ends_with("on the form's button")), "{held:?}");
        let q = question("form submission", Some(&page), Some(&r), &held);
        assert_eq!(
            (q.request.as_str(), q.form.as_str()),
            ("DELETE https://git.test/repos/1", "DELETE https://git.test/repos/1")
        );
    }

    #[test]
    fn a_post_to_a_collection_of_messages_sends_one() {
        let chat = "https://chat.test/api/v9/channels/9/messages";
        assert_eq!(
            kinds_of(&post(chat, r#"{"content":"Ja!","nonce":"1249"}"#, "application/json")),
            [Kind::Sending]
        );
        assert_eq!(kinds_of(&post("https://chat.test/messages/", "content=hi", "")), [Kind::Sending]);
        // A flag, a reaction, a search or a read under a message; another method; a draft.
        for url in [
            "https://chat.test/json/messages/flags",
            "https://chat.test/channels/9/messages/12/reactions",
            "https://chat.test/messages/search",
            "https://chat.test/api/messages/9/read",
        ] {
            assert!(!post(url, r#"{"flag":"starred"}"#, "application/json").is_held(), "{url}");
        }
        assert!(!request_to("PUT", chat, r#"{"content":"x"}"#).is_held());
        assert!(!post(chat, r#"{"content":"later","is_draft":true}"#, "application/json").is_held());
    }

    #[test]
    fn posts_to_collections_of_comments_replies_reviews_and_orders() {
        let json = "application/json";
        for (url, kind) in [
            ("https://mail.test/api/accounts/6/streams/groups/8/posts/5/comments", Kind::Sending),
            ("https://shop.test/api/v2/conversations/c-55/replies", Kind::Sending),
            ("https://shop.test/p/api/questions", Kind::Sending),
            ("https://shop.test/review/api/v2/reviews", Kind::Sending),
            ("https://broker.test/orders/", Kind::Paying),
            ("https://food.test/consumer/order/v2/orders", Kind::Paying),
        ] {
            assert_eq!(kinds_of(&post(url, r#"{"text":"x"}"#, json)), [kind], "{url}");
        }
        // Under one, or read: no new one.
        for url in ["https://broker.test/orders/search", "https://shop.test/reviews/9/helpful"] {
            assert!(!post(url, r#"{"q":"x"}"#, json).is_held(), "{url}");
        }
        assert!(!request_to("GET", "https://broker.test/orders/", "").is_held());
    }

    #[test]
    fn a_batch_is_read_as_the_requests_it_carries() {
        let json = "application/json";
        let arm = |method: &str, url: &str| {
            serde_json::json!({"requests": [{"httpMethod": method, "url": url, "requestHeaderDetails": {}}]})
                .to_string()
        };
        let batch = "https://portal.test/batch?api-version=2020-06-01";
        let db = "https://management.test/subscriptions/9f/resourceGroups/rg/providers/Microsoft.Sql/servers/s/databases/orders/delete?api-version=2023";
        assert_eq!(kinds_of(&post(batch, &arm("POST", db), json)), [Kind::Deleting]);
        let vm = "https://management.test/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm1";
        assert_eq!(kinds_of(&post(batch, &arm("DELETE", vm), json)), [Kind::Deleting]);
        let keys = "https://management.test/x/storageAccounts/st/regenerateKey?api-version=2023";
        assert_eq!(kinds_of(&post(batch, &arm("POST", keys), json)), [Kind::Secrets]);
        let role =
            "https://management.test/s/providers/Microsoft.Authorization/roleAssignments/2f?api-version=1";
        assert_eq!(kinds_of(&post(batch, &arm("PUT", role), json)), [Kind::Sharing]);
        // Microsoft Graph: the method before the URL, a relative one.
        let graph =
            r#"{"requests":[{"id":"1","method":"POST","url":"/teams/f2/members","body":{"roles":[]}}]}"#;
        assert_eq!(kinds_of(&post("https://graph.test/v1.0/$batch", graph, json)), [Kind::Sharing]);
        // What a batch reads is no write; a URL no method goes with is no request.
        assert!(!post(batch, &arm("GET", vm), json).is_held());
        assert!(!post(batch, &arm("DELETE", "https://management.test/users/sign_out"), json).is_held());
        let analytics = r#"{"event":"click","url":"https://shop.test/account/delete"}"#;
        assert!(!post("https://shop.test/collect", analytics, json).is_held());
        // A monitoring beacon names the requests the page made: they are no batch's.
        let rum =
            r#"{"type":"resource","resource":{"method":"DELETE","url":"https://shop.test/api/items/9"}}"#;
        assert!(!post("https://rum.test/api/v2/rum", rum, json).is_held());
        assert!(post("https://rum.test/api/v2/batch", rum, json).is_held());
    }

    #[test]
    fn facebook_and_cloudkit_name_their_operations() {
        let fb = |name: &str| {
            let body = format!("fb_api_req_friendly_name={name}&doc_id=71&variables=%7B%7D&fb_dtsg=N");
            post("https://social.test/api/graphql/", &body, "application/x-www-form-urlencoded")
        };
        assert_eq!(kinds_of(&fb("useCometUFICreateCommentMutation")), [Kind::Sending]);
        assert_eq!(kinds_of(&fb("AccountDeletionConfirmMutation")), [Kind::Deleting]);
        let cloudkit = r#"{"operations":[{"operationType":"forceDelete","record":{"recordName":"R"}}]}"#;
        let records = "https://ck.test/database/1/photos/production/private/records/modify";
        assert_eq!(kinds_of(&post(records, cloudkit, "text/plain")), [Kind::Deleting]);
        let update = r#"{"operations":[{"operationType":"update","record":{"recordName":"R"}}]}"#;
        assert!(!post(records, update, "text/plain").is_held());
        // Its reads are POSTs too.
        assert!(!fb("ShareDialogContentQuery").is_held());
        assert!(!fb("CometNewsFeedPaginationQuery").is_held());
    }

    #[test]
    fn everyday_writes_are_not_held() {
        for (url, body) in [
            ("https://shop.test/cart/add", "product=123&qty=1"),
            (
                "https://shop.test/api/graphql",
                r#"{"query":"{ cart { id } }","variables":{"id":"1234567890123456"}}"#,
            ),
            ("https://x.test/collect", "v=2&tid=G-123&t=pageview"),
            ("https://x.test/oauth/token", "grant_type=refresh_token&refresh_token=abc"),
            ("https://x.test/search", "q=delete"),
        ] {
            assert!(!post(url, body, "").is_held(), "{url}");
        }
        // A comment is sent in the human's name; the words in it pay nothing.
        let comment = post("https://x.test/api/comments", r#"{"body":"please pay attention"}"#, "");
        assert_eq!(kinds_of(&comment), [Kind::Sending]);
        assert!(!request(
            &Request { method: "GET", url: "https://shop.test/pay", ..Default::default() },
            None,
            &none()
        )
        .is_held());
    }

    #[test]
    fn a_request_from_a_form_the_gesture_rule_holds_is_held() {
        let checkout = form("post", "https://shop.test/orders", &[("text", "cc-number")], &["Pay"]);
        let page = facts(button("x"), Some(checkout));
        let held = request(
            &Request { method: "POST", url: "https://shop.test/orders", ..Default::default() },
            Some(&page),
            &none(),
        );
        assert!(held.reasons.contains(&"the form has a card number field".to_owned()), "{held:?}");
        let origins =
            Triggers { origins: vec![OriginPattern::parse("https://shop.test").unwrap()], ..none() };
        let held = request(
            &Request { method: "PUT", url: "https://shop.test/cart", ..Default::default() },
            None,
            &origins,
        );
        assert!(held.reasons[0].starts_with("gesture_origins"));
    }

    #[test]
    fn card_numbers_need_a_network_length_and_check_digit() {
        assert!(is_card_number("4242424242424242"));
        assert!(is_card_number("4242 4242 4242 4242"));
        assert!(is_card_number("5555-5555-5555-4444"));
        assert!(is_card_number("378282246310005"));
        assert!(!is_card_number("4242424242424241"), "check digit");
        assert!(!is_card_number("1234567890123452"), "no network starts with 1");
        assert!(!is_card_number("424242"));
        assert!(!is_card_number("4242a42424242424"));
    }

    #[test]
    fn amounts_in_the_ways_pages_write_them() {
        assert_eq!(amounts("Pay €1,240.00 now", 8), ["€1,240.00"]);
        assert_eq!(amounts("Gesamt: 1.240,00 € inkl. MwSt.", 8), ["1.240,00 €"]);
        assert_eq!(amounts("US$ 9.99 or CHF 12.50", 8), ["US$ 9.99", "CHF 12.50"]);
        assert_eq!(amounts("合計 ¥1,000 (税込)", 8), ["¥1,000"]);
        assert_eq!(amounts("Do zapłaty: 49,99 zł", 8), ["49,99 zł"]);
        assert_eq!(amounts("R$ 10,00 e R$ 10,00", 8), ["R$ 10,00"]);
        assert_eq!(amounts("EURO 2024, 100 EURos, $ alone", 8), Vec::<String>::new());
        assert_eq!(amounts("€1 €2 €3", 2).len(), 2);
        assert_eq!(amounts("ยอดรวม 1,250 บาท", 8), ["1,250 บาท"]);
        assert_eq!(amounts("مبلغ ۱۲۰٬۰۰۰ تومان", 8), ["۱۲۰٬۰۰۰ تومان"]);
        assert_eq!(amounts("٥٠٠ ريال", 8), ["٥٠٠ ريال"]);
        // The word for a role holds the baht's, with no number beside it.
        assert_eq!(amounts("บทบาท", 8), Vec::<String>::new());
    }

    #[test]
    fn urls_are_read_as_words_of_path_and_query() {
        assert_eq!(
            url_words("https://pay.test/a/settings/delete-repo?confirm=yes&x=Pay%20now"),
            " a settings delete repo confirm yes x Pay now "
        );
        assert!(url_words("https://shop.test/cart/add").contains("cart add"));
        let words = url_words("https://x.test/account/changePassword");
        assert_eq!(vocabulary::find_in_url(&words, &[])[0].kind, Some(Kind::Secrets));
    }

    fn kinds_of(held: &Held) -> Vec<Kind> {
        held.kinds.clone()
    }

    fn request_to(method: &str, url: &str, body: &str) -> Held {
        let r = Request { method, url, body: (!body.is_empty()).then_some(body), ..Default::default() };
        request(&r, None, &none())
    }

    #[test]
    fn a_sign_in_form_is_signing_in_and_a_password_confirming_something_else_is_that() {
        let login =
            form("post", "https://x.test/session", &[("text", "username"), ("password", "")], &["Sign in"]);
        let held = gesture(PRESS, &facts(button("Sign in"), Some(login)), &none());
        assert_eq!(kinds_of(&held), [Kind::SigningIn]);
        let otp = form("post", "https://x.test/verify", &[("text", "one-time-code")], &["Verify"]);
        assert_eq!(
            kinds_of(&gesture(PRESS, &facts(button("Verify"), Some(otp)), &none())),
            [Kind::SigningIn]
        );
        let delete =
            form("post", "https://x.test/account", &[("password", "current-password")], &["Delete account"]);
        assert_eq!(
            kinds_of(&gesture(PRESS, &facts(button("Delete account"), Some(delete)), &none())),
            [Kind::Deleting]
        );
        let change = form(
            "post",
            "https://x.test/u",
            &[("password", "current-password"), ("password", "new-password")],
            &["Save"],
        );
        assert_eq!(kinds_of(&gesture(PRESS, &facts(button("Save"), Some(change)), &none())), [Kind::Secrets]);
        assert_eq!(
            kinds_of(&request_to("POST", "https://x.test/session", "user=a&password=b")),
            [Kind::SigningIn]
        );
    }

    #[test]
    fn sending_and_sharing_are_held_where_they_write_not_where_a_dialog_opens() {
        let compose = form("post", "https://mail.test/compose", &[("text", "to")], &["Send"]);
        let held = gesture(PRESS, &facts(button("Send"), Some(compose)), &none());
        assert_eq!(kinds_of(&held), [Kind::Sending], "{held:?}");
        let opens = ElementFacts { submits: false, input_type: "button".into(), ..button("Share") };
        assert!(
            !gesture(PRESS, &facts(opens.clone(), None), &none()).is_held(),
            "a dialog opens: nothing yet"
        );
        // The write its handler sends after the click is.
        let page = GestureFacts {
            clicked: Some(Clicked { element: opens, ms_ago: 5, navigates: false }),
            ..facts(button("x"), None)
        };
        let page = GestureFacts { element: None, ..page };
        let r = Request { method: "POST", url: "https://docs.test/api/v2/links", ..Default::default() };
        let held = request(&r, Some(&page), &none());
        assert_eq!(kinds_of(&held), [Kind::Sharing], "{held:?}");
        assert_eq!(question("request", Some(&page), Some(&r), &held).kinds, [Kind::Sharing]);
        let public = form("post", "https://git.test/acme/rocket/settings", &[], &["Make public"]);
        assert_eq!(
            kinds_of(&gesture(PRESS, &facts(button("Make public"), Some(public)), &none())),
            [Kind::Sharing]
        );
        let link = ElementFacts { tag: "a".into(), role: "link".into(), ..button("Reply") };
        assert!(!gesture(PRESS, &facts(ElementFacts { submits: false, ..link }, None), &none()).is_held());
    }

    #[test]
    fn a_verb_that_moves_money_next_to_an_amount_pays() {
        let send = ElementFacts { submits: false, input_type: "button".into(), ..button("Send $25.00") };
        let held = gesture(PRESS, &facts(send, None), &none());
        assert_eq!(held.reasons, ["\"send + an amount\" (English: paying) on the element"]);
        assert_eq!(kinds_of(&held), [Kind::Paying]);
        let plan = form("post", "https://x.test/plans", &[("hidden", "")], &["Subscribe – $9.99/month"]);
        let held = gesture(PRESS, &facts(button("Subscribe – $9.99/month"), Some(plan)), &none());
        assert_eq!(kinds_of(&held), [Kind::Paying], "{held:?}");
        let letter = form("post", "https://x.test/newsletter", &[("email", "email")], &["Subscribe"]);
        assert!(!gesture(PRESS, &facts(button("Subscribe"), Some(letter)), &none()).is_held());
    }

    #[test]
    fn a_delete_method_deletes_unless_it_signs_out_or_unlikes() {
        let held = request_to("DELETE", "https://x.test/api/v1/volumes/vol-99", "");
        assert_eq!(
            (held.reasons.as_slice(), kinds_of(&held)),
            (&["its method is DELETE".to_owned()][..], vec![Kind::Deleting])
        );
        assert!(request_to("POST", "https://x.test/repos/1", "_method=delete&t=1")
            .reasons
            .contains(&"its method is DELETE".to_owned()));
        for harmless in [
            "https://x.test/users/sign_out",
            "https://x.test/api/v1/statuses/1/favourite",
            "https://shop.test/cart/items/3",
            "https://x.test/drafts/new_topic",
            "https://api.github.test/user/starred/acme/rocket",
            "https://api.github.test/notifications/threads/5/subscription",
        ] {
            assert!(!request_to("DELETE", harmless, "").is_held(), "{harmless}");
        }
        for trashed in [
            "https://3.basecamp.test/1/buckets/2/recordings/3/status/trashed.json",
            "https://x.test/api/posts/5/trash",
        ] {
            assert_eq!(kinds_of(&request_to("PUT", trashed, "")), [Kind::Deleting], "{trashed}");
        }
        let mutation = r#"{"operationName":"TrashPostMutation","variables":{"id":"5"}}"#;
        assert_eq!(kinds_of(&request_to("POST", "https://x.test/graphql", mutation)), [Kind::Deleting]);
        for place in [
            "https://cloud.test/remote.php/dav/trashbin/alice/trash/a.pdf",
            "https://x.test/api/trash/5/restore",
        ] {
            assert!(!request_to("PUT", place, "").is_held(), "{place}");
        }
        let read = request_to("PROPFIND", "https://cloud.test/remote.php/dav/trashbin/alice/trash", "");
        assert!(!kinds_of(&read).contains(&Kind::Deleting), "{read:?}");
        let listed = r#"{"operationName":"TrashItemsQuery","variables":{}}"#;
        assert!(!request_to("POST", "https://x.test/graphql", listed).is_held());
        let persisted =
            r#"{"operationName":"TrashedNotes","extensions":{"persistedQuery":{"sha256Hash":"ab"}}}"#;
        assert!(!request_to("POST", "https://x.test/graphql", persisted).is_held(), "a listing");
        assert_eq!(kinds_of(&request_to("PUT", "https://x.test/api/posts/5/%74rash", "")), [Kind::Deleting]);
        assert_eq!(last_segment("https://x.test/a/b/?q=/c"), Some("b".to_owned()));
        assert_eq!(last_segment("/a/trash?x=1/y"), Some("trash".to_owned()), "no scheme");
        assert_eq!(last_segment("https://x.test"), None);
        // A subscription further up the path only holds what is deleted (Azure's).
        let vm = "https://management.azure.test/subscriptions/0b1f/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm1?api-version=2024-03-01";
        assert_eq!(kinds_of(&request_to("DELETE", vm, "")), [Kind::Deleting]);
        let rails = FormFacts {
            method_override: "delete".into(),
            ..form("post", "https://x.test/items/7", &[("hidden", "")], &["🗑"])
        };
        let held = gesture(PRESS, &facts(button("🗑"), Some(rails)), &none());
        assert_eq!(held.reasons, ["the form sends DELETE"]);
        let sign_out = FormFacts {
            method_override: "delete".into(),
            ..form("post", "https://x.test/users/sign_out", &[("hidden", "")], &["Sign out"])
        };
        assert!(!gesture(PRESS, &facts(button("Sign out"), Some(sign_out)), &none()).is_held());
    }

    #[test]
    fn the_operation_a_body_names_holds_it_whatever_the_url() {
        let drop = r#"{"operationName":"DropDatabase","query":"mutation DropDatabase($id: ID!) { dropDatabase(id: $id) { id } }"}"#;
        let held = request_to("POST", "https://x.test/api/graphql", drop);
        assert_eq!(kinds_of(&held), [Kind::Deleting]);
        assert!(held.reasons[0].contains("in the operation it names (DropDatabase)"), "{held:?}");
        let backup = r#"{"operationName":"CreateBackup","query":"mutation CreateBackup { createBackup(id: 1) { id } }"}"#;
        assert!(!request_to("POST", "https://x.test/api/graphql", backup).is_held());
        let read = r#"{"operationName":"DeleteDialog","query":"query DeleteDialog { viewer { id } }"}"#;
        assert!(!request_to("POST", "https://x.test/api/graphql", read).is_held());
        let odoo = r#"{"jsonrpc":"2.0","method":"call","params":{"model":"res.partner","method":"unlink","args":[[7]]}}"#;
        assert_eq!(
            kinds_of(&request_to("POST", "https://erp.test/web/dataset/call_kw", odoo)),
            [Kind::Deleting]
        );
        assert_eq!(
            kinds_of(&request_to("POST", "https://mail.test/?_task=mail", "_action=send&_to=x")),
            [Kind::Sending]
        );
        // A form's body, read at the gesture.
        let grails = FormFacts {
            body: Some("appNames=x&_action_terminate=Go".into()),
            ..form("post", "https://x.test/instance/index", &[("hidden", "")], &["Go"])
        };
        assert_eq!(kinds_of(&gesture(PRESS, &facts(button("Go"), Some(grails)), &none())), [Kind::Deleting]);
    }

    #[test]
    fn each_kinds_path_words_hold_a_write_to_it() {
        for (url, kind) in [
            ("https://pay.test/api/v1/p2p/transfers", Kind::Paying),
            ("https://cloud.test/instances/i-1/terminate", Kind::Deleting),
            ("https://files.test/trash/empty", Kind::Deleting),
            ("https://x.test/oauth/authorize", Kind::Secrets),
            ("https://chat.test/messages/send", Kind::Sending),
            ("https://social.test/api/v1/statuses", Kind::Sending),
            ("https://docs.test/d/7/share", Kind::Sharing),
            ("https://git.test/acme/rocket/visibility", Kind::Sharing),
            ("https://git.test/orgs/acme/invitations", Kind::Sharing),
        ] {
            assert_eq!(kinds_of(&request_to("POST", url, "")), [kind], "{url}");
        }
        assert!(!request_to("POST", "https://social.test/api/v1/statuses/1/favourite", "").is_held());
        assert!(!request_to("GET", "https://docs.test/d/7/share", "").is_held());
    }

    #[test]
    fn the_question_shows_what_the_browser_showed() {
        let checkout = form("post", "https://shop.test/pay", &[("text", "cc-number")], &["Pay €1,240.00"]);
        let page = facts(button("Pay €1,240.00"), Some(checkout));
        let held = gesture(PRESS, &page, &none());
        let q = question("click", Some(&page), None, &held);
        assert_eq!(q.origin, "https://shop.test");
        assert_eq!(q.element, "Pay €1,240.00");
        assert_eq!(q.form, "POST https://shop.test/pay");
        assert_eq!(q.amounts, ["€1,240.00"]);
        assert_eq!(q.fields, ["card number"]);
        assert_eq!(q.kinds, [Kind::Paying]);
        let r = Request { method: "POST", url: "https://shop.test/pay", ..Default::default() };
        assert_eq!(question("request", None, Some(&r), &held).request, "POST https://shop.test/pay");
    }

    #[test]
    fn operations_and_paths_that_pay_share_or_make_tokens() {
        let gql =
            |doc: &str| serde_json::json!({"operationName": "X", "query": doc, "variables": {}}).to_string();
        let refund = gql("mutation OrderRefund($id: ID!) { orderRefund(id: $id) { errors { field } } }");
        assert_eq!(
            kinds_of(&post("https://dash.test/graphql/", &refund, "application/json")),
            [Kind::Paying]
        );
        let order =
            gql("mutation CreateOrder($o: OrderCreateInput!) { createOrder(order: $o) { order { id } } }");
        assert_eq!(
            kinds_of(&post("https://oc.test/api/graphql", &order, "application/json")),
            [Kind::Paying]
        );
        assert_eq!(kinds_of(&post("https://p.test/billing/change-plan/8571", "_csrf=1", "")), [Kind::Paying]);
        let token =
            gql("mutation AppTokenCreate($i: AppTokenInput!) { appTokenCreate(input: $i) { authToken } }");
        assert_eq!(
            kinds_of(&post("https://dash.test/graphql/", &token, "application/json")),
            [Kind::Secrets]
        );
        assert_eq!(
            kinds_of(&post("https://mk.test/api/miauth/gen-token", "{}", "application/json")),
            [Kind::Secrets]
        );
        // Look-alikes: a token refresh, reading an order, a cart's order summary.
        assert!(!post("https://x.test/oauth/token", "grant_type=refresh_token&refresh_token=a", "").is_held());
        let read = gql("query OrderDetails($id: ID!) { order(id: $id) { refunds { id } } }");
        assert!(!post("https://dash.test/graphql/", &read, "application/json").is_held());
    }

    #[test]
    fn what_a_writes_fields_say_is_held() {
        let visibility = "project%5Bvisibility_level%5D=20&project%5Bname%5D=billing";
        assert_eq!(kinds_of(&post("https://gl.test/acme/billing", visibility, "")), [Kind::Sharing]);
        let role = request_to("PATCH", "https://gf.test/api/org/users/7", r#"{"role":"Admin"}"#);
        assert_eq!(kinds_of(&role), [Kind::Sharing]);
        let survey =
            post("https://x.test/api/onboarding", r#"{"role":"developer","team":"5"}"#, "application/json");
        assert!(!survey.is_held(), "one's own role in a survey");
        let private = post("https://gl.test/acme/billing", "project%5Bvisibility_level%5D=0", "");
        assert!(!private.is_held());
    }

    #[test]
    fn a_draft_a_reaction_a_switch_and_a_cart_line_are_what_they_are() {
        let draft = post("https://mail.test/?_task=mail&_action=send", "_draft=1&_to=a%40b.c&_subject=x", "");
        assert!(!draft.is_held(), "saving a draft sends nothing");
        let sent = post("https://mail.test/?_task=mail&_action=send", "_draft=&_to=a%40b.c&_subject=x", "");
        assert_eq!(kinds_of(&sent), [Kind::Sending]);
        assert!(!post("https://gf.test/api/user/stars/dashboard/uid/pay-ovw", "", "").is_held(), "a star");
        assert!(post("https://gf.test/api/dashboards/uid/x/payments", "", "").is_held(), "no reaction");
        let star = ElementFacts { submits: false, ..button("Star pay-gateway") };
        assert!(!gesture(PRESS, &facts(star, None), &none()).is_held(), "a star names a repository");
        let pay = ElementFacts { submits: false, ..button("Pay now") };
        assert!(gesture(PRESS, &facts(pay, None), &none()).is_held());
        // A reaction with a price is bought; without one, a path that buys is no reaction's.
        let buy =
            Request { method: "POST", url: "https://dating.test/purchase/consumable", ..Default::default() };
        let after = |label: &str| GestureFacts {
            clicked: Some(Clicked { element: button(label), ..Default::default() }),
            ..Default::default()
        };
        assert_eq!(request(&buy, Some(&after("5 Super Like ₺149,99")), &none()).kinds, [Kind::Paying]);
        assert!(!request(&buy, Some(&after("Like")), &none()).is_held());
        // A switch whose name says send changes a setting.
        let switch = ElementFacts { role: "switch".into(), ..button("Send a weekly email report") };
        let report =
            form("post", "https://p.test/sites/x/weekly-report/enable", &[], &["Send a weekly email report"]);
        assert!(!gesture(PRESS, &facts(switch, Some(report.clone())), &none()).is_held());
        assert!(
            gesture(PRESS, &facts(button("Send report"), Some(report)), &none()).is_held(),
            "a button sends"
        );
        // A cart line's delete link in a form about the cart.
        let link = ElementFacts {
            tag: "a".into(),
            role: "link".into(),
            submits: false,
            ..button("Artikel löschen")
        };
        let cart = form("post", "https://m.test/checkout/cart/delete/", &[], &[]);
        assert!(!gesture(PRESS, &facts(link.clone(), Some(cart)), &none()).is_held());
        let post_form = form("post", "https://m.test/posts/9", &[], &[]);
        assert!(gesture(PRESS, &facts(link, Some(post_form)), &none()).is_held(), "not a cart");
    }

    #[test]
    fn a_get_form_that_deletes_or_gives_a_role_is_held_and_one_that_searches_is_not() {
        let with_body = |body: &str| FormFacts {
            body: Some(body.into()),
            ..form("get", "https://wp.test/wp-admin/edit.php", &[], &["Esvaziar lixeira"])
        };
        let empty = with_body("post_status=trash&s=&delete_all=Esvaziar+lixeira");
        let held = gesture(PRESS, &facts(button("Esvaziar lixeira"), Some(empty)), &none());
        assert_eq!(kinds_of(&held), [Kind::Deleting]);
        let search = with_body("post_status=trash&s=mar%C3%A7o");
        assert!(!gesture(PRESS, &facts(button("Pesquisar posts"), Some(search)), &none()).is_held());
        let role = with_body("users%5B%5D=5&new_role=administrator&changeit=Alterar");
        assert_eq!(
            kinds_of(&gesture(PRESS, &facts(button("Alterar"), Some(role)), &none())),
            [Kind::Sharing]
        );
    }

    #[test]
    fn accepting_an_oauth_consent_is_a_secret_and_refusing_it_is_not() {
        let consent = |body: &str| FormFacts {
            body: Some(body.into()),
            ..form(
                "post",
                "https://kc.test/realms/a/login-actions/consent?client_id=cli",
                &[],
                &["Ja", "Nein"],
            )
        };
        let yes = gesture(PRESS, &facts(button("Ja"), Some(consent("code=Q&accept=Ja"))), &none());
        assert_eq!(kinds_of(&yes), [Kind::Secrets]);
        assert!(
            !gesture(PRESS, &facts(button("Nein"), Some(consent("code=Q&cancel=Nein"))), &none()).is_held()
        );
        assert!(!post("https://x.test/api/cookie-consent", "accept=all", "").is_held(), "a cookie banner");
    }
}
