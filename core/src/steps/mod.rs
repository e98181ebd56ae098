//! Steps in words: what a person would say an agent did, one line per step, made from what the
//! audit trail gets (the method, the navigation's URL, the outcome, the gesture guard's question)
//! and the element the guard read at a press or a key. Keystrokes, mouse moves, releases and
//! protocol set-up fold into the step they belong to; a client's scripts right before an input
//! (its locating and waiting) fold into that input; a raw method name shows only when nothing
//! better is known.
//!
//! Sans-IO and online: each record gets its step's id and the words so far. A later record may
//! carry the same id with better words (more characters typed, the element named), so whoever
//! shows steps keeps the last words of each id (`audit::Recent`, `tabtunnel audit`). Never what
//! was typed: only how many characters.

use crate::audit_record::Outcome;
pub use crate::audit_record::Step;
use serde::Deserialize;
use std::collections::BTreeMap;
use tabtunnel_wire::gestures::GestureQuestion;
use tabtunnel_wire::TabId;

/// What the folder is fed: what the audit record holds, plus an `Input` command's params.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    pub tab: Option<TabId>,
    pub method: &'a str,
    /// Read for `Input.*` only (which key, how many characters, which mouse event).
    pub params: Option<&'a str>,
    pub url: Option<&'a str>,
    pub outcome: &'a Outcome,
    pub question: Option<&'a GestureQuestion>,
}

/// Longest element name or URL kept in words, in characters.
const MAX_NAME: usize = 60;

/// An agent's steps: the one under way, and where each of its tabs is.
#[derive(Debug, Default)]
pub struct Steps {
    current: Option<Current>,
    last_id: u64,
    /// Each tab's host, from the agent's own navigations, for "ran a script on <host>".
    hosts: BTreeMap<TabId, String>,
}

#[derive(Debug, Clone)]
struct Current {
    id: u64,
    tab: Option<TabId>,
    kind: Kind,
    /// The element the guard read for it (clicks and keys), or a field clicked just before.
    element: Option<String>,
    words: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// Set-up and probing only so far: any act on its tab takes it over, unless it added a
    /// script every page the tab loads runs (that stays said).
    Setup {
        script: bool,
    },
    /// Scripts: an input on its tab takes it over (they were the client locating and waiting).
    Script,
    Typed(u64),
    Key(String),
    Click {
        double: bool,
        at: (i64, i64),
        editable: bool,
    },
    /// Anything else; a next event with the same words folds into it.
    Plain,
}

/// What one event does to the steps.
enum Act {
    /// Folds into the step under way (a key's release, a mouse move, a node resolved).
    Quiet,
    /// A script for every document the tab loads: part of setting a page up, but said.
    SetupScript,
    Script,
    Typed(u64),
    Key(String),
    Click {
        double: bool,
        at: (i64, i64),
    },
    /// A navigation of the agent's tab to this URL, with these words.
    Went(String, String),
    Plain(String),
}

impl Steps {
    /// Folds one event into the steps: the step it belongs to and the words for it now.
    pub fn fold(&mut self, event: Event<'_>) -> Step {
        let words = match event.outcome {
            Outcome::Denied { rule } => Some(format!("was refused: {} ({rule})", self.what(&event))),
            Outcome::Asked { answer, rule } => Some(asked(&self.what(&event), event.question, answer, rule)),
            Outcome::Standing { event, rule } => Some(format!("{rule}: {event}")),
            // Allowed by a choice of the policy's: the act's own words (the trail keeps the rule).
            Outcome::Allowed | Outcome::AllowedBy { .. } => None,
        };
        let act = match words {
            Some(words) => Act::Plain(words),
            None => self.act(&event),
        };
        self.apply(event.tab, act)
    }

    /// The guard read the element an input of the agent's acts on: the step under way on that
    /// tab is named after it (a click's button, the field a key went to).
    pub fn element(&mut self, tab: TabId, name: &str, editable: bool) -> Option<Step> {
        let current = self.current.as_mut().filter(|c| c.tab == Some(tab))?;
        let name = name.trim();
        if name.is_empty() || !matches!(current.kind, Kind::Click { .. } | Kind::Key(_) | Kind::Typed(_)) {
            return None;
        }
        current.element = Some(short(name));
        if let Kind::Click { editable: e, .. } = &mut current.kind {
            *e = editable;
        }
        current.words = words_of(current);
        Some(Step { id: current.id, words: current.words.clone() })
    }

