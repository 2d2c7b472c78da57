// The Strata extension in real VS Code (code-server) driven through headless Chromium as a user
// would: the vsix installed, breakpoints set with F9 in a .py and a .c file, F5 with a
// launch.json written here, the Call Stack and Variables read, F10, continue to the end; then
// "Strata: Open GPU Trace" on a torch.profiler trace, a kernel clicked in the timeline and the
// editor taken to the line that launched it; the extension's activation time as VS Code measured
// it. Screenshots of each step go to build/vscode-artifacts/e2e/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import {
  ARTIFACTS, BUILD, CHROMIUM, REPO, WORK, activationLog, chromiumMissing, ensureCodeServer, installExtension, startCodeServer,
  vsixToTest,
} from './lib/codeserver.mjs';
import { startListener, startLoop } from './lib/programs.mjs';
import { Workbench } from './lib/workbench.mjs';

// The repository's GPU trace fixture (tests/e2e/lib/gpu.mjs: a torch.profiler trace whose gemm
// launch has its Python lines), or why it cannot be written.
const gpu = await Promise.all([import('../../e2e/lib/gpu.mjs'), import('../../e2e/lib/python.mjs')])
  .then(([g, py]) => ({ ...g, lineOf: py.lineOf }), (e) => ({ error: e }));
const NO_GPU_FIXTURE = gpu.error && `tests/e2e's trace fixture cannot be loaded (npm ci in tests/e2e; scripts/setup.sh does it): ${gpu.error.message.split('\n')[0]}`;

const PYTHON = (process.env.STRATA_PYTHONS ?? '').split(':').find(Boolean);
const CC = ['cc', 'gcc'].find((c) => { try { execFileSync(c, ['--version'], { stdio: 'ignore' }); return true; } catch { return false; } });

// What must be there before anything runs; the first missing piece is the reason for the skip.
const seconds = (since) => ((Date.now() - since) / 1000).toFixed(1);
let since = Date.now();
const skip = chromiumMissing() ?? ensureCodeServer();
const installSeconds = seconds(since);
since = Date.now();
const { vsix, skip: noVsix } = skip ? {} : vsixToTest();
const packageSeconds = seconds(since);
const SKIP = skip ?? noVsix ?? false;

const dirs = {
  userData: path.join(WORK, 'user-data'),
  extensions: path.join(WORK, 'extensions'),
  workspace: path.join(WORK, 'workspace'),
};
const PY_FILE = 'train_loop.py';
const C_FILE = 'primes.c';
const GPU_PY = 'gpu_launches.py';
const LOOP_PY = 'until_told.py';
const LOOP_C = 'until_told.c';
// The build's adapter, and the collector's test build (tests/targets/cuda): its extra entry makes
// the CUPTI callbacks a kernel launch makes and hands the collector the records CUPTI would, so
// a live session has GPU data on a machine without a GPU.
const ADAPTER = path.join(BUILD, 'adapter/strata-dap');
const COLLECTOR_DOUBLE = path.join(BUILD, 'tests/targets/cuda_double/libstrata_cupti.so');
const NO_DOUBLE = !fs.existsSync(COLLECTOR_DOUBLE) &&
  `${COLLECTOR_DOUBLE} does not exist: the CUDA toolkit with CUPTI was not found when the build was configured, ` +
  'so the collector and its test build were not built';
const NO_PYTHON = !PYTHON && 'no CPython 3.12 or newer was found by the build (STRATA_PYTHONS is empty)';
const NO_CC = !CC && 'no C compiler (cc) to build the C debuggees with -g';
const NO_ADAPTER = !fs.existsSync(ADAPTER) && `${ADAPTER} does not exist: the build's strata-dap serves this case`;
// The line of the "# @bp:NAME" marker in a workspace file.
const markedLine = (file, name) => fs.readFileSync(path.join(dirs.workspace, file), 'utf8').split('\n')
  .findIndex((l) => l.includes(`# @bp:${name}`)) + 1;
