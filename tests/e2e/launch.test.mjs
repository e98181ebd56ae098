// `tabtunnel launch` for automation: Chromium opens on a page and shares it by itself, with
// nobody clicking the side panel (headless machines have none to click).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import puppeteer from 'puppeteer-core';

import { FORM_TITLE, greetingFor, pollFor, startHarness, withTimeout } from './harness.mjs';

describe('tabtunnel launch --share-startup-tabs yes --open URL', { timeout: 240_000 }, () => {
  let h;

  before(async () => {
    h = await startHarness({ name: 'launch', share: false, shareStartupTabs: true });
  });

  after(async () => {
    await h?.close();
  });

  test('a client finds the startup page shared and drives it', async () => {
    await pollFor(
      async () => (await (await fetch(`${h.clientEndpoint}/json/list`)).json()).some((p) => p.url === h.pageUrl),
      20_000,
      'the startup page shared without the side panel',
      h.detail,
    );
    const browser = await withTimeout(
      puppeteer.connect({ browserURL: h.clientEndpoint, defaultViewport: null, protocolTimeout: 30_000 }),
      30_000,
      'puppeteer.connect',
      h.detail,
    );
    try {
      const pages = await browser.pages();
      assert.deepEqual(pages.map((p) => p.url()), [h.pageUrl]);
      const [page] = pages;
      assert.equal(await page.title(), FORM_TITLE);
      await page.type('#name', 'Launch');
      await page.click('#go');
      assert.equal(await page.$eval('#out', (el) => el.textContent), greetingFor('Launch'));
      // The agent can take the shared tab anywhere.
      await page.goto(`${h.pageServerUrl}/other.html`);
      assert.equal(await page.$eval('#other', (el) => el.textContent), 'another page, never shared');
    } finally {
      await browser.disconnect();
    }
  });
});
