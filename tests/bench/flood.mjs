// An event flood: a page fetches /ping N times at once with Network enabled. Every
// requestWillBeSent and loadingFinished of those requests must arrive; the time is from the
// command that starts the flood to the last of them. Direct CDP, then tabtunnel, on the shared
// tab (each with Network enabled only on its own session meanwhile).

import { navigate } from './pages.mjs';
import { openDirect, openTunnel } from './paths.mjs';
import { measured } from './proc.mjs';

async function flood(h, open, pageTargetId, requests) {
  const pings = new Set();
  const counts = { requestWillBeSent: 0, loadingFinished: 0, loadingFailed: 0, events: 0 };
  let lastEventAt = 0;
  let done;
  const allArrived = new Promise((resolve) => (done = resolve));
  const onEvent = (m) => {
    counts.events += 1;
    if (m.method === 'Network.requestWillBeSent' && m.params.request.url.includes('/ping?')) {
      pings.add(m.params.requestId);
      counts.requestWillBeSent += 1;
    } else if (m.method === 'Network.loadingFinished' && pings.has(m.params.requestId)) {
      counts.loadingFinished += 1;
    } else if (m.method === 'Network.loadingFailed' && pings.has(m.params.requestId)) {
      counts.loadingFailed += 1;
    } else {
      return;
    }
    lastEventAt = performance.now();
    if (counts.requestWillBeSent === requests && counts.loadingFinished === requests) done();
  };
  const { client, sessionId } = await open(h, pageTargetId, { onEvent });
  try {
    await navigate(client, sessionId, `${h.pageServerUrl}/flood.html`, 'typeof window.flood === "function"');
    await client.send('Network.enable', {}, sessionId);
    counts.events = 0;
    const t0 = performance.now();
    const m = await measured(h.daemon.pid, async () => {
      const { exceptionDetails } = await client.send('Runtime.evaluate', { expression: `flood(${requests})`, awaitPromise: true }, sessionId);
      if (exceptionDetails) throw new Error(`flood(${requests}) failed: ${JSON.stringify(exceptionDetails).slice(0, 500)}`);
      await Promise.race([allArrived, new Promise((r) => setTimeout(r, 5000))]); // stragglers, then give up
    });
    await client.send('Network.disable', {}, sessionId);
    return {
      ms: lastEventAt - t0,
      ...counts,
      all_delivered: counts.requestWillBeSent === requests && counts.loadingFinished === requests,
      daemon_cpu_ms: m.cpuMs,
      daemon_peak_rss_bytes: m.peakRssBytes,
    };
  } finally {
    client.close();
  }
}

export async function eventFlood(h, pageTargetId, { requests }) {
  const out = { requests };
  out.direct = await flood(h, openDirect, pageTargetId, requests);
  out.tabtunnel = await flood(h, openTunnel, pageTargetId, requests);
  const { client, sessionId } = await openDirect(h, pageTargetId);
  await navigate(client, sessionId, h.pageUrl).finally(() => client.close());
  return out;
}
