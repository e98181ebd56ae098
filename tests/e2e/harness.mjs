// Shared end-to-end harness.
//
// One harness = one fresh world:
//   * a localhost HTTP server (port 0) with the test pages,
//   * `tabtunnel launch` (the product: daemon + headless Chromium with the built extension),
//   * a puppeteer-core connection straight to the *real* browser (Chromium's own
//     `--remote-debugging-port`). That connection is the test's hands, not the product under test:
//     it opens the test page, opens the extension's side panel page in a popup window and clicks
//     "share" there, like a user would.
//
// Tests then talk to the product through `h.clientEndpoint` / `h.wsEndpoint` only.
//
// Every wait is bounded; every failure message carries the daemon's recent output.
// `h.close()` always kills Chromium and the daemon and removes the temp dirs.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

import puppeteer from 'puppeteer-core';
import WebSocket from 'ws';

import { throwIfDied, unlessDied, unwatch, waiting, watch } from './watchdog.mjs';

export const EXTENSION_ID = 'jmlcgbpniifikmbmclnhinffofckiihm';
export const EXTENSION_ORIGIN = `chrome-extension://${EXTENSION_ID}`;
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const READY_TIMEOUT_MS = 60_000;
const STEP_TIMEOUT_MS = 30_000;

// ---------------------------------------------------------------------------------------------
// Test pages

export const FORM_TITLE = 'tabtunnel test form';
export const greetingFor = (name) => `Hello, ${name}!`;

const PAGES = {
  '/form.html': `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${FORM_TITLE}</title>
<style>body{font:16px sans-serif;margin:2em;background:#f4f7ff} #out{color:#063;font-weight:bold}</style>
</head>
<body>
  <h1>tabtunnel test form</h1>
  <label for="name">Name</label>
  <input id="name" type="text" autocomplete="off">
  <button id="go" type="button">Greet</button>
  <p id="out"></p>
  <script>
    document.getElementById('go').addEventListener('click', () => {
      const name = document.getElementById('name').value;
      document.getElementById('out').textContent = 'Hello, ' + name + '!';
    });
  </script>
</body>
</html>
`,
  // An out-of-process iframe (localhost is another site than 127.0.0.1) and a dedicated worker:
  // the page's own child sessions.
  '/frames.html': `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tabtunnel frames page</title></head>
<body><h1>frames</h1>
<iframe id="child" src="http://localhost:{PORT}/child.html"></iframe>
<script>window.worker = new Worker('/worker.js');</script>
</body></html>
`,
  '/child.html': `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>child</title></head>
<body><p id="inside">inside the iframe</p></body></html>
`,
  '/three.html': `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tabtunnel three fields</title></head>
<body><h1>three fields</h1>
<label for="f1">Name</label> <input id="f1" autocomplete="off">
<label for="f2">Email</label> <input id="f2" autocomplete="off">
<label for="f3">City</label> <input id="f3" autocomplete="off">
<button id="send" type="button">Send</button></body></html>
`,
  '/worker.js': `self.answer = 42; self.onmessage = (e) => self.postMessage(e.data);`,
  '/other.html': `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tabtunnel other page</title></head>
<body><p id="other">another page, never shared</p></body></html>
`,
  '/popup.html': `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tabtunnel popup opener</title></head>
<body><a id="blank" href="/other.html" target="_blank">open in a new tab</a></body></html>
`,
  '/login': `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head>
<body><form method="post" action="/login">
<label for="user">User</label> <input id="user" name="user" autocomplete="off">
<button id="signin" type="submit">Sign in</button></form></body></html>
`,
};

/** The signed-in app: needs the session cookie the login set (shared by every tab of the profile). */
function appPage(user) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tabtunnel app</title>
<style>body{font:16px sans-serif;margin:2em;background:#fff4e0} #echo{color:#630;font-weight:bold}</style></head>
<body><h1>tabtunnel app</h1><p>Signed in as <span id="who">${user}</span></p>
<label for="note">Note</label> <input id="note" autocomplete="off"> <button id="save" type="button">Save</button>
<p id="echo"></p>
<script>
  document.getElementById('save').addEventListener('click', () => {
    document.getElementById('echo').textContent = document.getElementById('note').value;
  });
  // Whether the page renders and its timers run, counted without touching the document: a
  // document that changes every frame never settles, and chrome-devtools-mcp waits up to 3 s
  // after each action for it to (over Chrome's own port too), which under eight agents on two
  // loaded cores ran its 5 s action timeout out.
  window.frames_ = 0; window.ticks = 0;
  const frame = () => { window.frames_ += 1; requestAnimationFrame(frame); };
  requestAnimationFrame(frame);
  setInterval(() => { window.ticks += 1; }, 50);
</script></body></html>
`;
}

function sessionOf(req) {
  const cookie = req.headers.cookie ?? '';
  return /(?:^|;\s*)session=([A-Za-z0-9_-]+)/.exec(cookie)?.[1] ?? null;
}

/**
 * `extraPages` adds routes for one harness (the benchmark's pages): a path maps to a body like
 * PAGES, or to a `(req, res, url)` handler.
 */
export function startPageServer(extraPages = {}) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    const extra = extraPages[url.pathname];
    if (typeof extra === 'function') {
      extra(req, res, url);
      return;
    }
    if (url.pathname === '/login' && req.method === 'POST') {
      let form = '';
      req.on('data', (c) => (form += c));
      req.on('end', () => {
        const user = (new URLSearchParams(form).get('user') ?? '').replace(/[^A-Za-z0-9_-]/g, '') || 'nobody';
        res.writeHead(302, { location: '/app', 'set-cookie': `session=${user}; Path=/; HttpOnly; SameSite=Lax` });
        res.end();
      });
      return;
    }
    if (url.pathname === '/link.html') {
      // A page with one link, to wherever the query says (for navigations the page starts).
      const href = (url.searchParams.get('href') ?? '/').replace(/[^A-Za-z0-9:/?&=._%-]/g, '');
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>tabtunnel link page</title></head>
<body><p id="here">the link page</p><a id="away" href="${href}">away</a></body></html>`);
      return;
    }
    if (url.pathname === '/app') {
      const user = sessionOf(req);
      if (!user) {
        res.writeHead(302, { location: '/login' });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(appPage(user));
      return;
    }
    const body = (extra ?? PAGES[url.pathname])?.replaceAll('{PORT}', String(server.address().port));
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    const type = url.pathname.endsWith('.js') ? 'text/javascript' : 'text/html; charset=utf-8';
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

// ---------------------------------------------------------------------------------------------
// Small helpers

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A port free right now on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}


