//! `tabtunnel install`, `uninstall` and `doctor`: everything a user needs so that nothing has
//! to be started, pasted or kept open. `install` puts this binary on PATH, writes the
//! extension (built into the binary) to a stable directory, registers the native messaging
//! host for every Chromium-family browser found, and adds tabtunnel to MCP clients'
//! configuration files; it records what it wrote in `<data dir>/install.json`, and `uninstall`
//! takes out only that, and only what is still as install left it. No root needed.
//!
//! | module | job |
//! |---|---|
//! | `places` | every OS's paths: browsers' host locations and registry keys, MCP clients' files |
//! | `mcp_config` | merging our entry into a client's JSON (and out again), with a backup |
//! | `atomic_file` | replacing a file keeping its mode, owner and symlink; refusing a read-only one |
//! | `doctor` | each link of the chain checked, with the fix for a broken one |

mod atomic_file;
pub mod doctor;
mod mcp_config;
pub mod places;

use atomic_file::Like;
use places::{Browser, McpClient, Os, Places, BROWSERS, MCP_CLIENTS};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/extension_files.rs"));

#[derive(clap::Args)]
pub struct InstallArgs {
    /// Where the binary goes (default: ~/.local/bin; %LOCALAPPDATA%\tabtunnel\bin on Windows).
    #[arg(long, value_name = "DIR")]
    bin_dir: Option<PathBuf>,
    /// Add tabtunnel to these MCP clients' configuration (repeatable, or comma-separated);
    /// `all`: every one whose configuration exists.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "CLIENT")]
    mcp: Vec<McpClient>,
    /// Copy the extension from this built directory instead of the one built into the binary.
    #[arg(long, value_name = "DIR")]
    extension_dir: Option<PathBuf>,
    /// Also register the native host in this browser user data dir (one started with
    /// --user-data-dir); repeatable. Not on Windows, where the registry serves every profile.
    #[arg(long, value_name = "DIR")]
    browser_dir: Vec<PathBuf>,
}

#[derive(clap::Args)]
pub struct UninstallArgs {
    /// Keep the config and data dirs: the token, agents, policy, audit trail, the launched
    /// Chromium's profile and the installed tool servers.
    #[arg(long)]
    keep_data: bool,
}

/// What `install` wrote, so that `uninstall` takes exactly that back out, and only while it is
/// still what install wrote.
#[derive(Serialize, Deserialize, Default, Debug, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Record {
    pub binary: Option<PathBuf>,
    pub extension_dir: Option<PathBuf>,
    pub host_manifests: BTreeSet<PathBuf>,
    pub registry_keys: BTreeSet<String>,
    /// The SHA-256 of what install put in each file it owns (the binary, host manifests).
    pub file_hashes: BTreeMap<PathBuf, String>,
    /// The entries install put in clients' config files.
    pub mcp_entries: Vec<McpEntry>,
    /// The backups install wrote beside those files.
    pub backups: BTreeSet<PathBuf>,
    /// Directories that did not exist before we made them (removed again if left empty).
    pub created_dirs: BTreeSet<PathBuf>,
}

/// Our entry as install wrote it into a client's config file.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct McpEntry {
    pub file: PathBuf,
    pub servers_key: String,
    pub entry: serde_json::Value,
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

