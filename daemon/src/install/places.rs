//! Where things go on each OS: the browsers' native messaging host locations, the MCP
//! clients' configuration files, our bin and data dirs. Computed from a [`Places`] value so
//! that every OS's paths are unit-tested on any OS.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    MacOs,
    Windows,
}

impl Os {
    pub fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }
}

/// The user's directories that everything else is found from.
#[derive(Debug, Clone)]
pub struct Places {
    pub os: Os,
    pub home: PathBuf,
    /// Linux: `$XDG_CONFIG_HOME` or `~/.config`; macOS: `~/Library/Application Support`;
    /// Windows: `%APPDATA%` (roaming).
    pub config: PathBuf,
    /// Windows: `%LOCALAPPDATA%` (browsers' user data); elsewhere unused.
    pub local_data: PathBuf,
    /// tabtunnel's own data dir (the extension, the install record).
    pub data: PathBuf,
}

impl Places {
    pub fn of_this_user() -> Result<Places, String> {
        let home = dirs::home_dir().ok_or("cannot find your home directory")?;
        let config = dirs::config_dir().unwrap_or_else(|| home.join(".config"));
        let local_data = dirs::data_local_dir().unwrap_or_else(|| config.clone());
        Ok(Places { os: Os::current(), home, config, local_data, data: crate::paths::data_dir(None) })
    }

    /// `~/.local/bin` (Linux, macOS); `%LOCALAPPDATA%\tabtunnel\bin` (Windows).
    pub fn default_bin_dir(&self) -> PathBuf {
        match self.os {
            Os::Windows => self.local_data.join("tabtunnel").join("bin"),
            _ => self.home.join(".local").join("bin"),
        }
    }

    pub fn binary_name(&self) -> &'static str {
        if self.os == Os::Windows {
            "tabtunnel.exe"
        } else {
            "tabtunnel"
        }
    }

    /// The unpacked extension the user loads in chrome://extensions.
    pub fn extension_dir(&self) -> PathBuf {
        self.data.join("extension")
    }

    /// What `install` wrote, for `uninstall` and `doctor`.
    pub fn record_file(&self) -> PathBuf {
        self.data.join("install.json")
    }

    /// Windows keeps the host manifest where we like and points the registry at it.
    pub fn windows_host_manifest(&self) -> PathBuf {
        self.data.join("native-host").join(format!("{}.json", crate::native_host::HOST_NAME))
    }
}

/// A Chromium-family browser and where it looks for native messaging hosts.
#[derive(Debug)]
pub struct Browser {
    pub name: &'static str,
    /// Below the config dir on Linux.
    linux: &'static str,
    /// Below `~/Library/Application Support` on macOS.
    mac: &'static str,
    /// Below `HKCU\Software\` on Windows.
    windows_key: &'static str,
    /// Below `%LOCALAPPDATA%` on Windows: its user data dir.
    windows_data: &'static str,
    /// Programs on PATH that tell it is installed (Linux).
    executables: &'static [&'static str],
    /// macOS application bundle.
    mac_app: &'static str,
}

pub const BROWSERS: &[Browser] = &[
    Browser {
        name: "Google Chrome",
        linux: "google-chrome",
        mac: "Google/Chrome",
        windows_key: r"Google\Chrome",
        windows_data: r"Google\Chrome\User Data",
        executables: &["google-chrome", "google-chrome-stable"],
        mac_app: "Google Chrome.app",
    },
    Browser {
        name: "Chromium",
        linux: "chromium",
        mac: "Chromium",
        windows_key: "Chromium",
        windows_data: r"Chromium\User Data",
        executables: &["chromium", "chromium-browser"],
        mac_app: "Chromium.app",
    },
    Browser {
        name: "Microsoft Edge",
        linux: "microsoft-edge",
        mac: "Microsoft Edge",
        windows_key: r"Microsoft\Edge",
        windows_data: r"Microsoft\Edge\User Data",
        executables: &["microsoft-edge", "microsoft-edge-stable"],
        mac_app: "Microsoft Edge.app",
    },
    Browser {
        name: "Brave",
        linux: "BraveSoftware/Brave-Browser",
        mac: "BraveSoftware/Brave-Browser",
        windows_key: r"BraveSoftware\Brave-Browser",
        windows_data: r"BraveSoftware\Brave-Browser\User Data",
        executables: &["brave-browser", "brave"],
        mac_app: "Brave Browser.app",
    },
    Browser {
        name: "Vivaldi",
        linux: "vivaldi",
        mac: "Vivaldi",
        windows_key: "Vivaldi",
        windows_data: r"Vivaldi\User Data",
        executables: &["vivaldi", "vivaldi-stable"],
        mac_app: "Vivaldi.app",
    },
];

