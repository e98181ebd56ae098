// What users feel: one chrome-devtools-mcp session and one Playwright session, each opening a
// page, navigating, taking a snapshot, filling, clicking, evaluating, taking a screenshot and
// closing the page; every step timed, direct CDP and through tabtunnel in alternating rounds.
// Through tabtunnel twice: as a new agent (its session's connection is its first, so its first
// page also opens its window), and as an agent already connected (another connection of its
// opened a moment before, as an agent's second task or an MCP server's later tool call finds it:
// its window and a tab for it are ready). Fallback (`openPages` false): the sessions work on
// the one shared tab, selecting it instead of opening a page and leaving it open at the end.
// And an MCP agent as a model drives it: chrome-devtools-mcp through `tabtunnel mcp` (its agent
// connected when the MCP session starts), whose first tool call, a moment after the client
// listed the tools, is new_page; against the same chrome-devtools-mcp session over Chromium's
// own port. Twice through `tabtunnel mcp`: a new agent, and an agent whose earlier session ended
// a moment before (back within its grace period: its window and a prepared tab wait for it).

import { chromium } from 'playwright-core';

import { daemonBinary, greetingFor, sleep } from '../e2e/harness.mjs';
import { startChromeDevtoolsMcp, startMcpServer, uidOf } from '../e2e/mcp.mjs';
import { CdpClient } from './cdp-client.mjs';
import { agentWsEndpoint } from './paths.mjs';
import { median } from './stats.mjs';

/** How long an agent already there has been connected when its session starts. */
const ALREADY_THERE_MS = 1500;

/** Times each `step(name, fn)`; `steps` maps step names to ms. */
function stopwatch() {
  const steps = {};
  return {
    steps,
    async step(name, fn) {
      const t0 = performance.now();
      const value = await fn();
      steps[name] = performance.now() - t0;
      return value;
    },
  };
}

/** The id of the first list_pages line that `matches` ("3: <title> (<url>) [selected]"; a blank page is just "about:blank"). */
function pageIdOf(listing, matches) {
  const line = listing.split('\n').find((l) => /^\s*\d+: /.test(l) && matches(l));
  if (!line) throw new Error(`no such page in:\n${listing}`);
  return Number(/^\s*(\d+):/.exec(line)[1]);
}

async function chromeDevtoolsMcpSession(h, wsEndpoint, openPages) {
  return chromeDevtoolsMcpSteps(h, await startChromeDevtoolsMcp(h, wsEndpoint), { openPages, listFirst: true });
}

/** The steps of one chrome-devtools-mcp session on `mcp` (started); closes it. Without
 *  `listFirst` the first call is new_page. */
async function chromeDevtoolsMcpSteps(h, mcp, { openPages, listFirst }) {
  const { steps, step } = stopwatch();
  try {
    // The first call connects to the browser.
    const listing = listFirst ? await step('list_pages', () => mcp.call('list_pages')) : '';
    let pageId;
    if (openPages) {
      const opened = await step('new_page', () => mcp.call('new_page', { url: 'about:blank' }));
      pageId = pageIdOf(opened, (line) => line.endsWith('[selected]')); // new_page selects it
    } else {
      pageId = pageIdOf(listing, (line) => line.includes(`(${h.pageUrl})`));
      await step('select_page', () => mcp.call('select_page', { pageId }));
    }
    await step('navigate_page', () => mcp.call('navigate_page', { pageId, type: 'url', url: h.pageUrl }));
    const snapshot = await step('take_snapshot', () => mcp.call('take_snapshot', { pageId }));
    await step('fill', () => mcp.call('fill', { pageId, uid: uidOf(snapshot, /textbox "Name"/), value: 'Grace' }));
    await step('click', () => mcp.call('click', { pageId, uid: uidOf(snapshot, /button "Greet"/) }));
    const out = await step('evaluate_script', () =>
      mcp.call('evaluate_script', { pageId, function: "() => document.querySelector('#out').textContent" }),
    );
    if (!out.includes(greetingFor('Grace'))) throw new Error(`evaluate_script read no greeting:\n${out}`);
    await step('take_screenshot', () => mcp.callRaw('take_screenshot', { pageId }));
    if (openPages) await step('close_page', () => mcp.call('close_page', { pageId }));
    return steps;
  } finally {
    await mcp.close();
  }
}

async function playwrightSession(h, wsEndpoint, openPages) {
  const { steps, step } = stopwatch();
  const browser = await step('connectOverCDP', () => chromium.connectOverCDP(wsEndpoint, { timeout: 30_000 }));
  try {
    const context = browser.contexts()[0];
    const page = openPages
      ? await step('newPage', () => context.newPage())
      : context.pages().find((p) => p.url() === h.pageUrl);
    if (!page) throw new Error(`Playwright does not see ${h.pageUrl}`);
    await step('goto', () => page.goto(h.pageUrl));
    await step('ariaSnapshot', () => page.locator('body').ariaSnapshot());
    await step('fill', () => page.fill('#name', 'Grace'));
    await step('click', () => page.click('#go'));
    const out = await step('evaluate', () => page.evaluate(() => document.querySelector('#out').textContent));
    if (out !== greetingFor('Grace')) throw new Error(`page.evaluate read ${out}`);
    await step('screenshot', () => page.screenshot());
    if (openPages) await step('close', () => page.close());
  } finally {
    await step('disconnect', () => browser.close());
  }
  return steps;
}

