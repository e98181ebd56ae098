// What the gesture guard costs a harmless gesture: round trips of input on the shared tab's
// "Greet" button and "Name" field (nothing there pays, deletes or changes a secret), direct
// and through tabtunnel, in interleaved blocks. A mouse release and a key that submits nothing
// are never inspected; a press and Enter are (a hit test, or the focus, read in the extension's
// isolated world, then the daemon's rule). The guard's cost per gesture is what a press (or
// Enter) costs over a release (or a plain key) through tabtunnel, less the same difference
// direct. (Not a move: Chrome answers a move with the next frame, ~10 ms.)

import { latencySummary } from './stats.mjs';
import { openDirect, openTunnel } from './paths.mjs';

const BLOCK = 25;

async function timed(client, sessionId, method, params) {
  const t0 = performance.now();
  await client.send(method, params, sessionId);
  return performance.now() - t0;
}

/** One block of each input on one path; the samples pushed into `into`. */
async function block(client, sessionId, point, into) {
  const mouse = (type) => ({ type, x: point.x, y: point.y, button: 'left', clickCount: 1 });
  const key = (type, k, code, keyCode, text) => ({ type, key: k, code, windowsVirtualKeyCode: keyCode, ...(text ? { text } : {}) });
  for (let i = 0; i < BLOCK; i += 1) {
    into.press.push(await timed(client, sessionId, 'Input.dispatchMouseEvent', mouse('mousePressed')));
    into.release.push(await timed(client, sessionId, 'Input.dispatchMouseEvent', mouse('mouseReleased')));
    await client.send('Runtime.evaluate', { expression: "document.getElementById('name').focus()" }, sessionId);
    into.key.push(await timed(client, sessionId, 'Input.dispatchKeyEvent', key('keyDown', 'a', 'KeyA', 65, 'a')));
    await client.send('Input.dispatchKeyEvent', key('keyUp', 'a', 'KeyA', 65), sessionId);
    into.enter.push(await timed(client, sessionId, 'Input.dispatchKeyEvent', key('keyDown', 'Enter', 'Enter', 13, '\r')));
    await client.send('Input.dispatchKeyEvent', key('keyUp', 'Enter', 'Enter', 13), sessionId);
  }
}

export async function gestureCost(h, pageTargetId, { gestures }) {
  const direct = await openDirect(h, pageTargetId);
  const tunnel = await openTunnel(h, pageTargetId);
  try {
    const { result } = await direct.client.send(
      'Runtime.evaluate',
      { expression: "(() => { const r = document.getElementById('go').getBoundingClientRect(); return { x: r.x + r.width / 2, y: r.y + r.height / 2 }; })()", returnByValue: true },
      direct.sessionId,
    );
    const point = result.value;
    const samples = { direct: { press: [], release: [], key: [], enter: [] }, tabtunnel: { press: [], release: [], key: [], enter: [] } };
    for (let done = 0; done < gestures; done += BLOCK) {
      await block(direct.client, direct.sessionId, point, samples.direct);
      await block(tunnel.client, tunnel.sessionId, point, samples.tabtunnel);
    }
    const summary = (path) => Object.fromEntries(Object.entries(samples[path]).map(([k, v]) => [k, latencySummary(v)]));
    const d = summary('direct');
    const t = summary('tabtunnel');
    return {
      gestures: samples.direct.press.length,
      direct: d,
      tabtunnel: t,
      press_cost_p50_ms: t.press.p50_ms - t.release.p50_ms - (d.press.p50_ms - d.release.p50_ms),
      enter_cost_p50_ms: t.enter.p50_ms - t.key.p50_ms - (d.enter.p50_ms - d.key.p50_ms),
    };
  } finally {
    direct.client.close();
    tunnel.client.close();
  }
}
