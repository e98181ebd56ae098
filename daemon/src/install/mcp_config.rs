//! Adding tabtunnel to an MCP client's JSON configuration and taking it out again, keeping
//! everything else as it was: the other keys and servers in their order, their values byte
//! for byte (held as raw JSON), a backup beside the file before any change. Nothing is written
//! when nothing changes, so running `install` twice changes nothing more.

use super::atomic_file::{self, Like};
use indexmap::IndexMap;
use serde_json::value::RawValue;
use std::path::{Path, PathBuf};

type Object = IndexMap<String, Box<RawValue>>;

/// Our server's name in every client.
pub const SERVER_NAME: &str = "tabtunnel";

/// `text` with `servers_key.tabtunnel` set to `entry`; `None` when it is already that. An entry
/// by our name that is neither `entry` nor `ours` (what install wrote there before, from its
/// record) is the user's own, perhaps with its own agent, `args` or `env` (an agent's token):
/// it is refused, never replaced.
pub fn with_entry(
    text: &str,
    servers_key: &str,
    entry: &serde_json::Value,
    ours: Option<&serde_json::Value>,
) -> Result<Option<String>, String> {
    let mut top = parse_object(text)?;
    let mut servers = match top.get(servers_key) {
        Some(raw) => serde_json::from_str::<Object>(raw.get())
            .map_err(|_| format!("its \"{servers_key}\" is not a JSON object"))?,
        None => Object::new(),
    };
    match servers.get(SERVER_NAME) {
        Some(current) if same(current, entry) => return Ok(None),
        Some(current) if !ours.is_some_and(|ours| same(current, ours)) => return Err(FOREIGN.to_owned()),
        _ => {}
    }
    servers.insert(SERVER_NAME.to_owned(), raw(entry));
    top.insert(servers_key.to_owned(), raw_pretty(&servers));
    Ok(Some(render(&top)))
}

/// Why an entry by our name install did not write is left alone.
pub const FOREIGN: &str = "it has a \"tabtunnel\" entry install did not write (your own, kept as it is); \
     to have install's, rename or remove that entry and run install again";

/// What [`without_entry`] found.
#[derive(Debug, PartialEq)]
pub enum Removal {
    /// The text without our entry.
    Removed(String),
    /// No entry of ours.
    Absent,
    /// An entry by our name that is not the one expected (someone changed it): left there.
    Changed,
}

/// `text` without our entry, if it is still `expected`.
pub fn without_entry(text: &str, servers_key: &str, expected: &serde_json::Value) -> Result<Removal, String> {
    let mut top = parse_object(text)?;
    let Some(raw_servers) = top.get(servers_key) else { return Ok(Removal::Absent) };
    let Ok(mut servers) = serde_json::from_str::<Object>(raw_servers.get()) else {
        return Ok(Removal::Absent);
    };
    match servers.get(SERVER_NAME) {
        None => return Ok(Removal::Absent),
        Some(current) if !same(current, expected) => return Ok(Removal::Changed),
        Some(_) => {}
    }
    servers.shift_remove(SERVER_NAME);
    top.insert(servers_key.to_owned(), raw_pretty(&servers));
    Ok(Removal::Removed(render(&top)))
}

/// Whether `text` has an entry by our name.
pub fn has_entry(text: &str, servers_key: &str) -> bool {
    parse_object(text)
        .ok()
        .and_then(|top| serde_json::from_str::<Object>(top.get(servers_key)?.get()).ok())
        .is_some_and(|servers| servers.contains_key(SERVER_NAME))
}

fn same(raw: &RawValue, value: &serde_json::Value) -> bool {
    serde_json::from_str::<serde_json::Value>(raw.get()).ok().as_ref() == Some(value)
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
    atomic_file::sibling(file, ".tabtunnel-backup")
}

