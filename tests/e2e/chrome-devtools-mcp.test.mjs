// The unmodified chrome-devtools-mcp server (from tests/node_modules), driven over MCP stdio,
// attached to tabtunnel with --wsEndpoint.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { greetingFor, startHarness } from './harness.mjs';
import { CHROME_DEVTOOLS_MCP_VERSION as MCP_VERSION, startChromeDevtoolsMcp, uidOf } from './mcp.mjs';

describe(`chrome-devtools-mcp ${MCP_VERSION} through tabtunnel`, { timeout: 240_000 }, () => {
  let h;
  let mcp;
  const call = (tool, args) => mcp.call(tool, args);

  before(async () => {
    assert.equal(MCP_VERSION, '1.11.0', 'tests pin chrome-devtools-mcp 1.11.0');
    h = await startHarness({ name: 'mcp' });
    mcp = await startChromeDevtoolsMcp(h, h.wsEndpoint);
  });

  after(async () => {
    await mcp?.close();
    await h?.close();
  });

  let pageId;

  test('list_pages lists the shared page', async () => {
    const text = await call('list_pages');
    assert.ok(text.includes(h.pageUrl), `list_pages does not mention ${h.pageUrl}:\n${text}`);
    assert.ok(!text.includes('sidepanel.html'), `list_pages shows the side panel, which is not shared:\n${text}`);
    // Lines look like "1: <title> (<url>) [selected]".
    const line = text.split('\n').find((l) => l.includes(h.pageUrl));
    const m = /^\s*(\d+):/.exec(line);
    assert.ok(m, `no page id in list_pages line: ${line}`);
    pageId = Number(m[1]);
  });

  test('take_snapshot shows the form controls', async () => {
    assert.ok(pageId !== undefined, 'list_pages gave no page id');
    const text = await call('take_snapshot', { pageId });
    assert.match(text, /textbox "Name"/, `snapshot has no "Name" textbox (the #name input):\n${text}`);
    assert.match(text, /button "Greet"/, `snapshot has no "Greet" button:\n${text}`);
    assert.match(text, /tabtunnel test form/, `snapshot lacks the page heading:\n${text}`);
  });

  test('fill, click, evaluate_script and take_screenshot drive the shared tab', async () => {
    assert.ok(pageId !== undefined, 'list_pages gave no page id');
    const snapshot = await call('take_snapshot', { pageId });
    await call('fill', { pageId, uid: uidOf(snapshot, /textbox "Name"/), value: 'Grace' });
    await call('click', { pageId, uid: uidOf(snapshot, /button "Greet"/) });
    const out = await call('evaluate_script', { pageId, function: "() => document.querySelector('#out').textContent" });
    assert.ok(out.includes(greetingFor('Grace')), `evaluate_script did not read the greeting:\n${out}`);
    const shot = await mcp.callRaw('take_screenshot', { pageId });
    const image = (shot.content ?? []).find((c) => c.type === 'image');
    assert.ok(image, `take_screenshot returned no image: ${JSON.stringify(shot).slice(0, 500)}`);
    assert.equal(image.mimeType, 'image/png');
    const png = Buffer.from(image.data, 'base64');
    assert.equal(png.subarray(1, 4).toString('ascii'), 'PNG', 'take_screenshot image is not a PNG');
    assert.ok(png.length > 2_000, `screenshot is only ${png.length} bytes`);
  });

  test('the side panel says in words what it did: navigate, fill three fields, click, screenshot', async () => {
    assert.ok(pageId !== undefined, 'list_pages gave no page id');
    await call('navigate_page', { pageId, type: 'url', url: `${h.pageServerUrl}/three.html` });
    const snapshot = await call('take_snapshot', { pageId });
    for (const [field, value] of [['Name', 'Ada'], ['Email', 'ada@example.test'], ['City', 'London']]) {
      await call('fill', { pageId, uid: uidOf(snapshot, new RegExp(`textbox "${field}"`)), value });
    }
    await call('click', { pageId, uid: uidOf(snapshot, /button "Send"/) });
    await call('take_screenshot', { pageId });
    const panel = await h.openPanel();
    const steps = '#agents li[data-agent="default"] .activity .step';
    // The panel shows the newest step first and catches up with the daemon's record in its own
    // time (an earlier test's screenshot may still be on it): wait for this screenshot on top
    // and the click named, then read what it says.
    let lines = [];
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      lines = await panel.$$eval(steps, (els) => els.map((el) => el.textContent));
      if (lines[0] === 'took a screenshot' && lines.includes('clicked "Send"')) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const shown = lines.join('\n');
    assert.equal(lines[0], 'took a screenshot', `the screenshot in words, newest first:\n${shown}`);
    assert.ok(lines.length > 0 && lines.length <= 12, `at most a dozen lines:\n${shown}`);
    assert.ok(lines.includes('clicked "Send"'), `the click, named by the guard:\n${shown}`);
    assert.ok(lines.some((l) => l.startsWith('typed 6 characters')), `London typed, counted:\n${shown}`);
    for (const line of lines) {
      assert.doesNotMatch(line, /\b[A-Z][A-Za-z]*\.[a-z][A-Za-z]*\b/, `a protocol method where a word exists:\n${shown}`);
      assert.doesNotMatch(line, /London|ada@example/, `never what was typed:\n${shown}`);
    }
  });

  test("list_console_messages shows the page's console", async () => {
    await call('evaluate_script', { pageId, function: "() => { console.log('hello from the shared tab'); return 1; }" });
    const messages = await call('list_console_messages', { pageId });
    assert.match(messages, /hello from the shared tab/, `console message missing:\n${messages}`);
  });
});
