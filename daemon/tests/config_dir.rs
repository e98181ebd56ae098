//! `--config-dir` moves an instance's data with it (`paths.rs`): `tabtunnel mcp --config-dir`
//! runs the browser tool servers installed in `<config dir>/data`, not the user's. (The daemon's
//! own `/mcp` sessions: `mcp_sessions.rs`.)

mod common;
use common::*;

#[test]
fn mcp_finds_its_tool_servers_in_the_config_dir() {
    let config = tempfile::tempdir().unwrap();
    // Nothing in the user's data dir, and no node or npm to install with.
    let nowhere = config.path().join("nowhere");
    let node = std::env::current_exe().unwrap();
    plant_tool_servers(&config.path().join("data"), &node);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tabtunnel"))
        .args(["mcp", "--install", "--config-dir"])
        .arg(config.path())
        .env("PATH", &nowhere)
        .env("XDG_DATA_HOME", &nowhere)
        .env("HOME", &nowhere)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let installed = tabtunnel::mcp::install::install_dir(&config.path().join("data"));
    assert!(stderr.contains(&installed.display().to_string()), "{stderr}");
}
