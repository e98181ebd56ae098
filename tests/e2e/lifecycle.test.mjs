// Shared tabs coming and going while a client is connected through tabtunnel: unsharing from
// the side panel, closing the tab, and the extension's service worker restarting.

import assert from 'node:assert/strict';
import { after, afterEach, describe, test } from 'node:test';

import { FORM_TITLE, RawCdp, connectAgent, connectPuppeteer, pollFor, sharedPageUrls, sleep, startHarness, withTimeout } from './harness.mjs';

const WAIT_MS = 20_000;

/** A one-page PDF document. */
function tinyPdf() {
  const stream = 'BT /F1 24 Tf 20 100 Td (tabtunnel) Tj ET';
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let pdf = '%PDF-1.4\n';
  const offsets = objects.map((object, i) => {
    const at = pdf.length;
    pdf += `${i + 1} 0 obj\n${object}\nendobj\n`;
    return at;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  return `${pdf}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
}

/** Resolves when the client's browser loses the page target with `url`. */
function pageGone(browser, url) {
  return new Promise((resolve) => {
    browser.on('targetdestroyed', (target) => {
      if (target.type() === 'page' && target.url() === url) resolve();
    });
  });
}


describe('shared tabs coming and going', { timeout: 240_000 }, () => {
  const harnesses = [];
  const browsers = [];

  afterEach(async () => {
    for (const b of browsers.splice(0)) await b.disconnect().catch(() => {});
  });

  after(async () => {
    for (const h of harnesses) await h.close();
  });

  async function harness(name, options = {}) {
    const h = await startHarness({ name, ...options });
    harnesses.push(h);
    return h;
  }

  test('turning "Share this tab" off detaches connected clients', async () => {
    const h = await harness('unshare');
    const browser = await connectPuppeteer(h);
    browsers.push(browser);
    const [page] = await browser.pages();
    assert.equal(await page.title(), FORM_TITLE);
    const gone = pageGone(browser, h.pageUrl);

    const toggle = `#share-toggle[data-tab-id="${h.tabId}"]`;
    assert.equal(await h.panel.$eval(toggle, (el) => el.checked), true);
    await h.panel.click(toggle);

    await withTimeout(gone, WAIT_MS, 'the client losing the unshared page', h.detail);
    await h.panel.waitForSelector(`#shared-tabs li[data-tab-id="${h.tabId}"]`, { hidden: true, timeout: WAIT_MS });
    assert.deepEqual(await sharedPageUrls(h), []);
    assert.deepEqual((await browser.pages()).map((p) => p.url()), []);
    // The tab itself lives on for the user.
    assert.equal(await h.testPage.evaluate(() => document.title), FORM_TITLE);
  });

  test('closing a shared tab detaches connected clients', async () => {
    const h = await harness('close');
    const browser = await connectPuppeteer(h);
    browsers.push(browser);
    assert.equal((await browser.pages()).length, 1);
    const gone = pageGone(browser, h.pageUrl);
    await h.testPage.close();
    await withTimeout(gone, WAIT_MS, 'the client losing the closed page', h.detail);
    assert.deepEqual(await sharedPageUrls(h), []);
  });

  test('a restarted service worker reconnects and re-attaches what was shared, with a clean session', async () => {
    const h = await harness('restart');
    // A first client leaves state behind in the tab's debugger session (Runtime enabled...).
    const first = await connectPuppeteer(h);
    browsers.push(first);
    const [page] = await first.pages();
    assert.equal(await page.evaluate(() => 1 + 1), 2);
    const gone = pageGone(first, h.pageUrl);

    // Stopped as it would be for a user (see `stopWorker`).
    const pageTargetId = h.testPage.target()._targetId;
    await h.stopWorker();
    const raw = await RawCdp.open(h.realBrowserWsEndpoint);
    try {
      await withTimeout(gone, WAIT_MS, 'clients hearing that the extension went away', h.detail);

      // Any extension event wakes the worker again; a reload of the shared tab is one.
      const attached = await raw.send(2, 'Target.attachToTarget', { targetId: pageTargetId, flatten: true });
      await raw.send(3, 'Page.reload', {}, attached.result.sessionId);
      await pollFor(
        async () => (await sharedPageUrls(h))?.includes(h.pageUrl),
        WAIT_MS,
        'the shared tab back in /json/list after the worker restarted',
        h.detail,
      );
    } finally {
      raw.close();
    }

    const second = await connectPuppeteer(h);
    browsers.push(second);
    const pages = await second.pages();
    assert.deepEqual(pages.map((p) => p.url()), [h.pageUrl]);
    // Needs the page's execution contexts, which only a clean debugger session reports.
    assert.equal(await withTimeout(pages[0].evaluate(() => 6 * 7), 15_000, 'evaluate after the restart', h.detail), 42);
    assert.equal(await pages[0].title(), FORM_TITLE);
  });

  test('two clients at once on one tab each get their execution contexts', async () => {
    const h = await harness('together');
    const first = await connectPuppeteer(h);
    browsers.push(first);
    const [firstPage] = await first.pages();
    assert.equal(await firstPage.evaluate(() => 1 + 1), 2);

    // The second client's Runtime.enable reaches a tab whose Runtime is already on: Chrome
    // would report no contexts to it, tabtunnel replays them.
    const second = await connectPuppeteer(h);
    browsers.push(second);
    const [secondPage] = await second.pages();
    assert.equal(await withTimeout(secondPage.evaluate(() => 2 + 2), 15_000, 'evaluate in the second client', h.detail), 4);

    await second.disconnect();
    // The first client is unaffected by the second leaving (no reset, its domains still on).
    await firstPage.click('#go');
    assert.equal(await withTimeout(firstPage.evaluate(() => 3 + 3), 15_000, 'evaluate in the first client', h.detail), 6);
    await firstPage.reload();
    assert.equal(await withTimeout(firstPage.evaluate(() => document.title), 15_000, 'evaluate after a reload', h.detail), FORM_TITLE);
  });

  test("a page showing a PDF: Chrome detaches the debugger, and the same target comes back", async () => {
    // Chrome's PDF viewer is another extension's page, and an extension's debugger is detached
    // when one loads in its tab. The tab is attached again at once, but the session's state is
    // gone, so its clients start over with the same target (docs/cdp-differences.md).
    const pdf = tinyPdf();
    const h = await harness('pdf', {
      extraPages: {
        '/doc.pdf': (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/pdf', 'cache-control': 'no-store' });
          res.end(pdf);
        },
      },
    });
    const browser = await connectAgent(h, 'reader');
    browsers.push(browser);
    const page = await browser.newPage();
    await page.goto(h.pageUrl);
    const targetId = page.target()._targetId;
    const back = browser.waitForTarget((t) => t.url().endsWith('/doc.pdf') && t !== page.target(), { timeout: WAIT_MS });
    const navigation = page.goto(`${h.pageServerUrl}/doc.pdf`).then(
      () => 'loaded',
      (e) => e.message,
    );
    const target = await back;
    assert.equal(target._targetId, targetId, 'the same target, created again');
    const again = await target.page();
    assert.equal(await withTimeout(again.evaluate(() => document.contentType), 15_000, 'evaluate in the PDF page', h.detail), 'application/pdf');
    assert.match(await navigation, /^loaded$|Navigating frame was detached/);
  });

  test('a client reconnecting to the same tab starts from a clean session', async () => {
    const h = await harness('reconnect');
    for (let round = 1; round <= 3; round += 1) {
      const browser = await connectPuppeteer(h);
      const [page] = await browser.pages();
      await page.evaluate((n) => {
        window.round = n;
      }, round);
      assert.equal(await withTimeout(page.evaluate(() => window.round), 15_000, `evaluate in round ${round}`, h.detail), round);
      await browser.disconnect();
      // Give the daemon a moment to see the socket close before the next round connects.
      await sleep(100);
    }
  });
});