// The first line of train_step's loop body (16) and of is_prime (6) in the examples (lines
// without a comprehension, whose own frame would stop there too); asserted below
// against the files' text so an edit of the examples shows here, not as a wrong stop.
const PY_LINE = 16;
const C_LINE = 6;

let server, browser, wb;

// A test whose failure leaves a screenshot of what the page showed then.
function uiTest(name, options, fn) {
  test(name, options, async () => {
    try {
      await fn();
    } catch (e) {
      await wb?.shot('FAILED').catch(() => {});
      throw e;
    }
  });
}

function writeWorkspace() {
  fs.rmSync(dirs.workspace, { recursive: true, force: true });
  fs.mkdirSync(path.join(dirs.workspace, '.vscode'), { recursive: true });
  fs.copyFileSync(path.join(REPO, 'examples/python/train_loop.py'), path.join(dirs.workspace, PY_FILE));
  fs.copyFileSync(path.join(REPO, 'examples/native/primes.c'), path.join(dirs.workspace, C_FILE));
  fs.copyFileSync(path.join(REPO, 'tests/targets/python/gpu_launches.py'), path.join(dirs.workspace, GPU_PY));
  fs.copyFileSync(path.join(REPO, 'tests/vscode/e2e/targets/until_told.py'), path.join(dirs.workspace, LOOP_PY));
  fs.copyFileSync(path.join(REPO, 'tests/vscode/e2e/targets/until_told.c'), path.join(dirs.workspace, LOOP_C));
  if (CC) {
    execFileSync(CC, ['-g', '-O0', '-o', path.join(dirs.workspace, 'primes'), path.join(dirs.workspace, C_FILE)]);
    execFileSync(CC, ['-g', '-O0', '-o', path.join(dirs.workspace, 'until_told'), path.join(dirs.workspace, LOOP_C)]);
  }
  writeLaunchJson();
}

const CONFIGURATIONS = [
  { type: 'strata', request: 'launch', name: 'Python: train_loop', program: '${workspaceFolder}/train_loop.py',
    args: ['--epochs', '1'], ...(PYTHON ? { python: PYTHON } : {}) },
  { type: 'strata', request: 'launch', name: 'Native: primes', program: '${workspaceFolder}/primes', args: ['10'] },
  { type: 'strata', request: 'launch', name: 'Python: GPU launches', program: '${workspaceFolder}/gpu_launches.py',
    ...(PYTHON ? { python: PYTHON } : {}), gpu: 'stacks' },
  { type: 'strata', request: 'attach', name: 'Attach: pick a process', processId: '${command:strata.pickProcess}' },
];

function writeLaunchJson(more = []) {
  const configurations = [...CONFIGURATIONS, ...more];
  fs.writeFileSync(path.join(dirs.workspace, '.vscode/launch.json'), JSON.stringify({ version: '0.2.0', configurations }, null, 2));
}

// At the breakpoint in until_told's work(i, total): the locals hold the running total; then F9
// off and Shift+F5 (an attach disconnects) leave the loop running, and it ends later with the
// total of every round it made, past the one it stopped at.
async function leftRunningAfterBreakpoint(loop, tag, workLine, shot) {
  const locals = await wb.variables('Locals', (v) => 'i' in v && 'total' in v);
  const i = Number(locals.i);
  assert.equal(Number(locals.total), (3 * i * (i - 1)) / 2, `work(i, total) holds the loop's running total: ${JSON.stringify(locals)}`);
  await wb.shot(shot);
  await wb.toggleBreakpoint(workLine);
  await wb.page.keyboard.press('Shift+F5');
  await wb.waitForSessionEnd(30_000);
  assert.ok(loop.alive(), `the program ended with the session: ${loop.stdout}${loop.stderr}`);
  assert.equal(await loop.finish(), 0, loop.stderr);
  const m = loop.stdout.match(new RegExp(`^${tag}: finished after (\\d+) rounds, total (\\d+)$`, 'm'));
  assert.ok(m, loop.stdout);
  const rounds = Number(m[1]);
  assert.ok(rounds > i + 1, `it went on after the breakpoint (round ${i}): ${rounds} rounds`);
  assert.equal(Number(m[2]), (3 * rounds * (rounds - 1)) / 2);
}

