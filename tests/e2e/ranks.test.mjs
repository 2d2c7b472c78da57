// Every rank of a distributed job in one debug session (launch {"ranks": true}): the 4-rank
// training example (examples/distributed/train_ddp.py, gloo on CPU, Debian's torch 1.13 on its
// Python 3.11) started by torch.multiprocessing.spawn and by mpirun; breakpoints in every rank,
// threads named per rank, each rank's own values, stop-all and stop-one, rankFilter, and the
// DataLoader workers of a rank offered as child sessions (startDebugging).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { REPO, StrataClient, startStdio, waitUntil, freePort, sleep, isRunning, assertClean, forEachAttachPython, PYTHONS, withTimeout, exitOf, ADAPTER } from './lib/harness.mjs';
import { PYTHON, TRAIN, MPI_ENV, skip, whyNoMpi, markerLine, INIT, launchJob, spawnLaunch, mpiLaunch, stops, threadsByName, topFrame, localsOf, finish } from './lib/ranks.mjs';

// Every node of a parallelStacks tree whose label starts with `prefix`.
function nodesNamed(node, prefix, out = []) {
  if ((node.label ?? '').startsWith(prefix)) out.push(node);
  for (const c of node.children ?? []) nodesNamed(c, prefix, out);
  return out;
}

test('spawn, stopAll false: the breakpoint in the training step stops every rank, each with its own values', { skip }, async () => {
  const c = await startStdio();
  try {
    const loss = markerLine('loss_line');
    const bps = await launchJob(c, spawnLaunch(await freePort(), [], { stopAll: false }), [loss]);
    assert.equal(bps.length, 1);
    await waitUntil(() => stops(c).filter((s) => s.reason === 'breakpoint').length >= 4, 90000, 'four breakpoint stops');
    const hit = stops(c).filter((s) => s.reason === 'breakpoint');
    assert.ok(hit.every((s) => s.allThreadsStopped === false), 'each rank stops alone');
    const threads = await threadsByName(c);
    const mains = threads.filter((t) => /^rank \d \/ MainThread$/.test(t.name));
    assert.deepEqual(mains.map((t) => t.name).sort(), [0, 1, 2, 3].map((r) => `rank ${r} / MainThread`));
    assert.ok(threads.some((t) => /^launcher \d+ \/ MainThread$/.test(t.name)), JSON.stringify(threads));
    assert.deepEqual(new Set(hit.map((s) => s.threadId)), new Set(mains.map((t) => t.id)));
    // Each rank's frame: its own rank, the same step; the other threads of a stopped rank answer too.
    for (const t of mains) {
      const [frame] = await topFrame(c, t.id);
      assert.equal(frame.name, 'train_step');
      assert.equal(frame.line, loss);
      const locals = await localsOf(c, frame.id);
      assert.equal(locals.rank, t.name.slice(5, 6));
      assert.equal(locals.step, '0');
      assert.equal(locals.world, '4');
    }
    // parallelStacks with no arguments: the session's own processes, every rank at the step.
    const own = (await c.send('parallelStacks', { pythonOnly: true })).body;
    const ranks = own.processes.filter((p) => p.rank !== undefined).map((p) => p.rank).sort();
    assert.deepEqual(ranks, [0, 1, 2, 3], JSON.stringify(own.processes));
    assert.equal(nodesNamed(own.tree, 'train_step ')[0].owners, 'ranks 0-3');
    const out = await finish(c, async () => {
      for (const t of mains) await c.continueRequest({ threadId: t.id });
    });
    assert.match(out, /job done/);
    assertClean(assert, c);
  } finally {
    await c.stop().catch(() => {});
  }
});

