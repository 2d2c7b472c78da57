// Sessions of one `strata-dap --listen` share its thread: one session tearing down a native
// program must never hold up the others. Here the torn-down session's engine is stuck for good
// (single-stepping a pause(2) system call that never returns) while another session works.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startTcp, exitOf, withTimeout, waitUntil, assertClean } from './lib/harness.mjs';
import { DEMO, INIT, demoSrc, lineOf } from './lib/native.mjs';

test('a native session torn down with its engine stuck does not hold up another session', async () => {
  const { server, port } = await startServer();
  let exited = null;
  try {
    // Session A: a breakpoint on the `syscall` of pause(2), then continue: the engine steps over
    // that instruction by single-stepping it, and the step never ends.
    const a = await startTcp(port);
    await a.initializeRequest(INIT);
    const aReady = a.waitForEvent('initialized', 30000);
    await a.launchRequest({ program: DEMO, args: ['block'] });
    await aReady;
    await a.configurationDoneRequest();
    await waitUntil(() => /syscall at 0x[0-9a-f]+/.test(a.output('stdout')), 20000, 'the address of the syscall');
    const address = /syscall at (0x[0-9a-f]+)/.exec(a.output('stdout'))[1];
    const hit = a.waitForEvent('stopped', 30000);
    const set = await a.send('setInstructionBreakpoints', { breakpoints: [{ instructionReference: address }] });
    assert.equal(set.body.breakpoints[0].verified, true);
    assert.equal((await hit).body.reason, 'instruction breakpoint');
    a.send('continue', { threadId: (await hit).body.threadId }).catch(() => {});  // never answered: the engine is stuck
    await new Promise((resolve) => setTimeout(resolve, 300));

    // Session B starts, then A's client goes away, tearing A's native debugger down.
    const b = await startTcp(port);
    await b.initializeRequest(INIT);
    const bReady = b.waitForEvent('initialized', 30000);
    await b.launchRequest({ program: DEMO, args: ['steps'] });
    await bReady;
    const line = lineOf(demoSrc, 'steps_call');
    await b.setBreakpointsRequest({ source: { path: demoSrc }, breakpoints: [{ line }] });
    const bStop = b.waitForEvent('stopped', 30000);
    await b.configurationDoneRequest();
    const stop = await bStop;
    a._socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    // B is answered, again and again, while A's teardown is stuck.
    // A's teardown never ends while the adapter runs, so a held-up thread never answers B: the
    // timeout is a hang guard, not a measurement.
    for (let i = 0; i < 10; ++i) {
      const st = await withTimeout(b.stackTraceRequest({ threadId: stop.body.threadId }), 20000, 'a stack trace for B');
      assert.equal(st.body.stackFrames[0].line, line);
    }
    const ended = b.waitForEvent('terminated', 30000);
    await b.continueRequest({ threadId: stop.body.threadId });
    await ended;
    assert.match(b.output('stdout'), /steps 13 5\n/);
    await b.disconnectRequest();
    assertClean(assert, b);
  } finally {
    // SIGTERM: the adapter exits although A's teardown never finishes (it waits a bounded time).
    server.kill('SIGTERM');
    exited = await withTimeout(exitOf(server), 20000, 'adapter exit').catch(() => null);
    if (exited === null) server.kill('SIGKILL');
  }
  assert.equal(exited, 0, 'the adapter exits on SIGTERM');
});
