// The gesture guard's false-positive survey: an agent (puppeteer, through its own endpoint)
// acts on every element of the pages in tests/fixtures/gestures/ (written after real sites, in
// the vocabulary's languages) and on the e2e sites, and each one marked `data-expect="pass"`
// must go through without a question while each marked `data-expect="held"` must be held, and
// what a denied one would have written never reaches the server. The held-out pages
// (tests/fixtures/gestures-heldout/, after apps the rule was not tuned on) are surveyed the same
// way; their figures are reported, not asserted, except that nothing denied reaches a server.
// The second set (tests/fixtures/gestures-heldout-2/, 25 pages after other apps, written for
// issue 28) was held out until bb08f4a, which was tuned on it: from then on its marks are
// asserted like the tuned set's, but for the known mistakes listed in HELDOUT_2_KNOWN.
// The third to seventh sets (tests/fixtures/gestures-heldout-3/ to -7/, other apps again, each
// written blind; the fifth tuned on from f3a9078, the sixth from 643bb10) are only reported, and there a denied gesture
// must send nothing, not even a GET. `./dev test` surveys only the newest blind set (the older
// ones' figures move only with the rule, and they cost about 20 minutes); `./dev survey`
// (TABTUNNEL_SURVEY=all) all.
// The figures (per kind, and any mistake) are printed for BENCHMARKS.md.
// Each set is surveyed in LANES lanes at once: an agent each, its own page server (a write is
// counted against the lane whose server it reached) and only its own questions answered. Most of
// a gesture's time is waiting for a question that may still come, so lanes halve the survey.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { gestureSites } from './gesture-sites.mjs';
import { REPO_ROOT, connectAgent, sleep, startHarness, startPageServer, withTimeout } from './harness.mjs';

const FIXTURES = path.join(REPO_ROOT, 'tests', 'fixtures', 'gestures');
const HELDOUT = path.join(REPO_ROOT, 'tests', 'fixtures', 'gestures-heldout');
const HELDOUT_2 = path.join(REPO_ROOT, 'tests', 'fixtures', 'gestures-heldout-2');
const HELDOUT_3 = path.join(REPO_ROOT, 'tests', 'fixtures', 'gestures-heldout-3');
const HELDOUT_4 = path.join(REPO_ROOT, 'tests', 'fixtures', 'gestures-heldout-4');
const HELDOUT_5 = path.join(REPO_ROOT, 'tests', 'fixtures', 'gestures-heldout-5');
const HELDOUT_6 = path.join(REPO_ROOT, 'tests', 'fixtures', 'gestures-heldout-6');
const HELDOUT_7 = path.join(REPO_ROOT, 'tests', 'fixtures', 'gestures-heldout-7');
/** Whether the older blind sets are surveyed too (`./dev survey`). */
const SURVEY_ALL = process.env.TABTUNNEL_SURVEY === 'all';
const QUESTION = '#approvals li.gesture[data-request-id]';
/** The second set's marks the rule still gets wrong (page and label), each a known limit
 * (docs/gestures.md): any other mistake there fails the survey. */
const HELDOUT_2_KNOWN = [
  // A profile's `Save` whose button sends `action=publish`: held as sending, though it saves.
  '/heldout-2/liberapay-es.html Guardar',
];
/** How long after a gesture settles a question about the request it sent may still come (a
 * script's write is answered, read and asked about after the click returned). */
const LATE_QUESTION_MS = 1_200;
/** Surveys run at once, each by its own agent on its own page server. */
const LANES = 2;

