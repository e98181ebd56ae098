//! The gesture guard's two flows on a page, in explicit steps (their CDP runs in the shell,
//! `extension-wasm/src/worker/gestures.rs`):
//!
//! - **Inspect** (`BrowserOp::Inspect`): after the tab's steps begun before ([`Step::Turn`]: a
//!   reset, a bring-forward), a hit test (the scroll offset, then the node at the point) or the
//!   focus (the main frame), then `gesture_facts.js` in our isolated world of that frame (made
//!   when missing), on the node resolved in it or in the world itself. Our world may have gone
//!   with its document (a frame keeps its id across navigations; Chrome tells no context's end
//!   unless `Runtime` is on, which would cost every page its events): once more in a fresh one.
//!   A focus inside a shadow root closed to our world (the facts say `closedHost`) is followed
//!   through the debugger: the host as an object, its closed root (`DOM.describeNode`, which
//!   shows closed roots), that root resolved in our world, the facts read again there; at most
//!   [`CLOSED_ROOTS`] deep, and what was read outside answers if a step fails. A focus in no
//!   closed root costs nothing more.
//! - **Resend** (`BrowserOp::Resend`): after the tab's turn, a fresh world in the write's frame,
//!   and the write sent from it.
//!
//! A flow whose tab was unshared or closed ([`Reads::let_go`]), or that sees the kill switch
//! engaged, sends nothing more and answers an error: no write goes out, nothing is read, after
//! either. One whose daemon connection went ([`Reads::connection_lost`]) sends nothing more and
//! answers nothing (nobody waits for it). A world made while the tab's gestures were forgotten
//! ([`Reads::forgotten`]: a reset, an unshare) is not kept for later reads. The shell runs each
//! [`Step`] and reports its outcome with the step's [`OpId`] ([`Reads::completed`]); an outcome
//! of any other operation changes nothing. CDP params and results stay opaque but for the fields
//! a step reads (a scroll offset, a frame or node, a context or object id, the facts).

use std::collections::BTreeMap;

use serde_json::{json, Value};
use tabtunnel_wire::gestures::InspectTarget;
use tabtunnel_wire::{BrowserOp, RequestId, TabId};

use crate::effect::{OpId, OpIds};
use crate::gestures::Gestures;
use crate::sharing::Sharing;

/// What the flows read and change of the rest of the worker.
pub struct Page<'a> {
    pub sharing: &'a Sharing,
    pub gestures: &'a mut Gestures,
    pub kill_switch: bool,
    /// Draws our world's name and our scripts' URL, the first time ([`Gestures::world_name`]).
    pub random: &'a mut dyn FnMut() -> u64,
    /// `gesture_facts.js`, and the function that sends a write again.
    pub facts_js: &'static str,
    pub resend_js: &'static str,
}

