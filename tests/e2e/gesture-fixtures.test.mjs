// The gesture guard's false-positive survey: an agent (puppeteer, through its own endpoint)
// acts on every element of the pages in tests/fixtures/gestures/ (written after real sites, in
// the vocabulary's languages) and on the e2e sites, and each one marked `data-expect="pass"`
// must go through without a question while each marked `data-expect="held"` must be held. The
// figures (how many of each, and any mistake) are printed for BENCHMARKS.md.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { gestureSites } from './gesture-sites.mjs';
import { REPO_ROOT, connectAgent, sleep, startHarness, withTimeout } from './harness.mjs';

const FIXTURES = path.join(REPO_ROOT, 'tests', 'fixtures', 'gestures');
const QUESTION = '#approvals li.gesture[data-request-id]';
/** How long after a gesture settles a question about the request it sent may still come. */
const LATE_QUESTION_MS = 700;

/** The fixtures as page routes, and every `/fx/...` path they link or post to. */
function fixtureRoutes(writes) {
  const html = (body, type = 'text/html; charset=utf-8') => (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      writes.push(`${req.method} ${new URL(req.url, 'http://x').pathname}`);
      req.resume();
    }
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body);
  };
  const routes = {};
  const files = fs.readdirSync(FIXTURES).filter((f) => f.endsWith('.html'));
  for (const file of [...files, 'style.css']) {
    const body = fs.readFileSync(path.join(FIXTURES, file), 'utf8');
    routes[`/fixtures/${file}`] = html(body, file.endsWith('.css') ? 'text/css' : undefined);
    for (const [, target] of body.matchAll(/(?:href|action)="(\/fx\/[^"?#]*)/g)) {
      routes[target] = html('<!doctype html><title>done</title><p>done</p>');
    }
  }
  return { routes, files };
}

describe('the gesture guard on pages written after real sites', { timeout: 900_000 }, () => {
  let h;
  let panel;
  let files;
  const writes = [];

  before(async () => {
    const fixtures = fixtureRoutes(writes);
    files = fixtures.files;
    const sites = gestureSites();
    h = await startHarness({ name: 'gesture-fixtures', share: false, extraPages: { ...sites.pages, ...fixtures.routes } });
    panel = await h.openPanel();
  });

  after(async () => {
    await h?.close();
  });

  /** Acts on the `index`th marked element of `url`; whether the guard held it. */
  async function survey(page, url, index) {
    await page.goto(url);
    const handle = (await page.$$('[data-expect]'))[index];
    const how = await handle.evaluate((el) => ({ expect: el.dataset.expect, gesture: el.dataset.gesture ?? 'click', label: el.getAttribute('aria-label') || el.textContent.trim() || el.name }));
    const acting = (how.gesture === 'enter' ? handle.focus().then(() => page.keyboard.press('Enter')) : handle.click()).then(
      () => 'done',
      (e) => e.message,
    );
    let held = false;
    // Denies the question shown, if any (the panel may redraw under a click: then again).
    const deny = async () => {
      const id = await panel.$eval(QUESTION, (li) => li.dataset.requestId).catch(() => null);
      if (!id) return false;
      const item = `#approvals li[data-request-id="${id}"]`;
      for (let attempt = 0; attempt < 10; attempt += 1) {
        await panel.click(`${item} button[data-answer="deny"]`).catch(() => {});
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
    return { ...how, held: held || /gesture guard/.test(outcome) };
  }

  test('harmless gestures pass at once and sensitive ones are held, in every language', async () => {
    const browser = await connectAgent(h, 'surveyor', 60_000);
    const results = [];
    try {
      const page = await browser.newPage();
      const pages = [...files.map((f) => `/fixtures/${f}`), '/shop/checkout', '/acme/rocket/settings', '/account/security'];
      for (const p of pages) {
        const url = `${h.pageServerUrl}${p}`;
        await page.goto(url);
        const count = (await page.$$('[data-expect]')).length;
        for (let i = 0; i < count; i += 1) results.push({ page: p, ...(await survey(page, url, i)) });
      }
    } finally {
      await browser.disconnect();
    }
    const harmless = results.filter((r) => r.expect === 'pass');
    const sensitive = results.filter((r) => r.expect === 'held');
    const falsePositives = harmless.filter((r) => r.held);
    const falseNegatives = sensitive.filter((r) => !r.held);
    console.log(
      `# ${results.length} gestures on ${new Set(results.map((r) => r.page)).size} pages: ` +
        `${falsePositives.length} of ${harmless.length} harmless ones held (false positives), ` +
        `${falseNegatives.length} of ${sensitive.length} sensitive ones not held (false negatives)`,
    );
    const show = (list) => list.map((r) => `${r.page} ${r.gesture} "${r.label}"`).join('\n');
    assert.deepEqual(falsePositives, [], `harmless gestures held:\n${show(falsePositives)}`);
    assert.deepEqual(falseNegatives, [], `sensitive gestures not held:\n${show(falseNegatives)}`);
  });
});