impl Record {
    pub fn load(places: &Places) -> Record {
        std::fs::read_to_string(places.record_file())
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    fn save(&self, places: &Places) -> Result<(), String> {
        let path = places.record_file();
        write_if_changed(
            &path,
            serde_json::to_string_pretty(self).expect("serializable").as_bytes(),
            &mut Record::default(),
        )
        .map(|_| ())
    }

    /// Writes a file install owns (see [`write_if_changed`]) and remembers what it holds.
    fn write_owned(&mut self, path: &Path, contents: &[u8]) -> Result<bool, String> {
        let written = write_if_changed(path, contents, self)?;
        self.file_hashes.insert(path.to_path_buf(), sha256_hex(contents));
        Ok(written)
    }

    /// Whether `path` still holds what install wrote there.
    fn still_ours(&self, path: &Path) -> bool {
        self.file_hashes
            .get(path)
            .is_some_and(|hash| std::fs::read(path).is_ok_and(|bytes| &sha256_hex(&bytes) == hash))
    }

    /// Refuses to replace a file at `path` install did not write, unless it is a tabtunnel
    /// binary (an older one, installed by hand): the user's own program or script by that
    /// name is theirs (and `uninstall` would then remove it).
    fn may_replace(&self, path: &Path, contents: &[u8]) -> Result<(), String> {
        let Ok(old) = std::fs::read(path) else { return Ok(()) };
        if old == contents || self.still_ours(path) || is_tabtunnel_binary(&old) {
            return Ok(());
        }
        Err(format!(
            "{} is not a tabtunnel binary install wrote: it is left as it is, and nothing was installed. \
             Move it away (or pass --bin-dir DIR for another place on your PATH) and run install again",
            path.display()
        ))
    }

    /// Creates `dir` and its missing parents, remembering which were missing.
    fn create_dir(&mut self, dir: &Path) -> Result<(), String> {
        let missing: Vec<PathBuf> =
            dir.ancestors().take_while(|d| !d.exists()).map(Path::to_path_buf).collect();
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        self.created_dirs.extend(missing);
        Ok(())
    }
}

/// Whether `bytes` are a tabtunnel executable: a native binary (ELF, Mach-O or PE) that holds
/// our native host's name.
fn is_tabtunnel_binary(bytes: &[u8]) -> bool {
    const MAGICS: [&[u8]; 5] =
        [b"\x7fELF", b"MZ", b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe"];
    let marker = crate::native_host::HOST_NAME.as_bytes();
    MAGICS.iter().any(|m| bytes.starts_with(m)) && bytes.windows(marker.len()).any(|w| w == marker)
}

/// Writes `contents` to `path` (atomically, keeping an old file's mode and owner) unless it
/// holds them already; returns whether it wrote.
fn write_if_changed(path: &Path, contents: &[u8], record: &mut Record) -> Result<bool, String> {
    if std::fs::read(path).is_ok_and(|old| old == contents) {
        return Ok(false);
    }
    if let Some(parent) = path.parent() {
        record.create_dir(parent)?;
    }
    match std::fs::metadata(path) {
        Ok(meta) => atomic_file::replace(path, contents, Like::Old(&meta))?,
        // As `fs::write` would: readable by all, less the umask.
        Err(_) => atomic_file::replace(path, contents, Like::New(0o666))?,
    }
    Ok(true)
}

/// The native host manifest: this binary (Chrome runs it with the caller's origin), for our
/// extension only.
pub fn host_manifest(binary: &Path) -> serde_json::Value {
    serde_json::json!({
        "name": crate::native_host::HOST_NAME,
        "description": "tabtunnel: starts this user's daemon and pairs the extension with it",
        "path": binary.display().to_string(),
        "type": "stdio",
        "allowed_origins": [crate::native_host::allowed_origin(crate::EXTENSION_ID)],
    })
}

/// The extension's files: from `dir`, else built into this binary.
fn extension_files(dir: Option<&Path>) -> Result<Vec<(String, Vec<u8>)>, String> {
    let Some(dir) = dir else {
        return Ok(EXTENSION_FILES
            .iter()
            .map(|(name, bytes)| ((*name).to_owned(), bytes.to_vec()))
            .collect());
    };
    let dir = crate::launch::find_extension_dir(Some(dir))?;
    let mut files = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(current) = stack.pop() {
        for entry in
            std::fs::read_dir(&current).map_err(|e| format!("cannot read {}: {e}", current.display()))?
        {
            let path = entry.map_err(|e| e.to_string())?.path();
            let name = path.strip_prefix(&dir).expect("below").to_string_lossy().replace('\\', "/");
            if path.is_dir() {
                stack.push(path);
            } else if name != "pairing.json" && !name.starts_with('.') {
                files.push((
                    name,
                    std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?,
                ));
            }
        }
    }
    Ok(files)
}

/// Makes `dir` hold exactly `files`; returns how many it wrote or removed.
fn write_tree(dir: &Path, files: &[(String, Vec<u8>)], record: &mut Record) -> Result<usize, String> {
    let mut changed = 0;
    for (name, bytes) in files {
        changed += usize::from(write_if_changed(&dir.join(name), bytes, record)?);
    }
    let wanted: BTreeSet<PathBuf> = files.iter().map(|(name, _)| dir.join(name)).collect();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).map_err(|e| e.to_string())? {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                stack.push(path);
            } else if !wanted.contains(&path) {
                std::fs::remove_file(&path).map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
                changed += 1;
            }
        }
    }
    Ok(changed)
}

