// The GPU timeline webview (vscode-extension/webview) in headless Chromium, its host's part
// played by lib/page.mjs forwarding every request to the real strata-dap, which opened the
// store tests/targets/gpu/make_gpu_store writes (the e2e suite's: gemm launched from
// gpu_launcher.py and native_demo.cpp) or a Kineto trace of bench/gpu/gen_kineto.py. Checks the
// pixels where the records' times say, the windows a zoom, pan, drag or key asks for, what a
// click posts, the table's sorting, export, merged items, a refresh, and a screenshot per theme.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Adapter, ADAPTER, REPO, TARGETS, exists } from './lib/dap.mjs';
import { ARTIFACTS, decodePng, hex, launchBrowser, missing, openWebview, serve } from './lib/page.mjs';
import { backwardEvents, kinetoText } from '../../e2e/lib/gpu.mjs';

const GEMM = 'gemm(float*, float*, float*, int)';
const LAUNCHER = path.join(REPO, 'tests/targets/python/gpu_launcher.py');
const NATIVE_SOURCE = path.join(REPO, 'tests/targets/native/dap/native_demo.cpp');
const MAKE_STORE = path.join(TARGETS, 'make_gpu_store');
const GEN_KINETO = path.join(REPO, 'bench/gpu/gen_kineto.py');

// The line of a `@bp:NAME` marker (`# ` in Python, `// ` in C++).
const lineOf = (file, name) => fs.readFileSync(file, 'utf8').split('\n')
  .findIndex((l) => new RegExp(`(#|//) @bp:${name}\\b`).test(l)) + 1;

// Theme variables as VS Code sets them on <html> (a few of each theme's), with its body class.
const THEMES = {
  light: { cls: 'vscode-light', vars: { '--vscode-editor-background': '#ffffff', '--vscode-editor-foreground': '#3b3b3b',
    '--vscode-editorWidget-background': '#f8f8f8', '--vscode-editorIndentGuide-background': '#d3d3d3', '--vscode-charts-blue': '#1a85ff', '--vscode-charts-green': '#388a34',
    '--vscode-charts-red': '#e51400', '--vscode-charts-purple': '#652d90', '--vscode-charts-yellow': '#bf8803' } },
  dark: { cls: 'vscode-dark', vars: { '--vscode-editor-background': '#1f1f1f', '--vscode-editor-foreground': '#cccccc',
    '--vscode-editorWidget-background': '#202020', '--vscode-editorIndentGuide-background': '#404040', '--vscode-charts-blue': '#3794ff', '--vscode-charts-green': '#89d185',
    '--vscode-charts-red': '#f14c4c', '--vscode-charts-purple': '#b180d7', '--vscode-charts-yellow': '#cca700' } },
  'high-contrast': { cls: 'vscode-high-contrast', vars: { '--vscode-editor-background': '#000000',
    '--vscode-editor-foreground': '#ffffff', '--vscode-contrastBorder': '#6fc3df', '--vscode-charts-blue': '#3794ff',
    '--vscode-charts-green': '#89d185', '--vscode-charts-red': '#f14c4c', '--vscode-charts-purple': '#b180d7',
    '--vscode-charts-yellow': '#ffd700' } },
};

const skip = await missing() ||
  (!exists(ADAPTER) && `no strata-dap at ${ADAPTER} (build the asan preset, or set STRATA_DAP)`) ||
  (!exists(MAKE_STORE) && `no ${MAKE_STORE} (build the asan preset, or set STRATA_TARGETS)`) || false;

