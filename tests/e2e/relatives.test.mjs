// Tabs related by `window.opener` (the second outside red team's B1-B3, on db36dd7): a page that
// opened another holds its window, and the page opened holds `window.opener`; of the same origin,
// each reaches the other's DOM, `fetch` and timers. An agent given one tab of such a pair wrote
// from the human's other tab, where no guard and no read-only rule stands, and its code there
// outlived Take back and the kill switch. A tab changing hands with a relative that stays with
// another holder is reloaded into a browsing context group of its own first (the extension's
// `relatives`); on a site without HTTPS, where the browser cannot do that, the human's hand-over
// is refused (B4, and B6 between agents). A tab closing leaves the tabs it joined one group (B7,
// the third red team's N1), and a site's service worker does not keep a tab taken back from
// being severed (B8, N3). Each test asserts the safe outcome.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { WAIT_MS, WATCH_MS, attackKit } from './attack-kit.mjs';
import { gestureSites } from './gesture-sites.mjs';
import { connectAgent, pollFor, sleep, startHarness } from './harness.mjs';

/** In an agent's page: pays from the page's opener, if it has one it can reach. */
const PAY_THROUGH_OPENER = () => {
  const o = window.opener;
  if (!o) return 'no opener';
  try {
    o.fetch('/shop/api/pay', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"through":"opener"}' });
    return `sent through ${o.location.href}`;
  } catch (e) {
    return `refused: ${e.message}`;
  }
};

/** In an agent's page: finds the window named `kid` (one of its browsing context group's, if
 *  any) and pays from it; a new blank window means there was none, and is closed. */
const PAY_THROUGH_NAMED = () => {
  const w = window.open('', 'kid');
  try {
    if (w.location.href === 'about:blank') {
      w.close();
      return 'no such window';
    }
    w.fetch('/shop/api/pay', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"through":"named"}' });
    return `sent through ${w.location.href}`;
  } catch (e) {
    return `refused: ${e.message}`;
  }
};

const APP_SHELL_WORKER = `
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (e) => {
  if (e.request.mode === 'navigate' && e.request.method === 'GET') {
    e.respondWith(new Response('<!doctype html><title>shell</title><p>app shell</p>', { headers: { 'content-type': 'text/html' } }));
  }
});`;