pub fn install(args: InstallArgs) -> Result<(), String> {
    let places = Places::of_this_user()?;
    let mut record = Record::load(&places);
    let mut changes = 0usize;

    // 1. The binary, on PATH.
    let bin_dir = args.bin_dir.clone().unwrap_or_else(|| places.default_bin_dir());
    let binary = bin_dir.join(places.binary_name());
    let this = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let bytes = std::fs::read(&this).map_err(|e| format!("cannot read {}: {e}", this.display()))?;
    // Before anything else is written: the host manifests name this path.
    record.may_replace(&binary, &bytes)?;
    if record.write_owned(&binary, &bytes)? {
        crate::platform::set_public_mode(&binary, true).map_err(|e| e.to_string())?;
        println!("installed {}", binary.display());
        changes += 1;
    }
    record.binary = Some(binary.clone());
    if !places::dir_on_path(&bin_dir) {
        println!(
            "note: {} is not on your PATH; add it (e.g. in ~/.profile: export PATH=\"{}:$PATH\")",
            bin_dir.display(),
            bin_dir.display()
        );
    }

    // 2. The extension, in a directory that stays.
    let files = extension_files(args.extension_dir.as_deref())?;
    let extension_dir = places.extension_dir();
    if files.is_empty() {
        println!(
            "note: this tabtunnel was built without the extension (extension/pkg/ did not exist when it \
             was built): the extension was not written. Build it (`cargo run -p xtask -- build-extension`, \
             then build tabtunnel again: `./dev install` does both), or pass --extension-dir DIR."
        );
    } else {
        let written = write_tree(&extension_dir, &files, &mut record)?;
        if written > 0 {
            println!("wrote the extension to {} ({written} files changed)", extension_dir.display());
            changes += written;
        }
        record.extension_dir = Some(extension_dir.clone());
    }

    // 3. The native host, for every browser found.
    let manifest = serde_json::to_string_pretty(&host_manifest(&binary)).expect("serializable");
    let browsers: Vec<&Browser> = BROWSERS.iter().filter(|b| b.is_present(&places)).collect();
    if places.os == Os::Windows {
        let path = places.windows_host_manifest();
        changes += usize::from(record.write_owned(&path, manifest.as_bytes())?);
        record.host_manifests.insert(path.clone());
        for browser in BROWSERS {
            // Every vendor's key: cheap, and a browser installed later finds it.
            changes += usize::from(windows_registry::set(&browser.registry_key(), &path)?);
            record.registry_keys.insert(browser.registry_key());
        }
    } else {
        let dirs = browsers
            .iter()
            .filter_map(|b| b.native_hosts_dir(&places))
            .chain(args.browser_dir.iter().map(|d| d.join("NativeMessagingHosts")));
        for dir in dirs {
            let path = places::host_manifest_in(&dir);
            if record.write_owned(&path, manifest.as_bytes())? {
                println!("registered the native host in {}", path.display());
                changes += 1;
            }
            record.host_manifests.insert(path);
        }
    }
    if browsers.is_empty() && args.browser_dir.is_empty() {
        println!("note: no Chrome, Chromium, Edge, Brave or Vivaldi found; run `tabtunnel install` again once one is installed");
    } else {
        let names: Vec<&str> = browsers.iter().map(|b| b.name).collect();
        println!("native host registered for: {}", names.join(", "));
    }

    // 4. MCP clients.
    let wanted: Vec<McpClient> = if args.mcp.contains(&McpClient::All) {
        MCP_CLIENTS.iter().copied().filter(|c| c.is_present(&places)).collect()
    } else {
        args.mcp.clone()
    };
    for client in wanted {
        let file = client.config_file(&places);
        let entry = client.entry(&binary);
        let backup = mcp_config::backup_path(&file);
        if std::fs::symlink_metadata(&backup).is_ok() && !record.backups.contains(&backup) {
            // Not install's to overwrite (nor uninstall's to remove).
            println!(
                "left {} as it is: {} is there and install did not write it; move it away and run install again",
                file.display(),
                backup.display()
            );
            continue;
        }
        let ours = record.mcp_entries.iter().find(|e| e.file == file).map(|e| &e.entry);
        match mcp_config::add_to_file(&file, client.servers_key(), &entry, ours) {
            Ok(written) => {
                match written {
                    Some(written) => {
                        println!(
                            "added tabtunnel to {} ({}; backup beside it)",
                            client.name(),
                            file.display()
                        );
                        record.backups.extend(written.backup);
                        changes += 1;
                    }
                    None => println!("{} already has tabtunnel ({})", client.name(), file.display()),
                }
                // Written now or found as install writes it: uninstall takes it out while it
                // stays so.
                let written = McpEntry { file, servers_key: client.servers_key().to_owned(), entry };
                match record.mcp_entries.iter_mut().find(|e| e.file == written.file) {
                    Some(old) => *old = written,
                    None => record.mcp_entries.push(written),
                }
            }
            Err(e) => println!("could not add tabtunnel to {}: {e}", client.name()),
        }
    }
    record.create_dir(&places.data)?;
    record.save(&places)?;
    if changes == 0 {
        println!("everything was in place already");
    }
    if record.extension_dir.is_some() {
        println!();
        println!("One step left, once per browser: open chrome://extensions, turn on Developer mode,");
        println!("click Load unpacked and pick {}", extension_dir.display());
        println!(
            "(after an update: click the reload arrow on tabtunnel's card there). Then `tabtunnel doctor`."
        );
    }
    Ok(())
}

