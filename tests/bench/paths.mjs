// The three ways to reach a tab, side by side in one browser: direct CDP (Chromium's own
// debugging port), through tabtunnel (the daemon's CDP endpoint, or an agent's), and the floor
// (the extension's own chrome.debugger, timed inside its service worker).

import { CdpClient, attachToPage } from './cdp-client.mjs';

export const EVALUATE_1_PLUS_1 = { expression: '1 + 1', returnByValue: true };

/** A client on Chromium's own port, attached to `targetId`. */
export async function openDirect(h, targetId, options) {
  const client = await CdpClient.open(h.realBrowserWsEndpoint, options);
  return { client, sessionId: await attachToPage(client, targetId) };
}

/** A client through tabtunnel (`wsEndpoint`, default the daemon's own), attached to `targetId`. */
export async function openTunnel(h, targetId, options, wsEndpoint = h.wsEndpoint) {
  const client = await CdpClient.open(wsEndpoint, options);
  return { client, sessionId: await attachToPage(client, targetId) };
}

/** The browser-level WebSocket of a named agent (`h.agentEndpoint(name)`), or null. */
export async function agentWsEndpoint(h, name) {
  const response = await fetch(`${h.agentEndpoint(name)}/json/version`);
  if (!response.ok) return null;
  return (await response.json()).webSocketDebuggerUrl ?? null;
}

/**
 * Whether tabtunnel can open a page for an agent (`Target.createTarget` on an agent endpoint):
 * sessions and agents then get their own new tabs, else they fall back to the shared tab.
 */
export async function canOpenPages(h) {
  const ws = await agentWsEndpoint(h, 'bench-probe');
  if (!ws) return false;
  const client = await CdpClient.open(ws);
  try {
    const { targetId } = await client.send('Target.createTarget', { url: 'about:blank' });
    await client.send('Target.closeTarget', { targetId }).catch(() => {});
    return true;
  } catch {
    return false;
  } finally {
    client.close();
  }
}

