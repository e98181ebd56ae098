// Red team run 10 (on main d0231b3): a malicious agent (a CDP client with its own endpoint)
// against routes red team 9 did not try: privileged pages by `about:` names and odd spellings,
// the daemon's HTTP routes naming the extension's targets (P); browser-wide methods that might
// show another agent's or the human's tabs (L); writes made as a new tab is born, before its
// guard can be armed (N); the agent's own interception turning a harmless request into a
// payment, `Network.replayXHR`, the page's scripts turned off or slowed while the guard reads
// (G); a held write when the human takes the tab back or stops everything (H); the site's
// service worker woken by CDP (W); Allow once with two identical writes held (E). Each test
// asserts the safe outcome: a failure is a break.
//
// Seen on d0231b3: N1, N2, N8 broke in every run (an agent's new tab, by window.open or
// Target.createTarget, whose page pays as it is parsed: its fetch/XHR/beacon reached the server
// unasked); N3 and N9 in 2 of 3, N12 in 1 of 3; N4/N5 (a POST form into a new window) 2 of 2.
// N8, N9, N12 are closed (the agent's own new tab opens blank and goes to its URL once armed);
// N4, N5 and N7 (a form posted into a popup) by refusing the writes of tabs born while tabs are
// shared until they are known; N1-N3 (a beacon and a keep-alive fetch of a popup whose page
// began to load before its guard was armed) by arming it again after the commit, the tab's
// writes refused meanwhile. Everything else held.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { QUESTION, WAIT_MS, WATCH_MS, attackKit } from './attack-kit.mjs';
import { gestureSites } from './gesture-sites.mjs';
import { EXTENSION_ORIGIN, RawCdp, connectAgent, pollFor, rawGet, sleep, startHarness, withTimeout } from './harness.mjs';

const OUR_PAGE = `${EXTENSION_ORIGIN}/sidepanel.html`;

const html = (body) => (req, res) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(`<!doctype html><html><head><meta charset="utf-8"><title>rt10</title></head><body>${body}</body></html>`);
};

/** A page that pays the moment it is parsed (a fetch, a beacon, an XHR). */
const AUTOPAY = `<h1>autopay</h1><script>
  fetch('/shop/api/pay', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"auto":"fetch"}' }).catch(() => {});
  navigator.sendBeacon('/shop/api/pay', '{"auto":"beacon"}');
  const x = new XMLHttpRequest(); x.open('POST', '/shop/api/pay'); x.send('{"auto":"xhr"}');
  if (typeof fetchLater === 'function') fetchLater('/shop/api/pay', { method: 'POST', body: '{"auto":"fetchLater"}', activateAfter: 0 });
</script>`;

/** A page that submits a payment form the moment it is parsed. */
const AUTOFORM = `<form id="f" method="post" action="/shop/pay"><input name="cardnumber" value="4242424242424242"><button>Pay €1,240.00</button></form>
<script>document.getElementById('f').submit();</script>`;

/** The site's own service worker: pays on a push or a sync. */
const SITE_SW = `self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
const pay = (why) => fetch('/shop/api/pay', { method: 'POST', body: JSON.stringify({ sw: why }) }).catch(() => {});
self.addEventListener('push', (e) => e.waitUntil(pay('push')));
self.addEventListener('sync', (e) => e.waitUntil(pay('sync')));
self.addEventListener('periodicsync', (e) => e.waitUntil(pay('periodicsync')));`;

