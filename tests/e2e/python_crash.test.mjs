// A crash stops a Python session with no flag: a fatal signal (a ctypes read of an unmapped
// address, abort(), SIGFPE, in the main thread or another, with the program's own faulthandler
// on) stops with reason "exception" and every thread's merged Python + native stack (the Python
// frames read from memory, with their locals); continue lets the program die with its real
// status, and the program's own handler still runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ADAPTER, REPO, CLI, target, startStdio, forEachPython, assertClean, waitUntil, withTimeout, exitOf, NO_PYTHON, PYTHONS } from './lib/harness.mjs';
import { AGENT_PYTHONPATH, lineOf, pyTarget } from './lib/python.mjs';

const INIT = { adapterID: 'strata', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path', supportsVariablePaging: true };
const program = pyTarget('crashes.py');

async function crashStop(py, how) {
  const c = await startStdio();
  await c.initializeRequest(INIT);
  const initialized = c.waitForEvent('initialized', 30000);
  await c.launchRequest({ program, python: py, args: [how] });
  await initialized;
  const stopped = c.waitForEvent('stopped', 60000);
  await c.configurationDoneRequest();
  const stop = await stopped;
  return { c, stop };
}

// The Python frames of a thread's stack (those whose source is a .py file), innermost first.
async function stackOf(c, threadId) {
  const st = await c.stackTraceRequest({ threadId, startFrame: 0, levels: 200 });
  return st.body.stackFrames;
}

async function frameLocals(c, frameId) {
  const scopes = await c.scopesRequest({ frameId });
  const vars = await c.variablesRequest({ variablesReference: scopes.body.scopes[0].variablesReference });
  return Object.fromEntries(vars.body.variables.map((v) => [v.name, v.value]));
}

async function continueToDeath(c, threadId) {
  const terminated = c.waitForEvent('terminated', 30000);
  await c.continueRequest({ threadId });
  await terminated;
  return c.eventsNamed('exited')[0]?.body.exitCode;
}

forEachPython((py) => {
  const v = path.basename(py);

  test(`${v}: a segfault in C called through ctypes stops with the merged stack and the Python locals; continue ends it by SIGSEGV`, async () => {
    const { c, stop } = await crashStop(py, 'segv');
    try {
      assert.equal(stop.body.reason, 'exception');
      assert.match(stop.body.description ?? stop.body.text ?? '', /SIGSEGV/);
      assert.match(c.output('console'), /crashed \(SIGSEGV\): the native debugger takes the session over/);
      const frames = await stackOf(c, stop.body.threadId);
      const names = frames.map((f) => f.name);
      const py = frames.find((f) => f.name === 'load_weights');
      assert.ok(py, names.join(' < '));
      assert.equal(py.line, lineOf(program, 'crash'));
      assert.ok(names.indexOf('load_weights') > 0, 'native frames above the Python one');
      assert.ok(frames.some((f) => f.name === 'main' && f.source?.path === program), names.join(' < '));
      const locals = await frameLocals(c, py.id);
      assert.equal(locals.count, '3');
      assert.equal(locals.shard, '12');
      // One line: the signal, where, and the program's own frame that led there.
      const info = await c.send('exceptionInfo', { threadId: stop.body.threadId });
      assert.match(info.body.description, new RegExp(`^SIGSEGV: read of unmapped address 0x100c in \\S+, called from load_weights at crashes\\.py:${lineOf(program, 'crash')}$`));
      assert.equal(await continueToDeath(c, stop.body.threadId), 139);
      assert.match(c.output('console'), /Process terminated by signal 11 \(SIGSEGV\)/);
      assert.match(c.output('stdout'), /starting segv/);
      assert.doesNotMatch(c.output('stdout'), /not reached/);
      assertClean(assert, c);
    } finally {
      await c.stop().catch(() => {});
    }
  });

  test(`${v}: abort() stops at SIGABRT under give_up; continue ends it by SIGABRT`, async () => {
    const { c, stop } = await crashStop(py, 'abort');
    try {
      assert.equal(stop.body.reason, 'exception');
      const frames = await stackOf(c, stop.body.threadId);
      const py = frames.find((f) => f.name === 'give_up');
      assert.ok(py, frames.map((f) => f.name).join(' < '));
      assert.equal(py.line, lineOf(program, 'abort'));
      assert.equal((await frameLocals(c, py.id)).reason, "'bad checkpoint'");
      assert.equal(await continueToDeath(c, stop.body.threadId), 134);
      assert.match(c.output('console'), /Process terminated by signal 6 \(SIGABRT\)/);
    } finally {
      await c.stop().catch(() => {});
    }
  });

  test(`${v}: SIGFPE stops in divide; a crash in a thread other than the main one stops that thread`, async () => {
    const fpe = await crashStop(py, 'fpe');
    try {
      assert.equal(fpe.stop.body.reason, 'exception');
      const frames = await stackOf(fpe.c, fpe.stop.body.threadId);
      assert.ok(frames.some((f) => f.name === 'divide' && f.line === lineOf(program, 'fpe')), frames.map((f) => f.name).join(' < '));
      assert.equal(await continueToDeath(fpe.c, fpe.stop.body.threadId), 136);
    } finally {
      await fpe.c.stop().catch(() => {});
    }
    const { c, stop } = await crashStop(py, 'thread');
    try {
      const pid = c.eventsNamed('process')[0].body.systemProcessId;
      assert.notEqual(stop.body.threadId, pid, 'the thread that crashed, not the main one');
      const frames = await stackOf(c, stop.body.threadId);
      const py = frames.find((f) => f.name === 'load_weights');
      assert.ok(py, frames.map((f) => f.name).join(' < '));
      assert.equal((await frameLocals(c, py.id)).count, '5');
      // The main thread is stopped too, in join().
      const main = await stackOf(c, pid);
      assert.ok(main.some((f) => f.name === 'main' && f.source?.path === program), main.map((f) => f.name).join(' < '));
      assert.equal(await continueToDeath(c, stop.body.threadId), 139);
    } finally {
      await c.stop().catch(() => {});
    }
  });

  test(`${v}: with the program's own faulthandler on, faulthandler prints its traceback and the crash still stops`, async () => {
    const { c, stop } = await crashStop(py, 'faulthandler');
    try {
      assert.equal(stop.body.reason, 'exception');
      const frames = await stackOf(c, stop.body.threadId);
      assert.ok(frames.some((f) => f.name === 'load_weights'), frames.map((f) => f.name).join(' < '));
      assert.equal(await continueToDeath(c, stop.body.threadId), 139);
      assert.match(c.output('stderr'), /Fatal Python error: Segmentation fault/);
      assert.match(c.output('stderr'), /line \d+ in load_weights/);
    } finally {
      await c.stop().catch(() => {});
    }
  });
}, { tracing: true });

test('a program attached by its agent (python -m strata --listen) stops at its crash too; continue lets it die by SIGSEGV', { skip: NO_PYTHON }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-crash-'));
  const portFile = path.join(dir, 'port');
  const proc = spawn(PYTHONS[0], ['-m', 'strata', '--listen', '127.0.0.1:0', '--port-file', portFile, '--wait-for-client', program, 'segv'],
    { env: { ...process.env, PYTHONPATH: AGENT_PYTHONPATH }, stdio: ['ignore', 'pipe', 'pipe'] });
  const c = await startStdio();
  try {
    await waitUntil(() => fs.existsSync(portFile) && fs.readFileSync(portFile, 'utf8').endsWith('\n'), 20000, 'the port file');
    await c.initializeRequest(INIT);
    await c.attachRequest({ connect: { host: '127.0.0.1', port: Number(fs.readFileSync(portFile, 'utf8')) } });
    const stopped = c.waitForEvent('stopped', 60000);
    await c.configurationDoneRequest();
    const stop = await stopped;
    assert.equal(stop.body.reason, 'exception');
    const frames = await stackOf(c, stop.body.threadId);
    assert.ok(frames.some((f) => f.name === 'load_weights' && f.line === lineOf(program, 'crash')), frames.map((f) => f.name).join(' < '));
    const died = exitOf(proc);
    const terminated = c.waitForEvent('terminated', 30000);
    await c.continueRequest({ threadId: stop.body.threadId });
    await terminated;
    assert.equal(await withTimeout(died, 20000, 'the program to die'), 'SIGSEGV');
    assert.equal(c.eventsNamed('exited')[0]?.body.exitCode, 139);
    assertClean(assert, c);
  } finally {
    proc.kill('SIGKILL');
    await c.stop().catch(() => {});
  }
});


