// No agent becomes the extension: an agent (with no policy at all) reaches none of the
// extension's or the browser's pages, nor a local file, by any route it has; a tab that gets
// there by a route the daemon cannot see loses its debugger at once; and the extension's
// privileged messages are refused from a tab a debugger of ours holds.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { connectAgent, connectPuppeteer, EXTENSION_ORIGIN, pollFor, RawCdp, sleep, startHarness, withTimeout } from './harness.mjs';

const OUR_PAGE = `${EXTENSION_ORIGIN}/sidepanel.html`;
const ROUTES = [OUR_PAGE, 'chrome://settings/', 'devtools://devtools/bundled/inspector.html', 'file:///etc/hostname', 'sidepanel.html'];

describe('an agent stays an agent', { timeout: 240_000 }, () => {
  let h;
  let agent;

  before(async () => {
    h = await startHarness({ name: 'privileged', share: false });
    await h.openPanel();
    agent = await connectAgent(h, 'mallory');
  });

  after(async () => {
    await agent?.disconnect().catch(() => {});
    await h?.close();
  });

  /** The URLs of the real browser's page targets (the test's hands, not the product). */
  const browserPages = async () => (await h.browser.targets()).filter((t) => t.type() === 'page').map((t) => t.url());

  test('navigations, new tabs and /json/new to privileged pages are refused', async () => {
    const page = await agent.newPage();
    await page.goto(h.pageUrl, { waitUntil: 'load', timeout: 20_000 });
    for (const url of ROUTES) {
      await assert.rejects(page.goto(url, { timeout: 15_000 }), /ERR_BLOCKED_BY_CLIENT|not a web page/, `${url}: goto`);
      assert.equal(page.url(), h.pageUrl, `${url}: the page stayed`);
      const privileged = await page.evaluate(() => typeof chrome !== 'undefined' && !!chrome.runtime?.id);
      assert.equal(privileged, false, `${url}: the agent's page runs no extension code`);
    }
    // A frame of the page, by id.
    const session = await page.createCDPSession();
    const { frameTree } = await session.send('Page.getFrameTree');
    const framed = await session.send('Page.navigate', { url: OUR_PAGE, frameId: frameTree.frame.id });
    assert.equal(framed.errorText, 'net::ERR_BLOCKED_BY_CLIENT');
    await session.detach();
    // A new tab, through the browser socket and through /json/new.
    const version = await (await fetch(`${h.agentEndpoint('mallory')}/json/version`)).json();
    const cdp = await RawCdp.open(version.webSocketDebuggerUrl);
    try {
      let id = 1;
      for (const url of ROUTES) {
        const answer = await cdp.send(id++, 'Target.createTarget', { url });
        assert.match(answer.error?.message ?? '', /not a web page/, `${url}: ${JSON.stringify(answer)}`);
        const response = await fetch(`${h.agentEndpoint('mallory')}/json/new?${url}`, { method: 'PUT' });
        assert.notEqual(response.status, 200, `/json/new?${url}: ${await response.text()}`);
      }
    } finally {
      cdp.close();
    }
    const pages = await browserPages();
    assert.deepEqual(pages.filter((u) => u.startsWith(EXTENSION_ORIGIN)), [OUR_PAGE], `only the panel the test opened: ${pages}`);
    assert.ok(!pages.some((u) => u.startsWith('chrome://settings')), `no settings page: ${pages}`);
    await page.close();
  });

  test("the worker's broadcasts, heard by any page of the extension, carry no secret", async () => {
    // A page of ours in a tab (the human's, held by no debugger): it hears every broadcast.
    const listener = await h.browser.newPage();
    await listener.goto(OUR_PAGE);
    await listener.evaluate(() => {
      window.heard = [];
      chrome.runtime.onMessage.addListener((message) => {
        window.heard.push(JSON.stringify(message));
      });
    });
    // State changes: an agent opens a page, and closes it.
    const page = await agent.newPage();
    await page.close();
    const heard = await pollFor(
      async () => {
        const all = await listener.evaluate(() => window.heard);
        return all.some((m) => m.includes('"agents"')) && all;
      },
      10_000,
      'a broadcast',
      h.detail,
    );
    for (const message of heard) {
      assert.ok(!message.includes(h.token), `the owner token in a broadcast: ${message.slice(0, 300)}`);
      assert.ok(!message.includes('/extension'), `the pairing URL in a broadcast: ${message.slice(0, 300)}`);
    }
    // The panel the human looks at still shows the endpoint (it asks for it).
    const shown = await h.panel.$eval('#client-endpoint', (el) => el.textContent);
    assert.ok(shown.includes(h.token), `the panel shows the endpoint: ${shown}`);
    await listener.close();
  });

  test('a tab taken to a privileged page by a route the daemon cannot see loses its debugger', async () => {
    const page = await agent.newPage();
    const marker = `${h.pageUrl}?privileged-${Date.now()}`;
    await page.goto(marker, { waitUntil: 'load', timeout: 20_000 });
    const tabId = await h.sw((url) => chrome.tabs.query({}).then((tabs) => tabs.find((t) => t.url === url)?.id ?? null), marker);
    assert.ok(tabId !== null, "the agent's tab is found");
    // The test's hands send the tab to the panel's page, as a history entry or a page's own
    // navigation could.
    await h.sw((id, url) => chrome.tabs.update(id, { url }), tabId, OUR_PAGE);
    // Whatever the agent's client tries meanwhile, it runs nothing in the extension's page.
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      const outcome = await withTimeout(
        page.evaluate(() => `${location.href} ${typeof chrome !== 'undefined' && !!chrome.runtime?.id}`).then(
          (v) => ({ v }),
          (e) => ({ e: e.message }),
        ),
        35_000,
        'evaluate after the tab left the web',
        h.detail,
      );
      if (outcome.v) assert.ok(!outcome.v.startsWith(EXTENSION_ORIGIN), `the agent ran code in the extension's page: ${outcome.v}`);
      if (outcome.e) break;
      await sleep(100);
    }
    await pollFor(
      async () => !(await (await fetch(`${h.agentEndpoint('mallory')}/json/list`)).json()).some((t) => t.url === marker || t.url.startsWith(EXTENSION_ORIGIN)),
      10_000,
      'the tab left the agent',
      h.detail,
    );
    // A page of ours the tab reached while held is not left running (a script armed for it
    // may have run).
    await pollFor(async () => (await h.sw((id) => chrome.tabs.get(id).then((t) => t.url), tabId)) === 'about:blank', 10_000, 'the page of ours blanked', h.detail);
    // The extension may attach again only once its own session has left the tab.
    const attachable = await h.sw(
      (id) =>
        chrome.debugger.attach({ tabId: id }, '1.3').then(
          () => chrome.debugger.detach({ tabId: id }).then(() => 'attachable'),
          (e) => e.message,
        ),
      tabId,
    );
    assert.equal(attachable, 'attachable', 'no debugger of the extension holds the tab');
  });
  test('a new tab on the blank page with a fragment opens, and the browser stays up', async () => {
    // From the blank page our tabs open on, a navigation to `about:blank#x` crashed Chromium
    // whole (every tab of the user's gone).
    const version = await (await fetch(`${h.agentEndpoint('mallory')}/json/version`)).json();
    const cdp = await RawCdp.open(version.webSocketDebuggerUrl);
    try {
      let id = 100;
      for (const url of ['about:blank#x', 'about:blank#']) {
        const answer = await withTimeout(cdp.send(id++, 'Target.createTarget', { url }), 30_000, `createTarget ${url}`);
        assert.ok(answer.result?.targetId, `${url}: ${JSON.stringify(answer)}`);
        await cdp.send(id++, 'Target.closeTarget', { targetId: answer.result.targetId });
      }
    } finally {
      cdp.close();
    }
    await sleep(1_000);
    assert.ok(h.browser.connected, 'the browser is still up');
    assert.match(await withTimeout(h.browser.version(), 10_000, 'the browser answers'), /Chrom/);
  });
});

