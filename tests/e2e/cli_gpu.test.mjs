// `strata gpu`: queries over traces the test writes (torch.profiler/Kineto JSON, plain and
// gzip, and an Nsight Systems SQLite export), their --json bodies, bad files, and `strata gpu
// run` on programs here (no GPU: the program runs to completion and Strata says why nothing
// was collected).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { CLI, REPO, target } from './lib/harness.mjs';
import { LAUNCHER, NATIVE_SOURCE, backwardEvents, kinetoText, writeStore } from './lib/gpu.mjs';
import { lineOf } from './lib/python.mjs';
import { lineOf as nativeLine } from './lib/native.mjs';

let dir;
const BASE_NS = 1_000_000_000; // baseTimeNanoseconds: 1 s, so every time stays an exact JS number

function gpu(args, opts = {}) {
  return spawnSync(CLI, ['gpu', ...args], { encoding: 'utf8', timeout: 120_000, ...opts });
}
function gpuJson(args) {
  const r = gpu([...args, '--json']);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

// A trace shaped as torch.profiler writes it: per op a cpu_op, its launch, the kernel; a copy;
// a sync. Times in µs (whole numbers, so the ns the tests expect are exact).
function kinetoTrace() {
  const events = [];
  for (let i = 0; i < 6; i++) {
    const t = 100 + i * 50;
    events.push({ ph: 'X', cat: 'cpu_op', name: 'aten::mm', pid: 4000, tid: 4001, ts: t, dur: 30, args: { 'External id': 10 + i } });
    events.push({ ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: 4000, tid: 4001, ts: t + 2, dur: 5, args: { 'External id': 10 + i, cbid: 211, correlation: 100 + i } });
    events.push({ ph: 'X', cat: 'kernel', name: 'void gemm_kernel<float>(float*, int)', pid: 0, tid: 7, ts: t + 10, dur: 20, args: { 'External id': 10 + i, device: 0, context: 1, stream: 7, correlation: 100 + i, 'registers per thread': 32, 'shared memory': 4096, grid: [64, 1, 1], block: [128, 1, 1] } });
  }
  for (let i = 0; i < 2; i++) {
    events.push({ ph: 'X', cat: 'kernel', name: 'relu_kernel', pid: 0, tid: 8, ts: 500 + i * 10, dur: 4, args: { device: 0, stream: 8, correlation: 200 + i, grid: [1, 1, 1], block: [32, 1, 1] } });
  }
  events.push({ ph: 'X', cat: 'gpu_memcpy', name: 'Memcpy HtoD (Pageable -> Device)', pid: 0, tid: 7, ts: 50, dur: 3, args: { device: 0, context: 1, stream: 7, correlation: 99, bytes: 1048576 } });
  events.push({ ph: 'X', cat: 'cuda_sync', name: 'Stream Sync', pid: 0, tid: 7, ts: 600, dur: 10, args: { device: 0, stream: 7, correlation: 300 } });
  return JSON.stringify({ schemaVersion: 1, traceEvents: events, traceName: 'test.pt.trace.json', baseTimeNanoseconds: BASE_NS }, null, 1);
}

// An Nsight Systems export (its tables as nsys 2024 writes them), made with Python's sqlite3.
const NSYS = String.raw`
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("""
CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1,'cudaLaunchKernel'),(3,'_Z6matmulPfS_S_i'),(4,'matmul(float*, float*, float*, int)'),(5,'matmul');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
  gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER, registersPerThread INTEGER,
  staticSharedMemory INTEGER, dynamicSharedMemory INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
""")
gpid = (1 << 56) | (4242 << 24)
for i in range(10):
    t = 1000000 + i * 10000
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,1,?,?,1,0,NULL)", (t, t + 3000, gpid | 4243, 100 + i))
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,0,1,7,?,?,4,5,128,1,1,256,1,1,40,1024,2048)",
               (t + 5000, t + 9000 + i * 100, 100 + i, gpid))
db.commit()
`;

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-cli-gpu-'));
  const text = kinetoTrace();
  fs.writeFileSync(path.join(dir, 'trace.json'), text);
  fs.writeFileSync(path.join(dir, 'trace.json.gz'), zlib.gzipSync(text));
  fs.writeFileSync(path.join(dir, 'truncated.json'), text.slice(0, Math.floor(text.length / 2)));
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'just some text\n');
  const py = spawnSync('python3', ['-c', NSYS, path.join(dir, 'report.sqlite')], { encoding: 'utf8' });
  assert.equal(py.status, 0, py.stderr);
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('gpu top --json prints the gpuSummary body of a Kineto trace, plain and gzip alike', () => {
  for (const file of ['trace.json', 'trace.json.gz']) {
    const s = gpuJson(['top', path.join(dir, file)]);
    assert.deepEqual(s.kernels.map((k) => [k.name, k.count, k.totalNs, k.minNs, k.maxNs]), [
      ['void gemm_kernel<float>(float*, int)', 6, 120_000, 20_000, 20_000],
      ['relu_kernel', 2, 8_000, 4_000, 4_000],
    ]);
    assert.deepEqual(s.copies.map((c) => [c.kind, c.count, c.bytes]), [['HtoD', 1, 1048576]]);
    assert.equal(s.syncs.length, 1);
    assert.deepEqual(s.timeSpan, { startNs: BASE_NS + 50_000, endNs: BASE_NS + 610_000 });
    assert.equal(s.dropped, 0);
  }
  const one = gpuJson(['top', '1', path.join(dir, 'trace.json')]);
  assert.equal(one.kernels.length, 1);
});

