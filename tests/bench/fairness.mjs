// Fairness under a flood: one agent's page logs N console messages in one go while another
// agent's commands go on. Measured: the other agent's round trip at rest and during the flood,
// through tabtunnel and, on the same tab at the same time, over Chromium's own port (what the
// browser itself does meanwhile); whether the flooding agent got every event and kept its
// connection; the daemon's memory at rest, at its peak and after. With `directFlood`, the same
// flood once more with the flooding page driven over Chromium's own port instead: the reference
// of what a flood costs a browser whose events do not pass through an extension.
//
// The flooding client is puppeteer-core (a page and a CDP session on it, both with Runtime
// enabled, so every message reaches it twice), as an agent would run it. The benchmark
// (`--only=fairness`) and tests/e2e/floods.test.mjs both run this.

import puppeteer from 'puppeteer-core';

import { sleep } from '../e2e/harness.mjs';
import { CdpClient, attachToPage } from './cdp-client.mjs';
import { agentWsEndpoint } from './paths.mjs';
import { rssBytes, sampleRss } from './proc.mjs';
import { latencySummary } from './stats.mjs';

const EVALUATE_1_PLUS_1 = { expression: '1 + 1', returnByValue: true };
/** How long memory may take to go back down after the flood. */
const SETTLE_MS = 10_000;

/** Sequential round trips on `probe` until `done()`, `gapMs` apart: `{ samples, wrong }`. */
async function roundTrips(probe, { count = Infinity, done = () => false, gapMs = 0 }) {
  const samples = [];
  let wrong = 0;
  while (samples.length < count && !done()) {
    const t0 = performance.now();
    const { result } = await probe.client.send('Runtime.evaluate', EVALUATE_1_PLUS_1, probe.sessionId);
    samples.push(performance.now() - t0);
    if (result?.value !== 2) wrong += 1;
    if (gapMs) await sleep(gapMs);
  }
  return { samples, wrong };
}

const summary = (samples) => ({ ...latencySummary(samples), max_ms: Math.max(...samples) });

/** The lowest resident memory of `pid` over a rest after a load. */
async function settledRss(pid) {
  let lowest = Infinity;
  for (let waited = 0; waited < SETTLE_MS; waited += 250) {
    lowest = Math.min(lowest, rssBytes(pid));
    await sleep(250);
  }
  return lowest;
}

/**
 * A page of `browser` that floods when asked, with a CDP session of its own on it that counts
 * the flood's console messages.
 */
async function floodingPage(browser, url) {
  const page = await browser.newPage();
  await page.goto(url);
  const session = await page.createCDPSession();
  await session.send('Runtime.enable');
  const counter = { events: 0, lastAt: 0 };
  session.on('Runtime.consoleAPICalled', () => {
    counter.events += 1;
    counter.lastAt = performance.now();
  });
  return { page, session, counter };
}

/**
 * Floods `flooder` while `probes` (name -> {client, sessionId}) take turns at round trips:
 * `{ flood_ms, events, all_delivered, probes: {name: summary}, wrong_answers }`.
 */
async function duringFlood(flooder, probes, { messages, messageBytes, gapMs, limitMs }) {
  const { session, counter } = flooder;
  counter.events = 0;
  const expression = `for (let i = 0; i < ${messages}; i++) console.log('flood ' + i + ' ' + 'x'.repeat(${messageBytes})); ${messages}`;
  const t0 = performance.now();
  const done = () => counter.events >= messages || performance.now() - t0 > limitMs;
  // A flooding client cut off by the daemon loses its answer: that is a figure, not a crash.
  const flood = session.send('Runtime.evaluate', { expression, returnByValue: true }).catch((err) => ({ error: err.message }));
  const results = await Promise.all(Object.values(probes).map((probe) => roundTrips(probe, { done, gapMs })));
  const answer = await flood;
  while (!done()) await sleep(20);
  return {
    flood_ms: counter.lastAt - t0,
    events: counter.events,
    all_delivered: counter.events === messages && answer.result?.value === messages,
    flood_error: answer.error,
    probes: Object.fromEntries(Object.keys(probes).map((name, i) => [name, summary(results[i].samples)])),
    wrong_answers: results.reduce((n, r) => n + r.wrong, 0),
  };
}

