//! `tabtunnel audit`'s plain output: one line per step. An agent's records of one step (the
//! keys of one typed word, a click's press and release) come out as one line, with the words
//! of the last; a line naming the agent's token and client comes before its first step and
//! whenever they change.

use super::line::{escape_controls, Line};
use std::collections::BTreeMap;

#[derive(Default)]
pub struct Folder {
    /// Each agent's step not yet printed (more of its records may follow).
    held: BTreeMap<String, Line>,
    /// Who each agent's client was, as last printed.
    said: BTreeMap<String, (Option<String>, Option<String>)>,
}

impl Folder {
    /// The terminal lines a line of the trail lets out.
    pub fn push(&mut self, line: Line) -> Vec<String> {
        let mut out = Vec::new();
        match self.held.get(&line.agent) {
            Some(held) if line.step_id != 0 && held.step_id == line.step_id => {}
            Some(_) => out.extend(self.held.remove(&line.agent).map(|l| self.print(l))),
            None => {}
        }
        let who = (line.token_id.clone(), line.client.clone());
        if who != (None, None) && self.said.get(&line.agent) != Some(&who) {
            out.extend(self.held.remove(&line.agent).map(|l| self.print(l)));
            let token = who.0.as_deref().map(|t| format!(" token {t}")).unwrap_or_default();
            let client = who.1.as_deref().map(|c| format!(" client {c:?}")).unwrap_or_default();
            out.push(escape_controls(&format!("agent {}:{token}{client}", line.agent)));
            self.said.insert(line.agent.clone(), who);
        }
        self.held.insert(line.agent.clone(), line);
        out
    }

    /// Every step held, in the order they began (the trail ended, or went quiet a moment).
    pub fn flush(&mut self) -> Vec<String> {
        let mut held: Vec<Line> = std::mem::take(&mut self.held).into_values().collect();
        held.sort_by(|a, b| a.time.cmp(&b.time));
        held.into_iter().map(|l| self.print(l)).collect()
    }

    fn print(&self, line: Line) -> String {
        line.human()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(agent: &str, step_id: u64, step: &str, method: &str) -> Line {
        serde_json::from_value(serde_json::json!({
            "time": format!("2026-01-01T00:00:0{step_id}.000Z"), "agent": agent, "tab": 3, "method": method,
            "outcome": "allowed", "step": step, "step_id": step_id,
            "token_id": "0123456789ab", "client": "chrome-devtools-mcp 1.11.0",
        }))
        .unwrap()
    }

    #[test]
    fn one_line_per_step_with_the_last_words_and_who_sent_it() {
        let mut folder = Folder::default();
        let mut out = Vec::new();
        out.extend(folder.push(line("a", 1, "opened shop.example", "Page.navigate")));
        for n in 1..=5 {
            out.extend(folder.push(line("a", 2, &format!("typed {n} characters"), "Input.dispatchKeyEvent")));
        }
        out.extend(folder.push(line("b", 1, "took a screenshot", "Page.captureScreenshot")));
        out.extend(folder.push(line("a", 3, "clicked \"Pay\"", "Input.dispatchMouseEvent")));
        out.extend(folder.flush());
        let words: Vec<&str> =
            out.iter().map(|l| l.split("tab 3    ").nth(1).unwrap_or(l.as_str())).collect();
        assert_eq!(
            words,
            [
                "agent a: token 0123456789ab client \"chrome-devtools-mcp 1.11.0\"",
                "opened shop.example",
                "agent b: token 0123456789ab client \"chrome-devtools-mcp 1.11.0\"",
                "typed 5 characters",
                "took a screenshot",
                "clicked \"Pay\"",
            ]
        );
        assert!(out.iter().all(|l| !l.contains("Input.")), "{out:#?}");
    }
}
