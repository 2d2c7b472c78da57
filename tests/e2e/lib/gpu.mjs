// Helpers for the GPU end-to-end tests: traces the tests write (torch.profiler/Kineto JSON,
// plain and gzip; Nsight Systems SQLite through Python's sqlite3; a Strata store with launch
// sites through tests/targets/gpu/make_gpu_store), a session that opens one, and the custom
// requests. Times start at BASE ns (10^12), small enough for JavaScript to read exactly.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { REPO, TARGETS, exitOf, startStdio, withTimeout } from './harness.mjs';
import { lineOf } from './python.mjs';

export const BASE = 1_000_000_000_000;
export const GEMM = 'gemm(float*, float*, float*, int)';  // demangled _Z4gemmPfS_S_i
export const RELUS = 400;  // relu_kernel launches in kinetoTrace(): 2 µs each, every 5 µs on stream 8
export const LAUNCHER = path.join(REPO, 'tests/targets/python/gpu_launcher.py');
export const MAKE_STORE = path.join(TARGETS, 'make_gpu_store');
export const INIT = { adapterID: 'strata', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' };

export function tempDir() { return fs.mkdtempSync(path.join(os.tmpdir(), 'strata-gpu-e2e-')); }

// A torch.profiler trace: an op launching gemm on stream 7 (with its runtime call and the ac2g
// flow) inside three Python frames of gpu_launcher.py (with_stack's python_function events,
// and a module scope that is no frame), RELUS relu kernels on stream 8, a copy, a memset, a
// sync; device properties first and baseTimeNanoseconds last, as torch writes them. Times are
// µs after BASE.
export const KINETO_RECORDS = RELUS + 10;
export function kinetoEvents() {
  const py = (name, ts, dur) => ({ ph: 'X', cat: 'python_function', name, pid: 4000, tid: 4001, ts, dur });
  const ev = [
    { ph: 'M', name: 'process_name', pid: 4000, tid: 0, args: { name: 'python' } },
    py(`${LAUNCHER}(${lineOf(LAUNCHER, 'main_loop')}): main`, 90, 90),
    py(`${LAUNCHER}(${lineOf(LAUNCHER, 'train_step')}): train_step`, 95, 60),
    py('nn.Module: Linear_0', 98, 55),
    py(`${LAUNCHER}(${lineOf(LAUNCHER, 'launch_gemm')}): launch_gemm`, 99, 52),
    { ph: 'X', cat: 'cpu_op', name: 'aten::mm', pid: 4000, tid: 4001, ts: 100, dur: 50, args: { 'External id': 10 } },
    { ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: 4000, tid: 4001, ts: 110, dur: 5, args: { 'External id': 10, correlation: 77 } },
    { ph: 's', id: 77, pid: 4000, tid: 4001, ts: 110, cat: 'ac2g', name: 'ac2g' },
    { ph: 'X', cat: 'kernel', name: '_Z4gemmPfS_S_i', pid: 0, tid: 7, ts: 120, dur: 30,
      args: { 'External id': 10, device: 0, context: 1, stream: 7, correlation: 77, 'registers per thread': 32,
        'shared memory': 4096, grid: [64, 1, 1], block: [256, 1, 1] } },
    { ph: 'f', id: 77, pid: 0, tid: 7, ts: 120, cat: 'ac2g', name: 'ac2g', bp: 'e' },
    { ph: 'X', cat: 'gpu_memcpy', name: 'Memcpy HtoD (Pageable -> Device)', pid: 0, tid: 7, ts: 155, dur: 3,
      args: { device: 0, context: 1, stream: 7, correlation: 78, bytes: 1048576 } },
    { ph: 'X', cat: 'gpu_memset', name: 'Memset (Device)', pid: 0, tid: 7, ts: 160, dur: 1, args: { device: 0, stream: 7, bytes: 256 } },
    { ph: 'X', cat: 'cuda_sync', name: 'Stream Sync', pid: 0, tid: 7, ts: 170, dur: 10, args: { device: 0, stream: 7 } },
  ];
  for (let i = 0; i < RELUS; ++i) {
    ev.push({ ph: 'X', cat: 'kernel', name: 'relu_kernel', pid: 0, tid: 8, ts: 200 + i * 5, dur: 2,
      args: { device: 0, stream: 8, grid: [1, 1, 1], block: [32, 1, 1] } });
  }
  return ev;
}

// A training step's forward and backward as torch.profiler 2.x writes them: aten::addmm (the
// sequence number 8; aten::linear and aten::t share 7) launches forward_gemm inside
// launch_gemm's python_function; AddmmBackward0 (the same number) on autograd's engine thread
// 4002, which runs no Python, launches backward_gemm through aten::mm.
export function backwardEvents() {
  const py = (name, ts, dur) => ({ ph: 'X', cat: 'python_function', name, pid: 4000, tid: 4001, ts, dur });
  const op = (name, tid, ts, dur, seq, ext) => ({ ph: 'X', cat: 'cpu_op', name, pid: 4000, tid, ts, dur,
    args: { ...(seq >= 0 ? { 'Fwd thread id': 1, 'Sequence number': seq } : {}), ...(ext ? { 'External id': ext } : {}) } });
  const launch = (tid, ts, ext, corr, name, kts) => [
    { ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: 4000, tid, ts, dur: 3, args: { 'External id': ext, correlation: corr } },
    { ph: 'X', cat: 'kernel', name, pid: 0, tid: 7, ts: kts, dur: 5, args: { 'External id': ext, device: 0, stream: 7, correlation: corr } },
  ];
  return [
    py(`${LAUNCHER}(${lineOf(LAUNCHER, 'main_loop')}): main`, 10, 190),
    py(`${LAUNCHER}(${lineOf(LAUNCHER, 'launch_gemm')}): launch_gemm`, 20, 70),
    op('aten::linear', 4001, 25, 50, 7), op('aten::t', 4001, 26, 3, 7), op('aten::addmm', 4001, 30, 40, 8, 20),
    ...launch(4001, 35, 20, 100, 'forward_gemm', 40),
    py(`${LAUNCHER}(${lineOf(LAUNCHER, 'train_step')}): train_step`, 200, 300),
    op('autograd::engine::evaluate_function: AddmmBackward0', 4002, 300, 60, 8), op('AddmmBackward0', 4002, 301, 50, 8),
    op('aten::mm', 4002, 305, 20, -1, 30),
    ...launch(4002, 306, 30, 101, 'backward_gemm', 320),
  ];
}

export function kinetoText(events = kinetoEvents()) {
  const device = { id: 0, name: 'NVIDIA H100 80GB HBM3', totalGlobalMem: 85045379072, computeMajor: 9, computeMinor: 0,
    maxThreadsPerBlock: 1024, maxThreadsPerMultiprocessor: 2048, regsPerBlock: 65536, regsPerMultiprocessor: 65536,
    warpSize: 32, sharedMemPerBlock: 49152, sharedMemPerMultiprocessor: 233472, numSms: 132, sharedMemPerBlockOptin: 232448 };
  // One event a line, as torch writes them, so positions in errors name lines.
  return `{\n  "schemaVersion": 1,\n  "deviceProperties": [${JSON.stringify(device)}],\n  "traceEvents": [\n` +
    events.map((e) => `  ${JSON.stringify(e)}`).join(',\n') +
    `\n  ],\n  "traceName": "e2e.pt.trace.json",\n  "baseTimeNanoseconds": ${BASE}\n}\n`;
}

export function writeKineto(dir, name = 'trace.json', text = kinetoText()) {
  const file = path.join(dir, name);
  fs.writeFileSync(file, name.endsWith('.gz') ? zlib.gzipSync(text) : text);
  return file;
}

// An Nsight Systems export (its table and column names): NSYS_KERNELS matmul launches, each by
// a runtime call, one copy; session start BASE. Written by Python's sqlite3 (standard library).
export const NSYS_KERNELS = 50;
const NSYS_SCRIPT = `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
base, n = int(sys.argv[2]), int(sys.argv[3])
gpid = (1 << 56) | (4242 << 24)
gtid = gpid | 4243
db.executescript("""
CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1,'cudaLaunchKernel'),(3,'_Z6matmulPfS_S_i'),(4,'matmul(float*, float*, float*, int)'),(5,'matmul'),(7,'cudaMemcpyAsync');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
  mangledName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER,
  registersPerThread INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
  srcKind INTEGER, dstKind INTEGER);
CREATE TABLE TARGET_INFO_SESSION_START_TIME(utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
""")
db.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, '', '')", (base,))
for i in range(n):
    t = 1000000 + i * 10000
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,1,?,?,1,0,NULL)", (t, t + 3000, gtid, 100 + i))
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,0,1,7,?,?,4,5,3,128,1,1,256,1,1,40,1024,0)",
               (t + 5000, t + 9000, 100 + i, gpid))
db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (500000,501000,1,?,99,7,0,NULL)", (gtid,))
db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (502000,512000,0,1,8,99,?,65536,2,3,2)", (gpid,))
if len(sys.argv) > 4:  # broken: a kernel table without its start column
    db.executescript("DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(end INTEGER, deviceId INTEGER);")
db.commit()
`;

// Python 3 with its sqlite3 module, or null (the Nsight cases are then skipped, saying why).
export const PYTHON3 = (() => {
  for (const p of ['python3', '/usr/bin/python3']) {
    try { execFileSync(p, ['-c', 'import sqlite3'], { stdio: 'ignore' }); return p; } catch { /* next */ }
  }
  return null;
})();

export function writeNsys(dir, name = 'report.sqlite', { broken = false } = {}) {
  const file = path.join(dir, name);
  execFileSync(PYTHON3, ['-c', NSYS_SCRIPT, file, String(BASE), String(NSYS_KERNELS), ...(broken ? ['broken'] : [])]);
  return file;
}

// The store live collection would leave: gemm launched three times from gpu_launcher.py, by
// cudaLaunchKernel called from combine() of the native debuggee (NATIVE_SITE).
export const NATIVE_PROGRAM = path.join(TARGETS, 'native_demo');
export const NATIVE_SOURCE = path.join(REPO, 'tests/targets/native/dap/native_demo.cpp');
export function writeStore(dir, lineOf, nativeLine, name = 'recorded.strata', { metrics = false } = {}) {
  const file = path.join(dir, name);
  execFileSync(MAKE_STORE, [file, LAUNCHER, String(lineOf('launch_gemm')), String(lineOf('train_step')),
    String(lineOf('main_loop')), NATIVE_PROGRAM, NATIVE_SOURCE, String(nativeLine), ...(metrics ? ['metrics'] : [])]);
  return file;
}

// A session that opened `trace`: returns the client once `initialized` came.
export async function openTrace(trace, { init = {}, launch = {} } = {}) {
  const c = await startStdio();
  await c.initializeRequest({ ...INIT, ...init });
  const initialized = c.waitForEvent('initialized', 60000);
  await c.launchRequest({ trace, ...launch });
  await initialized;
  await c.configurationDoneRequest();
  return c;
}

// Disconnects and waits for the adapter to exit: it closes the session's store on the way out
// (a checkpoint writes the file), so its folder is removed only afterwards.
export async function closeSession(c) {
  const exited = exitOf(c.adapterProcess);
  await c.disconnectRequest();
  await withTimeout(exited, 30000, 'the adapter to exit after disconnect');
}

// A request whose failure is part of the test: the response, success or not.
export async function raw(c, command, args) {
  try { return await c.send(command, args); } catch (e) { return { success: false, message: e.message, error: e }; }
}

// The error response the client received for the latest `command` request.
export function lastError(c, command) {
  const r = c.received.filter((m) => m.type === 'response' && m.command === command && !m.success).pop();
  if (!r) throw new Error(`no failed '${command}' response`);
  return r;
}

export async function repl(c, expression, frameId) {
  const r = await c.evaluateRequest({ expression, context: 'repl', ...(frameId ? { frameId } : {}) });
  return r.body.result;
}

// A Perfetto protobuf trace read back (protos/perfetto/trace: Trace.packet = 1; TracePacket
// timestamp = 8, trusted_packet_sequence_id = 10, track_event = 11, track_descriptor = 60;
// TrackEvent type = 9, track_uuid = 11, categories = 22, name = 23; TrackDescriptor uuid = 1,
// process = 3 {pid = 1, process_name = 6}, thread = 4 {pid = 1, tid = 2, thread_name = 5}).
// Varints are BigInts: track uuids pass 2^53.
export function readPerfetto(bytes) {
  const fields = (buf) => {
    const out = [];
    let i = 0;
    const varint = () => {
      let v = 0n, shift = 0n;
      for (;;) {
        const b = buf[i++];
        if (b === undefined) throw new Error('a varint runs past the end');
        v |= BigInt(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
        shift += 7n;
      }
    };
    while (i < buf.length) {
      const key = varint();
      const [field, wire] = [Number(key >> 3n), Number(key & 7n)];
      if (wire === 0) out.push([field, varint()]);
      else if (wire === 2) {
        const n = Number(varint());
        if (i + n > buf.length) throw new Error('a field runs past the end');
        out.push([field, buf.subarray(i, i + n)]);
        i += n;
      } else throw new Error(`wire type ${wire} is not used by Strata's export`);
    }
    return out;
  };
  const text = (b) => Buffer.from(b).toString('utf8');
  const get = (fs, n) => fs.find(([f]) => f === n)?.[1];
  return fields(bytes).map(([f, p]) => {
    if (f !== 1) throw new Error(`Trace field ${f}`);
    const pf = fields(p);
    const packet = { ts: get(pf, 8), seq: get(pf, 10) };
    const ev = get(pf, 11), desc = get(pf, 60);
    if (ev) {
      const ef = fields(ev);
      packet.event = { type: Number(get(ef, 9)), track: get(ef, 11), name: get(ef, 23) && text(get(ef, 23)),
        categories: ef.filter(([n]) => n === 22).map(([, v]) => text(v)) };
    }
    if (desc) {
      const df = fields(desc);
      packet.track = { uuid: get(df, 1) };
      const proc = get(df, 3), thread = get(df, 4);
      if (proc) packet.track.process = { pid: get(fields(proc), 1), name: text(get(fields(proc), 6)) };
      if (thread) {
        const tf = fields(thread);
        packet.track.thread = { pid: get(tf, 1), tid: get(tf, 2), name: text(get(tf, 5)) };
      }
    }
    return packet;
  });
}
