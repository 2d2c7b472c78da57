// The child processes of a Python program as child sessions ("subProcess", on by default): a
// child started by os.fork, multiprocessing's spawn and forkserver, or a subprocess of the
// interpreter is offered to the client through startDebugging, and stops at the breakpoints its
// own session sets; a DataLoader's workers (Debian's torch); an attached program's children;
// "subProcess": false; and `strata run --break`, which opens them itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI, StrataClient, startStdio, waitUntil, forEachPython, assertClean, withTimeout, exitOf, NO_PYTHON, PYTHONS } from './lib/harness.mjs';
import { AGENT_PYTHONPATH, lineOf, pyTarget, topFrame, locals } from './lib/python.mjs';

const INIT = { adapterID: 'strata', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' };
const program = pyTarget('children.py');
const work = lineOf(program, 'work');

// Answers startDebugging as VS Code does: a client of its own for each child, attached with the
// configuration given and configured with `breakpoints` (path -> lines). Children of children
// land in the same list.
function openChildren(c, breakpoints, children = []) {
  c.reverseHandler = async (request) => {
    assert.equal(request.command, 'startDebugging');
    assert.equal(request.arguments.request, 'attach');
    const config = request.arguments.configuration;
    const child = new StrataClient();
    children.push({ child, config });
    await child.start();
    await child.initializeRequest({ ...INIT, supportsStartDebuggingRequest: true });
    openChildren(child, breakpoints, children);
    await child.attachRequest(config);
    for (const [file, lines] of Object.entries(breakpoints))
      await child.setBreakpointsRequest({ source: { path: file }, breakpoints: lines.map((line) => ({ line })) });
    await child.configurationDoneRequest();
    return {};
  };
  return children;
}

// The first stop of child session `i`: its top frame, checked to be `name` at `line`.
async function childStop(children, i, name, line) {
  await waitUntil(() => children.length > i, 60000, `child session ${i + 1}`);
  const { child, config } = children[i];
  await waitUntil(() => child.eventsNamed('stopped').length > 0, 30000, `a stop in ${config.name}`);
  const [stop] = child.eventsNamed('stopped');
  assert.equal(stop.body.reason, 'breakpoint');
  const top = await topFrame(child, stop.body.threadId);
  assert.equal(top.name, name);
  assert.equal(top.line, line);
  return { child, config, stop, vars: await locals(child, top.id) };
}

async function launchParent(py, args, launch = {}) {
  const c = await startStdio();
  await c.initializeRequest({ ...INIT, supportsStartDebuggingRequest: true });
  const initialized = c.waitForEvent('initialized', 30000);
  await c.launchRequest({ program, python: py, args, ...launch });
  await initialized;
  await c.setBreakpointsRequest({ source: { path: program }, breakpoints: [{ line: work }] });
  return c;
}

forEachPython((py) => {
  const v = path.basename(py);

  test(`${v}: children started by os.fork, spawn, forkserver and subprocess each come as a child session and stop in work()`, async () => {
    const c = await launchParent(py, []);
    const children = openChildren(c, { [program]: [work] });
    try {
      const terminated = c.waitForEvent('terminated', 180000);
      await c.configurationDoneRequest();
      // One child at a time (the program waits for each): tag 1 (fork), 3 (spawn, forkserver), 5 (subprocess).
      for (const [i, tag] of [1, 3, 3, 5].entries()) {
        const { child, config, stop, vars } = await childStop(children, i, 'work', work);
        assert.equal(vars.tag.value, String(tag));
        assert.equal(vars.pid.value, String(config.subProcessId), 'the session is the process that stopped');
        assert.match(config.name, new RegExp(`^process ${config.subProcessId} \\(a child of \\d+\\)$`));
        assert.equal(config.type, 'strata');
        await child.continueRequest({ threadId: stop.body.threadId });
      }
      await terminated;
      assert.equal(c.output('stdout'), 'fork 7\nspawn [6]\nforkserver [6]\nsubprocess 3 child 10\nparent done\n');
      assert.equal(children.length, 4, 'multiprocessing\'s helpers (resource_tracker, the forkserver) are no sessions');
      assert.equal(c.eventsNamed('stopped').length, 0, 'the parent never ran work()');
      assert.equal(c.eventsNamed('exited')[0].body.exitCode, 0);
      await c.disconnectRequest();
      assertClean(assert, c);
      for (const { child } of children) assertClean(assert, child);
    } finally {
      for (const { child } of children) await child.stop().catch(() => {});
    }
  });
}, { tracing: true });

test('"subProcess": false: the children run undebugged and no child session is offered', { skip: NO_PYTHON }, async () => {
  const c = await launchParent(PYTHONS[0], [], { subProcess: false });
  const asked = [];
  c.reverseHandler = async (request) => { asked.push(request); return {}; };
  const terminated = c.waitForEvent('terminated', 120000);
  await c.configurationDoneRequest();
  await terminated;
  assert.equal(c.output('stdout'), 'fork 7\nspawn [6]\nforkserver [6]\nsubprocess 3 child 10\nparent done\n');
  assert.deepEqual(asked, []);
  assert.doesNotMatch(c.output('console'), /Child processes/);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('an attached program (python -m strata --listen): its spawned child comes as a child session; after detach children run free', { skip: NO_PYTHON }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-children-'));
  const portFile = path.join(dir, 'port');
  const proc = spawn(PYTHONS[0], ['-m', 'strata', '--listen', '127.0.0.1:0', '--port-file', portFile, '--wait-for-client',
    program, 'spawn', 'spawn'], { env: { ...process.env, PYTHONPATH: AGENT_PYTHONPATH }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d) => { out += d; });
  proc.stderr.on('data', (d) => { err += d; });
  const c = await startStdio();
  const children = openChildren(c, { [program]: [work] });
  try {
    await waitUntil(() => fs.existsSync(portFile) && fs.readFileSync(portFile, 'utf8').endsWith('\n'), 20000, 'the port file');
    const port = Number(fs.readFileSync(portFile, 'utf8'));
    await c.initializeRequest({ ...INIT, supportsStartDebuggingRequest: true });
    await c.attachRequest({ connect: { host: '127.0.0.1', port } });
    await c.setBreakpointsRequest({ source: { path: program }, breakpoints: [{ line: work }] });
    await c.configurationDoneRequest();
    const { child, stop, vars } = await childStop(children, 0, 'work', work);
    assert.equal(vars.tag.value, '3');
    // Detached while the child is stopped: the child's own session goes on; the next child is
    // started after the parent's session ended, and runs free.
    await c.disconnectRequest({ terminateDebuggee: false });
    await child.continueRequest({ threadId: stop.body.threadId });
    assert.equal(await withTimeout(exitOf(proc), 60000, 'the program to finish'), 0, err);
    assert.equal(out, 'spawn [6]\nspawn [6]\nparent done\n');
    assert.equal(children.length, 1, 'no session for a child started after the detach');
    assert.doesNotMatch(err, /strata:/, 'nothing said by a child whose debugger has gone');
    assertClean(assert, c);
  } finally {
    proc.kill();
    for (const { child } of children) await child.stop().catch(() => {});
  }
});

const TORCH_PYTHON = '/usr/bin/python3';
const noTorch = spawnSync(TORCH_PYTHON, ['-c', 'import torch.utils.data'], { encoding: 'utf8' }).status === 0
  ? false : `torch does not import under ${TORCH_PYTHON} (python3-torch, which scripts/setup.sh installs)`;

test('a DataLoader with num_workers=2: each worker comes as a child session and stops in Dataset.__getitem__', { skip: noTorch }, async () => {
  const loader = pyTarget('loader_workers.py');
  const getitem = lineOf(loader, 'getitem');
  const c = await startStdio();
  const children = openChildren(c, { [loader]: [getitem] });
  try {
    await c.initializeRequest({ ...INIT, supportsStartDebuggingRequest: true });
    const initialized = c.waitForEvent('initialized', 30000);
    await c.launchRequest({ program: loader, python: TORCH_PYTHON });
    await initialized;
    await c.setBreakpointsRequest({ source: { path: loader }, breakpoints: [{ line: getitem }] });
    const terminated = c.waitForEvent('terminated', 180000);
    await c.configurationDoneRequest();
    const seen = new Set();
    for (const i of [0, 1]) {
      const { child, stop, vars } = await childStop(children, i, 'Squares.__getitem__', getitem);
      seen.add(vars.idx.value);
      assert.match(vars.value.value, /^Tensor\(shape=\(\), dtype=torch\.float32/);
      // Enough of this worker: its breakpoints cleared, it runs to the end.
      await child.setBreakpointsRequest({ source: { path: loader }, breakpoints: [] });
      await child.continueRequest({ threadId: stop.body.threadId });
    }
    assert.equal(seen.size, 2, 'two workers, each at an item of its own');
    await terminated;
    assert.match(c.output('stdout'), /total 140\.0\n/);
    assert.equal(children.length, 2);
    assertClean(assert, c);
  } finally {
    for (const { child } of children) await child.stop().catch(() => {});
  }
});

forEachPython((py) => {
  const v = path.basename(py);
  test(`${v}: strata run --break stops in the children (spawn, subprocess) and names each`, () => {
    const r = spawnSync(CLI, ['run', '--break', `${program}:${work}`, '--', py, program, 'spawn', 'subprocess'],
      { encoding: 'utf8', timeout: 120000 });
    assert.equal(r.status, 0, r.stderr);
    const stops = r.stdout.split('\n').filter((l) => l.startsWith('-- stopped'));
    assert.equal(stops.length, 2, r.stdout);
    for (const s of stops) assert.match(s, /^-- stopped \(breakpoint\) in process \d+ \(a child of \d+\), in thread \d+ "MainThread"$/);
    assert.match(r.stdout, /locals:\n +tag = 3\n/);
    assert.match(r.stdout, /locals:\n +tag = 5\n/);
    assert.match(r.stdout, /^spawn \[6\]$/m);
    assert.match(r.stdout, /^subprocess 3 child 10\nparent done\n$/m);
  });

  test(`${v}: strata run --break --json names the child session of each stop`, () => {
    const r = spawnSync(CLI, ['run', '--json', '--break', `${program}:${work}`, '--', py, program, 'fork'],
      { encoding: 'utf8', timeout: 120000 });
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const stops = lines.filter((l) => l.type === 'stopped');
    assert.equal(stops.length, 1);
    assert.match(stops[0].session, /^process \d+ \(a child of \d+\)$/);
    assert.equal(stops[0].locals.tag, '1');
    assert.equal(lines.find((l) => l.type === 'exited')?.exitCode, 0);
  });
});