test('mpirun, stopAll (default): one rank at the breakpoint stops all four; continue runs the job to its end', { skip: whyNoMpi() }, async () => {
  const c = await startStdio();
  try {
    const loss = markerLine('loss_line');
    await launchJob(c, mpiLaunch(await freePort()), [loss]);
    const first = await c.waitForEvent('stopped', 90000);
    assert.equal(first.body.reason, 'breakpoint');
    assert.equal(first.body.allThreadsStopped, true);
    assert.match(first.body.description, /^rank \d: /);
    // The other ranks come to a stop too (paused, or at the breakpoint): wait for all four main
    // threads to stand still in the job's code.
    let threads = [];
    await waitUntil(async () => {
      threads = (await threadsByName(c)).filter((t) => /^rank \d \/ MainThread$/.test(t.name));
      return threads.length === 4;
    }, 30000, 'four ranks named by OMPI_COMM_WORLD_RANK');
    const where = async () => Promise.all(threads.map(async (t) => {
      const frames = await topFrame(c, t.id);
      return frames.map((f) => `${f.name}:${f.line}`).join(' < ');
    }));
    // A rank still in C (init_process_group's rendezvous, an all_reduce) is held where it is and
    // stops at its next Python line when the call returns: it may move once, then stands still.
    let before = await where();
    for (let tries = 0; ; ++tries) {
      await sleep(700);
      const now = await where();
      if (JSON.stringify(now) === JSON.stringify(before)) break;
      assert.ok(tries < 8, `the ranks kept moving while one is stopped:\n${before.join('\n')}\n--\n${now.join('\n')}`);
      before = now;
    }
    assert.ok(before.every((s) => s.includes('train_step') || s.includes('run:')), before.join('\n'));
    assert.ok(before.some((s) => s.startsWith(`train_step:${loss}`)), before.join('\n'));
    const out = await finish(c, () => c.continueRequest({ threadId: first.body.threadId }));
    assert.doesNotMatch(out, /without the debugger/);
    assertClean(assert, c);
  } finally {
    await c.stop().catch(() => {});
  }
});

test('rankFilter [1]: only rank 1 stops (the spawned ranks learn their rank late); the job still ends', { skip }, async () => {
  const c = await startStdio();
  try {
    const loss = markerLine('loss_line');
    await launchJob(c, spawnLaunch(await freePort(), [], { stopAll: false, rankFilter: [1] }), [loss]);
    const hit = await c.waitForEvent('stopped', 90000);
    await sleep(1500);
    assert.equal(stops(c).length, 1, JSON.stringify(stops(c)));
    assert.equal(hit.body.reason, 'breakpoint');
    const threads = await threadsByName(c);
    assert.equal(threads.find((t) => t.id === hit.body.threadId).name, 'rank 1 / MainThread');
    await finish(c, () => c.continueRequest({ threadId: hit.body.threadId }));
    assertClean(assert, c);
  } finally {
    await c.stop().catch(() => {});
  }
});

test('a DataLoader worker of a rank comes as a child session (startDebugging) and stops in __getitem__', { skip }, async () => {
  const c = await startStdio();
  const children = [];
  const getitem = markerLine('getitem_line');
  c.reverseHandler = async (request) => {
    assert.equal(request.command, 'startDebugging');
    assert.equal(request.arguments.request, 'attach');
    const config = request.arguments.configuration;
    const child = new StrataClient();
    children.push({ child, config });
    await child.start();
    await child.initializeRequest(INIT);
    await child.attachRequest(config);
    await child.setBreakpointsRequest({ source: { path: TRAIN }, breakpoints: [{ line: getitem }] });
    await child.configurationDoneRequest();
    return {};
  };
  try {
    await c.initializeRequest({ ...INIT, supportsStartDebuggingRequest: true });
    await c.launchRequest({ ranks: true, ...spawnLaunch(await freePort(), ['--loader-workers', '1']) });
    await c.setBreakpointsRequest({ source: { path: TRAIN }, breakpoints: [] });
    await c.configurationDoneRequest();
    await waitUntil(() => children.length === 4, 90000, 'a child session for each rank\'s worker');
    for (const { config } of children) {
      assert.match(config.name, /^process \d+ \(a child of rank \d\)$/);
      assert.equal(config.type, 'strata');
      assert.equal(typeof config.subProcessId, 'number');
    }
    // Each worker stops at the breakpoint its own session set; the rank that owns it waits.
    for (const { child, config } of children) {
      await waitUntil(() => child.eventsNamed('stopped').length > 0, 30000, `a stop in ${config.name}`);
      const [stop] = child.eventsNamed('stopped');
      assert.equal(stop.body.reason, 'breakpoint');
      const st = await child.stackTraceRequest({ threadId: stop.body.threadId, startFrame: 0, levels: 5 });
      assert.equal(st.body.stackFrames[0].name, 'RankData.__getitem__');
      assert.equal(st.body.stackFrames[0].line, getitem);
      const locals = await localsOf(child, st.body.stackFrames[0].id);
      assert.equal(locals.step, '0');
      assert.ok(isRunning(config.subProcessId));
      await child.setBreakpointsRequest({ source: { path: TRAIN }, breakpoints: [] });
      await child.continueRequest({ threadId: stop.body.threadId });
    }
    const terminated = c.waitForEvent('terminated', 120000);
    await terminated;
    assert.match(c.output('stdout') + c.output('stderr'), /job done/);
    assertClean(assert, c);
    for (const { child } of children) assertClean(assert, child);
  } finally {
    for (const { child } of children) await child.stop().catch(() => {});
    await c.stop().catch(() => {});
  }
});