/** puppeteer-core `connect({browserURL})` to the harness's tabtunnel endpoint, bounded. */
export function connectPuppeteer(h, what = 'puppeteer.connect through tabtunnel') {
  return withTimeout(
    puppeteer.connect({ browserURL: h.clientEndpoint, defaultViewport: null, protocolTimeout: 30_000 }),
    30_000,
    what,
    h.detail,
  );
}

/** puppeteer-core `connect({browserURL})` as agent `agent` (its own endpoint), bounded. */
export function connectAgent(h, agent, protocolTimeout = 30_000) {
  return withTimeout(
    puppeteer.connect({ browserURL: h.agentEndpoint(agent), defaultViewport: null, protocolTimeout }),
    30_000,
    `puppeteer.connect as agent ${agent}`,
    h.detail,
  );
}

/** Rejects with `what` (plus `detail()` when given) if `promise` has not settled in `ms`, and
 *  at once if a watched process died (`watchdog.mjs`). */
export async function withTimeout(promise, ms, what, detail) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`timed out after ${ms} ms: ${what}${detail ? `\n${detail()}` : ''}`)),
      ms,
    );
  });
  const done = waiting(what);
  try {
    return await unlessDied(Promise.race([promise, timeout]));
  } finally {
    clearTimeout(timer);
    done();
  }
}

/**
 * Removes `dir` and everything below it, trying again for `ms` while something still writes into
 * it (a browser's helper processes outliving it), then leaves it with a warning. Not `rmSync`'s
 * own `maxRetries`: on ENOTEMPTY it removes the children once and then retries only the rmdir,
 * sleeping i * retryDelay with the event loop blocked, so a file written after that pass (a late
 * DevToolsActivePort) failed every try: 50 tries of 200 ms steps were 255 s with no process left.
 * Each try here removes the whole tree again, and waits without blocking.
 */
export async function removeTree(dir, ms = 10_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
      return;
    } catch (e) {
      if (Date.now() > deadline) {
        console.warn(`could not remove ${dir} within ${ms} ms: ${e.message}`);
        return;
      }
      await sleep(200);
    }
  }
}

/** Polls `fn` until it returns a truthy value or `ms` pass; fails at once if a watched process
 *  died (`watchdog.mjs`). */
export async function pollFor(fn, ms, what, detail) {
  const deadline = Date.now() + ms;
  const done = waiting(what);
  try {
    for (;;) {
      throwIfDied();
      const v = await fn();
      if (v) return v;
      if (Date.now() > deadline) {
        throw new Error(`timed out after ${ms} ms: ${what}${detail ? `\n${detail()}` : ''}`);
      }
      await sleep(50);
    }
  } finally {
    done();
  }
}

/**
 * The URLs of the pages in the daemon's /json/list, or null while it answers 503 (no extension
 * connected, so no browser to list).
 */
export async function sharedPageUrls(h) {
  const response = await fetch(`${h.clientEndpoint}/json/list`);
  if (response.status === 503) return null;
  if (response.status !== 200) throw new Error(`/json/list answered ${response.status}: ${await response.text()}`);
  return (await response.json()).map((p) => p.url);
}

function which(cmd) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, cmd);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      /* not here */
    }
  }
  return null;
}

/** The daemon binary. `./dev test` exports TABTUNNEL_BIN; by hand, fall back to the usual places. */
export function daemonBinary() {
  const candidates = [];
  if (process.env.TABTUNNEL_BIN) candidates.push(process.env.TABTUNNEL_BIN);
  else {
    if (process.env.CARGO_TARGET_DIR) {
      candidates.push(path.join(process.env.CARGO_TARGET_DIR, 'release', 'tabtunnel'));
    }
    candidates.push(path.join(os.homedir(), '.cache', 'tabtunnel', 'target', 'release', 'tabtunnel'));
    candidates.push(path.join(REPO_ROOT, 'target', 'release', 'tabtunnel'));
  }
  const found = candidates.find((p) => fs.existsSync(p));
  if (!found) {
    throw new Error(
      `tabtunnel daemon binary not found (looked at: ${candidates.join(', ')}). ` +
        'Build it with `./dev test` (or set TABTUNNEL_BIN).',
    );
  }
  return found;
}

