//! The gesture guard in the core, frames in and out.

use crate::audit::{AuditRecord, Outcome};
use crate::testing::*;
use crate::*;
use serde_json::{json, Value};
use tabtunnel_wire::gestures::InspectTarget;
use tabtunnel_wire::{ApprovalAnswer, ApprovalRequest, BrowserOp};

pub(super) fn agent_page() -> (Harness, String) {
    let mut h = Harness::with_tabs(&[]);
    h.ext(FromExtension::TabShared(agent_tab(1, "a", true)));
    h.connect_as(1, "a");
    let page = h.playwright_attach(1)[0].clone();
    h.drain();
    (h, page)
}

pub(super) fn approvals(step: &Step) -> Vec<&ApprovalRequest> {
    step.extension
        .iter()
        .filter_map(|f| match f {
            ToExtension::Approval(r) => Some(r),
            _ => None,
        })
        .collect()
}

pub(super) fn audits(step: &Step) -> Vec<&AuditRecord> {
    step.other
        .iter()
        .filter_map(|o| match o {
            Output::Audit(r) => Some(r),
            _ => None,
        })
        .collect()
}

pub(super) fn press(page: &str, id: i64) -> Value {
    json!({"id": id, "sessionId": page, "method": "Input.dispatchMouseEvent", "params": {"type": "mousePressed", "x": 40, "y": 50, "button": "left", "clickCount": 1}})
}

pub(super) fn release(page: &str, id: i64) -> Value {
    json!({"id": id, "sessionId": page, "method": "Input.dispatchMouseEvent", "params": {"type": "mouseReleased", "x": 40, "y": 50, "button": "left", "clickCount": 1}})
}

/// What the extension reads for the shop's pay button.
pub(super) fn pay_button() -> Value {
    json!({
        "url": "https://shop.test/checkout",
        "element": {"tag": "button", "role": "button", "name": "Pay €1,240.00", "text": "Pay €1,240.00", "actionable": true, "submits": true},
        "form": {"action": "https://shop.test/pay", "method": "post", "fields": [{"inputType": "text", "autocomplete": "cc-number"}], "buttons": ["Pay €1,240.00"]},
        "pageText": "Order total €1,240.00",
        "rect": {"x": 30, "y": 40, "width": 120, "height": 30}
    })
}

fn next_link() -> Value {
    json!({"url": "https://shop.test/list", "element": {"tag": "a", "role": "link", "name": "Next", "actionable": true, "href": "https://shop.test/list?page=2"}})
}

/// The inspection the core asked for: its id, and where it looks.
pub(super) fn inspection(step: &Step) -> (u64, InspectTarget) {
    match step.browser_ops()[..] {
        [(id, BrowserOp::Inspect { target, .. })] => (id, target.clone()),
        ref other => panic!("expected one inspection, got {other:?}"),
    }
}

#[test]
fn a_harmless_press_is_inspected_then_goes_as_sent_and_later_input_waits_in_order() {
    let (mut h, page) = agent_page();
    let step = h.send(1, press(&page, 10));
    assert!(step.commands().is_empty() && step.client.is_empty(), "nothing reaches the page yet");
    let (op, target) = inspection(&step);
    assert_eq!(target, InspectTarget::Point { x: 40.0, y: 50.0 });
    let step = h.send(1, release(&page, 11));
    assert!(step.commands().is_empty(), "the release waits behind the press");
    let step = h.send(
        1,
        json!({"id": 12, "sessionId": page, "method": "Runtime.evaluate", "params": {"expression": "1"}}),
    );
    assert_eq!(step.commands().len(), 1, "other domains do not wait");
    let step = h.answer(op, next_link());
    let sent: Vec<(&str, &str)> =
        step.commands().iter().map(|c| (c.method.as_str(), c.params.as_ref().unwrap().get())).collect();
    assert_eq!(sent.len(), 2);
    assert!(sent[0].1.contains("mousePressed") && sent[1].1.contains("mouseReleased"), "{sent:?}");
    assert!(approvals(&step).is_empty());
}

#[test]
fn a_press_on_pay_asks_the_human_with_what_the_page_showed_and_deny_leaves_the_page_untouched() {
    let (mut h, page) = agent_page();
    let (op, _) = inspection(&h.send(1, press(&page, 10)));
    h.send(1, release(&page, 11));
    let step = h.answer(op, pay_button());
    assert!(step.commands().is_empty());
    let asked = approvals(&step)[0].clone();
    let q = asked.gesture.as_deref().expect("a gesture question");
    assert_eq!(
        (q.gesture.as_str(), q.origin.as_str(), q.element.as_str()),
        ("click", "https://shop.test", "Pay €1,240.00")
    );
    assert_eq!(q.amounts, ["€1,240.00"]);
    assert_eq!(q.form, "POST https://shop.test/pay");
    assert_eq!(q.fields, ["card number"]);
    assert!(q.reasons.iter().any(|r| r.contains("paying")), "{:?}", q.reasons);
    assert!(q.rect.is_some(), "the extension takes the picture from it");
    assert!(asked.rule.starts_with("the gesture guard"));
    let step = h.ext(FromExtension::ApprovalAnswer { id: asked.id, answer: ApprovalAnswer::Deny });
    let error =
        step.to(1).iter().find(|f| f["id"] == 10).unwrap()["error"]["message"].as_str().unwrap().to_owned();
    assert!(error.contains("gesture guard") && error.contains("refused"), "{error}");
    let released: Vec<&str> = step.commands().iter().map(|c| c.params.as_ref().unwrap().get()).collect();
    assert!(
        released.len() == 1 && released[0].contains("mouseReleased"),
        "only the waiting release goes: {released:?}"
    );
    let record = audits(&step).into_iter().find(|r| r.question.is_some()).expect("audited with its context");
    assert!(matches!(&record.outcome, Outcome::Asked { answer: "denied", .. }));
    assert_eq!(record.question.as_ref().unwrap().element, "Pay €1,240.00");
    assert!(record.question.as_ref().unwrap().rect.is_none(), "no picture in the trail");
    // The panel's history names the question, so that its picture shows beside the answer.
    let statuses = h.core.agent_statuses();
    let answered = statuses.iter().flat_map(|s| &s.recent).find(|a| a.outcome.contains("denied"));
    assert_eq!(answered.and_then(|a| a.question), Some(asked.id));
}

