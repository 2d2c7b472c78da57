// scripts/package-vscode.sh on this build (STRATA_BUILD_DIR): the vsix's file list and manifest,
// then the strata-dap it carries, found as the extension finds it, debugging a Python script
// with the agent it carries.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ext = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const repo = path.dirname(ext);
const BUILD = process.env.STRATA_BUILD_DIR ?? path.join(repo, 'build', 'asan');
const PYTHON = (process.env.STRATA_PYTHONS ?? '').split(':').find(Boolean);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-vscode-pkg-'));
const stage = path.join(work, 'stage');
const vsix = path.join(work, 'strata-linux-x64.vsix');
after(() => fs.rmSync(work, { recursive: true, force: true }));  // the stage holds a copy of the build (~250 MB)
let packaged;
function packageOnce() {
  packaged ??= execFileSync(path.join(repo, 'scripts', 'package-vscode.sh'), ['--build-dir', BUILD, '--stage', stage, '--out', vsix],
                            { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
  return packaged;
}
function unzip(what, name) {
  const code = what === 'list'
    ? 'import sys, zipfile; print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))'
    : 'import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())';
  return execFileSync('python3', ['-c', code, vsix, ...(name ? [name] : [])], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

test('the vsix holds the adapter, the agent, the collector if built, the compiled extension; no node_modules, no tests', () => {
  packageOnce();
  const files = unzip('list').split('\n').filter(Boolean);
  const has = (f) => assert.ok(files.includes(f), `${f} is in the vsix`);
  has('extension/package.json');
  has('extension/readme.md');
  has('extension/dist/linux-x64/bin/strata-dap');
  has('extension/dist/linux-x64/lib/strata/python/strata/__main__.py');
  assert.ok(files.some((f) => /^extension\/dist\/linux-x64\/lib\/strata\/python\/strata\/_strata_core\.cpython-3\d+-x86_64-linux-gnu\.so$/.test(f)),
            'the agent\'s extension module');
  assert.ok(files.includes('extension/dist/linux-x64/lib/libdw.so.1'), 'the adapter\'s shared libraries');
  const collectorBuilt = fs.existsSync(path.join(BUILD, 'backends/cuda/collector/libstrata_cupti.so'));
  assert.equal(files.includes('extension/dist/linux-x64/lib/strata/libstrata_cupti.so'), collectorBuilt,
               `the collector is there exactly when the build has it (${collectorBuilt})`);
  for (const js of ['extension', 'adapter', 'configuration', 'dap', 'gpuPanel', 'processes', 'tokens', 'webviewFiles'])
    has(`extension/out/${js}.js`);
  if (fs.existsSync(path.join(ext, 'webview')))
    for (const f of require(path.join(stage, 'out', 'webviewFiles.js')).WEBVIEW_FILES) has(`extension/webview/${f}`);
  // The walkthrough's screenshots, each where its step names it.
  const steps = JSON.parse(fs.readFileSync(path.join(ext, 'package.json'), 'utf8')).contributes.walkthroughs.flatMap((w) => w.steps);
  assert.equal(steps.length, 4);
  for (const s of steps) has(`extension/${s.media.image}`);
  for (const f of files) {
    assert.ok(!f.includes('node_modules/'), `${f}: no node_modules`);
    assert.ok(!/^extension\/(test|src)\//.test(f) && !f.endsWith('.ts'), `${f}: no tests or sources`);
    assert.ok(!f.includes('__pycache__'), `${f}: no Python caches`);
  }
});

test('the manifest: linux-x64, the strata debugger, its entry point', () => {
  packageOnce();
  const manifest = unzip('read', 'extension.vsixmanifest');
  assert.match(manifest, /<Identity [^>]*Id="strata"[^>]*Publisher="strata"[^>]*TargetPlatform="linux-x64"/);
  const pkg = JSON.parse(unzip('read', 'extension/package.json'));
  assert.equal(pkg.main, './out/extension.js');
  assert.deepEqual(pkg.contributes.debuggers.map((d) => d.type), ['strata']);
  assert.equal(pkg.contributes.configuration.properties['strata.adapterPath'].type, 'string');
  // vsce takes a README's relative image links only under a repository URL: it has none.
  assert.doesNotMatch(unzip('read', 'extension/readme.md'), /!\[|<img/);
  assert.deepEqual(pkg.devDependencies, JSON.parse(fs.readFileSync(path.join(ext, 'package.json'), 'utf8')).devDependencies);
});

test('the carried strata-dap, found as the extension finds it, debugs a Python script with the carried agent',
     { skip: PYTHON ? false : 'no CPython 3.12+ in STRATA_PYTHONS' }, async (t) => {
  packageOnce();
  const { locateAdapter } = require(path.join(stage, 'out', 'adapter.js'));
  const { DapConnection } = require(path.join(stage, 'out', 'dap.js'));
  // Nothing of the build tree's: the agent must come from the stage.
  const choice = locateAdapter({ extensionPath: stage, envPath: '' });
  assert.equal(choice.source, 'bundled');
  assert.equal(choice.env.STRATA_AGENT_PYTHONPATH, path.join(stage, 'dist/linux-x64/lib/strata/python'));
  const script = path.join(work, 'loop.py');
  fs.writeFileSync(script, 'total = 0\nfor i in range(3):\n    total += i\nprint("total", total)\n');
  const child = spawn(choice.path, ['--stdio'], { env: { ...process.env, ...choice.env, ASAN_OPTIONS: 'detect_leaks=0' } });
  t.after(() => child.kill('SIGKILL'));
  const c = new DapConnection(child.stdin, child.stdout);
  const events = [];
  const waiters = [];
  c.on('event', (name, body) => { events.push({ name, body }); waiters.forEach((w) => w()); });
  const next = (name) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${name} event; got ${events.map((e) => e.name)}`)), 30000);
    const check = () => { const e = events.find((x) => x.name === name); if (e) { clearTimeout(timer); events.splice(events.indexOf(e), 1); resolve(e.body); } };
    waiters.push(check); check();
  });
  await c.request('initialize', { adapterID: 'strata', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
  await c.request('launch', { program: script, python: PYTHON });
  await next('initialized');
  const bp = await c.request('setBreakpoints', { source: { path: script }, breakpoints: [{ line: 3 }] });
  assert.equal(bp.breakpoints[0].verified, true);
  await c.request('configurationDone');
  const stopped = await next('stopped');
  const stack = await c.request('stackTrace', { threadId: stopped.threadId });
  assert.deepEqual([stack.stackFrames[0].source.path, stack.stackFrames[0].line], [script, 3]);
  await c.request('setBreakpoints', { source: { path: script }, breakpoints: [] });
  await c.request('continue', { threadId: stopped.threadId });
  await next('terminated');
  assert.ok(events.some((e) => e.name === 'output' && /total 3/.test(e.body.output)), 'the program ran to its end');
  await c.request('disconnect', {}).catch(() => undefined);
});
