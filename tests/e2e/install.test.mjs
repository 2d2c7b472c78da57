// Strata installed as a user installs it: `cmake --install` into a prefix that is then moved
// (the tree is relocatable), and the wheel `pip install`ed into a fresh virtual environment,
// offline. From each, the basic cases: a Python script to a breakpoint (with the installed
// agent, not the build tree's), a native program, attach by pid, `strata stacks`, and in the
// venv `python -m strata --listen` with a client attaching through the venv's strata-dap.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ADAPTER, REPO, PYTHONS, NO_PYTHON, StrataClient, exitOf, waitUntil, withTimeout } from './lib/harness.mjs';
import { lineOf, pyTarget } from './lib/python.mjs';

const BUILD = process.env.STRATA_BUILD_DIR ?? path.resolve(path.dirname(ADAPTER), '..');
const ticker = pyTarget('ticker.py');
const primesSrc = path.join(REPO, 'examples/native/primes.c');
const primes = path.join(BUILD, 'examples/native/primes');
let root, prefix;

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 300000, maxBuffer: 64 << 20, ...opts });
  if (r.error) throw r.error;
  return r;
}
function ok(cmd, args, opts = {}) {
  const r = run(cmd, args, opts);
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}:\n${r.stdout}\n${r.stderr}`);
  return r;
}

// A program whose output is kept.
function start(cmd, args, env = {}) {
  const proc = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  proc.out = '';
  proc.err = '';
  proc.stdout.on('data', (d) => { proc.out += d; });
  proc.stderr.on('data', (d) => { proc.err += d; });
  return proc;
}

// Prints the folder of the `strata` package the program runs under, then its lines.
function whoAmI(dir) {
  const file = path.join(dir, 'who.py');
  fs.writeFileSync(file, [
    'import sys',
    'agent = sys.modules.get("strata")',
    'print("agent", agent.__file__ if agent else None, flush=True)',
    'x = 41',
    'print("x", x + 1)  # @bp:after',
    '',
  ].join('\n'));
  return file;
}

// The environment without what points a program at the build tree's agent.
function plainEnv() {
  const env = { ...process.env };
  delete env.STRATA_AGENT_PYTHONPATH;
  delete env.PYTHONPATH;
  return env;
}

before(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-install-'));
  const first = path.join(root, 'first');
  ok('cmake', ['--install', BUILD, '--prefix', first, '--component', 'strata']);
  // Relocatable: the tree works from wherever it is moved to.
  prefix = path.join(root, 'moved', 'strata');
  fs.mkdirSync(path.dirname(prefix));
  fs.renameSync(first, prefix);
});

after(() => { if (root) fs.rmSync(root, { recursive: true, force: true }); });

test('cmake --install: the layout, RPATHs relative to the programs, the carried libraries in use', () => {
  for (const f of ['bin/strata-dap', 'bin/strata', 'lib/strata/python/strata/__main__.py', 'share/doc/strata/README.md'])
    assert.ok(fs.existsSync(path.join(prefix, f)), f);
  const cores = fs.readdirSync(path.join(prefix, 'lib/strata/python/strata')).filter((f) => f.startsWith('_strata_core.'));
  assert.ok(cores.length >= 1, 'the agent\'s core for at least one CPython');
  for (const bin of ['strata-dap', 'strata']) {
    const dyn = ok('readelf', ['-d', path.join(prefix, 'bin', bin)]).stdout;
    assert.match(dyn, /\(RPATH\) +Library rpath: \[\$ORIGIN\/\.\.\/lib\/strata\/deps\]/, dyn);
    assert.doesNotMatch(dyn, new RegExp(BUILD.replace(/[.]/g, '\\.')));
    const ldd = ok('ldd', [path.join(prefix, 'bin', bin)]).stdout;
    // ldd shows $ORIGIN expanded as is: PREFIX/bin/../lib/strata/deps.
    assert.match(ldd, new RegExp(`libboost_json[^ ]* => ${prefix.replace(/[.]/g, '\\.')}/bin/\\.\\./lib/strata/deps/`), ldd);
    assert.doesNotMatch(ldd, /not found/, ldd);
  }
  assert.match(ok(path.join(prefix, 'bin/strata-dap'), ['--version']).stdout, /^strata-dap \d+\.\d+\.\d+/);
  // The engine strata-dap starts for each native program, beside the carried libraries.
  const engine = path.join(prefix, 'lib/strata/strata-engine');
  const dyn = ok('readelf', ['-d', engine]).stdout;
  assert.match(dyn, /\(RPATH\) +Library rpath: \[\$ORIGIN\/deps\]/, dyn);
  assert.doesNotMatch(ok('ldd', [engine]).stdout, /not found/);
  const usage = run(engine, []);
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /^usage: strata-engine --fd N/);
});

test('the installed strata runs a Python script to a breakpoint with the installed agent', { skip: NO_PYTHON }, () => {
  const script = whoAmI(root);
  const r = run(path.join(prefix, 'bin/strata'), ['run', '--break', `${script}:${lineOf(script, 'after')}`, '--', PYTHONS.at(-1), script],
    { env: plainEnv() });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /-- stopped \(breakpoint\)/);
  assert.match(r.stdout, /locals:\n(.*\n)* +x = 41\n/);
  const agent = /^agent (.*)$/m.exec(r.stdout)[1];
  assert.ok(agent.startsWith(path.join(prefix, 'lib/strata/python/strata/')), agent);
  assert.match(r.stdout, /^x 42$/m);
});

test('the installed strata: a native program to a breakpoint, attach by pid, strata stacks', { skip: NO_PYTHON }, async () => {
  const line = ok('grep', ['-n', 'printf("prime #', primesSrc]).stdout.split(':')[0];
  let r = run(path.join(prefix, 'bin/strata'), ['run', '--break', `${primesSrc}:${line}:count == 3`, '--', primes, '10'], { env: plainEnv() });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /-- stopped \(breakpoint\)/);
  assert.match(r.stdout, /count = 3/);
  const py = PYTHONS.at(-1);
  const proc = start(py, [ticker, '100000']);
  try {
    await waitUntil(() => proc.out.includes('tick 2'), 20000, 'the ticker to tick');
    r = run(path.join(prefix, 'bin/strata'), ['stacks', String(proc.pid)], { env: plainEnv() });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`\\[py\\] <module> \\(${ticker.replace(/[.]/g, '\\.')}:\\d+\\)`));
    r = run(path.join(prefix, 'bin/strata'), ['attach', '--break', `${ticker}:${lineOf(ticker, 'tick')}:i == 7 or i > 40`, String(proc.pid)],
      { env: plainEnv() });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /-- stopped \(breakpoint\)/);
    assert.match(r.stdout, /#0 tick at /);
    // Detached: it ticks on.
    const ticks = proc.out.length;
    await waitUntil(() => proc.out.length > ticks + 20, 20000, 'the ticker to run on');
  } finally {
    proc.kill('SIGKILL');
  }
});

test('the wheel: pip install into a fresh venv, strata-dap, strata stacks, python -m strata --listen with a client', { skip: NO_PYTHON }, async () => {
  const out = path.join(root, 'wheel');
  const built = ok(path.join(REPO, 'scripts/build-wheel.py'), ['--build-dir', BUILD, '--out', out]).stdout;
  const wheel = fs.readdirSync(out).find((f) => f.endsWith('.whl'));
  assert.match(wheel, /^strata_debugger-\d+\.\d+\.\d+-py3-none-manylinux_2_36_x86_64\.whl$/, built);
  const py = PYTHONS.at(-1);
  const venv = path.join(root, 'venv');
  ok(py, ['-m', 'venv', venv]);
  ok(path.join(venv, 'bin/pip'), ['install', '--no-index', '--no-deps', '--quiet', path.join(out, wheel)]);
  const env = { ...plainEnv(), PATH: `${path.join(venv, 'bin')}:${process.env.PATH}` };
  assert.match(ok(path.join(venv, 'bin/strata-dap'), ['--version'], { env }).stdout, /^strata-dap /);

  // python -m strata --listen in the venv: the program waits for a client.
  const portFile = path.join(root, 'port');
  const proc = start(path.join(venv, 'bin/python'), ['-m', 'strata', '--listen', '127.0.0.1:0', '--port-file', portFile, ticker, '100000'], env);
  let c;
  try {
    await waitUntil(() => fs.existsSync(portFile) && fs.readFileSync(portFile, 'utf8').endsWith('\n'), 30000, 'the port file');
    const port = Number(fs.readFileSync(portFile, 'utf8'));
    await waitUntil(() => proc.out.includes('tick 2'), 20000, `the ticker to tick: ${proc.err}`);
    // strata stacks of it, from the venv.
    const stacks = run(path.join(venv, 'bin/strata'), ['stacks', String(proc.pid)], { env });
    assert.equal(stacks.status, 0, stacks.stderr);
    assert.match(stacks.stdout, /\[py\] (tick|<module>) \(/);
    // A client through the venv's strata-dap.
    c = new StrataClient({ adapter: path.join(venv, 'bin/strata-dap'), spawn: { env } });
    await c.start();
    await c.initializeRequest();
    await c.attachRequest({ connect: { host: '127.0.0.1', port } });
    const stopped = c.waitForEvent('stopped', 30000);
    await c.setBreakpointsRequest({ source: { path: ticker }, breakpoints: [{ line: lineOf(ticker, 'tick') }] });
    await c.configurationDoneRequest();
    const s = await stopped;
    const frames = await c.stackTraceRequest({ threadId: s.body.threadId, levels: 1 });
    assert.equal(frames.body.stackFrames[0].name, 'tick');
    await c.setBreakpointsRequest({ source: { path: ticker }, breakpoints: [] });
    await c.disconnectRequest({ terminateDebuggee: false });
    const ticks = proc.out.length;
    await waitUntil(() => proc.out.length > ticks + 20, 20000, 'the program to run on after the client left');
  } finally {
    if (c) c.stopAdapter();
    proc.kill('SIGKILL');
    await withTimeout(exitOf(proc), 10000, 'the ticker to end');
  }
  // A launch through the venv's adapter hands the program the agent folder of the wheel, which
  // holds nothing else of the environment.
  const script = whoAmI(root);
  const r = run(path.join(venv, 'bin/strata'), ['run', '--break', `${script}:${lineOf(script, 'after')}`, '--', PYTHONS.at(-1), script], { env });
  assert.equal(r.status, 0, r.stderr);
  const agent = /^agent (.*)$/m.exec(r.stdout)[1];
  assert.match(agent, /\/site-packages\/strata\/_prefix\/lib\/strata\/python\/strata\/__init__\.py$/);
});
