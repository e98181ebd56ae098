//! The one redaction every text for people to read goes through (the audit trail, the side
//! panel's questions and activity, `tabtunnel audit`, the daemon's log), whatever field it lands
//! in: the daemon's secrets (owner token, extension secret, navigation key), whole or any piece
//! of [`PIECE`] hex digits or more, in either case, percent-encoded once or more; anything shaped
//! like an agent token (`tta_` and hex digits: the daemon keeps only their hashes); and the hex
//! segment before `/tabtunnel/` (the navigation key's path, for a reader that does not know the
//! key). Each becomes [`REDACTED`].
//!
//! Each such text is also cut to [`MAX_TEXT_BYTES`] ([`Redactor::for_people`]): an agent's
//! 17 MB URL or label would otherwise go whole into every line, question and activity that
//! names it (six of them rotated the whole trail out).
//!
//! Cheap on purpose: a text without [`PIECE`] bytes in a row of hex digits and `%` (a method
//! name, an agent's name, most URLs) is looked at once and neither decoded nor copied.

use std::borrow::Cow;
use std::collections::HashSet;

pub const REDACTED: &str = "<secret>";
/// How many hex digits of a secret in a row count as a piece of it (32 bits). A shorter piece
/// says next to nothing of a 128- or 256-bit secret; a random text matches one of ours by
/// chance about once in 10^7 runs of this length.
pub const PIECE: usize = 8;
/// The navigation key's path follows it: `/<key>/tabtunnel/navigation`.
const DAEMON_PATH: &[u8] = b"/tabtunnel/";
const SHORTEST_KEY: usize = 32;
/// The longest text for people kept whole (a long URL fits; a page's megabytes do not).
pub const MAX_TEXT_BYTES: usize = 2048;

/// The secrets a text must not show.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Every [`PIECE`]-digit window of every secret, lowercase, packed into a u64.
    pieces: HashSet<u64>,
}

impl Redactor {
    pub fn new<S: AsRef<str>>(secrets: impl IntoIterator<Item = S>) -> Self {
        let mut redactor = Redactor::default();
        for secret in secrets {
            redactor.add(secret.as_ref());
        }
        redactor
    }

    /// Adds a secret; one of fewer than [`PIECE`] hex digits or with other characters is only
    /// found by its hex runs.
    pub fn add(&mut self, secret: &str) {
        let lower = secret.to_ascii_lowercase();
        for run in lower.as_bytes().split(|b| !b.is_ascii_hexdigit()) {
            self.pieces.extend(run.windows(PIECE).map(pack));
        }
    }

