#!/usr/bin/env node
// Runs puppeteer's own test suite, from a checkout you give by path, against the same browser
// twice: over the browser's own debugging port ("direct") and through a tabtunnel agent endpoint
// ("tunnel"), and prints pass/fail counts per spec file. See README.md next to this file.
//
//   node tests/compat/run.mjs /path/to/puppeteer [--mode both|direct|tunnel] [--spec page,click]
//        [--work DIR] [--timeout MS] [--grep TEXT] [--json FILE]
//
// It fetches nothing: the checkout is yours, puppeteer-core is the one tests/package.json pins
// (tests/node_modules), and the runner's own tools come from tests/compat/package-lock.json
// (`npm ci` here when they are missing). The suite is transpiled (esbuild) into --work, never
// into this repository.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { chromiumBinary, startHarness, withTimeout } from '../e2e/harness.mjs';
import { LAUNCH_REFUSED } from './shim/tabtunnel-compat/index.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const TESTS_DIR = path.resolve(HERE, '..');

/** The spec files run by default: those that use the suite's shared browser. */
export const DEFAULT_SPECS = [
  'accessibility', 'ariaqueryhandler', 'browser', 'browsercontext', 'click', 'cookies', 'coverage',
  'defaultbrowsercontext', 'dialog', 'drag-and-drop', 'elementhandle', 'emulation', 'evaluation',
  'frame', 'input', 'jshandle', 'keyboard', 'locator', 'mouse', 'navigation', 'network', 'page',
  'queryhandler', 'queryselector', 'requestinterception', 'screenshot', 'stacktrace', 'target',
  'touchscreen', 'waittask', 'worker', 'cdp/CDPSession',
];

// What the suite's launch options give its browser (mocha-utils' defaultBrowserOptions).
const CHROMIUM_ARGS = [
  '--host-resolver-rules=MAP domain1.test 127.0.0.1,MAP domain2.test 127.0.0.1,MAP domain3.test 127.0.0.1',
];
// The parameters of upstream's "chrome-headless" suite, for its SKIP expectations.
const SUITE_PARAMETERS = ['chrome', 'headless', 'cdp'];
const AGENT = 'pptr-suite';
const FILE_TIMEOUT_MS = 20 * 60_000;

function usage(message) {
  if (message) console.error(message);
  console.error(
    'usage: node tests/compat/run.mjs <puppeteer checkout> [--mode both|direct|tunnel] ' +
      '[--spec a,b] [--work DIR] [--timeout MS] [--grep TEXT] [--json FILE]',
  );
  process.exit(2);
}

