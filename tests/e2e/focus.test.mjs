// An agent's pages behave as focused pages while the human's window keeps the focus (headful,
// Xvfb, where window focus is real), background tabs of its window included. An agent's window opens unfocused and tabtunnel gives the
// focus straight back when an agent's click takes it, so without focus emulation its page
// reports `document.hasFocus()` false, fires no focus events for `element.focus()`, sees a
// window blur after each click, and cannot copy to the clipboard.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { connectAgent, sleep, startHarness } from './harness.mjs';

const FOCUS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tabtunnel focus page</title></head>
<body>
<input id="a" value="copy me"> <input id="b"> <button id="copy" type="button">Copy</button>
<script>
  window.log = [];
  for (const id of ['a', 'b']) {
    const el = document.getElementById(id);
    el.addEventListener('focus', () => log.push(id + ':focus'));
    el.addEventListener('blur', () => log.push(id + ':blur'));
  }
  addEventListener('focus', () => log.push('window:focus'));
  addEventListener('blur', () => log.push('window:blur'));
  document.addEventListener('copy', () => log.push('copy'));
  document.getElementById('copy').addEventListener('click', () => {
    document.getElementById('a').select();
    window.copied = document.execCommand('copy');
  });
</script>
</body></html>
`;

describe("headful: an agent's pages have the focus, the human keeps theirs", { timeout: 240_000 }, () => {
  let h;
  let human;

  before(async () => {
    h = await startHarness({ name: 'focus', headful: true, extraPages: { '/focus.html': FOCUS_PAGE } });
    const appUrl = await h.loginAsHuman('human');
    human = await h.focusHumanTab(appUrl);
  });

  after(async () => {
    await h?.close();
  });

  /** The human's window has the focus and their page knows it. */
  async function assertHumanKeepsFocus(step) {
    const expected = { focusedWindow: human.windowId, focused: true };
    let now;
    for (let waited = 0; waited <= 3000; waited += 100) {
      now = await h.sw(async () => {
        const w = await chrome.windows.getLastFocused();
        return { focusedWindow: w.id, focused: w.focused };
      });
      if (JSON.stringify(now) === JSON.stringify(expected)) break;
      await sleep(100);
    }
    assert.deepEqual(now, expected, `after ${step}: the human's window lost the focus\n${h.detail()}`);
    assert.equal(await h.humanPage.evaluate(() => document.hasFocus()), true, `after ${step}: the human's page lost focus`);
  }

  const state = (page) => page.evaluate(() => ({ hasFocus: document.hasFocus(), log: window.log, copied: window.copied }));

  test('hasFocus, focus events and copying after a gesture, in two pages at once', async () => {
    const browser = await connectAgent(h, 'focused');
    const page = await browser.newPage();
    await page.goto(`${h.pageServerUrl}/focus.html`);
    // Before any input (which could move the focus for a moment).
    assert.equal((await state(page)).hasFocus, true, "the agent's new page has no focus");

    await page.focus('#a');
    await page.focus('#b');
    await page.click('#copy');
    const clipboard = await page.evaluate(() => navigator.clipboard.writeText('from the agent').then(() => 'written', (e) => String(e)));
    const after = await state(page);
    assert.deepEqual(after.log, ['a:focus', 'a:blur', 'b:focus', 'b:blur', 'a:focus', 'copy'], 'focus events, and no window blur after the click');
    assert.equal(after.copied, true, "execCommand('copy') after a click failed");
    assert.equal(clipboard, 'written');
    assert.equal(after.hasFocus, true);
    await assertHumanKeepsFocus('an agent focused, clicked and copied');

    // A second page of the same agent's window: both are focused, as in a browser's own pages,
    // and the first, now a background tab, is still visible and rendering (focus emulation
    // counts the page as captured), so clicks that wait for an animation frame still work.
    const second = await browser.newPage();
    await second.goto(`${h.pageServerUrl}/focus.html?second`);
    assert.equal((await state(second)).hasFocus, true);
    assert.equal((await state(page)).hasFocus, true);
    const background = await page.evaluate(async () => {
      let frames = 0;
      const frame = () => {
        frames += 1;
        requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
      await new Promise((r) => setTimeout(r, 500));
      return { visibility: document.visibilityState, frames };
    });
    assert.equal(background.visibility, 'visible');
    assert.ok(background.frames > 5, `the background page renders no frames: ${JSON.stringify(background)}`);
    await page.click('#copy');
    assert.equal((await state(page)).copied, true, 'a click in the background page');
    await assertHumanKeepsFocus('a second agent page');
    await browser.disconnect();
  });

  test("a client's own focus emulation calls and a reconnect leave the page focused", async () => {
    const browser = await connectAgent(h, 'switcher');
    const page = await browser.newPage();
    await page.goto(`${h.pageServerUrl}/focus.html`);
    const session = await page.createCDPSession();
    // Turning it off would take it from every client of the page: it stays on.
    assert.deepEqual(await session.send('Emulation.setFocusEmulationEnabled', { enabled: false }), {});
    assert.equal((await state(page)).hasFocus, true, 'a client turned the focus off for everyone');
    assert.deepEqual(await session.send('Emulation.setFocusEmulationEnabled', { enabled: true }), {});
    await session.detach();
    const url = page.url();

    // The last client leaving resets the tab's debugger session (a detach and re-attach, which
    // drops every emulation); the page is still focused for the next client.
    await browser.disconnect();
    const again = await connectAgent(h, 'switcher');
    const found = (await again.pages()).find((p) => p.url() === url);
    assert.ok(found, `the agent's page is gone after a reconnect: ${(await again.pages()).map((p) => p.url())}`);
    for (let i = 0; i < 3; i += 1) {
      assert.equal((await state(found)).hasFocus, true, `the page lost its focus after the reset (check ${i})`);
      await sleep(500);
    }
    await assertHumanKeepsFocus('a reconnect');
    await again.disconnect();
  });
});
