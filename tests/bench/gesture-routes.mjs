// Which mechanism catches which route of a gesture (issue 16's design question), measured in real
// Chromium over direct CDP on a page session, as the extension's `chrome.debugger` session is one:
//
//   node tests/bench/gesture-routes.mjs        (prints one table per mechanism, and timings)
//
// A local server counts every write (POST, PUT, DELETE) it receives, by path, so "reached the
// server" is what the server saw, not what the browser said. Each route is one script the
// agent could run (Runtime.evaluate) or one input command. Mechanisms measured:
//   1. the network layer: Fetch.enable on the page session (Document, XHR, Fetch, Ping, Other,
//      CSPViolationReport at the request stage), requests held until continued; with and without
//      Fetch on auto-attached child sessions (OOPIFs, workers) and Network.setBypassServiceWorker;
//   2. input inspection at the point (DOM.getNodeForLocation, an isolated world, the
//      accessibility tree): what it resolves and what it costs;
//   3. hooks in the page: an isolated world's capturing listeners, a main-world override;
//   4. DOMDebugger XHR breakpoints;
//   5. keys: Enter in a field, Space on a button, Input.insertText with a line break;
//   6. what a page session still runs while one of its requests is paused (a form submission,
//      a fetch): whether the page can be read then.
// Note for 2: DOM.getNodeForLocation takes document coordinates, Input viewport ones (a scrolled
// page hit what lay above the button until the scroll offset was added).
// `--only=network,sw,inspection,hooks,xhr,keys,paused` runs some sections.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import { WebSocketServer } from 'ws';

import { removeTree } from '../e2e/harness.mjs';
import { CdpClient } from './cdp-client.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// The site: pages for every route, and a count of the writes that reached it.

const writes = [];
function page(body, head = '') {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>routes</title>${head}</head><body>${body}</body></html>`;
}

const PAGES = {
  '/shop.html': page(`
<h1>Checkout</h1><p>Total <b id="total">€1,240.00</b></p>
<form id="pay" method="post" action="/pay">
  <label>Card number <input id="card" name="cardnumber" autocomplete="cc-number"></label>
  <label>CVC <input id="cvc" name="cvc" autocomplete="cc-csc"></label>
  <button id="paybtn" type="submit"><span id="paylabel">Pay €1,240.00</span></button>
</form>
<button id="fetchbtn" type="button">Pay with saved card</button>
<div id="host"></div>
<iframe id="same" src="/inner.html"></iframe>
<iframe id="cross" src="http://localhost:{PORT}/inner.html"></iframe>
<script>
  document.getElementById('fetchbtn').addEventListener('click', () => fetch('/api/pay', { method: 'POST', body: '{"amount":1240}' }));
  const root = document.getElementById('host').attachShadow({ mode: 'open' });
  root.innerHTML = '<button id="shadowbtn">Delete this repository</button>';
  root.getElementById('shadowbtn').addEventListener('click', () => fetch('/api/delete', { method: 'POST' }));
  window.worker = new Worker('/worker.js');
</script>`),
  '/inner.html': page(`<form method="post" action="/inner-post"><button id="innerbtn">Delete</button></form>
<script>window.post = () => fetch('/inner-fetch', { method: 'POST', body: 'x' }); if (location.search === '?post') post();</script>`),
  '/worker.js': `self.onmessage = () => fetch('/worker-post', { method: 'POST', body: 'x' });`,
  '/sw.js': `self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (e) => { if (e.request.url.includes('/swscope/')) e.respondWith(fetch(e.request)); });
self.addEventListener('message', () => fetch('/sw-own-post', { method: 'POST', body: 'x' }));`,
  '/swpage.html': page(`<script>navigator.serviceWorker.register('/sw.js').then(() => navigator.serviceWorker.ready).then(() => { window.swReady = true; });</script>`),
  '/keys.html': page(`