// The program's parent (the Python launch) and the native debugger that took its crash over
// both wait for its end; whichever sees it, the disconnect is answered and the program is gone.
test('disconnect at a crash stop the native debugger took over is answered and ends the program, every time', { skip: NO_PYTHON }, async () => {
  for (let round = 0; round < 8; round++) {
    const { c, stop } = await crashStop(PYTHONS[0], 'segv');
    try {
      assert.equal(stop.body.reason, 'exception');
      const pid = c.eventsNamed('process')[0].body.systemProcessId;
      await withTimeout(c.disconnectRequest({}), 15000, `the disconnect (round ${round + 1})`);
      await waitUntil(() => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      }, 10000, `process ${pid} to end`);
    } finally {
      c.stopAdapter();
    }
  }
});
test('strata run --break: a crash prints the one-line diagnosis and the merged stack, and exits with the program\'s status', { skip: NO_PYTHON }, () => {
  // A breakpoint that is never reached makes it a debug run.
  const r = spawnSync(CLI, ['run', '--break', `${program}:${lineOf(program, 'abort')}`, '--', PYTHONS[0], program, 'segv'],
    { encoding: 'utf8', timeout: 120000 });
  assert.equal(r.status, 139, r.stderr);
  const crash = lineOf(program, 'crash');
  assert.match(r.stdout, new RegExp(`^-- stopped \\(exception\\): SIGSEGV: read of unmapped address 0x100c in \\S+, called from load_weights at crashes\\.py:${crash} in thread \\d+`, 'm'));
  assert.match(r.stdout, new RegExp(`#\\d+ load_weights at ${program.replace(/[.]/g, '\\.')}:${crash}\n +#\\d+ main at `));
  assert.match(r.stderr, /Process terminated by signal 11 \(SIGSEGV\)/);
});

