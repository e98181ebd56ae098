// Calls every tool of both child tool servers through `tabtunnel mcp` (as an agent, on the test
// form page in the agent's own tab) and prints a Markdown table: which work through the
// extension, and the error each other one gives. A survey, not a test: it asserts nothing.
//
//   TABTUNNEL_BIN=target/release/tabtunnel node tests/bench/mcp-tools.mjs

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { daemonBinary, startHarness } from '../e2e/harness.mjs';
import { startMcpServer, textOf } from '../e2e/mcp.mjs';

/** The line of a tool's answer that says what went wrong (its output may start with notes). */
const firstLine = (text) => {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const line = lines.find((l) => /error|not |fail|cannot|unable|denied|allowed|timeout|timed out/i.test(l)) ?? lines[0] ?? '';
  return line.slice(0, 160);
};

async function survey(h, kind, plan) {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'tabtunnel-survey-'));
  const mcp = await startMcpServer(h, {
    name: kind,
    command: daemonBinary(),
    args: ['mcp', '--agent', `survey-${kind}`, '--endpoint', h.clientEndpoint, '--tools', kind],
    cwd,
  });
  const listed = (await mcp.client.listTools()).tools.map((t) => t.name).filter((n) => !n.startsWith('tabtunnel_'));
  const rows = [];
  const upload = path.join(cwd, 'upload.txt');
  fs.writeFileSync(upload, 'hello');
  const ctx = { cwd, upload };
  for (const [tool, args] of plan) {
    let outcome;
    try {
      const result = await mcp.client.callTool({ name: tool, arguments: typeof args === 'function' ? await args(ctx) : args });
      const text = textOf(result);
      outcome = result.isError ? `error: ${firstLine(text)}` : 'works';
      ctx[tool] = text;
    } catch (e) {
      outcome = `error: ${firstLine(e.message)}`;
    }
    const row = rows.find(([t]) => t === tool);
    if (row) row[1] = outcome;
    else rows.push([tool, outcome]);
    console.error(`${kind} ${tool}: ${outcome}`);
  }
  for (const name of listed.filter((t) => !plan.some(([planned]) => planned === t))) rows.push([name, 'not called']);
  await mcp.close();
  fs.rmSync(cwd, { recursive: true, force: true });
  return rows;
}

const uid = (ctx, pattern) => {
  const line = (ctx.take_snapshot ?? '').split('\n').find((l) => pattern.test(l));
  return /uid=(\S+)/.exec(line ?? '')?.[1] ?? 'missing';
};
const ref = (ctx, pattern) => {
  const line = (ctx.browser_snapshot ?? '').split('\n').find((l) => pattern.test(l));
  return /\[ref=([^\]]+)\]/.exec(line ?? '')?.[1] ?? 'missing';
};

/** Adds a file input and a select to the form page (the upload and select tools need them). */
const ADD_CONTROLS =
  "() => { document.body.insertAdjacentHTML('beforeend', '<input type=file id=file aria-label=Attachment><select aria-label=Colour><option>red</option><option>blue</option></select>'); return 1; }";
/** Opens an alert a moment later (the dialog tools need one). */
const OPEN_ALERT = "() => { setTimeout(() => alert('survey'), 200); return 1; }";

