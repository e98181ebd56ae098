// The printed report: one table per section, with the ratios against direct CDP (and against
// the chrome.debugger floor where the targets name it).

import { fmtMiB, fmtMs, fmtRate, fmtRatio, ratio, table } from './stats.mjs';

export const progress = (line) => process.stderr.write(`==> ${line}\n`);

const ms1 = (v) => fmtMs(v, 1);
const out = (...lines) => console.log(lines.join('\n'));

function roundTripReport(r) {
  const rows = [['Runtime.evaluate 1+1', 'p50', 'p95', 'p99', 'mean', 'pipelined', 'p50/direct', 'pipelined/direct']];
  for (const [name, key] of [['direct CDP', 'direct'], ['chrome.debugger (floor)', 'floor'], ['tabtunnel', 'tabtunnel']]) {
    const p = r[key];
    rows.push([name, fmtMs(p.p50_ms), fmtMs(p.p95_ms), fmtMs(p.p99_ms), fmtMs(p.mean_ms), fmtRate(p.pipelined_cmd_s),
      fmtRatio(ratio(p.p50_ms, r.direct.p50_ms)), fmtRatio(ratio(p.pipelined_cmd_s, r.direct.pipelined_cmd_s))]);
  }
  out(
    `Round trips on the shared tab: ${r.roundtrip.sequential_calls} sequential; pipelined with ${r.roundtrip.window} in flight (median of runs)`,
    table(rows),
    `tabtunnel vs the floor: p50 ${fmtMs(r.tabtunnel.p50_ms - r.floor.p50_ms)} above it (target <= 0.4 ms), ` +
      `mean ${fmtMs(r.tabtunnel.mean_ms - r.floor.mean_ms)} above it, ` +
      `pipelined ${fmtRatio(ratio(r.tabtunnel.pipelined_cmd_s, r.floor.pipelined_cmd_s))} the floor's (target >= 0.8x)`,
    "(the floor's per-call times come from the service worker's performance.now(), coarsened to 0.1 ms; its mean and throughput are exact)",
    '',
    'Where the CPU goes: us of CPU per command, by process (client = this benchmark; tabs = the tabs\' renderers)',
    cpuTable(r),
  );
}

function cpuTable(r) {
  const kinds = ['sequential', 'pipelined'];
  const roles = new Set();
  for (const key of ['direct', 'floor', 'tabtunnel']) {
    for (const kind of kinds) {
      for (const [role, us] of Object.entries(r[key].cpu_us_per_cmd?.[kind] ?? {})) if (role !== 'total' && us >= 1) roles.add(role);
    }
  }
  const order = ['client', 'daemon', 'network', 'extension', 'browser', 'tabs'];
  const columns = [...order.filter((c) => roles.has(c)), ...[...roles].filter((c) => !order.includes(c)).sort(), 'total'];
  const rows = [['', ...columns]];
  for (const kind of kinds) {
    for (const [name, key] of [['direct CDP', 'direct'], ['floor', 'floor'], ['tabtunnel', 'tabtunnel']]) {
      const us = r[key].cpu_us_per_cmd?.[kind] ?? {};
      rows.push([`${kind}, ${name}`, ...columns.map((c) => (Number.isFinite(us[c]) ? us[c].toFixed(1) : '-'))]);
    }
  }
  return table(rows);
}

function sessionsReport(s) {
  out(`Client sessions: medians of ${s.rounds} rounds, direct and tabtunnel alternating; pages: ${s.mode}`);
  for (const client of ['chrome-devtools-mcp', 'playwright']) {
    const c = s[client];
    if (!c) continue;
    const rows = [[client, 'direct', 'tabtunnel', 'tabtunnel/direct']];
    for (const step of Object.keys(c.direct.steps_ms)) {
      const d = c.direct.steps_ms[step];
      const t = c.tabtunnel.steps_ms[step];
      rows.push([`  ${step}`, ms1(d), ms1(t), fmtRatio(ratio(t, d))]);
    }
    rows.push(['  total', ms1(c.direct.total_ms), ms1(c.tabtunnel.total_ms), fmtRatio(ratio(c.tabtunnel.total_ms, c.direct.total_ms))]);
    out(table(rows), '');
  }
  out('(target: client sessions within 1.1x of direct)');
}

function largeReport(l) {
  const rows = [['large result', 'answer', 'direct', 'floor', 'tabtunnel', 'tabtunnel/direct', 'daemon peak RSS']];
  const row = (name, x) =>
    rows.push([name, fmtMiB(x.answer_bytes), ms1(x.direct_ms), ms1(x.floor_ms), ms1(x.tabtunnel_ms),
      fmtRatio(ratio(x.tabtunnel_ms, x.direct_ms)), fmtMiB(x.daemon_peak_rss_bytes)]);
  row(`full-page screenshot ${l.screenshot.width}x${l.screenshot.height}`, l.screenshot);
  row(`evaluate, a ${fmtMiB(l.evaluate.value_bytes)} string`, l.evaluate);
  out(table(rows), `(target: within 1.3x of direct; daemon VmHWM after: ${fmtMiB(l.daemon_hwm_bytes)})`);
}

