//! The child tool server's own working directory: owner-only, empty at first, one per session,
//! removed with it. Both children resolve the file names an agent gives them against their
//! working directory (the MCP client's otherwise, often `$HOME`: a snapshot named `.bashrc`
//! replaced the user's), so every path an agent names must stay inside this one.

use std::path::{Component, Path, PathBuf};

/// A session's work directory, removed (with what the child wrote there) when dropped.
pub struct WorkDir(PathBuf);

impl WorkDir {
    /// Creates `parent/work-<pid>-<random>`, owner-only (and `parent` if need be), after
    /// removing the work directories of processes that are gone.
    pub fn create(parent: &Path) -> Result<WorkDir, String> {
        crate::token::create_private_dir(parent)?;
        sweep(parent, crate::platform::process_alive);
        let pid = std::process::id();
        let path = parent.join(format!("work-{pid}-{}", &crate::token::generate()[..16]));
        crate::token::create_private_dir(&path)?;
        Ok(WorkDir(path))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// `text` as a file inside the directory, or why not: it must be a plain relative path
    /// that stays inside (no root, drive, `~`, `..`, URL or `:`), through no symlink.
    pub fn resolve(&self, text: &str) -> Result<PathBuf, String> {
        inside(&self.0, text)
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Removes the work directories in `parent` whose process is gone: a session whose process was
/// killed never drops its directory, and what the child wrote there (snapshots, screenshots of
/// the user's pages) would stay. Only `work-<pid>-...` directories (not symlinks) are touched.
fn sweep(parent: &Path, alive: impl Fn(u32) -> bool) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(owner_pid) else { continue };
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && pid != std::process::id() && !alive(pid) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The pid a work directory's name says created it.
fn owner_pid(name: &str) -> Option<u32> {
    let (pid, rest) = name.strip_prefix("work-")?.split_once('-')?;
    if rest.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Only a real pid: a negative one would name a process group to `kill`.
    pid.parse::<i32>().ok().filter(|pid| *pid > 0).map(|pid| pid as u32)
}

fn inside(root: &Path, text: &str) -> Result<PathBuf, String> {
    let refuse =
        |why: &str| Err(format!("{text:?} {why}: name a file inside the tool server's work directory"));
    if text.is_empty() || text.contains('\0') {
        return refuse("is not a file name");
    }
    if text.starts_with('~') {
        return refuse("names a home directory");
    }
    // A URL (`file:`), a Windows drive (`C:x` is relative to that drive's current directory)
    // or an alternate data stream: none is a file of the work directory.
    if text.contains(':') {
        return refuse("is not a plain relative path");
    }
    // On Windows `\` separates too (`\\server\share`, `\x`); elsewhere both are read as
    // separators all the same, so no spelling means one thing here and another to the child.
    let normalized = text.replace('\\', "/");
    let relative = Path::new(&normalized);
    let mut path = root.to_path_buf();
    for component in relative.components() {
        match component {
            Component::Normal(part) => {
                path.push(part);
                // A symlink (dangling or not) would take the child's read or write elsewhere.
                if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                    return refuse("goes through a symlink");
                }
            }
            Component::CurDir => {}
            Component::ParentDir => return refuse("leaves the directory"),
            Component::RootDir | Component::Prefix(_) => return refuse("is absolute"),
        }
    }
    if path == root {
        return refuse("is not a file name");
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_names_inside_are_taken() {
        let parent = tempfile::tempdir().unwrap();
        let dir = WorkDir::create(parent.path()).unwrap();
        assert_eq!(dir.resolve("page.png").unwrap(), dir.path().join("page.png"));
        assert_eq!(dir.resolve("./out/a.yml").unwrap(), dir.path().join("out").join("a.yml"));
        for bad in [
            "",
            "/etc/passwd",
            "/root/.bashrc",
            "../x",
            "a/../../x",
            "a/..",
            "..\\x",
            "~/.config/tabtunnel/token",
            "~root/x",
            "file:///etc/passwd",
            "C:\\Users\\x\\token",
            "C:token",
            "\\\\server\\share\\x",
            "\\x",
            "//server/share/x",
            "a:stream",
            ".",
            "./",
            "x\0y",
        ] {
            assert!(dir.resolve(bad).is_err(), "{bad:?} was taken");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_out_of_the_directory_is_not_followed() {
        let parent = tempfile::tempdir().unwrap();
        let dir = WorkDir::create(parent.path()).unwrap();
        let outside = parent.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, dir.path().join("link")).unwrap();
        std::os::unix::fs::symlink(outside.join("gone"), dir.path().join("dangling")).unwrap();
        assert!(dir.resolve("link/.bashrc").is_err());
        assert!(dir.resolve("link").is_err());
        assert!(dir.resolve("dangling").is_err());
        assert!(dir.resolve("not-yet/page.png").is_ok());
    }

    #[test]
    fn a_gone_process_leaves_no_work_directory_behind() {
        let parent = tempfile::tempdir().unwrap();
        let mkdir = |name: &str| {
            let path = parent.path().join(name);
            std::fs::create_dir(&path).unwrap();
            std::fs::write(path.join("snapshot.yml"), "x").unwrap();
            path
        };
        let gone = mkdir("work-4000001-aaaa");
        let living = mkdir("work-4000002-bbbb");
        let ours = mkdir(&format!("work-{}-cccc", std::process::id()));
        let not_a_work_dir = mkdir("work-x-dddd");
        let no_pid = mkdir("work-4294967295-eeee");
        let other = mkdir("keep");
        sweep(parent.path(), |pid| pid != 4_000_001 && pid != u32::MAX);
        assert!(!gone.exists());
        for kept in [living, ours, not_a_work_dir, no_pid, other] {
            assert!(kept.exists(), "{kept:?} was removed");
        }
        let dir = WorkDir::create(parent.path()).unwrap();
        assert_eq!(
            dir.path().file_name().and_then(|n| n.to_str()).and_then(owner_pid),
            Some(std::process::id())
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_named_as_a_work_directory_is_not_followed() {
        let parent = tempfile::tempdir().unwrap();
        let target = tempfile::tempdir().unwrap();
        std::fs::write(target.path().join("precious"), "x").unwrap();
        std::os::unix::fs::symlink(target.path(), parent.path().join("work-4000001-link")).unwrap();
        sweep(parent.path(), |_| false);
        assert!(target.path().join("precious").exists());
    }

    #[cfg(unix)]
    #[test]
    fn it_is_owner_only_and_gone_when_dropped() {
        let parent = tempfile::tempdir().unwrap();
        let dir = WorkDir::create(parent.path()).unwrap();
        let path = dir.path().to_path_buf();
        std::fs::write(path.join("snapshot.yml"), "x").unwrap();
        assert!(!crate::platform::readable_by_others(&path).unwrap());
        drop(dir);
        assert!(!path.exists());
    }
}
