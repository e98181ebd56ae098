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
  <label>Card number <input id="card" name="cardnumber" autocomplete="cc-number" inputmode="numeric" data-expect="held" data-gesture="enter"></label>
  <label>CVC <input id="cvc" name="cvc" autocomplete="cc-csc" size="4"></label>
  <button id="pay" class="pay" type="submit" data-expect="held">Pay €1,240.00</button>
</form>
<button id="pay-js" type="button" class="pay" data-expect="held">Pay with saved card</button>
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
  <label>Type <b>acme/rocket</b> to confirm <input id="verify" name="verify" data-expect="held" data-gesture="enter"></label>
  <button id="delete" class="danger" type="submit" data-expect="held">Delete this repository</button>
</form></section>`);

export const ACCOUNT = page('Account security', `
<h1>Account security</h1>
<form id="password-form" method="post" action="/account/password">
  <label>Current password <input id="current" type="password" name="current_password" autocomplete="current-password"></label>
  <label>New password <input id="new" type="password" name="new_password" autocomplete="new-password" data-expect="held" data-gesture="enter"></label>
  <button id="change" type="submit" data-expect="held">Change password</button>
</form>
<form id="search" method="get" action="/account/search"><input id="q" name="q" type="search" aria-label="Search settings" data-expect="pass" data-gesture="enter"><button id="search-go" data-expect="pass">Search</button></form>`);

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
  };
  // A one-page PDF: Chrome's viewer, embedded in a page, detaches an extension's debugger.
  pages['/doc.pdf'] = (req, res) => {
    res.writeHead(200, { 'content-type': 'application/pdf' });
    res.end('%PDF-1.1\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj ' +
      '3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF');
  };
  for (const path of ['/shop/pay', '/shop/api/pay', '/shop/cart/add', '/acme/rocket/settings/delete', '/acme/rocket/settings/rename', '/account/password']) {
    pages[path] = write;
  }
  return { pages, writes, bodies };
}
