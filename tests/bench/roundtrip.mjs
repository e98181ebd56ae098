// Sequential round trips and pipelined throughput of `Runtime.evaluate 1+1` on the shared tab:
// direct CDP, the chrome.debugger floor, the bare relays (one hop through the worker with
// nothing of ours: bare-relay.mjs) and tabtunnel, in interleaved blocks so that drift (other
// work on the machine, a warming JIT) spreads over all of them alike.

import { openBareRelay } from './bare-relay.mjs';
import { progress } from './report.mjs';
import { latencySummary, median } from './stats.mjs';
import { EVALUATE_1_PLUS_1, openDirect, openTunnel } from './paths.mjs';
import { chromiumProcesses, cpuSnapshot } from './proc.mjs';

const WARM_UP = 50;

async function sequential(client, sessionId, count) {
  const samples = new Array(count);
  for (let i = 0; i < count; i += 1) {
    const t0 = performance.now();
    const { result } = await client.send('Runtime.evaluate', EVALUATE_1_PLUS_1, sessionId);
    samples[i] = performance.now() - t0;
    if (result?.value !== 2) throw new Error(`Runtime.evaluate 1+1 answered ${JSON.stringify(result)}`);
  }
  return samples;
}

/** `total` commands with a window of `window` outstanding; commands per second. */
function pipelined(client, sessionId, total, window) {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = 0;
    const t0 = performance.now();
    const sendOne = () => {
      sent += 1;
      client.send('Runtime.evaluate', EVALUATE_1_PLUS_1, sessionId).then(() => {
        answered += 1;
        if (answered === total) resolve(total / ((performance.now() - t0) / 1000));
        else if (sent < total) sendOne();
      }, reject);
    };
    for (let i = 0; i < Math.min(window, total); i += 1) sendOne();
  });
}

// The floor, inside the service worker: the same loops around chrome.debugger.sendCommand.
// (performance.now() there is coarsened to 0.1 ms; the mean and the throughput are not.)
function floorSequential(h, count) {
  return h.sw(
    async (tabId, n, params) => {
      const samples = [];
      for (let i = 0; i < n; i += 1) {
        const t0 = performance.now();
        const r = await chrome.debugger.sendCommand({ tabId }, 'Runtime.evaluate', params);
        samples.push(performance.now() - t0);
        if (r?.result?.value !== 2) throw new Error(`floor: ${JSON.stringify(r)}`);
      }
      return samples;
    },
    h.tabId,
    count,
    EVALUATE_1_PLUS_1,
  );
}

function floorPipelined(h, total, window) {
  return h.sw(
    (tabId, n, w, params) =>
      new Promise((resolve, reject) => {
        let sent = 0;
        let answered = 0;
        const t0 = performance.now();
        const sendOne = () => {
          sent += 1;
          chrome.debugger.sendCommand({ tabId }, 'Runtime.evaluate', params).then(() => {
            answered += 1;
            if (answered === n) resolve(n / ((performance.now() - t0) / 1000));
            else if (sent < n) sendOne();
          }, reject);
        };
        for (let i = 0; i < Math.min(w, n); i += 1) sendOne();
      }),
    h.tabId,
    total,
    window,
    EVALUATE_1_PLUS_1,
  );
}

/** CPU per command by process, summed over every run of one kind on one path. */
class CpuAccount {
  /** `daemonPid`: what the `daemon` column counts (the daemon, or a bare relay's process). */
  constructor(h, daemonPid = h.daemon.pid) {
    this.daemonPid = daemonPid;
    this.processes = chromiumProcesses(h.chromiumPid);
    this.ms = {};
    this.commands = {};
  }

  async count(kind, commands, fn) {
    const before = cpuSnapshot(this.daemonPid, this.processes);
    const value = await fn();
    const after = cpuSnapshot(this.daemonPid, this.processes);
    const ms = (this.ms[kind] ??= {});
    for (const role of Object.keys(after)) ms[role] = (ms[role] ?? 0) + after[role] - (before[role] ?? 0);
    this.commands[kind] = (this.commands[kind] ?? 0) + commands;
    return value;
  }

  /** `{ kind: { role: us per command, ..., total } }` */
  perCommandUs() {
    return Object.fromEntries(
      Object.entries(this.ms).map(([kind, ms]) => {
        const us = Object.fromEntries(Object.entries(ms).map(([role, v]) => [role, (v * 1000) / this.commands[kind]]));
        us.total = Object.values(us).reduce((a, b) => a + b, 0);
        return [kind, us];
      }),
    );
  }
}

/** The bare relays that could be opened (`bare_ws`, `bare_native`), by path name. */
async function openBareRelays(h) {
  const relays = {};
  for (const mode of ['ws', 'native']) {
    try {
      relays[`bare_${mode}`] = await openBareRelay(h, mode);
    } catch (err) {
      progress(`no bare relay over ${mode}: ${err.message}`);
    }
  }
  return relays;
}

/**
 * `{ direct, floor, bare_ws, bare_native, tabtunnel }`, each `{ p50_ms, p95_ms, p99_ms,
 * mean_ms, samples, pipelined_cmd_s, cpu_us_per_cmd }` (a bare relay that could not be opened
 * is left out). `blocks` interleaves the sequential calls; `pipelinedRuns` runs of
 * `pipelinedTotal` commands each, the median kept. `cpu_us_per_cmd` is where the CPU went, by
 * process, sequential and pipelined.
 */
export async function roundTrips(h, pageTargetId, { sequentialCalls, blocks, pipelinedTotal, pipelinedRuns, window }) {
  const direct = await openDirect(h, pageTargetId);
  const tunnel = await openTunnel(h, pageTargetId);
  const bare = await openBareRelays(h);
  const over = ({ client, sessionId }) => ({
    sequential: (n) => sequential(client, sessionId, n),
    pipelined: (n) => pipelined(client, sessionId, n, window),
  });
  try {
    const paths = {
      direct: over(direct),
      floor: {
        sequential: (n) => floorSequential(h, n),
        pipelined: (n) => floorPipelined(h, n, window),
      },
      ...Object.fromEntries(Object.entries(bare).map(([name, relay]) => [name, over(relay)])),
      tabtunnel: over(tunnel),
    };
    const samples = Object.fromEntries(Object.keys(paths).map((name) => [name, []]));
    const rates = Object.fromEntries(Object.keys(paths).map((name) => [name, []]));
    const cpu = Object.fromEntries(Object.keys(paths).map((name) => [name, new CpuAccount(h, bare[name]?.pid)]));
    for (const path of Object.values(paths)) await path.sequential(WARM_UP);
    const perBlock = Math.ceil(sequentialCalls / blocks);
    for (let b = 0; b < blocks; b += 1) {
      for (const [name, path] of Object.entries(paths)) {
        samples[name].push(...(await cpu[name].count('sequential', perBlock, () => path.sequential(perBlock))));
      }
    }
    for (let r = 0; r < pipelinedRuns; r += 1) {
      for (const [name, path] of Object.entries(paths)) {
        rates[name].push(await cpu[name].count('pipelined', pipelinedTotal, () => path.pipelined(pipelinedTotal)));
      }
    }
    return Object.fromEntries(
      Object.keys(paths).map((name) => [
        name,
        {
          ...latencySummary(samples[name]),
          pipelined_cmd_s: median(rates[name]),
          pipelined_runs_cmd_s: rates[name],
          cpu_us_per_cmd: cpu[name].perCommandUs(),
        },
      ]),
    );
  } finally {
    direct.client.close();
    tunnel.client.close();
    for (const relay of Object.values(bare)) await relay.close();
  }
}
