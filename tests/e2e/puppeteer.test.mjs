// puppeteer-core (unmodified) drives the shared tab through tabtunnel's endpoint.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import puppeteer from 'puppeteer-core';

import { FORM_TITLE, greetingFor, startHarness, withTimeout } from './harness.mjs';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function connectOptions(extra) {
  return { defaultViewport: null, protocolTimeout: 30_000, ...extra };
}

describe('puppeteer-core through tabtunnel', { timeout: 240_000 }, () => {
  let h;
  let browser;

  before(async () => {
    h = await startHarness({ name: 'puppeteer' });
  });

  after(async () => {
    await browser?.disconnect().catch(() => {});
    await h?.close();
  });

  test('connect({browserURL}) sees exactly the shared page and drives it', async () => {
    browser = await withTimeout(
      puppeteer.connect(connectOptions({ browserURL: h.clientEndpoint })),
      30_000,
      `puppeteer.connect({browserURL: ${h.clientEndpoint}})`,
      h.detail,
    );

    const pages = await withTimeout(browser.pages(), 30_000, 'browser.pages()', h.detail);
    assert.deepEqual(
      pages.map((p) => p.url()),
      [h.pageUrl],
      'browser.pages() must list exactly the shared page (not the side panel, not other tabs)',
    );
    const page = pages[0];

    assert.equal(await page.evaluate(() => document.title), FORM_TITLE);
    assert.equal(await page.title(), FORM_TITLE);

    await page.type('#name', 'Ada');
    assert.equal(await page.$eval('#name', (el) => el.value), 'Ada');
    await page.click('#go');
    await page.waitForFunction(() => document.querySelector('#out').textContent !== '', { timeout: 10_000 });
    assert.equal(await page.$eval('#out', (el) => el.textContent), greetingFor('Ada'));

    const png = Buffer.from(await withTimeout(page.screenshot(), 30_000, 'page.screenshot()', h.detail));
    assert.ok(png.subarray(0, 8).equals(PNG_SIGNATURE), `screenshot is not a PNG (starts ${png.subarray(0, 8).toString('hex')})`);
    assert.equal(png.subarray(12, 16).toString('ascii'), 'IHDR');
    const width = png.readUInt32BE(16);
    const height = png.readUInt32BE(20);
    assert.ok(width >= 100 && height >= 100, `screenshot is ${width}x${height}`);
    assert.ok(png.length > 2_000, `screenshot is only ${png.length} bytes`);

    await browser.disconnect();
    browser = undefined;
  });

  test('connect({browserWSEndpoint}) with the ready file wsEndpoint', async () => {
    browser = await withTimeout(
      puppeteer.connect(connectOptions({ browserWSEndpoint: h.wsEndpoint })),
      30_000,
      `puppeteer.connect({browserWSEndpoint: ${h.wsEndpoint}})`,
      h.detail,
    );
    const pages = await withTimeout(browser.pages(), 30_000, 'browser.pages()', h.detail);
    assert.deepEqual(pages.map((p) => p.url()), [h.pageUrl]);
    const page = pages[0];
    // State from the previous client is still there: it is the user's real tab.
    assert.equal(await page.$eval('#out', (el) => el.textContent), greetingFor('Ada'));
    assert.equal(await page.evaluate(() => 6 * 7), 42);
    const version = await browser.version();
    assert.match(version, /^(Headless)?Chrome\/\d+/);
    await browser.disconnect();
    browser = undefined;
  });

  test('createCDPSession() opens an extra session on the tab with its own domain state', async () => {
    browser = await withTimeout(puppeteer.connect(connectOptions({ browserURL: h.clientEndpoint })), 30_000, 'connect', h.detail);
    const [page] = await browser.pages();
    const session = await withTimeout(page.createCDPSession(), 15_000, 'page.createCDPSession()', h.detail);
    const contexts = [];
    session.on('Runtime.executionContextCreated', (e) => contexts.push(e.context));
    // puppeteer's own session enabled Runtime first: the extra one still learns the contexts.
    await session.send('Runtime.enable');
    assert.ok(contexts.some((c) => c.auxData?.isDefault), `no default context reported: ${JSON.stringify(contexts)}`);
    const { result } = await session.send('Runtime.evaluate', { expression: "document.querySelector('#out').textContent", returnByValue: true });
    assert.equal(result.value, greetingFor('Ada'));
    // Its Runtime.disable leaves the page's own session working.
    await session.send('Runtime.disable');
    await session.detach();
    assert.equal(await withTimeout(page.evaluate(() => 5 * 5), 15_000, 'evaluate after the extra session left', h.detail), 25);
    await browser.disconnect();
    browser = undefined;
  });
});
