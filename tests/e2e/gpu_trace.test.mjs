// GPU traces through strata-dap with no program: launch {"trace"} on a torch.profiler/Kineto
// trace (plain and gzip), an Nsight Systems export and a Strata store the tests write, then
// every GPU request (gpuSummary, gpuTimeline at several zooms, gpuKernel with its launching
// frames, gpuExport) and the gpuActivity and progress events, each checked against its
// schema (tests/e2e/schema/strataCustom.json). Broken and missing files answer an error that
// names the file and the position, and the adapter goes on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { assertClean, hasCustomSchema, startStdio } from './lib/harness.mjs';
import { lineOf } from './lib/python.mjs';
import { lineOf as nativeLineOf } from './lib/native.mjs';
import {
  BASE, GEMM, INIT, backwardEvents, KINETO_RECORDS as RECORDS, LAUNCHER, NSYS_KERNELS, PYTHON3, RELUS, closeSession, kinetoText, lastError,
  NATIVE_SOURCE, openTrace, readPerfetto, tempDir, writeKineto, writeNsys, writeStore,
} from './lib/gpu.mjs';

const SPAN = { startNs: BASE + 90_000, endNs: BASE + (200 + (RELUS - 1) * 5 + 2) * 1000 };
const sum = (items) => items.reduce((n, i) => n + i.count, 0);

async function timeline(c, args) {
  const t = (await c.send('gpuTimeline', args)).body;
  assert.ok(t.items.length <= args.maxItems, `${t.items.length} items for maxItems ${args.maxItems}`);
  // By track, then start.
  for (let i = 1; i < t.items.length; ++i) {
    const [a, b] = [t.items[i - 1], t.items[i]];
    assert.ok(a.track < b.track || (a.track === b.track && a.startNs <= b.startNs), 'items are ordered');
  }
  return t;
}

