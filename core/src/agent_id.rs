//! The name of the agent a connection acts for: the key of everything per agent.

use std::sync::Arc;
use tabtunnel_wire::DEFAULT_AGENT;

/// The agent a connection acts for; each agent sees only its own tabs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AgentId(Arc<str>);

impl AgentId {
    pub fn new(name: &str) -> Self {
        AgentId(name.into())
    }

    pub fn default_agent() -> Self {
        AgentId::new(DEFAULT_AGENT)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}
