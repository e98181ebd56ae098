// `tabtunnel mcp`'s child tool server stays a browser tool: an agent (on its own `tta_` token)
// runs no code in the child's process and names no file outside the session's work directory.
// The MCP client starts `tabtunnel mcp` in its own cwd, often `$HOME`: here the harness's home
// (the parent of its XDG config dir). Red team of issue 26, run 3: mcprce.mjs, mcpupload.mjs,
// mcpwrite.mjs.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { daemonBinary, sleep, startHarness } from './harness.mjs';
import { startMcpServer, textOf } from './mcp.mjs';

const uploads = [];
const PAGES = {
  // A file input whose page sends home whatever file it is given.
  '/drop': (req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<input type=file id=f aria-label="Upload"><script>
document.getElementById('f').addEventListener('change', async (e) => {
  for (const f of e.target.files) fetch('/got?f=' + encodeURIComponent(f.name + ':' + (await f.text()).slice(0, 80)));
});</script>`);
  },
  '/got': (req, res, url) => {
    uploads.push(url.searchParams.get('f'));
    res.writeHead(204);
    res.end();
  },
  '/shell': (req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<p>$(touch PWNED)</p>');
  },
};

describe('tabtunnel mcp --tools playwright: the child is confined', { timeout: 300_000 }, () => {
  let h;
  let home;
  let mcp;
  let ownerToken;
  const marker = path.join(os.tmpdir(), `tabtunnel-pwned-${process.pid}`);

  async function attempt(tool, args) {
    try {
      const result = await mcp.client.callTool({ name: tool, arguments: args });
      return { error: !!result.isError, text: textOf(result) };
    } catch (e) {
      return { error: true, text: String(e.message) };
    }
  }

  before(async () => {
    h = await startHarness({ name: 'mcp-child-confined', share: false, extraPages: PAGES });
    h.shareInstalledToolServers();
    home = path.dirname(h.configHome);
    const env = { XDG_CONFIG_HOME: h.configHome, XDG_DATA_HOME: h.dataHome };
    const added = execFileSync(daemonBinary(), ['agent', 'add', 'mallory'], { env: { ...process.env, ...env }, encoding: 'utf8' });
    const tta = /tta_[0-9a-f]+/.exec(added)[0];
    ownerToken = fs.readFileSync(path.join(h.configHome, 'tabtunnel', 'token'), 'utf8').trim();
    fs.writeFileSync(path.join(home, '.bashrc'), "# the user's own .bashrc\n");
    mcp = await startMcpServer(h, {
      name: 'tabtunnel mcp --tools playwright (mallory)',
      command: daemonBinary(),
      args: ['mcp', '--tools', 'playwright', '--endpoint', `http://127.0.0.1:${h.port}/${tta}`],
      env,
      cwd: home,
    });
  });

  after(async () => {
    await mcp?.close();
    await h?.close();
    fs.rmSync(marker, { force: true });
  });

  test('(red team 3, finding 5) browser_run_code_unsafe is neither listed nor run by name', async () => {
    const names = (await mcp.client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('browser_navigate'), names.join(', '));
    assert.ok(!names.includes('browser_run_code_unsafe'), `listed: ${names.join(', ')}`);
    await attempt('browser_navigate', { url: `${h.pageServerUrl}/shell` });
    const code = `async (page) => { const P = page.constructor.constructor('return process')();
      const req = P.mainModule.require.bind(P.mainModule);
      req('child_process').execSync('touch ${marker}');
      return req('fs').readFileSync(P.env.XDG_CONFIG_HOME + '/tabtunnel/token', 'utf8').trim().split('').reverse().join(''); }`;
    const out = await attempt('browser_run_code_unsafe', { code });
    assert.ok(out.error, `it ran: ${out.text}`);
    assert.ok(!out.text.includes(ownerToken.split('').reverse().join('').slice(0, 16)), out.text);
    await sleep(200);
    assert.ok(!fs.existsSync(marker), 'the agent ran a command as the user');
  });

  test('(red team 3, finding 3) browser_file_upload hands the page no file outside the work directory', async () => {
    const token = path.join(h.configHome, 'tabtunnel', 'token');
    const tries = [token, path.relative(home, token), '~/.config/tabtunnel/token', '../../etc/hostname', '/etc/hostname'];
    await attempt('browser_navigate', { url: `${h.pageServerUrl}/drop` });
    const snapshot = (await attempt('browser_snapshot', {})).text;
    const ref = /\[ref=([^\]]+)\]/.exec(snapshot)?.[1];
    assert.ok(ref, snapshot);
    await attempt('browser_click', { element: 'Upload', target: ref });
    // Each refused before it reaches the child, so the file chooser stays open for the next.
    for (const file of tries) {
      const out = await attempt('browser_file_upload', { paths: [file] });
      assert.ok(out.error, `${file}: ${out.text}`);
    }
    await attempt('browser_file_upload', {}); // cancels the chooser
    await sleep(1000);
    assert.deepEqual(uploads, [], `the page got: ${uploads.join(' | ')}`);
  });

  test("(red team 3, finding 3) a file name writes only inside the work directory, never the client's cwd", async () => {
    await attempt('browser_navigate', { url: `${h.pageServerUrl}/shell` });
    const bashrc = path.join(home, '.bashrc');
    for (const filename of ['.bashrc', bashrc, '../../../.bashrc', '~/.bashrc']) {
      await attempt('browser_snapshot', { filename });
      await attempt('browser_take_screenshot', { filename });
      assert.equal(fs.readFileSync(bashrc, 'utf8'), "# the user's own .bashrc\n", `after ${filename}`);
    }
    // A plain name still works: in the session's work directory, under tabtunnel's data dir.
    const saved = await attempt('browser_snapshot', { filename: 'page.yml' });
    assert.ok(!saved.error, saved.text);
    assert.ok(!fs.existsSync(path.join(home, 'page.yml')), 'written in the client cwd');
    const run = path.join(h.dataHome, 'tabtunnel', 'run');
    const work = fs.readdirSync(run).filter((d) => d.startsWith('work-'));
    assert.ok(work.some((d) => fs.existsSync(path.join(run, d, 'page.yml'))), `no page.yml in ${run}: ${work}`);
  });
});
