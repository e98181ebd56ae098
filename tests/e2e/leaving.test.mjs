// Nothing an agent left running in a tab goes on once the tab leaves it. An agent's page posts
// to the shop's payment API on a timer; the gesture guard holds every such write. When the human
// takes the tab back or unshares it, the agent gives it back, or the human engages the kill
// switch, the debugger (and the guard) lets go: the document that holds the agent's timer must be
// gone by then, else every next write reaches the server unasked. A tab a client drove is
// reloaded first (it stays open at its URL; a page a form was posted to is loaded again by its
// URL, which asks no "Confirm form resubmission"), whatever "Leave site?" dialog or script for new
// documents the agent left; on the kill switch, the agents' own tabs are closed. A tab no client
// drove is left as it is. A driven tab handed to another agent is reloaded the same way before
// the new agent gets it: the first agent's code must not watch what the second does there.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { PAY_EVERY_300_MS, gestureSites } from './gesture-sites.mjs';
import { connectAgent, connectPuppeteer, pollFor, sleep, startHarness, withTimeout } from './harness.mjs';

const WAIT_MS = 30_000;
/** How long the server is watched for a write after the tab left its agent. */
const WATCH_MS = 3_000;
const QUESTION = '#approvals li.gesture[data-request-id]';

/** What an agent's page reports home on a timer (what the page shows), as a write the guard lets
 *  through: the server counts the reports. */
const REPORT_EVERY_200_MS = () => {
  window.__reports = setInterval(() => {
    const shown = document.querySelector('#q')?.value ?? document.title;
    fetch('/spy/seen', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: shown }).catch(() => {});
  }, 200);
};