test('gpu top prints a table a person reads', () => {
  const r = gpu(['top', '5', path.join(dir, 'trace.json')]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /GPU summary of .*trace\.json \(kineto-json\)/);
  assert.match(r.stdout, /120\.00 us\s+6\s+20\.00 us\s+20\.00 us\s+20\.00 us\s+void gemm_kernel<float>\(float\*, int\)/);
  assert.match(r.stdout, /HtoD/);
});

test('gpu kernel finds a launch by name or id in an Nsight Systems export, with its shape', () => {
  const top = gpuJson(['top', path.join(dir, 'report.sqlite')]);
  assert.deepEqual(top.kernels.map((k) => [k.name, k.count]), [['matmul(float*, float*, float*, int)', 10]]);
  const byName = gpuJson(['kernel', 'matmul', path.join(dir, 'report.sqlite')]);
  assert.equal(byName.name, 'matmul(float*, float*, float*, int)');
  assert.equal(byName.durationNs, 4_900); // the longest of the ten
  assert.deepEqual(byName.grid, [128, 1, 1]);
  assert.deepEqual(byName.block, [256, 1, 1]);
  assert.equal(byName.registersPerThread, 40);
  assert.equal(byName.launch.name, 'cudaLaunchKernel');
  const byId = gpuJson(['kernel', String(byName.id), path.join(dir, 'report.sqlite')]);
  assert.deepEqual(byId, byName);
  const text = gpu(['kernel', 'matmul', path.join(dir, 'report.sqlite')]);
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, /kernel #\d+  matmul\(float\*, float\*, float\*, int\)/);
  assert.match(text.stdout, /grid\s+\(128, 1, 1\)\s+block \(256, 1, 1\)/);
  assert.match(text.stdout, /launched by\s+cudaLaunchKernel/);
  assert.match(text.stdout, /launch site\s+not recorded \(collect with --stacks\)/);
  const none = gpu(['kernel', 'nosuch', path.join(dir, 'report.sqlite')]);
  assert.equal(none.status, 1);
  assert.match(none.stderr, /strata: gpu kernel: no kernel named or containing 'nosuch' in .*report\.sqlite/);
  const many = gpu(['kernel', 'e', path.join(dir, 'trace.json')]);
  assert.equal(many.status, 1);
  assert.match(many.stderr, /2 kernel names contain 'e'; name one:\n  .*\n  /);
});

test('gpu kernel of a backward op\'s kernel names its forward op and the Python lines that op ran in', () => {
  const trace = path.join(dir, 'backward.json');
  fs.writeFileSync(trace, kinetoText(backwardEvents()));
  const text = gpu(['kernel', 'backward_gemm', trace]);
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, /in op\s+aten::mm\n/);
  assert.ok(text.stdout.includes('  backward of   aten::addmm (thread 4001; AddmmBackward0, sequence number 8), whose forward ran at (innermost first):\n' +
    `    launch_gemm  ${LAUNCHER}:${lineOf(LAUNCHER, 'launch_gemm')}\n    main  ${LAUNCHER}:${lineOf(LAUNCHER, 'main_loop')}\n`), text.stdout);
  assert.doesNotMatch(text.stdout, /launch site/);
  const json = gpuJson(['kernel', 'backward_gemm', trace]);
  assert.deepEqual([json.backwardOf.forwardOp.name, json.backwardOf.sequenceNumber, json.backwardOf.pythonFrames.map((f) => f.line)],
    ['aten::addmm', 8, [lineOf(LAUNCHER, 'launch_gemm'), lineOf(LAUNCHER, 'main_loop')]]);
});