<form id="search" method="get" action="/search"><input id="q" name="q"><button id="go">Search</button></form>
<form id="login" method="post" action="/password"><input id="pw" type="password" name="password"><textarea id="ta" name="t"></textarea>
<button id="save" type="submit">Change password</button></form>`),
};

function startSite() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'OPTIONS') {
      writes.push(`${req.method} ${url.pathname}`);
      req.resume();
      res.writeHead(204, { 'access-control-allow-origin': '*' });
      return res.end();
    }
    const body = PAGES[url.pathname]?.replaceAll('{PORT}', String(server.address().port));
    if (body === undefined) {
      res.writeHead(url.pathname.startsWith('/swscope/') || url.pathname === '/search' ? 200 : 404, { 'content-type': 'text/html' });
      return res.end(page('ok'));
    }
    const type = url.pathname.endsWith('.js') ? 'text/javascript' : 'text/html; charset=utf-8';
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body);
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => ws.on('message', () => writes.push('WS message')));
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

// ---------------------------------------------------------------------------------------------
// The browser, over its own debugging port.

async function startChromium() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gesture-routes-'));
  const child = spawn(
    process.env.CHROMIUM ?? 'chromium',
    ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', `--user-data-dir=${dir}`, '--remote-debugging-port=0', 'about:blank'],
    { stdio: 'ignore' },
  );
  const file = path.join(dir, 'DevToolsActivePort');
  for (let i = 0; i < 200 && !fs.existsSync(file); i += 1) await sleep(50);
  const [port, wsPath] = fs.readFileSync(file, 'utf8').split('\n');
  return { child, dir, ws: `ws://127.0.0.1:${port}${wsPath}` };
}

/** One page session with the events it got. */
async function openPage(browser, url) {
  const { targetId } = await browser.send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await browser.send('Target.attachToTarget', { targetId, flatten: true });
  const s = {
    targetId,
    sessionId,
    send: (m, p = {}, sid = sessionId) => browser.send(m, p, sid),
    children: new Map(),
  };
  await s.send('Page.enable');
  await s.send('Runtime.enable');
  if (url) await navigate(s, url);
  return s;
}

async function navigate(s, url) {
  await s.send('Page.navigate', { url });
  await sleep(700);
}

// With user activation, as an agent that clicked something first has it.
const evaluate = (s, expression, sid) =>
  s.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true, userGesture: true }, sid).then((r) => r.result?.value);

// ---------------------------------------------------------------------------------------------
// 1. The network layer

const WRITE_TYPES = ['Document', 'XHR', 'Fetch', 'Ping', 'Other', 'CSPViolationReport'];
const PATTERNS = WRITE_TYPES.map((resourceType) => ({ urlPattern: '*', resourceType, requestStage: 'Request' }));

const ROUTES = [
  ['form.submit() (main frame)', `document.getElementById('pay').submit()`],
  ['form.requestSubmit()', `document.getElementById('pay').requestSubmit()`],
  ['button.click() (a script click)', `document.getElementById('paybtn').click()`],
  ['dispatchEvent(click) on the submit button', `document.getElementById('paybtn').dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true}))`],
  ["a click handler's fetch POST", `document.getElementById('fetchbtn').click()`],
  ['fetch POST from a script', `fetch('/direct', {method: 'POST', body: 'x'}); 1`],
  ['XMLHttpRequest DELETE', `(() => { const x = new XMLHttpRequest(); x.open('DELETE', '/xhr'); x.send(); })()`],
  ['navigator.sendBeacon', `navigator.sendBeacon('/beacon', 'x')`],
  ['fetch keepalive, then navigate away', `fetch('/keepalive', {method: 'POST', body: 'x', keepalive: true}); 1`],
  ['same-origin iframe: its form', `document.getElementById('same').contentDocument.forms[0].submit()`],
  ['about:blank iframe made by a script: its fetch', `(() => { const f = document.createElement('iframe'); document.body.append(f); f.contentWindow.fetch('/blank-fetch', {method: 'POST', body: 'x'}); })()`],
  ['about:blank iframe made by a script: a form in it', `(() => { const f = document.createElement('iframe'); document.body.append(f); const d = f.contentDocument; d.body.innerHTML = '<form method=post action="' + location.origin + '/blank-form"><input name=a value=1></form>'; d.forms[0].submit(); })()`],
  ['cross-site iframe (OOPIF): its own fetch', `document.getElementById('cross').src = 'http://localhost:' + location.port + '/inner.html?post'`],
  ['dedicated worker: its fetch', `window.worker.postMessage(1)`],
  ['form with target=_blank (a popup)', `(() => { const f = document.getElementById('pay'); f.target = '_blank'; f.submit(); f.target = ''; })()`],
  ["window.open('') and a form written into it", `(() => { const w = window.open(''); w.document.body.innerHTML = '<form method=post action="' + location.origin + '/popup-form"></form>'; w.document.forms[0].submit(); })()`],
  ['WebSocket message', `new Promise((r) => { const ws = new WebSocket(location.origin.replace('http', 'ws')); ws.onopen = () => { ws.send('pay'); r(1); }; })`],
];

