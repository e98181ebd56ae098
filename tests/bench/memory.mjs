// tabtunnel memory under load: the daemon's resident memory (VmRSS, and its peak VmHWM, from
// /proc) at rest, then through three loads, each followed by a rest:
//   - 500 client sockets at once, each attaching to the shared tab, then all closed;
//   - a flood of 32 KB console messages while two clients have stopped reading;
//   - one command with a 100 MB answer, and one with 100 MB of params.
// Figures only: nothing here asserts a time or a size (the e2e tests assert the bounds).
//
//   node tests/bench/memory.mjs            (after ./dev test or ./dev bench has built everything)

import fs from 'node:fs';

import { RawCdp, sleep, startHarness } from '../e2e/harness.mjs';

const MiB = 1024;
/** How long memory may take to go back down after a load. */
const REST_MS = 10_000;

function status(pid) {
  const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(text)[1]);
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

/** Starts a new peak (VmHWM) measurement (Linux: write 5 to clear_refs). */
function resetPeak(pid) {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** The lowest resident memory over a rest after a load. */
async function rest(pid) {
  let lowest = Infinity;
  for (let waited = 0; waited < REST_MS; waited += 250) {
    lowest = Math.min(lowest, status(pid).rss);
    await sleep(250);
  }
  return lowest;
}

async function pageClient(h, id = 1) {
  const cdp = await RawCdp.open(h.wsEndpoint);
  const attached = cdp.next((m) => m.method === 'Target.attachedToTarget', 'the shared page attaching', 30_000);
  cdp.sendRaw(JSON.stringify({ id, method: 'Target.setAutoAttach', params: { autoAttach: true, flatten: true, waitForDebuggerOnStart: false } }));
  return { cdp, session: (await attached).params.sessionId };
}

/** A command with a generous wait: 100 MB takes a while through JSON, the worker and Chrome. */
function call(c, id, method, params) {
  c.cdp.sendRaw(JSON.stringify({ id, method, params, sessionId: c.session }));
  return c.cdp.next((m) => m.id === id, `the answer to ${method} (id ${id})`, 120_000);
}

async function manySockets(h) {
  const clients = [];
  for (let i = 0; i < 500; i += 1) clients.push(pageClient(h));
  const open = await Promise.all(clients);
  for (const c of open) c.cdp.close();
}

async function hundredMegabytes(h) {
  const c = await pageClient(h);
  try {
    const big = await call(c, 2, 'Runtime.evaluate', { expression: "'x'.repeat(100 * 1000 * 1000)", returnByValue: true });
    if (big.result?.result?.value?.length !== 100_000_000) throw new Error(`unexpected answer: ${JSON.stringify(big).slice(0, 200)}`);
    const literal = `'${'y'.repeat(100 * 1000 * 1000)}'.length`;
    const sent = await call(c, 3, 'Runtime.evaluate', { expression: literal, returnByValue: true });
    if (sent.result?.result?.value !== 100_000_000) throw new Error(`unexpected answer: ${JSON.stringify(sent).slice(0, 200)}`);
  } finally {
    c.cdp.close();
  }
}

async function floodWithPausedReaders(h) {
  const clients = [await pageClient(h), await pageClient(h), await pageClient(h)];
  for (const [i, c] of clients.entries()) await call(c, 10 + i, 'Runtime.enable', {});
  const [active, ...paused] = clients;
  for (const c of paused) c.cdp.ws._socket.pause();
  const events = active.cdp.discard((m) => m.method === 'Runtime.consoleAPICalled');
  const messages = 4000;
  const flood = `(() => { const s = 'x'.repeat(32768); for (let i = 0; i < ${messages}; i++) console.log(s); })()`;
  await call(active, 20, 'Runtime.evaluate', { expression: flood });
  const deadline = Date.now() + 120_000;
  while (events.count < messages && Date.now() < deadline) await sleep(50);
  for (const c of clients) c.cdp.close();
}

const h = await startHarness({ name: 'memory' });
try {
  const pid = h.daemon.pid;
  await sleep(2000);
  const rows = [['at rest', status(pid).rss, status(pid).peak, null]];
  for (const [name, load] of [
    ['500 sockets', manySockets],
    ['flood, 2 paused readers', floodWithPausedReaders],
    ['100 MB both ways', hundredMegabytes],
  ]) {
    const peakReset = resetPeak(pid);
    const before = status(pid).rss;
    await load(h);
    const peak = peakReset ? status(pid).peak : null;
    rows.push([name, before, peak, await rest(pid)]);
  }
  const mib = (kib) => (kib === null ? '-' : `${(kib / MiB).toFixed(1)} MiB`);
  console.log(`daemon resident memory (${process.env.TABTUNNEL_BIN ?? 'default binary'})`);
  console.log('');
  console.log('load                        before       peak         after a rest');
  for (const [name, before, peak, after] of rows) {
    console.log(`${name.padEnd(26)}  ${mib(before).padEnd(11)}  ${mib(peak).padEnd(11)}  ${mib(after)}`);
  }
} catch (err) {
  console.error(`${err.stack}\n${h.detail()}`);
  process.exitCode = 1;
} finally {
  await h.close();
}