test('strata run with no flag prints a crash report: the diagnosis, the crashing thread\'s frames, its own frame\'s locals, the other threads folded; --json as one line; --no-debug runs it plainly', { skip: NO_PYTHON }, () => {
  const crash = lineOf(program, 'crash');
  const r = spawnSync(CLI, ['run', '--', PYTHONS[0], program, 'thread'], { encoding: 'utf8', timeout: 120000 });
  assert.equal(r.status, 139, r.stderr);
  assert.match(r.stdout, /^starting thread$/m);
  assert.match(r.stdout, new RegExp(`^-- stopped \\(exception\\): SIGSEGV: read of unmapped address 0x1014 in \\S+, called from load_weights at crashes\\.py:${crash} in thread \\d+`, 'm'));
  assert.match(r.stdout, /locals of load_weights \(#\d+\):\n +count = 5\n +shard = 20\n/);
  // The main thread, folded to its innermost frames with a source (it waits for the worker).
  assert.match(r.stdout, /other threads:\n +thread \d+( "[^"]*")?: \S+ \((threading|crashes)\.py:\d+\)/);
  assert.match(r.stderr, /Process terminated by signal 11 \(SIGSEGV\)/);

  const j = spawnSync(CLI, ['run', '--json', '--', PYTHONS[0], program, 'thread'], { encoding: 'utf8', timeout: 120000 });
  assert.equal(j.status, 139, j.stderr);
  const lines = j.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const stop = lines.find((l) => l.type === 'stopped');
  assert.equal(stop.reason, 'exception');
  assert.match(stop.description, new RegExp(`called from load_weights at crashes\\.py:${crash}$`));
  assert.equal(stop.localsFrame.name, 'load_weights');
  assert.deepEqual(stop.locals, { count: '5', shard: '20' });
  assert.equal(stop.otherThreads.length, 1);
  assert.ok(stop.otherThreads[0].frames.length >= 1);
  assert.equal(lines.at(-1).type, 'exited');
  assert.equal(lines.at(-1).exitCode, 139);

  const plain = spawnSync(CLI, ['run', '--no-debug', '--', PYTHONS[0], program, 'segv'], { encoding: 'utf8', timeout: 120000 });
  assert.equal(plain.status, 139, plain.stderr);
  assert.doesNotMatch(plain.stdout, /-- stopped/);
  const bad = spawnSync(CLI, ['run', '--no-debug', '--break', `${program}:${crash}`, '--', PYTHONS[0], program], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--no-debug runs the program without a debugger: it takes no --break/);
});

test('strata run with no flag: a native program\'s crash is reported at its line and ends with its status', () => {
  const r = spawnSync(CLI, ['run', '--', target('native_faults'), 'fpe'], { encoding: 'utf8', timeout: 120000 });
  assert.equal(r.status, 136, r.stderr);
  assert.match(r.stdout, /^dividing 12 by zero$/m);
  assert.match(r.stdout, /^-- stopped \(exception\): SIGFPE: integer divide by zero at 0x[0-9a-f]+ in fpe_fault at native_faults\.c:\d+, called from main at native_faults\.c:\d+ in thread \d+/m);
  assert.match(r.stdout, /#0 fpe_fault at \S+native_faults\.c:\d+\n +#1 main at /);
  assert.match(r.stdout, /locals:\n +dividend = 12\n/);
});

// The mixed-mode example's C++ extension, built per interpreter beside the adapter.
const DRIVER = path.join(REPO, 'examples/mixed/driver.py');
const EXT_SRC = path.join(REPO, 'examples/mixed/mixed_ext.cpp');
const EXT_DIR = process.env.STRATA_MIXED_EXT_DIR ?? path.resolve(path.dirname(ADAPTER), '../examples/mixed');
const extPython = PYTHONS.find((py) => fs.existsSync(EXT_DIR) &&
  fs.readdirSync(EXT_DIR).some((f) => f.startsWith(`mixed_ext.cpython-${path.basename(py).replace('python', '').replace('.', '')}`)));
const markerOf = (file, name) => fs.readFileSync(file, 'utf8').split('\n').findIndex((l) => l.includes(`mixed: ${name}`)) + 1;

test('an out-of-bounds write in a C++ extension stops a plain Python launch in the C++ frame with its DWARF locals, under the Python line that called it',
  { skip: extPython ? false : `the mixed example's extension (mixed_ext) is not built for ${PYTHONS.join(', ') || 'any CPython 3.12+'} in ${EXT_DIR}` }, async () => {
    const c = await startStdio();
    try {
      await c.initializeRequest(INIT);
      const initialized = c.waitForEvent('initialized', 30000);
      await c.launchRequest({ program: DRIVER, python: extPython, args: ['--crash'], env: { PYTHONPATH: EXT_DIR } });
      await initialized;
      const stopped = c.waitForEvent('stopped', 60000);
      await c.configurationDoneRequest();
      const stop = await stopped;
      assert.equal(stop.body.reason, 'exception');
      const frames = await stackOf(c, stop.body.threadId);
      const oob = markerOf(EXT_SRC, 'oob_line');
      assert.match(frames[0].name, /histogram/);
      assert.equal(frames[0].source?.path, EXT_SRC);
      assert.equal(frames[0].line, oob);
      const locals = await frameLocals(c, frames[0].id);
      assert.equal(locals.bin, '1000000000000');
      assert.equal(locals.v, '1e+12');
      assert.ok(frames.some((f) => f.name === 'main' && f.source?.path === DRIVER && f.line === markerOf(DRIVER, 'py_crash_line')),
        frames.map((f) => f.name).join(' < '));
      const info = await c.send('exceptionInfo', { threadId: stop.body.threadId });
      assert.match(info.body.description, new RegExp(`^SIGSEGV: .* in \\S*histogram\\S* at mixed_ext\\.cpp:${oob}, called from main at driver\\.py:${markerOf(DRIVER, 'py_crash_line')}$`));
      assert.equal(await continueToDeath(c, stop.body.threadId), 139);
    } finally {
      await c.stop().catch(() => {});
    }
  });

test('a program attached by pid stops at its crash too, once the agent is in', { skip: NO_PYTHON }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-crash-'));
  const go = path.join(dir, 'go');
  const proc = spawn(PYTHONS[0], [program, `wait=${go}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => { out += d; });
  const c = await startStdio();
  try {
    await waitUntil(() => out.includes('ready\n'), 20000, 'the program to start');
    await c.initializeRequest(INIT);
    await c.attachRequest({ processId: proc.pid });
    await c.configurationDoneRequest();
    await waitUntil(() => c.output('important').includes('The Strata agent is in'), 30000, 'the agent to come in');
    const stopped = c.waitForEvent('stopped', 60000);
    fs.writeFileSync(go, '');
    const stop = await stopped;
    assert.equal(stop.body.reason, 'exception');
    const frames = await stackOf(c, stop.body.threadId);
    const py = frames.find((f) => f.name === 'load_weights');
    assert.ok(py, frames.map((f) => f.name).join(' < '));
    assert.equal((await frameLocals(c, py.id)).count, '7');
    const died = exitOf(proc);
    const terminated = c.waitForEvent('terminated', 30000);
    await c.continueRequest({ threadId: stop.body.threadId });
    await terminated;
    assert.equal(await withTimeout(died, 20000, 'the program to die'), 'SIGSEGV');
    assertClean(assert, c);
  } finally {
    proc.kill('SIGKILL');
    await c.stop().catch(() => {});
  }
});
