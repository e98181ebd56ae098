// The label a script's click lends to the write its handler sends (issue 28; the outside red
// team's run 3, findings 1 and 3), end to end in real Chromium through an agent's own endpoint:
// whatever the agent fires after the click (a pointerdown on the window, a mousedown on the body,
// a click on "Close", a release of the button itself after its click) and whichever realm the handler writes through (a same-origin frame's
// `fetch`), the write of "Pay €1,240.00" or "Delete this repository" is asked about, shown with
// that button, and a refusal keeps it from the server. Harmless: after a refused "Pay", a click
// on "Add to cart" sends its write at once. Also the forms of one operation the request rule
// reads (finding 6): each is asked about.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { connectAgent, pollFor, RawCdp, sleep, startHarness, withTimeout } from './harness.mjs';

const WAIT_MS = 30_000;
const QUESTION = '#approvals li.gesture[data-request-id]';

function page(body) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>t</title></head><body>${body}</body></html>`;
}

// The site's handlers write to /api/v1/ops after `ms` (the page's query), as a payment SDK may.
const SEND = `fetch('/api/v1/ops', {method:'POST', headers:{'content-type':'application/json'}, body: JSON.stringify({op:'x7', amount:124000})})`;
const MS = `Number(new URLSearchParams(location.search).get('ms') ?? 0)`;
const PAGES = {
  '/labels/pay': page(`<p>Order total: <strong>€1,240.00</strong></p>
<button id="b" type="button">Pay €1,240.00</button> <button id="c" type="button">Close</button>
<button id="cart" type="button">Add to cart</button>
<script>document.getElementById('b').addEventListener('click', () => setTimeout(() => ${SEND}, ${MS}));
document.getElementById('cart').addEventListener('click', () => fetch('/api/v1/cart', {method:'POST', body:'{"item":"boots"}'}));</script>`),
  '/labels/delete': page(`<h1>acme/rocket settings</h1><button id="b" type="button">Delete this repository</button>
<script>document.getElementById('b').addEventListener('click', () => setTimeout(() => ${SEND}, ${MS}));</script>`),
  // The handler writes through a same-origin frame's realm: the request is the frame's.
  '/labels/realm': page(`<p>Order total: <strong>€1,240.00</strong></p><button id="b" type="button">Pay €1,240.00</button>
<iframe id="f" src="/labels/blank" style="display:none"></iframe>
<script>document.getElementById('b').addEventListener('click', () => document.getElementById('f').contentWindow.${SEND});</script>`),
  '/labels/blank': page('<p>blank</p>'),
  // A single-page app's link and a GET form's button whose handlers cancel the navigation and
  // write instead (run 4, finding 1).
  '/labels/spa': page(`<p>Order total: <strong>€1,240.00</strong></p><a id="b" href="/checkout/pay">Pay €1,240.00</a>
<script>document.getElementById('b').addEventListener('click', (e) => { e.preventDefault(); setTimeout(() => ${SEND}, ${MS}); });</script>`),
  '/labels/getform': page(`<h1>acme/rocket settings</h1><form action="/search" method="get"><button id="b">Delete this repository</button></form>
<script>document.getElementById('b').addEventListener('click', (e) => { e.preventDefault(); setTimeout(() => ${SEND}, ${MS}); });</script>`),
  // A GET form sent by `fetch` from its submit handler (a framework's form): the click that
  // submitted it read no page.
  '/labels/getsubmit': page(`<h1>acme/rocket settings</h1><form id="f" action="/search" method="get"><button id="b">Delete this repository</button></form>