pub fn uninstall(args: UninstallArgs) -> Result<(), String> {
    let places = Places::of_this_user()?;
    let record = Record::load(&places);
    let config_dir = crate::paths::default_config_dir();
    // Only a daemon that proves it is this user's is signalled.
    if let Err(e) = crate::on_demand::stop_blocking(&config_dir) {
        println!("{e}");
    }
    take_out(&places, &record);
    remove(&places.record_file());
    if !args.keep_data {
        for dir in [&config_dir, &places.data] {
            if dir.is_dir() {
                match std::fs::remove_dir_all(dir) {
                    Ok(()) => println!("removed {}", dir.display()),
                    Err(e) => println!("could not remove {}: {e}", dir.display()),
                }
            }
        }
    }
    // Directories we created, deepest first, if nothing else came to live in them.
    for dir in record.created_dirs.iter().rev() {
        let _ = std::fs::remove_dir(dir);
    }
    println!("tabtunnel is uninstalled. Remove the extension in chrome://extensions too (its card's Remove button).");
    Ok(())
}

fn remove(path: &Path) {
    if path.is_file() {
        match std::fs::remove_file(path) {
            Ok(()) => println!("removed {}", path.display()),
            Err(e) => println!("could not remove {}: {e}", path.display()),
        }
    }
}

