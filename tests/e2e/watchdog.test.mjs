// The harness's watchdog (`watchdog.mjs`) alone, no browser: a watched process that dies fails
// the harness's waits at once with its log, and a file stuck in a test ends, naming the test and
// what it waited for.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { pollFor, withTimeout } from './harness.mjs';
import { unwatch, watch } from './watchdog.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** A process that runs until killed, and its exit. */
function sleeper() {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  const exited = new Promise((r) => child.once('exit', r));
  return { child, exited };
}

test('a watched process that dies fails every wait of the harness at once, with its log', { timeout: 120_000 }, async () => {
  const { child, exited } = sleeper();
  const key = {};
  watch(key, child, 'the sleeper', () => 'the sleeper\'s last words');
  try {
    const failed = (promise) => promise.then(() => null, (e) => e);
    const waited = failed(pollFor(() => false, 60_000, 'something the sleeper never does'));
    const bounded = failed(withTimeout(new Promise(() => {}), 60_000, 'an answer from the sleeper'));
    child.kill('SIGKILL');
    await exited;
    for (const error of await Promise.all([waited, bounded])) {
      assert.match(error?.message ?? '', /the sleeper exited under .*signal SIGKILL/s);
      assert.match(error.message, /the sleeper's last words/);
    }
    // A wait that starts after the death fails too.
    await assert.rejects(pollFor(() => false, 60_000, 'more'), /the sleeper exited/);
  } finally {
    unwatch(key);
  }
  // Unwatched (stopped on purpose), its death fails nothing.
  assert.equal(await pollFor(() => 'yes', 1000, 'a value'), 'yes');
});

test('a pid watched (Chromium from the ready file) dying fails the waits too', { timeout: 120_000 }, async () => {
  const { child, exited } = sleeper();
  const key = {};
  watch(key, child.pid, 'the sleeper by pid');
  try {
    const waited = pollFor(() => false, 60_000, 'something');
    child.kill('SIGKILL');
    await exited;
    await assert.rejects(waited, /the sleeper by pid exited under .*gone/s);
  } finally {
    unwatch(key);
  }
});

test('a file stuck in a test ends, naming the test and what it waited for', { timeout: 120_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tabtunnel-watchdog-'));
  const file = path.join(dir, 'stuck.test.mjs');
  fs.writeFileSync(
    file,
    `import { test } from 'node:test';
import { pollFor } from ${JSON.stringify(path.join(HERE, 'harness.mjs'))};
test('quick', () => {});
test('stuck', async () => {
  await pollFor(() => false, 3_600_000, 'the answer that never comes');
});
`,
  );
  try {
    // A runner of its own (one inside a test file's process skips its files).
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const run = spawn(process.execPath, ['--test', '--test-reporter=spec', file], {
      env: { ...env, TABTUNNEL_TEST_LIMIT_MS: '2000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    run.stdout.on('data', (d) => (output += d));
    run.stderr.on('data', (d) => (output += d));
    const code = await withTimeout(new Promise((r) => run.once('exit', r)), 90_000, 'the stuck file ending', () => output);
    assert.notEqual(code, 0, output);
    assert.match(output, /no test or hook ended within 2 s: stopped in test "stuck", waiting for the answer that never comes/, output);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
