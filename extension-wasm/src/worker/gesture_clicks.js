// tabtunnel's gesture guard: remembers the element the frame's last click acted on (a person's,
// a client's input, or a script's `el.click()` / `dispatchEvent`), for the write its handlers
// send (`gesture_facts.js` reads it). Runs at document start in the guard's isolated world,
// which the page's scripts cannot see; its capturing listeners on the window come before any
// of theirs.
(() => {
  if (globalThis.__tabtunnelClick) return;
  const record = { node: null, done: 0, event: null };
  Object.defineProperty(globalThis, '__tabtunnelClick', { value: record });
  const seen = (event) => {
    const path = event.composedPath ? event.composedPath() : [];
    const node = path[0] || event.target;
    record.node = node;
    record.event = event;
    record.done = 0;
    // After the dispatch (and any dialog its handlers opened): from then on the age counts.
    setTimeout(() => { if (record.node === node) record.done = performance.now(); }, 0);
  };
  for (const type of ['click', 'auxclick', 'dblclick', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'touchend']) {
    addEventListener(type, seen, true);
  }
})();