test('gpu timeline answers at most --max items, merged when the window holds more', () => {
  const file = path.join(dir, 'trace.json');
  const all = gpuJson(['timeline', file]);
  assert.equal(all.items.reduce((n, i) => n + i.count, 0) >= 8 + 1 + 1, true);
  const few = gpuJson(['timeline', '--max', '3', file]);
  assert.ok(few.items.length <= 3 && few.items.length > 0, JSON.stringify(few.items));
  const window = gpuJson(['timeline', '--start', String(BASE_NS + 490_000), '--end', String(BASE_NS + 520_000), file]);
  assert.deepEqual(window.items.filter((i) => i.kind === 'kernel').map((i) => i.name), ['relu_kernel', 'relu_kernel']);
  const text = gpu(['timeline', '--max', '20', file]);
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, /GPU 0 stream 7/);
  const bad = gpu(['timeline', '--max', 'lots', file]);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--max needs a whole number, not 'lots'/);
});

test('gpu sql reads the documented tables and refuses to write', () => {
  const file = path.join(dir, 'trace.json');
  const r = gpuJson(['sql', 'SELECT name, count(*) AS n FROM kernels GROUP BY name ORDER BY n DESC', file]);
  assert.deepEqual(r.columns, ['name', 'n']);
  assert.deepEqual(r.rows, [['void gemm_kernel<float>(float*, int)', 6], ['relu_kernel', 2]]);
  const text = gpu(['sql', 'SELECT count(*) AS kernels FROM kernels', file]);
  assert.equal(text.status, 0, text.stderr);
  assert.equal(text.stdout, 'kernels\n8\n(1 row)\n');
  const write = gpu(['sql', 'DELETE FROM strings', file]);
  assert.equal(write.status, 1);
  assert.match(write.stderr, /^strata: gpu sql: .*delete/m);
});

test('gpu export writes a Chrome trace that names every kernel', () => {
  const out = path.join(dir, 'out.json');
  const r = gpuJson(['export', '--format', 'perfetto', path.join(dir, 'report.sqlite'), out]);
  assert.equal(r.path, out);
  assert.ok(r.events >= 20, JSON.stringify(r));
  const doc = JSON.parse(fs.readFileSync(out, 'utf8'));
  const kernels = doc.traceEvents.filter((e) => e.name === 'matmul(float*, float*, float*, int)');
  assert.equal(kernels.length, 10);
  const text = gpu(['export', path.join(dir, 'trace.json'), path.join(dir, 'out2.json')]);
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, /^wrote .*out2\.json: \d+ events/);
});

test('bad files: a clear message naming the file (and the position), exit 1', () => {
  const truncated = gpu(['top', path.join(dir, 'truncated.json')]);
  assert.equal(truncated.status, 1);
  assert.match(truncated.stderr, /^strata: gpu top: .*truncated\.json.*(line \d+, column \d+|byte \d+)/);
  const missing = gpu(['top', path.join(dir, 'nope.json')]);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /nope\.json/);
  const text = gpu(['sql', 'SELECT 1', path.join(dir, 'notes.txt')]);
  assert.equal(text.status, 1);
  assert.match(text.stderr, /notes\.txt.*not a trace Strata reads/);
  const usage = gpu(['top']);
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /top needs a FILE/);
});

test('gpu run of a program that never uses CUDA: its output and exit code, and one sentence why nothing was collected', () => {
  const r = spawnSync(CLI, ['gpu', 'run', '--', target('hello'), '7'], { encoding: 'utf8', cwd: dir });
  assert.equal(r.status, 7);
  assert.match(r.stdout, /^hello from C\narg\[1\]=7\n/);
  const said = r.stderr.match(/no GPU collection happened: [^\n]*/g) ?? [];
  assert.equal(said.length, 1, r.stderr);
  assert.match(said[0], /no (process of the program initialized CUDA|NVIDIA driver loaded)/);
  assert.match(r.stderr, /no store was kept \(nothing was collected\)/);
  assert.deepEqual(fs.readdirSync(dir).filter((f) => f.endsWith('.strata')), []);
});

