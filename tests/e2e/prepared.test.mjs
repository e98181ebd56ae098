// A page ready before the agent asks for it: each connected agent has one blank tab attached in
// the background of its own window, and Target.createTarget hands that one out. The agent never
// sees it until then, it counts against no limit, it waits out the agent's grace period (an
// agent back within it finds it), and the human stays in charge of it (closing it, or taking it
// for themselves). An MCP session's agent has it from the session's start, and finds it again
// in its next session within its grace period.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { RawCdp, daemonBinary, pollFor, rawGet, sleep, startHarness } from './harness.mjs';
import { startMcpServer } from './mcp.mjs';

const WAIT_MS = 20_000;
const GRACE_SECONDS = 2;

describe('a tab ready before the agent asks', { timeout: 300_000 }, () => {
  let h;

  before(async () => {
    h = await startHarness({ name: 'prepared', daemonArgs: ['--max-tabs-per-agent', '2', '--agent-grace', String(GRACE_SECONDS)] });
  });

  after(async () => {
    await h?.close();
  });

  /** Every tab, with its window, its group's title and whether the extension's debugger is
   *  attached to it (a command of the worker's own answers). */
  function browserTabs() {
    return h.sw(async () => {
      const groups = await chrome.tabGroups.query({});
      const tabs = await chrome.tabs.query({});
      const attached = await Promise.all(
        tabs.map((t) => chrome.debugger.sendCommand({ tabId: t.id }, 'Runtime.evaluate', { expression: '1' }).then(() => true, () => false)),
      );
      return tabs.map((t, i) => ({
        id: t.id,
        url: t.url || t.pendingUrl,
        windowId: t.windowId,
        active: t.active,
        group: groups.find((g) => g.id === t.groupId)?.title ?? null,
        attached: attached[i],
      }));
    });
  }

  /** The blank, attached tab waiting in `agent`'s group, once there is one. */
  function preparedTab(agent) {
    return pollFor(
      async () => (await browserTabs()).find((t) => t.group === agent && t.url === 'about:blank' && t.attached && !t.active),
      WAIT_MS,
      `a tab prepared for ${agent}`,
      h.detail,
    );
  }

  /** Once the window `windowId` has gone (its agent's grace period over). */
  function windowClosed(windowId) {
    return pollFor(async () => !(await browserTabs()).some((t) => t.windowId === windowId), WAIT_MS, `window ${windowId} closed`, h.detail);
  }

  async function agentSocket(agent) {
    const version = await rawGet(h.port, `/${h.token}/agent/${agent}/json/version`);
    return RawCdp.open(version.json.webSocketDebuggerUrl);
  }

  test('a connected agent has a tab ready it cannot see, which counts against no limit, and which goes with it', async () => {
    const before = await browserTabs();
    const raw = await agentSocket('ready');
    const prepared = await preparedTab('ready');
    assert.ok(!before.some((t) => t.windowId === prepared.windowId), 'the prepared tab is in a window of its own');
    // The agent does not know of it.
    const { result } = await raw.send(1, 'Target.getTargets');
    assert.deepEqual(result.targetInfos.filter((t) => t.type === 'page'), []);
    const listed = await rawGet(h.port, `/${h.token}/agent/ready/json/list`);
    assert.deepEqual(listed.json, []);

    // Its page is the prepared tab.
    const created = await raw.send(2, 'Target.createTarget', { url: h.pageUrl });
    assert.ok(created.result?.targetId, JSON.stringify(created));
    const page = await pollFor(async () => (await browserTabs()).find((t) => t.id === prepared.id && t.url === h.pageUrl), WAIT_MS, 'the prepared tab on the page', h.detail);
    assert.equal(page.active, true, 'the page is the active tab of its window');

    // The next one is prepared behind it, in the same window, and it counts against no limit:
    // with it there, the agent's second page (of the two it may hold) is still given.
    const second = await preparedTab('ready');
    assert.notEqual(second.id, prepared.id);
    assert.equal(second.windowId, prepared.windowId);
    const again = await raw.send(3, 'Target.createTarget', { url: 'about:blank' });
    assert.ok(again.result?.targetId, JSON.stringify(again));
    const next = await preparedTab('ready');
    const refused = await raw.send(4, 'Target.createTarget', { url: 'about:blank' });
    assert.match(refused.error?.message ?? '', /already has 2 tabs/);

    // Gone with the agent after its grace period: its page, the prepared tab and the window.
    raw.close();
    await windowClosed(prepared.windowId);
  });

  test('an agent that connects and leaves at once leaves no window behind once its grace period is over', async () => {
    const before = await browserTabs();
    const raw = await agentSocket('brief');
    raw.close();
    await sleep(GRACE_SECONDS * 1000);
    await pollFor(async () => JSON.stringify(await browserTabs()) === JSON.stringify(before), WAIT_MS, 'the tabs as they were', h.detail);
  });

  test('an agent back within its grace period finds its window and its prepared tab', async () => {
    const raw = await agentSocket('returning');
    const prepared = await preparedTab('returning');
    raw.close();
    await sleep(300);
    const back = await agentSocket('returning');
    await sleep(GRACE_SECONDS * 1000 + 500);
    const tabs = await browserTabs();
    assert.ok(tabs.some((t) => t.id === prepared.id && t.windowId === prepared.windowId), `the same prepared tab, in the same window: ${JSON.stringify(tabs)}`);
    const created = await back.send(1, 'Target.createTarget', { url: 'about:blank' });
    assert.ok(created.result?.targetId, JSON.stringify(created));
    assert.ok((await browserTabs()).some((t) => t.id === prepared.id && t.active), 'its page is the prepared tab');
    await back.send(2, 'Target.closeTarget', { targetId: created.result.targetId });
    back.close();
    await windowClosed(prepared.windowId);
  });

  test('a tabtunnel mcp session has its window and a prepared tab before its first tool call', async () => {
    const before = await browserTabs();
    const panel = await h.openPanel();
    /** What the side panel says of the agent `early`, once it says `pattern`. */
    const panelSays = (pattern) =>
      pollFor(
        async () => {
          const text = await panel.$eval('#agents li[data-agent="early"] .agent-state', (el) => el.textContent).catch(() => null);
          return text !== null && pattern.test(text) ? text : null;
        },
        WAIT_MS,
        `the side panel saying ${pattern} of agent early`,
        h.detail,
      );
    const mcp = await startMcpServer(h, {
      name: 'tabtunnel mcp (agent early)',
      command: daemonBinary(),
      args: ['mcp', '--agent', 'early', '--endpoint', h.clientEndpoint],
    });
    let prepared;
    try {
      prepared = await preparedTab('early');
      assert.ok(!before.some((t) => t.windowId === prepared.windowId), 'in a window of its own');
      // The human sees an agent expected by its MCP session, not a CDP client connected.
      await panelSays(/^expected: its MCP session is open$/);
    } finally {
      await mcp.close();
    }
    // Gone, with only the window kept ready for it: the panel says until when.
    await panelSays(/^disconnected; its window closes in \d+ s$/);
    await windowClosed(prepared.windowId);
    await pollFor(async () => (await panel.$('#agents li[data-agent="early"]')) === null, WAIT_MS, 'agent early gone from the side panel', h.detail);
  });

  test('an MCP agent back within its grace period, after a page of its own, finds its window and a prepared tab', async () => {
    const session = () =>
      startMcpServer(h, {
        name: 'tabtunnel mcp (agent again)',
        command: daemonBinary(),
        args: ['mcp', '--agent', 'again', '--endpoint', h.clientEndpoint, '--tools', 'chrome-devtools'],
      });
    const first = await session();
    let page;
    try {
      const ready = await preparedTab('again');
      await first.call('new_page', { url: 'about:blank' });
      page = await pollFor(async () => (await browserTabs()).find((t) => t.id === ready.id && t.active), WAIT_MS, 'its page, the prepared tab', h.detail);
    } finally {
      await first.close();
    }
    // A moment later, as a model's next session: the window, its page and a new prepared tab
    // waited for it.
    await sleep(300);
    const next = await session();
    try {
      const prepared = await preparedTab('again');
      assert.equal(prepared.windowId, page.windowId, 'in the same window');
      await next.call('new_page', { url: 'about:blank' });
      await pollFor(async () => (await browserTabs()).find((t) => t.id === prepared.id && t.active), WAIT_MS, 'its new page, the prepared tab', h.detail);
    } finally {
      await next.close();
    }
    await windowClosed(page.windowId);
  });

  test('the plain endpoint gets one only once it opened a page', async () => {
    const before = await browserTabs();
    const raw = await RawCdp.open(h.wsEndpoint);
    await sleep(1000);
    assert.equal((await browserTabs()).length, before.length, 'a client of the shared tabs opens no window');
    const created = await raw.send(1, 'Target.createTarget', { url: 'about:blank' });
    assert.ok(created.result?.targetId, JSON.stringify(created));
    await pollFor(
      async () => (await browserTabs()).find((t) => t.attached && !t.active && t.url === 'about:blank' && !before.some((b) => b.id === t.id)),
      WAIT_MS,
      'a tab prepared for the plain endpoint',
      h.detail,
    );
    await raw.send(2, 'Target.closeTarget', { targetId: created.result.targetId });
    raw.close();
  });

  test('the human closes a prepared tab: none again until the agent opens a page', async () => {
    const raw = await agentSocket('closer');
    const prepared = await preparedTab('closer');
    await h.sw((id) => chrome.tabs.remove(id), prepared.id);
    // Its window goes with it (the blank tab a new window opens on is the extension's too).
    await pollFor(async () => !(await browserTabs()).some((t) => t.windowId === prepared.windowId), WAIT_MS, 'the window closed', h.detail);
    await sleep(1500);
    assert.ok(!(await browserTabs()).some((t) => t.group === 'closer'), 'no tab was prepared again');
    const created = await raw.send(1, 'Target.createTarget', { url: h.pageUrl });
    assert.ok(created.result?.targetId, JSON.stringify(created));
    await preparedTab('closer');
    raw.close();
  });

  test('the human takes a prepared tab for themselves: it is theirs, detached and out of the group', async () => {
    const before = await browserTabs();
    const raw = await agentSocket('taken');
    const prepared = await preparedTab('taken');
    await h.sw((id, url) => chrome.tabs.update(id, { url }), prepared.id, h.pageUrl);
    const theirs = await pollFor(
      async () => (await browserTabs()).find((t) => t.id === prepared.id && t.url === h.pageUrl && !t.attached && t.group === null),
      WAIT_MS,
      'the tab detached and ungrouped',
      h.detail,
    );
    // The window holds the human's tab alone (the blank one a new window opens on went).
    assert.deepEqual((await browserTabs()).filter((t) => t.windowId === theirs.windowId).map((t) => t.id), [theirs.id]);
    assert.ok(!before.some((t) => t.id === theirs.id));
    // The agent's page is a new tab, not the human's.
    const created = await raw.send(1, 'Target.createTarget', { url: 'about:blank' });
    assert.ok(created.result?.targetId, JSON.stringify(created));
    const tabs = await browserTabs();
    assert.ok(tabs.some((t) => t.id === theirs.id && t.url === h.pageUrl && !t.attached), 'the human keeps their tab');
    raw.close();
    await sleep(500);
    assert.ok((await browserTabs()).some((t) => t.id === theirs.id), 'it stays open when the agent goes');
  });

  test('a prepared tab whose page answers no command is not handed out: the agent gets one that does', async () => {
    const raw = await agentSocket('stalled');
    const prepared = await preparedTab('stalled');
    // Its page stops answering (a script that never ends), as about one in forty new agents'
    // tabs never answered at all (issue 30).
    await h.sw((id) => chrome.debugger.sendCommand({ tabId: id }, 'Runtime.evaluate', { expression: 'setTimeout(() => { for (;;) {} }, 0)' }), prepared.id);
    const created = await raw.send(1, 'Target.createTarget', { url: h.pageUrl });
    assert.ok(created.result?.targetId, JSON.stringify(created));
    const attached = await raw.send(2, 'Target.attachToTarget', { targetId: created.result.targetId, flatten: true });
    const answer = await raw.send(3, 'Runtime.evaluate', { expression: 'location.href' }, attached.result.sessionId);
    assert.equal(answer.result?.result?.value, h.pageUrl);
    const tabs = await h.sw(() => chrome.tabs.query({}).then((ts) => ts.map((t) => t.id)));
    assert.ok(!tabs.includes(prepared.id), 'the tab whose page does not run was handed out, or left open');
    raw.close();
  });
});
