// Core files as debug sessions and as `strata core` reports: cores the kernel writes of Python
// programs (CPython 3.10-3.14, shared and statically linked interpreters) and of a C program,
// read by the same readers as live processes: every thread's merged Python + native stack, the
// signal, native locals from DWARF, Python locals from the core's memory, memory and
// disassembly; a core taken of a parked process shows what `strata stacks` showed of it alive.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI, PY_TARGETS, startStdio, assertClean, target } from './lib/harness.mjs';
import { lineOf, startStuck } from './lib/python.mjs';
import { lineOf as cLineOf, NATIVE_SRC } from './lib/native.mjs';

const INIT = { adapterID: 'strata', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path', supportsVariablePaging: true };
const CRASHES = path.join(PY_TARGETS, 'crashes.py');
const STUCK = path.join(PY_TARGETS, 'stuck.py');
const FAULTS = target('native_faults');
const FAULTS_SRC = path.join(NATIVE_SRC, 'native_faults.c');
const CPYTHONS = (process.env.STRATA_CPYTHONS ?? '').split(':').filter(Boolean);

// Why the kernel's cores cannot be made here (null when they can): they go to a file named by
// core_pattern in the process's folder, which a pipe or a path elsewhere rules out.
function coresUnavailable() {
  let pattern = '';
  try {
    pattern = fs.readFileSync('/proc/sys/kernel/core_pattern', 'utf8').trim();
  } catch (e) {
    return `core_pattern cannot be read: ${e.message}`;
  }
  if (pattern.startsWith('|')) return `the kernel hands cores to a program (core_pattern "${pattern}")`;
  if (pattern.includes('/')) return `the kernel writes cores to another folder (core_pattern "${pattern}")`;
  const limit = spawnSync('bash', ['-c', 'ulimit -c unlimited && ulimit -c'], { encoding: 'utf8' });
  if (limit.status !== 0) return `the core size limit cannot be raised here: ${limit.stderr.trim()}`;
  return null;
}
const NO_CORES = coresUnavailable();

function freshDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'strata-core-'));
}

function findCore(dir) {
  const names = fs.readdirSync(dir).filter((n) => n.startsWith('core'));
  return names.length ? path.join(dir, names[0]) : null;
}

// Runs argv with cores enabled in a fresh folder; resolves with the core it left and how it ended.
function runToCore(argv, { onStdout } = {}) {
  const dir = freshDir();
  const child = spawn('bash', ['-c', 'ulimit -c unlimited && exec "$@"', 'bash', ...argv], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (d) => {
    stdout += d;
    onStdout?.(stdout, child);
  });
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => resolve({ dir, core: findCore(dir), code, signal, stdout, pid: child.pid }));
  });
}

function strataCore(args) {
  const r = spawnSync(CLI, ['core', ...args], { encoding: 'utf8', maxBuffer: 256 << 20 });
  return r;
}

const pyFrames = (frames) => frames.filter((f) => f.kind === 'python').map((f) => `${f.function}:${f.line}`);

async function openCore(config) {
  const c = await startStdio();
  await c.initializeRequest(INIT);
  const initialized = c.waitForEvent('initialized', 30000);
  await c.launchRequest(config);
  await initialized;
  const stopped = c.waitForEvent('stopped', 30000);
  await c.configurationDoneRequest();
  return { c, stop: await stopped };
}

