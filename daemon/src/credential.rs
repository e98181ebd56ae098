//! Who a request acts as, once the gate let it in: what routes and MCP sessions are owned by.

/// Who a request acts as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// `--no-token` and no token presented: anybody local.
    Open,
    /// The owner token: full power, and may name any agent in the path.
    Owner,
    /// An agent's own token: that agent only.
    Agent(String),
    /// The extension (on its socket) or the browser's rules (on the navigation endpoint).
    Browser,
    /// No credential, for `/tabtunnel/hello` only (`crate::proof`): answered by the gate's
    /// caller, never routed.
    Hello,
}
