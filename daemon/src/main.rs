//! `tabtunnel`: serve a CDP endpoint backed by the user's real Chrome tabs.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use tabtunnel::launch::{self, Headless, ShareStartupTabs};
use tabtunnel::{outbox, paths};
use tabtunnel::{Limits, Running, ServeOptions, DEFAULT_PORT, EXTENSION_ID};

#[derive(Parser)]
#[command(version, about = "A CDP endpoint for AI agents and automation, backed by your real Chrome tabs.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the CDP endpoint and wait for the extension in your own Chrome to connect.
    Serve(ServeArgs),
    /// Serve, and start a local Chromium with the extension loaded and already paired.
    Launch(LaunchArgs),
    /// An MCP server (stdio) for one agent: a browser tool server in your real browser.
    Mcp(tabtunnel::mcp::McpArgs),
    /// Put tabtunnel on PATH, write the extension, register the native host for every browser
    /// found, and (--mcp) add tabtunnel to MCP clients. No root needed.
    Install(tabtunnel::install::InstallArgs),
    /// Take out everything `install` put in (and the daemon's files, unless --keep-data).
    Uninstall(tabtunnel::install::UninstallArgs),
    /// Check each link from an agent to a tab, and say how to fix a broken one.
    Doctor {
        /// The checks as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop this user's running daemon (the next start is on demand).
    Stop {
        #[arg(long, value_name = "DIR")]
        config_dir: Option<PathBuf>,
    },
    /// Chrome's native messaging host (Chrome starts it for the extension; see `install`).
    NativeHost {
        /// The caller's origin, `chrome-extension://<id>/`, and what else Chrome passes.
        #[arg(allow_hyphen_values = true, num_args = 0..)]
        chrome_args: Vec<String>,
        #[arg(long, value_name = "DIR")]
        config_dir: Option<PathBuf>,
    },
    /// Print the owner token (creating it on first use): the human's own clients' credential.
    Token {
        #[arg(long, value_name = "DIR")]
        config_dir: Option<PathBuf>,
    },
    /// Agents' own tokens: each acts as its agent only, with that agent's policy.
    Agent {
        #[command(subcommand)]
        command: AgentCommand,
        #[arg(long, value_name = "DIR", global = true)]
        config_dir: Option<PathBuf>,
    },
    /// Print the audit trail: every step of every agent, with what the policy made of it.
    Audit {
        /// The config dir `serve` was given, if any (the trail is in its `data/audit/`).
        #[arg(long, value_name = "DIR", global = true)]
        config_dir: Option<PathBuf>,
        /// Only this agent's steps.
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// Keep printing new steps as they come.
        #[arg(long)]
        follow: bool,
        /// The stored JSON lines, as they are.
        #[arg(long)]
        json: bool,
        #[command(subcommand)]
        check: Option<AuditCheck>,
    },
}

#[derive(Subcommand)]
enum AuditCheck {
    /// Check the trail's seals: name the first line changed, removed, inserted or moved, and a
    /// cut end. Exits non-zero when the trail is broken.
    Verify,
}

#[derive(Subcommand)]
enum AgentCommand {
    /// Mint a token for a new agent and print it (once: only its hash is kept).
    Add { name: String },
    /// The agents that have a token of their own.
    List,
    /// Revoke an agent's token: it stops working at once and the agent's connections close.
    Revoke { name: String },
}