impl Browser {
    /// Its per-user data dir (the default profile's parent).
    pub fn user_data_dir(&self, places: &Places) -> PathBuf {
        match places.os {
            Os::Linux => places.config.join(self.linux),
            Os::MacOs => places.config.join(self.mac),
            Os::Windows => places.local_data.join(self.windows_data),
        }
    }

    /// Where its host manifests go on Linux and macOS (`None`: the registry, on Windows).
    pub fn native_hosts_dir(&self, places: &Places) -> Option<PathBuf> {
        (places.os != Os::Windows).then(|| self.user_data_dir(places).join("NativeMessagingHosts"))
    }

    /// `HKCU\Software\<vendor>\NativeMessagingHosts\dev.tabtunnel.host`, whose default value is
    /// the manifest's path (Windows).
    pub fn registry_key(&self) -> String {
        format!(r"HKCU\Software\{}\NativeMessagingHosts\{}", self.windows_key, crate::native_host::HOST_NAME)
    }

    /// Whether this user has it: its data dir exists (it ran once), or its program is installed.
    pub fn is_present(&self, places: &Places) -> bool {
        if self.user_data_dir(places).is_dir() {
            return true;
        }
        match places.os {
            Os::Linux => crate::launch::find_on_path(self.executables).is_some(),
            Os::MacOs => {
                Path::new("/Applications").join(self.mac_app).exists()
                    || places.home.join("Applications").join(self.mac_app).exists()
            }
            Os::Windows => false,
        }
    }
}

/// The host manifest file in a native hosts dir.
pub fn host_manifest_in(dir: &Path) -> PathBuf {
    dir.join(format!("{}.json", crate::native_host::HOST_NAME))
}

/// An MCP client whose configuration `install --mcp` edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum McpClient {
    ClaudeCode,
    Cursor,
    Vscode,
    ClaudeDesktop,
    /// Every client whose configuration (or its directory) exists.
    All,
}

pub const MCP_CLIENTS: &[McpClient] =
    &[McpClient::ClaudeCode, McpClient::Cursor, McpClient::Vscode, McpClient::ClaudeDesktop];

impl McpClient {
    pub fn name(self) -> &'static str {
        match self {
            McpClient::ClaudeCode => "Claude Code",
            McpClient::Cursor => "Cursor",
            McpClient::Vscode => "VS Code",
            McpClient::ClaudeDesktop => "Claude Desktop",
            McpClient::All => "all",
        }
    }

    /// Its user-level configuration file.
    pub fn config_file(self, places: &Places) -> PathBuf {
        match self {
            McpClient::ClaudeCode => places.home.join(".claude.json"),
            McpClient::Cursor => places.home.join(".cursor").join("mcp.json"),
            McpClient::Vscode => places.config.join("Code").join("User").join("mcp.json"),
            McpClient::ClaudeDesktop | McpClient::All => {
                places.config.join("Claude").join("claude_desktop_config.json")
            }
        }
    }

    /// The key of the servers' map in that file.
    pub fn servers_key(self) -> &'static str {
        match self {
            McpClient::Vscode => "servers",
            _ => "mcpServers",
        }
    }

    /// Our entry. Always the binary's absolute path: desktop apps start servers with a short
    /// PATH.
    pub fn entry(self, binary: &Path) -> serde_json::Value {
        let command = binary.display().to_string();
        match self {
            McpClient::ClaudeCode => {
                serde_json::json!({ "type": "stdio", "command": command, "args": ["mcp"], "env": {} })
            }
            McpClient::Vscode => serde_json::json!({ "type": "stdio", "command": command, "args": ["mcp"] }),
            _ => serde_json::json!({ "command": command, "args": ["mcp"] }),
        }
    }

    /// Whether the user has this client: its file exists, or the directory it would be in.
    pub fn is_present(self, places: &Places) -> bool {
        let file = self.config_file(places);
        file.is_file() || (self != McpClient::ClaudeCode && file.parent().is_some_and(Path::is_dir))
    }
}