    /// `text` with every secret in it replaced by [`REDACTED`].
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if !might_hold_a_piece(text.as_bytes()) || self.plain_and_clean(text.as_bytes()) {
            return Cow::Borrowed(text);
        }
        self.decoded_text(text)
    }

    /// [`Self::text`] read as units (percent-decoded).
    fn decoded_text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let units = decode(text.as_bytes());
        let hidden = self.hidden(&units);
        if hidden.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (from, to) in hidden {
            out.push_str(&text[at..units[from].start]);
            out.push_str(REDACTED);
            at = units[to - 1].end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    /// Redacts a string in place (no copy when it holds no secret).
    /// `text`, redacted in place.
    pub fn string(&self, text: &mut String) {
        if let Cow::Owned(redacted) = self.text(text) {
            *text = redacted;
        }
    }

    /// A text for people (trail, panel), in place: redacted, then cut to [`MAX_TEXT_BYTES`] (on
    /// a character's boundary) with how much was cut said at its end. Not what goes back to an
    /// agent (a tool's screenshot is megabytes).
    fn for_people(&self, text: &mut String) {
        self.string(text);
        clip(text);
    }

    /// Every field of a question of the gesture guard's (listed in full, so that a new field
    /// does not slip past).
    pub fn question(&self, question: &mut tabtunnel_wire::gestures::GestureQuestion) {
        let tabtunnel_wire::gestures::GestureQuestion {
            gesture,
            origin,
            element,
            role,
            form,
            request,
            amounts,
            fields,
            reasons,
            kinds: _,
            rect: _,
        } = question;
        for text in [gesture, origin, element, role, form, request] {
            self.for_people(text);
        }
        for text in amounts.iter_mut().chain(fields.iter_mut()).chain(reasons.iter_mut()) {
            self.for_people(text);
        }
    }

    /// Every text of an approval request the side panel shows.
    fn approval(&self, request: &mut tabtunnel_wire::ApprovalRequest) {
        let tabtunnel_wire::ApprovalRequest {
            id: _,
            agent,
            tab_id: _,
            method,
            url,
            rule,
            gesture,
            standing_ms: _,
            remembers: _,
        } = request;
        for text in [agent, method, rule].into_iter().chain(url.as_mut()) {
            self.for_people(text);
        }
        if let Some(question) = gesture {
            self.question(question);
        }
    }

    /// Every text of an audit record.
    fn record(&self, record: &mut crate::AuditRecord) {
        let crate::AuditRecord { agent, tab: _, method, url, outcome, question, step, identity } = record;
        let crate::steps::Step { id: _, words } = step;
        self.for_people(words);
        let crate::Identity { token_id: _, client } = identity;
        if let Some(client) = client {
            self.for_people(client);
        }
        if let Cow::Owned(name) = self.text(agent.as_str()) {
            *agent = crate::AgentId::new(&name);
        }
        self.for_people(method);
        if let Some(url) = url {
            self.for_people(url);
        }
        match outcome {
            crate::Outcome::Allowed => {}
            crate::Outcome::Denied { rule }
            | crate::Outcome::AllowedBy { rule }
            | crate::Outcome::Standing { rule, .. }
            | crate::Outcome::Asked { rule, answer: _ } => self.for_people(rule),
        }
        if let Some(question) = question {
            self.question(question);
        }
    }

    /// Whatever leaves the core ([`crate::Core::poll_output`]), with every text a person reads
    /// redacted: the one place, so that a new output, frame or field is placed here (every
    /// match is exhaustive, every struct taken apart in full) before it can leave at all.
    pub fn output(&self, output: &mut crate::Output) {
        use crate::Output;
        match output {
            Output::Audit(record) => self.record(record),
            Output::ToExtension(frame) => self.to_extension(frame),
            // The agent's own frames (what it sent, what its tab answered), and no text.
            Output::ToClient { .. }
            | Output::CloseClient { .. }
            | Output::HandoverAnswered { .. }
            | Output::NavigationDecided { .. }
            | Output::KillSwitch { .. } => {}
        }
    }

    /// A frame for the extension: the side panel's texts redacted. Agents' names stay as they
    /// are (the extension answers with them; the owner chose them), and so do what the browser
    /// acts on (an agent's command, a tab operation's URL, the navigation endpoint) and what the
    /// human is shown on purpose (the client endpoint, an agent token minted for them, once).
    pub fn to_extension(&self, frame: &mut tabtunnel_wire::ToExtension) {
        use tabtunnel_wire::{Activity, AgentStatus, HandoverRequest, ToExtension, Welcome};
        match frame {
            ToExtension::Approval(request) => self.approval(request),
            ToExtension::HandoverRequest(HandoverRequest { id: _, agent: _, reason }) => {
                self.for_people(reason)
            }
            ToExtension::Agents { now_ms: _, agents } => {
                for status in agents {
                    let AgentStatus {
                        name: _,
                        connections: _,
                        sessions: _,
                        tabs: _,
                        last_action,
                        last_action_at_ms: _,
                        releases_at_ms: _,
                        recent,
                        token_id: _,
                        client,
                    } = status;
                    for text in last_action.iter_mut().chain(client.iter_mut()) {
                        self.for_people(text);
                    }
                    for Activity { method, url, outcome, at_ms: _, step, step_id: _, question: _ } in recent {
                        for text in [method, outcome, step].into_iter().chain(url.as_mut()) {
                            self.for_people(text);
                        }
                    }
                }
            }
            ToExtension::Rejected { reason } => self.for_people(reason),
            ToExtension::StandingAnswers { now_ms: _, answers } => {
                for tabtunnel_wire::gestures::StandingAnswer {
                    id: _,
                    agent,
                    origin,
                    kinds: _,
                    until_ms: _,
                } in answers
                {
                    self.for_people(agent);
                    self.for_people(origin);
                }
            }
            ToExtension::AgentTokenMinted { name: _, token: _, error } => {
                if let Some(text) = error {
                    self.for_people(text);
                }
            }
            ToExtension::Welcome(Welcome { daemon_version: _, client_endpoint: _, audit_trail }) => {
                if let Some(text) = audit_trail {
                    self.for_people(text);
                }
            }
            ToExtension::Command(_)
            | ToExtension::ResetTab { .. }
            | ToExtension::Browser(_)
            | ToExtension::HandoverWithdrawn { .. }
            | ToExtension::ApprovalWithdrawn { .. }
            | ToExtension::NavigationRules { .. }
            | ToExtension::AgentCredentials { .. }
            | ToExtension::PrepareTabs { .. }
            | ToExtension::Heartbeat => {}
        }
    }

    /// Whether `text` has no `%` (nothing to decode) and nothing [`Self::hidden`] would hide: the
    /// same reading on the bytes as they are, without the copy of the text as units (a
    /// screenshot's megabytes of base64 have runs of hex digits, but no `%`).
    fn plain_and_clean(&self, text: &[u8]) -> bool {
        if text.contains(&b'%') {
            return false;
        }
        let lower = |b: &u8| b.to_ascii_lowercase();
        let mut start = 0;
        while start < text.len() {
            if !text[start].is_ascii_hexdigit() {
                start += 1;
                continue;
            }
            let end = start + text[start..].iter().take_while(|b| b.is_ascii_hexdigit()).count();
            if end - start >= PIECE {
                let agent_token = start >= 4
                    && text[start - 4..start].iter().map(lower).eq(crate::AGENT_TOKEN_PREFIX.bytes());
                let daemon_path = end - start >= SHORTEST_KEY
                    && text[end..].iter().map(lower).take(DAEMON_PATH.len()).eq(DAEMON_PATH.iter().copied());
                let known = (start..=end - PIECE).any(|i| {
                    self.pieces
                        .contains(&text[i..i + PIECE].iter().fold(0, |acc, b| acc << 8 | u64::from(lower(b))))
                });
                if agent_token || daemon_path || known {
                    return false;
                }
            }
            start = end;
        }
        true
    }

    /// The spans of units to hide, as `[from, to)` unit indices, in order, not touching.
    fn hidden(&self, units: &[Unit]) -> Vec<(usize, usize)> {
        let mut hide = vec![false; units.len()];
        let mut start = 0;
        while start < units.len() {
            if !units[start].byte.is_ascii_hexdigit() {
                start += 1;
                continue;
            }
            let end = start + units[start..].iter().take_while(|u| u.byte.is_ascii_hexdigit()).count();
            let run: Vec<u8> = units[start..end].iter().map(|u| u.byte).collect();
            if run.len() >= PIECE {
                let agent_token = start >= 4
                    && units[start - 4..start].iter().map(|u| u.byte).eq(crate::AGENT_TOKEN_PREFIX.bytes());
                let daemon_path = run.len() >= SHORTEST_KEY
                    && units[end..]
                        .iter()
                        .map(|u| u.byte)
                        .take(DAEMON_PATH.len())
                        .eq(DAEMON_PATH.iter().copied());
                if agent_token || daemon_path {
                    hide[if agent_token { start - 4 } else { start }..end].fill(true);
                } else {
                    for (i, window) in run.windows(PIECE).enumerate() {
                        if self.pieces.contains(&pack(window)) {
                            hide[start + i..start + i + PIECE].fill(true);
                        }
                    }
                }
            }
            start = end;
        }
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for (i, _) in hide.iter().enumerate().filter(|(_, h)| **h) {
            match spans.last_mut() {
                Some((_, to)) if *to == i => *to = i + 1,
                _ => spans.push((i, i + 1)),
            }
        }
        spans
    }
}

