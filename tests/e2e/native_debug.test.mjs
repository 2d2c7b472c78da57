// Native debugging through strata-dap (ptrace + DWARF): threads and all-stop, deep stacks,
// crashes, STL values, breakpoints of every kind, stepping, memory, disassembly, relative
// source paths, bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { assertClean, startStdio, withTimeout, exitOf, waitUntil, REPO, PYTHONS } from './lib/harness.mjs';
import {
  DEMO, OPT, INIT, demoSrc, optSrc, lineOf, launchNative, frames, scopeVars, continueTo, stepAndWait, NATIVE_SRC,
} from './lib/native.mjs';

const faultsSrc = path.join(NATIVE_SRC, 'native_faults.c');

// For a program started without a stop: its end may already have been received.
function ranOut(c) {
  return waitUntil(() => c.eventsNamed('terminated').length > 0, 30000, 'the end of the program');
}

async function runOut(c, timeout = 30000) {
  const term = c.waitForEvent('terminated', timeout);
  return term;
}

test('8 threads with names stop together at a breakpoint; thread events; the program ends normally', async () => {
  const line = lineOf(demoSrc, 'worker_line');
  const { c, stopped } = await launchNative(['threads'], { breakpoints: { [demoSrc]: [{ line }] } });
  assert.equal(stopped.body.reason, 'breakpoint');
  assert.equal(stopped.body.allThreadsStopped, true);
  const caps = c.eventsNamed('capabilities');
  assert.equal(caps.length, 1);
  assert.equal(caps[0].body.capabilities.supportsDataBreakpoints, true);
  assert.deepEqual(caps[0].body.capabilities.exceptionBreakpointFilters.map((f) => f.filter),
    ['SIGSEGV', 'SIGBUS', 'SIGFPE', 'SIGILL', 'SIGABRT', 'cuda']);
  const th = await c.threadsRequest();
  const names = th.body.threads.map((t) => t.name).sort();
  assert.equal(th.body.threads.length, 9);
  assert.deepEqual(names.filter((n) => n.startsWith('worker-')),
    ['worker-0', 'worker-1', 'worker-2', 'worker-3', 'worker-4', 'worker-5', 'worker-6', 'worker-7']);
  assert.ok(names.includes('native_demo'));
  // The thread that hit is one of the workers, stopped in worker() at the marked line.
  const st = await frames(c, stopped.body.threadId);
  assert.equal(st.stackFrames[0].name, 'worker');
  assert.equal(st.stackFrames[0].line, line);
  assert.equal(st.stackFrames[0].source.path, demoSrc);
  const started = c.eventsNamed('thread').filter((e) => e.body.reason === 'started');
  assert.ok(started.length >= 8, `thread started events: ${started.length}`);
  // Every other worker is stopped as well: each has a stack we can read.
  for (const t of th.body.threads) {
    const s = await frames(c, t.id, 0, 1);
    assert.ok(s.stackFrames.length === 1, `thread ${t.name} has a stack`);
  }
  // The other seven hits come one at a time; then the program ends.
  let hits = 1;
  for (; hits < 8; ++hits) {
    const s = await continueTo(c, stopped.body.threadId);
    assert.equal(s.body.reason, 'breakpoint');
  }
  assert.ok(c.eventsNamed('continued').length >= 7);
  const term = runOut(c);
  await c.continueRequest({ threadId: stopped.body.threadId });
  await term;
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 0);
  assert.match(c.output('stdout'), /total 280\n/);
  assert.ok(c.eventsNamed('thread').filter((e) => e.body.reason === 'exited').length >= 8);
  await c.disconnectRequest();
  assert.equal(await withTimeout(exitOf(c.adapterProcess), 10000, 'adapter exit'), 0);
  assertClean(assert, c);
});

