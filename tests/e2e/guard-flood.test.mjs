// Issue 26, a flood of the gesture guard: an agent's page posts payments without end (hundreds a
// second). At most sixteen writes of a tab wait on the guard; the rest are refused at once, unread
// and unasked. Asserted: the side panel keeps answering (its round trips to the worker, and the
// agent's through the daemon, are measured and must complete; no wall-clock bound), it never shows
// more than sixteen questions at once, the human denies what it asks, nothing reaches the server,
// and Take back and the kill switch still end it. The trail names each flood as it starts and as
// it ends, with the count, not each write. On main (34bff82) no question showed in the 30 s after
// the flood started, and the extension's worker then left an evaluate unanswered for 30 s.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';

import { QUESTION, WAIT_MS, attackKit } from './attack-kit.mjs';
import { gestureSites } from './gesture-sites.mjs';
import { daemonBinary, pollFor, sleep, startHarness, withTimeout } from './harness.mjs';

/** The guard's bound: writes of one tab waiting on it at once. */
const WAITING_PER_TAB = 16; // core/src/gestures/flood.rs
/** How long the flood is watched before the human answers. */
const WATCH_FLOOD_MS = 20_000;
/** A round trip that has not come back in this long is one the panel never answered (a hang, not
 *  a speed bound: the figures are printed). */
const HUNG_MS = 60_000;

/** The flood: 20 payments every 50 ms, each with its own body, until the page goes. */
const FLOOD = () => {
  window.__sent = 0;
  window.__failed = 0;
  setInterval(() => {
    for (let i = 0; i < 20; i++) {
      window.__sent += 1;
      fetch('/shop/api/pay', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 124000, currency: 'EUR', n: window.__sent }),
      }).catch(() => (window.__failed += 1));
    }
  }, 50);
};

const ms = (v) => `${v.toFixed(1)} ms`;
function figures(list) {
  if (list.length === 0) return 'none';
  const sorted = [...list].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return `${list.length} round trips, median ${ms(at(0.5))}, p95 ${ms(at(0.95))}, max ${ms(sorted.at(-1))}`;
}

