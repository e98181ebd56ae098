// A lean CDP client for the benchmark. The e2e tests' RawCdp keeps every unclaimed message and
// scans lists for waiters, with a timer per call: fine for tests, but that client-side cost
// would be counted against every path here. This one keeps a Map of pending ids, parses only
// what it must (a multi-MiB answer is matched by its leading id), and fails calls that waited
// for more than one sweep of a single timer (ANSWER_LIMIT_MS to twice that).

import WebSocket from 'ws';

const LEADING_ID = /^\{"id":(\d+),/;
const ANSWER_LIMIT_MS = 60_000;

export class CdpClient {
  /** Opens `url` (a CDP WebSocket). `onEvent(message)` sees every event, parsed. */
  static open(url, { onEvent } = {}) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 512 << 20 });
      ws.once('open', () => resolve(new CdpClient(ws, onEvent)));
      ws.once('error', (err) => reject(new Error(`CDP WebSocket ${url}: ${err.message}`)));
    });
  }

  constructor(ws, onEvent) {
    this.ws = ws;
    this.onEvent = onEvent ?? (() => {});
    this.pending = new Map();
    this.nextId = 1;
    ws.on('message', (data) => this.receive(data));
    ws.once('close', () => {
      clearInterval(this.sweeper);
      for (const { reject } of this.pending.values()) reject(new Error('CDP socket closed'));
      this.pending.clear();
    });
    // Ids below the previous sweep's watermark have waited a whole sweep interval.
    let watermark = 0;
    this.sweeper = setInterval(() => {
      for (const [id, { reject, method }] of this.pending) {
        if (id >= watermark) break; // in id order: the rest are younger
        this.pending.delete(id);
        reject(new Error(`${method} (id ${id}): no answer within ${ANSWER_LIMIT_MS / 1000} s`));
      }
      watermark = this.nextId;
    }, ANSWER_LIMIT_MS).unref();
  }

  receive(data) {
    // A raw answer ({"id":N,...} first, as Chrome and tabtunnel both write it) is handed over
    // unparsed: a caller that wants only its size or timing should not pay for JSON.parse.
    const head = data.length > 4096 ? data.subarray(0, 64).toString() : null;
    const leading = head && LEADING_ID.exec(head);
    if (leading) {
      const waiter = this.pending.get(Number(leading[1]));
      if (waiter?.raw) {
        this.pending.delete(Number(leading[1]));
        waiter.resolve(data);
        return;
      }
    }
    const message = JSON.parse(data.toString());
    if (message.id === undefined) {
      this.onEvent(message);
      return;
    }
    const waiter = this.pending.get(message.id);
    if (!waiter) return;
    this.pending.delete(message.id);
    if (message.error) waiter.reject(new Error(`${waiter.method}: ${JSON.stringify(message.error)}`));
    else waiter.resolve(waiter.raw ? data : message.result);
  }

  /** Sends a command; resolves with its result (rejects with its CDP error). */
  send(method, params = {}, sessionId, { raw = false } = {}) {
    const id = this.nextId++;
    const frame = sessionId ? { id, method, params, sessionId } : { id, method, params };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method, raw });
      this.ws.send(JSON.stringify(frame));
    });
  }

  /** Like `send`, but resolves with the answer's raw bytes (a Buffer), unparsed. */
  sendRaw(method, params, sessionId) {
    return this.send(method, params, sessionId, { raw: true });
  }

  close() {
    this.ws.terminate();
  }
}

/** Attaches to a page target (flat session) and resolves with its sessionId. */
export async function attachToPage(client, targetId) {
  const { sessionId } = await client.send('Target.attachToTarget', { targetId, flatten: true });
  return sessionId;
}
