// The benchmark's pages, served by the harness's page server beside the test form.

// A canvas of xorshift noise, `w` x `h` CSS pixels: PNG cannot compress it, so a full-page
// screenshot is about 4 bytes of base64 per pixel.
const NOISE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>noise</title>
<style>html,body{margin:0;padding:0}canvas{display:block}</style></head>
<body><canvas id="noise"></canvas>
<script>
  const q = new URLSearchParams(location.search);
  const w = Number(q.get('w')), h = Number(q.get('h'));
  const canvas = document.getElementById('noise');
  canvas.width = w;
  canvas.height = h;
  const ctx = canvas.getContext('2d');
  const image = ctx.createImageData(w, h);
  const pixels = new Uint32Array(image.data.buffer);
  let x = 2463534242;
  for (let i = 0; i < pixels.length; i += 1) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    pixels[i] = (x >>> 0) | 0xff000000; // opaque
  }
  ctx.putImageData(image, 0, 0);
  window.noiseReady = true;
</script></body></html>
`;

// flood(n) fetches /ping n times, 64 at a time (Chromium fails a renderer's requests beyond a
// few hundred pending with ERR_INSUFFICIENT_RESOURCES); each request is ~6 Network events.
const FLOOD = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>flood</title></head>
<body><p>event flood</p>
<script>
  window.flood = async (n, parallel = 64) => {
    let next = 0;
    const worker = async () => {
      while (next < n) {
        const i = next++;
        await fetch('/ping?i=' + i, { cache: 'no-store' }).then((r) => r.text());
      }
    };
    await Promise.all(Array.from({ length: parallel }, worker));
    return n;
  };
</script></body></html>
`;

export const BENCH_PAGES = {
  '/noise.html': NOISE,
  '/flood.html': FLOOD,
  '/ping': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' });
    res.end('pong');
  },
};

/** Navigates `sessionId`'s page to `url` and waits for `readyExpression` to be true. */
export async function navigate(client, sessionId, url, readyExpression = "document.readyState === 'complete'") {
  await client.send('Page.navigate', { url }, sessionId);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { result } = await client
      .send('Runtime.evaluate', { expression: `location.href === ${JSON.stringify(url)} && (${readyExpression})`, returnByValue: true }, sessionId)
      .catch(() => ({ result: {} })); // the old document's context may be gone mid-navigation
    if (result?.value === true) return;
    if (Date.now() > deadline) throw new Error(`${url} did not become ready (${readyExpression})`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
