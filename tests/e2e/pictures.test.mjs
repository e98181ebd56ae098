// Pictures where a person would rather look (issue 29): each agent's card in the side panel shows
// a live picture of the tab it works in, taken only while a panel is open; a click on it brings
// that tab forward without the agent's page noticing; a held gesture keeps its picture beside the
// answer in the agent's history. Headless by default; TABTUNNEL_E2E_HEADFUL=1 runs it headful
// under Xvfb, where only a window's visible tab paints and window focus is real.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { gestureSites } from './gesture-sites.mjs';
import { connectAgent, pollFor, sleep, startHarness, withTimeout } from './harness.mjs';

const WAIT_MS = 30_000;
const HEADFUL = process.env.TABTUNNEL_E2E_HEADFUL === '1';
const COLOUR_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tabtunnel colour page</title></head>
<body style="margin:0;background:rgb(200,40,40)"><h1 id="h">red</h1>
<script>
  window.seen = [];
  document.addEventListener('visibilitychange', () => seen.push('visibility:' + document.visibilityState));
  addEventListener('focus', () => seen.push('focus'));
  addEventListener('blur', () => seen.push('blur'));
</script></body></html>
`;

describe(`pictures of agents' tabs in the side panel${HEADFUL ? ' (headful)' : ''}`, { timeout: 300_000 }, () => {
  let h;
  let site;

  before(async () => {
    site = gestureSites();
    h = await startHarness({
      name: 'pictures',
      share: false,
      headful: HEADFUL,
      extraPages: { ...site.pages, '/colour.html': COLOUR_PAGE },
    });
    // Every Page.captureScreenshot the worker sends, the extension's own among them (ours ask
    // `optimizeForSpeed`), and how long each took.
    await h.sw(() => {
      globalThis.captures = [];
      const original = chrome.debugger.sendCommand;
      chrome.debugger.sendCommand = function (target, method, params, ...rest) {
        const result = original.call(this, target, method, params, ...rest);
        if (method === 'Page.captureScreenshot') {
          const entry = { tabId: target.tabId, ours: params?.optimizeForSpeed === true, at: performance.now() };
          captures.push(entry);
          Promise.resolve(result).then(
            (r) => { entry.ms = performance.now() - entry.at; entry.bytes = r?.data?.length; },
            (e) => { entry.failed = String(e); },
          );
        }
        return result;
      };
    });
  });

  after(async () => {
    await h?.close();
  });

  const ourCaptures = () => h.sw(() => captures.filter((c) => c.ours));
  const card = (agent) => `#agents li[data-agent="${agent}"]`;
  const pictureOf = async (panel, agent) =>
    panel.$eval(`${card(agent)} .agent-picture img`, (img) => img.getAttribute('src')).catch(() => null);
  const tabOfUrl = (url) => h.sw(async (u) => (await chrome.tabs.query({ url: u })).map((t) => ({ id: t.id, windowId: t.windowId }))[0], url);

  /** The human clicks in the panel, in front of the agents' windows (headful, without a window
   *  manager, a new window is mapped over it and a click there never lands). */
  async function clickInPanel(panel, selector) {
    await h.sw(async () => {
      const [popup] = await chrome.windows.getAll({ windowTypes: ['popup'] });
      if (popup) await chrome.windows.update(popup.id, { focused: true });
    });
    await panel.bringToFront();
    await panel.click(selector);
  }

  async function agentOnColourPage(agent) {
    const browser = await connectAgent(h, agent);
    const page = await browser.newPage();
    const url = `${h.pageServerUrl}/colour.html?${agent}`;
    await page.goto(url);
    return { browser, page, tab: await tabOfUrl(url) };
  }

  test("an agent's card shows a picture of its tab, taken again after it acts", async () => {
    const panel = await h.openPanel();
    const { browser, page, tab } = await agentOnColourPage('painter');
    try {
      const first = await pollFor(async () => {
        const src = await pictureOf(panel, 'painter');
        return src?.startsWith('data:image/jpeg;base64,') ? src : null;
      }, WAIT_MS, "the painter's picture", h.detail);
      assert.equal(
        await panel.$eval(`${card('painter')} .agent-picture`, (b) => b.dataset.pictureTab),
        String(tab.id),
        'a picture of the tab it works in',
      );
      const size = await panel.$eval(`${card('painter')} .agent-picture img`, (img) => [img.naturalWidth, img.naturalHeight]);
      assert.ok(size[0] > 0 && size[0] <= 320 * 2, `scaled down: ${size}`);

      await page.evaluate(() => {
        document.body.style.background = 'rgb(30,60,220)';
        document.getElementById('h').textContent = 'blue';
      });
      const second = await pollFor(async () => {
        const src = await pictureOf(panel, 'painter');
        return src && src !== first ? src : null;
      }, WAIT_MS, 'a new picture after the agent acted', h.detail);
      assert.ok(second.length > 100);
      const ours = (await ourCaptures()).filter((c) => c.tabId === tab.id && c.ms !== undefined);
      assert.ok(ours.length >= 2, JSON.stringify(ours));
      console.log(`capture times (ms): ${ours.map((c) => c.ms.toFixed(1)).join(', ')}; base64 bytes: ${ours.map((c) => c.bytes).join(', ')}`);

      // The extension's own captures are no step of the agent's.
      const trail = fs.readFileSync(path.join(h.dataHome, 'tabtunnel', 'audit', 'audit.jsonl'), 'utf8');
      assert.ok(!trail.includes('Page.captureScreenshot'), 'no picture of ours in the trail');
    } finally {
      await browser.disconnect();
    }
  });

  test('no picture is taken while no panel is open, and one at once when it opens', async () => {
    const panel = await h.openPanel();
    const { browser, page, tab } = await agentOnColourPage('unwatched');
    try {
      await pollFor(async () => (await pictureOf(panel, 'unwatched'))?.startsWith('data:'), WAIT_MS, 'a picture', h.detail);
      await panel.close();
      await sleep(1000); // the port's disconnect reaching the worker
      const before = (await ourCaptures()).length;
      // The agent acts, and more than one refresh period goes by.
      for (let i = 0; i < 6; i++) {
        await page.evaluate((n) => { document.getElementById('h').textContent = `step ${n}`; }, i);
        await sleep(1000);
      }
      assert.equal((await ourCaptures()).length, before, 'a picture was taken with no panel open');

      await h.openPanel();
      await pollFor(async () => (await ourCaptures()).some((c, i) => i >= before && c.tabId === tab.id), WAIT_MS, 'a picture once the panel opened', h.detail);
    } finally {
      await browser.disconnect();
    }
  });

  test("a click on the picture brings the agent's tab forward; its page notices nothing", async () => {
    const panel = await h.openPanel();
    const { browser, page, tab } = await agentOnColourPage('watched');
    try {
      await panel.waitForSelector(`${card('watched')} .agent-picture[data-picture-tab="${tab.id}"]`, { timeout: WAIT_MS });
      const seen = () => page.evaluate(() => ({ visibility: document.visibilityState, focus: document.hasFocus(), events: window.seen }));
      const before = await seen();
      assert.deepEqual(before, { visibility: 'visible', focus: true, events: [] });
      const focused = () => h.sw(async () => {
        const w = await chrome.windows.getLastFocused();
        const [active] = await chrome.tabs.query({ active: true, windowId: w.id });
        return { windowId: w.id, focused: w.focused, tabId: active?.id };
      });
      assert.notEqual((await focused()).windowId, tab.windowId, "the agent's window starts behind");

      await clickInPanel(panel, `${card('watched')} .agent-picture`);
      const expected = { windowId: tab.windowId, focused: true, tabId: tab.id };
      await pollFor(async () => JSON.stringify(await focused()) === JSON.stringify(expected), WAIT_MS, "the agent's window in front", h.detail);
      await sleep(2000); // past the focus guard's window for an agent's press
      assert.deepEqual(await focused(), expected, 'the focus stays where the human put it');
      const afterClick = await seen();
      assert.equal(afterClick.visibility, 'visible');
      assert.equal(afterClick.focus, true);
      assert.ok(!afterClick.events.some((e) => e.startsWith('visibility')), JSON.stringify(afterClick.events));
      console.log(`the agent's page saw: ${JSON.stringify(afterClick.events)}`);
    } finally {
      await browser.disconnect();
    }
  });

  test("a held gesture's picture stays beside the answer in the agent's history", async () => {
    const panel = await h.openPanel();
    const browser = await connectAgent(h, 'shopper', 120_000);
    try {
      const page = await browser.newPage();
      await page.goto(`${h.pageServerUrl}/shop/checkout`);
      const click = page.click('#pay').then(() => 'done', (e) => e.message);
      const question = '#approvals li.gesture[data-request-id]';
      await panel.waitForSelector(question, { timeout: WAIT_MS });
      const asked = await pollFor(
        () => panel.$eval(question, (li) => ({ id: li.dataset.requestId, src: li.querySelector('img.picture')?.getAttribute('src') })).then((q) => (q.src ? q : null)),
        WAIT_MS,
        'the picture of the button',
        h.detail,
      );
      await clickInPanel(panel, `${question} button[data-answer="deny"]`);
      assert.match(await withTimeout(click, WAIT_MS, 'the denied click'), /gesture guard/);
      const history = `${card('shopper')} .activity li img.picture`;
      await panel.waitForSelector(history, { timeout: WAIT_MS });
      assert.equal(await panel.$eval(history, (img) => img.getAttribute('src')), asked.src, 'the picture it was asked with');
      assert.match(await panel.$eval(history, (img) => img.closest('li').textContent), /denied/);
    } finally {
      await browser.disconnect();
    }
  });
});
