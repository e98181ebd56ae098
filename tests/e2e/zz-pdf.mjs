import fs from 'node:fs';
import { gestureSites } from './gesture-sites.mjs';
import { connectAgent, sleep, startHarness } from './harness.mjs';
const site = gestureSites();
const pdf = '%PDF-1.1\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj 3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF';
site.pages['/x.pdf'] = (req, res) => { res.writeHead(200, { 'content-type': 'application/pdf' }); res.end(pdf); };
const h = await startHarness({ name: 'gdbg', share: false, extraPages: site.pages });
const t0 = Date.now();
const log = (...a) => console.log(((Date.now() - t0) / 1000).toFixed(1), ...a);
try {
  const panel = await h.openPanel();
  h.worker.on('console', (m) => log('SW:', m.text().slice(0, 150)));
  const browser = await connectAgent(h, 'attacker', 60_000);
  const page = await browser.newPage();
  await page.goto(`${h.pageServerUrl}/shop/checkout`);
  page.evaluate(() => { fetch('/shop/api/pay', { method: 'POST', body: '{}' }); }).catch(() => {});
  await panel.waitForSelector('#approvals li.gesture', { timeout: 10000 });
  log('held; writes', site.writes);
  const rule = await h.sw(async (url) => {
    const tabs = await chrome.tabs.query({});
    const tabId = tabs.find((t) => t.url.includes('/shop/checkout')).id;
    await chrome.declarativeNetRequest.updateSessionRules({ addRules: [{ id: 999999, priority: 100, action: { type: 'block' }, condition: { urlFilter: '|' + url + '|', requestMethods: ['post'], tabIds: [tabId] } }] });
    return tabId;
  }, `${h.pageServerUrl}/shop/api/pay`);
  log('DNR rule for tab', rule);
  await page.evaluate(() => { const e = document.createElement('embed'); e.src = '/x.pdf'; e.type = 'application/pdf'; e.width = 200; e.height = 200; document.body.append(e); }).catch((e) => log('embed err', e.message));
  await sleep(3000);
  log('after embed; writes', site.writes);
  log('question still there?', !!(await panel.$('#approvals li.gesture')));
} finally {
  await h.close();
}
process.exit(0);
