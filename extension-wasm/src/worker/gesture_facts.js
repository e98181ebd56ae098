// What the page shows where an agent acts, for tabtunnel's gesture guard
// (`tabtunnel_wire::gestures::GestureFacts`). Runs in an isolated world of the extension's own
// (`Runtime.callFunctionOn`), so the page's scripts cannot change how it reads, only what the
// DOM holds. Called with `this` = the node a press hits (`mode` "point"), or on the global
// object to read the focused element ("focus") or the form that sends `request` ("request").
// A focus inside a shadow root closed to us is read in steps: "focus" says `closedHost`, the
// extension calls "focusHost" for that host, resolves its closed root through the debugger, and
// calls "focus" again with `this` = that root.
// Every string is bounded; what a field holds is never read, except in the body a gesture's
// form would send (`form.body`), which binds the human's answer and is never shown.
function (mode, selectors, request) {
  const clip = (text, max = 200) => String(text || '').replace(/\s+/g, ' ').trim().slice(0, max);
  // Up the composed tree: a node slotted into an (open) shadow tree is its slot's.
  const up = (e) => e.assignedSlot || e.parentElement || (e.parentNode && e.parentNode.host) || null;
  const ACTS = 'button, a[href], input, select, textarea, summary, label, [role=button], [role=link],' +
    ' [role=menuitem], [role=menuitemcheckbox], [role=menuitemradio], [role=option], [role=tab],' +
    ' [role=checkbox], [role=radio], [role=switch], [onclick], [contenteditable=""], [contenteditable=true]';
  const TEXT_INPUTS = ['text', 'search', 'email', 'tel', 'url', 'password', 'number', 'date',
    'datetime-local', 'month', 'week', 'time'];
  const SUBMITS = (e) => (e.tagName === 'BUTTON' && (e.getAttribute('type') || 'submit').toLowerCase() === 'submit') ||
    (e.tagName === 'INPUT' && (e.type === 'submit' || e.type === 'image'));

  // The element that acts where `node` is: the nearest up the composed tree that `ACTS`, else
  // a component (a custom element: `<sl-button>`, `<md-filled-button>`) whose button is in a
  // closed shadow root (none shows from here), pressed on the label slotted into it from its
  // light DOM (whose way up skips the button), or on its own text (which the press hits as the
  // component itself): the nearest with little text and nothing that acts in its light DOM.
  // Same in gesture_clicks.js.
  const components = new WeakSet();
  const littleText = (c) => {
    const walker = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
    let length = 0;
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      length += t.nodeValue.trim().length;
      if (length > 60) return false;
    }
    return true;
  };
  const isComponent = (c, node) => c.tagName.includes('-') && !c.shadowRoot && c.contains(node) &&
    littleText(c) && !c.querySelector(ACTS);
  const actingOf = (node) => {
    const start = node && (node.nodeType === 1 ? node : node.parentElement || null);
    let component = null;
    for (let e = start, depth = 0; e && depth < 16; e = up(e), depth += 1) {
      if (e.matches && e.matches(ACTS)) return e;
      if (!component && e.tagName && isComponent(e, start)) component = e;
    }
    if (component) components.add(component);
    return component;
  };

  // A closed shadow root the extension resolved, or a host whose closed tree has the focus
  // (only elements that can host a root; `:focus-within` holds across a closed boundary).
  const inRoot = !!this && this.nodeType === 11 && !!this.host;
  const HOSTS = ['article', 'aside', 'blockquote', 'body', 'div', 'footer', 'h1', 'h2', 'h3', 'h4', 'h5',
    'h6', 'header', 'main', 'nav', 'p', 'section', 'span'];
  const closedHost = (e) => !!e && e.nodeType === 1 && !e.shadowRoot && !(inRoot && e === this.host) &&
    (e.localName.includes('-') || HOSTS.includes(e.localName)) && e.matches(':focus-within');

  // The element acted on.
  let node = null;
  if (mode === 'point') {
    node = this;
  } else if (mode === 'focus' || mode === 'focusHost') {
    let e = inRoot ? this.activeElement || this.host : document.activeElement;
    for (let depth = 0; e && depth < 16; depth += 1) {
      if (e.shadowRoot && e.shadowRoot.activeElement) { e = e.shadowRoot.activeElement; continue; }
      let inner = null;
      try { inner = (e.tagName === 'IFRAME' || e.tagName === 'FRAME') ? e.contentDocument : null; } catch (err) { inner = null; }
      if (inner && inner.activeElement && inner.activeElement !== inner.body) { e = inner.activeElement; continue; }
      break;
    }
    node = e;
    if (mode === 'focusHost') return closedHost(e) ? e : null;
  }
  let hit = node && (node.nodeType === 1 ? node : node.parentElement || null);
  let element = actingOf(hit);
  let cursor = false;
  if (!element && hit) {
    try { cursor = getComputedStyle(hit).cursor === 'pointer'; } catch (err) { cursor = false; }
    element = hit;
  }
  if (element && element.tagName === 'LABEL' && element.control) element = element.control;

  const byId = (e, id) => {
    const root = e.getRootNode ? e.getRootNode() : document;
    return (root.getElementById ? root.getElementById(id) : null) || document.getElementById(id);
  };
  // Where icon buttons keep their names: `title`, and where tooltip libraries move it
  // (Bootstrap's `data-bs-original-title`), or keep it (`data-tooltip`, tippy's content).
  const TIPS = ['title', 'data-bs-original-title', 'data-original-title', 'data-tooltip', 'data-tippy-content'];
  const tipOf = (x) => {
    for (const a of TIPS) {
      const v = x.getAttribute && clip(x.getAttribute(a));
      if (v) return v;
    }
    return '';
  };
  // The text of the elements `aria-labelledby` names.
  const labelledBy = (e, max) => {
    const by = e.getAttribute('aria-labelledby');
    return by ? clip(by.split(/\s+/).map((id) => { const x = byId(e, id); return x ? x.textContent : ''; }).join(' '), max) : '';
  };
  // Text as it shows: slotted nodes where their slots are, a shadow tree's own text.
  const flatText = (n, depth = 0) => {
    if (!n || depth > 24) return '';
    if (n.nodeType === 3) return n.nodeValue;
    if (n.nodeType !== 1 && n.nodeType !== 11) return '';
    if (/^(SCRIPT|STYLE|TEMPLATE)$/.test(n.tagName || '')) return '';
    let kids = n.shadowRoot ? [...n.shadowRoot.childNodes] : [...n.childNodes];
    if (n.tagName === 'SLOT') {
      const given = n.assignedNodes({ flatten: true });
      if (given.length) kids = given;
    }
    return kids.slice(0, 64).map((c) => flatText(c, depth + 1)).join(' ');
  };
  const shownText = (e) => (e.shadowRoot || (e.querySelector && e.querySelector('slot'))
    ? flatText(e) : (e.innerText || e.textContent));
  const nameOf = (e) => {
    if (!e || !e.getAttribute) return '';
    const named = labelledBy(e);
    if (named) return named;
    const aria = clip(e.getAttribute('aria-label'));
    if (aria) return aria;
    if (e.tagName === 'INPUT' && ['submit', 'button', 'reset', 'image'].includes(e.type)) {
      return clip(e.value || e.alt || e.title || (e.type === 'submit' ? 'Submit' : ''));
    }
    if (e.labels && e.labels.length) {
      const t = clip([...e.labels].map((l) => l.innerText || l.textContent).join(' '));
      if (t) return t;
    }
    if (e.tagName === 'IMG') return clip(e.alt);
    if (!['INPUT', 'TEXTAREA', 'SELECT'].includes(e.tagName)) {
      const t = clip(shownText(e));
      if (t) return t;
      // An icon button: its own tooltip, else what its icon says (`<i title>`, an `<img alt>`,
      // `<svg><title>` or `aria-label` inside).
      const own = tipOf(e);
      if (own) return own;
      const inner = e.querySelector && e.querySelector(`img[alt], [aria-label], svg title, ${TIPS.map((a) => `[${a}]`).join(', ')}`);
      if (inner) return clip(inner.tagName.toLowerCase() === 'title' ? inner.textContent : (inner.getAttribute('alt') || inner.getAttribute('aria-label') || tipOf(inner)));
    }
    return clip(tipOf(e) || e.placeholder);
  };
  const roleOf = (e) => {
    const own = e.getAttribute && e.getAttribute('role');
    if (own) return clip(own, 40);
    const t = e.tagName;
    if (t === 'A') return e.hasAttribute('href') ? 'link' : '';
    if (t === 'BUTTON' || (t === 'INPUT' && ['submit', 'button', 'reset', 'image'].includes(e.type))) return 'button';
    if (t === 'INPUT') return ['checkbox', 'radio'].includes(e.type) ? e.type : 'textbox';
    if (t === 'TEXTAREA') return 'textbox';
    if (t === 'SELECT') return 'combobox';
    if (t === 'SUMMARY') return 'button';
    return '';
  };

  // What a submission sends as the browser acts: the submitter's formaction/formmethod over
  // the form's, and the `_method` field (Rails) it carries.
  const sentBy = (f, s) => {
    const action = s && s.hasAttribute('formaction') ? String(s.formAction) : String(f.action);
    const method = s && s.hasAttribute('formmethod') ? s.formMethod : f.method;
    let override = '';
    for (const x of [...f.elements].slice(0, 256)) {
      if (x.name !== '_method' || x.disabled || SUBMITS(x) || ['button', 'reset', 'file'].includes(x.type)) continue;
      if (['checkbox', 'radio'].includes(x.type) && !x.checked) continue;
      override = String(x.value);
    }
    if (s && s.name === '_method') override = String(s.value);
    return { action, method: String(method || 'get').toLowerCase(), override: clip(override, 40).toLowerCase() };
  };
  const defaultButton = (f) => [...f.elements].find(SUBMITS) || null;
  const editableEl = (e) => (e.tagName === 'INPUT' && TEXT_INPUTS.includes(e.type)) || e.tagName === 'TEXTAREA' || e.isContentEditable === true;

  // The elements clicked in this frame and in the same-origin frames above it (a handler up
  // there may write through this frame's realm), kept by `gesture_clicks.js`: each frame's
  // last one, then those before it, newest first. Reading them for a write ends the earlier
  // ones' part, and the last one's at the next click (before, it lasted until the next click
  // whatever followed; a write after a judged "Pay" and a click on "Add to cart" is the cart's).
  // The document's forms and those in open shadow roots (`document.forms` lists neither a
  // component's form nor one a component nests), a bounded walk.
  const formsOf = (doc) => {
    const forms = [...doc.forms];
    const roots = [];
    const walker = doc.createTreeWalker(doc, NodeFilter.SHOW_ELEMENT);
    let seen = 0;
    const visit = (w) => {
      for (let e = w.nextNode(); e && seen < 20000; e = w.nextNode(), seen += 1) {
        if (e.shadowRoot) roots.push(e.shadowRoot);
      }
    };
    visit(walker);
    for (let i = 0; i < roots.length && i < 256; i += 1) {
      forms.push(...roots[i].querySelectorAll('form'));
      visit(doc.createTreeWalker(roots[i], NodeFilter.SHOW_ELEMENT));
    }
    return forms;
  };
  const clicks = [];
  const dropTargets = new Set();
  let clicksDropped = false;
  if (mode === 'request') {
    const actingEl = (node) => {
      const e = actingOf(node);
      return e && e.tagName === 'LABEL' && e.control ? e.control : e;
    };
    // What a drop landed on acts, whatever it is (as a drop by input does).
    const dropTarget = (node) => {
      const e = actingEl(node) || (node && node.nodeType === 1 ? node : null);
      if (e) dropTargets.add(e);
      return e;
    };
    let w = window;
    for (let depth = 0; w && depth < 8; depth += 1) {
      try {
        const record = w.__tabtunnelClick;
        if (record && typeof record === 'object') {
          const entries = [record.latest, ...[...(record.earlier || [])].reverse()];
          for (const entry of entries.slice(0, 17)) {
            const el = entry && (entry.drop ? dropTarget(entry.node) : actingEl(entry.node));
            if (el && clicks.length < 24) clicks.push({ el, entry, w });
          }
          if (record.dropped) clicksDropped = true;
          record.earlier = [];
          record.dropped = false;
          if (record.latest) record.latest.judged = true;
        }
        if (w === w.top) break;
        w = w.parent;
      } catch (err) {
        break; // another origin's frame: its scripts cannot reach this frame's realm
      }
    }
  }
  const clickedEl = clicks.length ? clicks[0].el : null;

  // The form: the element's, or the one in this frame that sends the request.
  let form = null;
  let submitter = null;
  if (mode === 'request' && request) {
    const want = String(request.url).split('#')[0];
    const method = String(request.method).toLowerCase();
    const override = String(request.methodOverride || '').toLowerCase();
    const focused = document.activeElement;
    const candidates = [];
    for (const f of formsOf(document).slice(0, 64)) {
      for (const s of [null, ...[...f.elements].filter(SUBMITS).slice(0, 16)]) {
        const sent = sentBy(f, s);
        if (sent.action.split('#')[0] === want && sent.method === method) candidates.push({ f, s, override: sent.override });
      }
    }
    // The submitter clicked or focused a moment ago, else the form whose `_method` says what
    // the body's does, else the first that sends there.
    const pick = candidates.find((c) => c.override === override && c.s && (c.s === clickedEl || c.s === focused)) ||
      candidates.find((c) => c.override === override) || candidates[0] || null;
    form = pick ? pick.f : null;
    submitter = pick ? pick.s : null;
    element = submitter && (submitter === clickedEl || submitter === focused) ? submitter : null;
  } else if (element) {
    form = element.form !== undefined ? element.form : (element.closest ? element.closest('form') : null);
    if (form) submitter = SUBMITS(element) && element.form === form ? element : (editableEl(element) ? defaultButton(form) : null);
  }

  // The body the form would send now, if URL-encoded (a longer one is cut, so it matches no
  // submission and that is asked about): the human's answer allows this body alone. FormData
  // runs the page's formdata listeners, as the submission will.
  const bodyOf = (f, s) => {
    if (mode === 'request') return null;
    try {
      const by = s || defaultButton(f);
      const enctype = by && by.hasAttribute('formenctype') ? by.formEnctype : f.enctype;
      if (enctype !== 'application/x-www-form-urlencoded') return null;
      return String(new URLSearchParams(new FormData(f, by))).slice(0, 1 << 20);
    } catch (err) {
      return null; // a submitter FormData refuses: no body, as for a form with files
    }
  };

  const formFacts = (f, s) => {
    const controls = [...f.elements].slice(0, 96);
    const heading = f.querySelector('legend, h1, h2, h3, h4');
    const sent = sentBy(f, s);
    const buttons = controls.filter(SUBMITS);
    if (s && buttons.includes(s)) buttons.splice(buttons.indexOf(s), 1), buttons.unshift(s);
    return {
      action: sent.action,
      method: sent.method,
      methodOverride: sent.override,
      target: clip(f.target, 40),
      fields: controls.filter((x) => ['INPUT', 'SELECT', 'TEXTAREA'].includes(x.tagName)).slice(0, 64).map((x) => ({
        inputType: clip(x.type || x.tagName.toLowerCase(), 40),
        autocomplete: clip(x.getAttribute('autocomplete'), 80),
        name: clip(x.name, 80),
        id: clip(x.id, 80),
        label: clip((x.labels && x.labels[0] && (x.labels[0].innerText || x.labels[0].textContent)) ||
          x.getAttribute('aria-label') || x.placeholder, 80),
      })),
      buttons: buttons.slice(0, 8).map(nameOf),
      label: clip((heading && heading.textContent) || f.getAttribute('aria-label')),
      frames: [...f.querySelectorAll('iframe')].slice(0, 8).map((i) => clip(`${i.title || ''} ${i.name || ''}`, 120)),
      body: bodyOf(f, s),
    };
  };

  // What an element sits under: the nearest dialog or section with a heading (a generic `Save`
  // there is about what the heading names), else its page's first heading outside a dialog (not
  // the title, which names the site as often as the page; nor a dialog's heading, which is
  // about that dialog: an editor's `Save` is not about its "delete this post?" modal).
  const DIALOGS = 'dialog, [role=dialog], [role=alertdialog]';
  const SECTIONS = `${DIALOGS}, section, article, aside, fieldset, form, [role=region], [role=group]`;
  const pageHeading = (doc) => [...doc.querySelectorAll('h1')].slice(0, 16).find((h) => !h.closest(DIALOGS));
  const headingOf = (c) => {
    const h = c.querySelector('h1, h2, h3, h4, h5, h6, legend, [role=heading]');
    return labelledBy(c, 160) || clip(c.getAttribute('aria-label'), 160) || (h ? clip(h.textContent, 160) : '');
  };
  const sectionOf = (e) => {
    for (let c = up(e), depth = 0; c && depth < 24; c = up(c), depth += 1) {
      const heading = c.matches && c.matches(SECTIONS) ? headingOf(c) : '';
      if (heading) return { c, heading };
    }
    return null;
  };

  const elementFacts = (e) => {
    const tag = e.tagName.toLowerCase();
    const type = e.tagName === 'INPUT' || e.tagName === 'BUTTON' ? clip(e.type, 40) : '';
    const editable = editableEl(e);
    const section = sectionOf(e);
    const h1 = section ? null : pageHeading(e.ownerDocument || document);
    return {
      context: section ? section.heading : clip(h1 && h1.textContent, 160),
      nearby: textOf(e.form || (e.closest && e.closest('form')) || (section && section.c), 400),
      tag,
      role: roleOf(e),
      name: nameOf(e),
      text: ['INPUT', 'TEXTAREA', 'SELECT'].includes(e.tagName) ? '' : clip(shownText(e)),
      inputType: type,
      href: e.tagName === 'A' && e.href ? clip(String(e.href), 300) : '',
      // (A component stands for its button: it acts.)
      actionable: (e.matches && e.matches(ACTS)) || components.has(e) || dropTargets.has(e) || cursor,
      submits: SUBMITS(e) && !!e.form,
      editable,
    };
  };

  // The text the amounts are looked for in: around the element first, then the page.
  const textOf = (root, max) => {
    if (!root) return '';
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: (n) => (n.parentElement && /^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE)$/.test(n.parentElement.tagName)
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    let out = '';
    for (let n = walker.nextNode(); n && out.length < max; n = walker.nextNode()) out += ` ${n.nodeValue}`;
    return clip(out, max);
  };
  const near = form || (element && element.closest ? element.closest('section, article, main, dialog, [role=dialog]') : null);
  const pageText = clip(`${textOf(near, 3000)} ${textOf(document.body, 4000)}`, 7000);

  // Its box in the top page's coordinates, for the picture (none across an origin boundary).
  let rect = null;
  const pictured = element || clickedEl;
  if (pictured && pictured.getBoundingClientRect) {
    const r = pictured.getBoundingClientRect();
    let x = r.x, y = r.y;
    let w = (pictured.ownerDocument && pictured.ownerDocument.defaultView) || window;
    try {
      while (w !== w.top) {
        const fe = w.frameElement;
        const fr = fe.getBoundingClientRect();
        x += fr.x + fe.clientLeft;
        y += fr.y + fe.clientTop;
        w = w.parent;
      }
      rect = { x: x + w.scrollX, y: y + w.scrollY, width: r.width, height: r.height };
    } catch (err) {
      rect = null;
    }
  }

  const matchedSelectors = [];
  for (const selector of selectors || []) {
    try {
      let hitIt = !!(form && form.matches(selector));
      for (let e = element, depth = 0; e && !hitIt && depth < 32; e = up(e), depth += 1) {
        hitIt = !!(e.matches && e.matches(selector));
      }
      if (hitIt) matchedSelectors.push(selector);
    } catch (err) {
      // not a selector this browser reads: it matches nothing
    }
  }

  // A click's age counts from the end of its dispatch (in its frame's clock); a link or a GET
  // form's button whose default action no handler prevented went to read a page (a handler
  // may prevent the click's, or the `submit` of the form it submitted).
  const clickedFacts = ({ el, entry, w }) => {
    const event = entry.event;
    const prevented = !!(event && event.defaultPrevented) || !!(entry.submit && entry.submit.defaultPrevented);
    const href = el.tagName === 'A' && el.href ? String(el.href) : '';
    const here = String(w.location.href).split('#')[0];
    const toAPage = href && !href.startsWith('javascript:') && href.split('#')[0] !== here;
    const getForm = SUBMITS(el) && el.form && ['get', 'dialog'].includes(sentBy(el.form, el).method);
    return {
      element: elementFacts(el),
      msAgo: Math.max(0, Math.round(entry.done ? w.performance.now() - entry.done : 0)),
      navigates: !prevented && !!(toAPage || getForm),
    };
  };
  const clicked = clicks.length ? clickedFacts(clicks[0]) : null;
  const clickedBefore = clicks.slice(1).map(clickedFacts);

  return {
    url: String(location.href),
    element: element ? elementFacts(element) : null,
    form: form ? formFacts(form, submitter) : null,
    clicked,
    clickedBefore,
    clicksDropped,
    pageText,
    rect,
    matchedSelectors,
    closedHost: mode === 'focus' && closedHost(node),
  };
}
