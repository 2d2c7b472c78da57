// The Debug Console's '!' commands through strata-dap: !help, !gpu top|kernel|timeline,
// !sql and !gpu start|stop, with their completions, over an opened trace; and in a Python and
// a native session, where there is no GPU data yet: the commands say so and the session goes on
// (evaluate, stepping) as before. A '!' line never reaches the program's evaluate.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { assertClean, forEachPython } from './lib/harness.mjs';
import { launchAndStop, lineOf as pyLine, pyTarget } from './lib/python.mjs';
import { demoSrc, launchNative, lineOf as nativeLine } from './lib/native.mjs';
import {
  BASE, GEMM, KINETO_RECORDS, LAUNCHER, RELUS, closeSession, lastError, openTrace, raw, repl, tempDir, writeKineto, writeStore,
} from './lib/gpu.mjs';
import { lineOf } from './lib/python.mjs';
import { NATIVE_PROGRAM, NATIVE_SOURCE } from './lib/gpu.mjs';

const NO_DATA = /^No GPU data in this session yet: open a recorded trace with launch \{"trace": PATH\}/;

async function failing(c, expression) {
  await assert.rejects(c.evaluateRequest({ expression, context: 'repl' }));
  return lastError(c, 'evaluate');
}

test('!help, !gpu top, !gpu kernel, !gpu timeline and !sql answer readable text over a trace', async () => {
  const dir = tempDir();
  const c = await openTrace(writeKineto(dir), { launch: { gpuStore: path.join(dir, 's.strata') } });

  const help = await repl(c, '!help');
  for (const usage of ['!help', '!gpu top [N]', '!gpu kernel NAME', '!gpu timeline [START END]', '!gpu start [trace|stacks]',
    '!gpu stop', '!gpu profile NAME [N]', '!gpu crash', '!sql SELECT ...']) assert.ok(help.includes(usage), usage);

  // The busiest kernels first, demangled, with their times.
  const top = (await repl(c, '!gpu top')).split('\n');
  assert.match(top[0], new RegExp(`^GPU data: ${KINETO_RECORDS} records over 2\\.11 ms .*1 device, 2 streams; none dropped$`));
  const relu = top.findIndex((l) => /800\.0 µs\s+400\s+2\.0 µs\s+2\.0 µs\s+2\.0 µs\s+relu_kernel$/.test(l));
  const gemm = top.findIndex((l) => new RegExp(`30\\.0 µs\\s+1\\s+30\\.0 µs.*  ${GEMM.replace(/[()*]/g, '\\$&')}$`).test(l));
  assert.ok(relu > 0 && gemm > relu, top.join('\n'));
  assert.ok(top.some((l) => /^\s+HtoD\s+1\s+1\.00 MiB\s+3\.0 µs$/.test(l)), 'the copy');
  const one = await repl(c, '!gpu top 1');
  assert.match(one, /Kernels \(top 1 of 2 by total time\)/);
  assert.ok(!one.includes('gemm('));

  // One kernel: its launches, the slowest in full, what launched it.
  const k = await repl(c, '!gpu kernel gemm');
  assert.ok(k.startsWith(`${GEMM}\n  mangled: _Z4gemmPfS_S_i\n  launches: 1, total 30.0 µs`), k);
  assert.match(k, /grid \[64, 1, 1\], block \[256, 1, 1\], 32 registers per thread, shared memory 4\.0 KiB static/);
  assert.match(k, /launched by cudaLaunchKernel on thread 4001 \(correlation 77\)\n  in the op aten::mm/);
  assert.ok(k.endsWith(`  from:\n    ${LAUNCHER}:${lineOf(LAUNCHER, 'launch_gemm')} in launch_gemm\n` +
    `    ${LAUNCHER}:${lineOf(LAUNCHER, 'train_step')} in train_step\n    ${LAUNCHER}:${lineOf(LAUNCHER, 'main_loop')} in main`), k);
  assert.match(await repl(c, '!gpu kernel _kernel'), /^relu_kernel\n  launches: 400/);
  assert.match(await repl(c, '!gpu kernel e'), /^2 kernels have names containing 'e'; name one of them in full:/);
  assert.match((await failing(c, '!gpu kernel softmax')).message, /no kernel is named or has a name containing 'softmax' \(2 kernel names/);
  assert.equal(lastError(c, 'evaluate').body.error.id, 1905);

  // The timeline, merged to fit, per track; then a 1 µs window: one relu.
  const tl = await repl(c, '!gpu timeline');
  assert.match(tl, new RegExp(`^Window ${BASE + 90000} ns \\+ 2\\.11 ms: \\d+ items \\(neighbours merged`));
  assert.ok(tl.indexOf('thread 4001 (pid 4000):') < tl.indexOf('GPU 0 stream 7:') && tl.indexOf('GPU 0 stream 7:') < tl.indexOf('GPU 0 stream 8:'));
  const w = await repl(c, `!gpu timeline ${BASE + 200000} ${BASE + 201000}`);
  assert.match(w, /: 1 items\nGPU 0 stream 8:\n\s+\+0 ns\s+2\.0 µs  kernel relu_kernel \[id \d+\]$/);
  assert.match((await failing(c, '!gpu timeline 5')).message, /usage: !gpu timeline \[START END\]/);

  // !sql: one read-only statement over the documented tables, as a table.
  const q = await repl(c, '!sql SELECT name, count(*) AS n FROM kernels GROUP BY name ORDER BY n DESC');
  assert.deepEqual(q.split('\n').map((l) => l.replace(/\s+/g, ' ').trim()), [
    'name n', '--------------------------------- ---', `relu_kernel ${RELUS}`, `${GEMM} 1`, '(2 rows)']);
  for (const [line, says] of [['!sql DELETE FROM kernels', 'table kernels may not be modified'],
    ['!sql DROP TABLE strings', 'the statement would drop'], ['!sql SELECT 1; SELECT 2', 'one statement at a time']]) {
    const refused = await failing(c, line);
    assert.equal(refused.body.error.id, 1903, line);
    assert.ok(refused.message.includes(says), refused.message);
  }
  assert.equal((await failing(c, '!sql SELECT * FROM no_such_table')).body.error.id, 1904);

  // Live collection needs a program; an opened trace has none: said plainly, by command and by request.
  for (const line of ['!gpu start', '!gpu stop']) {
    const e = await failing(c, line);
    assert.equal(e.body.error.id, 1951);
    assert.match(e.message, /^no program runs in this session: GPU collection starts and stops in a running program/);
  }
  await assert.rejects(c.send('gpuStart', { mode: 'stacks' }), /no program runs in this session/);
  await assert.rejects(c.send('gpuStop', {}), /no program runs in this session/);
  await assert.rejects(c.send('gpuStart', { mode: 'everything' }), /expected 'trace' or 'stacks', got 'everything'/);
  // Hardware metrics are measured in a collecting program only: the same clear error.
  const profiled = await failing(c, '!gpu profile gemm 2');
  assert.equal(profiled.body.error.id, 1951);
  assert.match(profiled.message, /^no program collects GPU activity in this session: hardware metrics are measured in a program launched with "gpu": "trace" or "stacks"/);
  const asked = await raw(c, 'gpuProfile', { kernel: 'gemm', count: 2 });
  assert.equal(asked.success, false);
  assert.equal(lastError(c, 'gpuProfile').body.error.id, 1951);
  for (const [args, says] of [[{ kernel: 'gemm', count: 65 }, /arguments\.count: expected 1 to 64 launches, got 65/],
    [{ kernel: 'two words' }, /arguments\.kernel: expected a kernel's name or part of one/]]) {
    await assert.rejects(c.send('gpuProfile', args), says);
    assert.equal(lastError(c, 'gpuProfile').body.error.id, 1004);
  }
  for (const line of ['!gpu profile', '!gpu profile gemm 0', '!gpu profile gemm 2 3'])
    assert.match((await failing(c, line)).message, /usage: !gpu profile NAME \[N\]/, line);
  assert.match((await failing(c, '!gpus')).message, /unknown command '!gpus' \(!help lists the commands\)/);
  // Without a program, an expression has nowhere to run.
  await assert.rejects(c.evaluateRequest({ expression: '1 + 1', context: 'repl' }), /there is no debuggee/);

  // Completions: the commands that extend what was typed, replacing it.
  const bang = (await c.send('completions', { text: '!g', column: 3 })).body.targets;
  assert.deepEqual(bang.map((t) => t.label), ['!gpu top [N]', '!gpu kernel NAME', '!gpu timeline [START END]',
    '!gpu start [trace|stacks]', '!gpu stop', '!gpu profile NAME [N]', '!gpu crash']);
  assert.deepEqual([bang[0].text, bang[0].start, bang[0].length], ['!gpu top ', 1, 2]);
  const none = (await c.send('completions', { text: '', column: 1 })).body.targets;
  assert.equal(none.length, 9, 'an empty line: every command');
  await closeSession(c);
  assertClean(assert, c);
  fs.rmSync(dir, { recursive: true });
});

test('!gpu kernel over a recorded store names the Python lines that launched the slowest launch', async () => {
  const dir = tempDir();
  const c = await openTrace(writeStore(dir, (name) => lineOf(LAUNCHER, name), nativeLine(NATIVE_SOURCE, 'combine_call')));
  const k = await repl(c, `!gpu kernel ${GEMM}`);
  assert.match(k, /launches: 3, total 450\.0 µs, avg 150\.0 µs, min 100\.0 µs, max 200\.0 µs/);
  assert.match(k, /The slowest launch:\n  kernel gemm\(float\*, float\*, float\*, int\) \[id \d+\]\n  200\.0 µs from/);
  assert.ok(k.includes(`  from:\n    ${LAUNCHER}:${lineOf(LAUNCHER, 'launch_gemm')} in launch_gemm\n` +
    `    ${LAUNCHER}:${lineOf(LAUNCHER, 'train_step')} in train_step\n    ${LAUNCHER}:${lineOf(LAUNCHER, 'main_loop')} in main\n` +
    `    0x7f0000001234 in cudaLaunchKernel (/opt/cuda/lib64/libcudart.so.13)\n    0x555555556789 in combine (${NATIVE_PROGRAM})`), k);
  assert.match(await repl(c, '!gpu top'), /; 2 records DROPPED by the collector/);
  await closeSession(c);
  assertClean(assert, c);
  fs.rmSync(dir, { recursive: true });
});

test('measured hardware metrics show on their launch in gpuKernel, in !gpu kernel and in !sql; a refused launch shows why', async () => {
  const dir = tempDir();
  const c = await openTrace(writeStore(dir, (name) => lineOf(LAUNCHER, name), nativeLine(NATIVE_SOURCE, 'combine_call'),
    'measured.strata', { metrics: true }));
  const ids = await repl(c, '!sql SELECT id, correlation FROM kernels WHERE mangled = \'_Z4gemmPfS_S_i\' ORDER BY correlation');
  const byCorrelation = Object.fromEntries(ids.split('\n').slice(2, 5).map((l) => l.trim().split(/\s+/).map(Number)).map(([id, corr]) => [corr, id]));
  assert.deepEqual(Object.keys(byCorrelation), ['1', '2', '3'], ids);

  // The measured launch: its metrics beside the estimated occupancy (the body is schema-checked).
  const measured = (await c.send('gpuKernel', { id: byCorrelation[3] })).body;
  assert.deepEqual(measured.metrics, { smThroughputPct: 71.25, dramThroughputPct: 18.5, achievedOccupancyPct: 46.75,
    durationNs: 201024, passes: 8 });
  assert.ok(measured.occupancy, 'the estimate stays beside the measurement');
  assert.equal(measured.metricsError, undefined);
  // The refused one: the sentence, no numbers. One never asked about: neither.
  const refused = (await c.send('gpuKernel', { id: byCorrelation[2] })).body;
  assert.equal(refused.metrics, undefined);
  assert.match(refused.metricsError, /^no hardware metrics in process 4242: reading the GPU's performance counters is restricted/);
  const plain = (await c.send('gpuKernel', { id: byCorrelation[1] })).body;
  assert.equal(plain.metrics, undefined);
  assert.equal(plain.metricsError, undefined);

  const k = await repl(c, `!gpu kernel ${GEMM}`);
  assert.ok(k.includes('  not measured (correlation 2): no hardware metrics in process 4242: reading the GPU\'s performance ' +
    'counters is restricted to administrators on this machine; tracing goes on\n' +
    '  measured (correlation 3): SM throughput 71.2%, DRAM throughput 18.5%, achieved occupancy 46.8%, GPU time 201.0 µs ' +
    '(8 replay passes)\n'), k);
  // The slowest launch is the measured one: its detail says so too.
  assert.match(k, /The slowest launch:[^]*\n  measured: SM throughput 71\.2%, DRAM throughput 18\.5%/);
  const q = await repl(c, '!sql SELECT correlation, sm_throughput_pct, error IS NULL AS ok FROM kernel_metrics ORDER BY correlation');
  assert.deepEqual(q.split('\n').map((l) => l.replace(/\s+/g, ' ').trim()), [
    'correlation sm_throughput_pct ok', '----------- ----------------- --', '2 NULL 0', '3 71.25 1', '(2 rows)']);
  await closeSession(c);
  assertClean(assert, c);
  fs.rmSync(dir, { recursive: true });
});

forEachPython((py) => {
  const v = path.basename(py);
  test(`${v}: in a Python session !gpu says there is no GPU data yet, and debugging goes on`, async () => {
    const program = pyTarget('loop.py');
    const { c, stopped } = await launchAndStop(py, program, { breakpoints: { [program]: [{ line: pyLine(program, 'helper_body') }] } });
    const tid = stopped.body.threadId;
    const frame = (await c.stackTraceRequest({ threadId: tid })).body.stackFrames[0].id;
    assert.match(await repl(c, '!gpu top', frame), NO_DATA);
    assert.match(await repl(c, '!gpu kernel gemm', frame), NO_DATA);
    assert.match(await repl(c, '!sql SELECT 1', frame), NO_DATA);
    assert.match(await repl(c, '!help', frame), /^Debug Console commands/);
    await assert.rejects(c.send('gpuSummary', {}), /gpuSummary: no GPU data in this session yet/);
    assert.equal(lastError(c, 'gpuSummary').body.error.id, 1950);
    // The '!' completions come from the adapter; names still from Python.
    const bang = (await c.send('completions', { text: '!s', column: 3, frameId: frame })).body.targets.map((t) => t.label);
    assert.deepEqual(bang, ['!sql SELECT ...']);
    const names = (await c.send('completions', { text: 'hel', column: 4, frameId: frame })).body.targets.map((t) => t.label);
    assert.ok(names.includes('helper'), names.join());
    // The program's own evaluate and stepping are untouched.
    assert.equal(await repl(c, 'x * 10', frame), '0');
    const next = c.waitForEvent('stopped', 30000);
    await c.nextRequest({ threadId: tid });
    assert.equal((await next).body.reason, 'step');
    await c.setBreakpointsRequest({ source: { path: program }, breakpoints: [] });
    const ended = c.waitForEvent('terminated', 30000);
    await c.continueRequest({ threadId: tid });
    await ended;
    await c.disconnectRequest();
    assertClean(assert, c);
  });
});

test('in a native session !gpu says there is no GPU data yet, and a C expression is still evaluated', async () => {
  const { c, stopped } = await launchNative(['steps'], { breakpoints: { [demoSrc]: [{ line: nativeLine(demoSrc, 'combine_call') }] } });
  const tid = stopped.body.threadId;
  const frame = (await c.stackTraceRequest({ threadId: tid })).body.stackFrames[0].id;
  assert.match(await repl(c, '!gpu top', frame), NO_DATA);
  const notRunning = await failing(c, '!gpu stop');
  assert.equal(notRunning.body.error.id, 1803);
  assert.match(notRunning.message, /^GPU collection is not running in this session/);
  // A space first makes it C's '!' again.
  assert.match(await repl(c, ' !a', frame), /^(0|false)$/);  // a is 2
  assert.equal(await repl(c, 'a + b', frame), String(Number(await repl(c, 'a', frame)) + Number(await repl(c, 'b', frame))));
  const ended = c.waitForEvent('terminated', 30000);
  await c.setBreakpointsRequest({ source: { path: demoSrc }, breakpoints: [] });
  await c.continueRequest({ threadId: tid });
  await ended;
  await c.disconnectRequest();
  assertClean(assert, c);
});
