// GPU collection driven by a debug session, through strata-dap, on a machine without a GPU.
// What runs for real: the launch's "gpu" setting putting the collector into the program's
// environment (CUDA_INJECTION64_PATH and the STRATA_GPU_* variables of this session), the
// collector loaded from it, its ring read by the adapter while the program runs and at every
// stop, the store, the GPU requests answering at a breakpoint with the kernels launched so far
// and the Python or C lines that launched them, late start through the Python agent, the end of
// the program. The collector is the test build of libstrata_cupti.so (the adapter finds it
// through STRATA_GPU_COLLECTOR): its extra entry makes the CUPTI callbacks kernel launches make
// and hands the collector the records CUPTI would deliver for them, so everything after CUPTI is
// the collector's own code. And the real collector with a real CUDA program on this machine,
// where no GPU collection can happen: the program runs, and the user is told once, and why.
// What needs a GPU (CUPTI delivering records itself) is in scripts/gpu-check.sh.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { ADAPTER, CLI, REPO, TARGETS, assertClean, forEachPython, startStdio, target, waitUntil } from './lib/harness.mjs';
import { INIT, lineOf as cLineOf, frames } from './lib/native.mjs';
import { continueTo, lineOf, pyTarget } from './lib/python.mjs';

const DOUBLE = path.join(TARGETS, 'cuda_double', 'libstrata_cupti.so');
const PROGRAM = path.join(TARGETS, 'cuda_error_stop');
const C_SRC = path.join(REPO, 'tests/targets/cuda/cuda_error_stop.c');
const VECTOR_ADD = path.resolve(path.dirname(ADAPTER), '../examples/cuda/vector_add');
const PY = pyTarget('gpu_launches.py');
const NO_CUDA = fs.existsSync(DOUBLE) && fs.existsSync(PROGRAM) ? false
  : `${DOUBLE} does not exist: the CUDA toolkit with CUPTI was not found when the build was configured, ` +
    'so libstrata_cupti.so and its test build were not built';
const HAS_DRIVER = fs.existsSync('/proc/driver/nvidia/version');
const NO_VECTOR_ADD = !fs.existsSync(VECTOR_ADD) ? `${VECTOR_ADD} does not exist: nvcc was not found, the CUDA examples were not built`
  : HAS_DRIVER ? 'this machine has an NVIDIA driver: a real collection here is what scripts/gpu-check.sh checks' : false;
const VEC_ADD = 'vecAdd(float const*, float const*, float*, int)';

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'strata-gpu-live-'));

// A client whose adapter uses the test build of the collector.
async function client() {
  const c = await startStdio({ spawn: { env: { ...process.env, STRATA_GPU_COLLECTOR: DOUBLE } } });
  await c.initializeRequest(INIT);
  return c;
}

async function launch(c, args, breakpoints = {}) {
  const initialized = c.waitForEvent('initialized', 30000);
  await c.launchRequest(args);
  await initialized;
  for (const [file, lines] of Object.entries(breakpoints)) {
    const r = await c.setBreakpointsRequest({ source: { path: file }, breakpoints: lines.map((line) => ({ line })) });
    assert.ok(r.body.breakpoints.every((b) => b.verified), JSON.stringify(r.body.breakpoints));
  }
  const stopped = c.waitForEvent('stopped', 30000);
  await c.configurationDoneRequest();
  return stopped;
}

const outputs = (c, category) => c.eventsNamed('output').filter((e) => e.body.category === category).map((e) => e.body.output);

async function runToEnd(c, threadId) {
  const terminated = c.waitForEvent('terminated', 30000);
  await c.continueRequest({ threadId });
  await terminated;
}

