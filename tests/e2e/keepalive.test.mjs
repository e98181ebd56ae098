// The extension's service worker must stay connected while idle. Chrome stops an idle MV3
// worker after ~30 s, and WebSocket ping frames do not count as activity; tabtunnel's data
// heartbeat does. Nothing is shared here, so no debugger session keeps the worker alive either.

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';

import { pollFor, sleep, startHarness } from './harness.mjs';

const IDLE_MS = 45_000;

describe('an idle extension stays connected', { timeout: 180_000 }, () => {
  let h;

  after(async () => {
    await h?.close();
  });

  test(`no disconnect through ${IDLE_MS / 1000} s with nothing shared and no debugger attached`, async () => {
    h = await startHarness({ name: 'keepalive', share: false });
    // The harness's own CDP connection to the browser could keep the worker alive: drop it.
    await h.browser.disconnect();
    h.browser = null;
    const events = () => h.logs().split('\n').filter((l) => /extension (connected|disconnected)/.test(l));
    await pollFor(() => events().length > 0, 20_000, 'the extension connecting', h.detail);
    const before = events();
    assert.equal(before.length, 1, `expected one connection so far:\n${before.join('\n')}`);
    await sleep(IDLE_MS);
    const after = events();
    assert.deepEqual(after, before, `the extension's connection changed while idle:\n${after.join('\n')}`);
    const response = await fetch(`${h.clientEndpoint}/json/version`);
    assert.equal(response.status, 200);
  });
});