for (const py of CPYTHONS) {
  const v = `${path.basename(py)}${py.startsWith('/usr/') || py.includes('/build/') ? ` (${path.dirname(path.dirname(py))})` : ''}`;

  test(`${v}: strata core reads the core of a ctypes segfault: the signal, the crashing thread's merged stack with Python locals`, { skip: NO_CORES ?? false }, async () => {
    const run = await runToCore([py, CRASHES, 'segv']);
    try {
      assert.equal(run.signal, 'SIGSEGV');
      assert.ok(run.core, `no core in ${run.dir}`);
      const r = strataCore(['--json', '--locals', run.core]);
      assert.equal(r.status, 0, r.stderr);
      const report = JSON.parse(r.stdout);
      assert.equal(report.signal.name, 'SIGSEGV');
      assert.equal(report.signal.address, '0x100c');
      assert.match(report.signal.description, /^SIGSEGV: read of unmapped address 0x100c$/);
      assert.ok(report.python, 'a CPython process');
      const crashed = report.threads.filter((t) => t.crashed);
      assert.equal(crashed.length, 1);
      const frames = crashed[0].frames;
      // ctypes' string_at, then the program's own frames.
      const names = pyFrames(frames);
      assert.equal(names[0].split(':')[0], 'string_at', names.join(' < '));
      assert.equal(names[1], `load_weights:${lineOf(CRASHES, 'crash')}`, names.join(' < '));
      assert.ok(names.some((f) => f.startsWith('main:')), names.join(' < '));
      // Native frames above the Python ones (the copy that faulted, libffi, ctypes).
      const firstPy = frames.findIndex((f) => f.kind === 'python');
      assert.ok(firstPy > 0 && frames.slice(0, firstPy).some((f) => f.kind === 'native'), JSON.stringify(frames.slice(0, 4)));
      const lw = frames.find((f) => f.kind === 'python' && f.function === 'load_weights');
      const locals = Object.fromEntries(lw.locals.map((l) => [l.name, l.value]));
      assert.equal(locals.count, '3');
      assert.equal(locals.shard, '12');
      const text = strataCore([run.core]);
      assert.equal(text.status, 0, text.stderr);
      assert.match(text.stdout, new RegExp(`ended by SIGSEGV: read of unmapped address 0x100c`));
      assert.match(text.stdout, /crashed: SIGSEGV/);
      assert.match(text.stdout, new RegExp(`\\[py\\] load_weights \\(${CRASHES.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${lineOf(CRASHES, 'crash')}\\)`));
    } finally {
      fs.rmSync(run.dir, { recursive: true, force: true });
    }
  });

  test(`${v}: a core of a parked process shows what strata stacks read of it alive, thread by thread`, { skip: NO_CORES ?? false }, async () => {
    let live = null;
    let pid = 0;
    const run = await runToCore([py, STUCK], {
      onStdout: (out, child) => {
        if (live || !out.includes('ready\n')) return;
        // The process is bash's exec: the same pid.
        pid = child.pid;
        const r = spawnSync(CLI, ['stacks', '--json', String(pid)], { encoding: 'utf8', maxBuffer: 64 << 20 });
        live = r;
        process.kill(pid, 'SIGABRT');
      },
    });
    try {
      assert.ok(live, 'stuck.py printed ready');
      assert.equal(live.status, 0, live.stderr);
      assert.equal(run.signal, 'SIGABRT');
      assert.ok(run.core, `no core in ${run.dir}`);
      const alive = JSON.parse(live.stdout);
      const r = strataCore(['--json', run.core]);
      assert.equal(r.status, 0, r.stderr);
      const dead = JSON.parse(r.stdout);
      assert.equal(dead.pid, pid);
      assert.equal(dead.signal.name, 'SIGABRT');
      assert.equal(dead.python.version, alive.python.version);
      assert.deepEqual(dead.threads.map((t) => t.id).sort(), alive.threads.map((t) => t.id).sort());
      for (const t of alive.threads) {
        const d = dead.threads.find((x) => x.id === t.id);
        assert.deepEqual(pyFrames(d.frames), pyFrames(t.frames), `thread ${t.id}`);
        const native = (frames) => frames.filter((f) => f.kind === 'native').map((f) => f.function);
        assert.deepEqual(native(d.frames), native(t.frames), `thread ${t.id}`);
        assert.equal(d.holdsGil, t.holdsGil, `thread ${t.id}`);
      }
    } finally {
      fs.rmSync(run.dir, { recursive: true, force: true });
    }
  });
}

function stateOf(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2)[0];
}

