// The gesture guard reads the page as the browser will act (issue 26, item 4), end to end in
// real Chromium: a script's el.click() on a type=button "Delete this repository" whose handler
// posts to a neutral URL; a Rails page whose edit and button_to delete forms post to the same
// action (`_method` decides); a submitter's formmethod=post formaction=... inside a GET form;
// Enter in a form inside a closed shadow root, a script's submission of one in an open root; a
// label straight in a component whose button is in a closed root; a card dragged onto "Drop
// here to delete permanently" (red team B11), by the mouse, by a drag event, by a script's drop
// event, by a drag library's pointer events that let go back where they went down, or by a
// second finger while the first rests.
// Each is held until the human answers in the side panel, and their harmless neighbours pass at
// once. The site counts every write it receives.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { connectAgent, pollFor, sleep, startHarness, withTimeout } from './harness.mjs';

const WAIT_MS = 30_000;
const QUESTION = '#approvals li.gesture[data-request-id]';

function page(title, body) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;
}

const DANGER = page('Settings · acme/rocket', `
<h1>Danger Zone</h1>
<button id="delete" type="button">Delete this repository</button>
<button id="sort" type="button">Sort by name</button>
<dialog open><button id="delete-later" type="button">Delete this repository</button></dialog>
<script>
  const op = (n) => fetch('/api/v1/ops', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ op: n }) });
  document.getElementById('delete').addEventListener('click', () => op(7));
  // A handler that takes its time (an animation, a confirm step, a slow network): 3.5 s.
  document.getElementById('delete-later').addEventListener('click', () => setTimeout(() => op(8), 3500));
  document.getElementById('sort').addEventListener('click', () => op(1));
</script>`);

// What Rails' form_with and button_to write.
const RAILS = page('Edit repository', `
<form id="edit-form" action="/repos/1" method="post"><input type="hidden" name="_method" value="patch" autocomplete="off">
  <input type="hidden" name="authenticity_token" value="t0k"><label>Name <input name="repo[name]" value="rocket"></label>
  <button type="submit">Save</button></form>
<form id="delete-form" class="button_to" method="post" action="/repos/1"><input type="hidden" name="_method" value="delete" autocomplete="off">
  <button type="submit">Delete this repository</button><input type="hidden" name="authenticity_token" value="t0k"></form>`);

const SEARCH = page('Account', `
<form id="search" method="get" action="/account/search"><input id="q" name="q" type="search" aria-label="Search">
  <button id="go">Search</button>
  <button id="close" formmethod="post" formaction="/account/x1">Delete account</button></form>`);

// Components whose button lives in a shadow root and whose label is slotted into it from the
// light DOM (design systems' `<sl-button>Delete</sl-button>`), closed or open, and a harmless
// one beside them. Each button posts to a neutral URL.
const COMPONENTS = page('Repository settings', `
<h1>Settings</h1>
<x-closed id="closed"><span slot="label">Delete repository</span></x-closed>
<x-open id="open"><span>Delete branch</span></x-open>
<x-closed id="scripted"><span slot="label">Delete project</span></x-closed>
<x-closed id="star"><span slot="label">Star</span></x-closed>
<x-closed-bare id="bare">Delete workspace</x-closed-bare>
<script>
  const define = (name, mode) => customElements.define(name, class extends HTMLElement {
    constructor() {
      super();
      const root = this.attachShadow({ mode });
      root.innerHTML = mode === 'closed' ? '<button type="button"><slot name="label"></slot></button>' : '<button type="button"><slot></slot></button>';
      root.querySelector('button').addEventListener('click', () => fetch('/api/v1/ops', { method: 'POST', body: JSON.stringify({ op: this.id }) }));
    }
  });
  define('x-closed', 'closed');
  define('x-open', 'open');
  // Its text straight in its default slot, the button in a closed root (third red team, N5).
  customElements.define('x-closed-bare', class extends HTMLElement {
    constructor() {
      super();
      const root = this.attachShadow({ mode: 'closed' });
      root.innerHTML = '<button type="button" style="min-width:200px;min-height:28px"><slot></slot></button>';
      root.querySelector('button').addEventListener('click', () => fetch('/api/v1/ops', { method: 'POST', body: JSON.stringify({ op: this.id }) }));
    }
  });
</script>`);

