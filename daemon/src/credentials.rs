//! Agents' own credentials: a token per agent, minted and revoked by the human
//! (`tabtunnel agent add|list|revoke`, or the side panel). A request that presents one acts as
//! that agent and no other, whatever its path says.
//!
//! Only a SHA-256 hash of each token is kept (`<config dir>/agents.json`, owner-only), so reading
//! the config dir does not reveal it; the token itself is shown once, when minted. A token is
//! `tta_` and 64 hex digits (32 random bytes): recognisable, so it is kept out of logs and the
//! audit trail. The daemon reads the file again when it changes, so a revoked token stops
//! working at once, and that agent's open connections are closed.

pub use crate::token::looks_like_agent_token;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use tabtunnel_core::{is_valid_agent_name, AGENT_TOKEN_PREFIX, DEFAULT_AGENT};

pub const FILE: &str = "agents.json";
/// Hex digits of a token's hash that name it.
pub const TOKEN_ID_LEN: usize = 12;

/// One registered agent as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registered {
    pub name: String,
    /// SHA-256 of the token, hex.
    pub sha256: String,
    /// When it was minted (RFC 3339).
    pub created: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoredFile {
    agents: Vec<Registered>,
}

/// The registered agents, looked up by the hash of what a request presents.
#[derive(Debug, Default, Clone)]
pub struct Credentials {
    by_hash: HashMap<[u8; 32], String>,
    agents: Vec<Registered>,
}

/// The credentials as the gate reads them; replaced whole when the file changes.
pub type SharedCredentials = Arc<RwLock<Credentials>>;

fn hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Credentials {
    fn from_file(file: StoredFile) -> Result<Credentials, String> {
        let mut by_hash = HashMap::new();
        for agent in &file.agents {
            let digest: Vec<u8> = (0..agent.sha256.len())
                .step_by(2)
                .filter_map(|i| agent.sha256.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok()))
                .collect();
            let digest: [u8; 32] = digest
                .try_into()
                .map_err(|_| format!("agent {:?}: sha256 is not 64 hex digits", agent.name))?;
            if !is_valid_agent_name(&agent.name) {
                return Err(format!("{:?} is not an agent name", agent.name));
            }
            by_hash.insert(digest, agent.name.clone());
        }
        Ok(Credentials { by_hash, agents: file.agents })
    }

    /// The agent a presented token belongs to, if it is one.
    pub fn agent_of(&self, presented: &str) -> Option<&str> {
        if !looks_like_agent_token(presented) {
            return None;
        }
        self.by_hash.get(&hash(presented)).map(String::as_str)
    }

    /// A token's id, as the audit trail and the side panel name it: the first 12 hex digits of
    /// the hash kept for it (so `agent list` can show it), never the token.
    pub fn token_id(token: &str) -> String {
        hex(&hash(token))[..TOKEN_ID_LEN].to_owned()
    }

    pub fn agents(&self) -> &[Registered] {
        &self.agents
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.agents.iter().map(|a| a.name.as_str())
    }
}

pub fn path(config_dir: &Path) -> PathBuf {
    config_dir.join(FILE)
}

/// Reads `<config dir>/agents.json` (none yet: no agents).
pub fn load(config_dir: &Path) -> Result<Credentials, String> {
    load_file(&path(config_dir))
}

pub fn load_file(path: &Path) -> Result<Credentials, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let file: StoredFile =
                serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            Credentials::from_file(file).map_err(|e| format!("{}: {e}", path.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Credentials::default()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

fn save(config_dir: &Path, agents: &[Registered]) -> Result<(), String> {
    crate::token::create_private_dir(config_dir)?;
    let file = StoredFile { agents: agents.to_vec() };
    let text = serde_json::to_string_pretty(&file).expect("serializable") + "\n";
    let path = path(config_dir);
    crate::token::write_owner_only(&path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Mints a token for a new agent and registers its hash; returns the token (shown once).
pub fn add(config_dir: &Path, name: &str) -> Result<String, String> {
    if !is_valid_agent_name(name) {
        return Err(format!("{name:?} is not an agent name: use 1-64 letters, digits, '.', '_' or '-'"));
    }
    if name == DEFAULT_AGENT {
        return Err(format!(
            "{DEFAULT_AGENT:?} is the plain endpoint's agent (the tabs you share yourself); give this agent a name of its own"
        ));
    }
    let mut agents = load(config_dir)?.agents;
    if agents.iter().any(|a| a.name == name) {
        return Err(format!(
            "agent {name:?} has a token already; `tabtunnel agent revoke {name}` first to mint a new one"
        ));
    }
    let token = format!("{AGENT_TOKEN_PREFIX}{}", crate::token::generate());
    let created = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    agents.push(Registered { name: name.to_owned(), sha256: hex(&hash(&token)), created });
    save(config_dir, &agents)?;
    Ok(token)
}

/// Revokes an agent's token; whether it had one.
pub fn revoke(config_dir: &Path, name: &str) -> Result<bool, String> {
    let mut agents = load(config_dir)?.agents;
    let before = agents.len();
    agents.retain(|a| a.name != name);
    if agents.len() == before {
        return Ok(false);
    }
    save(config_dir, &agents)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minted_token_identifies_its_agent_and_only_its_hash_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let token = add(dir.path(), "reader").unwrap();
        assert!(looks_like_agent_token(&token), "{token}");
        let stored = std::fs::read_to_string(path(dir.path())).unwrap();
        assert!(!stored.contains(&token[4..]), "the token itself is not stored");
        let creds = load(dir.path()).unwrap();
        assert_eq!(creds.agent_of(&token), Some("reader"));
        let id = Credentials::token_id(&token);
        assert_eq!(id.len(), TOKEN_ID_LEN);
        assert!(
            creds.agents()[0].sha256.starts_with(&id) && !token.contains(&id),
            "the hash's, not the token's"
        );
        // One character changed (never to the one it was: a random token may end in '0').
        let last = if token.ends_with('0') { '1' } else { '0' };
        assert_eq!(creds.agent_of(&format!("{}{last}", &token[..token.len() - 1])), None);
        assert_eq!(creds.agent_of("reader"), None);
        let other = add(dir.path(), "writer").unwrap();
        assert_ne!(other, token);
        assert_eq!(load(dir.path()).unwrap().agent_of(&other), Some("writer"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path(dir.path())).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn names_are_checked_once_each_and_revoking_forgets_the_token() {
        let dir = tempfile::tempdir().unwrap();
        assert!(add(dir.path(), "bad name").is_err());
        assert!(add(dir.path(), DEFAULT_AGENT).is_err());
        let token = add(dir.path(), "a").unwrap();
        assert!(add(dir.path(), "a").unwrap_err().contains("revoke"));
        assert!(revoke(dir.path(), "a").unwrap());
        assert!(!revoke(dir.path(), "a").unwrap());
        assert_eq!(load(dir.path()).unwrap().agent_of(&token), None);
        let again = add(dir.path(), "a").unwrap();
        assert_ne!(again, token);
    }

    #[test]
    fn a_damaged_file_is_an_error_not_an_empty_list() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(path(dir.path()), r#"{"agents":[{"name":"a","sha256":"xyz","created":"now"}]}"#)
            .unwrap();
        assert!(load(dir.path()).is_err());
        std::fs::write(path(dir.path()), "{").unwrap();
        assert!(load(dir.path()).is_err());
        assert!(load(&dir.path().join("none")).unwrap().agents().is_empty());
    }
}
