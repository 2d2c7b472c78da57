// Refused native attaches through strata-dap, each provoked for real: a process another
// tracer holds, one of another user, root without CAP_SYS_PTRACE, one that is not dumpable.
// The error must say what applies here (Yama's ptrace_scope when it is set, else the ids).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { ADAPTER, assertClean, startStdio, target, isRunning, withTimeout, exitOf, waitUntil } from './lib/harness.mjs';
import { INIT } from './lib/native.mjs';

const HELPER = target('attach_helper');
const NOBODY = 65534;
const asNobody = { uid: NOBODY, gid: NOBODY };
const DROP_PTRACE = ['setpriv', '--inh-caps=-sys_ptrace', '--bounding-set=-sys_ptrace', '--'];

// Yama's setting decides which explanation applies: read it, never assume it.
const yamaScope = (() => {
  try { return fs.readFileSync('/proc/sys/kernel/yama/ptrace_scope', 'utf8').trim(); } catch { return null; }
})();
const yamaApplies = yamaScope !== null && yamaScope !== '0';
const yamaText = new RegExp(`Operation not permitted: kernel\\.yama\\.ptrace_scope is ${yamaScope}, so `);

const isRoot = process.getuid() === 0;
const nobodyCanRunAdapter = isRoot && spawnSync(ADAPTER, ['--version'], { ...asNobody }).status === 0;
const canDropPtrace = isRoot && spawnSync(DROP_PTRACE[0], [...DROP_PTRACE.slice(1), 'true']).status === 0;

// The helper, set up and waiting ("ready"); it ends when its stdin closes.
async function helper(args, options = {}) {
  const proc = spawn(HELPER, args, { stdio: ['pipe', 'pipe', 'inherit'], ...options });
  await withTimeout(new Promise((resolve, reject) => {
    let text = '';
    proc.stdout.on('data', (d) => { text += d; if (text.includes('ready\n')) resolve(); });
    proc.on('exit', (code) => reject(new Error(`attach_helper ${args.join(' ')} exited with ${code}`)));
  }), 10000, `attach_helper ${args.join(' ')}`);
  return proc;
}

async function stop(proc) {
  proc.stdin.end();
  await withTimeout(exitOf(proc), 10000, 'helper exit');
}

// initialize + attach; returns the refusal's message (the attach must fail) and disconnects.
async function refusal(pid, clientOptions) {
  const c = await startStdio(clientOptions);
  await c.initializeRequest(INIT);
  const r = await c.attachRequest({ processId: pid }).then(() => null, (e) => e);
  await c.disconnectRequest();
  assert.equal(await withTimeout(exitOf(c.adapterProcess), 10000, 'adapter exit'), 0);
  assertClean(assert, c);
  assert.ok(r, `the attach to ${pid} succeeded`);
  return String(r.message);
}

test('a process another tracer holds: the error names the tracer process and the program runs on', async () => {
  const tracee = await helper(['wait']);
  const tracer = await helper(['trace', String(tracee.pid)]);
  try {
    const message = await refusal(tracee.pid);
    assert.equal(message, `cannot attach: process ${tracee.pid}: Operation not permitted: it is already traced by ` +
      `process ${tracer.pid} (attach_helper); only one debugger can attach at a time: detach that one first`);
    assert.ok(isRunning(tracee.pid), 'the traced process still runs');
  } finally {
    await stop(tracer);
    await stop(tracee);
  }
  assert.equal(tracee.exitCode, 0);
});

test('another user\'s process: the error names both users (or Yama, where it is set)',
  { skip: !nobodyCanRunAdapter && 'needs root, and the adapter runnable by nobody, to run it as another user' }, async () => {
    const root = await helper(['wait']);
    try {
      const message = await refusal(root.pid, { spawn: asNobody });
      if (yamaApplies) assert.match(message, yamaText);
      else assert.equal(message, `cannot attach: process ${root.pid}: Operation not permitted: it runs as uid 0 (root) ` +
        'and the debugger as uid 65534 (nobody): run the debugger as that user or as root, or give it CAP_SYS_PTRACE');
      assert.ok(isRunning(root.pid));
    } finally {
      await stop(root);
    }
  });

test('root without CAP_SYS_PTRACE (a container without it): the error says so, not "attach as root"',
  { skip: !canDropPtrace && 'needs root and setpriv able to drop CAP_SYS_PTRACE' }, async () => {
    const theirs = await helper(['wait'], { ...asNobody });
    try {
      const message = await refusal(theirs.pid, { prefix: DROP_PTRACE });
      if (yamaApplies) assert.match(message, yamaText);
      else assert.equal(message, `cannot attach: process ${theirs.pid}: Operation not permitted: it runs as uid 65534 ` +
        '(nobody), and the debugger runs as root but without CAP_SYS_PTRACE, which tracing another user\'s process ' +
        'needs: in a container, start it with --cap-add=SYS_PTRACE');
    } finally {
      await stop(theirs);
    }
  });

test('a process that is not dumpable, of the same user: the error says so; a dumpable one attaches',
  { skip: !nobodyCanRunAdapter && 'needs root, and the adapter runnable by nobody, to run both as another user' }, async () => {
    const sealed = await helper(['undumpable'], { ...asNobody });
    const open = await helper(['wait'], { ...asNobody });
    try {
      const message = await refusal(sealed.pid, { spawn: asNobody });
      if (yamaApplies) assert.match(message, yamaText);
      else assert.equal(message, `cannot attach: process ${sealed.pid}: Operation not permitted: it is not dumpable ` +
        '(it called prctl(PR_SET_DUMPABLE, 0) or changed its ids), and only a debugger with CAP_SYS_PTRACE may ' +
        'attach to such a process: run the debugger as root');
      if (!yamaApplies) {
        // The same adapter, user and program, only dumpable: attached, then detached.
        const c = await startStdio({ spawn: asNobody });
        await c.initializeRequest(INIT);
        await c.attachRequest({ processId: open.pid });
        await waitUntil(() => c.eventsNamed('process').length > 0, 10000, 'the process event');
        assert.equal(c.eventsNamed('process')[0].body.systemProcessId, open.pid);
        await c.disconnectRequest();
        assertClean(assert, c);
      }
      assert.ok(isRunning(sealed.pid) && isRunning(open.pid));
    } finally {
      await stop(sealed);
      await stop(open);
    }
    assert.equal(open.exitCode, 0, 'the attached program ran on after the detach');
  });
