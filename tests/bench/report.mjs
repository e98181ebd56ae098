// The printed report: one table per section, with the ratios against direct CDP (and against
// the chrome.debugger floor where the targets name it).

import { fmtMiB, fmtMs, fmtRate, fmtRatio, ratio, table } from './stats.mjs';

export const progress = (line) => process.stderr.write(`==> ${line}\n`);

const ms1 = (v) => fmtMs(v, 1);
const out = (...lines) => console.log(lines.join('\n'));

// The round-trip paths, in the order printed.
const PATHS = [
  ['direct CDP', 'direct'],
  ['chrome.debugger (floor)', 'floor'],
  ['bare relay, WebSocket', 'bare_ws'],
  ['bare relay, native messaging', 'bare_native'],
  ['tabtunnel', 'tabtunnel'],
];

function roundTripReport(r) {
  const rows = [['Runtime.evaluate 1+1', 'p50', 'p95', 'p99', 'mean', 'pipelined', 'p50/direct', 'pipelined/direct']];
  for (const [name, key] of PATHS) {
    const p = r[key];
    if (!p) continue;
    rows.push([name, fmtMs(p.p50_ms), fmtMs(p.p95_ms), fmtMs(p.p99_ms), fmtMs(p.mean_ms), fmtRate(p.pipelined_cmd_s),
      fmtRatio(ratio(p.p50_ms, r.direct.p50_ms)), fmtRatio(ratio(p.pipelined_cmd_s, r.direct.pipelined_cmd_s))]);
  }
  const bare = [['WebSocket', r.bare_ws], ['native messaging', r.bare_native]].filter(([, b]) => b);
  out(
    `Round trips on the shared tab: ${r.roundtrip.sequential_calls} sequential; pipelined with ${r.roundtrip.window} in flight (median of runs)`,
    table(rows),
    `tabtunnel vs the floor: p50 ${fmtMs(r.tabtunnel.p50_ms - r.floor.p50_ms)} above it, ` +
      `mean ${fmtMs(r.tabtunnel.mean_ms - r.floor.mean_ms)} above it, ` +
      `pipelined ${fmtRatio(ratio(r.tabtunnel.pipelined_cmd_s, r.floor.pipelined_cmd_s))} the floor's`,
    ...bare.map(
      ([name, b]) =>
        `our own cost per command (tabtunnel minus the bare relay over ${name}): p50 ${fmtMs(r.tabtunnel.p50_ms - b.p50_ms)} ` +
        `(target <= 0.05 ms), mean ${fmtMs(r.tabtunnel.mean_ms - b.mean_ms)}; pipelined ${fmtRatio(ratio(r.tabtunnel.pipelined_cmd_s, b.pipelined_cmd_s))} ` +
        "the bare relay's rate (target >= 1x)",
    ),
    "(the floor's per-call times come from the service worker's performance.now(), coarsened to 0.1 ms; its mean and throughput are exact;",
    " a bare relay is one hop through the worker with nothing of tabtunnel's: a Node relay process and a plain-JS loop in the worker, one frame per message)",
    '',
    "Where the CPU goes: us of CPU per command, by process (client = this benchmark; daemon = tabtunnel's, or the bare relay's Node process; tabs = the tabs' renderers)",
    cpuTable(r),
  );
}

function cpuTable(r) {
  const kinds = ['sequential', 'pipelined'];
  const paths = PATHS.filter(([, key]) => r[key]);
  const roles = new Set();
  for (const [, key] of paths) {
    for (const kind of kinds) {
      for (const [role, us] of Object.entries(r[key].cpu_us_per_cmd?.[kind] ?? {})) if (role !== 'total' && us >= 1) roles.add(role);
    }
  }
  const order = ['client', 'daemon', 'network', 'extension', 'browser', 'tabs'];
  const columns = [...order.filter((c) => roles.has(c)), ...[...roles].filter((c) => !order.includes(c)).sort(), 'total'];
  const rows = [['', ...columns]];
  for (const kind of kinds) {
    for (const [name, key] of paths) {
      const us = r[key].cpu_us_per_cmd?.[kind] ?? {};
      rows.push([`${kind}, ${name}`, ...columns.map((c) => (Number.isFinite(us[c]) ? us[c].toFixed(1) : '-'))]);
    }
  }
  return table(rows);
}

function sessionsReport(s) {
  const paths = s.paths ?? ['direct', 'tabtunnel'];
  const names = { direct: 'direct', tabtunnel: 'tabtunnel', tabtunnel_connected: 'connected', tabtunnel_mcp: 'tabtunnel mcp', tabtunnel_mcp_back: 'mcp, back' };
  out(
    `Client sessions: medians of ${s.rounds} rounds, the paths alternating; pages: ${s.mode}`,
    ...(paths.includes('tabtunnel_connected')
      ? ["(tabtunnel: a new agent, its first connection; connected: an agent connected a moment before, its window and a tab ready)"]
      : []),
  );
  for (const [client, c, clientPaths] of [
    ['chrome-devtools-mcp', s['chrome-devtools-mcp'], paths],
    ['playwright', s.playwright, paths],
    // An MCP agent: its first tool call new_page, a moment after its session started.
    // (mcp, back: the same agent's next session, its earlier one ended a moment before.)
    ['MCP agent (first call new_page)', s.mcp_agent, ['direct', 'tabtunnel_mcp', 'tabtunnel_mcp_back'].filter((p) => s.mcp_agent?.[p])],
  ]) {
    if (!c) continue;
    const paths = clientPaths;
    const tunnels = paths.filter((p) => p !== 'direct');
    const rows = [[client, ...paths.map((p) => names[p]), ...tunnels.map((p) => `${names[p]}/direct`)]];
    const row = (name, pick) => {
      const d = pick(c.direct);
      rows.push([name, ...paths.map((p) => ms1(pick(c[p]))), ...tunnels.map((p) => fmtRatio(ratio(pick(c[p]), d)))]);
    };
    for (const step of Object.keys(c.direct.steps_ms)) row(`  ${step}`, (x) => x.steps_ms[step]);
    row('  total', (x) => x.total_ms);
    out(table(rows), '');
  }
  out('(targets: new_page and newPage within 1.2x of direct; client sessions within 1.1x of direct; an MCP agent\'s session within 1.2x)');
}

