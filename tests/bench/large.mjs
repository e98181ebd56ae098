// Large results: a full-page screenshot of a tall page of noise (PNG cannot compress it) and a
// `Runtime.evaluate` whose value is a long string. Time on each path (the floor timed in the
// service worker, the bare relay over the worker's WebSocket beside them: what the hop alone
// costs for a large answer), and the daemon's peak resident memory while tabtunnel carries it.

import { openBareRelay } from './bare-relay.mjs';
import { navigate } from './pages.mjs';
import { openDirect, openTunnel } from './paths.mjs';
import { hwmBytes, measured } from './proc.mjs';
import { median } from './stats.mjs';

function floorCommand(h, method, params) {
  return h.sw(
    async (tabId, m, p) => {
      const t0 = performance.now();
      const result = await chrome.debugger.sendCommand({ tabId }, m, p);
      const ms = performance.now() - t0;
      return { ms, bytes: JSON.stringify(result).length };
    },
    h.tabId,
    method,
    params,
  );
}

/** `repeats` rounds of the command on each path (in turn); medians, sizes and the daemon's peak. */
async function onEveryPath(h, direct, tunnel, bare, method, params, repeats) {
  const times = { direct: [], floor: [], bare: [], tabtunnel: [] };
  // Per round too: a first answer's peak is what carrying it costs; a higher peak in later
  // rounds is what the daemon kept from the ones before (buffers that stay grown).
  const out = { answer_bytes: 0, daemon_peak_rss_bytes: 0, daemon_peak_rss_bytes_by_round: [] };
  for (let r = 0; r < repeats; r += 1) {
    const t0 = performance.now();
    out.answer_bytes = (await direct.client.sendRaw(method, params, direct.sessionId)).length;
    times.direct.push(performance.now() - t0);

    times.floor.push((await floorCommand(h, method, params)).ms);

    const t1 = performance.now();
    await bare.client.sendRaw(method, params);
    times.bare.push(performance.now() - t1);

    const m = await measured(h.daemon.pid, () => tunnel.client.sendRaw(method, params, tunnel.sessionId));
    times.tabtunnel.push(m.ms);
    out.daemon_peak_rss_bytes = Math.max(out.daemon_peak_rss_bytes, m.peakRssBytes);
    out.daemon_peak_rss_bytes_by_round.push(m.peakRssBytes);
  }
  for (const [path, list] of Object.entries(times)) out[`${path}_ms`] = median(list);
  return out;
}

export async function largeResults(h, pageTargetId, { screenshot, evaluateBytes, repeats }) {
  const direct = await openDirect(h, pageTargetId);
  const tunnel = await openTunnel(h, pageTargetId);
  const bare = await openBareRelay(h, 'ws');
  try {
    const { width, height } = screenshot;
    await navigate(direct.client, direct.sessionId, `${h.pageServerUrl}/noise.html?w=${width}&h=${height}`, 'window.noiseReady === true');
    const shot = await onEveryPath(
      h,
      direct,
      tunnel,
      bare,
      'Page.captureScreenshot',
      { format: 'png', captureBeyondViewport: true, clip: { x: 0, y: 0, width, height, scale: 1 } },
      repeats,
    );
    await navigate(direct.client, direct.sessionId, h.pageUrl);
    const evaluate = await onEveryPath(
      h,
      direct,
      tunnel,
      bare,
      'Runtime.evaluate',
      { expression: `'x'.repeat(${evaluateBytes})`, returnByValue: true },
      repeats,
    );
    return {
      screenshot: { width, height, ...shot },
      evaluate: { value_bytes: evaluateBytes, ...evaluate },
      daemon_hwm_bytes: hwmBytes(h.daemon.pid),
    };
  } finally {
    direct.client.close();
    tunnel.client.close();
    await bare.close();
  }
}
