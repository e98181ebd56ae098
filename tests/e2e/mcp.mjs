// An MCP client for the e2e tests: starts an unmodified MCP server over stdio and calls its tools.

import assert from 'node:assert/strict';

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
 * Starts `node <script> ...args` (or `command ...args`) as an MCP server. `h` is the harness,
 * for failure details. Returns { client, transport, call(tool, args) → text,
 * callRaw(tool, args) → result, close(), detail() }.
 */
export async function startMcpServer(h, { name, script, command, args, env = {}, cwd }) {
  let stderr = '';
  const detail = () => `--- ${name} stderr ---\n${stderr.slice(-6000)}\n${h.detail()}`;
  const transport = new StdioClientTransport({
    command: command ?? process.execPath,
    args: script ? [script, ...args] : args,
    env: { ...process.env, ...env },
    cwd,
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

  return { client, transport, call, callRaw, detail, close: () => client.close().catch(() => {}) };
}
