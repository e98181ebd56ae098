// Install once, then nothing to start, paste or keep open. In a fresh HOME with no tabtunnel on
// PATH: `tabtunnel install --mcp all` (twice: the second changes nothing), then Chromium with the
// installed extension and no daemon: the extension starts the daemon through the native host,
// and the official MCP SDK client starts `tabtunnel mcp` (no flags) from PATH and drives a site
// that needs a login. The daemon is killed mid-session and comes back by itself; `tabtunnel
// doctor` names each broken link; the daemon started on demand exits when idle; `tabtunnel
// uninstall` leaves no file of ours. Cursor's file is owner-only and Claude Desktop's a symlink
// into a dotfiles dir: both stay so. A stale daemon.json naming another user's listener and a
// pid that is not a daemon: doctor, stop, `tabtunnel mcp` and the native host send the listener
// no secret and signal nothing. In a second HOME: a read-only file is refused and left as it is,
// and uninstall leaves a binary and an entry install did not write.

import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import puppeteer from 'puppeteer-core';

import { EXTENSION_ORIGIN, REPO_ROOT, chromiumBinary, daemonBinary, freePort, pollFor, removeTree, startPageServer, withTimeout } from './harness.mjs';
import { unwatch, watch } from './watchdog.mjs';
import { startImpostor } from './impostor.mjs';
import { startMcpServer } from './mcp.mjs';

const NO_WAIT = { waitForStableDom: false };

/** The page id chrome-devtools-mcp's `list_pages` gives the app page (`N: <url>`). */
async function appPageId(mcp) {
  const pages = await mcp.call('list_pages');
  const line = pages.split('\n').find((l) => l.includes('/app'));
  const m = line && /^\s*(\d+):/.exec(line);
  assert.ok(m, `no /app page in list_pages:\n${pages}`);
  return Number(m[1]);
}
const IDLE_EXIT_SECS = 6;

/** Every file below `dir` (relative paths), with size and mtime. */
function snapshot(dir) {
  const out = {};
  const walk = (d) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.isFile()) {
        const st = fs.statSync(p);
        out[path.relative(dir, p)] = `${st.size}:${st.mtimeMs}`;
      }
    }
  };
  walk(dir);
  return out;
}

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'tabtunnel-install-home-'));
const binDir = path.join(home, '.local', 'bin');
const configDir = path.join(home, '.config', 'tabtunnel');
const dataDir = path.join(home, '.local', 'share', 'tabtunnel');
const extensionDir = path.join(dataDir, 'extension');
const profile = path.join(home, '.config', 'chromium');
const hostManifest = path.join(profile, 'NativeMessagingHosts', 'dev.tabtunnel.host.json');
// PATH: ours first, then the system's, without any directory holding a tabtunnel.
const systemPath = (process.env.PATH ?? '')
  .split(path.delimiter)
  .filter((d) => d && !fs.existsSync(path.join(d, 'tabtunnel')))
  .join(path.delimiter);
const clientFiles = {
  claudeCode: { file: path.join(home, '.claude.json'), key: 'mcpServers', other: { type: 'stdio', command: 'npx', args: ['-y', 'other-server'], env: { A: '1' } } },
  cursor: { file: path.join(home, '.cursor', 'mcp.json'), key: 'mcpServers', other: { command: 'other-cursor' } },
  vscode: { file: path.join(home, '.config', 'Code', 'User', 'mcp.json'), key: 'servers', other: { type: 'stdio', command: 'other-vscode' } },
  claudeDesktop: { file: path.join(home, '.config', 'Claude', 'claude_desktop_config.json'), key: 'mcpServers', other: { command: 'other-desktop' } },
};

const dotfilesDesktop = path.join(home, 'dotfiles', 'claude_desktop_config.json');
const mode = (file) => fs.statSync(file).mode & 0o777;
const isLink = (file) => fs.lstatSync(file).isSymbolicLink();

let port;
let env;
let pageServer;
let chromium;
let browser;
let chromiumLog = '';
let mcp;

const detail = () => {
  let daemonLog = '';
  try {
    daemonLog = fs.readFileSync(path.join(configDir, 'daemon.log'), 'utf8').slice(-6000);
  } catch {
    /* none yet */
  }
  return `--- daemon.log ---\n${daemonLog}\n--- chromium (tail) ---\n${chromiumLog.slice(-3000)}`;
};

/** Runs the installed (or, before install, the built) tabtunnel in the fresh HOME. */
function tabtunnel(args, { bin = 'tabtunnel', extraEnv = {}, expectFail = false } = {}) {
  const run = spawnSync(bin, args, { env: { ...env, ...extraEnv }, encoding: 'utf8', timeout: 60_000 });
  if (run.error) throw new Error(`tabtunnel ${args.join(' ')}: ${run.error.message} (bound: 60 s)\n${detail()}`);
  const out = `${run.stdout}${run.stderr}`;
  if (!expectFail) assert.equal(run.status, 0, `tabtunnel ${args.join(' ')} failed (${run.status}):\n${out}\n${detail()}`);
  return { status: run.status, out, stdout: run.stdout };
}

