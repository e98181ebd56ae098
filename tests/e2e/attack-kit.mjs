// What the red team files share: the human's hands in the side panel (deny, hand over, take
// back), the shop's payment count, and workers outside any tab that pay.

import assert from 'node:assert/strict';

import { connectAgent, pollFor, sleep } from './harness.mjs';

export const WAIT_MS = 30_000;
/** How long the server is watched for a write that may still come. */
export const WATCH_MS = 3_000;
export const QUESTION = '#approvals li.gesture[data-request-id]';

/** Starts a shared worker (a `blob:` script of the page's own) that pays at once; resolves with
 *  what its `fetch` came to. Runs in a page (`page.evaluate`). */
export const PAY_FROM_A_SHARED_WORKER = (payUrl) =>
  new Promise((resolve) => {
    const code = `self.ports = [];
      const told = (outcome) => { self.outcome = outcome; for (const p of self.ports) p.postMessage(outcome); };
      fetch(${JSON.stringify(payUrl)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"amount":124000}' })
        .then((r) => told('sent ' + r.status), (e) => told('refused: ' + e.message));
      onconnect = (e) => { self.ports.push(e.ports[0]); if (self.outcome) e.ports[0].postMessage(self.outcome); };`;
    const worker = new SharedWorker(URL.createObjectURL(new Blob([code], { type: 'text/javascript' })));
    worker.port.onmessage = (e) => resolve(e.data);
    worker.port.start();
    setTimeout(() => resolve('no outcome'), 10_000);
  });

/** The same from a `data:` script: the worker has no origin, and Chrome sends its write as a
 *  cross-origin one with the cookies kept for cross-site use (its answer is unreadable, but the
 *  server got it). */
export const PAY_FROM_A_DATA_WORKER = (payUrl) =>
  new Promise((resolve) => {
    const code = `fetch(${JSON.stringify(payUrl)}, { method: 'POST', credentials: 'include', mode: 'no-cors', body: 'amount=124000' })
        .then((r) => self.outcome = 'sent ' + r.status, (e) => self.outcome = 'refused: ' + e.message);
      onconnect = (e) => { const port = e.ports[0]; const t = setInterval(() => { if (self.outcome) { port.postMessage(self.outcome); clearInterval(t); } }, 50); };`;
    const worker = new SharedWorker('data:text/javascript,' + encodeURIComponent(code));
    worker.port.onmessage = (e) => resolve(e.data);
    worker.port.start();
    setTimeout(() => resolve('no outcome'), 10_000);
  });

/** The kit for a file's harness: `state()` gives `{ h, panel, site }` once its `before` ran. */
export function attackKit(state) {
  const h = () => state().h;
  const panel = () => state().panel;
  const url = (p) => `${h().pageServerUrl}${p}`;
  const payments = () => state().site.writes.filter((w) => w === 'POST /shop/api/pay').length;
  const tabOf = (id) => h().sw((tabId) => chrome.tabs.get(tabId).catch(() => null), id);
  const sharedTabIds = () => h().sw(() => chrome.storage.session.get('sharedTabs').then((v) => (v.sharedTabs ?? []).map((t) => t.tabId)));
  const unshared = (tabId) => async () => !(await sharedTabIds()).includes(tabId);

  /** Denies every question the panel shows now. */
  async function denyAll() {
    for (let i = 0; i < 80; i += 1) {
      const id = await panel().$eval(QUESTION, (li) => li.dataset.requestId).catch(() => null);
      if (!id) return;
      await panel().click(`${QUESTION.replace('[data-request-id]', `[data-request-id="${id}"]`)} button[data-answer="deny"]`).catch(() => {});
      await panel().waitForSelector(`#approvals li[data-request-id="${id}"]`, { hidden: true, timeout: WAIT_MS }).catch(() => {});
    }
  }

  /** A new question shows (after `denyAll` emptied the list). */
  async function asked(what, ms = WAIT_MS) {
    await panel().waitForSelector(QUESTION, { timeout: ms }).catch((e) => {
      throw new Error(`${what}: no question (${e.message})\n${h().detail()}`);
    });
  }

  /** The tab `tabId` at `to` (or where it is), active in the focused window, the panel on it. */
  async function focusTab(tabId, to) {
    await h().sw(
      async (id, dest) => {
        const tab = await chrome.tabs.get(id);
        if (dest) await chrome.tabs.update(id, { url: dest });
        await chrome.tabs.update(id, { active: true });
        await chrome.windows.update(tab.windowId, { focused: true });
      },
      tabId,
      to ?? null,
    );
    if (to) await pollFor(async () => (await tabOf(tabId))?.status === 'complete' && (await tabOf(tabId)).url === to, WAIT_MS, 'the tab loaded', h().detail);
    // The panel follows the active tab (`#held-by` always exists, hidden or not: not a sign).
    await panel().waitForSelector(`#share-toggle[data-tab-id="${tabId}"]`, { timeout: WAIT_MS });
  }

  /** The human's own tab at `to`, active in the focused window. */
  const humanOn = (to) => focusTab(h().tabId, to);

  /** The panel's hand-over of its tab to `agent`. */
  async function handPanelTabTo(agent) {
    await panel().$eval('#handover-agent', (el) => (el.value = ''));
    await panel().type('#handover-agent', agent);
    await panel().click('#handover-button');
  }

  /** The human hands their tab, at `to`, to `agent`, who connects: its browser and page of it. */
  async function handTo(agent, to = url('/shop/checkout')) {
    await humanOn(to);
    await handPanelTabTo(agent);
    await panel().waitForSelector('#held-by', { visible: true, timeout: WAIT_MS });
    const browser = await connectAgent(h(), agent, 60_000);
    const page = (await browser.pages()).find((p) => p.url() === to);
    assert.ok(page, 'the agent sees the handed tab');
    return { browser, page };
  }

  /** `act` lets the tab go; no payment reaches the server until `watch` ms after `gone()`. */
  async function noPaymentAfter(what, act, gone, watch = WATCH_MS) {
    const before = payments();
    const t0 = Date.now();
    const trace = [];
    let last = before;
    const timer = setInterval(() => {
      if (payments() !== last) {
        last = payments();
        trace.push(`${Date.now() - t0}ms:${last - before}`);
      }
    }, 50);
    let hung = null;
    try {
      await act();
      await pollFor(gone, 40_000, `the tab let go after ${what}`, h().detail).catch((e) => (hung = e));
      trace.push(hung ? 'NOT let go in 40 s' : `let go at ${Date.now() - t0}ms`);
      await sleep(watch);
    } finally {
      clearInterval(timer);
      console.log(`${what}: payments since the act ${trace.slice(0, 12).join(' ')}${trace.length > 12 ? ` ... ${trace.slice(-2).join(' ')}` : ''}`);
    }
    assert.equal(payments() - before, 0, `payments reached the server after ${what}`);
    if (hung) throw hung;
  }

  return { url, payments, tabOf, sharedTabIds, unshared, denyAll, asked, focusTab, humanOn, handPanelTabTo, handTo, noPaymentAfter };
}