async function networkLayer(browser, origin, { children }) {
  const rows = [];
  for (const [name, script] of ROUTES) {
    process.stderr.write(`network: ${name}\n`);
    const s = await openPage(browser, null);
    const paused = [];
    const onPaused = (sid) => (e) => {
      const { method, url } = e.params.request;
      paused.push(`${method} ${new URL(url).pathname}`);
      // A write is held: continued only after the server count was read. Reads go on at once.
      const after = method === 'GET' ? 0 : 1500;
      setTimeout(() => browser.send('Fetch.continueRequest', { requestId: e.params.requestId }, sid).catch(() => {}), after);
    };
    s.listen = onPaused;
    browser.listeners.set(s.sessionId, (m) => {
      if (m.method === 'Fetch.requestPaused') onPaused(m.sessionId)(m);
    });
    await s.send('Fetch.enable', { patterns: PATTERNS });
    if (children) {
      await s.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true });
    }
    await navigate(s, `${origin}/shop.html`);
    const before = writes.length;
    try {
      await evaluate(s, script);
    } catch (e) {
      rows.push([name, `(script failed: ${e.message.slice(0, 80)})`, '', '']);
      continue;
    }
    await sleep(1200);
    const reachedWhileHeld = writes.slice(before);
    const wasPaused = paused.filter((p) => !p.startsWith('GET'));
    rows.push([name, wasPaused.join(', ') || '-', reachedWhileHeld.join(', ') || '-', wasPaused.length && !reachedWhileHeld.length ? 'held' : 'NOT held']);
    await sleep(600);
    await browser.send('Target.closeTarget', { targetId: s.targetId }).catch(() => {});
  }
  return rows;
}

