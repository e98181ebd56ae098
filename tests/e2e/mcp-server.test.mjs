// `tabtunnel mcp`: the official TypeScript MCP SDK client starts it over stdio; it runs the
// pinned child tool server (installed by `tabtunnel mcp --install`, which ./dev test runs)
// against the harness's daemon, at the agent's own endpoint, forwards the child's tools
// unchanged and adds its own. The agents work on the harness's site that needs a login, which
// the human made once in the browser's profile.

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { RawCdp, daemonBinary, pollFor, sleep, startHarness, tryWebSocket, withTimeout } from './harness.mjs';
import { startMcpServer, textOf } from './mcp.mjs';

const OWN_TOOLS = ['tabtunnel_status', 'tabtunnel_tabs', 'tabtunnel_request_tab'];
const APP_TITLE = 'tabtunnel app';
/** evaluate_script would otherwise wait for the app page's DOM to settle, which its animation
 *  counters never let it do (each call then waits out chrome-devtools-mcp's bound). */
const NO_WAIT = { waitForStableDom: false };

/** The harness's site that needs a login: the human signs in once, in their own tab. */
async function signedInSite(h) {
  return { appUrl: await h.loginAsHuman() };
}


/**
 * Starts `tabtunnel mcp ...args` as the SDK client's stdio server, in a scratch directory (the
 * MCP client's project directory, where @playwright/mcp writes its output files).
 */
async function startTabtunnelMcp(h, name, args) {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'tabtunnel-mcp-cwd-'));
  const mcp = await startMcpServer(h, {
    name,
    command: daemonBinary(),
    args: ['mcp', ...args],
    env: { TABTUNNEL_LOG: 'info' },
    cwd,
  });
  const close = mcp.close;
  mcp.close = async () => {
    await close();
    fs.rmSync(cwd, { recursive: true, force: true });
  };
  return mcp;
}

/**
 * The raw JSON-RPC messages `mcp` receives from now on (the SDK client's own parsing drops
 * fields its schema does not know, which is exactly what must be seen to pass through).
 */
function recordRaw(mcp) {
  const seen = [];
  const deliver = mcp.transport.onmessage;
  mcp.transport.onmessage = (message, extra) => {
    seen.push(message);
    deliver?.(message, extra);
  };
  return seen;
}

