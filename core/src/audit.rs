//! The audit trail: every command that reads or changes a page, with its agent, tab, method, the
//! URL of a navigation and what the policy made of it. Never params or results (they would make
//! the trail the leak it guards against), and never a secret of the daemon's in any field
//! ([`crate::redact`]). The shell appends each [`AuditRecord`] to a file with
//! the time; the side panel shows each agent's last few.

pub use crate::audit_record::{AuditRecord, Identity, Outcome};
use crate::frames::ClientCommand;
use crate::steps::{Step, Steps};
use crate::{AgentId, Core, Output};
use std::collections::VecDeque;
use tabtunnel_wire::gestures::ElementFacts;
use tabtunnel_wire::{Activity, TabId};

/// How many recent steps per agent the side panel shows.
pub const RECENT_PER_AGENT: usize = 8;

/// Protocol plumbing clients send to set themselves up; it neither reads nor changes a page.
pub fn is_plumbing(method: &str) -> bool {
    method.ends_with(".enable")
        || method.ends_with(".disable")
        || matches!(
            method,
            "Runtime.runIfWaitingForDebugger"
                | "Runtime.releaseObject"
                | "Runtime.releaseObjectGroup"
                | "Page.setLifecycleEventsEnabled"
                | "Page.getFrameTree"
                | "Target.setAutoAttach"
                | "Target.setDiscoverTargets"
                | "Target.getTargets"
                | "Target.getTargetInfo"
                | "Target.getBrowserContexts"
                | "Target.getDevToolsTarget"
                | "Target.attachToTarget"
                | "Target.attachToBrowserTarget"
                | "Target.detachFromTarget"
                | "Browser.getVersion"
                | "Browser.setDownloadBehavior"
        )
}

/// An agent's last steps.
#[derive(Debug, Default)]
pub(crate) struct Recent(VecDeque<Activity>);

impl Recent {
    /// A record of the step shown last replaces it (the step's words got better); another
    /// step is a new line.
    pub fn push(&mut self, mut activity: Activity) {
        if let Some(last) = self.0.back_mut().filter(|l| l.step_id == activity.step_id) {
            // A later record of the step (a held click's release) keeps what the human answered.
            activity.question = activity.question.or(last.question);
            if activity.outcome == "allowed" {
                activity.outcome = std::mem::take(&mut last.outcome);
            }
            *last = activity;
            return;
        }
        if self.0.len() == RECENT_PER_AGENT {
            self.0.pop_front();
        }
        self.0.push_back(activity);
    }

    /// The step got its element's name.
    pub fn renamed(&mut self, step: &Step) {
        if let Some(last) = self.0.back_mut().filter(|l| l.step_id == step.id) {
            last.step = step.words.clone();
        }
    }

    pub fn to_vec(&self) -> Vec<Activity> {
        self.0.iter().cloned().collect()
    }
}

impl Core {
    /// Records one step of an agent's.
    pub(crate) fn audit(
        &mut self,
        agent: &AgentId,
        tab: Option<TabId>,
        method: &str,
        url: Option<&str>,
        outcome: Outcome,
    ) {
        self.record(agent, tab, method, url, outcome, None, None, None);
    }

    /// Records a command the policy let through, with its params (the words read an `Input`
    /// command's: which key, how many characters).
    pub(crate) fn audit_allowed(
        &mut self,
        agent: &AgentId,
        tab: Option<TabId>,
        cmd: &ClientCommand,
        url: Option<&str>,
    ) {
        self.record(agent, tab, cmd.method, url, Outcome::Allowed, None, cmd.params.map(|p| p.get()), None);
    }

    /// Records a question of the gesture guard's, with what the human was shown; `asked` is its
    /// id when it was put to the human (the panel's history shows its picture).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn audit_question(
        &mut self,
        agent: &AgentId,
        tab: Option<TabId>,
        method: &str,
        url: Option<&str>,
        outcome: Outcome,
        mut question: tabtunnel_wire::gestures::GestureQuestion,
        asked: Option<u64>,
    ) {
        question.rect = None;
        self.record(agent, tab, method, url, outcome, Some(Box::new(question)), None, asked);
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        agent: &AgentId,
        tab: Option<TabId>,
        method: &str,
        url: Option<&str>,
        outcome: Outcome,
        question: Option<Box<tabtunnel_wire::gestures::GestureQuestion>>,
        params: Option<&str>,
        asked: Option<u64>,
    ) {
        let url = url.map(str::to_owned);
        let identity = self.agents.identity(agent);
        let mut record = AuditRecord {
            agent: agent.clone(),
            tab,
            method: method.to_owned(),
            url,
            outcome,
            question,
            step: Step::default(),
            identity,
        };
        // Redacted as it leaves the core, words and the side panel's activity too
        // (`redact::output`).
        let event = crate::steps::Event {
            tab: record.tab,
            method: &record.method,
            params: params.filter(|_| method.starts_with("Input.")),
            url: record.url.as_deref(),
            outcome: &record.outcome,
            question: record.question.as_deref(),
        };
        let Some(agent) = self.agents.get_mut(agent) else {
            record.step = Steps::default().fold(event);
            return self.out.push_back(Output::Audit(record));
        };
        record.step = agent.steps.fold(event);
        agent.recent.push(Activity {
            method: record.method.clone(),
            url: record.url.clone(),
            outcome: record.outcome.describe(),
            at_ms: self.now_ms,
            step: record.step.words.clone(),
            step_id: record.step.id,
            question: asked,
        });
        self.out.push_back(Output::Audit(record));
    }

    /// The guard read the element an agent's input on `tab` acts on: its step is named after it.
    pub(crate) fn step_element(&mut self, agent: &AgentId, tab: TabId, element: &ElementFacts) {
        let name = if element.name.trim().is_empty() { &element.text } else { &element.name };
        let name = self.redactor.text(name).into_owned();
        let Some(record) = self.agents.get_mut(agent) else { return };
        if let Some(step) = record.steps.element(tab, &name, element.editable) {
            record.recent.renamed(&step);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plumbing_is_not_audited_and_outcomes_read_well() {
        for plumbing in ["Runtime.enable", "Network.disable", "Target.setAutoAttach", "Runtime.releaseObject"]
        {
            assert!(is_plumbing(plumbing), "{plumbing}");
        }
        for step in [
            "Runtime.evaluate",
            "Input.dispatchMouseEvent",
            "Page.navigate",
            "Target.createTarget",
            "Network.getCookies",
        ] {
            assert!(!is_plumbing(step), "{step}");
        }
        let asked =
            Outcome::Asked { rule: "ask_origins \"https://m\" in [default]".into(), answer: "denied" };
        assert_eq!(asked.describe(), "asked (ask_origins \"https://m\" in [default]): denied");
        let mut recent = Recent::default();
        let activity = |i: usize, step: String| Activity {
            method: format!("M.{i}"),
            url: None,
            outcome: "allowed".into(),
            at_ms: i as u64,
            step,
            step_id: i as u64,
            question: None,
        };
        for i in 0..RECENT_PER_AGENT + 2 {
            recent.push(activity(i, format!("step {i}")));
            // Another record of the same step replaces its line.
            recent.push(activity(i, format!("step {i}, better")));
        }
        let kept = recent.to_vec();
        assert_eq!(kept.len(), RECENT_PER_AGENT);
        assert_eq!(kept.last().unwrap().method, format!("M.{}", RECENT_PER_AGENT + 1));
        assert_eq!(kept.last().unwrap().step, format!("step {}, better", RECENT_PER_AGENT + 1));
    }
}
