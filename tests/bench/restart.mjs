// Coming back: the daemon killed and started again while the browser runs on, and the
// extension's service worker stopped and woken again. How long until the extension is
// connected and a client's command on the shared tab is answered. Runs last: the worker
// restart ends the harness's own puppeteer connection.

import { EXTENSION_ID, sharedPageUrls, sleep } from '../e2e/harness.mjs';
import { CdpClient, attachToPage } from './cdp-client.mjs';
import { EVALUATE_1_PLUS_1, openTunnel } from './paths.mjs';

const LIMIT_MS = 30_000;

async function until(what, fn) {
  const deadline = performance.now() + LIMIT_MS;
  for (;;) {
    if (await fn().catch(() => false)) return performance.now();
    if (performance.now() > deadline) throw new Error(`timed out after ${LIMIT_MS} ms: ${what}`);
    await sleep(5);
  }
}

/** The extension is connected and has announced the shared tab (in /json/list; 503 while no
 * extension is connected). */
const tabListed = async (h) => (await sharedPageUrls(h))?.includes(h.pageUrl) ?? false;

/** When a client through tabtunnel first gets an answer on the shared tab. */
function firstAnswer(h, pageTargetId) {
  return until('a command on the shared tab answered through tabtunnel', async () => {
    const { client, sessionId } = await openTunnel(h, pageTargetId);
    try {
      const { result } = await client.send('Runtime.evaluate', EVALUATE_1_PLUS_1, sessionId);
      return result?.value === 2;
    } finally {
      client.close();
    }
  });
}

export async function daemonRestart(h, pageTargetId) {
  const t0 = performance.now();
  await h.restartDaemon();
  const listening = performance.now();
  const connected = await until('the shared tab listed by the restarted daemon', () => tabListed(h));
  const answered = await firstAnswer(h, pageTargetId);
  return { listening_ms: listening - t0, tab_listed_ms: connected - t0, first_answer_ms: answered - t0 };
}

export async function workerRestart(h, pageTargetId) {
  // As in tests/e2e/lifecycle.test.mjs: the harness's puppeteer connection would auto-attach the
  // restarted worker paused, so it leaves, and a plain socket stops the worker.
  const worker = await h.browser.waitForTarget((t) => t.type() === 'service_worker' && t.url().includes(EXTENSION_ID));
  const workerId = worker._targetId;
  await h.browser.disconnect();
  h.browser = null;
  const raw = await CdpClient.open(h.realBrowserWsEndpoint);
  try {
    const t0 = performance.now();
    await raw.send('Target.closeTarget', { targetId: workerId });
    const gone = await until('the daemon noticing the stopped worker', async () => !(await tabListed(h)));
    // Left alone, the extension's alarm wakes a stopped worker within 30 s; an extension event
    // wakes it at once, so a reload of the shared tab times the restart itself.
    const sessionId = await attachToPage(raw, pageTargetId);
    const wake = performance.now();
    await raw.send('Page.reload', {}, sessionId);
    const connected = await until('the shared tab listed again after the worker woke', () => tabListed(h));
    const answered = await firstAnswer(h, pageTargetId);
    return {
      woken_by: 'a reload of the shared tab',
      stop_noticed_ms: gone - t0,
      tab_listed_ms: connected - wake,
      first_answer_ms: answered - wake,
    };
  } finally {
    raw.close();
  }
}