#[test]
fn a_drag_let_go_on_a_delete_zone_asks_and_deny_keeps_the_release_from_the_page() {
    let (mut h, page) = agent_page();
    let (op, _) = inspection(&h.send(1, press(&page, 10)));
    let card = json!({"url": "https://board.test/b/1", "element": {"tag": "div", "name": "Card #7", "text": "Card #7", "actionable": false}});
    assert_eq!(h.answer(op, card).commands().len(), 1, "picking the card up goes");
    let moved = |id, x, y| json!({"id": id, "sessionId": page, "method": "Input.dispatchMouseEvent", "params": {"type": "mouseMoved", "x": x, "y": y, "button": "left", "buttons": 1}});
    assert_eq!(h.send(1, moved(11, 200, 300)).commands().len(), 1, "moves go");
    let let_go = json!({"id": 12, "sessionId": page, "method": "Input.dispatchMouseEvent", "params": {"type": "mouseReleased", "x": 300, "y": 400, "button": "left", "clickCount": 1}});
    let (op, target) = inspection(&h.send(1, let_go));
    assert_eq!(target, InspectTarget::Point { x: 300.0, y: 400.0 }, "read where it lets go");
    // A plain element: no page reading can see its drop handler.
    let zone = json!({"url": "https://board.test/b/1", "element": {"tag": "div", "name": "Drop here to delete permanently", "text": "Drop here to delete permanently", "actionable": false}});
    let step = h.answer(op, zone);
    assert!(step.commands().is_empty(), "the release waits for the human");
    let asked = approvals(&step)[0].clone();
    let q = asked.gesture.as_deref().expect("a gesture question");
    assert_eq!((q.gesture.as_str(), q.element.as_str()), ("drop", "Drop here to delete permanently"));
    assert!(q.reasons.iter().any(|r| r.contains("deleting")), "{:?}", q.reasons);
    let step = h.ext(FromExtension::ApprovalAnswer { id: asked.id, answer: ApprovalAnswer::Deny });
    assert!(step.commands().is_empty(), "the page never sees it let go there");
    assert!(step.to(1).iter().any(|f| f["id"] == 12 && f["error"].is_object()));
    // Let go where it was picked up (after the refusal, a fresh press): the click it was.
    let (op, _) = inspection(&h.send(1, press(&page, 13)));
    h.answer(op, next_link());
    assert_eq!(h.send(1, release(&page, 14)).commands().len(), 1, "a click's release goes unread");
}

#[test]
fn a_drop_on_a_harmless_target_goes_once_read() {
    let (mut h, page) = agent_page();
    let drop = json!({"id": 10, "sessionId": page, "method": "Input.dispatchDragEvent", "params": {"type": "drop", "x": 30, "y": 60, "data": {"items": [], "dragOperationsMask": 1}}});
    let (op, target) = inspection(&h.send(1, drop));
    assert_eq!(target, InspectTarget::Point { x: 30.0, y: 60.0 });
    let upload = json!({"url": "https://board.test/b/1", "element": {"tag": "div", "name": "Drop files to upload", "text": "Drop files to upload", "actionable": false}});
    let step = h.answer(op, upload);
    assert!(approvals(&step).is_empty());
    assert_eq!(step.commands()[0].method, "Input.dispatchDragEvent");
}

const PAY_POST: &str = r#"{"requestId":"R1","request":{"url":"https://shop.test/pay","method":"POST","headers":{"Content-Type":"application/x-www-form-urlencoded"},"postData":"cardnumber=4242424242424242"},"frameId":"PAGE1","resourceType":"Document"}"#;
const PAY_FETCH: &str = r#"{"requestId":"R2","request":{"url":"https://shop.test/api/pay","method":"POST","headers":{}},"frameId":"PAGE1","resourceType":"Fetch"}"#;
const SEARCH_GET: &str = r#"{"requestId":"R3","request":{"url":"https://shop.test/search?q=x","method":"GET","headers":{}},"frameId":"PAGE1","resourceType":"Document"}"#;

pub(super) fn paused(params: &str) -> FromExtension {
    event(1, None, "Fetch.requestPaused", params)
}

pub(super) fn fetch_commands(step: &Step) -> Vec<(String, Value)> {
    step.commands()
        .iter()
        .filter(|c| c.method.starts_with("Fetch."))
        .map(|c| (c.method.clone(), serde_json::from_str(c.params.as_ref().unwrap().get()).unwrap()))
        .collect()
}

#[test]
fn allow_once_lets_the_press_and_exactly_one_write_it_causes_through() {
    let (mut h, page) = agent_page();
    let (op, _) = inspection(&h.send(1, press(&page, 10)));
    let id = approvals(&h.answer(op, pay_button()))[0].id;
    let step = h.ext(FromExtension::ApprovalAnswer { id, answer: ApprovalAnswer::Always });
    assert_eq!(step.commands()[0].method, "Input.dispatchMouseEvent", "the press reaches the page");
    assert!(
        matches!(&audits(&step)[0].outcome, Outcome::Asked { answer: "allowed once", .. }),
        "no always for gestures"
    );
    // The form post it causes is judged with what the click's reading found (Chrome runs no
    // command on a tab whose navigation is paused), and goes without a second question.
    let step = h.ext(paused(PAY_POST));
    assert!(step.browser_ops().is_empty() && approvals(&step).is_empty());
    assert_eq!(fetch_commands(&step), [("Fetch.continueRequest".to_owned(), json!({"requestId": "R1"}))]);
    assert!(matches!(
        &audits(&step)[0].outcome,
        Outcome::Asked { answer: "allowed once (with its gesture)", .. }
    ));
    // A second one is asked about.
    let (op, _) = inspection(&h.ext(paused(PAY_FETCH)));
    assert_eq!(approvals(&h.answer(op, json!({"url": "https://shop.test/checkout"}))).len(), 1);
}

/// The pay button's reading, with the body its form would send then.
fn pay_button_with_body(body: &str) -> Value {
    let mut facts = pay_button();
    facts["form"]["body"] = body.into();
    facts
}