describe('a tab the human shares brings no way back to the extension', { timeout: 180_000 }, () => {
  let h;
  let client;

  before(async () => {
    h = await startHarness({ name: 'privileged-history', share: false });
  });

  after(async () => {
    await client?.disconnect().catch(() => {});
    await h?.close();
  });

  test("a shared tab's history holds no page off the web, so a script armed for the next page never runs in ours", async () => {
    // The human had the extension's page open in this tab before going on to the web page.
    await h.testPage.goto(OUR_PAGE, { waitUntil: 'load' });
    await h.testPage.goto(h.pageUrl, { waitUntil: 'load' });
    await h.shareTestPage();
    client = await connectPuppeteer(h);
    const page = (await client.pages()).find((p) => p.url() === h.pageUrl);
    assert.ok(page, 'the shared page');
    const session = await page.createCDPSession();
    const { entries } = await session.send('Page.getNavigationHistory');
    assert.ok(!entries.some((e) => e.url.startsWith(EXTENSION_ORIGIN)), `history: ${JSON.stringify(entries.map((e) => e.url))}`);
    // A script armed for every new document, then a way back.
    await session.send('Page.addScriptToEvaluateOnNewDocument', {
      source: 'if (globalThis.chrome && chrome.storage) chrome.storage.session.set({ armed: location.href });',
    });
    await page.evaluate(() => history.back()).catch(() => {});
    await sleep(2_000);
    const armed = await h.sw(() => chrome.storage.session.get('armed').then((items) => items.armed ?? null));
    assert.equal(armed, null, `the agent's script ran in the extension's page: ${armed}`);
  });
});