forEachPython((py) => {
  const v = path.basename(py);

  test(`${v}: launched with gpu "stacks", a crash after the launches is followed by the last kernels and the Python lines that launched them`, { skip: NO_CUDA }, async () => {
    const c = await client();
    const stopped = await launch(c, { program: PY, python: py, gpu: 'stacks', args: ['crash'] });
    assert.equal(stopped.body.reason, 'exception');
    await waitUntil(() => /GPU at the crash/.test(c.output('console')), 20000, 'the GPU lines of the crash stop');
    const text = c.output('console');
    const block = text.slice(text.indexOf('GPU at the crash'));
    assert.match(block, new RegExp(`GPU 0 stream 7, the last first:\n` +
      `( +relu\\(float\\*, int\\) \\[id \\d+\\] launched at gpu_launches\\.py:${lineOf(PY, 'relu_launch')} \\(relu\\), ran 1\\.0 µs, ended .*\n){3}`), block);
    assert.match(block, new RegExp(`thread ${stopped.body.threadId}'s last CUDA calls, the last first:\n( +cudaLaunchKernel, .*\n){3}`), block);
    const terminated = c.waitForEvent('terminated', 30000);
    await c.continueRequest({ threadId: stopped.body.threadId });
    await terminated;
    assert.equal(c.eventsNamed('exited')[0].body.exitCode, 139);
    await c.stop().catch(() => {});
  });

  test(`${v}: launched with gpu "stacks", a breakpoint sees every kernel launched so far and the lines that launched them`, { skip: NO_CUDA }, async () => {
    const dir = tempDir();
    const store = path.join(dir, 'run.strata');
    const c = await client();
    const atSecond = await launch(c, { program: PY, python: py, gpu: 'stacks', gpuStore: store },
      { [PY]: [lineOf(PY, 'second'), lineOf(PY, 'after')] });
    // Hardware metrics for the next two relu launches: asked of the one collecting process. Without
    // a GPU, CUPTI's profiler refuses at the first of them, and the user is told why.
    const asked = (await c.evaluateRequest({ expression: '!gpu profile relu 2', context: 'repl' })).body.result;
    assert.match(asked, /^Measuring the next 2 launches of kernels whose names contain 'relu' .* in 1 process and any started later/);
    const stopped = await continueTo(c, atSecond.body.threadId);
    const tid = stopped.body.threadId;
    assert.equal(stopped.body.reason, 'breakpoint');

    // Everything the program launched before the stop is in the store when the request is answered.
    const summary = (await c.send('gpuSummary', { limit: 10 })).body;
    assert.deepEqual(summary.kernels.map((k) => [k.name, k.count, k.totalNs]), [[VEC_ADD, 5, 5000], ['relu(float*, int)', 3, 3000]]);
    assert.equal(summary.dropped, 0);
    await waitUntil(() => c.eventsNamed('gpuActivity').some((e) => e.body.counts.kernels === 8), 10000, 'gpuActivity with 8 kernels');

    // One stream, every launch on it, bounded by maxItems.
    const timeline = (await c.send('gpuTimeline', { maxItems: 100 })).body;
    const kernels = timeline.items.filter((i) => i.kind === 'kernel');
    assert.equal(kernels.reduce((n, i) => n + (i.count ?? 1), 0), 8);
    const first = kernels.find((i) => i.name === VEC_ADD);
    const detail = (await c.send('gpuKernel', { id: first.id })).body;
    assert.deepEqual([detail.grid, detail.block], [[5, 1, 1], [128, 1, 1]]);
    const relu = (await c.send('gpuKernel', { id: kernels.find((i) => i.name === 'relu(float*, int)').id })).body;
    assert.match(relu.metricsError ?? '', /is there a GPU and a working CUDA driver\?/, JSON.stringify(relu));
    // The Python lines that launched it, innermost first, each opening its source.
    const py3 = detail.stackFrames.filter((f) => f.source?.path === PY);
    assert.deepEqual(py3.map((f) => [f.name, f.line]), [['vector_add', lineOf(PY, 'add_launch')], ['<module>', lineOf(PY, 'first')]]);

    // The console says where the data goes and that the process collects; nothing is a problem.
    assert.ok(outputs(c, 'console').some((o) => o.includes(`The GPU data of this session goes to ${store}`)), outputs(c, 'console').join(''));
    assert.ok(outputs(c, 'console').some((o) => /^GPU collection \(stacks\) in process \d+/.test(o)), outputs(c, 'console').join(''));
    // The one problem said: the refusal of the metrics, once; tracing went on.
    const refused = outputs(c, 'important');
    assert.equal(refused.length, 1, refused.join(''));
    assert.match(refused[0], /^no hardware metrics in process \d+: cuptiProfilerInitialize failed: CUPTI_ERROR_UNKNOWN \(999\) \(is there a GPU and a working CUDA driver\?\); tracing goes on/);
    assert.match(await (async () => (await c.evaluateRequest({ expression: '!gpu top 1', context: 'repl' })).body.result)(),
      /vecAdd\(float const\*, float const\*, float\*, int\)/);

    await runToEnd(c, tid);
    assert.equal(c.eventsNamed('exited')[0].body.exitCode, 0);
    assert.match(c.output('stdout'), /launched 8\n/);
    assert.equal(outputs(c, 'important').length, 1, 'no other problem reported at the end');
    await c.disconnectRequest();
    assertClean(assert, c);
    assert.ok(fs.statSync(store).size > 0, 'the store is kept');
  });

  test(`${v}: launched with gpu "off", the collector records nothing; a late start that CUPTI refuses says why and the program goes on`, { skip: NO_CUDA }, async () => {
    const c = await client();
    const stopped = await launch(c, { program: PY, python: py, gpu: 'off' }, { [PY]: [lineOf(PY, 'second')] });
    const tid = stopped.body.threadId;
    const summary = (await c.send('gpuSummary', {})).body;
    assert.deepEqual(summary.kernels, []);
    assert.ok(outputs(c, 'console').some((o) => /collects nothing until a start \(mode off\)/.test(o)), outputs(c, 'console').join(''));

    // The agent loads the collector and starts it for real: without a GPU, CUPTI refuses.
    const refused = await c.evaluateRequest({ expression: '!gpu start stacks', context: 'repl' }).then(() => null, (e) => e);
    assert.ok(refused, 'the late start failed');
    assert.match(refused.message, /GPU collection did not start: failed: .*\(is there a GPU and a working CUDA driver\?\)/);
    await assert.rejects(c.send('gpuStop', {}), /GPU collection is not running in this session/);

    await runToEnd(c, tid);
    assert.equal(c.eventsNamed('exited')[0].body.exitCode, 0);
    assert.match(c.output('stdout'), /launched 0\n/);
    await c.disconnectRequest();
    assertClean(assert, c);
  });
});