/** A folder's fixtures as page routes under `prefix`, and the files. */
function fixtureRoutes(dir, prefix) {
  const routes = {};
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.html'));
  for (const file of [...files, 'style.css']) {
    const body = fs.readFileSync(path.join(dir, file), 'utf8');
    const type = file.endsWith('.css') ? 'text/css' : 'text/html; charset=utf-8';
    routes[`${prefix}/${file}`] = (req, res) => {
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
  }
  return { routes, files };
}

/**
 * The routes, with every `/fx/...` path (what the fixtures link, post and fetch to, built by
 * their scripts too) answered by one handler that counts each write.
 */
function withFx(routes, writes, requests = []) {
  const fx = (req, res) => {
    // Every request, GETs too (a link or a script's navigation that deletes or signs in).
    requests.push(`${req.method} ${new URL(req.url, 'http://x').pathname}`);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      writes.push(`${req.method} ${new URL(req.url, 'http://x').pathname}`);
      req.resume();
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end('<!doctype html><title>done</title><p>done</p>');
  };
  return new Proxy(routes, { get: (target, key) => (typeof key === 'string' && key.startsWith('/fx/') ? fx : target[key]) });
}

/** Held and passed per kind, as BENCHMARKS.md shows them. */
function figures(name, results) {
  const kinds = [...new Set(results.map((r) => r.kind))].sort();
  const lines = [`# ${name}: ${results.length} gestures on ${new Set(results.map((r) => r.page)).size} pages`];
  for (const kind of kinds) {
    const of = results.filter((r) => r.kind === kind);
    const sensitive = of.filter((r) => r.expect === 'held');
    const harmless = of.filter((r) => r.expect === 'pass');
    lines.push(`#   ${kind.padEnd(11)} sensitive held ${sensitive.filter((r) => r.held).length}/${sensitive.length}, ` +
      `harmless passed ${harmless.filter((r) => !r.held).length}/${harmless.length}`);
  }
  const sensitive = results.filter((r) => r.expect === 'held');
  const harmless = results.filter((r) => r.expect === 'pass');
  lines.push(`#   ${'all'.padEnd(11)} sensitive held ${sensitive.filter((r) => r.held).length}/${sensitive.length}, ` +
    `harmless passed ${harmless.filter((r) => !r.held).length}/${harmless.length}; ` +
    `named with their kind ${sensitive.filter((r) => r.held && r.shown.split(' ').includes(r.kind)).length}/${sensitive.filter((r) => r.held).length}`);
  const misnamed = sensitive.filter((r) => r.held && !r.shown.split(' ').includes(r.kind));
  for (const r of misnamed) lines.push(`#   asked as "${r.shown}": ${r.page} "${r.label}" (${r.kind})`);
  console.log(lines.join('\n'));
}

describe('the gesture guard on pages written after real sites', { timeout: 3_600_000 }, () => {
  let h;
  let panel;
  let files;
  /** Per lane: its page server's address, and the writes and requests that reached it. */
  const lanes = [];
  const laneServers = [];

  let heldout;
  let heldout2;
  let heldout3;
  let heldout4;
  let heldout5;
  let heldout6;
  let heldout7;

  before(async () => {
    const fixtures = fixtureRoutes(FIXTURES, '/fixtures');
    heldout = fixtureRoutes(HELDOUT, '/heldout');
    heldout2 = fixtureRoutes(HELDOUT_2, '/heldout-2');
    heldout3 = fixtureRoutes(HELDOUT_3, '/heldout-3');
    heldout4 = fixtureRoutes(HELDOUT_4, '/heldout-4');
    heldout5 = fixtureRoutes(HELDOUT_5, '/heldout-5');
    heldout6 = fixtureRoutes(HELDOUT_6, '/heldout-6');
    heldout7 = fixtureRoutes(HELDOUT_7, '/heldout-7');
    files = fixtures.files;
    const sites = gestureSites();
    const routes = { ...sites.pages, ...fixtures.routes, ...heldout.routes, ...heldout2.routes, ...heldout3.routes, ...heldout4.routes, ...heldout5.routes, ...heldout6.routes, ...heldout7.routes };
    const first = { writes: [], requests: [] };
    h = await startHarness({ name: 'gesture-fixtures', share: false, extraPages: withFx(routes, first.writes, first.requests) });
    lanes.push({ ...first, server: h.pageServerUrl });
    for (let lane = 1; lane < LANES; lane += 1) {
      const counts = { writes: [], requests: [] };
      const server = await startPageServer(withFx(routes, counts.writes, counts.requests));
      laneServers.push(server);
      lanes.push({ ...counts, server: `http://127.0.0.1:${server.address().port}` });
    }
    panel = await h.openPanel();
  });

  after(async () => {
    for (const server of laneServers) server.close();
    await h?.close();
  });

  /** Acts on the `index`th marked element of `url` as `agent` in `lane`; whether the guard held
   *  it. */
  async function survey(page, url, index, agent, { writes, requests }) {
    await page.goto(url);
    const handle = (await page.$$('[data-expect]'))[index];
    const how = await handle.evaluate((el) => ({
      expect: el.dataset.expect,
      kind: el.dataset.kind ?? 'none',
      gesture: el.dataset.gesture ?? 'click',
      label: el.getAttribute('aria-label') || el.title || el.textContent.trim() || el.name || el.getAttribute('data-bs-original-title') || el.outerHTML.slice(0, 60),
    }));
    const wrote = writes.length;
    const asked = requests.length;
    const acting = (how.gesture === 'enter' ? handle.focus().then(() => page.keyboard.press('Enter')) : handle.click()).then(
      () => 'done',
      (e) => e.message,
    );
    let held = false;
    const shown = new Set();
    // Denies the agent's question shown, if any (the panel may redraw under a click: then again).
    // The button is pressed by its element, not by a pointer: a question of another lane's
    // appearing above it must not move it under the click.
    const deny = async () => {
      const q = await panel
        .$$eval(QUESTION, (items, who) => {
          const li = items.find((x) => x.querySelector('.request strong')?.textContent === who);
          return li && { id: li.dataset.requestId, kinds: li.querySelector('.kinds')?.dataset.kinds ?? '' };
        }, agent)
        .catch(() => null);
      if (!q) return false;
      const { id } = q;
      for (const k of q.kinds.split(' ').filter(Boolean)) shown.add(k);
      const item = `#approvals li[data-request-id="${id}"]`;
      for (let attempt = 0; attempt < 10; attempt += 1) {
        await panel.$eval(`${item} button[data-answer="deny"]`, (b) => b.click()).catch(() => {});
        if (await panel.waitForSelector(item, { hidden: true, timeout: 1_000 }).then(() => true, () => false)) break;
      }
      return true;
    };
    const settled = { done: false };
    acting.then(() => (settled.done = true));
    for (let waited = 0; !settled.done && waited < 10_000; waited += 50) {
      if (await deny()) held = true;
      await sleep(50);
    }
    for (let waited = 0; waited < LATE_QUESTION_MS; waited += 50) {
      if (await deny()) held = true;
      await sleep(50);
    }
    // A gesture refused moments ago (Enter in the same form, say) is refused at once, unasked.
    const outcome = await withTimeout(acting, 10_000, `${url} #${index}`);
    return { ...how, held: held || /gesture guard/.test(outcome), shown: [...shown].join(' '), reached: writes.slice(wrote), requested: requests.slice(asked) };
  }

  /** Surveys every marked element of the pages as `name`, on the lane's server. */
  async function surveyLane(name, pages, lane) {
    const browser = await connectAgent(h, name, 60_000);
    const results = [];
    try {
      const page = await browser.newPage();
      for (const p of pages) {
        const url = `${lane.server}${p}`;
        await page.goto(url);
        const count = (await page.$$('[data-expect]')).length;
        for (let i = 0; i < count; i += 1) results.push({ page: p, ...(await survey(page, url, i, name, lane)) });
      }
    } finally {
      await browser.disconnect();
    }
    return results;
  }

  /** Surveys the pages in every lane at once (a page each, in turn); the results in page order.
   *  The e2e sites' pages (`/shop/...`, no file) stay on the first lane's server, the harness's. */
  async function surveyAll(name, pages) {
    const ofLane = lanes.map(() => []);
    pages.forEach((p, i) => ofLane[/\.html$/.test(p) ? i % lanes.length : 0].push(p));
    const done = await Promise.all(lanes.map((lane, i) => surveyLane(`${name}-${i + 1}`, ofLane[i], lane)));
    const results = done.flat();
    return pages.flatMap((p) => results.filter((r) => r.page === p));
  }

  const show = (list) => list.map((r) => `${r.page} ${r.gesture} "${r.label}" (${r.kind}${r.shown ? `, asked as ${r.shown}` : ''})`).join('\n');
  /** What a held (and denied) gesture let reach the server. */
  const leaks = (results) => results.filter((r) => r.held && r.reached.length).map((r) => `${r.page} "${r.label}": ${r.reached.join(', ')}`);
  /** The same, counting every request the gesture made, GETs too (the third set's links). */
  const anyLeaks = (results) => results.filter((r) => r.held && r.requested.length).map((r) => `${r.page} "${r.label}": ${r.requested.join(', ')}`);

  test('harmless gestures pass at once and sensitive ones are held, in every language and kind', async () => {
    const pages = [...files.map((f) => `/fixtures/${f}`), '/shop/checkout', '/acme/rocket/settings', '/account/security', '/social/home'];
    const results = await surveyAll('surveyor', pages);
    const harmless = results.filter((r) => r.expect === 'pass');
    const sensitive = results.filter((r) => r.expect === 'held');
    const falsePositives = harmless.filter((r) => r.held);
    const falseNegatives = sensitive.filter((r) => !r.held);
    console.log(
      `# ${results.length} gestures on ${new Set(results.map((r) => r.page)).size} pages: ` +
        `${falsePositives.length} of ${harmless.length} harmless ones held (false positives), ` +
        `${falseNegatives.length} of ${sensitive.length} sensitive ones not held (false negatives)`,
    );
    figures('fixtures (tuned on)', results);
    assert.deepEqual(falsePositives, [], `harmless gestures held:\n${show(falsePositives)}`);
    assert.deepEqual(falseNegatives, [], `sensitive gestures not held:\n${show(falseNegatives)}`);
    assert.deepEqual(leaks(results), [], 'nothing denied reaches the server');
  });

  /** A held-out set's figures per kind and mistakes, printed; what is asserted: no leak. */
  function reportHeldOut(name, results, leaked = leaks) {
    figures(name, results);
    const missed = results.filter((r) => r.expect === 'held' && !r.held);
    const asked = results.filter((r) => r.expect === 'pass' && r.held);
    if (missed.length) console.log(`# ${name}: sensitive not held:\n${show(missed)}`);
    if (asked.length) console.log(`# ${name}: harmless held:\n${show(asked)}`);
    assert.deepEqual(leaked(results), [], 'nothing denied reaches the server');
  }

  test('the held-out pages: figures per kind, and nothing denied reaches a server', async () => {
    reportHeldOut('held-out (never tuned on)', await surveyAll('heldout', heldout.files.map((f) => `/heldout/${f}`)));
  });

  // The second set in parts, each well within the harness's 600 s per test; figures at the end.
  const PARTS = 3;
  const secondSet = [];
  for (let part = 0; part < PARTS; part += 1) {
    test(`the second set (tuned on from bb08f4a), part ${part + 1} of ${PARTS}: its marks, and nothing denied reaches a server`, async () => {
      const pages = heldout2.files.filter((f, i) => i % PARTS === part).map((f) => `/heldout-2/${f}`);
      const results = await surveyAll(`heldout2-${part + 1}`, pages);
      secondSet.push(...results);
      assert.deepEqual(leaks(results), [], 'nothing denied reaches the server');
      if (part === PARTS - 1) reportHeldOut('held-out 2 (tuned on from bb08f4a)', secondSet);
      const wrong = results.filter((r) => (r.expect === 'held') !== r.held && !HELDOUT_2_KNOWN.includes(`${r.page} ${r.label}`));
      assert.deepEqual(wrong, [], `marks not kept:\n${show(wrong)}`);
    });
  }

  /** A set written blind (other apps again), in parts, each well within the harness's 600 s per
   * test: its figures printed after the last part; a denied gesture must send nothing at all to
   * a server, not even a GET. `set` is read once the harness is up. */
  function surveyBlindSet(ordinal, n, set, parts, { older = false, tuned = 'never tuned on' } = {}) {
    const all = [];
    const skip = older && !SURVEY_ALL && 'an older blind set: ./dev survey';
    for (let part = 0; part < parts; part += 1) {
      test(`the ${ordinal} held-out set, part ${part + 1} of ${parts}: nothing denied reaches a server`, { skip }, async () => {
        const pages = set().files.filter((f, i) => i % parts === part).map((f) => `/heldout-${n}/${f}`);
        const results = await surveyAll(`heldout${n}-${part + 1}`, pages);
        all.push(...results);
        assert.deepEqual(anyLeaks(results), [], 'nothing denied reaches the server');
        if (part === parts - 1) reportHeldOut(`held-out ${n} (${tuned})`, all, anyLeaks);
      });
    }
  }
  // tests/fixtures/gestures-heldout-3/: 20 pages, ~200 gestures.
  surveyBlindSet('third', 3, () => heldout3, 3, { older: true });
  // tests/fixtures/gestures-heldout-4/: 20 pages, ~300 gestures.
  surveyBlindSet('fourth', 4, () => heldout4, 4, { older: true });
  // tests/fixtures/gestures-heldout-5/: 20 pages, ~400 gestures.
  surveyBlindSet('fifth', 5, () => heldout5, 4, { older: true, tuned: 'tuned on from f3a9078' });
  // tests/fixtures/gestures-heldout-6/: 20 pages, ~400 gestures.
  surveyBlindSet('sixth', 6, () => heldout6, 4, { older: true, tuned: 'tuned on from 643bb10' });
  // tests/fixtures/gestures-heldout-7/: 20 pages, ~480 gestures.
  surveyBlindSet('seventh', 7, () => heldout7, 5);
});
