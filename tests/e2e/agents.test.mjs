// Every agent its own tabs in the user's one logged-in browser: agents named in the endpoint URL,
// real tabs from Target.createTarget, a scoped view, grace periods, and each client's ordinary
// session through an agent endpoint.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';

import { RawCdp, pngHasContent, pollFor, rawGet, sleep, startHarness, withTimeout, connectAgent } from './harness.mjs';
import { pagesOf, startChromeDevtoolsMcp, uidOf } from './mcp.mjs';

const WAIT_MS = 30_000;
const GRACE_SECONDS = 3;

/** The browser's tabs as the extension sees them: [{id, url, windowId, groupId}]. */
async function browserTabs(h) {
  return h.sw(async () => (await chrome.tabs.query({})).map((t) => ({ id: t.id, url: t.url, windowId: t.windowId, groupId: t.groupId })));
}


/** The page targets a puppeteer browser knows. */
function puppeteerPageUrls(browser) {
  return browser.targets().filter((t) => t.type() === 'page').map((t) => t.url());
}

describe('every agent its own tabs', { timeout: 900_000 }, () => {
  let h;
  let appUrl;

  before(async () => {
    h = await startHarness({ name: 'agents', daemonArgs: ['--agent-grace', String(GRACE_SECONDS)] });
    // The human signs in once, in a tab of their own that they never share.
    appUrl = await h.loginAsHuman('human');
  });

  after(async () => {
    await h?.close();
  });

  test('eight agents at once, each in its own tabs, all signed in, no cross-talk', async () => {
    const ROUNDS = 6;
    const urlFor = (agent) => `${appUrl}?agent=${agent}`;
    const kinds = ['puppeteer', 'playwright', 'chrome-devtools-mcp'];
    const agents = Array.from({ length: 8 }, (_, i) => ({ name: `agent-${i}`, kind: kinds[i % 3] }));
    const otherUrls = (me) => agents.filter((a) => a.name !== me).map((a) => urlFor(a.name));
    const assertOwnListing = (me, urls) => {
      assert.ok(urls.includes(urlFor(me)), `${me} does not list its own tab: ${urls}`);
      for (const url of urls) {
        assert.ok(!otherUrls(me).includes(url), `${me} lists another agent's tab ${url}`);
        assert.notEqual(url, appUrl, `${me} lists the human's unshared tab`);
        assert.notEqual(url, h.pageUrl, `${me} lists the tab the human shared with the plain endpoint`);
      }
    };

    async function runPuppeteer({ name }) {
      const browser = await connectAgent(h, name);
      try {
        const page = await browser.newPage();
        await page.goto(urlFor(name));
        for (let round = 0; round < ROUNDS; round += 1) {
          const value = `${name}-${round}`;
          await page.$eval('#note', (el) => (el.value = ''));
          await page.type('#note', value);
          await page.click('#save');
          assert.equal(await page.$eval('#echo', (el) => el.textContent), value);
          assert.equal(await page.$eval('#who', (el) => el.textContent), 'human', `${name} is not signed in`);
          assertOwnListing(name, puppeteerPageUrls(browser));
        }
        await page.close();
      } finally {
        await browser.disconnect();
      }
    }

    async function runPlaywright({ name }) {
      const browser = await withTimeout(chromium.connectOverCDP(h.agentEndpoint(name)), WAIT_MS, `connectOverCDP ${name}`, h.detail);
      try {
        const context = browser.contexts()[0];
        const page = await context.newPage();
        await page.goto(urlFor(name));
        for (let round = 0; round < ROUNDS; round += 1) {
          const value = `${name}-${round}`;
          await page.fill('#note', value);
          await page.click('#save');
          assert.equal(await page.textContent('#echo'), value);
          assert.equal(await page.textContent('#who'), 'human', `${name} is not signed in`);
          assertOwnListing(name, context.pages().map((p) => p.url()));
        }
        await page.close();
      } finally {
        await browser.close();
      }
    }

    async function runChromeDevtoolsMcp({ name }) {
      const mcp = await startChromeDevtoolsMcp(h, h.agentEndpoint(name), `chrome-devtools-mcp ${name}`);
      try {
        const listing = await mcp.call('new_page', { url: urlFor(name) });
        const pageId = pagesOf(listing).find((p) => p.url === urlFor(name))?.id;
        assert.ok(pageId, `new_page did not list the new page:\n${listing}`);
        for (let round = 0; round < ROUNDS; round += 1) {
          const value = `${name}-${round}`;
          const snapshot = await mcp.call('take_snapshot', { pageId });
          await mcp.call('fill', { pageId, uid: uidOf(snapshot, /textbox "Note"/), value });
          await mcp.call('click', { pageId, uid: uidOf(snapshot, /button "Save"/) });
          const read = await mcp.call('evaluate_script', {
            pageId,
            function: "() => [document.querySelector('#echo').textContent, document.querySelector('#who').textContent]",
          });
          assert.ok(read.includes(`"${value}"`) && read.includes('"human"'), `${name} read back ${read}`);
          assertOwnListing(name, pagesOf(await mcp.call('list_pages')).map((p) => p.url));
        }
      } finally {
        await mcp.close();
      }
    }

    const run = { puppeteer: runPuppeteer, playwright: runPlaywright, 'chrome-devtools-mcp': runChromeDevtoolsMcp };
    const outcomes = await Promise.allSettled(agents.map((a) => run[a.kind](a)));
    const failures = outcomes
      .map((o, i) => (o.status === 'rejected' ? `${agents[i].name} (${agents[i].kind}): ${o.reason?.stack ?? o.reason}` : null))
      .filter(Boolean);
    assert.deepEqual(failures, [], `${failures.join('\n\n')}\n${h.detail()}`);
    // The human's own tabs are untouched.
    const urls = (await browserTabs(h)).map((t) => t.url);
    assert.ok(urls.includes(appUrl) && urls.includes(h.pageUrl), `the human's tabs are gone: ${urls}`);
  });

  test("puppeteer's ordinary session through an agent endpoint", async () => {
    const browser = await connectAgent(h, 'pptr');
    const page = await browser.newPage();
    await page.goto(h.pageUrl);
    await page.type('#name', 'Ada');
    await page.click('#go');
    assert.equal(await page.$eval('#out', (el) => el.textContent), 'Hello, Ada!');
    const shot = await page.screenshot();
    assert.ok(pngHasContent(Buffer.from(shot)), 'the screenshot is blank');
    const targetId = page.target()._targetId;
    const tabsBefore = await browserTabs(h);
    const created = tabsBefore.find((t) => t.url === h.pageUrl && t.groupId !== -1);
    assert.ok(created, `the new tab is not in a tab group of its agent: ${JSON.stringify(tabsBefore)}`);
    const group = await h.sw((id) => chrome.tabGroups.get(id), created.groupId);
    assert.equal(group.title, 'pptr');
    await page.close();
    assert.deepEqual(puppeteerPageUrls(browser), []);
    await pollFor(async () => !(await browserTabs(h)).some((t) => t.id === created.id), WAIT_MS, 'the closed page to close its tab', h.detail);
    await browser.disconnect();
    const list = await (await fetch(`${h.agentEndpoint('pptr')}/json/list`)).json();
    assert.ok(!list.some((p) => p.id === targetId));
  });

  test("Playwright's ordinary session: newPage, a popup, page.close(), browser.close()", async () => {
    const before = new Set((await browserTabs(h)).map((t) => t.id));
    const browser = await withTimeout(chromium.connectOverCDP(h.agentEndpoint('pw')), WAIT_MS, 'connectOverCDP', h.detail);
    const context = browser.contexts()[0];
    assert.deepEqual(context.pages(), [], 'a new agent starts with no tabs');
    const page = await context.newPage();
    await page.goto(`${h.pageServerUrl}/popup.html`);
    const [popup] = await Promise.all([context.waitForEvent('page', { timeout: WAIT_MS }), page.click('#blank')]);
    await popup.waitForLoadState();
    assert.equal(popup.url(), `${h.pageServerUrl}/other.html`);
    assert.equal(await popup.textContent('#other'), 'another page, never shared');
    assert.equal(await popup.opener(), page);
    const [windowOpened] = await Promise.all([page.waitForEvent('popup', { timeout: WAIT_MS }), page.evaluate((url) => window.open(url), h.pageUrl)]);
    await windowOpened.waitForLoadState();
    assert.equal(await windowOpened.title(), 'tabtunnel test form');
    await popup.close();
    await windowOpened.close();
    await page.close();
    assert.deepEqual(context.pages(), []);
    await browser.close();
    // All that is left is the agent's prepared tab, which closes once the daemon has seen the
    // agent's last connection go: a moment after the client's close returns (on loaded cores,
    // once after this look at the tabs).
    let left = [];
    const gone = async () => (left = (await browserTabs(h)).filter((t) => !before.has(t.id))).length === 0;
    await pollFor(gone, WAIT_MS, "the agent's tabs to close", () => `left: ${JSON.stringify(left)}\n${h.detail()}`);
    const tabs = await browserTabs(h);
    const urls = tabs.map((t) => t.url);
    assert.ok(urls.includes(appUrl) && urls.includes(h.pageUrl), `the human's tabs stay: ${urls}`);
  });

  test("chrome-devtools-mcp's ordinary session: new_page, select_page, navigate_page, resize_page, take_screenshot, close_page", async () => {
    const mcp = await startChromeDevtoolsMcp(h, h.agentEndpoint('cdm'));
    try {
      assert.deepEqual(pagesOf(await mcp.call('list_pages')), [], 'a new agent starts with no pages');
      await mcp.call('new_page', { url: h.pageUrl });
      const listing = await mcp.call('new_page', { url: `${h.pageServerUrl}/other.html` });
      const pages = pagesOf(listing);
      assert.deepEqual(pages.map((p) => p.url), [h.pageUrl, `${h.pageServerUrl}/other.html`]);
      const first = pages[0].id;
      const selected = pagesOf(await mcp.call('select_page', { pageId: first }));
      assert.equal(selected.find((p) => p.selected)?.id, first);
      await mcp.call('navigate_page', { pageId: first, type: 'url', url: `${appUrl}?agent=cdm` });
      await mcp.call('resize_page', { pageId: first, width: 700, height: 500 });
      const size = await mcp.call('evaluate_script', { pageId: first, function: '() => [innerWidth, innerHeight, document.querySelector("#who").textContent]' });
      assert.match(size.replace(/\s+/g, ''), /\[700,500,"human"\]/, `resize_page or the login did not hold: ${size}`);
      const shot = await mcp.callRaw('take_screenshot', { pageId: first });
      const image = shot.content.find((c) => c.type === 'image');
      assert.ok(image && pngHasContent(Buffer.from(image.data, 'base64')), 'take_screenshot gave no content');
      const left = pagesOf(await mcp.call('close_page', { pageId: pages[1].id }));
      assert.deepEqual(left.map((p) => p.url), [`${appUrl}?agent=cdm`]);
    } finally {
      await mcp.close();
    }
  });

  test("one agent naming another's targets is refused as if they did not exist", async () => {
    const owner = await connectAgent(h, 'owner');
    const page = await owner.newPage();
    await page.goto(h.pageUrl);
    const targetId = page.target()._targetId;
    const intruderUrl = `${h.agentEndpoint('intruder')}/cdp`.replace('http://', 'ws://');
    const intruder = await RawCdp.open(intruderUrl);
    try {
      const tries = [
        ['Target.attachToTarget', { targetId, flatten: true }],
        ['Target.activateTarget', { targetId }],
        ['Target.closeTarget', { targetId }],
        ['Target.getTargetInfo', { targetId }],
        ['Target.getTargets', {}],
      ];
      let id = 1;
      for (const [method, params] of tries.slice(0, 4)) {
        const reply = await intruder.send(id++, method, params);
        assert.equal(reply.error?.message, 'No target with given id found', `${method}: ${JSON.stringify(reply)}`);
      }
      const listed = await intruder.send(id++, ...tries[4]);
      assert.deepEqual(listed.result.targetInfos, [], 'the intruder lists nothing');
      const closed = await rawGet(h.port, `/${h.token}/agent/intruder/json/close/${targetId}`);
      assert.equal(closed.status, 404);
      // The owner's page is still there and still works.
      assert.equal(await page.title(), 'tabtunnel test form');
    } finally {
      intruder.close();
      await owner.disconnect();
    }
  });

  test('a reconnect within the grace period finds the same tabs; after it, the created tabs are closed', async () => {
    let browser = await connectAgent(h, 'grace');
    const page = await browser.newPage();
    await page.goto(`${h.pageUrl}?grace`);
    await browser.disconnect();
    browser = await connectAgent(h, 'grace');
    assert.deepEqual(puppeteerPageUrls(browser), [`${h.pageUrl}?grace`], 'back within the grace period');
    await browser.disconnect();
    await pollFor(
      async () => !(await browserTabs(h)).some((t) => t.url === `${h.pageUrl}?grace`),
      WAIT_MS,
      `the tab closing ${GRACE_SECONDS} s after its agent left`,
      h.detail,
    );
    browser = await connectAgent(h, 'grace');
    assert.deepEqual(puppeteerPageUrls(browser), []);
    await browser.disconnect();
  });

  test("one agent's hung command and event flood do not hold up another agent", async () => {
    const busy = await connectAgent(h, 'busy');
    const calm = await connectAgent(h, 'calm');
    try {
      const busyPage = await busy.newPage();
      await busyPage.goto(h.pageUrl);
      const calmPage = await calm.newPage();
      await calmPage.goto(h.pageUrl);
      // A command its tab will not answer for as long as the test runs, and a flood of events.
      const hung = busyPage.evaluate(() => new Promise(() => {})).catch(() => 'ended');
      const busySession = await busyPage.createCDPSession();
      await busySession.send('Runtime.enable');
      let floodEvents = 0;
      busySession.on('Runtime.consoleAPICalled', () => (floodEvents += 1));
      const flood = busySession.send('Runtime.evaluate', {
        expression: "for (let i = 0; i < 20000; i++) console.log('flood ' + i + ' ' + 'x'.repeat(200)); 1",
      });
      // Meanwhile the other agent works normally, and every answer is its own.
      for (let i = 0; i < 50; i += 1) {
        assert.equal(await calmPage.evaluate((n) => n * 2, i), i * 2);
      }
      await flood;
      await pollFor(() => floodEvents === 20000, WAIT_MS, `all 20000 flood events (got ${floodEvents})`, h.detail);
      assert.equal(await Promise.race([hung, sleep(10).then(() => 'still waiting')]), 'still waiting');
    } finally {
      await busy.disconnect();
      await calm.disconnect();
    }
  });

  test("a tab opened while an agent's window is in front, by no page of the agent, stays out of its hands", async () => {
    // Chrome's `Target.createTarget` (as the human's Ctrl+T) puts the tab in the last active
    // window and makes the tab in front there its `openerTabId`: here the agent's. No page of
    // the agent opened it, so it is not the agent's popup.
    const agentUrl = `${h.pageServerUrl}/other.html?agent-in-front`;
    const directUrl = `${h.pageServerUrl}/other.html?direct-client`;
    const agent = await connectAgent(h, 'in-front');
    let direct;
    try {
      const page = await agent.newPage();
      await page.goto(agentUrl);
      const agentTab = await h.sw(async (url) => {
        const [tab] = await chrome.tabs.query({ url });
        await chrome.windows.update(tab.windowId, { focused: true });
        return tab;
      }, agentUrl);
      direct = await puppeteer.connect({ browserWSEndpoint: h.realBrowserWsEndpoint, defaultViewport: null });
      const directPage = await direct.newPage();
      await directPage.goto(directUrl, { timeout: WAIT_MS });
      const directTab = await h.sw(async (url) => (await chrome.tabs.query({ url }))[0], directUrl);
      assert.equal(directTab.windowId, agentTab.windowId, "precondition: the direct client's tab opened in the agent's window");
      assert.equal(directTab.openerTabId, agentTab.id, "precondition: Chrome names the agent's tab its opener");
      assert.equal(await directPage.$eval('#other', (e) => e.textContent), 'another page, never shared');
      // A popup of the agent's page, opened after, is the agent's: by the time it is listed,
      // the direct client's tab would have been too.
      const [popup] = await Promise.all([
        new Promise((resolve) => agent.once('targetcreated', resolve)),
        page.evaluate((url) => window.open(url), `${h.pageServerUrl}/other.html?popup`),
      ]);
      assert.equal(popup.type(), 'page');
      const urls = puppeteerPageUrls(agent);
      assert.ok(!urls.includes(directUrl), `the agent lists the direct client's tab: ${urls}`);
      const tab = await h.sw(async (id) => chrome.tabs.get(id), directTab.id);
      assert.equal(tab.groupId, -1, "the direct client's tab joined no agent's group");
    } finally {
      await direct?.disconnect();
      await agent.close();
    }
  });

  test('/json/new, /json/activate and /json/close act for the agent named in the URL', async () => {
    const base = `${h.agentEndpoint('http-agent')}/json`;
    const created = await (await fetch(`${base}/new?${h.pageServerUrl}/other.html`, { method: 'PUT' })).json();
    assert.equal(created.url, `${h.pageServerUrl}/other.html`);
    assert.ok(created.webSocketDebuggerUrl.includes('/agent/http-agent/devtools/page/'));
    const list = await (await fetch(`${base}/list`)).json();
    assert.deepEqual(list.map((p) => p.id), [created.id]);
    assert.equal(await (await fetch(`${base}/activate/${created.id}`)).text(), 'Target activated');
    assert.equal(await (await fetch(`${base}/close/${created.id}`)).text(), 'Target is closing');
    await pollFor(async () => (await (await fetch(`${base}/list`)).json()).length === 0, WAIT_MS, '/json/close to close the tab', h.detail);
    const bad = await fetch(`${h.clientEndpoint}/agent/not%20ok/json/version`);
    assert.equal(bad.status, 400);
  });
});