/// What the shell does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// When the tab's steps begun before are done (a reset, a bring-forward): [`Done::Turn`].
    Turn { op: OpId, tab_id: TabId },
    /// A CDP command on the tab (or its child session); `params` `null` sends none:
    /// [`Done::Sent`].
    Send { op: OpId, tab_id: TabId, session: Option<String>, method: &'static str, params: Value },
    /// A CDP command whose answer nobody waits for.
    SendUnanswered { tab_id: TabId, session: Option<String>, method: &'static str, params: Value },
    /// The operation's answer, on the daemon connection it came from.
    Answer { generation: u64, id: RequestId, result: Result<Value, String> },
}

/// The outcome of a step, for [`Reads::completed`] (errors as messages).
#[derive(Debug)]
pub enum Done {
    Turn,
    /// A command's result.
    Sent(Result<Value, String>),
}

#[derive(Debug)]
enum Kind {
    Inspect {
        target: InspectTarget,
        /// The facts script's arguments: what to read, the agent's selectors, the request.
        args: Value,
        /// The frame read, once known.
        frame: String,
        /// The node at the point (`backendNodeId`), for a hit test.
        node: Option<Value>,
        /// 0, then 1 in a fresh world.
        attempt: u8,
        /// Our world's context, once known.
        context: Option<i64>,
        /// A focus inside closed shadow roots: the facts read outside the last one (the answer
        /// if going deeper fails), the roots entered, and the last root resolved (released at
        /// the end).
        found: Option<Value>,
        levels: u8,
        root: Option<String>,
    },
    Resend {
        frame_id: String,
        url: String,
        method: String,
        as_form: bool,
        headers: Vec<(String, String)>,
        body: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq)]
enum At {
    Turn,
    /// `Page.getLayoutMetrics`, for a hit test at this point of the viewport.
    Metrics {
        x: f64,
        y: f64,
    },
    /// `DOM.getNodeForLocation`.
    Hit,
    /// `Page.getFrameTree`, for the focus in a child session.
    FrameTree,
    /// `Page.createIsolatedWorld`.
    World,
    /// `DOM.resolveNode` in the world.
    Resolve,
    /// `Runtime.callFunctionOn`; `object`: on the node resolved (released after).
    Call {
        object: Option<String>,
    },
    /// `Runtime.callFunctionOn` for the host whose closed shadow tree holds the focus.
    Host,
    /// `DOM.describeNode` of that host (released after), for its closed root.
    Describe {
        host: String,
    },
    /// `DOM.resolveNode` of the closed root in our world.
    Shadow,
}

/// How many closed shadow roots a focus read goes into.
const CLOSED_ROOTS: u8 = 4;

#[derive(Debug)]
struct Flow {
    generation: u64,
    id: RequestId,
    tab_id: TabId,
    session: Option<String>,
    kind: Kind,
    at: At,
    op: OpId,
    /// The tab was unshared or closed.
    let_go: bool,
    /// The tab's gestures were forgotten: a world made now is not kept.
    forgotten: bool,
    /// The daemon connection went: nobody waits for the answer.
    orphaned: bool,
}

/// What a flow does after a step.
enum Next {
    Wait(At, OpId),
    End(Result<Value, String>),
}

#[derive(Debug, Default)]
pub struct Reads {
    flows: BTreeMap<OpId, Flow>,
    ops: OpIds,
}

impl Reads {
    /// The daemon's `Inspect` or `Resend` on connection `generation`: its first steps (any other
    /// operation is answered an error: [`is_ours`] says which go here).
    pub fn begin(&mut self, generation: u64, id: RequestId, op: BrowserOp) -> Vec<Step> {
        let (tab_id, session, kind) = match op {
            BrowserOp::Inspect { tab_id, child_session_id, target, selectors } => {
                let (mode, request) = match &target {
                    InspectTarget::Point { .. } => ("point", Value::Null),
                    InspectTarget::Focus => ("focus", Value::Null),
                    InspectTarget::Request { url, method, method_override, .. } => (
                        "request",
                        json!({ "url": url, "method": method, "methodOverride": method_override }),
                    ),
                };
                let args = json!([{ "value": mode }, { "value": selectors }, { "value": request }]);
                let kind = Kind::Inspect {
                    target,
                    args,
                    frame: String::new(),
                    node: None,
                    attempt: 0,
                    context: None,
                    found: None,
                    levels: 0,
                    root: None,
                };
                (tab_id, child_session_id, kind)
            }
            BrowserOp::Resend { tab_id, child_session_id, frame_id, url, method, as_form, headers, body } => {
                (tab_id, child_session_id, Kind::Resend { frame_id, url, method, as_form, headers, body })
            }
            _ => {
                let result = Err("not a gesture read".into());
                return vec![Step::Answer { generation, id, result }];
            }
        };
        let op = self.ops.issue();
        let flow = Flow {
            generation,
            id,
            tab_id,
            session,
            kind,
            at: At::Turn,
            op,
            let_go: false,
            forgotten: false,
            orphaned: false,
        };
        self.flows.insert(op, flow);
        vec![Step::Turn { op, tab_id }]
    }

    /// The outcome of the step `op`.
    pub fn completed(&mut self, op: OpId, done: Done, page: &mut Page) -> Vec<Step> {
        let Some(mut flow) = self.flows.remove(&op) else { return Vec::new() };
        let mut steps = Vec::new();
        let next = if flow.orphaned {
            None
        } else {
            match self.next(&mut flow, done, page, &mut steps) {
                Some(Next::Wait(at, op)) => {
                    (flow.at, flow.op) = (at, op);
                    self.flows.insert(op, flow);
                    return steps;
                }
                Some(Next::End(result)) => Some(result),
                None => None,
            }
        };
        if let Kind::Inspect { root: Some(root), .. } = &flow.kind {
            steps.push(release(&flow, root));
        }
        if let Some(result) = next {
            steps.push(Step::Answer { generation: flow.generation, id: flow.id, result });
        }
        steps
    }

    /// The tab was unshared or closed: its flows send nothing more.
    pub fn let_go(&mut self, tab_id: TabId) {
        for flow in self.flows.values_mut().filter(|f| f.tab_id == tab_id) {
            flow.let_go = true;
        }
    }

    /// The tab's gestures were forgotten (a reset, an unshare): a world its flows make now is
    /// not kept.
    pub fn forgotten(&mut self, tab_id: TabId) {
        for flow in self.flows.values_mut().filter(|f| f.tab_id == tab_id) {
            flow.forgotten = true;
        }
    }

    /// The daemon connection went: no flow sends anything more or answers.
    pub fn connection_lost(&mut self) {
        for flow in self.flows.values_mut() {
            flow.orphaned = true;
        }
    }

    /// Whether a flow waits for a step (for tests and the panel's debugging).
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// The step after `done`; `None` ends the flow unanswered.
    fn next(&mut self, flow: &mut Flow, done: Done, page: &mut Page, steps: &mut Vec<Step>) -> Option<Next> {
        let result = match done {
            Done::Turn if flow.at == At::Turn => Ok(Value::Null),
            Done::Sent(result) if flow.at != At::Turn => result,
            // An outcome of another kind than the step's: nothing to go on with.
            _ => return Some(Next::Wait(flow.at.clone(), flow.op)),
        };
        // The release of a resolved node goes out whatever follows (the call has ended).
        if let At::Call { object: Some(object) } | At::Describe { host: object } = &flow.at {
            steps.push(release(flow, object));
        }
        // A world answered for a tab still ours is kept, whatever the flow does next.
        if flow.at == At::World {
            if let Ok(made) = &result {
                if let Some(context) = context_id(made) {
                    if !flow.forgotten && !flow.let_go {
                        let frame = flow.frame().to_owned();
                        page.gestures.world_made(flow.tab_id, flow.session.as_deref(), &frame, context);
                    }
                }
            }
        }
        // The write went out, or the facts came: nothing more is sent, the answer stands (but
        // for facts that say the focus is in a closed shadow root, read further).
        let deeper = matches!(flow.at, At::Call { .. })
            && flow.levels() < CLOSED_ROOTS
            && result.as_ref().is_ok_and(|r| r["result"]["value"]["closedHost"] == true);
        let last = matches!((&flow.at, &result), (At::Call { .. }, Ok(_))) && !deeper;
        if flow.let_go && !last {
            return Some(Next::End(Err("the tab is no longer shared".into())));
        }
        if page.kill_switch && !last {
            return Some(Next::End(Err("the kill switch is engaged".into())));
        }
        Some(match (&flow.at, result) {
            (At::Turn, _) => self.start(flow, page, steps),
            (At::Metrics { x, y }, Ok(metrics)) => {
                // Input takes the point in the viewport, the hit test in the document: add the
                // scroll offset (measured: a scrolled page hit what lay above the button).
                let viewport = &metrics["cssVisualViewport"];
                let (dx, dy) =
                    (viewport["pageX"].as_f64().unwrap_or(0.0), viewport["pageY"].as_f64().unwrap_or(0.0));
                let params = json!({
                    "x": (x + dx).round(), "y": (y + dy).round(),
                    "includeUserAgentShadowDOM": false, "ignorePointerEventsNone": true,
                });
                self.send(flow, At::Hit, "DOM.getNodeForLocation", params, steps)
            }
            (At::Hit, Ok(hit)) => {
                let Some(frame) = hit["frameId"].as_str() else {
                    return Some(Next::End(Err("no frame at that point".into())));
                };
                if !hit["backendNodeId"].is_number() {
                    return Some(Next::End(Err("no node at that point".into())));
                }
                flow.set_frame(frame.to_owned(), Some(hit["backendNodeId"].clone()));
                self.read(flow, page, steps)
            }
            (At::FrameTree, Ok(tree)) => match tree["frameTree"]["frame"]["id"].as_str() {
                Some(frame) => {
                    flow.set_frame(frame.to_owned(), None);
                    self.read(flow, page, steps)
                }
                None => Next::End(Err("no main frame".into())),
            },
            (At::World, Ok(made)) => match context_id(&made) {
                Some(context) => self.in_world(flow, context, page, steps),
                None => Next::End(Err("no world made".into())),
            },
            (At::Resolve, Ok(resolved)) => match resolved["object"]["objectId"].as_str() {
                Some(object) => {
                    let object = object.to_owned();
                    let params = facts_call(flow, page, json!({ "objectId": object }));
                    self.send(
                        flow,
                        At::Call { object: Some(object) },
                        "Runtime.callFunctionOn",
                        params,
                        steps,
                    )
                }
                None => Next::End(Err("node not resolved".into())),
            },
            (At::Call { .. }, Ok(result)) => match (&flow.kind, facts(&result)) {
                (Kind::Resend { .. }, _) => Next::End(Ok(json!({}))),
                (Kind::Inspect { .. }, Ok(mut facts)) => {
                    if let Some(facts) = facts.as_object_mut() {
                        facts.remove("closedHost");
                    }
                    if !deeper {
                        return Some(Next::End(Ok(facts)));
                    }
                    if let Kind::Inspect { found, .. } = &mut flow.kind {
                        *found = Some(facts);
                    }
                    let params = self.host_call(flow, page);
                    self.send(flow, At::Host, "Runtime.callFunctionOn", params, steps)
                }
                (Kind::Inspect { .. }, Err(e)) => Next::End(flow.found().map_err(|_| e)),
            },
            (At::Host, Ok(host)) => match host["result"]["objectId"].as_str() {
                Some(host) => {
                    let params = json!({ "objectId": host, "depth": 0 });
                    self.send(flow, At::Describe { host: host.to_owned() }, "DOM.describeNode", params, steps)
                }
                None => Next::End(flow.found()),
            },
            (At::Describe { .. }, Ok(described)) => {
                let roots = described["node"]["shadowRoots"].as_array().cloned().unwrap_or_default();
                let closed = roots.iter().find(|r| r["shadowRootType"] == "closed");
                match (closed.map(|r| r["backendNodeId"].clone()), flow.context()) {
                    (Some(root), Some(context)) if root.is_number() => {
                        let params = json!({ "backendNodeId": root, "executionContextId": context });
                        self.send(flow, At::Shadow, "DOM.resolveNode", params, steps)
                    }
                    _ => Next::End(flow.found()),
                }
            }
            (At::Shadow, Ok(resolved)) => match resolved["object"]["objectId"].as_str() {
                Some(root) => {
                    let root = root.to_owned();
                    let mut before = None;
                    if let Kind::Inspect { root: last, levels, .. } = &mut flow.kind {
                        before = last.replace(root.clone());
                        *levels += 1;
                    }
                    if let Some(before) = before {
                        steps.push(release(flow, &before));
                    }
                    let params = facts_call(flow, page, json!({ "objectId": root }));
                    self.send(flow, At::Call { object: None }, "Runtime.callFunctionOn", params, steps)
                }
                None => Next::End(flow.found()),
            },
            // Going into a closed root failed: what was read outside it stands.
            (At::Host | At::Describe { .. } | At::Shadow, Err(_)) => Next::End(flow.found()),
            (At::Call { .. }, Err(_)) if flow.levels() > 0 => Next::End(flow.found()),
            // Most likely our world went with its document (a frame keeps its id across
            // navigations): once more in a new one.
            (At::Resolve | At::Call { .. }, Err(_)) if flow.first_attempt() => {
                if let Kind::Inspect { attempt, .. } = &mut flow.kind {
                    *attempt += 1;
                }
                self.read(flow, page, steps)
            }
            (_, Err(e)) => Next::End(Err(e)),
        })
    }

    /// The tab's turn came: the frame to read (or the world to write from).
    fn start(&mut self, flow: &mut Flow, page: &mut Page, steps: &mut Vec<Step>) -> Next {
        let target = match &flow.kind {
            Kind::Resend { .. } => return self.world(flow, true, page, steps),
            Kind::Inspect { target, .. } => target.clone(),
        };
        match target {
            InspectTarget::Point { x, y } => {
                self.send(flow, At::Metrics { x, y }, "Page.getLayoutMetrics", json!({}), steps)
            }
            InspectTarget::Focus => {
                // A page's main frame id is its target id.
                let known = match flow.session {
                    None => page.sharing.get(&flow.tab_id).map(|t| t.target_id.clone()),
                    Some(_) => None,
                };
                match known {
                    Some(frame) => {
                        flow.set_frame(frame, None);
                        self.read(flow, page, steps)
                    }
                    None => self.send(flow, At::FrameTree, "Page.getFrameTree", Value::Null, steps),
                }
            }
            InspectTarget::Request { frame_id, .. } => {
                flow.set_frame(frame_id, None);
                self.read(flow, page, steps)
            }
        }
    }

    /// Reads the facts in our world of the frame: the one made before on the first attempt.
    fn read(&mut self, flow: &mut Flow, page: &mut Page, steps: &mut Vec<Step>) -> Next {
        let fresh = !flow.first_attempt();
        self.world(flow, fresh, page, steps)
    }

    /// Our isolated world in the flow's frame, made when missing (or `fresh`).
    fn world(&mut self, flow: &mut Flow, fresh: bool, page: &mut Page, steps: &mut Vec<Step>) -> Next {
        if !fresh {
            if let Some(context) = page.gestures.world(flow.tab_id, flow.session.as_deref(), flow.frame()) {
                return self.in_world(flow, context, page, steps);
            }
        }
        let name = page.gestures.world_name(&mut *page.random);
        let params = json!({ "frameId": flow.frame(), "worldName": name, "grantUniveralAccess": false });
        self.send(flow, At::World, "Page.createIsolatedWorld", params, steps)
    }

    /// In our world (`context`): the node resolved there, or the script run.
    fn in_world(&mut self, flow: &mut Flow, context: i64, page: &mut Page, steps: &mut Vec<Step>) -> Next {
        if let Kind::Inspect { context: known, .. } = &mut flow.kind {
            *known = Some(context);
        }
        let params = match &flow.kind {
            Kind::Inspect { node: Some(node), .. } => {
                let params = json!({ "backendNodeId": node, "executionContextId": context });
                return self.send(flow, At::Resolve, "DOM.resolveNode", params, steps);
            }
            Kind::Inspect { node: None, .. } => {
                facts_call(flow, page, json!({ "executionContextId": context }))
            }
            // By our world's own prototypes: the page's scripts can neither intercept nor
            // change it, and see no submit event (as with `form.submit()`).
            Kind::Resend { url, method, as_form, headers, body, .. } => {
                let referrer =
                    headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("referer")).map(|(_, v)| v.clone());
                json!({
                    "executionContextId": context,
                    "functionDeclaration": page.gestures.our_script(page.resend_js, &mut *page.random),
                    "arguments": [
                        { "value": url }, { "value": method }, { "value": as_form },
                        { "value": headers }, { "value": body }, { "value": referrer },
                    ],
                    "silent": true,
                })
            }
        };
        self.send(flow, At::Call { object: None }, "Runtime.callFunctionOn", params, steps)
    }

    /// The facts script, for the host whose closed shadow tree holds the focus: outside any
    /// closed root, or in the last one entered.
    fn host_call(&self, flow: &Flow, page: &mut Page) -> Value {
        let Kind::Inspect { args, context, root, .. } = &flow.kind else {
            unreachable!("only an inspection reads facts")
        };
        let mut args = args.clone();
        args[0] = json!({ "value": "focusHost" });
        let on = match (root, context) {
            (Some(root), _) => json!({ "objectId": root }),
            (None, context) => json!({ "executionContextId": context }),
        };
        let script = page.gestures.our_script(page.facts_js, &mut *page.random);
        let mut params = json!({ "functionDeclaration": script, "arguments": args, "returnByValue": false, "silent": true });
        if let (Some(params), Value::Object(on)) = (params.as_object_mut(), on) {
            params.extend(on);
        }
        params
    }

    fn send(
        &mut self,
        flow: &Flow,
        at: At,
        method: &'static str,
        params: Value,
        steps: &mut Vec<Step>,
    ) -> Next {
        let op = self.ops.issue();
        steps.push(Step::Send { op, tab_id: flow.tab_id, session: flow.session.clone(), method, params });
        Next::Wait(at, op)
    }
}

