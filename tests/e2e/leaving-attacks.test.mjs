// A malicious agent (a CDP client with its own endpoint) against the leaving rules and the
// guard's own scripts: it tries to keep code running in a tab after the tab left it (Take back,
// Unshare, the kill switch, its own release), to find or stop in the guard's scripts, or to pay
// by a click with `Page` off. Each test asserts the safe outcome. Found by a red team on
// c76d9d8, where these failed: D1, D1c, D2 (a client's breakpoint condition ran in the leaving
// reload), D3, D3d (a popup the handed tab opened was let go unreloaded), D4, D4b (Back restored
// the agent's page from the back/forward cache), D5 (a cache-first service worker served the
// leaving reload a page the agent wrote), D6 (Take back hung while the agent intercepted
// Document requests). A failure leaves a timer that pays into the next test's count: run the
// failing one alone (--test-name-pattern).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { PAY_EVERY_300_MS, SHOP, gestureSites } from './gesture-sites.mjs';
import { QUESTION, WAIT_MS, WATCH_MS, attackKit } from './attack-kit.mjs';
import { connectAgent, connectPuppeteer, pollFor, sleep, startHarness } from './harness.mjs';

const PAY_SRC = `(${PAY_EVERY_300_MS.toString()})()`;
/** The line of the shop's inline script (0-based, in the HTML document). */
const SHOP_SCRIPT_LINE = SHOP.split('\n').findIndex((l) => l.includes("document.getElementById('pay-js')"));
/** Written by a breakpoint's condition into the DOM (which every world shares): `object` where
 *  the guard's click hook is in scope. */
const MARK = "(document.documentElement.dataset.rt8 = (document.documentElement.dataset.rt8 || '') + '|' + typeof __tabtunnelClick), false";

/** A page without `no-store`, which the back/forward cache may keep. */
const CACHEABLE = '<!doctype html><html><head><meta charset="utf-8"><title>cacheable</title></head><body><h1>cacheable</h1></body></html>';
/** A page whose server answers a reload that bypasses the cache with no document (204): the
 *  document stays, with whatever the agent started in it. */
const STAYS = '<!doctype html><html><head><meta charset="utf-8"><title>stays</title></head><body><h1>stays</h1></body></html>';
/** An offline-first site: its service worker answers from its cache first. */
const PWA = `<!doctype html><html><head><meta charset="utf-8"><title>pwa</title></head><body><h1>pwa</h1>
<script>navigator.serviceWorker.register('/pwa/sw.js', { scope: '/pwa/' });</script></body></html>`;
const PWA_SW = `self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (e) => {
  if (e.request.method !== 'GET') return;
  e.respondWith(caches.match(e.request).then((hit) => hit || fetch(e.request)));
});`;

