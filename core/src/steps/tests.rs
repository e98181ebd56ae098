use super::*;

/// Replays a trace (`tab<TAB>method<TAB>url<TAB>params`, the commands a client sent that the
/// audit trail gets, from `shared/reference/cdp-traces`): the final words of each step, in order.
fn replay(trace: &str) -> Vec<String> {
    let mut steps = Steps::default();
    let mut shown: Vec<(u64, String)> = Vec::new();
    for event in events(trace) {
        push(&mut shown, steps.fold(event));
    }
    shown.into_iter().map(|(_, words)| words).collect()
}

static ALLOWED: Outcome = Outcome::Allowed;

/// A trace's lines as the events the folder is fed.
fn events(trace: &str) -> Vec<Event<'_>> {
    let lines = trace.lines().filter(|l| !l.is_empty());
    lines
        .map(|line| {
            let mut fields = line.split('\t');
            let tab = fields.next().and_then(|t| t.parse().ok());
            let method = fields.next().unwrap();
            let url = fields.next().filter(|u| !u.is_empty());
            let params = fields.next().filter(|p| !p.is_empty());
            Event { tab, method, params, url, outcome: &ALLOWED, question: None }
        })
        .collect()
}

fn push(shown: &mut Vec<(u64, String)>, step: Step) {
    match shown.last_mut() {
        Some(last) if last.0 == step.id => last.1 = step.words,
        _ => shown.push((step.id, step.words)),
    }
}

/// A CDP method's name (`Domain.method`) in words a person is shown.
fn names_a_method(words: &str) -> bool {
    words.split([' ', '(', ')', ':']).any(|w| {
        let mut parts = w.splitn(2, '.');
        let (domain, name) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        domain.starts_with(char::is_uppercase)
            && domain.chars().all(char::is_alphanumeric)
            && name.starts_with(char::is_lowercase)
    })
}

const CHROME_DEVTOOLS_MCP: &str = include_str!("chrome_devtools_mcp.tsv");
const PLAYWRIGHT: &str = include_str!("playwright.tsv");
const PUPPETEER: &str = include_str!("puppeteer.tsv");

#[test]
fn a_chrome_devtools_mcp_session_in_words() {
    // navigate_page, take_snapshot, fill, click, evaluate_script, take_screenshot,
    // navigate_page again, close_page.
    assert_eq!(
        replay(CHROME_DEVTOOLS_MCP),
        [
            "prepared the tab, with a script for every page it loads",
            "opened a new tab",
            "prepared the tab, with a script for every page it loads",
            "opened 127.0.0.1:9334",
            "ran a script on 127.0.0.1:9334",
            "read the page (accessibility snapshot)",
            "typed 5 characters",
            "clicked at (25, 77)",
            "ran a script on 127.0.0.1:9334",
            "took a screenshot",
            "opened 127.0.0.1:9334/two",
            "ran a script on 127.0.0.1:9334",
            "closed a tab",
        ]
    );
}

#[test]
fn navigate_fill_three_fields_click_and_screenshot_is_at_most_a_dozen_steps_in_words() {
    // The trace's one fill (from its locator's first probe to the last key's release) three
    // times, as chrome-devtools-mcp's fill_form does for three fields.
    let lines: Vec<&str> = CHROME_DEVTOOLS_MCP.lines().collect();
    let read = lines.iter().position(|l| l.contains("Accessibility.getFullAXTree")).unwrap();
    let last_key = lines.iter().rposition(|l| l.contains("keyUp")).unwrap();
    let end = lines.iter().rposition(|l| l.contains("Page.navigate")).unwrap();
    let fill = &lines[read + 1..=last_key];
    let mut session: Vec<&str> = lines[..=read].to_vec();
    for _ in 0..3 {
        session.extend_from_slice(fill);
    }
    session.extend_from_slice(&lines[last_key + 1..end]);
    let steps = replay(&session.join("\n"));
    assert!(steps.len() <= 12, "{steps:#?}");
    assert_eq!(steps.iter().filter(|s| *s == "typed 5 characters").count(), 3, "{steps:#?}");
    for words in &steps {
        assert!(!names_a_method(words), "a raw method where a word exists: {words}");
        assert!(!words.contains("hello"), "never what was typed: {words}");
    }
    assert!(steps.contains(&"took a screenshot".to_owned()));
}