const CLIENTS = { 'chrome-devtools-mcp': chromeDevtoolsMcpSession, playwright: playwrightSession };

/** How long after its MCP session started a model makes its first tool call. */
const FIRST_CALL_AFTER_MS = 1500;

/** The paths of the MCP agent's session: chrome-devtools-mcp direct, through `tabtunnel mcp`
 *  as a new agent, and as an agent back within its grace period. */
export const MCP_PATHS = ['direct', 'tabtunnel_mcp', 'tabtunnel_mcp_back'];

/** How long after its earlier session ended an agent comes back (`tabtunnel_mcp_back`). */
const BACK_AFTER_MS = 500;

async function mcpAgentSession(h, path, agent) {
  const mcp =
    path === 'direct'
      ? await startChromeDevtoolsMcp(h, h.realBrowserWsEndpoint)
      : await startMcpServer(h, {
          name: `tabtunnel mcp (agent ${agent})`,
          command: daemonBinary(),
          args: ['mcp', '--agent', agent, '--endpoint', h.clientEndpoint, '--tools', 'chrome-devtools'],
        });
  // As MCP clients do: the tool list first (it waits for `tabtunnel mcp`'s child), then the
  // model's first call a moment later.
  await mcp.client.listTools();
  await sleep(FIRST_CALL_AFTER_MS);
  return chromeDevtoolsMcpSteps(h, mcp, { openPages: true, listFirst: false });
}

/** Per step and in total, the median over the rounds. */
function medians(runs) {
  const names = Object.keys(runs[0]);
  const totals = runs.map((r) => Object.values(r).reduce((a, b) => a + b, 0));
  return {
    total_ms: median(totals),
    totals_ms: totals,
    steps_ms: Object.fromEntries(names.map((n) => [n, median(runs.map((r) => r[n]))])),
  };
}

export const SESSION_PATHS = ['direct', 'tabtunnel', 'tabtunnel_connected'];

export async function clientSessions(h, { rounds, openPages }) {
  const paths = openPages ? SESSION_PATHS : ['direct', 'tabtunnel'];
  const out = { mode: openPages ? 'new page per session' : 'the shared tab (fallback)', rounds, paths };
  for (const [client, session] of Object.entries(CLIENTS)) {
    const runs = Object.fromEntries(paths.map((p) => [p, []]));
    for (let round = 0; round < rounds; round += 1) {
      // Each path first, in the middle and last in turn.
      const order = paths.map((_, i) => paths[(i + round) % paths.length]);
      for (const path of order) {
        const agent = `bench-${client}-${path}-${round}`;
        try {
        if (path === 'direct') runs[path].push(await session(h, h.realBrowserWsEndpoint, openPages));
        else if (!openPages) runs[path].push(await session(h, h.wsEndpoint, openPages));
        else if (path === 'tabtunnel') runs[path].push(await session(h, await agentWsEndpoint(h, agent), openPages));
        else {
          const endpoint = await agentWsEndpoint(h, agent);
          const there = await CdpClient.open(endpoint);
          try {
            await sleep(ALREADY_THERE_MS);
            runs[path].push(await session(h, endpoint, openPages));
          } finally {
            there.close();
          }
        }
        } catch (err) {
          throw new Error(`${client} session, path ${path}, round ${round}`, { cause: err });
        }
      }
    }
    out[client] = Object.fromEntries(paths.map((p) => [p, medians(runs[p])]));
  }
  if (openPages) {
    const runs = Object.fromEntries(MCP_PATHS.map((p) => [p, []]));
    for (let round = 0; round < rounds; round += 1) {
      for (const path of MCP_PATHS.map((_, i) => MCP_PATHS[(i + round) % MCP_PATHS.length])) {
        try {
          if (path === 'tabtunnel_mcp_back') {
            const agent = `bench-mcp-back-${round}`;
            await mcpAgentSession(h, 'tabtunnel_mcp', agent);
            await sleep(BACK_AFTER_MS);
            runs[path].push(await mcpAgentSession(h, 'tabtunnel_mcp', agent));
          } else runs[path].push(await mcpAgentSession(h, path, `bench-mcp-${round}`));
        } catch (err) {
          throw new Error(`MCP agent session, path ${path}, round ${round}`, { cause: err });
        }
      }
    }
    out.mcp_agent = Object.fromEntries(MCP_PATHS.map((p) => [p, medians(runs[p])]));
  }
  return out;
}