/// One character of the text as read after percent-decoding: its lowercase byte and where it
/// is in the text.
struct Unit {
    byte: u8,
    start: usize,
    end: usize,
}

/// Cuts `text` to at most [`MAX_TEXT_BYTES`] and a note of the bytes cut.
fn clip(text: &mut String) {
    if text.len() <= MAX_TEXT_BYTES {
        return;
    }
    let whole = text.len();
    let mut end = MAX_TEXT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(&format!("… ({} more bytes)", whole - end));
}

/// Whether `text` has [`PIECE`] bytes in a row that are hex digits or `%`: the least any piece
/// of a secret takes, encoded or not.
fn might_hold_a_piece(text: &[u8]) -> bool {
    let mut run = 0;
    for b in text {
        run = if b.is_ascii_hexdigit() || *b == b'%' { run + 1 } else { 0 };
        if run >= PIECE {
            return true;
        }
    }
    false
}

/// The text as units: `%61`, `%2561`, `%252561`... (encoded once or more) read as `a`; any other
/// byte as itself, lowercase.
fn decode(text: &[u8]) -> Vec<Unit> {
    let mut units = Vec::with_capacity(text.len());
    let mut at = 0;
    while at < text.len() {
        let (byte, len) = percent_decoded(&text[at..]).unwrap_or((text[at], 1));
        units.push(Unit { byte: byte.to_ascii_lowercase(), start: at, end: at + len });
        at += len;
    }
    units
}