#[test]
fn a_playwright_session_in_words() {
    assert_eq!(
        replay(PLAYWRIGHT),
        [
            "prepared the tab, with a script for every page it loads",
            "opened a new tab",
            "prepared the tab, with a script for every page it loads",
            "opened 127.0.0.1:9334/pw",
            "typed 15 characters",
            "clicked at (25, 77)",
            "ran a script on 127.0.0.1:9334",
            "took a screenshot",
            "ran a script on 127.0.0.1:9334",
            "closed a tab",
        ]
    );
}

#[test]
fn a_puppeteer_session_in_words() {
    let steps = replay(PUPPETEER);
    assert!(steps.contains(&"typed 14 characters".to_owned()), "{steps:#?}");
    assert!(steps.contains(&"took a screenshot".to_owned()), "{steps:#?}");
    assert!(steps.len() <= 12, "{steps:#?}");
    for words in &steps {
        assert!(!names_a_method(words), "{words}");
        assert!(!words.contains("from puppeteer"), "{words}");
    }
}

fn event<'a>(method: &'a str, params: Option<&'a str>, outcome: &'a Outcome) -> Event<'a> {
    Event { tab: Some(7), method, params, url: None, outcome, question: None }
}

#[test]
fn the_element_the_guard_read_names_the_step() {
    let allowed = Outcome::Allowed;
    let mut steps = Steps::default();
    let press = r#"{"type":"mousePressed","x":10.4,"y":20.6,"button":"left","clickCount":1}"#;
    let click = steps.fold(event("Input.dispatchMouseEvent", Some(press), &allowed));
    assert_eq!(click.words, "clicked at (10, 21)");
    let named = steps.element(7, " Add  to\ncart ", false).unwrap();
    assert_eq!((named.id, named.words.as_str()), (click.id, "clicked \"Add to cart\""));
    let release = r#"{"type":"mouseReleased","x":10,"y":20,"button":"left"}"#;
    assert_eq!(steps.fold(event("Input.dispatchMouseEvent", Some(release), &allowed)), named);
    // Another tab's reading names nothing here.
    assert_eq!(steps.element(8, "Other", false), None);

    // A field clicked, then typed into: what was typed into is named, never what was typed.
    let field = steps.fold(event("Input.dispatchMouseEvent", Some(press), &allowed));
    steps.element(7, "Email", true).unwrap();
    let mut last = None;
    for c in "ann@shop.example".chars() {
        let down =
            serde_json::json!({"type": "keyDown", "key": c.to_string(), "text": c.to_string()}).to_string();
        let up = serde_json::json!({"type": "keyUp", "key": c.to_string()}).to_string();
        last = Some(steps.fold(event("Input.dispatchKeyEvent", Some(&down), &allowed)));
        assert_eq!(steps.fold(event("Input.dispatchKeyEvent", Some(&up), &allowed)), last.clone().unwrap());
    }
    let typed = last.unwrap();
    assert_ne!(typed.id, field.id);
    assert_eq!(typed.words, "typed 16 characters into \"Email\"");

    // Enter, read by the guard at its keyDown.
    let enter = steps.fold(event(
        "Input.dispatchKeyEvent",
        Some(r#"{"type":"keyDown","key":"Enter","text":"\r"}"#),
        &allowed,
    ));
    assert_eq!(enter.words, "pressed Enter");
    assert_eq!(steps.element(7, "Search", true).unwrap().words, "pressed Enter in \"Search\"");
    let char_after =
        steps.fold(event("Input.dispatchKeyEvent", Some(r#"{"type":"char","text":"\r"}"#), &allowed));
    assert_eq!((char_after.id, char_after.words.as_str()), (enter.id, "pressed Enter in \"Search\""));
    let select_all = r#"{"type":"rawKeyDown","key":"a","modifiers":2}"#;
    assert_eq!(
        steps.fold(event("Input.dispatchKeyEvent", Some(select_all), &allowed)).words,
        "pressed Ctrl+a"
    );
}

#[test]
fn refusals_and_questions_say_what_and_who_decided() {
    let mut steps = Steps::default();
    let denied = Outcome::Denied { rule: "deny_methods in [default]".into() };
    let refused = steps.fold(event("Network.getCookies", None, &denied));
    assert_eq!(refused.words, "was refused: Network.getCookies (deny_methods in [default])");
    // The same refusal again (a client retrying) is the same step.
    assert_eq!(steps.fold(event("Network.getCookies", None, &denied)).id, refused.id);
    let asked = Outcome::Asked { rule: "the gesture guard: pays".into(), answer: "denied" };
    let question = GestureQuestion {
        gesture: "click".into(),
        origin: "https://shop.example".into(),
        element: "Pay €1,240.00".into(),
        ..Default::default()
    };
    let press = r#"{"type":"mousePressed","x":1,"y":2}"#;
    let mut held = event("Input.dispatchMouseEvent", Some(press), &asked);
    held.question = Some(&question);
    assert_eq!(steps.fold(held).words, "asked you: Pay €1,240.00, you denied");
    // Retries while the refusal stood: the first said as such, the rest with their count.
    let again = Outcome::Asked { rule: "the gesture guard".into(), answer: "denied: refused moments ago" };
    let mut retried = event("Input.dispatchMouseEvent", Some(press), &again);
    retried.question = Some(&question);
    assert_eq!(steps.fold(retried).words, "asked you: Pay €1,240.00, you had just denied it");
    let counted = Outcome::Asked {
        rule: "the gesture guard: 9 more like it, each refused unasked while the refusal stood".into(),
        answer: "denied: refused moments ago",
    };
    let mut more = event("Input.dispatchMouseEvent", Some(press), &counted);
    more.question = Some(&question);
    assert_eq!(
        steps.fold(more).words,
        "asked you: Pay €1,240.00, you had just denied it (9 more like it, each refused unasked while the refusal stood)"
    );
    let navigation = Outcome::Asked { rule: "ask_origins".into(), answer: "allowed once" };
    let mut went = event("navigation", None, &navigation);
    went.url = Some("https://user:pw@bank.example/transfer?token=abc#x");
    assert_eq!(steps.fold(went).words, "asked you: opening bank.example/transfer, you allowed it once");
    let nav = Outcome::Denied { rule: "allow_origins in [default]".into() };
    let mut denied_nav = event("Page.navigate", None, &nav);
    denied_nav.url = Some("https://evil.example/");
    assert_eq!(
        steps.fold(denied_nav).words,
        "was refused: opening evil.example (allow_origins in [default])"
    );
}

#[test]
fn what_has_no_word_shows_its_method_and_nothing_malformed_panics() {
    let allowed = Outcome::Allowed;
    let mut steps = Steps::default();
    assert_eq!(
        steps.fold(event("Animation.setPlaybackRate", None, &allowed)).words,
        "Animation.setPlaybackRate"
    );
    for params in [
        "",
        "{",
        "[]",
        "null",
        r#"{"type":5,"text":["x"],"x":"y"}"#,
        "{\"type\":\"keyDown\",\"text\":\"\u{1}\"}",
    ] {
        for method in ["Input.dispatchKeyEvent", "Input.dispatchMouseEvent", "Input.insertText"] {
            steps.fold(event(method, Some(params), &allowed));
        }
    }
    let long = format!("https://shop.example/{}", "a".repeat(500));
    let mut nav = event("Page.navigate", None, &allowed);
    nav.url = Some(&long);
    let opened = steps.fold(nav).words;
    assert!(opened.chars().count() <= "opened ".len() + MAX_NAME, "{opened}");
    assert!(opened.ends_with('…'));
    // Scripts on a tab it opened say where.
    assert_eq!(steps.fold(event("Runtime.evaluate", None, &allowed)).words, "ran a script on shop.example");
}

/// What folding costs per command, against the round trip it rides on (run with
/// `cargo test --release -p tabtunnel-core steps::tests::cost -- --ignored --nocapture`).
#[test]
#[ignore = "a measurement, not a check"]
fn cost_per_command() {
    let events = events(CHROME_DEVTOOLS_MCP);
    let rounds = 2000;
    for run in 0..5 {
        let start = std::time::Instant::now();
        let mut steps = Steps::default();
        for _ in 0..rounds {
            for event in &events {
                std::hint::black_box(steps.fold(*event));
            }
        }
        let per = start.elapsed().as_nanos() as f64 / (rounds * events.len()) as f64;
        println!("run {run}: {per:.0} ns per command ({} commands)", rounds * events.len());
    }
}