/** Chromium. E2E must fail, not skip, when it is missing. */
export function chromiumBinary() {
  const p = process.env.TABTUNNEL_CHROMIUM || process.env.CHROMIUM || which('chromium') || which('chromium-browser');
  if (!p) {
    throw new Error('Chromium not found on PATH (nor $TABTUNNEL_CHROMIUM). `./dev test` installs it with apt-get.');
  }
  return p;
}

/**
 * A copy of the built extension, in `tmp`, that asks for `permissions` besides its own: a
 * user's browser has other extensions, and one holding `webRequest` changes how Chrome loads a
 * page's requests (a beacon went past the guard every time with it, rarely without).
 */
function extensionWith(permissions, tmp) {
  const dir = path.join(tmp, 'extension');
  fs.cpSync(extensionDir(), dir, { recursive: true });
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  manifest.permissions = [...new Set([...manifest.permissions, ...permissions])];
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return dir;
}

function extensionDir() {
  const dir = process.env.TABTUNNEL_EXTENSION_DIR || path.join(REPO_ROOT, 'extension');
  if (!fs.existsSync(path.join(dir, 'manifest.json')) || !fs.existsSync(path.join(dir, 'pkg'))) {
    throw new Error(
      `built extension not found in ${dir} (needs manifest.json and pkg/). ` +
        'Build it with `cargo run -p xtask --release -- build-extension` (./dev test does).',
    );
  }
  return dir;
}

/**
 * Removes display `n`'s lock and socket if the server that took it is gone. An X server that
 * is killed (SIGKILL, a test process that died) leaves them, and a machine that runs the suite
 * many times would run out of displays (every one of 90-189 was taken by a dead server here).
 */
function removeIfStale(n) {
  const lock = `/tmp/.X${n}-lock`;
  let pid;
  try {
    pid = Number(fs.readFileSync(lock, 'utf8').trim());
  } catch {
    return; // no lock
  }
  try {
    if (pid > 0) process.kill(pid, 0);
    return; // its server lives (or is another user's)
  } catch (e) {
    if (pid > 0 && e.code !== 'ESRCH') return;
  }
  fs.rmSync(lock, { force: true });
  fs.rmSync(`/tmp/.X11-unix/X${n}`, { force: true });
}

/** Stops an Xvfb display: SIGTERM, so that it removes its lock and socket itself. */
async function stopXvfb(display) {
  display.process.kill('SIGTERM');
  const deadline = Date.now() + 3000;
  while (display.process.exitCode === null && display.process.signalCode === null && Date.now() < deadline) await sleep(50);
  if (display.process.exitCode === null && display.process.signalCode === null) display.process.kill('SIGKILL');
  removeIfStale(Number(display.name.slice(1)));
}

/** Starts an Xvfb display on a free number. Fails (never skips) when Xvfb is missing. */
async function startXvfb(h) {
  const xvfb = which('Xvfb');
  if (!xvfb) throw new Error('Xvfb not found on PATH; `./dev test` installs it (apt package xvfb)');
  for (let n = 90; n < 190; n += 1) {
    removeIfStale(n);
    if (fs.existsSync(`/tmp/.X11-unix/X${n}`) || fs.existsSync(`/tmp/.X${n}-lock`)) continue;
    const process_ = spawn(xvfb, [`:${n}`, '-screen', '0', '1600x1000x24', '-nolisten', 'tcp'], { stdio: 'ignore' });
    const ready = await pollFor(
      () => (process_.exitCode !== null ? 'exited' : fs.existsSync(`/tmp/.X11-unix/X${n}`) ? 'ready' : null),
      10_000,
      `Xvfb :${n} to start`,
    ).catch(() => 'timeout');
    if (ready === 'ready') return { name: `:${n}`, process: process_ };
    process_.kill('SIGKILL');
  }
  throw new Error(`no free X display for Xvfb (${h.name})`);
}

// Last resort: if the test process dies without running close(), kill what we started.
const live = new Set();
process.on('exit', () => {
  for (const h of live) h.killNow();
});

// ---------------------------------------------------------------------------------------------
// The harness

/**
 * Starts everything and (unless `share: false`) shares the test page through the side panel.
 * `extensionPermissions` loads a copy of the extension asking for those too (`extensionWith`).
 *
 * Returns an object with:
 *   pageUrl, pageServerUrl            the test page (http://127.0.0.1:P/form.html)
 *   ready                              the daemon's ready file (port, clientEndpoint, wsEndpoint, ...)
 *   port, token, clientEndpoint, wsEndpoint, extensionUrl
 *   browser                            the harness's own puppeteer connection to the real browser
 *   testPage, panel, tabId             harness-side handles
 *   logs()                             the daemon's recent stdout/stderr
 *   close()                            teardown (idempotent)
 */