/** `tabtunnel args` without blocking this process's event loop (a listener of the test's own
 *  must answer meanwhile); bounded. Resolves to { status, stdout, out }. */
function tabtunnelAsync(args, extraEnv = {}) {
  const run = new Promise((resolve) => {
    execFile('tabtunnel', args, { env: { ...env, ...extraEnv }, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ status: error ? (error.code ?? error.signal) : 0, stdout, out: `${stdout}${stderr}${error?.killed ? '\n(killed after 60 s)' : ''}` }),
    );
  });
  return withTimeout(run, 65_000, `tabtunnel ${args.join(' ')}`, detail);
}

function doctor(extraEnv = {}) {
  return doctorChecks(tabtunnel(['doctor', '--json'], { extraEnv, expectFail: true }));
}

function doctorChecks({ status, stdout, out }) {
  let checks;
  try {
    checks = JSON.parse(stdout);
  } catch (err) {
    throw new Error(`doctor --json printed no JSON (${err.message}):\n${out}`);
  }
  return { status, checks, failing: (link) => checks.filter((c) => c.link === link && !c.ok) };
}

function daemonFile() {
  try {
    return JSON.parse(fs.readFileSync(path.join(configDir, 'daemon.json'), 'utf8'));
  } catch {
    return null;
  }
}

async function daemonStatus() {
  const file = daemonFile();
  if (!file) return null;
  try {
    const res = await fetch(`${file.clientEndpoint}/tabtunnel/status`, { signal: AbortSignal.timeout(2000) });
    return res.ok ? { file, status: await res.json() } : null;
  } catch {
    return null;
  }
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Every Chromium this file started and has not stopped: a test fails at once, with its log,
 *  when one exits under it (the harness's watchdog), and the file's process exit kills what is
 *  left. */
const chromiums = new Set();
const killChromiums = () => {
  for (const c of chromiums) killGroup(c.pid, 'SIGKILL');
};
process.on('exit', killChromiums);
// Its own process group does not hear a terminal's Ctrl-C: pass it on, then die of it.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    killChromiums();
    process.kill(process.pid, signal);
  });
}

function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** `pollFor` with this file's logs; a Chromium the test uses dying fails it at once (the
 *  harness's watchdog watches each, see `startChromium`). */
const poll = (fn, ms, what) => pollFor(fn, ms, what, detail);

/** Headless Chromium on `userDataDir` with the unpacked extension in `extension`, in the
 *  fresh HOME's environment; and the test's puppeteer connection to it (its own port). Chromium
 *  leads its own process group, so that stopping it takes its helper processes too. */
