// Headful Chromium under Xvfb, as users run it: agents open tabs, click, type and take
// screenshots while the human types in their own tab, and the human's focused window and active
// tab stay theirs. Headless hides both problems this guards against: a background tab renders
// nothing in headful Chrome (screenshots hang, no animation frames), and on Linux Chrome
// activates a window when its page gets a mouse press, synthetic ones included.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import puppeteer from 'puppeteer-core';
import { chromium } from 'playwright-core';

import { pngHasContent, sleep, startHarness, withTimeout } from './harness.mjs';

const WAIT_MS = 30_000;

describe("headful: agents stay out of the human's way", { timeout: 300_000 }, () => {
  let h;
  let appUrl;
  let human;

  before(async () => {
    h = await startHarness({ name: 'headful', headful: true });
    appUrl = await h.loginAsHuman('human');
    // The human works in their app tab, in a focused window.
    human = await h.focusHumanTab(appUrl);
  });

  after(async () => {
    await h?.close();
  });

  /** The focused window and the human window's active tab, as Chrome reports them. */
  function focusNow() {
    return h.sw(async (windowId) => {
      const focused = await chrome.windows.getLastFocused();
      const [active] = await chrome.tabs.query({ active: true, windowId });
      return { focusedWindow: focused.id, focusedWindowHasFocus: focused.focused, activeTab: active?.id };
    }, human.windowId);
  }

  /** The human's window has the focus and their tab is active. On Linux an agent's click
   *  makes Chrome activate the agent's window for a moment (see docs/internals.md): tabtunnel
   *  gives the focus straight back, so this waits briefly for that, never for long. */
  async function assertHumanUndisturbed(step) {
    const expected = { focusedWindow: human.windowId, focusedWindowHasFocus: true, activeTab: human.tabId };
    let now;
    for (let waited = 0; waited <= 3000; waited += 100) {
      await sleep(100);
      now = await focusNow();
      if (JSON.stringify(now) === JSON.stringify(expected)) break;
    }
    assert.deepEqual(now, expected, `after ${step}: the human's window lost focus or their active tab changed\n${h.detail()}`);
    assert.equal(await h.humanPage.evaluate(() => document.hasFocus()), true, `after ${step}: the human's page lost focus`);
  }

  test('while the human types, agents open tabs, click, and screenshot rendered content', async () => {
    assert.deepEqual(await focusNow(), { focusedWindow: human.windowId, focusedWindowHasFocus: true, activeTab: human.tabId });
    const typed = 'the human keeps typing in their own tab while agents work';
    const typing = h.humanPage.type('#note', typed, { delay: 25 });
    typing.catch(() => {}); // awaited below; a failure before that must not go unhandled

    const pptr = await withTimeout(
      puppeteer.connect({ browserURL: h.agentEndpoint('painter'), defaultViewport: null, protocolTimeout: WAIT_MS }),
      WAIT_MS,
      'connect painter',
      h.detail,
    );
    const first = await pptr.newPage();
    await first.goto(`${appUrl}?painter=1`);
    await assertHumanUndisturbed('an agent opened a tab');
    await first.type('#note', 'painted');
    await first.click('#save');
    assert.equal(await first.$eval('#echo', (el) => el.textContent), 'painted');
    await assertHumanUndisturbed('an agent clicked in its tab');
    // Its page renders as a foreground page: animation frames and timers run, screenshots paint.
    const progress = await first.evaluate(async () => {
      const before = [window.frames_, window.ticks];
      await new Promise((r) => setTimeout(r, 500));
      return [window.frames_ - before[0], window.ticks - before[1]];
    });
    assert.ok(progress[0] > 5 && progress[1] > 3, `the agent's page is not rendering: frames ${progress[0]}, ticks ${progress[1]}`);
    assert.ok(pngHasContent(Buffer.from(await first.screenshot())), 'the screenshot is blank');

    // A second tab becomes the active one of the agent's window; the first still screenshots.
    const second = await pptr.newPage();
    await second.goto(`${h.pageServerUrl}/form.html?painter=2`);
    await second.click('#go');
    assert.ok(pngHasContent(Buffer.from(await withTimeout(first.screenshot(), WAIT_MS, 'a screenshot of the first tab'))));
    assert.ok(pngHasContent(Buffer.from(await withTimeout(second.screenshot(), WAIT_MS, 'a screenshot of the second tab'))));
    await assertHumanUndisturbed('screenshots of two agent tabs');

    // Another agent, another client, at the same time.
    const pw = await withTimeout(chromium.connectOverCDP(h.agentEndpoint('clicker')), WAIT_MS, 'connect clicker', h.detail);
    const page = await pw.contexts()[0].newPage();
    await page.goto(`${appUrl}?clicker`);
    await page.fill('#note', 'clicked');
    await page.click('#save');
    assert.equal(await page.textContent('#echo'), 'clicked');
    assert.ok(pngHasContent(await page.screenshot()));
    await page.bringToFront();
    await assertHumanUndisturbed('Playwright clicked, screenshot and brought its page to front');

    await typing;
    assert.equal(await h.humanPage.$eval('#note', (el) => el.value), typed, 'the human lost keystrokes');
    // Each agent's tabs are in a window of its own, grouped under its name.
    const placement = await h.sw(async () => {
      const tabs = await chrome.tabs.query({});
      const groups = await chrome.tabGroups.query({});
      return tabs
        .filter((t) => t.groupId !== -1)
        .map((t) => ({ url: t.url, windowId: t.windowId, group: groups.find((g) => g.id === t.groupId)?.title }));
    });
    const windowOf = (agent) => new Set(placement.filter((t) => t.group === agent).map((t) => t.windowId));
    assert.equal(windowOf('painter').size, 1, JSON.stringify(placement));
    assert.equal(windowOf('clicker').size, 1, JSON.stringify(placement));
    assert.ok(![...windowOf('painter')].some((w) => windowOf('clicker').has(w) || w === human.windowId), JSON.stringify(placement));
    await pptr.disconnect();
    await pw.close();
  });
});
