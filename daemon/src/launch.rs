//! `tabtunnel launch`: a local Chromium with the built extension loaded and already paired.

use std::fs;
use std::path::{Path, PathBuf};

const CHROMIUM_NAMES: &[&str] =
    &["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShareStartupTabs {
    /// When headless: there is no side panel to click there.
    Auto,
    Yes,
    No,
}

impl ShareStartupTabs {
    pub fn resolve(self, headless: bool) -> bool {
        match self {
            ShareStartupTabs::Auto => headless,
            ShareStartupTabs::Yes => true,
            ShareStartupTabs::No => false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Headless {
    /// Headless when there is no display (no DISPLAY or WAYLAND_DISPLAY).
    Auto,
    Always,
    Never,
}

impl Headless {
    pub fn resolve(self) -> bool {
        match self {
            Headless::Always => true,
            Headless::Never => false,
            Headless::Auto => {
                std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none()
            }
        }
    }
}

/// The browser to start: the one given, `$TABTUNNEL_CHROMIUM`, or the first Chromium on PATH.
pub fn find_chromium(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(path) =
        explicit.map(Path::to_path_buf).or_else(|| std::env::var_os("TABTUNNEL_CHROMIUM").map(PathBuf::from))
    {
        return if path.is_file() { Ok(path) } else { Err(format!("no browser at {}", path.display())) };
    }
    find_on_path(CHROMIUM_NAMES).ok_or_else(|| {
        format!(
            "no Chromium found on PATH (looked for {}); install it or pass --chromium",
            CHROMIUM_NAMES.join(", ")
        )
    })
}

/// The first of `names` found in a directory of PATH.
pub fn find_on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// Creates the profile directory, readable by its owner only: it holds the user's logins (and
/// our pairing with its token).
pub fn prepare_profile_dir(profile: &Path) -> Result<(), String> {
    crate::token::create_private_dir(profile)
}

/// The built extension: the one given, `$TABTUNNEL_EXTENSION_DIR`, `./extension`, or an
/// `extension/` beside an ancestor of this executable (a checkout's `target/release/`).
pub fn find_extension_dir(explicit: Option<&Path>) -> Result<PathBuf, String> {
    let is_built = |dir: &Path| dir.join("manifest.json").is_file() && dir.join("pkg").is_dir();
    if let Some(dir) = explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("TABTUNNEL_EXTENSION_DIR").map(PathBuf::from))
    {
        return if is_built(&dir) {
            Ok(dir)
        } else {
            Err(format!("{} is not a built tabtunnel extension (manifest.json and pkg/ expected); build it with `cargo run -p xtask -- build-extension`", dir.display()))
        };
    }
    let exe = std::env::current_exe().ok();
    let ancestors = exe.iter().flat_map(|e| e.ancestors().skip(1)).map(|d| d.join("extension"));
    std::iter::once(PathBuf::from("extension"))
        .chain(ancestors)
        .find(|d| is_built(d))
        .map(|d| d.canonicalize().unwrap_or(d))
        .ok_or_else(|| {
            "no built extension found; run `./dev launch` from the checkout, or pass --extension-dir"
                .to_owned()
        })
}

/// Copies the extension into the profile and pairs it with `daemon_url`, so the browser we
/// start connects without the user pasting anything. The extension opens `open_urls` (not
/// Chromium's command line: see the extension's `settings::Startup` for why), and
/// `share_startup_tabs` has it share the tabs the browser starts with.
pub fn stage_extension(
    source: &Path,
    profile: &Path,
    daemon_url: &str,
    share_startup_tabs: bool,
    open_urls: &[String],
) -> Result<PathBuf, String> {
    let target = profile.join("TabtunnelExtension");
    if target.exists() {
        fs::remove_dir_all(&target).map_err(|e| format!("cannot replace {}: {e}", target.display()))?;
    }
    copy_dir(source, &target)
        .map_err(|e| format!("cannot copy the extension to {}: {e}", target.display()))?;
    // The pairing URL carries the token.
    let pairing = serde_json::json!({
        "daemonUrl": daemon_url,
        "shareStartupTabs": share_startup_tabs,
        "openUrls": open_urls,
    });
    crate::token::write_owner_only(&target.join("pairing.json"), pairing.to_string().as_bytes())
        .map_err(|e| e.to_string())?;
    Ok(target)
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let dest = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &dest)?;
        } else {
            fs::copy(entry.path(), dest)?;
        }
    }
    Ok(())
}