test('1000-deep recursion: paged stack with totalFrames; frames without debug info are module+offset', async () => {
  const line = lineOf(demoSrc, 'depth_base');
  const { c, stopped } = await launchNative(['recurse'], { breakpoints: { [demoSrc]: [{ line, condition: 'n == 0' }] } });
  const tid = stopped.body.threadId;
  const first = await frames(c, tid, 0, 20);
  assert.equal(first.stackFrames.length, 20);
  assert.ok(first.totalFrames >= 1002, `totalFrames ${first.totalFrames}`);
  assert.equal(first.stackFrames[0].name, 'depth');
  assert.equal(first.stackFrames[0].line, line);
  assert.match(first.stackFrames[0].instructionPointerReference, /^0x[0-9a-f]+$/);
  const middle = await frames(c, tid, 500, 10);
  assert.equal(middle.stackFrames.length, 10);
  assert.ok(middle.stackFrames.every((f) => f.name === 'depth' && f.line === lineOf(demoSrc, 'depth_call')));
  const tail = await frames(c, tid, first.totalFrames - 5, 10);
  assert.equal(tail.stackFrames.length, 5);
  const mainFrame = tail.stackFrames.find((f) => f.name === 'main');
  assert.ok(mainFrame, JSON.stringify(tail.stackFrames));
  assert.equal(mainFrame.source.path, demoSrc);
  // _start has no debug info: module+offset, dimmed, no source.
  const start = tail.stackFrames.at(-1);
  assert.match(start.name, /^_start\+0x[0-9a-f]+ \(native_demo\+0x[0-9a-f]+\)$/);
  assert.equal(start.presentationHint, 'subtle');
  assert.equal(start.source, undefined);
  assert.match(start.instructionPointerReference, /^0x[0-9a-f]+$/);
  // Locals of a frame in the middle: its own n.
  const n500 = await scopeVars(c, middle.stackFrames[0].id);
  assert.equal(n500.byName.n.value, '500');
  const bad = await c.scopesRequest({ frameId: 987654 }).catch((e) => e);
  assert.match(String(bad.message), /unknown frameId 987654/);
  const badThread = await c.stackTraceRequest({ threadId: 1, levels: 1 }).catch((e) => e);
  assert.ok(badThread instanceof Error, 'a thread that does not exist is an error');
  await c.disconnectRequest({ terminateDebuggee: true });
  assertClean(assert, c);
});

