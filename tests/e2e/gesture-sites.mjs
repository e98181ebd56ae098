// Local sites for the gesture guard's tests (issue 16): a shop with a card form and
// "Pay €1,240.00", a repository's settings with "Delete this repository", an account page with
// a change-password form, each with harmless neighbours (a search, "Next", "Add to cart",
// "Rename"). The server counts every request that writes, by method and path: "reached the
// server" in the tests is what it saw. Elements carry the false-positive survey's
// `data-expect` (tests/fixtures/gestures/README.md). Each page fits in an agent's viewport (780x437 under
// Chrome's debugging bar): a click just below the fold flakes through tabtunnel with or without
// the guard (measured 1 in 10 on main), when the viewport changes between a client's hit test
// and its press.

function page(title, body) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<style>body{font:14px sans-serif;margin:.5em 1em;background:#f8fafc} h1{font-size:18px;margin:.2em 0} h2{font-size:15px;margin:0}
form{margin:.3em 0;padding:.3em .5em;border:1px solid #ccd} p{margin:.3em 0}
button{font-size:14px;padding:.2em .8em} .danger{background:#c62828;color:#fff} .pay{background:#2e7d32;color:#fff}</style>
</head><body>${body}</body></html>`;
}

export const SHOP = page('Checkout – Rocket Shop', `
<h1>Checkout</h1>
<nav><a id="next" href="/shop/list?page=2" data-expect="pass">Next</a></nav>
<form id="search" method="get" action="/shop/search" role="search">
  <label for="q">Search products</label> <input id="q" name="q" type="search" data-expect="pass" data-gesture="enter"> <button id="search-go" data-expect="pass">Search</button>
</form>
<p>Rocket boots × 2 <form id="cart" method="post" action="/shop/cart/add" style="display:inline;border:0;padding:0">
  <input type="hidden" name="item" value="boots"><button id="add" data-expect="pass">Add to cart – €620.00</button></form></p>
<p>Order total: <strong id="total">€1,240.00</strong></p>
<form id="pay-form" method="post" action="/shop/pay">
  <h2>Payment</h2>
  <label>Card number <input id="card" name="cardnumber" autocomplete="cc-number" inputmode="numeric" data-expect="held" data-kind="paying" data-gesture="enter"></label>
  <label>CVC <input id="cvc" name="cvc" autocomplete="cc-csc" size="4"></label>
  <button id="pay" class="pay" type="submit" data-expect="held" data-kind="paying">Pay €1,240.00</button>
</form>
<button id="pay-js" type="button" class="pay" data-expect="held" data-kind="paying">Pay with saved card</button>
<script>
  document.getElementById('pay-js').addEventListener('click', () => {
    fetch('/shop/api/pay', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: 124000, currency: 'EUR' }) });
  });
</script>`);

export const REPO = page('Settings · acme/rocket', `
<h1>acme/rocket · Settings</h1>
<nav><a id="next" href="/acme/rocket/commits?page=2" data-expect="pass">Next</a></nav>
<form id="rename" method="post" action="/acme/rocket/settings/rename">
  <label>Repository name <input id="name" name="name" value="rocket" data-expect="pass" data-gesture="enter"></label> <button id="rename-go" data-expect="pass">Rename</button>
</form>
<section id="danger-zone"><h2>Danger Zone</h2>
<form id="delete-form" method="post" action="/acme/rocket/settings/delete">
  <label>Type <b>acme/rocket</b> to confirm <input id="verify" name="verify" data-expect="held" data-kind="deleting" data-gesture="enter"></label>
  <button id="delete" class="danger" type="submit" data-expect="held" data-kind="deleting">Delete this repository</button>
</form></section>`);

export const ACCOUNT = page('Account security', `
<h1>Account security</h1>
<form id="password-form" method="post" action="/account/password">
  <label>Current password <input id="current" type="password" name="current_password" autocomplete="current-password"></label>
  <label>New password <input id="new" type="password" name="new_password" autocomplete="new-password" data-expect="held" data-kind="secrets" data-gesture="enter"></label>
  <button id="change" type="submit" data-expect="held" data-kind="secrets">Change password</button>
</form>
<form id="search" method="get" action="/account/search"><input id="q" name="q" type="search" aria-label="Search settings" data-expect="pass" data-gesture="enter"><button id="search-go" data-expect="pass">Search</button></form>`);

// The kinds of issue 28 and the signals that do not depend on a fixture's wording: sending a
// message, sharing with anyone with the link (a button whose handler writes), making a
// repository public (an action field), money sent next to its amount, an instance terminated
// (its path), a database dropped by a GraphQL mutation behind a "Remove" button, an icon
// button's DELETE, an icon whose name is in its tooltip library's attribute, a sign-in; beside a
// favourite and a preview that must pass.
export const KINDS = page('Home – Social', `
<form id="compose" method="post" action="/social/compose"><textarea name="body" aria-label="Message">hello</textarea>
  <button id="send" data-expect="held" data-kind="sending">Send message</button></form>
