// An MCP client for the e2e tests: starts an unmodified MCP server over stdio and calls its tools.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { withTimeout } from './harness.mjs';

export function textOf(result) {
  return (result.content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

/**
 * Starts `node <script> ...args` as an MCP server. `h` is the harness, for failure details.
 * Returns { call(tool, args) → text, callRaw(tool, args) → result, close(), detail() }.
 */
export async function startMcpServer(h, { name, script, args, env = {} }) {
  let stderr = '';
  const detail = () => `--- ${name} stderr ---\n${stderr.slice(-6000)}\n${h.detail()}`;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [script, ...args],
    env: { ...process.env, ...env },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d) => {
    stderr += d.toString();
  });
  const client = new Client({ name: 'tabtunnel-e2e', version: '0.0.0' });
  await withTimeout(client.connect(transport), 30_000, `${name}: MCP initialize`, detail);

  async function callRaw(tool, toolArgs = {}) {
    const result = await withTimeout(client.callTool({ name: tool, arguments: toolArgs }), 60_000, `${name}: tool ${tool}`, detail);
    assert.ok(!result.isError, `${name}: ${tool} failed: ${textOf(result)}\n${detail()}`);
    return result;
  }

  async function call(tool, toolArgs = {}) {
    const result = await callRaw(tool, toolArgs);
    const text = textOf(result);
    assert.ok(!result.isError, `${name}: ${tool} failed: ${text}\n${detail()}`);
    return text;
  }

  return { call, callRaw, detail, close: () => client.close().catch(() => {}) };
}

const require = createRequire(import.meta.url);
export const CHROME_DEVTOOLS_MCP_VERSION = require('chrome-devtools-mcp/package.json').version;
const CHROME_DEVTOOLS_MCP_BIN = path.join(
  path.dirname(require.resolve('chrome-devtools-mcp/package.json')),
  'build',
  'src',
  'bin',
  'chrome-devtools-mcp.js',
);

/** The unmodified chrome-devtools-mcp attached to `endpoint` (an HTTP endpoint for --browserUrl,
 *  or a ws:// one for --wsEndpoint), kept offline and quiet. */
export function startChromeDevtoolsMcp(h, endpoint, name = 'chrome-devtools-mcp') {
  const flag = endpoint.startsWith('ws') ? '--wsEndpoint' : '--browserUrl';
  return startMcpServer(h, {
    name,
    script: CHROME_DEVTOOLS_MCP_BIN,
    args: [flag, endpoint, '--usageStatistics=false', '--no-performance-crux'],
    // No usage statistics, no update check, no config discovery.
    env: {
      CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1',
      CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS: '1',
      CHROME_DEVTOOLS_MCP_NO_CONFIG_DISCOVERY: '1',
    },
  });
}

/** The `uid` of the first snapshot line matching `pattern` (chrome-devtools-mcp's take_snapshot). */
export function uidOf(snapshot, pattern) {
  const line = snapshot.split('\n').find((l) => pattern.test(l));
  const m = line && /uid=(\S+)/.exec(line);
  assert.ok(m, `no uid for ${pattern} in:\n${snapshot}`);
  return m[1];
}

/** chrome-devtools-mcp's list_pages as [{id, url, selected}]. */
export function pagesOf(listing) {
  return listing
    .split('\n')
    .map((line) => /^\s*(\d+): .*\((\S+)\)( \[selected\])?\s*$/.exec(line))
    .filter(Boolean)
    .map((m) => ({ id: Number(m[1]), url: m[2], selected: Boolean(m[3]) }));
}
