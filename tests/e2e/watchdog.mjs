// No test waits for nothing. Every file that uses the harness gets, under node's test runner:
//
// * A bound on every test and every hook: when no test starts or ends for TEST_LIMIT_MS, the
//   file's process ends (its harnesses killed by their exit handler), saying which test or hooks
//   it was in, what the harness was waiting for, and the log of every process it watches. Node's
//   own `--test-timeout` bounds a whole file, and a test's `timeout` is per test, unset in most.
// * Processes watched (the daemon, Chromium): one that exits while it is watched fails every
//   wait of the harness (`pollFor`, `withTimeout`) at once, with its log, instead of leaving the
//   test to wait its bound out (a Chromium gone seconds after its start left a file idle for
//   minutes). A test that ends one on purpose unwatches it first.

import { afterEach, beforeEach } from 'node:test';

/** No test or hook may take longer (`TABTUNNEL_TEST_LIMIT_MS` overrides it). */
export const TEST_LIMIT_MS = Number(process.env.TABTUNNEL_TEST_LIMIT_MS) || 10 * 60_000;
const LOG_TAIL = 6000;

/** What the harness waits for now, by wait. */
const waits = new Map();
let nextWait = 0;
/** The test, or the hooks, running now. */
let where = "the file's start-up, before its first test";
/** Watched processes, by key: `{ what, log }`. */
const watched = new Map();
/** The first watched process that died, while it is still watched: `{ key, error }`. */
let death = null;
const onDeath = new Set();

const tail = (text) => (text.length > LOG_TAIL ? `...${text.slice(-LOG_TAIL)}` : text);

/** Records that the harness waits for `what`; call the result when it no longer does. */
export function waiting(what) {
  const id = nextWait++;
  waits.set(id, what);
  return () => waits.delete(id);
}

/** Throws the death of a watched process, if one died. */
export function throwIfDied() {
  if (death) throw death.error;
}

/** `promise`, or the death of a watched process first (at once if one died). */
export function unlessDied(promise) {
  if (death) return Promise.reject(death.error);
  let reject;
  const dies = new Promise((_, r) => {
    reject = r;
  });
  onDeath.add(reject);
  return Promise.race([promise, dies]).finally(() => onDeath.delete(reject));
}

function died(key, error) {
  if (death || !watched.has(key)) return;
  death = { key, error };
  for (const reject of onDeath) reject(error);
  onDeath.clear();
}

/**
 * Watches `process_` (a ChildProcess, or a pid polled every 250 ms) under `key`: its exit fails
 * the harness's waits with `what` and `log()`, until `unwatch(key)`.
 */
export function watch(key, process_, what, log = () => '') {
  watched.set(key, { what, log });
  const report = (how) =>
    died(key, new Error(`${what} exited under ${where} (${how})\n--- ${what}: log (tail) ---\n${tail(log()) || '(none)'}\n--- end ---`));
  if (typeof process_ === 'number') {
    const timer = setInterval(() => {
      if (!watched.has(key)) return clearInterval(timer);
      try {
        process.kill(process_, 0);
      } catch {
        clearInterval(timer);
        report(`pid ${process_} gone`);
      }
    }, 250);
    timer.unref();
  } else if (process_.exitCode !== null || process_.signalCode !== null) {
    report(`code ${process_.exitCode}, signal ${process_.signalCode}`);
  } else {
    process_.once('exit', (code, signal) => report(`code ${code}, signal ${signal}`));
  }
}

/** No longer watched (stopped on purpose); a death it caused no longer fails waits. */
export function unwatch(key) {
  watched.delete(key);
  if (death?.key === key) death = null;
}

function stuck() {
  const pending = [...waits.values()];
  const logs = [...watched.values()].map(({ what, log }) => `--- ${what}: log (tail) ---\n${tail(log()) || '(none)'}`);
  console.error(
    `no test or hook ended within ${TEST_LIMIT_MS / 1000} s: stopped in ${where}, waiting for ` +
      `${pending.length ? pending.join('; ') : 'nothing the harness was asked to wait for (an unbounded await in the test)'}\n` +
      `${logs.join('\n')}\n--- end ---`,
  );
  process.exit(1);
}

let timer;
function arm() {
  clearTimeout(timer);
  timer = setTimeout(stuck, TEST_LIMIT_MS);
  // Not what keeps the process alive: a file with nothing left to wait for ends as it would.
  timer.unref();
}

// Only under `node --test` (the benchmark uses the harness too, without tests).
if (process.env.NODE_TEST_CONTEXT) {
  beforeEach((t) => {
    where = `test "${t.name}"`;
    arm();
  });
  afterEach((t) => {
    where = `the hooks after test "${t.name}"`;
    arm();
  });
  arm();
}