async function serviceWorkerRoutes(browser, origin) {
  const rows = [];
  for (const bypass of [false, true]) {
    const s = await openPage(browser, `${origin}/swpage.html`);
    for (let i = 0; i < 40 && !(await evaluate(s, 'window.swReady === true')); i += 1) await sleep(100);
    process.stderr.write('sw: registered\n');
    await s.send('Page.reload');
    await sleep(700);
    process.stderr.write(`sw: controlled ${await evaluate(s, 'Boolean(navigator.serviceWorker.controller)')}\n`);
    const paused = [];
    browser.listeners.set(s.sessionId, (m) => {
      if (m.method !== 'Fetch.requestPaused') return;
      paused.push(`${m.params.request.method} ${new URL(m.params.request.url).pathname}`);
      setTimeout(() => browser.send('Fetch.continueRequest', { requestId: m.params.requestId }, m.sessionId).catch(() => {}), 400);
    });
    if (bypass) {
      await s.send('Network.enable');
      await s.send('Network.setBypassServiceWorker', { bypass: true });
    }
    await s.send('Fetch.enable', { patterns: PATTERNS });
    process.stderr.write(`sw: bypass ${bypass}\n`);
    for (const [name, script] of [
      ['fetch POST through the service worker', `fetch('/swscope/post', {method: 'POST', body: 'x'}); 1`],
      ["the service worker's own fetch (postMessage)", `navigator.serviceWorker.controller.postMessage(1)`],
      ['fetch POST the service worker lets fall through (no respondWith)', `fetch('/direct', {method: 'POST', body: 'x'}); 1`],
    ]) {
      const before = writes.length;
      paused.length = 0;
      await evaluate(s, script).catch(() => {});
      await sleep(250);
      const reached = writes.slice(before);
      const held = paused.filter((p) => !p.startsWith('GET'));
      rows.push([`${name}${bypass ? ', bypassServiceWorker' : ''}`, held.join(', ') || '-', reached.join(', ') || '-', held.length && !reached.length ? 'held' : 'NOT held']);
      await sleep(500);
    }
    await browser.send('Target.closeTarget', { targetId: s.targetId }).catch(() => {});
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// 2. Input inspection at the point

const FACTS = `function () {
  let el = this.nodeType === 1 ? this : this.parentElement;
  const act = el && el.closest('button, a[href], input, select, textarea, summary, label, [role=button], [role=link], [onclick]');
  el = act || el;
  const form = el && el.form !== undefined ? el.form : el && el.closest('form');
  return { tag: el && el.tagName, text: el && (el.innerText || el.value || el.getAttribute('aria-label') || '').trim().slice(0, 80),
    form: form ? { action: form.action, method: form.method, fields: [...form.elements].map((f) => f.autocomplete || f.type) } : null };
}`;

async function inspection(browser, origin) {
  const s = await openPage(browser, `${origin}/shop.html`);
  await sleep(500);
  const rect = async (expr) => evaluate(s, `(() => { const r = (${expr}).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`);
  const points = [
    ['a span inside the submit button', `document.getElementById('paylabel')`],
    ['a button in an open shadow root', `document.getElementById('host').shadowRoot.getElementById('shadowbtn')`],
    ['a button in a same-origin iframe', `(() => { const f = document.getElementById('same'); const b = f.contentDocument.getElementById('innerbtn').getBoundingClientRect(); const o = f.getBoundingClientRect(); return { getBoundingClientRect: () => ({ x: o.x + f.clientLeft + b.x, y: o.y + f.clientTop + b.y, width: b.width, height: b.height }) }; })()`],
    ['a button in a cross-site iframe (OOPIF)', `(() => { const f = document.getElementById('cross'); const o = f.getBoundingClientRect(); return { getBoundingClientRect: () => ({ x: o.x + 20, y: o.y + 12, width: 0, height: 0 }) }; })()`],
  ];
  const rows = [];
  const worlds = new Map();
  const timings = { hit: [], world: [], facts: [], ax: [] };
  await evaluate(s, 'window.scrollTo(0, 40)');
  for (let round = 0; round < 20; round += 1) {
    for (const [name, expr] of points) {
      const [x, y] = await rect(expr);
      let t = performance.now();
      const { cssVisualViewport: v } = await s.send('Page.getLayoutMetrics');
      const hit = await s.send('DOM.getNodeForLocation', { x: Math.round(x + v.pageX), y: Math.round(y + v.pageY), includeUserAgentShadowDOM: false, ignorePointerEventsNone: true });
      timings.hit.push(performance.now() - t);
      t = performance.now();
      let contextId = worlds.get(hit.frameId);
      if (!contextId) {
        contextId = (await s.send('Page.createIsolatedWorld', { frameId: hit.frameId, worldName: 'guard' })).executionContextId;
        worlds.set(hit.frameId, contextId);
        timings.world.push(performance.now() - t);
      }
      t = performance.now();
      const { object } = await s.send('DOM.resolveNode', { backendNodeId: hit.backendNodeId, executionContextId: contextId });
      const facts = await s.send('Runtime.callFunctionOn', { objectId: object.objectId, functionDeclaration: FACTS, returnByValue: true });
      await s.send('Runtime.releaseObject', { objectId: object.objectId });
      timings.facts.push(performance.now() - t);
      t = performance.now();
      const ax = await s.send('Accessibility.getPartialAXTree', { backendNodeId: hit.backendNodeId, fetchRelatives: false }).catch((e) => ({ error: e.message }));
      timings.ax.push(performance.now() - t);
      if (round === 0) {
        const named = ax.nodes?.slice(0, 1).map((n) => `${n.role?.value} "${n.name?.value ?? ''}"${n.ignored ? ' (ignored)' : ''}`)[0];
        rows.push([name, `${facts.result.value.tag} "${facts.result.value.text}"`, facts.result.value.form ? `${facts.result.value.form.method} ${new URL(facts.result.value.form.action).pathname} [${facts.result.value.form.fields.join(' ')}]` : '-', named ?? ax.error ?? '-']);
      }
    }
  }
  await browser.send('Target.closeTarget', { targetId: s.targetId }).catch(() => {});
  return { rows, timings };
}

// ---------------------------------------------------------------------------------------------
// 3. Hooks in the page

async function hooks(browser, origin) {
  const s = await openPage(browser, `${origin}/shop.html`);
  const world = (await s.send('Page.createIsolatedWorld', { frameId: s.targetId, worldName: 'hooks' })).executionContextId;
  await s.send('Runtime.evaluate', { contextId: world, expression: `window.seen = []; for (const t of ['click', 'submit', 'keydown']) addEventListener(t, (e) => { seen.push(t + ':' + (e.target.id || e.target.tagName)); if (t === 'submit') e.preventDefault(); }, true); 1` });
  // Everything that would submit is counted at the server; the hooks only observe.
  const rows = [];
  const seen = async () => (await s.send('Runtime.evaluate', { contextId: world, expression: 'seen.splice(0)', returnByValue: true })).result.value;
  for (const [name, script] of [
    ['el.click()', `document.getElementById('paybtn').click()`],
    ['dispatchEvent(click)', `document.getElementById('paybtn').dispatchEvent(new MouseEvent('click', {bubbles: true}))`],
    ['form.requestSubmit()', `document.getElementById('pay').requestSubmit()`],
    ['form.submit()', `document.getElementById('pay').submit(); 1`],
    ['fetch POST', `fetch('/direct', {method: 'POST'}); 1`],
    ["el.click() after the agent's own capturing listener stops it", `addEventListener('click', (e) => e.stopImmediatePropagation(), true); document.getElementById('fetchbtn').click()`],
  ]) {
    await navigate(s, `${origin}/shop.html`);
    await s.send('Runtime.evaluate', { contextId: (await s.send('Page.createIsolatedWorld', { frameId: s.targetId, worldName: 'hooks' })).executionContextId, expression: '1' });
    const w = (await s.send('Page.createIsolatedWorld', { frameId: s.targetId, worldName: 'hooks2' })).executionContextId;
    await s.send('Runtime.evaluate', { contextId: w, expression: `window.seen = []; for (const t of ['click', 'submit']) addEventListener(t, (e) => { seen.push(t); if (t === 'submit') e.preventDefault(); }, true); 1` });
    const before = writes.length;
    // The agent's listener registered first wins: run it before the hook in the last route.
    await evaluate(s, script).catch(() => {});
    await sleep(300);
    const got = (await s.send('Runtime.evaluate', { contextId: w, expression: 'seen', returnByValue: true })).result.value;
    rows.push([name, got.join(', ') || 'nothing', writes.slice(before).join(', ') || '-']);
  }
  void seen;
  // A main-world override of HTMLFormElement.prototype.submit, and a fresh iframe's prototype.
  await navigate(s, `${origin}/shop.html`);
  const before = writes.length;
  const bypass = await evaluate(s, `(() => { HTMLFormElement.prototype.submit = function () { window.blocked = true; };
    const f = document.createElement('iframe'); document.body.append(f);
    f.contentWindow.HTMLFormElement.prototype.submit.call(document.getElementById('pay')); return window.blocked === true; })()`);
  await sleep(300);
  rows.push(['main-world override of form.submit, called through a fresh iframe', bypass ? 'override ran' : 'override bypassed', writes.slice(before).join(', ') || '-']);
  await browser.send('Target.closeTarget', { targetId: s.targetId }).catch(() => {});
  return rows;
}

// ---------------------------------------------------------------------------------------------
// 4. XHR breakpoints, 5. keys

async function xhrBreakpoints(browser, origin) {
  const s = await openPage(browser, `${origin}/shop.html`);
  await s.send('Debugger.enable');
  await s.send('DOMDebugger.setXHRBreakpoint', { url: '' });
  const rows = [];
  let pausedCount = 0;
  browser.listeners.set(s.sessionId, (m) => {
    if (m.method === 'Debugger.paused') {
      pausedCount += 1;
      browser.send('Debugger.resume', {}, s.sessionId).catch(() => {});
    }
  });
  for (const [name, script] of [
    ['fetch POST', `fetch('/direct', {method: 'POST'}).then(() => 1, () => 0)`],
    ['form.submit()', `document.getElementById('pay').submit(); 1`],
    ['sendBeacon', `navigator.sendBeacon('/beacon', 'x')`],
  ]) {
    pausedCount = 0;
    await navigate(s, `${origin}/shop.html`);
    await s.send('DOMDebugger.setXHRBreakpoint', { url: '' });
    s.send('Runtime.evaluate', { expression: script, awaitPromise: true }).catch(() => {});
    await sleep(400);
    rows.push([name, pausedCount ? 'paused' : 'not paused']);
  }
  await browser.send('Target.closeTarget', { targetId: s.targetId }).catch(() => {});
  return rows;
}

async function pausedReads(browser, origin) {
  const rows = [];
  for (const [name, script] of [
    ['a form submission (Document POST)', `document.getElementById('pay').submit(); 1`],
    ['a fetch POST', `fetch('/direct', {method: 'POST', body: 'x'}); 1`],
  ]) {
    const s = await openPage(browser, `${origin}/shop.html`);
    let paused = null;
    browser.listeners.set(s.sessionId, (m) => {
      if (m.method === 'Fetch.requestPaused' && m.params.request.method !== 'GET') paused = m.params.requestId;
      else if (m.method === 'Fetch.requestPaused') browser.send('Fetch.continueRequest', { requestId: m.params.requestId }, s.sessionId).catch(() => {});
    });
    await s.send('Fetch.enable', { patterns: PATTERNS });
    await evaluate(s, script);
    for (let i = 0; i < 40 && !paused; i += 1) await sleep(50);
    const within = (p) => Promise.race([p.then(() => 'answered', (e) => `error: ${e.message.slice(0, 40)}`), sleep(2000).then(() => 'no answer in 2 s')]);
    rows.push([
      name,
      await within(s.send('Runtime.evaluate', { expression: '1' })),
      await within(s.send('DOM.getDocument', { depth: 0 })),
      await within(s.send('Page.getFrameTree')),
      // The main frame's id is the page's target id.
      await within(s.send('Page.createIsolatedWorld', { frameId: s.targetId, worldName: 'paused' })),
    ]);
    await browser.send('Fetch.failRequest', { requestId: paused, errorReason: 'Aborted' }, s.sessionId).catch(() => {});
    await browser.send('Target.closeTarget', { targetId: s.targetId }).catch(() => {});
  }
  return rows;
}

async function keys(browser, origin) {
  const s = await openPage(browser, `${origin}/keys.html`);
  const rows = [];
  const key = (type, k) => s.send('Input.dispatchKeyEvent', { type, ...k });
  const ENTER = { key: 'Enter', code: 'Enter', windowsVirtualKeyCode: 13, text: '\r' };
  const SPACE = { key: ' ', code: 'Space', windowsVirtualKeyCode: 32, text: ' ' };
  const cases = [
    ['Enter (keyDown with text) in the password field', '#pw', async () => { await key('keyDown', ENTER); await key('keyUp', ENTER); }],
    ['Enter as rawKeyDown + char in the password field', '#pw', async () => { await key('rawKeyDown', { ...ENTER, text: undefined }); await key('char', ENTER); await key('keyUp', ENTER); }],
    ['Enter as rawKeyDown alone', '#pw', async () => { await key('rawKeyDown', { ...ENTER, text: undefined }); await key('keyUp', ENTER); }],
    ['Space keyDown alone on the submit button', '#save', async () => key('keyDown', SPACE)],
    ['Space keyUp alone on the submit button', '#save', async () => key('keyUp', SPACE)],
    ['Space keyDown + keyUp on the submit button', '#save', async () => { await key('keyDown', SPACE); await key('keyUp', SPACE); }],
    ['Enter keyDown on the submit button', '#save', async () => key('keyDown', ENTER)],
    ['Input.insertText "\\n" in the password field', '#pw', async () => s.send('Input.insertText', { text: '\n' })],
    ['Input.insertText "\\r" in the password field', '#pw', async () => s.send('Input.insertText', { text: '\r' })],
    ['Input.insertText "\\n" in a textarea', '#ta', async () => s.send('Input.insertText', { text: '\n' })],
    ['Input.imeSetComposition + commit "\\n"', '#pw', async () => { await s.send('Input.imeSetComposition', { text: '\n', selectionStart: 1, selectionEnd: 1 }); await s.send('Input.insertText', { text: '' }); }],
  ];
  for (const [name, focus, act] of cases) {
    await navigate(s, `${origin}/keys.html`);
    await evaluate(s, `document.querySelector('${focus}').focus()`);
    const before = writes.length;
    await act();
    await sleep(400);
    rows.push([name, writes.slice(before).join(', ') || '-']);
  }
  await browser.send('Target.closeTarget', { targetId: s.targetId }).catch(() => {});
  return rows;
}

// ---------------------------------------------------------------------------------------------

function table(title, head, rows) {
  console.log(`\n### ${title}\n`);
  console.log(`| ${head.join(' | ')} |`);
  console.log(`|${head.map(() => '---').join('|')}|`);
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)];

async function main() {
  const site = await startSite();
  const origin = `http://127.0.0.1:${site.address().port}`;
  const chrome = await startChromium();
  const listeners = new Map();
  const childOf = new Map();
  const browser = await CdpClient.open(chrome.ws, {
    onEvent: (m) => {
      if (m.method === 'Target.attachedToTarget' && m.sessionId) {
        const child = m.params.sessionId;
        childOf.set(child, { parent: m.sessionId, url: m.params.targetInfo.url });
        listeners.set(child, (e) => listeners.get(m.sessionId)?.(e));
        // The guard's own set-up of a child before it runs.
        browser.send('Fetch.enable', { patterns: PATTERNS }, child)
          .then(() => browser.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true }, child))
          .catch(() => {})
          .finally(() => browser.send('Runtime.runIfWaitingForDebugger', {}, child).catch(() => {}));
      }
      listeners.get(m.sessionId)?.(m);
    },
  });
  browser.listeners = listeners;
  browser.childOf = childOf;
  try {
    const version = await browser.send('Browser.getVersion');
    console.log(`# ${version.product}, ${new Date().toISOString()}`);
    const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7).split(',');
    const run = (section) => !only || only.includes(section);
    if (run('network')) {
      table('1a. Fetch on the page session only', ['route', 'paused', 'reached the server while paused', ''], await networkLayer(browser, origin, { children: false }));
      table('1b. Fetch on the page and on every auto-attached child (waitForDebuggerOnStart)', ['route', 'paused', 'reached the server while paused', ''], await networkLayer(browser, origin, { children: true }));
    }
    if (run('sw')) table('1c. Service workers', ['route', 'paused', 'reached the server while paused', ''], await serviceWorkerRoutes(browser, origin));
    if (run('inspection')) {
      const { rows, timings } = await inspection(browser, origin);
      table('2. Input inspection at the point', ['point', 'element (isolated world)', 'its form', 'accessibility tree'], rows);
      console.log(`\ncost per press (ms, median / p95 over ${timings.hit.length}): getNodeForLocation ${median(timings.hit).toFixed(2)} / ${p95(timings.hit).toFixed(2)}; ` +
        `resolveNode + callFunctionOn + releaseObject ${median(timings.facts).toFixed(2)} / ${p95(timings.facts).toFixed(2)}; ` +
        `getPartialAXTree ${median(timings.ax).toFixed(2)} / ${p95(timings.ax).toFixed(2)}; createIsolatedWorld (once per frame) ${median(timings.world).toFixed(2)}`);
    }
    if (run('hooks')) table('3. Hooks in the page (an isolated world listening, capturing, on window)', ['route', 'the hook saw', 'reached the server'], await hooks(browser, origin));
    if (run('xhr')) table('4. DOMDebugger.setXHRBreakpoint', ['route', 'script paused'], await xhrBreakpoints(browser, origin));
    if (run('keys')) table('5. Keys', ['input', 'reached the server'], await keys(browser, origin));
    if (run('paused')) {
      table('6. The page session while a write is paused', ['paused', 'Runtime.evaluate', 'DOM.getDocument', 'Page.getFrameTree', 'Page.createIsolatedWorld'], await pausedReads(browser, origin));
    }
  } finally {
    browser.close();
    chrome.child.kill('SIGKILL');
    site.close();
    site.closeAllConnections?.();
    await sleep(300);
    await removeTree(chrome.dir);
  }
}

await main();
process.exit(0);
