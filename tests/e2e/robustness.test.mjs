// Nothing lost, nothing held: bad frames, slow readers, idle sockets and a stopped extension
// worker never cost another client, nor the daemon its memory. Each test is one of the defects
// an outside tester found, checked in real Chromium with the built extension.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';

import { RawCdp, pollFor, rawGet, sharedPageUrls, sleep, startHarness, withTimeout } from './harness.mjs';

const MiB = 1 << 20;

/** A raw client on the browser endpoint with a page session on the shared tab (Playwright's way). */
async function pageClient(h) {
  const cdp = await RawCdp.open(h.wsEndpoint);
  const attached = cdp.next((m) => m.method === 'Target.attachedToTarget', 'the shared page attaching');
  const reply = await cdp.send(1, 'Target.setAutoAttach', { autoAttach: true, flatten: true, waitForDebuggerOnStart: false });
  assert.deepEqual(reply.result, {}, JSON.stringify(reply));
  return { cdp, session: (await attached).params.sessionId };
}

/** A command on the client's page session. The wait is generous: a busy machine is no failure. */
function call(client, id, method, params) {
  client.cdp.sendRaw(JSON.stringify({ id, method, params, sessionId: client.session }));
  return client.cdp.next((m) => m.id === id, `the answer to ${method} (id ${id})`, 120_000);
}

async function evaluate(client, id, expression) {
  const reply = await call(client, id, 'Runtime.evaluate', { expression, returnByValue: true });
  assert.ok(reply.result, `Runtime.evaluate ${expression}: ${JSON.stringify(reply)}`);
  return reply.result.result.value;
}

function procStatusKiB(pid, field) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)[1]);
}