function run(cmd, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: 'inherit', ...options });
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} failed (${code ?? signal})`)),
    );
  });
}

// ---------------------------------------------------------------------------------------------
// Building the suite into the work directory

async function ensureTools() {
  if (!fs.existsSync(path.join(TESTS_DIR, 'node_modules', 'puppeteer-core', 'package.json'))) {
    throw new Error('tests/node_modules lacks puppeteer-core: run `./dev test` once (or `npm ci` in tests/)');
  }
  if (!fs.existsSync(path.join(HERE, 'node_modules', '.package-lock.json'))) {
    console.log('[compat] installing the runner tools (npm ci in tests/compat)');
    await run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: HERE });
  }
}

function filesUnder(dir, suffix) {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(suffix))
    .map((e) => path.join(e.parentPath ?? e.path, e.name));
}

/**
 * Each test's context: the suite's `createBrowserContext()` calls in mocha-utils become the
 * glue's `testContext()` (see shim/tabtunnel-compat); its launches go to the `puppeteer` shim.
 */
function patchMochaUtils(text) {
  const createContext = /(\b[\w.]+)\.createBrowserContext\(\)/g;
  if (!createContext.test(text)) {
    throw new Error('mocha-utils.ts creates no browser context the runner knows how to replace; is this a supported checkout?');
  }
  return `import * as __tabtunnelCompat from 'tabtunnel-compat';\n${withoutDebugLogCapture(
    text.replace(createContext, '__tabtunnelCompat.testContext($1)'),
  )}`;
}

/** Newer checkouts' mocha-utils capture puppeteer's debug log, which the pinned puppeteer-core
 *  may not offer: the capture becomes a no-op, as in the mocha interface below. */
function withoutDebugLogCapture(text) {
  return text.replace(
    /import\s*\{\s*setLogCapture,\s*getCapturedLogs,?\s*\}\s*from\s*'puppeteer-core\/internal\/common\/Debug\.js';/,
    'const setLogCapture = () => {};\nconst getCapturedLogs = () => [];',
  );
}

// ESM output has no __dirname; the suite's code uses it to find its assets.
const DIRNAME_BANNER =
  "import {fileURLToPath as __compatFileURLToPath} from 'node:url';\n" +
  "import {dirname as __compatDirname} from 'node:path';\n" +
  'const __filename = __compatFileURLToPath(import.meta.url);\n' +
  'const __dirname = __compatDirname(__filename);';

async function transpile(esbuild, source, text, outFile, format = 'esm') {
  const { code } = await esbuild.transform(text, {
    loader: 'ts',
    format,
    target: 'node20',
    platform: 'node',
    sourcemap: 'inline',
    sourcefile: source,
    banner: format === 'esm' ? DIRNAME_BANNER : '',
  });
  fs.mkdirSync(path.dirname(outFile), { recursive: true });
  fs.writeFileSync(outFile, code);
}

function link(target, linkPath) {
  fs.rmSync(linkPath, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(linkPath), { recursive: true });
  fs.symlinkSync(target, linkPath);
}

function writeJson(file, value) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

async function build(checkout, work) {
  const esbuild = await import('esbuild');
  const src = path.join(checkout, 'test', 'src');
  const out = path.join(work, 'test', 'build');
  fs.rmSync(out, { recursive: true, force: true });
  for (const file of filesUnder(src, '.ts')) {
    let text = fs.readFileSync(file, 'utf8');
    if (path.basename(file) === 'mocha-utils.ts') text = patchMochaUtils(text);
    await transpile(esbuild, file, text, path.join(out, path.relative(src, file)).replace(/\.ts$/, '.js'));
  }
  writeJson(path.join(out, 'package.json'), { type: 'module' });
  link(path.join(checkout, 'test', 'assets'), path.join(work, 'test', 'assets'));
  link(path.join(checkout, 'test', 'golden-chrome'), path.join(work, 'test', 'golden-chrome'));

  const modules = path.join(work, 'node_modules');
  fs.rmSync(modules, { recursive: true, force: true });
  for (const entry of fs.readdirSync(path.join(HERE, 'node_modules'))) {
    if (entry.startsWith('.')) continue;
    link(path.join(HERE, 'node_modules', entry), path.join(modules, entry));
  }
  link(path.join(TESTS_DIR, 'node_modules', 'puppeteer-core'), path.join(modules, 'puppeteer-core'));
  link(path.join(HERE, 'shim', 'puppeteer'), path.join(modules, 'puppeteer'));
  link(path.join(HERE, 'shim', 'tabtunnel-compat'), path.join(modules, 'tabtunnel-compat'));

  // The suite's test server (@pptr/testserver), with its certificate; CommonJS, as upstream
  // builds it (it imports names that only ws's CommonJS entry has).
  const server = path.join(checkout, 'packages', 'testserver');
  const serverOut = path.join(modules, '@pptr', 'testserver');
  await transpile(
    esbuild,
    path.join(server, 'src', 'index.ts'),
    fs.readFileSync(path.join(server, 'src', 'index.ts'), 'utf8'),
    path.join(serverOut, 'lib', 'index.js'),
    'cjs',
  );
  writeJson(path.join(serverOut, 'package.json'), { name: '@pptr/testserver', type: 'commonjs', main: './lib/index.js' });
  for (const pem of ['cert.pem', 'key.pem']) fs.copyFileSync(path.join(server, pem), path.join(serverOut, pem));

  // The suite's mocha interface (describe.withDebugLogs, it.deflake, SKIP expectations).
  await esbuild.build({
    entryPoints: [path.join(checkout, 'tools', 'mocha-runner', 'src', 'interface.ts')],
    outfile: path.join(work, 'tools', 'interface.cjs'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['mocha', 'mocha/*'],
    // Its debug-log capture comes from a puppeteer-core that has it; this one may not, and
    // Node 20 cannot require() puppeteer-core (ESM) and import it in one process anyway.
    plugins: [noDebugLogCapture],
    tsconfigRaw: {},
    logLevel: 'warning',
  });
}

const noDebugLogCapture = {
  name: 'no-debug-log-capture',
  setup(build) {
    build.onResolve({ filter: /^puppeteer-core\/internal\/common\/Debug\.js$/ }, (args) => ({
      path: args.path,
      namespace: 'no-debug-log-capture',
    }));
    build.onLoad({ filter: /.*/, namespace: 'no-debug-log-capture' }, () => ({
      contents: 'export function setLogCapture() {}\nexport function getCapturedLogs() { return []; }\n',
      loader: 'js',
    }));
  },
};

/** Upstream's SKIP expectations for its chrome-headless suite on this platform. */
function skippedTests(checkout) {
  const expectations = JSON.parse(fs.readFileSync(path.join(checkout, 'test', 'TestExpectations.json'), 'utf8'));
  return expectations
    .filter(
      (e) =>
        e.expectations.includes('SKIP') &&
        e.platforms.includes(process.platform) &&
        e.parameters.every((p) => SUITE_PARAMETERS.includes(p)),
    )
    .map((e) => ({ testIdPattern: e.testIdPattern, skip: true }));
}

// ---------------------------------------------------------------------------------------------
// Running

/** A spec file by name (`page`, `cdp/CDPSession`): `<name>.spec.js`, or `<name>.test.js` as newer
 *  checkouts name them. */
function specFile(work, spec) {
  const build = path.join(work, 'test', 'build');
  const candidates = ['.spec.js', '.test.js'].map((suffix) => path.join(build, `${spec}${suffix}`));
  const found = candidates.find((file) => fs.existsSync(file));
  if (!found) throw new Error(`no spec file ${spec} in the checkout (looked for ${candidates.join(', ')})`);
  return found;
}

/** One mocha process over one spec file; resolves with its JSON report (null if it has none). */
async function mocha(work, spec, { env, timeout, grep, dryRun, logFile }) {
  const report = path.join(work, 'reports', `${dryRun ? 'list' : env.COMPAT_MODE}-${spec.replace('/', '_')}.json`);
  fs.rmSync(report, { force: true });
  fs.mkdirSync(path.dirname(report), { recursive: true });
  const args = [
    path.join(HERE, 'node_modules', 'mocha', 'bin', 'mocha.js'),
    '--ui', path.join(work, 'tools', 'interface.cjs'),
    '--require', path.join(work, 'test', 'build', 'mocha-utils.js'),
    '--timeout', String(timeout),
    '--async-only',
    '--exit',
    '--reporter', 'json',
    '--reporter-option', `output=${report}`,
    ...(dryRun ? ['--dry-run'] : []),
    ...(grep ? ['--grep', grep] : []),
    specFile(work, spec),
  ];
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const log = fs.openSync(logFile, 'w');
  const child = spawn(process.execPath, args, { cwd: work, env: { ...process.env, ...env }, stdio: ['ignore', log, log] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let timer;
  const watchdog = new Promise((resolve) => {
    timer = setTimeout(() => resolve('timeout'), FILE_TIMEOUT_MS);
  });
  if ((await Promise.race([exited, watchdog])) === 'timeout') {
    child.kill('SIGKILL');
    await exited;
    fs.appendFileSync(logFile, `\n[compat] killed after ${FILE_TIMEOUT_MS} ms\n`);
  }
  clearTimeout(timer);
  fs.closeSync(log);
  try {
    return JSON.parse(fs.readFileSync(report, 'utf8'));
  } catch {
    return null;
  }
}

/** Each listed test's outcome: pass, fail (with its error), skip, n/a, or "not run". */
function outcomes(list, report) {
  const result = new Map(list.map((t) => [t, { outcome: 'not run' }]));
  if (!report) return result;
  for (const t of report.passes ?? []) result.set(t.fullTitle, { outcome: 'pass' });
  for (const t of report.pending ?? []) result.set(t.fullTitle, { outcome: 'skip' });
  for (const t of report.failures ?? []) {
    const message = `${t.err?.message ?? ''}`;
    const outcome = message.includes(LAUNCH_REFUSED) ? 'n/a' : 'fail';
    // A hook's failure names the test it ran for; the suite's remaining tests are "not run".
    const hook = /^(.*)"(?:before|after) (?:each|all)" hook(?: for "(.*)")?/.exec(t.fullTitle);
    const name = hook && hook[2] !== undefined ? `${hook[1]}${hook[2]}` : t.fullTitle;
    if (!result.has(name) || result.get(name).outcome === 'pass') {
      result.set(name, { outcome, error: message.split('\n')[0].slice(0, 300) });
    } else if (result.get(name).outcome === 'not run') {
      result.set(name, { outcome, error: message.split('\n')[0].slice(0, 300) });
    }
  }
  return result;
}

async function runSpec(work, spec, mode, options, list) {
  const harness = await startHarness({ share: false, name: `compat-${mode}`, chromiumArgs: CHROMIUM_ARGS });
  try {
    const url =
      mode === 'direct'
        ? `http://127.0.0.1:${new URL(harness.realBrowserWsEndpoint).port}`
        : harness.agentEndpoint(AGENT);
    const logFile = path.join(work, 'logs', `${mode}-${spec.replace('/', '_')}.log`);
    const report = await mocha(work, spec, { ...options, logFile, env: { ...options.env, COMPAT_MODE: mode, COMPAT_BROWSER_URL: url } });
    if (mode === 'tunnel') fs.writeFileSync(`${logFile}.daemon`, harness.logs());
    return outcomes(list, report);
  } finally {
    await withTimeout(harness.close(), 30_000, 'harness close').catch((err) => console.error(`[compat] ${err.message}`));
  }
}