#[derive(Args)]
struct ServeArgs {
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = DEFAULT_PORT)]
    port: u16,
    /// Accept clients without the token. This is the protection level of Chrome's own
    /// --remote-debugging-port: any local process can drive the shared tabs. Host and Origin
    /// checks stay on.
    #[arg(long)]
    no_token: bool,
    /// Where the token is kept (default: the user's config dir, `tabtunnel/`).
    #[arg(long, value_name = "DIR")]
    config_dir: Option<PathBuf>,
    /// The extension id allowed on the extension socket (default: the id our manifest key fixes).
    #[arg(long, default_value = EXTENSION_ID)]
    extension_id: String,
    /// Write the endpoints as JSON to this file once listening.
    #[arg(long, value_name = "PATH")]
    ready_file: Option<PathBuf>,
    /// Agents served at once (each with a connection or tabs); more are refused.
    #[arg(long, default_value_t = Limits::default().max_agents)]
    max_agents: usize,
    /// Tabs one agent may hold; opening more is refused with a CDP error.
    #[arg(long, default_value_t = Limits::default().max_tabs_per_agent)]
    max_tabs_per_agent: usize,
    /// Seconds an agent's tabs wait for it after its last connection drops; then the tabs it
    /// opened close and the tabs handed to it go back to you.
    #[arg(long, value_name = "SECS", default_value_t = Limits::default().agent_grace_ms as f64 / 1000.0)]
    agent_grace: f64,
    /// A TOML file of per-agent policy: methods denied, allowed or asked, and the origins each
    /// agent's tabs may load (see docs/policy.md). Read again whenever it changes.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// Seconds a command may wait for its tab (a frozen or hung tab) before it gets an error.
    #[arg(long, value_name = "SECS", default_value_t = Limits::default().command_timeout_ms as f64 / 1000.0)]
    command_timeout: f64,
    /// Bytes that may wait for one client (each frame counted with a small overhead) before it
    /// is disconnected (one larger frame alone always fits); Chrome's own endpoint allows the
    /// same. A client that has stopped reading is disconnected before: with more than 1 MiB
    /// waiting, after 30 s without taking anything (plus 1 s per MiB of a frame being written).
    /// All clients together may hold four times this, at least 1 GiB.
    #[arg(long, value_name = "BYTES", default_value_t = outbox::Limits::default().max_bytes)]
    client_outbox_bytes: usize,
    /// The owner token may not name agents (`/agent/<name>`): every agent must use its own token
    /// (`tabtunnel agent add NAME`), so none can pick its name.
    #[arg(long)]
    require_agent_tokens: bool,
    /// Started on demand (by the native messaging host or `tabtunnel mcp`): a busy --port
    /// falls back to a free one, and the daemon exits when idle (--exit-when-idle, default
    /// 300 s).
    #[arg(long)]
    on_demand: bool,
    /// Exit after this many seconds with no extension and no client connected.
    #[arg(long, value_name = "SECS")]
    exit_when_idle: Option<f64>,
    /// Open an agent's tabs only when it asks. By default each connected agent has one blank
    /// tab ready in its window (opened when it connects, closed when it leaves), so that a new
    /// page costs it about what it costs on Chrome's own debugging port.
    #[arg(long)]
    no_prepared_tabs: bool,
}

impl ServeArgs {
    /// How long this daemon may sit idle before it exits, if it exits when idle at all.
    fn idle_exit(&self) -> Result<Option<std::time::Duration>, String> {
        match (self.exit_when_idle, self.on_demand) {
            (Some(secs), _) if secs.is_finite() && secs >= 0.0 => {
                Ok(Some(std::time::Duration::from_secs_f64(secs)))
            }
            (Some(_), _) => Err("--exit-when-idle takes a number of seconds".into()),
            (None, true) => Ok(Some(tabtunnel::on_demand::DEFAULT_IDLE_EXIT)),
            (None, false) => Ok(None),
        }
    }

    fn limits(&self) -> Result<Limits, String> {
        let ms = |secs: f64, what: &str| {
            if secs.is_finite() && secs >= 0.0 {
                Ok((secs * 1000.0).round() as u64)
            } else {
                Err(format!("--{what} takes a number of seconds"))
            }
        };
        Ok(Limits {
            max_agents: self.max_agents.max(1),
            max_tabs_per_agent: self.max_tabs_per_agent.max(1),
            agent_grace_ms: ms(self.agent_grace, "agent-grace")?,
            command_timeout_ms: ms(self.command_timeout, "command-timeout")?.max(1000),
            ..Limits::default()
        })
    }
}