async function listAllTools(mcp) {
  const tools = [];
  let cursor;
  do {
    const page = await mcp.client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/** The pids of `pid`'s child processes (Linux /proc). */
function childPids(pid) {
  const pids = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces, so read after its closing paren.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) pids.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return pids;
}

const isAlive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Kills the child tool server of `mcp` (SIGKILL) and waits until it is gone. */
async function killChild(mcp) {
  const [child] = await pollFor(() => {
    const pids = childPids(mcp.transport.pid);
    return pids.length === 1 ? pids : null;
  }, 10_000, 'the one child tool server of tabtunnel mcp', mcp.detail);
  process.kill(child, 'SIGKILL');
  await pollFor(() => !isAlive(child), 10_000, `child ${child} to die`, mcp.detail);
  return child;
}

/** The `[ref=...]` or `uid=...` of the first snapshot line matching `pattern`. */
function idOf(snapshot, pattern, idPattern) {
  const line = snapshot.split('\n').find((l) => pattern.test(l));
  const m = line && idPattern.exec(line);
  assert.ok(m, `no id for ${pattern} in:\n${snapshot}`);
  return m[1];
}

/** The page id chrome-devtools-mcp's `list_pages` gives `url`. */
function pageIdOf(pages, url) {
  return Number(idOf(pages, new RegExp(url.replaceAll('.', '\\.').replaceAll('?', '\\?')), /^\s*(\d+):/));
}

describe('tabtunnel mcp (chrome-devtools-mcp child) as agent A', { timeout: 300_000 }, () => {
  let h;
  let site;
  let mcp;
  let pageId;

  before(async () => {
    h = await startHarness({ name: 'mcp-server', share: false });
    site = await signedInSite(h);
    mcp = await startTabtunnelMcp(h, 'tabtunnel mcp', ['--agent', 'A', '--endpoint', h.clientEndpoint]);
  });

  after(async () => {
    await mcp?.close();
    await h?.close();
  });

  test("tools/list has the child's tools unchanged plus tabtunnel's own", async () => {
    const raw = recordRaw(mcp);
    const tools = await listAllTools(mcp);
    const names = tools.map((t) => t.name);
    for (const name of [...OWN_TOOLS, 'list_pages', 'take_snapshot', 'fill', 'click', 'evaluate_script', 'take_screenshot', 'new_page', 'close_page', 'get_css_styles']) {
      assert.ok(names.includes(name), `tools/list lacks ${name}: ${names.join(', ')}`);
    }
    assert.equal(new Set(names).size, names.length, `duplicate tool names: ${names.join(', ')}`);
    // chrome-devtools-mcp's own, non-standard annotation fields pass through.
    const rawTools = raw.filter((m) => m.result?.tools).flatMap((m) => m.result.tools);
    const snapshotTool = rawTools.find((t) => t.name === 'take_snapshot');
    assert.deepEqual(snapshotTool?.annotations, { category: 'debugging', readOnlyHint: false }, JSON.stringify(snapshotTool));
    assert.equal(snapshotTool.inputSchema.$schema, 'https://json-schema.org/draft/2020-12/schema');
    const status = tools.find((t) => t.name === 'tabtunnel_status');
    assert.equal(status.annotations?.readOnlyHint, true);
  });

  test('new_page, list_pages, take_snapshot, fill, click, evaluate_script, take_screenshot on a page that needs the login', async () => {
    await mcp.call('new_page', { url: site.appUrl });
    const pages = await mcp.call('list_pages');
    assert.ok(pages.includes(site.appUrl), `list_pages does not show ${site.appUrl}:\n${pages}`);
    assert.ok(!pages.includes(h.pageUrl), `agent A lists the human's own tab:\n${pages}`);
    pageId = pageIdOf(pages, site.appUrl);
    const snapshot = await mcp.call('take_snapshot', { pageId });
    assert.match(snapshot, /"Signed in as "\s+uid=\S+ "human"/, `the agent's tab does not have the human's login:\n${snapshot}`);
    await mcp.call('fill', { pageId, uid: idOf(snapshot, /textbox "Note"/, /uid=(\S+)/), value: 'Ada' });
    await mcp.call('click', { pageId, uid: idOf(snapshot, /button "Save"/, /uid=(\S+)/) });
    const out = await mcp.call('evaluate_script', { pageId, function: "() => document.querySelector('#echo').textContent" });
    assert.ok(out.includes('Ada'), `the note was not saved:\n${out}`);
    const shot = await mcp.callRaw('take_screenshot', { pageId });
    const image = shot.content.find((c) => c.type === 'image');
    assert.ok(image, `no image in ${JSON.stringify(shot).slice(0, 300)}`);
    assert.equal(image.mimeType, 'image/png');
    const png = Buffer.from(image.data, 'base64');
    assert.equal(png.subarray(1, 4).toString('ascii'), 'PNG');
    assert.ok(png.length > 2_000, `screenshot is only ${png.length} bytes`);
  });

  test(`get_css_styles works on Node ${process.versions.node} (patched child)`, async () => {
    const snapshot = await mcp.call('take_snapshot', { pageId });
    const text = await mcp.call('get_css_styles', { pageId, uid: idOf(snapshot, /button "Save"/, /uid=(\S+)/) });
    assert.doesNotMatch(text, /is not a function/, text);
    assert.match(text, /font|display|color/i, `no styles in:\n${text}`);
  });

  test('tabtunnel_status and tabtunnel_tabs show agent A, its tab, and never start a child', async () => {
    const status = JSON.parse(await mcp.call('tabtunnel_status'));
    assert.equal(status.agent, 'A');
    assert.equal(status.daemon.extensionConnected, true, JSON.stringify(status));
    assert.equal(status.toolServer.package, 'chrome-devtools-mcp');
    assert.equal(status.toolServer.running, 'chrome_devtools 1.11.0');
    assert.ok(!JSON.stringify(status).includes(h.token), 'tabtunnel_status shows the token');
    assert.equal(status.toolServer.starts, 1);
    const tabs = await mcp.call('tabtunnel_tabs');
    assert.ok(tabs.includes(site.appUrl), tabs);
    assert.ok(!tabs.includes(h.pageUrl), tabs);
  });

  test('killing the child mid-session: the next calls succeed after one restart, none lost or run twice', async () => {
    const bump = () =>
      mcp.call('evaluate_script', { pageId, function: '() => (window.__mcpCalls = (window.__mcpCalls ?? 0) + 1)', ...NO_WAIT });
    const counts = [];
    for (let i = 0; i < 3; i++) counts.push(await bump());
    const killed = await killChild(mcp);
    // tools/list and tabtunnel's own tools do not restart it.
    const names = (await listAllTools(mcp)).map((t) => t.name);
    assert.ok(names.includes('evaluate_script'), 'tools/list answered from the last list');
    assert.equal(JSON.parse(await mcp.call('tabtunnel_status')).toolServer.running, null);
    for (let i = 0; i < 3; i++) counts.push(await bump());
    // Several at once after a second kill: they share one restart.
    await killChild(mcp);
    counts.push(...(await Promise.all([bump(), bump(), bump()])));
    const numbers = counts.map((text) => Number(/(\d+)\D*$/.exec(text)?.[1]));
    assert.deepEqual(
      numbers.slice(0, 6),
      [1, 2, 3, 4, 5, 6],
      `the page counter shows a lost or repeated call: ${JSON.stringify(counts)}`,
    );
    assert.deepEqual(numbers.slice(6).sort(), [7, 8, 9], `concurrent calls after a restart: ${JSON.stringify(counts)}`);
    const status = JSON.parse(await mcp.call('tabtunnel_status'));
    assert.equal(status.toolServer.starts, 3, `one restart per kill: ${JSON.stringify(status)}`);
    assert.ok(!childPids(mcp.transport.pid).includes(killed));
    const final = await mcp.call('evaluate_script', { pageId, function: '() => window.__mcpCalls', ...NO_WAIT });
    assert.match(final, /\b9\b/, `the page ran ${final} calls, not 9`);
  });

  test('close_page closes the agent\'s tab', async () => {
    // chrome-devtools-mcp keeps one page open: open a second to close the first.
    await mcp.call('new_page', { url: 'about:blank' });
    const pages = await mcp.call('close_page', { pageId });
    assert.ok(!pages.includes(site.appUrl), `the closed page is still listed:\n${pages}`);
    const tabs = await mcp.call('tabtunnel_tabs');
    assert.ok(!tabs.includes(site.appUrl), tabs);
  });
});

describe('tabtunnel mcp --tools playwright as agent P', { timeout: 300_000 }, () => {
  let h;
  let site;
  let mcp;

  before(async () => {
    h = await startHarness({ name: 'mcp-server-pw', share: false });
    site = await signedInSite(h);
    mcp = await startTabtunnelMcp(h, 'tabtunnel mcp --tools playwright', [
      '--agent', 'P', '--endpoint', h.clientEndpoint, '--tools', 'playwright',
    ]);
  });

  after(async () => {
    await mcp?.close();
    await h?.close();
  });

  test("tools/list has @playwright/mcp's tools plus tabtunnel's own", async () => {
    const names = (await listAllTools(mcp)).map((t) => t.name);
    for (const name of [...OWN_TOOLS, 'browser_navigate', 'browser_snapshot', 'browser_click', 'browser_type', 'browser_evaluate', 'browser_take_screenshot', 'browser_tabs', 'browser_close']) {
      assert.ok(names.includes(name), `tools/list lacks ${name}: ${names.join(', ')}`);
    }
  });

  test('browser_navigate, browser_snapshot, browser_type, browser_click, browser_evaluate, browser_take_screenshot, browser_tabs', async () => {
    await mcp.call('browser_navigate', { url: site.appUrl });
    const snapshot = await mcp.call('browser_snapshot');
    assert.match(snapshot, /Signed in as human/, `the agent's tab does not have the human's login:\n${snapshot}`);
    const ref = (pattern) => idOf(snapshot, pattern, /\[ref=([^\]]+)\]/);
    await mcp.call('browser_type', { element: 'Note textbox', target: ref(/textbox "Note"/), text: 'Grace' });
    await mcp.call('browser_click', { element: 'Save button', target: ref(/button "Save"/) });
    const out = await mcp.call('browser_evaluate', { function: "() => document.querySelector('#echo').textContent" });
    assert.ok(out.includes('Grace'), `the note was not saved:\n${out}`);
    const shot = await mcp.callRaw('browser_take_screenshot', {});
    const image = shot.content.find((c) => c.type === 'image');
    assert.ok(image, `no image in ${JSON.stringify(shot).slice(0, 300)}`);
    assert.ok(Buffer.from(image.data, 'base64').length > 2_000);
    const tabs = await mcp.call('browser_tabs', { action: 'list' });
    assert.ok(tabs.includes(site.appUrl), tabs);
    assert.ok(!tabs.includes(h.pageUrl), `agent P lists the human's own tab:\n${tabs}`);
  });

  test('killing the child: the next call restarts it once', async () => {
    await killChild(mcp);
    const tabs = await mcp.call('browser_tabs', { action: 'list' });
    assert.ok(tabs.includes(site.appUrl), `the new child does not find agent P's tab:\n${tabs}`);
    const out = await mcp.call('browser_evaluate', { function: '() => document.title' });
    assert.ok(out.includes(APP_TITLE), out);
    assert.equal(JSON.parse(await mcp.call('tabtunnel_status')).toolServer.starts, 2);
  });
});