/** Opens a tab for agent `name` (a lean client on its endpoint) and the same tab over Chromium's own port. */
async function victimTab(h, name) {
  const client = await CdpClient.open(await agentWsEndpoint(h, name));
  const { targetId } = await client.send('Target.createTarget', { url: h.pageUrl });
  const tunnel = { client, sessionId: await attachToPage(client, targetId) };
  const directClient = await CdpClient.open(h.realBrowserWsEndpoint);
  const direct = { client: directClient, sessionId: await attachToPage(directClient, targetId) };
  return { targetId, tunnel, direct };
}

export async function floodFairness(
  h,
  { messages, messageBytes = 100, restSamples = 100, gapMs = 10, directFlood = false, limitMs = 300_000 },
) {
  const pid = h.daemon.pid;
  const out = { messages, message_bytes: messageBytes, flooding_client: `puppeteer-core: a page and a CDP session, Runtime enabled on both` };
  const victim = await victimTab(h, 'fairness-victim');
  const flooderBrowser = await puppeteer.connect({
    browserURL: h.agentEndpoint('fairness-flooder'),
    defaultViewport: null,
    protocolTimeout: limitMs,
  });
  try {
    const flooder = await floodingPage(flooderBrowser, h.pageUrl);
    const restTunnel = await roundTrips(victim.tunnel, { count: restSamples });
    const restDirect = await roundTrips(victim.direct, { count: restSamples });
    const restRss = rssBytes(pid);
    const sampler = await sampleRss(pid, 5);
    const flood = await duringFlood(flooder, { tabtunnel: victim.tunnel, direct: victim.direct }, { messages, messageBytes, gapMs, limitMs });
    const peak = (await sampler.stop()).peakBytes;
    // The flooding agent is still there: its page answers.
    const flooderConnected = flooderBrowser.connected && (await flooder.page.evaluate(() => 6 * 7).catch(() => null)) === 42;
    await flooder.page.close().catch(() => {});
    out.tabtunnel = {
      ...flood,
      flooder_connected: flooderConnected,
      victim: { rest: summary(restTunnel.samples), during: flood.probes.tabtunnel },
      direct_victim: { rest: summary(restDirect.samples), during: flood.probes.direct },
      wrong_answers: flood.wrong_answers + restTunnel.wrong + restDirect.wrong,
      daemon: { rest_rss_bytes: restRss, peak_rss_bytes: peak, after_rss_bytes: await settledRss(pid) },
    };
    delete out.tabtunnel.probes;
  } finally {
    await flooderBrowser.disconnect();
  }
  if (directFlood) {
    const browser = await puppeteer.connect({ browserWSEndpoint: h.realBrowserWsEndpoint, defaultViewport: null, protocolTimeout: limitMs });
    try {
      const flooder = await floodingPage(browser, h.pageUrl);
      const rest = await roundTrips(victim.direct, { count: restSamples });
      const flood = await duringFlood(flooder, { direct: victim.direct }, { messages, messageBytes, gapMs, limitMs });
      await flooder.page.close();
      out.direct = {
        flood_ms: flood.flood_ms,
        events: flood.events,
        all_delivered: flood.all_delivered,
        victim: { rest: summary(rest.samples), during: flood.probes.direct },
        wrong_answers: flood.wrong_answers + rest.wrong,
      };
    } finally {
      await browser.disconnect();
    }
  }
  await victim.tunnel.client.send('Target.closeTarget', { targetId: victim.targetId }).catch(() => {});
  victim.tunnel.client.close();
  victim.direct.client.close();
  return out;
}