/// An agent's press on Pay, allowed by the human: the step of the answer.
fn allowed_press(h: &mut Harness, page: &str, facts: Value) -> Step {
    let (op, _) = inspection(&h.send(1, press(page, 10)));
    let id = approvals(&h.answer(op, facts))[0].id;
    h.ext(FromExtension::ApprovalAnswer { id, answer: ApprovalAnswer::Allow })
}

const PASSWORD_FETCH: &str = r#"{"requestId":"P1","request":{"url":"https://shop.test/account/password","method":"POST","headers":{"Content-Type":"application/x-www-form-urlencoded"},"postData":"new_password=pwned","hasPostData":true},"frameId":"PAGE1","resourceType":"Fetch"}"#;

#[test]
fn an_allowed_payment_leaves_no_pass_for_another_write_on_its_tab() {
    let (mut h, page) = agent_page();
    allowed_press(&mut h, &page, pay_button_with_body("cardnumber=4242424242424242"));
    // Before the payment's own submission, the agent's script changes the password: asked about
    // (it fails at once, the page is read), never let through on the payment's answer.
    h.tick(1_000);
    let step = h.ext(paused(PASSWORD_FETCH));
    assert_eq!(
        fetch_commands(&step),
        [("Fetch.failRequest".to_owned(), json!({"requestId": "P1", "errorReason": "BlockedByClient"}))]
    );
    let (op, _) = inspection(&step);
    let step = h.answer(op, json!({"url": "https://shop.test/checkout"}));
    let asked = approvals(&step);
    assert_eq!(asked.len(), 1, "asked afresh");
    assert!(asked[0].gesture.as_ref().unwrap().request.contains("/account/password"));
    // The payment the human allowed still goes, once.
    let step = h.ext(paused(PAY_POST));
    assert_eq!(fetch_commands(&step), [("Fetch.continueRequest".to_owned(), json!({"requestId": "R1"}))]);
    assert!(matches!(
        &audits(&step)[0].outcome,
        Outcome::Asked { answer: "allowed once (with its gesture)", .. }
    ));
    let step = h.ext(paused(&PAY_POST.replace("R1", "R8")));
    assert_eq!(fetch_commands(&step)[0].0, "Fetch.fulfillRequest", "a second copy is not the one allowed");
}

#[test]
fn an_allowed_gesture_sends_its_form_with_the_body_it_had_and_no_other() {
    let (mut h, page) = agent_page();
    allowed_press(&mut h, &page, pay_button_with_body("cardnumber=4242424242424242"));
    // The agent's own submission to the same action, with its own body, first.
    let swapped = PAY_POST.replace("R1", "R5").replace("4242424242424242", "4000056655665556&to=agent");
    let step = h.ext(paused(&swapped));
    assert_eq!(fetch_commands(&step)[0].0, "Fetch.fulfillRequest", "answered 204, judged afresh");
    // The form's own submission goes.
    let step = h.ext(paused(PAY_POST));
    assert_eq!(fetch_commands(&step), [("Fetch.continueRequest".to_owned(), json!({"requestId": "R1"}))]);
    // A gesture on no form binds nothing: its script's write is asked about itself.
    let (mut h, page) = agent_page();
    let mut facts = pay_button();
    facts["form"] = Value::Null;
    allowed_press(&mut h, &page, facts);
    let step = h.ext(paused(PAY_FETCH));
    assert_eq!(fetch_commands(&step)[0].0, "Fetch.failRequest");
}