let dir, adapter, browser, server, all, gemms;
before(async () => {
  if (skip) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-webview-'));
  const store = path.join(dir, 'recorded.strata');
  execFileSync(MAKE_STORE, [store, LAUNCHER, String(lineOf(LAUNCHER, 'launch_gemm')), String(lineOf(LAUNCHER, 'train_step')),
    String(lineOf(LAUNCHER, 'main_loop')), path.join(TARGETS, 'native_demo'), NATIVE_SOURCE,
    String(lineOf(NATIVE_SOURCE, 'combine_call'))]);
  adapter = await new Adapter().openTrace(store);
  // What the page should draw, asked of the same adapter.
  all = await adapter.send('gpuTimeline', { maxItems: 1000 });
  gemms = all.items.filter((i) => i.name === GEMM);
  assert.equal(gemms.length, 3);
  [browser, server] = await Promise.all([launchBrowser(), serve()]);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
});
after(async () => {
  await browser?.close();
  await server?.close();
  await adapter?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function open(options = {}, on = adapter) {
  const theme = THEMES[options.theme ?? 'dark'];
  const host = await openWebview(browser, server.url, on, { bodyClass: theme.cls, theme: options.theme ?? 'dark', ...options });
  await host.page.evaluate((vars) => {
    for (const [k, v] of Object.entries(vars)) document.documentElement.style.setProperty(k, v);
  }, theme.vars);
  await shown(host);
  return host;
}

// Waits until the page has drawn the gpuTimeline answer for what it shows now.
async function shown(host) {
  await host.page.waitForFunction(() => window.strataTimeline?.shown()?.current, null, { timeout: 20000 });
  return host.page.evaluate(() => ({ layout: window.strataTimeline.layout(), view: window.strataTimeline.view(),
    shown: window.strataTimeline.shown() }));
}

const xOf = (g, ns) => g.layout.gutter + (ns - g.view.startNs) / (g.view.endNs - g.view.startNs) * g.layout.plotWidth;
const nsAt = (g, x) => g.view.startNs + (x - g.layout.gutter) / g.layout.plotWidth * (g.view.endNs - g.view.startNs);
const rowOf = (g, trackId) => g.layout.tracks.findIndex((t) => t.id === trackId);
const midY = (g, trackId) => g.layout.tracks[rowOf(g, trackId)].top + g.layout.row / 2;

function pixel(host, x, y) {
  return host.page.evaluate(([px, py]) => {
    const d = document.getElementById('timeline').getContext('2d').getImageData(Math.floor(px), Math.floor(py), 1, 1).data;
    return `#${[d[0], d[1], d[2]].map((v) => v.toString(16).padStart(2, '0')).join('')}`;
  }, [x, y]);
}

async function canvasBox(host) { return host.page.locator('#timeline').boundingBox(); }
const isTimeline = (m) => m.type === 'request' && m.command === 'gpuTimeline';
const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1, `${what}: ${a} is not ${b}`);

test('each record is drawn on its track where its times say, in its kind\'s colour', { skip }, async () => {
  const host = await open();
  const g = await shown(host);
  assert.deepEqual(g.layout.tracks.map((t) => t.name), all.tracks.map((t) => t.name));
  assert.deepEqual(g.shown.window, all.window, 'the first request asks for everything');
  const dark = THEMES.dark.vars;
  // Around an item: its row's background, or a tick's line.
  const empty = (trackId) => [rowOf(g, trackId) % 2 ? dark['--vscode-editorWidget-background'] : dark['--vscode-editor-background'],
    dark['--vscode-editorIndentGuide-background']];
  const check = async (item, colour) => {
    const [x0, x1, y] = [xOf(g, item.startNs), xOf(g, item.endNs), midY(g, item.track)];
    assert.equal(await pixel(host, x0 + 1.5, y), colour, `${item.name} at its start (x ${x0.toFixed(1)})`);
    assert.equal(await pixel(host, x1 - 1.5, y), colour, `${item.name} at its end (x ${x1.toFixed(1)})`);
    // Where the neighbours leave room: the row's background either side.
    const track = all.items.filter((i) => i.track === item.track);
    const [prev, next] = [track[track.indexOf(item) - 1], track[track.indexOf(item) + 1]];
    if (!prev || xOf(g, prev.endNs) < x0 - 6) assert.ok(empty(item.track).includes(await pixel(host, x0 - 3, y)), `nothing before ${item.name}`);
    if (!next || xOf(g, next.startNs) > x1 + 6) assert.ok(empty(item.track).includes(await pixel(host, x1 + 3, y)), `nothing after ${item.name}`);
  };
  for (const k of gemms) await check(k, dark['--vscode-charts-blue']);
  await check(all.items.find((i) => i.kind === 'memcpy'), dark['--vscode-charts-green']);
  const relu = all.items.find((i) => i.name === 'relu_kernel');
  assert.equal(await pixel(host, (xOf(g, relu.startNs) + xOf(g, relu.endNs)) / 2, midY(g, relu.track)), dark['--vscode-charts-blue']);
  // gemm's stream and the CPU thread of its launch calls are different rows.
  assert.notEqual(rowOf(g, gemms[0].track), rowOf(g, all.items.find((i) => i.kind === 'runtime').track));
  assert.deepEqual(host.errors, []);
  await host.close();
});

test('zoom and pan ask for the window they show: wheel at a known x, drag, shift-drag, keys, resize; a stale reply is dropped', { skip }, async () => {
  const host = await open();
  let g = await shown(host);
  const box = await canvasBox(host);
  const { wheelZoom, keyZoom, keyPan } = await host.page.evaluate(() => window.strataTimeline.constants);
  // Once the page has drawn the answer for its new view: the last window it asked for.
  const expectWindow = async (startNs, endNs, what) => {
    g = await shown(host);
    const m = host.posted.filter(isTimeline).pop();
    close(m.args.startNs, Math.floor(startNs), `${what}: startNs`);
    close(m.args.endNs, Math.ceil(endNs), `${what}: endNs`);
    assert.equal(m.args.maxItems, Math.round(g.layout.plotWidth * g.layout.dpr), `${what}: about one item per pixel`);
    assert.deepEqual(g.shown.window, { startNs: m.args.startNs, endNs: m.args.endNs }, `${what}: its answer drawn`);
    return m;
  };

  // The wheel over the second gemm's start: that time stays under the pointer.
  const x = Math.round(xOf(g, gemms[1].startNs));
  const t = nsAt(g, x), f = Math.exp(-300 * wheelZoom);
  await host.page.mouse.move(box.x + x, box.y + midY(g, gemms[1].track));
  await host.page.mouse.wheel(0, -300);
  await expectWindow(t - (t - g.view.startNs) * f, t + (g.view.endNs - t) * f, 'wheel');
  close(xOf(g, gemms[1].startNs), x, 'the gemm stays under the pointer');
  assert.equal(await pixel(host, xOf(g, gemms[1].startNs) + 2, midY(g, gemms[1].track)), THEMES.dark.vars['--vscode-charts-blue']);

  // A drag 100 px left shows what was 100 px to the right.
  const y = box.y + midY(g, gemms[1].track);
  let w = g.view.endNs - g.view.startNs, shift = 100 / g.layout.plotWidth * w;
  await host.page.mouse.move(box.x + 600, y);
  await host.page.mouse.down();
  await host.page.mouse.move(box.x + 550, y, { steps: 3 });
  await host.page.mouse.move(box.x + 500, y, { steps: 3 });
  await host.page.mouse.up();
  await expectWindow(g.view.startNs + shift, g.view.endNs + shift, 'drag');

  // Shift+drag selects a range: the window becomes it.
  const [a, b] = [g.layout.gutter + 200, g.layout.gutter + 500];
  const [ta, tb] = [nsAt(g, a), nsAt(g, b)];
  await host.page.keyboard.down('Shift');
  await host.page.mouse.move(box.x + a, y);
  await host.page.mouse.down();
  await host.page.mouse.move(box.x + b, y, { steps: 5 });
  await host.page.mouse.up();
  await host.page.keyboard.up('Shift');
  await expectWindow(ta, tb, 'shift-drag');

  // Keys, on the focused canvas: 0 shows all, + zooms in about the middle, → pans a tenth.
  await host.page.focus('#timeline');
  await host.page.keyboard.press('0');
  await expectWindow(all.window.startNs, all.window.endNs, 'key 0');
  const mid = (g.view.startNs + g.view.endNs) / 2;
  w = g.view.endNs - g.view.startNs;
  await host.page.keyboard.press('+');
  await expectWindow(mid - w / keyZoom / 2, mid + w / keyZoom / 2, 'key +');
  w = g.view.endNs - g.view.startNs;
  await host.page.keyboard.press('ArrowRight');
  await expectWindow(g.view.startNs + w * keyPan, g.view.endNs + w * keyPan, 'key →');

  // A reply that comes after the view moved on is dropped; the newer window is asked for then.
  const { dropped } = await host.page.evaluate(() => window.strataTimeline.stats());
  host.hold('gpuTimeline');
  const since = host.posted.length;
  await host.page.keyboard.press('+');
  const first = await host.next(isTimeline, { since });
  const v1 = await host.page.evaluate(() => window.strataTimeline.view());
  await host.page.keyboard.press('+');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(host.posted.filter(isTimeline).pop(), first, 'one request in flight at a time');
  const v2 = await host.page.evaluate(() => window.strataTimeline.view());
  assert.ok(v2.endNs - v2.startNs < v1.endNs - v1.startNs);
  const second = host.next(isTimeline);
  await host.release();
  const m = await second;
  close(m.args.startNs, Math.floor(v2.startNs), 'the newer window');
  await host.release();
  g = await shown(host);
  assert.deepEqual(g.shown.window, { startNs: m.args.startNs, endNs: m.args.endNs });
  assert.equal((await host.page.evaluate(() => window.strataTimeline.stats())).dropped, dropped + 1, 'the first answer dropped');

  // A narrower panel asks for fewer items.
  const before = g.layout.plotWidth;
  const resized = host.next(isTimeline);
  await host.page.setViewportSize({ width: 800, height: 900 });
  const r = await resized;
  g = await shown(host);
  assert.ok(g.layout.plotWidth < before - 300);
  assert.equal(r.args.maxItems, Math.round(g.layout.plotWidth));
  assert.deepEqual(host.errors, []);
  await host.close();
});

test('hover shows a tooltip; a click shows the launch in full, and its frames open their lines', { skip }, async () => {
  const host = await open();
  const g = await shown(host);
  const box = await canvasBox(host);
  const k = gemms[2];
  const [x, y] = [(xOf(g, k.startNs) + xOf(g, k.endNs)) / 2, midY(g, k.track)];
  await host.page.mouse.move(box.x + x, box.y + y);
  const tip = host.page.locator('#tooltip');
  await tip.waitFor({ state: 'visible' });
  assert.match(await tip.innerText(), new RegExp(`${GEMM.replace(/[()*]/g, '\\$&')}\\s+kernel, 200 µs`));
  // Hovered a moment: its grid and block, from gpuKernel.
  await host.page.waitForFunction(() => /grid 64×1×1, block 256×1×1/.test(document.getElementById('tooltip').innerText));

  await host.page.mouse.click(box.x + x, box.y + y);
  const asked = host.posted.filter((m) => m.type === 'request' && m.command === 'gpuKernel').pop();
  assert.deepEqual(asked.args, { id: k.id });
  const details = host.page.locator('#details');
  await details.getByText('Grid').waitFor();
  const text = await details.innerText();
  assert.match(text, /gemm\(float\*, float\*, float\*, int\)/);
  assert.match(text, /Grid\s+64 × 1 × 1/);
  assert.match(text, /Block\s+256 × 1 × 1/);
  assert.match(text, /Launched by\s+cudaLaunchKernel \(thread 4243\)/);
  assert.match(text, /Duration\s+200 µs/);

  const frames = details.locator('.frames li');
  assert.deepEqual(await frames.allInnerTexts(), [
    `launch_gemm — gpu_launcher.py:${lineOf(LAUNCHER, 'launch_gemm')}`,
    `train_step — gpu_launcher.py:${lineOf(LAUNCHER, 'train_step')}`,
    `main — gpu_launcher.py:${lineOf(LAUNCHER, 'main_loop')}`,
    'CUDA: cudaLaunchKernel (1 frame in libcudart.so.13) 0x7f0000001234',
    `combine — native_demo.cpp:${lineOf(NATIVE_SOURCE, 'combine_call')}`,
  ]);
  await details.getByRole('button', { name: /^train_step/ }).click();
  assert.deepEqual(host.posted.at(-1), { type: 'openSource', path: LAUNCHER, line: lineOf(LAUNCHER, 'train_step') });
  await details.getByRole('button', { name: /^combine/ }).click();
  assert.deepEqual(host.posted.at(-1), { type: 'openSource', path: NATIVE_SOURCE, line: lineOf(NATIVE_SOURCE, 'combine_call') });
  assert.equal(await details.getByRole('button', { name: /cudaLaunchKernel/ }).count(), 0, 'no source, nothing to open');

  // The keyboard reaches every item: ↓ to gemm's track, ] to its first item, Enter.
  await host.page.focus('#timeline');
  for (let i = 0; i < rowOf(g, k.track); ++i) await host.page.keyboard.press('ArrowDown');
  await host.page.keyboard.press(']');
  const sent = host.next((m) => m.type === 'request' && m.command === 'gpuKernel');
  await host.page.keyboard.press('Enter');
  assert.deepEqual((await sent).args, { id: gemms[0].id });
  assert.deepEqual(host.errors, []);
  await host.close();
});

test('a backward kernel of a torch.profiler trace: its forward op named, its forward\'s Python lines after a label', { skip }, async () => {
  const trace = path.join(dir, 'backward.json');
  fs.writeFileSync(trace, kinetoText(backwardEvents()));
  const traced = await new Adapter().openTrace(trace, { gpuStore: path.join(dir, 'backward.strata') });
  try {
    const host = await open({}, traced);
    const g = await shown(host);
    const reply = host.replies.get(host.posted.filter(isTimeline).pop().id).body;
    const k = reply.items.find((i) => i.name === 'backward_gemm');
    assert.ok(k && k.count === 1, 'the backward kernel is drawn on its own');
    const box = await canvasBox(host);
    await host.page.mouse.click(box.x + (xOf(g, k.startNs) + xOf(g, k.endNs)) / 2, box.y + midY(g, k.track));
    const details = host.page.locator('#details');
    await details.getByText('Backward of', { exact: true }).waitFor();
    assert.match(await details.innerText(), /Backward of\s+aten::addmm \(thread 4001; AddmmBackward0, sequence number 8\); its forward's lines come last/);
    assert.deepEqual(await details.locator('.frames li').allInnerTexts(), [
      'AddmmBackward0: the backward of aten::addmm, whose forward ran at',
      `launch_gemm — gpu_launcher.py:${lineOf(LAUNCHER, 'launch_gemm')}`,
      `main — gpu_launcher.py:${lineOf(LAUNCHER, 'main_loop')}`,
    ]);
    assert.deepEqual(host.errors, []);
    await host.close();
  } finally {
    await traced.close();
  }
});

test('the top-kernels table sorts by each column', { skip }, async () => {
  const host = await open();
  const rows = () => host.page.locator('#kernels tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  const sortOf = (name) => host.page.locator('#kernels th', { hasText: name }).getAttribute('aria-sort');
  const header = (name) => host.page.locator('#kernels th button', { hasText: name }).click();
  await host.page.locator('#kernels tbody tr').nth(1).waitFor();
  assert.deepEqual(await rows(), [[GEMM, '3', '450 µs', '150 µs', '100 µs', '200 µs'],
    ['relu_kernel', '6', '60 µs', '10 µs', '10 µs', '10 µs']], 'by total time first');
  assert.equal(await sortOf('Total'), 'descending');
  const names = async () => (await rows()).map((r) => r[0]);
  await header('Launches');
  assert.deepEqual(await names(), ['relu_kernel', GEMM]);
  assert.equal(await sortOf('Launches'), 'descending');
  assert.equal(await sortOf('Total'), 'none');
  await header('Launches');
  assert.deepEqual(await names(), [GEMM, 'relu_kernel']);
  assert.equal(await sortOf('Launches'), 'ascending');
  await header('Kernel');
  assert.deepEqual(await names(), [GEMM, 'relu_kernel']);
  await header('Kernel');
  assert.deepEqual(await names(), ['relu_kernel', GEMM]);
  for (const col of ['Average', 'Min', 'Max']) {
    await header(col);
    assert.deepEqual(await names(), [GEMM, 'relu_kernel'], col);
    await header(col);
    assert.deepEqual(await names(), ['relu_kernel', GEMM], `${col}, turned round`);
  }
  assert.match(await host.page.locator('#others').innerText(), /1 HtoD \(1048576 bytes, 40 µs\).*1 stream syncs.*2 records lost/);
  await host.close();
});

test('Export posts gpuExport, then revealFile with the path its reply gives', { skip }, async () => {
  const host = await open();
  for (const format of ['chrome', 'perfetto']) {
    await host.page.selectOption('#export-format', format);
    const reveal = host.next((m) => m.type === 'revealFile');
    await host.page.click('#export');
    const { path: file } = await reveal;
    const i = host.posted.findLastIndex((m) => m.type === 'request' && m.command === 'gpuExport');
    assert.deepEqual(host.posted[i].args, { format });
    assert.equal(host.posted.indexOf(await reveal), i + 1 + host.posted.slice(i + 1).findIndex((m) => m.type === 'revealFile'));
    assert.equal(path.dirname(file), dir, 'beside the store');
    assert.ok(fs.statSync(file).size > 0, `${file} was written`);
    if (format === 'chrome') assert.ok(JSON.parse(fs.readFileSync(file, 'utf8')).traceEvents.some((e) => e.name === GEMM));
    assert.match(await host.page.locator('#status').innerText(), new RegExp(`Exported \\d+ events to ${file}`));
  }
  await host.close();
});

test('a refresh asks again for the summary and the window on screen', { skip }, async () => {
  const host = await open();
  const g = await shown(host);
  const summary = host.next((m) => m.type === 'request' && m.command === 'gpuSummary');
  const timeline = host.next(isTimeline);
  await host.send({ type: 'refresh' });
  await summary;
  const m = await timeline;
  assert.deepEqual([m.args.startNs, m.args.endNs], [g.view.startNs, g.view.endNs]);
  await host.close();
});

test('merged neighbours (a 20,000-event Kineto trace) are drawn hatched and say so', { skip }, async () => {
  const trace = path.join(dir, 'kineto.json');
  execFileSync('python3', [GEN_KINETO, trace, '--events', '20000']);
  const big = await new Adapter().openTrace(trace, { gpuStore: path.join(dir, 'kineto.strata') });
  try {
    const host = await open({}, big);
    const g = await shown(host);
    const asked = host.posted.filter(isTimeline).pop();
    const reply = host.replies.get(asked.id).body;
    assert.equal(reply.merged, true);
    const wide = reply.items.filter((i) => i.count > 1 && i.kind === 'kernel')
      .map((i) => ({ i, w: xOf(g, i.endNs) - xOf(g, i.startNs) })).sort((p, q) => q.w - p.w)[0];
    assert.ok(wide && wide.w > 4, `a merged kernel item several pixels wide: ${wide && wide.w}`);
    const { i } = wide;
    const [x0, y] = [xOf(g, i.startNs), midY(g, i.track)];
    const colours = new Set();
    for (let x = Math.ceil(x0) + 1; x < xOf(g, i.endNs) - 1; ++x) {
      for (let dy = -5; dy <= 5; ++dy) colours.add(await pixel(host, x, y + dy));
    }
    assert.ok(colours.has(THEMES.dark.vars['--vscode-charts-blue']), 'stripes in the kernel colour');
    assert.ok(colours.size > 1, `hatched, not solid: ${[...colours]}`);
    const box = await canvasBox(host);
    await host.page.mouse.move(box.x + x0 + 2, box.y + y);
    await host.page.locator('#tooltip').waitFor({ state: 'visible' });
    assert.match(await host.page.locator('#tooltip').innerText(), /\d+ kernel records merged to fit/);
    // A double click zooms to it.
    await host.page.mouse.dblclick(box.x + x0 + 2, box.y + y);
    const m = host.posted.filter(isTimeline).pop().args.startNs === i.startNs ? host.posted.filter(isTimeline).pop()
      : await host.next(isTimeline);
    assert.deepEqual([m.args.startNs, m.args.endNs], [i.startNs, i.endNs]);
    assert.deepEqual(host.errors, []);
    await host.close();
  } finally {
    await big.close();
  }
});

test('light, dark and high-contrast themes: a screenshot of each, background and kernel in the theme\'s colours', { skip }, async () => {
  for (const [name, theme] of Object.entries(THEMES)) {
    const host = await open({ theme: name, viewport: { width: 1000, height: 700 } });
    const g = await shown(host);
    const file = path.join(ARTIFACTS, `webview-timeline-${name}.png`);
    const png = await decodePng(await host.page.screenshot({ path: file }));
    const box = await canvasBox(host);
    const at = (x, y) => hex(png.pixel(Math.floor(box.x + x), Math.floor(box.y + y)));
    const bg = theme.vars['--vscode-editor-background'];
    assert.equal(at(g.layout.gutter - 4, midY(g, g.layout.tracks[0].id)), bg, `${name}: the canvas background`);
    assert.equal(hex(png.pixel(png.width - 3, png.height - 3)), bg, `${name}: the page background`);
    const k = gemms[0];
    assert.equal(at((xOf(g, k.startNs) + xOf(g, k.endNs)) / 2, midY(g, k.track) + 4), theme.vars['--vscode-charts-blue'], `${name}: a kernel`);
    assert.equal(await host.page.evaluate(() => document.body.className), theme.cls);
    assert.deepEqual(host.errors, []);
    await host.close();
  }
});
