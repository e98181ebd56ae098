// A fair share of the browser per agent: another agent's `Runtime.evaluate 1+1` on its own tab
// (the victim) while one busy agent, on a tab of its own, (a) does nothing, (b) has 10,000
// `Runtime.evaluate 1+1` in flight (sent at once), (c) has 200 `Runtime.evaluate` of 1 MB each
// in flight and never reads its socket. Each row twice: both agents through tabtunnel (their
// agent endpoints), then both over Chromium's own port, on the same two tabs of the same browser
// in the same run. Also the busy agent's own pipelined rate for (b), alone and with the victim.
// The victim's figure is the median of its round trips taken while the load is in flight.

import { sleep } from '../e2e/harness.mjs';
import { CdpClient, attachToPage } from './cdp-client.mjs';
import { EVALUATE_1_PLUS_1, agentWsEndpoint } from './paths.mjs';
import { latencySummary } from './stats.mjs';

/** How long after a load is sent the victim starts: the load is then in every queue. */
const SETTLE_MS = 50;
const WARM_UP = 10;

/** Sequential victim round trips, `gapMs` apart, while `busy()` (at least one, at most `count`). */
async function victimRoundTrips(victim, { count, gapMs, busy = () => true }) {
  const samples = [];
  while (samples.length < count && (samples.length === 0 || busy())) {
    const t0 = performance.now();
    const { result } = await victim.client.send('Runtime.evaluate', EVALUATE_1_PLUS_1, victim.sessionId);
    samples.push(performance.now() - t0);
    if (result?.value !== 2) throw new Error(`victim: Runtime.evaluate 1+1 answered ${JSON.stringify(result)}`);
    if (gapMs) await sleep(gapMs);
  }
  return samples;
}

const summary = (samples) => ({ ...latencySummary(samples), max_ms: Math.max(...samples) });

/** Sends `count` commands at once on `busy`; resolves with the time to the last answer. */
function burst(busy, count, params) {
  const t0 = performance.now();
  const answers = [];
  for (let i = 0; i < count; i += 1) answers.push(busy.client.send('Runtime.evaluate', params, busy.sessionId));
  let left = count;
  for (const a of answers) a.then(() => (left -= 1), () => (left -= 1));
  const done = Promise.allSettled(answers).then((all) => ({
    ms: performance.now() - t0,
    failed: all.filter((a) => a.status === 'rejected').length,
  }));
  return { done, inFlight: () => left > 0 };
}

/** One path's three rows: `victim` and `busy` are {client, sessionId} on their own tabs. */
async function rows(victim, busy, sizes) {
  const { samples, gapMs, evaluates, large, largeBytes } = sizes;
  const out = {};
  // A new tab's first calls wait for its page: not what is measured.
  await victimRoundTrips(victim, { count: WARM_UP, gapMs: 0 });
  await victimRoundTrips(busy, { count: WARM_UP, gapMs: 0 });
  out.idle = summary(await victimRoundTrips(victim, { count: samples, gapMs }));

  // The busy agent alone: its own pipelined rate.
  const alone = burst(busy, evaluates, EVALUATE_1_PLUS_1);
  const aloneDone = await alone.done;
  out.busy_alone_cmd_s = evaluates / (aloneDone.ms / 1000);

  const load = burst(busy, evaluates, EVALUATE_1_PLUS_1);
  await sleep(SETTLE_MS);
  const during = await victimRoundTrips(victim, { count: samples, gapMs, busy: load.inFlight });
  const loadDone = await load.done;
  out.evaluates = { ...summary(during), busy_cmd_s: evaluates / (loadDone.ms / 1000), busy_failed: aloneDone.failed + loadDone.failed };

  // 1 MB answers the busy agent does not read: its socket is paused from the start.
  busy.client.ws.pause();
  const expression = `'x'.repeat(${largeBytes})`;
  const unread = burst(busy, large, { expression, returnByValue: true });
  await sleep(SETTLE_MS);
  const whileUnread = await victimRoundTrips(victim, { count: samples, gapMs });
  busy.client.ws.resume();
  const unreadDone = await unread.done;
  out.unread = { ...summary(whileUnread), busy_ms: unreadDone.ms, busy_failed: unreadDone.failed };
  return out;
}

async function pair(url, targetId) {
  const client = await CdpClient.open(url);
  return { client, sessionId: await attachToPage(client, targetId) };
}

export async function browserShare(h, sizes) {
  const agentTab = async (name) => {
    const client = await CdpClient.open(await agentWsEndpoint(h, name));
    const { targetId } = await client.send('Target.createTarget', { url: h.pageUrl });
    return { client, sessionId: await attachToPage(client, targetId), targetId };
  };
  const victim = await agentTab('share-victim');
  const busy = await agentTab('share-busy');
  const result = { ...sizes };
  try {
    result.tabtunnel = await rows(victim, busy, sizes);
    const directVictim = await pair(h.realBrowserWsEndpoint, victim.targetId);
    const directBusy = await pair(h.realBrowserWsEndpoint, busy.targetId);
    try {
      result.direct = await rows(directVictim, directBusy, sizes);
    } finally {
      directVictim.client.close();
      directBusy.client.close();
    }
  } finally {
    for (const agent of [victim, busy]) {
      await agent.client.send('Target.closeTarget', { targetId: agent.targetId }).catch(() => {});
      agent.client.close();
    }
  }
  return result;
}
