// No agent hands a page the user's local files: under `tabtunnel launch` Chrome lets the
// unpacked extension at file URLs, so without the rule a drag with `data.files` or
// `DOM.setFileInputFiles` gave the agent's own page the owner token. An agent whose policy
// names a directory in `allow_file_uploads` uploads files from there (puppeteer's uploadFile,
// what chrome-devtools-mcp's upload tool runs), and nothing else.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { connectAgent, pollFor, startHarness } from './harness.mjs';

/** What the page posted: `drop|input` and the file's name and first bytes. */
const received = [];

/** A drop zone and a file input that send whatever file they get to the page's server. */
const uploadPage = (req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end(`<input type=file id=f><div id=z style="width:300px;height:200px;background:#eee">drop</div><script>
const send = async (how, files) => { for (const f of files) fetch('/got?' + new URLSearchParams({ how, file: f.name + ':' + (await f.text()).slice(0, 80) })); };
const z = document.getElementById('z');
z.addEventListener('dragover', (e) => e.preventDefault());
z.addEventListener('drop', (e) => { e.preventDefault(); send('drop', e.dataTransfer.files); });
document.getElementById('f').addEventListener('change', (e) => send('input', e.target.files));
</script>`);
};
/** The same page in a cross-site frame (another site: an out-of-process frame of its own). */
const framedPage = (req, res, url) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end(`<p>host</p><iframe id=i src="http://localhost:${url.searchParams.get('port')}/upload" width=400 height=300></iframe>`);
};
const gotPage = (req, res, url) => {
  received.push(`${url.searchParams.get('how')} ${url.searchParams.get('file')}`);
  res.writeHead(204);
  res.end();
};

describe('local files', { timeout: 240_000 }, () => {
  let h;
  let uploads;
  let elsewhere;
  let token;

  before(async () => {
    const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'tabtunnel-files-'));
    uploads = path.join(dir, 'agent-uploads');
    fs.mkdirSync(uploads);
    fs.writeFileSync(path.join(uploads, 'cv.txt'), 'the agent may upload this');
    elsewhere = path.join(dir, 'private.txt');
    fs.writeFileSync(elsewhere, 'the agent may not upload this');
    const policy = path.join(dir, 'policy.toml');
    fs.writeFileSync(policy, `[agent.uploader]\nallow_file_uploads = [${JSON.stringify(uploads)}]\n`);
    h = await startHarness({
      name: 'local-files',
      share: false,
      daemonArgs: ['--policy', policy],
      extraPages: { '/upload': uploadPage, '/framed': framedPage, '/got': gotPage },
    });
    token = path.join(h.configHome, 'tabtunnel', 'token');
    assert.ok(fs.existsSync(token), `the owner token is at ${token}`);
  });

  after(async () => {
    await h?.close();
  });

  /** Drags `files` onto the drop zone of the page (or frame) `target`, by its CDP session. */
  const drag = async (session, files) => {
    const data = { items: [], files, dragOperationsMask: 1 };
    for (const type of ['dragEnter', 'dragOver', 'drop']) await session.send('Input.dispatchDragEvent', { type, x: 100, y: 100, data });
  };

  /** Gives the page's server a moment to hear from the page, then what it heard since `from`. */
  const heardSince = async (from, expect) => {
    if (expect) return pollFor(() => received.length > from && received.slice(from), 15_000, 'the page to post the file', h.detail);
    // Nothing should come: a page that got a file posts it at once, so a round trip to the
    // page (after its fetches were queued) is a bound on what it would have sent.
    await new Promise((r) => setTimeout(r, 1500));
    return received.slice(from);
  };

  test('the side panel says file access is on, that tabtunnel does not need it, and how to turn it off', async () => {
    // `tabtunnel launch` loads the extension unpacked: Chrome turns the switch on.
    assert.equal(await h.sw(() => new Promise((r) => chrome.extension.isAllowedFileSchemeAccess(r))), true);
    const panel = await h.openPanel();
    const warning = await panel.waitForSelector('#file-access-warning:not([hidden])', { timeout: 15_000 });
    const text = await warning.evaluate((e) => e.textContent);
    assert.match(text, /Allow access to file URLs/);
    assert.match(text, /does not need it/);
    assert.match(text, /Extensions page, under tabtunnel's Details/);
  });

  test('no agent without allow_file_uploads drags or uploads a local file', async () => {
    const agent = await connectAgent(h, 'mallory');
    try {
      const page = await agent.newPage();
      const port = new URL(h.pageServerUrl).port;
      await page.goto(`${h.pageServerUrl}/framed?port=${port}`, { waitUntil: 'load', timeout: 20_000 });
      const frame = await pollFor(() => page.frames().find((f) => f.url().includes('/upload')), 15_000, 'the framed page');
      const from = received.length;
      // The page's own session, and the frame's (an out-of-process frame: a child session).
      assert.ok(frame.client && frame.client !== page.mainFrame().client, 'the frame has its own session');
      const sessions = [await page.createCDPSession(), frame.client];
      for (const session of sessions) {
        for (const file of [token, '/etc/hostname', path.join(uploads, 'cv.txt')]) {
          await assert.rejects(drag(session, [file]), /local files: no agent hands a page/, `drag ${file}`);
        }
      }
      for (const target of [page.mainFrame(), frame]) {
        // The framed page has the input; the top page gets one for the test.
        if (target === page.mainFrame()) await page.evaluate(() => document.body.insertAdjacentHTML('beforeend', '<input type=file id=f>'));
        const input = await target.$('#f');
        for (const file of [token, elsewhere]) {
          await assert.rejects(input.uploadFile(file), /local files: no agent hands a page/, `uploadFile ${file}`);
        }
      }
      assert.deepEqual(await heardSince(from, false), [], 'the page got no file');
      await page.close();
    } finally {
      await agent.disconnect();
    }
  });

  test('an agent uploads from the directory its policy names, and only from there', async () => {
    const agent = await connectAgent(h, 'uploader');
    try {
      const page = await agent.newPage();
      await page.goto(`${h.pageServerUrl}/upload`, { waitUntil: 'load', timeout: 20_000 });
      let from = received.length;
      const input = await page.$('#f');
      await input.uploadFile(path.join(uploads, 'cv.txt'));
      assert.deepEqual(await heardSince(from, true), ['input cv.txt:the agent may upload this']);
      from = received.length;
      const session = await page.createCDPSession();
      await drag(session, [path.join(uploads, 'cv.txt')]);
      assert.deepEqual(await heardSince(from, true), ['drop cv.txt:the agent may upload this']);
      from = received.length;
      await assert.rejects(input.uploadFile(elsewhere), /is not in a directory of allow_file_uploads in \[agent.uploader\]/);
      await assert.rejects(drag(session, [token]), /tabtunnel's own config or data directory/);
      await assert.rejects(drag(session, [`${uploads}/../private.txt`]), /has a "\.\." component/);
      assert.deepEqual(await heardSince(from, false), []);
      await page.close();
    } finally {
      await agent.disconnect();
    }
  });
});