test('SIGSEGV stops with exceptionInfo, stack and locals; continuing lets it die by the signal', async () => {
  const { c, stopped } = await launchNative(['crash']);
  assert.equal(stopped.body.reason, 'exception');
  assert.match(stopped.body.description, /^SIGSEGV: write to unmapped address 0x0$/);
  const tid = stopped.body.threadId;
  const info = await c.send('exceptionInfo', { threadId: tid });
  assert.equal(info.body.exceptionId, 'SIGSEGV');
  assert.equal(info.body.breakMode, 'always');
  assert.equal(info.body.description, `SIGSEGV: write to unmapped address 0x0 in crash at native_demo.cpp:${lineOf(demoSrc, 'crash_line')}, called from crash at native_demo.cpp:${lineOf(demoSrc, 'crash_recurse')}`);
  assert.match(info.body.details.message, /fault address 0x0/);
  const st = await frames(c, tid);
  assert.equal(st.stackFrames[0].name, 'crash');
  assert.equal(st.stackFrames[0].line, lineOf(demoSrc, 'crash_line'));
  assert.deepEqual(st.stackFrames.slice(0, 5).map((f) => f.name), ['crash', 'crash', 'crash', 'crash', 'main']);
  const locals = await scopeVars(c, st.stackFrames[0].id);
  assert.deepEqual(locals.list.map((v) => v.name), ['depthLeft', 'victim', 'nothing']);  // parameters first
  assert.equal(locals.byName.victim.value, '42');
  assert.equal(locals.byName.depthLeft.value, '0');
  assert.match(locals.byName.nothing.value, /^0x0\b|^\(nil\)|^0$/);
  const term = runOut(c);
  await c.continueRequest({ threadId: tid });
  await term;
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 139);
  assert.match(c.output('console'), /terminated by signal 11 \(SIGSEGV\)/);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('signals other than faults go to the program without a stop', async () => {
  const { c } = await launchNative(['signal'], { expectStop: false });
  // The program may be over before configurationDone's reply is read: look at what came.
  await ranOut(c);
  assert.equal(c.eventsNamed('stopped').length, 0);
  assert.match(c.output('stdout'), /handled 10\n/);
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 0);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('exception filters: without SIGSEGV the crash is not stopped; SIGABRT stops by default', async () => {
  const { c } = await launchNative(['crash'], { exceptions: { filters: ['SIGABRT'] }, expectStop: false });
  await ranOut(c);
  assert.equal(c.eventsNamed('stopped').length, 0);
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 139);
  const bad = await c.setExceptionBreakpointsRequest({ filters: ['raised'] }).catch((e) => e);
  assert.match(String(bad.message), /unknown exception filter 'raised' \(the native backend has 'SIGSEGV', 'SIGBUS', 'SIGFPE', 'SIGILL', 'SIGABRT' and 'cuda'\)/);
  await c.disconnectRequest();
  const { c: c2, stopped } = await launchNative(['abort']);
  assert.equal(stopped.body.reason, 'exception');
  const info = await c2.send('exceptionInfo', { threadId: stopped.body.threadId });
  assert.equal(info.body.exceptionId, 'SIGABRT');
  await c2.disconnectRequest({ terminateDebuggee: true });
  assertClean(assert, c);
  assertClean(assert, c2);
});

test('STL values, paging, pointers with memory references, evaluate, setVariable, memory, disassembly', async () => {
  const line = lineOf(demoSrc, 'stl_line');
  const { c, stopped } = await launchNative(['stl'], { breakpoints: { [demoSrc]: [{ line }] } });
  const tid = stopped.body.threadId;
  const top = (await frames(c, tid)).stackFrames[0];
  assert.equal(top.name, 'stl');
  const scopes = await c.scopesRequest({ frameId: top.id });
  assert.deepEqual(scopes.body.scopes.map((s) => s.name), ['Locals', 'Registers', 'Globals']);
  const v = (await scopeVars(c, top.id)).byName;
  assert.equal(v.text.value, '"hello strata"');
  assert.equal(v.numbers.indexedVariables, 5);
  const nums = await c.variablesRequest({ variablesReference: v.numbers.variablesReference, filter: 'indexed' });
  assert.deepEqual(nums.body.variables.map((x) => x.value), ['1', '2', '3', '4', '5']);
  assert.equal(v.big.indexedVariables, 100000);
  const page = await c.variablesRequest({ variablesReference: v.big.variablesReference, filter: 'indexed', start: 500, count: 3 });
  assert.deepEqual(page.body.variables.map((x) => [x.name, x.value]), [['[500]', '1000'], ['[501]', '1002'], ['[502]', '1004']]);
  // Without a count the answer is bounded and says so.
  const unpaged = await c.variablesRequest({ variablesReference: v.big.variablesReference, filter: 'indexed' });
  assert.ok(unpaged.body.variables.length <= 1001, `${unpaged.body.variables.length} variables`);
  assert.match(unpaged.body.variables.at(-1).value, /showing 1000 of 100000/);
  const ages = await c.variablesRequest({ variablesReference: v.ages.variablesReference, filter: 'indexed' });
  assert.deepEqual(ages.body.variables.map((x) => [x.name, x.value]), [['["ada"]', '36'], ['["linus"]', '54']]);
  const names = await c.variablesRequest({ variablesReference: v.names.variablesReference, filter: 'indexed' });
  assert.deepEqual(names.body.variables.map((x) => x.value).sort(), ['"one"', '"two"']);
  assert.match(v.owned.value, /^0x[0-9a-f]+$/);
  const owned = await c.variablesRequest({ variablesReference: v.owned.variablesReference });
  assert.equal(owned.body.variables[0].value, '{x=3, y=4}');
  assert.match(v.shared.value, /use_count=1/);
  assert.equal(v.maybe.value, '7');
  assert.equal(v.nothing.value, 'nullopt');
  assert.equal(v.pt.value, '{x=1, y=2}');
  assert.match(v.ptr.memoryReference, /^0x[0-9a-f]+$/);

  const ev = await c.evaluateRequest({ expression: 'pt.x + ptr->y * 10', frameId: top.id, context: 'watch' });
  assert.equal(ev.body.result, '21');
  // Without a frame: the stopped thread's top frame.
  assert.equal((await c.evaluateRequest({ expression: 'counter * 2', context: 'repl' })).body.result, '20');
  const hover = await c.evaluateRequest({ expression: 'numbers[2]', frameId: top.id, context: 'hover' });
  assert.equal(hover.body.result, '3');
  const badEval = await c.evaluateRequest({ expression: 'no_such_name + 1', frameId: top.id, context: 'repl' }).catch((e) => e);
  assert.match(String(badEval.message), /no_such_name/);

  // Memory: pt as bytes, written through writeMemory, seen by evaluate.
  const mem = await c.send('readMemory', { memoryReference: v.ptr.memoryReference, count: 8 });
  const bytes = Buffer.from(mem.body.data, 'base64');
  assert.deepEqual([bytes.readInt32LE(0), bytes.readInt32LE(4)], [1, 2]);
  const y = await c.send('readMemory', { memoryReference: v.ptr.memoryReference, offset: 4, count: 4 });
  assert.equal(y.body.address, '0x' + (BigInt(v.ptr.memoryReference) + 4n).toString(16));
  assert.equal(Buffer.from(y.body.data, 'base64').readInt32LE(0), 2);
  const five = Buffer.alloc(4);
  five.writeInt32LE(5);
  const wrote = await c.send('writeMemory', { memoryReference: v.ptr.memoryReference, data: five.toString('base64') });
  assert.equal(wrote.body.bytesWritten, 4);
  assert.equal((await c.evaluateRequest({ expression: 'pt.x', frameId: top.id, context: 'watch' })).body.result, '5');
  const unreadable = await c.send('readMemory', { memoryReference: '0x0', count: 16 });
  assert.equal(unreadable.body.unreadableBytes, 16);
  assert.equal(unreadable.body.data, '');

  // setVariable: a scalar the program then acts on (exit code 3), and a pointer.
  const loc = await c.scopesRequest({ frameId: top.id });
  const locRef = loc.body.scopes[0].variablesReference;
  const setCounter = await c.send('setVariable', { variablesReference: locRef, name: 'counter', value: '99' });
  assert.equal(setCounter.body.value, '99');
  const oldPtr = v.ptr.value.split(' ')[0];
  const setPtr = await c.send('setVariable', { variablesReference: locRef, name: 'ptr', value: '0' });
  assert.match(setPtr.body.value, /^0x0\b|^0$/);
  const back = await c.send('setVariable', { variablesReference: locRef, name: 'ptr', value: oldPtr });
  assert.equal(back.body.value.split(' ')[0], oldPtr);
  const badSet = await c.send('setVariable', { variablesReference: locRef, name: 'counter', value: 'abc' }).catch((e) => e);
  assert.ok(badSet instanceof Error);

  // Disassembly around the pc, with source lines; three instructions before it.
  const dis = await c.send('disassemble', { memoryReference: top.instructionPointerReference, instructionOffset: -3,
    instructionCount: 8, resolveSymbols: true });
  const ins = dis.body.instructions;
  assert.equal(ins.length, 8);
  assert.equal(ins[3].address, top.instructionPointerReference);
  assert.ok(ins.every((i, k) => k === 0 || BigInt(i.address) > BigInt(ins[k - 1].address)));
  assert.equal(ins[3].location.path, demoSrc);
  assert.equal(ins[3].line, line);
  assert.match(ins[3].symbol, /stl/);
  const regs = await scopeVars(c, top.id, 'Registers');
  assert.equal(BigInt(regs.byName.rip.value), BigInt(top.instructionPointerReference));

  const term = runOut(c);
  await c.setBreakpointsRequest({ source: { path: demoSrc }, breakpoints: [] });
  await c.continueRequest({ threadId: tid });
  await term;
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 3);
  assert.match(c.output('stdout'), /hello strata 100005 4 /);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('conditions, hit conditions, log points, moved lines and errors in them', async () => {
  const c = await startStdio();
  await c.initializeRequest(INIT);
  await c.launchRequest({ program: DEMO, args: ['loop'] });
  const r = await c.setBreakpointsRequest({ source: { path: demoSrc }, breakpoints: [
    { line: lineOf(demoSrc, 'loop_comment') },
    { line: lineOf(demoSrc, 'loop_body'), condition: 'i >= 7', hitCondition: '2' },
    { line: lineOf(demoSrc, 'square_body'), logMessage: 'square of {v}' },
    { line: lineOf(demoSrc, 'add_body'), condition: 'a +' },
    { line: lineOf(demoSrc, 'depth_base'), hitCondition: 'often' },
  ] });
  const [moved, cond, log, badCond, badHit] = r.body.breakpoints;
  assert.equal(moved.verified, true);
  assert.equal(moved.line, lineOf(demoSrc, 'loop_comment') + 1);
  assert.equal(cond.verified, true);
  assert.equal(log.verified, true);
  assert.equal(badCond.verified, false);
  assert.match(badCond.message, /condition 'a \+'/);
  assert.equal(badHit.verified, false);
  assert.match(badHit.message, /hit condition 'often'/);
  const first = c.waitForEvent('stopped', 30000);
  await c.configurationDoneRequest();
  const s1 = await first;
  assert.equal((await frames(c, s1.body.threadId)).stackFrames[0].line, moved.line);
  assert.deepEqual(s1.body.hitBreakpointIds, [moved.id]);
  const s2 = await continueTo(c, s1.body.threadId);
  assert.deepEqual(s2.body.hitBreakpointIds, [cond.id]);
  const top = (await frames(c, s2.body.threadId)).stackFrames[0];
  assert.equal((await scopeVars(c, top.id)).byName.i.value, '8');  // i=7 is hit 1, i=8 hit 2
  const term = runOut(c);
  await c.continueRequest({ threadId: s2.body.threadId });
  await term;
  const logged = c.output('console').split('\n').filter((l) => l.startsWith('square of'));
  assert.deepEqual(logged, Array.from({ length: 10 }, (_, i) => `square of ${i}`));
  assert.equal(c.eventsNamed('stopped').length, 2);
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 0);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('function and instruction breakpoints stop with their own reasons', async () => {
  const { c, stopped } = await launchNative(['loop'], { functions: [{ name: 'square', hitCondition: '3' }] });
  assert.equal(stopped.body.reason, 'function breakpoint');
  const st = await frames(c, stopped.body.threadId);
  assert.equal(st.stackFrames[0].name, 'square');
  assert.equal(st.stackFrames[0].line, lineOf(demoSrc, 'square_body'));
  assert.equal((await scopeVars(c, st.stackFrames[0].id)).byName.v.value, '2');
  const ret = st.stackFrames[1].instructionPointerReference;  // where square returns to in loop()
  const fb = await c.send('setFunctionBreakpoints', { breakpoints: [{ name: 'no_such_function' }] });
  assert.equal(fb.body.breakpoints[0].verified, false);
  const ib = await c.send('setInstructionBreakpoints', { breakpoints: [{ instructionReference: ret }, { instructionReference: 'nowhere' }] });
  assert.equal(ib.body.breakpoints[0].verified, true);
  assert.equal(ib.body.breakpoints[1].verified, false);
  assert.match(ib.body.breakpoints[1].message, /not a memory reference/);
  const s2 = await continueTo(c, stopped.body.threadId);
  assert.equal(s2.body.reason, 'instruction breakpoint');
  const st2 = await frames(c, s2.body.threadId);
  assert.equal(st2.stackFrames[0].instructionPointerReference, ret);
  assert.equal(st2.stackFrames[0].name, 'loop');
  await c.disconnectRequest({ terminateDebuggee: true });
  assertClean(assert, c);
});

test('stepping: stepIn, stepInTargets, stepOut, next over calls and recursion, instruction steps', async () => {
  const { c, stopped } = await launchNative(['steps'], { breakpoints: { [demoSrc]: [{ line: lineOf(demoSrc, 'steps_call') }] } });
  const tid = stopped.body.threadId;
  const at = async () => (await frames(c, tid, 0, 2)).stackFrames[0];
  let s = await stepAndWait(c, 'stepIn', { threadId: tid });
  assert.equal(s.body.reason, 'step');
  let f = await at();
  assert.equal(f.name, 'combine');
  assert.equal(f.line, lineOf(demoSrc, 'combine_call'));
  const targets = await c.send('stepInTargets', { frameId: f.id });
  assert.deepEqual(targets.body.targets.map((t) => t.label), ['square', 'square (call 2)', 'add']);
  const add = targets.body.targets.find((t) => t.label === 'add');
  await stepAndWait(c, 'stepIn', { threadId: tid, targetId: add.id });
  f = await at();
  assert.equal(f.name, 'add');
  assert.equal(f.line, lineOf(demoSrc, 'add_body'));
  const a = await scopeVars(c, f.id);
  assert.deepEqual([a.byName.a.value, a.byName.b.value], ['4', '9']);  // both squares ran
  await stepAndWait(c, 'stepOut', { threadId: tid });
  f = await at();
  assert.equal(f.name, 'combine');
  await stepAndWait(c, 'next', { threadId: tid });
  f = await at();
  assert.equal(f.line, lineOf(demoSrc, 'combine_return'));
  await stepAndWait(c, 'stepOut', { threadId: tid });
  f = await at();
  assert.equal(f.name, 'steps');
  await stepAndWait(c, 'next', { threadId: tid });
  f = await at();
  assert.equal(f.line, lineOf(demoSrc, 'steps_depth'));
  // next over a recursive call lands on the next line of this frame.
  await stepAndWait(c, 'next', { threadId: tid });
  f = await at();
  assert.equal(f.name, 'steps');
  assert.equal(f.line, lineOf(demoSrc, 'steps_print'));
  assert.equal((await scopeVars(c, f.id)).byName.d.value, '5');
  // One instruction: same line, the pc moves forward.
  const before = BigInt(f.instructionPointerReference);
  await stepAndWait(c, 'next', { threadId: tid, granularity: 'instruction' });
  f = await at();
  assert.ok(BigInt(f.instructionPointerReference) > before);
  assert.equal(f.line, lineOf(demoSrc, 'steps_print'));
  const bad = await c.send('next', { threadId: tid, granularity: 'word' }).catch((e) => e);
  assert.match(String(bad.message), /granularity/);
  const term = runOut(c);
  await c.continueRequest({ threadId: tid });
  await term;
  assert.match(c.output('stdout'), /steps 13 5\n/);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('-O2: inlined calls are frames of their own; optimized-out values say so', async () => {
  const line = lineOf(optSrc, 'mix_body');
  const inl = lineOf(optSrc, 'twice_body');
  const { c, stopped } = await launchNative(['3'], { program: OPT, breakpoints: { [optSrc]: [{ line: inl }] } });
  const inlined = (await frames(c, stopped.body.threadId)).stackFrames;
  assert.deepEqual(inlined.slice(0, 2).map((f) => [f.name, f.line]), [['twice [inlined]', inl], ['mix', lineOf(optSrc, 'mix_kept')]]);
  await c.setBreakpointsRequest({ source: { path: optSrc }, breakpoints: [{ line }] });
  const s2 = await continueTo(c, stopped.body.threadId);
  const f = (await frames(c, s2.body.threadId)).stackFrames[0];
  assert.equal(f.name, 'mix');
  const v = await scopeVars(c, f.id);
  assert.deepEqual(v.list.slice(0, 2).map((x) => x.name), ['a', 'b']);
  assert.ok(v.list.some((x) => /optimized out/.test(x.value)), JSON.stringify(v.list));
  await c.disconnectRequest({ terminateDebuggee: true });
  assertClean(assert, c);
});

// `gcc -g src/a.c` names the file relative to the build directory in the line table.
const cc = spawnSync('cc', ['--version']).status === 0;
test('a program built from a relative source path: breakpoints by absolute path bind, frames carry it',
  { skip: !cc && 'no C compiler (cc) to build the program with a relative path' }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-relative-'));
    const program = path.join(dir, 'faults');
    const relative = path.relative(REPO, faultsSrc);
    execFileSync('cc', ['-g', '-O0', '-o', program, relative], { cwd: REPO });
    try {
      const line = lineOf(faultsSrc, 'fpe_line');
      const { c, stopped } = await launchNative(['fpe'], { program, breakpoints: { [faultsSrc]: [{ line }] } });
      assert.equal(stopped.body.reason, 'breakpoint');
      const top = (await frames(c, stopped.body.threadId)).stackFrames[0];
      assert.deepEqual([top.name, top.line, top.source.path, top.presentationHint], ['fpe_fault', line, faultsSrc, undefined]);
      await c.disconnectRequest({ terminateDebuggee: true });
      assertClean(assert, c);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

test('a library built in a folder this machine lacks: frames give its source path, dimmed',
  { skip: !PYTHONS.length && 'no Python >= 3.12 in STRATA_PYTHONS (its _json.so is the library)' }, async () => {
    const { c, stopped } = await launchNative(['-c', 'import json; json.dumps([1, 2])'], {
      program: PYTHONS[0], functions: [{ name: 'encoder_listencode_list' }] });
    assert.equal(stopped.body.reason, 'function breakpoint');
    const top = (await frames(c, stopped.body.threadId)).stackFrames[0];
    assert.match(top.name, /^encoder_listencode_list( \[inlined\])?$/);  // inlined or not: how Python was built
    assert.equal(top.source.name, '_json.c');
    // pyenv builds in a temporary folder: the path is absolute, "./Modules" folded away.
    assert.match(top.source.path, /^\/.*\/Modules\/_json\.c$/);
    assert.ok(!top.source.path.includes('/./'), top.source.path);
    const here = fs.existsSync(top.source.path);
    assert.equal(top.source.presentationHint, here ? undefined : 'deemphasize');
    assert.equal(top.presentationHint, here ? undefined : 'subtle');
    await c.disconnectRequest({ terminateDebuggee: true });
    assertClean(assert, c);
  });

test('bad input gets clear errors: nonexistent pid, non-ELF and missing programs', async () => {
  const c = await startStdio();
  await c.initializeRequest(INIT);
  const r = await c.attachRequest({ processId: 4194000 }).catch((e) => e);
  assert.match(String(r.message), /no process with id 4194000 exists/);
  await c.disconnectRequest();
  const c2 = await startStdio();
  await c2.initializeRequest(INIT);
  const badPid = await c2.attachRequest({ processId: 'abc' }).catch((e) => e);
  assert.match(String(badPid.message), /arguments\.processId: expected a process id/);
  await c2.disconnectRequest();

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-native-'));
  const script = path.join(dir, 'script.sh');
  fs.writeFileSync(script, '#!/bin/sh\necho hi\n', { mode: 0o755 });
  const c3 = await startStdio();
  await c3.initializeRequest(INIT);
  const notElf = await c3.launchRequest({ program: script }).catch((e) => e);
  assert.match(String(notElf.message), /is not an ELF executable.*noDebug/);
  await c3.disconnectRequest();
  const c4 = await startStdio();
  await c4.initializeRequest(INIT);
  const missing = await c4.launchRequest({ program: path.join(dir, 'nope') }).catch((e) => e);
  assert.match(String(missing.message), /cannot launch: .*nope/);
  await c4.disconnectRequest();
  fs.rmSync(dir, { recursive: true, force: true });
  for (const x of [c, c2, c3, c4]) assertClean(assert, x);
});