async function startChromium(userDataDir, extension) {
  // The profile's last Chromium left its DevToolsActivePort: a port nobody listens on now.
  fs.rmSync(path.join(userDataDir, 'DevToolsActivePort'), { force: true });
  const process_ = spawn(
    chromiumBinary(),
    [
      `--user-data-dir=${userDataDir}`,
      `--load-extension=${extension}`,
      '--headless=new',
      '--disable-gpu',
      '--no-sandbox',
      '--no-first-run',
      '--no-default-browser-check',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--remote-debugging-port=0',
      'about:blank',
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  chromiums.add(process_);
  process_.stdout.on('data', (d) => (chromiumLog += d));
  process_.stderr.on('data', (d) => (chromiumLog += d));
  watch(process_, process_, `Chromium (pid ${process_.pid})`, detail);
  // Started but not reached: stopped here, or its open pipes keep this file's process alive
  // after its last test (a failed connect left one running for minutes).
  try {
    const [chromePort, chromePath] = await poll(
      () => {
        try {
          const lines = fs.readFileSync(path.join(userDataDir, 'DevToolsActivePort'), 'utf8').split('\n');
          return lines[0] && lines[1] ? lines : null;
        } catch {
          return null;
        }
      },
      30_000,
      'Chromium DevToolsActivePort',
    );
    const connected = await withTimeout(
      puppeteer.connect({ browserWSEndpoint: `ws://127.0.0.1:${chromePort}${chromePath}`, defaultViewport: null, protocolTimeout: 30_000 }),
      30_000,
      "the test's puppeteer connection to Chromium's own port",
      detail,
    );
    return { chromium: process_, browser: connected };
  } catch (e) {
    await stopChromium(process_).catch(() => {});
    throw e;
  }
}

/** Leaves Chromium's own port (bounded: a browser gone mid-close must not hold the test). */
function disconnect(connected) {
  return withTimeout(Promise.resolve(connected?.disconnect()), 5000, "closing the test's puppeteer connection").catch(() => {});
}

/** Stops a Chromium this file started and waits until it and every process of its group have
 *  gone: its helper processes outlived it and wrote into the profile while it was removed.
 *  SIGTERM lets it shut them down; SIGKILL to the group if it has not within 10 s. */
async function stopChromium(process_) {
  chromiums.delete(process_);
  unwatch(process_);
  const exited = () => process_.exitCode !== null || process_.signalCode !== null;
  if (!exited()) {
    const gone = new Promise((r) => process_.once('exit', r));
    process_.kill('SIGTERM');
    const stopped = await withTimeout(gone, 10_000, 'Chromium exit after SIGTERM').then(() => true, () => false);
    if (!stopped) {
      killGroup(process_.pid, 'SIGKILL');
      await withTimeout(gone, 10_000, 'Chromium exit after SIGKILL', detail);
    }
  }
  killGroup(process_.pid, 'SIGKILL');
  await pollFor(() => !groupRuns(process_.pid), 10_000, `Chromium's helper processes (group ${process_.pid}) gone`, detail);
}

/** Whether a process of group `pgid` still runs: a zombie does not (nobody may reap it in a
 *  container); without /proc, whether the group can be signalled. */
function groupRuns(pgid) {
  let pids;
  try {
    pids = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return killGroup(pgid, 0);
  }
  return pids.some((pid) => {
    try {
      // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
      const [state, , pgrp] = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').at(-1).split(' ');
      return Number(pgrp) === pgid && state !== 'Z';
    } catch {
      return false; // gone meanwhile
    }
  });
}

// Every test and hook is bounded: node's timeout names it, and every wait inside names itself.
before(async () => {
  port = await freePort();
  env = {
    ...process.env,
    HOME: home,
    PATH: `${binDir}${path.delimiter}${systemPath}`,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    // The daemon started on demand listens here (its restart too), and exits soon when idle.
    TABTUNNEL_PORT: String(port),
    TABTUNNEL_IDLE_EXIT: String(IDLE_EXIT_SECS),
    TABTUNNEL_LOG: 'info',
  };
  for (const { file, key, other } of Object.values(clientFiles)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ keepMe: [1, 2], [key]: { other } }, null, 2));
  }
  // Owner-only (it may hold another server's token); a dotfiles symlink (relative).
  fs.chmodSync(clientFiles.cursor.file, 0o600);
  fs.mkdirSync(path.dirname(dotfilesDesktop), { recursive: true });
  fs.renameSync(clientFiles.claudeDesktop.file, dotfilesDesktop);
  fs.symlinkSync(path.relative(path.dirname(clientFiles.claudeDesktop.file), dotfilesDesktop), clientFiles.claudeDesktop.file);
  // The browser tool servers `./dev test` installed, rather than an npm ci inside this test.
  const installed = path.join(process.env.XDG_DATA_HOME || path.join(os.homedir(), '.local', 'share'), 'tabtunnel', 'mcp-children');
  assert.ok(fs.existsSync(installed), `no installed tool servers at ${installed} (./dev test runs tabtunnel mcp --install)`);
  fs.mkdirSync(dataDir, { recursive: true });
  fs.symlinkSync(installed, path.join(dataDir, 'mcp-children'));
  pageServer = await startPageServer();
}, { timeout: 60_000 });

after(async () => {
  await withTimeout(Promise.resolve(mcp?.close()), 10_000, 'closing the MCP client').catch(() => {});
  await disconnect(browser);
  for (const c of [...chromiums]) await stopChromium(c);
  const file = daemonFile();
  if (file && alive(file.pid)) process.kill(file.pid, 'SIGKILL');
  pageServer?.close();
  await removeTree(home);
}, { timeout: 60_000 });

test('without the native host, the side panel says what to run', { timeout: 90_000 }, async () => {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tabtunnel-no-host-'));
  const extension = process.env.TABTUNNEL_EXTENSION_DIR || path.join(REPO_ROOT, 'extension');
  const started = await startChromium(userDataDir, extension);
  try {
    const panel = await started.browser.newPage();
    await panel.goto(`${EXTENSION_ORIGIN}/sidepanel.html`, { waitUntil: 'load' });
    const text = await poll(
      () => panel.$eval('#daemon-detail', (el) => el.textContent).catch(() => null).then((t) => (/tabtunnel install/.test(t ?? '') ? t : null)),
      30_000,
      "the side panel's #daemon-detail naming `tabtunnel install`",
    );
    assert.match(text, /native host is not registered/, text);
    assert.equal(await panel.$eval('#daemon-status', (el) => el.dataset.state), 'disconnected');
  } finally {
    await disconnect(started.browser);
    await stopChromium(started.chromium);
    await removeTree(userDataDir);
  }
  assert.equal(daemonFile(), null, 'something started a daemon');
});

