// A smoke run of the benchmark (`./dev bench --quick --json`): every section runs with tiny
// counts and its figures come out as one JSON object on the last line. Checks the shape and
// that every flood event arrived; never a time.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';

import { REPO_ROOT } from './harness.mjs';

const BENCH = path.join(REPO_ROOT, 'tests', 'bench', 'bench.mjs');

function runBench(args) {
  return new Promise((resolve, reject) => {
    // Not a test file: without the runner's context, whose hooks (the harness's watchdog) would
    // make node:test write its binary reports to the bench's stdout.
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const child = spawn(process.execPath, [BENCH, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const isNumber = (v) => typeof v === 'number' && Number.isFinite(v);

describe('./dev bench --quick --json', { timeout: 240_000 }, () => {
  test('prints every figure as one JSON object on its last line', async () => {
    const { code, stdout, stderr } = await runBench(['--quick', '--json']);
    assert.equal(code, 0, `bench exited ${code}\n--- stderr ---\n${stderr.slice(-6000)}\n--- stdout ---\n${stdout.slice(-3000)}`);
    const last = stdout.trimEnd().split('\n').at(-1);
    const r = JSON.parse(last);

    // bare_ws: the bare relay over the worker's WebSocket (bare_native, over native messaging,
    // is there when Chrome starts the bench's host).
    for (const path of ['direct', 'floor', 'bare_ws', 'tabtunnel']) {
      for (const key of ['p50_ms', 'p95_ms', 'p99_ms', 'pipelined_cmd_s']) {
        assert.ok(isNumber(r[path]?.[key]), `${path}.${key} is not a number: ${JSON.stringify(r[path])}`);
      }
    }
    for (const client of ['chrome-devtools-mcp', 'playwright']) {
      for (const path of ['direct', 'tabtunnel', 'tabtunnel_connected']) {
        assert.ok(isNumber(r.sessions?.[client]?.[path]?.total_ms), `sessions.${client}.${path}.total_ms missing`);
      }
    }
    for (const path of ['direct', 'tabtunnel_mcp']) {
      assert.ok(isNumber(r.sessions?.mcp_agent?.[path]?.steps_ms?.new_page), `sessions.mcp_agent.${path}.steps_ms.new_page missing`);
    }
    for (const kind of ['screenshot', 'evaluate']) {
      for (const key of ['direct_ms', 'floor_ms', 'bare_ms', 'tabtunnel_ms', 'daemon_peak_rss_bytes']) {
        assert.ok(isNumber(r.large?.[kind]?.[key]), `large.${kind}.${key} missing`);
      }
      const byRound = r.large?.[kind]?.daemon_peak_rss_bytes_by_round;
      assert.ok(Array.isArray(byRound) && byRound.length > 0 && byRound.every(isNumber), `large.${kind}.daemon_peak_rss_bytes_by_round: ${byRound}`);
    }
    for (const path of ['direct', 'tabtunnel']) {
      assert.equal(r.flood?.[path]?.all_delivered, true, `flood through ${path}: ${JSON.stringify(r.flood?.[path])}`);
      assert.ok(isNumber(r.agents?.[path]?.cmd_s), `agents.${path}.cmd_s missing`);
    }
    assert.ok(isNumber(r.agents.tabtunnel.daemon_cpu_ms) && isNumber(r.agents.tabtunnel.daemon_peak_rss_bytes));
    for (const [path, x] of [['tabtunnel', r.fairness?.tabtunnel], ['direct', r.fairness?.direct]]) {
      assert.equal(x?.all_delivered, true, `fairness flood through ${path}: ${JSON.stringify(x)}`);
      assert.equal(x.wrong_answers, 0);
      assert.ok(isNumber(x.victim.rest.p99_ms) && isNumber(x.victim.during.p99_ms), `fairness.${path}.victim`);
    }
    assert.ok(isNumber(r.fairness.tabtunnel.direct_victim.during.p99_ms) && isNumber(r.fairness.tabtunnel.daemon.after_rss_bytes));
    for (const key of ['tab_listed_ms', 'first_answer_ms']) {
      assert.ok(isNumber(r.restart?.daemon?.[key]), `restart.daemon.${key} missing`);
      assert.ok(isNumber(r.restart?.worker?.[key]), `restart.worker.${key} missing`);
    }
    for (const key of ['press_cost_p50_ms', 'enter_cost_p50_ms']) {
      assert.ok(isNumber(r.gestures?.[key]), `gestures.${key} missing`);
    }
    assert.ok(r.wasm_bytes > 0 && r.daemon_idle.rss_bytes > 0);
  });
});