function count(results) {
  const c = { pass: 0, fail: 0, skip: 0, 'n/a': 0, 'not run': 0 };
  for (const { outcome } of results.values()) c[outcome] += 1;
  return c;
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      mode: { type: 'string', default: 'both' },
      spec: { type: 'string' },
      work: { type: 'string', default: path.join(os.tmpdir(), 'tabtunnel-compat') },
      timeout: { type: 'string', default: '20000' },
      grep: { type: 'string' },
      json: { type: 'string' },
    },
  });
  const [checkoutArg] = positionals;
  if (!checkoutArg) usage();
  const checkout = path.resolve(checkoutArg);
  if (!fs.existsSync(path.join(checkout, 'test', 'src', 'mocha-utils.ts'))) {
    usage(`${checkout} is not a puppeteer checkout (no test/src/mocha-utils.ts)`);
  }
  const modes = values.mode === 'both' ? ['direct', 'tunnel'] : [values.mode];
  if (!modes.every((m) => ['direct', 'tunnel'].includes(m))) usage(`unknown --mode ${values.mode}`);
  const specs = values.spec ? values.spec.split(',') : DEFAULT_SPECS;
  const work = path.resolve(values.work);
  if (work.startsWith(path.resolve(TESTS_DIR, '..') + path.sep)) usage('--work must be outside this repository');

  await ensureTools();
  console.log(`[compat] building ${checkout} into ${work}`);
  await build(checkout, work);

  const options = {
    timeout: Number(values.timeout),
    grep: values.grep,
    env: {
      BINARY: chromiumBinary(),
      HEADLESS: 'true',
      PUPPETEER_SKIPPED_TEST_CONFIG: JSON.stringify(skippedTests(checkout)),
    },
  };
  const results = {};
  for (const spec of specs) {
    const listing = await mocha(work, spec, {
      ...options,
      dryRun: true,
      logFile: path.join(work, 'logs', `list-${spec.replace('/', '_')}.log`),
      env: { ...options.env, COMPAT_MODE: 'list' },
    });
    if (!listing) throw new Error(`could not list ${spec} (see ${work}/logs/list-${spec.replace('/', '_')}.log)`);
    const list = [...listing.passes, ...listing.pending].map((t) => t.fullTitle);
    results[spec] = { tests: list.length };
    for (const mode of modes) {
      const started = Date.now();
      const r = await runSpec(work, spec, mode, options, list);
      results[spec][mode] = Object.fromEntries(r);
      const c = count(r);
      console.log(
        `[compat] ${spec} ${mode}: ${c.pass}/${list.length} pass, ${c.fail} fail, ${c['not run']} not run, ` +
          `${c.skip} skipped, ${c['n/a']} n/a (${Math.round((Date.now() - started) / 1000)} s)`,
      );
    }
  }
  report(results, modes);
  const jsonFile = values.json ?? path.join(work, 'results.json');
  writeJson(jsonFile, results);
  console.log(`[compat] per-test outcomes: ${jsonFile}; mocha logs: ${work}/logs`);
}

