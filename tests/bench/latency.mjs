// tabtunnel benchmark: the same commands on the same tab of the same browser, in one run,
// three ways: direct CDP (the browser's own debugging port), the chrome.debugger floor (the
// extension calling chrome.debugger.sendCommand itself), and through tabtunnel. Prints
// latency percentiles, pipelined throughput, the daemon's memory, and the ratios.
// Figures only: nothing here asserts a time.
//
//   node tests/bench/latency.mjs [rounds]      (./dev bench runs it after building)

import fs from 'node:fs';

import { EXTENSION_ID, RawCdp, startHarness } from '../e2e/harness.mjs';

const ROUNDS = Number(process.argv[2] ?? 500);
const PIPELINED = 1000;
const EVALUATE = { expression: '1 + 1', returnByValue: true };

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99) };
}

/** Sequential round trips, then a pipelined burst, over a raw CDP socket and session. */
async function measure(cdp, sessionId) {
  let id = 1_000_000;
  for (let i = 0; i < 20; i += 1) await cdp.send(id++, 'Runtime.evaluate', EVALUATE, sessionId); // warm-up
  const samples = [];
  for (let i = 0; i < ROUNDS; i += 1) {
    const t0 = process.hrtime.bigint();
    const reply = await cdp.send(id++, 'Runtime.evaluate', EVALUATE, sessionId);
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (reply.result?.result?.value !== 2) throw new Error(`unexpected reply ${JSON.stringify(reply)}`);
  }
  const t0 = process.hrtime.bigint();
  const replies = [];
  for (let i = 0; i < PIPELINED; i += 1) {
    const msgId = id++;
    replies.push(cdp.next((m) => m.id === msgId, `pipelined reply ${msgId}`, 60_000));
    cdp.sendRaw(JSON.stringify({ id: msgId, method: 'Runtime.evaluate', params: EVALUATE, sessionId }));
  }
  await Promise.all(replies);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { ...summary(samples), throughput: PIPELINED / seconds };
}

/** The floor: chrome.debugger.sendCommand round trips timed inside the extension. */
async function measureFloor(h) {
  const worker = await (await h.browser.waitForTarget((t) => t.type() === 'service_worker' && t.url().includes(EXTENSION_ID))).worker();
  const samples = await worker.evaluate(
    async (tabId, rounds, params) => {
      const target = { tabId };
      for (let i = 0; i < 20; i += 1) await chrome.debugger.sendCommand(target, 'Runtime.evaluate', params);
      const out = [];
      for (let i = 0; i < rounds; i += 1) {
        const t0 = performance.now();
        await chrome.debugger.sendCommand(target, 'Runtime.evaluate', params);
        out.push(performance.now() - t0);
      }
      return out;
    },
    h.tabId,
    ROUNDS,
    EVALUATE,
  );
  return summary(samples);
}

function rssKiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]);
}

const h = await startHarness({ name: 'bench' });
try {
  const daemonPid = h.daemon.pid;
  const rssBefore = rssKiB(daemonPid);

  const direct = await RawCdp.open(h.realBrowserWsEndpoint);
  const pageTarget = h.testPage.target()._targetId;
  const attached = await direct.send(1, 'Target.attachToTarget', { targetId: pageTarget, flatten: true });
  const directResult = await measure(direct, attached.result.sessionId);
  direct.close();

  const floor = await measureFloor(h);

  const tunnel = await RawCdp.open(h.wsEndpoint);
  await tunnel.send(1, 'Target.setAutoAttach', { autoAttach: true, flatten: true, waitForDebuggerOnStart: false });
  const attach = await tunnel.next((m) => m.method === 'Target.attachedToTarget', 'the shared page attaching');
  const tunnelResult = await measure(tunnel, attach.params.sessionId);
  const rssAfter = rssKiB(daemonPid);
  tunnel.close();

  const ms = (v) => `${v.toFixed(3)} ms`;
  const ratio = (a, b) => `${(a / b).toFixed(2)}x`;
  console.log(`Runtime.evaluate on one shared tab, ${ROUNDS} sequential round trips, ${PIPELINED} pipelined`);
  console.log('');
  console.log('                      p50          p95          p99          pipelined');
  const row = (name, r) =>
    console.log(`${name.padEnd(20)}  ${ms(r.p50).padEnd(11)}  ${ms(r.p95).padEnd(11)}  ${ms(r.p99).padEnd(11)}  ${r.throughput ? `${Math.round(r.throughput)} cmd/s` : '-'}`);
  row('direct CDP', directResult);
  row('chrome.debugger', floor);
  row('tabtunnel', tunnelResult);
  console.log('');
  console.log(`tabtunnel / direct CDP:       p50 ${ratio(tunnelResult.p50, directResult.p50)}, p95 ${ratio(tunnelResult.p95, directResult.p95)}, throughput ${ratio(tunnelResult.throughput, directResult.throughput)}`);
  console.log(`tabtunnel / chrome.debugger:  p50 ${ratio(tunnelResult.p50, floor.p50)}, p95 ${ratio(tunnelResult.p95, floor.p95)}`);
  console.log(`daemon memory (RSS): ${(rssBefore / 1024).toFixed(1)} MiB before, ${(rssAfter / 1024).toFixed(1)} MiB after`);
} finally {
  await h.close();
}
