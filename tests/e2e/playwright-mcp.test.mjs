// The unmodified @playwright/mcp server (from tests/node_modules), driven over MCP stdio,
// attached to tabtunnel with --cdp-endpoint.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { FORM_TITLE, greetingFor, startHarness } from './harness.mjs';
import { startMcpServer } from './mcp.mjs';

const require = createRequire(import.meta.url);
const MCP_DIR = path.dirname(require.resolve('@playwright/mcp/package.json'));
const MCP_VERSION = require('@playwright/mcp/package.json').version;

/** The `[ref=...]` of the first snapshot line matching `pattern`. */
function refOf(snapshot, pattern) {
  const line = snapshot.split('\n').find((l) => pattern.test(l));
  const m = line && /\[ref=([^\]]+)\]/.exec(line);
  assert.ok(m, `no ref for ${pattern} in:\n${snapshot}`);
  return m[1];
}

describe(`@playwright/mcp ${MCP_VERSION} through tabtunnel`, { timeout: 240_000 }, () => {
  let h;
  let mcp;

  before(async () => {
    assert.equal(MCP_VERSION, '0.0.83', 'tests pin @playwright/mcp 0.0.83');
    h = await startHarness({ name: 'playwright-mcp' });
    mcp = await startMcpServer(h, {
      name: '@playwright/mcp',
      script: path.join(MCP_DIR, 'cli.js'),
      args: ['--cdp-endpoint', h.clientEndpoint, '--output-dir', path.join(h.tmp, 'playwright-mcp')],
    });
  });

  after(async () => {
    await mcp?.close();
    await h?.close();
  });

  test('browser_snapshot, browser_type and browser_click drive the shared tab', async () => {
    const snapshot = await mcp.call('browser_snapshot');
    assert.ok(snapshot.includes(FORM_TITLE), `snapshot is not of the shared page:\n${snapshot}`);
    await mcp.call('browser_type', { element: 'Name textbox', target: refOf(snapshot, /textbox "Name"/), text: 'Linus' });
    const after = await mcp.call('browser_click', { element: 'Greet button', target: refOf(snapshot, /button "Greet"/) });
    const final = after.includes(greetingFor('Linus')) ? after : await mcp.call('browser_snapshot');
    assert.ok(final.includes(greetingFor('Linus')), `the greeting never showed:\n${final}`);
  });

  test('browser_tabs lists only the shared tab', async () => {
    const tabs = await mcp.call('browser_tabs', { action: 'list' });
    assert.ok(tabs.includes(h.pageUrl), `browser_tabs:\n${tabs}`);
    assert.ok(!tabs.includes('sidepanel.html'), `browser_tabs shows the unshared side panel:\n${tabs}`);
  });
});
