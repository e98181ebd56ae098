// `tabtunnel launch` for automation: Chromium opens on a page and shares it by itself, with
// nobody clicking the side panel (headless machines have none to click).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { FORM_TITLE, connectPuppeteer, freePort, greetingFor, pollFor, sharedPageUrls, startHarness } from './harness.mjs';

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
      async () => (await sharedPageUrls(h))?.includes(h.pageUrl),
      20_000,
      'the startup page shared without the side panel',
      h.detail,
    );
    const browser = await connectPuppeteer(h);
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

describe('tabtunnel launch again on the same profile, port and token', { timeout: 240_000 }, () => {
  const persistDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tabtunnel-relaunch-'));

  after(() => fs.rmSync(persistDir, { recursive: true, force: true }));

  test('shares its startup tab every time, not only the first', async () => {
    const port = await freePort();
    for (const run of [1, 2]) {
      const h = await startHarness({ name: `relaunch-${run}`, share: false, shareStartupTabs: true, persistDir, port });
      try {
        await pollFor(
          async () => (await sharedPageUrls(h))?.includes(h.pageUrl),
          20_000,
          `run ${run}: the startup page shared`,
          h.detail,
        );
      } finally {
        await h.close();
      }
    }
  });
});
