// Agents cannot pretend to be each other or peek past their policy: each route of the outside
// tester's probe (issue "Agents cannot pretend, peek past the policy, or starve each other"),
// end to end in real Chromium with the built extension. A "mail" site the human is signed in to
// (HttpOnly cookie) lives on an origin no agent may load; the allowed site has the human's
// signed-in app, a shop with an order form, and a page that embeds whatever it is told.
//
// (Fairness under floods, the issue's last item, has tests of its own.)

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';

import puppeteer from 'puppeteer-core';

import { EXTENSION_ID, RawCdp, connectAgent, daemonBinary, pollFor, startHarness, tryWebSocket, withTimeout } from './harness.mjs';
import { startMcpServer, textOf } from './mcp.mjs';

const WAIT_MS = 30_000;
const MAIL_SECRET = `mail-${crypto.randomBytes(8).toString('hex')}`;
const INBOX_TEXT = 'INBOX: the human private mail';
const HUMAN = `human${crypto.randomBytes(4).toString('hex')}`;

/** The forbidden site: signs the human in with an HttpOnly cookie, shows the inbox with it. */
function startMailSite() {
  const seen = [];
  const server = http.createServer((req, res) => {
    const cookie = req.headers.cookie ?? '';
    seen.push({ path: req.url, method: req.method, withCookie: cookie.includes(MAIL_SECRET) });
    if (req.url.startsWith('/login')) {
      res.writeHead(200, { 'content-type': 'text/html', 'set-cookie': `mail=${MAIL_SECRET}; Path=/; HttpOnly` });
      res.end('<!doctype html><title>mail</title><p>signed in to mail</p>');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' });
    // Signed in, the inbox keeps mail in the site's caches and IndexedDB, as web mail does.
    const keep = `<script>
caches.open('mail').then((c) => c.put('/kept', new Response('${MAIL_SECRET}')));
const open = indexedDB.open('mail', 1);
open.onupgradeneeded = () => open.result.createObjectStore('messages');
open.onsuccess = () => open.result.transaction('messages', 'readwrite').objectStore('messages').put('${MAIL_SECRET}', 'kept');
</script>`;
    res.end(cookie.includes(MAIL_SECRET) ? `<!doctype html><title>inbox</title><p id="secret">${INBOX_TEXT}</p>${keep}` : '<!doctype html><p>please sign in</p>');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, seen })));
}

/** The allowed site's extra pages: an embedder, a shop whose orders are counted. */
function allowedPages(orders) {
  return {
    '/embed.html': (req, res, url) => {
      const src = (url.searchParams.get('src') ?? '').replace(/[^A-Za-z0-9:/?&=._%@\\-]/g, '');
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(`<!doctype html><title>embed</title><p>embedding</p><iframe id="f" src="${src}"></iframe>`);
    },
    '/shop.html': `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>shop</title></head><body>
<form id="order" method="post" action="/order"><input id="card" name="card" value="4111"><button id="buy" type="submit">Buy</button></form>
<button id="note" type="button" onclick="localStorage.setItem('clicked','yes'); document.title='clicked'">Note</button>
<p id="total">Total: 12.00</p></body></html>`,
    '/pad.html': '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>pad</title></head><body><textarea id="t"></textarea></body></html>',
    '/order': (req, res) => {
      if (req.method === 'POST') orders.count += 1;
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>ordered</title><p>ordered</p>');
    },
  };
}

/** A raw CDP connection that keeps every frame it receives as text, to look for leaks. */
async function recordingCdp(url) {
  const raw = await RawCdp.open(url);
  raw.all = [];
  raw.ws.on('message', (data) => raw.all.push(data.toString()));
  return raw;
}

let nextId = 100;
const call = (raw, method, params = {}, sessionId) => raw.send(nextId++, method, params, sessionId);

/** A new tab of the connection's agent on `url`: its page session and target id. */
async function newPage(raw, url) {
  await call(raw, 'Target.setAutoAttach', { autoAttach: true, flatten: true, waitForDebuggerOnStart: false });
  const created = await call(raw, 'Target.createTarget', { url: 'about:blank' });
  assert.ok(created.result, JSON.stringify(created));
  const { targetId } = created.result;
  const attached = await raw.next((m) => m.method === 'Target.attachedToTarget' && m.params.targetInfo.targetId === targetId, 'the new page attached');
  const session = attached.params.sessionId;
  await call(raw, 'Page.enable', {}, session);
  if (url) await navigate(raw, session, url);
  return { session, targetId };
}

async function navigate(raw, session, url) {
  const loaded = raw.next((m) => m.method === 'Page.loadEventFired' && m.sessionId === session, `${url} loaded`, WAIT_MS);
  const answer = await call(raw, 'Page.navigate', { url }, session);
  assert.ok(answer.result && !answer.result.errorText, `navigate ${url}: ${JSON.stringify(answer)}`);
  await loaded;
}

