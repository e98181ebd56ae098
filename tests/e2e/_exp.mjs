import { startHarness, EXTENSION_ID, sleep, RawCdp } from './harness.mjs';
const h = await startHarness({ name: 'exp' });
const sw = await h.browser.waitForTarget(t => t.type() === 'service_worker' && t.url().includes(EXTENSION_ID));
const swId = sw._targetId, pageId = h.testPage.target()._targetId;
await h.browser.disconnect(); h.browser = null;
const raw = await RawCdp.open(h.realBrowserWsEndpoint);
console.log(JSON.stringify(await raw.send(1, 'Target.closeTarget', { targetId: swId })));
for (let i = 0; i < 16; i++) {
  await sleep(500);
  const list = await fetch(`${h.clientEndpoint}/json/list`).then(r => r.json());
  const ts = (await raw.send(100 + i, 'Target.getTargets')).result.targetInfos.filter(t => t.type === 'service_worker').length;
  console.log(i, 'sw', ts, 'pages', list.length);
  if (i === 3) {
    const a = await raw.send(50, 'Target.attachToTarget', { targetId: pageId, flatten: true });
    console.log('reload', JSON.stringify(await raw.send(51, 'Page.reload', {}, a.result.sessionId)));
  }
}
console.log(h.logs().split('\n').filter(l => /extension|client/.test(l)).slice(-6).join('\n'));
await h.close();