impl Flow {
    /// The frame read, or written from.
    fn frame(&self) -> &str {
        match &self.kind {
            Kind::Inspect { frame, .. } => frame,
            Kind::Resend { frame_id, .. } => frame_id,
        }
    }

    fn set_frame(&mut self, frame_id: String, at: Option<Value>) {
        if let Kind::Inspect { frame, node, .. } = &mut self.kind {
            (*frame, *node) = (frame_id, at);
        }
    }

    /// An inspection not yet retried in a fresh world.
    fn first_attempt(&self) -> bool {
        matches!(self.kind, Kind::Inspect { attempt: 0, .. })
    }

    /// The closed shadow roots a focus read went into.
    fn levels(&self) -> u8 {
        match self.kind {
            Kind::Inspect { levels, .. } => levels,
            Kind::Resend { .. } => 0,
        }
    }

    fn context(&self) -> Option<i64> {
        match self.kind {
            Kind::Inspect { context, .. } => context,
            Kind::Resend { .. } => None,
        }
    }

    /// The facts read outside the closed root being gone into.
    fn found(&self) -> Result<Value, String> {
        match &self.kind {
            Kind::Inspect { found: Some(found), .. } => Ok(found.clone()),
            _ => Err("the page gave no facts".into()),
        }
    }
}

