//! Adding tabtunnel to an MCP client's JSON configuration and taking it out again, keeping
//! everything else as it was: the other keys and servers in their order, their values byte
//! for byte (held as raw JSON), a backup beside the file before any change. Nothing is written
//! when nothing changes, so running `install` twice changes nothing more.

use indexmap::IndexMap;
use serde_json::value::RawValue;
use std::path::{Path, PathBuf};

type Object = IndexMap<String, Box<RawValue>>;

/// Our server's name in every client.
pub const SERVER_NAME: &str = "tabtunnel";

/// `text` with `servers_key.tabtunnel` set to `entry`; `None` when it is already that.
pub fn with_entry(
    text: &str,
    servers_key: &str,
    entry: &serde_json::Value,
) -> Result<Option<String>, String> {
    let mut top = parse_object(text)?;
    let mut servers = match top.get(servers_key) {
        Some(raw) => serde_json::from_str::<Object>(raw.get())
            .map_err(|_| format!("its \"{servers_key}\" is not a JSON object"))?,
        None => Object::new(),
    };
    if let Some(current) = servers.get(SERVER_NAME) {
        if serde_json::from_str::<serde_json::Value>(current.get()).ok().as_ref() == Some(entry) {
            return Ok(None);
        }
    }
    servers.insert(SERVER_NAME.to_owned(), raw(entry));
    top.insert(servers_key.to_owned(), raw_pretty(&servers));
    Ok(Some(render(&top)))
}

/// `text` without our entry; `None` when it has none.
pub fn without_entry(text: &str, servers_key: &str) -> Result<Option<String>, String> {
    let mut top = parse_object(text)?;
    let Some(raw_servers) = top.get(servers_key) else { return Ok(None) };
    let Ok(mut servers) = serde_json::from_str::<Object>(raw_servers.get()) else { return Ok(None) };
    if servers.shift_remove(SERVER_NAME).is_none() {
        return Ok(None);
    }
    top.insert(servers_key.to_owned(), raw_pretty(&servers));
    Ok(Some(render(&top)))
}

fn parse_object(text: &str) -> Result<Object, String> {
    if text.trim().is_empty() {
        return Ok(Object::new());
    }
    serde_json::from_str(text).map_err(|e| {
        format!("it is not plain JSON ({e}; comments and trailing commas are not read here): add the entry by hand")
    })
}

fn raw(value: &impl serde::Serialize) -> Box<RawValue> {
    RawValue::from_string(serde_json::to_string(value).expect("serializable")).expect("valid JSON")
}

/// The servers' map, one server a line (nested in the top level's indentation or not: any
/// layout is JSON).
fn raw_pretty(servers: &Object) -> Box<RawValue> {
    RawValue::from_string(serde_json::to_string_pretty(servers).expect("serializable")).expect("valid JSON")
}

fn render(top: &Object) -> String {
    // Pretty at the top level and in the servers' map; the values we keep are written as they
    // were (their own layout).
    let mut text = serde_json::to_string_pretty(top).expect("serializable");
    text.push('\n');
    text
}

/// `<file>.tabtunnel-backup`.
pub fn backup_path(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".tabtunnel-backup");
    file.with_file_name(name)
}

