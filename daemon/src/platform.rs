//! What differs between Linux, macOS and Windows, in one place: owner-only files and
//! directories, file modes, the signal that asks us to stop, and starting a process that
//! outlives its parent.
//!
//! Owner-only: on unix, modes 0600/0700. On Windows, the files live in the user's profile
//! (`%APPDATA%`, `%LOCALAPPDATA%`), whose inherited ACL already gives access to that user (and
//! SYSTEM and administrators) only, which is the equivalent; nothing is changed there.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::Path;

/// Opens (creating it readable by its owner only) with `options`' other settings.
pub fn open_owner_only(options: &mut OpenOptions, path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options.open(path)?;
    // An older file may have been created with wider permissions.
    restrict_file(&file)?;
    Ok(file)
}

/// [`open_owner_only`], refusing a symbolic link (or, on Windows, any reparse point) at `path`
/// rather than opening, and perhaps truncating, what it points to.
pub fn open_owner_only_no_follow(options: &mut OpenOptions, path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        // Opens the link itself, not its target; refused below.
        const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
        options.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT);
    }
    let file = open_owner_only(options, path)?;
    #[cfg(windows)]
    {
        use std::os::windows::fs::MetadataExt;
        const FILE_ATTRIBUTE_REPARSE_POINT: u32 = 0x400;
        if file.metadata()?.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
            return Err(io::Error::other(format!("{} is a link", path.display())));
        }
    }
    Ok(file)
}

/// Makes an open file readable by its owner only.
pub fn restrict_file(file: &File) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(fs::Permissions::from_mode(0o600))?;
    }
    #[cfg(not(unix))]
    let _ = file;
    Ok(())
}

/// Whether a file's permissions let others than its owner read it (never on Windows: see the
/// module's comment).
pub fn readable_by_others(path: &Path) -> io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Ok(fs::metadata(path)?.permissions().mode() & 0o077 != 0)
    }
    #[cfg(not(unix))]
    {
        fs::metadata(path).map(|_| false)
    }
}

/// Makes a directory usable by its owner only.
pub fn restrict_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Gives a file the ordinary mode of a file anyone may read (0644), or, `executable`, run
/// (0755). Nothing to do on Windows.
pub fn set_public_mode(path: &Path, executable: bool) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(if executable { 0o755 } else { 0o644 }))?;
    }
    #[cfg(not(unix))]
    let _ = (path, executable);
    Ok(())
}

/// Whether we run as root (Chromium then needs `--no-sandbox`). Never on Windows.
pub fn running_as_root() -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
            // macOS has no /proc.
            || std::env::var_os("USER").is_some_and(|u| u == "root")
    }
    #[cfg(not(unix))]
    false
}

/// Resolves when the user or a service manager asks us to stop: Ctrl-C everywhere, SIGTERM on
/// unix, closing the console on Windows.
pub async fn terminate() {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(windows)]
    {
        let mut close = tokio::signal::windows::ctrl_close().expect("console close handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = close.recv() => {}
        }
    }
}

/// Starts `command` as a process that outlives us and whoever started us: in its own session
/// (so no terminal or process group signal of ours reaches it) on unix; detached from our
/// console, in its own process group, and out of our job object when the job allows it (Chrome
/// runs native hosts in a job that ends with them) on Windows. The caller redirects its stdio.
pub fn spawn_detached(command: &mut std::process::Command) -> io::Result<std::process::Child> {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: setsid is async-signal-safe and touches no memory of ours.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() == -1 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        command.spawn()
    }
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        const DETACHED_PROCESS: u32 = 0x0000_0008;
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        const CREATE_BREAKAWAY_FROM_JOB: u32 = 0x0100_0000;
        let flags = DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP;
        // A job that forbids breaking away refuses the flag: then start inside it.
        command
            .creation_flags(flags | CREATE_BREAKAWAY_FROM_JOB)
            .spawn()
            .or_else(|_| command.creation_flags(flags).spawn())
    }
}

/// Whether process `pid` is alive (best effort: `false` only when sure it is gone).
pub fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        // SAFETY: signal 0 checks for existence and permission only.
        let alive = unsafe { libc::kill(pid as libc::pid_t, 0) } == 0;
        alive || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Asks process `pid` to stop (SIGTERM; `taskkill` on Windows). Whether it was asked.
pub fn stop_process(pid: u32) -> bool {
    #[cfg(unix)]
    {
        // SAFETY: sends a signal; no memory is involved.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) == 0 }
    }
    #[cfg(not(unix))]
    {
        std::process::Command::new("taskkill")
            .args(["/PID", &pid.to_string(), "/F"])
            .output()
            .is_ok_and(|o| o.status.success())
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn owner_only_files_and_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "x").unwrap();
        std::fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        assert!(readable_by_others(&path).unwrap());
        open_owner_only(OpenOptions::new().append(true), &path).unwrap();
        assert!(!readable_by_others(&path).unwrap());
        restrict_dir(dir.path()).unwrap();
        assert_eq!(fs::metadata(dir.path()).unwrap().permissions().mode() & 0o777, 0o700);
        set_public_mode(&path, true).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o755);
        assert!(process_alive(std::process::id()));
    }

    #[test]
    fn a_link_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, "keep me").unwrap();
        let link = dir.path().join("log");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let options = || OpenOptions::new().create(true).write(true).truncate(true).clone();
        assert!(open_owner_only_no_follow(&mut options(), &link).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
        let plain = dir.path().join("plain");
        open_owner_only_no_follow(&mut options(), &plain).unwrap();
        assert!(!readable_by_others(&plain).unwrap());
    }
}