test('a Kineto trace opens with no program, and every GPU request answers from it', async () => {
  const dir = tempDir();
  const trace = writeKineto(dir);
  const store = path.join(dir, 'session.strata');
  const c = await startStdio();
  const init = await c.initializeRequest({ ...INIT, supportsProgressReporting: true });
  assert.equal(init.body.supportsGpuTimeline, true);
  const initialized = c.waitForEvent('initialized', 60000);
  const activity = c.waitForEvent('gpuActivity', 60000);
  await c.launchRequest({ trace, gpuStore: store });
  await initialized;
  await c.configurationDoneRequest();

  // 1 >> launch {"trace"}; << progressStart, progressEnd, output (what was opened), launch, initialized, gpuActivity
  const order = c.received.map((m) => (m.type === 'event' ? m.event : `${m.type}:${m.command}`));
  const [start, end] = [c.eventsNamed('progressStart'), c.eventsNamed('progressEnd')];
  assert.equal(start.length, 1);
  assert.equal(end.length, 1);
  assert.equal(start[0].body.progressId, end[0].body.progressId);
  assert.ok(order.indexOf('progressEnd') < order.indexOf('response:launch'), 'the import ends before launch answers');
  assert.equal(c.eventsNamed('capabilities').length, 0, 'no debugger: nothing to add to the capabilities');
  assert.match(c.output('console'), new RegExp(`Opened ${trace} \\(kineto-json\\): ${RECORDS} records, ${RELUS + 1} kernels, 2 copies`));
  assert.match(c.output('console'), new RegExp(`GPU store: ${store}`));
  assert.ok(fs.existsSync(store), 'the store is the file gpuStore named');
  const a = (await activity).body;
  assert.deepEqual(a, { counts: { records: RECORDS, kernels: RELUS + 1, copies: 2 }, timeSpan: SPAN, dropped: 0 });

  // gpuSummary: kernels by total time, demangled; copies by kind; syncs; devices.
  const s = (await c.send('gpuSummary', {})).body;
  assert.deepEqual(s.kernels, [
    { name: 'relu_kernel', count: RELUS, totalNs: RELUS * 2000, avgNs: 2000, minNs: 2000, maxNs: 2000 },
    { name: GEMM, count: 1, totalNs: 30000, avgNs: 30000, minNs: 30000, maxNs: 30000 },
  ]);
  assert.deepEqual(s.copies, [{ kind: 'HtoD', count: 1, bytes: 1048576, totalNs: 3000 },
    { kind: 'memset', count: 1, bytes: 256, totalNs: 1000 }]);
  assert.deepEqual(s.syncs, [{ kind: 'stream', count: 1, totalNs: 10000 }]);
  assert.deepEqual(s.timeSpan, SPAN);
  assert.deepEqual(s.devices, [{ device: 0, name: 'NVIDIA H100 80GB HBM3', propertiesKnown: true, kernels: RELUS + 1 }]);
  assert.deepEqual(s.streams.map((x) => [x.stream, x.records]), [[7, 4], [8, RELUS]]);
  assert.equal(s.untimed, 0);
  assert.deepEqual([s.dropped, s.records, s.kernelNames], [0, RECORDS, 2]);
  assert.deepEqual((await c.send('gpuSummary', { limit: 1 })).body.kernels.map((k) => k.name), ['relu_kernel']);
  await assert.rejects(c.send('gpuSummary', { limit: 0 }), /arguments.limit: 0 is not between 1 and 10000/);

  // gpuTimeline: bounded at every zoom; every record in exactly one item.
  const whole = await timeline(c, { maxItems: 10 });
  assert.deepEqual(whole.window, SPAN);
  assert.equal(whole.merged, true);
  assert.equal(sum(whole.items), RECORDS);
  assert.deepEqual(whole.tracks.map((t) => t.name), ['thread 4001 (pid 4000)', 'GPU 0 stream 7', 'GPU 0 stream 8']);
  const fifty = await timeline(c, { maxItems: 50 });
  assert.equal(sum(fifty.items), RECORDS);
  assert.ok(fifty.items.length > whole.items.length, 'more room, finer items');
  const all = await timeline(c, { maxItems: 2000 });
  assert.equal(all.merged, false);
  assert.equal(all.items.length, RECORDS);
  assert.ok(all.items.every((i) => i.count === 1));
  const window = await timeline(c, { startNs: BASE + 300_000, endNs: BASE + 400_000, maxItems: 5 });
  assert.equal(sum(window.items), 20, 'the relus starting in the 100 µs window');
  const micro = await timeline(c, { startNs: BASE + 200_000, endNs: BASE + 201_000, maxItems: 10 });
  assert.deepEqual(micro.items.map((i) => [i.name, i.count, i.startNs, i.endNs]), [['relu_kernel', 1, BASE + 200_000, BASE + 202_000]]);
  await assert.rejects(c.send('gpuTimeline', { startNs: 10, endNs: 5, maxItems: 5 }), /endNs \(5\) must be after arguments.startNs \(10\)/);
  await assert.rejects(c.send('gpuTimeline', { maxItems: 0 }), /maxItems: 0 is not between 1 and 100000/);

  // gpuKernel: one launch in full, joined to its runtime call and its op; no launch site in a Kineto trace.
  const gemm = all.items.find((i) => i.name === GEMM);
  const k = (await c.send('gpuKernel', { id: gemm.id })).body;
  assert.equal(k.name, GEMM);
  assert.equal(k.mangledName, '_Z4gemmPfS_S_i');
  assert.deepEqual([k.kind, k.device, k.stream, k.startNs, k.endNs, k.durationNs], ['kernel', 0, 7, BASE + 120_000, BASE + 150_000, 30000]);
  assert.deepEqual([k.grid, k.block, k.registersPerThread, k.staticSharedMemory, k.dynamicSharedMemory], [[64, 1, 1], [256, 1, 1], 32, 4096, 0]);
  assert.deepEqual([k.launch.name, k.launch.tid, k.op.name], ['cudaLaunchKernel', 4001, 'aten::mm']);
  assert.ok(k.occupancy ? k.occupancy.occupancy > 0 && k.occupancy.occupancy <= 1 : /occupancy/.test(k.occupancyUnavailable));
  // No launch site in a torch.profiler trace: the frames are the python_function events around
  // the launch call, innermost first, each opening its line.
  assert.equal(k.siteKnown, false);
  assert.deepEqual(k.stackFrames.map((f) => [f.name, f.source.path, f.line]), [
    ['launch_gemm', LAUNCHER, lineOf(LAUNCHER, 'launch_gemm')],
    ['train_step', LAUNCHER, lineOf(LAUNCHER, 'train_step')],
    ['main', LAUNCHER, lineOf(LAUNCHER, 'main_loop')],
  ]);
  await assert.rejects(c.send('gpuKernel', { id: 987654321 }), /no GPU record with id 987654321/);
  assert.equal(lastError(c, 'gpuKernel').body.error.id, 1905);

  // gpuExport: Chrome trace JSON (ui.perfetto.dev opens it), read back by a new session.
  const out = path.join(dir, 'export.json');
  const x = (await c.send('gpuExport', { format: 'chrome', path: out })).body;
  assert.deepEqual([x.format, x.path, x.events, x.bytes], ['chrome', out, RECORDS, fs.statSync(out).size]);
  const exported = JSON.parse(fs.readFileSync(out, 'utf8'));
  assert.equal(exported.traceEvents.filter((e) => e.ph === 'X' && e.name === 'relu_kernel').length, RELUS);
  const byDefault = (await c.send('gpuExport', {})).body;
  assert.equal(byDefault.path, path.join(dir, 'session.trace.json'), 'beside the store');
  // Perfetto's protobuf: a descriptor for every track before its slices, every slice begun and
  // ended on its own track, nested, each sequence's times going forward.
  const pf = (await c.send('gpuExport', { format: 'perfetto' })).body;
  assert.deepEqual([pf.format, pf.path, pf.events], ['perfetto', path.join(dir, 'session.pftrace'), RECORDS]);
  const packets = readPerfetto(fs.readFileSync(pf.path));
  assert.equal(pf.bytes, fs.statSync(pf.path).size);
  const described = new Map(), open = new Map(), lastTs = new Map();
  let begins = 0;
  for (const p of packets) {
    if (p.track) { described.set(p.track.uuid, p.track); continue; }
    const e = p.event;
    assert.ok(described.has(e.track), 'a slice on a described track');
    if (lastTs.has(p.seq)) assert.ok(p.ts >= lastTs.get(p.seq), 'times go forward on a sequence');
    lastTs.set(p.seq, p.ts);
    const stack = open.get(e.track) ?? [];
    if (e.type === 1) { stack.push(p.ts); begins++; } else {
      assert.equal(e.type, 2);
      assert.ok(stack.length > 0 && stack.pop() <= p.ts, 'an end closes a slice begun before it');
    }
    open.set(e.track, stack);
  }
  assert.equal(begins, RECORDS);
  assert.ok([...open.values()].every((s) => s.length === 0), 'every slice ended');
  const names = packets.filter((p) => p.event?.type === 1).map((p) => p.event.name);
  assert.equal(names.filter((n) => n === 'relu_kernel').length, RELUS);
  assert.equal(names.filter((n) => n === GEMM).length, 1);
  const threads = [...described.values()].filter((t) => t.thread).map((t) => t.thread.name).sort();
  assert.deepEqual(threads, ['stream 7', 'stream 8', 'thread 4001']);
  assert.ok([...described.values()].some((t) => t.process?.name === 'GPU 0'));
  await assert.rejects(c.send('gpuExport', { path: 'relative.json' }), /'relative.json' is not an absolute path/);
  await assert.rejects(c.send('gpuExport', { format: 'svg' }), /expected 'chrome' or 'perfetto', got 'svg'/);

  // Every custom message has a schema of its own.
  for (const name of ['GpuSummaryResponse', 'GpuTimelineResponse', 'GpuKernelResponse', 'GpuExportResponse', 'GpuActivityEvent'])
    assert.ok(hasCustomSchema(name), name);
  assert.deepEqual((await c.threadsRequest()).body.threads, [], 'no program, no threads');
  await closeSession(c);
  assertClean(assert, c);

  const again = await openTrace(out, { launch: { gpuStore: path.join(dir, 'again.strata') } });
  const s2 = (await again.send('gpuSummary', {})).body;
  assert.deepEqual(s2.kernels.map((k2) => [k2.name, k2.count, k2.totalNs]), s.kernels.map((k2) => [k2.name, k2.count, k2.totalNs]));
  await closeSession(again);
  assertClean(assert, again);
  fs.rmSync(dir, { recursive: true });
});

