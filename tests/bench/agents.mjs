// Many agents at once: each its own client and tab (a new page through its own agent endpoint),
// each sending its commands one after another, all agents together. Aggregate throughput,
// and the daemon's CPU time and peak resident memory meanwhile. Fallback (`openPages` false):
// the same number of clients on the one shared tab.

import { CdpClient, attachToPage } from './cdp-client.mjs';
import { EVALUATE_1_PLUS_1, agentWsEndpoint } from './paths.mjs';
import { measured } from './proc.mjs';

async function openAgent(wsEndpoint, { url, targetId }) {
  const client = await CdpClient.open(wsEndpoint);
  const opened = targetId ? null : (await client.send('Target.createTarget', { url })).targetId;
  return { client, opened, sessionId: await attachToPage(client, targetId ?? opened) };
}

async function closeAgents(agents) {
  for (const { client, opened } of agents) {
    if (opened) await client.send('Target.closeTarget', { targetId: opened }).catch(() => {});
    client.close();
  }
}

async function commands(agent, count) {
  for (let i = 0; i < count; i += 1) await agent.client.send('Runtime.evaluate', EVALUATE_1_PLUS_1, agent.sessionId);
}

/** All agents' commands at once: `{ cmd_s, wall_ms, daemon_cpu_ms, daemon_peak_rss_bytes }`. */
async function run(h, agents, commandsEach) {
  const m = await measured(h.daemon.pid, () => Promise.all(agents.map((a) => commands(a, commandsEach))));
  return {
    cmd_s: (agents.length * commandsEach) / (m.ms / 1000),
    wall_ms: m.ms,
    daemon_cpu_ms: m.cpuMs,
    daemon_peak_rss_bytes: m.peakRssBytes,
  };
}

export async function agentsAtOnce(h, pageTargetId, { agents: count, commandsEach, openPages }) {
  const where = openPages ? { url: h.pageUrl } : { targetId: pageTargetId };
  const out = { mode: openPages ? 'agents, each its own new tab' : 'clients on the one shared tab (fallback)', agents: count, commands_each: commandsEach };
  for (const path of ['direct', 'tabtunnel']) {
    const agents = [];
    try {
      for (let i = 0; i < count; i += 1) {
        const ws = path === 'direct' ? h.realBrowserWsEndpoint : openPages ? await agentWsEndpoint(h, `bench-agent-${i}`) : h.wsEndpoint;
        agents.push(await openAgent(ws, where));
      }
      out[path] = await run(h, agents, commandsEach);
    } catch (e) {
      // What each tab was doing when a command went unanswered, before closing them ends it.
      e.tabsBeforeClosing = await h.tabsNow();
      throw e;
    } finally {
      await closeAgents(agents);
    }
  }
  return out;
}