<script>document.getElementById('f').addEventListener('submit', (e) => { e.preventDefault(); setTimeout(() => ${SEND}, ${MS}); });</script>`),
};

// [what, page, what the agent runs in the page, the button shown]
const LABELS = [
  ['a script click on Pay, then a pointerdown on the window in the same task', '/labels/pay?ms=0',
    () => { document.getElementById('b').click(); window.dispatchEvent(new Event('pointerdown')); }, 'Pay €1,240.00'],
  ['a script click on Delete, then a pointerdown on the window', '/labels/delete?ms=0',
    () => { document.getElementById('b').click(); window.dispatchEvent(new Event('pointerdown')); }, 'Delete this repository'],
  ['a script click on Pay (its write 1.5 s later), a mousedown on the body 200 ms later', '/labels/pay?ms=1500',
    () => { document.getElementById('b').click(); setTimeout(() => document.body.dispatchEvent(new MouseEvent('mousedown', { bubbles: true })), 200); },
    'Pay €1,240.00'],
  ['a script click on Pay (its write 1.5 s later), a script click on Close 200 ms later', '/labels/pay?ms=1500',
    () => { document.getElementById('b').click(); setTimeout(() => document.getElementById('c').click(), 200); }, 'Pay €1,240.00'],
  ['a script click on an SPA link "Pay", then a mouseup on it', '/labels/spa?ms=0',
    () => { const b = document.getElementById('b'); b.click(); b.dispatchEvent(new MouseEvent('mouseup', { bubbles: true })); },
    'Pay €1,240.00'],
  ["a script click on a GET form's Delete, then a pointerup on it 200 ms later", '/labels/getform?ms=1500',
    () => { const b = document.getElementById('b'); b.click(); setTimeout(() => b.dispatchEvent(new PointerEvent('pointerup', { bubbles: true })), 200); },
    'Delete this repository'],
  ["a script click on a GET form's Delete whose submit handler sends it by fetch", '/labels/getsubmit?ms=0',
    () => document.getElementById('b').click(), 'Delete this repository'],
  ["Pay's handler writes through a same-origin frame's fetch", '/labels/realm',
    () => document.getElementById('b').click(), 'Pay €1,240.00'],
];

// [what, how the agent's raw session gets to the page]: documents loaded while the tab's `Page`
// domain is off for every client (red team run 6, item 4). Chrome runs no script added for new
// documents on a session whose Page is off, and `Page.disable` forgets them: the click hook has
// to be there anyway.
const PAGE_OFF = [
  ['never enabling Page: about:blank, then Page.navigate', async (cdp, url) => {
    const session = await rawTab(cdp, 'about:blank');
    await cdp.send(cdp.nextId++, 'Page.navigate', { url }, session);
    return session;
  }],
  ["the first document of Target.createTarget {url}, Page never enabled", (cdp, url) => rawTab(cdp, url)],
  ['Page.enable, Page.disable, then Page.navigate', async (cdp, url) => {
    const session = await rawTab(cdp, 'about:blank');
    for (const method of ['Page.enable', 'Page.disable']) await cdp.send(cdp.nextId++, method, {}, session);
    await cdp.send(cdp.nextId++, 'Page.navigate', { url }, session);
    return session;
  }],
];

/** A new tab of the agent at `url`, attached flat; its sessionId. Nothing enabled. */
async function rawTab(cdp, url) {
  const created = await cdp.send(cdp.nextId++, 'Target.createTarget', { url });
  const attached = await cdp.send(cdp.nextId++, 'Target.attachToTarget', { targetId: created.result.targetId, flatten: true });
  return attached.result.sessionId;
}

// [what, path, fetch init]: the same deletion or payment in the forms servers take.
const J = { 'content-type': 'application/json' };
const FORMS = [
  ['a GraphQL block string with a lone quote before the mutation field', '/api/graphql', { method: 'POST', headers: J,
    body: JSON.stringify({ query: 'mutation { addComment(body: """ " """) { id } deleteRepository(input: {repositoryId: "R_1"}) { clientMutationId } }' }) }],
  ['an application/graphql body', '/api/graphql', { method: 'POST', headers: { 'content-type': 'application/graphql' },
    body: 'mutation { deleteRepository(input: {repositoryId: "R_1"}) { clientMutationId } }' }],
  ['JSON-RPC 1.0 (no jsonrpc member)', '/api/rpc', { method: 'POST', headers: J,
    body: JSON.stringify({ method: 'deleteRepository', params: ['acme/rocket'], id: 1 }) }],
  ["bitcoind's sendtoaddress as text/plain", '/api/rpc', { method: 'POST', headers: { 'content-type': 'text/plain' },
    body: JSON.stringify({ method: 'sendtoaddress', params: ['bc1qxy', 1.24], id: 1 }) }],
  ['a POST with X-HTTP-Method-Override: DELETE', '/acme/rocket', { method: 'POST', headers: { 'X-HTTP-Method-Override': 'DELETE' } }],
  ['a POST with X-HTTP-Method: DELETE', '/acme/rocket', { method: 'POST', headers: { 'X-HTTP-Method': 'DELETE' } }],
  // Held on main too (the red team's FormData was built in Node, and went as "{}"): kept so it stays so.
  ['a POST with _method=DELETE in a FormData body built in the page', '/acme/rocket', { method: 'POST', formMethod: 'DELETE' }],
  ['an XML-RPC call', '/api/rpc', { method: 'POST', headers: { 'content-type': 'text/xml' },
    body: '<?xml version="1.0"?><methodCall><methodName>deleteRepository</methodName><params><param><value><string>acme/rocket</string></value></param></params></methodCall>' }],
];

describe("the label a script's click lends, and the forms of one operation", { timeout: 900_000 }, () => {
  let h;
  let panel;
  const writes = [];

  before(async () => {
    const html = (body) => (req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(body);
    };
    const record = (req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        writes.push(`${req.method} ${new URL(req.url, 'http://x').pathname} ${Buffer.concat(chunks).toString().slice(0, 200)}`);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
    };
    const pages = Object.fromEntries(Object.entries(PAGES).map(([p, body]) => [p, html(body)]));
    for (const p of ['/api/v1/ops', '/api/v1/cart', '/api/graphql', '/api/rpc', '/acme/rocket']) pages[p] = record;
    const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'tabtunnel-labels-'));
    const policy = path.join(dir, 'policy.toml');
    fs.writeFileSync(policy, 'gesture_timeout = 12\n');
    h = await startHarness({ name: 'gestures-labels', share: false, extraPages: pages, daemonArgs: ['--policy', policy] });
    panel = await h.openPanel();
  });

  after(async () => {
    await h?.close();
  });

  const url = (p) => `${h.pageServerUrl}${p}`;
  const to = (p) => writes.filter((w) => w.split(' ')[1] === p).length;

  /** The question shown now, within WAIT_MS, or null. */
  async function question(ms = WAIT_MS) {
    const shown = await panel.waitForSelector(QUESTION, { timeout: ms }).catch(() => null);
    if (!shown) return null;
    return panel.$eval(QUESTION, (li) => ({
      id: li.dataset.requestId,
      element: li.querySelector('.element')?.textContent,
      text: li.textContent.replace(/\s+/g, ' '),
    }));
  }

  async function deny(id) {
    await panel.click(`#approvals li[data-request-id="${id}"] button[data-answer="deny"]`);
    await panel.waitForSelector(`#approvals li[data-request-id="${id}"]`, { hidden: true, timeout: WAIT_MS });
  }

  for (const [i, [what, at, act, button]] of LABELS.entries()) {
    test(`${what}: asked, shown with "${button}"; Deny keeps it from the server`, async () => {
      const before = to('/api/v1/ops');
      const browser = await connectAgent(h, `labels-${i}`, 120_000);
      try {
        const tab = await browser.newPage();
        await tab.goto(url(at));
        await sleep(300); // the frame's document is in
        await tab.evaluate(act);
        const q = await question();
        assert.ok(q, `${what}: nobody was asked; the server got ${to('/api/v1/ops') - before} write(s)`);
        assert.equal(q.element, button, q.text);
        await deny(q.id);
        await sleep(2_000); // past the handler's 1.5 s
        assert.equal(to('/api/v1/ops'), before, `${what} reached the server`);
      } finally {
        await browser.disconnect();
      }
    });
  }

  test('after a refused "Pay", a click on "Add to cart" sends its write at once', async () => {
    const browser = await connectAgent(h, 'labels-cart', 120_000);
    try {
      const tab = await browser.newPage();
      await tab.goto(url('/labels/pay?ms=0'));
      await tab.evaluate(() => document.getElementById('b').click());
      const q = await question();
      assert.ok(q, 'Pay was not asked about');
      await deny(q.id);
      const carts = to('/api/v1/cart');
      await tab.evaluate(() => document.getElementById('cart').click());
      await withTimeout((async () => { while (to('/api/v1/cart') === carts) await sleep(100); })(), WAIT_MS, 'the cart write');
      assert.equal(await panel.$(QUESTION), null, 'the cart write was asked about');
    } finally {
      await browser.disconnect();
    }
  });

  for (const [i, [what, open]] of PAGE_OFF.entries()) {
    test(`a script click on Pay in a document loaded with Page off (${what}): asked; Deny keeps it`, async () => {
      const before = to('/api/v1/ops');
      const endpoint = await (await fetch(`${h.agentEndpoint(`page-off-${i}`)}/json/version`)).json();
      const cdp = await RawCdp.open(endpoint.webSocketDebuggerUrl);
      cdp.nextId = 1;
      try {
        const session = await open(cdp, url('/labels/pay?ms=0'));
        const evaluate = async (expression) =>
          (await cdp.send(cdp.nextId++, 'Runtime.evaluate', { expression, returnByValue: true }, session)).result?.result?.value;
        await pollFor(
          async () => (await evaluate(`location.pathname + document.readyState`)) === '/labels/paycomplete',
          WAIT_MS,
          `${what}: the page loaded`,
        );
        await evaluate(`document.getElementById('b').click(), 1`);
        const q = await question();
        assert.ok(q, `${what}: nobody was asked; the server got ${to('/api/v1/ops') - before} write(s)`);
        assert.equal(q.element, 'Pay €1,240.00', q.text);
        await deny(q.id);
        await sleep(500);
        assert.equal(to('/api/v1/ops'), before, `${what} reached the server`);
      } finally {
        cdp.close();
      }
    });
  }

  for (const [i, [what, at, init]] of FORMS.entries()) {
    test(`${what}: asked; Deny keeps it from the server`, async () => {
      const where = at.split('?')[0];
      const before = to(where);
      const browser = await connectAgent(h, `forms-${i}`, 120_000);
      try {
        const tab = await browser.newPage();
        await tab.goto(url('/labels/blank'));
        const sent = tab.evaluate(({ at, init }) => {
          if (init.formMethod) {
            const f = new FormData();
            f.append('_method', init.formMethod);
            init = { method: init.method, body: f };
          }
          return fetch(at, init).then((r) => r.status, (e) => e.message);
        }, { at, init });
        const q = await question();
        assert.ok(q, `${what}: nobody was asked; the server got ${to(where) - before} write(s)`);
        await deny(q.id);
        await withTimeout(sent, WAIT_MS, what);
        await sleep(300);
        assert.equal(to(where), before, `${what} reached the server`);
      } finally {
        await browser.disconnect();
      }
    });
  }
});
