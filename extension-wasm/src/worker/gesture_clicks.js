// tabtunnel's gesture guard: remembers the elements the frame's clicks and drops acted on (a
// person's, a client's input, or a script's `el.click()` / `dispatchEvent`), for the write their handlers
// send (`gesture_facts.js` reads them). Runs at document start in the guard's isolated world,
// which the page's scripts cannot see; its capturing listeners on the window come before any
// of theirs.
//
// The last element that acts is `node`; the ones clicked before it since a write was last
// judged are kept in `earlier` (a handler may write after the next click), so nothing an
// agent fires next takes a label back: an event on no element that acts (the window, the
// body, plain text) changes nothing, and one on another element only adds it.
(() => {
  if (globalThis.__tabtunnelClick) return;
  // Same as `ACTS` in gesture_facts.js (a native test keeps them equal).
  const ACTS = 'button, a[href], input, select, textarea, summary, label, [role=button], [role=link],' +
    ' [role=menuitem], [role=menuitemcheckbox], [role=menuitemradio], [role=option], [role=tab],' +
    ' [role=checkbox], [role=radio], [role=switch], [onclick], [contenteditable=""], [contenteditable=true]';
  const KEEP = 16;
  // `latest` and each of `earlier`: { node, event, done, judged, submit } (`done`: when its
  // dispatch ended; `judged`: a write was read while it was the last; `submit`: the `submit`
  // event of the form it submitted, if any).
  const record = { latest: null, earlier: [], dropped: false };
  // A click's own event says what it did (a handler may cancel its navigation); a press or
  // release of the same element after it says nothing new, and must not take its place.
  const CLICKS = ['click', 'auxclick', 'dblclick'];
  Object.defineProperty(globalThis, '__tabtunnelClick', { value: record });
  const up = (e) => e.assignedSlot || e.parentElement || (e.parentNode && e.parentNode.host) || null;
  // As `actingOf` in gesture_facts.js: else a component (a custom element with no open shadow
  // root, being or holding the pressed node in its light DOM, with little text and nothing
  // that acts).
  const littleText = (c) => {
    const walker = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
    let length = 0;
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      length += t.nodeValue.trim().length;
      if (length > 60) return false;
    }
    return true;
  };
  const acting = (node) => {
    const start = node && (node.nodeType === 1 ? node : node.parentElement || null);
    let component = null;
    for (let e = start, depth = 0; e && depth < 16; e = up(e), depth += 1) {
      if (e.matches && e.matches(ACTS)) return e;
      if (!component && e.tagName && e.tagName.includes('-') && !e.shadowRoot &&
          e.contains(start) && littleText(e) && !e.querySelector(ACTS)) component = e;
    }
    return component;
  };
  const seen = (event) => {
    const path = event.composedPath ? event.composedPath() : [];
    const node = path[0] || event.target;
    // A drop acts on whatever it lands on: a drop zone is seldom a button.
    const element = acting(node) || (event.type === 'drop' && node && node.nodeType === 1 ? node : null);
    if (!element) return;
    const last = record.latest;
    if (last && !last.judged && acting(last.node) === element && CLICKS.includes(last.event.type) &&
        !CLICKS.includes(event.type)) {
      return;
    }
    // One a write was judged with while it was the last has had its say: it leaves.
    if (last && !last.judged && acting(last.node) !== element) {
      record.earlier.push(last);
      if (record.earlier.length > KEEP) {
        record.earlier.shift();
        record.dropped = true; // judged as asked: a label may have been pushed out
      }
    }
    const entry = { node, event, done: 0, judged: false, drop: event.type === 'drop' };
    record.latest = entry;
    // After the dispatch (and any dialog its handlers opened): from then on the age counts.
    setTimeout(() => { entry.done = performance.now(); }, 0);
  };
  for (const type of ['click', 'auxclick', 'dblclick', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'touchend', 'drop']) {
    addEventListener(type, seen, true);
  }
  // The submission a click on a form's button starts is kept with the click: a GET form whose
  // `submit` a handler cancelled (to send it with `fetch`) read no page (`gesture_facts.js`
  // reads `defaultPrevented` when a write is judged, after every handler ran).
  addEventListener('submit', (event) => {
    const last = record.latest;
    const element = last && !last.judged && CLICKS.includes(last.event.type) ? acting(last.node) : null;
    if (element && (element === event.submitter || element.form === event.target)) last.submit = event;
  }, true);
})();
