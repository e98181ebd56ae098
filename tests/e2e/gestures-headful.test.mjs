// The gesture guard in headful Chromium under Xvfb, as users run it: the human's own clicks in
// their own tabs are never held (those tabs have no debugger), while an agent's click on the
// same button in its own window waits for the human, with a picture of the button taken from
// what the agent's window paints.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { gestureSites } from './gesture-sites.mjs';
import { connectAgent, pngHasContent, pollFor, sleep, startHarness, withTimeout } from './harness.mjs';

const WAIT_MS = 30_000;
const QUESTION = '#approvals li.gesture[data-request-id]';

describe('headful: the gesture guard holds agents, never the human', { timeout: 300_000 }, () => {
  let h;
  let site;

  before(async () => {
    site = gestureSites();
    h = await startHarness({ name: 'gestures-headful', headful: true, share: false, extraPages: site.pages });
  });

  after(async () => {
    await h?.close();
  });

  const writesTo = (p) => site.writes.filter((w) => w.endsWith(` ${p}`)).length;

  test("the human pays in their own tab at once; an agent's click on the same button waits for them", async () => {
    const panel = await h.openPanel();
    // The human, in a tab of their own (the harness's hands are not a client of tabtunnel's).
    const human = await h.browser.newPage();
    await human.goto(`${h.pageServerUrl}/shop/checkout`);
    await human.type('#card', '4242424242424242');
    const t0 = Date.now();
    await Promise.all([human.waitForNavigation({ timeout: WAIT_MS }), human.click('#pay')]);
    const humanMs = Date.now() - t0;
    assert.equal(writesTo('/shop/pay'), 1, "the human's payment reached the server");
    assert.equal(await panel.$(QUESTION), null, 'the human was asked about their own click');
    console.log(`# the human's own click and its form post: ${humanMs} ms, never held`);

    const agent = await connectAgent(h, 'shopper', 120_000);
    try {
      const page = await agent.newPage();
      await page.goto(`${h.pageServerUrl}/shop/checkout`);
      const click = page.click('#pay').then(() => 'done', (e) => e.message);
      // The panel's window may be behind the agent's (a background window runs no animation
      // frames, which waitForSelector polls on): poll by querying instead.
      await pollFor(() => panel.$(`${QUESTION} img.picture`), WAIT_MS, 'the question, with its picture', h.detail);
      const picture = await panel.$eval(`${QUESTION} img.picture`, (img) => img.src);
      const jpeg = Buffer.from(picture.split(',')[1], 'base64');
      assert.ok(jpeg.length > 1000, `the picture is ${jpeg.length} bytes`);
      assert.equal(await panel.$eval(`${QUESTION} .element`, (el) => el.textContent), 'Pay €1,240.00');
      // A screenshot of the panel shows the question as the human sees it.
      await panel.bringToFront();
      assert.ok(pngHasContent(await panel.screenshot()), 'the panel paints the question');
      await panel.click(`${QUESTION} button[data-answer="deny"]`);
      assert.match(await withTimeout(click, WAIT_MS, "the agent's denied click"), /gesture guard/);
      await sleep(500);
      assert.equal(writesTo('/shop/pay'), 1, "the agent's click reached the server");
      // The human clicks again in their own tab while the agent is connected: still not held.
      await human.goto(`${h.pageServerUrl}/shop/checkout`);
      await Promise.all([human.waitForNavigation({ timeout: WAIT_MS }), human.click('#pay')]);
      assert.equal(writesTo('/shop/pay'), 2);
      assert.equal(await panel.$(QUESTION), null);
    } finally {
      await agent.disconnect();
    }
  });
});