describe('red team 10', { timeout: 1_500_000 }, () => {
  let h;
  let site;
  let panel;

  before(async () => {
    site = gestureSites();
    const pages = {
      ...site.pages,
      '/rt10/autopay': html(AUTOPAY),
      '/rt10/autoform': html(AUTOFORM),
      '/rt10/plain': html('<h1>plain</h1>'),
      // A site whose own `Permissions-Policy` does not parse (seen on real sites).
      '/rt10/bad-policy': (req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'permissions-policy': 'geolocation=(self' });
        res.end('<!doctype html><meta charset="utf-8"><h1>bad policy</h1>');
      },
      // An SSO page as it signs in: it posts a form the moment it is parsed.
      '/rt10/human-autoform': html(`<form id="f" method="post" action="/shop/api/pay"><input name="human" value="new-tab-form"></form><script>document.getElementById('f').submit();</script>`),
      '/rt10/human-autopay': html(`<script>fetch('/shop/api/pay', { method: 'POST', body: '{"human":"human-popup"}' })</script>`),
      '/rt10/sw.js': (req, res) => {
        res.writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'no-store' });
        res.end(SITE_SW);
      },
    };
    // As in a browser with another extension that observes requests: the way Chrome loads a
    // page's requests then let a popup's beacons past the guard in every run, not 1 in 3.
    h = await startHarness({ name: 'redteam10', share: false, extraPages: pages, extensionPermissions: ['webRequest'] });
    panel = await h.openPanel();
  });

  after(async () => {
    await h?.close();
  });

  const { url, tabOf, sharedTabIds, unshared, denyAll, asked, focusTab, handPanelTabTo, handTo } = attackKit(() => ({ h, panel, site }));
  /** Every payment, by API or by form. */
  const paid = () => site.writes.filter((w) => w === 'POST /shop/api/pay' || w === 'POST /shop/pay').length;
  const port = () => new URL(h.pageServerUrl).port;
  const rawAgent = (name) => RawCdp.open(`${h.agentEndpoint(name)}/cdp`.replace('http://', 'ws://'));

  async function closeAll(browser) {
    if (!browser) return;
    for (const p of await browser.pages().catch(() => [])) await p.close().catch(() => {});
    await browser.disconnect().catch(() => {});
  }

  async function giveBack() {
    if (!(await sharedTabIds().catch(() => [])).includes(h.tabId)) return;
    await focusTab(h.tabId).catch(() => {});
    await panel.click('#take-back').catch(() => {});
    await pollFor(unshared(h.tabId), WAIT_MS, 'taken back', h.detail).catch(() => {});
  }

  /** Denies every question for `ms`. */
  async function denyFor(ms) {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      await denyAll();
      await sleep(300);
    }
  }

  /** Documents of the real browser off the web that run code (not error pages), but the panel. */
  async function documentsOffTheWeb() {
    const out = [];
    for (const t of h.browser.targets()) {
      const u = t.url();
      if (!['page', 'iframe', 'other', 'background_page', 'webview'].includes(t.type())) continue;
      if (/^(https?:|about:blank|about:srcdoc|data:|javascript:|blob:https?:|chrome-error:)/.test(u) || u === '') continue;
      if (h.panel && t === h.panel.target()) continue;
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

  // ---- P: privileged pages by routes red team 9 did not try ---------------------------------

  test('P1 about: names Chrome rewrites, odd spellings and script URLs reach no page off the web', async () => {
    const browser = await connectAgent(h, 'rt10-priv', 60_000);
    const cdp = await rawAgent('rt10-priv');
    const notes = [];
    let id = 1;
    const send = (method, params = {}, sessionId) => cdp.send(id++, method, params, sessionId);
    try {
      const beforeDocs = await documentsOffTheWeb();
      const page = await browser.newPage();
      await page.goto(url('/rt10/plain'));
      const { targetInfos } = (await send('Target.getTargets')).result;
      const mine = targetInfos.find((t) => t.url === url('/rt10/plain'));
      const sid = (await send('Target.attachToTarget', { targetId: mine.targetId, flatten: true })).result.sessionId;
      await send('Page.enable', {}, sid);
      const frameId = (await send('Page.getFrameTree', {}, sid)).result.frameTree.frame.id;
      const targets = [
        'about:version',
        'about:settings',
        'about:extensions',
        'about:inducebrowsercrashforrealz',
        'about:blank/../version',
        'ABOUT:VERSION',
        'about:%76ersion',
        'chrome:version',
        'chrome:/version',
        'CHROME://version/',
        'chrome\t://version/',
        'chr\nome-extension://' + OUR_PAGE.slice('chrome-extension://'.length),
        'chrome-untrusted://terminal/',
        'chrome-search://local-ntp/',
        'chrome-devtools://devtools/bundled/inspector.html',
        'devtools:/devtools/bundled/inspector.html',
        'view-source:about:version',
        `javascript:location.href=${JSON.stringify(OUR_PAGE)}`,
        "javascript:location.href='chrome://version'",
        `data:text/html,<meta http-equiv="refresh" content="0;url=chrome://version"><a id=a href="${OUR_PAGE}">x</a><script>a.click()</script>`,
        'intent://version#Intent;scheme=chrome;end',
      ];
      for (const target of targets) {
        const c = await send('Target.createTarget', { url: target });
        const cw = await send('Target.createTarget', { url: target, newWindow: true, background: true });
        const n = await send('Page.navigate', { url: target }, sid);
        const nf = await send('Page.navigate', { url: target, frameId, transitionType: 'typed' }, sid);
        const r = await fetch(`${h.agentEndpoint('rt10-priv')}/json/new?${encodeURI(target)}`, { method: 'PUT' }).then(async (x) => `${x.status} ${(await x.text()).slice(0, 60)}`, (e) => e.message);
        const s = (x) => JSON.stringify(x.error?.message ?? x.result?.errorText ?? x.result).slice(0, 70);
        notes.push(`${target.slice(0, 50)}: create ${s(c)} | newWindow ${s(cw)} | navigate ${s(n)} | frame ${s(nf)} | /json/new ${r}`);
        await sleep(300);
        // Back to the web if a route took the page (a tab going off the web is let go).
        await send('Page.navigate', { url: url('/rt10/plain') }, sid);
      }
      await sleep(2000);
      const docs = await documentsOffTheWeb();
      const fresh = docs.filter((d) => d.real && !beforeDocs.some((b) => b.id === d.id));
      const chromePages = h.browser.targets().filter((t) => /^chrome:\/\/(version|settings|extensions)/.test(t.url())).map((t) => t.url());
      console.log(`P1:\n  ${notes.join('\n  ')}\n  new documents off the web: ${JSON.stringify(fresh)}\n  chrome:// pages: ${JSON.stringify(chromePages)}`);
      assert.deepEqual(fresh, [], 'documents off the web the agent opened');
      assert.deepEqual(chromePages, [], 'chrome:// pages the agent opened');
      // Nothing of ours runs in the agent's pages.
      const after = (await send('Target.getTargets')).result.targetInfos;
      assert.deepEqual(after.filter((t) => !/^(https?:|about:blank|data:|javascript:|chrome-error:)/.test(t.url) && t.url !== '').map((t) => t.url), [], "the agent's targets off the web");
    } finally {
      cdp.close();
      await closeAll(browser);
    }
  });

  test("P2 the daemon's HTTP routes naming the extension's own targets (activate, close, a page socket) reach none", async () => {
    const base = h.agentEndpoint('rt10-http');
    const ours = h.browser.targets().filter((t) => t.url().startsWith(EXTENSION_ORIGIN));
    const human = h.browser.targets().find((t) => t.type() === 'page' && t.url().startsWith(h.pageServerUrl));
    assert.ok(ours.length > 0, 'the extension has targets');
    const notes = [];
    for (const t of [...ours, ...(human ? [human] : [])]) {
      const tid = t._targetId;
      for (const path of [`/json/activate/${tid}`, `/json/activate/${tid.toLowerCase()}`, `/json/activate/%20${tid}`, `/json/close/${tid}`]) {
        const r = await rawGet(h.port, `${new URL(base).pathname}${path}`);
        notes.push(`${t.type()} ${t.url().slice(0, 60)} ${path.split('/').slice(0, 3).join('/')}: ${r.status} ${r.body.slice(0, 40)}`);
        assert.notEqual(r.status, 200, `${path} of ${t.url()}: ${r.body}`);
      }
      for (const ws of [`${base}/devtools/page/${tid}`, `${base}/devtools/page/${tid.toLowerCase()}`, `${base}/devtools/${t.type()}/${tid}`, `${base}/devtools/browser/${tid}`]) {
        const wsUrl = ws.replace('http://', 'ws://');
        const opened = await RawCdp.open(wsUrl).then(
          async (c) => {
            const r = await c.send(1, 'Runtime.evaluate', { expression: "`${location.href} ${typeof chrome !== 'undefined' && !!chrome.runtime?.id}`", returnByValue: true });
            c.close();
            return JSON.stringify(r.error?.message ?? r.result?.result?.value);
          },
          (e) => `refused ${e.message.slice(-30)}`,
        );
        notes.push(`  socket ${ws.slice(base.length)}: ${opened}`);
        assert.doesNotMatch(opened, /chrome-extension:|human|form\.html/, `${ws}: the agent evaluated in ${t.url()}`);
      }
    }
    console.log(`P2:\n  ${notes.join('\n  ')}`);
    assert.ok(!panel.isClosed(), 'the side panel is open');
    const left = h.browser.targets().filter((t) => t.url().startsWith(EXTENSION_ORIGIN)).map((t) => t.url());
    assert.deepEqual(left.sort(), ours.map((t) => t.url()).sort(), "the extension's targets are all there");
  });

  // ---- L: browser-wide methods and another agent's or the human's tabs -----------------------

  test("L browser-wide methods (tracing, the browser target, discovery filters, cookies, workers) show X nothing of Y's or the human's tabs", async () => {
    const y = await connectAgent(h, 'rt10-y', 60_000);
    const x = await rawAgent('rt10-x');
    const notes = [];
    let id = 1;
    const send = (method, params = {}, sessionId) => x.send(id++, method, params, sessionId).catch((e) => ({ error: { message: e.message } }));
    try {
      await h.testPage.goto(`${url('/rt10/plain')}?human-secret=1`);
      await h.testPage.evaluate(() => { document.cookie = 'humancookie=human-secret-cookie; path=/'; localStorage.setItem('k', 'human-secret-ls'); });
      const ypage = await y.newPage();
      await ypage.goto(`${url('/rt10/plain')}?y-secret=1`);
      await ypage.evaluate(() => { document.cookie = 'ycookie=y-secret-cookie; path=/'; });
      // X's own page (on another host, so cookie reads of its own site are not Y's).
      const xt = await send('Target.createTarget', { url: `http://localhost:${port()}/rt10/plain?x` });
      await sleep(1000);
      const xs = (await send('Target.attachToTarget', { targetId: xt.result?.targetId, flatten: true })).result?.sessionId;
      const calls = [
        ['Target.getTargets', { filter: [{}] }],
        ['Target.getTargets', { filter: [{ type: 'page', exclude: false }, { type: 'tab', exclude: false }] }],
        ['Target.getTargetInfo', {}],
        ['Target.getBrowserContexts', {}],
        ['Target.setDiscoverTargets', { discover: true, filter: [{}] }],
        ['Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: true, filter: [{}] }],
        ['Target.attachToBrowserTarget', {}],
        ['Target.getDevToolsTarget', { targetId: xt.result?.targetId }],
        ['Browser.getWindowForTarget', {}],
        ['Browser.getHistograms', { query: '' }],
        ['SystemInfo.getInfo', {}],
        ['SystemInfo.getProcessInfo', {}],
        ['Memory.getBrowserSamplingProfile', {}],
        ['Memory.getAllTimeSamplingProfile', {}],
        ['Storage.getCookies', {}],
        ['Network.getAllCookies', {}, xs],
        ['Network.getCookies', { urls: [url('/rt10/plain')] }, xs],
        ['Storage.getCookies', {}, xs],
        ['DOMStorage.getDOMStorageItems', { storageId: { securityOrigin: h.pageServerUrl, isLocalStorage: true } }, xs],
        ['DOMStorage.getDOMStorageItems', { storageId: { storageKey: `${h.pageServerUrl}/`, isLocalStorage: true } }, xs],
        ['Storage.getUsageAndQuota', { origin: h.pageServerUrl }, xs],
        ['Page.getNavigationHistory', {}, xs],
        ['Page.getResourceTree', {}, xs],
        ['Page.getAppManifest', {}, xs],
        ['ServiceWorker.enable', {}, xs],
        ['BackgroundService.startObserving', { service: 'backgroundFetch' }, xs],
        ['Audits.enable', {}, xs],
        ['Network.enable', {}, xs],
        ['Tracing.start', { traceConfig: { includedCategories: ['*', 'devtools.timeline', 'disabled-by-default-devtools.timeline'], recordMode: 'recordAsMuchAsPossible' }, transferMode: 'ReportEvents' }, xs],
        ['Tracing.start', { categories: '*', transferMode: 'ReportEvents' }],
      ];
      const replies = [];
      const cookieReplies = [];
      for (const [method, params, sid] of calls) {
        const r = await send(method, params, sid);
        // Cookie getters answer with every site's cookies when no policy limits them (documented:
        // docs/policy.md); kept apart.
        (/Cookies$/.test(method) ? cookieReplies : replies).push(JSON.stringify(r));
        notes.push(`${method}${sid ? ' (page)' : ''}: ${JSON.stringify(r.error?.message ?? r.result).slice(0, 140)}`);
        if (method === 'Target.attachToBrowserTarget' && r.result?.sessionId) {
          for (const [m, p] of [['Target.getTargets', {}], ['Target.setDiscoverTargets', { discover: true }], ['Browser.getVersion', {}]]) {
            const rr = await send(m, p, r.result.sessionId);
            replies.push(JSON.stringify(rr));
            notes.push(`  on the browser session ${m}: ${JSON.stringify(rr.error?.message ?? rr.result).slice(0, 140)}`);
          }
        }
      }
      // Activity in Y's tab and the human's while X listens and traces.
      await ypage.reload();
      await ypage.evaluate(() => console.log('y-secret-console'));
      await h.testPage.reload();
      await sleep(1500);
      const end1 = await send('Tracing.end', {}, xs);
      const end2 = await send('Tracing.end', {});
      notes.push(`Tracing.end: ${JSON.stringify(end1.error?.message ?? end1.result)} / ${JSON.stringify(end2.error?.message ?? end2.result)}`);
      await sleep(2000);
      const trace = JSON.stringify(x.messages.filter((m) => m.method === 'Tracing.dataCollected'));
      const heard = JSON.stringify(x.messages) + replies.join('\n');
      notes.push(`trace: ${trace.length} chars; y-secret in it ${trace.includes('y-secret')}, human-secret ${trace.includes('human-secret')}; cookie getters show Y's cookie: ${cookieReplies.join('').includes('y-secret-cookie')}`);
      const tracing = x.messages.filter((m) => m.method === 'Tracing.dataCollected').length;
      notes.push(`events heard: ${x.messages.length} (Tracing.dataCollected ${tracing}); methods: ${[...new Set(x.messages.map((m) => m.method))].join(' ')}`);
      console.log(`L:\n  ${notes.join('\n  ')}`);
      for (const secret of ['y-secret', 'human-secret', 'form.html']) {
        const at = heard.indexOf(secret);
        assert.equal(at, -1, `X saw "${secret}": ...${heard.slice(Math.max(0, at - 300), at + 100)}...`);
      }
    } finally {
      x.close();
      await closeAll(y);
      await h.testPage.goto(h.pageUrl).catch(() => {});
    }
  });

  // ---- N: writes as a new tab is born ----------------------------------------------------------

  const BORN = [
    ['window.open of a page that pays as it parses', (page) => page.evaluate((u) => { window.open(u); }, url('/rt10/autopay'))],
    ['window.open noopener of it', (page) => page.evaluate((u) => { window.open(u, '_blank', 'noopener'); }, url('/rt10/autopay'))],
    ['a target=_blank link to it, clicked', (page) => page.evaluate((u) => { const a = document.createElement('a'); a.href = u; a.target = '_blank'; a.rel = 'noopener noreferrer'; a.id = 'rt10a'; a.textContent = 'open'; document.body.prepend(a); }, url('/rt10/autopay')).then(() => page.click('#rt10a'))],
    ['a POST form into a new window, straight to the payment', (page) => page.evaluate((u) => { const f = document.createElement('form'); f.method = 'post'; f.action = u; f.target = '_blank'; f.innerHTML = '<input name="amount" value="124000">'; document.body.append(f); f.submit(); }, url('/shop/api/pay'))],
    ['a POST form with rel=noopener into a new window', (page) => page.evaluate((u) => { const f = document.createElement('form'); f.method = 'post'; f.action = u; f.target = '_blank'; f.rel = 'noopener'; f.innerHTML = '<input name="amount" value="124000">'; document.body.append(f); f.submit(); }, url('/shop/api/pay'))],
    ['a POST form into a named popup opened first', (page) => page.evaluate((u) => { window.open('about:blank', 'rt10w'); const f = document.createElement('form'); f.method = 'post'; f.action = u; f.target = 'rt10w'; f.innerHTML = '<input name="amount" value="124000">'; document.body.append(f); f.submit(); }, url('/shop/api/pay'))],
    ['a popup about:blank written with an auto-submitting form', (page) => page.evaluate((u) => { const w = window.open(''); w.document.write(`<form id=f method=post action="${u}"><input name=amount value=124000></form><script>document.getElementById('f').submit()<\/script>`); w.document.close(); }, url('/shop/pay'))],
    ['Target.createTarget of it', (page, send) => send('Target.createTarget', { url: url('/rt10/autopay') })],
    ['Target.createTarget in a new background window', (page, send) => send('Target.createTarget', { url: url('/rt10/autopay'), newWindow: true, background: true })],
    ['Target.createTarget of an auto-submitting form', (page, send) => send('Target.createTarget', { url: url('/rt10/autoform') })],
    ['Target.createTarget of a data: auto-submitting form', (page, send) => send('Target.createTarget', { url: `data:text/html,${encodeURIComponent(`<form id=f method=post action="${url('/shop/pay')}"><input name=amount value=124000></form><script>document.getElementById('f').submit()</script>`)}` })],
    ['/json/new of it', (page, send, agent) => fetch(`${h.agentEndpoint(agent)}/json/new?${url('/rt10/autopay')}`, { method: 'PUT' }).then((r) => r.text())],
  ];
  // A popup is Chrome's to start, before the extension can attach to it; while a tab is shared
  // the browser refuses the writes of tabs born until they are known (off_tab_writes,
  // newborn_tabs), a shared page's popup until it is armed. A document whose load began before
  // its guard was armed sent its beacons and keep-alive fetches past the guard for its whole
  // life (N2, N3: 3 of 4 runs, the page's own and the agent's later ones) until the guard was
  // armed again after its commit (late_documents).
  /** The agent's pages of the paying page send a beacon, a keep-alive fetch and a `fetchLater`. */
  async function lateWrites(browser) {
    const pages = await withTimeout(browser.pages(), 10_000, 'the agent\'s pages').catch(() => []);
    const out = [];
    for (const p of pages.filter((p) => p.url().includes('/rt10/autopay'))) {
      out.push(await withTimeout(p.evaluate(() => {
        const beacon = navigator.sendBeacon('/shop/api/pay', '{"late":"beacon"}');
        fetch('/shop/api/pay', { method: 'POST', body: '{"late":"keepalive"}', keepalive: true }).catch(() => {});
        // Sent by the browser, not the page, once its time comes (at once here) or as it goes.
        const later = typeof fetchLater === 'function';
        if (later) fetchLater('/shop/api/pay', { method: 'POST', body: '{"late":"fetchLater"}', activateAfter: 0 });
        return `beacon queued ${beacon}, fetchLater ${later ? 'queued' : 'missing'}`;
      }), 10_000, 'late writes').then((b) => b, (e) => `threw ${e.message.slice(0, 60)}`));
    }
    return out.join(', ') || 'no such page';
  }
  // A popup window (window.open with features) has no tab strip opener, as a tab another
  // program opens has none: told apart by its window's type (N14, N15).
  const WINDOWS = [
    ['a popup window written with an auto-submitting form', (page) => page.evaluate((u) => { const w = window.open('', 'rt10p', 'popup,width=420,height=360'); w.document.write(`<form id=f method=post action="${u}"><input name=amount value=124000></form><script>document.getElementById('f').submit()<\/script>`); w.document.close(); }, url('/shop/pay'))],
    ['a popup window of a page that pays as it parses', (page) => page.evaluate((u) => { window.open(u, 'rt10q', 'popup,width=420,height=360'); }, url('/rt10/autopay'))],
  ];
  const labelled = [...BORN.map((b, i) => [i + 1, ...b]), ...WINDOWS.map((b, i) => [14 + i, ...b])];
  for (const [n, name, open] of labelled) {
    test(`N${n} ${name}: nothing pays unasked`, async () => {
      await denyAll();
      const agent = `rt10-born-${n}`;
      const browser = await connectAgent(h, agent, 60_000);
      const cdp = await rawAgent(agent);
      let id = 1;
      const send = (method, params = {}, sessionId) => cdp.send(id++, method, params, sessionId);
      try {
        const page = await browser.newPage();
        await page.goto(url('/rt10/plain'));
        const before = paid();
        const bodiesBefore = site.bodies.length;
        const questions = [];
        const t0 = Date.now();
        const r = await open(page, send, agent).then((v) => JSON.stringify(v ?? '').slice(0, 100), (e) => `threw ${e.message.slice(0, 100)}`);
        // Deny whatever is asked for a while, noting what was asked; meanwhile the agent has the
        // new page send a beacon and a keep-alive fetch of its own, once its guard is armed.
        const end = Date.now() + 6000;
        let late = null;
        while (Date.now() < end) {
          const q = await panel.$eval(QUESTION, (li) => li.textContent.replace(/\s+/g, ' ').slice(0, 80)).catch(() => null);
          if (q) questions.push(`${Date.now() - t0}ms ${q}`);
          await denyAll();
          if (late === null && Date.now() - t0 > 2000) late = lateWrites(browser);
          await sleep(200);
        }
        late = await late;
        await sleep(WATCH_MS);
        const writes = site.bodies.slice(bodiesBefore).filter((b) => /\/shop\/(api\/)?pay /.test(b));
        console.log(`N${n} ${name}: ${r}; late writes: ${late}; asked ${questions.length}: ${questions.slice(0, 3).join(' | ')}; payments ${paid() - before} ${paid() - before ? JSON.stringify(writes) : ''}`);
        assert.equal(paid() - before, 0, `${name}: a payment reached the server unasked`);
      } finally {
        cdp.close();
        await closeAll(browser);
        await denyAll();
      }
    });
  }

  /** In the page: queues a payment with `fetchLater` (sent by the browser at once or as the
   *  document goes); what that came to. */
  const FETCH_LATER = () => {
    if (typeof fetchLater !== 'function') return 'missing';
    try {
      fetchLater('/shop/api/pay', { method: 'POST', body: '{"late":"fetchLater"}', activateAfter: 0 });
      return 'queued';
    } catch (e) {
      return `threw ${e.name}`;
    }
  };

  // The documents of shared tabs have no `fetchLater` (a rule sets their `Permissions-Policy`):
  // appended to a site's own header that does not parse, ours went with it, and a popup's first
  // document (past the guard for its life) paid as it went. A document the agent's own
  // interception answered has the page's policy only; the guard holds what it queues.
  test("F1 fetchLater in an agent's document its own interception answered, or whose site's policy header does not parse: pays nothing", async () => {
    await denyAll();
    const agent = 'rt10-later';
    const browser = await connectAgent(h, agent, 60_000);
    try {
      const page = await browser.newPage();
      await page.goto(url('/rt10/plain'));
      const before = paid();
      const bodiesBefore = site.bodies.length;
      const cdp = await page.createCDPSession();
      cdp.on('Fetch.requestPaused', (e) => {
        const body = Buffer.from('<!doctype html><meta charset="utf-8"><h1>fulfilled</h1>').toString('base64');
        const headers = [{ name: 'content-type', value: 'text/html' }, { name: 'permissions-policy', value: 'geolocation=(self' }];
        cdp.send('Fetch.fulfillRequest', { requestId: e.requestId, responseCode: 200, responseHeaders: headers, body }).catch(() => {});
      });
      await cdp.send('Fetch.enable', { patterns: [{ urlPattern: '*/rt10/fulfilled*', resourceType: 'Document' }] });
      await page.goto(url('/rt10/fulfilled'));
      const fulfilled = await page.evaluate(FETCH_LATER);
      await cdp.send('Fetch.disable');
      await page.goto(url('/rt10/bad-policy'));
      const badPolicy = await page.evaluate(FETCH_LATER);
      // A popup's first document loads before its guard is armed (late_documents): the
      // opener queues a payment there, sent as that document goes.
      const popup = await page.evaluate(
        (u) =>
          new Promise((resolve) => {
            const w = window.open(u);
            const queue = () => {
              try {
                w.fetchLater('/shop/api/pay', { method: 'POST', body: '{"late":"popup fetchLater"}' });
                resolve('queued');
              } catch (e) {
                resolve(`threw ${e.name}`);
              }
            };
            const wait = setInterval(() => {
              if (w.location.href.includes('/rt10/bad-policy') && w.document.readyState === 'complete') {
                clearInterval(wait);
                queue();
              }
            }, 10);
            setTimeout(() => resolve('never loaded'), 10_000);
          }),
        url('/rt10/bad-policy'),
      );
      await sleep(2000);
      // Whatever was queued goes as the documents go.
      await page.goto(url('/rt10/plain'));
      await closeAll(browser);
      await sleep(WATCH_MS);
      const sent = site.bodies.slice(bodiesBefore).filter((b) => /\/shop\/(api\/)?pay /.test(b));
      console.log(`F1: fulfilled document ${fulfilled}, bad policy header ${badPolicy}, popup ${popup}; payments ${paid() - before} ${JSON.stringify(sent)}`);
      assert.equal(paid() - before, 0, 'a fetchLater payment reached the server');
      assert.notEqual(badPolicy, 'queued', "fetchLater under a site's policy header that does not parse");
      assert.notEqual(popup, 'queued', "fetchLater in a popup's first document");
    } finally {
      await closeAll(browser);
      await denyAll();
    }
  });

  test("N13 the human's own new tabs and popups write as before while an agent's tab is shared", async () => {
    const browser = await connectAgent(h, 'rt10-born-human', 60_000);
    const human = [];
    let sso;
    try {
      const page = await browser.newPage();
      await page.goto(url('/rt10/plain'));
      const local = (path) => url(path).replace('127.0.0.1', 'localhost');
      const paidBy = (who) => site.bodies.filter((b) => b.startsWith('POST /shop/api/pay ') && b.includes(who)).length;
      // A tab no page opened (Ctrl+T, a bookmark, a link from another program): the forms it
      // sends go from its birth (an SSO page posting as it loads, on the site the agent's tab
      // shows), its other writes once no shared page claimed it.
      sso = await h.sw((u) => chrome.tabs.create({ url: u, active: false }).then((t) => t.id), url('/rt10/human-autoform'));
      const newTab = await h.browser.newPage();
      human.push(newTab);
      await newTab.goto(local('/rt10/plain'));
      await sleep(1000);
      await newTab.evaluate(() => fetch('/shop/api/pay', { method: 'POST', body: '{"human":"new-tab"}' }));
      // A popup of the human's page, its scripts writing as it loads (another site than the
      // agent's: a form the human's page posts into a new window goes too).
      const opened = new Promise((resolve) => h.browser.once('targetcreated', (t) => resolve(t.page())));
      await newTab.evaluate((u) => {
        const f = document.createElement('form');
        f.method = 'post'; f.action = u; f.target = '_blank';
        f.innerHTML = '<input name="human" value="popup-form">';
        document.body.append(f); f.submit();
      }, local('/shop/api/pay'));
      human.push(await withTimeout(opened, WAIT_MS, 'the human popup'));
      await newTab.evaluate(() => { window.open('/rt10/human-autopay'); });
      await pollFor(() => paidBy('new-tab-form') && paidBy('new-tab"') && paidBy('popup-form') && paidBy('human-popup'), WAIT_MS,
        "the human's writes", () => JSON.stringify(site.bodies.slice(-8)));
    } finally {
      for (const p of human) await p.close().catch(() => {});
      await h.sw((id) => chrome.tabs.remove(id).catch(() => {}), sso).catch(() => {});
      for (const p of await h.browser.pages()) if (p.url().includes('human-autopay')) await p.close().catch(() => {});
      await closeAll(browser);
    }
  });

  // ---- G: the guard's request replaced or its reading disturbed ----------------------------

  test("G1 the agent's interception turns a harmless GET (a search) into a POST payment: asked, not sent", async () => {
    await denyAll();
    const browser = await connectAgent(h, 'rt10-rewrite', 60_000);
    try {
      const page = await browser.newPage();
      await page.goto(url('/shop/checkout'));
      const cdp = await page.createCDPSession();
      const seen = [];
      cdp.on('Fetch.requestPaused', (e) => {
        seen.push(`paused ${e.request.method} ${e.request.url}`);
        const isDoc = e.resourceType === 'Document';
        cdp.send('Fetch.continueRequest', {
          requestId: e.requestId,
          url: url(isDoc ? '/shop/pay' : '/shop/api/pay'),
          method: 'POST',
          postData: Buffer.from(isDoc ? 'cardnumber=4242424242424242&amount=124000' : '{"amount":124000}').toString('base64'),
          headers: [{ name: 'content-type', value: isDoc ? 'application/x-www-form-urlencoded' : 'application/json' }],
        }).then(() => seen.push('continued as a payment'), (err) => {
          seen.push(`refused: ${err.message}`);
          return cdp.send('Fetch.continueRequest', { requestId: e.requestId }).catch(() => {});
        });
      });
      await cdp.send('Fetch.enable', { patterns: [{ urlPattern: '*/shop/search*', requestStage: 'Request' }] });
      const before = paid();
      page.evaluate(() => fetch('/shop/search?q=boots').catch(() => {})).catch(() => {});
      await sleep(1500);
      page.evaluate(() => { const x = new XMLHttpRequest(); x.open('GET', '/shop/search?q=xhr'); x.send(); }).catch(() => {});
      await sleep(1500);
      // A navigation: the search form's GET, submitted by its button.
      page.click('#search-go').catch(() => {});
      const questions = [];
      const end = Date.now() + 6000;
      while (Date.now() < end) {
        const q = await panel.$eval(QUESTION, (li) => li.textContent.replace(/\s+/g, ' ').slice(0, 80)).catch(() => null);
        if (q) questions.push(q);
        await denyAll();
        await sleep(200);
      }
      await sleep(WATCH_MS);
      console.log(`G1: ${seen.join(' | ')}; asked ${questions.length}: ${questions.slice(0, 3).join(' | ')}; payments ${paid() - before}`);
      assert.equal(paid() - before, 0, 'a harmless request became a payment past the guard');
    } finally {
      await closeAll(browser);
      await denyAll();
    }
  });

  test('G2 Network.replayXHR of a payment the human denied: asked again or refused, never sent', async () => {
    await denyAll();
    const browser = await connectAgent(h, 'rt10-replay', 120_000);
    try {
      const page = await browser.newPage();
      await page.goto(url('/shop/checkout'));
      const cdp = await page.createCDPSession();
      const xhrs = [];
      cdp.on('Network.requestWillBeSent', (e) => { if (e.request.url.includes('/shop/api/pay')) xhrs.push(e.requestId); });
      await cdp.send('Network.enable');
      const before = paid();
      page.evaluate(() => { const x = new XMLHttpRequest(); x.open('POST', '/shop/api/pay'); x.setRequestHeader('content-type', 'application/json'); x.send('{"amount":124000,"xhr":1}'); }).catch(() => {});
      await asked('the XHR payment');
      await denyAll();
      await sleep(1000);
      assert.equal(paid() - before, 0, 'the denied XHR');
      const replays = [];
      for (const rid of [...new Set(xhrs)]) {
        for (let k = 0; k < 3; k += 1) replays.push(await cdp.send('Network.replayXHR', { requestId: rid }).then(() => `${rid} replayed`, (e) => `${rid} refused: ${e.message}`));
      }
      const questions = [];
      const end = Date.now() + 6000;
      while (Date.now() < end) {
        if (await panel.$(QUESTION)) questions.push('q');
        await denyAll();
        await sleep(200);
      }
      await sleep(WATCH_MS);
      const afterDenied = paid() - before;
      console.log(`G2: ${replays.join(' | ')}; asked after the replays of the denied: ${questions.length}; payments after the denied ${afterDenied}, in all ${paid() - before}`);
      assert.equal(afterDenied, 0, 'a replay of the denied payment reached the server');
    } finally {
      await closeAll(browser);
      await denyAll();
    }
  });

  for (const [name, disturb] of [
    ['scripts turned off (Emulation.setScriptExecutionDisabled)', (cdp) => cdp.send('Emulation.setScriptExecutionDisabled', { value: true })],
    ['the CPU slowed 100 times (Emulation.setCPUThrottlingRate)', (cdp) => cdp.send('Emulation.setCPUThrottlingRate', { rate: 100 })],
    ['the page frozen then thawed (Page.setWebLifecycleState)', (cdp) => cdp.send('Page.setWebLifecycleState', { state: 'frozen' }).then(() => cdp.send('Page.setWebLifecycleState', { state: 'active' }))],
    ['the DOM read-only to scripts (a debugger paused on every subtree change)', async (cdp) => {
      await cdp.send('Debugger.enable');
      await cdp.send('DOM.enable');
      const { root } = await cdp.send('DOM.getDocument', { depth: 0 });
      await cdp.send('DOMDebugger.setDOMBreakpoint', { nodeId: root.nodeId, type: 'subtree-modified' });
      cdp.on('Debugger.paused', () => cdp.send('Debugger.resume').catch(() => {}));
    }],
  ]) {
    test(`G3 ${name}: a click on Pay (the form's submit) is asked, nothing paid unasked`, async () => {
      await denyAll();
      const browser = await connectAgent(h, `rt10-dist-${name.length}`, 120_000);
      try {
        const page = await browser.newPage();
        await page.goto(url('/shop/checkout'));
        await page.type('#card', '4242424242424242');
        const cdp = await page.createCDPSession();
        const d = await disturb(cdp).then(() => 'ok', (e) => `refused: ${e.message}`);
        const before = paid();
        const clicked = page.click('#pay').then(() => 'clicked', (e) => e.message);
        const q = await panel.waitForSelector(QUESTION, { timeout: 20_000 }).then(() => 'asked', () => 'not asked');
        const unasked = paid() - before;
        await denyFor(3000);
        await sleep(WATCH_MS);
        const click = await withTimeout(clicked, 30_000, 'click').catch((e) => e.message);
        console.log(`G3 ${name}: ${d}; ${q}; click ${click}; payments before the answer ${unasked}, in all ${paid() - before}`);
        await cdp.send('Emulation.setScriptExecutionDisabled', { value: false }).catch(() => {});
        await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 }).catch(() => {});
        assert.equal(paid() - before, 0, `${name}: the payment reached the server`);
      } finally {
        await closeAll(browser);
        await denyAll();
      }
    });
  }

  // ---- H: a held write as the tab leaves -------------------------------------------------------

  for (const [name, leave, gone, undo] of [
    ['Take back', () => panel.click('#take-back'), () => unshared(h.tabId)(), null],
    ['the kill switch', () => panel.click('#kill-switch'), async () => (await sharedTabIds()).length === 0, async () => {
      await panel.click('#kill-switch').catch(() => {});
      await pollFor(async () => (await fetch(`${h.agentEndpoint('x')}/json/version`)).status === 200, WAIT_MS, 'the kill switch released', h.detail);
    }],
  ]) {
    test(`H ${name} while a payment of the handed tab waits for the human: it never reaches the server`, async () => {
      await denyAll();
      const { browser, page } = await handTo(`rt10-held-${name.length}`);
      try {
        const before = paid();
        page.evaluate(() => {
          fetch('/shop/api/pay', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"held":"fetch"}' }).catch(() => {});
          const x = new XMLHttpRequest(); x.open('POST', '/shop/api/pay'); x.send('{"held":"xhr"}');
        }).catch(() => {});
        await asked('the held payment');
        await sleep(500);
        await leave();
        await pollFor(gone, 40_000, `the tab let go after ${name}`, h.detail);
        await sleep(2 * WATCH_MS);
        const left = await panel.$$eval(QUESTION, (l) => l.length);
        console.log(`H ${name}: payments ${paid() - before}; questions left ${left}`);
        assert.equal(paid() - before, 0, `the held payment reached the server after ${name}`);
        // A question left in the panel: allowing it now must send nothing.
        if (left) {
          const id = await panel.$eval(QUESTION, (li) => li.dataset.requestId);
          await panel.click(`${QUESTION.replace('[data-request-id]', `[data-request-id="${id}"]`)} button[data-answer="allow"]`).catch(() => {});
          await sleep(WATCH_MS);
          assert.equal(paid() - before, 0, `the held payment was sent by an allow after ${name}`);
        }
      } finally {
        await browser.disconnect().catch(() => {});
        if (undo) await undo().catch((e) => console.log(`undo: ${e.message}`));
        await denyAll();
        await giveBack();
      }
    });
  }

  // ---- W: the site's service worker woken by CDP ----------------------------------------------

  test("W the site's service worker woken by the agent (push, sync, periodic sync) pays nothing unasked", async () => {
    await denyAll();
    const browser = await connectAgent(h, 'rt10-sw', 60_000);
    try {
      const page = await browser.newPage();
      await page.goto(url('/rt10/plain'));
      const reg = await page.evaluate(() => Promise.race([
        navigator.serviceWorker.register('/rt10/sw.js', { scope: '/rt10/' }).then(() => navigator.serviceWorker.ready).then(() => 'registered', (e) => `not registered: ${e.message}`),
        new Promise((r) => setTimeout(() => r('no answer'), 10_000)),
      ]));
      const cdp = await page.createCDPSession();
      const regs = [];
      cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => regs.push(...e.registrations));
      const en = await cdp.send('ServiceWorker.enable').then(() => 'ok', (e) => e.message);
      await sleep(1000);
      const mine = regs.find((r) => r.scopeURL.includes('/rt10/'));
      const registrationId = mine?.registrationId ?? '0';
      const before = paid();
      const origin = h.pageServerUrl;
      const tries = [];
      for (const [m, p] of [
        ['ServiceWorker.deliverPushMessage', { origin, registrationId, data: 'x' }],
        ['ServiceWorker.dispatchSyncEvent', { origin, registrationId, tag: 't', lastChance: true }],
        ['ServiceWorker.dispatchPeriodicSyncEvent', { origin, registrationId, tag: 't' }],
        ['ServiceWorker.startWorker', { scopeURL: `${origin}/rt10/` }],
      ]) {
        tries.push(`${m}: ${await cdp.send(m, p).then((r) => `ok ${JSON.stringify(r)}`, (e) => e.message)}`);
      }
      await denyFor(5000);
      await sleep(WATCH_MS);
      console.log(`W: ${reg}; enable ${en}; registration ${registrationId} (${regs.length} seen); ${tries.join(' | ')}; payments ${paid() - before}`);
      assert.equal(paid() - before, 0, "the site's service worker paid unasked");
    } finally {
      await h.testPage.evaluate(() => navigator.serviceWorker.getRegistrations().then((rs) => Promise.all(rs.map((r) => r.unregister())))).catch(() => {});
      await closeAll(browser);
      await denyAll();
    }
  });

  // ---- E: Allow once with two identical writes held --------------------------------------------

  test('E two identical payments held at once: Allow once on one lets only that one through', async () => {
    await denyAll();
    const browser = await connectAgent(h, 'rt10-twins', 120_000);
    try {
      const page = await browser.newPage();
      await page.goto(url('/shop/checkout'));
      const before = paid();
      page.evaluate(() => {
        for (let i = 0; i < 2; i += 1) fetch('/shop/api/pay', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"amount":124000}' }).catch(() => {});
      }).catch(() => {});
      await asked('the twin payments');
      await sleep(1500);
      const shown = await panel.$$eval(QUESTION, (l) => l.length);
      const id = await panel.$eval(QUESTION, (li) => li.dataset.requestId);
      await panel.click(`${QUESTION.replace('[data-request-id]', `[data-request-id="${id}"]`)} button[data-answer="allow"]`);
      await denyFor(6000);
      await sleep(WATCH_MS);
      console.log(`E: questions shown ${shown}; payments ${paid() - before}`);
      assert.equal(paid() - before, 1, 'the Allow once of one twin let both through');
    } finally {
      await closeAll(browser);
      await denyAll();
    }
  });
  test('E2 a form payment allowed once is not sent again by a reload, a history round trip or a resubmission of its result page', async () => {
    await denyAll();
    const browser = await connectAgent(h, 'rt10-repost', 120_000);
    try {
      const page = await browser.newPage();
      await page.goto(url('/shop/checkout'));
      await page.type('#card', '4242424242424242');
      const before = paid();
      const clicked = page.click('#pay').then(() => 'clicked', (e) => e.message);
      await asked('the form payment');
      const id = await panel.$eval(QUESTION, (li) => li.dataset.requestId);
      await panel.click(`${QUESTION.replace('[data-request-id]', `[data-request-id="${id}"]`)} button[data-answer="allow"]`);
      await pollFor(async () => paid() - before >= 1, WAIT_MS, 'the allowed payment', h.detail);
      await withTimeout(clicked, 30_000, 'click').catch(() => {});
      await sleep(1000);
      const cdp = await page.createCDPSession();
      cdp.on('Page.javascriptDialogOpening', () => cdp.send('Page.handleJavaScriptDialog', { accept: true }).catch(() => {}));
      await cdp.send('Page.enable');
      const notes = [`after the allow: ${page.url()}`];
      const tryIt = async (what, act) => {
        const r = await act().then(() => 'ok', (e) => e.message.slice(0, 80));
        await denyFor(2500);
        notes.push(`${what}: ${r}; payments ${paid() - before}`);
      };
      await tryIt('Page.reload', () => cdp.send('Page.reload', {}));
      await tryIt('Page.reload ignoreCache', () => cdp.send('Page.reload', { ignoreCache: true }));
      await tryIt('location.reload()', () => page.evaluate(() => location.reload()));
      const hist = await cdp.send('Page.getNavigationHistory');
      notes.push(`history: ${hist.entries.map((e) => `${e.id} ${e.url}`).join(', ')} at ${hist.currentIndex}`);
      const payEntry = hist.entries.find((e) => e.url.endsWith('/shop/pay'));
      await tryIt('history.back then forward', async () => {
        await page.evaluate(() => history.back());
        await sleep(1000);
        await page.evaluate(() => history.forward());
      });
      if (payEntry) {
        await tryIt('Page.navigateToHistoryEntry of the result', async () => {
          await page.evaluate(() => history.back()).catch(() => {});
          await sleep(1000);
          await cdp.send('Page.navigateToHistoryEntry', { entryId: payEntry.id });
        });
      }
      await denyFor(3000);
      await sleep(WATCH_MS);
      console.log(`E2:\n  ${notes.join('\n  ')}`);
      assert.equal(paid() - before, 1, 'the allowed payment was sent again');
    } finally {
      await closeAll(browser);
      await denyAll();
    }
  });
});
