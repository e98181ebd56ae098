// The unmodified chrome-devtools-mcp server (from tests/node_modules), driven over MCP stdio,
// attached to tabtunnel with --wsEndpoint.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { startHarness, withTimeout } from './harness.mjs';

const require = createRequire(import.meta.url);
const MCP_PACKAGE_DIR = path.dirname(require.resolve('chrome-devtools-mcp/package.json'));
const MCP_VERSION = require('chrome-devtools-mcp/package.json').version;
const MCP_BIN = path.join(MCP_PACKAGE_DIR, 'build', 'src', 'bin', 'chrome-devtools-mcp.js');

function textOf(result) {
  return (result.content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

describe(`chrome-devtools-mcp ${MCP_VERSION} through tabtunnel`, { timeout: 240_000 }, () => {
  let h;
  let client;
  let transport;
  let mcpStderr = '';
  const detail = () => `--- chrome-devtools-mcp stderr ---\n${mcpStderr.slice(-6000)}\n${h.detail()}`;

  async function call(name, args = {}) {
    const result = await withTimeout(
      client.callTool({ name, arguments: args }),
      60_000,
      `MCP tool ${name}`,
      detail,
    );
    const text = textOf(result);
    assert.ok(!result.isError, `${name} failed: ${text}\n${detail()}`);
    return text;
  }

  before(async () => {
    assert.equal(MCP_VERSION, '1.11.0', 'tests pin chrome-devtools-mcp 1.11.0');
    h = await startHarness({ name: 'mcp' });
    transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_BIN, '--wsEndpoint', h.wsEndpoint, '--usageStatistics=false', '--no-performance-crux'],
      env: {
        ...process.env,
        // Stay offline and quiet: no usage statistics, no update check, no config discovery.
        CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1',
        CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS: '1',
        CHROME_DEVTOOLS_MCP_NO_CONFIG_DISCOVERY: '1',
      },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (d) => {
      mcpStderr += d.toString();
    });
    client = new Client({ name: 'tabtunnel-e2e', version: '0.0.0' });
    await withTimeout(client.connect(transport), 30_000, 'MCP initialize', detail);
  });

  after(async () => {
    await client?.close().catch(() => {});
    await h?.close();
  });

  let pageId;

  test('list_pages lists the shared page', async () => {
    const text = await call('list_pages');
    assert.ok(text.includes(h.pageUrl), `list_pages does not mention ${h.pageUrl}:\n${text}`);
    assert.ok(!text.includes('sidepanel.html'), `list_pages shows the side panel, which is not shared:\n${text}`);
    // Lines look like "1: <title> (<url>) [selected]".
    const line = text.split('\n').find((l) => l.includes(h.pageUrl));
    const m = /^\s*(\d+):/.exec(line);
    assert.ok(m, `no page id in list_pages line: ${line}`);
    pageId = Number(m[1]);
  });

  test('take_snapshot shows the form controls', async () => {
    assert.ok(pageId !== undefined, 'list_pages gave no page id');
    const text = await call('take_snapshot', { pageId });
    assert.match(text, /textbox "Name"/, `snapshot has no "Name" textbox (the #name input):\n${text}`);
    assert.match(text, /button "Greet"/, `snapshot has no "Greet" button:\n${text}`);
    assert.match(text, /tabtunnel test form/, `snapshot lacks the page heading:\n${text}`);
  });
});
