// A new page's viewport is settled before the client gets it, and stays so. Chrome's "started
// debugging this browser" bar slides into a tab shown while it is there, 40-350 ms later and
// 56 px high here, so without care a screenshot taken right after `newPage` is taller than one
// taken a second later. Headless and headful (Xvfb), through an agent endpoint.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { connectAgent, sleep, startHarness } from './harness.mjs';

/** A PNG's width and height, from its IHDR chunk. */
function pngSize(png) {
  return `${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`;
}

for (const headful of [false, true]) {
  describe(`a new page's viewport (${headful ? 'headful, Xvfb' : 'headless'})`, { timeout: 180_000 }, () => {
    let h;

    before(async () => {
      // The human shares a tab first, so Chrome's bar is up before the agent's pages open, and
      // the agent's first window opens with it already there; the agent is not the first.
      h = await startHarness({ name: headful ? 'viewport-headful' : 'viewport', headful });
    });

    after(async () => {
      await h?.close();
    });

    test('screenshots right after newPage and 1.5 s later are the same size', async () => {
      const browser = await connectAgent(h, 'steady');
      const seen = [];
      // The first page opens the agent's window; the others open in it.
      for (let round = 0; round < 4; round += 1) {
        const page = await browser.newPage();
        const first = pngSize(Buffer.from(await page.screenshot()));
        const firstInner = await page.evaluate(() => `${innerWidth}x${innerHeight}`);
        await sleep(1500);
        const later = pngSize(Buffer.from(await page.screenshot()));
        const laterInner = await page.evaluate(() => `${innerWidth}x${innerHeight}`);
        seen.push({ round, first, later, firstInner, laterInner });
      }
      for (const s of seen) {
        assert.equal(s.first, s.later, `page ${s.round}'s screenshot changed size: ${JSON.stringify(seen)}`);
        assert.equal(s.firstInner, s.laterInner, `page ${s.round}'s viewport changed: ${JSON.stringify(seen)}`);
      }
      // Every page of the one window has the window's one viewport.
      assert.equal(new Set(seen.map((s) => s.later)).size, 1, JSON.stringify(seen));
      await browser.disconnect();
    });
  });
}
