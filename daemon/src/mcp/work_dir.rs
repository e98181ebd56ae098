//! The child tool server's own working directory: owner-only, empty at first, one per session,
//! removed with it. Both children resolve the file names an agent gives them against their
//! working directory (the MCP client's otherwise, often `$HOME`: a snapshot named `.bashrc`
//! replaced the user's), so every path an agent names must stay inside this one.

use std::path::{Component, Path, PathBuf};

/// A session's work directory, removed (with what the child wrote there) when dropped.
pub struct WorkDir(PathBuf);

impl WorkDir {
    /// Creates `parent/work-<random>`, owner-only (and `parent` if need be).
    pub fn create(parent: &Path) -> Result<WorkDir, String> {
        crate::token::create_private_dir(parent)?;
        let path = parent.join(format!("work-{}", &crate::token::generate()[..16]));
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