describe('a tab leaving its agent', { timeout: 300_000 }, () => {
  let h;
  let site;
  let panel;
  let reported = 0;
  const spyPages = {
    '/spy/seen': (req, res) => {
      reported += 1;
      req.resume();
      res.writeHead(204);
      res.end();
    },
  };

  before(async () => {
    site = gestureSites();
    h = await startHarness({ name: 'leaving', share: false, extraPages: { ...site.pages, ...spyPages } });
    panel = await h.openPanel();
  });

  after(async () => {
    await h?.close();
  });

  const url = (p) => `${h.pageServerUrl}${p}`;
  const payments = () => site.writes.filter((w) => w === 'POST /shop/api/pay').length;
  const tabOf = (id) => h.sw((tabId) => chrome.tabs.get(tabId).catch(() => null), id);

  /** The guard holds the agent's timed writes: a question about one shows in the panel, and
   *  none reached the server since `before` payments. */
  async function guardHoldsThePayments(before) {
    await panel.waitForSelector(QUESTION, { timeout: WAIT_MS });
    assert.equal(payments(), before, 'the guard held every payment while the tab was shared');
  }

  /** `act` lets a tab go: no payment reaches the server from then until a while after `gone()`
   *  (the debugger has let go). */
  async function noPaymentAfter(what, act, gone) {
    const before = payments();
    await act();
    await pollFor(gone, WAIT_MS, `the tab let go after ${what}`, h.detail);
    await sleep(WATCH_MS);
    assert.equal(payments() - before, 0, `payments reached the server after ${what}`);
  }

  /** What the agent also leaves: a "Leave site?" dialog, which would hold the page (a page asks
   *  only once someone interacted with it). */
  const ASK_BEFORE_LEAVING = () => window.addEventListener('beforeunload', (e) => {
    e.preventDefault();
    e.returnValue = 'stay';
  });

  /** The human's tab, on the shop and active in the focused window. */
  async function humanOnTheShop() {
    const checkout = url('/shop/checkout');
    await h.sw(
      async (tabId, to) => {
        const tab = await chrome.tabs.get(tabId);
        if (tab.url !== to) await chrome.tabs.update(tabId, { url: to });
        await chrome.tabs.update(tabId, { active: true });
        await chrome.windows.update(tab.windowId, { focused: true });
      },
      h.tabId,
      checkout,
    );
    await pollFor(async () => (await tabOf(h.tabId))?.status === 'complete' && (await tabOf(h.tabId)).url === checkout, WAIT_MS, 'the human tab on the shop', h.detail);
    await panel.waitForSelector(`#share-toggle[data-tab-id="${h.tabId}"]`, { timeout: WAIT_MS });
    return checkout;
  }

  /** The human hands their tab to `agent` in the panel. */
  async function handHumanTab(agent) {
    const checkout = await humanOnTheShop();
    await panel.$eval('#handover-agent', (el) => (el.value = ''));
    await panel.type('#handover-agent', agent);
    await panel.click('#handover-button');
    await panel.waitForSelector('#held-by', { visible: true, timeout: WAIT_MS });
    return checkout;
  }

  const sharedTabIds = () => h.sw(() => chrome.storage.session.get('sharedTabs').then((v) => (v.sharedTabs ?? []).map((t) => t.tabId)));
  const unshared = (tabId) => async () => !(await sharedTabIds()).includes(tabId);

  /** The human's tab is still open where it was. */
  async function humanTabStaysOpen(at) {
    const tab = await tabOf(h.tabId);
    assert.ok(tab, 'the tab stays open for the human');
    assert.equal(tab.url, at, 'at the same URL');
  }

  test('unshare: a shared tab no client drove is not reloaded (what the human typed stays)', async () => {
    await humanOnTheShop();
    const toggle = `#share-toggle[data-tab-id="${h.tabId}"]`;
    await panel.click(toggle);
    await panel.waitForSelector(`#shared-tabs li[data-tab-id="${h.tabId}"]`, { timeout: WAIT_MS });
    await h.testPage.type('#card', '4242');
    await panel.click(toggle);
    await pollFor(async () => !(await sharedTabIds()).includes(h.tabId), WAIT_MS, 'the tab unshared', h.detail);
    assert.equal(await h.testPage.$eval('#card', (el) => el.value), '4242', 'the page was not reloaded');
  });

  test("take back: the human's tab an agent drove is reloaded before the debugger lets go, and stays open where it was", async () => {
    await humanOnTheShop();
    await h.testPage.click('h1'); // the human was here
    const checkout = await handHumanTab('taker');
    const browser = await connectAgent(h, 'taker');
    try {
      const page = (await browser.pages()).find((p) => p.url() === checkout);
      assert.ok(page, 'the agent sees the handed tab');
      const before = payments();
      await page.evaluate(PAY_EVERY_300_MS);
      await page.evaluate(ASK_BEFORE_LEAVING);
      await guardHoldsThePayments(before);

      await noPaymentAfter('the take back', () => panel.click('#take-back'), unshared(h.tabId));
      await humanTabStaysOpen(checkout);
    } finally {
      await browser.disconnect();
    }
  });

  test('release by the agent: closing a handed tab with a timer in it gives it back reloaded', async () => {
    const checkout = await handHumanTab('leaver');
    const browser = await connectAgent(h, 'leaver');
    try {
      const page = (await browser.pages()).find((p) => p.url() === checkout);
      assert.ok(page, 'the agent sees the handed tab');
      const before = payments();
      await page.evaluate(PAY_EVERY_300_MS);
      await guardHoldsThePayments(before);

      // A handed tab is given back, not closed.
      await noPaymentAfter("the agent's release", () => page.close(), unshared(h.tabId));
      await humanTabStaysOpen(checkout);
    } finally {
      await browser.disconnect();
    }
  });

  test("unshare: the human's shared tab a client drove is reloaded, and the client's script for new documents does not come back with it", async () => {
    const checkout = await humanOnTheShop();
    const toggle = `#share-toggle[data-tab-id="${h.tabId}"]`;
    await panel.click(toggle);
    await panel.waitForSelector(`#shared-tabs li[data-tab-id="${h.tabId}"]`, { timeout: WAIT_MS });

    const browser = await connectPuppeteer(h);
    try {
      const page = (await browser.pages()).find((p) => p.url() === checkout);
      assert.ok(page, 'the client sees the shared tab');
      const before = payments();
      await page.evaluateOnNewDocument(PAY_EVERY_300_MS);
      await page.evaluate(PAY_EVERY_300_MS);
      await guardHoldsThePayments(before);

      await noPaymentAfter('the unshare', () => panel.click(toggle), unshared(h.tabId));
      await humanTabStaysOpen(checkout);
    } finally {
      await browser.disconnect();
    }
  });

  test("hand-over: a tab one agent drove goes to another reloaded, and the first one's timer does not watch the second there", async () => {
    const checkout = await handHumanTab('watcher');
    const watcher = await connectAgent(h, 'watcher');
    let watched;
    try {
      const page = (await watcher.pages()).find((p) => p.url() === checkout);
      assert.ok(page, 'the first agent sees the handed tab');
      const before = reported;
      await page.evaluate(REPORT_EVERY_200_MS);
      await pollFor(() => reported > before, WAIT_MS, "the first agent's reports reach the server", h.detail);

      await panel.$eval('#handover-agent', (el) => (el.value = ''));
      await panel.type('#handover-agent', 'watched');
      await panel.click('#handover-button');
      watched = await connectAgent(h, 'watched');
      await pollFor(async () => (await watched.pages()).some((p) => p.url() === checkout), WAIT_MS, 'the second agent has the tab', h.detail);
      const handed = reported;
      await sleep(WATCH_MS);
      assert.equal(reported - handed, 0, "the first agent's timer reported from the second agent's tab");
      await humanTabStaysOpen(checkout);

      await panel.click('#take-back');
      await pollFor(unshared(h.tabId), WAIT_MS, 'the tab taken back', h.detail);
    } finally {
      await watcher.disconnect();
      await watched?.disconnect();
    }
  });

  test('take back: the result of a form the agent posted is replaced by a GET of its URL, not reloaded (no "Confirm form resubmission")', async (t) => {
    const checkout = await handHumanTab('poster');
    const browser = await connectAgent(h, 'poster');
    try {
      const page = (await browser.pages()).find((p) => p.url() === checkout);
      assert.ok(page, 'the agent sees the handed tab');
      const posted = () => site.writes.filter((w) => w === 'POST /shop/cart/add').length;
      const postedBefore = posted();
      await Promise.all([page.waitForNavigation(), page.click('#add')]);
      const result = url('/shop/cart/add');
      assert.equal(page.url(), result, 'the POST result page');
      const before = reported;
      await page.evaluate(REPORT_EVERY_200_MS);
      await pollFor(() => reported > before, WAIT_MS, "the agent's reports reach the server", h.detail);

      const asked = Date.now();
      await noPaymentAfter('the take back', () => panel.click('#take-back'), async () => {
        const gone = await unshared(h.tabId)();
        if (gone) t.diagnostic(`the tab left its agent ${Date.now() - asked} ms after the take back`);
        return gone;
      });
      const reportedAfterLeaving = reported;
      await sleep(WATCH_MS);
      assert.equal(reported - reportedAfterLeaving, 0, "the agent's timer reported after the take back");
      assert.equal(posted() - postedBefore, 1, 'the form was not posted again');
      await humanTabStaysOpen(result);
    } finally {
      await browser.disconnect();
    }
  });

  test("the kill switch: an agent's own tab is closed, and the human's tab it drove reloaded, before the debugger lets go", async () => {
    const checkout = await handHumanTab('looper');
    const browser = await connectAgent(h, 'looper');
    const handed = (await browser.pages()).find((p) => p.url() === checkout);
    assert.ok(handed, 'the agent sees the handed tab');
    const own = await browser.newPage();
    await own.goto(checkout);
    const ownTabId = await h.sw(async (u, human) => (await chrome.tabs.query({ url: u })).find((t) => t.id !== human)?.id, checkout, h.tabId);
    assert.ok(ownTabId, "the agent's own tab");
    const before = payments();
    await handed.evaluate(PAY_EVERY_300_MS);
    await own.click('h1');
    await own.evaluate(PAY_EVERY_300_MS);
    await own.evaluate(ASK_BEFORE_LEAVING);
    await guardHoldsThePayments(before);

    const gone = new Promise((resolve) => browser.once('disconnected', resolve));
    try {
      const noneShared = async () => (await sharedTabIds()).length === 0;
      await noPaymentAfter('the kill switch', () => panel.click('#kill-switch'), noneShared);
      await withTimeout(gone, WAIT_MS, 'the agent disconnected', h.detail);
      assert.equal(await tabOf(ownTabId), null, "the agent's own tab is closed");
      await humanTabStaysOpen(checkout);
    } finally {
      await panel.click('#kill-switch');
      await pollFor(async () => (await fetch(`${h.agentEndpoint('looper')}/json/version`)).status === 200, WAIT_MS, 'the kill switch released', h.detail);
    }
  });
});