    /// What a refused or asked command was about, briefly.
    fn what(&self, event: &Event<'_>) -> String {
        match (event.method, event.url) {
            ("Page.navigate" | "Target.createTarget" | "navigation" | "popup", Some(url)) => {
                format!("opening {}", place(url))
            }
            ("frame", Some(url)) => format!("a frame of {}", place(url)),
            (method, _) => method.to_owned(),
        }
    }

    fn act(&mut self, event: &Event<'_>) -> Act {
        let method = event.method;
        if let Some(domain_method) = method.strip_prefix("Input.") {
            return input(domain_method, event.params);
        }
        let url = event.url.unwrap_or_default();
        match method {
            "Page.navigate" => Act::Went(url.to_owned(), format!("opened {}", place(url))),
            "Target.createTarget" if url.is_empty() || url == "about:blank" => {
                Act::Went(String::new(), "opened a new tab".into())
            }
            "Target.createTarget" => Act::Went(url.to_owned(), format!("opened a new tab at {}", place(url))),
            "navigation" => Act::Went(url.to_owned(), format!("the page went on to {}", place(url))),
            "Page.reload" => Act::Plain("reloaded the page".into()),
            "Page.navigateToHistoryEntry" => Act::Plain("went back or forward in the tab's history".into()),
            "Page.addScriptToEvaluateOnNewDocument" => Act::SetupScript,
            _ if is_script(method) => Act::Script,
            _ if is_quiet(method) => Act::Quiet,
            _ => Act::Plain(read_or_change(method).map_or_else(|| method.to_owned(), str::to_owned)),
        }
    }

    fn apply(&mut self, tab: Option<TabId>, act: Act) -> Step {
        if let (Act::Quiet, Some(current)) = (&act, &self.current) {
            return Step { id: current.id, words: current.words.clone() };
        }
        let same_tab = self.current.as_ref().is_some_and(|c| c.tab == tab);
        let kind = self.current.as_ref().map(|c| c.kind.clone());
        // Whether the step under way goes on (`Some`, with its new kind), or a new one starts.
        let (kind, fresh) = match (act, kind) {
            (Act::Quiet, _) => (Kind::Setup { script: false }, true),
            (Act::SetupScript, Some(Kind::Setup { .. })) if same_tab => (Kind::Setup { script: true }, false),
            (Act::SetupScript, _) => (Kind::Setup { script: true }, true),
            (Act::Script, Some(Kind::Setup { script: false } | Kind::Script)) if same_tab => {
                (Kind::Script, false)
            }
            (Act::Script, _) => (Kind::Script, true),
            (Act::Typed(n), Some(Kind::Typed(m))) if same_tab => (Kind::Typed(m + n), false),
            (Act::Typed(n), Some(Kind::Setup { script: false } | Kind::Script)) if same_tab => {
                (Kind::Typed(n), false)
            }
            (Act::Typed(n), _) => (Kind::Typed(n), true),
            (Act::Key(key), Some(Kind::Key(k))) if same_tab && key == k => (Kind::Key(k), false),
            (Act::Key(key), Some(Kind::Setup { script: false } | Kind::Script)) if same_tab => {
                (Kind::Key(key), false)
            }
            (Act::Key(key), _) => (Kind::Key(key), true),
            (Act::Click { double: true, .. }, Some(Kind::Click { at, editable, .. })) if same_tab => {
                (Kind::Click { double: true, at, editable }, false)
            }
            (Act::Click { double, at }, Some(Kind::Setup { script: false } | Kind::Script)) if same_tab => {
                (Kind::Click { double, at, editable: false }, false)
            }
            (Act::Click { double, at }, _) => (Kind::Click { double, at, editable: false }, true),
            (Act::Went(url, words), previous) => {
                if let Some(tab) = tab.filter(|_| !url.is_empty()) {
                    self.hosts.insert(tab, host(&url));
                }
                let takes_over = same_tab && previous == Some(Kind::Setup { script: false });
                let same = self.current.as_ref().is_some_and(|c| c.words == words) && same_tab;
                return self.set(tab, Kind::Plain, words, !(takes_over || same));
            }
            (Act::Plain(words), previous) => {
                let same = self.current.as_ref().is_some_and(|c| c.words == words) && same_tab;
                let takes_over = same_tab && previous == Some(Kind::Setup { script: false });
                return self.set(tab, Kind::Plain, words, !(takes_over || same));
            }
        };
        // A field clicked just before typing into it names what was typed into.
        let field = match (&self.current, &kind) {
            (Some(Current { kind: Kind::Click { editable: true, .. }, element, .. }), Kind::Typed(_))
                if fresh && same_tab =>
            {
                element.clone()
            }
            _ => None,
        };
        let words = match (&kind, &self.current) {
            (Kind::Script, _) => match tab.and_then(|t| self.hosts.get(&t)) {
                Some(host) if !host.is_empty() => format!("ran a script on {host}"),
                _ => "ran a script".to_owned(),
            },
            (Kind::Setup { script: false }, _) => "prepared the tab".to_owned(),
            (Kind::Setup { script: true }, _) => {
                "prepared the tab, with a script for every page it loads".to_owned()
            }
            (Kind::Plain, Some(c)) => c.words.clone(),
            _ => String::new(), // made below, with the element
        };
        let keeps_element = !fresh && matches!(kind, Kind::Typed(_) | Kind::Key(_) | Kind::Click { .. });
        let element =
            if keeps_element { self.current.as_ref().and_then(|c| c.element.clone()) } else { field };
        let id = if fresh { self.next_id() } else { self.current.as_ref().map_or(0, |c| c.id) };
        let mut current = Current { id, tab, kind, element, words };
        if current.words.is_empty() {
            current.words = words_of(&current);
        }
        let step = Step { id, words: current.words.clone() };
        self.current = Some(current);
        step
    }

