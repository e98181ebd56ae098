// The daemon's gatekeeping: token, Host and Origin checks on HTTP and WebSocket, the extension
// socket's Origin pinning, and robustness of the client CDP socket against bad frames.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { RawCdp, rawGet, startHarness, tryWebSocket } from './harness.mjs';

const WRONG_TOKEN = 'f'.repeat(64);
const EVIL_ORIGIN = 'http://evil.example';
const OTHER_EXTENSION_ORIGIN = 'chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';

const isAuthRefusal = (status) => status === 401 || status === 403;
const isRefusal = (status) => status >= 400 && status < 500;

describe('tabtunnel security checks', { timeout: 180_000 }, () => {
  let h;
  let host; // "127.0.0.1:PORT"
  let browserPath; // "/devtools/browser/<id>" (no token)

  before(async () => {
    // No sharing needed, but wait for the extension to be connected so /json/version is complete.
    h = await startHarness({ name: 'security', share: false });
    await h.openPanel();
    host = `127.0.0.1:${h.port}`;
    const wsPath = new URL(h.wsEndpoint).pathname;
    assert.ok(wsPath.startsWith(`/${h.token}/devtools/browser/`), `wsEndpoint ${h.wsEndpoint} is not /<token>/devtools/browser/<id>`);
    browserPath = wsPath.slice(h.token.length + 1);
  });

  after(async () => {
    await h?.close();
  });

  // ---- HTTP discovery ------------------------------------------------------------------------

  test('ready file token looks like 32 random bytes in hex', () => {
    assert.match(h.token, /^[0-9a-f]{64}$/);
  });

  test('/json/version without a token is refused', async () => {
    for (const p of ['/json/version', '/json/version/', '/json/list', '/json']) {
      const r = await rawGet(h.port, p);
      assert.ok(isAuthRefusal(r.status), `GET ${p} without token: expected 401/403, got ${r.status} ${r.body.slice(0, 200)}`);
      assert.ok(!r.body.includes(h.token), `GET ${p} leaks the token`);
    }
  });

  test('/json/version with a wrong token is refused (path, query, bearer)', async () => {
    const cases = [
      [`/${WRONG_TOKEN}/json/version`, {}],
      [`/json/version?token=${WRONG_TOKEN}`, {}],
      ['/json/version', { Authorization: `Bearer ${WRONG_TOKEN}` }],
      [`/${h.token.slice(0, 63)}/json/version`, {}],
    ];
    for (const [p, headers] of cases) {
      const r = await rawGet(h.port, p, headers);
      assert.ok(isAuthRefusal(r.status), `GET ${p} ${JSON.stringify(headers)}: expected 401/403, got ${r.status}`);
      assert.ok(!r.body.includes(h.token), `GET ${p} leaks the token`);
    }
  });

  function checkVersion(r, label) {
    assert.equal(r.status, 200, `${label}: status ${r.status} ${r.body.slice(0, 300)}`);
    assert.ok(r.json && typeof r.json === 'object', `${label}: not JSON: ${r.body.slice(0, 300)}`);
    const v = r.json;
    assert.match(v.Browser ?? '', /^(Headless)?Chrome\/\d+\./, `${label}: Browser = ${v.Browser}`);
    assert.ok(typeof v['User-Agent'] === 'string' && v['User-Agent'].includes('Mozilla/5.0'), `${label}: User-Agent = ${v['User-Agent']}`);
    const ws = new URL(v.webSocketDebuggerUrl);
    assert.equal(ws.protocol, 'ws:', `${label}: webSocketDebuggerUrl ${v.webSocketDebuggerUrl}`);
    assert.equal(ws.host, host, `${label}: webSocketDebuggerUrl host`);
    assert.ok(
      ws.pathname.startsWith(`/${h.token}/devtools/browser/`),
      `${label}: webSocketDebuggerUrl must name the /<token>/devtools/browser/<id> form: ${v.webSocketDebuggerUrl}`,
    );
  }

  test('/json/version with the token: path prefix, ?token=, Authorization: Bearer', async () => {
    checkVersion(await rawGet(h.port, `/${h.token}/json/version`), 'path prefix');
    checkVersion(await rawGet(h.port, `/json/version?token=${h.token}`), '?token=');
    checkVersion(await rawGet(h.port, '/json/version', { Authorization: `Bearer ${h.token}` }), 'Bearer');
    const viaEndpoint = await fetch(`${h.clientEndpoint}/json/version`);
    checkVersion({ status: viaEndpoint.status, body: '', json: await viaEndpoint.json() }, 'clientEndpoint + /json/version');
  });

  test('/json/version/ (trailing slash, Playwright form) and /json/list answer', async () => {
    checkVersion(await rawGet(h.port, `/${h.token}/json/version/`), 'trailing slash');
    const list = await rawGet(h.port, `/${h.token}/json/list`);
    assert.equal(list.status, 200, `/json/list: ${list.status} ${list.body.slice(0, 200)}`);
    assert.ok(Array.isArray(list.json), `/json/list is not a JSON array: ${list.body.slice(0, 200)}`);
  });

  test('a foreign Origin is refused with 403 even with the token', async () => {
    const r = await rawGet(h.port, `/${h.token}/json/version`, { Origin: EVIL_ORIGIN });
    assert.equal(r.status, 403, `HTTP with Origin ${EVIL_ORIGIN}: got ${r.status}`);
    const w = await tryWebSocket(h.wsEndpoint, { Origin: EVIL_ORIGIN });
    if (w.opened) w.ws.terminate();
    assert.ok(!w.opened, `WebSocket upgrade with Origin ${EVIL_ORIGIN} was accepted`);
    assert.equal(w.status, 403, `WebSocket upgrade with Origin ${EVIL_ORIGIN}: got ${w.status} ${w.error ?? ''}`);
  });

  test('a non-loopback Host is refused even with the token', async () => {
    for (const badHost of ['evil.example', `evil.example:${h.port}`]) {
      const r = await rawGet(h.port, `/${h.token}/json/version`, { Host: badHost });
      assert.ok(isRefusal(r.status), `HTTP with Host ${badHost}: expected 4xx, got ${r.status}`);
      const w = await tryWebSocket(h.wsEndpoint, { Host: badHost });
      if (w.opened) w.ws.terminate();
      assert.ok(!w.opened, `WebSocket upgrade with Host ${badHost} was accepted`);
    }
    // Loopback names are fine.
    for (const okHost of [`localhost:${h.port}`, `127.0.0.1:${h.port}`]) {
      const r = await rawGet(h.port, `/${h.token}/json/version`, { Host: okHost });
      assert.equal(r.status, 200, `HTTP with Host ${okHost}: got ${r.status}`);
    }
  });

  // ---- WebSockets ----------------------------------------------------------------------------

  test('client WebSocket upgrade without or with a wrong token is refused', async () => {
    const cases = [
      [`ws://${host}${browserPath}`, {}],
      [`ws://${host}/${WRONG_TOKEN}${browserPath}`, {}],
      [`ws://${host}${browserPath}?token=${WRONG_TOKEN}`, {}],
      [`ws://${host}${browserPath}`, { Authorization: `Bearer ${WRONG_TOKEN}` }],
    ];
    for (const [url, headers] of cases) {
      const w = await tryWebSocket(url, headers);
      if (w.opened) w.ws.terminate();
      assert.ok(!w.opened, `WebSocket ${url} ${JSON.stringify(headers)} was accepted`);
      assert.ok(isAuthRefusal(w.status), `WebSocket ${url}: expected 401/403, got ${w.status} ${w.error ?? ''}`);
    }
  });

  test('client WebSocket with the token works in all three forms', async () => {
    const forms = [
      [h.wsEndpoint, {}],
      [`ws://${host}${browserPath}?token=${h.token}`, {}],
      [`ws://${host}${browserPath}`, { Authorization: `Bearer ${h.token}` }],
    ];
    for (const [url, headers] of forms) {
      const cdp = await RawCdp.open(url, headers);
      try {
        const r = await cdp.send(1, 'Browser.getVersion');
        assert.ok(r.result, `Browser.getVersion over ${url}: ${JSON.stringify(r)}`);
        assert.match(r.result.product, /^(Headless)?Chrome\/\d+/);
      } finally {
        cdp.close();
      }
    }
  });

  test('the extension socket refuses anything but our extension Origin', async () => {
    const cases = [
      [{}, 'no Origin'],
      [{ Origin: EVIL_ORIGIN }, EVIL_ORIGIN],
      [{ Origin: OTHER_EXTENSION_ORIGIN }, 'another extension'],
    ];
    for (const [headers, label] of cases) {
      const w = await tryWebSocket(h.extensionUrl, headers);
      if (w.opened) w.ws.terminate();
      assert.ok(!w.opened, `extension socket with ${label} was accepted`);
      assert.ok(isAuthRefusal(w.status), `extension socket with ${label}: expected 401/403, got ${w.status} ${w.error ?? ''}`);
    }
    // The real extension must still be connected afterwards.
    const r = await rawGet(h.port, `/${h.token}/json/version`);
    assert.equal(r.status, 200);
    assert.equal(await h.panel.$eval('#daemon-status', (el) => el.dataset.state), 'connected');
  });

  // ---- CDP socket robustness -----------------------------------------------------------------

  test('malformed frames get a CDP error and the connection stays usable', async () => {
    const cdp = await RawCdp.open(h.wsEndpoint);
    try {
      const isError = (m) => m.error && typeof m.error === 'object';

      cdp.sendRaw('{this is not json');
      const e1 = await cdp.next(isError, 'a CDP error reply to a malformed JSON frame');
      assert.equal(typeof e1.error.code, 'number', JSON.stringify(e1));
      assert.equal(typeof e1.error.message, 'string', JSON.stringify(e1));

      cdp.sendRaw(JSON.stringify({ method: 'Browser.getVersion', params: {} }));
      const e2 = await cdp.next(isError, 'a CDP error reply to a frame without id');
      assert.equal(typeof e2.error.code, 'number', JSON.stringify(e2));

      const ok = await cdp.send(7, 'Browser.getVersion');
      assert.equal(ok.id, 7);
      assert.ok(ok.result, `Browser.getVersion after bad frames: ${JSON.stringify(ok)}`);
      assert.match(ok.result.product, /^(Headless)?Chrome\/\d+/);
      assert.ok(ok.result.userAgent.includes('Mozilla/5.0'), `userAgent: ${ok.result.userAgent}`);

      const unknown = await cdp.send(8, 'NoSuchDomain.noSuchMethod');
      assert.ok(unknown.error, `unknown method should be an error: ${JSON.stringify(unknown)}`);

      const again = await cdp.send(9, 'Browser.getVersion');
      assert.ok(again.result, JSON.stringify(again));
    } finally {
      cdp.close();
    }
  });
});