function floodReport(f) {
  const rows = [[`event flood: ${f.requests} requests`, 'to the last event', 'requestWillBeSent', 'loadingFinished', 'all events', 'all delivered']];
  for (const key of ['direct', 'tabtunnel']) {
    const x = f[key];
    rows.push([key, ms1(x.ms), x.requestWillBeSent, x.loadingFinished, x.events, x.all_delivered ? 'yes' : 'NO']);
  }
  out(table(rows), `(tabtunnel/direct: ${fmtRatio(ratio(f.tabtunnel.ms, f.direct.ms))}; daemon CPU ${ms1(f.tabtunnel.daemon_cpu_ms)}, peak RSS ${fmtMiB(f.tabtunnel.daemon_peak_rss_bytes)})`);
}

function agentsReport(a) {
  const rows = [[`${a.agents} agents x ${a.commands_each} commands at once`, 'throughput', 'wall', 'daemon CPU', 'daemon peak RSS']];
  for (const key of ['direct', 'tabtunnel']) {
    const x = a[key];
    rows.push([key, fmtRate(x.cmd_s), ms1(x.wall_ms), key === 'tabtunnel' ? ms1(x.daemon_cpu_ms) : '', key === 'tabtunnel' ? fmtMiB(x.daemon_peak_rss_bytes) : '']);
  }
  const perCommandUs = (a.tabtunnel.daemon_cpu_ms * 1000) / (a.agents * a.commands_each);
  out(
    `Agents: ${a.mode}`,
    table(rows),
    `(tabtunnel/direct throughput ${fmtRatio(ratio(a.tabtunnel.cmd_s, a.direct.cmd_s))}; daemon CPU ${perCommandUs.toFixed(1)} us per command; target: daemon under 30 MiB)`,
  );
}

function gesturesReport(g) {
  const rows = [['input (p50, sequential)', 'direct', 'tabtunnel', 'tabtunnel - direct']];
  for (const [name, key] of [['mouse press (inspected)', 'press'], ['mouse release (never inspected)', 'release'], ['a key (never inspected)', 'key'], ['Enter (inspected)', 'enter']]) {
    rows.push([name, fmtMs(g.direct[key].p50_ms), fmtMs(g.tabtunnel[key].p50_ms), fmtMs(g.tabtunnel[key].p50_ms - g.direct[key].p50_ms)]);
  }
  out(
    `The gesture guard on harmless gestures: ${g.gestures} of each on the shared tab, interleaved`,
    table(rows),
    `what the guard adds: ${fmtMs(g.press_cost_p50_ms)} per press, ${fmtMs(g.enter_cost_p50_ms)} per Enter ` +
      '(p50 over a release or a plain key through tabtunnel, less the same difference direct)',
  );
}

function restartReport(r) {
  out(
    `Daemon killed and started again (same port and config, browser running): listening after ${ms1(r.daemon.listening_ms)}, ` +
      `extension back with the shared tab after ${ms1(r.daemon.tab_listed_ms)}, first answer after ${ms1(r.daemon.first_answer_ms)} ` +
      '(the extension redials after 0.1 s, then 0.2, 0.4, 0.8 s and on, doubling)',
    `Service worker stopped: the daemon noticed after ${ms1(r.worker.stop_noticed_ms)}; woken by ${r.worker.woken_by} ` +
      "(left alone, the extension's alarm wakes it within 30 s): " +
      `shared tab back ${ms1(r.worker.tab_listed_ms)} and first answer ${ms1(r.worker.first_answer_ms)} after the wake (target: within 1 s)`,
  );
}

export function printReport(r) {
  const m = r.machine;
  out(
    '',
    `tabtunnel benchmark${r.quick ? ' (quick: tiny counts, a smoke run)' : ''}: ${m.chromium}, Node ${m.node}, ` +
      `${m.nproc} CPUs (${m.cpu}), ${m.memory_gib.toFixed(0)} GiB; load average ${m.loadavg_1m.toFixed(1)} at the start, ${m.loadavg_1m_end.toFixed(1)} at the end`,
    `WASM module ${fmtMiB(r.wasm_bytes)} (${r.wasm_bytes} bytes); daemon idle: ${fmtMiB(r.daemon_idle.rss_bytes)} resident`,
    '',
  );
  const sections = [
    [r.direct && r.roundtrip, () => roundTripReport(r)],
    [r.sessions, () => sessionsReport(r.sessions)],
    [r.large, () => largeReport(r.large)],
    [r.flood, () => floodReport(r.flood)],
    [r.agents, () => agentsReport(r.agents)],
    [r.gestures, () => gesturesReport(r.gestures)],
    [r.restart, () => restartReport(r.restart)],
  ];
  for (const [present, print] of sections) {
    if (!present) continue;
    print();
    out('');
  }
}