/// Chromium's command line: our profile and extension, quiet background networking (this
/// machine, like many CI machines, has no route out), headless when asked, one blank tab.
pub fn chromium_args(profile: &Path, extension: &Path, headless: bool, extra: &[String]) -> Vec<String> {
    let mut args = vec![
        format!("--user-data-dir={}", profile.display()),
        format!("--load-extension={}", extension.display()),
        "--no-first-run".into(),
        "--no-default-browser-check".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
    ];
    if headless {
        args.extend(["--headless=new".into(), "--disable-gpu".into()]);
    }
    if crate::platform::running_as_root() {
        // Chromium refuses to run its sandbox as root.
        args.push("--no-sandbox".into());
    }
    args.extend(extra.iter().cloned());
    args.push("about:blank".into());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_a_paired_copy_of_the_extension() {
        let src = tempfile::tempdir().unwrap();
        fs::write(src.path().join("manifest.json"), "{}").unwrap();
        fs::create_dir(src.path().join("pkg")).unwrap();
        fs::write(src.path().join("pkg/x.wasm"), [0u8, 97, 115, 109]).unwrap();
        let profile = tempfile::tempdir().unwrap();
        let staged = stage_extension(
            src.path(),
            profile.path(),
            "ws://127.0.0.1:1/t/extension",
            true,
            &["http://a/".into()],
        )
        .unwrap();
        assert_eq!(fs::read(staged.join("pkg/x.wasm")).unwrap(), [0u8, 97, 115, 109]);
        let pairing: serde_json::Value =
            serde_json::from_slice(&fs::read(staged.join("pairing.json")).unwrap()).unwrap();
        assert_eq!(pairing["daemonUrl"], "ws://127.0.0.1:1/t/extension");
        assert_eq!(pairing["shareStartupTabs"], true);
        assert_eq!(pairing["openUrls"], serde_json::json!(["http://a/"]));
        assert!(!crate::platform::readable_by_others(&staged.join("pairing.json")).unwrap());
        // Staging again replaces the old copy.
        fs::remove_file(src.path().join("pkg/x.wasm")).unwrap();
        let staged =
            stage_extension(src.path(), profile.path(), "ws://127.0.0.1:2/t/extension", false, &[]).unwrap();
        assert!(!staged.join("pkg/x.wasm").exists());
        assert!(find_extension_dir(Some(src.path())).is_ok());
        assert!(find_extension_dir(Some(profile.path())).is_err());
    }

    #[test]
    fn args_load_the_extension_and_end_with_a_blank_page() {
        let args =
            chromium_args(Path::new("/p"), Path::new("/e"), true, &["--remote-debugging-port=0".into()]);
        assert!(args.contains(&"--user-data-dir=/p".to_owned()));
        assert!(args.contains(&"--load-extension=/e".to_owned()));
        assert!(args.contains(&"--headless=new".to_owned()));
        assert!(args.contains(&"--remote-debugging-port=0".to_owned()));
        assert_eq!(args.last().unwrap(), "about:blank");
        let windowed = chromium_args(Path::new("/p"), Path::new("/e"), false, &[]);
        assert!(!windowed.contains(&"--headless=new".to_owned()));
        assert!(ShareStartupTabs::Auto.resolve(true) && !ShareStartupTabs::Auto.resolve(false));
    }
}