async function evaluate(raw, session, expression, extra = {}) {
  return call(raw, 'Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true, ...extra }, session);
}

describe('agents cannot pretend or peek past their policy', { timeout: 900_000 }, () => {
  let h;
  let mail;
  let mailOrigin;
  let allowedOrigin;
  let policyFile;
  const orders = { count: 0 };
  const tokens = {};

  const run = promisify(execFile);
  const tabtunnel = (...args) =>
    run(daemonBinary(), args, { env: { ...process.env, XDG_CONFIG_HOME: h.configHome, XDG_DATA_HOME: h.dataHome } });
  const auditLines = async () =>
    (await tabtunnel('audit', '--json')).stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const ws = (pathAndQuery) => `ws://127.0.0.1:${h.port}${pathAndQuery}`;

  before(async () => {
    mail = await startMailSite();
    mailOrigin = `http://localhost:${mail.server.address().port}`;
    const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'tabtunnel-trust-'));
    policyFile = path.join(dir, 'policy.toml');
    fs.writeFileSync(policyFile, '[default]\n');
    h = await startHarness({
      name: 'trust',
      share: false,
      daemonArgs: ['--policy', policyFile, '--max-tabs-per-agent', '3'],
      extraPages: allowedPages(orders),
    });
    allowedOrigin = h.pageServerUrl;
    fs.writeFileSync(
      policyFile,
      `[default]
allow_origins = ["${allowedOrigin}"]

[agent.hidden]
deny_methods = ["Network.getCookies", "Network.getAllCookies", "Storage.getCookies"]

[agent.reader]
preset = "read-only"
`,
    );
    await pollFor(() => h.logs().includes('policy reloaded'), WAIT_MS, 'the daemon reading the policy', h.detail);
    for (const name of ['alice', 'reader']) tokens[name] = (await tabtunnel('agent', 'add', name)).stdout.trim();
    await pollFor(() => h.logs().includes("agents' credentials reloaded"), WAIT_MS, 'the daemon reading the tokens', h.detail);
    // The human signs in to the app (allowed site) and to mail (forbidden site).
    const human = await h.browser.newPage();
    await human.goto(`${allowedOrigin}/login`);
    await human.type('#user', HUMAN);
    await Promise.all([human.waitForNavigation(), human.click('#signin')]);
    assert.match(await human.content(), new RegExp(`Signed in as <span id="who">${HUMAN}`));
    await human.goto(`${mailOrigin}/login`);
    await human.goto(`${mailOrigin}/inbox`);
    assert.match(await human.content(), /INBOX/);
    await human.close();
  });

  after(async () => {
    await h?.close();
    mail?.server.close();
  });

  test('(1) an agent token is its agent: another agent, or the plain endpoint, is not a way out', async () => {
    const alice = await puppeteer.connect({ browserURL: `http://127.0.0.1:${h.port}/${tokens.alice}`, defaultViewport: null });
    try {
      const page = await alice.newPage();
      await page.goto(h.pageUrl);
      const mine = await (await fetch(`http://127.0.0.1:${h.port}/${tokens.alice}/json/list`)).json();
      const asOwnerSees = await (await fetch(`${h.agentEndpoint('alice')}/json/list`)).json();
      assert.deepEqual(mine.map((p) => p.id), asOwnerSees.map((p) => p.id), 'the plain endpoint with her token is alice');
      assert.equal(mine.length, 1);
      assert.ok(mine[0].webSocketDebuggerUrl.includes(`/${tokens.alice}/devtools/page/`), 'URLs carry her own token');
      assert.ok(!JSON.stringify(mine).includes(h.token), 'never the owner token');
      for (const other of ['reader', 'default', 'someone-new']) {
        const r = await fetch(`http://127.0.0.1:${h.port}/${tokens.alice}/agent/${other}/json/list`);
        assert.equal(r.status, 403, `alice as ${other}`);
      }
    } finally {
      await alice.disconnect();
    }
    // The reader is read-only whichever path it takes.
    const reader = await RawCdp.open(ws(`/${tokens.reader}/cdp`));
    try {
      const created = await call(reader, 'Target.createTarget', { url: h.pageUrl });
      assert.match(created.error?.message ?? '', /read-only/);
      assert.equal((await tryWebSocket(ws(`/${tokens.reader}/agent/free/cdp`))).status, 403);
    } finally {
      reader.close();
    }
  });

  test('(1) the human mints and revokes an agent\'s token in the side panel; it is shown once and works at once', async () => {
    const panel = await h.openPanel();
    await panel.type('#new-agent-name', 'panelist');
    await panel.click('#mint-agent-token');
    await panel.waitForSelector('#minted-token:not([hidden])', { timeout: WAIT_MS });
    const token = await panel.$eval('#minted-token-value', (el) => el.textContent.trim());
    assert.match(token, /^tta_[0-9a-f]{64}$/);
    assert.ok(!fs.readFileSync(path.join(h.configHome, 'tabtunnel', 'agents.json'), 'utf8').includes(token.slice(4)), 'only its hash is kept');
    await panel.waitForSelector('#agent-tokens li[data-agent="panelist"]', { timeout: WAIT_MS });
    await pollFor(async () => (await fetch(`http://127.0.0.1:${h.port}/${token}/json/version`)).status === 200, WAIT_MS, 'the new token working', h.detail);
    await panel.click('#dismiss-minted-token');
    await panel.waitForSelector('#minted-token', { hidden: true, timeout: WAIT_MS });
    assert.equal(await panel.$eval('#minted-token-value', (el) => el.textContent), '', 'shown once');
    await panel.click('#agent-tokens li[data-agent="panelist"] button.revoke');
    await pollFor(async () => (await fetch(`http://127.0.0.1:${h.port}/${token}/json/version`)).status === 401, WAIT_MS, 'the revoked token refused', h.detail);
    await panel.waitForSelector('#agent-tokens li[data-agent="panelist"]', { hidden: true, timeout: WAIT_MS });
  });

  test('(2) hidden cookies are hidden on every route; other agents never see the forbidden site\'s', async () => {
    const texts = {};
    const seenBefore = mail.seen.length;
    for (const agent of ['hidden', 'control']) {
      const raw = await recordingCdp(`${h.agentEndpoint(agent).replace('http:', 'ws:')}/cdp`);
      try {
        const { session, targetId } = await newPage(raw, 'about:blank');
        await call(raw, 'Network.enable', {}, session);
        // Interception pauses every request; the test lets each go on.
        // ...but one: sent on to the forbidden site (with its cookies, were it let go).
        const rewrites = [];
        raw.ws.on('message', (data) => {
          const m = JSON.parse(data.toString());
          if (m.method !== 'Fetch.requestPaused') return;
          const rewrite = m.params.request.url.includes('/rewrite-me') && !rewrites.some((r) => r.requestId === m.params.requestId);
          const id = nextId++;
          const params = rewrite ? { requestId: m.params.requestId, url: `${mailOrigin}/inbox` } : { requestId: m.params.requestId };
          if (rewrite) rewrites.push({ id, requestId: m.params.requestId, sessionId: m.sessionId });
          raw.sendRaw(JSON.stringify({ id, method: 'Fetch.continueRequest', params, sessionId: m.sessionId }));
        });
        await call(raw, 'Fetch.enable', { patterns: [{ urlPattern: '*' }] }, session);
        await navigate(raw, session, `${allowedOrigin}/app`);
        // A no-cors fetch to the forbidden site, with the user's credentials if it could.
        const fetched = await evaluate(raw, session, `fetch('${mailOrigin}/inbox', { mode: 'no-cors', credentials: 'include' }).then(() => 'done', (e) => 'failed ' + e.message)`);
        assert.ok(fetched.result, JSON.stringify(fetched));
        const mailBefore = mail.seen.length;
        const rewritten = evaluate(raw, session, `fetch('${allowedOrigin}/rewrite-me').then((r) => r.status, (e) => 'failed ' + e.message)`);
        const refusal = await raw.next((m) => rewrites.length && m.id === rewrites[0].id, 'the answer to the rewrite');
        assert.match(refusal.error?.message ?? '', /allow_origins: a paused request is not sent on to another origin/, JSON.stringify(refusal));
        // Let go unchanged: it goes where the page sent it.
        raw.sendRaw(JSON.stringify({ id: nextId++, method: 'Fetch.continueRequest', params: { requestId: rewrites[0].requestId }, sessionId: rewrites[0].sessionId }));
        await rewritten;
        assert.equal(mail.seen.length, mailBefore, `the rewrite reached the forbidden site: ${JSON.stringify(mail.seen.slice(mailBefore))}`);
        // Not even from its own origin, with the human's cookies or without: the browser would
        // follow a redirect to any site with them, or to this machine's servers.
        for (const includeCredentials of [true, false]) {
          const loaded = await call(raw, 'Network.loadNetworkResource', { frameId: targetId, url: `${allowedOrigin}/app`, options: { disableCache: true, includeCredentials } }, session);
          assert.match(loaded.error?.message ?? '', /allow_origins: Network.loadNetworkResource is refused/, JSON.stringify(loaded));
        }
        // The getters answer with every site's cookies: an agent held to origins that may use
        // them gets the values of its own sites only (the hiding agent may not use them).
        for (const [method, params] of [['Network.getAllCookies', {}], ['Network.getCookies', { urls: [mailOrigin, allowedOrigin] }]]) {
          const answer = JSON.stringify(await call(raw, method, params, session));
          if (agent === 'control') assert.ok(answer.includes(HUMAN) && answer.includes('hidden by tabtunnel') && !answer.includes(MAIL_SECRET), `${method}: ${answer.slice(0, 800)}`);
          else assert.match(answer, /denied by tabtunnel's policy/);
        }
        // Nor does it write other sites' cookies: no cookie planted or deleted there, none
        // cleared everywhere. Its own site's it may write.
        for (const [method, params] of [
          ['Network.setCookie', { name: 'planted', value: '1', url: `${mailOrigin}/` }],
          ['Network.deleteCookies', { name: 'mail', url: `${mailOrigin}/` }],
          ['Network.deleteCookies', { name: 'mail', domain: 'localhost' }],
          ['Network.setCookie', { name: 'planted', value: '1', domain: `localhost/.${new URL(allowedOrigin).hostname}` }],
          ['Network.clearBrowserCookies', {}],
        ]) {
          const answer = await call(raw, method, params, session);
          assert.match(answer.error?.message ?? '', /denied by tabtunnel's policy: allow_origins/, `${agent}: ${method}: ${JSON.stringify(answer)}`);
        }
        const own = await call(raw, 'Network.setCookie', { name: 'own', value: '1', url: `${allowedOrigin}/` }, session);
        assert.ok(own.result?.success, `${agent}: its own site's cookie: ${JSON.stringify(own)}`);
        const removed = await call(raw, 'Network.deleteCookies', { name: 'own', url: `${allowedOrigin}/` }, session);
        assert.ok(removed.result, `${agent}: its own site's cookie deleted: ${JSON.stringify(removed)}`);
        // Every ExtraInfo event of the three requests is in.
        await pollFor(() => raw.all.filter((t) => t.includes('responseReceivedExtraInfo')).length >= 2, WAIT_MS, `${agent}: the ExtraInfo events`, h.detail);
        await call(raw, 'Fetch.disable', {}, session);
        texts[agent] = raw.all.join('\n');
      } finally {
        raw.close();
      }
    }
    assert.ok(texts.control.includes(`session=${HUMAN}`), 'the same steps show the cookie to an agent whose policy does not hide it');
    assert.ok(!texts.hidden.includes(HUMAN), 'no route shows the hidden agent the session cookie');
    assert.ok(texts.hidden.includes('hidden by tabtunnel'), 'its cookies are shown as hidden');
    for (const agent of ['hidden', 'control']) {
      assert.ok(!texts[agent].includes(MAIL_SECRET), `${agent} saw the forbidden site's cookie`);
    }
    const fromAgents = mail.seen.slice(seenBefore).filter((r) => r.path !== '/favicon.ico');
    assert.ok(fromAgents.length >= 2, `the agents' fetches reached the forbidden site: ${JSON.stringify(mail.seen)}`);
    assert.ok(!fromAgents.some((r) => r.withCookie), `an agent's request carried the human's cookie: ${JSON.stringify(fromAgents)}`);
  });

  test('(3) origin rules hold for frames, child sessions, loadNetworkResource and URLs as Chrome reads them', async () => {
    const mailRequests = mail.seen.length;
    const raw = await recordingCdp(`${h.agentEndpoint('a').replace('http:', 'ws:')}/cdp`);
    try {
      const { session, targetId } = await newPage(raw, 'about:blank');
      await call(raw, 'Target.setAutoAttach', { autoAttach: true, flatten: true, waitForDebuggerOnStart: false }, session);
      await navigate(raw, session, `${allowedOrigin}/embed.html?src=${encodeURIComponent(`${mailOrigin}/inbox`)}`);
      // The agent's own script adds another.
      await evaluate(raw, session, `new Promise((r) => { const f = document.createElement('iframe'); f.onload = f.onerror = () => r(1); f.src = '${mailOrigin}/inbox?again'; document.body.append(f); setTimeout(() => r(0), 5000); })`);
      const documentTree = await call(raw, 'DOM.getDocument', { depth: -1, pierce: true }, session);
      const snapshot = await call(raw, 'Page.captureSnapshot', {}, session);
      const frames = await call(raw, 'Page.getFrameTree', {}, session);
      const readings = [JSON.stringify(documentTree), JSON.stringify(snapshot)];
      for (const child of frames.result.frameTree.childFrames ?? []) {
        const world = await call(raw, 'Page.createIsolatedWorld', { frameId: child.frame.id, worldName: 'peek' }, session);
        if (world.result) readings.push(JSON.stringify(await evaluate(raw, session, 'document.documentElement.outerHTML', { contextId: world.result.executionContextId })));
      }
      for (const text of readings) assert.ok(!text.includes(INBOX_TEXT), `the forbidden page was read: ${text.slice(0, 500)}`);
      assert.ok(!raw.all.some((t) => t.includes('attachedToTarget') && t.includes(mailOrigin)), 'no child session of the forbidden site');
      const loaded = await call(raw, 'Network.loadNetworkResource', { frameId: targetId, url: `${mailOrigin}/inbox`, options: { disableCache: true, includeCredentials: true } }, session);
      assert.match(loaded.error?.message ?? '', /allow_origins/, JSON.stringify(loaded));
      // A lone surrogate (Chrome reads U+FFFD) made the params unreadable to the rule, which
      // judged a load of the forbidden site as about:blank and let it go.
      const loneId = nextId++;
      raw.sendRaw(`{"id":${loneId},"sessionId":"${session}","method":"Page.navigate","params":{"url":"${mailOrigin}/inbox#\\ud800"}}`);
      const lone = await raw.next((m) => m.id === loneId, 'the answer to the navigation with a lone surrogate');
      assert.equal(lone.result?.errorText, 'net::ERR_BLOCKED_BY_CLIENT', JSON.stringify(lone));
      // A backslash is a slash to Chrome: this URL is the forbidden host, not the allowed one.
      const sneaky = `http://localhost:${new URL(mailOrigin).port}\\@127.0.0.1:${new URL(allowedOrigin).port}/`;
      const navigated = await call(raw, 'Page.navigate', { url: sneaky }, session);
      assert.equal(navigated.result?.errorText, 'net::ERR_BLOCKED_BY_CLIENT', JSON.stringify(navigated));
      assert.equal(mail.seen.length, mailRequests, `the forbidden site got requests: ${JSON.stringify(mail.seen.slice(mailRequests))}`);
    } finally {
      raw.close();
    }
  });

  /** A tab of the human's on `url`, handed to `agent` from the side panel; its tab id. */
  async function handToAgent(url, agent) {
    const page = await h.browser.newPage();
    await page.goto(url);
    const tabId = await h.sw(async (u) => (await chrome.tabs.query({ url: u }))[0].id, url);
    const panel = await h.openPanel();
    await h.sw(async (id) => {
      const tab = await chrome.tabs.get(id);
      await chrome.tabs.update(id, { active: true });
      await chrome.windows.update(tab.windowId, { focused: true });
    }, tabId);
    await panel.waitForSelector(`#share-toggle[data-tab-id="${tabId}"]`, { timeout: WAIT_MS });
    await panel.$eval('#handover-agent', (el) => (el.value = ''));
    await panel.type('#handover-agent', agent);
    await panel.click('#handover-button');
    await pollFor(async () => (await (await fetch(`${h.agentEndpoint(agent)}/json/list`)).json()).length === 1, WAIT_MS, `${agent} getting the tab`, h.detail);
    return { page, tabId };
  }

  test('(4) read-only: the page, its storage and its place do not change, and reading still works', async () => {
    const shop = `${allowedOrigin}/shop.html`;
    const { page: human } = await handToAgent(shop, 'reader');
    const raw = await RawCdp.open(ws(`/${tokens.reader}/cdp`));
    try {
      await call(raw, 'Target.setAutoAttach', { autoAttach: true, flatten: true, waitForDebuggerOnStart: false });
      const { params } = await raw.next((m) => m.method === 'Target.attachedToTarget', 'the handed tab');
      const session = params.sessionId;
      // (V8 lets through what Chrome marks free of side effects: querySelector, textContent...)
      const reading = await evaluate(raw, session, "document.querySelector('#total').textContent");
      assert.equal(reading.result?.result?.value, 'Total: 12.00', 'a reading script works');
      for (const write of [
        "document.getElementById('note').click()",
        "localStorage.setItem('x', 'y')",
        "document.getElementById('card').value = '5555'",
        "document.getElementById('order').submit()",
        "document.getElementById('order').requestSubmit()",
        "window.someGlobal = 1",
      ]) {
        const answer = await evaluate(raw, session, write);
        const description = answer.result?.exceptionDetails?.exception?.description ?? '';
        assert.match(description, /read-only/, `${write}: ${JSON.stringify(answer)}`);
      }
      for (const [method, methodParams] of [
        ['Page.reload', {}],
        ['Page.close', {}],
        ['Emulation.setUserAgentOverride', { userAgent: 'x' }],
        ['Emulation.setGeolocationOverride', { latitude: 1, longitude: 1, accuracy: 1 }],
        ['Page.addScriptToEvaluateOnNewDocument', { source: "localStorage.setItem('x','y')" }],
        ['Network.setExtraHTTPHeaders', { headers: { 'x-a': 'b' } }],
        ['Network.emulateNetworkConditions', { offline: true, latency: 0, downloadThroughput: -1, uploadThroughput: -1 }],
        ['Input.dispatchKeyEvent', { type: 'keyDown', key: 'a' }],
      ]) {
        const answer = await call(raw, method, methodParams, session);
        assert.match(answer.error?.message ?? '', /read-only/, `${method}: ${JSON.stringify(answer)}`);
      }
      // A script in an isolated world of the agent's own (clients keep their snapshot code there)
      // shares the DOM: a click there submits the form, which the browser keeps from leaving.
      // (With Runtime on, as clients have it, tabtunnel knows the world for the client's own.)
      await call(raw, 'Runtime.enable', {}, session);
      const frameTree = await call(raw, 'Page.getFrameTree', {}, session);
      const world = await call(raw, 'Page.createIsolatedWorld', { frameId: frameTree.result.frameTree.frame.id, worldName: 'mine' }, session);
      const contextId = world.result.executionContextId;
      const posted = await evaluate(raw, session, "fetch('/order', { method: 'POST' }).then(() => 'sent', () => 'blocked')", { contextId });
      assert.equal(posted.result?.result?.value, 'blocked', JSON.stringify(posted));
      const before = (await auditLines()).length;
      await evaluate(raw, session, "document.getElementById('buy').click(); 1", { contextId });
      await pollFor(async () => (await auditLines()).slice(before).some((l) => l.agent === 'reader' && l.method === 'navigation' && l.outcome === 'denied'), WAIT_MS, 'the browser refusing the read-only tab\'s form post', h.detail);
      assert.equal(orders.count, 0, 'no order reached the server');
      assert.equal(human.url(), shop, 'the tab stayed');
      assert.equal(await human.evaluate(() => localStorage.getItem('x')), null, 'storage unchanged');
      assert.equal(await human.evaluate(() => document.title), 'shop');
    } finally {
      raw.close();
    }
    // Snapshots, screenshots and reading scripts through both MCP tool servers, as the reader
    // (its token in the environment: no process's command line holds it).
    const mcpArgs = ['mcp', '--endpoint', h.clientEndpoint, '--config-dir', path.join(h.configHome, 'tabtunnel')];
    const env = { TABTUNNEL_TOKEN: tokens.reader };
    const commandLinesWithToken = () =>
      fs.readdirSync('/proc').filter((pid) => /^\d+$/.test(pid)).filter((pid) => {
        try {
          return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(tokens.reader);
        } catch {
          return false;
        }
      });
    const devtools = await startMcpServer(h, { name: 'tabtunnel mcp (reader)', command: daemonBinary(), args: mcpArgs, env });
    try {
      const pages = await devtools.call('list_pages');
      const pageId = Number(/^\s*(\d+): .*shop\.html/m.exec(pages)?.[1]);
      assert.ok(Number.isInteger(pageId), `the reader's page in:\n${pages}`);
      assert.match(await devtools.call('take_snapshot', { pageId }), /Buy/);
      assert.deepEqual(commandLinesWithToken(), [], 'a command line holds the token (readable by any local user)');
      const shot = await devtools.callRaw('take_screenshot', { pageId });
      assert.ok(shot.content.some((c) => c.type === 'image'), 'a screenshot');
      // chrome-devtools-mcp awaits every script's result, and V8 counts an `await` as a side
      // effect: its evaluate_script says why it is refused (docs/policy.md).
      const script = await devtools.client.callTool({ name: 'evaluate_script', arguments: { pageId, function: "() => document.querySelector('#total').textContent", waitForStableDom: false } });
      assert.match(textOf(script), /read-only/, textOf(script));
    } finally {
      await devtools.close();
    }
    const playwright = await startMcpServer(h, { name: 'tabtunnel mcp --tools playwright (reader)', command: daemonBinary(), args: [...mcpArgs, '--tools', 'playwright'], env });
    try {
      await playwright.call('browser_tabs', { action: 'select', index: 0 }).catch(() => {});
      assert.match(await playwright.call('browser_snapshot'), /Buy/);
      assert.deepEqual(commandLinesWithToken(), [], 'a command line holds the token');
      const shot = await playwright.callRaw('browser_take_screenshot');
      assert.ok(shot.content.some((c) => c.type === 'image') || /screenshot/i.test(textOf(shot)), 'a screenshot');
    } finally {
      await playwright.close();
    }
    assert.equal(orders.count, 0);
    await human.close();
  });

  test('(5) a handed tab is given back, never closed, however the agent closes it', async () => {
    const { tabId } = await handToAgent(`${allowedOrigin}/other.html`, 'closer');
    const raw = await RawCdp.open(`${h.agentEndpoint('closer').replace('http:', 'ws:')}/cdp`);
    try {
      await call(raw, 'Target.setAutoAttach', { autoAttach: true, flatten: true, waitForDebuggerOnStart: false });
      const { params } = await raw.next((m) => m.method === 'Target.attachedToTarget', 'the handed tab');
      const closed = await call(raw, 'Page.close', {}, params.sessionId);
      assert.deepEqual(closed.result, {}, JSON.stringify(closed));
      await pollFor(async () => (await (await fetch(`${h.agentEndpoint('closer')}/json/list`)).json()).length === 0, WAIT_MS, 'the tab leaving the agent', h.detail);
      const tab = await h.sw((id) => chrome.tabs.get(id).then((t) => t.url, () => null), tabId);
      assert.equal(tab, `${allowedOrigin}/other.html`, 'the human still has the tab');
    } finally {
      raw.close();
    }
  });

  test('(6) a web page that learns the token cannot use it', async () => {
    // Counting tabs would see other agents' prepared tabs come and go: look for the URL.
    const target = `${h.pageServerUrl}/other.html?opened-by-a-web-page=${crypto.randomUUID()}`;
    const page = await h.browser.newPage();
    await page.goto(h.pageUrl);
    const endpoint = h.agentEndpoint('web');
    const outcomes = await page.evaluate(async (base, target) => {
      const tries = [
        fetch(`${base}/json/new?${target}`, { mode: 'no-cors' }),
        fetch(`${base}/json/new?${target}`, { mode: 'no-cors', method: 'POST' }),
        fetch(`${base}/json/new?${target}`, { method: 'PUT' }),
        fetch(`${base}/json/version`),
      ];
      navigator.sendBeacon(`${base}/json/new?${target}`);
      const img = new Image();
      img.src = `${base}/json/new?${target}`;
      return Promise.all(tries.map((p) => p.then((r) => `${r.type} ${r.status}`, (e) => `error ${e.message}`)));
    }, endpoint, target);
    assert.ok(!outcomes.some((o) => /^(basic|cors) 2/.test(o)), `a page got an answer: ${outcomes}`);
    await pollFor(() => h.logs().includes('requests from web pages are refused'), WAIT_MS, 'the daemon refusing the page', h.detail);
    assert.deepEqual(await (await fetch(`${endpoint}/json/list`)).json(), [], 'no tab was opened for the page');
    await page.close();
    const opened = await h.sw(
      async (marker) => (await chrome.tabs.query({})).filter((t) => `${t.url} ${t.pendingUrl}`.includes(marker)).length,
      target.split('=')[1],
    );
    assert.equal(opened, 0, 'no tab was opened for the page');
    // Chrome's own endpoint takes PUT for /json/new, and so do we.
    assert.equal((await fetch(`${endpoint}/json/new?about:blank`)).status, 405);
  });

  test('(8) the trail holds no token, and its plain output no control character', async () => {
    const raw = await RawCdp.open(`${h.agentEndpoint('a').replace('http:', 'ws:')}/cdp`);
    try {
      const { session } = await newPage(raw, 'about:blank');
      await call(raw, 'Page.navigate', { url: `${h.pageUrl}?t=${h.token}&a=${tokens.alice}` }, session);
      // In the path: the steps in words show no query.
      await call(raw, 'Page.navigate', { url: `${new URL(h.pageUrl).origin}/forged\u001b[2J\n2026-01-01T00:00:00.000Z  admin  tab 1  ok` }, session);
    } finally {
      raw.close();
    }
    await pollFor(async () => (await auditLines()).some((l) => l.url?.includes('forged')), WAIT_MS, 'the steps in the trail', h.detail);
    const file = fs.readFileSync(path.join(h.dataHome, 'tabtunnel', 'audit', 'audit.jsonl'), 'utf8');
    assert.ok(!file.includes(h.token) && !file.includes(tokens.alice), 'the trail holds a token');
    assert.ok(file.includes('<secret>'));
    const plain = (await tabtunnel('audit', '--agent', 'a')).stdout;
    assert.ok(!plain.includes('\u001b'), 'an escape sequence reached the terminal');
    const forged = plain.split('\n').filter((l) => l.includes('forged'));
    assert.equal(forged.length, 1, 'one step, one line');
    assert.ok(forged[0].includes('\\u{1b}'), forged[0]);
    assert.ok(!plain.split('\n').some((l) => l.startsWith('2026-01-01T00:00:00.000Z')), 'a forged line');
  });

  test('(10) a response the agent writes for another site\'s request sets no cookie there', async () => {
    const raw = await RawCdp.open(`${h.agentEndpoint('baker').replace('http:', 'ws:')}/cdp`);
    try {
      const { session } = await newPage(raw, `${allowedOrigin}/app`);
      await call(raw, 'Fetch.enable', { patterns: [{ urlPattern: `${mailOrigin}/*` }] }, session);
      const paused = raw.next((m) => m.method === 'Fetch.requestPaused', 'the request to the mail site paused', WAIT_MS);
      const fetched = evaluate(raw, session, `fetch('${mailOrigin}/pixel', { mode: 'no-cors', credentials: 'include' }).then(() => 'done', (e) => 'failed ' + e.message)`);
      const { params } = await paused;
      const planted = await call(raw, 'Fetch.fulfillRequest', { requestId: params.requestId, responseCode: 200, responseHeaders: [{ name: 'Set-Cookie', value: 'planted=1; Path=/' }] }, session);
      assert.match(planted.error?.message ?? '', /allow_origins: a Set-Cookie for localhost/, JSON.stringify(planted));
      const plain = await call(raw, 'Fetch.fulfillRequest', { requestId: params.requestId, responseCode: 200, responseHeaders: [{ name: 'X-Test', value: '1' }] }, session);
      assert.ok(plain.result, JSON.stringify(plain));
      assert.equal((await fetched).result?.result?.value, 'done');
      const cdp = await h.browser.target().createCDPSession();
      try {
        const { cookies } = await cdp.send('Storage.getCookies');
        assert.ok(!cookies.some((c) => c.name === 'planted'), JSON.stringify(cookies.map((c) => `${c.domain} ${c.name}`)));
      } finally {
        await cdp.detach();
      }
    } finally {
      raw.close();
    }
  });

  test('(11) an agent held to origins reaches no other site\'s storage, nor hears when the human uses it', async () => {
    const mailKey = `${mailOrigin}/`;
    const ownKey = `${allowedOrigin}/`;
    const raw = await recordingCdp(`${h.agentEndpoint('keeper').replace('http:', 'ws:')}/cdp`);
    const human = await h.browser.newPage();
    try {
      const { session } = await newPage(raw, `${allowedOrigin}/app`);
      // Measured before: each answered with success (the usage by type; the mail site's quota
      // set to nothing; its IndexedDB and cache writes told to the agent with their names).
      for (const [method, params] of [
        ['Storage.getUsageAndQuota', { origin: mailOrigin }],
        ['Storage.trackIndexedDBForOrigin', { origin: mailOrigin }],
        ['Storage.trackCacheStorageForStorageKey', { storageKey: mailKey }],
        ['Storage.setStorageBucketTracking', { storageKey: mailKey, enable: true }],
        ['Storage.overrideQuotaForOrigin', { origin: mailOrigin, quotaSize: 0 }],
        ['Storage.deleteStorageBucket', { bucket: { storageKey: mailKey, name: 'default' } }],
        ['Storage.clearDataForOrigin', { origin: mailOrigin, storageTypes: 'indexeddb,cache_storage' }],
        ['Storage.getTrustTokens', {}],
        ['CacheStorage.requestEntries', { cacheId: `${mailKey}|mail`, skipCount: 0, pageSize: 10 }],
        // The browser's service workers and background services: every site's.
        ['ServiceWorker.enable', {}],
        ['ServiceWorker.unregister', { scopeURL: `${mailOrigin}/` }],
        ['BackgroundService.startObserving', { service: 'pushMessaging' }],
      ]) {
        const answer = await call(raw, method, params, session);
        assert.match(answer.error?.message ?? '', /denied by tabtunnel's policy: allow_origins/, `${method}: ${JSON.stringify(answer)}`);
      }
      // Its own origin's storage is its own: read, tracked, its cache listed by the id Chrome gives.
      const usage = await call(raw, 'Storage.getUsageAndQuota', { origin: allowedOrigin }, session);
      assert.ok(typeof usage.result?.usage === 'number', JSON.stringify(usage));
      const tracked = await call(raw, 'Storage.trackCacheStorageForOrigin', { origin: allowedOrigin }, session);
      assert.ok(tracked.result, JSON.stringify(tracked));
      await evaluate(raw, session, "caches.open('own').then((c) => c.put('/mine', new Response('mine'))).then(() => 1)");
      const names = await call(raw, 'CacheStorage.requestCacheNames', { storageKey: ownKey }, session);
      const own = names.result?.caches?.find((c) => c.cacheName === 'own');
      assert.ok(own, JSON.stringify(names));
      const entries = await call(raw, 'CacheStorage.requestEntries', { cacheId: own.cacheId, skipCount: 0, pageSize: 10 }, session);
      assert.ok(entries.result?.cacheDataEntries?.some((e) => e.requestURL.endsWith('/mine')), JSON.stringify(entries));
      await pollFor(() => raw.all.some((t) => t.includes('Storage.cacheStorage') && t.includes(ownKey)), WAIT_MS, 'its own cache write told to it', h.detail);
      // The human reads their mail: the site writes its caches and IndexedDB again; nothing of
      // it reaches the agent, and the site's storage is whole.
      await human.goto(`${mailOrigin}/inbox`);
      // The inbox writes its cache after it loads (a loaded run read it before the write).
      const kept = () => human.evaluate(() => caches.open('mail').then((c) => c.match('/kept')).then((r) => r && r.text()));
      await pollFor(async () => (await kept()) === MAIL_SECRET, WAIT_MS, "the mail site's cache written and read", h.detail);
      const quota = await human.evaluate(() => navigator.storage.estimate().then((e) => e.quota));
      assert.ok(quota > 1_000_000, `the mail site's quota: ${quota}`);
      await evaluate(raw, session, '1');
      const leaked = raw.all.filter((t) => t.includes(mailOrigin) || t.includes(MAIL_SECRET));
      assert.deepEqual(leaked.filter((t) => !/denied by tabtunnel's policy/.test(t)), [], 'the mail site in what the agent got');
      const trail = await auditLines();
      assert.ok(trail.some((l) => l.agent === 'keeper' && l.method === 'Storage.trackIndexedDBForOrigin' && l.rule?.includes('allow_origins')), 'the refusal is in the trail');
    } finally {
      await human.close();
      raw.close();
    }
  });

  test('(12) no agent reads the human\'s clipboard or selection by pasting into its own page', async () => {
    const pad = `${allowedOrigin}/pad.html`;
    // The human copies a secret in a tab of theirs, then selects (only) another text: Linux's
    // primary selection.
    const human = await h.browser.newPage();
    const copied = `copied-${crypto.randomBytes(6).toString('hex')}`;
    const selected = `selected-${crypto.randomBytes(6).toString('hex')}`;
    try {
      await human.goto(pad);
      await human.type('#t', copied);
      await human.keyboard.down('Control');
      await human.keyboard.press('a');
      await human.keyboard.press('c');
      await human.keyboard.up('Control');
      await human.$eval('#t', (t, text) => { t.value = text; }, selected);
      await human.keyboard.down('Control');
      await human.keyboard.press('a');
      await human.keyboard.up('Control');
    } finally {
      await human.close();
    }
    const agent = await connectAgent(h, 'paster');
    try {
      const page = await agent.newPage();
      await page.goto(pad);
      const value = () => page.$eval('#t', (t) => t.value);
      const chord = async (modifier, key) => {
        await page.keyboard.down(modifier);
        try {
          await page.keyboard.press(key);
        } finally {
          await page.keyboard.up(modifier);
        }
      };
      // Measured before: each of these put the human's text in the agent's textarea.
      const attempts = {
        'Control+V': () => chord('Control', 'v'),
        'Shift+Insert': () => chord('Shift', 'Insert'),
        'a paste command': () => page.keyboard.press('KeyV', { commands: ['paste'] }),
        'a middle click': () => page.click('#t', { button: 'middle' }),
        'a middle click as touch': async () => {
          const cdp = await page.createCDPSession();
          try {
            const box = await (await page.$('#t')).boundingBox();
            const at = { x: Math.round(box.x + 5), y: Math.round(box.y + 5), button: 'middle', clickCount: 1 };
            await cdp.send('Input.emulateTouchFromMouseEvent', { type: 'mouseReleased', ...at });
          } finally {
            await cdp.detach();
          }
        },
      };
      for (const [name, attempt] of Object.entries(attempts)) {
        await page.focus('#t');
        await assert.rejects(attempt(), /no agent reads/, name);
        assert.equal(await value(), '', `${name} pasted`);
      }
      // What the agent was refused was there to read: the human's own tab pastes both.
      const check = await h.browser.newPage();
      try {
        await check.goto(pad);
        await check.click('#t', { button: 'middle' });
        assert.equal(await check.$eval('#t', (t) => t.value), selected, 'the human\'s selection');
        await check.$eval('#t', (t) => { t.value = ''; });
        await check.focus('#t');
        await check.keyboard.down('Control');
        await check.keyboard.press('v');
        await check.keyboard.up('Control');
        assert.equal(await check.$eval('#t', (t) => t.value), copied, 'the human\'s clipboard');
      } finally {
        await check.close();
      }
      // Typing and selecting its own text still work (after the check: a selection of its own is
      // the primary selection then).
      await page.type('#t', 'typed by the agent');
      await chord('Control', 'a');
      assert.equal(await value(), 'typed by the agent');
      const trail = await auditLines();
      assert.ok(trail.some((l) => l.agent === 'paster' && l.method === 'Input.dispatchMouseEvent' && l.rule?.startsWith('the clipboard')), 'the refused middle click is in the trail');
    } finally {
      await agent.disconnect();
    }
  });

  test('(9) popups count toward the tab limit: one past it closes, and the client sees it go', async () => {
    const raw = await RawCdp.open(`${h.agentEndpoint('popper').replace('http:', 'ws:')}/cdp`);
    const workerConsole = [];
    const onConsole = (m) => workerConsole.push(`${new Date().toISOString()} ${m.text()}`);
    h.worker.on('console', onConsole);
    try {
      await call(raw, 'Target.setDiscoverTargets', { discover: true });
      const { session } = await newPage(raw, `${allowedOrigin}/popup.html`);
      // Four popups from the page (a user gesture lets window.open through the popup blocker).
      for (let i = 0; i < 4; i += 1) {
        await evaluate(raw, session, `window.open('/other.html?${i}'); 1`, { userGesture: true });
      }
      await pollFor(
        () => raw.messages.filter((m) => m.method === 'Target.targetDestroyed').length >= 4,
        WAIT_MS,
        'the two popups past the limit going (a page and a tab target each)',
        h.detail,
      );
      const list = await (await fetch(`${h.agentEndpoint('popper')}/json/list`)).json();
      assert.equal(list.length, 3, `the agent holds ${list.map((p) => p.url)}`);
      const trail = await auditLines();
      assert.equal(trail.filter((l) => l.agent === 'popper' && l.method === 'popup' && l.rule?.includes('max-tabs-per-agent')).length, 2);
    } catch (e) {
      // A window.open's answer once came 10 s late on a loaded machine (1 of 8 runs): say what
      // the daemon and the extension's worker did meanwhile.
      e.message += `\nthe worker's console:\n${workerConsole.join('\n')}\n${h.detail()}`;
      throw e;
    } finally {
      h.worker.off('console', onConsole);
      raw.close();
    }
  });
});

describe('the extension socket and the agent limit', { timeout: 300_000 }, () => {
  let h;
  let alice;

  before(async () => {
    h = await startHarness({ name: 'trust-limits', share: false, daemonArgs: ['--max-agents', '2'] });
    const run = promisify(execFile);
    alice = (await run(daemonBinary(), ['agent', 'add', 'alice'], { env: { ...process.env, XDG_CONFIG_HOME: h.configHome } })).stdout.trim();
    await pollFor(() => h.logs().includes("agents' credentials reloaded"), WAIT_MS, 'the daemon reading the token', h.detail);
  });

  after(async () => {
    await h?.close();
  });

  test('(1) made-up names cannot lock out a registered agent or the plain endpoint', async () => {
    const made = [];
    try {
      for (const name of ['x1', 'x2', 'x3']) {
        const raw = await RawCdp.open(`${h.agentEndpoint(name).replace('http:', 'ws:')}/cdp`);
        made.push(raw);
        made[name] = await raw.send(1, 'Browser.getVersion');
      }
      assert.match(made.x3.error?.message ?? '', /at most 2 agents/);
      for (const url of [`ws://127.0.0.1:${h.port}/${alice}/cdp`, h.wsEndpoint]) {
        const raw = await RawCdp.open(url);
        try {
          const answer = await raw.send(1, 'Browser.getVersion');
          assert.ok(answer.result, `${url} did not get in: ${JSON.stringify(answer)}\n${h.detail()}`);
        } finally {
          raw.close();
        }
      }
    } finally {
      for (const raw of made) raw.close();
    }
  });

  test('(7) a local process with the client token is never the extension, even while the worker is away', async () => {
    const forged = { Origin: `chrome-extension://${EXTENSION_ID}` };
    const tries = [`ws://127.0.0.1:${h.port}/${h.token}/extension`, `ws://127.0.0.1:${h.port}/extension?token=${h.token}`];
    const refused = async () => {
      for (const url of tries) {
        const attempt = await tryWebSocket(url, forged);
        if (attempt.opened) attempt.ws.terminate();
        assert.equal(attempt.status, 403, `${url}: ${JSON.stringify({ opened: attempt.opened, status: attempt.status })}`);
      }
    };
    await refused();
    // Chrome stops the worker: the daemon is without an extension for a while.
    await h.stopWorker();
    await pollFor(async () => (await fetch(`${h.clientEndpoint}/json/version`)).status === 503, WAIT_MS, 'the daemon without its extension', h.detail);
    await refused();
    // The real extension comes back and is taken.
    await pollFor(async () => (await fetch(`${h.clientEndpoint}/json/version`)).status === 200, 60_000, 'the real extension back', h.detail);
    assert.ok(!h.logs().includes('extension rejected'), h.detail());
  });
});
