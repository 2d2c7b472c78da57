// Attach by pid to a CPython process started plainly (not under Strata), through strata-dap, on
// every interpreter in STRATA_PYTHONS, STRATA_TRACING_PYTHONS (3.10, 3.11) and
// STRATA_REMOTE_EXEC_PYTHONS (3.14+, through PEP 768): the read-only snapshot at once, the agent
// brought in with no restart (a conditional breakpoint in a loop already running, locals,
// evaluate, disconnect, the same output as undebugged), the GIL held forever in C (read-only,
// with the reason and the stacks), the main thread blocked in C while another runs Python (on
// 3.10/3.11, where only the main thread runs the bootstrap, read-only until it returns, saying
// so), a SIGSTOPped process (left stopped, or continued and then debugged), and refusals (no
// such process, another tracer).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { ADAPTER, assertClean, startStdio, startServer, startTcp, exitOf, withTimeout, waitUntil, forEachAttachPython, REMOTE_EXEC_PYTHONS, TRACING_PYTHONS, target, isRunning } from './lib/harness.mjs';
import { lineOf, pyTarget, topFrame, locals } from './lib/python.mjs';

const hotLoop = pyTarget('hot_loop.py');
const gilHeld = pyTarget('gil_held.py');
const lockWait = pyTarget('lock_wait.py');
const HELPER = target('attach_helper');

// Refusals of another user's process need root and the adapter runnable by nobody (as in
// native_attach.test.mjs); the program is Debian's python3, which nobody can run too.
const NOBODY = 65534;
const asNobody = { uid: NOBODY, gid: NOBODY };
const DROP_PTRACE = ['setpriv', '--inh-caps=-sys_ptrace', '--bounding-set=-sys_ptrace', '--'];
const SYSTEM_PYTHON = '/usr/bin/python3';
const isRoot = process.getuid() === 0;
const nobodyCanRunAdapter = isRoot && spawnSync(ADAPTER, ['--version'], { ...asNobody }).status === 0;
const nobodyCanRunTarget = isRoot && spawnSync(SYSTEM_PYTHON, [gilHeld, '0'], { ...asNobody }).status === 0;
const canDropPtrace = isRoot && spawnSync(DROP_PTRACE[0], [...DROP_PTRACE.slice(1), 'true']).status === 0;
const yamaScope = (() => {
  try { return fs.readFileSync('/proc/sys/kernel/yama/ptrace_scope', 'utf8').trim(); } catch { return null; }
})();
const yamaApplies = yamaScope !== null && yamaScope !== '0';
const BUILD_DIR = path.resolve(path.dirname(ADAPTER), '..');
const canUnshare = isRoot && spawnSync('unshare', ['--mount', '--fork', 'sh', '-c', `mount -t tmpfs none ${BUILD_DIR}`]).status === 0;

// The next stop with this reason (the snapshot's comes first).
async function waitStop(c, reason) {
  for (;;) {
    const e = await c.waitForEvent('stopped', 20000);
    if (e.body.reason === reason) return e.body;
  }
}

// A program started plainly, with its output collected; resolves once it printed "ready".
async function startPlain(py, script, args = [], options = {}) {
  const proc = spawn(py, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  proc.out = '';
  proc.err = '';
  proc.stdout.on('data', (d) => { proc.out += d; });
  proc.stderr.on('data', (d) => { proc.err += d; });
  await waitUntil(() => proc.out.includes('ready\n'), 20000, `${path.basename(script)} to start`);
  return proc;
}

function state(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2)[0];
}

// initialize + attach {processId}; the client and every output event's text so far.
async function attachTo(pid) {
  const c = await startStdio();
  c.outputText = '';
  c.on('output', (e) => { c.outputText += e.body.output; });
  await c.initializeRequest();
  await c.attachRequest({ processId: pid });
  return c;
}