// Checkout forms inside components' shadow roots, closed and open (red team B10): Enter in the
// field submits the form, whose button says what it does; the action URL is neutral. And a
// search form in a closed root, harmless.
const SHADOW_FORMS = page('Checkout', `
<h1>Checkout</h1>
<x-closed-form id="closed-pay"></x-closed-form>
<x-open-form id="open-pay"></x-open-form>
<x-closed-search id="closed-search"></x-closed-search>
<script>
  const form = (action, method, label) => '<form method="' + method + '" action="' + action + '"><input name="x" value="1" style="min-width:220px;min-height:28px"><button>' + label + '</button></form>';
  const define = (name, mode, html) => customElements.define(name, class extends HTMLElement {
    constructor() { super(); this.attachShadow({ mode }).innerHTML = html; }
  });
  define('x-closed-form', 'closed', form('/api/v1/n/closed', 'post', 'Pay €1,240.00'));
  define('x-open-form', 'open', form('/api/v1/n/open', 'post', 'Pay €1,240.00'));
  define('x-closed-search', 'closed', form('/account/search', 'get', 'Search'));
</script>`);

// A board whose drop zones write to a neutral URL from their drop handlers (red team B11):
// "Move to Done" is harmless, "Drop here to delete permanently" is not.
const BOARD = page('Sprint board', `
<style>.b { display: block; margin: 24px; width: 320px; height: 60px; border: 1px solid #888 }</style>
<h1>Sprint board</h1>
<div id="card" class="b" draggable="true">Card #7</div>
<div id="done" class="b">Move to Done</div>
<div id="trash" class="b">Drop here to delete permanently</div>
<script>
  document.getElementById('card').addEventListener('dragstart', (e) => e.dataTransfer.setData('text/plain', 'card-7'));
  for (const [id, op] of [['done', 2], ['trash', 9]]) {
    const zone = document.getElementById(id);
    zone.addEventListener('dragover', (e) => e.preventDefault());
    zone.addEventListener('drop', (e) => {
      e.preventDefault();
      fetch('/api/v1/ops', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ op }) });
    });
  }
</script>`);

// A board whose drag is its own (pointer events, as drag libraries do it): what the last move
// was over when the pointer lets go is where the card drops, wherever the release lands.
const POINTER_BOARD = page('Sprint board', `
<style>.b { display: block; margin: 24px; width: 320px; height: 60px; border: 1px solid #888; touch-action: none }</style>
<h1>Sprint board</h1>
<div id="card" class="b">Card #7</div>
<div id="trash" class="b">Drop here to delete permanently</div>
<script>
  let dragging = false;
  let over = null;
  document.getElementById('card').addEventListener('pointerdown', () => { dragging = true; over = null; });
  addEventListener('pointermove', (e) => { if (dragging) over = document.elementFromPoint(e.clientX, e.clientY); });
  addEventListener('pointerup', () => {
    if (!dragging) return;
    dragging = false;
    if (over && over.closest('#trash')) {
      fetch('/api/v1/ops', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ op: 10 }) });
    }
  });
</script>`);

function sites() {
  const writes = [];
  const write = (req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      writes.push(`${req.method} ${new URL(req.url, 'http://x').pathname} ${body}`);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(page('Done', '<p id="done">done</p>'));
    });
  };
  const html = (body) => (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return write(req, res);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(body);
  };
  const pages = {
    '/acme/rocket/danger': html(DANGER),
    '/repos/1/edit': html(RAILS),
    '/account/settings': html(SEARCH),
    '/account/search': html(page('Search', '<p>results</p>')),
    '/acme/rocket/components': html(COMPONENTS),
    '/shop/checkout': html(SHADOW_FORMS),
    '/board': html(BOARD),
    '/pointer-board': html(POINTER_BOARD),
  };
  for (const p of ['/api/v1/ops', '/repos/1', '/account/x1', '/api/v1/n/closed', '/api/v1/n/open']) pages[p] = write;
  return { pages, writes };
}

