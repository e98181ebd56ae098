// The harness's removeTree against a writer that outlives the first pass, as Chromium's helper
// processes did: with rmSync's own retries the file written after its children pass was never
// removed and the event loop slept for minutes (install.test.mjs's first test: 257 s, no process
// left under it). No browser.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { removeTree, withTimeout } from './harness.mjs';

test('removeTree removes a file written after its first pass', { timeout: 60_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tabtunnel-remove-tree-'));
  fs.mkdirSync(path.join(dir, 'Default'));
  for (let i = 0; i < 2000; i += 1) fs.writeFileSync(path.join(dir, i % 2 ? 'Default' : '.', `f${i}`), 'x');
  // Writes one file again and again for 300 ms after the removal starts.
  const writer = spawn('sh', ['-c', 'end=$(($(date +%s%N) + 300000000)); while [ "$(date +%s%N)" -lt "$end" ]; do : > "$1/DevToolsActivePort"; done 2>/dev/null', 'sh', dir]);
  const writerDone = new Promise((r) => writer.once('exit', r));
  await withTimeout(new Promise((r) => writer.once('spawn', r)), 10_000, 'the writer starting');
  await removeTree(dir, 20_000);
  await withTimeout(writerDone, 10_000, 'the writer exiting');
  assert.ok(!fs.existsSync(dir), `left behind: ${fs.existsSync(dir) ? fs.readdirSync(dir).join(', ') : ''}`);
});