    fn set(&mut self, tab: Option<TabId>, kind: Kind, words: String, fresh: bool) -> Step {
        let id = match (&self.current, fresh) {
            (Some(c), false) => c.id,
            _ => self.next_id(),
        };
        self.current = Some(Current { id, tab, kind, element: None, words: words.clone() });
        Step { id, words }
    }

    fn next_id(&mut self) -> u64 {
        self.last_id += 1;
        self.last_id
    }
}

/// The words of a step made of inputs.
fn words_of(current: &Current) -> String {
    let element = current.element.as_deref();
    match &current.kind {
        Kind::Typed(n) => {
            let chars = if *n == 1 { "1 character".to_owned() } else { format!("{n} characters") };
            match element {
                Some(e) => format!("typed {chars} into \"{e}\""),
                None => format!("typed {chars}"),
            }
        }
        Kind::Key(key) => match element {
            Some(e) => format!("pressed {key} in \"{e}\""),
            None => format!("pressed {key}"),
        },
        Kind::Click { double, at, .. } => {
            let verb = if *double { "double-clicked" } else { "clicked" };
            match element {
                Some(e) => format!("{verb} \"{e}\""),
                None => format!("{verb} at ({}, {})", at.0, at.1),
            }
        }
        _ => current.words.clone(),
    }
}

/// `rule` adds to the words of a refusal standing from before: how many more retries it met
/// (`crate::gestures::refusals`), said after the guard's name.
fn asked(what: &str, question: Option<&GestureQuestion>, answer: &str, rule: &str) -> String {
    let subject = match question {
        Some(q) if !q.element.trim().is_empty() => short(&q.element),
        Some(q) if !q.gesture.is_empty() => format!("{} on {}", q.gesture, place(&q.origin)),
        _ => what.to_owned(),
    };
    let answered = match answer {
        "allowed once" => "you allowed it once",
        "always allowed" => "you always allow it",
        "denied" => "you denied",
        "not answered in time" => "you did not answer in time",
        other if other.starts_with("denied") => {
            let retries = rule.strip_prefix(crate::gestures::RULE).and_then(|r| r.strip_prefix(": "));
            return match retries {
                Some(retries) => format!("asked you: {subject}, you had just denied it ({retries})"),
                None => format!("asked you: {subject}, you had just denied it"),
            };
        }
        _ => return format!("asked you: {subject}, answer: {answer}"),
    };
    format!("asked you: {subject}, {answered}")
}

/// The fields of an `Input` command the words need.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct InputParams {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    key: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    modifiers: i64,
    #[serde(default)]
    click_count: i64,
    #[serde(default)]
    button: String,
    #[serde(default)]
    x: f64,
    #[serde(default)]
    y: f64,
}

/// Keys that say something of their own (the rest of a keyboard types characters).
const NAMED_KEYS: &[&str] = &[
    "Enter",
    "Tab",
    "Escape",
    "Backspace",
    "Delete",
    "ArrowUp",
    "ArrowDown",
    "ArrowLeft",
    "ArrowRight",
    "Home",
    "End",
    "PageUp",
    "PageDown",
    "Insert",
    "F1",
    "F2",
    "F3",
    "F4",
    "F5",
    "F6",
    "F7",
    "F8",
    "F9",
    "F10",
    "F11",
    "F12",
];

