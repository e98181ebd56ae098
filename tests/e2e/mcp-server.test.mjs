// `tabtunnel mcp`: the official TypeScript MCP SDK client starts it over stdio; it runs the
// pinned child tool server (installed by `tabtunnel mcp --install`, which ./dev test runs)
// against the harness's daemon, forwards the child's tools unchanged and adds its own.
//
// Until agents are served by the daemon, `tabtunnel mcp` falls back to the plain endpoint
// (it says so on stderr), so the agent here drives the tab the harness shares.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { FORM_TITLE, daemonBinary, greetingFor, pollFor, sleep, startHarness } from './harness.mjs';
import { startMcpServer, textOf } from './mcp.mjs';

const OWN_TOOLS = ['tabtunnel_status', 'tabtunnel_tabs', 'tabtunnel_request_tab'];

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

describe('tabtunnel mcp (chrome-devtools-mcp child)', { timeout: 300_000 }, () => {
  let h;
  let mcp;
  let pageId;

  before(async () => {
    h = await startHarness({ name: 'mcp-server' });
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

  test('list_pages, take_snapshot, fill, click, evaluate_script and take_screenshot drive the page', async () => {
    const pages = await mcp.call('list_pages');
    assert.ok(pages.includes(h.pageUrl), `list_pages does not show ${h.pageUrl}:\n${pages}`);
    pageId = Number(idOf(pages, new RegExp(h.pageUrl.replaceAll('.', '\\.')), /^\s*(\d+):/));
    const snapshot = await mcp.call('take_snapshot', { pageId });
    assert.match(snapshot, new RegExp(FORM_TITLE));
    await mcp.call('fill', { pageId, uid: idOf(snapshot, /textbox "Name"/, /uid=(\S+)/), value: 'Ada' });
    await mcp.call('click', { pageId, uid: idOf(snapshot, /button "Greet"/, /uid=(\S+)/) });
    const out = await mcp.call('evaluate_script', { pageId, function: "() => document.querySelector('#out').textContent" });
    assert.ok(out.includes(greetingFor('Ada')), `no greeting:\n${out}`);
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
    const text = await mcp.call('get_css_styles', { pageId, uid: idOf(snapshot, /button "Greet"/, /uid=(\S+)/) });
    assert.doesNotMatch(text, /is not a function/, text);
    assert.match(text, /font|display|color/i, `no styles in:\n${text}`);
  });

  test("tabtunnel_status names the agent and the child; tabtunnel's tools never start a child", async () => {
    const status = JSON.parse(await mcp.call('tabtunnel_status'));
    assert.equal(status.agent, 'A');
    assert.equal(status.toolServer.package, 'chrome-devtools-mcp');
    assert.equal(status.toolServer.running, 'chrome_devtools 1.11.0');
    assert.ok(!JSON.stringify(status).includes(h.token), 'tabtunnel_status shows the token');
    assert.equal(status.toolServer.starts, 1);
  });

  test('killing the child mid-session: the next calls succeed after one restart, none lost or run twice', async () => {
    const bump = () =>
      mcp.call('evaluate_script', { pageId, function: '() => (window.__mcpCalls = (window.__mcpCalls ?? 0) + 1)' });
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
    const final = await mcp.call('evaluate_script', { pageId, function: '() => window.__mcpCalls' });
    assert.match(final, /\b9\b/, `the page ran ${final} calls, not 9`);
  });
});

describe('tabtunnel mcp --tools playwright', { timeout: 300_000 }, () => {
  let h;
  let mcp;

  before(async () => {
    h = await startHarness({ name: 'mcp-server-pw' });
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
    for (const name of [...OWN_TOOLS, 'browser_snapshot', 'browser_click', 'browser_type', 'browser_evaluate', 'browser_take_screenshot', 'browser_tabs']) {
      assert.ok(names.includes(name), `tools/list lacks ${name}: ${names.join(', ')}`);
    }
  });

  test('browser_snapshot, browser_type, browser_click, browser_evaluate, browser_take_screenshot', async () => {
    const snapshot = await mcp.call('browser_snapshot');
    assert.ok(snapshot.includes(FORM_TITLE), `not the shared page:\n${snapshot}`);
    const ref = (pattern) => idOf(snapshot, pattern, /\[ref=([^\]]+)\]/);
    await mcp.call('browser_type', { element: 'Name textbox', target: ref(/textbox "Name"/), text: 'Grace' });
    await mcp.call('browser_click', { element: 'Greet button', target: ref(/button "Greet"/) });
    const out = await mcp.call('browser_evaluate', { function: "() => document.querySelector('#out').textContent" });
    assert.ok(out.includes(greetingFor('Grace')), `no greeting:\n${out}`);
    const shot = await mcp.callRaw('browser_take_screenshot', {});
    const image = shot.content.find((c) => c.type === 'image');
    assert.ok(image, `no image in ${JSON.stringify(shot).slice(0, 300)}`);
    assert.ok(Buffer.from(image.data, 'base64').length > 2_000);
    const tabs = await mcp.call('browser_tabs', { action: 'list' });
    assert.ok(tabs.includes(h.pageUrl), tabs);
  });

  test('killing the child: the next call restarts it once', async () => {
    await killChild(mcp);
    const out = await mcp.call('browser_evaluate', { function: '() => document.title' });
    assert.ok(out.includes(FORM_TITLE), out);
    assert.equal(JSON.parse(await mcp.call('tabtunnel_status')).toolServer.starts, 2);
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
