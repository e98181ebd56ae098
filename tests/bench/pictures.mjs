// The cost of the side panel's live pictures (issue 29): two agents working in pages of their
// own, one client timing sequential `Runtime.evaluate 1+1` round trips on the first agent's page
// through its agent endpoint, in interleaved blocks with the panel open (pictures taken) and
// closed (none); Chromium's and the daemon's CPU per block; each picture's capture time and size.
// Figures only: nothing here asserts a time.
//
//   node tests/bench/pictures.mjs [--blocks=N] [--calls=N] [--headful]
//
// Run alone, after ./dev test or ./dev bench built everything.

import { parseArgs } from 'node:util';

import { connectAgent, sleep, startHarness } from '../e2e/harness.mjs';
import { EVALUATE_1_PLUS_1, agentWsEndpoint, openTunnel } from './paths.mjs';
import { chromiumProcesses, cpuSnapshot } from './proc.mjs';
import { latencySummary, median, percentile } from './stats.mjs';

const { values } = parseArgs({
  options: {
    blocks: { type: 'string', default: '8' },
    calls: { type: 'string', default: '500' },
    headful: { type: 'boolean', default: false },
  },
});
const BLOCKS = Number(values.blocks);
const CALLS = Number(values.calls);

const h = await startHarness({ name: 'pictures-bench', headful: values.headful });
const agents = [];
let working = true;
try {
  // Every Page.captureScreenshot of ours (`optimizeForSpeed`), timed in the worker.
  await h.sw(() => {
    globalThis.captures = [];
    const original = chrome.debugger.sendCommand;
    chrome.debugger.sendCommand = function (target, method, params, ...rest) {
      const result = original.call(this, target, method, params, ...rest);
      if (method === 'Page.captureScreenshot' && params?.optimizeForSpeed === true) {
        const entry = { at: performance.now() };
        captures.push(entry);
        Promise.resolve(result).then(
          (r) => { entry.ms = performance.now() - entry.at; entry.bytes = r?.data?.length; },
          () => { entry.failed = true; },
        );
      }
      return result;
    };
  });

  // Two agents at work: each changes its page and reads it back, ten times a second.
  const loops = [];
  for (const name of ['bench-a', 'bench-b']) {
    const browser = await connectAgent(h, name);
    const page = await browser.newPage();
    await page.goto(`${h.pageServerUrl}/form.html`);
    agents.push({ name, browser, page });
    loops.push((async () => {
      for (let i = 0; working; i++) {
        await page.evaluate((n) => { document.title = `step ${n}`; document.body.style.background = `hsl(${(n * 37) % 360} 60% 70%)`; return document.body.innerText.length; }, i).catch(() => {});
        await sleep(100);
      }
    })());
  }
  const targetId = agents[0].page.target()._targetId;
  const { client, sessionId } = await openTunnel(h, targetId, {}, await agentWsEndpoint(h, 'bench-a'));
  for (let i = 0; i < 50; i++) await client.send('Runtime.evaluate', EVALUATE_1_PLUS_1, sessionId);

  const processes = chromiumProcesses(h.chromiumPid);
  const samples = { open: [], closed: [] };
  const cpu = { open: {}, closed: {} };
  const capturesIn = { open: 0, closed: 0 };
  let panelOpen = true; // the harness opened it to share its test page
  for (let block = 0; block < BLOCKS; block++) {
    // open, closed, closed, open, ...: each state first as often as second.
    const want = [true, false, false, true][block % 4];
    if (want && !panelOpen) await h.openPanel();
    if (!want && panelOpen) await h.panel.close();
    panelOpen = want;
    await sleep(1500);
    const state = want ? 'open' : 'closed';
    const capturesBefore = await h.sw(() => captures.length);
    const before = cpuSnapshot(h.daemon.pid, processes);
    for (let i = 0; i < CALLS; i++) {
      const t0 = performance.now();
      await client.send('Runtime.evaluate', EVALUATE_1_PLUS_1, sessionId);
      samples[state].push(performance.now() - t0);
    }
    const after = cpuSnapshot(h.daemon.pid, processes);
    for (const role of Object.keys(after)) cpu[state][role] = (cpu[state][role] ?? 0) + after[role] - (before[role] ?? 0);
    capturesIn[state] += (await h.sw(() => captures.length)) - capturesBefore;
    process.stderr.write(`block ${block + 1}/${BLOCKS}: panel ${state}, median ${median(samples[state].slice(-CALLS)).toFixed(3)} ms\n`);
  }
  client.close();

  const taken = (await h.sw(() => captures)).filter((c) => c.ms !== undefined);
  const ms = taken.map((c) => c.ms).sort((a, b) => a - b);
  const bytes = taken.map((c) => c.bytes).sort((a, b) => a - b);
  const round = (v) => Math.round(v * 1000) / 1000;
  const report = {
    calls_per_state: CALLS * (BLOCKS / 2),
    round_trip_ms: {
      open: latencySummary(samples.open),
      closed: latencySummary(samples.closed),
    },
    cpu_ms_per_1000_calls: Object.fromEntries(
      ['open', 'closed'].map((s) => [s, Object.fromEntries(Object.entries(cpu[s]).map(([role, v]) => [role, round((v / samples[s].length) * 1000)]))]),
    ),
    captures_during_blocks: capturesIn,
    capture: {
      count: taken.length,
      failed: (await h.sw(() => captures.filter((c) => c.failed).length)),
      ms_p50: round(median(ms)),
      ms_p95: round(percentile(ms, 95)),
      base64_bytes_p50: median(bytes),
    },
  };
  console.log(JSON.stringify(report, null, 2));
} finally {
  working = false;
  for (const a of agents) await a.browser.disconnect().catch(() => {});
  await h.close();
}