test('gpu run --profile puts the request in the program\'s environment, and refuses a bad one before running anything', () => {
  const r = spawnSync(CLI, ['gpu', 'run', '--profile', 'ns::gemm:3', '--', 'env'], { encoding: 'utf8', cwd: dir });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^STRATA_GPU_PROFILE=ns::gemm:3$/m);
  assert.match(r.stdout, /^CUDA_INJECTION64_PATH=\S*libstrata_cupti\.so$/m);
  for (const [args, says] of [[['--profile', 'gemm:65'], /the count of launches must be 1 to 64 \(got 65\)/],
    [['--profile', 'two words'], /without spaces or ';'/], [['--profile'], /--profile needs NAME\[:N\]/]]) {
    const bad = spawnSync(CLI, ['gpu', 'run', ...args, '--', 'env'], { encoding: 'utf8', cwd: dir });
    assert.equal(bad.status, 2, args.join(' '));
    assert.match(bad.stderr, says);
    assert.doesNotMatch(bad.stdout, /STRATA_GPU_PROFILE/);
  }
  assert.deepEqual(fs.readdirSync(dir).filter((f) => f.endsWith('.strata')), []);
});

test('gpu kernel prints a launch\'s measured metrics, and --json gives them as gpuKernel does', () => {
  const store = writeStore(dir, (name) => lineOf(LAUNCHER, name), nativeLine(NATIVE_SOURCE, 'combine_call'), 'measured.strata',
    { metrics: true });
  const r = gpu(['kernel', 'gemm', store]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^  measured      SM throughput 71\.2 %, DRAM throughput 18\.5 %, achieved occupancy 46\.8 %, GPU time 201024\.0 ns \(8 replay passes\)$/m);
  const body = gpuJson(['kernel', 'gemm', store]);
  assert.deepEqual(body.metrics, { smThroughputPct: 71.25, dramThroughputPct: 18.5, achievedOccupancyPct: 46.75, durationNs: 201024, passes: 8 });
});

// The CUDA examples are built where nvcc is; here they find no driver and say so themselves.
const VECTOR_ADD = path.resolve(path.dirname(CLI), '../../examples/cuda/vector_add');
test('gpu run of a CUDA program on a machine without a GPU runs it and says why nothing was collected',
  { skip: fs.existsSync(VECTOR_ADD) ? false : `${VECTOR_ADD} does not exist (the CUDA examples are built where CMake finds nvcc)` }, () => {
    const store = path.join(dir, 'va.strata');
    const r = spawnSync(CLI, ['gpu', 'run', '--stacks', '--store', store, '--', VECTOR_ADD, '10'], { encoding: 'utf8' });
    const gpuHere = fs.existsSync('/proc/driver/nvidia/version');
    if (gpuHere) {
      assert.equal(r.status, 0, r.stderr);
      assert.equal(gpuJson(['top', store]).kernels[0].count, 10);
      return;
    }
    assert.notEqual(r.status, 0); // the program's own CUDA error
    assert.match(r.stderr, /vector_add\.cu:\d+: .* failed: cuda\w+/);
    const said = r.stderr.match(/no GPU collection happened: [^\n]*/g) ?? [];
    assert.equal(said.length, 1, r.stderr);
    assert.match(said[0], /no NVIDIA driver loaded \(\/proc\/driver\/nvidia\/version does not exist\)/);
    // A store named with --store is kept (empty) and opens.
    assert.equal(gpuJson(['top', store]).records, 0);
  });

// The PyTorch loop runs on the CPU here (Debian's python3-torch) under `strata gpu run`.
const TORCH_PYTHON = '/usr/bin/python3';
const hasTorch = spawnSync(TORCH_PYTHON, ['-c', 'import torch'], { encoding: 'utf8' }).status === 0;
test('gpu run of the PyTorch example trains on the CPU and says no GPU collection happened',
  { skip: !hasTorch ? `PyTorch is not installed for ${TORCH_PYTHON} (Debian: apt-get install python3-torch)`
    : fs.existsSync('/proc/driver/nvidia/version') ? 'a GPU machine: the example trains on the GPU there, which scripts/gpu-check.sh checks' : false }, () => {
    const script = path.join(REPO, 'examples/python/train_torch.py');
    const r = spawnSync(CLI, ['gpu', 'run', '--stacks', '--', TORCH_PYTHON, script, '--steps', '20', '--hidden', '32'],
      { encoding: 'utf8', cwd: dir, timeout: 300_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /training on the CPU/);
    assert.match(r.stdout, /train_torch: 20 steps on cpu in [0-9.]+ s, final loss [0-9.]+\n$/);
    assert.equal((r.stderr.match(/no GPU collection happened/g) ?? []).length, 1, r.stderr);
  });
