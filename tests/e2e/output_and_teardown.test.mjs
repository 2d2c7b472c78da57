// 100 MB of output arrives whole and in order; disconnect, terminate and a vanished client
// each leave the debuggee in the state the user asked for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startStdio, startServer, startTcp, runToEnd, assertClean, target, isRunning, waitUntil, exitOf, withTimeout } from './lib/harness.mjs';

test('100 MB of stdout arrives complete and in order', { timeout: 240000 }, async () => {
  const c = await startStdio();
  // Check incrementally instead of keeping 100 MB of events around.
  let expectedLine = 0;
  let partial = '';
  let bytes = 0;
  let bad = null;
  c.on('output', (e) => {
    if (e.body.category !== 'stdout') return;
    bytes += Buffer.byteLength(e.body.output);
    const text = partial + e.body.output;
    const lines = text.split('\n');
    partial = lines.pop();
    for (const l of lines) {
      const want = String(expectedLine).padStart(10, '0') + ' abcdefghijklmnopqrst';
      if (l !== want && !bad) bad = `line ${expectedLine}: got '${l.slice(0, 40)}'`;
      expectedLine++;
    }
  });
  const origDispatch = c.dispatch.bind(c);
  // Keep only non-output messages for the ordering check, but validate all.
  c.dispatch = (body) => { origDispatch(body); const m = c.received.at(-1); if (m.event === 'output' && m.body.category === 'stdout') c.received.pop(); };
  const code = await runToEnd(c, { noDebug: true, program: target('big_output'), args: ['100'] });
  assert.equal(bad, null);
  assert.equal(code, 0);
  assert.equal(bytes, 100 * 1024 * 1024);
  assert.equal(partial, '');
  assert.equal(expectedLine, 100 * 1024 * 1024 / 32);
  assert.equal(c.output('stderr'), `done ${expectedLine} lines\n`);
  await c.disconnectRequest();
  assertClean(assert, c);
});

async function launchTicker(c, file) {
  await c.initializeRequest();
  const proc = c.waitForEvent('process');
  await c.launchRequest({ noDebug: true, program: target('ticker'), args: [file] });
  await c.configurationDoneRequest();
  const pid = (await proc).body.systemProcessId;
  await waitUntil(() => fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes('tick 2'), 5000, 'ticks');
  return pid;
}

const tickFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'strata-tick-')), 'ticks');
const ticks = (f) => fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).length;

test('disconnect terminates a launched program by default', async () => {
  const c = await startStdio();
  const pid = await launchTicker(c, tickFile());
  assert.ok(isRunning(pid));
  // 1 >> disconnect  << exited, terminated, disconnect response
  await c.disconnectRequest({});
  assert.equal(isRunning(pid), false, 'the program is gone when disconnect answers');
  assert.ok(c.eventsNamed('exited').length === 1);
  assert.equal(await withTimeout(exitOf(c.adapterProcess), 5000, 'adapter exit'), 0);
  assertClean(assert, c);
});

test('disconnect with terminateDebuggee:false leaves the program running, output and all', async () => {
  const file = tickFile();
  const c = await startStdio();
  const pid = await launchTicker(c, file);
  try {
    await c.disconnectRequest({ terminateDebuggee: false });
    assert.equal(await withTimeout(exitOf(c.adapterProcess), 5000, 'adapter exit'), 0);
    const before = ticks(file);
    // It keeps writing to stdout (now drained for it) and to its file after the adapter left
    // (the wait is a hang guard: a program blocked on its stdout stops ticking for good).
    await waitUntil(() => ticks(file) > before + 3, 20000, 'the program to tick on');
    assert.ok(isRunning(pid));
    assertClean(assert, c);
  } finally {
    process.kill(pid, 'SIGKILL');
  }
});

test('a client that closes the pipes without disconnect leaves the program running', async () => {
  const file = tickFile();
  const c = await startStdio();
  const pid = await launchTicker(c, file);
  try {
    c.adapterProcess.stdin.end();
    assert.equal(await withTimeout(exitOf(c.adapterProcess), 5000, 'adapter exit'), 0);
    const before = ticks(file);
    await waitUntil(() => ticks(file) > before + 3, 20000, 'the program to tick on');
    assert.ok(isRunning(pid));
  } finally {
    process.kill(pid, 'SIGKILL');
  }
});

test('terminate asks the program to end (SIGTERM) and reports how it ended', async () => {
  const c = await startStdio();
  const pid = await launchTicker(c, tickFile());
  const terminated = c.waitForEvent('terminated');
  await c.terminateRequest();
  await terminated;
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 128 + 15);
  assert.match(c.output('console'), /Process terminated by signal 15 \(SIGTERM\)/);
  assert.equal(isRunning(pid), false);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('over TCP, disconnect while running kills the program and the listener serves again', async () => {
  const { server, port } = await startServer();
  try {
    const c = await startTcp(port);
    const pid = await launchTicker(c, tickFile());
    await c.disconnectRequest({});
    assert.equal(isRunning(pid), false);
    assertClean(assert, c);
    const again = await startTcp(port);
    const code = await runToEnd(again, { noDebug: true, program: target('hello'), args: ['4'] });
    assert.equal(code, 4);
    await again.disconnectRequest();
    assertClean(assert, again);
  } finally {
    server.kill();
  }
});

test('several sessions at once on one listener', async () => {
  const { server, port } = await startServer();
  try {
    const clients = await Promise.all([1, 2, 3].map(() => startTcp(port)));
    const codes = await Promise.all(clients.map((c, i) => runToEnd(c, { noDebug: true, program: target('hello'), args: [String(10 + i)] })));
    assert.deepEqual(codes, [10, 11, 12]);
    for (const c of clients) {
      assert.match(c.output('stdout'), /arg\[1\]=1[0-2]/);
      await c.disconnectRequest();
      assertClean(assert, c);
    }
  } finally {
    server.kill();
  }
});