/// Takes out of the user's files what `record` says install wrote, where it is still what
/// install wrote; says what it leaves.
fn take_out(places: &Places, record: &Record) {
    let left = |path: &Path, why: &str| {
        if std::fs::symlink_metadata(path).is_ok() {
            println!("left {}: {why}", path.display());
        }
    };
    // Files install owns (the binary, host manifests): removed while they hold what it wrote.
    let remove_owned = |path: &Path| {
        if record.still_ours(path) {
            remove(path);
        } else {
            left(path, "install did not write it, or it changed since");
        }
    };
    if !places.record_file().is_file() {
        println!(
            "no install record ({}): nothing install wrote is known, so no file outside tabtunnel's own dirs is touched",
            places.record_file().display()
        );
    }
    let default_manifests =
        BROWSERS.iter().filter_map(|b| b.native_hosts_dir(places)).map(|d| places::host_manifest_in(&d));
    for path in record.host_manifests.iter().cloned().chain(default_manifests).collect::<BTreeSet<_>>() {
        remove_owned(&path);
    }
    for key in &record.registry_keys {
        if let Err(e) = windows_registry::delete(key) {
            println!("could not remove {key}: {e}");
        }
    }
    for McpEntry { file, servers_key, entry } in &record.mcp_entries {
        match mcp_config::remove_from_file(file, servers_key, entry) {
            Ok(mcp_config::Removal::Removed(_)) => println!("removed tabtunnel from {}", file.display()),
            Ok(mcp_config::Removal::Changed) => {
                println!("left the tabtunnel entry in {}: it changed since install wrote it", file.display())
            }
            Ok(mcp_config::Removal::Absent) => {}
            Err(e) => println!("could not remove tabtunnel from {}: {e}", file.display()),
        }
    }
    for client in MCP_CLIENTS {
        let file = client.config_file(places);
        let has_ours =
            std::fs::read_to_string(&file).is_ok_and(|t| mcp_config::has_entry(&t, client.servers_key()));
        if has_ours && !record.mcp_entries.iter().any(|e| e.file == file) {
            println!("left the tabtunnel entry in {}: install did not write it", file.display());
        }
    }
    for backup in &record.backups {
        remove(backup);
    }
    if let Some(dir) = &record.extension_dir {
        if dir.is_dir() && std::fs::remove_dir_all(dir).is_ok() {
            println!("removed {}", dir.display());
        }
    }
    let default_binary = places.default_bin_dir().join(places.binary_name());
    for binary in record.binary.iter().chain(std::iter::once(&default_binary)).collect::<BTreeSet<_>>() {
        remove_owned(binary);
    }
}

/// The registry on Windows, through `reg.exe` (no library: four commands, and their command
/// lines are unit-tested on every OS).
mod windows_registry {
    use std::path::Path;

    pub fn set_args(key: &str, manifest: &Path) -> Vec<String> {
        ["add", key, "/ve", "/t", "REG_SZ", "/d", &manifest.display().to_string(), "/f"]
            .map(String::from)
            .to_vec()
    }

    pub fn delete_args(key: &str) -> Vec<String> {
        ["delete", key, "/f"].map(String::from).to_vec()
    }

    pub fn query_args(key: &str) -> Vec<String> {
        ["query", key, "/ve"].map(String::from).to_vec()
    }

    #[cfg_attr(not(windows), allow(dead_code))]
    /// The default value `reg query KEY /ve` printed: `    (Default)    REG_SZ    C:\...`.
    pub fn parse_query(output: &str) -> Option<String> {
        output.lines().find_map(|line| line.split_once("REG_SZ").map(|(_, value)| value.trim().to_owned()))
    }

    #[cfg(windows)]
    fn reg(args: &[String]) -> Result<String, String> {
        let output = std::process::Command::new("reg")
            .args(args)
            .output()
            .map_err(|e| format!("cannot run reg: {e}"))?;
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).trim().to_owned())
        }
    }

    /// Points `key` at `manifest`; returns whether it changed.
    pub fn set(key: &str, manifest: &Path) -> Result<bool, String> {
        #[cfg(windows)]
        {
            if get(key).as_deref() == Some(&manifest.display().to_string()) {
                return Ok(false);
            }
            reg(&set_args(key, manifest)).map(|_| true)
        }
        #[cfg(not(windows))]
        {
            let _ = set_args(key, manifest);
            Ok(false)
        }
    }

    pub fn delete(key: &str) -> Result<(), String> {
        #[cfg(windows)]
        {
            if get(key).is_some() {
                reg(&delete_args(key))?;
            }
            Ok(())
        }
        #[cfg(not(windows))]
        {
            let _ = delete_args(key);
            Ok(())
        }
    }

    /// The manifest path `key` names, if it exists.
    pub fn get(key: &str) -> Option<String> {
        #[cfg(windows)]
        {
            reg(&query_args(key)).ok().and_then(|out| parse_query(&out))
        }
        #[cfg(not(windows))]
        {
            let _ = query_args(key);
            None
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn reg_command_lines() {
            let key = r"HKCU\Software\Google\Chrome\NativeMessagingHosts\dev.tabtunnel.host";
            let manifest =
                Path::new(r"C:\Users\u\AppData\Roaming\tabtunnel\native-host\dev.tabtunnel.host.json");
            assert_eq!(
                set_args(key, manifest),
                ["add", key, "/ve", "/t", "REG_SZ", "/d", &manifest.display().to_string(), "/f"]
            );
            assert_eq!(delete_args(key), ["delete", key, "/f"]);
            assert_eq!(query_args(key), ["query", key, "/ve"]);
            let printed = "\r\nHKEY_CURRENT_USER\\Software\\Google\\Chrome\\NativeMessagingHosts\\dev.tabtunnel.host\r\n    (Default)    REG_SZ    C:\\t\\dev.tabtunnel.host.json\r\n\r\n";
            assert_eq!(parse_query(printed).as_deref(), Some(r"C:\t\dev.tabtunnel.host.json"));
            assert_eq!(parse_query("ERROR: not found"), None);
        }
    }
}