/// Adds or removes our entry in `file` (`entry: None` removes). Returns whether it changed.
/// A changed file is backed up first (its old text, beside it), then replaced atomically.
pub fn update_file(
    file: &Path,
    servers_key: &str,
    entry: Option<&serde_json::Value>,
) -> Result<bool, String> {
    let old = match std::fs::read_to_string(file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
    };
    let text = old.as_deref().unwrap_or("");
    let new = match entry {
        Some(entry) => with_entry(text, servers_key, entry),
        None if old.is_none() => return Ok(false),
        None => without_entry(text, servers_key),
    }
    .map_err(|e| format!("{}: {e}", file.display()))?;
    let Some(new) = new else { return Ok(false) };
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    if let Some(old) = &old {
        std::fs::write(backup_path(file), old)
            .map_err(|e| format!("cannot back up {}: {e}", file.display()))?;
    }
    let tmp = file.with_extension("tabtunnel-tmp");
    std::fs::write(&tmp, new)
        .and_then(|()| std::fs::rename(&tmp, file))
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CLAUDE: &str = r#"{
  "numStartups": 3,
  "mcpServers": {
    "github": { "type": "stdio", "command": "npx", "args": ["-y", "gh"], "env": {"T": "1"} }
  },
  "projects": { "/p": { "mcpServers": {} } }
}"#;

    #[test]
    fn adds_beside_the_other_servers_keeping_every_key_in_order() {
        let entry = json!({ "command": "/bin/tabtunnel", "args": ["mcp"] });
        let merged = with_entry(CLAUDE, "mcpServers", &entry).unwrap().unwrap();
        let value: serde_json::Value = serde_json::from_str(&merged).unwrap();
        assert_eq!(value["mcpServers"]["tabtunnel"], entry);
        assert_eq!(value["mcpServers"]["github"]["env"]["T"], "1");
        assert_eq!(value["numStartups"], 3);
        assert_eq!(value["projects"]["/p"], json!({ "mcpServers": {} }));
        let order: Vec<usize> =
            ["numStartups", "mcpServers", "projects"].iter().map(|k| merged.find(k).unwrap()).collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{merged}");
        assert!(merged.find("github").unwrap() < merged.find("tabtunnel").unwrap());
        // Twice: nothing more.
        assert_eq!(with_entry(&merged, "mcpServers", &entry).unwrap(), None);
        // A changed binary path replaces our entry only.
        let moved = json!({ "command": "/other/tabtunnel", "args": ["mcp"] });
        let again = with_entry(&merged, "mcpServers", &moved).unwrap().unwrap();
        let value: serde_json::Value = serde_json::from_str(&again).unwrap();
        assert_eq!(value["mcpServers"]["tabtunnel"]["command"], "/other/tabtunnel");
        // Out again: the others stay.
        let removed = without_entry(&again, "mcpServers").unwrap().unwrap();
        let value: serde_json::Value = serde_json::from_str(&removed).unwrap();
        assert!(value["mcpServers"].get("tabtunnel").is_none());
        assert_eq!(value["mcpServers"]["github"]["command"], "npx");
        assert_eq!(without_entry(&removed, "mcpServers").unwrap(), None);
    }

    #[test]
    fn empty_or_missing_files_get_a_servers_map_and_bad_ones_are_left_alone() {
        let entry = json!({ "type": "stdio", "command": "/t", "args": ["mcp"] });
        let made = with_entry("", "servers", &entry).unwrap().unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&made).unwrap(),
            json!({ "servers": { "tabtunnel": entry } })
        );
        assert!(with_entry("{ // comment\n}", "servers", &entry).is_err());
        assert!(with_entry(r#"{"servers": []}"#, "servers", &entry).is_err());
        assert!(with_entry("[1]", "servers", &entry).is_err());
    }

    #[test]
    fn files_are_backed_up_before_a_change_and_untouched_without_one() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mcp.json");
        std::fs::write(&file, CLAUDE).unwrap();
        let entry = json!({ "command": "/t", "args": ["mcp"] });
        assert!(update_file(&file, "mcpServers", Some(&entry)).unwrap());
        assert_eq!(std::fs::read_to_string(backup_path(&file)).unwrap(), CLAUDE);
        let after = std::fs::read_to_string(&file).unwrap();
        assert!(!update_file(&file, "mcpServers", Some(&entry)).unwrap());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), after);
        assert!(update_file(&file, "mcpServers", None).unwrap());
        assert!(!update_file(&dir.path().join("none.json"), "mcpServers", None).unwrap());
        assert_eq!(backup_path(&file).file_name().unwrap(), "mcp.json.tabtunnel-backup");
    }
}