/// `%XY`, with any number of `25` (an encoded `%`) between the `%` and `XY`: the byte and the
/// length taken.
fn percent_decoded(text: &[u8]) -> Option<(u8, usize)> {
    if text.first() != Some(&b'%') {
        return None;
    }
    let mut at = 1;
    loop {
        let byte = hex_pair(text.get(at..at + 2)?)?;
        at += 2;
        if byte != b'%' || hex_pair(text.get(at..at + 2).unwrap_or_default()).is_none() {
            return Some((byte, at));
        }
    }
}

fn hex_pair(pair: &[u8]) -> Option<u8> {
    let digit = |b: u8| (b as char).to_digit(16);
    match pair {
        [a, b] => Some((digit(*a)? * 16 + digit(*b)?) as u8),
        _ => None,
    }
}

fn pack(window: &[u8]) -> u64 {
    window.iter().fold(0, |acc, b| acc << 8 | u64::from(*b))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWNER: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    const KEY: &str = "fedcba9876543210fedcba9876543210";

    fn redactor() -> Redactor {
        Redactor::new([OWNER, KEY])
    }

    fn percent_encoded(text: &str) -> String {
        text.bytes().map(|b| format!("%{b:02X}")).collect()
    }

    #[test]
    fn a_secret_goes_whole_in_part_in_any_case_and_encoded() {
        let r = redactor();
        let cases = [
            (
                format!("http://127.0.0.1:9722/{OWNER}/json/version"),
                "http://127.0.0.1:9722/<secret>/json/version",
            ),
            // A piece: 40 digits of it in a query string, or cut short with an ellipsis.
            (format!("https://x/?t={}&z=1", &OWNER[..40]), "https://x/?t=<secret>&z=1"),
            (format!("origin of http://h/{}…", &OWNER[..20]), "origin of http://h/<secret>…"),
            (format!("/{}/", OWNER.to_ascii_uppercase()), "/<secret>/"),
            // Inside a %2F-separated URL in a query string, and with its own digits encoded.
            (format!("?u=http%3A%2F%2Fh%2F{OWNER}%2Fjson"), "?u=http%3A%2F%2Fh%2F<secret>%2Fjson"),
            (format!("?u={}", percent_encoded(OWNER)), "?u=<secret>"),
            (format!("?u={}", percent_encoded(OWNER).to_ascii_lowercase()), "?u=<secret>"),
            (format!("?u={}", percent_encoded(OWNER).replace('%', "%25")), "?u=<secret>"),
            (format!("?u={}", percent_encoded(OWNER).replace('%', "%2525")), "?u=<secret>"),
            (format!("http://h/{KEY}/tabtunnel/navigation?x"), "http://h/<secret>/tabtunnel/navigation?x"),
        ];
        for (text, expected) in cases {
            assert_eq!(r.text(&text), expected, "{text}");
        }
    }

    #[test]
    fn agent_tokens_go_by_shape() {
        let r = Redactor::default();
        let agent = format!("tta_{}", "0f".repeat(32));
        assert_eq!(r.text(&format!("?t={agent}&z")), "?t=<secret>&z");
        assert_eq!(r.text(&format!("?t={}", &agent[..30])), "?t=<secret>");
        assert_eq!(r.text(&format!("?t=%74ta%5F{}", percent_encoded(&agent[4..]))), "?t=<secret>");
        // And any navigation key, known or not, by its path.
        let key = "ab".repeat(16);
        assert_eq!(
            r.text(&format!("h/{key}%2Ftabtunnel%2Fnavigation")),
            "h/<secret>%2Ftabtunnel%2Fnavigation"
        );
    }

    #[test]
    fn other_texts_stay_as_they_are_and_uncopied() {
        let r = redactor();
        for text in [
            "Runtime.evaluate",
            "https://github.com/o/r/commit/9f1c2e3d4b5a69788796a5b4c3d2e1f0a9b8c7d6",
            "https://x/?id=550e8400-e29b-41d4-a716-446655440000",
            "tta_short, tta_, %%%%%%%%%%, %2F%2F%2F%2F, 100%25%25%25",
            &OWNER[..PIECE - 1],
            "ünïcödé 0123456 € %E2%82%AC",
        ] {
            assert!(matches!(r.text(text), Cow::Borrowed(t) if t == text), "{text}");
        }
        assert_eq!(Redactor::new([""]).text(OWNER), OWNER);
    }

    /// The shortcut for texts without `%` reads them as the units would.
    #[test]
    fn plain_texts_read_the_same_without_the_units() {
        let r = redactor();
        let agent = format!("tta_{}", "0F".repeat(32));
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let alphabet = b"0123456789abcdefABCDEF+/=tT_g.";
        for round in 0..2000 {
            let mut text: String = (0..64)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    alphabet[(seed % alphabet.len() as u64) as usize] as char
                })
                .collect();
            match round % 5 {
                0 => text.insert_str(20, &OWNER[7..31].to_ascii_uppercase()),
                1 => text.insert_str(10, &agent[..20]),
                2 => text.insert_str(5, &format!("{}/TabTunnel/x", "c".repeat(32))),
                3 => text.insert_str(30, &KEY[..PIECE]),
                _ => {}
            }
            let shortcut = matches!(r.text(&text), Cow::Borrowed(_));
            let units = matches!(r.decoded_text(&text), Cow::Borrowed(_));
            assert_eq!(shortcut, units, "{text}");
            assert_eq!(r.text(&text), r.decoded_text(&text), "{text}");
        }
    }

    /// Through the core: a denied navigation, an asked one, a page's own navigation, a hand-over
    /// request and a gesture question, each naming every kind of secret in some form; no text
    /// the trail or the side panel gets holds a piece of one.
    #[test]
    fn no_text_the_core_writes_for_people_holds_a_secret() {
        use crate::testing::*;
        use serde_json::json;
        use tabtunnel_wire::{ApprovalAnswer, FromExtension, ToExtension};
        let extension = "e".repeat(24) + &"5".repeat(40);
        let agent_token = format!("tta_{}", "a1".repeat(32));
        let mut h = Harness {
            core: crate::Core::new(crate::Config {
                browser_target_id: BROWSER_ID.into(),
                session_id_salt: 1,
                limits: crate::Limits::default(),
                navigation_url: format!("http://127.0.0.1:9/{KEY}/tabtunnel/navigation"),
                secrets: vec![OWNER.into(), extension.clone(), KEY.into()],
                prepare_tabs: false,
                private_dirs: Vec::new(),
            }),
            now: 0,
        };
        h.core.extension_connected(h.now, hello(&[])).unwrap();
        h.core.set_policy(
            h.now,
            Some(default_policy(
                json!({ "allow_origins": ["https://ok.test"], "ask_origins": ["https://ask.test"] }),
            )),
        );
        h.ext(FromExtension::TabShared(agent_tab(1, "scout", true)));
        h.connect_as(1, "scout");
        let page = h.playwright_attach(1)[0].clone();
        h.drain();
        // Every form: whole, a 40-digit piece in a query, upper case, encoded, in a %2F path.
        let named = format!(
            "/{OWNER}/json/version?e={}&E={}&t={agent_token}&n=%2F{KEY}%2Ftabtunnel&o={}",
            &extension[..40],
            extension.to_ascii_uppercase(),
            percent_encoded(OWNER),
        );
        let mut written = Vec::new();
        let mut steps = Vec::new();
        let navigate = |h: &mut Harness, id: u64, url: String| {
            h.send(1, json!({"id": id, "sessionId": page, "method": "Page.navigate", "params": {"url": url}}))
        };
        steps.push(navigate(&mut h, 1, format!("http://127.0.0.1:9{named}")));
        steps.push(navigate(&mut h, 2, format!("https://ask.test{named}")));
        let asked = steps[1].extension.iter().find_map(|f| match f {
            ToExtension::Approval(r) => Some(r.id),
            _ => None,
        });
        steps.push(
            h.ext(FromExtension::ApprovalAnswer { id: asked.expect("asked"), answer: ApprovalAnswer::Deny }),
        );
        h.core.navigation_requested(
            h.now,
            7,
            &crate::AgentId::new("scout"),
            1,
            &format!("https://no.test{named}"),
        );
        steps.push(h.drain());
        let method = format!("Page.{agent_token}");
        steps.push(h.send(1, json!({"id": 3, "sessionId": page, "method": method, "params": {}})));
        h.core.request_handover(h.now, &crate::AgentId::new("scout"), &format!("please, {named}"));
        steps.push(h.tick(1));
        let mut question = tabtunnel_wire::gestures::GestureQuestion {
            gesture: "click".into(),
            origin: format!("https://pay.test{named}"),
            element: named.clone(),
            form: format!("POST https://pay.test{named}"),
            request: format!("POST https://pay.test{named}"),
            reasons: vec![named.clone()],
            ..Default::default()
        };
        question.amounts = question.reasons.clone();
        question.fields = question.reasons.clone();
        h.core.ask_human(
            &crate::AgentId::new("scout"),
            Some(1),
            "Input.dispatchMouseEvent",
            None,
            format!("the gesture guard: {named}"),
            Some((question.clone(), Default::default())),
            crate::awaiting_human::AwaitingHuman::Navigation { id: 8 },
            None,
        );
        steps.push(h.drain());
        // A standing answer given on that origin: the panel's list, and the trail's record.
        h.core.give_standing(crate::gestures::Standing {
            agent: crate::AgentId::new("scout"),
            origin: format!("https://pay.test{named}"),
            kinds: vec![tabtunnel_wire::gestures::GestureKind::Sending],
            until: Some(h.now + 60_000),
        });
        steps.push(h.drain());
        h.core.resend_questions();
        steps.push(h.tick(2));
        for step in &steps {
            // What the side panel shows (a command relayed to the tab is the agent's own).
            let shown = step.extension.iter().filter(|f| {
                matches!(
                    f,
                    ToExtension::Approval(_)
                        | ToExtension::HandoverRequest(_)
                        | ToExtension::Agents { .. }
                        | ToExtension::StandingAnswers { .. }
                )
            });
            written.extend(shown.map(|f| serde_json::to_string(f).unwrap()));
            written.extend(step.other.iter().filter_map(|o| match o {
                crate::Output::Audit(record) => Some(format!("{record:?}")),
                _ => None,
            }));
        }
        let all = written.join("\n");
        for kind in [
            "Denied",
            "Asked",
            "Standing",
            "standingAnswers",
            "handoverRequest",
            "approval",
            "recent",
            "lastAction\":\"Page.<secret>",
        ] {
            assert!(all.contains(kind), "{kind} missing from {all}");
        }
        for text in &written {
            for secret in [OWNER, &extension, KEY, &agent_token[4..]] {
                assert_holds_no_piece(text, secret);
            }
        }
    }

    /// An agent's huge URL (or label, or method name) goes into no text for people whole: six
    /// refused navigations to a 17 MB URL rotated the whole trail out.
    #[test]
    fn a_huge_text_is_cut_wherever_it_lands() {
        use crate::testing::*;
        use serde_json::json;
        let mut h = Harness::new();
        h.core.extension_connected(h.now, hello(&[])).unwrap();
        h.core.set_policy(h.now, Some(default_policy(json!({ "allow_origins": ["https://ok.test"] }))));
        h.ext(tabtunnel_wire::FromExtension::TabShared(agent_tab(1, "scout", true)));
        h.connect_as(1, "scout");
        let page = h.playwright_attach(1)[0].clone();
        h.drain();
        // Multi-byte characters across the cut: it must fall on a character's boundary.
        let url = format!("https://no.test/{}", "é".repeat(100_000));
        let step =
            h.send(1, json!({"id": 1, "sessionId": page, "method": "Page.navigate", "params": {"url": url}}));
        let record = step
            .other
            .iter()
            .find_map(|o| match o {
                crate::Output::Audit(record) => Some(record.clone()),
                _ => None,
            })
            .expect("the refusal is on the trail");
        let crate::Outcome::Denied { rule } = &record.outcome else { panic!("{:?}", record.outcome) };
        for text in [record.url.as_deref().unwrap(), rule.as_str()] {
            assert!(text.len() <= MAX_TEXT_BYTES + 32, "{} bytes", text.len());
            assert!(text.ends_with("more bytes)"), "{}", &text[text.len() - 40..]);
        }
        let short = "https://no.test/short".to_owned();
        let mut same = short.clone();
        redactor().string(&mut same);
        assert_eq!(same, short, "a short text stays as it is");
    }

    /// Independent of [`Redactor`]: decodes every layer of percent-encoding, then looks for any
    /// [`PIECE`] digits of `secret` in a row.
    fn assert_holds_no_piece(text: &str, secret: &str) {
        let mut plain = text.to_ascii_lowercase();
        for _ in 0..4 {
            let bytes = plain.as_bytes();
            let mut out = Vec::new();
            let mut i = 0;
            while i < bytes.len() {
                match (
                    bytes[i],
                    bytes
                        .get(i + 1..i + 3)
                        .and_then(|p| u8::from_str_radix(std::str::from_utf8(p).ok()?, 16).ok()),
                ) {
                    (b'%', Some(byte)) => {
                        out.push(byte.to_ascii_lowercase());
                        i += 3;
                    }
                    (byte, _) => {
                        out.push(byte);
                        i += 1;
                    }
                }
            }
            plain = String::from_utf8_lossy(&out).into_owned();
        }
        for piece in secret.as_bytes().windows(PIECE) {
            let piece = std::str::from_utf8(piece).unwrap();
            assert!(!plain.contains(piece), "{piece} of a secret in {text}");
        }
    }
}