for (const py of CPYTHONS) {
  test(`${path.basename(py)} (${path.dirname(py)}): strata core --dump writes a running process's core and lets it run on; the core reads as the process did`, async () => {
    const { child, ready } = startStuck(py);
    const dir = freshDir();
    try {
      await ready;
      const alive = JSON.parse(spawnSync(CLI, ['stacks', '--json', String(child.pid)], { encoding: 'utf8', maxBuffer: 64 << 20 }).stdout);
      const file = path.join(dir, 'stuck.core');
      const dumped = spawnSync(CLI, ['core', '--dump', '--json', String(child.pid), file], { encoding: 'utf8' });
      assert.equal(dumped.status, 0, dumped.stderr);
      const d = JSON.parse(dumped.stdout);
      assert.equal(d.path, file);
      assert.equal(d.bytes, fs.statSync(file).size);
      assert.equal(d.threads, alive.threads.length);
      // The process runs on, untouched.
      assert.notEqual(stateOf(child.pid), 'T');
      assert.equal(child.exitCode, null);
      const r = strataCore(['--json', file]);
      assert.equal(r.status, 0, r.stderr);
      const dead = JSON.parse(r.stdout);
      assert.equal(dead.pid, child.pid);
      assert.equal(dead.signal, undefined, 'a core taken on demand names no signal');
      assert.deepEqual(dead.problems, []);
      assert.equal(dead.python.version, alive.python.version);
      for (const t of alive.threads) {
        const x = dead.threads.find((y) => y.id === t.id);
        assert.ok(x, `thread ${t.id} in the core`);
        assert.deepEqual(pyFrames(x.frames), pyFrames(t.frames), `thread ${t.id}`);
      }
      const text = strataCore([file]);
      assert.match(text.stdout, new RegExp(`^core ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: process ${child.pid} \\(`));
    } finally {
      child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('strata core --dump answers a process that is not there, and a file that exists, with what is wrong', () => {
  let r = spawnSync(CLI, ['core', '--dump', 'abc'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--dump needs a process id, not 'abc'/);
  r = spawnSync(CLI, ['core', '--dump', '4194303', path.join(os.tmpdir(), `strata-none-${process.pid}.core`)], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /4194303/);
  assert.ok(!fs.existsSync(path.join(os.tmpdir(), `strata-none-${process.pid}.core`)), 'no file left behind');
  const dir = freshDir();
  try {
    const existing = path.join(dir, 'core.1');
    fs.writeFileSync(existing, 'keep me');
    r = spawnSync(CLI, ['core', '--dump', String(process.pid), existing], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /File exists/);
    assert.equal(fs.readFileSync(existing, 'utf8'), 'keep me');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('launch {coreFile} of a C program: stops at the fault with DWARF locals, registers, memory and disassembly; it does not run', { skip: NO_CORES ?? false }, async () => {
  const run = await runToCore([FAULTS, 'fpe']);
  let c;
  try {
    assert.equal(run.signal, 'SIGFPE');
    assert.ok(run.core);
    const opened = await openCore({ coreFile: run.core, program: FAULTS });
    c = opened.c;
    const { stop } = opened;
    assert.equal(stop.body.reason, 'exception');
    assert.match(stop.body.text, /^SIGFPE: integer divide by zero at 0x[0-9a-f]+$/);
    assert.match(c.output('console'), new RegExp(`Core file ${run.core}: process \\d+ \\(.*native_faults fpe\\), ended by SIGFPE`));
    const threads = await c.threadsRequest();
    assert.equal(threads.body.threads.length, 1);
    const st = await c.stackTraceRequest({ threadId: stop.body.threadId, startFrame: 0, levels: 20 });
    const frames = st.body.stackFrames;
    assert.equal(frames[0].name, 'fpe_fault');
    assert.equal(frames[0].source.name, 'native_faults.c');
    assert.equal(frames[0].source.path, FAULTS_SRC);
    assert.equal(frames[0].line, cLineOf(FAULTS_SRC, 'fpe_line'));
    assert.equal(frames[1].name, 'main');
    assert.equal(frames[1].line, cLineOf(FAULTS_SRC, 'fpe_call'));
    const scopes = await c.scopesRequest({ frameId: frames[0].id });
    assert.deepEqual(scopes.body.scopes.map((s) => s.name), ['Locals', 'Registers']);
    const vars = await c.variablesRequest({ variablesReference: scopes.body.scopes[0].variablesReference });
    const locals = Object.fromEntries(vars.body.variables.map((x) => [x.name, x.value]));
    assert.equal(locals.dividend, '12');
    assert.equal(locals.divisor, '0');
    const regs = await c.variablesRequest({ variablesReference: scopes.body.scopes[1].variablesReference });
    const rip = regs.body.variables.find((x) => x.name === 'rip');
    assert.equal(BigInt(rip.value), BigInt(frames[0].instructionPointerReference));
    const ev = await c.evaluateRequest({ expression: 'dividend * 2 + divisor', frameId: frames[0].id, context: 'watch' });
    assert.equal(ev.body.result, '24');
    const info = await c.send('exceptionInfo', { threadId: stop.body.threadId });
    assert.match(info.body.description, /^SIGFPE: integer divide by zero at 0x[0-9a-f]+ in fpe_fault/);
    // The instruction that faulted, decoded from the program's file (a core leaves code out).
    const dis = await c.send('disassemble', { memoryReference: frames[0].instructionPointerReference, instructionCount: 1 });
    assert.match(dis.body.instructions[0].instruction, /^idiv/);
    const mem = await c.send('readMemory', { memoryReference: frames[0].instructionPointerReference, count: 2 });
    assert.ok(Buffer.from(mem.body.data, 'base64').length === 2);
    // Nothing runs: writes and continue are refused, the session stays.
    await assert.rejects(c.send('setVariable', { variablesReference: scopes.body.scopes[0].variablesReference, name: 'divisor', value: '1' }), /a core file does not run/);
    await assert.rejects(c.continueRequest({ threadId: stop.body.threadId }), /a core file does not run/);
    await assert.rejects(c.nextRequest({ threadId: stop.body.threadId }), /a core file does not run/);
    const again = await c.stackTraceRequest({ threadId: stop.body.threadId, startFrame: 0, levels: 1 });
    assert.equal(again.body.stackFrames[0].name, 'fpe_fault');
    const terminated = c.waitForEvent('terminated', 10000);
    await c.disconnectRequest({});
    await terminated;
    assertClean(assert, c);
  } finally {
    c?.stopAdapter();
    fs.rmSync(run.dir, { recursive: true, force: true });
  }
});

test('launch {coreFile} of a Python crash: the merged stack with Python locals in the session', { skip: (NO_CORES ?? CPYTHONS.length === 0) ? (NO_CORES ?? 'no CPython 3.10+ was found') : false }, async () => {
  const py = CPYTHONS.find((p) => p.includes('3.12')) ?? CPYTHONS[0];
  const run = await runToCore([py, CRASHES, 'thread']);
  let c;
  try {
    assert.equal(run.signal, 'SIGSEGV');
    const opened = await openCore({ coreFile: run.core });
    c = opened.c;
    const { stop } = opened;
    assert.equal(stop.body.reason, 'exception');
    const threads = (await c.threadsRequest()).body.threads;
    assert.equal(threads.length, 2);
    assert.match(threads.find((t) => t.id === stop.body.threadId).name, /SIGSEGV/);
    const frames = (await c.stackTraceRequest({ threadId: stop.body.threadId, startFrame: 0, levels: 100 })).body.stackFrames;
    const lw = frames.find((f) => f.name === 'load_weights');
    assert.ok(lw, frames.map((f) => f.name).join(' < '));
    assert.equal(lw.line, lineOf(CRASHES, 'crash'));
    assert.equal(lw.source.path, CRASHES);
    assert.ok(frames.indexOf(lw) > 0, 'native frames above it');
    assert.ok(!frames.some((f) => f.name.startsWith('_PyEval_EvalFrameDefault')), 'interpreter frames are folded into the Python ones');
    const scopes = await c.scopesRequest({ frameId: lw.id });
    const vars = await c.variablesRequest({ variablesReference: scopes.body.scopes[0].variablesReference });
    const locals = Object.fromEntries(vars.body.variables.map((x) => [x.name, x.value]));
    assert.equal(locals.count, '5');
    assert.equal(locals.shard, '20');
    const ev = await c.evaluateRequest({ expression: 'shard', frameId: lw.id, context: 'watch' });
    assert.equal(ev.body.result, '20');
    // The main thread waits in join(), in main().
    const other = threads.find((t) => t.id !== stop.body.threadId);
    const mainFrames = (await c.stackTraceRequest({ threadId: other.id, startFrame: 0, levels: 100 })).body.stackFrames;
    assert.ok(mainFrames.some((f) => f.name === 'main' && f.source?.path === CRASHES), mainFrames.map((f) => f.name).join(' < '));
    const info = await c.send('exceptionInfo', { threadId: stop.body.threadId });
    assert.match(info.body.description, new RegExp(`^SIGSEGV: read of unmapped address 0x1014 in \\S+, called from load_weights at crashes\\.py:${lineOf(CRASHES, 'crash')}$`));
    await c.disconnectRequest({});
    assertClean(assert, c);
  } finally {
    c?.stopAdapter();
    fs.rmSync(run.dir, { recursive: true, force: true });
  }
});

test('bad cores are answered with what is wrong: not a core, missing, truncated (opened, with what is missing said)', { skip: NO_CORES ?? false }, async () => {
  // Not a core: an executable.
  let r = strataCore([FAULTS]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /is a shared object or PIE executable, not a core file|is an executable, not a core file/);
  r = strataCore(['/nonexistent/core.1']);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /open core file \/nonexistent\/core\.1: No such file or directory/);
  for (const [coreFile, why] of [[FAULTS, /not a core file/], ['/nonexistent/core.1', /coreFile '\/nonexistent\/core\.1' does not exist/]]) {
    const c = await startStdio();
    try {
      await c.initializeRequest(INIT);
      await assert.rejects(c.launchRequest({ coreFile }), why);
    } finally {
      await c.stop().catch(() => {});
    }
  }
  // Truncated: the first 40% of a real core.
  const run = await runToCore([FAULTS, 'fpe']);
  try {
    const cut = path.join(run.dir, 'cut.core');
    const bytes = fs.readFileSync(run.core);
    fs.writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length * 0.4)));
    r = strataCore(['--json', cut, FAULTS]);
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.ok(report.problems.some((p) => /the core is truncated: \d+ bytes of \d+ memory segments are missing/.test(p)), report.problems.join('\n'));
    // Foreign: the same core said to be another machine's (e_machine: AArch64).
    const foreign = path.join(run.dir, 'foreign.core');
    const patched = Buffer.from(bytes);
    patched.writeUInt16LE(183, 18);
    fs.writeFileSync(foreign, patched);
    r = strataCore([foreign]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /is a core of another machine \(ELF machine 183\): Strata reads x86-64 cores/);
  } finally {
    fs.rmSync(run.dir, { recursive: true, force: true });
  }
});

test('a program moved or changed since its core: --sysroot finds it, a changed file is said by its build id', { skip: NO_CORES ?? false }, async () => {
  const dir = freshDir();
  try {
    const bin = path.join(dir, 'app', 'native_faults');
    fs.mkdirSync(path.dirname(bin));
    fs.copyFileSync(FAULTS, bin);
    fs.chmodSync(bin, 0o755);
    const run = await runToCore([bin, 'fpe']);
    assert.equal(run.signal, 'SIGFPE');
    // Moved under a root of its own (a container's file system copied out).
    const root = path.join(dir, 'root');
    fs.mkdirSync(path.join(root, path.dirname(bin)), { recursive: true });
    fs.renameSync(bin, path.join(root, bin));
    let r = strataCore(['--json', run.core]);
    assert.equal(r.status, 0, r.stderr);
    let report = JSON.parse(r.stdout);
    assert.ok(report.problems.some((p) => p.startsWith(`${bin}: missing`)), report.problems.join('\n'));
    r = strataCore(['--json', '--sysroot', root, run.core]);
    assert.equal(r.status, 0, r.stderr);
    report = JSON.parse(r.stdout);
    assert.ok(!report.problems.some((p) => p.startsWith(`${bin}:`)), report.problems.join('\n'));
    const top = report.threads[0].frames.filter((f) => f.kind === 'native').map((f) => f.function);
    assert.deepEqual(top.slice(0, 2), ['fpe_fault', 'main']);
    // Changed since: another program at its path.
    fs.renameSync(path.join(root, bin), bin);
    fs.copyFileSync(target('hello'), bin);
    r = strataCore(['--json', run.core]);
    report = JSON.parse(r.stdout);
    assert.ok(report.problems.some((p) => new RegExp(`^${bin.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: changed since the core was written \\(build id [0-9a-f]+ in the core, [0-9a-f]+ on disk\\)`).test(p)), report.problems.join('\n'));
    // The program named on the command line is read instead of the core's path.
    r = strataCore(['--json', run.core, FAULTS]);
    report = JSON.parse(r.stdout);
    assert.ok(!report.problems.some((p) => p.startsWith(`${bin}:`)), report.problems.join('\n'));
    assert.equal(report.threads[0].frames.find((f) => f.kind === 'native').function, 'fpe_fault');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// launch {"coreOnCrash": DIR}: the crash stop writes the program's core there first.
async function crashWithCore(config) {
  const c = await startStdio();
  await c.initializeRequest(INIT);
  const initialized = c.waitForEvent('initialized', 30000);
  await c.launchRequest(config);
  await initialized;
  const stopped = c.waitForEvent('stopped', 60000);
  await c.configurationDoneRequest();
  const stop = await stopped;
  return { c, stop };
}

test('launch {coreOnCrash} of a C program: the crash stop writes its core, which reads as the stop showed', async () => {
  const dir = freshDir();
  let c;
  try {
    const opened = await crashWithCore({ program: FAULTS, args: ['fpe'], coreOnCrash: dir });
    c = opened.c;
    assert.equal(opened.stop.body.reason, 'exception');
    const said = c.output('console').match(/Core of process (\d+) written to (\S+) \((\d+) MB, \d+ ms\): strata core \S+/);
    assert.ok(said, c.output('console'));
    const file = said[2];
    assert.equal(path.dirname(file), dir);
    assert.ok(fs.statSync(file).size > 0);
    const terminated = c.waitForEvent('terminated', 30000);
    await c.continueRequest({ threadId: opened.stop.body.threadId });
    await terminated;
    assert.equal(c.eventsNamed('exited')[0]?.body.exitCode, 136);
    const r = strataCore(['--json', file]);
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.equal(report.pid, Number(said[1]));
    assert.equal(report.signal.name, 'SIGFPE');
    assert.deepEqual(report.problems, []);
    assert.equal(report.threads[0].crashed, report.signal.description);
    assert.deepEqual(report.threads[0].frames.slice(0, 2).map((f) => f.function), ['fpe_fault', 'main']);
  } finally {
    c?.stopAdapter();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('launch {coreOnCrash} of a Python program: the crash the agent hands over is written with its Python frames', { skip: CPYTHONS.length === 0 ? 'no CPython 3.10+ was found' : false }, async () => {
  const py = (process.env.STRATA_PYTHONS ?? '').split(':').filter(Boolean)[0] ?? CPYTHONS.find((p) => p.includes('3.12'));
  const dir = freshDir();
  let c;
  try {
    const opened = await crashWithCore({ program: CRASHES, python: py, args: ['segv'], coreOnCrash: dir });
    c = opened.c;
    const said = c.output('console').match(/Core of process \d+ written to (\S+) \(/);
    assert.ok(said, c.output('console'));
    const r = strataCore(['--json', '--locals', said[1]]);
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.equal(report.signal.name, 'SIGSEGV');
    const lw = report.threads[0].frames.find((f) => f.kind === 'python' && f.function === 'load_weights');
    assert.ok(lw, JSON.stringify(report.threads[0].frames.map((f) => f.function)));
    assert.equal(lw.line, lineOf(CRASHES, 'crash'));
    assert.deepEqual(Object.fromEntries(lw.locals.map((l) => [l.name, l.value])), { count: '3', shard: '12' });
    const terminated = c.waitForEvent('terminated', 30000);
    await c.continueRequest({ threadId: opened.stop.body.threadId });
    await terminated;
    assert.equal(c.eventsNamed('exited')[0]?.body.exitCode, 139);
  } finally {
    c?.stopAdapter();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('launch {coreOnCrash} that is no folder is refused with why', async () => {
  const c = await startStdio();
  try {
    await c.initializeRequest(INIT);
    await assert.rejects(c.launchRequest({ program: FAULTS, args: ['fpe'], coreOnCrash: '/nonexistent/cores' }), /arguments\.coreOnCrash: '\/nonexistent\/cores' is not a folder/);
  } finally {
    c.stopAdapter();
  }
});