const h = await startHarness({ name: 'survey', share: false });
try {
  const page = h.pageUrl;
  let pageId = 1;
  const devtools = await survey(h, 'chrome-devtools', [
    ['new_page', { url: page }],
    ['list_pages', async (ctx) => ({})],
    ['select_page', (ctx) => ((pageId = Number(/(\d+):.*form\.html/.exec(ctx.list_pages)?.[1] ?? 1)), { pageId })],
    ['take_snapshot', () => ({ pageId })],
    ['fill', (ctx) => ({ pageId, uid: uid(ctx, /textbox "Name"/), value: 'Ada' })],
    ['fill_form', (ctx) => ({ pageId, elements: [{ uid: uid(ctx, /textbox "Name"/), value: 'Bo' }] })],
    ['click', (ctx) => ({ pageId, uid: uid(ctx, /button "Greet"/) })],
    ['hover', (ctx) => ({ pageId, uid: uid(ctx, /button "Greet"/) })],
    ['drag', (ctx) => ({ pageId, from_uid: uid(ctx, /textbox "Name"/), to_uid: uid(ctx, /button "Greet"/) })],
    ['press_key', () => ({ pageId, key: 'Tab' })],
    ['type_text', () => ({ pageId, text: 'x' })],
    ['evaluate_script', () => ({ pageId, function: '() => { console.log("survey"); return document.title; }' })],
    ['wait_for', () => ({ pageId, text: ['tabtunnel test form'] })],
    ['get_css_styles', (ctx) => ({ pageId, uid: uid(ctx, /button "Greet"/) })],
    ['list_console_messages', () => ({ pageId })],
    ['get_console_message', (ctx) => ({ pageId, msgid: Number(/msgid=(\d+)/.exec(ctx.list_console_messages ?? '')?.[1] ?? 1) })],
    ['list_network_requests', () => ({ pageId })],
    ['get_network_request', (ctx) => ({ pageId, reqid: Number(/reqid=(\d+)/.exec(ctx.list_network_requests ?? '')?.[1] ?? 1) })],
    ['emulate', () => ({ pageId, colorScheme: 'dark' })],
    ['resize_page', () => ({ pageId, width: 800, height: 600 })],
    ['take_screenshot', () => ({ pageId })],
    ['navigate_page', () => ({ pageId, type: 'url', url: page })],
    ['evaluate_script', () => ({ pageId, function: OPEN_ALERT })],
    ['handle_dialog', async () => (await new Promise((r) => setTimeout(r, 500)), { pageId, action: 'accept' })],
    ['evaluate_script', () => ({ pageId, function: ADD_CONTROLS })],
    ['take_snapshot', () => ({ pageId })],
    ['upload_file', (ctx) => ({ pageId, uid: uid(ctx, /Attachment/), filePaths: [ctx.upload] })],
    ['take_heapsnapshot', (ctx) => ({ pageId, filePath: path.join(ctx.cwd, 'heap.heapsnapshot') })],
    ['performance_start_trace', () => ({ pageId, reload: false, autoStop: false })],
    ['performance_stop_trace', () => ({ pageId })],
    ['performance_analyze_insight', () => ({ pageId, insightSetId: 'NAVIGATION_0', insightName: 'LCPBreakdown' })],
    ['lighthouse_audit', (ctx) => ({ pageId, mode: 'snapshot', outputDirPath: ctx.cwd })],
    ['screencast_start', (ctx) => ({ pageId, filePath: path.join(ctx.cwd, 'cast.webm') })],
    ['screencast_stop', () => ({ pageId })],
    ['close_page', () => ({ pageId })],
  ]);
  const playwright = await survey(h, 'playwright', [
    ['browser_navigate', { url: page }],
    ['browser_snapshot', {}],
    ['browser_type', (ctx) => ({ element: 'Name', target: ref(ctx, /textbox "Name"/), text: 'Ada' })],
    ['browser_fill_form', (ctx) => ({ fields: [{ name: 'Name', type: 'textbox', target: ref(ctx, /textbox "Name"/), value: 'Bo' }] })],
    ['browser_click', (ctx) => ({ element: 'Greet', target: ref(ctx, /button "Greet"/) })],
    ['browser_hover', (ctx) => ({ element: 'Greet', target: ref(ctx, /button "Greet"/) })],
    ['browser_drag', (ctx) => ({ startElement: 'Name', startTarget: ref(ctx, /textbox "Name"/), endElement: 'Greet', endTarget: ref(ctx, /button "Greet"/) })],
    ['browser_evaluate', { function: ADD_CONTROLS }],
    ['browser_snapshot', {}],
    ['browser_select_option', (ctx) => ({ element: 'Colour', target: ref(ctx, /combobox "Colour"/), values: ['blue'] })],
    ['browser_press_key', { key: 'Tab' }],
    ['browser_evaluate', { function: '() => { console.log("survey"); return document.title; }' }],
    ['browser_find', { text: 'Greet' }],
    ['browser_wait_for', { text: 'tabtunnel test form' }],
    ['browser_console_messages', { level: 'info' }],
    ['browser_network_requests', { static: true }],
    ['browser_network_request', { index: 1 }],
    ['browser_emulate_media', { colorScheme: 'dark' }],
    ['browser_resize', { width: 800, height: 600 }],
    ['browser_take_screenshot', { scale: 'css' }],
    ['browser_click', (ctx) => ({ element: 'Attachment', target: ref(ctx, /Attachment/) })],
    ['browser_file_upload', (ctx) => ({ paths: [ctx.upload] })],
    ['browser_drop', (ctx) => ({ element: 'Name', target: ref(ctx, /textbox "Name"/), paths: [ctx.upload] })],
    ['browser_evaluate', { function: OPEN_ALERT }],
    ['browser_wait_for', { time: 1 }],
    ['browser_handle_dialog', { accept: true }],
    ['browser_run_code_unsafe', { code: 'async (page) => await page.title()' }],
    ['browser_tabs', { action: 'list' }],
    ['browser_navigate_back', {}],
    ['browser_close', {}],
  ]);
  const table = (title, rows) =>
    [`| ${title} | through tabtunnel |`, '|---|---|', ...rows.map(([t, o]) => `| \`${t}\` | ${o.replaceAll('|', '\\|')} |`)].join('\n');
  console.log(table('chrome-devtools-mcp 1.11.0', devtools));
  console.log();
  console.log(table('@playwright/mcp 0.0.83', playwright));
} finally {
  await h.close();
}