<button id="share" type="button" data-expect="held" data-kind="sharing">Share</button>
<form id="visibility" method="post" action="/social/repo/settings"><input type="hidden" name="action" value="visibility">
  <button id="public" data-expect="held" data-kind="sharing">Make public</button></form>
<button id="p2p" type="button" data-expect="held" data-kind="paying">Send $25.00</button>
<span id="terminate" role="menuitem" tabindex="-1" data-expect="held" data-kind="deleting">Terminate</span>
<button id="drop" type="button" data-expect="held" data-kind="deleting">Remove</button>
<button id="volume" type="button" data-expect="held" data-kind="deleting"><svg width="12" height="12"><title>Detach</title><rect width="12" height="12"/></svg></button>
<button id="tip" type="button" data-bs-original-title="Delete comment" data-expect="held" data-kind="deleting"><i class="icon-trash"></i></button>
<form id="signin" method="post" action="/social/session"><input name="user" aria-label="User" value="ann">
  <input id="password" type="password" name="password" aria-label="Password" autocomplete="current-password"><button id="login" data-expect="held" data-kind="signing-in">Sign in</button></form>
<button id="like" type="button" aria-label="Favourite" data-expect="pass" data-kind="none">☆</button>
<button id="preview" type="button" data-expect="pass" data-kind="sending">Preview</button>
<script>
  const post = (path, body, method = 'POST') => fetch(path, { method, headers: { 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
  const on = (id, f) => document.getElementById(id).addEventListener('click', f);
  on('share', () => post('/social/api/docs/7/share', { scope: 'anyone_with_link' }));
  on('p2p', () => post('/social/api/p2p/transfers', { to: 'sam', cents: 2500 }));
  on('terminate', () => post('/social/api/instances/i-1/terminate', {}));
  on('drop', () => post('/social/graphql', { query: 'mutation { dropDatabase(name: "prod") { ok } }' }));
  on('volume', () => post('/social/api/volumes/v-9', null, 'DELETE'));
  on('tip', () => post('/social/api/ops', { id: 12 }));
  on('like', () => post('/social/api/statuses/1/favourite', {}));
  on('preview', () => { document.getElementById('compose').dataset.previewed = '1'; });
</script>`);

const DONE = page('Done', '<p id="done">done</p>');
const LIST = page('Products – page 2', '<p id="list">page 2</p>');

/**
 * The sites as `startHarness({extraPages})` routes, and the writes they saw. `writes` holds
 * `"METHOD /path"` strings in arrival order; `bodies` the same with ` BODY` once each is read.
 */
export function gestureSites() {
  const writes = [];
  const bodies = [];
  const html = (body) => (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return write(req, res);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(body);
  };
  const write = (req, res) => {
    const what = `${req.method} ${new URL(req.url, 'http://x').pathname}`;
    writes.push(what);
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      bodies.push(`${what} ${Buffer.concat(chunks).toString()}`);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(DONE);
    });
  };
  const pages = {
    '/shop/checkout': html(SHOP),
    '/shop/search': html(page('Search', '<p id="results">results</p>')),
    '/shop/list': html(LIST),
    '/acme/rocket/settings': html(REPO),
    '/acme/rocket/commits': html(LIST),
    '/account/security': html(ACCOUNT),
    '/account/search': html(page('Search', '<p id="results">results</p>')),
    '/social/home': html(KINDS),
  };
  // A one-page PDF: Chrome's viewer, embedded in a page, detaches an extension's debugger.
  pages['/doc.pdf'] = (req, res) => {
    res.writeHead(200, { 'content-type': 'application/pdf' });
    res.end('%PDF-1.1\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj ' +
      '3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF');
  };
  const social = ['/social/compose', '/social/repo/settings', '/social/session', '/social/graphql', '/social/api/docs/7/share', '/social/api/p2p/transfers',
    '/social/api/instances/i-1/terminate', '/social/api/volumes/v-9', '/social/api/ops', '/social/api/statuses/1/favourite'];
  for (const path of ['/shop/pay', '/shop/api/pay', '/shop/cart/add', '/acme/rocket/settings/delete', '/acme/rocket/settings/rename', '/account/password', ...social]) {
    pages[path] = write;
  }
  return { pages, writes, bodies };
}

/** What an agent leaves running in its tab (the leaving tests): a payment every 300 ms. */
export const PAY_EVERY_300_MS = () => {
  window.__payments = setInterval(() => {
    fetch('/shop/api/pay', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).catch(() => {});
  }, 300);
};
