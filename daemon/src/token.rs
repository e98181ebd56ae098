//! The daemon's secrets, generated once and kept in the user's config dir, readable by their
//! owner only: the owner token (`token`, the human's own clients) and the extension's secret
//! (`extension-secret`, which only the extension's socket takes: a client token never opens it).

use std::fs;
use std::io::Write;
use std::path::Path;
use tabtunnel_core::AGENT_TOKEN_PREFIX;

type Result<T> = std::result::Result<T, String>;

const TOKEN_BYTES: usize = 32;

/// The file beside the token that holds the extension's secret.
pub const EXTENSION_SECRET_FILE: &str = "extension-secret";

/// Loads the owner token from `<dir>/token`, creating dir (0700) and file (0600) on first use.
pub fn load_or_create(dir: &Path) -> Result<String> {
    load_or_create_secret(dir, "token")
}

/// Loads the extension's secret from `<dir>/extension-secret`, creating it on first use.
pub fn load_or_create_extension_secret(dir: &Path) -> Result<String> {
    load_or_create_secret(dir, EXTENSION_SECRET_FILE)
}

/// The secrets stored in `dir` (owner token, extension secret), those that are there; nothing is
/// created. For a reader of what the daemon wrote (`tabtunnel audit`).
pub fn stored_secrets(dir: &Path) -> Vec<String> {
    ["token", EXTENSION_SECRET_FILE]
        .into_iter()
        .filter_map(|file| fs::read_to_string(dir.join(file)).ok())
        .map(|text| text.trim().to_owned())
        .filter(|secret| is_valid(secret))
        .collect()
}

/// Loads a secret from `<dir>/<file>`, creating dir (0700) and file (0600) on first use, and keeps
/// it out of this process's log. A file others can read is tightened rather than trusted
/// silently.
pub(crate) fn load_or_create_secret(dir: &Path, file: &str) -> Result<String> {
    let secret = read_or_create_secret(dir, file)?;
    crate::log::keep_out([&secret]);
    Ok(secret)
}

fn read_or_create_secret(dir: &Path, file: &str) -> Result<String> {
    let path = dir.join(file);
    match fs::read_to_string(&path) {
        Ok(text) => {
            let token = text.trim().to_owned();
            if !is_valid(&token) {
                return Err(format!(
                    "{} does not hold a tabtunnel token; delete it to get a new one",
                    path.display()
                ));
            }
            if crate::platform::readable_by_others(&path).map_err(|e| e.to_string())? {
                tracing::warn!("{} was readable by others; restricting it to its owner", path.display());
                let file = fs::File::open(&path).map_err(|e| e.to_string())?;
                crate::platform::restrict_file(&file).map_err(|e| e.to_string())?;
            }
            Ok(token)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => create(dir, &path),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Creates a directory (and its parents) readable by its owner only.
pub fn create_private_dir(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    crate::platform::restrict_dir(dir).map_err(|e| format!("cannot restrict {}: {e}", dir.display()))
}

fn create(dir: &Path, path: &Path) -> Result<String> {
    create_private_dir(dir)?;
    let token = generate();
    let mut file =
        crate::platform::open_owner_only(fs::OpenOptions::new().write(true).create_new(true), path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    writeln!(file, "{token}").map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(token)
}

/// Writes a file only its owner can read (it holds the token), replacing it atomically.
pub fn write_owner_only(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    let _ = fs::remove_file(&tmp);
    let mut file =
        crate::platform::open_owner_only(fs::OpenOptions::new().write(true).create_new(true), &tmp)?;
    file.write_all(contents)?;
    drop(file);
    fs::rename(&tmp, path)
}

/// 32 random bytes, hex: URL-safe in a path, a query and a header alike.
pub fn generate() -> String {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).expect("the OS random source works");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn is_valid(token: &str) -> bool {
    token.len() == TOKEN_BYTES * 2 && token.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `url` with every path segment that is a secret of ours (the owner token, the extension's
/// secret, the navigation key: 32 or more hex digits; an agent's token) replaced by `<token>`,
/// for logs and tool results.
pub fn redact(url: &str) -> String {
    url.split('/')
        .map(|segment| {
            let hex = segment.len() >= 32 && segment.bytes().all(|b| b.is_ascii_hexdigit());
            if hex || looks_like_agent_token(segment) {
                "<token>"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether `text` has the shape of an agent token.
pub fn looks_like_agent_token(text: &str) -> bool {
    text.strip_prefix(AGENT_TOKEN_PREFIX)
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Compares in time independent of where the strings differ.
pub fn matches(expected: &str, presented: &str) -> bool {
    expected.len() == presented.len()
        && expected.bytes().zip(presented.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn creates_once_with_owner_only_permissions_then_reuses() {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("tabtunnel");
        let first = load_or_create(&conf).unwrap();
        assert!(is_valid(&first));
        let mode = fs::metadata(conf.join("token")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(load_or_create(&conf).unwrap(), first);
    }

    #[test]
    fn tightens_a_readable_token_file_and_rejects_garbage() {
        let dir = tempfile::tempdir().unwrap();
        let token = load_or_create(dir.path()).unwrap();
        let path = dir.path().join("token");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(load_or_create(dir.path()).unwrap(), token);
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        fs::write(&path, "hello").unwrap();
        assert!(load_or_create(dir.path()).is_err());
    }

    #[test]
    fn owner_only_files_are_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ready.json");
        write_owner_only(&path, b"one").unwrap();
        write_owner_only(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn generated_tokens_differ_and_compare() {
        let (a, b) = (generate(), generate());
        assert_ne!(a, b);
        assert!(matches(&a, &a.clone()));
        assert!(!matches(&a, &b));
        assert!(!matches(&a, &a[1..]));
    }
}
