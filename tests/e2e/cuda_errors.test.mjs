// Sticky CUDA errors as exception stops through strata-dap, on a machine without a GPU. What
// runs for real: the built libstrata_cupti.so loaded into a native program, whose
// strata_gpu_error_stop the program calls with a filled StrataGpuError exactly as the collector
// does for a sticky error (the debugger's hidden breakpoint, the struct read from the target,
// the stack from the program's call, the `cuda` filter, detach); and a test build of the
// collector (tests/targets/cuda/collector_double.cpp: the collector's own sources and one more
// export) whose entry makes the CUPTI callbacks a kernel launch and a failing
// cudaDeviceSynchronize make, so the collector's own code fills the struct, finds the program's
// call, calls the Python agent's error hook and strata_gpu_error_stop. What only a GPU shows
// (CUPTI calling those callbacks for a real error) is in scripts/gpu-check.sh.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { REPO, TARGETS, assertClean, exitOf, startStdio, waitUntil, withTimeout, forEachPython } from './lib/harness.mjs';
import { INIT, lineOf, launchNative, frames } from './lib/native.mjs';
import { lineOf as pyLineOf, pyTarget, launchAndStop } from './lib/python.mjs';

const PROGRAM = path.join(TARGETS, 'cuda_error_stop');
const DOUBLE = path.join(TARGETS, 'cuda_double', 'libstrata_cupti.so');
const SRC = path.join(REPO, 'tests/targets/cuda/cuda_error_stop.c');
const PY = pyTarget('cuda_error.py');
const NO_CUDA = fs.existsSync(PROGRAM) && fs.existsSync(DOUBLE) ? false
  : `${PROGRAM} does not exist: the CUDA toolkit with CUPTI was not found when the build was configured, ` +
    'so libstrata_cupti.so and the CUDA error debuggees were not built';
const SIGNALS = ['SIGSEGV', 'SIGBUS', 'SIGFPE', 'SIGILL', 'SIGABRT'];
const SENTENCE = (error, result) => `cudaDeviceSynchronize returned ${error} (${result}): a kernel accessed memory ` +
  'it may not; the CUDA context can no longer be used; last kernel launched on this thread: fill(int*, int)';
const ILLEGAL = SENTENCE('cudaErrorIllegalAddress', 700);

// What a stop on cudaErrorIllegalAddress must show in exceptionInfo, whichever backend.
function checkInfo(info, message = ILLEGAL) {
  assert.equal(info.exceptionId, 'cudaErrorIllegalAddress');
  assert.equal(info.description, message);
  assert.equal(info.breakMode, 'always');
  assert.equal(info.details.typeName, 'cudaErrorIllegalAddress');
  assert.equal(info.details.fullTypeName, 'cudaErrorIllegalAddress (CUDA runtime API error 700)');
  assert.equal(info.details.message, message);
  assert.match(info.details.stackTrace, /CUDA call: cudaDeviceSynchronize \(runtime API, callback id 165\)\n/);
  assert.match(info.details.stackTrace, /result: 700 cudaErrorIllegalAddress\n/);
  assert.match(info.details.stackTrace, /last kernel launched on this thread: fill\(int\*, int\) \(correlation id 7\)\n/);
}

// No `breakpoint` event and no hit breakpoint: the debugger's own breakpoint is nobody's.
function noUserBreakpoint(c, stopped) {
  assert.equal(stopped.body.hitBreakpointIds, undefined);
  assert.deepEqual(c.eventsNamed('breakpoint'), []);
}

