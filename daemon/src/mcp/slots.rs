//! MCP sessions over HTTP at once, per agent and in all: each runs a child tool server (a Node
//! process), so one client (or one agent's token) opening sessions without end would starve
//! everyone else. A session takes a [`Slot`] when it names its agent and frees it when it ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Sessions at once, per agent and in all.
pub const SESSIONS_PER_AGENT: usize = 4;
pub const SESSIONS_IN_ALL: usize = 32;

/// The sessions running, per agent.
#[derive(Clone, Default, Debug)]
pub struct Slots(Arc<Mutex<HashMap<String, usize>>>);

/// One session's place among [`Slots`]; freed when the session ends.
#[derive(Debug)]
pub struct Slot {
    slots: Slots,
    agent: String,
}

impl Slots {
    pub fn take(&self, agent: &str) -> Result<Slot, String> {
        let mut running = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if running.values().sum::<usize>() >= SESSIONS_IN_ALL {
            return Err(format!("tabtunnel runs at most {SESSIONS_IN_ALL} MCP sessions over HTTP at once; end one (DELETE) first"));
        }
        let mine = running.entry(agent.to_owned()).or_default();
        if *mine >= SESSIONS_PER_AGENT {
            return Err(format!(
                "agent {agent} has {SESSIONS_PER_AGENT} MCP sessions already; end one (DELETE) first"
            ));
        }
        *mine += 1;
        Ok(Slot { slots: self.clone(), agent: agent.to_owned() })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut running = self.slots.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = running.get_mut(&self.agent) {
            *n -= 1;
            if *n == 0 {
                running.remove(&self.agent);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_bounded_per_agent_and_in_all_and_freed_when_they_end() {
        let slots = Slots::default();
        let held: Vec<Slot> = (0..SESSIONS_PER_AGENT).map(|_| slots.take("a").unwrap()).collect();
        assert!(slots.take("a").unwrap_err().contains("agent a"));
        drop(held);
        let mut many = Vec::new();
        for i in 0..SESSIONS_IN_ALL {
            many.push(slots.take(&format!("x{}", i / SESSIONS_PER_AGENT)).unwrap());
        }
        assert!(slots.take("newcomer").unwrap_err().contains("at most"));
        many.pop();
        assert!(slots.take("newcomer").is_ok());
    }
}