export async function startHarness({
  share = true,
  name = 'e2e',
  shareStartupTabs = false,
  persistDir,
  port = 0,
  headful = false,
  daemonArgs = [],
  chromiumArgs = [],
  extraPages,
  extensionPermissions = [],
} = {}) {
  const h = new Harness(name, { shareStartupTabs, persistDir, port, headful, daemonArgs, chromiumArgs, extraPages, extensionPermissions });
  live.add(h);
  try {
    await h.start();
    if (share) await h.shareTestPage();
    return h;
  } catch (err) {
    await h.close();
    throw err;
  }
}

class Harness {
  /**
   * `shareStartupTabs`: launch Chromium on the test page with `--share-startup-tabs yes`, as
   * for automation, instead of sharing through the side panel (which then is not opened).
   */
  constructor(name, { shareStartupTabs = false, persistDir, port = 0, headful = false, daemonArgs = [], chromiumArgs = [], extraPages, extensionPermissions = [] } = {}) {
    this.name = name;
    this.extensionPermissions = extensionPermissions;
    this.extraPages = extraPages;
    this.shareStartupTabs = shareStartupTabs;
    this.port = port;
    // Headful Chromium in an Xvfb display of its own: what users see (a background tab renders
    // nothing there, window focus is real), which headless hides.
    this.headful = headful;
    this.daemonArgs = daemonArgs;
    // Extra Chromium flags (after `--`), e.g. host resolver rules for a test suite's domains.
    this.chromiumArgs = chromiumArgs;
    // `persistDir` keeps the browser profile and the daemon's config (token) across harnesses,
    // as a user's machine keeps them across launches.
    this.persistDir = persistDir;
    this.tmp = fs.mkdtempSync(path.join(os.tmpdir(), `tabtunnel-${name}-`));
    this.profileDir = path.join(this.persistDir ?? this.tmp, 'profile');
    this.configHome = path.join(this.persistDir ?? this.tmp, 'config');
    this.dataHome = path.join(this.persistDir ?? this.tmp, 'data');
    this.readyFile = path.join(this.tmp, 'ready.json');
    this.output = '';
    this.daemon = null;
    this.daemonExit = null;
    this.server = null;
    this.browser = null;
    this.closed = false;
    // Their keys among the processes the watchdog watches (`watchdog.mjs`).
    this.chromiumKey = {};
    this.daemonKey = null;
  }

  logs() {
    return this.output.length > 12_000 ? `...${this.output.slice(-12_000)}` : this.output;
  }

  detail = () => `--- tabtunnel output (tail) ---\n${this.logs() || '(none)'}\n--- end ---`;

  /** `http://127.0.0.1:PORT/<token>/agent/<name>`: agent `name`'s own endpoint. */
  agentEndpoint(name) {
    return `${this.clientEndpoint}/agent/${name}`;
  }