test('install --mcp all: tabtunnel on PATH, every client keeps its servers and gains ours, the host registered; twice changes nothing', { timeout: 120_000 }, () => {
  assert.notEqual(spawnSync('sh', ['-c', 'command -v tabtunnel'], { env, timeout: 10_000 }).status, 0, 'tabtunnel is on PATH before install');
  const first = tabtunnel(['install', '--mcp', 'all'], { bin: daemonBinary() });
  const onPath = execFileSync('sh', ['-c', 'command -v tabtunnel'], { env, encoding: 'utf8', timeout: 10_000 }).trim();
  assert.equal(onPath, path.join(binDir, 'tabtunnel'), first.out);
  for (const [name, { file, key, other }] of Object.entries(clientFiles)) {
    const config = JSON.parse(fs.readFileSync(file, 'utf8'));
    assert.deepEqual(config[key].other, other, `${name} lost its other server`);
    assert.deepEqual(config.keepMe, [1, 2], `${name} lost its other keys`);
    assert.equal(config[key].tabtunnel.command, onPath, `${name}: ${JSON.stringify(config)}`);
    assert.deepEqual(config[key].tabtunnel.args, ['mcp']);
    assert.ok(fs.existsSync(`${file}.tabtunnel-backup`), `${name}: no backup`);
  }
  assert.equal(mode(clientFiles.cursor.file), 0o600, 'the owner-only file was widened');
  assert.equal(mode(`${clientFiles.cursor.file}.tabtunnel-backup`), 0o600, 'its backup is wider than it');
  assert.ok(isLink(clientFiles.claudeDesktop.file), 'the symlinked config became a regular file');
  assert.equal(JSON.parse(fs.readFileSync(dotfilesDesktop, 'utf8')).mcpServers.tabtunnel.command, onPath, 'the link target has no entry');
  const manifest = JSON.parse(fs.readFileSync(hostManifest, 'utf8'));
  assert.equal(manifest.name, 'dev.tabtunnel.host');
  assert.equal(manifest.path, onPath);
  assert.deepEqual(manifest.allowed_origins, [`${EXTENSION_ORIGIN}/`]);
  assert.ok(fs.existsSync(path.join(extensionDir, 'manifest.json')) && fs.existsSync(path.join(extensionDir, 'pkg', 'wasm_inline.js')), first.out);
  assert.match(first.out, /Load unpacked/);

  const before = snapshot(home);
  const second = tabtunnel(['install', '--mcp', 'all']);
  assert.match(second.out, /everything was in place already/);
  assert.deepEqual(snapshot(home), before, 'the second install changed files');
});

test('doctor before any browser: the daemon is down (it starts on demand), and tabtunnel not on PATH is named', { timeout: 120_000 }, () => {
  const down = doctor();
  assert.notEqual(down.status, 0);
  assert.equal(down.failing('daemon').length, 1, JSON.stringify(down.checks));
  assert.match(down.failing('daemon')[0].fix, /starts when the extension loads/);
  assert.equal(down.failing('on-path').length, 0);
  assert.equal(down.failing('native-host').length, 0, JSON.stringify(down.checks));
  const run = spawnSync(path.join(binDir, 'tabtunnel'), ['doctor', '--json'], { env: { ...env, PATH: systemPath }, encoding: 'utf8', timeout: 60_000 });
  const offPath = JSON.parse(run.stdout).filter((c) => c.link === 'on-path' && !c.ok);
  assert.equal(offPath.length, 1, run.stdout);
  assert.match(offPath[0].fix, new RegExp(`export PATH="${binDir.replaceAll('.', '\\.')}`));
});