// Every CPython 3.10+ the build found, shared (pyenv's) and statically linked (Debian's): the
// collector reads the launching line with the GIL released or held, from a Python thread, and
// ties a thread with no Python frame to the thread waiting in a scope.
const SITES = pyTarget('gpu_sites.py');
const CPYTHONS = (process.env.STRATA_CPYTHONS ?? '').split(':').filter(Boolean);
function checkSites(py) {
  const dir = tempDir();
  const store = path.join(dir, 'sites.strata');
  const env = { ...process.env, STRATA_GPU_COLLECTOR: DOUBLE };
  const r = spawnSync(CLI, ['gpu', 'run', '--stacks', '--store', store, '--', py, SITES], { encoding: 'utf8', env, timeout: 120000 });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /launched 10\n/);
  const rows = JSON.parse(spawnSync(CLI, ['gpu', 'sql', `SELECT k.name, s.attribution, count(*),
      (SELECT line FROM site_frames f WHERE f.pid = k.pid AND f.site = k.site AND f.kind = 'python' AND f.file = '${SITES}' ORDER BY depth LIMIT 1)
    FROM kernels k JOIN launch_sites s ON s.pid = k.pid AND s.id = k.site GROUP BY 1, 2, 4 ORDER BY 1`, '--json', store],
  { encoding: 'utf8', env }).stdout).rows;
  assert.deepEqual(rows, [
    ['backward()', 'caller', 2, lineOf(SITES, 'backward')],
    ['held()', 'own', 2, lineOf(SITES, 'held')],
    ['native()', 'none', 2, null],
    ['release()', 'own', 2, lineOf(SITES, 'released')],
    ['thread()', 'own', 2, lineOf(SITES, 'thread')],
  ]);
}
for (const py of CPYTHONS) {
  const name = py.replace(/^.*\/(build\/cpython|\.pyenv\/versions)/, '$1');
  test(`${name}: strata gpu run --stacks ties each launch to its Python line, with or without the GIL, and a thread with no Python frame to the thread waiting for it`,
    { skip: NO_CUDA }, () => checkSites(py));
}
// A venv of Debian's statically linked python3.11, as the GPU machine's Ubuntu Python runs in one.
const STATIC_PYTHON = '/usr/bin/python3.11';
test('a venv of a statically linked CPython: the same lines', { skip: NO_CUDA || (fs.existsSync(STATIC_PYTHON) ? false : `no ${STATIC_PYTHON}`) }, () => {
  const venv = path.join(tempDir(), 'venv');
  execFileSync(STATIC_PYTHON, ['-m', 'venv', '--without-pip', venv]);
  checkSites(path.join(venv, 'bin', 'python'));
});

