// Red team run 9 (on main 4563ab6): a malicious agent (a CDP client with its own endpoint)
// against the off-tab write rules (A: shared and service workers, prerendering), leaving and
// hand-over (B: popups, another agent, the kill switch and Take back racing a hand-over's reload,
// history, writes sent as the page unloads), its identity (C: the extension's and the browser's
// pages, targets and data, browser-wide methods), another agent's ids (D) and Allow once (E:
// replays, the agent's own interception of the allowed request). Each test asserts the safe
// outcome: a failure is a break. A failure may leave a timer that pays into a later test's
// count: run the failing one alone (--test-name-pattern).

import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';

import { PAY_FROM_A_DATA_WORKER, PAY_FROM_A_SHARED_WORKER, QUESTION, WAIT_MS, WATCH_MS, attackKit } from './attack-kit.mjs';
import { PAY_EVERY_300_MS, gestureSites } from './gesture-sites.mjs';
import { EXTENSION_ID, EXTENSION_ORIGIN, RawCdp, connectAgent, pollFor, rawGet, sleep, startHarness, withTimeout } from './harness.mjs';

const PAY_SRC = `(${PAY_EVERY_300_MS.toString()})()`;
const OUR_PAGE = `${EXTENSION_ORIGIN}/sidepanel.html`;

/** The site's own relay worker: a shared worker that sends what its pages ask it to (sites sync
 *  tabs this way). */
const RELAY_WORKER = `onconnect = (e) => { const port = e.ports[0];
  port.onmessage = (m) => fetch(m.data.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: m.data.body })
    .then((r) => port.postMessage('sent ' + r.status), (err) => port.postMessage('refused: ' + err.message)); };`;