  async start() {
    const bin = daemonBinary();
    const chromium = chromiumBinary();
    const extDir = this.extensionPermissions.length ? extensionWith(this.extensionPermissions, this.tmp) : extensionDir();
    if (this.headful) this.display = await startXvfb(this);

    this.server = await startPageServer(this.extraPages);
    this.pageServerUrl = `http://127.0.0.1:${this.server.address().port}`;
    this.pageUrl = `${this.pageServerUrl}/form.html`;

    const args = [
      'launch',
      '--port', String(this.port),
      '--chromium', chromium,
      '--profile', this.profileDir,
      '--extension-dir', extDir,
      '--headless', this.headful ? 'never' : 'always',
      '--ready-file', this.readyFile,
      ...this.daemonArgs,
      ...(this.shareStartupTabs ? ['--share-startup-tabs', 'yes', '--open', this.pageUrl] : ['--share-startup-tabs', 'no']),
      '--',
      '--remote-debugging-port=0',
      ...this.chromiumArgs,
    ];
    // A reused profile still holds the previous browser's debugging port.
    fs.rmSync(path.join(this.profileDir, 'DevToolsActivePort'), { force: true });
    this.spawnDaemon(bin, args);

    // 1. The ready file.
    this.ready = await this.readyFileWritten();
    for (const key of ['port', 'clientEndpoint', 'wsEndpoint', 'extensionUrl']) {
      if (this.ready[key] === undefined) {
        throw new Error(`ready file lacks "${key}": ${JSON.stringify(this.ready)}`);
      }
    }
    this.port = this.ready.port;
    this.clientEndpoint = this.ready.clientEndpoint;
    this.wsEndpoint = this.ready.wsEndpoint;
    this.extensionUrl = this.ready.extensionUrl;
    this.token = new URL(this.clientEndpoint).pathname.split('/').filter(Boolean)[0] ?? null;
    this.chromiumPid = this.ready.chromiumPid ?? null;
    // Chromium gone under a test fails the harness's waits at once, with the log it shares with
    // the daemon (`launch` passes Chromium's output on).
    if (this.chromiumPid) watch(this.chromiumKey, this.chromiumPid, `Chromium (${this.name}, pid ${this.chromiumPid})`, () => this.output);
    if (this.ready.profileDir) this.profileDir = this.ready.profileDir;

    // 2. The real browser's own debugging port (for the harness only).
    const activePort = path.join(this.profileDir, 'DevToolsActivePort');
    const [chromePort, chromePath] = await pollFor(
      () => {
        if (this.exited) throw new Error(`tabtunnel exited (${JSON.stringify(this.exited)})\n${this.detail()}`);
        try {
          const lines = fs.readFileSync(activePort, 'utf8').split('\n');
          return lines.length >= 2 && lines[0] && lines[1] ? lines : null;
        } catch {
          return null;
        }
      },
      STEP_TIMEOUT_MS,
      `Chromium's ${activePort} (is --remote-debugging-port=0 passed through to Chromium?)`,
      this.detail,
    );
    this.realBrowserWsEndpoint = `ws://127.0.0.1:${chromePort}${chromePath}`;
    this.browser = await withTimeout(
      puppeteer.connect({
        browserWSEndpoint: this.realBrowserWsEndpoint,
        defaultViewport: null,
        protocolTimeout: STEP_TIMEOUT_MS,
      }),
      STEP_TIMEOUT_MS,
      'harness puppeteer.connect to the real browser',
      this.detail,
    );

    // 3. The extension's service worker (loaded by `launch`).
    const swTarget = await withTimeout(
      this.browser.waitForTarget(
        (t) => t.type() === 'service_worker' && t.url().startsWith(`${EXTENSION_ORIGIN}/`),
        { timeout: STEP_TIMEOUT_MS },
      ),
      STEP_TIMEOUT_MS + 1000,
      `the extension's service worker (${EXTENSION_ORIGIN})`,
      () => `targets: ${JSON.stringify(this.browser.targets().map((t) => [t.type(), t.url()]))}\n${this.detail()}`,
    );
    this.worker = await swTarget.worker();

    // 4. The test page, in a normal tab, active and focused: the startup tab when Chromium was
    //    launched on it, else a new one.
    if (this.shareStartupTabs) {
      const target = await this.browser.waitForTarget((t) => t.url() === this.pageUrl, { timeout: STEP_TIMEOUT_MS });
      this.testPage = await target.page();
    } else {
      this.testPage = await this.browser.newPage();
      await this.testPage.goto(this.pageUrl, { waitUntil: 'load', timeout: STEP_TIMEOUT_MS });
    }
    const pageUrl = this.pageUrl;
    const tab = await this.sw(async (url) => {
      const tabs = await chrome.tabs.query({});
      const t = tabs.find((x) => x.url === url);
      if (!t) return { missing: JSON.stringify(tabs) };
      await chrome.tabs.update(t.id, { active: true });
      await chrome.windows.update(t.windowId, { focused: true });
      return { id: t.id, windowId: t.windowId };
    }, pageUrl);
    if (tab.missing) throw new Error(`chrome.tabs.query does not list the test page ${pageUrl}, only ${tab.missing}`);
    this.tabId = tab.id;
    this.windowId = tab.windowId;

    // 5. The extension connected to the daemon: a test that starts without sharing (or before
    //    the side panel's first look) must not meet "the extension is not connected" on a busy
    //    machine, where the worker dials in after the page has loaded.
    await pollFor(
      async () => (await fetch(`${this.clientEndpoint}/json/version`)).status === 200,
      STEP_TIMEOUT_MS,
      'the extension connected to the daemon (/json/version answering 200)',
      this.detail,
    );
  }

  /** Signs the human in on the test site, in a tab of their own that is not shared: the session
   *  cookie is then the profile's, as a user's logins are. Leaves that tab on the signed-in app
   *  (`this.humanPage`) and returns the app's URL. */
  async loginAsHuman(user = 'human') {
    const page = await this.browser.newPage();
    this.humanPage = page;
    await page.goto(`${this.pageServerUrl}/login`, { waitUntil: 'load', timeout: STEP_TIMEOUT_MS });
    // A tab born beside a shared one posts no form for its first moments (a shared page's popup
    // looks the same then: extension-core/src/newborn_tabs.rs); a person takes longer to sign in.
    await this.documentsGo(`${this.pageServerUrl}/login`);
    await page.type('#user', user);
    await Promise.all([page.waitForNavigation({ waitUntil: 'load', timeout: STEP_TIMEOUT_MS }), page.click('#signin')]);
    const who = await page.$eval('#who', (el) => el.textContent);
    if (who !== user) throw new Error(`the human's login did not stick: signed in as ${who}`);
    return `${this.pageServerUrl}/app`;
  }

  /** Waits until the extension lets the forms of the tab showing `url` go: no rule refuses the
   *  documents of that tab (`off_tab_writes.rs`, `RULE_IDS[5]`). */
  async documentsGo(url) {
    const documentsRule = 2 ** 31 - 1 - 5;
    await pollFor(() => this.sw(async (u, id) => {
      const [tab] = await chrome.tabs.query({ url: u });
      if (!tab) return false;
      const rule = (await chrome.declarativeNetRequest.getSessionRules()).find((r) => r.id === id);
      return !rule || (rule.condition.excludedTabIds ?? []).includes(tab.id);
    }, url, documentsRule), STEP_TIMEOUT_MS, `the forms of the tab showing ${url} let go`, this.detail);
  }

