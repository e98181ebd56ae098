// Service and shared workers started by an agent's pages are that agent's targets: announced,
// attachable (puppeteer's `target.worker()` attaches by id, Playwright's service workers come
// through root auto-attach), destroyed when they end, and invisible to other agents.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromium } from 'playwright-core';

import { RawCdp, connectAgent, startHarness, withTimeout } from './harness.mjs';

const WAIT_MS = 20_000;

const WORKER_PAGES = {
  '/sw.html': `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>tabtunnel service worker page</title></head>
<body><script>window.registration = navigator.serviceWorker.register('/sw.js');</script></body></html>
`,
  '/sw.js': `self.answer = 'from the service worker';`,
  '/shared.html': `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>tabtunnel shared worker page</title></head>
<body><script>window.shared = new SharedWorker('/shared-worker.js'); shared.port.start();</script></body></html>
`,
  '/shared-worker.js': `self.answer = 'from the shared worker'; onconnect = (e) => e.ports[0].postMessage('hello');`,
};

/** Resolves with the first target `browser` reports destroyed that `pred` accepts. */
function destroyed(browser, pred) {
  return new Promise((resolve) => {
    const listener = (target) => {
      if (pred(target)) {
        browser.off('targetdestroyed', listener);
        resolve(target);
      }
    };
    browser.on('targetdestroyed', listener);
  });
}

describe("service and shared workers of an agent's pages", { timeout: 240_000 }, () => {
  let h;

  before(async () => {
    h = await startHarness({ name: 'workers', extraPages: WORKER_PAGES });
  });

  after(async () => {
    await h?.close();
  });

  /** Target.getTargets as `agent` sees it, over a raw connection, with a command on the side. */
  async function asAgent(agent, then) {
    const version = await (await fetch(`${h.agentEndpoint(agent)}/json/version`)).json();
    const cdp = await RawCdp.open(version.webSocketDebuggerUrl);
    try {
      return await then(cdp);
    } finally {
      cdp.close();
    }
  }

  test('puppeteer: a service worker and a shared worker are attached, evaluated in and destroyed; another agent never sees them', async () => {
    const browser = await connectAgent(h, 'worker-user');
    const page = await browser.newPage();
    await page.goto(`${h.pageServerUrl}/sw.html`);
    const first = await browser.waitForTarget((t) => t.type() === 'service_worker', { timeout: WAIT_MS });
    assert.equal(first.url(), `${h.pageServerUrl}/sw.js`);
    // Unregistered, it ends (nothing holds it: an attached service worker lives on, as in Chrome).
    const firstGone = destroyed(browser, (t) => t === first);
    await page.evaluate(() => window.registration.then((r) => r.unregister()));
    await withTimeout(firstGone, WAIT_MS, 'targetdestroyed for the unregistered service worker', h.detail);

    await page.reload();
    const swTarget = await browser.waitForTarget((t) => t.type() === 'service_worker', { timeout: WAIT_MS });
    const sw = await swTarget.worker();
    assert.equal(await sw.evaluate(() => self.answer), 'from the service worker');
    assert.equal(await sw.evaluate(() => self.toString()), '[object ServiceWorkerGlobalScope]');

    const other = await browser.newPage();
    await other.goto(`${h.pageServerUrl}/shared.html`);
    const sharedTarget = await browser.waitForTarget((t) => t.type() === 'shared_worker', { timeout: WAIT_MS });
    const shared = await sharedTarget.worker();
    assert.equal(await shared.evaluate(() => self.answer), 'from the shared worker');
    assert.equal(await shared.evaluate(() => self.toString()), '[object SharedWorkerGlobalScope]');

    // Another agent lists neither and cannot attach to either by id.
    const ids = await asAgent('worker-user', async (cdp) => {
      const { result } = await cdp.send(1, 'Target.getTargets');
      return result.targetInfos.filter((t) => t.type.endsWith('_worker')).map((t) => t.targetId);
    });
    assert.equal(ids.length, 2, `the agent's own Target.getTargets: ${ids}`);
    await asAgent('bystander', async (cdp) => {
      const { result } = await cdp.send(1, 'Target.getTargets');
      assert.deepEqual(result.targetInfos.filter((t) => t.type.endsWith('_worker')), []);
      for (const [i, targetId] of ids.entries()) {
        const reply = await cdp.send(2 + i, 'Target.attachToTarget', { targetId, flatten: true });
        assert.equal(reply.error?.message, 'No target with given id found');
      }
    });

    // The shared worker ends with its last page, attached or not.
    const sharedGone = destroyed(browser, (t) => t === sharedTarget);
    await other.close();
    await withTimeout(sharedGone, WAIT_MS, 'targetdestroyed for the shared worker', h.detail);
    await browser.disconnect();
  });

  test("Playwright: an agent's service worker reaches it through root auto-attach", async () => {
    const pw = await withTimeout(chromium.connectOverCDP(h.agentEndpoint('pw-workers')), WAIT_MS, 'connectOverCDP', h.detail);
    const context = pw.contexts()[0];
    const page = await context.newPage();
    // Another origin than the first test's (localhost, not 127.0.0.1): a fresh registration.
    const swUrl = h.pageServerUrl.replace('127.0.0.1', 'localhost');
    const [worker] = await Promise.all([
      context.waitForEvent('serviceworker', { timeout: WAIT_MS }),
      page.goto(`${swUrl}/sw.html`),
    ]);
    assert.equal(worker.url(), `${swUrl}/sw.js`);
    assert.equal(await worker.evaluate(() => self.answer), 'from the service worker');
    await pw.close();
  });
});
