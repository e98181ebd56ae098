// The bare relay: what one hop through the extension's service worker costs with nothing of
// tabtunnel's in it, so that tabtunnel minus the bare relay is our own cost per command.
// Test code only, no product code: a Node relay process of its own (its CPU is counted apart,
// in the `daemon` column of this path) passes a CDP client's frames to a plain-JS loop injected
// into the extension's worker, which calls `chrome.debugger.sendCommand` on the shared tab for
// each and sends each answer back by itself: one frame per message both ways, nothing parsed in
// Node (an answer of a megabyte or more leaves the worker as one UTF-8 buffer, as tabtunnel's).
// Two hops of that kind: the worker's own WebSocket (`ws`), and Chrome native messaging
// (`native`: the relay is a native host Chrome starts for `chrome.runtime.connectNative`).

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

import { EXTENSION_ORIGIN } from '../e2e/harness.mjs';
import { CdpClient } from './cdp-client.mjs';

const HOST_NAME = 'dev.tabtunnel.bench_relay';
const WS_MODULE = createRequire(import.meta.url).resolve('ws');

// The relay: a WebSocket server for the client; the worker reaches it by WebSocket (`ws`) or
// Chrome reaches it on stdio as a native host (`native`: 4-byte native-endian length + JSON).
// It writes its port to `portFile` and relays text frames untouched (as bytes, never decoded).
const RELAY = `
const fs = require('node:fs');
const { WebSocketServer } = require(${JSON.stringify(WS_MODULE)});
const [mode, portFile] = process.argv.slice(-2);
const server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, maxPayload: 512 << 20 });
let client = null, worker = null;
const toWorker = mode === 'native'
  ? (body) => { const head = Buffer.alloc(4); head.writeUInt32LE(body.length); process.stdout.write(head); process.stdout.write(body); }
  : (body) => worker?.send(body, { binary: false });
if (mode === 'native') {
  let buffered = Buffer.alloc(0);
  process.stdin.on('data', (chunk) => {
    buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
    while (buffered.length >= 4) {
      const length = buffered.readUInt32LE(0);
      if (buffered.length < 4 + length) break;
      client?.send(buffered.subarray(4, 4 + length), { binary: false });
      buffered = buffered.subarray(4 + length);
    }
  });
  process.stdin.on('end', () => process.exit(0));
}
server.on('connection', (ws, req) => {
  if (req.url === '/worker') {
    worker = ws;
    ws.on('message', (data) => client?.send(data, { binary: false }));
  } else {
    client = ws;
    ws.on('message', (data) => toWorker(data));
  }
});
server.on('listening', () => fs.writeFileSync(portFile, String(server.address().port)));
`;

/** Waits for `file` to hold something; its content. */
async function readWhenWritten(file, what) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      const text = fs.readFileSync(file, 'utf8');
      if (text) return text;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`the bare relay (${what}) never wrote ${file}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// In the worker: relay frames to chrome.debugger on `tabId`, one answer per frame.
async function startWorkerLoop(mode, target, tabId) {
  const key = `__bareRelay_${mode}`;
  globalThis[key]?.close?.();
  globalThis[key]?.disconnect?.();
  const run = (frame, answer) => {
    const { id, method, params } = frame;
    chrome.debugger.sendCommand({ tabId }, method, params).then(
      (result) => answer(id, result),
      (err) => answer(id, undefined, { code: -32000, message: String(err?.message ?? err) }),
    );
  };
  if (mode === 'native') {
    const port = chrome.runtime.connectNative(target);
    globalThis[key] = port;
    port.onMessage.addListener((frame) => run(frame, (id, result, error) => port.postMessage(error ? { id, error } : { id, result })));
    return;
  }
  const ws = new WebSocket(target);
  globalThis[key] = ws;
  // A large answer leaves as one UTF-8 buffer, as tabtunnel's does (js::send_js): sending the
  // joined string costs the worker ~3x more.
  const answer = (id, result, error) => {
    const text = error ? JSON.stringify({ id, error }) : `{"id":${id},"result":${JSON.stringify(result)}}`;
    if (text.length < 1 << 20) return ws.send(text);
    const bytes = new Uint8Array(text.length * 3);
    ws.send(bytes.subarray(0, new TextEncoder().encodeInto(text, bytes).written));
  };
  ws.onmessage = (e) => run(JSON.parse(e.data), answer);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = () => reject(new Error(`the worker could not reach the bare relay at ${target}`));
  });
}

/**
 * Starts a bare relay (`mode` `ws` or `native`) to the harness's shared tab. Resolves with
 * `{ client, sessionId: undefined, pid, close() }`: `client` speaks CDP to the tab (no session
 * needed), `pid` is the relay process.
 */
export async function openBareRelay(h, mode) {
  const dir = fs.mkdtempSync(path.join(h.tmp, `bare-${mode}-`));
  const portFile = path.join(dir, 'port');
  const script = path.join(dir, 'relay.cjs');
  fs.writeFileSync(script, RELAY);
  let relay;
  if (mode === 'native') {
    // Chrome starts the host itself, from a manifest in the profile; the relay's pid is read
    // from the port file's neighbour.
    const launcher = path.join(dir, 'host.sh');
    fs.writeFileSync(launcher, `#!/bin/sh\necho $$ > ${JSON.stringify(path.join(dir, 'pid'))}\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(script)} native ${JSON.stringify(portFile)}\n`, { mode: 0o755 });
    const hosts = path.join(h.profileDir, 'NativeMessagingHosts');
    fs.mkdirSync(hosts, { recursive: true });
    fs.writeFileSync(
      path.join(hosts, `${HOST_NAME}.json`),
      JSON.stringify({ name: HOST_NAME, description: 'tabtunnel bench: bare relay', path: launcher, type: 'stdio', allowed_origins: [`${EXTENSION_ORIGIN}/`] }),
    );
    await h.sw(startWorkerLoop, 'native', HOST_NAME, h.tabId);
  } else {
    relay = spawn(process.execPath, [script, 'ws', portFile], { stdio: 'ignore' });
  }
  const port = await readWhenWritten(portFile, mode);
  if (mode === 'ws') await h.sw(startWorkerLoop, 'ws', `ws://127.0.0.1:${port}/worker`, h.tabId);
  const pid = mode === 'native' ? Number(await readWhenWritten(path.join(dir, 'pid'), mode)) : relay.pid;
  const client = await CdpClient.open(`ws://127.0.0.1:${port}/client`);
  return {
    client,
    sessionId: undefined,
    pid,
    async close() {
      client.close();
      await h.sw((key) => {
        globalThis[key]?.close?.();
        globalThis[key]?.disconnect?.();
        globalThis[key] = undefined;
      }, `__bareRelay_${mode}`).catch(() => {});
      relay?.kill();
    },
  };
}