// Before the agent has a window of its own: headless Chromium reports the newest window as the
// last focused one, which would make the side panel offer the agent's own tab.
describe('tabtunnel_request_tab', { timeout: 300_000 }, () => {
  let h;
  let mcp;

  before(async () => {
    h = await startHarness({ name: 'mcp-handover', share: false });
    mcp = await startTabtunnelMcp(h, 'tabtunnel mcp (agent R)', ['--agent', 'R', '--endpoint', h.clientEndpoint]);
  });

  after(async () => {
    await mcp?.close();
    await h?.close();
  });

  test('the request shows in the side panel, a click hands the tab over', async () => {
    // The human is looking at their form tab.
    await h.sw(async (tabId, windowId) => {
      await chrome.tabs.update(tabId, { active: true });
      await chrome.windows.update(windowId, { focused: true });
      return true;
    }, h.tabId, h.windowId);
    const panel = await h.openPanel();
    const reason = 'to finish the checkout you started';
    const asked = mcp.call('tabtunnel_request_tab', { reason, timeout_seconds: 60 });
    const give = await panel.waitForSelector('#handover-requests li[data-request-id] button[data-answer="give"]', { timeout: 30_000 });
    const shown = await panel.$eval('#handover-requests', (el) => el.textContent);
    assert.ok(shown.includes(reason) && shown.includes('R'), `the side panel shows: ${shown}`);
    await give.click();
    const answer = await asked;
    assert.match(answer, /handed you their tab/, answer);
    assert.ok(answer.includes(h.pageUrl), `not the human's active tab (${h.pageUrl}): ${answer}`);
    const pages = await mcp.call('list_pages');
    assert.ok(pages.includes(h.pageUrl), `agent R does not list the handed tab:\n${pages}`);
    assert.ok((await mcp.call('tabtunnel_tabs')).includes(h.pageUrl));
  });
});

