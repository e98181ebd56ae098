//! Replacing a file atomically while keeping what it is: a temporary file beside it, given the
//! old file's mode and owner before it is renamed over it, so that no moment and no result is
//! more readable than the file was (a client's `mcp.json` may hold another server's token). A
//! symlink is written through: the file it leads to is replaced, the link stays. A read-only
//! file is refused, never made writable. On Windows the mode is the read-only flag (refused
//! too) and the new file takes its folder's inherited ACL, as the user's own files do.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The mode of a file `replace` creates where none was.
#[derive(Clone, Copy)]
pub enum Like<'a> {
    /// The file it replaces: its mode and owner.
    Old(&'a Metadata),
    /// A new file: this mode, less the umask (unix; Windows has no modes).
    New(#[cfg_attr(not(unix), allow(dead_code))] u32),
}

/// Where a write to `path` lands: the end of its chain of symlinks (relative links resolved
/// against their own directory; the end may not exist yet), or `path` itself.
pub fn resolve(path: &Path) -> Result<PathBuf, String> {
    let mut current = path.to_path_buf();
    // Linux's own limit on links followed in one lookup.
    for _ in 0..40 {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&current)
                    .map_err(|e| format!("cannot read the link {}: {e}", current.display()))?;
                current = current.parent().unwrap_or(Path::new("")).join(target);
            }
            _ => return Ok(current),
        }
    }
    Err(format!("{}: too many levels of symbolic links", path.display()))
}

/// Refuses a file its owner may not write: it stays exactly as it is.
pub fn check_writable(path: &Path, meta: &Metadata) -> Result<(), String> {
    #[cfg(unix)]
    let read_only = {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o200 == 0
    };
    #[cfg(not(unix))]
    let read_only = meta.permissions().readonly();
    if read_only {
        return Err(format!(
            "{} is read-only: left as it is (make it writable and run this again, or add the entry by hand)",
            path.display()
        ));
    }
    Ok(())
}

/// `<file name><suffix>` beside `path`.
pub fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// Replaces `path` (not followed if a symlink: see [`resolve`]) with `contents`, atomically,
/// with the mode and owner `like` gives. The temporary file is removed on failure.
pub fn replace(path: &Path, contents: &[u8], like: Like) -> Result<(), String> {
    let tmp = sibling(path, ".tabtunnel-tmp");
    // One left by a write that was cut short (ours: the name is ours). Not followed if a link.
    let _ = fs::remove_file(&tmp);
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Never wider than the end result, not even before its mode is set.
        options.mode(match like {
            Like::Old(_) => 0o600,
            Like::New(mode) => mode,
        });
    }
    let written = options
        .open(&tmp)
        .map_err(|e| format!("cannot write {}: {e}", tmp.display()))
        .and_then(|mut file| {
            file.write_all(contents).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
            if let Like::Old(meta) = like {
                keep_mode_and_owner(&file, meta).map_err(|e| format!("{}: {e}", path.display()))?;
            }
            file.sync_all().map_err(|e| format!("cannot write {}: {e}", tmp.display()))
        })
        .and_then(|()| fs::rename(&tmp, path).map_err(|e| format!("cannot write {}: {e}", path.display())));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// Gives `file` the mode (permission bits only) and owner of `meta`'s file.
fn keep_mode_and_owner(file: &File, meta: &Metadata) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let mine = file.metadata().map_err(|e| e.to_string())?;
        if (mine.uid(), mine.gid()) != (meta.uid(), meta.gid()) {
            std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid())).map_err(|e| {
                format!("cannot keep its owner ({}:{}): {e}; left as it is", meta.uid(), meta.gid())
            })?;
        }
        file.set_permissions(fs::Permissions::from_mode(meta.mode() & 0o777)).map_err(|e| e.to_string())
    }
    #[cfg(not(unix))]
    {
        file.set_permissions(meta.permissions()).map_err(|e| e.to_string())
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_replaced_file_keeps_its_mode_and_a_new_one_gets_the_one_asked() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mcp.json");
        fs::write(&file, "old").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).unwrap();
        let meta = fs::metadata(&file).unwrap();
        replace(&file, b"new", Like::Old(&meta)).unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "new");
        assert_eq!(mode(&file), 0o640);
        let fresh = dir.path().join("fresh.json");
        replace(&fresh, b"x", Like::New(0o600)).unwrap();
        assert_eq!(mode(&fresh), 0o600);
        assert!(!sibling(&file, ".tabtunnel-tmp").exists());
    }

    #[test]
    fn links_are_followed_to_their_end_relative_to_their_own_dir() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("dotfiles")).unwrap();
        fs::create_dir_all(dir.path().join("home")).unwrap();
        let target = dir.path().join("dotfiles/claude.json");
        std::os::unix::fs::symlink("../dotfiles/claude.json", dir.path().join("home/a")).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("home/b")).unwrap();
        // The end need not exist yet.
        assert_eq!(
            resolve(&dir.path().join("home/b")).unwrap(),
            dir.path().join("home/../dotfiles/claude.json")
        );
        fs::write(&target, "{}").unwrap();
        assert_eq!(
            fs::canonicalize(resolve(&dir.path().join("home/b")).unwrap()).unwrap(),
            fs::canonicalize(&target).unwrap()
        );
        assert_eq!(resolve(&target).unwrap(), target);
        std::os::unix::fs::symlink("loop", dir.path().join("loop")).unwrap();
        assert!(resolve(&dir.path().join("loop")).unwrap_err().contains("too many"));
    }

    #[test]
    fn read_only_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        fs::write(&file, "x").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o444)).unwrap();
        let refused = check_writable(&file, &fs::metadata(&file).unwrap()).unwrap_err();
        assert!(refused.contains("read-only") && refused.contains(&file.display().to_string()), "{refused}");
        fs::set_permissions(&file, fs::Permissions::from_mode(0o600)).unwrap();
        check_writable(&file, &fs::metadata(&file).unwrap()).unwrap();
    }
}