describe('the gesture guard reads the page as the browser will act', { timeout: 600_000 }, () => {
  let h;
  let site;
  let panel;

  before(async () => {
    site = sites();
    const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'tabtunnel-reading-'));
    const policy = path.join(dir, 'policy.toml');
    fs.writeFileSync(policy, 'gesture_timeout = 20\n');
    h = await startHarness({ name: 'gesture-reading', share: false, extraPages: site.pages, daemonArgs: ['--policy', policy] });
    panel = await h.openPanel();
  });

  after(async () => {
    await h?.close();
  });

  const url = (p) => `${h.pageServerUrl}${p}`;
  const writesTo = (p) => site.writes.filter((w) => w.split(' ')[1] === p);

  async function question() {
    await panel.waitForSelector(QUESTION, { timeout: WAIT_MS }).catch(async (e) => {
      const html = await panel.$eval('body', (b) => b.innerHTML).catch((x) => x.message);
      throw new Error(`${e.message}\npanel: ${html.slice(0, 3000)}\n${h.detail()}`);
    });
    return panel.$eval(QUESTION, (li) => ({
      id: li.dataset.requestId,
      text: li.textContent,
      element: li.querySelector('.element')?.textContent,
      form: li.querySelector('.form')?.textContent,
      sent: li.querySelector('.sent')?.textContent,
    }));
  }

  async function answer(id, what) {
    await panel.click(`${QUESTION.replace('[data-request-id]', `[data-request-id="${id}"]`)} button[data-answer="${what}"]`);
    await panel.waitForSelector(`#approvals li[data-request-id="${id}"]`, { hidden: true, timeout: WAIT_MS });
  }
  const deny = (id) => answer(id, 'deny');

  const outcome = (promise) => promise.then(() => 'done', (e) => e.message);

  test("a script's click on a type=button 'Delete this repository' holds the write its handler sends to a neutral URL; 'Sort by name' passes", async () => {
    // puppeteer's $eval is Runtime.callFunctionOn, evaluate Runtime.evaluate. One agent per
    // route: a refusal stands a while for the same agent.
    const routes = [
      ['el.click()', (page) => page.$eval('#delete', (el) => el.click())],
      ['dispatchEvent', (page) => page.evaluate(() => document.querySelector('#delete').dispatchEvent(new MouseEvent('click', { bubbles: true })))],
      ['el.click() whose handler writes 3.5 s later', (page) => page.$eval('#delete-later', (el) => el.click())],
    ];
    for (const [i, [route, act]] of routes.entries()) {
      const browser = await connectAgent(h, `clicker-${i}`, 120_000);
      try {
        const page = await browser.newPage();
        await page.goto(url('/acme/rocket/danger'));
        // Harmless first: its write reaches the server, nobody is asked.
        const sorted = writesTo('/api/v1/ops').length;
        await page.evaluate(() => document.querySelector('#sort').click());
        await pollFor(() => writesTo('/api/v1/ops').length === sorted + 1, WAIT_MS, "the sort's write", h.detail);
        assert.equal(await panel.$(QUESTION), null, 'a harmless click was asked about');
        await act(page);
        const q = await question();
        assert.equal(q.element, 'Delete this repository', route);
        assert.match(q.sent, /POST .*\/api\/v1\/ops/, route);
        await deny(q.id);
        await sleep(300);
        assert.equal(writesTo('/api/v1/ops').length, sorted + 1, `${route}: the delete reached the server`);
        assert.ok(writesTo('/api/v1/ops').every((w) => w.endsWith('{"op":1}')), route);
      } finally {
        await browser.disconnect();
      }
    }
  });

  test("a press on a label slotted into a component's button (closed or open shadow root) is the button's, pressed or clicked by a script: 'Delete …' held, 'Star' passes", async () => {
    const browser = await connectAgent(h, 'slotted', 120_000);
    try {
      const page = await browser.newPage();
      await page.goto(url('/acme/rocket/components'));
      const before = writesTo('/api/v1/ops').length;
      await page.click('#star span');
      await pollFor(() => writesTo('/api/v1/ops').length === before + 1, WAIT_MS, "the star's write", h.detail);
      assert.equal(await panel.$(QUESTION), null, 'a harmless press was asked about');
      // (Labels of their own: a refusal stands a while for the same question.)
      const press = (id) => page.click(`#${id} span`);
      const script = (id) => page.$eval(`#${id} span`, (span) => span.click());
      const pressHost = (id) => page.click(`#${id}`);
      for (const [id, label, act] of [['closed', 'Delete repository', press], ['open', 'Delete branch', press], ['scripted', 'Delete project', script], ['bare', 'Delete workspace', pressHost]]) {
        const clicked = outcome(act(id));
        const q = await question();
        assert.equal(q.element, label, id);
        await deny(q.id);
        await clicked;
        await sleep(300);
        assert.deepEqual(writesTo('/api/v1/ops').slice(before + 1), [], `${id}: the delete reached the server`);
      }
    } finally {
      await browser.disconnect();
    }
  });

  test("Enter in a field of a form in a component's shadow root, closed or open, is read as that form's: 'Pay' held, a search passes", async () => {
    // A real press into the field, then a real Enter (a script cannot reach into a closed root).
    const pressInto = async (page, id) => {
      const box = await page.$eval(`#${id}`, (el) => el.getBoundingClientRect().toJSON());
      await page.mouse.click(box.x + 40, box.y + 14);
    };
    for (const id of ['closed', 'open']) {
      // (An agent each: a refusal stands a while for the same question.)
      const browser = await connectAgent(h, `shadow-form-${id}`, 120_000);
      try {
        const page = await browser.newPage();
        await page.goto(url('/shop/checkout'));
        await pressInto(page, `${id}-pay`);
        const pressed = outcome(page.keyboard.press('Enter'));
        const q = await question();
        assert.match(q.text, /Pay €1,240\.00/, id);
        assert.match(q.form ?? q.sent ?? '', new RegExp(`POST .*/api/v1/n/${id}`), id);
        await deny(q.id);
        await pressed;
        await sleep(300);
        assert.deepEqual(writesTo(`/api/v1/n/${id}`), [], `${id}: the payment reached the server`);
        if (id === 'closed') {
          await pressInto(page, 'closed-search');
          await Promise.all([page.waitForNavigation({ timeout: WAIT_MS }), page.keyboard.press('Enter')]);
          assert.match(page.url(), /\/account\/search\?x=1/);
          assert.equal(await panel.$(QUESTION), null, 'the search was asked about');
        }
      } finally {
        await browser.disconnect();
      }
    }
  });

  test("a form in a component's open shadow root that a script submits is read as that form's: 'Pay' held", async () => {
    // No click and no focus: only the form the submission is matched to names what it does.
    const browser = await connectAgent(h, 'shadow-form-script', 120_000);
    try {
      const page = await browser.newPage();
      await page.goto(url('/shop/checkout'));
      const submitted = outcome(page.evaluate(() => document.querySelector('#open-pay').shadowRoot.querySelector('form').requestSubmit()));
      const q = await question();
      assert.match(q.text, /Pay €1,240\.00/);
      assert.match(q.form ?? q.sent ?? '', /POST .*\/api\/v1\/n\/open/);
      await deny(q.id);
      await submitted;
      await sleep(300);
      assert.deepEqual(writesTo('/api/v1/n/open'), [], 'the payment reached the server');
    } finally {
      await browser.disconnect();
    }
  });

  test("a Rails delete form beside the edit form posting to the same action is read by its _method; the edit goes", async () => {
    const browser = await connectAgent(h, 'rails', 120_000);
    try {
      const page = await browser.newPage();
      await page.goto(url('/repos/1/edit'));
      const submitted = outcome(page.evaluate(() => document.querySelector('#delete-form').submit()));
      const q = await question();
      assert.match(q.text, /Delete this repository/);
      assert.match(q.sent, /DELETE .*\/repos\/1/);
      await deny(q.id);
      await withTimeout(submitted, WAIT_MS, 'the submission');
      await sleep(300);
      assert.equal(writesTo('/repos/1').length, 0, 'the delete reached the server');
      assert.equal(page.url(), url('/repos/1/edit'), 'the page stays');
      // The edit form, submitted the same way, reaches the server unasked.
      await page.evaluate(() => document.querySelector('#edit-form').submit());
      await pollFor(() => writesTo('/repos/1').length === 1, WAIT_MS, 'the edit', h.detail);
      assert.match(writesTo('/repos/1')[0], /_method=patch/);
      assert.equal(await panel.$(QUESTION), null, 'the edit was asked about');
    } finally {
      await browser.disconnect();
    }
  });

  test("a submitter's formmethod=post formaction=... in a GET form is read as the post it sends; the search passes", async () => {
    const browser = await connectAgent(h, 'closer', 120_000);
    try {
      const page = await browser.newPage();
      await page.goto(url('/account/settings'));
      await page.type('#q', 'keys');
      await Promise.all([page.waitForNavigation({ timeout: WAIT_MS }), page.click('#go')]);
      assert.equal(await panel.$(QUESTION), null, 'the search was asked about');
      await page.goto(url('/account/settings'));
      const click = outcome(page.click('#close'));
      const q = await question();
      assert.equal(q.element, 'Delete account');
      assert.match(q.form, /POST .*\/account\/x1/);
      await deny(q.id);
      assert.match(await withTimeout(click, WAIT_MS, 'the denied click'), /gesture guard/);
      await sleep(300);
      assert.equal(writesTo('/account/x1').length, 0, 'the post reached the server');
    } finally {
      await browser.disconnect();
    }
  });

  test("a card dragged onto 'Drop here to delete permanently' is held, dragged by the mouse, dropped by a drag event or by a script; 'Move to Done' passes", async () => {
    const center = (page, sel) => page.$eval(sel, (el) => { const r = el.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; });
    // A real drag: the mouse goes down on the card, moves and lets go over the zone.
    const mouseDrag = async (page, cdp, zone) => {
      const [x1, y1] = await center(page, '#card');
      const [x2, y2] = await center(page, zone);
      await cdp.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: x1, y: y1 });
      await cdp.send('Input.dispatchMouseEvent', { type: 'mousePressed', x: x1, y: y1, button: 'left', clickCount: 1 });
      for (let i = 1; i <= 5; i += 1) {
        await cdp.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: x1 + ((x2 - x1) * i) / 5, y: y1 + ((y2 - y1) * i) / 5, button: 'left', buttons: 1 });
      }
      return cdp.send('Input.dispatchMouseEvent', { type: 'mouseReleased', x: x2, y: y2, button: 'left', clickCount: 1 });
    };
    // What Playwright sends once it caught the drag: the drag events themselves.
    const dragEvents = async (page, cdp, zone) => {
      const [x, y] = await center(page, zone);
      const data = { items: [{ mimeType: 'text/plain', data: 'card-7' }], dragOperationsMask: 1 };
      await cdp.send('Input.dispatchDragEvent', { type: 'dragEnter', x, y, data });
      await cdp.send('Input.dispatchDragEvent', { type: 'dragOver', x, y, data });
      return cdp.send('Input.dispatchDragEvent', { type: 'drop', x, y, data });
    };
    // A script's drop event on the zone (no input at all): the write its handler sends is judged
    // with what it landed on.
    const scriptDrop = (page, cdp, zone) => page.evaluate((sel) => {
      const data = new DataTransfer();
      data.setData('text/plain', 'card-7');
      document.querySelector(sel).dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: data }));
    }, zone);
    const ops = () => writesTo('/api/v1/ops').map((w) => w.split(' ').slice(2).join(' '));
    for (const [route, drag] of [['mouse', mouseDrag], ['drag events', dragEvents], ['script', scriptDrop]]) {
      // (An agent each: a refusal stands a while for the same question.)
      const browser = await connectAgent(h, `dragger-${route.replace(' ', '-')}`, 120_000);
      try {
        const page = await browser.newPage();
        await page.goto(url('/board'));
        const cdp = await page.createCDPSession();
        const before = ops().length;
        await drag(page, cdp, '#done');
        await pollFor(() => ops().length === before + 1, WAIT_MS, `${route}: the move to Done`, h.detail);
        assert.deepEqual(ops().slice(before), ['{"op":2}'], route);
        assert.equal(await panel.$(QUESTION), null, `${route}: a harmless drop was asked about`);
        const dropped = outcome(drag(page, cdp, '#trash'));
        const q = await question();
        assert.equal(q.element, 'Drop here to delete permanently', route);
        await deny(q.id);
        // (The script's drop has no input to refuse: its handler's write is what is held.)
        if (route !== 'script') assert.match(await withTimeout(dropped, WAIT_MS, `${route}: the denied drop`), /gesture guard/, route);
        await sleep(300);
        assert.deepEqual(ops().slice(before), ['{"op":2}'], `${route}: the delete reached the server`);
      } finally {
        await browser.disconnect();
      }
    }
    // A drag library's drop: the pointer goes onto the zone and lets go back where it went down.
    {
      const browser = await connectAgent(h, 'dragger-back', 120_000);
      try {
        const page = await browser.newPage();
        await page.goto(url('/pointer-board'));
        const cdp = await page.createCDPSession();
        const [x1, y1] = await center(page, '#card');
        const [x2, y2] = await center(page, '#trash');
        const before = ops().length;
        await cdp.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: x1, y: y1 });
        await cdp.send('Input.dispatchMouseEvent', { type: 'mousePressed', x: x1, y: y1, button: 'left', clickCount: 1 });
        for (let i = 1; i <= 5; i += 1) {
          await cdp.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: x1 + ((x2 - x1) * i) / 5, y: y1 + ((y2 - y1) * i) / 5, button: 'left', buttons: 1 });
        }
        const released = outcome(cdp.send('Input.dispatchMouseEvent', { type: 'mouseReleased', x: x1, y: y1, button: 'left', clickCount: 1 }));
        const q = await question();
        assert.equal(q.element, 'Drop here to delete permanently');
        await deny(q.id);
        assert.match(await withTimeout(released, WAIT_MS, 'the denied release'), /gesture guard/);
        await sleep(300);
        assert.deepEqual(ops().slice(before), [], 'the delete reached the server');
      } finally {
        await browser.disconnect();
      }
    }
    // Two fingers: one rests on the heading while the other drags the card onto the zone.
    {
      const browser = await connectAgent(h, 'dragger-fingers', 120_000);
      try {
        const page = await browser.newPage();
        await page.goto(url('/pointer-board'));
        const cdp = await page.createCDPSession();
        const [x0, y0] = await center(page, 'h1');
        const [x1, y1] = await center(page, '#card');
        const [x2, y2] = await center(page, '#trash');
        const before = ops().length;
        const rest = { id: 0, x: x0, y: y0 };
        await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [rest] });
        await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [rest, { id: 1, x: x1, y: y1 }] });
        for (let i = 1; i <= 5; i += 1) {
          await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [rest, { id: 1, x: x1 + ((x2 - x1) * i) / 5, y: y1 + ((y2 - y1) * i) / 5 }] });
        }
        const lifted = outcome(cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] }));
        const q = await question();
        assert.equal(q.element, 'Drop here to delete permanently');
        await deny(q.id);
        assert.match(await withTimeout(lifted, WAIT_MS, 'the denied touch end'), /gesture guard/);
        await sleep(300);
        assert.deepEqual(ops().slice(before), [], 'the delete reached the server');
      } finally {
        await browser.disconnect();
      }
    }
    // Allowed, a drop by drag events lands; the write its handler sends is then asked about with
    // the request itself (as a button's script's write is: an answer binds a form's submission
    // only), named by the zone, and goes once allowed.
    const browser = await connectAgent(h, 'dragger-allowed', 120_000);
    try {
      const page = await browser.newPage();
      await page.goto(url('/board'));
      const cdp = await page.createCDPSession();
      const before = ops().length;
      const allowed = outcome(dragEvents(page, cdp, '#trash'));
      const q = await question();
      assert.equal(q.element, 'Drop here to delete permanently');
      await answer(q.id, 'allow');
      assert.equal(await withTimeout(allowed, WAIT_MS, 'the allowed drop'), 'done');
      const write = await question();
      assert.notEqual(write.id, q.id);
      assert.equal(write.element, 'Drop here to delete permanently');
      assert.match(write.text, /\/api\/v1\/ops/);
      assert.deepEqual(ops().slice(before), [], 'the write went before it was allowed');
      await answer(write.id, 'allow');
      await pollFor(() => ops().length === before + 1, WAIT_MS, 'the allowed delete', h.detail);
      await sleep(500);
      assert.deepEqual(ops().slice(before), ['{"op":9}']);
    } finally {
      await browser.disconnect();
    }
  });
});