test('Chromium with the installed extension starts the daemon through the native host; tabtunnel mcp from PATH drives a login-protected page, across a daemon killed mid-session', { timeout: 300_000 }, async () => {
  assert.equal(daemonFile(), null, 'a daemon ran before the browser');
  ({ chromium, browser } = await startChromium(profile, extensionDir));

  // No pairing step: the extension asks the native host, which starts the daemon.
  const first = await poll(async () => {
    const s = await daemonStatus();
    return s?.status.extensionConnected ? s : null;
  }, 30_000, 'the daemon started by the native host, with the extension connected');
  assert.equal(first.file.onDemand, true);
  assert.equal(first.file.port, port);
  assert.equal(first.status.extensionVersion, first.status.daemonVersion);

  // The human signs in once, in their own tab.
  const page = await browser.newPage();
  await page.goto(`${pageServer.url ?? `http://127.0.0.1:${pageServer.address().port}`}/login`, { waitUntil: 'load' });
  await page.type('#user', 'human');
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('#signin')]);
  const appUrl = `http://127.0.0.1:${pageServer.address().port}/app`;

  const h = { detail };
  mcp = await startMcpServer(h, { name: 'tabtunnel mcp (from PATH)', command: 'tabtunnel', args: ['mcp'], env });
  await mcp.call('new_page', { url: appUrl });
  const who = await mcp.call('evaluate_script', {
    pageId: await appPageId(mcp),
    function: "() => document.querySelector('#who').textContent",
    ...NO_WAIT,
  });
  assert.match(who, /human/, who);

  // The daemon dies: the extension's next dial asks the native host, which starts it again.
  process.kill(first.file.pid, 'SIGKILL');
  await poll(() => !alive(first.file.pid), 5000, 'the killed daemon gone');
  const second = await poll(async () => {
    const s = await daemonStatus();
    return s && s.file.pid !== first.file.pid && s.status.extensionConnected ? s : null;
  }, 30_000, 'a new daemon with the extension back');
  assert.equal(second.file.port, port);
  const agent = JSON.parse(await mcp.call('tabtunnel_status')).agent;
  await poll(async () => {
    const res = await fetch(`${second.file.clientEndpoint}/agent/${agent}/tabtunnel/status`, { signal: AbortSignal.timeout(5000) });
    return (await res.json()).tabs.some((t) => t.url === appUrl);
  }, 30_000, "the agent's tab back on the new daemon");
  // The agent's next tool call: its tab is still its own, still signed in.
  const again = await mcp.call('evaluate_script', {
    pageId: await appPageId(mcp),
    function: "() => document.querySelector('#who').textContent + ' ' + location.pathname",
    ...NO_WAIT,
  });
  assert.match(again, /human \/app/, again);
  const tabs = await mcp.call('tabtunnel_tabs');
  assert.match(tabs, /\/app/, tabs);
  // The human's own signed-in tab stays theirs: the agent does not see it.
  assert.equal((tabs.match(/\/app/g) ?? []).length, 1, tabs);
});