fn input(method: &str, params: Option<&str>) -> Act {
    let p: InputParams = params.and_then(|p| serde_json::from_str(p).ok()).unwrap_or_default();
    match method {
        "dispatchKeyEvent" if matches!(p.kind.as_str(), "keyDown" | "rawKeyDown" | "char") => {
            // Alt (1), Ctrl (2), Meta (4): a shortcut, not typing.
            let shortcut = p.modifiers & 0b111 != 0 && !matches!(p.key.as_str(), "Alt" | "Control" | "Meta");
            let enter = p.key == "Enter" || p.text == "\r" || p.text == "\n";
            if shortcut && !p.key.is_empty() {
                let mut name = String::new();
                for (bit, label) in [(2, "Ctrl+"), (4, "Meta+"), (1, "Alt+"), (8, "Shift+")] {
                    if p.modifiers & bit != 0 {
                        name.push_str(label);
                    }
                }
                name.push_str(&short(&p.key));
                return if p.kind == "char" { Act::Quiet } else { Act::Key(name) };
            }
            if enter || NAMED_KEYS.contains(&p.key.as_str()) {
                let key = if enter { "Enter".to_owned() } else { p.key };
                // A `char` after its `rawKeyDown` is the same press.
                return if p.kind == "char" { Act::Quiet } else { Act::Key(key) };
            }
            // Text comes with `keyDown` or with `char` (after a bare `rawKeyDown`), never both.
            match p.text.chars().filter(|c| !c.is_control()).count() as u64 {
                0 => Act::Quiet,
                n if p.kind != "rawKeyDown" => Act::Typed(n),
                _ => Act::Quiet,
            }
        }
        "insertText" => match p.text.chars().count() as u64 {
            0 => Act::Quiet,
            n => Act::Typed(n),
        },
        "dispatchMouseEvent" | "emulateTouchFromMouseEvent" if p.kind == "mousePressed" => {
            let at = (p.x.round() as i64, p.y.round() as i64);
            if p.button == "right" {
                return Act::Plain("right-clicked".into());
            }
            Act::Click { double: p.click_count >= 2, at }
        }
        "dispatchMouseEvent" if p.kind == "mouseWheel" => Act::Plain("scrolled the page".into()),
        "dispatchTouchEvent" if p.kind == "touchStart" => Act::Plain("tapped the page".into()),
        "synthesizeTapGesture" => Act::Plain("tapped the page".into()),
        "synthesizeScrollGesture" => Act::Plain("scrolled the page".into()),
        "synthesizePinchGesture" => Act::Plain("zoomed the page".into()),
        "dispatchDragEvent" if p.kind == "drop" => Act::Plain("dragged and dropped".into()),
        "setIgnoreInputEvents" => Act::Plain("Input.setIgnoreInputEvents".into()),
        _ => Act::Quiet,
    }
}

/// Methods that run the client's code in the page.
fn is_script(method: &str) -> bool {
    matches!(
        method,
        "Runtime.evaluate"
            | "Runtime.callFunctionOn"
            | "Runtime.compileScript"
            | "Runtime.runScript"
            | "Debugger.evaluateOnCallFrame"
    )
}