test('a gzip Kineto trace opens alike; without gpuStore, the store is a temporary file an output event names', async () => {
  const dir = tempDir();
  const c = await openTrace(writeKineto(dir, 'trace.json.gz'));
  const m = /The session's GPU store: (\S+) \(a temporary file/.exec(c.output('console'));
  assert.ok(m, c.output('console'));
  assert.ok(fs.existsSync(m[1]));
  const s = (await c.send('gpuSummary', {})).body;
  assert.deepEqual(s.kernels.map((k) => [k.name, k.count]), [['relu_kernel', RELUS], [GEMM, 1]]);
  await closeSession(c);
  assertClean(assert, c);
  assert.ok(fs.existsSync(m[1]), 'kept after the session');
  fs.rmSync(path.dirname(m[1]), { recursive: true });
  fs.rmSync(dir, { recursive: true });
});

test('a backward kernel in a torch.profiler trace: its stack ends with the Python line of the forward op autograd paired it with', async () => {
  // Autograd's engine thread runs no Python, so no python_function encloses a backward op's
  // launch; its sequence number is the forward op's, whose python_function events give the line.
  const dir = tempDir();
  const c = await openTrace(writeKineto(dir, 'trace.json', kinetoText(backwardEvents())), { launch: { gpuStore: path.join(dir, 's.strata') } });
  const all = await timeline(c, { maxItems: 100 });
  const k = (await c.send('gpuKernel', { id: all.items.find((i) => i.name === 'backward_gemm').id })).body;
  assert.deepEqual([k.launch.tid, k.op.name], [4002, 'aten::mm']);
  assert.deepEqual([k.backwardOf.backwardOp.name, k.backwardOf.backwardOp.tid, k.backwardOf.forwardOp.name,
    k.backwardOf.forwardOp.tid, k.backwardOf.forwardOp.startNs, k.backwardOf.sequenceNumber],
  ['AddmmBackward0', 4002, 'aten::addmm', 4001, BASE + 30_000, 8]);
  assert.deepEqual(k.stackFrames.map((f) => [f.name, f.source?.path, f.line, f.presentationHint]), [
    ['AddmmBackward0: the backward of aten::addmm, whose forward ran at', undefined, 0, 'label'],
    ['launch_gemm', LAUNCHER, lineOf(LAUNCHER, 'launch_gemm'), 'normal'],
    ['main', LAUNCHER, lineOf(LAUNCHER, 'main_loop'), 'normal'],
  ]);
  // The forward kernel: its own Python frames, no backward.
  const f = (await c.send('gpuKernel', { id: all.items.find((i) => i.name === 'forward_gemm').id })).body;
  assert.equal(f.backwardOf, undefined);
  assert.deepEqual(f.stackFrames.map((x) => x.name), ['launch_gemm', 'main']);
  await closeSession(c);
  assertClean(assert, c);
  fs.rmSync(dir, { recursive: true });
});