// The strata.adapterPath setting (the workspace's), null to clear it; waits until the extension
// uses it, as "Strata: Check the Debug Adapter" reports (VS Code reads the file a moment later).
async function useAdapterSetting(adapter) {
  const file = path.join(dirs.workspace, '.vscode/settings.json');
  if (adapter) fs.writeFileSync(file, JSON.stringify({ 'strata.adapterPath': adapter }, null, 2));
  else fs.rmSync(file, { force: true });
  const want = adapter ? `Strata: ${adapter} (setting): ` : ' (bundled): ';
  const deadline = Date.now() + 30_000;
  for (;;) {
    await wb.clearNotifications();
    await wb.command('Strata: Check the Debug Adapter');
    const said = await wb.waitForNotification(/^Strata: .* \((setting|bundled|PATH)\): /, 10_000);
    if (said.includes(want)) {
      await wb.clearNotifications();
      return said;
    }
    if (Date.now() > deadline) throw new Error(`the extension does not take up strata.adapterPath=${adapter}: ${said}`);
    await wb.page.waitForTimeout(500);
  }
}

// A quiet first start: no welcome page, trust prompt, chat side bar or update checks.
function writeSettings() {
  fs.rmSync(dirs.userData, { recursive: true, force: true });
  fs.mkdirSync(path.join(dirs.userData, 'User'), { recursive: true });
  fs.writeFileSync(path.join(dirs.userData, 'User/settings.json'), JSON.stringify({
    'security.workspace.trust.enabled': false,
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'chat.disableAIFeatures': true,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'editor.minimap.enabled': false,
    'workbench.editor.enablePreview': false,
    'git.openRepositoryInParentFolders': 'never',
  }, null, 2));
}