  /** Makes the tab showing `url` the active tab of a focused window, as the human clicking it;
   *  returns its `{tabId, windowId}` once Chrome had a moment to settle the focus. */
  async focusHumanTab(url) {
    const tab = await this.sw(async (u) => {
      const [t] = await chrome.tabs.query({ url: u });
      await chrome.tabs.update(t.id, { active: true });
      await chrome.windows.update(t.windowId, { focused: true });
      return { tabId: t.id, windowId: t.windowId };
    }, url);
    await sleep(300);
    return tab;
  }

  /**
   * The daemon's `/mcp` children install into its data dir, which is this harness's own (and a
   * `tabtunnel mcp --config-dir <configHome>/tabtunnel` into `<config dir>/data`): point both at
   * the copy `./dev test` installed (`tabtunnel mcp --install`) instead of an `npm ci` per run
   * inside a tool call's time.
   */
  shareInstalledToolServers() {
    const installed = path.join(process.env.XDG_DATA_HOME || path.join(os.homedir(), '.local', 'share'), 'tabtunnel', 'mcp-children');
    if (!fs.existsSync(installed)) return;
    for (const data of [path.join(this.dataHome, 'tabtunnel'), path.join(this.configHome, 'tabtunnel', 'data')]) {
      const mine = path.join(data, 'mcp-children');
      if (fs.existsSync(mine)) continue;
      fs.mkdirSync(data, { recursive: true });
      fs.symlinkSync(installed, mine);
    }
  }