pub use windows_registry::get as registry_value;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_manifest_names_this_binary_for_our_extension_only() {
        let manifest = host_manifest(Path::new("/home/u/.local/bin/tabtunnel"));
        assert_eq!(manifest["name"], "dev.tabtunnel.host");
        assert_eq!(manifest["type"], "stdio");
        assert_eq!(manifest["path"], "/home/u/.local/bin/tabtunnel");
        assert_eq!(
            manifest["allowed_origins"],
            serde_json::json!(["chrome-extension://jmlcgbpniifikmbmclnhinffofckiihm/"])
        );
    }

    #[test]
    fn a_tree_is_written_once_and_loses_what_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a/b/extension");
        let mut record = Record::default();
        let files =
            vec![("manifest.json".to_owned(), b"{}".to_vec()), ("pkg/x.js".to_owned(), b"x".to_vec())];
        assert_eq!(write_tree(&target, &files, &mut record).unwrap(), 2);
        assert_eq!(write_tree(&target, &files, &mut record).unwrap(), 0);
        assert!(record.created_dirs.contains(&dir.path().join("a")));
        assert!(record.created_dirs.contains(&target.join("pkg")));
        assert!(!record.created_dirs.contains(dir.path()));
        assert_eq!(write_tree(&target, &files[..1], &mut record).unwrap(), 1);
        assert!(!target.join("pkg/x.js").exists());
    }

    #[test]
    fn the_built_in_extension_is_complete_when_there_is_one() {
        if EXTENSION_FILES.is_empty() {
            return; // built without extension/pkg: `install` says so (tested by the e2e suite)
        }
        let names: Vec<&str> = EXTENSION_FILES.iter().map(|(n, _)| *n).collect();
        for needed in ["manifest.json", "sw.js", "sidepanel.html", "pkg/wasm_inline.js"] {
            assert!(names.contains(&needed), "{needed} missing from {names:?}");
        }
        assert!(!names.contains(&"pairing.json"));
    }

    fn places_in(home: &Path) -> Places {
        Places {
            os: Os::current(),
            home: home.to_path_buf(),
            config: home.join(".config"),
            local_data: home.join(".local/share"),
            data: home.join(".local/share/tabtunnel"),
        }
    }

    fn servers(file: &Path) -> serde_json::Value {
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(file).unwrap()).unwrap()
            ["mcpServers"]
            .clone()
    }

    #[test]
    fn install_replaces_no_program_of_the_users_by_our_name() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("tabtunnel");
        let ours = b"\x7fELF... dev.tabtunnel.host ...new".to_vec();
        let mut record = Record::default();
        assert_eq!(record.may_replace(&path, &ours), Ok(()), "nothing there");
        std::fs::write(&path, "#!/bin/sh\necho users own\n").unwrap();
        let refused = record.may_replace(&path, &ours).unwrap_err();
        assert!(refused.contains("not a tabtunnel binary") && refused.contains("--bin-dir"), "{refused}");
        // Not even an executable that merely names us, nor our name in a script.
        std::fs::write(&path, "#!/bin/sh\n# dev.tabtunnel.host\n").unwrap();
        assert!(record.may_replace(&path, &ours).is_err());
        // An older tabtunnel binary, or the one install wrote (recorded), is replaced.
        std::fs::write(&path, b"\x7fELF... dev.tabtunnel.host ...old").unwrap();
        assert_eq!(record.may_replace(&path, &ours), Ok(()));
        record.write_owned(&path, b"installed, then stripped").unwrap();
        assert_eq!(record.may_replace(&path, &ours), Ok(()));
        assert_eq!(record.may_replace(&path, b"installed, then stripped"), Ok(()));
    }

    #[test]
    fn uninstall_takes_out_only_what_install_wrote_and_still_is_so() {
        let home = tempfile::tempdir().unwrap();
        let places = places_in(home.path());
        let mut record = Record::default();
        // Install's binary in --bin-dir; the user's own tabtunnel in the default bin dir.
        let binary = home.path().join("bin").join(places.binary_name());
        record.write_owned(&binary, b"tabtunnel as installed").unwrap();
        record.binary = Some(binary.clone());
        let users_binary = places.default_bin_dir().join(places.binary_name());
        std::fs::create_dir_all(users_binary.parent().unwrap()).unwrap();
        std::fs::write(&users_binary, "the user's own build").unwrap();
        // A host manifest install wrote, and one it wrote that was changed since.
        let manifests: Vec<PathBuf> =
            ["a", "b"].iter().map(|d| home.path().join(d).join("host.json")).collect();
        for path in &manifests {
            record.write_owned(path, b"{}").unwrap();
            record.host_manifests.insert(path.clone());
        }
        std::fs::write(&manifests[1], r#"{"edited": true}"#).unwrap();
        // Cursor: our entry, as written. Claude Code: ours, changed by the user since.
        // Claude Desktop: an entry by our name that install never wrote.
        let others = r#"{"mcpServers": {"other": {"command": "o"}}}"#;
        for client in [McpClient::Cursor, McpClient::ClaudeCode, McpClient::ClaudeDesktop] {
            let file = client.config_file(&places);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, others).unwrap();
        }
        let entry = |client: McpClient| client.entry(&binary);
        for client in [McpClient::Cursor, McpClient::ClaudeCode] {
            let file = client.config_file(&places);
            let written =
                mcp_config::add_to_file(&file, "mcpServers", &entry(client), None).unwrap().unwrap();
            record.backups.extend(written.backup);
            record.mcp_entries.push(McpEntry {
                file,
                servers_key: "mcpServers".into(),
                entry: entry(client),
            });
        }
        let claude = McpClient::ClaudeCode.config_file(&places);
        let changed =
            serde_json::json!({ "command": "/opt/my/tabtunnel", "args": ["mcp", "--token-file", "t"] });
        let mut edited: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&claude).unwrap()).unwrap();
        edited["mcpServers"]["tabtunnel"] = changed.clone();
        std::fs::write(&claude, edited.to_string()).unwrap();
        let desktop = McpClient::ClaudeDesktop.config_file(&places);
        mcp_config::add_to_file(&desktop, "mcpServers", &entry(McpClient::ClaudeDesktop), None).unwrap();

        take_out(&places, &record);

        assert!(!binary.exists());
        assert_eq!(std::fs::read_to_string(&users_binary).unwrap(), "the user's own build");
        assert!(!manifests[0].exists());
        assert!(manifests[1].exists());
        let cursor = McpClient::Cursor.config_file(&places);
        assert_eq!(servers(&cursor), serde_json::json!({ "other": { "command": "o" } }));
        assert!(!mcp_config::backup_path(&cursor).exists());
        assert_eq!(servers(&claude)["tabtunnel"], changed);
        assert_eq!(servers(&desktop)["tabtunnel"], entry(McpClient::ClaudeDesktop));
        // Its backup was not install's (recorded) either: it stays.
        assert!(mcp_config::backup_path(&desktop).exists());
    }
}
