// Issue 28's standing answers, end to end in real Chromium: a chrome-devtools-mcp session that
// signs in, searches, filters, adds to a cart and reads is asked once (the sign-in); with "allow
// sending on this site" for a period, three messages ask once, and after the period the next one
// asks again (the policy offers a 1-minute period, so that no test waits 10 minutes). And each
// kind held by each route (a click, Enter, a script's click, a script's request), table-driven:
// Deny keeps every one from the server. The site counts every write it receives.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { connectAgent, pollFor, sleep, startHarness, withTimeout } from './harness.mjs';
import { pagesOf, startChromeDevtoolsMcp, textOf, uidOf } from './mcp.mjs';
import { panelQuestions } from './panel-questions.mjs';

const WAIT_MS = 30_000;
const PERIOD_MS = 60_000;

function page(title, body) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<style>body{font:14px sans-serif;margin:.5em 1em} form{margin:.2em 0;padding:.2em .4em;border:1px solid #ccd} p{margin:.2em 0}</style>
</head><body>${body}</body></html>`;
}

const LOGIN = page('Sign in – Shop', `
<form method="post" action="/app/session"><input name="user" aria-label="User">
  <input type="password" name="password" aria-label="Password" autocomplete="current-password"><button>Sign in</button></form>`);
const HOME = page('Shop', `
<form method="get" action="/app/search" role="search"><input name="q" aria-label="Search products"><button>Search</button></form>`);
const RESULTS = page('Results', `
<p><a href="/app/search?q=boots&size=42">Size 42</a> <a href="/app/search?q=boots&sort=price">Sort by price</a></p>
<form method="post" action="/app/cart/add"><input type="hidden" name="item" value="boots"><button>Add to cart – €62.00</button></form>
<p><a href="/app/review">Read the review</a></p>`);
const REVIEW = page('Review', '<article><h1>Rocket boots, reviewed</h1><p>They fly.</p></article>');
const MESSAGES = page('Messages', `
<form method="post" action="/app/messages/send"><textarea name="body" aria-label="Message">hi</textarea><button>Send message</button></form>`);
const DONE = page('Done', '<p id="done">done</p><p><a href="/app/home">Home</a></p>');

// One form per kind, each with a field to press Enter in, and a script's request per kind.
const KINDS = [
  { kind: 'paying', form: '/k/pay', field: '<input name="cardnumber" autocomplete="cc-number" aria-label="Card number">', button: 'Pay $25.00', request: ['POST', '/k/api/checkout/pay', { amount: 2500 }] },
  { kind: 'deleting', form: '/k/account/delete', field: '<input name="confirm" aria-label="Type DELETE">', button: 'Delete account', request: ['DELETE', '/k/api/projects/7', null] },
  { kind: 'secrets', form: '/k/account/password', field: '<input type="password" name="new_password" autocomplete="new-password" aria-label="New password">', button: 'Change password', request: ['POST', '/k/api/account/password', { new_password: 'x' }] },
  { kind: 'sending', form: '/k/messages/send', field: '<input name="body" aria-label="Message">', button: 'Send', request: ['POST', '/k/api/messages/send', { to: 'sam', body: 'hi' }] },
  { kind: 'sharing', form: '/k/docs/7/share', field: '<input name="email" aria-label="Email">', button: 'Share', request: ['POST', '/k/api/docs/7/share', { scope: 'anyone_with_link' }] },
  { kind: 'signing-in', form: '/k/session', field: '<input type="password" name="password" autocomplete="current-password" aria-label="Password">', button: 'Sign in', request: ['POST', '/k/api/session', { password: 'x' }] },
];
const KINDS_PAGE = page('Kinds', KINDS.map((k, i) =>
  `<form id="f${i}" method="post" action="${k.form}">${k.field.replace('<input', `<input id="in${i}"`)}<button id="b${i}">${k.button}</button></form>`).join('\n'));

function site() {
  const writes = [];
  const html = (body) => (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return write(req, res);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(body);
  };
  const write = (req, res) => {
    writes.push(`${req.method} ${new URL(req.url, 'http://x').pathname}`);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(DONE);
    });
  };
  const pages = {
    '/app/login': html(LOGIN), '/app/home': html(HOME), '/app/search': html(RESULTS), '/app/review': html(REVIEW),
    '/app/messages': html(MESSAGES), '/app/session': write, '/app/cart/add': write, '/app/messages/send': write,
    '/k/home': html(KINDS_PAGE), '/k/api/boards/9': write,
  };
  for (const k of KINDS) {
    pages[k.form] = write;
    pages[k.request[1]] = write;
  }
  return { pages, writes };
}

describe('standing answers and choices per kind', { timeout: 900_000 }, () => {
  let h;
  let s;
  let panel;

  before(async () => {
    s = site();
    const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'tabtunnel-answers-'));
    const policy = path.join(dir, 'policy.toml');
    fs.writeFileSync(policy, `gesture_timeout = 30\n[default.gestures]\nstanding_minutes = [10, ${PERIOD_MS / 60_000}]\n`);
    h = await startHarness({ name: 'answers', share: false, extraPages: s.pages, daemonArgs: ['--policy', policy] });
    panel = await h.openPanel();
    // Every question the panel shows, by id, whoever answers it.
    await panel.evaluate(() => {
      window.seenQuestions = new Set();
      const list = document.querySelector('#approvals');
      const note = () => list.querySelectorAll('li.gesture[data-request-id]').forEach((li) => window.seenQuestions.add(li.dataset.requestId));
      new MutationObserver(note).observe(list, { childList: true, subtree: true });
    });
  });

  after(async () => {
    await h?.close();
  });

  const url = (p) => `${h.pageServerUrl}${p}`;
  const writesTo = (p) => s.writes.filter((w) => w.endsWith(` ${p}`)).length;
  const questionsSeen = () => panel.evaluate(() => window.seenQuestions.size);
  const question = () => panelQuestions(h, panel, WAIT_MS).question();
  const answer = (id, what, ms) => panelQuestions(h, panel, WAIT_MS).answer(id, what, ms);

  const outcome = (promise) => promise.then(() => 'done', (e) => e.message);

  test('chrome-devtools-mcp: signing in, searching, filtering, adding to a cart and reading ask once; three messages under a standing answer ask once, and after its period the next asks again', async () => {
    const mcp = await startChromeDevtoolsMcp(h, h.agentEndpoint('mcp'));
    try {
      const pageId = pagesOf(await mcp.call('new_page', { url: url('/app/login') })).find((p) => p.url.endsWith('/app/login')).id;
      const snap = () => mcp.call('take_snapshot', { pageId });
      const go = (p) => mcp.call('navigate_page', { pageId, type: 'url', url: url(p) });
      /** Clicks the element `pattern` names; `onQuestion` answers the question it asks, if any. */
      const click = async (pattern, onQuestion) => {
        const clicking = withTimeout(
          mcp.client.callTool({ name: 'click', arguments: { pageId, uid: uidOf(await snap(), pattern) } }),
          120_000, `click ${pattern}`, mcp.detail);
        if (onQuestion) await onQuestion(await question());
        const result = await clicking;
        assert.ok(!result.isError, `${pattern}: ${textOf(result)}`);
      };
      const before = await questionsSeen();

      // The session: the sign-in is asked, as signing in, and Allow is remembered.
      let snapshot = await snap();
      await mcp.call('fill', { pageId, uid: uidOf(snapshot, /textbox "User"/), value: 'ann' });
      await mcp.call('fill', { pageId, uid: uidOf(snapshot, /textbox "Password"/), value: 'secret' });
      await click(/button "Sign in"/, async (q) => {
        assert.equal(q.kinds, 'signing-in', q.text);
        assert.deepEqual(q.buttons.map((b) => b.answer), ['allow', 'deny'], 'no period: Allow is remembered');
        assert.match(q.buttons[0].label, /don't ask again/);
        await answer(q.id, 'allow');
      });
      await pollFor(async () => writesTo('/app/session') === 1, WAIT_MS, 'the sign-in', h.detail);
      await pollFor(() => panel.$('#standing li[data-standing]'), WAIT_MS, 'the remembered sign-in in the panel', h.detail);
      await go('/app/home');
      snapshot = await snap();
      await mcp.call('fill', { pageId, uid: uidOf(snapshot, /textbox "Search products"/), value: 'boots' });
      await click(/button "Search"/);
      await click(/link "Size 42"/);
      await click(/button "Add to cart/);
      assert.equal(writesTo('/app/cart/add'), 1);
      await go('/app/search?q=boots');
      await click(/link "Read the review"/);
      assert.match(await snap(), /Rocket boots, reviewed/);
      // Signing in again on the site: not asked.
      await go('/app/login');
      snapshot = await snap();
      await mcp.call('fill', { pageId, uid: uidOf(snapshot, /textbox "Password"/), value: 'secret' });
      await click(/button "Sign in"/);
      assert.equal(writesTo('/app/session'), 2);
      assert.equal(await questionsSeen(), before + 1, 'the session asked once: the sign-in');

      // Sending: the first message offers standing answers for sending on this site.
      await go('/app/messages');
      await click(/button "Send message"/, async (q) => {
        assert.equal(q.kinds, 'sending', q.text);
        const periods = q.buttons.filter((b) => b.answer === 'for');
        assert.deepEqual(periods.map((b) => Number(b.ms)), [600_000, PERIOD_MS]);
        assert.match(periods[0].label, new RegExp(`Allow sending or publishing in your name on ${h.pageServerUrl} for 10 minutes`));
        await answer(q.id, 'for', PERIOD_MS);
      });
      await pollFor(async () => /mcp: Sending or publishing in your name on/.test(await panel.$eval('#standing', (ul) => ul.textContent)),
        WAIT_MS, 'the standing answer in the panel', h.detail);
      for (let i = 0; i < 2; i++) {
        await go('/app/messages');
        await click(/button "Send message"/);
      }
      assert.equal(writesTo('/app/messages/send'), 3, 'three messages sent');
      assert.equal(await questionsSeen(), before + 2, 'asked once for three messages');
      // After the period it is gone from the panel (by itself), and the next message asks again.
      await pollFor(async () => (await panel.$$('#standing li[data-standing]')).length === 1, PERIOD_MS + WAIT_MS, 'the standing answer to expire', h.detail);
      await go('/app/messages');
      await click(/button "Send message"/, async (q) => {
        assert.equal(q.kinds, 'sending');
        await answer(q.id, 'deny');
      }).catch(() => {});
      assert.equal(await questionsSeen(), before + 3);
      await sleep(300);
      assert.equal(writesTo('/app/messages/send'), 3, 'the denied one never reached the server');
    } finally {
      await mcp.close();
    }
  });

  test('the side panel takes a standing answer back, and the next gesture asks again', async () => {
    const browser = await connectAgent(h, 'taker', 120_000);
    try {
      const page = await browser.newPage();
      await page.goto(url('/app/messages'));
      let acting = outcome(page.click('button'));
      let q = await question();
      await answer(q.id, 'for', 600_000);
      assert.equal(await withTimeout(acting, WAIT_MS, 'the allowed send'), 'done');
      const mine = () => panel.$$eval('#standing li[data-standing]', (lis) => lis.find((li) => li.textContent.startsWith('taker:'))?.dataset.standing);
      await pollFor(mine, WAIT_MS, "taker's standing answer in the panel", h.detail);
      const id = await mine();
      await panel.click(`#standing button[data-standing-id="${id}"]`);
      await panel.waitForSelector(`#standing li[data-standing="${id}"]`, { hidden: true, timeout: WAIT_MS });
      await page.goto(url('/app/messages'));
      acting = outcome(page.click('button'));
      q = await question();
      assert.equal(q.kinds, 'sending');
      await answer(q.id, 'deny');
      await withTimeout(acting, WAIT_MS, 'the denied send');
    } finally {
      await browser.disconnect();
    }
  });

  test("a standing answer for a site covers its writes there, not the same page's to another site", async () => {
    const browser = await connectAgent(h, 'crosser', 120_000);
    // Its own path: the table below counts the writes to each kind's.
    const target = '/k/api/boards/9';
    const elsewhere = url(target).replace('//127.0.0.1:', '//localhost:');
    const send = (page, to, how) => outcome(page.evaluate(([to, how]) => (how === 'delete'
      ? fetch(to, { method: 'DELETE' })
      // Another site: a form-encoded POST its server takes for a DELETE, with the cookies there.
      : fetch(to, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '_method=delete' })
    ).then(() => 'sent', () => 'failed'), [to, how]));
    try {
      const page = await browser.newPage();
      await page.goto(url('/k/home'));
      let acting = send(page, target, 'delete');
      let q = await question();
      assert.equal(q.kinds, 'deleting');
      await answer(q.id, 'for', 600_000);
      await withTimeout(acting, WAIT_MS, 'the allowed delete');
      // An allowed request may be sent again by the guard after the page's own fetch settled.
      await pollFor(() => writesTo(target) === 1, WAIT_MS, 'the allowed delete at the server', h.detail);
      assert.equal(await withTimeout(send(page, target, 'delete'), WAIT_MS, 'a delete on the site'), 'done');
      await pollFor(() => writesTo(target) === 2, WAIT_MS, 'covered: the next went without a question', h.detail);
      const before = 1;
      acting = send(page, elsewhere, 'post');
      q = await question();
      assert.equal(q.kinds, 'deleting', `asked about the other site: ${q.text}`);
      await answer(q.id, 'deny');
      await withTimeout(acting, WAIT_MS, 'the denied delete elsewhere');
      await sleep(500);
      assert.equal(writesTo(target), before + 1, 'nothing reached the other site');
    } finally {
      await browser.disconnect();
    }
  });

  const ROUTES = [
    ['a click', (page, i) => page.click(`#b${i}`)],
    ['Enter', async (page, i) => { await page.focus(`#in${i}`); await page.keyboard.press('Enter'); }],
    ["a script's click", (page, i) => page.evaluate((i) => document.querySelector(`#b${i}`).click(), i)],
    ["a script's request", (page, i, k) => page.evaluate(([method, p, body]) =>
      fetch(p, { method, headers: { 'content-type': 'application/json' }, body: body && JSON.stringify(body) }).then(() => 'sent', () => 'failed'), k.request)],
  ];

  for (const [r, [route, act]] of ROUTES.entries()) {
    test(`each kind by ${route} is held as its kind, and Deny keeps it from the server`, async () => {
      // An agent per route: a refusal stands a while for the same gesture of the same agent.
      const browser = await connectAgent(h, `kinds-${r}`, 120_000);
      try {
        const page = await browser.newPage();
        for (const [i, k] of KINDS.entries()) {
          await page.goto(url('/k/home'));
          await page.type(`#in${i}`, 'x');
          const acting = outcome(act(page, i, k));
          const q = await question();
          assert.equal(q.kinds, k.kind, `${k.kind} by ${route}: ${q.text}`);
          await answer(q.id, 'deny');
          await withTimeout(acting, WAIT_MS, `${k.kind} by ${route}`);
          await sleep(200);
          assert.equal(writesTo(k.form) + writesTo(k.request[1]), 0, `${k.kind} by ${route} reached the server`);
        }
      } finally {
        await browser.disconnect();
      }
    });
  }
});
