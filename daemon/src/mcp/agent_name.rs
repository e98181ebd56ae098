//! Agent names: 1-64 characters of `[A-Za-z0-9._-]` (the daemon's rule for `/agent/<name>`),
//! and the name `tabtunnel mcp` makes from an MCP client's own name when none is given.

pub const MAX_LEN: usize = 64;
/// Characters of the unique suffix added to a client's name (hex).
const SUFFIX_LEN: usize = 6;

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// A valid agent name (the daemon's own rule), or why not.
pub fn validate(name: &str) -> Result<&str, String> {
    if !tabtunnel_wire::is_valid_agent_name(name) {
        return Err(format!(
            "agent name {name:?} is not valid: use 1-{MAX_LEN} characters of A-Z a-z 0-9 . _ - (not . or ..)"
        ));
    }
    Ok(name)
}

/// `client` made into a name (other characters become `-`, runs collapse), shortened to leave
/// room for `-<suffix>`. Two sessions of one client (two Claude Code windows) must not share
/// tabs, hence the suffix.
pub fn from_client_name(client: &str, suffix: &str) -> String {
    let mut base = String::new();
    for c in client.trim().chars() {
        let c = if is_name_char(c) { c } else { '-' };
        if !(c == '-' && base.ends_with('-')) {
            base.push(c);
        }
    }
    let mut base = base.trim_matches('-').to_owned();
    if base.is_empty() {
        base = "mcp".into();
    }
    base.truncate(MAX_LEN - 1 - suffix.len());
    let base = base.trim_end_matches('-');
    format!("{base}-{suffix}")
}

/// A short random suffix, fresh for every `tabtunnel mcp` process.
pub fn unique_suffix() -> String {
    crate::token::generate()[..SUFFIX_LEN].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_the_daemon_rule() {
        assert!(validate("a").is_ok());
        assert!(validate("claude-code_2.1").is_ok());
        assert!(validate(&"x".repeat(64)).is_ok());
        assert!(validate("").is_err());
        assert!(validate(&"x".repeat(65)).is_err());
        assert!(validate("a b").is_err());
        assert!(validate("a/b").is_err());
        assert!(validate("é").is_err());
        assert!(validate(".").is_err() && validate("..").is_err(), "paths, not names");
    }

    #[test]
    fn client_names_become_valid_names_with_the_suffix() {
        assert_eq!(from_client_name("claude-code", "3f9a01"), "claude-code-3f9a01");
        assert_eq!(from_client_name("Visual Studio Code", "abc123"), "Visual-Studio-Code-abc123");
        assert_eq!(from_client_name("  //Cursor (beta)//  ", "abc123"), "Cursor-beta-abc123");
        assert_eq!(from_client_name("日本", "abc123"), "mcp-abc123");
        assert_eq!(from_client_name("", "abc123"), "mcp-abc123");
        let long = from_client_name(&"n".repeat(200), "abc123");
        assert_eq!(long.len(), MAX_LEN);
        assert!(long.ends_with("-abc123"));
        for client in ["a b c", "x".repeat(100).as_str(), "--", "é-è"] {
            let name = from_client_name(client, &unique_suffix());
            assert!(validate(&name).is_ok(), "{name}");
        }
    }

    #[test]
    fn suffixes_differ() {
        assert_ne!(unique_suffix(), unique_suffix());
        assert_eq!(unique_suffix().len(), SUFFIX_LEN);
    }
}
