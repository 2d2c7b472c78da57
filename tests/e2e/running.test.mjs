// Requests that race a resume: a client may ask for a stack just after `continue` (Emacs
// dap-mode does when the user continues quickly). Whichever backend owns the thread, the answer
// says the thread is running and the request needs it stopped; after a pause, all works again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertClean, forEachPython, waitUntil } from './lib/harness.mjs';
import { demoSrc, lineOf, launchNative } from './lib/native.mjs';
import { launchAndStop, lineOf as pyLine, pyTarget } from './lib/python.mjs';

// Sends `continue` and the requests right behind it in one go, as a quick client does, and
// returns the responses to the requests.
async function continueThen(c, threadId, requests) {
  const frames = [['continue', { threadId }], ...requests]
    .map(([command, args], i) => JSON.stringify({ seq: 9000 + i, type: 'request', command, arguments: args }))
    .map((text) => `Content-Length: ${Buffer.byteLength(text, 'utf8')}\r\n\r\n${text}`);
  c.writeRaw(frames.join(''), false);
  const answer = (i) => c.received.find((m) => m.type === 'response' && m.request_seq === 9000 + i);
  await waitUntil(() => requests.every((_, i) => answer(i + 1)), 20000, 'the answers');
  return requests.map((_, i) => answer(i + 1));
}

async function check(c, tid, path) {
  const [stack, info, step] = await continueThen(c, tid, [
    ['stackTrace', { threadId: tid }], ['exceptionInfo', { threadId: tid }], ['next', { threadId: tid }]]);
  for (const [r, command] of [[stack, 'stackTrace'], [info, 'exceptionInfo'], [step, 'next']]) {
    assert.equal(r.success, false, command);
    assert.equal(r.message, `thread ${tid} is running: '${command}' needs it stopped (pause it, or wait until it stops)`);
    assert.equal(r.body.error.id, 1009);
  }
  // Stopped again, the same requests are served.
  const paused = c.waitForEvent('stopped', 30000);
  await c.pauseRequest({ threadId: tid });
  const p = await paused;
  const st = await c.stackTraceRequest({ threadId: p.body.threadId });
  assert.ok(st.body.stackFrames.some((f) => f.source?.path === path), JSON.stringify(st.body.stackFrames.slice(0, 5)));
}

test('native: stackTrace, exceptionInfo and next on a thread that a continue just resumed', async () => {
  const line = lineOf(demoSrc, 'output_line');
  const { c, stopped } = await launchNative(['output', '-', '500', '10'], { breakpoints: { [demoSrc]: [{ line }] } });
  await c.setBreakpointsRequest({ source: { path: demoSrc }, breakpoints: [] });
  await check(c, stopped.body.threadId, demoSrc);
  await c.disconnectRequest({ terminateDebuggee: true });
  assertClean(assert, c);
});

forEachPython((py) => {
  test(`python ${py.split('/').pop()}: stackTrace, exceptionInfo and next on a thread that a continue just resumed`, async () => {
    const program = pyTarget('ticker.py');
    const line = pyLine(program, 'tick');
    const { c, stopped } = await launchAndStop(py, program, { breakpoints: { [program]: [{ line }] } });
    await c.setBreakpointsRequest({ source: { path: program }, breakpoints: [] });
    await check(c, stopped.body.threadId, program);
    await c.disconnectRequest({ terminateDebuggee: true });
    assertClean(assert, c);
  });
});
