// The ranks of a job already running, in one debug session: attach {processTree} to every rank
// (each stopped alone, left running at disconnect), a hung training job, stopAll false with
// frames that outlive the other ranks' runs, and ranks on another network node (ranksAddress,
// attach {nodes}).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { REPO, StrataClient, startStdio, waitUntil, freePort, sleep, isRunning, assertClean, forEachAttachPython, PYTHONS, withTimeout, exitOf, ADAPTER } from './lib/harness.mjs';
import { PYTHON, TRAIN, MPI_ENV, skip, whyNoMpi, markerLine, INIT, launchJob, spawnLaunch, mpiLaunch, stops, threadsByName, topFrame, localsOf, finish } from './lib/ranks.mjs';

// ---- attach to the ranks of a job already running ----------------------------------------------
const JOB = path.join(REPO, 'tests/targets/python/ranks_job.py');

function jobLine(name) {
  const lines = fs.readFileSync(JOB, 'utf8').split('\n');
  return lines.findIndex((l) => l.includes(`ranks: ${name}`)) + 1;
}

function childrenOf(pid) {
  return spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map(Number);
}

forEachAttachPython((python) => {
  test(`attach {processTree}: every rank of a running job (${path.basename(python)}), stopped one by one, left running at disconnect`, async () => {
    const job = spawn(python, [JOB, '--ranks', '3'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    job.stdout.on('data', (d) => { out += d; });
    const c = await startStdio();
    try {
      await waitUntil(() => (out.match(/ready/g) ?? []).length === 3, 20000, 'three ranks ready');
      const ranks = childrenOf(job.pid);
      assert.equal(ranks.length, 3);
      await c.initializeRequest(INIT);
      await c.attachRequest({ processTree: job.pid, stopAll: false });
      const work = jobLine('work_line');
      await c.setBreakpointsRequest({ source: { path: JOB }, breakpoints: [{ line: work }] });
      await c.configurationDoneRequest();
      // Each rank's agent comes in, then its breakpoint holds it.
      await waitUntil(() => stops(c).filter((s) => s.reason === 'breakpoint').length >= 3, 60000, 'three breakpoint stops');
      const threads = await threadsByName(c);
      const mains = threads.filter((t) => /^rank \d \/ MainThread$/.test(t.name));
      assert.deepEqual(mains.map((t) => t.name).sort(), ['rank 0 / MainThread', 'rank 1 / MainThread', 'rank 2 / MainThread']);
      // The launcher is a member too (named by its OS thread name until its agent is in).
      assert.ok(threads.some((t) => t.name.startsWith(`pid ${job.pid} / `)), JSON.stringify(threads));
      for (const t of mains) {
        const [frame] = await topFrame(c, t.id);
        assert.deepEqual([frame.name, frame.line], ['work', work]);
        assert.equal((await localsOf(c, frame.id)).rank, t.name.slice(5, 6));
      }
      await c.setBreakpointsRequest({ source: { path: JOB }, breakpoints: [] });
      for (const t of mains) await c.continueRequest({ threadId: t.id });
      await c.disconnectRequest({ terminateDebuggee: false });
      assert.equal(await withTimeout(exitOf(c.adapterProcess), 10000, 'adapter exit'), 0);
      // Every process runs on, as if never debugged: the ranks keep counting steps.
      const before = out.length;
      await waitUntil(() => (out.slice(before).match(/step/g) ?? []).length >= 6, 20000, 'the ranks running on');
      for (const pid of [job.pid, ...ranks]) assert.ok(isRunning(pid), `process ${pid} runs on`);
      assertClean(assert, c);
    } finally {
      c.stopAdapter();  // after disconnect it is gone: stop() would wait for an answer to another
      for (const pid of childrenOf(job.pid)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
      job.kill('SIGKILL');
    }
  });
}, { tracing: true });

// A rank that crashes (a ctypes read of an unmapped address) in a launched job: the native
// debugger takes that rank over, the stop shows its merged stack down to the Python line, the
// other rank and the launcher are stopped with it (stopAll); continue lets the rank die of its
// signal, and the job goes on without it.
test('launch {ranks}: a rank that crashes stops with its merged stack, taken over by the native debugger; the others stop too; continue lets it die', { skip: PYTHONS.length === 0 ? 'no CPython with the agent' : false }, async () => {
  const c = await startStdio();
  try {
    await c.initializeRequest(INIT);
    const stopped = c.waitForEvent('stopped', 60000);
    await c.launchRequest({ ranks: true, program: JOB, python: PYTHONS[0], args: ['--ranks', '2'], env: { CRASH_RANK: '1' } });
    await c.configurationDoneRequest();
    const stop = (await stopped).body;
    assert.equal(stop.reason, 'exception');
    assert.match(stop.description ?? stop.text ?? '', /SIGSEGV/);
    assert.match(c.output('console'), /rank 1[^\n]*: thread \d+ crashed \(SIGSEGV\): the native debugger takes this rank over/);
    const threads = await threadsByName(c);
    const crashed = threads.find((t) => t.id === stop.threadId);
    assert.match(crashed?.name ?? '', /^rank 1 \//, JSON.stringify(threads));
    const frames = await topFrame(c, stop.threadId);
    const own = frames.find((f) => f.name === 'rank_main');
    assert.ok(own, frames.map((f) => f.name).join(' < '));
    assert.equal(own.line, jobLine('crash_line'));
    assert.ok(frames.indexOf(own) > 0, 'native frames above the Python one');
    assert.equal((await localsOf(c, own.id)).step, '20');
    const info = await c.send('exceptionInfo', { threadId: stop.threadId });
    assert.match(info.body.description, new RegExp(`^SIGSEGV: read of unmapped address 0x1001 in \\S+, called from rank_main at ranks_job\\.py:${jobLine('crash_line')}$`));
    // Rank 0 was stopped with it: its stack answers, in its loop.
    const rank0 = threads.find((t) => /^rank 0 \/ MainThread$/.test(t.name));
    assert.ok(rank0, JSON.stringify(threads));
    assert.ok((await topFrame(c, rank0.id)).some((f) => f.name === 'rank_main'));
    // The crashed rank dies of its signal; the rest of the job runs on until it is ended.
    await c.continueRequest({ threadId: stop.threadId });
    await waitUntil(() => /rank 0 step \d+/.test(c.output('stdout')), 30000, 'rank 0 running on');
    await waitUntil(async () => !(await threadsByName(c)).some((t) => /^rank 1 \//.test(t.name)), 30000, 'rank 1 gone');
    const terminated = c.waitForEvent('terminated', 30000);
    await c.disconnectRequest({ terminateDebuggee: true });
    await terminated.catch(() => {});
  } finally {
    c.stopAdapter();
  }
});

// A rank that runs and stops again leaves another rank's stop as it was: the frames and variables
// a client shows for rank 1 still answer, while rank 0's old ones are refused with why (ids belong
// to a thread's stop, not to the whole job's).
test('stopAll false: continuing one rank, and its stopping again, leave the other rank\'s frame ids and variables references answering', { skip: PYTHONS.length === 0 ? 'no CPython with the agent' : false }, async () => {
  const job = spawn(PYTHONS[0], [JOB, '--ranks', '2'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  job.stdout.on('data', (d) => { out += d; });
  const c = await startStdio();
  try {
    await waitUntil(() => (out.match(/ready/g) ?? []).length === 2, 20000, 'two ranks ready');
    await c.initializeRequest(INIT);
    await c.attachRequest({ processTree: job.pid, stopAll: false });
    const work = jobLine('work_line');
    await c.setBreakpointsRequest({ source: { path: JOB }, breakpoints: [{ line: work }] });
    await c.configurationDoneRequest();
    await waitUntil(() => stops(c).filter((s) => s.reason === 'breakpoint').length >= 2, 60000, 'two breakpoint stops');
    const threads = await threadsByName(c);
    const main = (r) => threads.find((t) => t.name === `rank ${r} / MainThread`).id;
    const [t0, t1] = [main(0), main(1)];
    const held = {};
    for (const [r, t] of [[0, t0], [1, t1]]) {
      const [frame] = await topFrame(c, t);
      const scopes = await c.scopesRequest({ frameId: frame.id });
      held[r] = { frame: frame.id, locals: scopes.body.scopes.find((s) => s.name === 'Locals').variablesReference };
    }
    const step1 = (await localsOf(c, held[1].frame)).step;
    // Rank 0 alone goes on, and stops at the breakpoint again.
    const before = stops(c).length;
    const cont = await c.continueRequest({ threadId: t0 });
    assert.equal(cont.body.allThreadsContinued, false, 'only rank 0 runs');
    await waitUntil(() => stops(c).slice(before).some((s) => s.reason === 'breakpoint' && s.threadId === t0), 20000, 'rank 0 at the breakpoint again');
    // Rank 1 never ran: its stack, its old frame id and its old variables reference all answer.
    const [again] = await topFrame(c, t1);
    assert.equal(again.id, held[1].frame, 'rank 1 keeps its frame id');
    const vars = await c.variablesRequest({ variablesReference: held[1].locals });
    const locals1 = Object.fromEntries(vars.body.variables.map((v) => [v.name, v.value]));
    assert.deepEqual([locals1.rank, locals1.step], ['1', step1]);
    assert.equal((await localsOf(c, held[1].frame)).rank, '1');
    // Rank 0 ran: its old ids are refused with why; its new frame is a step further.
    const stale = await c.scopesRequest({ frameId: held[0].frame }).catch((e) => e);
    assert.match(String(stale.message), /unknown frameId .*valid only until the program runs again/);
    const staleVars = await c.variablesRequest({ variablesReference: held[0].locals }).catch((e) => e);
    assert.match(String(staleVars.message), /unknown variablesReference/);
    const [now0] = await topFrame(c, t0);
    assert.notEqual(now0.id, held[0].frame);
    assert.equal((await localsOf(c, now0.id)).rank, '0');
    // A step of rank 0 runs rank 0 alone too.
    const beforeStep = stops(c).length;
    await c.nextRequest({ threadId: t0 });
    await waitUntil(() => stops(c).slice(beforeStep).some((s) => s.reason === 'step' && s.threadId === t0), 20000, 'rank 0 stepped');
    const [still] = await topFrame(c, t1);
    assert.equal(still.id, held[1].frame, 'rank 1 keeps its frame id across rank 0\'s step');
    const [stepped] = await topFrame(c, t0);
    assert.deepEqual([stepped.name, stepped.line], ['work', work + 1]);
    await c.setBreakpointsRequest({ source: { path: JOB }, breakpoints: [] });
    for (const t of [t0, t1]) await c.continueRequest({ threadId: t });
    await c.disconnectRequest({ terminateDebuggee: false });
    assert.equal(await withTimeout(exitOf(c.adapterProcess), 10000, 'adapter exit'), 0);
    const mark = out.length;
    await waitUntil(() => /rank 0 step/.test(out.slice(mark)) && /rank 1 step/.test(out.slice(mark)), 20000, 'both ranks running on');
    assertClean(assert, c);
  } finally {
    c.stopAdapter();
    for (const pid of childrenOf(job.pid)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    job.kill('SIGKILL');
  }
});

test('attach {processTree} to a hung training job (Python 3.11): the agent gets into the rank that still runs Python and stops it at the hang; the rest stay read-only, named by rank', { skip }, async () => {
  const job = spawn(PYTHON, [TRAIN, '--steps', '20', '--hang-rank', '3', '--port', String(await freePort())],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  job.stdout.on('data', (d) => { out += d; });
  job.stderr.on('data', (d) => { out += d; });
  const c = await startStdio();
  try {
    await waitUntil(() => /rank 3 hangs in load_batch/.test(out), 90000, 'rank 3 hanging');
    await sleep(1000);  // the other ranks reach their all_reduce and wait there
    const ranks = childrenOf(job.pid);
    await c.initializeRequest(INIT);
    await c.attachRequest({ processTree: job.pid });
    const hang = markerLine('hang_line');
    await c.setBreakpointsRequest({ source: { path: TRAIN }, breakpoints: [{ line: hang }] });
    await c.configurationDoneRequest();
    await waitUntil(() => stops(c).some((s) => s.reason === 'breakpoint'), 60000, 'rank 3 at its breakpoint');
    const hit = stops(c).find((s) => s.reason === 'breakpoint');
    assert.match(hit.description, /^rank 3: /);
    const threads = await threadsByName(c);
    assert.equal(threads.find((t) => t.id === hit.threadId).name, 'rank 3 / MainThread');
    const [frame] = await topFrame(c, hit.threadId);
    assert.deepEqual([frame.name, frame.line], ['load_batch', hang]);
    assert.equal((await localsOf(c, frame.id)).rank, '3');
    // Ranks 0-2 wait in all_reduce with their main thread in C: on 3.11 only the main thread lets
    // the agent in, so they stay read-only, and say why; their threads are still named by rank.
    for (const r of [0, 1, 2]) assert.ok(threads.some((t) => t.name.startsWith(`rank ${r} / `)), JSON.stringify(threads));
    await waitUntil(() => /only the main thread can bring the debugger in/.test(c.output('important')), 20000, 'the read-only explanation');
    await c.disconnectRequest({ terminateDebuggee: false });
    assert.equal(await withTimeout(exitOf(c.adapterProcess), 10000, 'adapter exit'), 0);
    for (const pid of [job.pid, ...ranks]) assert.ok(isRunning(pid), `process ${pid} runs on`);
    assertClean(assert, c);
  } finally {
    c.stopAdapter();
    for (const pid of childrenOf(job.pid)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    job.kill('SIGKILL');
  }
});

// ---- a rank on another machine ---------------------------------------------------------------------
// The other machine is a network namespace joined to this one by a veth pair: its processes reach
// the adapter only over the network (10.203.0.1), and the adapter cannot see their sockets.
const NS = 'strata-node2';
function makeNode() {
  const run = (args) => spawnSync(args[0], args.slice(1), { encoding: 'utf8' });
  run(['ip', 'netns', 'del', NS]);
  run(['ip', 'link', 'del', 'strata-n1']);
  const steps = [['ip', 'netns', 'add', NS], ['ip', 'link', 'add', 'strata-n1', 'type', 'veth', 'peer', 'name', 'strata-n2'],
    ['ip', 'link', 'set', 'strata-n2', 'netns', NS], ['ip', 'addr', 'add', '10.203.0.1/24', 'dev', 'strata-n1'],
    ['ip', 'link', 'set', 'strata-n1', 'up'], ['ip', 'netns', 'exec', NS, 'ip', 'addr', 'add', '10.203.0.2/24', 'dev', 'strata-n2'],
    ['ip', 'netns', 'exec', NS, 'ip', 'link', 'set', 'strata-n2', 'up'], ['ip', 'netns', 'exec', NS, 'ip', 'link', 'set', 'lo', 'up']];
  for (const s of steps) {
    const r = run(s);
    if (r.status !== 0) return `cannot make a second network node (${s.join(' ')}: ${(r.stderr || r.error || '').toString().trim()})`;
  }
  return false;
}
function dropNode() {
  spawnSync('ip', ['netns', 'del', NS]);
  spawnSync('ip', ['link', 'del', 'strata-n1']);
}

// Breakpoints cleared, every stopped rank continued: the session ends with ranks 0 and 1 done.
async function clearAndFinish(c, hit, steps) {
  await c.setBreakpointsRequest({ source: { path: JOB }, breakpoints: [] });
  const terminated = c.waitForEvent('terminated', 60000);
  for (const s of hit) await c.continueRequest({ threadId: s.threadId });
  await terminated;
  const out = c.output('stdout') + c.output('stderr');
  assert.match(out, new RegExp(`rank 0 done after ${steps} steps`));
  assert.match(out, new RegExp(`rank 1 done after ${steps} steps`));
  assertClean(assert, c);
}

test('ranksAddress: a rank on another network node dials in with the launch token (one without it is refused); both ranks stop, with thread ids that cannot meet', { skip: PYTHONS.length === 0 ? 'no CPython with the agent' : false }, async (t) => {
  const why = makeNode();
  if (why) return t.skip(why);
  const c = await startStdio();
  const py = PYTHONS[0];
  try {
    const work = jobLine('work_line');
    await launchJob(c, {
      ranksAddress: '10.203.0.1', stopAll: false, program: '/bin/sh',
      args: ['-c', `RANK=0 ${py} ${JOB} --rank 0 --steps 30 & RANK=1 ip netns exec ${NS} ${py} ${JOB} --rank 1 --steps 30 & wait`],
    }, [work], JOB);
    await waitUntil(() => stops(c).filter((s) => s.reason === 'breakpoint').length >= 2, 60000, 'both ranks at the breakpoint');
    const hit = stops(c).filter((s) => s.reason === 'breakpoint');
    const threads = await threadsByName(c);
    const name = (s) => threads.find((x) => x.id === s.threadId)?.name;
    assert.deepEqual(hit.map(name).sort(), ['rank 0 / MainThread', 'rank 1 / MainThread']);
    const remote = hit.find((s) => name(s) === 'rank 1 / MainThread');
    assert.ok(remote.threadId >= 2 ** 30, `the remote rank's thread id ${remote.threadId} is its own`);
    for (const s of hit) {
      const [frame] = await topFrame(c, s.threadId);
      assert.deepEqual([frame.name, frame.line], ['work', work]);
      assert.equal((await localsOf(c, frame.id)).rank, name(s).slice(5, 6));
    }
    // A peer without the token: refused before a request is read; the session goes on.
    const port = /STRATA_RANKS=10\.203\.0\.1:(\d+)/.exec(fs.readFileSync(`/proc/${c.eventsNamed('process')[0].body.systemProcessId}/environ`, 'latin1'))[1];
    const refused = await new Promise((resolve) => {
      const sock = net.connect(Number(port), '10.203.0.1', () => sock.write('STRATA-TOKEN wrong\r\nContent-Length: 2\r\n\r\n{}'));
      let data = '';
      sock.on('data', (d) => { data += d; });
      sock.on('close', () => resolve(data));
      sock.on('error', () => resolve(data));
    });
    assert.equal(refused, '');
    await clearAndFinish(c, hit, 30);
  } finally {
    await c.stop().catch(() => {});
    dropNode();
  }
});

test('ranksAddress on IPv6 (::1): the ranks dial [::1]:PORT, are found on this machine through /proc/net/tcp6, and stop', { skip: PYTHONS.length === 0 ? 'no CPython with the agent' : false }, async () => {
  const c = await startStdio();
  const py = PYTHONS[0];
  try {
    const work = jobLine('work_line');
    await launchJob(c, {
      ranksAddress: '::1', stopAll: false, program: '/bin/sh',
      args: ['-c', `RANK=0 ${py} ${JOB} --rank 0 --steps 20 & RANK=1 ${py} ${JOB} --rank 1 --steps 20 & wait`],
    }, [work], JOB);
    await waitUntil(() => stops(c).filter((s) => s.reason === 'breakpoint').length >= 2, 60000, 'both ranks at the breakpoint');
    const environ = fs.readFileSync(`/proc/${c.eventsNamed('process')[0].body.systemProcessId}/environ`, 'latin1');
    assert.match(environ, /STRATA_RANKS=\[::1\]:\d+/);
    const hit = stops(c).filter((s) => s.reason === 'breakpoint');
    const threads = await threadsByName(c);
    const name = (s) => threads.find((x) => x.id === s.threadId)?.name;
    assert.deepEqual(hit.map(name).sort(), ['rank 0 / MainThread', 'rank 1 / MainThread']);
    // Both are this machine's processes: their thread ids are their Linux tids.
    for (const s of hit) assert.ok(s.threadId < 2 ** 30, `thread id ${s.threadId}`);
    await clearAndFinish(c, hit, 20);
  } finally {
    await c.stop().catch(() => {});
  }
});

test('attach {nodes}: the ranks on another node through the strata-dap --listen there (with its token), beside this machine\'s, in one session', { skip: PYTHONS.length === 0 ? 'no CPython with the agent' : false }, async (t) => {
  const why = makeNode();
  if (why) return t.skip(why);
  const py = PYTHONS[0];
  const token = 'node2-' + Date.now();
  const remoteDap = spawn('ip', ['netns', 'exec', NS, ADAPTER, '--listen', '10.203.0.2:0', '--token', token],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  const local = spawn(py, [JOB, '--ranks', '2'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const remote = spawn('ip', ['netns', 'exec', NS, py, JOB, '--ranks', '2', '--first-rank', '2'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let localOut = '', remoteOut = '', dapOut = '';
  local.stdout.on('data', (d) => { localOut += d; });
  remote.stdout.on('data', (d) => { remoteOut += d; });
  remoteDap.stdout.on('data', (d) => { dapOut += d; });
  const c = await startStdio();
  try {
    await waitUntil(() => /listening on .*:(\d+)/.test(dapOut), 20000, 'the node\'s strata-dap listening');
    const port = Number(/listening on .*:(\d+)/.exec(dapOut)[1]);
    await waitUntil(() => (localOut.match(/ready/g) ?? []).length === 2 && (remoteOut.match(/ready/g) ?? []).length === 2, 20000, 'the ranks ready');
    await c.initializeRequest(INIT);
    // Without the token the node's adapter refuses: the attach says so.
    const e = await startStdio();
    try {
      await e.initializeRequest(INIT);
      const refused = await e.attachRequest({ nodes: [{ host: '10.203.0.2', port, token: 'wrong', processTree: remote.pid }] }).catch((x) => x);
      assert.match(String(refused.message), /node 10\.203\.0\.2/);
    } finally {
      await e.stop().catch(() => {});
    }
    await c.attachRequest({ processTree: local.pid, stopAll: false,
      nodes: [{ host: '10.203.0.2', port, token, processTree: remote.pid }] });
    const work = jobLine('work_line');
    await c.setBreakpointsRequest({ source: { path: JOB }, breakpoints: [{ line: work }] });
    await c.configurationDoneRequest();
    await waitUntil(() => stops(c).filter((s) => s.reason === 'breakpoint').length >= 4, 60000, 'four ranks at the breakpoint');
    const threads = await threadsByName(c);
    const hit = stops(c).filter((s) => s.reason === 'breakpoint');
    const name = (s) => threads.find((x) => x.id === s.threadId)?.name;
    assert.deepEqual(hit.map(name).sort(), [0, 1, 2, 3].map((r) => `rank ${r} / MainThread`));
    for (const s of hit) {
      const [frame] = await topFrame(c, s.threadId);
      assert.deepEqual([frame.name, frame.line], ['work', work]);
      const rank = name(s).slice(5, 6);
      assert.equal((await localsOf(c, frame.id)).rank, rank);
      if (rank >= '2') assert.ok(s.threadId >= 2 ** 30, `rank ${rank} on the other node has a thread id of its own`);
    }
    await c.setBreakpointsRequest({ source: { path: JOB }, breakpoints: [] });
    for (const s of hit) await c.continueRequest({ threadId: s.threadId });
    await c.disconnectRequest({ terminateDebuggee: false });
    assert.equal(await withTimeout(exitOf(c.adapterProcess), 10000, 'adapter exit'), 0);
    const [l0, r0] = [localOut.length, remoteOut.length];
    await waitUntil(() => /step/.test(localOut.slice(l0)) && /step/.test(remoteOut.slice(r0)), 20000, 'both jobs running on');
    assert.ok(isRunning(remoteDap.pid), 'the node\'s strata-dap serves on');
    assertClean(assert, c);
  } finally {
    c.stopAdapter();
    for (const job of [local, remote]) {
      for (const pid of childrenOf(job.pid)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
      job.kill('SIGKILL');
    }
    remoteDap.kill('SIGKILL');
    dropNode();
  }
});
