// Bursts and floods: a client that reads at its own pace is never cut off by a burst of events,
// and one that has stopped reading is.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { RawCdp, connectAgent, pollFor, startHarness, withTimeout } from './harness.mjs';

/** The daemon's default: more than 1 MiB waiting and nothing taken for this long is a stopped reader. */
const STALL_MS = 10_000;

describe('bursts and floods', { timeout: 900_000 }, () => {
  let h;

  before(async () => {
    h = await startHarness({ name: 'floods' });
  });

  after(async () => {
    await h?.close();
  });

  test('a 20,000-message flood: a reading puppeteer client gets every event and stays, a paused reader is dropped', async () => {
    const messages = 20_000;
    const browser = await connectAgent(h, 'burst', 120_000);
    let paused;
    try {
      const page = await browser.newPage();
      await page.goto(h.pageUrl);
      // Two sessions with Runtime on: puppeteer's own for the page, and one of the test's.
      const session = await page.createCDPSession();
      await session.send('Runtime.enable');
      let events = 0;
      session.on('Runtime.consoleAPICalled', () => (events += 1));

      // Another client of the same agent on the same tab, that stops reading at once.
      paused = await RawCdp.open((await (await fetch(`${h.agentEndpoint('burst')}/json/version`)).json()).webSocketDebuggerUrl);
      const { sessionId } = (await paused.send(1, 'Target.attachToTarget', { targetId: page.target()._targetId, flatten: true })).result;
      assert.deepEqual((await paused.send(2, 'Runtime.enable', {}, sessionId)).result, {});
      let pausedBytes = 0;
      paused.ws.on('message', (data) => (pausedBytes += data.length));
      paused.ws._socket.pause();
      const logsBefore = h.logs().length;

      const flood = await session.send('Runtime.evaluate', {
        expression: `for (let i = 0; i < ${messages}; i++) console.log('flood ' + i + ' ' + 'x'.repeat(200)); ${messages}`,
        returnByValue: true,
      });
      assert.equal(flood.result.value, messages);
      await pollFor(() => events === messages, 60_000, `all ${messages} flood events (got ${events})`, h.detail);
      assert.ok(browser.connected, 'the reading client is still connected');
      assert.equal(await page.evaluate(() => 6 * 7), 42);

      // The paused one is dropped once it has taken nothing for the stall timeout...
      await pollFor(
        () => /client disconnected: it is not reading fast enough.*stalled_ms=/.test(h.logs().slice(logsBefore)),
        STALL_MS + 30_000,
        'the daemon to drop the paused reader',
        h.detail,
      );
      // ...and reading again, it finds what its socket buffers held, then the end.
      paused.ws._socket.resume();
      await withTimeout(paused.closed, 30_000, 'the paused reader closed by the daemon', h.detail);
      // Each message is a frame of about 520 bytes: the whole flood is some 10 MB.
      assert.ok(pausedBytes < messages * 450, `the paused reader got ${pausedBytes} bytes of a ${messages}-message flood`);
      assert.ok(browser.connected, 'the reading client is still connected');
    } finally {
      paused?.close();
      await browser.disconnect();
    }
  });
});