test('an Nsight Systems export opens: kernels, their launch calls, copies', { skip: !PYTHON3 && 'no python3 with sqlite3 to write an Nsight Systems export' }, async () => {
  const dir = tempDir();
  const c = await openTrace(writeNsys(dir), { launch: { gpuStore: path.join(dir, 's.strata') } });
  assert.match(c.output('console'), /\(nsys-sqlite\)/);
  const s = (await c.send('gpuSummary', {})).body;
  assert.deepEqual(s.kernels, [{ name: 'matmul(float*, float*, float*, int)', count: NSYS_KERNELS, totalNs: NSYS_KERNELS * 4000,
    avgNs: 4000, minNs: 4000, maxNs: 4000 }]);
  assert.deepEqual(s.copies, [{ kind: 'DtoH', count: 1, bytes: 65536, totalNs: 10000 }]);
  assert.deepEqual(s.timeSpan, { startNs: BASE + 500_000, endNs: BASE + 1_000_000 + (NSYS_KERNELS - 1) * 10_000 + 9000 });
  // The second kernel alone in a 1 µs window, then in full: its launch call by correlation.
  const t = await timeline(c, { startNs: BASE + 1_015_000, endNs: BASE + 1_016_000, maxItems: 4 });
  const item = t.items.find((i) => i.kind === 'kernel');
  assert.equal(item.count, 1);
  const k = (await c.send('gpuKernel', { id: item.id })).body;
  assert.deepEqual([k.name, k.correlation, k.grid, k.block, k.registersPerThread, k.launch.name, k.launch.tid],
    ['matmul(float*, float*, float*, int)', 101, [128, 1, 1], [256, 1, 1], 40, 'cudaLaunchKernel', 4243]);
  const whole = await timeline(c, { maxItems: 8 });
  assert.equal(sum(whole.items), 2 * NSYS_KERNELS + 2);
  await closeSession(c);
  assertClean(assert, c);
  fs.rmSync(dir, { recursive: true });
});

