// cancel: a launch or attach still waiting is answered "cancelled" and what it started goes
// (the port it listened on, the program it started); any other request, answered or not, and
// an unknown id are no error: the cancel succeeds and the request gets its own answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startStdio, assertClean, exitOf, withTimeout, waitUntil, isRunning, PY_TARGETS } from './lib/harness.mjs';
import { INIT, launchNative, frames, demoSrc, lineOf } from './lib/native.mjs';

const lastSeq = (c) => Math.max(...c.pendingRequests.keys());

function connectOutcome(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve('connected'); });
    s.once('error', (e) => resolve(e.code));
  });
}

test('cancel of an attach waiting for a program to dial in: "cancelled", and the port closes', async () => {
  const c = await startStdio();
  await c.initializeRequest(INIT);
  const attach = c.attachRequest({ listen: { host: '127.0.0.1', port: 0 }, timeout: 600 });
  const attachSeq = lastSeq(c);
  const attachFails = assert.rejects(attach, /^Error: cancelled$/);
  await waitUntil(() => /Waiting for a Python program to connect to 127\.0\.0\.1:\d+/.test(c.output('console')), 10000, 'the wait');
  const port = Number(/127\.0\.0\.1:(\d+)/.exec(c.output('console'))[1]);
  assert.equal(await connectOutcome(port), 'connected', 'the adapter listens before the cancel');
  const cancel = await c.customRequest('cancel', { requestId: attachSeq });
  assert.equal(cancel.success, true);
  await withTimeout(attachFails, 10000, 'the attach to be answered');
  const answered = c.received.filter((m) => m.type === 'response').map((m) => [m.command, m.success]);
  assert.deepEqual(answered.slice(-2), [['attach', false], ['cancel', true]], 'the cancelled request is answered first');
  assert.equal(await connectOutcome(port), 'ECONNREFUSED', 'nothing listens once the attach is cancelled');
  await c.disconnectRequest();
  assert.equal(await withTimeout(exitOf(c.adapterProcess), 10000, 'adapter exit'), 0);
  assertClean(assert, c);
});

test('cancel of a Python launch waiting for its program to connect: "cancelled", and the program is ended', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-cancel-'));
  // An "interpreter" that never connects: it notes its pid and sleeps.
  const python = path.join(dir, 'python3.12');
  const pidFile = path.join(dir, 'pid');
  fs.writeFileSync(python, `#!/bin/sh\necho $$ > ${pidFile}\nexec sleep 600\n`, { mode: 0o755 });
  const c = await startStdio();
  try {
    await c.initializeRequest(INIT);
    const launch = c.launchRequest({ program: path.join(PY_TARGETS, 'hello.py'), python });
    const launchSeq = lastSeq(c);
    const launchFails = assert.rejects(launch, /^Error: cancelled$/);
    await waitUntil(() => fs.existsSync(pidFile) && /^\d+\n$/.test(fs.readFileSync(pidFile, 'utf8')), 10000, 'the program to start');
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    assert.ok(isRunning(pid));
    const cancel = await c.customRequest('cancel', { requestId: launchSeq });
    assert.equal(cancel.success, true);
    await withTimeout(launchFails, 10000, 'the launch to be answered');
    await waitUntil(() => !isRunning(pid), 10000, 'the program to be ended');
    await c.disconnectRequest();
    assert.equal(await withTimeout(exitOf(c.adapterProcess), 10000, 'adapter exit'), 0);
    assertClean(assert, c);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('cancel of other requests, answered, in flight or unknown: the cancel succeeds, each request gets its own answer', async () => {
  const { c, stopped } = await launchNative(['loop'], { breakpoints: { [demoSrc]: [{ line: lineOf(demoSrc, 'loop_body') }] } });
  const tid = stopped.body.threadId;
  // Answered already.
  const threads = await c.threadsRequest();
  const answeredSeq = threads.request_seq;
  assert.equal((await c.customRequest('cancel', { requestId: answeredSeq })).success, true);
  // Unknown, and none named at all.
  assert.equal((await c.customRequest('cancel', { requestId: 987654 })).success, true);
  assert.equal((await c.customRequest('cancel', {})).success, true);
  // In flight: a stackTrace is not cancellable; it is answered in full all the same.
  const stack = c.stackTraceRequest({ threadId: tid, startFrame: 0, levels: 20 });
  const cancel = c.customRequest('cancel', { requestId: lastSeq(c) });
  const [st, cancelled] = await Promise.all([stack, cancel]);
  assert.equal(cancelled.success, true);
  assert.equal(st.success, true);
  assert.equal(st.body.stackFrames[0].name, 'loop');
  assert.equal(st.body.stackFrames[0].line, lineOf(demoSrc, 'loop_body'));
  // The session goes on as before.
  assert.equal((await frames(c, tid, 0, 1)).stackFrames[0].name, 'loop');
  const responses = c.received.filter((m) => m.type === 'response');
  assert.equal(responses.filter((m) => m.command === 'stackTrace' && !m.success).length, 0);
  await c.disconnectRequest({ terminateDebuggee: true });
  assertClean(assert, c);
});
