//! Where tabtunnel keeps its files, in one place: a `--config-dir` (a test's, a second
//! instance's) moves everything of that instance with it: the config and secrets, the audit
//! trail, the browser tool servers and their run dir, the launched browser's profile.

use std::path::{Path, PathBuf};

/// The user's config dir (`~/.config/tabtunnel`), when no `--config-dir` is given.
pub fn default_config_dir() -> PathBuf {
    dirs::config_dir().unwrap_or_else(std::env::temp_dir).join("tabtunnel")
}

/// Where tabtunnel keeps data: beside the config when a config dir is given (`<config>/data`,
/// so a test or a second instance stays separate), else the user's data dir
/// (`~/.local/share/tabtunnel`).
pub fn data_dir(config_dir: Option<&Path>) -> PathBuf {
    match config_dir {
        Some(config) => config.join("data"),
        None => dirs::data_dir().unwrap_or_else(std::env::temp_dir).join("tabtunnel"),
    }
}

/// The profile of the browser `tabtunnel launch` starts, kept between runs.
pub fn profile_dir(config_dir: Option<&Path>) -> PathBuf {
    data_dir(config_dir).join("chromium-profile")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_dir_holds_the_instance_s_data_and_profile() {
        let config = Path::new("/tmp/instance-2");
        assert_eq!(data_dir(Some(config)), config.join("data"));
        assert!(profile_dir(Some(config)).starts_with(config));
        assert!(!profile_dir(None).starts_with(config));
        assert_eq!(profile_dir(None), data_dir(None).join("chromium-profile"));
    }
}
