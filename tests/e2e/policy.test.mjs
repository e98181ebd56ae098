// The human stays in control: a per-agent policy (docs/policy.md's example, with its origins adapted
// to the local test sites), asking the human in the side panel, the audit trail, and the kill
// switch, all through the built extension and daemon in real Chromium.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';

import puppeteer from 'puppeteer-core';

import { RawCdp, daemonBinary, pollFor, rawGet, startHarness, withTimeout, connectAgent as connectAgentTo } from './harness.mjs';

const WAIT_MS = 30_000;
const ASK_TIMEOUT_SECONDS = 4;

/** docs/policy.md's example policy, its origins pointed at the test sites. */
function policyText({ allowed, asked }) {
  return `ask_timeout = ${ASK_TIMEOUT_SECONDS}

[default]
deny_methods = ["Network.getAllCookies", "Network.getCookies", "Storage.getCookies"]
allow_origins = ["${allowed}", "https://*.example.com"]
ask_origins = ["${asked}"]

[agent.reader]
preset = "read-only"
`;
}

describe('policy, questions, audit trail and kill switch', { timeout: 600_000 }, () => {
  let h;
  let policyFile;
  let elsewhere; // a site on an origin no agent may load
  let elsewhereUrl;
  let allowedOrigin;
  let askedOrigin;

  before(async () => {
    elsewhere = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>elsewhere</title><p id="elsewhere">an origin no agent may load</p>');
    });
    await new Promise((r) => elsewhere.listen(0, '127.0.0.1', r));
    elsewhereUrl = `http://127.0.0.1:${elsewhere.address().port}/`;
    const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'tabtunnel-policy-'));
    policyFile = path.join(dir, 'policy.toml');
    // The test site's port is known once the harness runs: start with a placeholder and let the
    // daemon read the file again when it changes, as it would for a user editing it.
    fs.writeFileSync(policyFile, policyText({ allowed: 'http://127.0.0.1:1', asked: 'http://localhost:1' }));
    h = await startHarness({ name: 'policy', daemonArgs: ['--policy', policyFile] });
    const port = new URL(h.pageServerUrl).port;
    allowedOrigin = `http://127.0.0.1:${port}`;
    askedOrigin = `http://localhost:${port}`;
    fs.writeFileSync(policyFile, policyText({ allowed: allowedOrigin, asked: askedOrigin }));
    await pollFor(() => h.logs().includes('policy reloaded'), WAIT_MS, 'the daemon to read the edited policy', h.detail);
  });

  after(async () => {
    await h?.close();
    elsewhere?.close();
  });

  const connectAgent = (agent) => connectAgentTo(h, agent);

  async function audit(...args) {
    const { stdout } = await promisify(execFile)(daemonBinary(), ['audit', ...args], {
      env: { ...process.env, XDG_CONFIG_HOME: h.configHome, XDG_DATA_HOME: h.dataHome },
    });
    return stdout;
  }

  async function auditLines() {
    return (await audit('--json')).trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  }

  /** How many navigations the agents' pages started themselves were refused, per the trail. */
  async function refusedPageNavigations() {
    return (await auditLines()).filter((l) => l.method === 'navigation' && l.outcome === 'denied').length;
  }

  /** Waits until the browser's rules have sent one more refused navigation to the daemon. */
  async function oneMoreRefused(before, what) {
    await pollFor(async () => (await refusedPageNavigations()) > before, WAIT_MS, `the browser refusing ${what}`, h.detail);
  }

  test("cookie-reading methods are refused with an error naming the rule, and the session carries on", async () => {
    const browser = await connectAgent('a');
    try {
      const page = await browser.newPage();
      await page.goto(h.pageUrl);
      const session = await page.createCDPSession();
      for (const method of ['Network.getCookies', 'Network.getAllCookies', 'Storage.getCookies']) {
        await assert.rejects(session.send(method), (e) => {
          assert.match(e.message, new RegExp(`deny_methods "${method.replace('.', '\\.')}" in \\[default\\]`));
          return true;
        });
      }
      assert.equal(await page.evaluate(() => document.title), 'tabtunnel test form', 'the session carries on');
    } finally {
      await browser.disconnect();
    }
  });

  test("an agent's tab cannot reach a disallowed origin by any route, and stays on its page", async () => {
    const browser = await connectAgent('a');
    try {
      const page = await browser.newPage();
      const start = `${h.pageServerUrl}/link.html?href=${encodeURIComponent(elsewhereUrl)}`;
      await page.goto(start);
      // Page.navigate: a failed navigation.
      await assert.rejects(page.goto(elsewhereUrl), /net::ERR_BLOCKED_BY_CLIENT/);
      assert.equal(page.url(), start);
      // A link the page follows: the browser's rule sends it to the daemon, which refuses it.
      let refused = await refusedPageNavigations();
      await page.click('#away');
      await oneMoreRefused(refused, 'the link click');
      assert.equal(await page.$eval('#here', (el) => el.textContent), 'the link page', 'the link click stayed');
      // A script.
      refused = await refusedPageNavigations();
      await page.evaluate((url) => {
        window.location.href = url;
      }, elsewhereUrl);
      await oneMoreRefused(refused, 'location.href');
      assert.equal(await page.evaluate(() => location.href), start, 'location.href stayed');
      // Target.createTarget and /json/new.
      const raw = await RawCdp.open(`${h.agentEndpoint('a')}/cdp`.replace('http://', 'ws://'));
      const created = await raw.send(1, 'Target.createTarget', { url: elsewhereUrl });
      raw.close();
      assert.match(created.error?.message ?? '', /allow_origins/, JSON.stringify(created));
      const viaHttp = await fetch(`${h.agentEndpoint('a')}/json/new?${elsewhereUrl}`, { method: 'PUT' });
      assert.equal(viaHttp.status, 500);
      // An allowed origin works.
      await page.goto(h.pageUrl);
      assert.equal(await page.title(), 'tabtunnel test form');
      const tabs = await h.sw(async () => (await chrome.tabs.query({})).map((t) => t.url));
      assert.ok(!tabs.some((u) => u.startsWith(elsewhereUrl)), `a tab reached the disallowed origin: ${tabs}`);
    } finally {
      await browser.disconnect();
    }
  });

  test("(red team 4) the redirect an agent sees speaks for its own tab only: no other agent's tab is found or asked about", async () => {
    // Agent a holds a tab; agent eve sends her own page to a refused origin and reads the
    // browser's redirect to the navigation endpoint in her own network events.
    const alice = await connectAgent('a');
    const raw = await RawCdp.open(`${h.agentEndpoint('eve')}/cdp`.replace('http://', 'ws://'));
    try {
      await (await alice.newPage()).goto(h.pageUrl);
      const created = await raw.send(1, 'Target.createTarget', { url: h.pageUrl });
      const attached = await raw.send(2, 'Target.attachToTarget', { targetId: created.result.targetId, flatten: true });
      const sid = attached.result.sessionId;
      await raw.send(3, 'Network.enable', {}, sid);
      const refused = await refusedPageNavigations();
      await raw.send(4, 'Runtime.evaluate', { expression: `location.href = ${JSON.stringify(elsewhereUrl)}` }, sid);
      await oneMoreRefused(refused, "eve's location.href");
      const seen = await raw.next((m) => m.method === 'Network.requestWillBeSent' && m.params.request.url.includes('/tabtunnel/navigation/'), 'the redirect', WAIT_MS);
      const [, credential, eveTab] = /^http:\/\/127\.0\.0\.1:\d+\/([^/]+)\/tabtunnel\/navigation\/eve\/(\d+)\?/.exec(seen.params.request.url);
      const ask = (agent, tab, url, cred = credential) =>
        fetch(`http://127.0.0.1:${h.port}/${cred}/tabtunnel/navigation/${agent}/${tab}?${url}`, { redirect: 'manual' });
      // It still works for eve's own tab (an allowed URL goes through)...
      assert.equal((await ask('eve', eveTab, h.pageUrl)).status, 307);
      // ...and for nothing else: every other agent and tab gets one and the same answer, so
      // a's tab is neither found (307 vs 204) nor asked about in a's name.
      const answers = new Set();
      for (let tab = Number(eveTab) - 10; tab <= Number(eveTab) + 10; tab++) {
        for (const agent of ['a', 'eve']) {
          if (agent === 'eve' && tab === Number(eveTab)) continue;
          answers.add((await ask(agent, tab, h.pageUrl)).status);
          answers.add((await ask(agent, tab, `${askedOrigin}/spoofed-by-eve`)).status);
        }
      }
      assert.deepEqual([...answers], [403]);
      assert.equal((await ask('eve', eveTab, h.pageUrl, credential.replace(/^./, (c) => (c === '0' ? '1' : '0')))).status, 403);
      const trail = await auditLines();
      assert.ok(!trail.some((l) => l.url?.includes('spoofed-by-eve')), 'a question reached the trail');
    } finally {
      raw.close();
      await alice.disconnect();
    }
  });

  test('an asked navigation waits for the human: allow once lets it through, deny and silence refuse it', async () => {
    const panel = await h.openPanel();
    const browser = await connectAgent('a');
    try {
      const page = await browser.newPage();
      await page.goto(h.pageUrl);
      const item = '#approvals [data-request-id]';
      // Allow once.
      const target = `${askedOrigin}/other.html`;
      const allowed = page.goto(target);
      allowed.catch(() => {}); // awaited below
      await panel.waitForSelector(item, { timeout: WAIT_MS });
      assert.match(await panel.$eval(item, (el) => el.textContent), /a wants to open http:\/\/localhost:\d+\/other\.html/);
      await panel.click(`${item} button[data-answer="allow"]`);
      await withTimeout(allowed, WAIT_MS, 'the allowed navigation', h.detail);
      assert.equal(page.url(), target);
      await panel.waitForSelector(item, { hidden: true, timeout: WAIT_MS });
      // Deny. (The outcome is caught at once: it may come while the panel is still clicked.)
      const outcome = (navigation) => navigation.then(() => 'navigated', (e) => e.message);
      await page.goto(h.pageUrl);
      const denied = outcome(page.goto(`${askedOrigin}/form.html?denied`));
      await panel.waitForSelector(item, { timeout: WAIT_MS });
      await panel.click(`${item} button[data-answer="deny"]`);
      assert.match(await withTimeout(denied, WAIT_MS, 'the denied navigation'), /net::ERR_BLOCKED_BY_CLIENT/);
      assert.equal(page.url(), h.pageUrl, 'the tab stays');
      // Silence past the timeout.
      const unanswered = outcome(page.goto(`${askedOrigin}/form.html?silence`));
      await panel.waitForSelector(item, { timeout: WAIT_MS });
      assert.match(await withTimeout(unanswered, WAIT_MS, 'the unanswered navigation'), /net::ERR_BLOCKED_BY_CLIENT/);
      await panel.waitForSelector(item, { hidden: true, timeout: WAIT_MS });
      // A link the page follows is asked too. (Chrome answers the click only once the
      // navigation it started is decided, so the click waits for the human as well.)
      await page.goto(`${h.pageServerUrl}/link.html?href=${encodeURIComponent(`${askedOrigin}/other.html?link`)}`);
      const click = outcome(page.click('#away'));
      await panel.waitForSelector(item, { timeout: WAIT_MS });
      await panel.click(`${item} button[data-answer="allow"]`);
      await withTimeout(click, WAIT_MS, 'the click');
      await pollFor(async () => (await page.evaluate(() => location.href).catch(() => '')).endsWith('?link'), WAIT_MS, 'the allowed link', h.detail);
    } finally {
      await browser.disconnect();
    }
  });

  test('a read-only agent can snapshot and screenshot but not type or navigate away', async () => {
    // The human hands their tab to the reader from the side panel.
    const panel = await h.openPanel();
    await h.sw(async (tabId) => {
      const tab = await chrome.tabs.get(tabId);
      await chrome.tabs.update(tabId, { active: true });
      await chrome.windows.update(tab.windowId, { focused: true });
    }, h.tabId);
    await panel.waitForSelector(`#share-toggle[data-tab-id="${h.tabId}"]`, { timeout: WAIT_MS });
    await panel.$eval('#handover-agent', (el) => (el.value = ''));
    await panel.type('#handover-agent', 'reader');
    await panel.click('#handover-button');
    await pollFor(async () => (await (await fetch(`${h.agentEndpoint('reader')}/json/list`)).json()).length === 1, WAIT_MS, 'the reader getting the tab', h.detail);
    const browser = await connectAgent('reader');
    try {
      const [page] = await browser.pages();
      const snapshot = await page.accessibility.snapshot();
      assert.ok(JSON.stringify(snapshot).includes('Greet'), 'the snapshot shows the page');
      const shot = await page.screenshot();
      assert.ok(shot.length > 2000, 'a screenshot');
      await assert.rejects(page.type('#name', 'nope'), /read-only/);
      await assert.rejects(page.goto(`${h.pageServerUrl}/other.html`), /net::ERR_BLOCKED_BY_CLIENT/);
      assert.equal(await page.$eval('#name', (el) => el.value), '', 'nothing was typed');
      assert.equal(page.url(), h.pageUrl);
    } finally {
      await browser.disconnect();
      await panel.click('#take-back').catch(() => {});
    }
  });

  test('the audit trail holds each step and its outcome, and no cookie, token or page content', async () => {
    const expected = [
      [(l) => l.agent === 'a' && l.method === 'Network.getCookies' && l.outcome === 'denied' && l.rule.includes('deny_methods'), 'the refused cookie read'],
      [(l) => l.method === 'Page.navigate' && l.url === elsewhereUrl && l.outcome === 'denied', 'the refused Page.navigate'],
      [(l) => l.method === 'navigation' && l.url?.startsWith(elsewhereUrl) && l.outcome === 'denied', "the page's own refused navigation"],
      [(l) => l.method === 'Target.createTarget' && l.outcome === 'denied', 'the refused createTarget'],
      [(l) => l.outcome === 'asked' && l.answer === 'allowed once', 'an allowed question'],
      [(l) => l.outcome === 'asked' && l.answer === 'denied', 'a denied question'],
      [(l) => l.outcome === 'asked' && l.answer === 'not answered in time', 'an unanswered question'],
      [(l) => l.agent === 'reader' && l.method.startsWith('Input.') && l.outcome === 'denied' && l.rule.includes('read-only'), "the reader's refused typing"],
      [(l) => l.agent === 'reader' && l.method === 'Page.captureScreenshot' && l.outcome === 'allowed', "the reader's screenshot"],
      [(l) => l.method === 'Page.navigate' && l.url === h.pageUrl && l.outcome === 'allowed', 'an allowed navigation with its URL'],
    ];
    // The trail is written by a task of its own: wait until the steps of the tests above are in.
    const lines = await pollFor(
      async () => {
        const now = await auditLines();
        return expected.every(([pred]) => now.some(pred)) && now;
      },
      WAIT_MS,
      'the trail to hold every step above',
      h.detail,
    ).catch(() => auditLines());
    for (const [pred, what] of expected) {
      assert.ok(lines.some(pred), `the trail lacks ${what}:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`);
    }
    for (const l of lines) assert.ok(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(l.time), l.time);
    const text = fs.readFileSync(path.join(h.dataHome, 'tabtunnel', 'audit', 'audit.jsonl'), 'utf8');
    for (const secret of ['session=', 'human', h.token, 'tabtunnel test form', 'Hello,', 'nope']) {
      assert.ok(!text.includes(secret), `the trail contains ${JSON.stringify(secret)}`);
    }
    assert.equal(fs.statSync(path.join(h.dataHome, 'tabtunnel', 'audit', 'audit.jsonl')).mode & 0o777, 0o600);
    // Sealed: `audit verify` finds it whole, and names two lines swapped in a copy of it.
    assert.match(await audit('verify'), /^unbroken: records 0 to \d+\n$/);
    const copy = fs.mkdtempSync(path.join(h.tmp, 'trail-copy-'));
    for (const file of ['audit-key', 'audit-head.json']) {
      fs.copyFileSync(path.join(h.configHome, 'tabtunnel', file), path.join(copy, file));
    }
    fs.mkdirSync(path.join(copy, 'data', 'audit'), { recursive: true });
    const swapped = text.split('\n');
    [swapped[1], swapped[2]] = [swapped[2], swapped[1]];
    fs.writeFileSync(path.join(copy, 'data', 'audit', 'audit.jsonl'), swapped.join('\n'));
    const broken = await promisify(execFile)(daemonBinary(), ['audit', 'verify', '--config-dir', copy]).catch((e) => e);
    assert.equal(broken.code, 1, `verify of a trail with two lines swapped: ${broken.stdout}${broken.stderr}`);
    assert.match(broken.stdout, /^BROKEN: record 1 was moved: it belongs before audit\.jsonl line 2, it is at audit\.jsonl line 3/);
    // Each other kind of rewrite of one line, and a cut end, is named too.
    const whole = text.split('\n').filter(Boolean);
    assert.ok(whole.length >= 5, `a trail of ${whole.length} lines`);
    const changed = JSON.parse(whole[2]);
    changed.outcome = changed.outcome === 'allowed' ? 'denied' : 'allowed';
    const rewrites = {
      changed: [[...whole.slice(0, 2), JSON.stringify(changed), ...whole.slice(3)], /line 3 was changed/],
      removed: [[...whole.slice(0, 2), ...whole.slice(3)], /record 2 was removed/],
      inserted: [[...whole.slice(0, 3), whole[1], ...whole.slice(3)], /line 4 repeats record 1 .* inserted/],
      'cut at its end': [whole.slice(0, -2), /its end was cut/],
    };
    for (const [what, [rewritten, namedAs]] of Object.entries(rewrites)) {
      fs.writeFileSync(path.join(copy, 'data', 'audit', 'audit.jsonl'), `${rewritten.join('\n')}\n`);
      const named = await promisify(execFile)(daemonBinary(), ['audit', 'verify', '--config-dir', copy]).catch((e) => e);
      assert.equal(named.code, 1, `verify of a trail with a line ${what}: ${named.stdout}${named.stderr}`);
      assert.match(named.stdout.split('\n')[0], new RegExp(`^BROKEN: .*${namedAs.source}`), `${what}: ${named.stdout}`);
    }
    const readable = await audit('--agent', 'reader');
    assert.match(readable, /reader\s+tab \d+\s+was refused: Input\.\w+ \(preset "read-only"/);
    assert.ok(!readable.split('\n').some((l) => /^\S+\s+a\s/.test(l)), 'only the reader');
    // The side panel shows each agent's recent steps.
    const panel = await h.openPanel();
    await panel.waitForSelector('#agents li[data-agent="reader"] .activity li[data-outcome="denied"]', { timeout: WAIT_MS });
  });

  test("the owner token reaches neither the trail, tabtunnel audit nor the log, whole, in part or encoded", async () => {
    const token = h.token;
    const mark = h.output.length; // the start-up banner before it names the endpoint, on purpose
    const denied = `http://127.0.0.1:${h.port}/${token}/json/version?p=${token.slice(0, 40)}&u=${encodeURIComponent(`http://x/${token.toUpperCase()}/`)}`;
    const browser = await connectAgent('a');
    try {
      const page = await browser.newPage();
      await page.goto(h.pageUrl);
      // The daemon's own endpoint is not among the agent's origins: refused, its rule naming the URL.
      await assert.rejects(page.goto(denied), /net::ERR_BLOCKED_BY_CLIENT/);
    } finally {
      await browser.disconnect();
    }
    // A request the gate refuses, a piece of the token in its path: the log names the path.
    assert.equal((await rawGet(h.port, `/json/version/${token.slice(0, 40)}.x%2F${token}`)).status, 401);
    const lines = await pollFor(
      async () => {
        const now = await auditLines();
        return now.some((l) => l.method === 'Page.navigate' && l.outcome === 'denied' && l.url?.includes('/json/version')) && now;
      },
      WAIT_MS,
      'the trail to hold the refused navigation',
      h.detail,
    );
    const navigation = lines.find((l) => l.method === 'Page.navigate' && l.url?.includes('/json/version'));
    assert.match(navigation.rule, /allow_origins/, JSON.stringify(navigation));
    const log = h.output.slice(mark);
    assert.match(log, /refused/);
    const outputs = {
      'tabtunnel audit': await audit(),
      'tabtunnel audit --json': await audit('--json'),
      'the trail file': fs.readFileSync(path.join(h.dataHome, 'tabtunnel', 'audit', 'audit.jsonl'), 'utf8'),
      "the daemon's log": log,
    };
    for (const [what, text] of Object.entries(outputs)) {
      const plain = text.toLowerCase();
      for (let i = 0; i + 8 <= token.length; i++) {
        assert.ok(!plain.includes(token.slice(i, i + 8)), `${what} holds ${token.slice(i, i + 8)} of the token:\n${text}`);
      }
    }
  });

  test('no kind of token reaches the trail, tabtunnel audit, the log or the side panel, in any field', async () => {
    const cli = (...args) =>
      promisify(execFile)(daemonBinary(), args, {
        env: { ...process.env, XDG_CONFIG_HOME: h.configHome, XDG_DATA_HOME: h.dataHome },
      });
    const mark = h.output.length;
    const minted = (await cli('agent', 'add', 'token-probe')).stdout;
    const agentToken = minted.match(/tta_[0-9a-f]{64}/)?.[0];
    assert.ok(agentToken, `agent add printed no token: ${minted}`);
    const extensionSecret = fs.readFileSync(path.join(h.configHome, 'tabtunnel', 'extension-secret'), 'utf8').trim();
    const panel = await h.openPanel();
    // Everything the panel shows but the client endpoint, which it shows the human on purpose.
    const panelText = () =>
      panel.$eval('body', (body) => {
        const copy = body.cloneNode(true);
        copy.querySelector('#client-endpoint')?.remove();
        return `${copy.textContent}\n${copy.innerHTML}`;
      });
    const browser = await connectAgent('a');
    try {
      const page = await browser.newPage();
      await page.goto(h.pageUrl);
      // The navigation key never leaves the daemon and the worker (redirects carry a MAC), so no
      // agent can name it: redact.rs's and log.rs's unit tests name it.
      const secrets = { owner: h.token, 'extension secret': extensionSecret, 'agent token': agentToken };
      const named =
        `o=${h.token}&e=${extensionSecret.slice(0, 40)}&E=${extensionSecret.toUpperCase()}` +
        `&t=${agentToken}&u=${encodeURIComponent(`http://x/${h.token.toUpperCase()}/`)}`;
      // A denied navigation (the daemon's own endpoint is no allowed origin): its url and rule.
      await assert.rejects(page.goto(`http://127.0.0.1:${h.port}/${h.token}/json/version?${named}`), /net::ERR_BLOCKED_BY_CLIENT/);
      // An asked one: the question in the side panel, denied there.
      const item = '#approvals [data-request-id]';
      const asked = page.goto(`${askedOrigin}/form.html?${named}`).then(
        () => 'navigated',
        (e) => e.message,
      );
      await panel.waitForSelector(item, { timeout: WAIT_MS });
      const question = await panelText();
      await panel.click(`${item} button[data-answer="deny"]`);
      assert.match(await withTimeout(asked, WAIT_MS, 'the denied navigation'), /net::ERR_BLOCKED_BY_CLIENT/);
      // Errors: an unknown method named after a token, and the gate refusing a path naming each.
      const raw = await RawCdp.open(`${h.agentEndpoint('a')}/cdp`.replace('http://', 'ws://'));
      const unknown = await raw.send(1, `Page.${agentToken}`, { secret: extensionSecret });
      raw.close();
      assert.ok(unknown.error, JSON.stringify(unknown));
      for (const secret of Object.values(secrets)) {
        assert.equal((await rawGet(h.port, `/json/version/${secret}.x%2F${secret.slice(0, 40)}`)).status, 401);
      }
      const lines = await pollFor(
        async () => {
          const now = await auditLines();
          const navigations = now.filter((l) => l.method === 'Page.navigate' && /o=/.test(l.url ?? ''));
          const done = ['denied', 'asked'].every((o) => navigations.some((l) => l.outcome === o));
          return done && now.some((l) => l.method.startsWith('Page.') && l.method.includes('<secret>')) && now;
        },
        WAIT_MS,
        'the trail to hold the denied and the asked navigation and the unknown method',
        h.detail,
      );
      assert.ok(lines.some((l) => /allow_origins/.test(l.rule ?? '') && /json\/version/.test(l.url ?? '')), 'the denied one, with its rule');
      await panel.waitForSelector('#agents li[data-agent="a"] .activity li[data-outcome="denied"]', { timeout: WAIT_MS });
      const outputs = {
        'the question in the side panel': question,
        'the side panel after': await panelText(),
        'tabtunnel audit': await audit(),
        'tabtunnel audit --json': await audit('--json'),
        'tabtunnel audit --agent a': await audit('--agent', 'a'),
        'the trail file': fs.readFileSync(path.join(h.dataHome, 'tabtunnel', 'audit', 'audit.jsonl'), 'utf8'),
        "the daemon's log": h.output.slice(mark),
      };
      for (const [what, text] of Object.entries(outputs)) {
        const plain = text.toLowerCase();
        for (const [kind, secret] of Object.entries(secrets)) {
          const lower = secret.replace(/^tta_/, '').toLowerCase();
          for (let i = 0; i + 8 <= lower.length; i++) {
            assert.ok(!plain.includes(lower.slice(i, i + 8)), `${what} holds ${lower.slice(i, i + 8)} of the ${kind}:\n${text}`);
          }
        }
      }
    } finally {
      await browser.disconnect();
      await panel.close();
    }
  });

  test('the kill switch, clicked in the side panel, ends every connection, detaches every tab, and refuses newcomers until released', async () => {
    const panel = await h.openPanel();
    const first = await connectAgent('a');
    const second = await connectAgent('b');
    const page = await second.newPage();
    await page.goto(h.pageUrl);
    // The human shares a tab too.
    const gone = Promise.all([first, second].map((b) => new Promise((r) => b.once('disconnected', r))));
    const t0 = Date.now();
    await panel.click('#kill-switch');
    await withTimeout(gone, WAIT_MS, 'every agent disconnected', h.detail);
    const shared = () => h.sw(() => chrome.storage.session.get('sharedTabs').then((v) => v.sharedTabs ?? []));
    await pollFor(async () => (await shared()).length === 0, WAIT_MS, 'every tab detached', h.detail);
    console.log(`# kill switch: every connection closed and every tab detached ${Date.now() - t0} ms after the click`);
    assert.equal(await panel.$eval('#kill-switch', (el) => el.dataset.engaged), 'true');
    const refused = await fetch(`${h.agentEndpoint('a')}/json/version`);
    assert.equal(refused.status, 503);
    assert.match(await refused.text(), /kill switch/);
    await assert.rejects(puppeteer.connect({ browserURL: h.agentEndpoint('c'), protocolTimeout: 5000 }));
    // Released: agents may come back.
    await panel.click('#kill-switch');
    await pollFor(async () => (await fetch(`${h.agentEndpoint('a')}/json/version`)).status === 200, WAIT_MS, 'the daemon letting agents in again', h.detail);
    const again = await connectAgent('a');
    const fresh = await again.newPage();
    await fresh.goto(h.pageUrl);
    assert.equal(await fresh.title(), 'tabtunnel test form');
    await again.disconnect();
  });
});