test('doctor: all links good, then it names a version mismatch, an unregistered host, an extension not connected; the daemon started on demand exits when idle', { timeout: 180_000 }, async () => {
  const good = doctor();
  assert.equal(good.status, 0, JSON.stringify(good.checks, null, 2));

  const manifestPath = path.join(extensionDir, 'manifest.json');
  const original = fs.readFileSync(manifestPath, 'utf8');
  fs.writeFileSync(manifestPath, original.replace(/"version":\s*"[^"]+"/, '"version": "0.0.1"'));
  const mismatch = doctor().failing('extension-files');
  fs.writeFileSync(manifestPath, original);
  assert.equal(mismatch.length, 1);
  assert.match(mismatch[0].detail, /version mismatch/);
  assert.match(mismatch[0].fix, /tabtunnel install/);

  fs.renameSync(hostManifest, `${hostManifest}.away`);
  const unregistered = doctor().failing('native-host');
  fs.renameSync(`${hostManifest}.away`, hostManifest);
  assert.equal(unregistered.length, 1);
  assert.match(unregistered[0].detail, /Chromium: the native host is not registered/);
  assert.match(unregistered[0].fix, /tabtunnel install/);

  await withTimeout(mcp.close(), 10_000, 'closing the MCP client', detail);
  mcp = null;
  await disconnect(browser);
  browser = null;
  await stopChromium(chromium);
  chromium = null;
  const running = daemonFile();
  const gone = await pollFor(() => {
    const d = doctor();
    return d.failing('extension-connected').length === 1 && d.failing('daemon').length === 0 ? d : null;
  }, 5000, 'doctor naming the extension as not connected (the daemon still up)', detail);
  assert.match(gone.failing('extension-connected')[0].fix, /Load unpacked/);
  // Nobody left: it exits after its idle delay.
  await pollFor(() => !alive(running.pid), (IDLE_EXIT_SECS + 10) * 1000, 'the idle daemon exiting by itself', detail);
  const log = fs.readFileSync(path.join(configDir, 'daemon.log'), 'utf8');
  assert.match(log, /no extension and no client/);
  // Its banner went to daemon.log too: the endpoints there hold no secret.
  assert.match(log, /CDP endpoint for clients: +http:\/\/127\.0\.0\.1:\d+\/<secret>/);
  for (const file of ['token', 'extension-secret']) {
    const secret = fs.readFileSync(path.join(configDir, file), 'utf8').trim();
    assert.ok(secret.length >= 16 && !log.includes(secret.slice(0, 12)), `daemon.log holds the ${file}`);
  }
});

test("a stale daemon.json naming another user's listener and a pid not the daemon's: doctor, stop, tabtunnel mcp and the native host send it no secret and signal nothing; the extension reaches our own daemon", { timeout: 300_000 }, async () => {
  // What our last daemon left (the issue: daemon.json stayed after it exited), with its port now
  // another local user's listener and its pid now a process of ours that is not a daemon.
  const secretIn = (file) => {
    try {
      return fs.readFileSync(path.join(configDir, file), 'utf8').trim();
    } catch {
      return null;
    }
  };
  const owner = secretIn('token');
  const pairing = secretIn('extension-secret');
  assert.ok(owner && pairing, 'the owner token and the extension secret from the earlier tests');
  const added = tabtunnel(['agent', 'add', 'stale-probe']).out;
  const agentToken = /tta_[0-9a-f]{64}/.exec(added)?.[0];
  assert.ok(agentToken, added);
  const secrets = () => ({
    'the owner token': owner,
    'the extension (pairing) secret': pairing,
    'the agent token': agentToken,
    'the daemon key': secretIn('daemon-key'),
  });
  const version = tabtunnel(['--version']).stdout.trim().split(/\s+/).pop();
  const startSleeper = () => {
    const s = spawn('sleep', ['600'], { stdio: 'ignore' });
    s.unref(); // a test that fails early must not wait for it
    s.exited = new Promise((r) => s.once('exit', (code, signal) => r(signal ?? `code ${code}`)));
    return s;
  };
  let sleeper = startSleeper();
  const impostor = await startImpostor({ port, pid: sleeper.pid, version });
  const writeStale = () =>
    fs.writeFileSync(
      path.join(configDir, 'daemon.json'),
      JSON.stringify({
        port,
        pid: sleeper.pid,
        version,
        clientEndpoint: `http://127.0.0.1:${port}/${owner}`,
        extensionUrl: `ws://127.0.0.1:${port}/${pairing}/extension`,
        onDemand: true,
      }),
      { mode: 0o600 },
    );

  // Each step meets the stale file; what any of them gave away is collected, so that one run
  // names every route that leaks.
  const problems = [];
  const step = async (name, fn) => {
    const from = impostor.count();
    writeStale();
    try {
      await fn(from);
    } catch (e) {
      problems.push(`${name}: ${e.message}`);
    }
    // A signal is sent before the command returns; the sleeper's exit is seen within a second
    // (and what the listener was sent is read by then).
    const signal = await withTimeout(sleeper.exited, 1000, 'the sleeper exiting').catch(() => null);
    if (impostor.count() === from) problems.push(`${name}: never met the listener (did it read daemon.json?)`);
    const leaks = impostor.leaks(secrets(), from);
    for (const leak of new Set(leaks)) {
      const times = leaks.filter((l) => l === leak).length;
      problems.push(`${name}: the listener heard ${leak}${times > 1 ? ` (${times} times)` : ''}`);
    }
    if (signal) {
      problems.push(`${name}: the process daemon.json named (pid ${sleeper.pid}, not a daemon) got ${signal}`);
      sleeper = startSleeper();
      impostor.setPid(sleeper.pid);
    }
  };
  /** Stops the daemon of ours a step started (one that wrote its own daemon.json). */
  const stopOurs = async () => {
    if (daemonFile() && daemonFile().port !== port) {
      const { status, out } = await tabtunnelAsync(['stop']);
      assert.equal(status, 0, out);
    }
  };

  try {
    await step('tabtunnel doctor', async () => {
      const d = doctorChecks(await tabtunnelAsync(['doctor', '--json']));
      assert.equal(d.failing('daemon').length, 1, `doctor took the listener for our daemon: ${JSON.stringify(d.checks)}`);
    });
    await step('tabtunnel stop', async () => {
      const { out } = await tabtunnelAsync(['stop']);
      assert.doesNotMatch(out, /stopped the tabtunnel daemon/, out);
    });
    await step('tabtunnel mcp (its start and one tool call), as an agent', async () => {
      const agentMcp = await startMcpServer({ detail }, { name: 'tabtunnel mcp as agent stale-probe', command: 'tabtunnel', args: ['mcp'], env: { ...env, TABTUNNEL_TOKEN: agentToken } });
      try {
        const status = JSON.parse(await agentMcp.call('tabtunnel_status'));
        assert.equal(status.agent, 'stale-probe', JSON.stringify(status));
        assert.ok(status.daemon.daemonVersion, `no daemon answered it: ${JSON.stringify(status)}`);
      } finally {
        await withTimeout(agentMcp.close(), 10_000, 'closing tabtunnel mcp').catch(() => {});
      }
      await stopOurs();
    });
    await step('Chromium: the extension asks the native host for its daemon', async (from) => {
      ({ chromium, browser } = await startChromium(profile, extensionDir));
      const reached = await poll(async () => {
        if (impostor.leaks(secrets(), from).length) return 'the listener';
        const file = daemonFile();
        if (!file || file.port === port) return null;
        const s = await daemonStatus();
        return s?.status.extensionConnected ? `our daemon (pid ${s.file.pid}, port ${s.file.port})` : null;
      }, 30_000, 'the extension connected to a daemon of ours (or a secret at the listener)');
      assert.match(reached, /our daemon/);
      assert.notEqual(daemonFile().pid, sleeper.pid);
      const panel = await browser.newPage();
      await panel.goto(`${EXTENSION_ORIGIN}/sidepanel.html`, { waitUntil: 'load' });
      const state = await poll(
        () => panel.$eval('#daemon-status', (el) => el.dataset.state).catch(() => null).then((s) => (s === 'connected' ? s : null)),
        30_000,
        'the side panel showing the daemon connected',
      ).catch(async (e) => {
        const why = await panel.$eval('#daemon-detail', (el) => el.textContent).catch(() => '(no #daemon-detail)');
        throw new Error(`${e.message.split('\n')[0]}; the panel says: ${why}`);
      });
      assert.equal(state, 'connected');
      await panel.close();
    });
  } finally {
    await disconnect(browser);
    browser = null;
    if (chromium) await stopChromium(chromium);
    chromium = null;
    await stopOurs();
    await impostor.close();
    sleeper.kill('SIGKILL');
  }
  assert.deepEqual(problems, [], `with a stale daemon.json:\n${problems.join('\n')}\n${detail()}`);
  // It goes as the daemon ends, just after its port stops answering (which `stop` waits for).
  await poll(() => daemonFile() === null, 5000, 'our stopped daemon taking its daemon.json with it');
});

test('uninstall leaves no file of ours behind', { timeout: 120_000 }, () => {
  const { out } = tabtunnel(['uninstall']);
  const ours = Object.keys(snapshot(home)).filter(
    (f) => /tabtunnel/i.test(f) || f.includes('NativeMessagingHosts') || f.startsWith(path.join('.local', 'bin')),
  );
  assert.deepEqual(ours, [], `left behind:\n${ours.join('\n')}\n${out}`);
  for (const [name, { file, key, other }] of Object.entries(clientFiles)) {
    const config = JSON.parse(fs.readFileSync(file, 'utf8'));
    assert.deepEqual(config[key], { other }, `${name} after uninstall: ${JSON.stringify(config)}`);
    assert.deepEqual(config.keepMe, [1, 2]);
  }
  assert.equal(mode(clientFiles.cursor.file), 0o600);
  assert.ok(isLink(clientFiles.claudeDesktop.file), 'the symlinked config became a regular file');
  assert.notEqual(spawnSync('sh', ['-c', 'command -v tabtunnel'], { env, timeout: 10_000 }).status, 0, 'tabtunnel still on PATH');
});

test('a read-only config is refused and left as it is; uninstall leaves a binary and an entry install did not write', { timeout: 120_000 }, () => {
  const home2 = fs.mkdtempSync(path.join(os.tmpdir(), 'tabtunnel-install-home2-'));
  try {
    const env2 = {
      ...env,
      HOME: home2,
      PATH: systemPath,
      XDG_CONFIG_HOME: path.join(home2, '.config'),
      XDG_DATA_HOME: path.join(home2, '.local', 'share'),
    };
    const run = (args) => {
      const r = spawnSync(daemonBinary(), args, { env: env2, encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, `tabtunnel ${args.join(' ')} failed (${r.status}):\n${r.stdout}${r.stderr}`);
      return `${r.stdout}${r.stderr}`;
    };
    const claude = path.join(home2, '.claude.json');
    const claudeText = JSON.stringify({ mcpServers: { other: { command: 'o' } } });
    fs.writeFileSync(claude, claudeText);
    fs.chmodSync(claude, 0o444);
    const cursor = path.join(home2, '.cursor', 'mcp.json');
    fs.mkdirSync(path.dirname(cursor), { recursive: true });
    fs.writeFileSync(cursor, '{}');
    // The user's own: a tabtunnel in ~/.local/bin and a VS Code entry by our name.
    const usersBinary = path.join(home2, '.local', 'bin', 'tabtunnel');
    fs.mkdirSync(path.dirname(usersBinary), { recursive: true });
    fs.writeFileSync(usersBinary, '#!/bin/sh\necho mine\n', { mode: 0o755 });
    const vscode = path.join(home2, '.config', 'Code', 'User', 'mcp.json');
    const vscodeText = JSON.stringify({ servers: { tabtunnel: { type: 'stdio', command: '/opt/mine/tabtunnel', args: ['mcp'] } } });
    fs.mkdirSync(path.dirname(vscode), { recursive: true });
    fs.writeFileSync(vscode, vscodeText);

    const binDir2 = path.join(home2, 'bin');
    const installed = run(['install', '--bin-dir', binDir2, '--mcp', 'claude-code,cursor']);
    assert.match(installed, new RegExp(`${claude.replaceAll('.', '\\.')} is read-only`), installed);
    assert.equal(fs.readFileSync(claude, 'utf8'), claudeText);
    assert.equal(mode(claude), 0o444);
    assert.ok(!fs.existsSync(`${claude}.tabtunnel-backup`));
    assert.equal(JSON.parse(fs.readFileSync(cursor, 'utf8')).mcpServers.tabtunnel.command, path.join(binDir2, 'tabtunnel'));

    const removed = run(['uninstall']);
    assert.ok(!fs.existsSync(path.join(binDir2, 'tabtunnel')), removed);
    assert.equal(fs.readFileSync(usersBinary, 'utf8'), '#!/bin/sh\necho mine\n', removed);
    assert.match(removed, /left .*\.local\/bin\/tabtunnel: install did not write it/, removed);
    assert.equal(fs.readFileSync(vscode, 'utf8'), vscodeText, removed);
    assert.match(removed, /left the tabtunnel entry in .*Code\/User\/mcp\.json: install did not write it/, removed);
    assert.deepEqual(JSON.parse(fs.readFileSync(cursor, 'utf8')), { mcpServers: {} }, removed);
    assert.equal(fs.readFileSync(claude, 'utf8'), claudeText);
  } finally {
    fs.rmSync(home2, { recursive: true, force: true });
  }
});

test("(red team 5, 7) install replaces neither the user's own tabtunnel program nor their tabtunnel entries; uninstall keeps both", { timeout: 120_000 }, () => {
  const home3 = fs.mkdtempSync(path.join(os.tmpdir(), 'tabtunnel-install-home3-'));
  try {
    const env3 = { ...env, HOME: home3, PATH: systemPath, XDG_CONFIG_HOME: path.join(home3, '.config'), XDG_DATA_HOME: path.join(home3, '.local', 'share') };
    const run = (args) => {
      const r = spawnSync(daemonBinary(), args, { env: env3, encoding: 'utf8', timeout: 60_000 });
      return { status: r.status, out: `${r.stdout}${r.stderr}` };
    };
    const usersBinary = path.join(home3, '.local', 'bin', 'tabtunnel');
    fs.mkdirSync(path.dirname(usersBinary), { recursive: true });
    fs.writeFileSync(usersBinary, '#!/bin/sh\necho users own\n', { mode: 0o755 });
    const desktop = path.join(home3, '.config', 'Claude', 'claude_desktop_config.json');
    const desktopText = JSON.stringify({ mcpServers: { tabtunnel: { command: '/opt/my/tabtunnel', args: ['mcp', '--agent', 'mine'] } } });
    fs.mkdirSync(path.dirname(desktop), { recursive: true });
    fs.writeFileSync(desktop, desktopText);
    const claude = path.join(home3, '.claude.json');
    const claudeText = JSON.stringify({ mcpServers: { tabtunnel: { type: 'stdio', command: usersBinary, args: ['mcp'], env: { TABTUNNEL_TOKEN: `tta_${'0f'.repeat(32)}` } } } });
    fs.writeFileSync(claude, claudeText);
    // A backup by install's name that install did not make.
    const cursor = path.join(home3, '.cursor', 'mcp.json');
    fs.mkdirSync(path.dirname(cursor), { recursive: true });
    fs.writeFileSync(cursor, '{}');
    fs.writeFileSync(`${cursor}.tabtunnel-backup`, 'mine');

    // The user's own program by our name: refused before anything is written.
    const refused = run(['install', '--mcp', 'claude-desktop,claude-code,cursor']);
    assert.notEqual(refused.status, 0, refused.out);
    assert.match(refused.out, /tabtunnel is not a tabtunnel binary install wrote.*--bin-dir/s, refused.out);
    assert.equal(fs.readFileSync(usersBinary, 'utf8'), '#!/bin/sh\necho users own\n');
    assert.ok(!fs.existsSync(path.join(home3, '.local', 'share', 'tabtunnel', 'install.json')), refused.out);

    // Elsewhere: installed, but the user's own entries stay whole (args, env), without backups.
    const installed = run(['install', '--bin-dir', path.join(home3, 'bin'), '--mcp', 'claude-desktop,claude-code,cursor']);
    assert.equal(installed.status, 0, installed.out);
    assert.match(installed.out, /"tabtunnel" entry install did not write/, installed.out);
    assert.equal(fs.readFileSync(desktop, 'utf8'), desktopText);
    assert.equal(fs.readFileSync(claude, 'utf8'), claudeText);
    assert.ok(!fs.existsSync(`${desktop}.tabtunnel-backup`) && !fs.existsSync(`${claude}.tabtunnel-backup`));
    assert.match(installed.out, /mcp\.json\.tabtunnel-backup is there and install did not write it/, installed.out);
    assert.equal(fs.readFileSync(cursor, 'utf8'), '{}');

    const removed = run(['uninstall']);
    assert.equal(removed.status, 0, removed.out);
    assert.equal(fs.readFileSync(desktop, 'utf8'), desktopText, removed.out);
    assert.equal(fs.readFileSync(claude, 'utf8'), claudeText, removed.out);
    assert.equal(fs.readFileSync(usersBinary, 'utf8'), '#!/bin/sh\necho users own\n', removed.out);
    assert.ok(!fs.existsSync(path.join(home3, 'bin', 'tabtunnel')), removed.out);
    assert.equal(fs.readFileSync(`${cursor}.tabtunnel-backup`, 'utf8'), 'mine', removed.out);
  } finally {
    fs.rmSync(home3, { recursive: true, force: true });
  }
});