/// A release of an object of ours, which nobody waits for.
fn release(flow: &Flow, object: &str) -> Step {
    Step::SendUnanswered {
        tab_id: flow.tab_id,
        session: flow.session.clone(),
        method: "Runtime.releaseObject",
        params: json!({ "objectId": object }),
    }
}

/// `gesture_facts.js` called on `on` (an object, or our world's context).
fn facts_call(flow: &Flow, page: &mut Page, on: Value) -> Value {
    let Kind::Inspect { args, .. } = &flow.kind else { unreachable!("only an inspection reads facts") };
    let script = page.gestures.our_script(page.facts_js, &mut *page.random);
    let mut params =
        json!({ "functionDeclaration": script, "arguments": args, "returnByValue": true, "silent": true });
    if let (Some(params), Value::Object(on)) = (params.as_object_mut(), on) {
        params.extend(on);
    }
    params
}

/// Whether the operation runs here ([`Reads::begin`]).
pub fn is_ours(op: &BrowserOp) -> bool {
    matches!(op, BrowserOp::Inspect { .. } | BrowserOp::Resend { .. })
}

/// `Page.createIsolatedWorld`'s context.
fn context_id(made: &Value) -> Option<i64> {
    made["executionContextId"].as_f64().map(|id| id as i64)
}

