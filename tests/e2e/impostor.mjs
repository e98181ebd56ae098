// A listener that is not our daemon: what another local user can run on the port a stale
// `daemon.json` names once our daemon has gone. It answers as a daemon would, as far as it can
// without the owner-only daemon key (a status, /json/version, a hello whose proof is made up,
// every WebSocket upgrade accepted and every CDP-like message answered), and keeps every request
// line, header, body and WebSocket message it receives, to be searched for secrets.

import http from 'node:http';

import { WebSocketServer } from 'ws';

import { withTimeout } from './harness.mjs';

/** `text`, and its URL-decoded form when it has one (a secret may travel percent-encoded). */
function forms(text) {
  try {
    return [text, decodeURIComponent(text)];
  } catch {
    return [text];
  }
}

/**
 * Listens on 127.0.0.1:`port`. `pid` is the pid its hello claims (what a client that trusted it
 * would signal); `version` the daemon version it claims. Resolves to
 * { heard(), count(), leaks(secrets, from), setPid(pid), close() }.
 */
export async function startImpostor({ port, pid, version }) {
  const heard = [];
  let claimedPid = pid;
  const headersOf = (req) => req.rawHeaders.map((v, i) => (i % 2 ? `${v}\n` : `${v}: `)).join('');
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      heard.push(`${req.method} ${req.url}\n${headersOf(req)}\n${body}`);
      const { pathname } = new URL(req.url, 'http://impostor');
      const json = (value) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      const base = pathname.replace(/\/(tabtunnel\/[a-z]+|json(\/[a-z]+)?)$/, '');
      if (pathname.endsWith('/tabtunnel/hello')) json({ pid: claimedPid, proof: '00'.repeat(32) });
      else if (pathname.endsWith('/tabtunnel/status')) {
        json({ daemonVersion: version, extensionConnected: true, extensionEpoch: 1, extensionVersion: version, browser: 'Chrome/140', agent: 'default', tabs: [] });
      } else if (pathname.endsWith('/json/version')) {
        json({ Browser: 'Chrome/140', 'Protocol-Version': '1.3', webSocketDebuggerUrl: `ws://127.0.0.1:${port}${base}/devtools/browser/impostor` });
      } else if (/\/json(\/list)?$/.test(pathname)) json([]);
      else json({});
    });
  });
  const sockets = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  server.on('upgrade', (req, socket, head) => {
    heard.push(`UPGRADE ${req.url}\n${headersOf(req)}`);
    sockets.handleUpgrade(req, socket, head, (ws) => {
      ws.on('message', (data) => {
        const text = data.toString();
        heard.push(`WS ${req.url} ${text}`);
        try {
          const msg = JSON.parse(text);
          if (msg && msg.id !== undefined) ws.send(JSON.stringify({ id: msg.id, result: {} }));
        } catch {
          /* not JSON: kept, not answered */
        }
      });
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    port,
    heard: () => heard.slice(),
    count: () => heard.length,
    setPid: (p) => (claimedPid = p),
    /** Which of `secrets` ({name: value}; empty values skipped) it heard since record `from`,
     *  each with the record it was in (the secret itself replaced by its name). */
    leaks(secrets, from = 0) {
      const found = [];
      for (const record of heard.slice(from)) {
        for (const [name, value] of Object.entries(secrets)) {
          if (value && forms(record).some((f) => f.toLowerCase().includes(value.toLowerCase()))) {
            found.push(`${name} in: ${forms(record).at(-1).replaceAll(value, `<${name}>`).slice(0, 300)}`);
          }
        }
      }
      return found;
    },
    close() {
      for (const ws of sockets.clients) ws.terminate();
      server.closeAllConnections();
      return withTimeout(new Promise((r) => server.close(r)), 5000, 'the impostor listener closing');
    },
  };
}