  /** Starts `bin args` as the daemon, in its own process group, collecting its output. */
  spawnDaemon(bin, args) {
    this.commandLine = `${bin} ${args.join(' ')}`;
    this.shareInstalledToolServers();
    this.exited = null;
    this.daemon = spawn(bin, args, {
      // Own process group: teardown kills the daemon and everything it started in one go.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        // Keep the token file, the audit trail (and any other config or data) out of the real
        // home directory.
        XDG_CONFIG_HOME: this.configHome,
        XDG_DATA_HOME: this.dataHome,
        RUST_BACKTRACE: '1',
        ...(this.display ? { DISPLAY: this.display.name } : {}),
      },
    });
    const collect = (chunk) => {
      this.output += chunk.toString();
      if (this.output.length > 200_000) this.output = this.output.slice(-100_000);
    };
    this.daemon.stdout.on('data', collect);
    this.daemon.stderr.on('data', collect);
    this.daemonKey = {};
    watch(this.daemonKey, this.daemon, `tabtunnel ${args[0]} (${this.name})`, () => this.output);
    this.daemonExit = new Promise((resolve) => {
      this.daemon.once('exit', (code, signal) => {
        this.exited = { code, signal };
        resolve(this.exited);
      });
      this.daemon.once('error', (err) => {
        this.output += `\n[harness] spawn error: ${err.message}\n`;
        this.exited = { code: null, signal: null, error: err };
        resolve(this.exited);
      });
    });
  }

  /** The daemon's ready file, once it is written (the daemon listens then). */
  readyFileWritten() {
    return pollFor(
      () => {
        if (this.exited) {
          throw new Error(
            `tabtunnel exited early (${JSON.stringify(this.exited)}) before writing its ready file\n` +
              `command: ${this.commandLine}\n${this.detail()}`,
          );
        }
        try {
          return JSON.parse(fs.readFileSync(this.readyFile, 'utf8'));
        } catch {
          return null; // not there yet, or half written
        }
      },
      READY_TIMEOUT_MS,
      `ready file ${this.readyFile} from \`${this.commandLine}\``,
      this.detail,
    );
  }

  /**
   * A daemon that dies and is started again while the browser keeps running: kills the daemon
   * alone (SIGKILL, since a clean `launch` takes its Chromium down with it) and starts
   * `tabtunnel serve` on the same port with the same config dir (so the same token) and the
   * same `daemonArgs`. Resolves once the new daemon listens; the extension reconnects by itself.
   */
  async restartDaemon() {
    unwatch(this.daemonKey);
    process.kill(this.daemon.pid, 'SIGKILL');
    await withTimeout(this.daemonExit, 5000, 'the killed daemon exiting', this.detail);
    fs.rmSync(this.readyFile, { force: true });
    const args = ['serve', '--port', String(this.port), '--ready-file', this.readyFile, ...this.daemonArgs];
    this.spawnDaemon(daemonBinary(), args);
    this.ready = { ...this.ready, ...(await this.readyFileWritten()) };
    // The browser target id (in wsEndpoint) is new with every daemon.
    this.wsEndpoint = this.ready.wsEndpoint;
  }

  /**
   * Stops the extension's service worker as Chrome does when it idles, through the browser's own
   * debugging port. The harness's puppeteer connection would auto-attach the restarted worker
   * paused, so it leaves first: `h.browser` is null afterwards (use `realBrowserWsEndpoint`).
   */
  async stopWorker() {
    const worker = await this.browser.waitForTarget(
      (t) => t.type() === 'service_worker' && t.url().startsWith(`${EXTENSION_ORIGIN}/`),
    );
    const workerId = worker._targetId;
    await this.browser.disconnect();
    this.browser = null;
    const raw = await RawCdp.open(this.realBrowserWsEndpoint);
    try {
      const closed = await raw.send(1, 'Target.closeTarget', { targetId: workerId });
      if (!closed.result?.success) throw new Error(`could not stop the worker: ${JSON.stringify(closed)}`);
    } finally {
      raw.close();
    }
  }

  /** Evaluates `fn(...args)` in the extension's service worker. */
  async sw(fn, ...args) {
    return withTimeout(this.worker.evaluate(fn, ...args), STEP_TIMEOUT_MS, 'evaluate in the extension service worker', this.detail);
  }

  /**
   * Every tab as the extension sees it (`id status url pending-url`), and every target as the
   * browser's own endpoint does: where a command that goes unanswered waits.
   */
  async tabsNow() {
    const tabs = await this.sw(async () => (await chrome.tabs.query({})).map((t) => `tab ${t.id} ${t.status} ${t.url} ${t.pendingUrl ?? ''}`))
      .catch((why) => [`(the worker did not say: ${why.message})`]);
    const targets = this.browser.targets().map((t) => `target ${t.type()} ${t.url()}`);
    return [...tabs, ...targets];
  }

  /** Opens the side panel page (in a popup window) and waits for the daemon connection. */
  async openPanel() {
    if (this.panel && !this.panel.isClosed()) return this.panel;
    const panelUrl = `${EXTENSION_ORIGIN}/sidepanel.html`;
    await this.sw(
      () => chrome.windows.create({ url: chrome.runtime.getURL('sidepanel.html'), type: 'popup' }).then((w) => w.id),
    );
    const target = await this.browser.waitForTarget((t) => t.url() === panelUrl, { timeout: STEP_TIMEOUT_MS });
    this.panel = (await target.page()) ?? (await target.asPage());
    await this.panel.waitForSelector('#daemon-status', { timeout: STEP_TIMEOUT_MS });
    try {
      await this.panel.waitForSelector('#daemon-status[data-state="connected"]', { timeout: STEP_TIMEOUT_MS });
    } catch (err) {
      const state = await this.panelState();
      throw new Error(`side panel never showed the daemon as connected: ${err.message}\npanel: ${state}\n${this.detail()}`);
    }
    return this.panel;
  }

  async panelState() {
    try {
      return await this.panel.evaluate(() => {
        const q = (s) => document.querySelector(s);
        return JSON.stringify({
          daemonStatus: q('#daemon-status') && { state: q('#daemon-status').dataset.state, text: q('#daemon-status').textContent.trim() },
          shareToggle: q('#share-toggle') && { tabId: q('#share-toggle').dataset.tabId, checked: q('#share-toggle').checked, disabled: q('#share-toggle').disabled },
          sharedTabs: [...document.querySelectorAll('#shared-tabs li')].map((li) => ({ tabId: li.dataset.tabId, text: li.textContent.trim() })),
          clientEndpoint: q('#client-endpoint')?.textContent?.trim(),
        });
      });
    } catch (err) {
      return `(could not read the panel: ${err.message})`;
    }
  }

  /** Shares the test page by clicking `#share-toggle` in the side panel, as a user would. */
  async shareTestPage() {
    const panel = await this.openPanel();
    const toggle = `#share-toggle[data-tab-id="${this.tabId}"]`;
    try {
      await panel.waitForSelector(toggle, { timeout: STEP_TIMEOUT_MS });
    } catch (err) {
      throw new Error(
        `#share-toggle never targeted the test page (tab ${this.tabId}, the active tab of the last focused normal window): ${err.message}\n` +
          `panel: ${await this.panelState()}`,
      );
    }
    if (await panel.$eval(toggle, (el) => el.checked)) {
      throw new Error(`#share-toggle is already checked before sharing: ${await this.panelState()}`);
    }
    await panel.click(toggle);
    try {
      await panel.waitForSelector(`#shared-tabs li[data-tab-id="${this.tabId}"]`, { timeout: STEP_TIMEOUT_MS });
    } catch (err) {
      throw new Error(`the test page (tab ${this.tabId}) never appeared in #shared-tabs: ${err.message}\npanel: ${await this.panelState()}\n${this.detail()}`);
    }
  }

  /** Synchronous last-resort kill (process exit handler). */
  killNow() {
    const kill = (pid, sig) => {
      try {
        process.kill(pid, sig);
      } catch {
        /* already gone */
      }
    };
    if (this.daemon?.pid && !this.exited) kill(-this.daemon.pid, 'SIGKILL');
    if (this.chromiumPid) kill(this.chromiumPid, 'SIGKILL');
    if (this.display) this.display.process.kill('SIGKILL');
  }

  async close() {
    if (this.closed) return;
    this.closed = true;
    // Stopped on purpose from here on.
    unwatch(this.daemonKey);
    unwatch(this.chromiumKey);
    try {
      if (this.browser) {
        await withTimeout(Promise.resolve(this.browser.disconnect()), 5000, 'harness disconnect').catch(() => {});
      }
    } finally {
      const kill = (pid, sig) => {
        try {
          process.kill(pid, sig);
          return true;
        } catch {
          return false;
        }
      };
      // Ask nicely, then insist. The daemon has its own process group (detached), which normally
      // holds Chromium too; Chromium's pid from the ready file is killed explicitly in any case.
      if (this.daemon?.pid && !this.exited) {
        kill(-this.daemon.pid, 'SIGTERM');
        await withTimeout(this.daemonExit, 5000, 'daemon exit').catch(() => {});
        kill(-this.daemon.pid, 'SIGKILL');
        await withTimeout(this.daemonExit, 5000, 'daemon exit after SIGKILL').catch(() => {});
      }
      if (this.chromiumPid) {
        if (kill(this.chromiumPid, 'SIGTERM')) {
          const deadline = Date.now() + 5000;
          while (Date.now() < deadline && kill(this.chromiumPid, 0)) await sleep(50);
          kill(this.chromiumPid, 'SIGKILL');
        }
      }
      if (this.server) {
        this.server.closeAllConnections?.();
        await new Promise((r) => this.server.close(() => r()));
      }
      if (this.display) {
        await stopXvfb(this.display);
        this.display = null;
      }
      live.delete(this);
      await fsp.rm(this.tmp, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }).catch(() => {});
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Raw HTTP / WebSocket helpers for the security tests

/** GET with full control over headers (incl. Host and Origin). Resolves {status, headers, body, json}. */
export function rawGet(port, pathAndQuery, headers = {}) {
  return withTimeout(
    new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port, path: pathAndQuery, method: 'GET', headers, agent: false },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (body += c));
          res.on('end', () => {
            let json;
            try {
              json = JSON.parse(body);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode, headers: res.headers, body, json });
          });
        },
      );
      req.on('error', reject);
      req.end();
    }),
    10_000,
    `GET ${pathAndQuery}`,
  );
}