test('a launcher that starts ranks as torchrun does (RANK, LOCAL_RANK, WORLD_SIZE set for each child): both ranks stop, named by rank, the launcher beside them', { skip }, async () => {
  const c = await startStdio();
  try {
    const loss = markerLine('loss_line');
    const port = String(await freePort());
    await launchJob(c, {
      program: path.join(REPO, 'tests/targets/python/torchrun_like.py'), python: PYTHON, stopAll: false,
      args: ['--nproc_per_node', '2', '--master_port', port, TRAIN, '--launched', '--steps', '3'],
    }, [loss]);
    await waitUntil(() => stops(c).filter((s) => s.reason === 'breakpoint').length >= 2, 90000, 'two breakpoint stops');
    const threads = await threadsByName(c);
    const hit = stops(c).filter((s) => s.reason === 'breakpoint');
    assert.deepEqual(hit.map((s) => threads.find((t) => t.id === s.threadId).name).sort(), ['rank 0 / MainThread', 'rank 1 / MainThread']);
    assert.ok(threads.some((t) => /^launcher \d+ \/ MainThread$/.test(t.name)), JSON.stringify(threads));
    const terminated = c.waitForEvent('terminated', 120000);
    await c.setBreakpointsRequest({ source: { path: TRAIN }, breakpoints: [] });
    for (const s of hit) await c.continueRequest({ threadId: s.threadId });
    await terminated;
    const done = [...(c.output('stdout') + c.output('stderr')).matchAll(/rank (\d) done: loss [\d.]+ weights (-?[\d.]+)/g)];
    assert.deepEqual(done.map((m) => m[1]).sort(), ['0', '1']);
    assertClean(assert, c);
  } finally {
    await c.stop().catch(() => {});
  }
});

test('bad ranks arguments are answered with why', async () => {
  const c = await startStdio();
  try {
    await c.initializeRequest(INIT);
    const e1 = await c.launchRequest({ program: TRAIN, rankFilter: [1] }).catch((e) => e);
    assert.match(String(e1.message), /rankFilter needs "ranks": true/);
    const e2 = await c.attachRequest({ processIds: [] }).catch((e) => e);
    assert.match(String(e2.message), /processIds is empty/);
    const e3 = await c.attachRequest({ processIds: [1], processTree: 1 }).catch((e) => e);
    assert.match(String(e3.message), /not both/);
  } finally {
    await c.stop().catch(() => {});
  }
  // Refused by the attach itself: one session each (a session attaches once).
  for (const [args, why] of [[{ processTree: 999999999 }, /no process 999999999/],
    [{ processIds: [process.pid] }, /does not run CPython/]]) {
    const s = await startStdio();
    try {
      await s.initializeRequest(INIT);
      const e = await s.attachRequest(args).catch((x) => x);
      assert.match(String(e.message), why);
      assertClean(assert, s);
    } finally {
      await s.stop().catch(() => {});
    }
  }
});
