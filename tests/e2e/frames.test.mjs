// The shared tab's own child targets through tabtunnel: an out-of-process iframe and a
// dedicated worker, reached by the clients through the page's auto-attach and their own
// (child) sessions.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromium } from 'playwright-core';

import { RawCdp, connectPuppeteer, startHarness, withTimeout } from './harness.mjs';

describe('iframes and workers of a shared tab', { timeout: 240_000 }, () => {
  let h;
  let framesUrl;

  before(async () => {
    h = await startHarness({ name: 'frames' });
    framesUrl = `${h.pageServerUrl}/frames.html`;
  });

  after(async () => {
    await h?.close();
  });

  test('Playwright reaches the out-of-process iframe and the worker', async () => {
    const browser = await withTimeout(chromium.connectOverCDP(h.clientEndpoint, { timeout: 30_000 }), 35_000, 'connectOverCDP', h.detail);
    try {
      const [page] = browser.contexts()[0].pages();
      const worker = page.waitForEvent('worker', { timeout: 20_000 });
      await page.goto(framesUrl, { timeout: 20_000 });
      const frame = page.frames().find((f) => f.url().includes('/child.html'));
      assert.ok(frame, `no child frame among ${page.frames().map((f) => f.url())}`);
      assert.equal(await frame.textContent('#inside', { timeout: 10_000 }), 'inside the iframe');
      assert.equal(await (await worker).evaluate(() => self.answer), 42);
    } finally {
      await browser.close();
    }
  });

  test('puppeteer reaches the out-of-process iframe after connecting to a page that has it', async () => {
    const browser = await connectPuppeteer(h);
    try {
      const [page] = await browser.pages();
      assert.equal(page.url(), framesUrl);
      const frame = await withTimeout(
        (async () => {
          for (;;) {
            const found = page.frames().find((f) => f.url().includes('/child.html'));
            if (found) return found;
            await new Promise((r) => setTimeout(r, 50));
          }
        })(),
        15_000,
        'the child frame in puppeteer',
        h.detail,
      );
      assert.equal(await frame.$eval('#inside', (el) => el.textContent), 'inside the iframe');
    } finally {
      await browser.disconnect();
    }
  });

  test('the iframe and the worker are child sessions with their own ids (raw CDP)', async () => {
    const cdp = await RawCdp.open(h.wsEndpoint);
    try {
      await cdp.send(1, 'Target.setAutoAttach', { autoAttach: true, flatten: true, waitForDebuggerOnStart: false });
      const page = await cdp.next((m) => m.method === 'Target.attachedToTarget', 'the page attaching');
      const pageSession = page.params.sessionId;
      await cdp.send(2, 'Target.setAutoAttach', { autoAttach: true, flatten: true, waitForDebuggerOnStart: false }, pageSession);
      const child = (type) =>
        cdp.next((m) => m.method === 'Target.attachedToTarget' && m.sessionId === pageSession && m.params.targetInfo.type === type, `an ${type} child`);
      const iframe = await child('iframe');
      const worker = await child('worker');
      assert.ok(iframe.params.targetInfo.url.includes('/child.html'), JSON.stringify(iframe));
      const inFrame = await cdp.send(3, 'Runtime.evaluate', { expression: "document.querySelector('#inside').textContent", returnByValue: true }, iframe.params.sessionId);
      assert.equal(inFrame.result?.result?.value, 'inside the iframe', JSON.stringify(inFrame));
      assert.equal(inFrame.sessionId, iframe.params.sessionId);
      const inWorker = await cdp.send(4, 'Runtime.evaluate', { expression: 'self.answer', returnByValue: true }, worker.params.sessionId);
      assert.equal(inWorker.result?.result?.value, 42, JSON.stringify(inWorker));
      // chrome.debugger refuses to detach a child; tabtunnel emulates it on the parent.
      const detached = await cdp.send(5, 'Target.detachFromTarget', { sessionId: worker.params.sessionId }, pageSession);
      assert.deepEqual(detached.result, {});
      const gone = await cdp.send(6, 'Runtime.evaluate', { expression: '1' }, worker.params.sessionId);
      assert.equal(gone.error?.code, -32001, JSON.stringify(gone));
    } finally {
      cdp.close();
    }
  });
});
