// Playwright (playwright-core, unmodified) attaches with connectOverCDP and drives the shared tab.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromium } from 'playwright-core';

import { FORM_TITLE, greetingFor, startHarness, withTimeout } from './harness.mjs';

describe('playwright-core connectOverCDP through tabtunnel', { timeout: 240_000 }, () => {
  let h;
  let browser;

  before(async () => {
    h = await startHarness({ name: 'playwright' });
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await h?.close();
  });

  test('connectOverCDP(clientEndpoint) sees the shared page and drives it', async () => {
    // An http URL: Playwright fetches `<url>/json/version/` (trailing slash).
    browser = await withTimeout(
      chromium.connectOverCDP(h.clientEndpoint, { timeout: 30_000 }),
      35_000,
      `chromium.connectOverCDP(${h.clientEndpoint})`,
      h.detail,
    );
    const contexts = browser.contexts();
    assert.equal(contexts.length, 1, 'one (default) context');
    const pages = contexts[0].pages();
    assert.deepEqual(pages.map((p) => p.url()), [h.pageUrl]);
    const page = pages[0];

    assert.equal(await page.title(), FORM_TITLE);
    await page.fill('#name', 'Grace', { timeout: 10_000 });
    await page.click('#go', { timeout: 10_000 });
    assert.equal(await page.textContent('#out', { timeout: 10_000 }), greetingFor('Grace'));
    const png = await page.screenshot({ timeout: 30_000 });
    assert.equal(png.subarray(1, 4).toString('ascii'), 'PNG');

    await browser.close(); // connected over CDP: disconnects, leaves the tab alone
    browser = undefined;
  });

  test('connectOverCDP(wsEndpoint) after a reconnect', async () => {
    browser = await withTimeout(
      chromium.connectOverCDP(h.wsEndpoint, { timeout: 30_000 }),
      35_000,
      `chromium.connectOverCDP(${h.wsEndpoint})`,
      h.detail,
    );
    const pages = browser.contexts().flatMap((c) => c.pages());
    assert.deepEqual(pages.map((p) => p.url()), [h.pageUrl]);
    assert.equal(await pages[0].textContent('#out', { timeout: 10_000 }), greetingFor('Grace'));
    assert.equal(await pages[0].evaluate(() => 6 * 7), 42);
    await browser.close();
    browser = undefined;
  });

  test('context.newCDPSession(page) goes through a browser session to an extra page session', async () => {
    browser = await withTimeout(chromium.connectOverCDP(h.wsEndpoint, { timeout: 30_000 }), 35_000, 'connectOverCDP', h.detail);
    const context = browser.contexts()[0];
    const [page] = context.pages();
    const session = await withTimeout(context.newCDPSession(page), 15_000, 'context.newCDPSession(page)', h.detail);
    const { result } = await session.send('Runtime.evaluate', { expression: 'document.title', returnByValue: true });
    assert.equal(result.value, FORM_TITLE);
    await session.detach();
    assert.equal(await page.evaluate(() => 7 * 6), 42, 'the page works after the extra session left');
    await browser.close();
    browser = undefined;
  });
});