describe('attacks on a tab leaving its agent, and on the guard', { timeout: 900_000 }, () => {
  let h;
  let site;
  let panel;

  before(async () => {
    site = gestureSites();
    const pages = {
      ...site.pages,
      '/rt/cacheable': (req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(CACHEABLE);
      },
      '/rt/stays': (req, res) => {
        if (/no-cache/.test(`${req.headers['cache-control'] ?? ''} ${req.headers.pragma ?? ''}`)) {
          res.writeHead(204);
          res.end();
          return;
        }
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        res.end(STAYS);
      },
      '/pwa/app': (req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        res.end(PWA);
      },
      '/pwa/sw.js': (req, res) => {
        res.writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'no-store' });
        res.end(PWA_SW);
      },
    };
    h = await startHarness({ name: 'redteam8', share: false, extraPages: pages });
    panel = await h.openPanel();
  });

  after(async () => {
    await h?.close();
  });

  const { url, payments, tabOf, sharedTabIds, unshared, denyAll, asked, humanOn, handTo, noPaymentAfter } = attackKit(() => ({ h, panel, site }));
  const port = () => new URL(h.pageServerUrl).port;
  const writesTo = (p) => site.writes.filter((w) => w.endsWith(` ${p}`)).length;
  const outcome = (promise) => promise.then(() => 'done', (e) => e.message);

  // A locator: the panel rebuilds its tab card while the page loads, and a plain click can meet
  // the old, detached button.
  const takeBack = () => noPaymentAfter('the take back', () => panel.locator('#take-back').click(), unshared(h.tabId));

  // ---- D: leaving ----------------------------------------------------------------------------

  test('D1 take back: a Debugger breakpoint condition set by URL does not start a timer in the reloaded document', async () => {
    await denyAll();
    const { browser, page } = await handTo('rt-bp');
    try {
      const cdp = await page.createCDPSession();
      await cdp.send('Debugger.enable');
      await cdp.send('Debugger.setBreakpointByUrl', { url: url('/shop/checkout'), lineNumber: SHOP_SCRIPT_LINE, condition: `${PAY_SRC}, false` });
      // The condition runs in each new document of the page: the timer starts on a reload.
      const before = payments();
      await page.reload();
      await asked('the timer a breakpoint condition started');
      assert.equal(payments(), before, 'held while shared');
      await denyAll();
      await takeBack();
    } finally {
      await browser.disconnect().catch(() => {});
    }
  });

  /** Arms the D1 breakpoint: its condition starts the payment timer in each new shop document. */
  async function armBreakpointTimer(page) {
    const cdp = await page.createCDPSession();
    await cdp.send('Debugger.enable');
    await cdp.send('Debugger.setBreakpointByUrl', { url: url('/shop/checkout'), lineNumber: SHOP_SCRIPT_LINE, condition: `${PAY_SRC}, false` });
    return cdp;
  }

  test("D1b the agent's release (closing the handed tab): a breakpoint condition does not start a timer in the reloaded document", async () => {
    await denyAll();
    const { browser, page } = await handTo('rt-bp-release');
    try {
      await armBreakpointTimer(page);
      await noPaymentAfter("the agent's release", () => page.close(), unshared(h.tabId));
    } finally {
      await browser.disconnect().catch(() => {});
    }
  });

  test('D1c the kill switch: a breakpoint condition does not start a timer in the reloaded human tab', async () => {
    await denyAll();
    const { browser, page } = await handTo('rt-bp-kill');
    try {
      await armBreakpointTimer(page);
      await noPaymentAfter('the kill switch', () => panel.click('#kill-switch'), async () => (await sharedTabIds()).length === 0);
    } finally {
      await browser.disconnect().catch(() => {});
      await panel.click('#kill-switch');
      await pollFor(async () => (await fetch(`${h.agentEndpoint('x')}/json/version`)).status === 200, WAIT_MS, 'the kill switch released', h.detail);
    }
  });

  test('D8 take back while the agent keeps sending Page.stopLoading and Page.navigate to a page that pays', async () => {
    await denyAll();
    const { browser, page } = await handTo('rt-race');
    try {
      const cdp = await page.createCDPSession();
      await page.evaluate(PAY_EVERY_300_MS);
      await cdp.send('Page.setLifecycleEventsEnabled', { enabled: true }).catch(() => {});
      let racing = true;
      const race = (async () => {
        while (racing) {
          cdp.send('Page.stopLoading').catch(() => {});
          cdp.send('Page.navigate', { url: url('/rt/cacheable') }).catch(() => {});
          cdp.send('Runtime.evaluate', { expression: PAY_SRC }).catch(() => {});
          await sleep(100);
        }
      })();
      await sleep(500);
      await denyAll();
      try {
        await takeBack();
      } finally {
        racing = false;
        await race;
      }
    } finally {
      await browser.disconnect().catch(() => {});
    }
  });

  test('D9 take back: a cross-site frame (OOPIF) with a timer, and a "Leave site?" handler', async () => {
    await denyAll();
    const { browser, page } = await handTo('rt-oopif');
    try {
      await page.evaluate(async (src) => {
        const f = document.createElement('iframe');
        f.src = src;
        document.body.append(f);
        await new Promise((r) => f.addEventListener('load', r));
        window.addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = 'stay'; });
      }, `http://localhost:${port()}/shop/list`);
      const frame = await pollFor(() => page.frames().find((f) => f.url().includes('localhost')), WAIT_MS, 'the OOPIF', h.detail).then(() => page.frames().find((f) => f.url().includes('localhost')));
      await frame.evaluate(() => {
        setInterval(() => fetch('http://127.0.0.1:' + location.port + '/shop/api/pay', { method: 'POST', body: '{}', mode: 'no-cors' }).catch(() => {}), 300);
        setInterval(() => fetch('/shop/api/pay', { method: 'POST', body: '{}' }).catch(() => {}), 300);
      });
      await page.click('h1');
      await sleep(1000);
      await denyAll();
      const before = site.writes.length;
      await takeBack();
      assert.deepEqual(site.writes.slice(before).filter((w) => w.includes('pay')), [], 'the OOPIF paid after the leave');
    } finally {
      await browser.disconnect().catch(() => {});
    }
  });

  test("D10 take back: the page's server answers the leaving reload with no document (204); its timer writes no more", async () => {
    await denyAll();
    const { browser, page } = await handTo('rt-stays', url('/rt/stays'));
    try {
      const before = payments();
      await page.evaluate(PAY_SRC);
      await asked("the page's timer");
      assert.equal(payments(), before, 'held while shared');
      await denyAll();
      await takeBack();
      const shown = (await tabOf(h.tabId))?.url;
      assert.notEqual(shown, url('/rt/stays'), 'the document the agent left its timer in is gone');
    } finally {
      await browser.disconnect().catch(() => {});
    }
  });

  // A page writing every 10 ms or faster stalls the extension's worker with questions (every
  // build so far), so this one writes at a pace it keeps up with; the reset's gap (~15-35 ms
  // here) is then rarely met, and the test holds what the reset must leave behind.
  test('D11 the agent leaves (a reset: its debugger session detached and attached again) while its page writes: none reaches the server, the guard is back, no rule of the tab stays', async () => {
    await denyAll();
    const { browser, page } = await handTo('rt-reset');
    let connected = true;
    try {
      const before = payments();
      await page.evaluate(() => {
        setInterval(() => fetch('/shop/api/pay', { method: 'POST', body: '{}' }).catch(() => {}), 200);
      });
      await asked("the page's writes");
      await panel.click(`${QUESTION} button[data-answer="deny"]`);
      await browser.disconnect();
      connected = false;
      await sleep(WATCH_MS);
      assert.equal(payments() - before, 0, 'writes reached the server while the tab was reset');
      const tabRules = await h.sw(() =>
        chrome.declarativeNetRequest.getSessionRules().then((rules) => rules.filter((r) => (r.condition.tabIds ?? []).some((t) => t !== -1))),
      );
      assert.deepEqual(tabRules, [], "a rule refusing the tab's writes outlived the reset");
    } finally {
      if (connected) await browser.disconnect().catch(() => {});
      await panel.click('#take-back').catch(() => {});
      await pollFor(unshared(h.tabId), WAIT_MS, 'the tab taken back', h.detail);
      await denyAll();
    }
  });

  test('D2 unshare: a breakpoint condition plus a script for new documents (reloaded twice) leaves no timer', async () => {
    await denyAll();
    await humanOn(url('/shop/checkout'));
    const toggle = `#share-toggle[data-tab-id="${h.tabId}"]`;
    await panel.click(toggle);
    await panel.waitForSelector(`#shared-tabs li[data-tab-id="${h.tabId}"]`, { timeout: WAIT_MS });
    const browser = await connectPuppeteer(h);
    try {
      const page = (await browser.pages()).find((p) => p.url() === url('/shop/checkout'));
      assert.ok(page);
      const cdp = await page.createCDPSession();
      await cdp.send('Debugger.enable');
      await cdp.send('Debugger.setBreakpointByUrl', { urlRegex: '/shop/checkout$', lineNumber: SHOP_SCRIPT_LINE, condition: `${PAY_SRC}, false` });
      await page.evaluateOnNewDocument(PAY_EVERY_300_MS);
      await page.evaluate(PAY_EVERY_300_MS);
      await asked('the timers');
      await denyAll();
      await noPaymentAfter('the unshare', () => panel.click(toggle), unshared(h.tabId));
    } finally {
      await browser.disconnect().catch(() => {});
    }
  });

  // D4 and D4b: a page the back/forward cache keeps, and a no-store one (which it keeps too).
  for (const [name, path, agent] of [['D4', '/rt/cacheable', 'rt-bfcache'], ['D4b', '/shop/list', 'rt-bfcache-ctl']]) {
    test(`${name} take back, then the human's Back: the agent's page at ${path}, left in the back/forward cache, runs no timer`, async () => {
      await denyAll();
      const { browser, page } = await handTo(agent);
      try {
        await page.goto(url(path));
        await page.evaluate(PAY_EVERY_300_MS);
        await asked('the timer');
        await denyAll();
        await page.goto(url('/shop/checkout'));
        await takeBack();
        const before = payments();
        await h.testPage.goBack({ timeout: WAIT_MS }).catch(() => {});
        await sleep(WATCH_MS);
        assert.equal(payments() - before, 0, 'a page restored from the back/forward cache paid');
      } finally {
        await browser.disconnect().catch(() => {});
      }
    });
  }

  test("D5 take back: the site's cache-first service worker, its cache written by the agent, serves no timer to the leaving reload", async () => {
    await denyAll();
    // The human visited the site once: its service worker runs.
    await humanOn(url('/pwa/app'));
    await h.testPage.waitForFunction(() => navigator.serviceWorker.controller !== null || navigator.serviceWorker.ready.then(() => true), { timeout: WAIT_MS });
    await h.testPage.reload();
    await h.testPage.waitForFunction(() => navigator.serviceWorker.controller !== null, { timeout: WAIT_MS });
    const { browser, page } = await handTo('rt-sw', url('/pwa/app'));
    try {
      await page.evaluate(async (src) => {
        const c = await caches.open('pwa');
        await c.put('/pwa/app', new Response(`<!doctype html><title>pwa</title><h1>pwa</h1><script>${src}</script>`, { headers: { 'content-type': 'text/html' } }));
      }, PAY_SRC);
      await takeBack();
      // The human's own next visit (no agent any more) is the site's business, but say so.
      const before = payments();
      await h.testPage.reload().catch(() => {});
      await sleep(WATCH_MS);
      const after = payments() - before;
      if (after) console.log(`NOTE D5: the human's own reload after the leave ran the poisoned cache: ${after} payments`);
    } finally {
      await browser.disconnect().catch(() => {});
      await h.testPage.goto(url('/shop/checkout')).catch(() => {});
      await h.testPage.evaluate(() => navigator.serviceWorker.getRegistrations().then((rs) => Promise.all(rs.map((r) => r.unregister())))).catch(() => {});
    }
  });

  test('D7 take back: a same-origin iframe and a dedicated worker with timers, and Page/Runtime disabled by two clients', async () => {
    await denyAll();
    const { browser, page } = await handTo('rt-frames');
    const second = await connectAgent(h, 'rt-frames', 60_000);
    try {
      await page.evaluate(async (src) => {
        const f = document.createElement('iframe');
        f.src = '/shop/list';
        document.body.append(f);
        await new Promise((r) => f.addEventListener('load', r));
        f.contentWindow.eval(src);
        const blob = new Blob([`setInterval(() => fetch('/shop/api/pay', { method: 'POST', body: '{}' }).catch(() => {}), 300);`], { type: 'text/javascript' });
        window.__w = new Worker(URL.createObjectURL(blob));
      }, PAY_SRC);
      await asked('the timers');
      await denyAll();
      const cdp = await page.createCDPSession();
      await cdp.send('Page.disable').catch(() => {});
      await cdp.send('Runtime.disable').catch(() => {});
      const other = (await second.pages()).find((p) => p.url() === url('/shop/checkout'));
      if (other) {
        const cdp2 = await other.createCDPSession();
        await cdp2.send('Page.disable').catch(() => {});
        await cdp2.send('Runtime.disable').catch(() => {});
      }
      await takeBack();
    } finally {
      await second.disconnect().catch(() => {});
      await browser.disconnect().catch(() => {});
    }
  });

  // ---- C: the guard's own scripts ---------------------------------------------------------------

  test('C1 setBreakpointByUrl patterns that would stop in the guard are refused or never stop there', async () => {
    await denyAll();
    const browser = await connectAgent(h, 'rt-regex', 60_000);
    try {
      const page = await browser.newPage();
      await page.goto(url('/shop/checkout'));
      const cdp = await page.createCDPSession();
      const paused = [];
      cdp.on('Debugger.paused', (e) => {
        paused.push(e);
        cdp.send('Debugger.resume').catch(() => {});
      });
      await cdp.send('Debugger.enable');
      const accepted = [];
      for (const urlRegex of ['^$', '[\\s\\S]*', '.*?', '', '(?:)', '\\.js$', 'tabtunnel', '^[a-z]', '^(?!http)', '[^]', '.', 'js', '-', '^\\w+-[0-9a-f]+\\.js$']) {
        for (const lineNumber of [0, 1, 5, 20, 40]) {
          const r = await cdp.send('Debugger.setBreakpointByUrl', { urlRegex, lineNumber, condition: MARK }).then(() => true, () => false);
          if (r) accepted.push(`${urlRegex}@${lineNumber}`);
        }
      }
      // Without url or urlRegex: a scriptHash, and nothing at all.
      for (const params of [{ scriptHash: '0'.repeat(64), lineNumber: 0 }, { lineNumber: 0, condition: MARK }]) {
        if (await cdp.send('Debugger.setBreakpointByUrl', params).then(() => true, () => false)) accepted.push(JSON.stringify(params));
      }
      console.log(`C1 accepted: ${accepted.join(' ')}`);
      const paid = writesTo('/shop/pay');
      await page.reload();
      const pressed = outcome(page.click('#pay'));
      await asked('the Pay click');
      await denyAll();
      await pressed;
      await sleep(500);
      const marks = await page.evaluate(() => document.documentElement.dataset.rt8 ?? '');
      assert.ok(!marks.includes('object'), `a breakpoint condition ran in the guard's world: ${marks}`);
      assert.equal(writesTo('/shop/pay'), paid, 'the payment reached the server');
    } finally {
      await browser.disconnect().catch(() => {});
    }
  });

  test('C2 pause on every exception, click/script breakpoints and Debugger.pause during a Pay click: no pause in the guard, no payment', async () => {
    const configs = {
      exceptions: (cdp) => cdp.send('Debugger.setPauseOnExceptions', { state: 'all' }),
      clickListener: (cdp) => cdp.send('DOMDebugger.setEventListenerBreakpoint', { eventName: 'click' }),
      pointerListener: (cdp) => cdp.send('DOMDebugger.setEventListenerBreakpoint', { eventName: 'pointerdown' }),
      scriptFirstStatement: (cdp) => cdp.send('EventBreakpoints.setInstrumentationBreakpoint', { eventName: 'scriptFirstStatement' }),
      beforeScriptExecution: (cdp) => cdp.send('Debugger.setInstrumentationBreakpoint', { instrumentation: 'beforeScriptExecution' }),
      pause: (cdp) => cdp.send('Debugger.pause'),
    };
    const report = [];
    const bad = [];
    for (const [name, arm] of Object.entries(configs)) {
      await denyAll();
      const browser = await connectAgent(h, `rt-pause-${name}`, 60_000);
      try {
        const page = await browser.newPage();
        await page.goto(url('/shop/checkout'));
        const cdp = await page.createCDPSession();
        const seen = [];
        cdp.on('Debugger.paused', async (e) => {
          const frame = e.callFrames[0];
          const r = frame ? await cdp.send('Debugger.evaluateOnCallFrame', { callFrameId: frame.callFrameId, expression: 'typeof __tabtunnelClick' }).catch((err) => ({ result: { value: err.message } })) : null;
          const src = frame ? await cdp.send('Debugger.getScriptSource', { scriptId: frame.location.scriptId }).catch((err) => ({ scriptSource: err.message })) : { scriptSource: '' };
          seen.push({ reason: e.reason, scope: r?.result?.value, ours: /sourceURL=tabtunnel-|const ACTS|gesture guard/.test(src.scriptSource) });
          cdp.send('Debugger.resume').catch(() => {});
        });
        await cdp.send('Debugger.enable');
        const armed = await arm(cdp).then(() => 'armed', (e) => `not armed: ${e.message.slice(0, 80)}`);
        const paid = writesTo('/shop/pay') + writesTo('/shop/api/pay');
        const pressed = outcome(page.click('#pay'));
        const q = await panel.waitForSelector(QUESTION, { timeout: 10_000 }).then(() => 'asked', () => 'NOT asked');
        await denyAll();
        const click = await Promise.race([pressed, sleep(5000).then(() => 'still pending')]);
        await sleep(1000);
        const delta = writesTo('/shop/pay') + writesTo('/shop/api/pay') - paid;
        report.push(`${name} (${armed}): ${q}, click ${click.slice(0, 60)}, writes ${delta}, pauses ${JSON.stringify(seen).slice(0, 300)}`);
        if (delta || seen.some((x) => x.ours || x.scope === 'object')) bad.push(name);
      } finally {
        await browser.disconnect().catch(() => {});
      }
    }
    console.log(`C2:\n  ${report.join('\n  ')}`);
    assert.deepEqual(bad, [], 'a payment reached the server or a pause in the guard reached the client');
  });

  test("C3 guessed execution context and script ids after Runtime/Debugger were off for the document: no way into the guard's world", async () => {
    await denyAll();
    const browser = await connectAgent(h, 'rt-guess', 60_000);
    try {
      const page = await browser.newPage();
      await page.goto(url('/shop/checkout'));
      const cdp = await page.createCDPSession();
      await cdp.send('Runtime.disable');
      await cdp.send('Debugger.disable').catch(() => {});
      // A new document, its worlds announced to nobody; the guard reads it on a click.
      await cdp.send('Page.reload');
      await sleep(1500);
      const pressed = outcome(page.click('#pay'));
      await asked('the Pay click');
      await denyAll();
      await pressed;
      const found = [];
      for (let contextId = 1; contextId <= 120; contextId += 1) {
        const r = await cdp.send('Runtime.evaluate', { contextId, expression: 'typeof __tabtunnelClick + " " + location.href', returnByValue: true }).catch(() => null);
        if (r?.result?.value) found.push(`${contextId}:${r.result.value}`);
      }
      console.log(`C3 contexts: ${found.join(', ')}`);
      assert.deepEqual(found.filter((f) => f.includes('object ')), [], "the guard's world answered a guessed context id");
      // Script ids: the guard's announced by none, guessed.
      await cdp.send('Debugger.enable');
      const sources = [];
      for (let scriptId = 1; scriptId <= 200; scriptId += 1) {
        const r = await cdp.send('Debugger.getScriptSource', { scriptId: String(scriptId) }).catch(() => null);
        if (r && /sourceURL=tabtunnel-|const ACTS|gesture guard/.test(r.scriptSource)) sources.push(`${scriptId}: ${r.scriptSource.slice(0, 200)} ... ${r.scriptSource.slice(-120)}`);
      }
      assert.deepEqual(sources, [], "a guard script's source by a guessed id");
      // Breakpoints on guessed ids, with a condition that marks the DOM where it runs.
      let set = 0;
      for (let scriptId = 1; scriptId <= 200; scriptId += 1) {
        for (const lineNumber of [0, 2, 10, 30]) {
          if (await cdp.send('Debugger.setBreakpoint', { location: { scriptId: String(scriptId), lineNumber }, condition: MARK }).then(() => true, () => false)) set += 1;
        }
      }
      await cdp.send('Runtime.evaluate', { expression: "document.querySelector('#add').click()" });
      await sleep(500);
      await denyAll();
      const marks = await page.evaluate(() => document.documentElement.dataset.rt8 ?? '');
      console.log(`C3 breakpoints set on guessed ids: ${set}, marks: ${marks.slice(0, 200)}`);
      assert.ok(!marks.includes('object'), `a breakpoint on a guessed id ran in the guard's world: ${marks}`);
      // Objects: every function of the page's heap with the main world's prototype.
      const proto = await cdp.send('Runtime.evaluate', { expression: 'Function.prototype' });
      const objs = await cdp.send('Runtime.queryObjects', { prototypeObjectId: proto.result.objectId }).catch(() => null);
      if (objs) {
        const r = await cdp.send('Runtime.callFunctionOn', { objectId: objs.objects.objectId, functionDeclaration: 'function () { return this.filter((f) => { try { return /__tabtunnelClick|const ACTS/.test(Function.prototype.toString.call(f)); } catch { return false; } }).length + 0; }', returnByValue: true });
        console.log(`C3 queryObjects: ${JSON.stringify(r).slice(0, 300)}`);
        assert.ok(!r.result.value, "queryObjects found the guard's functions");
      }
    } finally {
      await browser.disconnect().catch(() => {});
    }
  });

  // ---- Page off ------------------------------------------------------------------------------

  async function pageOffAgent(name) {
    const browser = await connectAgent(h, name, 60_000);
    const page = await browser.newPage();
    const cdp = await page.createCDPSession();
    for (let i = 0; i < 3; i += 1) {
      await cdp.send('Page.disable').catch(() => {});
      await cdp.send('Page.navigate', { url: url(i % 2 ? '/shop/list' : '/shop/checkout') });
      await sleep(300);
      await cdp.send('Page.enable').catch(() => {});
    }
    await cdp.send('Page.disable').catch(() => {});
    await cdp.send('Page.navigate', { url: url('/shop/list') });
    await sleep(800);
    return { browser, page, cdp };
  }

  for (const [name, src] of [
    ['same-origin frame', () => '/shop/checkout'],
    ['cross-site frame (OOPIF)', () => `http://localhost:${port()}/shop/checkout`],
  ]) {
    test(`P1 Page off, navigated during toggles: a click on Pay in a ${name} is held`, async () => {
      await denyAll();
      const { browser, page, cdp } = await pageOffAgent(`rt-off-${name.length}`);
      try {
        await cdp.send('Runtime.evaluate', { expression: `new Promise((r) => { const f = document.createElement('iframe'); f.style = 'width:760px;height:420px'; f.src = ${JSON.stringify(src())}; f.onload = r; document.body.prepend(f); })`, awaitPromise: true });
        await sleep(800);
        const frame = await pollFor(() => page.frames().find((f) => f.url().endsWith('/shop/checkout')), WAIT_MS, 'the frame', h.detail).then(() => page.frames().find((f) => f.url().endsWith('/shop/checkout')));
        const before = writesTo('/shop/pay') + writesTo('/shop/api/pay');
        const notes = [];
        for (const sel of ['#pay', '#pay-js']) {
          const pressed = outcome(frame.click(sel));
          const q = await panel.waitForSelector(QUESTION, { timeout: 8000 }).then(() => 'asked', () => 'NOT asked');
          await denyAll();
          notes.push(`${sel}: ${q}, click ${await pressed}`);
          await sleep(1000);
        }
        console.log(`P1 ${name}: ${notes.join('; ')}; writes ${JSON.stringify(site.writes.slice(-4))}`);
        assert.equal(writesTo('/shop/pay') + writesTo('/shop/api/pay') - before, 0, `a payment from a ${name} with Page off`);
      } finally {
        await browser.disconnect().catch(() => {});
      }
    });
  }

  test('P2 Page off: a click on Pay in a same-origin popup the page opened is held', async () => {
    await denyAll();
    const { browser, page, cdp } = await pageOffAgent('rt-off-popup');
    try {
      const popped = new Promise((resolve) => browser.once('targetcreated', resolve));
      await cdp.send('Runtime.evaluate', { expression: "window.open('/shop/checkout'), 1" , userGesture: true });
      const popup = await (await popped).page();
      assert.ok(popup, 'the agent sees its popup');
      await popup.waitForSelector('#pay', { timeout: WAIT_MS });
      const pcdp = await popup.createCDPSession();
      await pcdp.send('Page.disable').catch(() => {});
      const before = writesTo('/shop/pay') + writesTo('/shop/api/pay');
      const pressed = outcome(popup.click('#pay'));
      await asked('a click in the popup');
      await denyAll();
      await pressed;
      await sleep(1000);
      assert.equal(writesTo('/shop/pay') + writesTo('/shop/api/pay') - before, 0, 'a payment from a popup with Page off');
      void page;
    } finally {
      await browser.disconnect().catch(() => {});
    }
  });
  /** The handed tab opens a same-origin popup and starts the payment timer in it through the
   *  window handle: no client command ever reaches the popup. */
  async function popupTimer(page) {
    await page.evaluate(async (src) => {
      const w = window.open('/shop/list');
      for (let i = 0; i < 200; i += 1) {
        try {
          if (w.location.pathname === '/shop/list' && w.document.readyState === 'complete') break;
        } catch {}
        await new Promise((r) => setTimeout(r, 50));
      }
      w.eval(src);
    }, PAY_SRC);
    await asked("the popup's timer");
    await denyAll();
  }
  const closePopups = () => h.sw((u) => chrome.tabs.query({ url: u }).then((ts) => Promise.all(ts.map((t) => chrome.tabs.remove(t.id)))), url('/shop/list')).catch(() => {});

  test("D3b the agent's release of the handed tab: the popup it opened holds no timer that writes", async () => {
    await denyAll();
    const { browser, page } = await handTo('rt-popup-release');
    try {
      await popupTimer(page);
      await noPaymentAfter("the agent's release", () => page.close(), unshared(h.tabId));
    } finally {
      await browser.disconnect().catch(() => {});
      await closePopups();
    }
  });

  test('D3c the agent disconnects without a release: the popup its handed tab opened stays guarded', async () => {
    await denyAll();
    const { browser, page } = await handTo('rt-popup-gone');
    try {
      await popupTimer(page);
      const before = payments();
      await browser.disconnect();
      await sleep(2 * WATCH_MS);
      assert.equal(payments() - before, 0, 'the popup paid once its agent disconnected');
    } finally {
      await closePopups();
      await panel.click('#take-back').catch(() => {});
    }
  });

  test('D3d the kill switch: the popup a handed tab opened holds no timer that writes', async () => {
    await denyAll();
    const { browser, page } = await handTo('rt-popup-kill');
    try {
      await popupTimer(page);
      await noPaymentAfter('the kill switch', () => panel.click('#kill-switch'), async () => (await sharedTabIds()).length === 0);
    } finally {
      await browser.disconnect().catch(() => {});
      await closePopups();
      await panel.click('#kill-switch');
      await pollFor(async () => (await fetch(`${h.agentEndpoint('x')}/json/version`)).status === 200, WAIT_MS, 'the kill switch released', h.detail);
    }
  });

  // ---- Last: these two leave the human's tab stuck as it is let go (see the report) --------

  test('D6 take back: the agent intercepting Document responses cannot put its page into the leaving reload', async () => {
    await denyAll();
    const { browser, page } = await handTo('rt-fetchdoc');
    try {
      const cdp = await page.createCDPSession();
      const body = Buffer.from(`<!doctype html><title>x</title><script>${PAY_SRC}</script>`).toString('base64');
      cdp.on('Fetch.requestPaused', (e) => {
        cdp.send('Fetch.fulfillRequest', { requestId: e.requestId, responseCode: 200, responseHeaders: [{ name: 'content-type', value: 'text/html' }], body }).catch(() => {
          cdp.send('Fetch.continueRequest', { requestId: e.requestId }).catch(() => {});
        });
      });
      await cdp.send('Fetch.enable', { patterns: [{ urlPattern: '*', resourceType: 'Document', requestStage: 'Request' }] });
      await takeBack();
    } finally {
      await browser.disconnect().catch(() => {});
    }
  });

  test('D3 take back, then the agent disconnects: a same-origin popup the handed tab opened holds no timer that writes', async () => {
    await denyAll();
    const { browser, page } = await handTo('rt-popup');
    let disconnected = false;
    try {
      await popupTimer(page);
      // The popup is the active tab: the panel's Take back is for it.
      const popupId = await h.sw((u) => chrome.tabs.query({ url: u }).then((ts) => ts[0]?.id), url('/shop/list'));
      assert.ok(popupId, 'the popup');
      await noPaymentAfter('the take back of the popup', () => panel.click('#take-back'), unshared(popupId));
      const before = payments();
      await browser.disconnect();
      disconnected = true;
      await sleep(WATCH_MS);
      assert.equal(payments() - before, 0, "the popup's payments reached the server after its agent left");
    } finally {
      if (!disconnected) await browser.disconnect().catch(() => {});
      await denyAll();
      // The popup goes on paying: close it for whatever runs next.
      await h.sw((u) => chrome.tabs.query({ url: u }).then((ts) => Promise.all(ts.map((t) => chrome.tabs.remove(t.id)))), url('/shop/list')).catch(() => {});
    }
  });

});