async function endClient(c) {
  await c.disconnectRequest({ terminateDebuggee: false });
  assert.equal(await withTimeout(exitOf(c.adapterProcess), 10000, 'adapter exit'), 0);
  assertClean(assert, c);
}

const expectedTotal = (n) => 3 * (n * (n - 1)) / 2;

// Stopped in hot_loop.py run for n steps: clear the breakpoints, continue, disconnect; the
// program then ends on its own with the output of an undebugged run.
async function releaseToTheEnd(c, proc, threadId, n) {
  await c.setBreakpointsRequest({ source: { path: hotLoop }, breakpoints: [] });
  await c.continueRequest({ threadId });
  await endClient(c);
  assert.equal(await withTimeout(exitOf(proc), 30000, 'the program to end'), 0);
  assert.equal(proc.out, `ready\ntotal ${expectedTotal(n)}\n`);
}

// The 3.14 bootstrap files in /tmp (each attach writes one and removes it).
const bootstrapFiles = () => fs.readdirSync('/tmp').filter((f) => /^strata-attach-\w+\.py$/.test(f));

const minorOf = (py) => Number(spawnSync(py, ['-c', 'import sys; print(sys.version_info[1])'], { encoding: 'utf8' }).stdout);

// A worker thread runs a loop while the main thread blocks in C, reading stdin (a line lets it
// go on; a second one ends the worker and the program). The breakpoint goes in the loop, whose
// frame is already running on the worker when the agent comes in.
const MAIN_BLOCKED = `import sys
import threading
import time

stop = threading.Event()


def work(i):
    return i + 1


def worker():
    i = 0
    while not stop.is_set():
        i = work(i)  # @bp:loop
        time.sleep(0.01)


t = threading.Thread(target=worker, name="worker")
t.start()
print("ready", flush=True)
sys.stdin.buffer.readline()
sys.stdin.buffer.readline()
stop.set()
t.join()
print("done", flush=True)
`;