#[test]
fn a_write_sent_again_goes_once_and_only_with_the_body_the_human_was_shown() {
    let (mut h, _) = agent_page();
    let shown = r#"{"requestId":"R2","request":{"url":"https://shop.test/api/pay","method":"POST","headers":{"Content-Type":"application/json"},"postData":"{\"amount\":1}","hasPostData":true},"frameId":"PAGE1","resourceType":"Fetch"}"#;
    let (op, _) = inspection(&h.ext(paused(shown)));
    let id = approvals(&h.answer(op, json!({})))[0].id;
    let step = h.ext(FromExtension::ApprovalAnswer { id, answer: ApprovalAnswer::Allow });
    assert!(matches!(
        step.browser_ops()[..],
        [(_, BrowserOp::Resend { ref body, .. })] if body.as_deref() == Some(r#"{"amount":1}"#)
    ));
    // The agent's request to the same URL with its own body, before the copy: judged afresh.
    let agents = shown.replace("R2", "R20").replace(r#"{\"amount\":1}"#, r#"{\"amount\":99999}"#);
    let step = h.ext(paused(&agents));
    assert_eq!(fetch_commands(&step)[0].0, "Fetch.failRequest");
    // The copy with the body shown goes, once.
    let step = h.ext(paused(&shown.replace("R2", "R22")));
    assert_eq!(fetch_commands(&step), [("Fetch.continueRequest".to_owned(), json!({"requestId": "R22"}))]);
    let step = h.ext(paused(&shown.replace("R2", "R23")));
    assert_eq!(fetch_commands(&step)[0].0, "Fetch.failRequest", "only once");
}

#[test]
fn a_client_may_not_change_what_the_human_allowed() {
    let (mut h, page) = agent_page();
    let step = h.send(1, json!({"id": 1, "sessionId": page, "method": "Fetch.enable", "params": {"patterns": [{"urlPattern": "*"}]}}));
    let (op, _) = step.browser_ops()[0];
    h.answer(op, json!({}));
    let neutral = r#"{"requestId":"R2","request":{"url":"https://shop.test/api/x","method":"POST","headers":{"Content-Type":"application/json"},"postData":"{\"amount\":124000}","hasPostData":true},"frameId":"PAGE1","resourceType":"Fetch"}"#;
    // Held for the page it came from (its URL and body say nothing), allowed, sent again.
    let (op, _) = inspection(&h.ext(paused(neutral)));
    let id = approvals(&h.answer(op, pay_button()))[0].id;
    h.ext(FromExtension::ApprovalAnswer { id, answer: ApprovalAnswer::Allow });
    let step = h.ext(paused(&neutral.replace("R2", "R3")));
    assert_eq!(step.methods(1), ["Fetch.requestPaused"], "handed to the client");
    // The client continues it with another amount: refused, and the human asked.
    let other = "eyJhbW91bnQiOjk5OTk5OTl9"; // {"amount":9999999}
    let step = h.send(1, json!({"id": 2, "sessionId": page, "method": "Fetch.continueRequest", "params": {"requestId": "R3", "postData": other}}));
    assert_eq!(fetch_commands(&step)[0].0, "Fetch.failRequest");
    assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("gesture guard"));
    assert_eq!(approvals(&step).len(), 1);
}

#[test]
fn reads_go_on_at_once_and_writes_wait_for_the_rule() {
    let (mut h, _) = agent_page();
    let step = h.ext(paused(SEARCH_GET));
    assert!(step.browser_ops().is_empty(), "no inspection for a read");
    assert_eq!(fetch_commands(&step), [("Fetch.continueRequest".to_owned(), json!({"requestId": "R3"}))]);
    let harmless = r#"{"requestId":"R4","request":{"url":"https://shop.test/cart/add","method":"POST","headers":{},"postData":"item=1"},"frameId":"PAGE1","resourceType":"XHR"}"#;
    let (op, _) = inspection(&h.ext(paused(harmless)));
    let step = h.answer(op, json!({"url": "https://shop.test/list"}));
    assert_eq!(fetch_commands(&step)[0].0, "Fetch.continueRequest");
    // An inspection that fails still leaves the request to the rule (its URL, its body).
    let (op, _) = inspection(&h.ext(paused(PAY_FETCH)));
    let step = h.ext(FromExtension::CommandResult(tabtunnel_wire::CommandResult::err(
        op,
        tabtunnel_wire::CdpError { code: -32000, message: "no frame".into(), data: None },
    )));
    assert_eq!(approvals(&step).len(), 1);
}

#[test]
fn a_form_a_script_submits_is_answered_204_read_and_sent_again_only_if_allowed() {
    let (mut h, _) = agent_page();
    let step = h.ext(paused(PAY_POST));
    assert_eq!(
        fetch_commands(&step),
        [(
            "Fetch.fulfillRequest".to_owned(),
            json!({"requestId": "R1", "responseCode": 204, "responseHeaders": []})
        )],
        "at once: nothing reaches the server and the page stays"
    );
    let (op, target) = inspection(&step);
    assert!(
        matches!(target, InspectTarget::Request { ref method, ref frame_id, .. } if method == "POST" && frame_id == "PAGE1")
    );
    let asked = approvals(&h.answer(op, pay_button()))[0].clone();
    let q = asked.gesture.unwrap();
    assert_eq!((q.gesture.as_str(), q.request.as_str()), ("form submission", "POST https://shop.test/pay"));
    assert_eq!(q.element, "Pay €1,240.00", "the form's button, read once the page was free again");
    // Denied: nothing more to do.
    let step = h.ext(FromExtension::ApprovalAnswer { id: asked.id, answer: ApprovalAnswer::Deny });
    assert!(step.extension.iter().all(|f| !matches!(f, ToExtension::Command(_) | ToExtension::Browser(_))));
    // Refused moments ago: the same submission again is refused at once.
    let (op, _) = inspection(&h.ext(paused(PAY_POST)));
    assert!(approvals(&h.answer(op, pay_button())).is_empty());
    // Allowed, later: sent again from the page, and that one goes through.
    h.tick(31_000);
    let (op, _) = inspection(&h.ext(paused(PAY_POST)));
    let id = approvals(&h.answer(op, pay_button()))[0].id;
    let step = h.ext(FromExtension::ApprovalAnswer { id, answer: ApprovalAnswer::Allow });
    match step.browser_ops()[..] {
        [(_, BrowserOp::Resend { frame_id, url, method, as_form, body, .. })] => {
            assert_eq!(
                (frame_id.as_str(), url.as_str(), method.as_str()),
                ("PAGE1", "https://shop.test/pay", "POST")
            );
            assert!(as_form);
            assert_eq!(body.as_deref(), Some("cardnumber=4242424242424242"));
        }
        ref other => panic!("{other:?}"),
    }
    let step = h.ext(paused(&PAY_POST.replace("R1", "R9")));
    assert_eq!(fetch_commands(&step), [("Fetch.continueRequest".to_owned(), json!({"requestId": "R9"}))]);
    assert!(approvals(&step).is_empty());
    // Only once.
    let step = h.ext(paused(&PAY_POST.replace("R1", "R10")));
    assert_eq!(fetch_commands(&step)[0].0, "Fetch.fulfillRequest");
}

#[test]
fn a_harmless_form_a_script_submits_is_sent_again_at_once() {
    let (mut h, _) = agent_page();
    let cart = r#"{"requestId":"R5","request":{"url":"https://shop.test/cart/add","method":"POST","headers":{"Content-Type":"application/x-www-form-urlencoded"},"postData":"item=boots"},"frameId":"PAGE1","resourceType":"Document"}"#;
    let (op, _) = inspection(&h.ext(paused(cart)));
    let facts = json!({"url": "https://shop.test/checkout", "form": {"action": "https://shop.test/cart/add", "method": "post", "fields": [{"inputType": "hidden", "name": "item"}], "buttons": ["Add to cart"]}});
    let step = h.answer(op, facts);
    assert!(approvals(&step).is_empty());
    assert!(matches!(step.browser_ops()[..], [(_, BrowserOp::Resend { as_form: true, .. })]));
}

#[test]
fn a_rails_delete_form_is_read_by_its_method_field_not_the_edit_form_beside_it() {
    // Rails' edit form and `button_to` delete form both post to /repos/1; `_method` decides.
    let (mut h, _) = agent_page();
    let delete = r#"{"requestId":"R6","request":{"url":"https://git.test/repos/1","method":"POST","headers":{"Content-Type":"application/x-www-form-urlencoded"},"postData":"_method=delete&authenticity_token=t0k"},"frameId":"PAGE1","resourceType":"Document"}"#;
    let (op, target) = inspection(&h.ext(paused(delete)));
    assert_eq!(
        target,
        InspectTarget::Request {
            frame_id: "PAGE1".into(),
            url: "https://git.test/repos/1".into(),
            method: "POST".into(),
            method_override: "delete".into(),
        },
        "the page is asked for the form whose _method is delete"
    );
    let facts = json!({"url": "https://git.test/repos/1/edit", "form": {"action": "https://git.test/repos/1", "method": "post", "methodOverride": "delete", "fields": [{"inputType": "hidden", "name": "_method"}], "buttons": ["Delete this repository"]}});
    let q = approvals(&h.answer(op, facts))[0].gesture.clone().unwrap();
    assert_eq!(
        (q.request.as_str(), q.form.as_str()),
        ("DELETE https://git.test/repos/1", "DELETE https://git.test/repos/1")
    );
    assert!(q.reasons.iter().any(|r| r.contains("deleting")), "{:?}", q.reasons);
}

#[test]
fn a_fetch_after_a_scripts_click_on_pay_is_asked_about_with_the_button() {
    let (mut h, _) = agent_page();
    let fetch = r#"{"requestId":"R7","request":{"url":"https://shop.test/api/v2/actions","method":"POST","headers":{"Content-Type":"application/json"},"postData":"{\"id\":7}"},"frameId":"PAGE1","resourceType":"Fetch"}"#;
    let (op, _) = inspection(&h.ext(paused(fetch)));
    let clicked = json!({"url": "https://shop.test/checkout", "pageText": "Total €1,240.00", "rect": {"x": 1, "y": 2, "width": 3, "height": 4},
        "clicked": {"msAgo": 12, "element": {"tag": "button", "role": "button", "name": "Pay €1,240.00", "inputType": "button", "actionable": true}}});
    let step = h.answer(op, clicked);
    assert_eq!(
        fetch_commands(&step),
        [("Fetch.failRequest".to_owned(), json!({"requestId": "R7", "errorReason": "BlockedByClient"}))],
        "answered at once, asked about, sent again only if allowed"
    );
    let q = approvals(&step)[0].gesture.clone().unwrap();
    assert_eq!(
        (q.element.as_str(), q.request.as_str()),
        ("Pay €1,240.00", "POST https://shop.test/api/v2/actions")
    );
    assert_eq!(q.amounts, ["€1,240.00"]);
    // The same write after a click on something harmless goes on.
    let (op, _) = inspection(&h.ext(paused(&fetch.replace("R7", "R8"))));
    let harmless = json!({"url": "https://shop.test/checkout", "clicked": {"msAgo": 12, "element": {"tag": "button", "name": "Add to cart", "actionable": true}}});
    let step = h.answer(op, harmless);
    assert!(approvals(&step).is_empty());
    assert_eq!(fetch_commands(&step), [("Fetch.continueRequest".to_owned(), json!({"requestId": "R8"}))]);
}

#[test]
fn a_held_press_is_refused_at_the_deadline_its_own_question_set() {
    let (mut h, page) = agent_page();
    h.now = 1234;
    let (op, _) = inspection(&h.send(1, press(&page, 10)));
    h.now = 1300;
    let step = h.answer(op, pay_button());
    assert_eq!(approvals(&step).len(), 1, "asked when the page was read");
    let deadline = 1300 + gestures::DEFAULT_GESTURE_TIMEOUT_MS;
    assert_eq!(h.next_deadline(), Some(deadline));
    assert!(h.tick(deadline - 1).client.is_empty(), "not yet");
    let step = h.tick(deadline);
    let error = step.only_reply(1)["error"]["message"].as_str().unwrap().to_owned();
    assert!(error.contains("gesture guard"), "{error}");
    assert!(matches!(&audits(&step)[0].outcome, Outcome::Asked { answer: "not answered in time", .. }));
}

#[test]
fn a_write_its_url_holds_fails_at_once_and_is_sent_again_only_if_allowed() {
    let (mut h, _) = agent_page();
    // Nothing waits paused while the human reads the question (a detached debugger would let
    // it go): the fetch fails now, the page is read, then the human is asked.
    let step = h.ext(paused(PAY_FETCH));
    assert_eq!(
        fetch_commands(&step),
        [("Fetch.failRequest".to_owned(), json!({"requestId": "R2", "errorReason": "BlockedByClient"}))]
    );
    let (op, _) = inspection(&step);
    let id = approvals(&h.answer(op, json!({"url": "https://shop.test/checkout"})))[0].id;
    let step = h.ext(FromExtension::ApprovalAnswer { id, answer: ApprovalAnswer::Deny });
    assert!(step.commands().is_empty() && step.browser_ops().is_empty());
    // Silence is a no as well.
    h.tick(31_000);
    let (op, _) = inspection(&h.ext(paused(PAY_FETCH)));
    h.answer(op, json!({}));
    let step = h.tick(31_000 + gestures::DEFAULT_GESTURE_TIMEOUT_MS + 10);
    assert!(step.commands().is_empty() && step.browser_ops().is_empty());
    assert!(matches!(&audits(&step)[0].outcome, Outcome::Asked { answer: "not answered in time", .. }));
    // Allowed: the extension sends it again from the page, as it was, and that one goes on.
    h.tick(70_000 + gestures::DEFAULT_GESTURE_TIMEOUT_MS);
    let (op, _) = inspection(&h.ext(paused(PAY_FETCH)));
    let id = approvals(&h.answer(op, json!({})))[0].id;
    let step = h.ext(FromExtension::ApprovalAnswer { id, answer: ApprovalAnswer::Allow });
    assert!(matches!(step.browser_ops()[..], [(_, BrowserOp::Resend { as_form: false, .. })]));
    let step = h.ext(paused(&PAY_FETCH.replace("R2", "R7")));
    assert_eq!(fetch_commands(&step), [("Fetch.continueRequest".to_owned(), json!({"requestId": "R7"}))]);
}

#[test]
fn enter_is_inspected_at_the_focus_and_a_card_field_holds_it() {
    let (mut h, page) = agent_page();
    let enter = json!({"id": 5, "sessionId": page, "method": "Input.dispatchKeyEvent", "params": {"type": "keyDown", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": "\r"}});
    let (op, target) = inspection(&h.send(1, enter));
    assert_eq!(target, InspectTarget::Focus);
    let mut facts = pay_button();
    facts["element"] = json!({"tag": "input", "role": "textbox", "name": "Card number", "inputType": "text", "actionable": true, "editable": true});
    let q = approvals(&h.answer(op, facts))[0].gesture.clone().unwrap();
    assert_eq!(q.gesture, "Enter");
    assert_eq!(q.element, "Pay €1,240.00", "Enter in a field presses its form's default button");
    assert!(q.reasons.contains(&"the form has a card number field".to_owned()));
    // Typing goes straight through.
    let step = h.send(
        1,
        json!({"id": 6, "sessionId": page, "method": "Input.insertText", "params": {"text": "4242"}}),
    );
    assert!(step.commands().is_empty(), "behind the held Enter");
}

#[test]
fn a_clients_interception_is_added_to_the_guards_and_it_answers_only_what_it_was_handed() {
    let (mut h, page) = agent_page();
    let step = h.send(1, json!({"id": 1, "sessionId": page, "method": "Fetch.enable", "params": {"patterns": [{"urlPattern": "*search*"}]}}));
    let (op, intercept) = step.browser_ops()[0];
    assert_eq!(
        intercept,
        &BrowserOp::Intercept {
            tab_id: 1,
            child_session_id: None,
            client_patterns: vec![json!({"urlPattern": "*search*"})],
            handle_auth_requests: false
        }
    );
    assert_eq!(h.answer(op, json!({})).only_reply(1)["result"], json!({}));
    // A read its patterns want is handed to it, not continued.
    let step = h.ext(paused(SEARCH_GET));
    assert!(fetch_commands(&step).is_empty());
    assert_eq!(step.methods(1), ["Fetch.requestPaused"]);
    // It cannot answer a request it was not handed (the guard reads the page for this one).
    let harmless = r#"{"requestId":"R2","request":{"url":"https://shop.test/cart/add","method":"POST","headers":{}},"frameId":"PAGE1","resourceType":"XHR"}"#;
    let (_, _) = inspection(&h.ext(paused(harmless)));
    let step = h.send(
        1,
        json!({"id": 2, "sessionId": page, "method": "Fetch.continueRequest", "params": {"requestId": "R2"}}),
    );
    assert!(step.commands().is_empty());
    assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("Invalid"));
    // Nor turn a read it was handed into a payment without the human: the request is answered,
    // the client told, and the changed request sent by the extension if the human allows it.
    let step = h.send(1, json!({"id": 3, "sessionId": page, "method": "Fetch.continueRequest", "params": {"requestId": "R3", "method": "POST", "url": "https://shop.test/pay", "postData": "Y2FyZG51bWJlcj00MjQyNDI0MjQyNDI0MjQy"}}));
    assert_eq!(fetch_commands(&step)[0].0, "Fetch.fulfillRequest", "a Document: 204");
    assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("gesture guard"));
    let asked = approvals(&step)[0].clone();
    let step = h.ext(FromExtension::ApprovalAnswer { id: asked.id, answer: ApprovalAnswer::Allow });
    match step.browser_ops()[..] {
        [(_, BrowserOp::Resend { url, method, body, .. })] => {
            assert_eq!((url.as_str(), method.as_str()), ("https://shop.test/pay", "POST"));
            assert_eq!(body.as_deref(), Some("cardnumber=4242424242424242"));
        }
        ref other => panic!("{other:?}"),
    }
    // Disabling takes only its own patterns away.
    let step = h.send(1, json!({"id": 4, "sessionId": page, "method": "Fetch.disable"}));
    assert!(
        matches!(step.browser_ops()[0].1, BrowserOp::Intercept { client_patterns, .. } if client_patterns.is_empty())
    );
}

#[test]
fn an_answer_chrome_refuses_leaves_the_request_paused_for_the_client_to_answer_again() {
    let (mut h, page) = agent_page();
    let step = h.send(1, json!({"id": 1, "sessionId": page, "method": "Fetch.enable", "params": {}}));
    h.answer(step.browser_ops()[0].0, json!({}));
    assert_eq!(h.ext(paused(SEARCH_GET)).methods(1), ["Fetch.requestPaused"]);
    // puppeteer's "should fail if the header value is invalid": Chrome refuses the header and
    // keeps the request paused; the client's plain continue after it must reach Chrome.
    let bad = json!({"id": 2, "sessionId": page, "method": "Fetch.continueRequest", "params": {"requestId": "R3", "headers": [{"name": "X-Invalid-Header", "value": "a\nb"}]}});
    let step = h.send(1, bad);
    let refused = step.commands()[0].id;
    let error = CdpError { code: -32602, message: "Invalid header: X-Invalid-Header".into(), data: None };
    let step = h.ext(FromExtension::CommandResult(tabtunnel_wire::CommandResult::err(refused, error)));
    assert_eq!(step.only_reply(1)["error"]["message"], "Invalid header: X-Invalid-Header");
    let step = h.send(
        1,
        json!({"id": 3, "sessionId": page, "method": "Fetch.continueRequest", "params": {"requestId": "R3"}}),
    );
    assert_eq!(fetch_commands(&step), [("Fetch.continueRequest".to_owned(), json!({"requestId": "R3"}))]);
    let accepted = step.commands()[0].id;
    assert_eq!(h.answer(accepted, json!({})).only_reply(1)["result"], json!({}));
    // Once Chrome took an answer the request is no longer the client's to answer.
    let step = h.send(
        1,
        json!({"id": 4, "sessionId": page, "method": "Fetch.continueRequest", "params": {"requestId": "R3"}}),
    );
    assert!(step.commands().is_empty());
    assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("Invalid InterceptionId"));
}

#[test]
fn a_client_that_leaves_has_what_it_was_handed_continued() {
    let (mut h, page) = agent_page();
    h.connect_as(2, "a");
    h.playwright_attach(2);
    let step = h.send(1, json!({"id": 1, "sessionId": page, "method": "Fetch.enable", "params": {}}));
    h.answer(step.browser_ops()[0].0, json!({}));
    h.ext(paused(SEARCH_GET));
    h.core.client_disconnected(h.now, 1);
    let step = h.drain();
    assert_eq!(fetch_commands(&step), [("Fetch.continueRequest".to_owned(), json!({"requestId": "R3"}))]);
    assert!(
        matches!(step.browser_ops()[..], [(_, BrowserOp::Intercept { ref client_patterns, .. })] if client_patterns.is_empty()),
        "the guard's interception stays for the other client"
    );
}

#[test]
fn auto_attach_is_the_guards_children_run_unless_a_client_resumes_them() {
    let (mut h, page) = agent_page();
    let waiting = r#"{"sessionId":"C1","targetInfo":{"targetId":"F1","type":"iframe","url":"https://pay.test/card"},"waitingForDebugger":true}"#;
    let step = h.ext(event(1, None, "Target.attachedToTarget", waiting));
    let resumed: Vec<(&str, Option<&str>)> =
        step.commands().iter().map(|c| (c.method.as_str(), c.child_session_id.as_deref())).collect();
    assert_eq!(resumed, [("Runtime.runIfWaitingForDebugger", Some("C1"))]);
    assert!(step.client.is_empty(), "nobody asked for children yet");
    // A client turning auto-attach on is answered here, after the children Chrome has.
    let step = h.send(1, json!({"id": 2, "sessionId": page, "method": "Target.setAutoAttach", "params": {"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}}));
    assert!(step.commands().is_empty(), "Chrome's auto-attach stays the guard's");
    assert_eq!(step.methods(1), ["Target.attachedToTarget", "reply#2"]);
    // Now a client resumes the children it hears of itself.
    let second = r#"{"sessionId":"C2","targetInfo":{"targetId":"F2","type":"iframe","url":"https://pay.test/card"},"waitingForDebugger":true}"#;
    let step = h.ext(event(1, None, "Target.attachedToTarget", second));
    assert!(step.commands().is_empty());
    assert_eq!(step.methods(1), ["Target.attachedToTarget"]);
    // Turning it off never reaches Chrome either.
    let step = h.send(1, json!({"id": 3, "sessionId": page, "method": "Target.setAutoAttach", "params": {"autoAttach": false}}));
    assert!(step.commands().is_empty());
}

#[test]
fn a_reset_tab_withdraws_its_held_requests() {
    let (mut h, _) = agent_page();
    let (op, _) = inspection(&h.ext(paused(PAY_FETCH)));
    let id = approvals(&h.answer(op, json!({})))[0].id;
    h.core.client_disconnected(h.now, 1);
    let step = h.drain();
    assert!(step.extension.iter().any(|f| matches!(f, ToExtension::ResetTab { tab_id: 1 })));
    assert!(step.extension.iter().any(|f| matches!(f, ToExtension::ApprovalWithdrawn { id: w } if *w == id)));
    assert!(matches!(
        &audits(&step)[0].outcome,
        Outcome::Asked { answer: "withdrawn: the tab started over", .. }
    ));
}

#[test]
fn the_old_request_interception_is_refused_on_shared_tabs() {
    let (mut h, page) = agent_page();
    let step = h.send(1, json!({"id": 1, "sessionId": page, "method": "Network.setRequestInterception", "params": {"patterns": []}}));
    assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("Fetch.enable"));
    assert!(step.commands().is_empty());
}

#[test]
fn a_policy_adds_selectors_for_the_page_words_and_its_timeout() {
    let file: crate::policy::PolicyFile = serde_json::from_value(json!({
        "gesture_timeout": 2,
        "default": {"gesture_selectors": ["#launch"]},
        "agent": {"a": {"gesture_words": ["launch"], "gesture_origins": ["https://rockets.test"]}}
    }))
    .unwrap();
    let (mut h, page) = agent_page();
    h.core.set_policy(h.now, Some(crate::policy::PolicySet::compile(&file).unwrap()));
    h.drain();
    let step = h.send(1, press(&page, 1));
    let (op, selectors) = match step.browser_ops()[..] {
        [(id, BrowserOp::Inspect { selectors, .. })] => (id, selectors.clone()),
        _ => panic!(),
    };
    assert_eq!(selectors, ["#launch"], "the default's, which the agent's section keeps");
    let facts =
        json!({"url": "https://x.test/", "element": {"tag": "button", "name": "Launch", "actionable": true}});
    let asked = approvals(&h.answer(op, facts))[0].clone();
    assert!(asked.gesture.unwrap().reasons[0].contains("your policy"));
    h.tick(1);
    let step = h.tick(2_100);
    assert!(step.to(1)[0]["error"]["message"].as_str().unwrap().contains("did not answer in time"));
}

#[test]
fn a_press_from_an_unshared_tab_or_the_browser_session_is_not_the_guards() {
    let (mut h, _) = agent_page();
    let step = h.send(1, json!({"id": 1, "method": "Input.dispatchMouseEvent", "params": {"type": "mousePressed", "x": 1, "y": 1}}));
    assert!(step.browser_ops().is_empty());
    assert!(step.only_reply(1).get("error").is_some());
}

#[test]
fn a_refusal_stands_a_while_for_the_same_gesture_so_retries_do_not_ask_again() {
    let (mut h, page) = agent_page();
    let (op, _) = inspection(&h.send(1, press(&page, 1)));
    let id = approvals(&h.answer(op, pay_button()))[0].id;
    h.ext(FromExtension::ApprovalAnswer { id, answer: ApprovalAnswer::Deny });
    // Playwright retries a failed click: refused at once, nobody asked.
    let (op, _) = inspection(&h.send(1, press(&page, 2)));
    let step = h.answer(op, pay_button());
    assert!(approvals(&step).is_empty());
    assert!(step
        .to(1)
        .iter()
        .any(|f| f["id"] == 2 && f["error"]["message"].as_str().unwrap().contains("moments ago")));
    assert!(matches!(
        &audits(&step)[0].outcome,
        Outcome::Asked { answer: "denied: refused moments ago", .. }
    ));
    // Another element is asked about; the same one again once the refusal is old.
    h.tick(31_000);
    let (op, _) = inspection(&h.send(1, press(&page, 3)));
    assert_eq!(approvals(&h.answer(op, pay_button())).len(), 1);
}

#[test]
fn retries_of_a_refusal_make_two_trail_lines_the_first_and_the_count_of_the_rest() {
    let (mut h, page) = agent_page();
    let (op, _) = inspection(&h.send(1, press(&page, 1)));
    let id = approvals(&h.answer(op, pay_button()))[0].id;
    h.ext(FromExtension::ApprovalAnswer { id, answer: ApprovalAnswer::Deny });
    let mut lines = Vec::new();
    for n in 2..12 {
        let (op, _) = inspection(&h.send(1, press(&page, n)));
        let step = h.answer(op, pay_button());
        assert!(step
            .to(1)
            .iter()
            .any(|f| f["id"] == n && f["error"]["message"].as_str().unwrap().contains("moments ago")));
        lines.extend(audits(&step).into_iter().cloned());
    }
    assert_eq!(lines.len(), 1, "the first retry only: {lines:?}");
    assert!(matches!(&lines[0].outcome, Outcome::Asked { answer: "denied: refused moments ago", .. }));
    let t0 = h.now;
    assert!(audits(&h.tick(t0 + 1_000)).is_empty(), "the rest wait to be counted");
    let step = h.tick(t0 + 30_001);
    let counted = audits(&step);
    assert_eq!(counted.len(), 1, "{counted:?}");
    assert!(
        matches!(&counted[0].outcome, Outcome::Asked { rule, answer: "denied: refused moments ago" } if rule.contains("9 more like it")),
        "{:?}",
        counted[0].outcome
    );
    assert_eq!(counted[0].question.as_ref().unwrap().element, "Pay €1,240.00", "what they were");
    assert!(audits(&h.tick(t0 + 90_000)).is_empty(), "counted once");
}

/// An agent held to some origins writes no other site's cookie into a response it makes up for
/// a request paused for it; its own site's it may.
#[test]
fn a_response_a_client_writes_sets_no_cookie_of_another_site() {
    let file: crate::policy::PolicyFile =
        serde_json::from_value(json!({ "default": { "allow_origins": ["https://shop.test"] } })).unwrap();
    let mut h = Harness::with_tabs(&[]);
    h.core.set_policy(h.now, Some(crate::policy::PolicySet::compile(&file).unwrap()));
    h.ext(FromExtension::TabShared(agent_tab(1, "a", true)));
    h.connect_as(1, "a");
    let page = h.playwright_attach(1)[0].clone();
    h.drain();
    let step = h.send(1, json!({"id": 1, "sessionId": page, "method": "Fetch.enable", "params": {"patterns": [{"urlPattern": "*"}]}}));
    h.answer(step.browser_ops()[0].0, json!({}));
    let pixel = r#"{"requestId":"R5","request":{"url":"https://bank.test/pixel.png","method":"GET","headers":{}},"frameId":"PAGE1","resourceType":"Image"}"#;
    assert_eq!(h.ext(paused(pixel)).methods(1), ["Fetch.requestPaused"]);
    let fulfil = |id: i64, request: &str, headers: Value| json!({"id": id, "sessionId": page, "method": "Fetch.fulfillRequest", "params": {"requestId": request, "responseCode": 200, "responseHeaders": headers}});
    // Headers it cannot read (base64 of "Set-Cookie: a=1") count as setting one.
    let binary = json!({"id": 2, "sessionId": page, "method": "Fetch.continueResponse", "params": {"requestId": "R5", "binaryResponseHeaders": "U2V0LUNvb2tpZTogYT0x"}});
    for command in [fulfil(2, "R5", json!([{"name": "set-Cookie", "value": "session=planted"}])), binary] {
        let step = h.send(1, command.clone());
        assert!(fetch_commands(&step).is_empty(), "{command}");
        let message = step.only_reply(1)["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains("allow_origins: a Set-Cookie for bank.test"), "{message}");
        // Recorded once, as denied, with the request's URL (not also as allowed by the method rules).
        let records = audits(&step);
        assert!(
            matches!(records.as_slice(), [r] if matches!(&r.outcome, Outcome::Denied { rule } if rule.contains("allow_origins"))
                && r.url.as_deref() == Some("https://bank.test/pixel.png")),
            "{records:?}"
        );
    }
    // Without a cookie it goes; and on its own site's request a cookie may be set.
    assert_eq!(
        fetch_commands(&h.send(1, fulfil(3, "R5", json!([{"name": "X", "value": "1"}]))))[0].0,
        "Fetch.fulfillRequest"
    );
    let own = r#"{"requestId":"R6","request":{"url":"https://shop.test/logo.png","method":"GET","headers":{}},"frameId":"PAGE1","resourceType":"Image"}"#;
    h.ext(paused(own));
    let step = h.send(1, fulfil(4, "R6", json!([{"name": "Set-Cookie", "value": "a=1"}])));
    assert_eq!(fetch_commands(&step)[0].0, "Fetch.fulfillRequest");
}

/// A client's paused request continued at a `file:` URL (or a page of ours) would hand the page
/// a local file: refused as any destination off the web (guard `continued_url`); the request
/// stays paused, and the web goes on.
#[test]
fn a_paused_request_is_continued_on_the_web_only() {
    let (mut h, page) = agent_page();
    let step = h.send(1, json!({"id": 1, "sessionId": page, "method": "Fetch.enable", "params": {}}));
    h.answer(step.browser_ops()[0].0, json!({}));
    assert_eq!(h.ext(paused(SEARCH_GET)).methods(1), ["Fetch.requestPaused"]);
    for (id, method, url) in [
        (2, "Fetch.continueRequest", "file:///home/user/.config/tabtunnel/token"),
        (3, "Fetch.continueRequest", "chrome-extension://jmlcgbpniifikmbmclnhinffofckiihm/sidepanel.html"),
        (4, "Network.continueInterceptedRequest", "file:///etc/hostname"),
    ] {
        let params = json!({"requestId": "R3", "interceptionId": "R3", "url": url});
        let step = h.send(1, json!({"id": id, "sessionId": page, "method": method, "params": params}));
        let message = step.only_reply(1)["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains("not a web page"), "{method} {url}: {message}");
        assert!(step.commands().is_empty(), "{method} {url}: nothing reaches the tab");
    }
    let params = json!({"requestId": "R3", "url": "https://shop.test/search?q=y"});
    let step =
        h.send(1, json!({"id": 5, "sessionId": page, "method": "Fetch.continueRequest", "params": params}));
    assert_eq!(fetch_commands(&step), [("Fetch.continueRequest".to_owned(), params)]);
}