#[derive(Args)]
struct LaunchArgs {
    #[command(flatten)]
    serve: ServeArgs,
    /// The Chromium binary (default: $TABTUNNEL_CHROMIUM, then chromium on PATH).
    #[arg(long, value_name = "PATH")]
    chromium: Option<PathBuf>,
    /// Chromium's profile directory; kept between runs, so logins made there stay.
    #[arg(long, value_name = "DIR")]
    profile: Option<PathBuf>,
    /// The built extension (default: $TABTUNNEL_EXTENSION_DIR, then ./extension).
    #[arg(long, value_name = "DIR")]
    extension_dir: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Headless::Auto)]
    headless: Headless,
    /// Share the tabs Chromium opens with, without the side panel (auto: when headless,
    /// where there is no side panel to click).
    #[arg(long, value_enum, default_value_t = ShareStartupTabs::Auto)]
    share_startup_tabs: ShareStartupTabs,
    /// A page to open at start (repeatable; default about:blank). The extension opens them
    /// once it is loaded.
    #[arg(long = "open", value_name = "URL")]
    urls: Vec<String>,
    /// Extra Chromium arguments, after `--`.
    #[arg(last = true)]
    chromium_args: Vec<String>,
}

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TABTUNNEL_LOG").unwrap_or_else(|_| "info".into()),
        )
        .with_writer(tabtunnel::log::Stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    // Chrome starts a native messaging host as `<path> chrome-extension://<id>/ [...]`: the
    // manifest's path is this binary itself, so no wrapper script is needed.
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let cli = if tabtunnel::native_host::started_by_chrome(&raw) {
        Cli { command: Command::NativeHost { chrome_args: raw, config_dir: None } }
    } else {
        Cli::parse()
    };
    // One thread: the hub is one task that every frame passes through anyway, and with worker
    // threads each frame cost a cross-thread wake-up (futex, eventfd). Measured in `./dev bench`:
    // ~27% less daemon CPU per command and a lower p50 (BENCHMARKS.md). File and process work
    // that blocks goes to `spawn_blocking`.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    match runtime.block_on(run(cli.command)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tabtunnel: {}", tabtunnel::log::redact(&e));
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(command: Command) -> Result<(), String> {
    match command {
        Command::Serve(args) => serve(args).await,
        Command::Launch(args) => launch(args).await,
        Command::Mcp(args) => tabtunnel::mcp::run(args).await,
        Command::Install(args) => tokio::task::spawn_blocking(move || tabtunnel::install::install(args))
            .await
            .map_err(|e| e.to_string())?,
        Command::Uninstall(args) => tokio::task::spawn_blocking(move || tabtunnel::install::uninstall(args))
            .await
            .map_err(|e| e.to_string())?,
        Command::Doctor { json } => tabtunnel::install::doctor::run(json).await,
        Command::Stop { config_dir } => {
            let dir = config_dir.unwrap_or_else(tabtunnel::paths::default_config_dir);
            tabtunnel::on_demand::stop(&dir).await
        }
        Command::NativeHost { chrome_args, config_dir } => {
            let dir = config_dir.unwrap_or_else(tabtunnel::paths::default_config_dir);
            tabtunnel::native_host::run(&chrome_args, dir).await
        }
        Command::Token { config_dir } => {
            let dir = config_dir.unwrap_or_else(tabtunnel::paths::default_config_dir);
            println!("{}", tabtunnel::token::load_or_create(&dir)?);
            Ok(())
        }
        Command::Agent { command, config_dir } => {
            let dir = config_dir.unwrap_or_else(tabtunnel::paths::default_config_dir);
            agent_command(command, &dir).await
        }
        Command::Audit { config_dir, agent, follow, json, check } => {
            let data_dir = tabtunnel::paths::data_dir(config_dir.as_deref());
            let dir = config_dir.unwrap_or_else(tabtunnel::paths::default_config_dir);
            if let Some(AuditCheck::Verify) = check {
                let report = tokio::task::spawn_blocking(move || tabtunnel::audit::verify(&data_dir, &dir))
                    .await
                    .map_err(|e| e.to_string())??;
                println!("{report}");
                return if report.problem.is_some() {
                    Err("the audit trail is broken".into())
                } else {
                    Ok(())
                };
            }
            let redactor = tabtunnel_core::redact::Redactor::new(tabtunnel::token::stored_secrets(&dir));
            tokio::task::spawn_blocking(move || {
                tabtunnel::audit::print(&data_dir, agent.as_deref(), follow, json, &redactor)
            })
            .await
            .map_err(|e| e.to_string())?
        }
    }
}

async fn agent_command(command: AgentCommand, dir: &std::path::Path) -> Result<(), String> {
    use tabtunnel::agent_cli::{self, Told};
    use tabtunnel::credentials;
    match command {
        AgentCommand::Add { name } => {
            let token = agent_cli::add(dir, &name).await?;
            println!("{token}");
            eprintln!("{}", agent_cli::added_message(&name, &token));
        }
        AgentCommand::List => {
            let creds = credentials::load(dir)?;
            if creds.agents().is_empty() {
                eprintln!("no agent has a token of its own yet: `tabtunnel agent add NAME` mints one");
            }
            for agent in creds.agents() {
                let id = agent.sha256.get(..credentials::TOKEN_ID_LEN).unwrap_or_default();
                println!("{}\ttoken {id}\tminted {}", agent.name, agent.created);
            }
        }
        AgentCommand::Revoke { name } => match agent_cli::revoke(dir, &name).await? {
            Told::Daemon { pid, port } => eprintln!(
                "agent {name}'s token is revoked: the daemon (pid {pid}, port {port}) refuses it and has closed its connections"
            ),
            Told::NoDaemon => eprintln!("agent {name}'s token is revoked (no daemon is running for this config dir)"),
        },
    }
    Ok(())
}

async fn start(args: &ServeArgs) -> Result<Running, String> {
    tabtunnel::start(ServeOptions {
        port: args.port,
        require_token: !args.no_token,
        config_dir: args.config_dir.clone().unwrap_or_else(tabtunnel::paths::default_config_dir),
        extension_id: args.extension_id.clone(),
        limits: args.limits()?,
        policy: args.policy.clone(),
        data_dir: tabtunnel::paths::data_dir(args.config_dir.as_deref()),
        client_outbox: outbox::Limits::with_max_bytes(args.client_outbox_bytes),
        require_agent_tokens: args.require_agent_tokens,
        on_demand: args.on_demand,
        prepare_tabs: !args.no_prepared_tabs,
    })
    .await
}

/// The banner. On demand, stdout is `daemon.log`, which holds no secret: the endpoints go
/// through the log's redaction there (daemon.json names them for whoever may read them).
fn announce(running: &Running, on_demand: bool) {
    let shown = |text: String| if on_demand { tabtunnel::log::redact(&text) } else { text };
    println!("tabtunnel {} is listening on 127.0.0.1:{}", env!("CARGO_PKG_VERSION"), running.port);
    println!("  CDP endpoint for clients:   {}", shown(running.client_endpoint()));
    println!("  An agent's own endpoint:    {}/agent/<name>", shown(running.client_endpoint()));
    println!("  WebSocket endpoint:         {}", shown(running.ws_endpoint()));
    println!("  Extension pairing URL:      {}", shown(running.extension_url()));
    if running.token.is_none() {
        println!("  (--no-token: any local process can use the shared tabs)");
    }
}

fn write_ready_file(path: Option<&PathBuf>, info: &serde_json::Value) -> Result<(), String> {
    let Some(path) = path else { return Ok(()) };
    // It names the token: owner-only, and replaced atomically so a reader never sees half.
    tabtunnel::token::write_owner_only(path, info.to_string().as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

async fn serve(args: ServeArgs) -> Result<(), String> {
    let idle_exit = args.idle_exit()?;
    let mut running = start(&args).await?;
    announce(&running, args.on_demand);
    println!("The extension pairs by itself when `tabtunnel install` registered its native host; else paste the pairing URL into its side panel.");
    write_ready_file(args.ready_file.as_ref(), &running.describe())?;
    let hub = running.hub();
    let idle = async move {
        match idle_exit {
            Some(delay) => tabtunnel::on_demand::exit_when_idle(hub, delay).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        result = running.wait() => result.map_err(|e| e.to_string()),
        _ = idle => Ok(()),
        _ = tabtunnel::platform::terminate() => Ok(()),
    }
}

async fn launch(args: LaunchArgs) -> Result<(), String> {
    let chromium = launch::find_chromium(args.chromium.as_deref())?;
    let extension = launch::find_extension_dir(args.extension_dir.as_deref())?;
    let profile =
        args.profile.clone().unwrap_or_else(|| paths::profile_dir(args.serve.config_dir.as_deref()));
    let headless = args.headless.resolve();
    launch::prepare_profile_dir(&profile)?;
    let mut running = start(&args.serve).await?;
    let share_startup_tabs = args.share_startup_tabs.resolve(headless);
    let staged = launch::stage_extension(
        &extension,
        &profile,
        &running.extension_url(),
        share_startup_tabs,
        &args.urls,
    )?;
    // Chromium is chatty on stderr (D-Bus, GPU probes); keep its output out of the terminal.
    let log_path = profile.join("chromium.log");
    let log =
        std::fs::File::create(&log_path).map_err(|e| format!("cannot create {}: {e}", log_path.display()))?;
    let log_err = log.try_clone().map_err(|e| e.to_string())?;
    let mut child = tokio::process::Command::new(&chromium)
        .args(launch::chromium_args(&profile, &staged, headless, &args.chromium_args))
        .stdin(std::process::Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", chromium.display()))?;
    announce(&running, false);
    println!(
        "  Chromium:                   {} ({}, profile {})",
        chromium.display(),
        if headless { "headless" } else { "windowed" },
        profile.display()
    );
    println!("  Chromium log:               {}", log_path.display());
    if share_startup_tabs {
        println!("The tabs Chromium opened with are shared: point a client at the CDP endpoint.");
    } else {
        println!("Share a tab from the tabtunnel side panel, then point a client at the CDP endpoint.");
    }
    let mut info = running.describe();
    info["chromiumPid"] = serde_json::json!(child.id());
    info["profileDir"] = serde_json::json!(profile);
    write_ready_file(args.serve.ready_file.as_ref(), &info)?;
    let outcome = tokio::select! {
        status = child.wait() => match status {
            Ok(status) => { println!("Chromium exited ({status}); stopping."); Ok(()) }
            Err(e) => Err(format!("lost Chromium: {e}")),
        },
        result = running.wait() => result.map_err(|e| e.to_string()),
        _ = tabtunnel::platform::terminate() => Ok(()),
    };
    let _ = child.start_kill();
    let _ = child.wait().await;
    outcome
}