function report(results, modes) {
  const pad = (s, n) => String(s).padEnd(n);
  const cell = (r) => {
    if (!r) return '';
    const c = count(new Map(Object.entries(r)));
    return `${c.pass} pass ${c.fail + c['not run']} fail ${c['n/a']} n/a ${c.skip} skip`;
  };
  console.log(`\n${pad('spec', 26)}${pad('tests', 7)}${modes.map((m) => pad(m, 34)).join('')}`);
  const totals = Object.fromEntries(modes.map((m) => [m, new Map()]));
  let tests = 0;
  for (const [spec, r] of Object.entries(results)) {
    tests += r.tests;
    console.log(`${pad(spec, 26)}${pad(r.tests, 7)}${modes.map((m) => pad(cell(r[m]), 34)).join('')}`);
    for (const m of modes) for (const [t, o] of Object.entries(r[m])) totals[m].set(`${spec}: ${t}`, o);
  }
  console.log(
    `${pad(`total (${Object.keys(results).length} files)`, 26)}${pad(tests, 7)}${modes
      .map((m) => pad(cell(Object.fromEntries(totals[m])), 34))
      .join('')}`,
  );
  if (modes.length === 2) {
    const lost = [...totals.direct].filter(([t, o]) => o.outcome === 'pass' && totals.tunnel.get(t).outcome !== 'pass');
    console.log(`\npass direct, not through tabtunnel (${lost.length}):`);
    for (const [t] of lost) console.log(`  ${t}\n      ${totals.tunnel.get(t).outcome}: ${totals.tunnel.get(t).error ?? ''}`);
    const gained = [...totals.tunnel].filter(([t, o]) => o.outcome === 'pass' && totals.direct.get(t).outcome !== 'pass');
    console.log(`\npass through tabtunnel, not direct (${gained.length}):`);
    for (const [t] of gained) console.log(`  ${t}\n      ${totals.direct.get(t).outcome}: ${totals.direct.get(t).error ?? ''}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