forEachAttachPython((py) => {
  const v = path.basename(py);
  const minor = minorOf(py);
  // 3.10/3.11 run pending calls (the bootstrap) on the main thread alone.
  const mainOnly = minor < 12;

  test(`${v}: attach by pid: snapshot at once, then the agent is in; a conditional breakpoint in the running loop, evaluate, disconnect`, async () => {
    const n = 900;
    const proc = await startPlain(py, hotLoop, [String(n)]);
    try {
      const c = await attachTo(proc.pid);
      // The read-only snapshot, answered before configuration: the loop's frame with its
      // source, line and simple locals.
      const threads = (await c.threadsRequest()).body.threads;
      assert.ok(threads.some((t) => t.id === proc.pid), JSON.stringify(threads));
      const st = await c.stackTraceRequest({ threadId: proc.pid, startFrame: 0, levels: 50 });
      const main = st.body.stackFrames.find((f) => f.name === 'main');
      assert.ok(main, JSON.stringify(st.body.stackFrames.map((f) => f.name)));
      assert.equal(main.source.path, hotLoop);
      assert.ok([lineOf(hotLoop, 'sleep'), lineOf(hotLoop, 'sleep') - 1].includes(main.line), String(main.line));
      const vars = await locals(c, main.id);
      assert.equal(vars.n.value, String(n));
      assert.equal(vars.n.type, 'int');
      assert.match(vars.total.value, /^\d+$/);
      const ro = await c.evaluateRequest({ expression: 'n', frameId: main.id, context: 'repl' }).then(() => null, (e) => e);
      assert.match(String(ro?.message), /cannot evaluate: the session is read-only until the Strata agent is in/);

      const bp = await c.setBreakpointsRequest({ source: { path: hotLoop }, breakpoints: [{ line: lineOf(hotLoop, 'step'), condition: 'i % 10 == 7' }] });
      assert.equal(bp.body.breakpoints[0].verified, false);
      const snapshot = c.waitForEvent('stopped', 10000);
      await c.configurationDoneRequest();
      const snap = (await snapshot).body;
      assert.equal(snap.reason, 'pause');
      assert.equal(snap.description, 'Snapshot (read-only)');
      const hit = c.waitForEvent('stopped', 20000);
      await waitUntil(() => c.outputText.includes('The Strata agent is in'), 30000, 'the agent to come in');
      const stopped = (await hit).body;
      assert.equal(stopped.reason, 'breakpoint');
      assert.equal(stopped.threadId, proc.pid);
      const f = await topFrame(c, stopped.threadId);
      assert.equal(f.name, 'step');
      assert.equal(f.line, lineOf(hotLoop, 'step'));
      const i = Number((await locals(c, f.id)).i.value);
      assert.equal(i % 10, 7);
      const ev = await c.evaluateRequest({ expression: 'i * 3', frameId: f.id, context: 'repl' });
      assert.equal(ev.body.result, String(i * 3));
      await releaseToTheEnd(c, proc, stopped.threadId, n);
      assert.equal(proc.err, '');
    } finally {
      proc.kill('SIGKILL');
    }
  });

  test(`${v}: attach by pid to a program in its own mount namespace where the agent's folder is hidden: a copy under /proc/PID/root`,
    { skip: !canUnshare && 'needs root and unshare --mount' }, async () => {
      const n = 700;
      // The build tree (where the agent lies) is covered by an empty tmpfs in the program's namespace.
      const proc = await startPlain('unshare', '--mount', ['--fork', 'sh', '-c',
        `mount -t tmpfs none ${BUILD_DIR} && exec ${py} ${hotLoop} ${n}`]);
      let copy = null;
      try {
        const pid = Number(fs.readFileSync(`/proc/${proc.pid}/task/${proc.pid}/children`, 'utf8').trim());
        assert.ok(!fs.existsSync(`/proc/${pid}/root${BUILD_DIR}/backends`), 'the build tree is hidden from the program');
        const c = await attachTo(pid);
        await c.setBreakpointsRequest({ source: { path: hotLoop }, breakpoints: [{ line: lineOf(hotLoop, 'step'), condition: 'i == 300' }] });
        await c.configurationDoneRequest();
        const stopped = await waitStop(c, 'breakpoint');
        const f = await topFrame(c, stopped.threadId);
        assert.equal((await locals(c, f.id)).i.value, '300');
        const where = await c.evaluateRequest({ expression: "__import__('strata').__file__", frameId: f.id, context: 'repl' });
        assert.match(where.body.result, /^'\/tmp\/strata-agent-[^/]+\/strata\/__init__\.py'$/);
        copy = where.body.result.slice(1, -'/strata/__init__.py\''.length);
        await releaseToTheEnd(c, proc, stopped.threadId, n);
      } finally {
        proc.kill('SIGKILL');
        if (copy) fs.rmSync(copy, { recursive: true, force: true });
      }
    });

  test(`${v}: attach by pid: the program ends while the agent is in (exited, terminated); terminate while read-only ends it`, async () => {
    const before = bootstrapFiles();
    const proc = await startPlain(py, hotLoop, ['150']);
    try {
      const c = await attachTo(proc.pid);
      await c.configurationDoneRequest();
      await waitUntil(() => c.outputText.includes('The Strata agent is in'), 30000, 'the agent to come in');
      await waitUntil(() => c.eventsNamed('terminated').length > 0, 20000, 'the terminated event');
      assert.deepEqual(c.eventsNamed('exited').map((e) => e.body.exitCode), [0]);
      await endClient(c);
      assert.equal(proc.out, `ready\ntotal ${expectedTotal(150)}\n`);
    } finally {
      proc.kill('SIGKILL');
    }
    const held = await startPlain(py, gilHeld, ['60']);
    try {
      const c = await attachTo(held.pid);
      await c.configurationDoneRequest();
      await c.terminateRequest();
      await waitUntil(() => c.eventsNamed('terminated').length > 0, 10000, 'the terminated event');
      assert.equal(c.eventsNamed('exited').length, 1);
      assert.equal(await withTimeout(exitOf(held), 10000, 'the program to end'), 'SIGTERM');
      await endClient(c);
    } finally {
      held.kill('SIGKILL');
    }
    assert.deepEqual(bootstrapFiles().filter((f) => !before.includes(f)), [], 'no bootstrap file left (3.14+)');
  });

  test(`${v}: attach by pid through strata-dap --listen (a client elsewhere over TCP)`, async () => {
    const n = 700;
    const proc = await startPlain(py, hotLoop, [String(n)]);
    const { server, port } = await startServer();
    try {
      const c = await startTcp(port);
      await c.initializeRequest();
      await c.attachRequest({ processId: proc.pid });
      await c.setBreakpointsRequest({ source: { path: hotLoop }, breakpoints: [{ line: lineOf(hotLoop, 'step'), condition: 'i % 10 == 5' }] });
      const snapshot = c.waitForEvent('stopped', 10000);
      await c.configurationDoneRequest();
      assert.equal((await snapshot).body.description, 'Snapshot (read-only)');
      const stopped = (await c.waitForEvent('stopped', 20000)).body;
      assert.equal(stopped.reason, 'breakpoint');
      const f = await topFrame(c, stopped.threadId);
      assert.equal(Number((await locals(c, f.id)).i.value) % 10, 5);
      await c.setBreakpointsRequest({ source: { path: hotLoop }, breakpoints: [] });
      await c.continueRequest({ threadId: stopped.threadId });
      await c.disconnectRequest({ terminateDebuggee: false });
      assertClean(assert, c);
      assert.equal(await withTimeout(exitOf(proc), 30000, 'the program to end'), 0);
      assert.equal(proc.out, `ready\ntotal ${expectedTotal(n)}\n`);
    } finally {
      proc.kill('SIGKILL');
      server.kill();
    }
  });

  test(`${v}: attach by pid while a thread holds the GIL in C: read-only, with the reason and the stacks; nothing left queued`, async () => {
    const proc = await startPlain(py, gilHeld, ['7']);
    try {
      const c = await attachTo(proc.pid);
      const snapshot = c.waitForEvent('stopped', 10000);
      await c.configurationDoneRequest();
      await snapshot;
      const st = await c.stackTraceRequest({ threadId: proc.pid, startFrame: 0, levels: 50 });
      const names = st.body.stackFrames.map((f) => f.name);
      const hold = st.body.stackFrames.find((f) => f.name === 'hold');
      assert.ok(hold, JSON.stringify(names));
      assert.equal(hold.line, lineOf(gilHeld, 'hold'));
      assert.ok(names.some((n) => /sleep/.test(n)), JSON.stringify(names));
      await waitUntil(() => /Read-only session: thread \d+ \(\S+\) holds the GIL/.test(c.outputText), 15000, 'the reason');
      assert.match(c.outputText, new RegExp(`thread ${proc.pid} \\(python[^)]*\\) holds the GIL and has not released it`));
      const ev = await c.evaluateRequest({ expression: '1 + 1', frameId: hold.id, context: 'repl' }).then(() => null, (e) => e);
      assert.match(String(ev?.message), /cannot evaluate: the session is read-only until the Strata agent is in/);
      await endClient(c);
      assert.ok(isRunning(proc.pid), 'the program still runs');
      // Once the GIL is free the queued bootstrap runs, cancelled: the agent never comes in.
      assert.equal(await withTimeout(exitOf(proc), 20000, 'the program to end'), 0);
      assert.equal(proc.out, 'ready\nagent imported: False\n');
      assert.equal(proc.err, '');
    } finally {
      proc.kill('SIGKILL');
    }
  });

  test(`${v}: attach by pid while every thread waits outside the interpreter: read-only with what each waits on; nothing left queued`, async () => {
    const proc = await startPlain(py, lockWait, ['7']);
    try {
      const c = await attachTo(proc.pid);
      await c.configurationDoneRequest();
      if (mainOnly) {
        await waitUntil(() => /Read-only session: the main thread/.test(c.outputText), 15000, 'the reason');
        assert.match(c.outputText, new RegExp(`the main thread ${proc.pid} \\(python[^)]*\\) is waiting on a lock \\(in [^)]+\\) ` +
          'and has not run Python code since the attach; on CPython 3\\.1[01](\\.\\d+)? only the main thread can bring the ' +
          'debugger in: it gets in when that thread runs Python code again'));
      } else {
        await waitUntil(() => /Read-only session: no thread has run Python code/.test(c.outputText), 15000, 'the reason');
        assert.match(c.outputText, new RegExp(`no thread has run Python code since the attach \\(thread ${proc.pid} \\(python[^)]*\\) waiting on a lock\\); the debugger gets in when one does`));
      }
      const st = await c.stackTraceRequest({ threadId: proc.pid, startFrame: 0, levels: 50 });
      // 3.10's code objects have no qualified name.
      const waitName = minor === 10 ? 'wait' : 'Event.wait';
      assert.ok(st.body.stackFrames.some((f) => f.name === waitName), JSON.stringify(st.body.stackFrames.map((f) => f.name)));
      await endClient(c);
      assert.equal(await withTimeout(exitOf(proc), 20000, 'the program to end'), 0);
      assert.equal(proc.out, 'ready\nagent imported: False\n');
    } finally {
      proc.kill('SIGKILL');
    }
  });

  test(`${v}: attach by pid while the main thread blocks in C and another runs Python: ` +
    (mainOnly ? 'read-only, saying the main thread keeps the debugger out, until it returns' : 'the agent comes in through the other thread'), async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-e2e-'));
    const script = path.join(dir, 'main_blocked.py');
    fs.writeFileSync(script, MAIN_BLOCKED);
    const proc = spawn(py, [script], { stdio: ['pipe', 'pipe', 'pipe'] });
    proc.out = '';
    proc.err = '';
    proc.stdout.on('data', (d) => { proc.out += d; });
    proc.stderr.on('data', (d) => { proc.err += d; });
    try {
      await waitUntil(() => proc.out.includes('ready\n'), 20000, 'the program to start');
      const c = await attachTo(proc.pid);
      await c.setBreakpointsRequest({ source: { path: script }, breakpoints: [{ line: lineOf(script, 'loop') }] });
      const snapshot = c.waitForEvent('stopped', 10000);
      await c.configurationDoneRequest();
      assert.equal((await snapshot).body.description, 'Snapshot (read-only)');
      const hit = waitStop(c, 'breakpoint');
      if (mainOnly) {
        await waitUntil(() => /Read-only session: the main thread/.test(c.outputText), 15000, 'the reason');
        assert.match(c.outputText, new RegExp(`Read-only session: the main thread ${proc.pid} \\(python[^)]*\\) is in system call read ` +
          '\\(in [^)]+\\) and has not run Python code since the attach; on CPython 3\\.1[01](\\.\\d+)? only the main thread can ' +
          'bring the debugger in: it gets in when that thread runs Python code again\\.\n'));
        assert.ok(!c.outputText.includes('The Strata agent is in'), c.outputText);
        const st = await c.stackTraceRequest({ threadId: proc.pid, startFrame: 0, levels: 50 });
        const ev = await c.evaluateRequest({ expression: '1', frameId: st.body.stackFrames[0].id, context: 'repl' }).then(() => null, (e) => e);
        assert.match(String(ev?.message), /read-only until the Strata agent is in \(the main thread/);
        // The listener stays open: once the main thread runs Python again, the agent is in.
        proc.stdin.write('go\n');
      }
      await waitUntil(() => c.outputText.includes('The Strata agent is in'), 30000, 'the agent to come in');
      const stopped = await hit;
      assert.notEqual(stopped.threadId, proc.pid);
      const f = await topFrame(c, stopped.threadId);
      assert.equal(f.name, 'worker');
      assert.equal(f.line, lineOf(script, 'loop'));
      assert.match((await locals(c, f.id)).i.value, /^\d+$/);
      await c.setBreakpointsRequest({ source: { path: script }, breakpoints: [] });
      await c.continueRequest({ threadId: stopped.threadId });
      await endClient(c);
      if (!mainOnly) proc.stdin.write('go\n');
      proc.stdin.end('end\n');
      assert.equal(await withTimeout(exitOf(proc), 20000, 'the program to end'), 0);
      assert.equal(proc.out, 'ready\ndone\n');
      assert.equal(proc.err, '');
    } finally {
      proc.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test(`${v}: attach by pid to a SIGSTOPped program: inspected and left stopped; continued on request, then debugged`, async () => {
    const n = 400;
    const proc = await startPlain(py, hotLoop, [String(n)]);
    try {
      process.kill(proc.pid, 'SIGSTOP');
      await waitUntil(() => state(proc.pid) === 'T', 5000, 'the stop');
      let c = await attachTo(proc.pid);
      let snapshot = c.waitForEvent('stopped', 10000);
      await c.configurationDoneRequest();
      await snapshot;
      assert.match(c.outputText, /stopped by a signal \(SIGSTOP\) and is left stopped/);
      const st = await c.stackTraceRequest({ threadId: proc.pid, startFrame: 0, levels: 50 });
      assert.ok(st.body.stackFrames.some((f) => f.name === '<module>'));
      await endClient(c);
      assert.equal(state(proc.pid), 'T', 'left stopped');

      c = await attachTo(proc.pid);
      snapshot = c.waitForEvent('stopped', 10000);
      await c.configurationDoneRequest();
      await snapshot;
      await c.continueRequest({ threadId: proc.pid });
      await waitUntil(() => c.outputText.includes('The Strata agent is in'), 30000, 'the agent to come in');
      // Listening before the request: the stop can come in the same read as its response.
      const hit = c.waitForEvent('stopped', 20000);
      await c.setBreakpointsRequest({ source: { path: hotLoop }, breakpoints: [{ line: lineOf(hotLoop, 'step') }] });
      const stopped = (await hit).body;
      assert.equal(stopped.reason, 'breakpoint');
      await releaseToTheEnd(c, proc, stopped.threadId, n);
    } finally {
      proc.kill('SIGKILL');
    }
  });

  test(`${v}: attach by pid refused: another tracer holds the process`, async () => {
    const proc = await startPlain(py, hotLoop, ['3000']);
    const tracer = spawn(HELPER, ['trace', String(proc.pid)], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      let text = '';
      tracer.stdout.on('data', (d) => { text += d; });
      await waitUntil(() => text.includes('ready\n'), 10000, 'the tracer');
      const c = await startStdio();
      await c.initializeRequest();
      const r = await c.attachRequest({ processId: proc.pid }).then(() => null, (e) => e);
      assert.match(String(r?.message), new RegExp(`cannot attach: process ${proc.pid}: Operation not permitted: it is already traced by process ${tracer.pid}`));
      await endClient(c);
    } finally {
      tracer.stdin.end();
      await withTimeout(exitOf(tracer), 10000, 'tracer exit');
      proc.kill('SIGKILL');
    }
  });
}, { tracing: true });

// PEP 768's switch: a 3.14 program started with remote debugging off stays read-only, says
// why and what lets the debugger in, and runs on untouched.
if (REMOTE_EXEC_PYTHONS.length === 0) {
  test('attach by pid to CPython 3.14 started with -X disable-remote-debug', {
    skip: 'no CPython 3.14 or newer was found when the build was configured (scripts/setup.sh fetches Debian\'s)',
  }, () => {});
}
for (const py of REMOTE_EXEC_PYTHONS) {
  test(`${path.basename(py)}: attach by pid to a program started with -X disable-remote-debug: read-only, saying why`, async () => {
    const n = 300;
    const before = bootstrapFiles();
    const proc = spawn(py, ['-X', 'disable-remote-debug', hotLoop, String(n)], { stdio: ['ignore', 'pipe', 'pipe'] });
    proc.out = '';
    proc.err = '';
    proc.stdout.on('data', (d) => { proc.out += d; });
    proc.stderr.on('data', (d) => { proc.err += d; });
    try {
      await waitUntil(() => proc.out.includes('ready\n'), 20000, 'the program to start');
      const c = await attachTo(proc.pid);
      const snapshot = c.waitForEvent('stopped', 10000);
      await c.configurationDoneRequest();
      await snapshot;
      await waitUntil(() => /Read-only session: remote debugging is disabled/.test(c.outputText), 10000, 'the reason');
      assert.match(c.outputText, new RegExp(`remote debugging is disabled in process ${proc.pid} \\(it was started with -X disable-remote-debug or PYTHON_DISABLE_REMOTE_DEBUG set, or its CPython was built --without-remote-debug\\); start it without that to let the debugger in`));
      const st = await c.stackTraceRequest({ threadId: proc.pid, startFrame: 0, levels: 50 });
      assert.ok(st.body.stackFrames.some((f) => f.name === 'main'), JSON.stringify(st.body.stackFrames.map((f) => f.name)));
      const ev = await c.evaluateRequest({ expression: 'n', frameId: st.body.stackFrames[0].id, context: 'repl' }).then(() => null, (e) => e);
      assert.match(String(ev?.message), /read-only until the Strata agent is in \(remote debugging is disabled/);
      await endClient(c);
      assert.equal(await withTimeout(exitOf(proc), 30000, 'the program to end'), 0);
      assert.equal(proc.out, `ready\ntotal ${expectedTotal(n)}\n`);
      assert.equal(proc.err, '');
      assert.deepEqual(bootstrapFiles().filter((f) => !before.includes(f)), [], 'no bootstrap file left');
    } finally {
      proc.kill('SIGKILL');
    }
  });
}

test('attach by pid refused: no such process', async () => {
  const c = await startStdio();
  await c.initializeRequest();
  // A pid above the kernel's limit, and one that is free.
  const r = await c.attachRequest({ processId: 999999999 }).then(() => null, (e) => e);
  assert.equal(String(r?.message), 'cannot attach: processId 999999999 is not a process id');
  await endClient(c);
  let free = Number(fs.readFileSync('/proc/sys/kernel/pid_max', 'utf8')) - 1;
  while (fs.existsSync(`/proc/${free}`)) free -= 1;
  const c2 = await startStdio();
  await c2.initializeRequest();
  const r2 = await c2.attachRequest({ processId: free }).then(() => null, (e) => e);
  assert.match(String(r2?.message), new RegExp(`^cannot attach: no process with id ${free} exists`));
  await endClient(c2);
});

// initialize + attach {processId} that must fail; its message.
async function refusal(pid, clientOptions) {
  const c = await startStdio(clientOptions);
  await c.initializeRequest();
  const r = await c.attachRequest({ processId: pid }).then(() => null, (e) => e);
  await endClient(c);
  assert.ok(r, `the attach to ${pid} succeeded`);
  return String(r.message);
}

test('attach by pid refused: another user\'s Python process (the error names both users, or Yama)',
  { skip: !nobodyCanRunAdapter && 'needs root, and the adapter runnable by nobody, to run it as another user' }, async () => {
    const proc = await startPlain(SYSTEM_PYTHON, hotLoop, ['3000']);
    try {
      const message = await refusal(proc.pid, { spawn: asNobody });
      if (yamaApplies) assert.match(message, new RegExp(`kernel\\.yama\\.ptrace_scope is ${yamaScope}`));
      else assert.equal(message, `cannot attach: process ${proc.pid}: Operation not permitted: it runs as uid 0 (root) ` +
        'and the debugger as uid 65534 (nobody): run the debugger as that user or as root, or give it CAP_SYS_PTRACE');
      assert.ok(isRunning(proc.pid));
    } finally {
      proc.kill('SIGKILL');
    }
  });

test('attach by pid refused: root without CAP_SYS_PTRACE (a container without it) on another user\'s Python process',
  { skip: !(canDropPtrace && nobodyCanRunTarget) && 'needs root, setpriv able to drop CAP_SYS_PTRACE and python3 runnable by nobody' }, async () => {
    const proc = await startPlain(SYSTEM_PYTHON, hotLoop, ['3000'], { ...asNobody });
    try {
      const message = await refusal(proc.pid, { prefix: DROP_PTRACE });
      if (yamaApplies) assert.match(message, new RegExp(`kernel\\.yama\\.ptrace_scope is ${yamaScope}`));
      else assert.equal(message, `cannot attach: process ${proc.pid}: Operation not permitted: it runs as uid 65534 ` +
        '(nobody), and the debugger runs as root but without CAP_SYS_PTRACE, which tracing another user\'s process ' +
        'needs: in a container, start it with --cap-add=SYS_PTRACE');
    } finally {
      proc.kill('SIGKILL');
    }
  });

// Debian's python3 (3.11): the agent comes in, its C core the one built for 3.11 (from another
// 3.11's headers).
const systemMinor = Number(spawnSync(SYSTEM_PYTHON, ['-c', 'import sys; print(sys.version_info[1])'], { encoding: 'utf8' }).stdout);
const systemCore = TRACING_PYTHONS.some((py) => minorOf(py) === systemMinor);
test(`attach by pid to Debian's ${SYSTEM_PYTHON} (CPython 3.10/3.11): the agent comes in; a breakpoint in the running loop`,
  { skip: !(systemMinor >= 10 && systemMinor <= 11 && systemCore) && `needs ${SYSTEM_PYTHON} to be CPython 3.10 or 3.11, and a 3.${systemMinor} in STRATA_TRACING_PYTHONS` }, async () => {
    const n = 600;
    const proc = await startPlain(SYSTEM_PYTHON, hotLoop, [String(n)]);
    try {
      const c = await attachTo(proc.pid);
      const st = await c.stackTraceRequest({ threadId: proc.pid, startFrame: 0, levels: 50 });
      const main = st.body.stackFrames.find((f) => f.name === 'main');
      assert.ok(main, JSON.stringify(st.body.stackFrames.map((f) => f.name)));
      assert.equal((await locals(c, main.id)).n.value, String(n));
      await c.setBreakpointsRequest({ source: { path: hotLoop }, breakpoints: [{ line: lineOf(hotLoop, 'step'), condition: 'i == 200' }] });
      const snapshot = c.waitForEvent('stopped', 10000);
      await c.configurationDoneRequest();
      assert.equal((await snapshot).body.description, 'Snapshot (read-only)');
      const stopped = await waitStop(c, 'breakpoint');
      assert.match(c.outputText, /The Strata agent is in process/);
      assert.equal(stopped.threadId, proc.pid);
      const f = await topFrame(c, stopped.threadId);
      assert.equal(f.name, 'step');
      assert.equal((await locals(c, f.id)).i.value, '200');
      const ev = await c.evaluateRequest({ expression: "__import__('sys').version", frameId: f.id, context: 'repl' });
      assert.match(ev.body.result, new RegExp(`^'3\\.${systemMinor}\\.`));
      await releaseToTheEnd(c, proc, stopped.threadId, n);
    } finally {
      proc.kill('SIGKILL');
    }
  });