test('a Strata store with launch sites: gpuKernel gives the launching Python and native frames as StackFrames with sources', async () => {
  const dir = tempDir();
  const combine = nativeLineOf(NATIVE_SOURCE, 'combine_call');
  const file = writeStore(dir, (name) => lineOf(LAUNCHER, name), combine);
  const c = await openTrace(file, { launch: { gpuStore: path.join(dir, 'unused.strata') } });
  assert.match(c.output('console'), /It is this session's GPU store \("gpuStore" is not used/);
  const s = (await c.send('gpuSummary', {})).body;
  assert.deepEqual(s.kernels.map((k) => [k.name, k.count, k.totalNs]), [[GEMM, 3, 450_000], ['relu_kernel', 6, 60_000]]);
  assert.equal(s.dropped, 2, 'records the collector lost are reported');
  const all = await timeline(c, { maxItems: 1000 });
  const gemms = all.items.filter((i) => i.name === GEMM);
  assert.equal(gemms.length, 3);
  const k = (await c.send('gpuKernel', { id: gemms[0].id })).body;
  assert.equal(k.siteKnown, true);
  assert.deepEqual(k.launch && [k.launch.name, k.launch.tid], ['cudaLaunchKernel', 4243]);
  // The Python frames, innermost first, each opening its line; then the native ones.
  const py = k.stackFrames.slice(0, 3);
  assert.deepEqual(py.map((f) => [f.name, f.source.path, f.line]), [
    ['launch_gemm', LAUNCHER, lineOf(LAUNCHER, 'launch_gemm')],
    ['train_step', LAUNCHER, lineOf(LAUNCHER, 'train_step')],
    ['main', LAUNCHER, lineOf(LAUNCHER, 'main_loop')],
  ]);
  // Native, innermost first: the runtime's call (its library is not on this machine: the
  // collector's symbol), folded as CUDA's, then the line of the program that called it (from
  // its DWARF), the first frame that is not subtle after the Python ones.
  const [cudart, caller] = k.stackFrames.slice(3);
  assert.deepEqual([cudart.name, cudart.instructionPointerReference, cudart.source, cudart.presentationHint],
    ['CUDA: cudaLaunchKernel (1 frame in libcudart.so.13)', '0x7f0000001234', undefined, 'subtle']);
  assert.equal(caller.presentationHint, 'normal');
  assert.deepEqual([caller.name, caller.instructionPointerReference, caller.source.path, caller.line],
    ['combine', '0x555555556789', NATIVE_SOURCE, combine]);
  // A launch frame's id is the GPU backend's: it answers (no variables), with no program running.
  const scopes = await c.scopesRequest({ frameId: py[0].id });
  assert.deepEqual(scopes.body.scopes, []);
  await assert.rejects(c.scopesRequest({ frameId: 424242 }), /there is no debuggee/);
  await closeSession(c);
  assertClean(assert, c);
  fs.rmSync(dir, { recursive: true });
});

test('missing, malformed and truncated traces: an error naming file and position, nothing kept, the adapter goes on', async () => {
  const dir = tempDir();
  const store = path.join(dir, 's.strata');
  const c = await startStdio();
  await c.initializeRequest(INIT);
  const failure = async (args, pattern, id) => {
    await assert.rejects(c.launchRequest({ gpuStore: store, ...args }), pattern);
    assert.equal(lastError(c, 'launch').body.error.id, id);
    assert.ok(!fs.existsSync(store), 'nothing of a failed import is left');
  };
  const missing = path.join(dir, 'missing.json');
  await failure({ trace: missing }, new RegExp(`cannot open trace: trace '${missing}' does not exist`), 1900);
  const text = kinetoText();
  const bad = path.join(dir, 'bad.json');
  fs.writeFileSync(bad, text.replace('"name": "relu_kernel"', '"name": relu_kernel').replace('"name":"relu_kernel"', '"name":relu_kernel'));
  const line = text.split('\n').findIndex((l) => l.includes('relu_kernel')) + 1;
  await failure({ trace: bad }, new RegExp(`cannot open trace: ${bad}: byte \\d+ \\(line ${line}, column \\d+\\)`), 1902);
  const cut = path.join(dir, 'cut.json');
  fs.writeFileSync(cut, text.slice(0, Math.floor(text.length / 2)));
  await failure({ trace: cut }, new RegExp(`${cut}: byte \\d+ \\(line \\d+, column \\d+\\): the JSON ends early \\(a truncated file\\?\\)`), 1902);
  const gz = zlib.gzipSync(text);
  const cutGz = path.join(dir, 'cut.json.gz');
  fs.writeFileSync(cutGz, gz.subarray(0, Math.floor(gz.length / 2)));
  await failure({ trace: cutGz }, new RegExp(`${cutGz}: truncated gzip data \\(the compressed stream ends at byte \\d+`), 1902);
  const junk = path.join(dir, 'notes.txt');
  fs.writeFileSync(junk, 'not a trace\n');
  await failure({ trace: junk }, /not a trace Strata reads/, 1902);
  if (PYTHON3) {
    const broken = writeNsys(dir, 'broken.sqlite', { broken: true });
    await failure({ trace: broken }, new RegExp(`${broken}: table CUPTI_ACTIVITY_KIND_KERNEL has no start column`), 1902);
  }
  await failure({ trace: dir }, /is a directory/, 1900);
  await assert.rejects(c.launchRequest({ trace: bad, program: '/bin/true' }), /give either 'trace'.*or 'program'\/'module'/);
  fs.writeFileSync(path.join(dir, 'taken.strata'), '');
  await assert.rejects(c.launchRequest({ trace: writeKineto(dir), gpuStore: path.join(dir, 'taken.strata') }),
    /gpuStore '.*taken.strata' already exists: Strata never writes over a file/);
  // The session is still there: the same launch with a good trace works.
  const initialized = c.waitForEvent('initialized', 60000);
  await c.launchRequest({ trace: writeKineto(dir, 'good.json'), gpuStore: store });
  await initialized;
  assert.equal((await c.send('gpuSummary', {})).body.records, RECORDS);
  await assert.rejects(c.launchRequest({ trace: bad }), /this session has already opened a GPU trace/);
  await closeSession(c);
  assertClean(assert, c);
  fs.rmSync(dir, { recursive: true });
});
