// Python execution control through strata-dap, on every interpreter in STRATA_PYTHONS:
// exception filters with type lists and exceptionInfo, stepIn and justMyCode, generators and
// coroutines, breakpoints in every kind of code, hit conditions and condition errors, 100k
// log-point lines, pause of sleeping threads, all-stop and singleThread, thread events, and
// breakpoints set before launch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { assertClean, startStdio, waitUntil, sleep, forEachPython } from './lib/harness.mjs';
import { lineOf, pyTarget, launchAndStop, topFrame, locals, continueTo } from './lib/python.mjs';

async function evalIn(c, frameId, expression, context = 'watch') {
  return (await c.evaluateRequest({ expression, frameId, context })).body.result;
}

async function step(c, kind, threadId, extra = {}) {
  const s = c.waitForEvent('stopped', 30000);
  await c.send(kind, { threadId, ...extra });
  const ev = await s;
  assert.equal(ev.body.reason, 'step');
  return topFrame(c, ev.body.threadId);
}

forEachPython((py) => {
  const v = path.basename(py);

  test(`${v}: exception filters raised (type list), userUnhandled and uncaught; exceptionInfo`, async () => {
    const program = pyTarget('exc.py');
    const { c, stopped } = await launchAndStop(py, program, {
      launch: { args: ['raise'] },
      exceptions: { filters: [], filterOptions: [{ filterId: 'raised', condition: 'ValueError, KeyError' },
                                                  { filterId: 'userUnhandled' }, { filterId: 'uncaught' }] },
    });
    const seen = [];
    let ev = stopped;
    for (;;) {
      assert.equal(ev.body.reason, 'exception');
      const f = await topFrame(c, ev.body.threadId);
      const info = await c.send('exceptionInfo', { threadId: ev.body.threadId });
      seen.push([info.body.exceptionId, info.body.breakMode, f.line]);
      if (info.body.breakMode === 'unhandled') {
        assert.equal(info.body.description, 'bad 3');
        const trace = info.body.details.stackTrace;
        assert.match(trace, /^Traceback \(most recent call last\):/);
        assert.equal(trace.split('in fail').length - 1, 4);
        assert.doesNotMatch(trace, /strata/);
        assert.match(trace.trimEnd(), /RuntimeError: bad 3$/);
        assert.equal((await locals(c, f.id)).x.value, '3');
        break;
      }
      ev = await continueTo(c, ev.body.threadId);
    }
    assert.deepEqual(seen, [
      ['KeyError', 'always', lineOf(program, 'raise_caught')],
      ['ValueError', 'always', lineOf(program, 'raise_value')],
      ['AttributeError', 'userUnhandled', lineOf(program, 'user_unhandled')],
      ['RuntimeError', 'unhandled', lineOf(program, 'uncaught')],
    ]);
    const exited = c.waitForEvent('exited', 30000);
    await c.continueRequest({ threadId: ev.body.threadId });
    assert.equal((await exited).body.exitCode, 1);
    await waitUntil(() => /RuntimeError: bad 3/.test(c.output('stderr')), 10000, 'the traceback');
    await c.disconnectRequest();
    assertClean(assert, c);
  });

  test(`${v}: stepIn stays in user code (justMyCode) and enters generators and coroutines`, async () => {
    const program = pyTarget('features.py');
    const { c, stopped } = await launchAndStop(py, program, { breakpoints: { [program]: [{ line: lineOf(program, 'call_gen') }] } });
    const tid = stopped.body.threadId;
    await c.setBreakpointsRequest({ source: { path: program }, breakpoints: [] });
    let f = await step(c, 'stepIn', tid);
    assert.deepEqual([f.name, f.line], ['gen', lineOf(program, 'gen_first')]);
    f = await step(c, 'next', tid);
    assert.deepEqual([f.name, f.line], ['gen', lineOf(program, 'generator')]);
    await c.setBreakpointsRequest({ source: { path: program }, breakpoints: [{ line: lineOf(program, 'call_coro') }] });
    await continueTo(c, tid);
    await c.setBreakpointsRequest({ source: { path: program }, breakpoints: [] });
    // asyncio.run is the standard library: stepping in goes through it to the coroutine.
    f = await step(c, 'stepIn', tid);
    assert.deepEqual([f.name, f.line], ['coro', lineOf(program, 'coro_first')]);
    const st = await c.stackTraceRequest({ threadId: tid });
    assert.ok(st.body.stackFrames.some((x) => /asyncio/.test(x.source?.path ?? '')), 'library frames are still shown');
    f = await step(c, 'next', tid);
    assert.deepEqual([f.name, f.line], ['coro', lineOf(program, 'coroutine')]);
    await c.disconnectRequest({ terminateDebuggee: true });
    assertClean(assert, c);

    // justMyCode: false steps into the standard library; python may carry flags.
    const other = await launchAndStop(undefined, program, {
      launch: { python: [py, '-X', 'utf8'], justMyCode: false },
      breakpoints: { [program]: [{ line: lineOf(program, 'call_coro') }] },
    });
    const t2 = other.stopped.body.threadId;
    f = await topFrame(other.c, t2);
    assert.equal(await evalIn(other.c, f.id, "__import__('sys').flags.utf8_mode"), '1');
    f = await step(other.c, 'stepIn', t2);
    assert.equal(f.name, 'run');
    assert.match(f.source.path, /asyncio[/\\]runners\.py$/);
    await other.c.disconnectRequest({ terminateDebuggee: true });
    assertClean(assert, other.c);
  });

  test(`${v}: breakpoints in class bodies, nested functions, lambdas, comprehensions, generators, coroutines and a module imported later; function breakpoints`, async () => {
    const program = pyTarget('features.py');
    const late = pyTarget('late_module.py');
    const names = ['nested', 'lambda', 'class_body', 'comprehension', 'method', 'generator', 'coroutine'];
    const { c, stopped } = await launchAndStop(py, program, {
      breakpoints: { [program]: names.map((n) => ({ line: lineOf(program, n) })), [late]: [{ line: lineOf(late, 'late') }] },
    });
    const byLine = Object.fromEntries(names.map((n) => [lineOf(program, n), n]));
    const order = [];
    let ev = stopped;
    for (;;) {
      assert.equal(ev.body.reason, 'breakpoint');
      const f = await topFrame(c, ev.body.threadId);
      const name = f.source.path === late ? 'late' : byLine[f.line];
      if (order[order.length - 1] !== name) order.push(name);  // a comprehension stops per item
      if (name === 'late') {
        assert.equal((await locals(c, f.id)).x.value, '7');
        break;
      }
      ev = await continueTo(c, ev.body.threadId);
    }
    assert.deepEqual(order, ['class_body', 'nested', 'lambda', 'comprehension', 'method', 'generator', 'coroutine', 'late']);
    await c.disconnectRequest({ terminateDebuggee: true });
    assertClean(assert, c);

    // Function breakpoints by plain, Class.method and module.function names, with a condition.
    const f2 = await startStdio();
    await f2.initializeRequest();
    await f2.launchRequest({ program, python: py });
    const fb = await f2.send('setFunctionBreakpoints', { breakpoints: [
      { name: 'outer' }, { name: 'Shape.area' }, { name: 'late_module.later', condition: 'x == 7' }, { name: 'not a name' }] });
    assert.deepEqual(fb.body.breakpoints.map((b) => b.verified), [true, true, true, false]);
    let s = f2.waitForEvent('stopped', 30000);
    await f2.configurationDoneRequest();
    const hit = [];
    for (let i = 0; i < 3; i++) {
      const e = await s;
      assert.equal(e.body.reason, 'function breakpoint');
      assert.deepEqual(e.body.hitBreakpointIds, [fb.body.breakpoints[i].id]);
      hit.push((await topFrame(f2, e.body.threadId)).name);
      s = f2.waitForEvent('stopped', 30000);
      if (i < 2) await f2.continueRequest({ threadId: e.body.threadId });
    }
    s.catch(() => {});
    assert.deepEqual(hit, ['outer', 'Shape.area', 'later']);
    await f2.disconnectRequest({ terminateDebuggee: true });
    assertClean(assert, f2);
  });

  test(`${v}: hit conditions, a condition that raises, syntax errors in conditions and log messages`, async () => {
    const program = pyTarget('hits.py');
    const c = await startStdio();
    await c.initializeRequest();
    await c.launchRequest({ program, python: py });
    const forms = { h_count: '5', h_eq: '==3', h_ge: '>=8', h_gt: '>8', h_mod: '%4' };
    const specs = [...Object.entries(forms).map(([k, hit]) => ({ line: lineOf(program, k), hitCondition: hit })),
      { line: lineOf(program, 'cond_raises'), condition: 'x == 5 and undefined_name > 1' },
      { line: lineOf(program, 'cond_syntax'), condition: 'x ==' }];
    const set = await c.setBreakpointsRequest({ source: { path: program }, breakpoints: specs });
    assert.deepEqual(set.body.breakpoints.map((b) => b.verified), [true, true, true, true, true, true, false]);
    assert.match(set.body.breakpoints[6].message, /condition/);
    const loop = pyTarget('loop.py');
    const bad = await c.setBreakpointsRequest({ source: { path: loop }, breakpoints: [
      { line: lineOf(loop, 'helper_body'), hitCondition: '>=x' },
      { line: lineOf(loop, 'loop_body'), logMessage: 'v={i +}' },
      { line: lineOf(loop, 'comment') }, { line: 999 }] });
    assert.deepEqual(bad.body.breakpoints.map((b) => b.verified), [false, false, true, false]);
    assert.match(bad.body.breakpoints[0].message, /hit condition/);
    assert.match(bad.body.breakpoints[1].message, /log message/);
    // A line without code moves to the next one that has some; past the end, it cannot.
    assert.equal(bad.body.breakpoints[2].line, lineOf(loop, 'after_loop'));
    assert.match(bad.body.breakpoints[3].message, /no code/);
    let s = c.waitForEvent('stopped', 30000);
    await c.configurationDoneRequest();
    const lineName = Object.fromEntries(Object.keys(forms).concat(['cond_raises']).map((k) => [lineOf(program, k), k]));
    const seen = Object.fromEntries(Object.keys(lineName).map((l) => [lineName[l], []]));
    const term = c.waitForEvent('terminated', 60000);
    let done = false;
    term.then(() => { done = true; });
    while (!done) {
      const ev = await Promise.race([s, term]);
      if (done || ev.event !== 'stopped') break;
      const f = await topFrame(c, ev.body.threadId);
      seen[lineName[f.line]].push(Number((await locals(c, f.id)).x.value));
      s = c.waitForEvent('stopped', 30000);
      await c.continueRequest({ threadId: ev.body.threadId });
    }
    s.catch(() => {});  // the wait armed before the end never resolves
    assert.deepEqual(seen, { h_count: [4], h_eq: [2], h_ge: [7, 8, 9], h_gt: [8, 9], h_mod: [3, 7], cond_raises: [5] });
    assert.match(c.output('console'), /Breakpoint condition 'x == 5 and undefined_name > 1' raised NameError/);
    assert.match(c.output('stdout'), /hits done\n/);
    await c.disconnectRequest();
    assertClean(assert, c);
  });

  test(`${v}: 100k log-point lines, every one delivered in order, the program exiting right after`, async () => {
    const program = pyTarget('logs.py');
    const n = 100000;
    const { c } = await launchAndStop(py, program, {
      launch: { args: [String(n)] }, expectStop: false,
      breakpoints: { [program]: [{ line: lineOf(program, 'hot'), logMessage: 'i={i} acc={acc}' }] },
    });
    await c.waitForEvent('terminated', 120000);
    const lines = c.output('console').split('\n').filter((l) => l.startsWith('i='));
    assert.equal(lines.length, n);
    for (let i = 0, acc = 0; i < n; acc += i, i++) if (lines[i] !== `i=${i} acc=${acc}`) assert.fail(`line ${i}: ${lines[i]}`);
    assert.equal(c.output('stdout'), `done ${(n * (n - 1)) / 2}\n`);
    assert.equal(c.eventsNamed('stopped').length, 0);
    await c.disconnectRequest();
    assertClean(assert, c);
  });

  test(`${v}: all-stop and singleThread; pause with a thread in time.sleep; thread events`, async () => {
    const program = pyTarget('threads_busy.py');
    const c = await startStdio();
    await c.initializeRequest();
    await c.launchRequest({ program, python: py });
    await c.configurationDoneRequest();
    await waitUntil(() => /ready\n/.test(c.output('stdout')), 20000, 'the threads to start');
    const threads = Object.fromEntries((await c.threadsRequest()).body.threads.map((t) => [t.name, t.id]));
    assert.ok(threads['busy-worker'] && threads['sleepy-worker'] && threads.MainThread, JSON.stringify(threads));
    assert.ok(!Object.keys(threads).some((n) => n.startsWith('strata')));
    await waitUntil(() => c.eventsNamed('thread').length >= 2, 5000, 'thread started events');
    const started = c.eventsNamed('thread').filter((e) => e.body.reason === 'started').map((e) => e.body.threadId);
    assert.ok(started.includes(threads['busy-worker']) && started.includes(threads['sleepy-worker']), JSON.stringify(started));

    // Pause: a thread that runs Python stops at once, one in time.sleep when it wakes; stacks
    // of every thread are there meanwhile.
    let s = c.waitForEvent('stopped', 20000);
    await c.pauseRequest({ threadId: threads['sleepy-worker'] });
    let ev = await s;
    assert.equal(ev.body.reason, 'pause');
    assert.equal(ev.body.allThreadsStopped, true);
    for (const name of ['busy-worker', 'sleepy-worker', 'MainThread']) {
      const st = await c.stackTraceRequest({ threadId: threads[name] });
      assert.ok(st.body.stackFrames.length > 0, name);
    }
    assert.equal((await topFrame(c, threads['sleepy-worker'])).name, 'sleeper');
    // All-stop: the busy worker parks at its next line (as soon as it gets the CPU) and its
    // counter stands still from then on.
    let busy = await topFrame(c, threads['busy-worker']);
    assert.equal(busy.line, lineOf(program, 'busy'));
    let n1;
    await waitUntil(async () => {
      const a = await evalIn(c, busy.id, 'n');
      await sleep(200);
      n1 = await evalIn(c, busy.id, 'n');
      return a === n1;
    }, 10000, 'the busy worker to park');

    // singleThread: only the main thread runs to its breakpoint; the busy worker stays parked.
    await c.setBreakpointsRequest({ source: { path: program }, breakpoints: [{ line: lineOf(program, 'main_wait') }] });
    s = c.waitForEvent('stopped', 20000);
    const cont = await c.continueRequest({ threadId: threads.MainThread, singleThread: true });
    assert.equal(cont.body.allThreadsContinued, false);
    ev = await s;
    assert.equal(ev.body.threadId, threads.MainThread);
    busy = await topFrame(c, threads['busy-worker']);
    assert.equal(await evalIn(c, busy.id, 'n'), n1, 'singleThread: the busy worker stayed parked');
    await c.setBreakpointsRequest({ source: { path: program }, breakpoints: [] });
    const f = await topFrame(c, threads.MainThread);
    await c.evaluateRequest({ expression: "globals().__setitem__('stop', True)", frameId: f.id, context: 'repl' });
    const term = c.waitForEvent('terminated', 30000);
    const cont2 = await c.continueRequest({ threadId: threads.MainThread });
    assert.notEqual(cont2.body.allThreadsContinued, false);
    await term;
    const exited = c.eventsNamed('thread').filter((e) => e.body.reason === 'exited').map((e) => e.body.threadId);
    assert.ok(exited.includes(threads['busy-worker']) && exited.includes(threads['sleepy-worker']), JSON.stringify(exited));
    await c.disconnectRequest();
    assertClean(assert, c);
  });

  test(`${v}: pause while the only thread sleeps in C: its stack shows meanwhile, it stops when it wakes`, async () => {
    const program = pyTarget('sleeper.py');
    const c = await startStdio();
    await c.initializeRequest();
    await c.launchRequest({ program, python: py });
    await c.configurationDoneRequest();
    await waitUntil(() => /ready\n/.test(c.output('stdout')), 20000, 'the program to start');
    const main = (await c.threadsRequest()).body.threads.find((t) => t.name === 'MainThread').id;
    const s = c.waitForEvent('stopped', 10000);
    await c.pauseRequest({ threadId: main });
    const meanwhile = await c.stackTraceRequest({ threadId: main });
    const threads = await c.threadsRequest();
    // Still asleep (nearly always: it sleeps 1.5 s at a time), the stack is the live one
    // inside time.sleep; had it just woken, it is the stopped one.
    const top = meanwhile.body.stackFrames[0];
    assert.equal(top.name, '<module>');
    assert.ok([lineOf(program, 'sleep'), lineOf(program, 'after_sleep')].includes(top.line), `line ${top.line}`);
    assert.ok(threads.body.threads.some((t) => t.id === main));
    const ev = await s;
    assert.equal(ev.body.reason, 'pause');
    assert.equal(ev.body.threadId, main);
    const f = await topFrame(c, main);
    assert.equal(f.line, lineOf(program, 'after_sleep'));
    await c.evaluateRequest({ expression: 'n = 99', frameId: f.id, context: 'repl' });
    const term = c.waitForEvent('terminated', 30000);
    await c.continueRequest({ threadId: main });
    await term;
    assert.match(c.output('stdout'), /slept 100\n/);
    await c.disconnectRequest();
    assertClean(assert, c);
  });

  test(`${v}: breakpoints set before launch are kept and placed, under the ids first given`, async () => {
    const demo = pyTarget('session_demo.py');
    const c = await startStdio();
    await c.initializeRequest();
    const early = await c.setBreakpointsRequest({ source: { path: demo }, breakpoints: [{ line: lineOf(demo, 'compute_call') }] });
    const b = early.body.breakpoints[0];
    assert.equal(b.verified, false);
    assert.equal(b.reason, 'pending');
    assert.ok(b.id > 0);
    const fn = await c.send('setFunctionBreakpoints', { breakpoints: [{ name: 'depth', condition: 'n == 0' }] });
    const changed = [];
    c.on('breakpoint', (e) => changed.push(e.body));
    await c.launchRequest({ program: demo, python: py });
    let s = c.waitForEvent('stopped', 30000);
    await c.configurationDoneRequest();
    let ev = await s;
    assert.equal(ev.body.reason, 'breakpoint');
    assert.deepEqual(ev.body.hitBreakpointIds, [b.id]);
    assert.equal((await topFrame(c, ev.body.threadId)).line, lineOf(demo, 'compute_call'));
    const placed = changed.find((x) => x.breakpoint.id === b.id);
    assert.equal(placed.reason, 'changed');
    assert.equal(placed.breakpoint.verified, true);
    assert.equal(placed.breakpoint.line, lineOf(demo, 'compute_call'));
    assert.ok(changed.some((x) => x.breakpoint.id === fn.body.breakpoints[0].id && x.breakpoint.verified));
    ev = await continueTo(c, ev.body.threadId);
    assert.equal(ev.body.reason, 'function breakpoint');
    const f = await topFrame(c, ev.body.threadId);
    assert.equal(f.name, 'depth');
    assert.equal((await locals(c, f.id)).n.value, '0');
    await c.disconnectRequest({ terminateDebuggee: true });
    assertClean(assert, c);
  });
}, { tracing: true });
