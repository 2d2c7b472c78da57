// The Strata extension's activation time in real VS Code (code-server), as VS Code measures it
// (Developer: Show Running Extensions), over N fresh windows, beside the built-in extensions
// that activated in the same windows. Each run: a new user-data folder, code-server started,
// the workspace of tests/vscode/e2e opened in headless Chromium, F5 on a Python launch (the
// extension activates on onDebugResolve:strata), the program run to its end, the times read.
//   node bench/vscode/activation.mjs [--runs N]        (default 5; results in activation.md)
// Needs what tests/vscode/e2e needs (scripts/code-server.sh install, chromium, npm ci in
// tests/vscode and vscode-extension, a build with strata-dap and the agent: build/asan or
// STRATA_BUILD_DIR); STRATA_VSIX names a vsix to measure instead of packaging one.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
process.env.STRATA_VSCODE_E2E_DIR ??= path.join(REPO, 'build/vscode-bench');
const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 5;

const lib = path.join(REPO, 'tests/vscode/e2e/lib');
const cs = await import(pathToFileURL(path.join(lib, 'codeserver.mjs')));
const { Workbench } = await import(pathToFileURL(path.join(lib, 'workbench.mjs')));
const { chromium } = await import(pathToFileURL(path.join(REPO, 'tests/vscode/node_modules/playwright-core/index.mjs')));

const why = cs.chromiumMissing() ?? cs.ensureCodeServer();
if (why) { console.log(`cannot measure: ${why}`); process.exit(0); }
const { vsix, skip } = cs.vsixToTest();
if (skip) { console.log(`cannot measure: ${skip}`); process.exit(0); }
const python = (process.env.STRATA_PYTHONS ?? '').split(':').find(Boolean);

const work = cs.WORK;
const extensions = path.join(work, 'extensions');
const workspace = path.join(work, 'workspace');
fs.rmSync(extensions, { recursive: true, force: true });
fs.rmSync(workspace, { recursive: true, force: true });
fs.mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
fs.copyFileSync(path.join(REPO, 'examples/python/train_loop.py'), path.join(workspace, 'train_loop.py'));
fs.writeFileSync(path.join(workspace, '.vscode/launch.json'), JSON.stringify({ version: '0.2.0', configurations: [
  { type: 'strata', request: 'launch', name: 'Python: train_loop', program: '${workspaceFolder}/train_loop.py',
    args: ['--epochs', '1'], ...(python ? { python } : {}) }] }));

// Every row of the Running Extensions editor (it draws only those in view): {name: [ms, startup]}.
async function runningExtensions(wb) {
  await wb.command('Developer: Show Running Extensions');
  const list = wb.page.locator('.runtime-extensions-editor .monaco-list');
  await list.waitFor();
  const seen = {};
  for (let i = 0; i < 40; ++i) {
    for (const text of await wb.page.locator('.runtime-extensions-editor .monaco-list-row').allInnerTexts()) {
      const m = text.match(/(Startup )?Activation: (\d+)ms/);
      if (m) seen[text.split('\n')[0]] = [Number(m[2]), Boolean(m[1])];
    }
    const before = Object.keys(seen).length;
    await list.hover();
    await wb.page.mouse.wheel(0, 300);
    await wb.page.waitForTimeout(150);
    if (i > 2 && Object.keys(seen).length === before && await wb.page.locator('.runtime-extensions-editor .monaco-list-row').last()
      .evaluate((r) => r.getBoundingClientRect().bottom <= r.closest('.monaco-list').getBoundingClientRect().bottom + 1)) break;
  }
  return seen;
}

const results = [];
const browser = await chromium.launch({ executablePath: cs.CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
try {
  for (let run = 1; run <= runs; ++run) {
    const userData = path.join(work, `user-data-${run}`);
    fs.rmSync(userData, { recursive: true, force: true });
    fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
    fs.writeFileSync(path.join(userData, 'User/settings.json'), JSON.stringify({
      'security.workspace.trust.enabled': false, 'workbench.startupEditor': 'none', 'chat.disableAIFeatures': true,
      'workbench.secondarySideBar.defaultVisibility': 'hidden', 'telemetry.telemetryLevel': 'off',
      'extensions.autoCheckUpdates': false, 'extensions.autoUpdate': false, 'git.openRepositoryInParentFolders': 'never' }));
    if (run === 1) cs.installExtension(vsix, { userData, extensions });
    const server = await cs.startCodeServer({ userData, extensions, log: path.join(work, `code-server-${run}.log`) });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.setDefaultTimeout(60_000);
    try {
      const wb = new Workbench(page, path.join(REPO, 'build/vscode-artifacts/bench'));
      await wb.open(server.url, workspace);
      await wb.openFile('train_loop.py');  // F5 in the editor (outside the workbench it reloads the page)
      const f5 = Date.now();
      await page.keyboard.press('F5');
      await wb.waitForDebugConsole(/epoch 0: loss=\d/, 120_000);
      const toOutput = Date.now() - f5;
      await wb.waitForSessionEnd();
      const times = await runningExtensions(wb);
      if (!times['Strata Debugger']) throw new Error(`run ${run}: Strata is not among the running extensions: ${Object.keys(times)}`);
      const event = cs.activationLog(userData, 'strata.strata')?.match(/activationEvent: '([^']*)'/)?.[1];
      results.push({ run, times, toOutput, event, version: server.version });
      console.error(`run ${run}: Strata ${times['Strata Debugger'][0]} ms, F5 to the program's output ${toOutput} ms`);
    } finally {
      await page.close();
      await server.stop();
    }
  }
} finally {
  await browser.close();
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[(s.length - 1) >> 1]; };
const names = [...new Set(results.flatMap((r) => Object.keys(r.times)))]
  .filter((n) => results.every((r) => r.times[n]));
const rows = names.map((n) => {
  const ms = results.map((r) => r.times[n][0]);
  return { n, startup: results[0].times[n][1], ms, med: median(ms) };
}).sort((a, b) => (a.n === 'Strata Debugger' ? -1 : b.n === 'Strata Debugger' ? 1 : b.med - a.med));

console.log(`\nExtension activation in code-server ${results[0]?.version} (VS Code's Running Extensions), ${runs} fresh windows, ` +
  `headless Chromium; ${new Date().toISOString().slice(0, 10)}\n`);
console.log('| extension | activated on | median ms | min | max |');
console.log('| --- | --- | ---: | ---: | ---: |');
for (const r of rows) {
  console.log(`| ${r.n} | ${r.n === 'Strata Debugger' ? [...new Set(results.map((x) => x.event))].join(', ') : r.startup ? 'at startup' : 'on demand'} | ` +
    `${r.med} | ${Math.min(...r.ms)} | ${Math.max(...r.ms)} |`);
}
const f5 = results.map((r) => r.toOutput);
console.log(`\nF5 to the Python program's first output line in the Debug Console (Strata activation, adapter start, ` +
  `launch, one epoch): median ${median(f5)} ms (min ${Math.min(...f5)}, max ${Math.max(...f5)})`);
