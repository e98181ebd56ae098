//! One line of the audit trail and what the policy made of the command: what the core hands
//! its shell ([`crate::Output::Audit`]); `audit.rs` keeps the trail's rules.

use crate::agent_id::AgentId;
use tabtunnel_wire::TabId;

#[derive(Debug, Clone, PartialEq)]
pub struct AuditRecord {
    pub agent: AgentId,
    pub tab: Option<TabId>,
    /// The CDP method, or `navigation` for one the page started itself (a link, a form, a
    /// script).
    pub method: String,
    /// Where a navigation goes.
    pub url: Option<String>,
    pub outcome: Outcome,
    /// A question of the gesture guard's: what the human was shown (never a picture, never
    /// what was typed into a field).
    pub question: Option<Box<tabtunnel_wire::gestures::GestureQuestion>>,
    /// The step it belongs to, in words (`steps.rs`).
    pub step: Step,
    /// Who sent it: the agent's token and client.
    pub identity: Identity,
}

/// How an agent's client came in: never the token itself.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Identity {
    /// The id of the agent token it presented (`tabtunnel agent list`), if it presented one.
    pub token_id: Option<String>,
    /// The MCP client's name and version where known, else the CDP client's User-Agent.
    pub client: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Allowed,
    Denied {
        rule: String,
    },
    /// The human was asked; `answer` is `allowed once`, `always allowed`, `denied` or
    /// `not answered in time`.
    Asked {
        rule: String,
        answer: &'static str,
    },
    /// Allowed without a question by this rule (the policy's choices per kind of gesture).
    AllowedBy {
        rule: String,
    },
    /// A standing answer of the human's (`rule` names it) was `given`, `used`, `taken back` or
    /// `expired`.
    Standing {
        event: &'static str,
        rule: String,
    },
}

impl Outcome {
    pub fn describe(&self) -> String {
        match self {
            Outcome::Allowed => "allowed".into(),
            Outcome::Denied { rule } => format!("denied by {rule}"),
            Outcome::Asked { rule, answer } => format!("asked ({rule}): {answer}"),
            Outcome::AllowedBy { rule } => format!("allowed by {rule}"),
            Outcome::Standing { event, rule } => format!("{rule}: {event}"),
        }
    }
}

/// One step as a record carries it: records with the same `id` (of one agent) are one step, and
/// the last one's words say it best (folded in `crate::steps`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Step {
    pub id: u64,
    pub words: String,
}