/** The child tool servers (node processes) the daemon `pid` runs for HTTP sessions. */
function daemonToolServers(pid) {
  return childPids(pid).filter((child) => {
    try {
      // The tool servers name their process (`chrome-devtools-mcp`), else node's command line
      // names the install dir.
      const cmdline = fs.readFileSync(`/proc/${child}/cmdline`, 'utf8');
      return cmdline.includes('/mcp-children/') || cmdline.startsWith('chrome-devtools-mcp');
    } catch {
      return false;
    }
  });
}

describe('one stdio agent and one HTTP agent at once', { timeout: 300_000 }, () => {
  let h;
  let site;
  let stdio;
  let web;

  before(async () => {
    h = await startHarness({ name: 'mcp-two', share: false });
    site = await signedInSite(h);
    stdio = await startTabtunnelMcp(h, 'tabtunnel mcp (agent S)', ['--agent', 'S', '--endpoint', h.clientEndpoint]);
  });

  after(async () => {
    await stdio?.close();
    await web?.client.close().catch(() => {});
    await h?.close();
  });

  test('/mcp refuses requests without the token or from a web page', async () => {
    const url = `http://127.0.0.1:${h.port}/mcp`;
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '0' } } });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    assert.equal((await fetch(url, { method: 'POST', headers, body: initialize })).status, 401);
    const foreign = await fetch(`${h.clientEndpoint}/mcp`, { method: 'POST', headers: { ...headers, origin: 'https://evil.example' }, body: initialize });
    assert.equal(foreign.status, 403);
  });

  test('each works in its own tabs over many rounds: no cross-talk, neither lists the other\'s pages', async () => {
    // The token as a Bearer header, the agent in the query.
    web = await startHttpMcpWithBearer(h, 'H');
    const urlOf = (who) => `${site.appUrl}?who=${who}`;
    await stdio.call('new_page', { url: urlOf('S') });
    await web.call('new_page', { url: urlOf('H') });
    const idIn = async (mcp, who) => pageIdOf(await mcp.call('list_pages'), urlOf(who));
    const agents = [
      { name: 'S', mcp: stdio, pageId: await idIn(stdio, 'S'), other: 'H' },
      { name: 'H', mcp: web, pageId: await idIn(web, 'H'), other: 'S' },
    ];
    for (let round = 0; round < 8; round++) {
      await Promise.all(agents.map(async (a) => {
        const value = `${a.name}-${round}`;
        const written = await a.mcp.call('evaluate_script', {
          pageId: a.pageId,
          function: `() => { document.querySelector('#note').value = ${JSON.stringify(value)}; return 'signed in as ' + document.querySelector('#who').textContent; }`,
          ...NO_WAIT,
        });
        assert.match(written, /signed in as human/, `${a.name} lost the login: ${written}`);
        const read = await a.mcp.call('evaluate_script', { pageId: a.pageId, function: "() => [location.search, document.querySelector('#note').value]", ...NO_WAIT });
        assert.ok(read.includes(`?who=${a.name}`) && read.includes(value), `${a.name} round ${round} read ${read}`);
        const pages = await a.mcp.call('list_pages');
        assert.ok(!pages.includes(urlOf(a.other)), `${a.name} lists ${a.other}'s page:\n${pages}`);
        assert.ok(!pages.includes(h.pageUrl), `${a.name} lists the human's tab:\n${pages}`);
      }));
    }
    const status = JSON.parse(await web.call('tabtunnel_status'));
    assert.equal(status.agent, 'H');
  });

  test('DELETE ends the HTTP session and its tool server', async () => {
    await pollFor(() => daemonToolServers(h.daemon.pid).length === 1, 10_000, 'the HTTP session\'s tool server', () =>
      childPids(h.daemon.pid).map((p) => { try { return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').replaceAll('\0', ' ').slice(0, 200); } catch { return p; } }).join('\n'));
    await web.transport.terminateSession();
    await web.client.close();
    web = null;
    await pollFor(() => daemonToolServers(h.daemon.pid).length === 0, 15_000, 'the tool server ending with its session', h.detail);
    // The stdio agent goes on.
    assert.match(await stdio.call('list_pages'), /who=S/);
  });

  test("(5) an HTTP session is its opener's only: another agent's token, or the owner's at another agent path, gets 404 and cannot end it", async () => {
    const minted = await tabtunnelCli(h, 'agent', 'add', 'bob');
    const bob = minted.stdout.trim();
    const alice = await startHttpMcpWithBearer(h, 'A5');
    try {
      const headers = {
        'content-type': 'application/json', accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18', 'mcp-session-id': alice.transport.sessionId,
      };
      const ping = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' });
      const others = [
        ['bob in the path', `http://127.0.0.1:${h.port}/${bob}/mcp`, {}],
        ['bob as Bearer', `http://127.0.0.1:${h.port}/mcp?agent=A5`, { authorization: `Bearer ${bob}` }],
        ['the owner at agent path other', `${h.clientEndpoint}/agent/other/mcp`, {}],
      ];
      for (const [who, url, extra] of others) {
        for (const method of ['POST', 'GET', 'DELETE']) {
          const answer = await fetch(url, { method, headers: { ...headers, ...extra }, body: method === 'POST' ? ping : undefined });
          await answer.body?.cancel();
          assert.equal(answer.status, 404, `${who}: ${method}`);
        }
      }
      assert.equal(JSON.parse(await alice.call('tabtunnel_status')).agent, 'A5', 'the session is still hers');
    } finally {
      await alice.transport.terminateSession().catch(() => {});
      await alice.client.close();
    }
  });

  test('(7) agent add and revoke are in force when they return; add shows the token as TABTUNNEL_TOKEN=, never --token', async () => {
    const minted = await tabtunnelCli(h, 'agent', 'add', 'carol');
    const carol = minted.stdout.trim();
    assert.ok(minted.stderr.includes(`TABTUNNEL_TOKEN=${carol} tabtunnel mcp`), minted.stderr);
    assert.ok(!minted.stderr.includes('--token'), minted.stderr);
    const raw = await RawCdp.open(`ws://127.0.0.1:${h.port}/${carol}/cdp`);
    try {
      assert.ok((await raw.send(1, 'Browser.getVersion')).result, 'the new token works at once');
      await tabtunnelCli(h, 'agent', 'revoke', 'carol');
      const refused = await fetch(`http://127.0.0.1:${h.port}/${carol}/json/version`);
      assert.equal(refused.status, 401, 'refused the moment revoke returned');
      assert.equal((await tryWebSocket(`ws://127.0.0.1:${h.port}/${carol}/cdp`)).opened, false);
      await withTimeout(raw.closed, 10_000, 'the revoked agent\'s socket closing', h.detail);
    } finally {
      raw.close();
    }
  });
});

/** `tabtunnel ...args` against the harness's config dir (so its daemon); { stdout, stderr }. */
function tabtunnelCli(h, ...args) {
  return promisify(execFile)(daemonBinary(), args, { env: { ...process.env, XDG_CONFIG_HOME: h.configHome } });
}

/** Agent `agent` over HTTP with the token as `Authorization: Bearer` (not in the path). */
async function startHttpMcpWithBearer(h, agent) {
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${h.port}/mcp?agent=${agent}`), {
    requestInit: { headers: { authorization: `Bearer ${h.token}` } },
  });
  const client = new Client({ name: 'tabtunnel-e2e-http', version: '0.0.0' });
  await withTimeout(client.connect(transport), 30_000, 'MCP initialize over HTTP', h.detail);
  const call = async (tool, args = {}) => {
    const result = await withTimeout(client.callTool({ name: tool, arguments: args }), 60_000, `HTTP ${tool}`, h.detail);
    assert.ok(!result.isError, `HTTP agent ${agent}: ${tool} failed: ${textOf(result)}\n${h.detail()}`);
    return textOf(result);
  };
  return { client, transport, call };
}

describe("the extension's service worker restarting mid-session", { timeout: 300_000 }, () => {
  let h;
  let site;
  let mcp;

  before(async () => {
    h = await startHarness({ name: 'mcp-worker', share: false });
    site = await signedInSite(h);
    mcp = await startTabtunnelMcp(h, 'tabtunnel mcp (agent W)', ['--agent', 'W', '--endpoint', h.clientEndpoint]);
  });

  after(async () => {
    await mcp?.close();
    await h?.close();
  });

  test('the next calls succeed after one restart; the page counter shows none lost or run twice', async () => {
    await mcp.call('new_page', { url: site.appUrl });
    const pageId = pageIdOf(await mcp.call('list_pages'), site.appUrl);
    const bump = () =>
      mcp.call('evaluate_script', { pageId, function: '() => (window.__mcpCalls = (window.__mcpCalls ?? 0) + 1)', ...NO_WAIT });
    const counts = [await bump(), await bump(), await bump()];
    const statusUrl = `${h.clientEndpoint}/agent/W/tabtunnel/status`;
    const before = await (await fetch(statusUrl)).json();

    // Stop the worker (see `stopWorker`), then wake it with an extension event: a reload of the
    // human's tab.
    const humanTab = h.testPage.target()._targetId;
    await h.stopWorker();
    const raw = await RawCdp.open(h.realBrowserWsEndpoint);
    try {
      await pollFor(async () => !(await (await fetch(statusUrl)).json()).extensionConnected, 15_000, 'the daemon losing the extension', h.detail);
      const attached = await raw.send(2, 'Target.attachToTarget', { targetId: humanTab, flatten: true });
      await raw.send(3, 'Page.reload', {}, attached.result.sessionId);
    } finally {
      raw.close();
    }
    const after = await pollFor(async () => {
      const status = await (await fetch(statusUrl)).json();
      return status.extensionConnected && status.tabs.some((t) => t.url === site.appUrl) ? status : null;
    }, 30_000, "the worker back with agent W's tab", h.detail);
    assert.ok(after.extensionEpoch > before.extensionEpoch, `epoch ${before.extensionEpoch} -> ${after.extensionEpoch}`);

    counts.push(await bump(), await bump(), await bump());
    const numbers = counts.map((text) => Number(/(\d+)\D*$/.exec(text)?.[1]));
    assert.deepEqual(numbers, [1, 2, 3, 4, 5, 6], `the page counter shows a lost or repeated call: ${JSON.stringify(counts)}`);
    assert.equal(JSON.parse(await mcp.call('tabtunnel_status')).toolServer.starts, 2, 'one restart');
  });
});

describe('tabtunnel mcp without a daemon', { timeout: 120_000 }, () => {
  test('browser tools answer how to start one; tools/list still works', async () => {
    const port = await new Promise((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address();
        server.close(() => resolve(port));
      });
    });
    const token = 'ab'.repeat(32);
    const h = { detail: () => '' };
    const mcp = await startTabtunnelMcp(h, 'tabtunnel mcp (no daemon)', ['--endpoint', `http://127.0.0.1:${port}/${token}`]);
    try {
      const names = (await listAllTools(mcp)).map((t) => t.name);
      assert.ok(names.includes('list_pages') && names.includes('tabtunnel_status'), names.join(', '));
      const result = await mcp.client.callTool({ name: 'list_pages', arguments: {} });
      assert.equal(result.isError, true, JSON.stringify(result));
      const text = textOf(result);
      assert.match(text, /tabtunnel launch/, text);
      assert.match(text, /tabtunnel serve/, text);
      assert.ok(!text.includes(token), `the error shows the token: ${text}`);
      // The agent's name came from the SDK client's name, plus a suffix.
      const status = JSON.parse(textOf(await mcp.client.callTool({ name: 'tabtunnel_status', arguments: {} })));
      assert.match(status.agent, /^tabtunnel-e2e-[0-9a-f]{6}$/, JSON.stringify(status));
    } finally {
      await mcp.close();
      await sleep(100);
    }
  });
});

