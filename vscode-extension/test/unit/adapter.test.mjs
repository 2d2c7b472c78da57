// Finding and checking strata-dap, and the GPU trace panel's own session (out/dap.js) against
// the real strata-dap (STRATA_DAP, else the asan build's) on a torch.profiler trace written here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ext = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const adapter = require(path.join(ext, 'out/adapter.js'));
const dap = require(path.join(ext, 'out/dap.js'));
const STRATA_DAP = process.env.STRATA_DAP ?? path.join(ext, '..', 'build', 'asan', 'adapter', 'strata-dap');
const noAdapter = fs.existsSync(STRATA_DAP) ? false : `no strata-dap at ${STRATA_DAP} (build the asan preset or set STRATA_DAP)`;
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'strata-vscode-dap-'));

test('DAP frames cut anywhere are read whole', () => {
  const got = [];
  const reader = new dap.FrameReader((m) => got.push(m), (e) => assert.fail(e));
  const bytes = Buffer.concat([dap.frame({ seq: 1, type: 'event', event: 'a', body: { s: 'é' } }), dap.frame({ seq: 2, type: 'event', event: 'b' })]);
  for (let i = 0; i < bytes.length; i += 7) reader.push(bytes.subarray(i, i + 7));
  assert.deepEqual(got.map((m) => m.event), ['a', 'b']);
  assert.equal(got[0].body.s, 'é');
  assert.equal(dap.tokenLine('abc').toString(), 'STRATA-TOKEN abc\n');
  assert.throws(() => dap.tokenLine('a b'), /no spaces/);
});

test('the adapter: the setting first, then the one the extension carries (with its agent), then PATH', () => {
  const dir = tmp();
  const missing = adapter.locateAdapter({ setting: path.join(dir, 'nope'), extensionPath: dir, envPath: '' });
  assert.match(missing.error, /strata\.adapterPath names .*nope, which does not exist/);
  const layout = adapter.bundledLayout(dir, 'linux-x64');
  assert.match(adapter.locateAdapter({ extensionPath: dir, envPath: '' }).error, /no strata-dap found.*strata\.adapterPath/);
  fs.mkdirSync(path.dirname(layout.adapter), { recursive: true });
  fs.mkdirSync(path.join(layout.agent, 'strata'), { recursive: true });
  fs.writeFileSync(path.join(layout.agent, 'strata', '__main__.py'), '');
  fs.copyFileSync('/bin/true', layout.adapter);
  if (`${process.platform}-${process.arch}` === 'linux-x64') {
    const bundled = adapter.locateAdapter({ extensionPath: dir, envPath: '' });
    assert.deepEqual(bundled, { path: layout.adapter, source: 'bundled', env: { STRATA_AGENT_PYTHONPATH: layout.agent } });
  }
  const viaSetting = adapter.locateAdapter({ setting: '/bin/true', extensionPath: dir, envPath: '' });
  assert.deepEqual(viaSetting, { path: '/bin/true', source: 'setting', env: {} });
  const onPath = adapter.locateAdapter({ extensionPath: tmp(), envPath: path.dirname(layout.adapter) });
  assert.equal(onPath.source, 'PATH');
});

test('a strata-dap that does not run says so and how to check it', { skip: noAdapter }, async () => {
  const good = await adapter.checkAdapter(STRATA_DAP);
  assert.match(good.version, /strata/i);
  const dir = tmp();
  const broken = path.join(dir, 'strata-dap');
  fs.writeFileSync(broken, '#!/bin/sh\necho "error while loading shared libraries: libdw.so.1" >&2\nexit 127\n', { mode: 0o755 });
  const bad = await adapter.checkAdapter(broken);
  assert.match(bad.error, /does not run: .*libdw\.so\.1.*`.*strata-dap --version`/);
});

function kineto(dir) {
  const file = path.join(dir, 'small.pt.trace.json');
  const ev = [{ ph: 'X', cat: 'kernel', name: 'gemm_kernel', pid: 0, tid: 7, ts: 100, dur: 30,
                args: { device: 0, stream: 7, grid: [64, 1, 1], block: [256, 1, 1] } }];
  for (let i = 0; i < 5; ++i)
    ev.push({ ph: 'X', cat: 'kernel', name: 'relu_kernel', pid: 0, tid: 8, ts: 200 + i * 5, dur: 2, args: { device: 0, stream: 8 } });
  fs.writeFileSync(file, JSON.stringify({ schemaVersion: 1, traceEvents: ev, baseTimeNanoseconds: 1000000000000 }));
  return file;
}

test('a trace panel\'s session: strata-dap opens the trace and answers the GPU requests', { skip: noAdapter }, async (t) => {
  const dir = tmp();
  const events = [];
  const s = await dap.TraceSession.open(STRATA_DAP, process.env, kineto(dir), (name) => events.push(name));
  t.after(() => s.dispose());
  assert.ok(events.includes('progressStart') && events.includes('progressEnd'), `progress reported: ${events}`);
  const summary = await s.customRequest('gpuSummary', { limit: 5 });
  assert.deepEqual(summary.kernels.map((k) => [k.name, k.count]), [['gemm_kernel', 1], ['relu_kernel', 5]]);
  const timeline = await s.customRequest('gpuTimeline', { maxItems: 2 });
  assert.ok(timeline.items.length <= 2);
  await assert.rejects(s.customRequest('gpuKernel', { id: 999999 }), (e) => e.message.length > 0 && e.command === 'gpuKernel');
});

test('a broken trace: the open fails with the adapter\'s words (file and position)', { skip: noAdapter }, async () => {
  const dir = tmp();
  const bad = path.join(dir, 'bad.json');
  fs.writeFileSync(bad, '{"traceEvents": [ {"ph": "X", ');
  await assert.rejects(dap.TraceSession.open(STRATA_DAP, process.env, bad), new RegExp(`cannot open trace: ${bad}: byte \\d+`));
});