/// The facts `gesture_facts.js` returned, or why there are none.
fn facts(result: &Value) -> Result<Value, String> {
    let thrown = &result["exceptionDetails"]["exception"];
    if !thrown.is_null() {
        let description = thrown["description"].as_str().unwrap_or_default();
        return Err(format!("reading the page threw: {description}"));
    }
    match result.get("result").and_then(|r| r.get("value")) {
        Some(value) => Ok(value.clone()),
        None => Err("the page gave no facts".into()),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;
    use crate::sharing::tests::tab;

    /// A fake Chrome for the flows: the steps waiting for their outcome, and what it answers.
    #[derive(Default)]
    struct Chrome {
        reads: Reads,
        sharing: Sharing,
        gestures: Gestures,
        kill_switch: bool,
        pending: VecDeque<Step>,
        log: Vec<Step>,
        /// The next context `Page.createIsolatedWorld` makes.
        contexts: i64,
        /// How many `Runtime.callFunctionOn` fail (a context gone with its document).
        failing_calls: usize,
        /// What the next `Runtime.callFunctionOn`s answer, before the usual facts.
        calls: VecDeque<Result<Value, String>>,
        /// What `DOM.describeNode` answers.
        described: Value,
    }

    fn resend_op(frame_id: &str) -> BrowserOp {
        BrowserOp::Resend {
            tab_id: 1,
            child_session_id: None,
            frame_id: frame_id.into(),
            url: "https://example.test/buy".into(),
            method: "POST".into(),
            as_form: false,
            headers: vec![("Referer".into(), "https://example.test/".into())],
            body: Some("a=1".into()),
        }
    }

    fn inspect_op(target: InspectTarget, session: Option<&str>) -> BrowserOp {
        BrowserOp::Inspect {
            tab_id: 1,
            child_session_id: session.map(str::to_owned),
            target,
            selectors: vec!["[data-buy]".into()],
        }
    }

    fn request(frame_id: &str) -> InspectTarget {
        InspectTarget::Request {
            frame_id: frame_id.into(),
            url: "https://example.test/buy".into(),
            method: "POST".into(),
            method_override: String::new(),
        }
    }

    impl Chrome {
        fn sharing() -> Chrome {
            let mut chrome = Chrome { contexts: 7, ..Chrome::default() };
            chrome.sharing.add(tab(1, "a", false), 0.0);
            chrome
        }

        fn take(&mut self, steps: Vec<Step>) {
            for step in steps {
                self.log.push(step.clone());
                if matches!(step, Step::Turn { .. } | Step::Send { .. }) {
                    self.pending.push_back(step);
                }
            }
        }

        fn begin(&mut self, op: BrowserOp) {
            assert!(is_ours(&op));
            let steps = self.reads.begin(1, 99, op);
            self.take(steps);
        }

        fn complete(&mut self, op: OpId, done: Done) {
            let mut random = || 0xabc;
            let mut page = Page {
                sharing: &self.sharing,
                gestures: &mut self.gestures,
                kill_switch: self.kill_switch,
                random: &mut random,
                facts_js: "FACTS",
                resend_js: "RESEND",
            };
            let steps = self.reads.completed(op, done, &mut page);
            self.take(steps);
        }

        fn outcome(&mut self, step: &Step) -> (OpId, Done) {
            match step {
                Step::Turn { op, .. } => (*op, Done::Turn),
                Step::Send { op, method, .. } => (*op, Done::Sent(self.answer(method))),
                _ => unreachable!("no outcome"),
            }
        }

        fn answer(&mut self, method: &str) -> Result<Value, String> {
            Ok(match method {
                "Page.getLayoutMetrics" => json!({ "cssVisualViewport": { "pageX": 10, "pageY": 100 } }),
                "DOM.getNodeForLocation" => json!({ "frameId": "F", "backendNodeId": 42 }),
                "Page.getFrameTree" => json!({ "frameTree": { "frame": { "id": "M" } } }),
                "Page.createIsolatedWorld" => {
                    self.contexts += 1;
                    json!({ "executionContextId": self.contexts - 1 })
                }
                "DOM.resolveNode" => json!({ "object": { "objectId": "O1" } }),
                "Runtime.callFunctionOn" if !self.calls.is_empty() => return self.calls.pop_front().unwrap(),
                "DOM.describeNode" => self.described.clone(),
                "Runtime.callFunctionOn" if self.failing_calls > 0 => {
                    self.failing_calls -= 1;
                    return Err("Cannot find context with specified id".into());
                }
                "Runtime.callFunctionOn" => json!({ "result": { "value": { "read": true } } }),
                other => unreachable!("{other}"),
            })
        }

        /// Answers the oldest step waiting.
        fn step(&mut self) -> bool {
            let Some(step) = self.pending.pop_front() else { return false };
            let (op, done) = self.outcome(&step);
            self.complete(op, done);
            true
        }

        fn run(&mut self) {
            while self.step() {}
        }

        fn sent(&self) -> Vec<&'static str> {
            let method = |s: &Step| match s {
                Step::Send { method, .. } | Step::SendUnanswered { method, .. } => Some(*method),
                _ => None,
            };
            self.log.iter().filter_map(method).collect()
        }

        fn params(&self, wanted: &str) -> Vec<Value> {
            let of = |s: &Step| match s {
                Step::Send { method, params, .. } | Step::SendUnanswered { method, params, .. }
                    if *method == wanted =>
                {
                    Some(params.clone())
                }
                _ => None,
            };
            self.log.iter().filter_map(of).collect()
        }

        fn answers(&self) -> Vec<Result<Value, String>> {
            let of = |s: &Step| match s {
                Step::Answer { generation: 1, id: 99, result } => Some(result.clone()),
                _ => None,
            };
            self.log.iter().filter_map(of).collect()
        }
    }

    #[test]
    fn a_resend_makes_a_fresh_world_in_its_frame_and_sends_the_write_from_it() {
        let mut chrome = Chrome::sharing();
        chrome.gestures.world_made(1, None, "F", 3); // an older world is not used
        chrome.begin(resend_op("F"));
        chrome.run();
        assert!(matches!(chrome.log[0], Step::Turn { tab_id: 1, .. }));
        assert_eq!(chrome.sent(), ["Page.createIsolatedWorld", "Runtime.callFunctionOn"]);
        let world = &chrome.params("Page.createIsolatedWorld")[0];
        assert_eq!(world["frameId"], "F");
        assert_eq!(world["worldName"], chrome.gestures.world_name(|| unreachable!()));
        let call = &chrome.params("Runtime.callFunctionOn")[0];
        assert_eq!(call["executionContextId"], 7);
        assert!(call["functionDeclaration"].as_str().unwrap().starts_with("RESEND"));
        assert_eq!(call["arguments"][5]["value"], "https://example.test/", "the referrer");
        assert_eq!(chrome.answers(), [Ok(json!({}))]);
        assert_eq!(chrome.gestures.world(1, None, "F"), Some(7), "the new world is kept");
        assert!(chrome.reads.is_empty());
    }

    /// A resend stopped by `stop` after `steps_before` of its steps were answered.
    fn resend_stopped(steps_before: usize, stop: impl FnOnce(&mut Chrome)) -> Chrome {
        let mut chrome = Chrome::sharing();
        chrome.begin(resend_op("F"));
        for _ in 0..steps_before {
            chrome.step();
        }
        stop(&mut chrome);
        chrome.run();
        chrome
    }

    #[test]
    fn no_write_goes_out_after_the_kill_switch() {
        // Engaged while the tab's turn comes, or while the world is made.
        for steps_before in 0..2 {
            let chrome = resend_stopped(steps_before, |chrome| chrome.kill_switch = true);
            assert!(!chrome.sent().contains(&"Runtime.callFunctionOn"), "{:?}", chrome.log);
            assert_eq!(chrome.answers(), [Err("the kill switch is engaged".to_owned())]);
        }
    }

    #[test]
    fn no_write_goes_out_to_a_tab_unshared_or_closed_meanwhile() {
        for steps_before in 0..2 {
            // The shell's `sharing::unshare` (onRemoved too).
            let chrome = resend_stopped(steps_before, |chrome| {
                chrome.sharing.unshare(1);
                chrome.reads.forgotten(1);
                chrome.reads.let_go(1);
            });
            assert_eq!(chrome.sent().len(), steps_before, "nothing more is sent: {:?}", chrome.log);
            assert_eq!(chrome.answers(), [Err("the tab is no longer shared".to_owned())]);
        }
    }

    #[test]
    fn a_flow_whose_daemon_went_sends_nothing_more_and_answers_nothing() {
        for op in [resend_op("F"), inspect_op(InspectTarget::Point { x: 1.0, y: 1.0 }, None)] {
            let mut chrome = Chrome::sharing();
            chrome.begin(op);
            chrome.step();
            let sent = chrome.sent().len();
            chrome.reads.connection_lost();
            chrome.run();
            assert_eq!(chrome.sent().len(), sent, "{:?}", chrome.log);
            assert!(chrome.answers().is_empty());
            assert!(chrome.reads.is_empty());
        }
    }

    #[test]
    fn a_world_made_while_the_tabs_gestures_were_forgotten_is_not_kept() {
        // A reset forgets the tab's worlds while one is being made for a read.
        let mut chrome = Chrome::sharing();
        chrome.begin(inspect_op(request("F"), None));
        chrome.step(); // the turn: the world is being made
        chrome.gestures.forget(1);
        chrome.reads.forgotten(1);
        chrome.run();
        assert_eq!(chrome.answers(), [Ok(json!({ "read": true }))], "the read itself goes on");
        assert_eq!(chrome.gestures.world(1, None, "F"), None);
    }

    #[test]
    fn a_point_is_hit_tested_in_the_document_and_read_on_its_node() {
        let mut chrome = Chrome::sharing();
        chrome.begin(inspect_op(InspectTarget::Point { x: 5.2, y: 5.0 }, Some("S")));
        chrome.run();
        assert_eq!(
            chrome.sent(),
            [
                "Page.getLayoutMetrics",
                "DOM.getNodeForLocation",
                "Page.createIsolatedWorld",
                "DOM.resolveNode",
                "Runtime.callFunctionOn",
                "Runtime.releaseObject"
            ]
        );
        let hit = &chrome.params("DOM.getNodeForLocation")[0];
        assert_eq!((hit["x"].as_f64(), hit["y"].as_f64()), (Some(15.0), Some(105.0)), "plus the scroll");
        let resolve = &chrome.params("DOM.resolveNode")[0];
        assert_eq!(
            (resolve["backendNodeId"].as_f64(), &resolve["executionContextId"]),
            (Some(42.0), &json!(7))
        );
        let call = &chrome.params("Runtime.callFunctionOn")[0];
        assert_eq!(call["objectId"], "O1");
        assert_eq!(call["arguments"][0]["value"], "point");
        assert_eq!(call["arguments"][1]["value"], json!(["[data-buy]"]));
        assert_eq!(chrome.params("Runtime.releaseObject"), [json!({ "objectId": "O1" })]);
        assert_eq!(chrome.answers(), [Ok(json!({ "read": true }))]);
        assert_eq!(chrome.gestures.world(1, Some("S"), "F"), Some(7));
    }

    #[test]
    fn the_focus_is_read_in_the_main_frame_known_or_asked_for() {
        let mut chrome = Chrome::sharing();
        chrome.gestures.world_made(1, None, "T1", 3);
        chrome.begin(inspect_op(InspectTarget::Focus, None));
        chrome.run();
        assert_eq!(chrome.sent(), ["Runtime.callFunctionOn"], "the page's frame and world are known");
        assert_eq!(chrome.params("Runtime.callFunctionOn")[0]["executionContextId"], 3);

        let mut chrome = Chrome::sharing();
        chrome.begin(inspect_op(InspectTarget::Focus, Some("S")));
        chrome.run();
        assert_eq!(
            chrome.sent(),
            ["Page.getFrameTree", "Page.createIsolatedWorld", "Runtime.callFunctionOn"]
        );
        assert_eq!(chrome.params("Page.getFrameTree"), [Value::Null], "sent with no params");
        assert_eq!(chrome.params("Page.createIsolatedWorld")[0]["frameId"], "M");
    }

    /// A focus read whose first facts say the focus is in a closed shadow root.
    fn closed_focus(calls: Vec<Result<Value, String>>, described: Value) -> Chrome {
        let mut chrome = Chrome::sharing();
        chrome.gestures.world_made(1, None, "T1", 3);
        let outside = json!({ "result": { "value": { "outside": true, "closedHost": true } } });
        chrome.calls = std::iter::once(Ok(outside)).chain(calls).collect();
        chrome.described = described;
        chrome.begin(inspect_op(InspectTarget::Focus, None));
        chrome.run();
        chrome
    }

    fn closed_root(id: i64) -> Value {
        json!({ "node": { "shadowRoots": [
            { "shadowRootType": "open", "backendNodeId": 5 },
            { "shadowRootType": "closed", "backendNodeId": id },
        ] } })
    }

    #[test]
    fn a_focus_in_a_closed_shadow_root_is_read_in_that_root() {
        let host = Ok(json!({ "result": { "type": "object", "objectId": "HOST" } }));
        let inside = Ok(json!({ "result": { "value": { "inside": true, "closedHost": false } } }));
        let chrome = closed_focus(vec![host, inside], closed_root(77));
        assert_eq!(
            chrome.sent(),
            [
                "Runtime.callFunctionOn",
                "Runtime.callFunctionOn",
                "DOM.describeNode",
                "Runtime.releaseObject",
                "DOM.resolveNode",
                "Runtime.callFunctionOn",
                "Runtime.releaseObject",
            ]
        );
        let calls = chrome.params("Runtime.callFunctionOn");
        assert_eq!(calls[1]["arguments"][0]["value"], "focusHost");
        assert_eq!(calls[1]["returnByValue"], false, "the host as an object");
        assert_eq!(calls[1]["executionContextId"], 3);
        assert_eq!(chrome.params("DOM.describeNode")[0], json!({ "objectId": "HOST", "depth": 0 }));
        let resolve = &chrome.params("DOM.resolveNode")[0];
        assert_eq!(resolve, &json!({ "backendNodeId": 77, "executionContextId": 3 }), "the closed one");
        assert_eq!(calls[2]["objectId"], "O1", "read again on the root");
        assert_eq!(calls[2]["arguments"][0]["value"], "focus");
        let released = chrome.params("Runtime.releaseObject");
        assert_eq!(released, [json!({ "objectId": "HOST" }), json!({ "objectId": "O1" })]);
        assert_eq!(chrome.answers(), [Ok(json!({ "inside": true }))], "the flag is not the daemon's");
    }

    #[test]
    fn a_focus_that_cannot_be_followed_into_a_closed_root_is_answered_as_read_outside() {
        let outside = || Ok(json!({ "outside": true }));
        // No host after all, no closed root, a call or resolve that fails.
        let none = Ok(json!({ "result": { "type": "object", "subtype": "null", "value": null } }));
        let chrome = closed_focus(vec![none], Value::Null);
        assert_eq!(chrome.sent(), ["Runtime.callFunctionOn", "Runtime.callFunctionOn"]);
        assert_eq!(chrome.answers(), [outside()]);
        let host = || Ok(json!({ "result": { "objectId": "HOST" } }));
        let open_only =
            json!({ "node": { "shadowRoots": [{ "shadowRootType": "open", "backendNodeId": 5 }] } });
        let chrome = closed_focus(vec![host()], open_only);
        assert_eq!(chrome.answers(), [outside()]);
        assert!(!chrome.sent().contains(&"DOM.resolveNode"));
        let chrome = closed_focus(vec![host(), Err("gone".into())], closed_root(77));
        assert_eq!(chrome.answers(), [outside()]);
        assert_eq!(chrome.params("Runtime.releaseObject").len(), 2, "the host and the root");
        let chrome = closed_focus(vec![Err("Cannot find context".into())], Value::Null);
        assert_eq!(chrome.answers(), [outside()]);
        assert!(chrome.reads.is_empty());
    }

    #[test]
    fn closed_roots_are_gone_into_four_deep_at_most_and_not_after_the_kill_switch() {
        let host = || Ok(json!({ "result": { "objectId": "HOST" } }));
        let deeper = || Ok(json!({ "result": { "value": { "closedHost": true } } }));
        let mut calls = Vec::new();
        for _ in 0..6 {
            calls.extend([host(), deeper()]);
        }
        let chrome = closed_focus(calls, closed_root(77));
        assert_eq!(chrome.params("DOM.resolveNode").len(), 4);
        assert_eq!(chrome.answers(), [Ok(json!({}))], "the deepest facts, unflagged");

        let mut chrome = Chrome::sharing();
        chrome.gestures.world_made(1, None, "T1", 3);
        chrome.calls = VecDeque::from([Ok(json!({ "result": { "value": { "closedHost": true } } }))]);
        chrome.begin(inspect_op(InspectTarget::Focus, None));
        chrome.step(); // the turn
        chrome.kill_switch = true;
        chrome.run();
        assert_eq!(chrome.sent(), ["Runtime.callFunctionOn"]);
        assert_eq!(chrome.answers(), [Err("the kill switch is engaged".into())]);
    }

    #[test]
    fn a_world_gone_with_its_document_is_made_afresh_once() {
        let mut chrome = Chrome::sharing();
        chrome.gestures.world_made(1, None, "F", 3);
        chrome.failing_calls = 1;
        chrome.begin(inspect_op(request("F"), None));
        chrome.run();
        assert_eq!(
            chrome.sent(),
            ["Runtime.callFunctionOn", "Page.createIsolatedWorld", "Runtime.callFunctionOn"]
        );
        let sent = json!({ "url": "https://example.test/buy", "method": "POST", "methodOverride": "" });
        assert_eq!(chrome.params("Runtime.callFunctionOn")[1]["arguments"][2]["value"], sent);
        assert_eq!(chrome.answers(), [Ok(json!({ "read": true }))]);
        assert_eq!(chrome.gestures.world(1, None, "F"), Some(7));

        // Only once.
        let mut chrome = Chrome::sharing();
        chrome.failing_calls = 2;
        chrome.begin(inspect_op(request("F"), None));
        chrome.run();
        assert_eq!(chrome.sent().iter().filter(|m| **m == "Runtime.callFunctionOn").count(), 2);
        assert_eq!(chrome.answers(), [Err("Cannot find context with specified id".to_owned())]);
    }

    #[test]
    fn what_the_page_threw_or_did_not_give_is_the_answer() {
        let thrown = json!({ "exceptionDetails": { "exception": { "description": "TypeError: x" } } });
        assert_eq!(facts(&thrown), Err("reading the page threw: TypeError: x".into()));
        assert_eq!(facts(&json!({ "result": {} })), Err("the page gave no facts".into()));
        assert_eq!(facts(&json!({ "result": { "value": null } })), Ok(Value::Null));
    }

    #[test]
    fn a_stale_or_unknown_operation_changes_nothing_and_other_ops_are_refused() {
        let mut chrome = Chrome::sharing();
        let close = BrowserOp::CloseTab { tab_id: 1 };
        assert!(!is_ours(&close));
        assert!(matches!(chrome.reads.begin(1, 5, close)[..], [Step::Answer { result: Err(_), .. }]));
        chrome.begin(resend_op("F"));
        let Some(Step::Turn { op: turn, .. }) = chrome.pending.front().cloned() else { panic!("turn") };
        chrome.complete(OpId(99), Done::Turn);
        chrome.complete(turn, Done::Sent(Ok(json!({}))));
        assert_eq!(chrome.log.len(), 1, "nothing new: {:?}", chrome.log);
        chrome.run();
        let steps = chrome.log.len();
        chrome.complete(turn, Done::Turn);
        assert_eq!(chrome.log.len(), steps, "answered already");
    }
}