// The collector describes the devices its kernels ran on (the driver's attributes, here from a
// stand-in libcuda.so.1 with an H100's): a live collection gets occupancy estimates.
const FAKE_LIBCUDA = path.join(TARGETS, 'fake_cuda', 'libcuda.so.1');
test('strata gpu run: the collector records the device, so gpuKernel estimates occupancy', { skip: NO_CUDA }, () => {
  const dir = tempDir();
  const store = path.join(dir, 'device.strata');
  const env = { ...process.env, STRATA_GPU_COLLECTOR: DOUBLE, FAKE_LIBCUDA };
  const r = spawnSync(CLI, ['gpu', 'run', '--trace', '--store', store, '--', TORCH_PYTHON, pyTarget('gpu_device.py')], { encoding: 'utf8', env, timeout: 60000 });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /launched 4\n/);
  const k = JSON.parse(spawnSync(CLI, ['gpu', 'kernel', '--json', 'vecAdd', store], { encoding: 'utf8', env }).stdout);
  assert.equal(k.deviceProperties.name, "Strata test device (H100 SXM's properties)");
  assert.equal(k.deviceProperties.smCount, 132);
  assert.match(k.deviceProperties.source, /^collector \(process \d+\)$/);
  assert.equal(k.occupancyUnavailable, undefined);
  // 4 blocks of 128 threads, 16 registers: 4 warps a block; 16 blocks an SM would fit, 64 warps.
  assert.equal(k.occupancy.activeWarpsPerSm, 64, JSON.stringify(k.occupancy));
});

// PyTorch's shape, on Debian's torch 1.13 (CPU): a launch from a Python op with the GIL released,
// launches from a C++ thread with no Python frame while the thread that called backward() waits in
// autograd's engine, and a CUDA graph captured on one line and replayed on another.
const TORCH_PYTHON = '/usr/bin/python3';
const AUTOGRAD = pyTarget('gpu_autograd.py');
const NO_TORCH = NO_CUDA || (spawnSync(TORCH_PYTHON, ['-c', 'import torch'], { encoding: 'utf8' }).status === 0 ? false
  : `PyTorch is not installed for ${TORCH_PYTHON} (Debian: apt-get install python3-torch)`);
// The first launch frame a user would click: neither subtle nor a label.
const firstUserFrame = (frames) => frames.find((f) => f.presentationHint !== 'subtle' && f.presentationHint !== 'label');

test('strata gpu run --stacks: a PyTorch-shaped program\'s kernels are tied to their Python lines without the GIL, backward\'s to the backward() line, a graph replay\'s to its capture', { skip: NO_TORCH }, () => {
  const dir = tempDir();
  const store = path.join(dir, 'autograd.strata');
  const env = { ...process.env, STRATA_GPU_COLLECTOR: DOUBLE };
  const r = spawnSync(CLI, ['gpu', 'run', '--stacks', '--store', store, '--', TORCH_PYTHON, AUTOGRAD], { encoding: 'utf8', env, timeout: 120000 });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /autograd done, grad \[6\.0, 6\.0, 6\.0, 6\.0\], 5 replays\n/);
  const kernel = (name) => JSON.parse(spawnSync(CLI, ['gpu', 'kernel', '--json', name, store], { encoding: 'utf8', env }).stdout);
  const sql = (q) => JSON.parse(spawnSync(CLI, ['gpu', 'sql', q, '--json', store], { encoding: 'utf8', env }).stdout).rows;

  // A launch from a Python op, the GIL released around it: the launching thread's own lines.
  const fwd = kernel('scale_fwd');
  assert.equal(fwd.attribution, 'own', JSON.stringify(fwd));
  assert.deepEqual([fwd.pythonFrames[0].function, fwd.pythonFrames[0].line], ['Scale.forward', lineOf(AUTOGRAD, 'in_forward')]);
  const fwdMain = fwd.pythonFrames.find((f) => f.function === 'main');
  assert.equal(fwdMain.line, lineOf(AUTOGRAD, 'forward'));

  // From a thread with no Python frame while main waits in backward(): that thread's lines, the
  // innermost of the program's own being the backward() call.
  const bwd = kernel('scale_bwd');
  assert.equal(bwd.attribution, 'caller', JSON.stringify(bwd));
  assert.equal(bwd.waitedIn, 'backward');
  assert.ok(bwd.waitingThread > 0);
  const own = bwd.pythonFrames.find((f) => f.file === AUTOGRAD);
  assert.deepEqual([own.function, own.line], ['main', lineOf(AUTOGRAD, 'backward')], JSON.stringify(bwd.pythonFrames));
  assert.ok(bwd.pythonFrames.some((f) => f.file.endsWith('torch/autograd/__init__.py')), 'torch\'s backward frames are kept');
  // Every backward kernel (2 launches x 3 steps) has that one site.
  assert.deepEqual(sql("SELECT s.attribution, count(*) FROM kernels k JOIN launch_sites s ON s.pid = k.pid AND s.id = k.site WHERE k.name LIKE 'scale_bwd%' GROUP BY 1"), [['caller', 6]]);

  // A graph replay's kernels: the capture's line, and the replay's as the kernel's own site.
  const g = kernel('graph');
  assert.equal(g.attribution, 'capture', JSON.stringify(g));
  assert.equal(g.capture.origin, 'cloned');
  assert.equal(g.capture.pythonFrames.find((f) => f.file === AUTOGRAD).line, lineOf(AUTOGRAD, 'capture'));
  assert.equal(g.pythonFrames.find((f) => f.file === AUTOGRAD).line, lineOf(AUTOGRAD, 'replay'));
  assert.deepEqual(sql("SELECT count(*) FROM kernels WHERE graph_node_id != 0"), [[5]]);
});

