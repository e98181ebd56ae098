//! One line of the audit trail: what it holds, and how `tabtunnel audit` prints it.

use serde::{Deserialize, Serialize};
use std::time::SystemTime;
use tabtunnel_core::{AuditRecord, Outcome};

/// One line of the trail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// RFC 3339, UTC, milliseconds.
    pub time: String,
    pub agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<i32>,
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `allowed`, `denied`, `asked` or `standing` (a standing answer given, used, taken back or
    /// expired).
    pub outcome: String,
    /// The policy rule that denied, asked or allowed; or the standing answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// For `asked`: `allowed once`, `always allowed`, `denied`, `not answered in time`; for
    /// `standing`: `given`, `used`, `taken back`, `expired`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// For a question of the gesture guard's: what the human was shown (the gesture, origin,
    /// element, form, amounts, field kinds, and why it was held).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<tabtunnel_wire::gestures::GestureQuestion>,
    /// The step in words (`core/src/steps`); an agent's lines with the same `step_id` are one
    /// step, the last one's words say it best.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub step: String,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub step_id: u64,
    /// The id of the agent token the client presented (never the token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_id: Option<String>,
    /// The MCP client's name and version, else the CDP client's User-Agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Line {
    pub fn new(record: &AuditRecord, at: SystemTime) -> Self {
        let (outcome, rule, answer) = match &record.outcome {
            Outcome::Allowed => ("allowed", None, None),
            Outcome::Denied { rule } => ("denied", Some(rule.clone()), None),
            Outcome::Asked { rule, answer } => ("asked", Some(rule.clone()), Some((*answer).to_owned())),
            Outcome::AllowedBy { rule } => ("allowed", Some(rule.clone()), None),
            Outcome::Standing { event, rule } => ("standing", Some(rule.clone()), Some((*event).to_owned())),
        };
        Line {
            time: humantime::format_rfc3339_millis(at).to_string(),
            agent: record.agent.as_str().to_owned(),
            tab: record.tab,
            method: record.method.clone(),
            url: record.url.clone(),
            outcome: outcome.into(),
            rule,
            answer,
            context: record.question.as_deref().cloned(),
            step: record.step.words.clone(),
            step_id: record.step.id,
            token_id: record.identity.token_id.clone(),
            client: record.identity.client.clone(),
        }
    }

    /// The line as `tabtunnel audit` prints it without `--json`: one line of the terminal per
    /// step, whatever an agent put in a URL or a method name (control characters are escaped,
    /// so no agent can forge a line or send the human's terminal an escape sequence).
    pub fn human(&self) -> String {
        let tab = self.tab.map(|t| format!("tab {t}")).unwrap_or_else(|| "-".into());
        let mut text = format!("{}  {:<16} {:<8} ", self.time, self.agent, tab);
        let words = !self.step.is_empty();
        if words {
            // The words say what the method, URL and a refusal or question said.
            text.push_str(&self.step);
        } else {
            // A line from before steps in words.
            text.push_str(&self.method);
            if let Some(url) = &self.url {
                text.push_str(&format!(" {url}"));
            }
        }
        match (self.outcome.as_str(), &self.rule, &self.answer) {
            ("allowed", Some(rule), _) => text.push_str(&format!("  allowed by {rule}")),
            _ if words => {}
            ("standing", Some(rule), Some(event)) => text.push_str(&format!("  {rule}: {event}")),
            (_, Some(rule), Some(answer)) => text.push_str(&format!("  asked ({rule}): {answer}")),
            (_, Some(rule), None) => text.push_str(&format!("  DENIED by {rule}")),
            _ => {}
        }
        if let Some(q) = &self.context {
            text.push_str(&format!("  [{} on {}", q.gesture, q.origin));
            for (label, value) in [("element", &q.element), ("form", &q.form), ("request", &q.request)] {
                if !value.is_empty() {
                    text.push_str(&format!(", {label} {value:?}"));
                }
            }
            if !q.amounts.is_empty() {
                text.push_str(&format!(", amounts {}", q.amounts.join(" ")));
            }
            if !q.fields.is_empty() {
                text.push_str(&format!(", fields {}", q.fields.join(", ")));
            }
            text.push(']');
        }
        escape_controls(&text)
    }
}

/// Control characters (C0, DEL, C1, and the Unicode line and bidi controls a terminal may act on)
/// written as escapes; everything else as it is.
pub fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let bidi_or_line = matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        if c.is_control() || bidi_or_line {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}