function largeReport(l) {
  const rows = [['large result', 'answer', 'direct', 'floor', 'bare relay', 'tabtunnel', 'tabtunnel/direct', 'bare/direct', 'daemon peak RSS']];
  const row = (name, x) =>
    rows.push([name, fmtMiB(x.answer_bytes), ms1(x.direct_ms), ms1(x.floor_ms), ms1(x.bare_ms), ms1(x.tabtunnel_ms),
      fmtRatio(ratio(x.tabtunnel_ms, x.direct_ms)), fmtRatio(ratio(x.bare_ms, x.direct_ms)),
      `${fmtMiB(x.daemon_peak_rss_bytes)} (by round: ${(x.daemon_peak_rss_bytes_by_round ?? []).map(fmtMiB).join(', ')})`]);
  row(`full-page screenshot ${l.screenshot.width}x${l.screenshot.height}`, l.screenshot);
  row(`evaluate, a ${fmtMiB(l.evaluate.value_bytes)} string`, l.evaluate);
  out(
    table(rows),
    `(targets: within 1.2x of direct, the daemon's peak under 2x the answer; daemon VmHWM after: ${fmtMiB(l.daemon_hwm_bytes)}; ` +
      'bare relay: the WebSocket one of the round trips)',
  );
}

function floodReport(f) {
  const rows = [[`event flood: ${f.requests} requests`, 'to the last event', 'requestWillBeSent', 'loadingFinished', 'all events', 'all delivered']];
  for (const key of ['direct', 'tabtunnel']) {
    const x = f[key];
    rows.push([key, ms1(x.ms), x.requestWillBeSent, x.loadingFinished, x.events, x.all_delivered ? 'yes' : 'NO']);
  }
  out(table(rows), `(tabtunnel/direct: ${fmtRatio(ratio(f.tabtunnel.ms, f.direct.ms))}; daemon CPU ${ms1(f.tabtunnel.daemon_cpu_ms)}, peak RSS ${fmtMiB(f.tabtunnel.daemon_peak_rss_bytes)})`);
}

function shareReport(s) {
  const rows = [["one agent does (another agent's Runtime.evaluate 1+1 on its own tab, median)", 'tabtunnel', "Chromium's port", 'tabtunnel - direct']];
  const row = (name, t, d) => rows.push([name, fmtMs(t.p50_ms, 1), fmtMs(d.p50_ms, 1), fmtMs(t.p50_ms - d.p50_ms, 1)]);
  row('nothing', s.tabtunnel.idle, s.direct.idle);
  row(`${s.evaluates} Runtime.evaluate sent at once`, s.tabtunnel.evaluates, s.direct.evaluates);
  row(`${s.large} Runtime.evaluate of ${fmtMiB(s.largeBytes)} each, never reading its socket`, s.tabtunnel.unread, s.direct.unread);
  const rate = (x) => `${fmtRate(x.busy_alone_cmd_s)} alone, ${fmtRate(x.evaluates.busy_cmd_s)} with the victim`;
  out(
    table(rows),
    `(the busy agent's ${s.evaluates} pipelined: through tabtunnel ${rate(s.tabtunnel)}; over Chromium's port ${rate(s.direct)}; ` +
      `target: tabtunnel within direct + 50 ms in both loaded rows)`,
  );
}

function fairnessReport(f) {
  if (f.share) shareReport(f.share);
  const t = f.tabtunnel;
  const rows = [[`another agent's Runtime.evaluate during a ${f.messages}-message console flood`, 'rest p50', 'rest p99', 'flood p50', 'flood p99', 'flood max', 'calls']];
  const row = (name, x) => rows.push([name, fmtMs(x.rest.p50_ms, 1), fmtMs(x.rest.p99_ms, 1), fmtMs(x.during.p50_ms, 1), fmtMs(x.during.p99_ms, 1), fmtMs(x.during.max_ms, 1), x.during.samples]);
  row('flood through tabtunnel: victim through tabtunnel', t.victim);
  row('  the same tab over Chromium\'s port meanwhile', t.direct_victim);
  if (f.direct) row("flood over Chromium's port: victim there too", f.direct.victim);
  out(
    table(rows),
    `(flooding client: ${f.flooding_client}; every event there through tabtunnel: ${t.all_delivered ? 'yes' : 'NO'} after ${ms1(t.flood_ms)}, ` +
      `connection kept: ${t.flooder_connected ? 'yes' : 'NO'}` +
      (f.direct ? `; over Chromium's port: ${f.direct.all_delivered ? 'yes' : 'NO'} after ${ms1(f.direct.flood_ms)}` : '') + ')',
    `(daemon: ${fmtMiB(t.daemon.rest_rss_bytes)} at rest, ${fmtMiB(t.daemon.peak_rss_bytes)} at the peak, ${fmtMiB(t.daemon.after_rss_bytes)} after; ` +
      `target: the victim's p99 within 50 ms of rest, which chrome.debugger's own relay of the flood rules out: BENCHMARKS.md)`,
  );
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
    [r.fairness, () => fairnessReport(r.fairness)],
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