/** Whether a PNG shows something: its pixel data is not one flat colour. Inflates the image data
 *  and counts distinct byte values (a blank page filters to a handful). */
export function pngHasContent(png) {
  if (png.subarray(1, 4).toString('ascii') !== 'PNG') return false;
  const chunks = [];
  for (let at = 8; at + 8 <= png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.subarray(at + 4, at + 8).toString('ascii');
    if (type === 'IDAT') chunks.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  const data = zlib.inflateSync(Buffer.concat(chunks));
  return new Set(data).size > 24;
}

/**
 * Tries a WebSocket upgrade. Resolves {opened: true, ws} or {opened: false, status, error}.
 * `headers` may carry Origin, Host, Authorization.
 */
export function tryWebSocket(url, headers = {}) {
  return withTimeout(
    new Promise((resolve) => {
      const ws = new WebSocket(url, { headers, perMessageDeflate: false, handshakeTimeout: 10_000 });
      ws.once('open', () => resolve({ opened: true, ws }));
      ws.once('unexpected-response', (_req, res) => {
        resolve({ opened: false, status: res.statusCode });
        res.resume();
        ws.terminate();
      });
      ws.once('error', (err) => resolve({ opened: false, status: null, error: err.message }));
    }),
    15_000,
    `WebSocket upgrade to ${url}`,
  );
}

/** A raw CDP connection over `ws`: send frames, await replies by id, with bounded waits. */
export class RawCdp {
  static async open(url, headers = {}) {
    const r = await tryWebSocket(url, headers);
    if (!r.opened) throw new Error(`CDP WebSocket ${url} refused: status ${r.status} ${r.error ?? ''}`);
    return new RawCdp(r.ws);
  }

  constructor(ws) {
    this.ws = ws;
    this.messages = [];
    this.waiters = [];
    this.discarded = [];
    ws.on('message', (data) => {
      let msg;
      try {
        msg = JSON.parse(data.toString());
      } catch {
        msg = { unparseable: data.toString() };
      }
      const d = this.discarded.find((x) => x.pred(msg));
      if (d) {
        d.count += 1;
        return;
      }
      const w = this.waiters.find((x) => x.pred(msg));
      if (w) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(msg);
      } else {
        this.messages.push(msg);
      }
    });
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  /** The next message (already received or future) matching `pred`; consumes it. */
  next(pred, what = 'a CDP message', ms = 10_000) {
    const i = this.messages.findIndex(pred);
    if (i >= 0) return Promise.resolve(this.messages.splice(i, 1)[0]);
    let waiter;
    const p = new Promise((resolve) => {
      waiter = { pred, resolve };
      this.waiters.push(waiter);
    });
    return withTimeout(p, ms, what, () => `unclaimed messages: ${JSON.stringify(this.messages).slice(0, 2000)}`).finally(() => {
      const j = this.waiters.indexOf(waiter);
      if (j >= 0) this.waiters.splice(j, 1);
    });
  }

  /** From now on, messages matching `pred` are only counted (in the returned `{count}`), not kept. */
  discard(pred) {
    const counter = { pred, count: 0 };
    this.discarded.push(counter);
    return counter;
  }

  sendRaw(text) {
    this.ws.send(text);
  }

  async send(id, method, params = {}, sessionId) {
    const msg = { id, method, params };
    if (sessionId) msg.sessionId = sessionId;
    this.ws.send(JSON.stringify(msg));
    return this.next((m) => m.id === id, `reply to ${method} (id ${id})`);
  }

  close() {
    this.ws.terminate();
  }
}