/// Whether `dir` is one of PATH's directories.
pub fn dir_on_path(dir: &Path) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .any(|d| d == dir || (d.canonicalize().ok().is_some_and(|d| Some(d) == dir.canonicalize().ok())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(os: Os) -> Places {
        let (home, config, local) = match os {
            Os::Linux => ("/home/u", "/home/u/.config", "/home/u/.local/share"),
            Os::MacOs => {
                ("/Users/u", "/Users/u/Library/Application Support", "/Users/u/Library/Application Support")
            }
            Os::Windows => (r"C:\Users\u", r"C:\Users\u\AppData\Roaming", r"C:\Users\u\AppData\Local"),
        };
        Places { os, home: home.into(), config: config.into(), local_data: local.into(), data: "/d".into() }
    }

    fn chrome() -> &'static Browser {
        &BROWSERS[0]
    }

    #[test]
    fn native_host_locations_per_os() {
        let linux = places(Os::Linux);
        assert_eq!(
            chrome().native_hosts_dir(&linux).unwrap(),
            Path::new("/home/u/.config/google-chrome/NativeMessagingHosts")
        );
        assert_eq!(
            BROWSERS[3].native_hosts_dir(&linux).unwrap(),
            Path::new("/home/u/.config/BraveSoftware/Brave-Browser/NativeMessagingHosts")
        );
        assert_eq!(
            host_manifest_in(&BROWSERS[1].native_hosts_dir(&linux).unwrap()),
            Path::new("/home/u/.config/chromium/NativeMessagingHosts/dev.tabtunnel.host.json")
        );
        let mac = places(Os::MacOs);
        assert_eq!(
            chrome().native_hosts_dir(&mac).unwrap(),
            Path::new("/Users/u/Library/Application Support/Google/Chrome/NativeMessagingHosts")
        );
        assert_eq!(
            BROWSERS[2].native_hosts_dir(&mac).unwrap(),
            Path::new("/Users/u/Library/Application Support/Microsoft Edge/NativeMessagingHosts")
        );
        let windows = places(Os::Windows);
        assert!(chrome().native_hosts_dir(&windows).is_none());
        let keys: Vec<String> = BROWSERS.iter().map(Browser::registry_key).collect();
        assert_eq!(
            keys,
            [
                r"HKCU\Software\Google\Chrome\NativeMessagingHosts\dev.tabtunnel.host",
                r"HKCU\Software\Chromium\NativeMessagingHosts\dev.tabtunnel.host",
                r"HKCU\Software\Microsoft\Edge\NativeMessagingHosts\dev.tabtunnel.host",
                r"HKCU\Software\BraveSoftware\Brave-Browser\NativeMessagingHosts\dev.tabtunnel.host",
                r"HKCU\Software\Vivaldi\NativeMessagingHosts\dev.tabtunnel.host",
            ]
        );
        assert!(chrome().user_data_dir(&windows).ends_with(r"Google\Chrome\User Data"));
    }

    #[test]
    fn mcp_client_files_per_os() {
        let linux = places(Os::Linux);
        assert_eq!(McpClient::ClaudeCode.config_file(&linux), Path::new("/home/u/.claude.json"));
        assert_eq!(McpClient::Cursor.config_file(&linux), Path::new("/home/u/.cursor/mcp.json"));
        assert_eq!(McpClient::Vscode.config_file(&linux), Path::new("/home/u/.config/Code/User/mcp.json"));
        assert_eq!(
            McpClient::ClaudeDesktop.config_file(&linux),
            Path::new("/home/u/.config/Claude/claude_desktop_config.json")
        );
        let mac = places(Os::MacOs);
        assert_eq!(
            McpClient::Vscode.config_file(&mac),
            Path::new("/Users/u/Library/Application Support/Code/User/mcp.json")
        );
        assert_eq!(
            McpClient::ClaudeDesktop.config_file(&mac),
            Path::new("/Users/u/Library/Application Support/Claude/claude_desktop_config.json")
        );
        let windows = places(Os::Windows);
        assert!(McpClient::ClaudeDesktop.config_file(&windows).starts_with(r"C:\Users\u\AppData\Roaming"));
        assert_eq!(McpClient::Vscode.servers_key(), "servers");
        assert_eq!(McpClient::Cursor.servers_key(), "mcpServers");
        assert_eq!(places(Os::Windows).binary_name(), "tabtunnel.exe");
        assert_eq!(places(Os::Linux).default_bin_dir(), Path::new("/home/u/.local/bin"));
    }

    #[test]
    fn entries_name_the_binary_by_its_absolute_path() {
        let entry = McpClient::Vscode.entry(Path::new("/home/u/.local/bin/tabtunnel"));
        assert_eq!(entry["type"], "stdio");
        assert_eq!(entry["command"], "/home/u/.local/bin/tabtunnel");
        assert_eq!(entry["args"], serde_json::json!(["mcp"]));
        assert_eq!(McpClient::ClaudeCode.entry(Path::new("/t"))["type"], "stdio");
        assert!(McpClient::Cursor.entry(Path::new("/t")).get("type").is_none());
    }
}
