// Bursts and floods: a client that reads at its own pace is never cut off by a burst of events,
// one that has stopped reading is, and one agent's flood costs the others only what the
// browser itself costs them (the figures are printed; BENCHMARKS.md has them).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { floodFairness } from '../bench/fairness.mjs';
import { RawCdp, connectAgent, pollFor, startHarness, withTimeout } from './harness.mjs';

const MiB = 1 << 20;
/** The daemon's default: more than 1 MiB waiting and nothing taken for this long is a stopped reader. */
const STALL_MS = 30_000;

const ms = (v) => `${v.toFixed(1)} ms`;

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

  test("one agent's 200,000-message flood: the other agent's round trips, the flooder's events, the daemon's memory", async () => {
    const f = await floodFairness(h, { messages: 200_000 });
    const t = f.tabtunnel;
    const line = (x) =>
      `p50 ${ms(x.rest.p50_ms)}, p99 ${ms(x.rest.p99_ms)} at rest; p50 ${ms(x.during.p50_ms)}, ` +
      `p99 ${ms(x.during.p99_ms)}, max ${ms(x.during.max_ms)} during the flood (${x.during.samples} calls)`;
    console.log(
      [
        `# flood of ${f.messages} console messages: every event at the flooder after ${(t.flood_ms / 1000).toFixed(1)} s`,
        `# the other agent's round trip through tabtunnel: ${line(t.victim)}`,
        `# the same tab over Chromium's own port meanwhile: ${line(t.direct_victim)}`,
        `# daemon memory: ${(t.daemon.rest_rss_bytes / MiB).toFixed(1)} MiB at rest, ${(t.daemon.peak_rss_bytes / MiB).toFixed(1)} MiB at the peak, ` +
          `${(t.daemon.after_rss_bytes / MiB).toFixed(1)} MiB after`,
      ].join('\n'),
    );
    assert.equal(t.all_delivered, true, `the flooding agent got ${t.events} of ${f.messages} events (${t.flood_error ?? 'answered'})\n${h.detail()}`);
    assert.equal(t.flooder_connected, true, `the flooding agent is still connected\n${h.detail()}`);
    assert.equal(t.wrong_answers, 0, "every one of the other agent's commands got its own answer");
    assert.ok(t.victim.during.samples > 0);
    assert.ok(
      t.daemon.after_rss_bytes < t.daemon.rest_rss_bytes + 16 * MiB,
      `the daemon holds ${(t.daemon.after_rss_bytes / MiB).toFixed(1)} MiB after the flood (${(t.daemon.rest_rss_bytes / MiB).toFixed(1)} at rest)\n${h.detail()}`,
    );
  });
});