before(async () => {
  if (SKIP) return;
  console.log(`code-server install (or the check that it is there): ${installSeconds} s; vsix ${vsix} ready: ${packageSeconds} s`);
  fs.rmSync(ARTIFACTS, { recursive: true, force: true });
  fs.mkdirSync(WORK, { recursive: true });
  writeSettings();
  fs.rmSync(dirs.extensions, { recursive: true, force: true });
  writeWorkspace();
  installExtension(vsix, dirs);
  // The collector's test build for an adapter that takes it from the environment (the one
  // strata.adapterPath names; the vsix's own adapter is given the collector it carries).
  const env = { ...process.env, ...(NO_DOUBLE ? {} : { STRATA_GPU_COLLECTOR: COLLECTOR_DOUBLE }) };
  server = await startCodeServer({ ...dirs, env, log: path.join(WORK, 'code-server.log') });
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(30_000);
  wb = new Workbench(page, ARTIFACTS);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

uiTest('VS Code opens the folder with the Strata extension installed from the vsix', { skip: SKIP }, async () => {
  await wb.open(server.url, dirs.workspace);
  const names = await wb.explorerNames();
  for (const f of [PY_FILE, C_FILE]) assert.ok(names.includes(f), `the Explorer lists ${f}: ${names}`);
  const listed = execFileSync(path.join(REPO, 'scripts/code-server.sh'),
    ['start', '--config', path.join(WORK, 'config.yaml'), '--extensions-dir', dirs.extensions, '--list-extensions', '--show-versions'],
    { encoding: 'utf8' });
  assert.match(listed, /^strata\.strata@/m, 'code-server lists the installed extension');
  await wb.shot('workbench');
});

uiTest('Python: F9 in train_loop.py, F5, Call Stack and Variables, F10, continue to the end', { skip: SKIP || NO_PYTHON }, async () => {
  assert.match(fs.readFileSync(path.join(dirs.workspace, PY_FILE), 'utf8').split('\n')[PY_LINE - 1], /err = \(w \* x \+ b\) - y/);
  await wb.reset();
  await wb.openFile(PY_FILE);
  await wb.toggleBreakpoint(PY_LINE);
  assert.deepEqual(await wb.breakpointLines(), [PY_LINE]);
  await wb.shot('python-breakpoint');

  // F5 runs launch.json's first configuration.
  await wb.page.keyboard.press('F5');
  const frames = await wb.waitForTopFrame('train_step', PY_LINE, { depth: 3 });
  assert.deepEqual(frames.map((f) => [f.name, f.file]), [['train_step', PY_FILE], ['main', PY_FILE], ['<module>', PY_FILE]]);
  assert.deepEqual(frames.map((f) => f.line), [PY_LINE, 32, 40]);
  assert.equal(await wb.currentStatementLine(), PY_LINE, 'the editor highlights the stopped line');
  const locals = await wb.variables('Locals');
  // The first item of the first batch: w, b and the gradients start at 0.0, lr is main's.
  for (const name of ['w', 'b', 'gw', 'gb']) assert.equal(locals[name], '0.0', `${name}: ${locals[name]}`);
  assert.equal(locals.lr, '0.3');
  assert.ok(Number.isFinite(Number(locals.x)) && Number.isFinite(Number(locals.y)), `x, y: ${locals.x}, ${locals.y}`);
  assert.ok(!('err' in locals), 'err is not assigned yet');
  await wb.shot('python-stopped');

  await wb.page.keyboard.press('F10');
  await wb.waitForTopFrame('train_step', PY_LINE + 1, { depth: 3 });
  const stepped = await wb.variables('Locals', (v) => 'err' in v && 'y' in v);
  // err = (0.0 * x + 0.0) - y
  assert.equal(Number(stepped.err), -Number(locals.y), `err after F10: ${stepped.err}, y: ${locals.y}`);
  await wb.shot('python-stepped');

  // The breakpoint off (F9 again), then continue: one epoch runs to its end.
  await wb.toggleBreakpoint(PY_LINE);
  await wb.page.keyboard.press('F5');
  await wb.waitForSessionEnd();
  await wb.waitForDebugConsole(/epoch 0: loss=\d/);
  await wb.shot('python-ended');
});

uiTest('C: F9 in primes.c, F5, Call Stack and Variables, F10, continue to the end', { skip: SKIP || NO_CC }, async () => {
  assert.match(fs.readFileSync(path.join(dirs.workspace, C_FILE), 'utf8').split('\n')[C_LINE - 1], /if \(n < 2\) return 0;/);
  await wb.reset();
  await wb.openFile(C_FILE);
  await wb.toggleBreakpoint(C_LINE);
  assert.deepEqual(await wb.breakpointLines(), [C_LINE]);
  await wb.shot('c-breakpoint');

  // F5 would run the selected configuration (the Python one): the native one is picked and
  // started by Debug: Select and Start Debugging, from the list of launch.json's configurations.
  await wb.command('Debug: Select and Start Debugging', { staysOpen: true });
  const configs = await wb.quickRows('Native: primes');
  assert.ok(configs.some((c) => c.startsWith('Python: train_loop')), `launch.json's configurations are offered: ${configs}`);
  await wb.pick('Native: primes');
  const frames = await wb.waitForTopFrame('is_prime', C_LINE, { depth: 2 });
  assert.deepEqual(frames.slice(0, 2).map((f) => [f.name, f.file, f.line]), [['is_prime', C_FILE, C_LINE], ['main', C_FILE, 16]]);
  assert.equal(await wb.currentStatementLine(), C_LINE);
  assert.deepEqual(await wb.variables('Locals'), { n: '2' });
  await wb.shot('c-stopped');

  await wb.page.keyboard.press('F10');
  await wb.waitForTopFrame('is_prime', C_LINE + 1);
  // The for statement's d is in scope now (not yet assigned: any value).
  const stepped = await wb.variables('Locals', (v) => 'd' in v && 'n' in v);
  assert.deepEqual(Object.keys(stepped).sort(), ['d', 'n']);
  assert.equal(stepped.n, '2');
  await wb.shot('c-stepped');

  await wb.toggleBreakpoint(C_LINE);
  await wb.page.keyboard.press('F5');
  await wb.waitForSessionEnd();
  const out = await wb.waitForDebugConsole(/prime #4: 7/);
  assert.match(out, /prime #1: 2[\s\S]*prime #2: 3[\s\S]*prime #3: 5/);
  await wb.shot('c-ended');
});

uiTest('GPU: Strata: Open GPU Trace, click the gemm kernel, its launching line opens in the editor', { skip: SKIP || NO_GPU_FIXTURE }, async () => {
  await wb.reset();
  const trace = gpu.writeKineto(dirs.workspace, 'train.pt.trace.json');
  const launchLine = gpu.lineOf(gpu.LAUNCHER, 'launch_gemm');

  await wb.command('Strata: Open GPU Trace', { staysOpen: true });
  // VS Code's own file dialog: the path typed in full.
  await wb.page.locator('.quick-input-widget .quick-input-title', { hasText: 'open a GPU trace' }).waitFor();
  await wb.acceptFileDialog(trace);
  await wb.activeTab('GPU: train.pt.trace.json', 60_000);

  const view = wb.webview();
  await view.locator('#kernels tbody tr', { hasText: 'relu_kernel' }).waitFor({ timeout: 60_000 });
  assert.deepEqual((await view.locator('#kernels tbody tr').allInnerTexts()).map((r) => r.split('\t').slice(0, 2)),
    [['relu_kernel', String(gpu.RELUS)], [gpu.GEMM, '1']], 'the top-kernels table from gpuSummary');
  await wb.shot('gpu-timeline');

  // A user finds the kernel by its tooltip, then clicks it.
  const at = await wb.findOnCanvas(view, '#timeline', '#tooltip', gpu.GEMM);
  assert.ok(at, `no point of the timeline shows a ${gpu.GEMM} tooltip`);
  await wb.shot('gpu-hover');
  await wb.page.mouse.click(at.x, at.y);
  const details = view.locator('#details');
  await details.locator('.name', { hasText: gpu.GEMM }).waitFor();
  const text = await details.innerText();
  assert.match(text, /Grid\s+64 × 1 × 1/);
  assert.match(text, /Block\s+256 × 1 × 1/);
  assert.match(text, /Launched by\s+cudaLaunchKernel/);
  const frame = details.locator('ol.frames button', { hasText: 'launch_gemm' });
  assert.equal(await frame.getAttribute('title'), `${gpu.LAUNCHER}:${launchLine}`);
  await wb.shot('gpu-kernel');

  // Its launching frame: the editor opens gpu_launcher.py at that line.
  await frame.click();
  await wb.activeTab(path.basename(gpu.LAUNCHER));
  await wb.waitForCursorLine(launchLine);
  await wb.shot('gpu-source');
});

uiTest('GPU live: a Python launch with "gpu": "stacks" stops, its GPU panel opens beside the editor by itself, a kernel leads to its launching line', { skip: SKIP || NO_PYTHON || NO_ADAPTER || NO_DOUBLE }, async () => {
  const VEC_ADD = 'vecAdd(float const*, float const*, float*, int)';
  const after = markedLine(GPU_PY, 'after');
  const launchLine = markedLine(GPU_PY, 'add_launch');
  await wb.reset();
  await wb.closeAllEditors();
  // The collector's test build reaches the program only through an adapter that takes it from
  // code-server's environment: the build's strata-dap, named by strata.adapterPath.
  await useAdapterSetting(ADAPTER);
  try {
    await wb.openFile(GPU_PY);
    await wb.toggleBreakpoint(after);
    await wb.startConfiguration('Python: GPU launches');
    await wb.waitForTopFrame('<module>', after);
    // Nothing asked for it: the stop found GPU data and the panel came up beside the editor.
    await wb.tab('GPU: Python: GPU launches').waitFor({ timeout: 60_000 });
    const view = wb.webview();
    await view.locator('#kernels tbody tr', { hasText: 'relu' }).waitFor({ timeout: 60_000 });
    assert.deepEqual((await view.locator('#kernels tbody tr').allInnerTexts()).map((r) => r.split('\t').slice(0, 2)),
      [[VEC_ADD, '5'], ['relu(float*, int)', '3']], 'the kernels launched before the stop, from the session\'s gpuSummary');
    await wb.shot('gpu-live-panel');

    const at = await wb.findOnCanvas(view, '#timeline', '#tooltip', VEC_ADD);
    assert.ok(at, `no point of the live timeline shows a ${VEC_ADD} tooltip`);
    await wb.page.mouse.click(at.x, at.y);
    const details = view.locator('#details');
    await details.locator('.name', { hasText: VEC_ADD }).waitFor();
    const text = await details.innerText();
    assert.match(text, /Grid\s+5 × 1 × 1/);
    assert.match(text, /Block\s+128 × 1 × 1/);
    const frame = details.locator('ol.frames button', { hasText: 'vector_add' });
    assert.equal(await frame.getAttribute('title'), `${path.join(dirs.workspace, GPU_PY)}:${launchLine}`);
    await wb.shot('gpu-live-kernel');

    await frame.click();
    await wb.activeTab(GPU_PY);
    await wb.waitForCursorLine(launchLine);
    await wb.shot('gpu-live-source');

    await wb.page.keyboard.press('F5');
    await wb.waitForSessionEnd();
    await wb.waitForDebugConsole(/launched 8/);
  } finally {
    await useAdapterSetting(null);
  }
});

uiTest('Attach by process picker: a Python loop started outside VS Code, picked by its script, paused, a breakpoint hit, left running', { skip: SKIP || NO_PYTHON }, async () => {
  const workLine = markedLine(LOOP_PY, 'work');
  await wb.reset();
  await wb.closeAllEditors();
  const loop = await startLoop(PYTHON, dirs.workspace, 'picker');
  try {
    await wb.startConfiguration('Attach: pick a process', { staysOpen: true });
    await wb.page.locator('.quick-input-widget .quick-input-title', { hasText: 'Strata: attach to a process' }).waitFor();
    await wb.page.keyboard.type(`${LOOP_PY} --until stop-picker`);
    const row = wb.page.locator('.quick-input-list .monaco-list-row.focused', { hasText: LOOP_PY }).first();
    await row.waitFor();
    const shown = await row.innerText();
    assert.match(shown, new RegExp(`${path.basename(PYTHON).replace(/\./g, '\\.')} ${LOOP_PY} --until stop-picker --tag picker`),
      `the picker shows the interpreter, the script and its arguments: ${shown}`);
    assert.match(shown, new RegExp(`pid ${loop.pid} · Python`), shown);
    await wb.shot('attach-picker');
    await wb.page.keyboard.press('Enter');
    await wb.page.locator('.quick-input-widget').waitFor({ state: 'hidden' });

    // The read-only snapshot first, then the agent comes in and the program runs on.
    await wb.waitForDebugConsole(new RegExp(`The Strata agent is in process ${loop.pid}`));
    await wb.pauseUntilFrames();
    // Stopped mostly in time.sleep: native frames on top, then the loop's Python frames (VS Code
    // shows the top frame first and the rest a moment later).
    // The view is drawn in steps (the top frame, then the rest): wait for the loop's two frames.
    const paused = await wb.waitForFrames((frames) => frames.some((f) => f.name === '<module>') &&
      frames.some((f) => f.name === 'main'));
    assert.deepEqual(paused.filter((f) => f.file === LOOP_PY).map((f) => f.name).slice(-2), ['main', '<module>'],
      `the Call Stack shows the loop: ${JSON.stringify(paused)}`);
    await wb.shot('attach-paused');

    await wb.openFile(LOOP_PY);
    await wb.toggleBreakpoint(workLine);
    await wb.page.keyboard.press('F5');
    const frames = await wb.waitForTopFrame('work', workLine, { depth: 3 });
    assert.deepEqual(frames.map((f) => f.name), ['work', 'main', '<module>']);
    await leftRunningAfterBreakpoint(loop, 'picker', workLine, 'attach-breakpoint');
    await wb.shot('attach-left');
  } catch (e) {
    e.message += `\nuntil_told.py (${loop.alive() ? 'running' : `ended: ${loop.exit}`}) printed:\n${loop.stdout}${loop.stderr}`;
    throw e;
  } finally {
    await loop.stop();
  }
});

uiTest('Attach by process picker to a native program: paused in libc, its frames shown and clicked, a breakpoint hit, left running', { skip: SKIP || NO_CC }, async () => {
  const workLine = fs.readFileSync(path.join(dirs.workspace, LOOP_C), 'utf8').split('\n').findIndex((l) => l.includes('/* work line */')) + 1;
  await wb.reset();
  await wb.closeAllEditors();
  const loop = await startLoop(null, dirs.workspace, 'native');
  try {
    await wb.startConfiguration('Attach: pick a process', { staysOpen: true });
    await wb.page.locator('.quick-input-widget .quick-input-title', { hasText: 'Strata: attach to a process' }).waitFor();
    await wb.page.keyboard.type('until_told --until stop-native');
    const row = wb.page.locator('.quick-input-list .monaco-list-row.focused', { hasText: 'until_told' }).first();
    await row.waitFor();
    const shown = await row.innerText();
    assert.match(shown, new RegExp(`pid ${loop.pid}`), shown);
    await wb.page.keyboard.press('Enter');
    await wb.page.locator('.quick-input-widget').waitFor({ state: 'hidden' });

    // Stopped in usleep: libc's frames (no source, folded by VS Code) above the loop's main.
    await wb.pauseUntilFrames();
    const paused = await wb.waitForFrames((frames) => frames.some((f) => f.name === 'main' && f.file === LOOP_C));
    await wb.shot('native-attach-paused');
    // The folded libc frames, shown and clicked: their location is an address, no source.
    const more = wb.page.locator('.debug-call-stack .monaco-list-row', { hasText: /Show \d+ More Stack Frames/ }).first();
    if (await more.count()) await more.click();
    const libc = wb.page.locator('.debug-call-stack .monaco-list-row', { hasText: 'libc.so' }).first();
    await libc.click();
    const all = await wb.waitForFrames((frames) => frames.some((f) => f.file === 'Unknown Source'));
    assert.ok(all.findIndex((f) => f.file === 'Unknown Source') < all.findIndex((f) => f.name === 'main'),
      `libc frames above main: ${JSON.stringify(all)} (first view ${JSON.stringify(paused)})`);
    await wb.shot('native-attach-libc-frame');
    await wb.openFile(LOOP_C);
    await wb.toggleBreakpoint(workLine);
    await wb.page.keyboard.press('F5');
    // VS Code shows the new top frame first, above the last stop's frames until the rest come.
    const frames = await wb.waitForFrames((f) => f[0]?.name === 'work' && f[0].line === workLine && f[1]?.name === 'main');
    assert.equal(frames[0].file, LOOP_C);
    await leftRunningAfterBreakpoint(loop, 'native', workLine, 'native-attach-breakpoint');
  } catch (e) {
    e.message += `\nuntil_told (${loop.alive() ? 'running' : `ended: ${loop.exit}`}) printed:\n${loop.stdout}${loop.stderr}`;
    throw e;
  } finally {
    await loop.stop();
  }
});

uiTest('Remote: a strata-dap --listen with a token file, an attach through it with tokenFile; a wrong token is told', { skip: SKIP || NO_PYTHON || NO_ADAPTER }, async () => {
  const workLine = markedLine(LOOP_PY, 'work');
  const tokenFile = path.join(WORK, 'listen.token');
  const wrongFile = path.join(WORK, 'wrong.token');
  fs.rmSync(tokenFile, { force: true });
  fs.writeFileSync(wrongFile, 'not-the-token\n');
  await wb.reset();
  await wb.closeAllEditors();
  // The listener writes a new token into its --token-file; the extension reads it from the same file.
  const listener = await startListener(ADAPTER, tokenFile);
  const loop = await startLoop(PYTHON, dirs.workspace, 'remote');
  try {
    assert.match(fs.readFileSync(tokenFile, 'utf8'), /^[0-9a-f]{64}\n$/);
    const server = { host: '127.0.0.1', port: listener.port };
    writeLaunchJson([
      { type: 'strata', request: 'attach', name: 'Remote: attach', processId: loop.pid, adapterServer: { ...server, tokenFile } },
      { type: 'strata', request: 'attach', name: 'Remote: wrong token', processId: loop.pid,
        adapterServer: { ...server, tokenFile: wrongFile } },
    ]);
    await wb.openFile(LOOP_PY);
    await wb.toggleBreakpoint(workLine);
    await wb.startConfiguration('Remote: attach');
    const frames = await wb.waitForTopFrame('work', workLine, { depth: 3 });
    assert.deepEqual(frames.map((f) => [f.name, f.file]), [['work', LOOP_PY], ['main', LOOP_PY], ['<module>', LOOP_PY]]);
    const locals = await wb.variables('Locals', (v) => 'i' in v && 'total' in v);
    assert.equal(Number(locals.total), (3 * Number(locals.i) * (Number(locals.i) - 1)) / 2, JSON.stringify(locals));
    await wb.shot('remote-breakpoint');
    await wb.toggleBreakpoint(workLine);
    await wb.page.keyboard.press('Shift+F5');
    await wb.waitForSessionEnd(30_000);
    assert.equal(await loop.finish(), 0, loop.stderr);
    assert.match(loop.stdout, /^remote: finished after \d+ rounds/m);

    await wb.clearNotifications();
    await wb.startConfiguration('Remote: wrong token');
    const told = await wb.waitForNotification(/did not accept the token/);
    assert.match(told, new RegExp(`127\\.0\\.0\\.1:${listener.port}`), told);
    await wb.shot('remote-wrong-token');
    await wb.waitForSessionEnd(30_000);
    assert.ok(listener.alive(), `strata-dap --listen ended: ${listener.stdout}${listener.stderr}`);
  } finally {
    writeLaunchJson();
    await loop.stop();
    await listener.stop();
  }
});

uiTest('activation: the time VS Code measured for the Strata extension (Developer: Show Running Extensions)', { skip: SKIP }, async () => {
  await wb.command('Developer: Show Running Extensions');
  const list = wb.page.locator('.runtime-extensions-editor .monaco-list');
  await list.waitFor();
  // The list draws only the rows in view: scrolled until Strata's shows.
  const row = wb.page.locator('.runtime-extensions-editor .monaco-list-row', { hasText: 'Strata Debugger' });
  for (let i = 0; i < 40 && !(await row.isVisible()); ++i) {
    await list.hover();
    await wb.page.mouse.wheel(0, 200);
    await wb.page.waitForTimeout(100);
  }
  await row.waitFor();
  const text = await row.innerText();
  const m = text.match(/(Startup )?Activation: (\d+)ms/);
  assert.ok(m, `the Strata row says when it activated: ${text}`);
  const logged = activationLog(dirs.userData, 'strata.strata');
  console.log(`Strata extension activation: ${m[2]} ms (VS Code's Running Extensions, code-server ${server.version})` +
    (logged ? `; ${logged}` : ''));
  await wb.shot('running-extensions');
});