test('gpuKernel in a debug session: a backward kernel\'s first frame to click is the backward() line, a graph replay\'s the capture line', { skip: NO_TORCH }, async () => {
  const c = await client();
  const stopped = await launch(c, { program: AUTOGRAD, python: TORCH_PYTHON, gpu: 'stacks' }, { [AUTOGRAD]: [lineOf(AUTOGRAD, 'after')] });
  const kernels = (await c.send('gpuTimeline', { maxItems: 1000 })).body.items.filter((i) => i.kind === 'kernel');
  const detail = async (name) => (await c.send('gpuKernel', { id: kernels.find((i) => i.name.startsWith(name)).id })).body;

  const bwd = await detail('scale_bwd');
  assert.equal(bwd.attribution, 'caller');
  const top = firstUserFrame(bwd.stackFrames);
  assert.deepEqual([top.name, top.source?.path, top.line], ['main', AUTOGRAD, lineOf(AUTOGRAD, 'backward')], JSON.stringify(bwd.stackFrames));
  const label = bwd.stackFrames.find((f) => f.presentationHint === 'label');
  assert.match(label.name, /^launched for thread \d+, which waited in backward\(\)$/);
  // The C++ thread's own frames come first, all subtle; torch's Python frames are subtle too.
  const before = bwd.stackFrames.slice(0, bwd.stackFrames.indexOf(label));
  assert.ok(before.length > 0 && before.every((f) => f.presentationHint === 'subtle'), JSON.stringify(before));
  assert.ok(bwd.stackFrames.some((f) => f.presentationHint === 'subtle' && f.source?.path?.endsWith('torch/autograd/__init__.py')));

  const fwd = await detail('scale_fwd');
  assert.equal(fwd.attribution, 'own');
  const fwdTop = firstUserFrame(fwd.stackFrames);
  assert.deepEqual([fwdTop.name, fwdTop.line], ['Scale.forward', lineOf(AUTOGRAD, 'in_forward')]);

  const g = await detail('graph');
  assert.equal(g.attribution, 'capture');
  const gTop = firstUserFrame(g.stackFrames);
  assert.deepEqual([gTop.name, gTop.line], ['main', lineOf(AUTOGRAD, 'capture')], JSON.stringify(g.stackFrames));
  const replayed = g.stackFrames.findIndex((f) => f.presentationHint === 'label' && /^CUDA graph replayed by /.test(f.name));
  assert.ok(replayed > 0, JSON.stringify(g.stackFrames));
  const replayTop = firstUserFrame(g.stackFrames.slice(replayed + 1));
  assert.deepEqual([replayTop.name, replayTop.line], ['main', lineOf(AUTOGRAD, 'replay')]);

  await runToEnd(c, stopped.body.threadId);
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 0);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('native: launched with gpu "stacks", the kernels and the C line that launched them at a breakpoint', { skip: NO_CUDA }, async () => {
  const c = await client();
  const stopped = await launch(c, { program: PROGRAM, args: ['launches'], gpu: 'stacks' }, { [C_SRC]: [cLineOf(C_SRC, 'native_after')] });
  const tid = stopped.body.threadId;
  assert.equal((await frames(c, tid)).stackFrames[0].line, cLineOf(C_SRC, 'native_after'));
  const summary = (await c.send('gpuSummary', {})).body;
  assert.deepEqual(summary.kernels.map((k) => [k.name, k.count]), [['fill(int*, int)', 4]]);
  const item = (await c.send('gpuTimeline', { maxItems: 100 })).body.items.find((i) => i.kind === 'kernel');
  const detail = (await c.send('gpuKernel', { id: item.id })).body;
  const own = detail.stackFrames.filter((f) => f.source?.path === C_SRC);
  assert.deepEqual(own.map((f) => [f.name, f.line]), [['launches', cLineOf(C_SRC, 'native_launch')], ['main', cLineOf(C_SRC, 'launches_main')]]);
  // The native debugger has no late start: said plainly.
  const e = await c.evaluateRequest({ expression: '!gpu stop', context: 'repl', frameId: (await frames(c, tid)).stackFrames[0].id })
    .then(() => null, (err) => err);
  assert.match(e?.message ?? '', /does not support starting or stopping GPU collection in a running program; collection ends with the program/);
  await runToEnd(c, tid);
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 0);
  assert.match(c.output('stdout'), /launched 4\n/);
  await c.disconnectRequest();
  assertClean(assert, c);
});