/// Set-up and probing a client does around what it does: they neither read what a person
/// would call the page nor change it.
fn is_quiet(method: &str) -> bool {
    let (domain, name) = method.split_once('.').unwrap_or((method, ""));
    match domain {
        "Debugger" | "Log" | "Profiler" | "HeapProfiler" | "Performance" | "Audits" | "CSS" | "Overlay"
        | "Autofill" | "Inspector" | "Tracing" | "WebMCP" => true,
        "DOM" => matches!(
            name,
            "resolveNode"
                | "describeNode"
                | "requestNode"
                | "pushNodesByBackendIdsToFrontend"
                | "pushNodeByPathToFrontend"
                | "getBoxModel"
                | "getContentQuads"
                | "scrollIntoViewIfNeeded"
                | "getFrameOwner"
                | "getNodeForLocation"
                | "querySelector"
                | "querySelectorAll"
                | "focus"
                | "requestChildNodes"
                | "setInspectedNode"
                | "markUndoableState"
        ),
        "Runtime" => matches!(
            name,
            "addBinding"
                | "removeBinding"
                | "getIsolateId"
                | "getProperties"
                | "awaitPromise"
                | "getHeapUsage"
                | "setAsyncCallStackDepth"
                | "discardConsoleEntries"
                | "releaseObject"
                | "releaseObjectGroup"
                | "runIfWaitingForDebugger"
                | "globalLexicalScopeNames"
        ),
        "Page" => matches!(
            name,
            "createIsolatedWorld"
                | "getLayoutMetrics"
                | "getResourceTree"
                | "getFrameTree"
                | "getNavigationHistory"
                | "setLifecycleEventsEnabled"
                | "setInterceptFileChooserDialog"
                | "setPrerenderingAllowed"
                | "screencastFrameAck"
                | "stopLoading"
                | "addCompilationCache"
                | "removeScriptToEvaluateOnNewDocument"
                | "waitForDebugger"
                | "getAppManifest"
                | "setFontFamilies"
                | "setFontSizes"
        ),
        "Network" => matches!(name, "setAttachDebugStack" | "setCacheDisabled" | "setBypassServiceWorker"),
        "Emulation" => matches!(
            name,
            "setFocusEmulationEnabled"
                | "setAutoDarkModeOverride"
                | "setEmulatedMedia"
                | "setDefaultBackgroundColorOverride"
        ),
        "Storage" => name == "getStorageKey",
        "Target" => !matches!(name, "closeTarget" | "activateTarget"),
        "Browser" => true,
        _ => name == "enable" || name == "disable",
    }
}

/// Words for what reads or changes the page or the browser's data.
fn read_or_change(method: &str) -> Option<&'static str> {
    let (domain, name) = method.split_once('.').unwrap_or((method, ""));
    Some(match (domain, name) {
        ("Accessibility", _) => "read the page (accessibility snapshot)",
        ("DOMSnapshot", _) => "read the page (DOM snapshot)",
        (
            "DOM",
            "getDocument" | "getFlattenedDocument" | "getOuterHTML" | "getSearchResults" | "performSearch",
        ) => "read the page (DOM)",
        ("DOM", "setFileInputFiles") => "attached a file",
        ("DOM", _) => "changed the page's DOM",
        ("Page", "captureScreenshot" | "captureSnapshot") => "took a screenshot",
        ("Page", "startScreencast") => "watched the tab (screencast)",
        ("Page", "printToPDF") => "saved the page as a PDF",
        ("Page", "close") | ("Target", "closeTarget") => "closed a tab",
        ("Target", "activateTarget") => "brought its tab forward",
        ("Page", "bringToFront") => "brought its tab forward",
        ("Page", "handleJavaScriptDialog") => "answered a dialog",
        ("Page", "setBypassCSP") => "turned off the page's content security policy",
        ("Network" | "Storage", "getCookies" | "getAllCookies") => "read cookies",
        ("Network" | "Storage", "setCookie" | "setCookies") => "set cookies",
        ("Network" | "Storage", "deleteCookies" | "clearBrowserCookies" | "clearCookies") => {
            "deleted cookies"
        }
        ("Network" | "Fetch", "getResponseBody") => "read a response",
        ("Network", "getRequestPostData") => "read a request's body",
        ("Network", "setExtraHTTPHeaders") => "added headers to its requests",
        ("Network", "setUserAgentOverride") | ("Emulation", _) => "changed the device the page sees",
        ("Fetch", _) => "handled intercepted requests",
        ("DOMStorage" | "IndexedDB" | "CacheStorage", n)
            if n.starts_with("get") || n.starts_with("request") =>
        {
            "read site storage"
        }
        ("DOMStorage" | "IndexedDB" | "CacheStorage" | "Storage", _) => "changed site storage",
        _ => return None,
    })
}

/// Where a URL is, as a person reads it: host and path (no scheme, query or fragment), short.
fn place(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let (host_part, path) = rest.split_once('/').map_or((rest, ""), |(h, p)| (h, p));
    // No credentials a URL may carry before its host.
    let host_part = host_part.rsplit('@').next().unwrap_or_default();
    let rest = format!("{host_part}/{path}");
    let rest = rest.strip_suffix('/').unwrap_or(&rest);
    if rest.is_empty() {
        return short(url);
    }
    short(rest)
}

fn host(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    // No credentials a URL may carry before its host.
    short(host.rsplit('@').next().unwrap_or_default())
}

/// At most [`MAX_NAME`] characters, whitespace runs as one space.
fn short(text: &str) -> String {
    let mut out = String::new();
    for (i, word) in text.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(word);
    }
    if out.chars().count() > MAX_NAME {
        out = out.chars().take(MAX_NAME - 1).collect();
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests;