describe('tabs related by their openers', { timeout: 600_000 }, () => {
  let h;
  let site;
  let panel;

  before(async () => {
    site = gestureSites();
    h = await startHarness({
      name: 'relatives',
      share: false,
      extraPages: {
        ...site.pages,
        // An app shell: its service worker answers every page load of /shop/ itself.
        '/shop/sw.js': (req, res) => {
          res.writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'no-store' });
          res.end(APP_SHELL_WORKER);
        },
      },
      // A site without HTTPS that is not this machine's: the browser gives it no opener policy.
      chromiumArgs: ['--host-resolver-rules=MAP plain.test 127.0.0.1'],
    });
    panel = await h.openPanel();
  });

  after(async () => {
    await h?.close();
  });

  const { url, payments, tabOf, unshared, focusTab, humanOn, handPanelTabTo } = attackKit(() => ({ h, panel, site }));
  const tabAt = (u) => h.sw((at) => chrome.tabs.query({ url: at }).then((ts) => ts[0]?.id ?? null), u);
  const closeTabsAt = (u) => h.sw((at) => chrome.tabs.query({ url: at }).then((ts) => Promise.all(ts.map((t) => chrome.tabs.remove(t.id)))), u).catch(() => {});

  /** The human's tab, at `opener`, opens `kid` in a window named `kid` and keeps it. */
  async function humanOpensKid(opener, kid) {
    await humanOn(opener);
    await h.testPage.evaluate((u) => {
      window.kid = window.open(u, 'kid');
    }, kid);
    const kidId = await pollFor(() => tabAt(kid), WAIT_MS, 'the human page opened its window', h.detail);
    await pollFor(async () => (await tabOf(kidId))?.status === 'complete', WAIT_MS, 'the window loaded', h.detail);
    return kidId;
  }

  /** The human hands the tab `tabId` (at `at`) to `agent`, who connects: its browser and page. */
  async function hand(tabId, at, agent) {
    await focusTab(tabId);
    await handPanelTabTo(agent);
    await panel.waitForSelector('#held-by', { visible: true, timeout: WAIT_MS });
    const browser = await connectAgent(h, agent, 60_000);
    const page = await pollFor(async () => (await browser.pages()).find((p) => p.url() === at), WAIT_MS, 'the agent sees the handed tab', h.detail);
    return { browser, page };
  }

  async function takeBack(tabId) {
    await focusTab(tabId);
    await panel.click('#take-back');
    await pollFor(unshared(tabId), WAIT_MS, 'taken back', h.detail);
  }

  async function assertNoPaymentSince(before, what) {
    await sleep(WATCH_MS);
    assert.equal(payments() - before, 0, `a payment reached the server ${what}`);
  }

  test("B1 the human hands the window their page opened: the agent's page has no opener to write from", async () => {
    const kid = url('/shop/list?b1');
    const kidId = await humanOpensKid(url('/shop/checkout'), kid);
    const { browser, page } = await hand(kidId, kid, 'rel-child');
    try {
      const before = payments();
      assert.equal(await page.evaluate(PAY_THROUGH_OPENER), 'no opener');
      assert.equal(await h.testPage.evaluate(() => window.kid.closed), true, "the human page's handle to the window it opened reads closed");
      await assertNoPaymentSince(before, "through the handed window's opener");
    } finally {
      await browser.disconnect().catch(() => {});
      await takeBack(kidId).catch(() => {});
      await closeTabsAt(kid);
    }
  });

  test('B2 the human hands the tab whose page opened a window: the agent reaches none of its windows', async () => {
    const kid = url('/shop/list?b2');
    const kidId = await humanOpensKid(url('/shop/checkout'), kid);
    const at = url('/shop/checkout');
    const { browser, page } = await hand(h.tabId, at, 'rel-parent');
    try {
      const before = payments();
      assert.equal(await page.evaluate(PAY_THROUGH_NAMED), 'no such window');
      const kidPage = await pollFor(async () => (await h.browser.pages()).find((p) => p.url() === kid), WAIT_MS, "the human's window", h.detail);
      assert.equal(await kidPage.evaluate(() => window.opener), null, "the human's window keeps no opener in the agent's tab");
      assert.ok(await tabOf(kidId), "the human's window stays open");
      await assertNoPaymentSince(before, "through the handed tab's window");
    } finally {
      await browser.disconnect().catch(() => {});
      await takeBack(h.tabId).catch(() => {});
      await closeTabsAt(kid);
    }
  });

  test('B7 a closed tab leaves the tabs it joined related: the agent reaches no window of the group', async () => {
    // The human's page opens "mid", whose page opens "kid"; the human closes "mid" and hands
    // the first tab over. Chrome keeps the group: a named lookup still finds "kid" from it.
    const at = url('/shop/checkout');
    const mid = url('/shop/search?b7');
    const kid = url('/shop/list?b7');
    await humanOn(at);
    await h.testPage.evaluate((u) => {
      window.mid = window.open(u, 'mid');
    }, mid);
    const midId = await pollFor(() => tabAt(mid), WAIT_MS, 'the human page opened its window', h.detail);
    const midPage = await pollFor(async () => (await h.browser.pages()).find((p) => p.url() === mid), WAIT_MS, 'the middle window', h.detail);
    await midPage.waitForFunction(() => document.readyState === 'complete');
    await midPage.evaluate((u) => {
      window.kid = window.open(u, 'kid');
    }, kid);
    const kidId = await pollFor(() => tabAt(kid), WAIT_MS, 'the middle page opened its window', h.detail);
    await pollFor(async () => (await tabOf(kidId))?.status === 'complete', WAIT_MS, 'the window loaded', h.detail);
    await h.sw((id) => chrome.tabs.remove(id), midId);
    await pollFor(async () => !(await tabOf(midId)), WAIT_MS, 'the middle window closed', h.detail);
    const { browser, page } = await hand(h.tabId, at, 'rel-group');
    try {
      const before = payments();
      assert.equal(await page.evaluate(PAY_THROUGH_NAMED), 'no such window');
      assert.ok(await tabOf(kidId), "the human's window stays open");
      await assertNoPaymentSince(before, 'through a window of the closed tab');
    } finally {
      await browser.disconnect().catch(() => {});
      await takeBack(h.tabId).catch(() => {});
      await closeTabsAt(kid);
    }
  });

  test("B3 the human takes back the tab whose page opened the agent's window: the window cannot write from it", async () => {
    const at = url('/shop/checkout');
    await humanOn(at);
    const { browser, page } = await hand(h.tabId, at, 'rel-leave');
    const kid = url('/shop/list?b3');
    try {
      // The agent's page opens a window of its own (the agent's too), related to the handed tab.
      await page.evaluate((u) => {
        window.kid = window.open(u, 'kid');
      }, kid);
      const kidPage = await pollFor(async () => (await browser.pages()).find((p) => p.url() === kid), WAIT_MS, "the agent's window", h.detail);
      await kidPage.waitForFunction(() => document.readyState === 'complete');
      assert.match(await kidPage.evaluate(() => window.opener?.location.href ?? 'none'), /\/shop\/checkout/, 'related while both are the agent’s');
      await takeBack(h.tabId);
      const before = payments();
      assert.equal(await kidPage.evaluate(PAY_THROUGH_OPENER), 'no opener');
      await assertNoPaymentSince(before, "through the taken-back tab, from the agent's window");
    } finally {
      await browser.disconnect().catch(() => {});
      await closeTabsAt(kid);
    }
  });

  test("B8 a tab taken back whose page a form posted to is severed past the site's service worker", async () => {
    // The agent's page installs an app shell, opens a window and posts a form into it; the human
    // takes that window back. Its page is loaded again by URL (not reloaded: that would post the
    // form again), which the service worker would answer, without the severing opener policy.
    const at = url('/shop/checkout?b8');
    const kid = url('/shop/list?b8');
    const browser = await connectAgent(h, 'rel-app-shell', 60_000);
    let kidId = null;
    try {
      const page = await browser.newPage();
      await page.goto(at);
      await page.evaluate(async () => {
        await navigator.serviceWorker.register('/shop/sw.js');
        await navigator.serviceWorker.ready;
      });
      await page.evaluate((u) => {
        window.kid = window.open(u, 'kid');
      }, kid);
      // (No client attaches to the window: a client's scripts for new documents would have it
      // reloaded a second time, which goes past the worker anyway.)
      kidId = await pollFor(() => tabAt(kid), WAIT_MS, "the agent's window", h.detail);
      await pollFor(async () => (await tabOf(kidId))?.status === 'complete', WAIT_MS, 'the window loaded', h.detail);
      await page.evaluate(() => {
        const form = document.createElement('form');
        form.method = 'post';
        form.action = '/shop/search?b8';
        form.target = 'kid';
        form.innerHTML = '<input name="q" value="shoes">';
        document.body.append(form);
        form.submit();
      });
      await pollFor(async () => /\/shop\/search\?b8/.test((await tabOf(kidId))?.url ?? ''), WAIT_MS, 'the form posted into the window', h.detail);
      await pollFor(async () => (await tabOf(kidId))?.status === 'complete', WAIT_MS, 'the posted page loaded', h.detail);
      // The human drags it out of the agent's group.
      await h.sw((id) => chrome.tabs.ungroup(id), kidId);
      await pollFor(unshared(kidId), WAIT_MS, 'taken back', h.detail);
      const before = payments();
      assert.equal(await page.evaluate(PAY_THROUGH_NAMED), 'no such window');
      await assertNoPaymentSince(before, 'through the window taken back');
    } finally {
      await browser.disconnect().catch(() => {});
      await closeTabsAt(kid);
      await closeTabsAt(url('/shop/search?b8'));
      await closeTabsAt(at);
    }
  });

  test('B5 on a site without HTTPS a tab taken back takes back the windows it cannot be severed from', async () => {
    const port = new URL(h.pageServerUrl).port;
    const at = `http://plain.test:${port}/shop/checkout?b5`;
    const kid = `http://plain.test:${port}/shop/list?b5`;
    const browser = await connectAgent(h, 'rel-plain-leave', 60_000);
    try {
      const page = await browser.newPage();
      await page.goto(at);
      await page.evaluate((u) => {
        window.kid = window.open(u, 'kid');
      }, kid);
      const kidPage = await pollFor(async () => (await browser.pages()).find((p) => p.url() === kid), WAIT_MS, "the agent's window", h.detail);
      await kidPage.waitForFunction(() => document.readyState === 'complete');
      const [openerId, kidId] = [await tabAt(at), await tabAt(kid)];
      // As the panel's Take back asks it (the tab is in the agent's window, which the panel of
      // the human's window does not follow).
      const reply = await panel.evaluate((tabId) => chrome.runtime.sendMessage({ type: 'takeBack', tabId }), openerId);
      assert.equal(reply.error ?? null, null);
      await pollFor(unshared(openerId), WAIT_MS, 'taken back', h.detail);
      await pollFor(unshared(kidId), WAIT_MS, 'the window the taken-back tab reaches, taken back with it', h.detail);
      assert.ok(await tabOf(kidId), 'it stays open, as a tab taken back does');
    } finally {
      await browser.disconnect().catch(() => {});
      await closeTabsAt(kid);
      await closeTabsAt(at);
    }
  });

  test('B4 on a site without HTTPS the hand-over of a related tab is refused, with why', async () => {
    const port = new URL(h.pageServerUrl).port;
    const kid = `http://plain.test:${port}/shop/list?b4`;
    const kidId = await humanOpensKid(`http://plain.test:${port}/shop/checkout`, kid);
    try {
      // As the panel's Hand to agent asks it (its notice shows the answer's error).
      const reply = await panel.evaluate((tabId) => chrome.runtime.sendMessage({ type: 'handTab', tabId, agent: 'rel-plain' }), kidId);
      assert.match(reply.error ?? 'no error', /without HTTPS/);
      assert.equal(await unshared(kidId)(), true, 'not shared');
      // And from the panel's button: the human reads why, and it stays to be read.
      await focusTab(kidId);
      await handPanelTabTo('rel-plain');
      const notice = () => panel.$eval('#notice', (n) => (n.hidden ? '' : n.textContent));
      await pollFor(async () => /without HTTPS/.test(await notice()), WAIT_MS, "the panel's notice of the refusal", h.detail);
      await sleep(1_500);
      assert.match(await notice(), /without HTTPS/, 'the notice went before it could be read');
      assert.equal(await unshared(kidId)(), true, 'not shared');
    } finally {
      await closeTabsAt(kid);
    }
  });

  test("B6 on a site without HTTPS an agent's tab whose page opened another of its tabs is not handed to another agent", async () => {
    const port = new URL(h.pageServerUrl).port;
    const at = `http://plain.test:${port}/shop/checkout?b6`;
    const kid = `http://plain.test:${port}/shop/list?b6`;
    const browser = await connectAgent(h, 'rel-plain-holder', 60_000);
    try {
      const page = await browser.newPage();
      await page.goto(at);
      await page.evaluate((u) => {
        window.kid = window.open(u, 'kid');
      }, kid);
      await pollFor(async () => (await browser.pages()).some((p) => p.url() === kid), WAIT_MS, "the agent's window", h.detail);
      const openerId = await tabAt(at);
      const reply = await panel.evaluate((tabId) => chrome.runtime.sendMessage({ type: 'handTab', tabId, agent: 'rel-plain-taker' }), openerId);
      assert.match(reply.error ?? 'no error', /without HTTPS/);
      // (And stays so: the refusal gives neither tab back to the human a moment later.)
      await sleep(1_500);
      const kidId = await tabAt(kid);
      const holders = await h.sw(() => chrome.storage.session.get('sharedTabs').then((s) => s.sharedTabs ?? []));
      const holder = (id) => JSON.stringify(holders.find((t) => t.tabId === id) ?? null);
      assert.match(holder(openerId), /rel-plain-holder/, 'it stays with the agent that held it');
      assert.match(holder(kidId), /rel-plain-holder/, 'the window its page opened stays with the agent too');
      assert.doesNotMatch(JSON.stringify(holders), /rel-plain-taker/, 'the other agent got it');
    } finally {
      await browser.disconnect().catch(() => {});
      await closeTabsAt(kid);
      await closeTabsAt(at);
    }
  });
});