test('native: the collector\'s stop call is an exception stop at the program\'s line; continue goes on to the next', { skip: NO_CUDA }, async () => {
  const { c, stopped } = await launchNative(['stop'], { program: PROGRAM });
  assert.equal(stopped.body.reason, 'exception');
  assert.equal(stopped.body.text, 'cudaErrorIllegalAddress');
  assert.equal(stopped.body.description, ILLEGAL);
  noUserBreakpoint(c, stopped);
  const tid = stopped.body.threadId;
  // The stack starts at the program's call: the stand-in for CUDA and the collector's function
  // (both above it) are not shown.
  const st = await frames(c, tid);
  assert.deepEqual([st.stackFrames[0].name, st.stackFrames[0].line], ['main', lineOf(SRC, 'first_call')]);
  assert.equal(st.stackFrames[0].source.path, SRC);
  assert.ok(!st.stackFrames.some((f) => /fake_synchronize|strata_gpu_error_stop/.test(f.name)), JSON.stringify(st.stackFrames));
  checkInfo((await c.send('exceptionInfo', { threadId: tid })).body);
  // Inspection works in that frame: the program's variables, read in main.
  const scopes = await c.scopesRequest({ frameId: st.stackFrames[0].id });
  assert.ok(scopes.body.scopes.some((s) => s.name === 'Locals'));
  const mode = await c.evaluateRequest({ expression: 'mode', frameId: st.stackFrames[0].id, context: 'watch' });
  assert.match(mode.body.result, /"stop"/);

  // Each call the collector makes stops; the second is another error.
  const second = c.waitForEvent('stopped', 30000);
  await c.continueRequest({ threadId: tid });
  const again = await second;
  assert.equal(again.body.reason, 'exception');
  assert.equal(again.body.text, 'cudaErrorLaunchFailure');
  assert.equal((await frames(c, again.body.threadId)).stackFrames[0].line, lineOf(SRC, 'second_call'));
  const info = (await c.send('exceptionInfo', { threadId: again.body.threadId })).body;
  assert.equal(info.exceptionId, 'cudaErrorLaunchFailure');
  assert.equal(info.details.fullTypeName, 'cudaErrorLaunchFailure (CUDA runtime API error 719)');

  const terminated = c.waitForEvent('terminated', 30000);
  await c.continueRequest({ threadId: again.body.threadId });
  await terminated;
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 0);
  assert.match(c.output('stdout'), /after the first error: 700\nafter the second error: 719\n/);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('native: with the cuda filter off, the program runs through both errors', { skip: NO_CUDA }, async () => {
  const { c } = await launchNative(['stop'], { program: PROGRAM, exceptions: { filters: SIGNALS }, expectStop: false });
  await waitUntil(() => c.eventsNamed('terminated').length > 0, 30000, 'the end of the program');
  assert.equal(c.eventsNamed('stopped').length, 0);
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 0);
  assert.match(c.output('stdout'), /after the first error: 700\nafter the second error: 719\n/);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('native: a condition on the cuda filter is refused, the filter is listed with the signals', { skip: NO_CUDA }, async () => {
  const { c } = await launchNative(['stop'], { program: PROGRAM, expectStop: false, launch: { stopOnEntry: true } });
  const filters = c.eventsNamed('capabilities')[0].body.capabilities.exceptionBreakpointFilters;
  assert.deepEqual(filters.map((f) => [f.filter, f.default]), [...SIGNALS.map((s) => [s, true]), ['cuda', true]]);
  assert.equal(filters.at(-1).label, 'CUDA errors');
  const r = await c.setExceptionBreakpointsRequest({ filters: [], filterOptions: [{ filterId: 'cuda', condition: 'x' }] });
  assert.deepEqual(r.body.breakpoints.map((b) => [b.verified, b.message]),
    [[false, 'conditions on the CUDA errors filter are not supported']]);
  await c.disconnectRequest({ terminateDebuggee: true });
  assertClean(assert, c);
});

test('native: through the collector\'s own code, its callerPc is the program\'s call', { skip: NO_CUDA }, async () => {
  const { c, stopped } = await launchNative(['collector'], { program: PROGRAM });
  assert.equal(stopped.body.reason, 'exception');
  assert.equal(stopped.body.text, 'cudaErrorIllegalAddress');
  assert.equal(stopped.body.description, ILLEGAL);
  noUserBreakpoint(c, stopped);
  const tid = stopped.body.threadId;
  const st = await frames(c, tid);
  assert.deepEqual(st.stackFrames.slice(0, 2).map((f) => [f.name, f.line]),
    [['through_collector', lineOf(SRC, 'collector_call')], ['main', lineOf(SRC, 'collector_main')]]);
  checkInfo((await c.send('exceptionInfo', { threadId: tid })).body);
  const terminated = c.waitForEvent('terminated', 30000);
  await c.continueRequest({ threadId: tid });
  await terminated;
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 0);
  assert.match(c.output('stdout'), /after the error: 700\n/);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('native attach: a collector already loaded is watched; detach takes the hidden breakpoint away', { skip: NO_CUDA }, async () => {
  const proc = spawn(PROGRAM, ['wait'], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.on('data', (d) => { out += d; });
  try {
    await waitUntil(() => out.includes('ready\n'), 10000, 'the program ready');
    const c = await startStdio();
    await c.initializeRequest(INIT);
    const initialized = c.waitForEvent('initialized', 30000);
    await c.attachRequest({ processId: proc.pid });
    await initialized;
    await c.configurationDoneRequest();
    const stopped = c.waitForEvent('stopped', 30000);
    proc.stdin.write('go\n');
    const stop = await stopped;
    assert.equal(stop.body.reason, 'exception');
    assert.equal(stop.body.text, 'cudaErrorIllegalAddress');
    const st = await frames(c, stop.body.threadId);
    assert.deepEqual([st.stackFrames[0].name, st.stackFrames[0].line], ['main', lineOf(SRC, 'first_call')]);
    // Detached, the program meets the second error without a debugger: no int3 left behind.
    await c.disconnectRequest();
    assertClean(assert, c);
    assert.equal(await withTimeout(exitOf(proc), 10000, 'the program\'s exit'), 0);
    assert.match(out, /after the first error: 700\nafter the second error: 719\n/);
  } finally {
    if (proc.exitCode === null) proc.kill('SIGKILL');
  }
});

forEachPython((py) => {
  const v = path.basename(py);
  const env = { CUDA_INJECTION64_PATH: DOUBLE };

  test(`${v}: the collector's hook stops the calling line with the error; continue returns the error code`, { skip: NO_CUDA }, async () => {
    const { c, stopped } = await launchAndStop(py, PY, { launch: { env } });
    assert.equal(stopped.body.reason, 'exception');
    assert.equal(stopped.body.text, 'cudaErrorIllegalAddress');
    assert.equal(stopped.body.description, ILLEGAL);
    noUserBreakpoint(c, stopped);
    const tid = stopped.body.threadId;
    const st = (await c.stackTraceRequest({ threadId: tid })).body.stackFrames;
    assert.deepEqual(st.map((f) => [f.name, f.line]),
      [['synchronize', pyLineOf(PY, 'sync')], ['work', pyLineOf(PY, 'work')], ['<module>', pyLineOf(PY, 'main_call')]]);
    const info = (await c.send('exceptionInfo', { threadId: tid })).body;
    checkInfo(info);
    assert.match(info.details.stackTrace, /^Traceback \(most recent call last\):\n/);
    assert.match(info.details.stackTrace, /line \d+, in synchronize\n.*strata_gpu_test_sticky_error.*\ncudaErrorIllegalAddress: cudaDeviceSynchronize returned/s);
    // The frame is live: its locals are there.
    const scopes = await c.scopesRequest({ frameId: st[0].id });
    const vars = await c.variablesRequest({ variablesReference: scopes.body.scopes[0].variablesReference });
    assert.match(vars.body.variables.find((x) => x.name === 'config').value, /mode=trace dir=/);
    const refused = await c.setExceptionBreakpointsRequest({ filters: [], filterOptions: [{ filterId: 'cuda', condition: 'x' }] });
    assert.deepEqual(refused.body.breakpoints.map((b) => [b.verified, b.message]),
      [[false, 'conditions on the CUDA errors filter are not supported']]);
    const terminated = c.waitForEvent('terminated', 30000);
    await c.continueRequest({ threadId: tid });
    await terminated;
    assert.match(c.output('stdout'), /after the error: 700\n/);
    assert.equal(c.eventsNamed('stopped').length, 1);
    await c.disconnectRequest();
    assertClean(assert, c);
  });

  test(`${v}: the thread that made the call stops, the others with it`, { skip: NO_CUDA }, async () => {
    const { c, stopped } = await launchAndStop(py, PY, { launch: { env, args: ['thread'] } });
    assert.equal(stopped.body.reason, 'exception');
    const threads = (await c.threadsRequest()).body.threads;
    assert.equal(threads.find((t) => t.id === stopped.body.threadId)?.name, 'cuda-worker');
    const st = (await c.stackTraceRequest({ threadId: stopped.body.threadId })).body.stackFrames;
    assert.deepEqual(st.slice(0, 2).map((f) => [f.name, f.line]), [['synchronize', pyLineOf(PY, 'sync')], ['work', pyLineOf(PY, 'work')]]);
    const terminated = c.waitForEvent('terminated', 30000);
    await c.continueRequest({ threadId: stopped.body.threadId });
    await terminated;
    assert.match(c.output('stdout'), /after the error: 700\n/);
    await c.disconnectRequest();
    assertClean(assert, c);
  });

  test(`${v}: with the cuda filter off the program runs on; the filter is listed`, { skip: NO_CUDA }, async () => {
    const { c } = await launchAndStop(py, PY, { launch: { env }, exceptions: { filters: ['uncaught'] }, expectStop: false });
    await waitUntil(() => c.eventsNamed('terminated').length > 0, 30000, 'the end of the program');
    assert.equal(c.eventsNamed('stopped').length, 0);
    assert.match(c.output('stdout'), /after the error: 700\n/);
    const filters = c.eventsNamed('capabilities')[0].body.capabilities.exceptionBreakpointFilters;
    assert.deepEqual(filters.map((f) => [f.filter, f.default]),
      [['raised', false], ['uncaught', true], ['userUnhandled', false], ['cuda', true]]);
    await c.disconnectRequest();
    assertClean(assert, c);
  });
});
