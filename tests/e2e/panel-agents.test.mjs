// The human in charge, in the side panel: the list of agents, handing the active tab to an agent
// and taking it back, dragging it out of the agent's group, answering an agent's request for the
// active tab, and disconnecting an agent, all by clicking in the real panel.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';


import { pollFor, startHarness, withTimeout, connectAgent as connectAgentTo } from './harness.mjs';

const WAIT_MS = 30_000;

describe('the side panel and agents', { timeout: 300_000 }, () => {
  let h;
  let appUrl;
  let humanTab;

  before(async () => {
    h = await startHarness({ name: 'panel-agents' });
    appUrl = await h.loginAsHuman('human');
    humanTab = await h.sw(async (url) => (await chrome.tabs.query({ url })).map((t) => ({ id: t.id, windowId: t.windowId }))[0], appUrl);
    assert.ok(humanTab, 'the human app tab');
  });

  after(async () => {
    await h?.close();
  });

  /** Makes the human's app tab the active tab of the focused window, as the human clicking it. */
  async function humanLooksAtTheirTab() {
    await h.sw(async (tab) => {
      await chrome.tabs.update(tab.id, { active: true });
      await chrome.windows.update(tab.windowId, { focused: true });
    }, humanTab);
    await h.panel.waitForSelector(`#share-toggle[data-tab-id="${humanTab.id}"]`, { timeout: WAIT_MS });
  }

  const connectAgent = (agent) => connectAgentTo(h, agent);

  const pageUrls = (browser) => browser.targets().filter((t) => t.type() === 'page').map((t) => t.url());
  const tabOf = (id) => h.sw((tabId) => chrome.tabs.get(tabId).catch(() => null), id);
  const groupTitle = (groupId) => h.sw((id) => chrome.tabGroups.get(id).then((g) => g.title), groupId);

  test('the panel lists agents, what they hold and did, and disconnects one with its tabs', async () => {
    const panel = await h.openPanel();
    const browser = await connectAgent('lister');
    const page = await browser.newPage();
    await page.goto(`${h.pageServerUrl}/other.html`);
    const tabId = await h.sw(async (url) => (await chrome.tabs.query({ url }))[0]?.id, `${h.pageServerUrl}/other.html`);
    const row = '#agents li[data-agent="lister"]';
    await panel.waitForSelector(`${row}[data-connected="true"] li[data-tab-id="${tabId}"]`, { timeout: WAIT_MS });
    const last = await panel.$eval(`${row} .agent-last`, (el) => el.textContent);
    // The last step in words (which may hold a comma: "prepared the tab, with a script for
    // every page it loads"), not a protocol method.
    assert.match(last, /^Last: .+, \d+ s ago$/, last);
    assert.doesNotMatch(last, /^Last: [A-Z]\w*\.[a-z]\w*,/, last);

    const disconnected = new Promise((resolve) => browser.once('disconnected', resolve));
    // The card is rebuilt while the agent's page still loads (its last step, its picture): a
    // locator clicks the button as it stands once it holds still, as a human's pointer would.
    await panel.locator(`${row} button[data-action="disconnect-close"]`).setTimeout(WAIT_MS).click();
    await withTimeout(disconnected, WAIT_MS, 'the agent connection closing', h.detail);
    await pollFor(async () => (await tabOf(tabId)) === null, WAIT_MS, "the agent's tab closing", h.detail);
    await panel.waitForSelector(`${row} li[data-tab-id]`, { hidden: true, timeout: WAIT_MS });
  });

  test('the human hands the active tab to an agent, which sees it in place, and takes it back', async () => {
    const panel = await h.openPanel();
    await humanLooksAtTheirTab();
    await panel.type('#handover-agent', 'helper');
    await panel.click('#handover-button');
    await panel.waitForSelector('#take-back:not([hidden]), #held-by', { timeout: WAIT_MS });
    await pollFor(async () => (await tabOf(humanTab.id))?.groupId > 0, WAIT_MS, 'the handed tab joining a group', h.detail);
    const handed = await tabOf(humanTab.id);
    assert.equal(handed.windowId, humanTab.windowId, 'a handed tab stays where it is');
    assert.equal(await groupTitle(handed.groupId), 'helper');

    const browser = await connectAgent('helper');
    assert.deepEqual(pageUrls(browser), [appUrl], 'the agent sees the handed tab (and only it)');
    const [page] = await browser.pages();
    assert.equal(await page.$eval('#who', (el) => el.textContent), 'human');
    const plain = await (await fetch(`${h.clientEndpoint}/json/list`)).json();
    assert.ok(!plain.some((p) => p.url === appUrl), 'the plain endpoint no longer sees it');

    // Take it back from the panel.
    const gone = new Promise((resolve) => browser.once('targetdestroyed', resolve));
    await panel.waitForSelector(`#held-by`, { visible: true, timeout: WAIT_MS });
    assert.equal(await panel.$eval('#held-by', (el) => el.textContent), 'Held by helper');
    await panel.click('#take-back');
    await withTimeout(gone, WAIT_MS, 'the agent losing the tab', h.detail);
    assert.deepEqual(pageUrls(browser), []);
    assert.ok(await tabOf(humanTab.id), 'the tab stays open for the human');
    await pollFor(async () => (await tabOf(humanTab.id))?.groupId === -1, WAIT_MS, 'the tab leaving the agent group', h.detail);

    // Hand it again, then drag it out of the agent's group: that takes it back too.
    await panel.$eval('#handover-agent', (el) => (el.value = ''));
    await panel.type('#handover-agent', 'helper');
    await panel.click('#handover-button');
    await pollFor(() => pageUrls(browser).includes(appUrl), WAIT_MS, 'the agent getting the tab again', h.detail);
    const goneAgain = new Promise((resolve) => browser.once('targetdestroyed', resolve));
    await h.sw((id) => chrome.tabs.ungroup(id), humanTab.id);
    await withTimeout(goneAgain, WAIT_MS, 'the agent losing the tab dragged out of its group', h.detail);
    assert.ok(await tabOf(humanTab.id), 'still open');
    await browser.disconnect();
  });

  test("an agent's request for the active tab shows in the panel; the human gives it or refuses", async () => {
    const panel = await h.openPanel();
    await humanLooksAtTheirTab();
    const ask = (reason) =>
      fetch(`${h.agentEndpoint('asker')}/tabtunnel/handover`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ reason, timeoutMs: 60_000 }),
      }).then((r) => r.json());

    const granted = ask('I need the app you are signed in to');
    const item = '#handover-requests li[data-request-id]';
    await panel.waitForSelector(item, { timeout: WAIT_MS });
    const text = await panel.$eval(item, (el) => el.textContent);
    assert.match(text, /asker asks for your active tab: .*I need the app you are signed in to/);
    await panel.click(`${item} button[data-answer="give"]`);
    const answer = await withTimeout(granted, WAIT_MS, 'the request being answered', h.detail);
    assert.equal(answer.outcome, 'granted');
    assert.equal(answer.tab.url, appUrl);
    const list = await (await fetch(`${h.agentEndpoint('asker')}/json/list`)).json();
    assert.deepEqual(list.map((p) => p.url), [appUrl], 'the agent lists the handed tab');
    await panel.waitForSelector(item, { hidden: true, timeout: WAIT_MS });

    await panel.click('#take-back');
    const refused = ask('again?');
    await panel.waitForSelector(item, { timeout: WAIT_MS });
    await panel.click(`${item} button[data-answer="refuse"]`);
    assert.equal((await withTimeout(refused, WAIT_MS, 'the refusal', h.detail)).outcome, 'denied');
    assert.deepEqual(await (await fetch(`${h.agentEndpoint('asker')}/json/list`)).json(), []);
  });
});
