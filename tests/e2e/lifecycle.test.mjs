// Session lifecycle and protocol errors: initialize rules, capabilities, unknown commands,
// bad arguments, malformed messages and framing — the adapter answers or closes cleanly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startStdio, startServer, startTcp, assertClean, exitOf, withTimeout, target } from './lib/harness.mjs';

test('initialize answers capabilities; a launch brings the backend\'s, then initialized', async () => {
  const c = await startStdio();
  // 1 >> initialize  << initialize response (what every backend supports; capabilities.test.mjs)
  const r = await c.initializeRequest();
  assert.equal(r.body.supportsConfigurationDoneRequest, true);
  assert.equal(r.body.supportsTerminateRequest, true);
  assert.equal(r.body.supportTerminateDebuggee, true);
  assert.equal(r.body.supportsCancelRequest, true);
  for (const k of ['supportsStepBack', 'supportsReadMemoryRequest', 'supportsTerminateThreadsRequest']) {
    assert.equal(r.body[k], undefined, k);
  }
  // 2 >> launch (noDebug)  << launch response, then initialized: configuration follows
  const initialized = c.waitForEvent('initialized');
  const terminated = c.waitForEvent('terminated');
  await c.launchRequest({ program: target('hello'), noDebug: true });
  await initialized;
  await c.configurationDoneRequest();
  await terminated;
  const order = c.received.map((m) => m.type === 'event' ? `event:${m.event}` : `${m.type}:${m.command}`);
  assert.equal(order[0], 'response:initialize');
  assert.ok(order.indexOf('event:initialized') > order.indexOf('response:launch'), order.join(' '));
  await c.disconnectRequest();
  assert.equal(await withTimeout(exitOf(c.adapterProcess), 5000, 'adapter exit'), 0);
  assertClean(assert, c);
});

test('requests before initialize, a second initialize and unknown commands fail with a message', async () => {
  const c = await startStdio();
  // 1 >> threads (before initialize)  << error
  await assert.rejects(c.threadsRequest(), /the first request must be 'initialize' \(got 'threads'\)/);
  assert.equal(c.received.filter((m) => m.type === 'event').length, 0, 'no event before initialize');
  await c.initializeRequest();
  await assert.rejects(c.initializeRequest(), /already initialized/);
  await assert.rejects(c.customRequest('frobnicate', { x: 1 }), /Strata does not support the 'frobnicate' request/);
  // Bad arguments name the field.
  await assert.rejects(c.launchRequest({ program: 42 }), /arguments\.program: expected a string, got an integer/);
  await assert.rejects(c.setBreakpointsRequest({ source: { path: '/x.c' }, breakpoints: [{ column: 3 }] }),
    /arguments\.breakpoints\[0\]\.line: required field is missing/);
  await assert.rejects(c.setBreakpointsRequest({ breakpoints: [] }), /arguments\.source: required field is missing/);
  await assert.rejects(c.launchRequest({ program: target('hello'), env: { A: 1 } }), /arguments\.env\.A: expected a string, got an integer/);
  // Error responses carry a structured body, as the schema requires.
  const err = c.received.find((m) => m.type === 'response' && m.command === 'frobnicate');
  assert.equal(err.success, false);
  assert.equal(err.body.error.id, 1003);
  // The session still works.
  const t = await c.threadsRequest();
  assert.deepEqual(t.body.threads, []);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('malformed JSON after initialize is reported and the session goes on', async () => {
  const c = await startStdio();
  await c.initializeRequest();
  const note = c.waitForEvent('output');
  c.writeRaw('{"seq": 3, "type": "request", "command": ');
  const e = await note;
  assert.equal(e.body.category, 'important');
  assert.match(e.body.output, /could not read: malformed JSON/);
  // A request with a usable seq but a bad envelope gets an error response to that seq.
  const got = new Promise((resolve) => c.once('response-7', resolve));
  const origDispatch = c.dispatch.bind(c);
  c.dispatch = (body) => { const m = JSON.parse(body); if (m.request_seq === 7) c.emit('response-7', m); origDispatch(body); };
  c.writeRaw('{"seq": 7, "type": "request", "command": 42}');
  const r = await got;
  assert.equal(r.success, false);
  assert.match(r.message, /command: expected a string, got an integer/);
  assert.deepEqual((await c.threadsRequest()).body.threads, []);
  await c.disconnectRequest();
  assertClean(assert, c);
});

for (const [name, bytes] of [
  ['a negative length', 'Content-Length: -5\r\n\r\n{}'],
  ['a garbage length', 'Content-Length: abc\r\n\r\n{}'],
  ['an oversized length', 'Content-Length: 99999999999\r\n\r\n'],
  ['no Content-Length', 'Content-Type: x\r\n\r\n{}'],
  ['bare newlines', 'Content-Length: 2\n\n{}'],
]) {
  test(`a header with ${name} closes the connection cleanly (stdio)`, async () => {
    const c = await startStdio();
    await c.initializeRequest();
    c.writeRaw(bytes, false);
    assert.equal(await withTimeout(exitOf(c.adapterProcess), 5000, 'adapter exit'), 0);
    const last = c.eventsNamed('output').at(-1);
    assert.match(last.body.output, /not valid DAP framing/);
    assertClean(assert, c);
  });
}

test('garbage before initialize closes the session; the listener serves the next one (TCP)', async () => {
  const { server, port } = await startServer();
  try {
    const bad = await startTcp(port);
    bad.writeRaw('GET / HTTP/1.1\r\nHost: x\r\n\r\n', false);
    await withTimeout(new Promise((r) => bad._socket.once('close', r)), 5000, 'close');
    assert.equal(bad.received.length, 0, 'nothing is sent to a peer that does not speak DAP');
    const good = await startTcp(port);
    const r = await good.initializeRequest();
    assert.equal(r.body.supportsConfigurationDoneRequest, true);
    await good.disconnectRequest();
    assertClean(assert, good);
  } finally {
    server.kill();
  }
});

test('split and coalesced frames are read exactly', async () => {
  const c = await startStdio();
  const init = JSON.stringify({ seq: 1, type: 'request', command: 'initialize', arguments: { adapterID: 'strata' } });
  const threads = JSON.stringify({ seq: 2, type: 'request', command: 'threads' });
  const frame = (s) => `Content-Length: ${Buffer.byteLength(s)}\r\n\r\n${s}`;
  const all = frame(init) + frame(threads);
  const responses = new Promise((resolve) => {
    const seen = [];
    const orig = c.dispatch.bind(c);
    c.dispatch = (b) => { orig(b); const m = JSON.parse(b); if (m.type === 'response') { seen.push(m.command); if (seen.length === 2) resolve(seen); } };
  });
  // Byte by byte through the header, then the rest in one write with the second frame.
  for (let i = 0; i < 30; ++i) c.writeRaw(all[i], false);
  c.writeRaw(all.slice(30), false);
  assert.deepEqual(await responses, ['initialize', 'threads']);
  await c.disconnectRequest();
  assertClean(assert, c);
});