// A host-side crash after kernel launches (two of fill, then one of reduce, from two lines):
// the crash stop is followed by what the GPU was doing, from the collector's ring, drained at
// the stop: the last kernels on the stream with the lines that launched them, and the crashing
// thread's last CUDA calls.
test('native: a crash with gpu "stacks" on says what the GPU was doing: the last kernels on each stream, their lines, the thread\'s last CUDA calls', { skip: NO_CUDA }, async () => {
  const c = await client();
  const stopped = await launch(c, { program: PROGRAM, args: ['crash'], gpu: 'stacks' });
  assert.equal(stopped.body.reason, 'exception');
  assert.match(stopped.body.description, /^SIGSEGV: write to unmapped address 0x0$/);
  const tid = stopped.body.threadId;
  await waitUntil(() => /GPU at the crash/.test(c.output('console')), 20000, 'the GPU lines of the crash stop');
  const text = c.output('console');
  const block = text.slice(text.indexOf('GPU at the crash'));
  const at = (marker) => `cuda_error_stop\\.c:${cLineOf(C_SRC, marker)} \\(launch_then_crash\\)`;
  assert.match(block, new RegExp(
    `GPU 0 stream 7, the last first:\n` +
    ` +reduce\\(float\\*, int\\) \\[id \\d+\\] launched at ${at('crash_reduce')}, ran 1\\.0 µs, ended [\\d.]+ [µm]?s before the stop\n` +
    ` +fill\\(int\\*, int\\) \\[id \\d+\\] launched at ${at('crash_launch')}, ran 1\\.0 µs, ended [\\d.]+ [µm]?s before the stop\n` +
    ` +fill\\(int\\*, int\\) \\[id \\d+\\] launched at ${at('crash_launch')}, ran`), block);
  assert.match(block, new RegExp(`thread ${tid}'s last CUDA calls, the last first:\n( +cudaLaunchKernel, [\\d.]+ [µm]?s before the stop\n){3}`), block);
  // The kernel named there is one gpuKernel opens.
  const id = Number(/reduce\(float\*, int\) \[id (\d+)\]/.exec(block)[1]);
  const detail = (await c.send('gpuKernel', { id })).body;
  assert.equal(detail.name, 'reduce(float*, int)');
  // !gpu crash says it again, on demand.
  const again = await c.evaluateRequest({ expression: '!gpu crash', context: 'repl' });
  assert.match(again.body.result, /^GPU at the crash .*\n  GPU 0 stream 7, the last first:\n +reduce\(float\*, int\)/);
  await runToEnd(c, tid);
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 139);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('a CUDA program launched with gpu "trace" on a machine without a GPU runs, and the user is told once that nothing was collected and why', { skip: NO_VECTOR_ADD }, async () => {
  const c = await startStdio();
  await c.initializeRequest(INIT);
  const initialized = c.waitForEvent('initialized', 30000);
  await c.launchRequest({ program: VECTOR_ADD, gpu: 'trace' });
  await initialized;
  const terminated = c.waitForEvent('terminated', 30000);
  await c.configurationDoneRequest();
  await terminated;
  // The program ran as it does without Strata (it finds no usable GPU and says so).
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 1);
  assert.match(c.output('stderr'), /vector_add\.cu:\d+: cudaMalloc\(&da, bytes\) failed: cuda\w+/);
  const told = outputs(c, 'important');
  assert.equal(told.length, 1, told.join(''));
  assert.match(told[0], /^no GPU collection happened: this machine has no NVIDIA driver loaded \(\/proc\/driver\/nvidia\/version does not exist\), so no program can use a GPU here/);
  // The GPU requests still answer: nothing was collected.
  assert.deepEqual((await c.send('gpuSummary', {})).body.kernels, []);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('a launch\'s "gpu" setting is checked: a wrong mode, or another CUDA injection in its env, is refused before anything runs', async () => {
  const c = await startStdio();
  await c.initializeRequest(INIT);
  await assert.rejects(c.launchRequest({ program: '/bin/true', gpu: 'everything' }), /cannot launch: arguments\.gpu: .*everything/);
  // The conflict exists only where there is a collector to inject.
  if (!NO_CUDA) {
    await assert.rejects(c.launchRequest({ program: '/bin/true', gpu: 'trace', env: { CUDA_INJECTION64_PATH: '/opt/other/libinject.so' } }),
      /cannot launch: arguments\.gpu: the launch's environment sets CUDA_INJECTION64_PATH=\/opt\/other\/libinject\.so \(another CUDA injection\)/);
  }
  assert.equal(c.eventsNamed('process').length, 0);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('strata run --json --gpu stacks: a crash\'s stopped line carries what the GPU was doing; a crash with nothing collecting has no gpu member', { skip: NO_CUDA }, async () => {
  const r = spawnSync(CLI, ['run', '--json', '--gpu', 'stacks', '--', PROGRAM, 'crash'],
    { encoding: 'utf8', env: { ...process.env, STRATA_GPU_COLLECTOR: DOUBLE }, timeout: 60000 });
  assert.equal(r.status, 139, r.stderr);
  const lines = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const stop = lines.find((l) => l.type === 'stopped');
  assert.match(stop.description, /^SIGSEGV: write to unmapped address 0x0 in launch_then_crash at cuda_error_stop\.c:\d+/);
  assert.match(stop.gpu, new RegExp(`reduce\\(float\\*, int\\) \\[id \\d+\\] launched at cuda_error_stop\\.c:${cLineOf(C_SRC, 'crash_reduce')} `));
  assert.match(stop.gpu, new RegExp(`thread ${stop.threadId}'s last CUDA calls`));
  // A crash with nothing collecting: no gpu member.
  const plain = spawnSync(CLI, ['run', '--json', '--', target('native_faults'), 'write'], { encoding: 'utf8', timeout: 60000 });
  assert.equal(plain.status, 139, plain.stderr);
  assert.equal(plain.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((l) => l.type === 'stopped').gpu, undefined);
});

test('strata run --gpu stacks: the program\'s output, then what its GPU did, from the store it keeps', { skip: NO_CUDA }, async () => {
  const dir = tempDir();
  const store = path.join(dir, 'cli.strata');
  const r = spawnSync(CLI, ['run', '--gpu', 'stacks', '--gpu-store', store, '--', PROGRAM, 'launches'],
    { encoding: 'utf8', env: { ...process.env, STRATA_GPU_COLLECTOR: DOUBLE }, timeout: 60000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'launched 4\n');
  assert.match(r.stderr, new RegExp(`The GPU data of this session goes to ${store}\\n`));
  assert.match(r.stderr, /\n\s+4\.0 µs\s+4\s+1\.0 µs\s+1\.0 µs\s+1\.0 µs\s+fill\(int\*, int\)\n/);
  assert.ok(fs.statSync(store).size > 0);
  const bad = spawnSync(CLI, ['run', '--gpu', 'everything', '--', '/bin/true'], { encoding: 'utf8', timeout: 60000 });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /cannot launch: arguments\.gpu: .*everything/);
});
