// What the benchmark reads from /proc: a process's resident memory (sampled every few ms in a
// worker thread, so a main thread busy parsing a 64 MiB answer does not miss the peak), its
// peak (VmHWM) and its CPU time, and Chromium's processes by role.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

function statusField(pid, field) {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Resident memory now, in bytes. */
export const rssBytes = (pid) => statusField(pid, 'VmRSS');
/** Peak resident memory since the process started, in bytes. */
export const hwmBytes = (pid) => statusField(pid, 'VmHWM');

/**
 * CPU time the process has used, in ms: the sum of its threads' schedstat (ns), or utime +
 * stime (in clock ticks, 10 ms) where schedstat is missing.
 */
export function cpuMs(pid) {
  try {
    let ns = 0;
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    }
    return ns / 1e6;
  } catch {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesized command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  }
}

const SAMPLER = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { pid, intervalMs, stop } = workerData;
const flag = new Int32Array(stop);
let peak = 0, samples = 0;
while (Atomics.load(flag, 0) === 0) {
  try {
    const m = /VmRSS:\\s+(\\d+) kB/.exec(fs.readFileSync('/proc/' + pid + '/status', 'utf8'));
    if (m) { peak = Math.max(peak, Number(m[1]) * 1024); samples += 1; }
  } catch { break; }
  Atomics.wait(flag, 0, 0, intervalMs);
}
parentPort.postMessage({ peak, samples });
`;

/**
 * Samples `pid`'s VmRSS every `intervalMs` until `stop()`, which resolves with
 * `{ peakBytes, samples }`.
 */
export async function sampleRss(pid, intervalMs = 2) {
  const stop = new SharedArrayBuffer(4);
  const worker = new Worker(SAMPLER, { eval: true, workerData: { pid, intervalMs, stop } });
  const done = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await new Promise((resolve) => worker.once('online', resolve));
  return {
    async stop() {
      Atomics.store(new Int32Array(stop), 0, 1);
      Atomics.notify(new Int32Array(stop), 0);
      const { peak, samples } = await done;
      await worker.terminate();
      return { peakBytes: peak, samples };
    },
  };
}

/** Runs `fn` while sampling `pid`: `{ value, ms, cpuMs, peakRssBytes }`. */
export async function measured(pid, fn) {
  const sampler = await sampleRss(pid);
  const cpu0 = cpuMs(pid);
  const t0 = performance.now();
  try {
    const value = await fn();
    const ms = performance.now() - t0;
    const cpu = cpuMs(pid) - cpu0;
    return { value, ms, cpuMs: cpu, peakRssBytes: (await sampler.stop()).peakBytes };
  } catch (err) {
    await sampler.stop();
    throw err;
  }
}

/** Chromium's processes under `rootPid`, each with its role (browser, extension, tabs, gpu-process, network, ...). */
export function chromiumProcesses(rootPid) {
  const parents = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const inTree = (pid) => {
    for (let p = pid; p > 1; p = parents.get(p)) if (p === rootPid) return true;
    return false;
  };
  const out = [];
  for (const pid of parents.keys()) {
    if (!inTree(pid)) continue;
    let cmdline;
    try {
      // Chromium rewrites its children's argv into one string (setproctitle): split on both.
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/);
    } catch {
      continue;
    }
    const type = cmdline.find((a) => a.startsWith('--type='))?.slice(7);
    let role = type ?? 'browser';
    if (type === 'renderer') role = cmdline.includes('--extension-process') ? 'extension' : 'tabs';
    if (type === 'utility') role = cmdline.find((a) => a.startsWith('--utility-sub-type='))?.slice(19).split('.')[0] ?? 'utility';
    out.push({ pid, role });
  }
  return out;
}

/**
 * CPU time so far (ms) of the daemon, of this process (the benchmark's clients) and of
 * Chromium's `processes` summed by role. Two snapshots around some commands tell where their
 * CPU went.
 */
export function cpuSnapshot(daemonPid, processes) {
  const self = process.cpuUsage();
  const out = { daemon: cpuMs(daemonPid), client: (self.user + self.system) / 1000 };
  for (const { pid, role } of processes) {
    try {
      out[role] = (out[role] ?? 0) + cpuMs(pid);
    } catch {
      /* gone */
    }
  }
  return out;
}