describe("the child's words reach the agent without a secret", { timeout: 120_000 }, () => {
  test("(red team 2) the child's error quoting its endpoint shows no owner token", async () => {
    // A daemon with no extension: the child's /json/version gets 503 and it quotes the URL.
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tabtunnel-scrub-'));
    const readyFile = path.join(tmp, 'ready.json');
    const env = { ...process.env, XDG_CONFIG_HOME: path.join(tmp, 'config'), XDG_DATA_HOME: path.join(tmp, 'data') };
    const daemon = spawn(daemonBinary(), ['serve', '--port', '0', '--ready-file', readyFile], { env, stdio: 'ignore' });
    let mcp;
    try {
      const ready = await pollFor(() => {
        try {
          return JSON.parse(fs.readFileSync(readyFile, 'utf8'));
        } catch {
          return null;
        }
      }, 30_000, 'ready file');
      const token = /\/([0-9a-f]{64})$/.exec(ready.clientEndpoint)[1];
      const h = { detail: () => '' };
      mcp = await startTabtunnelMcp(h, 'tabtunnel mcp (no extension)', ['--endpoint', ready.clientEndpoint]);
      const seen = recordRaw(mcp);
      const result = await mcp.client.callTool({ name: 'list_pages', arguments: {} });
      const everything = JSON.stringify(seen) + JSON.stringify(result);
      assert.match(everything, /json\/version|Chrome|browser/i, everything);
      assert.ok(!everything.includes(token.slice(0, 8)), `the owner token reached the agent: ${everything}`);
    } finally {
      await mcp?.close();
      daemon.kill();
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