/** A page of the site's that starts its relay worker. */
const RELAY_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>relay</title></head><body><h1>relay</h1>
<script>window.relay = new SharedWorker('/shop/relay.js'); window.relay.port.start();</script></body></html>`;

/** The service worker an agent writes (fulfilled through its interception): it pays whenever a
 *  page of the site loads. */
const AGENT_SW = `self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (e) => {
  if (e.request.mode === 'navigate') fetch('/shop/api/pay', { method: 'POST', body: '{"sw":1}' }).catch(() => {});
});`;

describe('red team 9', { timeout: 1_500_000 }, () => {
  let h;
  let site;
  let panel;
  let v6; // a server on [::1] with the same site
  let v6Url;

  before(async () => {
    site = gestureSites();
    const pages = {
      ...site.pages,
      '/shop/relay.js': (req, res) => {
        res.writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'no-store' });
        res.end(RELAY_WORKER);
      },
      '/shop/relay': (req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        res.end(RELAY_PAGE);
      },
      '/rt9/cacheable': (req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end('<!doctype html><html><head><meta charset="utf-8"><title>cacheable</title></head><body><h1>cacheable</h1></body></html>');
      },
      '/rt9/to-ext': (req, res) => {
        res.writeHead(302, { location: OUR_PAGE });
        res.end();
      },
      '/rt9/refresh-ext': (req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        res.end(`<!doctype html><meta http-equiv="refresh" content="0;url=${OUR_PAGE}"><title>refresh</title>`);
      },
    };
    h = await startHarness({ name: 'redteam9', share: false, extraPages: pages, extensionPermissions: ['webRequest'] });
    panel = await h.openPanel();
    v6 = http.createServer((req, res) => {
      const u = new URL(req.url, 'http://x');
      const f = pages[u.pathname];
      if (typeof f === 'function') return f(req, res, u);
      res.writeHead(404);
      res.end();
    });
    await new Promise((r) => v6.listen(0, '::1', r));
    v6Url = `http://[::1]:${v6.address().port}`;
  });

  after(async () => {
    v6?.close();
    await h?.close();
  });

  const { url, payments, tabOf, sharedTabIds, unshared, denyAll, asked, focusTab, handPanelTabTo, handTo, noPaymentAfter } = attackKit(() => ({ h, panel, site }));
  const port = () => new URL(h.pageServerUrl).port;
  const tabIdsAt = (u) => h.sw((x) => chrome.tabs.query({ url: x }).then((ts) => ts.map((t) => t.id)), u);
  /** Closes the tabs at `u` (a match pattern), never the human's own test tab. */
  const closeTabsAt = (u) =>
    h.sw((x, keep) => chrome.tabs.query({ url: x }).then((ts) => Promise.all(ts.filter((t) => t.id !== keep).map((t) => chrome.tabs.remove(t.id)))), u, h.tabId).catch(() => {});
  /** Closes every page an agent's connection has (its tabs outlive the connection a while, and a
   *  host they show keeps the off-tab rules on it), then disconnects. */
  async function closeAll(browser) {
    if (!browser) return;
    for (const p of await browser.pages().catch(() => [])) await p.close().catch(() => {});
    await browser.disconnect().catch(() => {});
  }

  /** The human's tab back from whoever holds it, if anyone does (after a failed test). */
  async function giveBack() {
    if (!(await sharedTabIds().catch(() => [])).includes(h.tabId)) return;
    await focusTab(h.tabId).catch(() => {});
    await panel.click('#take-back').catch(() => {});
    await pollFor(unshared(h.tabId), WAIT_MS, 'taken back', h.detail).catch(() => {});
  }

  /** `act` resolves with a worker's outcome: refused, and no payment reached the server. */
  async function refused(what, act) {
    const before = payments();
    const outcome = await act();
    await sleep(WATCH_MS);
    console.log(`${what}: ${outcome}`);
    assert.equal(payments() - before, 0, `${what}: a payment reached the server (${outcome})`);
    assert.match(outcome, /^refused/, `${what}: the worker's payment`);
  }

  // ---- C: identity ---------------------------------------------------------------------------

  /** The real browser's documents off the web (the test's hands, not the product): each page or
   *  frame target whose URL is not the web, with what its document is (an error page Chrome shows
   *  for a blocked navigation carries the blocked URL but runs nothing of it). The panel the test
   *  opened is left out. */
  async function documentsOffTheWeb() {
    const out = [];
    for (const t of h.browser.targets()) {
      const u = t.url();
      if (!['page', 'iframe', 'other', 'background_page', 'webview'].includes(t.type())) continue;
      if (/^(https?:|about:|data:|javascript:|blob:https?:|chrome-error:)/.test(u) || u === '') continue;
      if (h.panel && t === h.panel.target()) continue;
      // Chrome's own window UI (the omnibox popup it preloads at times), no page's.
      if (/^chrome:\/\/[a-z-]+\.top-chrome\//.test(u)) continue;
      const href = await withTimeout(
        (async () => {
          const session = await t.createCDPSession();
          try {
            const r = await session.send('Runtime.evaluate', { expression: "`${location.href} ${typeof chrome !== 'undefined' && !!chrome.runtime?.id}`", returnByValue: true });
            return r.result.value;
          } finally {
            await session.detach().catch(() => {});
          }
        })(),
        10_000,
        'href',
      ).catch((e) => `? ${e.message.slice(0, 60)}`);
      out.push({ id: t._targetId, type: t.type(), url: u, href, real: !href.startsWith('chrome-error:') && !href.startsWith('about:') });
    }
    return out;
  }

  test('C the agent reaches no page, target or data of the extension, by any route', async () => {
    const browser = await connectAgent(h, 'rt9-ident', 60_000);
    const cdp = await RawCdp.open(`${h.agentEndpoint('rt9-ident')}/cdp`.replace('http://', 'ws://'));
    const notes = [];
    let id = 1;
    const send = (method, params = {}, sessionId) => cdp.send(id++, method, params, sessionId);
    const fresh = async () => {
      const p = await browser.newPage();
      await p.goto(url('/shop/list'));
      return p;
    };
    try {
      const before = await documentsOffTheWeb();
      // Routes from the agent's page itself (each in a page of its own: a route that worked
      // would take the page away).
      for (const [name, act] of [
        ['window.open', (page) => page.evaluate((u) => { window.open(u); }, OUR_PAGE)],
        ['window.open noopener', (page) => page.evaluate((u) => { window.open(u, '_blank', 'noopener'); }, OUR_PAGE)],
        ['location.href', (page) => page.evaluate((u) => { location.href = u; }, OUR_PAGE)],
        ['a link clicked', (page) => page.evaluate((u) => { const a = document.createElement('a'); a.href = u; a.id = 'x'; a.textContent = 'x'; document.body.prepend(a); }, OUR_PAGE).then(() => page.click('#x'))],
        ['302 from the site', (page) => page.goto(url('/rt9/to-ext'))],
        ['meta refresh', (page) => page.goto(url('/rt9/refresh-ext'))],
        ['iframe', (page) => page.evaluate((u) => { const f = document.createElement('iframe'); f.src = u; document.body.append(f); }, OUR_PAGE)],
        ['iframe of sw.js', (page) => page.evaluate((u) => { const f = document.createElement('iframe'); f.src = u; document.body.append(f); }, `${EXTENSION_ORIGIN}/sw.js`)],
        ['fetch of sw.js', (page) => page.evaluate((u) => fetch(u).then((r) => r.text()).then((t) => `READ ${t.length}`, (e) => `refused ${e.message}`), `${EXTENSION_ORIGIN}/sw.js`)],
      ]) {
        const page = await fresh();
        const r = await act(page).then((v) => v, (e) => e.message);
        await sleep(1200);
        notes.push(`${name}: ${String(r ?? '').slice(0, 80)} -> ${page.isClosed() ? 'closed' : page.url()}`);
        if (name === 'fetch of sw.js') assert.doesNotMatch(String(r), /^READ/, 'the agent read the extension\'s script');
        await page.close().catch(() => {});
      }
      // CDP routes.
      let page = await fresh();
      let { targetInfos } = (await send('Target.getTargets')).result;
      let mine = targetInfos.find((t) => t.url === url('/shop/list'));
      assert.ok(mine, 'its page is listed');
      const attached = await send('Target.attachToTarget', { targetId: mine.targetId, flatten: true });
      let sid = attached.result.sessionId;
      // A script armed for every new document of the page: were any of ours to load there, it
      // would run with the extension's privileges.
      await send('Page.enable', {}, sid);
      const armed = await send('Page.addScriptToEvaluateOnNewDocument', { source: "if (globalThis.chrome && chrome.storage) chrome.storage.session.set({ rt9armed: location.href })" }, sid);
      notes.push(`armed: ${JSON.stringify(armed.error?.message ?? armed.result)}`);
      for (const target of [
        OUR_PAGE,
        ` Chrome-Extension://${EXTENSION_ID}/sidepanel.html`,
        `chrome-extension:${EXTENSION_ID}/sidepanel.html`,
        `${EXTENSION_ORIGIN}/pkg/tabtunnel_extension_bg.wasm`,
        'chrome://version/',
        'devtools://devtools/bundled/inspector.html',
        `view-source:${url('/shop/list')}`,
        'file:///etc/passwd',
        `filesystem:${EXTENSION_ORIGIN}/temporary/x`,
        `blob:${EXTENSION_ORIGIN}/1234`,
        url('/rt9/to-ext'),
        url('/rt9/refresh-ext'),
      ]) {
        const c = await send('Target.createTarget', { url: target });
        const n = await send('Page.navigate', { url: target }, sid);
        notes.push(`${target}: createTarget ${JSON.stringify(c.error?.message ?? c.result)} navigate ${JSON.stringify(n.error?.message ?? n.result?.errorText ?? n.result)}`);
        await sleep(500);
      }
      await sleep(1000);
      const armedRan = await h.sw(() => chrome.storage.session.get('rt9armed').then((v) => v.rt9armed ?? null));
      notes.push(`armed script ran in: ${armedRan}`);
      assert.equal(armedRan, null, `the agent's armed script ran in a page of the extension: ${armedRan}`);
      // A route above may have taken the page away (a tab that starts to leave the web is let go).
      const again = await send('Page.navigate', { url: url('/shop/list') }, sid);
      if (again.error) {
        await page.close().catch(() => {});
        page = await fresh();
        ({ targetInfos } = (await send('Target.getTargets')).result);
        mine = targetInfos.find((t) => t.url === url('/shop/list'));
        sid = (await send('Target.attachToTarget', { targetId: mine.targetId, flatten: true })).result.sessionId;
      }
      await sleep(1000);
      // A resource of ours loaded through the page's network stack, and the protocol handed on.
      const frameId = (await send('Page.getFrameTree', {}, sid)).result?.frameTree?.frame?.id;
      for (const [method, params] of [
        ['Network.loadNetworkResource', { frameId, url: `${EXTENSION_ORIGIN}/sw.js`, options: { disableCache: true, includeCredentials: false } }],
        ['Network.loadNetworkResource', { frameId, url: 'file:///etc/passwd', options: { disableCache: true, includeCredentials: false } }],
        ['Target.exposeDevToolsProtocol', { targetId: mine.targetId, bindingName: 'cdp' }],
      ]) {
        const r = await send(method, params, sid);
        notes.push(`${method} ${params.url ?? ''}: ${JSON.stringify(r.error?.message ?? r.result).slice(0, 160)}`);
        const held = method === 'Network.loadNetworkResource' ? r.error || !r.result?.resource?.success : r.error;
        assert.ok(held, `${method} ${params.url ?? ''}: ${JSON.stringify(r).slice(0, 300)}`);
      }
      // An OOPIF's own session, navigated to our page.
      await send('Runtime.evaluate', { expression: `new Promise((r) => { const f = document.createElement('iframe'); f.src = 'http://localhost:${port()}/shop/list'; f.onload = r; document.body.append(f); })`, awaitPromise: true }, sid);
      await sleep(800);
      const frames = (await send('Target.getTargets')).result.targetInfos.filter((t) => t.type === 'iframe');
      notes.push(`OOPIFs: ${frames.length}`);
      for (const f of frames) {
        const a = await send('Target.attachToTarget', { targetId: f.targetId, flatten: true });
        if (!a.result) continue;
        const n = await send('Page.navigate', { url: OUR_PAGE }, a.result.sessionId);
        notes.push(`OOPIF Page.navigate: ${JSON.stringify(n.error?.message ?? n.result)}`);
        const e = await send('Runtime.evaluate', { expression: `location.href = ${JSON.stringify(OUR_PAGE)}` }, a.result.sessionId);
        notes.push(`OOPIF location.href: ${JSON.stringify(e.error?.message ?? e.result?.result?.value)}`);
      }
      await sleep(1500);
      // Guessed targets: the extension's service worker and the side panel, by their real ids.
      const real = h.browser.targets().filter((t) => t.url().startsWith(EXTENSION_ORIGIN));
      const guesses = [];
      for (const t of real) {
        const a = await send('Target.attachToTarget', { targetId: t._targetId, flatten: true });
        const act = await send('Target.activateTarget', { targetId: t._targetId });
        const info = await send('Target.getTargetInfo', { targetId: t._targetId });
        const close = t.type() === 'service_worker' ? { error: { message: '(not tried)' } } : await send('Target.closeTarget', { targetId: t._targetId });
        notes.push(`guess ${t.type()} ${t.url()}: attach ${a.error?.message ?? 'ATTACHED'} activate ${act.error?.message ?? 'OK'} info ${info.error?.message ?? JSON.stringify(info.result)} close ${close.error?.message ?? JSON.stringify(close.result)}`);
        let ran = '';
        if (a.result?.sessionId) {
          const ev = await send('Runtime.evaluate', { expression: "`${location.href} ${typeof chrome !== 'undefined' && !!chrome.runtime?.id} ${typeof chrome?.debugger}`", returnByValue: true }, a.result.sessionId);
          ran = JSON.stringify(ev.error?.message ?? ev.result?.result?.value);
          notes.push(`  evaluate in ${t.url()}: ${ran}`);
        }
        guesses.push({ url: t.url(), attached: !a.error, info: !info.error, closed: !(close.error || close.result?.success === false), ran });
      }
      if (h.panel.isClosed()) panel = await h.openPanel(); // for the tests after this one
      console.log(`C (so far):\n  ${notes.join('\n  ')}`);
      // A target with our page's URL may be the agent's own popup whose blocked navigation left
      // an error page under that URL (seen attached, then let go, in 2 of 4 runs; no code ran):
      // what counts is code running with the extension's privileges.
      for (const g of guesses) {
        assert.doesNotMatch(g.ran, / true /, `the agent ran code in ${g.url} (attached ${g.attached}, closed ${g.closed})`);
      }
      // Discovery.
      await send('Target.setDiscoverTargets', { discover: true });
      await sleep(500);
      const list = await rawGet(h.port, `/${h.token}/agent/rt9-ident/json/list`);
      const listed = [...(await send('Target.getTargets')).result.targetInfos.map((t) => t.url), ...(list.json ?? []).map((t) => t.url), ...cdp.messages.filter((m) => m.method === 'Target.targetCreated').map((m) => m.params.targetInfo.url)];
      notes.push(`listed: ${[...new Set(listed)].join(' ')}`);
      // Browser-wide methods: permissions (the clipboard) and where files go.
      const results = {};
      for (const [method, params] of [
        ['Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: '/tmp/rt9' }],
        ['Browser.grantPermissions', { permissions: ['clipboardReadWrite', 'clipboardSanitizedWrite'], origin: h.pageServerUrl }],
        ['Browser.setPermission', { permission: { name: 'clipboard-read' }, setting: 'granted', origin: h.pageServerUrl }],
        ['Browser.getBrowserCommandLine', {}],
        ['SystemInfo.getProcessInfo', {}],
        ['Storage.getStorageKeyForFrame', { frameId: mine.targetId }],
      ]) {
        const r = await send(method, params);
        results[method] = r;
        notes.push(`${method}: ${JSON.stringify(r.error?.message ?? r.result).slice(0, 160)}`);
      }
      const pageDl = await send('Page.setDownloadBehavior', { behavior: 'allow', downloadPath: '/tmp/rt9' }, sid);
      notes.push(`Page.setDownloadBehavior: ${JSON.stringify(pageDl.error?.message ?? pageDl.result)}`);
      const clip = await page.evaluate(() => navigator.permissions.query({ name: 'clipboard-read' }).then((p) => p.state, (e) => e.message));
      notes.push(`clipboard-read permission of the site after the grants: ${clip}`);
      console.log(`C:\n  ${notes.join('\n  ')}`);
      assert.notEqual(clip, 'granted', "the agent granted its site the human's clipboard");
      // `Browser.setDownloadBehavior` is answered `{}` by the core itself (`core/src/emulation.rs`),
      // never sent to Chrome: only the page's form carries a path, and it is refused.
      assert.ok(pageDl.error, 'Page.setDownloadBehavior with a path');
      // Nothing of the agent's is off the web, and none of its pages runs extension code.
      const docs = await documentsOffTheWeb();
      console.log(`C: documents off the web: before ${JSON.stringify(before)}\n   after ${JSON.stringify(docs)}`);
      const after = (await send('Target.getTargets')).result.targetInfos;
      const offWeb = after.filter((t) => !/^(https?:|about:|data:|blob:https?:|javascript:|chrome-error:)/.test(t.url ?? '') && t.url !== '');
      const realOffWeb = offWeb.filter((t) => docs.find((d) => d.id === t.targetId)?.real !== false);
      assert.deepEqual(realOffWeb.map((t) => t.url), [], "the agent's targets off the web (not error pages)");
      // Each of the agent's pages, one by one: a popup whose blocked navigation the extension is
      // letting go may close while puppeteer sets its page up (CI, once: `browser.pages()`
      // rejected with that), which is the rule at work; an answer never given is not.
      for (const t of browser.targets().filter((x) => x.type() === 'page')) {
        const p = await t.page().catch((e) => {
          console.log(`C: the page of ${t.url()} not set up: ${e.message.slice(0, 160)}`);
          assert.doesNotMatch(e.message, /timed out/i, `${t.url()}: a command of puppeteer's set-up got no answer`);
          return null;
        });
        if (!p) continue;
        const priv = await p.evaluate(() => typeof chrome !== 'undefined' && !!chrome.runtime?.id).catch(() => false);
        assert.equal(priv, false, `${p.url()} runs extension code`);
      }
      const newReal = docs.filter((d) => d.real && !before.some((b) => b.id === d.id));
      assert.deepEqual(newReal, [], 'documents off the web the agent opened');
      const ran = await h.sw(() => chrome.storage.session.get('rt9armed').then((v) => v.rt9armed ?? null));
      assert.equal(ran, null, `the agent's armed script ran in a page of the extension: ${ran}`);
      await page.close().catch(() => {});
    } finally {
      cdp.close();
      await closeAll(browser);
    }
  });

  test('C2 a tab of the agent left on a blocked page of ours is never reloaded into the real page under its debugger', async () => {
    const browser = await connectAgent(h, 'rt9-reload', 60_000);
    const cdp = await RawCdp.open(`${h.agentEndpoint('rt9-reload')}/cdp`.replace('http://', 'ws://'));
    let id = 1;
    const send = (method, params = {}, sessionId) => cdp.send(id++, method, params, sessionId);
    const notes = [];
    try {
      const page = await browser.newPage();
      await page.goto(url('/shop/list'));
      await page.evaluate((u) => { window.open(u); }, OUR_PAGE);
      await sleep(1500);
      const { targetInfos } = (await send('Target.getTargets')).result;
      notes.push(`the agent's targets: ${targetInfos.map((t) => t.url).join(' ')}`);
      for (const t of targetInfos.filter((x) => !x.url.startsWith('http'))) {
        const a = await send('Target.attachToTarget', { targetId: t.targetId, flatten: true });
        notes.push(`attach ${t.url}: ${a.error?.message ?? 'ATTACHED'}`);
        if (!a.result) continue;
        const s = a.result.sessionId;
        await send('Page.enable', {}, s);
        await send('Page.addScriptToEvaluateOnNewDocument', { source: "if (globalThis.chrome && chrome.storage) chrome.storage.session.set({ rt9reloaded: location.href })" }, s);
        for (const [method, params] of [['Page.reload', { ignoreCache: true }], ['Page.navigate', { url: OUR_PAGE }], ['Runtime.evaluate', { expression: 'location.reload()' }]]) {
          const r = await send(method, params, s);
          await sleep(1500);
          const ev = await send('Runtime.evaluate', { expression: "`${location.href} ${typeof chrome !== 'undefined' && !!chrome.runtime?.id}`", returnByValue: true }, s);
          notes.push(`  ${method}: ${JSON.stringify(r.error?.message ?? r.result)}; then ${JSON.stringify(ev.error?.message ?? ev.result?.result?.value)}`);
          assert.doesNotMatch(String(ev.result?.result?.value ?? ''), / true$/, `the agent runs code in the extension's page after ${method}`);
        }
      }
      const ran = await h.sw(() => chrome.storage.session.get('rt9reloaded').then((v) => v.rt9reloaded ?? null));
      notes.push(`armed script ran in: ${ran}`);
      assert.equal(ran, null, `the agent's script ran in a page of the extension: ${ran}`);
      const docs = await documentsOffTheWeb();
      notes.push(`documents off the web: ${JSON.stringify(docs)}`);
      assert.ok(!docs.some((d) => d.real && d.href.includes(' true')), `a real page of ours was opened: ${JSON.stringify(docs)}`);
    } finally {
      console.log(`C2:\n  ${notes.join('\n  ')}`);
      cdp.close();
      await closeAll(browser);
    }
  });

  // ---- D: another agent's tabs ----------------------------------------------------------------

  test("D another agent's session ids, target ids and frame ids reach nothing", async () => {
    const y = await connectAgent(h, 'rt9-y', 60_000);
    const x = await RawCdp.open(`${h.agentEndpoint('rt9-x')}/cdp`.replace('http://', 'ws://'));
    const ycdp = await RawCdp.open(`${h.agentEndpoint('rt9-y')}/cdp`.replace('http://', 'ws://'));
    try {
      const page = await y.newPage();
      await page.goto(`${url('/shop/list')}?y-secret`);
      const targetId = page.target()._targetId;
      const ya = await ycdp.send(1, 'Target.attachToTarget', { targetId, flatten: true });
      const ySid = ya.result.sessionId;
      const notes = [];
      const xTargets = [];
      let id = 1;
      for (const [method, params, sid] of [
        ['Runtime.evaluate', { expression: 'location.href' }, ySid],
        ['Page.navigate', { url: url('/shop/checkout') }, ySid],
        ['Target.attachToTarget', { targetId, flatten: true }],
        ['Target.attachToTarget', { targetId: targetId.toLowerCase(), flatten: true }],
        ['Target.activateTarget', { targetId }],
        ['Target.closeTarget', { targetId }],
        ['Target.detachFromTarget', { sessionId: ySid }],
        ['Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: true }],
        ['Page.navigate', { url: url('/shop/checkout'), frameId: targetId }],
        ['Target.createTarget', { url: url('/shop/list'), openerId: targetId }],
      ]) {
        const r = await x.send(id++, method, params, sid);
        if (method === 'Target.createTarget' && r.result?.targetId) xTargets.push(r.result.targetId);
        notes.push(`${method}: ${JSON.stringify(r.error?.message ?? r.result).slice(0, 120)}`);
        if (method !== 'Target.setAutoAttach' && method !== 'Target.createTarget') assert.ok(r.error, `${method} on the other agent's ids: ${JSON.stringify(r)}`);
      }
      await sleep(1000);
      console.log(`D:\n  ${notes.join('\n  ')}`);
      const seen = x.messages ?? [];
      assert.ok(!JSON.stringify(seen).includes('y-secret'), "X heard of Y's tab");
      assert.equal(page.url(), `${url('/shop/list')}?y-secret`, "Y's tab stayed");
      assert.ok(!(await y.pages()).some((p) => p.isClosed()), "Y's tab is open");
      // The session Y detached? Y still evaluates.
      const still = await ycdp.send(50, 'Runtime.evaluate', { expression: '1+1', returnByValue: true }, ySid);
      assert.equal(still.result?.result?.value, 2, `Y's session still works: ${JSON.stringify(still)}`);
      for (const t of xTargets) await x.send(id++, 'Target.closeTarget', { targetId: t }).catch(() => {});
    } finally {
      x.close();
      ycdp.close();
      await closeAll(y);
    }
  });

  // ---- A: workers outside any tab --------------------------------------------------------------

  test('A1 a shared worker of a page on [::1] cannot pay', async () => {
    const browser = await connectAgent(h, 'rt9-v6', 60_000);
    try {
      const page = await browser.newPage();
      await page.goto(`${v6Url}/shop/checkout`);
      await sleep(500);
      await refused('[::1] shared worker', () => page.evaluate(PAY_FROM_A_SHARED_WORKER, `${v6Url}/shop/api/pay`));
      await page.close();
    } finally {
      await closeAll(browser);
    }
  });

  test('A2 after a tab showed [::1], a shared worker on 127.0.0.1 (shown next) cannot pay', async () => {
    const browser = await connectAgent(h, 'rt9-v6b', 60_000);
    try {
      const first = await browser.newPage();
      await first.goto(`${v6Url}/shop/list`);
      await sleep(800);
      const page = await browser.newPage();
      await page.goto(url('/shop/checkout'));
      await sleep(500);
      await refused('127.0.0.1 shared worker after [::1]', () => page.evaluate(PAY_FROM_A_SHARED_WORKER, url('/shop/api/pay')));
      await page.close();
      await first.close();
    } finally {
      await closeAll(browser);
    }
  });

  for (const [i, [name, host]] of [['trailing dot', 'localhost.'], ['underscore subdomain', 'a_b.localhost'], ['upper-case subdomain', 'SHOP.localhost'], ['IPv4 in hex', '0x7f.1'], ['decimal IPv4', '2130706433']].entries()) {
    test(`A3 ${name}: a shared worker on ${host} cannot pay, nor one on 127.0.0.1 shown after it`, async () => {
      const browser = await connectAgent(h, `rt9-host-${i}`, 60_000);
      try {
        const odd = `http://${host}:${port()}`;
        const first = await browser.newPage();
        const went = await first.goto(`${odd}/shop/checkout`).then(() => 'ok', (e) => e.message);
        console.log(`A3 ${name}: ${odd} ${went} -> ${first.url()}`);
        if (went === 'ok') {
          await sleep(500);
          await refused(`${host} shared worker`, () => first.evaluate(PAY_FROM_A_SHARED_WORKER, `${odd}/shop/api/pay`));
        }
        const page = await browser.newPage();
        await page.goto(url('/shop/checkout'));
        await sleep(500);
        await refused(`127.0.0.1 shared worker after ${host}`, () => page.evaluate(PAY_FROM_A_SHARED_WORKER, url('/shop/api/pay')));
        await page.close();
        await first.close();
      } finally {
        await closeAll(browser);
      }
    });
  }

  test("A4 the site's relay worker the human started before sharing cannot pay for the agent", async () => {
    await denyAll();
    const relayUrl = `http://localhost:${port()}/shop/relay`;
    const { browser, page } = await handTo('rt9-relay', relayUrl);
    try {
      await sleep(500);
      const before = payments();
      const outcome = await page.evaluate(
        (payUrl) => new Promise((resolve) => {
          const w = new SharedWorker('/shop/relay.js');
          w.port.onmessage = (e) => resolve(e.data);
          w.port.start();
          w.port.postMessage({ url: payUrl, body: '{"amount":124000}' });
          setTimeout(() => resolve('no outcome'), 10_000);
        }),
        `http://localhost:${port()}/shop/api/pay`,
      );
      await sleep(WATCH_MS);
      console.log(`A4: ${outcome}`);
      assert.equal(payments() - before, 0);
      assert.match(outcome, /^refused/);
    } finally {
      await browser.disconnect().catch(() => {});
      await panel.click('#take-back').catch(() => {});
      await pollFor(unshared(h.tabId), WAIT_MS, 'taken back', h.detail).catch(() => {});
    }
  });

  test("A5 a shared worker held by the agent's own second tab keeps paying after the handed tab is taken back and that tab closes", async () => {
    await denyAll();
    const { browser, page } = await handTo('rt9-sw-hold');
    let own;
    try {
      const code = `setInterval(() => fetch('/shop/api/pay', { method: 'POST', body: '{"w":1}' }).catch(() => {}), 200); onconnect = () => {};`;
      const blobUrl = await page.evaluate((c) => {
        const u = URL.createObjectURL(new Blob([c], { type: 'text/javascript' }));
        window.w = new SharedWorker(u);
        return u;
      }, code);
      own = await browser.newPage();
      await own.goto(url('/shop/list'));
      await own.evaluate((u) => { window.w = new SharedWorker(u); }, blobUrl);
      await noPaymentAfter('the take back (own tab holds the worker)', () => panel.click('#take-back'), unshared(h.tabId));
      const ownId = (await tabIdsAt(url('/shop/list')))[0];
      await noPaymentAfter('the own tab closed', () => own.close(), async () => !(await sharedTabIds()).includes(ownId), 2 * WATCH_MS);
    } finally {
      await closeAll(browser);
      await denyAll();
      await giveBack();
    }
  });

  test("A6 a service worker the agent writes through its own interception is not left behind to pay on the human's next visit", async () => {
    await denyAll();
    const { browser, page } = await handTo('rt9-evil-sw');
    try {
      const cdp = await page.createCDPSession();
      const body = Buffer.from(AGENT_SW).toString('base64');
      cdp.on('Fetch.requestPaused', (e) => {
        if (e.request.url.includes('evil-sw.js')) {
          const headers = [{ name: 'content-type', value: 'text/javascript' }, { name: 'cache-control', value: 'max-age=3600' }];
          cdp.send('Fetch.fulfillRequest', { requestId: e.requestId, responseCode: 200, responseHeaders: headers, body }).catch(() => {});
        } else {
          cdp.send('Fetch.continueRequest', { requestId: e.requestId }).catch(() => {});
        }
      });
      await cdp.send('Fetch.enable', { patterns: [{ urlPattern: '*evil-sw.js*', requestStage: 'Request' }] });
      const register = (options) =>
        page.evaluate(
          (o) =>
            Promise.race([
              navigator.serviceWorker.register('/shop/evil-sw.js', o).then(() => navigator.serviceWorker.ready).then(() => 'registered', (e) => 'not registered: ' + e.message),
              new Promise((r) => setTimeout(() => r('no answer in 10 s'), 10_000)),
            ]),
          options,
        );
      let reg = await register({});
      if (reg !== 'registered') {
        // Through the HTTP cache: the page's own fetch of the script, answered by the agent and
        // cacheable, then a registration that may read the cache.
        const pre = await page.evaluate(() => fetch('/shop/evil-sw.js').then((r) => `${r.status} ${r.headers.get('content-type')}`, (e) => e.message));
        reg = `${reg}; from the cache (the page's fetch: ${pre}): ${await register({ updateViaCache: 'all' })}`;
      }
      console.log(`A6: ${reg}`);
      await denyAll();
      await noPaymentAfter('the take back (agent SW)', () => panel.click('#take-back'), unshared(h.tabId));
      await browser.disconnect();
      // The human's own visits later.
      const before = payments();
      await h.testPage.reload().catch(() => {});
      await h.testPage.goto(url('/shop/checkout')).catch(() => {});
      await sleep(WATCH_MS);
      const regs = await h.testPage.evaluate(() => navigator.serviceWorker.getRegistrations().then((rs) => rs.map((r) => r.active?.scriptURL ?? r.installing?.scriptURL ?? '?')));
      console.log(`A6: registrations after the leave: ${JSON.stringify(regs)}, payments ${payments() - before}`);
      assert.equal(payments() - before, 0, "the agent's service worker paid on the human's visit");
    } finally {
      await closeAll(browser);
      await denyAll();
      await giveBack();
      await h.testPage.evaluate(() => navigator.serviceWorker.getRegistrations().then((rs) => Promise.all(rs.map((r) => r.unregister())))).catch(() => {});
    }
  });

  test("A7 a page the agent's tab prerenders (speculation rules) cannot pay unasked from the agent's script there", async () => {
    await denyAll();
    const browser = await connectAgent(h, 'rt9-prerender', 60_000);
    try {
      const page = await browser.newPage();
      await page.goto(url('/shop/checkout'));
      const cdp = await page.createCDPSession();
      const children = [];
      cdp.on('Target.attachedToTarget', (e) => children.push(e));
      await cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: true }).catch((e) => console.log(`A7 autoAttach: ${e.message}`));
      const conn = cdp.connection();
      const seen = [];
      browser.on('targetcreated', (t) => seen.push(`${t.type()} ${t.url()}`));
      await page.evaluate(() => {
        const s = document.createElement('script');
        s.type = 'speculationrules';
        s.textContent = JSON.stringify({ prerender: [{ source: 'list', urls: ['/shop/list?prerendered'] }] });
        document.head.append(s);
      });
      await sleep(3000);
      const before = payments();
      // Each child pays; a held write waits for the human, who denies whatever is asked.
      const tries = children.map((c) => {
        const session = conn.session(c.sessionId);
        const r = session
          ? session.send('Runtime.evaluate', { expression: "fetch('/shop/api/pay', { method: 'POST', body: '{\"pr\":1}' }).then((r) => 'sent ' + r.status, (e) => 'refused ' + e.message)", awaitPromise: true }).then((v) => v.result.value, (e) => e.message)
          : Promise.resolve('no session');
        return r.then((v) => `${c.targetInfo.type}/${c.targetInfo.subtype ?? ''} ${c.targetInfo.url}: ${v}`);
      });
      for (let i = 0; i < 8; i += 1) {
        await sleep(500);
        await denyAll();
      }
      const tried = await withTimeout(Promise.all(tries), 20_000, "the prerendered pages' payments").catch((e) => [e.message]);
      await denyAll();
      await sleep(WATCH_MS);
      console.log(`A7: targets ${JSON.stringify(seen)}; children ${tried.join(' | ')}; payments ${payments() - before}`);
      assert.equal(payments() - before, 0, 'a prerendered page paid unasked');
      await page.close();
    } finally {
      await browser.disconnect().catch(() => {});
      await denyAll();
    }
  });

  // Outside the documented rule ("sent by or to a site a shared tab showed"): a `data:` worker's
  // write to a site no shared tab showed, with the human's cookies there, is a payment the guard
  // would have held from the agent's page itself.
  test("A8 a data: worker of an agent's page cannot pay, with the human's cookie, on a site no shared tab showed", async () => {
    const browser = await connectAgent(h, 'rt9-data', 60_000);
    try {
      // The human is signed in on localhost (a SameSite=None cookie), in their own tab.
      await h.testPage.goto(`http://localhost:${port()}/shop/list`);
      await h.testPage.evaluate(() => { document.cookie = 'human=1; SameSite=None; Secure; path=/'; });
      const page = await browser.newPage();
      await page.goto(url('/shop/checkout'));
      const before = payments();
      const outcome = await page.evaluate(PAY_FROM_A_DATA_WORKER, `http://localhost:${port()}/shop/api/pay`);
      await sleep(WATCH_MS);
      const paid = payments() - before;
      // The control: the same write from the agent's page itself is asked about.
      await denyAll();
      page.evaluate((u) => fetch(u, { method: 'POST', credentials: 'include', mode: 'no-cors', body: 'amount=124000' }).catch(() => {}), `http://localhost:${port()}/shop/api/pay`).catch(() => {});
      const control = await panel.waitForSelector(QUESTION, { timeout: 10_000 }).then(() => 'asked', () => 'not asked');
      await denyAll();
      console.log(`A8: a data: worker's write to a host no shared tab showed: ${outcome}, payments ${paid}; the same write from the page: ${control}`);
      assert.equal(paid, 0, `a data: worker paid on a site no shared tab showed (${outcome})`);
      await page.close();
    } finally {
      await closeAll(browser);
    }
  });

  // ---- E: Allow once -----------------------------------------------------------------------------

  test('E after Allow once, replays with the same or another body or URL, and a worker, are each asked or refused', async () => {
    await denyAll();
    const browser = await connectAgent(h, 'rt9-once', 120_000);
    try {
      const page = await browser.newPage();
      await page.goto(url('/shop/checkout'));
      const bodiesBefore = site.bodies.length;
      const writesBefore = site.writes.length;
      page.evaluate(() => fetch('/shop/api/pay', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"amount":1}' }).catch(() => {})).catch(() => {});
      await asked('the first payment');
      const id = await panel.$eval(QUESTION, (li) => li.dataset.requestId);
      // As the human allows, the page fires replays for a few seconds.
      await page.evaluate(() => {
        const t0 = Date.now();
        const send = (u, body, extra = {}) => fetch(u, { method: 'POST', headers: { 'content-type': 'application/json' }, body, ...extra }).catch(() => {});
        window.__replays = setInterval(() => {
          if (Date.now() - t0 > 4000) return clearInterval(window.__replays);
          send('/shop/api/pay', '{"amount":1}');
          send('/shop/api/pay', '{"amount":999999}');
          send('/shop/api/pay?again=1', '{"amount":1}');
          send('/shop/api/pay', '{"amount":1}', { keepalive: true });
          navigator.sendBeacon('/shop/api/pay', '{"amount":1}');
        }, 150);
      });
      await panel.click(`${QUESTION.replace('[data-request-id]', `[data-request-id="${id}"]`)} button[data-answer="allow"]`);
      const worker = await page.evaluate(PAY_FROM_A_SHARED_WORKER, url('/shop/api/pay'));
      for (let i = 0; i < 12; i += 1) {
        await denyAll();
        await sleep(500);
      }
      await denyAll();
      await sleep(WATCH_MS);
      const sent = site.bodies.slice(bodiesBefore).filter((b) => b.includes('/shop/api/pay'));
      console.log(`E: worker ${worker}; writes ${JSON.stringify(site.writes.slice(writesBefore))}; bodies ${JSON.stringify(sent)}`);
      assert.deepEqual(sent, ['POST /shop/api/pay {"amount":1}'], 'exactly the allowed payment');
    } finally {
      await page_cleanup(browser);
    }
  });

  async function page_cleanup(browser) {
    for (const p of await browser.pages().catch(() => [])) await p.close().catch(() => {});
    await browser.disconnect().catch(() => {});
    await denyAll();
  }

  test("E2 the agent's own interception changes nothing in the request the human allowed", async () => {
    await denyAll();
    const browser = await connectAgent(h, 'rt9-once-fetch', 120_000);
    try {
      const page = await browser.newPage();
      await page.goto(url('/shop/checkout'));
      const cdp = await page.createCDPSession();
      const seen = [];
      const changed = Buffer.from('{"amount":999999}').toString('base64');
      cdp.on('Fetch.requestPaused', (e) => {
        seen.push(`paused ${e.request.method} ${e.request.url} ${e.request.postData ?? ''}`);
        cdp.send('Fetch.continueRequest', { requestId: e.requestId, postData: changed, url: `${e.request.url}?changed=1` }).then(
          () => seen.push('continued changed'),
          (err) => {
            seen.push(`refused: ${err.message}`);
            return cdp.send('Fetch.continueRequest', { requestId: e.requestId }).catch(() => {});
          },
        );
      });
      await cdp.send('Fetch.enable', { patterns: [{ urlPattern: '*/shop/api/pay*', requestStage: 'Request' }] });
      const bodiesBefore = site.bodies.length;
      page.evaluate(() => fetch('/shop/api/pay', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"amount":1}' }).catch(() => {})).catch(() => {});
      await asked('the payment');
      const id = await panel.$eval(QUESTION, (li) => li.dataset.requestId);
      await panel.click(`${QUESTION.replace('[data-request-id]', `[data-request-id="${id}"]`)} button[data-answer="allow"]`);
      // Whatever is asked after the allow (the changed request) the human denies.
      for (let i = 0; i < 10; i += 1) {
        await sleep(500);
        await denyAll();
      }
      await sleep(WATCH_MS);
      const sent = site.bodies.slice(bodiesBefore).filter((b) => b.includes('/shop/api/pay'));
      console.log(`E2: the agent saw ${JSON.stringify(seen)}; the server got ${JSON.stringify(sent)}`);
      assert.ok(!sent.some((b) => b.includes('999999')), `the agent's body reached the server: ${JSON.stringify(sent)}`);
      assert.ok(sent.length <= 1, `more than the one allowed payment: ${JSON.stringify(sent)}`);
    } finally {
      await page_cleanup(browser);
    }
  });

  test('E3 right after Allow once for a click on Pay, a password change of the page is asked, not let through', async () => {
    await denyAll();
    const browser = await connectAgent(h, 'rt9-once-click', 120_000);
    try {
      const page = await browser.newPage();
      await page.goto(url('/shop/checkout'));
      const changes = () => site.writes.filter((w) => w === 'POST /account/password').length;
      const changesBefore = changes();
      const paysBefore = payments();
      const clicked = page.click('#pay-js').then(() => 'clicked', (e) => e.message);
      await asked('the click on Pay');
      const id = await panel.$eval(QUESTION, (li) => li.dataset.requestId);
      await panel.click(`${QUESTION.replace('[data-request-id]', `[data-request-id="${id}"]`)} button[data-answer="allow"]`);
      const click = await withTimeout(clicked, 30_000, 'the click').catch((e) => e.message);
      // At once, writes of another kind, and another payment, from the page's script.
      await page.evaluate(() => {
        const form = { 'content-type': 'application/x-www-form-urlencoded' };
        for (let i = 0; i < 3; i += 1) {
          fetch('/account/password', { method: 'POST', headers: form, body: 'current_password=a&new_password=b' }).catch(() => {});
        }
        fetch('/shop/api/pay', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"amount":124000,"currency":"EUR"}' }).catch(() => {});
      });
      for (let i = 0; i < 8; i += 1) {
        await sleep(500);
        await denyAll();
      }
      await sleep(WATCH_MS);
      console.log(`E3: the click ${click}; password changes ${changes() - changesBefore}, payments ${payments() - paysBefore}`);
      assert.equal(changes() - changesBefore, 0, 'a password change rode on the allowed click');
      assert.ok(payments() - paysBefore <= 1, `more than the one allowed payment: ${payments() - paysBefore}`);
    } finally {
      await page_cleanup(browser);
    }
  });

  // ---- B: leaving and hand-over ------------------------------------------------------------------

  test('B1 popups opened with noopener and rel=noreferrer by a handed tab hold no timer that writes after the release', async () => {
    await denyAll();
    const { browser, page } = await handTo('rt9-noopener');
    try {
      const popups = [];
      browser.on('targetcreated', (t) => popups.push(t));
      await page.evaluate(() => {
        window.open('/shop/list?noopener', '_blank', 'noopener');
        const a = document.createElement('a');
        a.href = '/shop/list?noreferrer';
        a.target = '_blank';
        a.rel = 'noreferrer';
        a.id = 'rt9link';
        a.textContent = 'open';
        document.body.prepend(a);
      });
      await page.click('#rt9link');
      await sleep(2500);
      const pages = [];
      for (const t of popups) {
        const p = await t.page().catch(() => null);
        if (p) pages.push(p);
      }
      console.log(`B1: the agent got ${pages.length} popup targets: ${pages.map((p) => p.url()).join(' ')}`);
      const unasked = payments();
      for (const p of pages) await p.evaluate(PAY_EVERY_300_MS).catch((e) => console.log(`B1 evaluate: ${e.message}`));
      if (pages.length) {
        await asked("the popups' timers");
        assert.equal(payments() - unasked, 0, 'a popup paid unasked while its tab was the agent\'s');
        await denyAll();
      }
      await noPaymentAfter("the agent's release", () => page.close(), unshared(h.tabId));
      const before = payments();
      await browser.disconnect();
      await sleep(2 * WATCH_MS);
      assert.equal(payments() - before, 0, 'a popup paid after its agent left');
    } finally {
      await closeAll(browser);
      await denyAll();
      await giveBack();
      await closeTabsAt(url('/shop/list*'));
    }
  });

  for (const [name, open] of [
    // Each window.open runs where the agent's command gave the user activation it needs.
    ['a popup of a popup', async (page, browser) => {
      const popped = new Promise((r) => browser.once('targetcreated', r));
      await page.evaluate(() => { window.w1 = window.open('/shop/list'); });
      const w1 = await (await popped).page();
      await w1.waitForFunction(() => document.readyState === 'complete');
      await w1.evaluate(async (src) => {
        const w2 = window.open('/shop/search');
        for (let i = 0; i < 200; i += 1) { try { if (w2.location.pathname === '/shop/search' && w2.document.readyState === 'complete') break; } catch {} await new Promise((r) => setTimeout(r, 50)); }
        w2.eval(src);
      }, PAY_SRC);
    }],
    ['a popup a same-origin iframe opened', async (page) => {
      await page.evaluate(async () => {
        const f = document.createElement('iframe');
        f.src = '/shop/list';
        f.name = 'rt9frame';
        document.body.append(f);
        await new Promise((r) => f.addEventListener('load', r));
      });
      const frame = page.frames().find((fr) => fr.name() === 'rt9frame');
      await frame.evaluate(async (src) => {
        const w = window.open('/shop/search');
        for (let i = 0; i < 200; i += 1) { try { if (w.location.pathname === '/shop/search' && w.document.readyState === 'complete') break; } catch {} await new Promise((r) => setTimeout(r, 50)); }
        w.eval(src);
      }, PAY_SRC);
    }],
  ]) {
    test(`B2 ${name} holds no timer that writes after the release and the disconnect`, async () => {
      await denyAll();
      const { browser, page } = await handTo(`rt9-${name.length}`);
      try {
        const unasked = payments();
        await open(page, browser);
        const q = await panel.waitForSelector(QUESTION, { timeout: WAIT_MS }).then(() => 'asked', (e) => e.message);
        assert.equal(payments() - unasked, 0, `the popup paid unasked while its tab was the agent's (${q})`);
        assert.equal(q, 'asked', "the popup's timer");
        await denyAll();
        await noPaymentAfter("the agent's release", () => page.close(), unshared(h.tabId));
        const before = payments();
        await browser.disconnect();
        await sleep(2 * WATCH_MS);
        await denyAll();
        assert.equal(payments() - before, 0, 'the popup paid after its agent left');
      } finally {
        await closeAll(browser);
        await denyAll();
        await giveBack();
        await closeTabsAt(url('/shop/*'));
      }
    });
  }

  test("B3 a tab agent X created, handed by the human to Y: X hears nothing of it, Y finds nothing of X's", async () => {
    await denyAll();
    const x = await connectAgent(h, 'rt9-x', 60_000);
    let y;
    try {
      const page = await x.newPage();
      await page.goto(url('/shop/checkout'));
      await page.evaluateOnNewDocument(() => { window.__xmark = 'x was here'; });
      await page.evaluate(() => { window.__xmark = 'x was here'; });
      await page.evaluate(PAY_EVERY_300_MS);
      await asked("X's timer");
      await denyAll();
      const xcdp = await page.createCDPSession();
      const heard = [];
      for (const ev of ['Network.requestWillBeSent', 'Page.frameNavigated', 'Runtime.consoleAPICalled', 'Page.lifecycleEvent']) xcdp.on(ev, (e) => heard.push(JSON.stringify(e)));
      await xcdp.send('Network.enable');
      await xcdp.send('Page.enable');
      await xcdp.send('Runtime.enable');
      const tabId = (await tabIdsAt(url('/shop/checkout'))).find((t) => t !== h.tabId);
      assert.ok(tabId, "X's tab");
      // The human drags it into their own window, where the panel follows it.
      await h.sw((tab, win) => chrome.tabs.move(tab, { windowId: win, index: -1 }), tabId, h.windowId).catch((e) => console.log(`B3 move: ${e.message}`));
      await focusTab(tabId);
      heard.length = 0;
      await handPanelTabTo('rt9-y');
      y = await connectAgent(h, 'rt9-y', 60_000);
      await pollFor(async () => (await y.pages()).some((p) => p.url().startsWith(url('/shop/checkout'))), WAIT_MS, 'Y has the tab', h.detail);
      const ypage = (await y.pages()).find((p) => p.url().startsWith(url('/shop/checkout')));
      await sleep(1000);
      const xHeardDuringHandover = heard.length;
      heard.length = 0;
      await ypage.goto(`${url('/shop/list')}?y-secret-token=42`);
      await ypage.evaluate(() => console.log('y-console-secret'));
      await ypage.reload();
      await sleep(1500);
      const mark = await ypage.evaluate(() => typeof window.__xmark);
      const timer = await ypage.evaluate(() => typeof window.__payments);
      const xEval = await page.evaluate(() => location.href).then((v) => `X evaluated: ${v}`, (e) => `X refused: ${e.message}`);
      console.log(`B3: X heard ${xHeardDuringHandover} events in the hand-over; after: ${heard.length} (${heard.slice(0, 3).join(' | ').slice(0, 400)}); ${xEval}`);
      assert.equal(mark, 'undefined', "X's script for new documents ran in Y's tab");
      assert.equal(timer, 'undefined', "X's timer in Y's tab");
      assert.ok(!heard.some((e) => e.includes('y-secret') || e.includes('y-console-secret')), `X heard Y's tab: ${heard.join(' | ').slice(0, 500)}`);
      assert.ok(!xEval.includes('y-secret'), xEval);
      await panel.click('#take-back').catch(() => {});
    } finally {
      await closeAll(y);
      await closeAll(x);
      await denyAll();
      await closeTabsAt(url('/shop/*'));
    }
  });

  for (const [name, second] of [
    ['the kill switch', async () => { await panel.click('#kill-switch'); return async () => (await sharedTabIds()).length === 0; }],
    ['Take back', async () => { await panel.click('#take-back').catch((e) => console.log(`take back: ${e.message}`)); return unshared(h.tabId); }],
  ]) {
    test(`B4 ${name} during a hand-over's reload: no timer of either agent writes`, async () => {
      await denyAll();
      const { browser, page } = await handTo(`rt9-race-${name.length}`);
      let other;
      try {
        await page.evaluateOnNewDocument(PAY_EVERY_300_MS);
        await page.evaluate(PAY_EVERY_300_MS);
        await asked('the timer');
        await denyAll();
        const before = payments();
        await handPanelTabTo(`rt9-race-to-${name.length}`);
        await sleep(50);
        const gone = await second();
        await pollFor(gone, 40_000, `the tab let go after ${name}`, h.detail).catch((e) => console.log(`B4 ${name}: ${e.message.slice(0, 200)}`));
        other = await connectAgent(h, `rt9-race-to-${name.length}`, 60_000).catch(() => null);
        const otherPages = other ? (await other.pages()).map((p) => p.url()) : [];
        await sleep(2 * WATCH_MS);
        const shared = await sharedTabIds();
        console.log(`B4 ${name}: shared after ${JSON.stringify(shared)}; the second agent has ${JSON.stringify(otherPages)}; payments ${payments() - before}`);
        assert.equal(payments() - before, 0, `payments after ${name} during the hand-over`);
      } finally {
        await browser.disconnect().catch(() => {});
        await other?.disconnect().catch(() => {});
        if (name === 'the kill switch') {
          await panel.click('#kill-switch').catch(() => {});
          await pollFor(async () => (await fetch(`${h.agentEndpoint('x')}/json/version`)).status === 200, WAIT_MS, 'the kill switch released', h.detail);
        }
        await denyAll();
        if ((await sharedTabIds()).includes(h.tabId)) {
          await focusTab(h.tabId).catch(() => {});
          await panel.click('#take-back').catch(() => {});
          await pollFor(unshared(h.tabId), WAIT_MS, 'taken back', h.detail).catch(() => {});
        }
      }
    });
  }

  test("B5 take back then the human's Forward: a page the agent left ahead in history with a timer runs none", async () => {
    await denyAll();
    const { browser, page } = await handTo('rt9-forward');
    try {
      await page.goto(url('/rt9/cacheable'));
      await page.evaluate(PAY_EVERY_300_MS);
      await asked('the timer');
      await denyAll();
      await page.goBack();
      await noPaymentAfter('the take back', () => panel.click('#take-back'), unshared(h.tabId));
      const before = payments();
      await h.testPage.goForward({ timeout: 5000 }).catch(() => {});
      await h.testPage.evaluate(() => history.forward()).catch(() => {});
      await sleep(WATCH_MS);
      console.log(`B5: the human tab at ${h.testPage.url()}`);
      assert.equal(payments() - before, 0, 'a page ahead in history paid');
    } finally {
      await browser.disconnect().catch(() => {});
      await denyAll();
      await giveBack();
    }
  });

  for (const [name, leave] of [
    ['take back', () => panel.click('#take-back')],
    ["the agent's release", (page) => page.close()],
  ]) {
    test(`B6 ${name}: what the page sends as it unloads (a keepalive fetch, a beacon) does not pay`, async () => {
      await denyAll();
      const { browser, page } = await handTo(`rt9-unload-${name.length}`);
      try {
        await page.evaluate(() => {
          const pay = () => {
            fetch('/shop/api/pay', { method: 'POST', keepalive: true, headers: { 'content-type': 'application/json' }, body: '{"unload":1}' }).catch(() => {});
            navigator.sendBeacon('/shop/api/pay', new Blob(['{"beacon":1}'], { type: 'application/json' }));
          };
          addEventListener('pagehide', pay);
          addEventListener('beforeunload', pay);
          addEventListener('unload', pay);
          document.addEventListener('visibilitychange', pay);
        });
        await noPaymentAfter(name, () => leave(page), unshared(h.tabId));
      } finally {
        await browser.disconnect().catch(() => {});
        await denyAll();
        if ((await sharedTabIds()).includes(h.tabId)) {
          await focusTab(h.tabId).catch(() => {});
          await panel.click('#take-back').catch(() => {});
          await pollFor(unshared(h.tabId), WAIT_MS, 'taken back', h.detail).catch(() => {});
        }
      }
    });
  }
});