describe('nothing lost, nothing held', { timeout: 600_000 }, () => {
  let h;

  before(async () => {
    h = await startHarness({ name: 'robust' });
  });

  after(async () => {
    await h?.close();
  });

  test('(1) params that are not an object get an answer each, and cost no other client anything', async () => {
    const a = await pageClient(h);
    const b = await pageClient(h);
    try {
      const cases = [
        ['5', -32600],
        ['true', -32600],
        ['"s"', -32600],
        ['[]', -32602],
        ['[1]', -32602],
      ];
      for (const [i, [params, code]] of cases.entries()) {
        const id = 100 + i;
        a.cdp.sendRaw(`{"id":${id},"method":"Runtime.evaluate","params":${params},"sessionId":"${a.session}"}`);
        const reply = await a.cdp.next((m) => m.id === id, `the answer to params ${params}`, 15_000);
        assert.equal(reply.error?.code, code, `params ${params}: ${JSON.stringify(reply)}`);
        // The other client's next command on the same tab is unaffected, and so is this one's.
        assert.equal(await evaluate(b, 200 + i, '6 * 7'), 42);
        assert.equal(await evaluate(a, 300 + i, '7 * 6'), 42);
      }

      // Whatever chrome.debugger throws in the worker becomes that command's error.
      await h.sw(() => {
        const original = chrome.debugger.sendCommand;
        globalThis.restoreSendCommand = () => {
          chrome.debugger.sendCommand = original;
        };
        chrome.debugger.sendCommand = function (target, method, params, ...rest) {
          if (params?.expression === 'throw synchronously') throw new TypeError('No matching signature (test)');
          return original.call(this, target, method, params, ...rest);
        };
      });
      try {
        const thrown = await call(a, 400, 'Runtime.evaluate', { expression: 'throw synchronously' });
        assert.match(thrown.error?.message ?? '', /No matching signature \(test\)/, JSON.stringify(thrown));
        assert.equal(await evaluate(b, 401, '1 + 1'), 2);
        assert.equal(await evaluate(a, 402, '2 + 2'), 4);
      } finally {
        await h.sw(() => globalThis.restoreSendCommand());
      }
    } finally {
      a.cdp.close();
      b.cdp.close();
    }
  });

  test('(2) 1,100 refused frames on one connection hold no in-flight slot', async () => {
    const client = await pageClient(h);
    try {
      const count = 1100;
      const answers = [];
      for (let id = 1000; id < 1000 + count; id += 1) {
        answers.push(client.cdp.next((m) => m.id === id, `the answer to frame ${id}`, 60_000));
        client.cdp.sendRaw(`{"id":${id},"method":"Runtime.evaluate","params":5,"sessionId":"${client.session}"}`);
      }
      for (const reply of await Promise.all(answers)) {
        assert.equal(reply.error?.code, -32600, JSON.stringify(reply));
      }
      assert.equal(await evaluate(client, 5000, '6 * 7'), 42);
    } finally {
      client.cdp.close();
    }
  });

  test('(3) two paused readers during a flood are closed, the others carry on, memory stays bounded', async () => {
    const pid = h.daemon.pid;
    const active = await pageClient(h);
    const paused = [await pageClient(h), await pageClient(h)];
    try {
      for (const [i, c] of [active, ...paused].entries()) {
        const reply = await call(c, 10 + i, 'Runtime.enable', {});
        assert.ok(reply.result, JSON.stringify(reply));
      }
      const received = paused.map(() => ({ bytes: 0 }));
      paused.forEach((c, i) => {
        c.cdp.ws.on('message', (data) => {
          received[i].bytes += data.length;
        });
        c.cdp.ws._socket.pause();
      });
      const consoleEvents = active.cdp.discard((m) => m.method === 'Runtime.consoleAPICalled');
      const dropsBefore = h.logs().split('client disconnected: it is not reading fast enough').length - 1;

      // 4,000 console messages of 32 KB each: 125 MiB for every reader.
      const messages = 4000;
      const flood = `(() => { const s = 'x'.repeat(32768); for (let i = 0; i < ${messages}; i++) console.log(s); return ${messages}; })()`;
      const floodReply = call(active, 20, 'Runtime.evaluate', { expression: flood, returnByValue: true });
      // The active client is answered throughout.
      let answered = 0;
      const deadline = Date.now() + 120_000;
      while (consoleEvents.count < messages) {
        assert.ok(Date.now() < deadline, `only ${consoleEvents.count} of ${messages} console messages arrived`);
        assert.equal(await evaluate(active, 1000 + answered, `${answered} + 1`), answered + 1);
        answered += 1;
        await sleep(50);
      }
      assert.equal((await floodReply).result?.result?.value, messages);
      assert.equal(consoleEvents.count, messages, 'the reading client got every console message');

      // The paused readers are disconnected once they have taken nothing for 30 s...
      const drops = () => h.logs().split('client disconnected: it is not reading fast enough').length - 1;
      await pollFor(() => drops() - dropsBefore >= 2, 60_000, 'the daemon to drop both paused readers', h.detail);
      const peakKiB = procStatusKiB(pid, 'VmHWM');
      // ...and, resumed, they find their socket closed after what the socket buffers held, not
      // the whole flood.
      const flooded = messages * 32768;
      for (const [i, c] of paused.entries()) {
        c.cdp.ws._socket.resume();
        await withTimeout(c.cdp.closed, 30_000, `paused reader ${i} closed by the daemon`, h.detail);
        assert.ok(received[i].bytes < flooded / 2, `paused reader ${i} received ${received[i].bytes} of ${flooded} bytes`);
      }

      // A paused reader may hold what the page sent while its patience ran (30 s: a reading
      // client on two loaded cores was seen to take nothing for over 5 s), here the whole flood,
      // and the reading client what it is behind: never more than one copy of the flood per
      // client (two paused copies alone peaked at 336 MB on two loaded cores, over a bound
      // that left the reader nothing).
      const boundKiB = ((paused.length + 1) * flooded) / 1024 + 64 * 1024;
      assert.ok(peakKiB < boundKiB, `the daemon's resident memory peaked at ${peakKiB} KiB (bound ${boundKiB})`);
      // Memory goes back near its resting level once the load is gone.
      const settledKiB = await pollFor(
        () => {
          const rss = procStatusKiB(pid, 'VmRSS');
          return rss < 64 * 1024 ? rss : null;
        },
        30_000,
        `the daemon's resident memory back under 64 MiB (now ${procStatusKiB(pid, 'VmRSS')} KiB)`,
        h.detail,
      );
      console.log(`# daemon memory: peak ${(peakKiB / 1024).toFixed(1)} MiB, after ${(settledKiB / 1024).toFixed(1)} MiB`);
    } finally {
      for (const c of [active, ...paused]) c.cdp.close();
    }
  });

  test('(4) a method that is not valid text is answered with its id, as Chromium does', async () => {
    const cdp = await RawCdp.open(h.wsEndpoint);
    try {
      cdp.sendRaw('{"id":8,"method":"\\ud800"}');
      const reply = await cdp.next((m) => m.id === 8, 'the answer to a lone-surrogate method');
      assert.deepEqual(reply.error, { code: -32600, message: "Message must have string 'method' property" });
      // Where Chromium would drop the id (the bad property comes first), it is kept.
      cdp.sendRaw('{"method":"\\ud800","id":9}');
      assert.equal((await cdp.next((m) => m.id === 9, 'the answer with the id last')).error?.code, -32600);
      // Chromium's id rules: an integral float is an id; beyond 32 bits is not.
      cdp.sendRaw('{"id":2.0,"method":"Browser.getVersion"}');
      assert.ok((await cdp.next((m) => m.id === 2, 'the answer to id 2.0')).result?.product);
      cdp.sendRaw('{"id":4294967296,"method":"Browser.getVersion"}');
      const beyond = await cdp.next((m) => m.error && m.id === undefined, 'the answer to a 33-bit id');
      assert.equal(beyond.error.message, "Message must have integer 'id' property");
    } finally {
      cdp.close();
    }
  });

  test('(5) a connection that sends no request is closed', async () => {
    const socket = net.connect(h.port, '127.0.0.1');
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.on('error', () => {});
    await withTimeout(closed, 30_000, 'the daemon closing an idle TCP connection', h.detail);
    // A kept-alive HTTP connection that sends no second request goes the same way.
    const kept = net.connect(h.port, '127.0.0.1');
    let response = '';
    kept.on('data', (chunk) => {
      response += chunk;
    });
    kept.on('error', () => {});
    const keptClosed = new Promise((resolve) => kept.once('close', resolve));
    kept.write(`GET /${h.token}/json/version HTTP/1.1\r\nHost: 127.0.0.1:${h.port}\r\n\r\n`);
    await withTimeout(keptClosed, 30_000, 'the daemon closing an idle kept-alive connection', h.detail);
    assert.match(response, /^HTTP\/1\.1 200/);
  });

  test('(6) a stopped worker comes back on its own and shares its tab again', async () => {
    // Stop the worker the way Chrome does, through the browser's own debugging port; the
    // harness's puppeteer connection would auto-attach (and pause) the restarted worker.
    await h.stopWorker();

    // While it is away, discovery and browser-level requests say why there is nothing.
    const version = await pollFor(
      async () => {
        const r = await rawGet(h.port, `/${h.token}/json/version`);
        return r.status === 503 ? r : null;
      },
      30_000,
      '/json/version answering 503 once the worker is stopped',
      h.detail,
    );
    assert.match(version.body, /extension is not connected/);
    const early = await RawCdp.open(h.wsEndpoint);
    try {
      const reply = await early.send(1, 'Target.getTargets');
      assert.match(reply.error?.message ?? '', /extension is not connected/, JSON.stringify(reply));
    } finally {
      early.close();
    }

    // Nothing happens in the browser; within a minute the tab is back and answers.
    await pollFor(
      async () => (await sharedPageUrls(h))?.includes(h.pageUrl),
      60_000,
      'the shared tab back in /json/list with no browser event',
      h.detail,
    );
    const client = await pageClient(h);
    try {
      assert.equal(await evaluate(client, 2, '6 * 7'), 42);
    } finally {
      client.cdp.close();
    }
  });
});