/// Applies `edit` to `file`'s text (empty if it does not exist); when it returns a new text,
/// backs the old one up beside `file` and writes the new one through `file`'s symlinks, keeping
/// the mode and owner of both (see `atomic_file`). Returns the backup written, if any, or
/// `None` when nothing was written. A read-only file is refused before anything is written.
pub fn update_file(
    file: &Path,
    edit: impl FnOnce(&str) -> Result<Option<String>, String>,
) -> Result<Option<Written>, String> {
    let target = atomic_file::resolve(file)?;
    let old = match std::fs::read(&target) {
        Ok(bytes) => {
            let meta =
                std::fs::metadata(&target).map_err(|e| format!("cannot read {}: {e}", target.display()))?;
            let text =
                String::from_utf8(bytes).map_err(|_| format!("{}: it is not UTF-8 text", file.display()))?;
            Some((text, meta))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {}: {e}", target.display())),
    };
    let text = old.as_ref().map_or("", |(text, _)| text.as_str());
    let Some(new) = edit(text).map_err(|e| format!("{}: {e}", file.display()))? else { return Ok(None) };
    let Some((old, meta)) = old else {
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        // A new file may come to hold other servers' secrets: the owner's only.
        atomic_file::replace(&target, new.as_bytes(), Like::New(0o600))?;
        return Ok(Some(Written { backup: None }));
    };
    atomic_file::check_writable(&target, &meta)?;
    let backup = backup_path(file);
    atomic_file::replace(&backup, old.as_bytes(), Like::Old(&meta))
        .map_err(|e| format!("cannot back up {}: {e}", file.display()))?;
    atomic_file::replace(&target, new.as_bytes(), Like::Old(&meta))?;
    Ok(Some(Written { backup: Some(backup) }))
}

/// Adds (or updates, from `ours`: what install wrote before) our entry in `file`; see
/// [`update_file`] and [`with_entry`].
pub fn add_to_file(
    file: &Path,
    servers_key: &str,
    entry: &serde_json::Value,
    ours: Option<&serde_json::Value>,
) -> Result<Option<Written>, String> {
    update_file(file, |text| with_entry(text, servers_key, entry, ours))
}

/// Takes our entry out of `file` if it is still `expected` (what install wrote); see
/// [`update_file`]. `Removed` carries the text written.
pub fn remove_from_file(
    file: &Path,
    servers_key: &str,
    expected: &serde_json::Value,
) -> Result<Removal, String> {
    let mut found = Removal::Absent;
    update_file(file, |text| {
        found = without_entry(text, servers_key, expected)?;
        Ok(match &found {
            Removal::Removed(new) => Some(new.clone()),
            Removal::Absent | Removal::Changed => None,
        })
    })?;
    Ok(found)
}

/// What [`update_file`] wrote.
#[derive(Debug)]
pub struct Written {
    /// The old text, beside the file (with its mode and owner).
    pub backup: Option<PathBuf>,
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
        let merged = with_entry(CLAUDE, "mcpServers", &entry, None).unwrap().unwrap();
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
        assert_eq!(with_entry(&merged, "mcpServers", &entry, None).unwrap(), None);
        // A changed binary path replaces our entry only, the one install wrote.
        let moved = json!({ "command": "/other/tabtunnel", "args": ["mcp"] });
        assert_eq!(with_entry(&merged, "mcpServers", &moved, None).unwrap_err(), FOREIGN);
        let again = with_entry(&merged, "mcpServers", &moved, Some(&entry)).unwrap().unwrap();
        let value: serde_json::Value = serde_json::from_str(&again).unwrap();
        assert_eq!(value["mcpServers"]["tabtunnel"]["command"], "/other/tabtunnel");
        // Out again, only while it is the entry expected: the others stay.
        assert_eq!(without_entry(&again, "mcpServers", &entry).unwrap(), Removal::Changed);
        let Removal::Removed(removed) = without_entry(&again, "mcpServers", &moved).unwrap() else {
            panic!("not removed")
        };
        let value: serde_json::Value = serde_json::from_str(&removed).unwrap();
        assert!(value["mcpServers"].get("tabtunnel").is_none());
        assert_eq!(value["mcpServers"]["github"]["command"], "npx");
        assert_eq!(without_entry(&removed, "mcpServers", &moved).unwrap(), Removal::Absent);
        assert!(has_entry(&again, "mcpServers") && !has_entry(&removed, "mcpServers"));
    }

    #[test]
    fn the_users_own_entry_by_our_name_is_kept_whole() {
        let entry =
            json!({ "type": "stdio", "command": "/home/u/.local/bin/tabtunnel", "args": ["mcp"], "env": {} });
        let theirs = [
            json!({ "command": "/opt/my/tabtunnel", "args": ["mcp", "--agent", "mine"] }),
            json!({ "type": "stdio", "command": "/home/u/.local/bin/tabtunnel", "args": ["mcp"], "env": { "TABTUNNEL_TOKEN": "tta_00" } }),
        ];
        for own in theirs {
            let text = serde_json::to_string(&json!({ "mcpServers": { "tabtunnel": own } })).unwrap();
            assert_eq!(with_entry(&text, "mcpServers", &entry, None).unwrap_err(), FOREIGN);
            // Even where install wrote another entry before: this is not it.
            let before = json!({ "command": "/old/tabtunnel", "args": ["mcp"] });
            assert_eq!(with_entry(&text, "mcpServers", &entry, Some(&before)).unwrap_err(), FOREIGN);
            assert_eq!(without_entry(&text, "mcpServers", &entry).unwrap(), Removal::Changed);
            // And in a file: nothing written, no backup.
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("c.json");
            std::fs::write(&file, &text).unwrap();
            assert!(add_to_file(&file, "mcpServers", &entry, None).unwrap_err().contains(FOREIGN));
            assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
            assert!(!backup_path(&file).exists());
        }
    }

    #[test]
    fn empty_or_missing_files_get_a_servers_map_and_bad_ones_are_left_alone() {
        let entry = json!({ "type": "stdio", "command": "/t", "args": ["mcp"] });
        let made = with_entry("", "servers", &entry, None).unwrap().unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&made).unwrap(),
            json!({ "servers": { "tabtunnel": entry } })
        );
        assert!(with_entry("{ // comment\n}", "servers", &entry, None).is_err());
        assert!(with_entry(r#"{"servers": []}"#, "servers", &entry, None).is_err());
        assert!(with_entry("[1]", "servers", &entry, None).is_err());
    }

    #[test]
    fn files_are_backed_up_before_a_change_and_untouched_without_one() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mcp.json");
        std::fs::write(&file, CLAUDE).unwrap();
        let entry = json!({ "command": "/t", "args": ["mcp"] });
        let written = add_to_file(&file, "mcpServers", &entry, None).unwrap().unwrap();
        assert_eq!(written.backup.as_deref(), Some(backup_path(&file).as_path()));
        assert_eq!(std::fs::read_to_string(backup_path(&file)).unwrap(), CLAUDE);
        let after = std::fs::read_to_string(&file).unwrap();
        assert!(add_to_file(&file, "mcpServers", &entry, None).unwrap().is_none());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), after);
        assert!(matches!(remove_from_file(&file, "mcpServers", &entry).unwrap(), Removal::Removed(_)));
        let none = dir.path().join("none.json");
        assert_eq!(remove_from_file(&none, "mcpServers", &entry).unwrap(), Removal::Absent);
        assert!(!none.exists());
        assert_eq!(backup_path(&file).file_name().unwrap(), "mcp.json.tabtunnel-backup");
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[cfg(unix)]
    fn set_mode(path: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn an_owner_only_file_and_its_backup_stay_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mcp.json");
        std::fs::write(&file, CLAUDE).unwrap();
        set_mode(&file, 0o600);
        // A backup left wider by an older run is replaced, not written into.
        std::fs::write(backup_path(&file), "old").unwrap();
        set_mode(&backup_path(&file), 0o644);
        let entry = json!({ "command": "/t", "args": ["mcp"] });
        add_to_file(&file, "mcpServers", &entry, None).unwrap().unwrap();
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(&backup_path(&file)), 0o600);
        assert_eq!(std::fs::read_to_string(backup_path(&file)).unwrap(), CLAUDE);
        remove_from_file(&file, "mcpServers", &entry).unwrap();
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(&backup_path(&file)), 0o600);
        // A new file is the owner's only too.
        let fresh = dir.path().join("new/mcp.json");
        add_to_file(&fresh, "mcpServers", &entry, None).unwrap();
        assert_eq!(mode(&fresh), 0o600);
    }

    #[cfg(unix)]
    #[test]
    fn a_read_only_file_is_refused_and_left_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".claude.json");
        std::fs::write(&file, CLAUDE).unwrap();
        set_mode(&file, 0o444);
        let entry = json!({ "command": "/t", "args": ["mcp"] });
        let refused = add_to_file(&file, "mcpServers", &entry, None).unwrap_err();
        assert!(refused.contains("read-only") && refused.contains(".claude.json"), "{refused}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), CLAUDE);
        assert_eq!(mode(&file), 0o444);
        assert!(!backup_path(&file).exists());
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [".claude.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_file_is_updated_through_the_link() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("dotfiles")).unwrap();
        let target = dir.path().join("dotfiles/claude.json");
        std::fs::write(&target, CLAUDE).unwrap();
        set_mode(&target, 0o600);
        let link = dir.path().join(".claude.json");
        std::os::unix::fs::symlink("dotfiles/claude.json", &link).unwrap();
        let entry = json!({ "command": "/t", "args": ["mcp"] });
        add_to_file(&link, "mcpServers", &entry, None).unwrap().unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("dotfiles/claude.json"));
        let value: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
        assert_eq!(value["mcpServers"]["tabtunnel"], entry);
        assert_eq!(mode(&target), 0o600);
        // The backup sits beside the path the client knows, with the original's mode.
        assert_eq!(std::fs::read_to_string(backup_path(&link)).unwrap(), CLAUDE);
        assert_eq!(mode(&backup_path(&link)), 0o600);
        assert!(matches!(remove_from_file(&link, "mcpServers", &entry).unwrap(), Removal::Removed(_)));
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert!(!std::fs::read_to_string(&target).unwrap().contains("tabtunnel"));
    }
}