describe('a flood of held writes', { timeout: 900_000 }, () => {
  let h;
  let site;
  let panel;

  before(async () => {
    site = gestureSites();
    h = await startHarness({ name: 'guard-flood', share: false, extraPages: site.pages });
    panel = await h.openPanel();
  });

  after(async () => {
    await h?.close();
  });

  const { payments, sharedTabIds, unshared, denyAll, handTo, noPaymentAfter } = attackKit(() => ({ h, panel, site }));

  /** What the page is `act`ing: a hung round trip is `null`. */
  async function timed(act) {
    const t0 = performance.now();
    const done = await withTimeout(act(), HUNG_MS, 'a round trip').then(() => true, () => false);
    return done ? performance.now() - t0 : null;
  }

  /**
   * Watches the flood for `watchMs`, then denies `denials` questions one by one; returns the
   * figures: the panel's round trips to the worker, the agent's through the daemon, the most
   * questions shown at once, and round trips that never came back.
   */
  async function watch(page, what, watchMs, denials) {
    const panelTrips = [];
    const agentTrips = [];
    const denyTrips = [];
    let hung = 0;
    let most = 0;
    const sample = async () => {
      const p = await timed(() => panel.evaluate(() => chrome.runtime.sendMessage({ type: 'getState' })));
      const a = await timed(() => page.evaluate(() => window.__sent));
      for (const [list, t] of [[panelTrips, p], [agentTrips, a]]) {
        if (t === null) hung += 1;
        else list.push(t);
      }
      most = Math.max(most, await panel.$$eval(QUESTION, (lis) => lis.length));
    };
    const end = Date.now() + watchMs;
    while (Date.now() < end) {
      await sample();
      await sleep(200);
    }
    let denied = 0;
    for (let i = 0; i < denials; i++) {
      // A refusal stands 30 s for the same request: the flood's next ones are refused unasked
      // meanwhile, and the panel may have nothing more to ask.
      const li = await panel.waitForSelector(QUESTION, { timeout: 5_000 }).catch(() => null);
      const id = await li?.evaluate((el) => el.dataset.requestId).catch(() => null);
      if (!id) break;
      // The panel redraws its list as questions come and go: a click that met an old button is
      // made again.
      const t = await timed(async () => {
        const until = Date.now() + HUNG_MS;
        while (Date.now() < until) {
          await panel.click(`${QUESTION.replace('[data-request-id]', `[data-request-id="${id}"]`)} button[data-answer="deny"]`).catch(() => {});
          const gone = `#approvals li[data-request-id="${id}"]`;
          if (await panel.waitForSelector(gone, { hidden: true, timeout: 5_000 }).then(() => true, () => false)) return;
        }
        throw new Error(`question ${id} never went`);
      });
      if (t === null) hung += 1;
      else {
        denied += 1;
        denyTrips.push(t);
      }
      await sample();
    }
    const sent = await withTimeout(page.evaluate(() => [window.__sent, window.__failed]), HUNG_MS, 'the page\'s count').catch(() => [NaN, NaN]);
    const f = { panelTrips, agentTrips, hung, most, denied, sent: sent[0], failed: sent[1] };
    console.log(
      [
        `# ${what}: ${f.sent} payments sent by the page, ${f.failed} failed at once; at most ${f.most} questions shown at once; ${f.denied} denied in turn (at most ${denials}); ${f.hung} round trips never came back (${HUNG_MS / 1000} s)`,
        `#   the side panel's round trips to the worker: ${figures(panelTrips)}`,
        `#   the agent's round trips through the daemon: ${figures(agentTrips)}`,
        `#   a denial, until its question went: ${figures(denyTrips)}`,
      ].join('\n'),
    );
    return f;
  }

  function assertHeld(f, denials) {
    assert.equal(f.hung, 0, 'every round trip came back: the panel and the agent kept answering');
    assert.ok(f.most <= WAITING_PER_TAB, `at most ${WAITING_PER_TAB} questions at once, saw ${f.most}`);
    assert.ok(f.most >= 1, 'the flood was asked about');
    assert.ok(f.denied >= 1 && f.denied <= denials, `the human denied what the panel asked: ${f.denied}`);
    assert.ok(f.sent >= 500, `a flood: ${f.sent} payments sent`);
    assert.ok(f.failed >= f.sent - 200, `the rest failed at once: ${f.failed} of ${f.sent}`);
  }

  /** `agent`'s page floods; the human watches, denies `denials` questions in turn, then `end`s
   *  it: no payment reaches the server, before or after, and the questions go. */
  async function floodThenEnd(agent, what, watchMs, denials, end, gone) {
    await denyAll();
    const before = payments();
    const { browser, page } = await handTo(agent);
    try {
      // The handed tab may still be loading: the flood starts once its page runs it.
      await pollFor(() => page.evaluate(FLOOD).then(() => true, () => false), WAIT_MS, 'the flood to start', h.detail);
      assertHeld(await watch(page, what, watchMs, denials), denials);
      assert.equal(payments() - before, 0, 'no payment reached the server');
      await noPaymentAfter(what, end, gone);
      await pollFor(async () => (await panel.$$(QUESTION)).length === 0, WAIT_MS, 'the questions withdrawn', h.detail);
    } finally {
      await browser.disconnect().catch(() => {});
    }
  }

  test('a page posting payments without end: sixteen questions at most, the panel answers throughout, nothing reaches the server, Take back ends it', async () => {
    await floodThenEnd('flooder', 'the take back', WATCH_FLOOD_MS, 12, () => panel.locator('#take-back').click(), unshared(h.tabId));
  });

  test('the kill switch ends a flood, and the trail names each flood as it starts and as it ends, with the count', async () => {
    try {
      await floodThenEnd('flooder-2', 'the kill switch', WATCH_FLOOD_MS / 2, 4, () => panel.click('#kill-switch'), async () => (await sharedTabIds()).length === 0);
    } finally {
      if (await panel.$('#kill-switch[data-engaged="true"]')) await panel.click('#kill-switch');
      await pollFor(async () => (await fetch(`${h.agentEndpoint('x')}/json/version`)).status === 200, WAIT_MS, 'the kill switch released', h.detail);
    }
    const { stdout } = await promisify(execFile)(daemonBinary(), ['audit', '--json'], {
      env: { ...process.env, XDG_CONFIG_HOME: h.configHome, XDG_DATA_HOME: h.dataHome },
      maxBuffer: 256 << 20,
    });
    const lines = stdout.trim().split('\n').filter(Boolean);
    const floods = lines.filter((l) => /flood of writes/.test(l));
    // Each flood: a line as it starts, one with the count as it ends. The tab's reset as it leaves
    // clears its count, so the writes its page sends until it is let go may make a second one.
    for (const agent of ['flooder', 'flooder-2']) {
      const mine = floods.filter((l) => JSON.parse(l).agent === agent);
      const started = mine.filter((l) => /started/.test(l)).length;
      const ended = mine.filter((l) => /ended: \d+ writes refused/.test(l));
      assert.ok(started >= 1 && started <= 3, `${agent}: a line as each flood started:\n${mine.join('\n')}`);
      assert.equal(ended.length, started, `${agent}: a line as each ended, with the count:\n${mine.join('\n')}`);
      const refused = ended.reduce((n, l) => n + Number(/ended: (\d+) writes/.exec(l)[1]), 0);
      assert.ok(refused >= 1_000, `${agent}: ${refused} refused, in ${ended.length} lines`);
    }
    assert.ok(floods.length <= 12, `not a line per refused write: ${floods.length} lines`);
    // A payment like one the human denied is refused unasked while the refusal stands (30 s from
    // the last denial): the trail gets the first of those, then one line with the count of the
    // rest as it ends, not a line each. flooder's ended during the second test.
    const retriesOf = (all, agent) =>
      all.map((l) => JSON.parse(l)).filter((l) => l.agent === agent && l.answer === 'denied: refused moments ago');
    for (const agent of ['flooder', 'flooder-2']) {
      const retries = retriesOf(lines, agent);
      console.log(`# ${agent}: ${retries.length} trail lines of writes refused moments ago`);
      assert.ok(retries.length <= 4, `${agent}: a first retry and a count per refusal, not a line each:\n${retries.slice(0, 6).map((l) => JSON.stringify(l)).join('\n')}`);
    }
    let counted = [];
    await pollFor(async () => {
      const { stdout: now } = await promisify(execFile)(daemonBinary(), ['audit', '--json'], {
        env: { ...process.env, XDG_CONFIG_HOME: h.configHome, XDG_DATA_HOME: h.dataHome },
        maxBuffer: 256 << 20,
      });
      counted = retriesOf(now.trim().split('\n').filter(Boolean), 'flooder').filter((l) => /\d+ more like it/.test(l.rule ?? JSON.stringify(l)));
      return counted.length > 0;
    }, 45_000, "flooder's retries counted as its refusal ended", h.detail);
    console.log(`# flooder: ${counted.map((l) => /(\d+) more like it/.exec(JSON.stringify(l))[1]).join(' + ')} more refused moments ago, counted`);
  });
});
