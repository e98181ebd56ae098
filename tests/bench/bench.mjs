// tabtunnel benchmark: what users do, through tabtunnel and over Chromium's own debugging port,
// on the same browser in the same run, with the chrome.debugger floor where it applies.
// Figures only: nothing here asserts a time.
//
//   node tests/bench/bench.mjs [--quick] [--json] [--only=SECTION,...] [--rounds=N]
//                              [--sessions=auto|new-page|shared-tab]
//
//   --quick     tiny counts: a smoke run of every section (the e2e suite runs it)
//   --json      also print every figure as one JSON object on the last line
//   --only      sections: roundtrip, agents, flood, fairness, sessions, large, gestures, restart (default: all)
//   --rounds    client session rounds per path (default 5; alternating direct and tabtunnel)
//   --sessions  where client sessions and agents get their tabs: new pages (Target.createTarget
//               through an agent endpoint) or, as a fallback, the one shared test tab; `auto`
//               picks new pages when tabtunnel can open them
//
// ./dev bench runs it after building.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { REPO_ROOT, startHarness } from '../e2e/harness.mjs';
import { agentsAtOnce } from './agents.mjs';
import { floodFairness } from './fairness.mjs';
import { browserShare } from './share.mjs';
import { eventFlood } from './flood.mjs';
import { gestureCost } from './gestures.mjs';
import { largeResults } from './large.mjs';
import { daemonRestart, workerRestart } from './restart.mjs';
import { BENCH_PAGES } from './pages.mjs';
import { canOpenPages } from './paths.mjs';
import { cpuMs, hwmBytes, rssBytes } from './proc.mjs';
import { printReport, progress } from './report.mjs';
import { roundTrips } from './roundtrip.mjs';
import { clientSessions } from './sessions.mjs';
import { rounded } from './stats.mjs';

const SECTIONS = ['roundtrip', 'agents', 'flood', 'fairness', 'sessions', 'large', 'gestures', 'restart'];

const FULL = {
  roundtrip: { sequentialCalls: 2000, blocks: 4, pipelinedTotal: 3000, pipelinedRuns: 3, window: 32 },
  agents: { agents: 16, commandsEach: 500 },
  flood: { requests: 2000 },
  fairness: { messages: 200_000, directFlood: true },
  share: { samples: 5, gapMs: 20, evaluates: 10_000, large: 200, largeBytes: 1 << 20 },
  sessions: { rounds: 5 },
  large: { screenshot: { width: 1024, height: 3000 }, evaluateBytes: 64 << 20, repeats: 3 },
  gestures: { gestures: 200 },
};
const QUICK = {
  roundtrip: { sequentialCalls: 60, blocks: 2, pipelinedTotal: 200, pipelinedRuns: 1, window: 32 },
  agents: { agents: 4, commandsEach: 20 },
  flood: { requests: 50 },
  fairness: { messages: 2000, restSamples: 20, directFlood: true },
  share: { samples: 3, gapMs: 0, evaluates: 500, large: 10, largeBytes: 1 << 20 },
  sessions: { rounds: 1 },
  large: { screenshot: { width: 256, height: 256 }, evaluateBytes: 1 << 20, repeats: 1 },
  gestures: { gestures: 25 },
};

function options() {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      only: { type: 'string' },
      rounds: { type: 'string' },
      sessions: { type: 'string', default: 'auto' },
    },
  });
  const only = values.only ? values.only.split(',').map((s) => s.trim()) : SECTIONS;
  for (const s of only) if (!SECTIONS.includes(s)) throw new Error(`unknown section ${s}; sections: ${SECTIONS.join(', ')}`);
  if (!['auto', 'new-page', 'shared-tab'].includes(values.sessions)) throw new Error(`--sessions=${values.sessions}?`);
  const sizes = structuredClone(values.quick ? QUICK : FULL);
  if (values.rounds) sizes.sessions.rounds = Number(values.rounds);
  return { ...values, only, sizes };
}

function wasmBytes() {
  const pkg = path.join(process.env.TABTUNNEL_EXTENSION_DIR || path.join(REPO_ROOT, 'extension'), 'pkg');
  return fs
    .readdirSync(pkg)
    .filter((f) => f.endsWith('.wasm'))
    .reduce((sum, f) => sum + fs.statSync(path.join(pkg, f)).size, 0);
}

function machine(h) {
  return {
    nproc: os.availableParallelism(),
    memory_gib: os.totalmem() / 2 ** 30,
    cpu: os.cpus()[0]?.model,
    node: process.version,
    chromium: h.browserVersion,
    // Other work on the machine shows up in every figure: the load when the run started.
    loadavg_1m: os.loadavg()[0],
  };
}

