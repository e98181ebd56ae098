// Writes sent by a worker that belongs to no tab. Chrome attaches no shared worker under a page
// (and a service worker's own requests are its own), so the gesture guard, which pauses the
// writes of a shared tab's pages, frames and dedicated workers, never sees them: an agent's page
// could start a `SharedWorker` from a `blob:` script of its own, or register a service worker,
// and pay from there unasked. While a shared tab shows a site, the browser refuses the writes of
// that site's workers outside any tab; a site no shared tab shows is left alone.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { PAY_FROM_A_DATA_WORKER, PAY_FROM_A_SHARED_WORKER, WAIT_MS, WATCH_MS } from './attack-kit.mjs';
import { gestureSites } from './gesture-sites.mjs';
import { connectAgent, pollFor, sleep, startHarness } from './harness.mjs';

/** A service worker that pays as it installs, and tells a page what that came to. */
const PAYING_SERVICE_WORKER = `
self.addEventListener('install', (e) => e.waitUntil(
  fetch('/shop/api/pay', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"amount":124000}' })
    .then((r) => 'sent ' + r.status, (err) => 'refused: ' + err.message)
    .then((outcome) => { self.outcome = outcome; })));
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('message', (e) => e.source.postMessage(self.outcome));
`;

/** Registers the paying service worker; resolves with what its payment came to. */
const REGISTER_PAYING_SERVICE_WORKER = () =>
  new Promise((resolve) => {
    navigator.serviceWorker.addEventListener('message', (e) => resolve(e.data));
    navigator.serviceWorker
      .register('/shop/pay-sw.js')
      .then(() => navigator.serviceWorker.ready)
      .then((reg) => reg.active.postMessage('outcome?'), (e) => resolve('not registered: ' + e.message));
    setTimeout(() => resolve('no outcome'), 10_000);
  });

describe('writes from workers outside any tab', { timeout: 240_000 }, () => {
  let h;
  let site;

  before(async () => {
    site = gestureSites();
    const bounce = (req, res, url) => {
      res.writeHead(302, { location: url.searchParams.get('to') });
      res.end();
    };
    h = await startHarness({ name: 'worker-writes', share: false, extraPages: { ...site.pages, '/shop/pay-sw.js': PAYING_SERVICE_WORKER, '/bounce': bounce }, extensionPermissions: ['webRequest'] });
  });

  after(async () => {
    await h?.close();
  });

  const payments = () => site.writes.filter((w) => w === 'POST /shop/api/pay').length;

  /** `act` resolves with a worker's outcome: it was refused, and no payment reached the server
   *  then or for a while after. */
  async function refused(what, act) {
    const before = payments();
    const outcome = await act();
    await sleep(WATCH_MS);
    assert.equal(payments() - before, 0, `${what}: a payment reached the server (${outcome})`);
    assert.match(outcome, /^refused/, `${what}: the worker's payment`);
  }

  test("an agent's page cannot pay unasked from a shared worker or a service worker it starts", async () => {
    const browser = await connectAgent(h, 'worker-payer');
    try {
      const page = await browser.newPage();
      await page.goto(`${h.pageServerUrl}/shop/checkout`);
      await refused('a shared worker', () => page.evaluate(PAY_FROM_A_SHARED_WORKER, `${h.pageServerUrl}/shop/api/pay`));
      await refused('a shared worker of no origin', () => page.evaluate(PAY_FROM_A_DATA_WORKER, `${h.pageServerUrl}/shop/api/pay`));
      await refused('a service worker', () => page.evaluate(REGISTER_PAYING_SERVICE_WORKER));
      await page.close(); // (an agent's tabs outlive its connection, for a while)
    } finally {
      await browser.disconnect();
    }
  });

  test("a redirect to another site: a worker the agent's script for new documents starts there cannot pay", async () => {
    const browser = await connectAgent(h, 'bouncer');
    try {
      const page = await browser.newPage();
      await page.goto(`${h.pageServerUrl}/shop/checkout`);
      const other = h.pageServerUrl.replace('127.0.0.1', 'localhost');
      // Runs as the new document starts, before any event of its commit reaches the extension.
      await page.evaluateOnNewDocument((payUrl, code) => {
        if (location.hostname !== 'localhost') return;
        const worker = new SharedWorker(URL.createObjectURL(new Blob([code.replace('PAY_URL', JSON.stringify(payUrl))], { type: 'text/javascript' })));
        worker.port.onmessage = (e) => { window.outcome = e.data; };
        worker.port.start();
      }, `${other}/shop/api/pay`, `self.ports = [];
        const told = (o) => { self.outcome = o; for (const p of self.ports) p.postMessage(o); };
        fetch(PAY_URL, { method: 'POST', body: 'amount=124000' }).then((r) => told('sent ' + r.status), (e) => told('refused: ' + e.message));
        onconnect = (e) => { self.ports.push(e.ports[0]); if (self.outcome) e.ports[0].postMessage(self.outcome); };`);
      await refused('a worker started as a redirect lands', async () => {
        await page.goto(`${h.pageServerUrl}/bounce?to=${encodeURIComponent(`${other}/shop/checkout`)}`);
        return pollFor(() => page.evaluate(() => window.outcome), WAIT_MS, "the worker's outcome", h.detail);
      });
      await page.close();
    } finally {
      await browser.disconnect();
    }
  });

  test("the human's workers on a site no shared tab shows write as ever, and again once the agent left the site", async () => {
    // The human's own tab (not shared), on another host than the agent's page.
    const other = h.pageServerUrl.replace('127.0.0.1', 'localhost');
    await h.testPage.goto(`${other}/shop/checkout`);
    const browser = await connectAgent(h, 'bystander');
    try {
      const page = await browser.newPage();
      await page.goto(`${h.pageServerUrl}/shop/checkout`);
      let before = payments();
      assert.match(await h.testPage.evaluate(PAY_FROM_A_SHARED_WORKER, `${other}/shop/api/pay`), /^sent 200/, "the human's worker on another site");
      assert.equal(payments() - before, 1);

      await page.close();
      await h.testPage.goto(`${h.pageServerUrl}/shop/checkout`);
      before = payments();
      await pollFor(
        async () => /^sent 200/.test(await h.testPage.evaluate(PAY_FROM_A_SHARED_WORKER, `${h.pageServerUrl}/shop/api/pay`)),
        WAIT_MS,
        "the human's worker writes once no shared tab shows the site",
        h.detail,
      );
      assert.ok(payments() - before >= 1);
    } finally {
      await browser.disconnect();
    }
  });
});