const opts = options();
// Nothing here waits unbounded, but should a section hang, the run still ends (and the harness's
// exit handler still kills what it started).
const RUN_LIMIT_MS = opts.quick ? 5 * 60_000 : 30 * 60_000;
let section = 'start-up';
setTimeout(() => {
  progress(`timed out after ${RUN_LIMIT_MS / 60_000} min in section ${section}`);
  process.exit(1);
}, RUN_LIMIT_MS).unref();
// Every client session through tabtunnel is a new agent (20 in a run, 16 more in `agents`),
// each kept for its grace period after it goes: more than the default 32 at once.
const h = await startHarness({ name: 'bench', extraPages: BENCH_PAGES, daemonArgs: ['--max-agents', '256'] });
// The extension worker's last lines, said with the daemon's when a section fails: a command
// that never got its answer (issue 30's 16 agents) is found in one of the two.
const workerLines = [];
h.worker.on('console', (m) => {
  workerLines.push(`${new Date().toISOString()} ${m.type()} ${m.text()}`);
  if (workerLines.length > 300) workerLines.shift();
});
const results = {};
try {
  h.browserVersion = await h.browser.version();
  const pageTargetId = h.testPage.target()._targetId;
  results.machine = machine(h);
  results.quick = opts.quick;
  results.wasm_bytes = wasmBytes();
  results.daemon_idle = { rss_bytes: rssBytes(h.daemon.pid), hwm_bytes: hwmBytes(h.daemon.pid), cpu_ms: cpuMs(h.daemon.pid) };

  const wantsPages = opts.only.some((s) => s === 'sessions' || s === 'agents');
  const openPages = opts.sessions === 'auto' ? wantsPages && (await canOpenPages(h)) : opts.sessions === 'new-page';
  results.tabs = openPages ? 'new-page' : 'shared-tab';
  if (wantsPages) {
    const fallback = opts.sessions === 'auto' ? 'fallback: tabtunnel cannot open pages' : 'as asked';
    progress(`clients and agents use ${openPages ? 'new pages (Target.createTarget)' : `the shared test tab (${fallback})`}`);
  }

  const run = async (name, fn) => {
    if (!opts.only.includes(name)) return;
    progress(name);
    section = name;
    results[name] = await fn();
  };
  await run('roundtrip', async () => {
    const r = await roundTrips(h, pageTargetId, opts.sizes.roundtrip);
    Object.assign(results, r); // direct, floor, bare_ws, bare_native, tabtunnel at the top level
    return { sequential_calls: r.direct.samples, window: opts.sizes.roundtrip.window };
  });
  await run('agents', () => agentsAtOnce(h, pageTargetId, { ...opts.sizes.agents, openPages }));
  await run('flood', () => eventFlood(h, pageTargetId, opts.sizes.flood));
  await run('fairness', async () => ({
    share: await browserShare(h, opts.sizes.share),
    ...(await floodFairness(h, opts.sizes.fairness)),
  }));
  await run('sessions', () => clientSessions(h, { ...opts.sizes.sessions, openPages }));
  await run('large', () => largeResults(h, pageTargetId, opts.sizes.large));
  await run('gestures', () => gestureCost(h, pageTargetId, opts.sizes.gestures));
  await run('restart', async () => ({
    daemon: await daemonRestart(h, pageTargetId),
    worker: await workerRestart(h, pageTargetId),
  }));
} catch (e) {
  progress(`section ${section} failed: ${e.message}`);
  process.stderr.write(`--- extension worker (last ${workerLines.length} lines) ---\n${workerLines.join('\n')}\n`);
  process.stderr.write(`${h.detail()}\n`);
  // A tab that stays loading (a request paused for nobody) holds its commands too.
  if (e.tabsBeforeClosing) process.stderr.write(`--- tabs when it failed ---\n${e.tabsBeforeClosing.join('\n')}\n`);
  process.stderr.write(`--- tabs now ---\n${(await h.tabsNow()).join('\n')}\n`);
  throw e;
} finally {
  // (Kept for runs that passed too, when asked: what the worker said on the way.)
  if (process.env.TT_BENCH_WORKER_LOG) fs.appendFileSync(process.env.TT_BENCH_WORKER_LOG, `${workerLines.join('\n')}\n`);
  await h.close();
}
results.machine.loadavg_1m_end = os.loadavg()[0];
printReport(results);
if (opts.json) console.log(JSON.stringify(rounded(results)));
