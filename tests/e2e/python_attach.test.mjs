// Starting a Python debug session every way but launch, through strata-dap, on every
// interpreter in STRATA_PYTHONS: the adapter listening for `python -m strata --connect`,
// tokens, `strata.listen()/wait_for_client()/breakpoint()`, a dropped link (the program runs
// on and listens again), another tool holding DEBUGGER_ID, and a forked child running free.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { PYTHONS, NO_PYTHON, assertClean, startStdio, waitUntil, exitOf, withTimeout, forEachPython } from './lib/harness.mjs';
import { lineOf, pyTarget, launchAndStop, topFrame, locals, AGENT_PYTHONPATH } from './lib/python.mjs';

const ticker = pyTarget('ticker.py');

// A program under the agent, its output collected.
function startAgent(py, args, env = {}) {
  const proc = spawn(py, ['-m', 'strata', ...args], {
    env: { ...process.env, PYTHONPATH: AGENT_PYTHONPATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.out = '';
  proc.err = '';
  proc.stdout.on('data', (d) => { proc.out += d; });
  proc.stderr.on('data', (d) => { proc.err += d; });
  return proc;
}

function tempFile(name) {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'strata-attach-')), name);
}

async function portFrom(file) {
  await waitUntil(() => fs.existsSync(file) && fs.readFileSync(file, 'utf8').endsWith('\n'), 20000, 'the port file');
  return Number(fs.readFileSync(file, 'utf8'));
}

// attach (connect) + a breakpoint on the ticker's tick line + configurationDone; the stop.
async function attachAndStop(port, condition, extra = {}) {
  const c = await startStdio();
  await c.initializeRequest();
  await c.attachRequest({ connect: { host: '127.0.0.1', port }, ...extra });
  // The program runs while it is configured: the stop may come before setBreakpoints' answer.
  const s = c.waitForEvent('stopped', 30000);
  await c.setBreakpointsRequest({ source: { path: ticker }, breakpoints: [{ line: lineOf(ticker, 'tick'), condition }] });
  await c.configurationDoneRequest();
  return { c, stopped: await s };
}

// Tells the ticker to finish, then leaves it running (disconnect without terminating).
async function releaseTicker(c, threadId) {
  const f = await topFrame(c, threadId);
  await c.evaluateRequest({ expression: "globals().__setitem__('stop', True)", frameId: f.id, context: 'repl' });
  await c.setBreakpointsRequest({ source: { path: ticker }, breakpoints: [] });
  await c.disconnectRequest({ terminateDebuggee: false });
}

forEachPython((py) => {
  const v = path.basename(py);

  test(`${v}: attach with listen: the adapter waits and python -m strata --connect dials in`, async () => {
    const c = await startStdio();
    await c.initializeRequest();
    const waiting = c.waitForEvent('output', 20000);
    const attached = c.attachRequest({ listen: { host: '127.0.0.1', port: 0 } });
    const m = /connect to 127\.0\.0\.1:(\d+) \(python -m strata --connect 127\.0\.0\.1:\d+ script\.py\)/.exec((await waiting).body.output);
    assert.ok(m, (await waiting).body.output);
    // A connection that closes without answering the handshake (a probe) is not the program:
    // the attach goes on waiting, and says so.
    const strayClosed = c.waitForEvent('output', 20000);
    await withTimeout(new Promise((resolve, reject) => {
      const probe = net.connect(Number(m[1]), '127.0.0.1');
      probe.once('data', () => { probe.destroy(); resolve(); });
      probe.once('error', reject);
    }), 20000, 'the adapter to greet the probe');
    assert.match((await strayClosed).body.output, /closed before the debug handshake \(not a Strata agent\); still waiting/);
    const proc = startAgent(py, ['--connect', `127.0.0.1:${m[1]}`, ticker]);
    try {
      await attached;
      const s = c.waitForEvent('stopped', 30000);
      await c.setBreakpointsRequest({ source: { path: ticker }, breakpoints: [{ line: lineOf(ticker, 'tick'), condition: 'i == 2' }] });
      await c.configurationDoneRequest();
      const stopped = await s;
      assert.equal(stopped.body.reason, 'breakpoint');
      const f = await topFrame(c, stopped.body.threadId);
      assert.equal((await locals(c, f.id)).i.value, '2');
      await releaseTicker(c, stopped.body.threadId);
      assert.equal(await withTimeout(exitOf(proc), 20000, 'the program to end'), 0);
      // Detached: the tool id is free again, seen from the program itself.
      assert.match(proc.out, /tick 2\n[^]*done None\n/);
      assert.equal(await withTimeout(exitOf(c.adapterProcess), 10000, 'adapter exit'), 0);
      assertClean(assert, c);
    } finally {
      proc.kill();
    }
  });

  test(`${v}: a token-protected agent refuses an attach without the token and serves one with it`, async () => {
    const portFile = tempFile('port');
    const proc = startAgent(py, ['--listen', '0.0.0.0:0', '--token', 's3cret', '--port-file', portFile, '--wait-for-client', ticker]);
    try {
      const port = await portFrom(portFile);
      const c1 = await startStdio();
      await c1.initializeRequest();
      const refused = await c1.attachRequest({ connect: { host: '127.0.0.1', port } }).catch((e) => e);
      assert.match(String(refused.message), /closed the debug link/);
      await c1.disconnectRequest();
      const { c, stopped } = await attachAndStop(port, 'i == 1', { token: 's3cret' });
      const f = await topFrame(c, stopped.body.threadId);
      assert.equal((await locals(c, f.id)).i.value, '1');
      await releaseTicker(c, stopped.body.threadId);
      assert.equal(await withTimeout(exitOf(proc), 20000, 'the program to end'), 0);
      assertClean(assert, c1);
      assertClean(assert, c);
    } finally {
      proc.kill();
    }
  });

  test(`${v}: the link drops while stopped: the program runs on and a new attach works`, async () => {
    const portFile = tempFile('port');
    const proc = startAgent(py, ['--listen', '127.0.0.1:0', '--port-file', portFile, '--wait-for-client', ticker]);
    try {
      const port = await portFrom(portFile);
      const first = await attachAndStop(port, 'i == 3');
      assert.equal(first.stopped.body.reason, 'breakpoint');
      assert.doesNotMatch(proc.out, /tick 3\n/);
      first.c.adapterProcess.kill('SIGKILL');
      // A hang guard: how soon it runs on is bench/python/link_drop.py's to measure.
      await waitUntil(() => /tick 4\n/.test(proc.out), 20000, 'the program to run on');
      // It listens again: a second client attaches and stops it.
      const { c, stopped } = await attachAndStop(port, 'i > 5');
      const f = await topFrame(c, stopped.body.threadId);
      assert.ok(Number((await locals(c, f.id)).i.value) > 5);
      await releaseTicker(c, stopped.body.threadId);
      assert.equal(await withTimeout(exitOf(proc), 20000, 'the program to end'), 0);
      assert.match(proc.out, /done None\n/);
      assertClean(assert, c);
    } finally {
      proc.kill();
    }
  });

  test(`${v}: strata.listen(), wait_for_client() and breakpoint() in user code`, async () => {
    const program = pyTarget('api_user.py');
    const portFile = tempFile('port');
    const proc = spawn(py, [program, portFile], { env: { ...process.env, PYTHONPATH: AGENT_PYTHONPATH }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (d) => { out += d; });
    try {
      const port = await portFrom(portFile);
      const c = await startStdio();
      await c.initializeRequest();
      await c.attachRequest({ connect: { port } });
      const s = c.waitForEvent('stopped', 30000);
      await c.configurationDoneRequest();
      const stopped = await s;
      assert.equal(stopped.body.reason, 'pause');
      let f = await topFrame(c, stopped.body.threadId);
      assert.equal(f.line, lineOf(program, 'api_break'));
      await c.send('setExpression', { expression: 'value', value: '100', frameId: f.id });
      const s2 = c.waitForEvent('stopped', 30000);
      await c.nextRequest({ threadId: stopped.body.threadId });
      assert.equal((await s2).body.reason, 'step');
      f = await topFrame(c, stopped.body.threadId);
      assert.equal(f.line, lineOf(program, 'api_next'));
      const term = c.waitForEvent('terminated', 30000);
      await c.continueRequest({ threadId: stopped.body.threadId });
      await term;
      assert.equal(await withTimeout(exitOf(proc), 20000, 'the program to end'), 0);
      assert.match(out, /value 101\n/);
      await c.disconnectRequest();
      assertClean(assert, c);
    } finally {
      proc.kill();
    }
  });

  test(`${v}: another tool holding DEBUGGER_ID: the attach fails and names it`, async () => {
    const portFile = tempFile('port');
    const proc = spawn(py, [pyTarget('tool_taken.py'), portFile], { env: { ...process.env, PYTHONPATH: AGENT_PYTHONPATH }, stdio: 'ignore' });
    try {
      const port = await portFrom(portFile);
      const c = await startStdio();
      await c.initializeRequest();
      const err = await c.attachRequest({ connect: { host: '127.0.0.1', port } }).catch((e) => e);
      assert.match(String(err.message), /cannot attach/);
      assert.match(c.output('important'), /DEBUGGER_ID\) is already held by 'other-debugger'/);
      await c.disconnectRequest();
      assertClean(assert, c);
    } finally {
      proc.kill();
    }
  });

  test(`${v}: forked children (os.fork, a multiprocessing fork pool) run through a breakpoint free when the client opens no child sessions`, async () => {
    const program = pyTarget('forker.py');
    const { c, stopped } = await launchAndStop(py, program, { breakpoints: { [program]: [{ line: lineOf(program, 'work') }] } });
    // The only stop is the parent's, after the child has run work() and exited.
    const f = await topFrame(c, stopped.body.threadId);
    assert.equal((await locals(c, f.id)).tag.value, '2');
    const term = c.waitForEvent('terminated', 30000);
    await c.continueRequest({ threadId: stopped.body.threadId });
    await term;
    assert.match(c.output('stdout'), /child exit 7\npool \[6, 8, 10\]\n/);
    assert.equal(c.eventsNamed('stopped').length, 1);
    // This client opens no child sessions: said once, for the first child (four came).
    const said = c.output('console').match(/Child processes run without the debugger \(the first: process \d+ \(a child of \d+\)\): this client opens no child sessions \(startDebugging\)/g);
    assert.equal(said?.length, 1, c.output('console'));
    await c.disconnectRequest();
    assertClean(assert, c);
  });
});

test('the agent refuses a non-loopback address without a token, with a clear message', { skip: NO_PYTHON }, async () => {
  const py = PYTHONS[0];
  for (const args of [['--listen', '0.0.0.0:0', ticker], ['--connect', '192.0.2.1:5678', ticker]]) {
    const proc = startAgent(py, args, { STRATA_TOKEN: '' });
    assert.equal(await withTimeout(exitOf(proc), 20000, 'the agent to refuse'), 1);
    assert.match(proc.err, /\(not a loopback address\) requires a token: pass --token TOKEN or set STRATA_TOKEN/);
    assert.equal(proc.out, '');
  }
});

test('attach with listen and a token: a program without it is turned away, one with it is served', { skip: NO_PYTHON }, async () => {
  const c = await startStdio();
  await c.initializeRequest();
  const waiting = c.waitForEvent('output', 20000);
  const attached = c.attachRequest({ listen: { host: '127.0.0.1', port: 0 }, token: 'tk-42' });
  const out = (await waiting).body.output;
  assert.match(out, /python -m strata --connect 127\.0\.0\.1:\d+ --token TOKEN script\.py/);
  const where = /connect to (127\.0\.0\.1:\d+)/.exec(out)[1];
  const wrong = startAgent(PYTHONS[0], ['--connect', where, '--token', 'nope', ticker, '3']);
  let right;
  try {
    // The one with the wrong token is dropped before a request: it runs undebugged.
    assert.equal(await withTimeout(exitOf(wrong), 20000, 'the turned-away program'), 0);
    assert.match(wrong.out, /tick 2\ndone None\n/);
    right = startAgent(PYTHONS[0], ['--connect', where, '--token', 'tk-42', ticker]);
    await attached;
    const s = c.waitForEvent('stopped', 30000);
    await c.setBreakpointsRequest({ source: { path: ticker }, breakpoints: [{ line: lineOf(ticker, 'tick'), condition: 'i == 2' }] });
    await c.configurationDoneRequest();
    const stopped = await s;
    await releaseTicker(c, stopped.body.threadId);
    assert.equal(await withTimeout(exitOf(right), 20000, 'the program to end'), 0);
    assertClean(assert, c);
  } finally {
    wrong.kill();
    right?.kill();
  }
});

test('attach {} finds python -m strata --listen 5678, debugpy\'s default', { skip: NO_PYTHON }, async (t) => {
  const portFile = tempFile('port');
  const proc = startAgent(PYTHONS[0], ['--listen', '5678', '--port-file', portFile, '--wait-for-client', ticker]);
  try {
    await waitUntil(() => fs.existsSync(portFile) || proc.exitCode !== null, 20000, 'the agent to listen');
    if (!fs.existsSync(portFile)) return t.skip(`port 5678 is taken here: ${proc.err.trim()}`);
    const c = await startStdio();
    await c.initializeRequest();
    await c.attachRequest({});
    const s = c.waitForEvent('stopped', 30000);
    await c.setBreakpointsRequest({ source: { path: ticker }, breakpoints: [{ line: lineOf(ticker, 'tick'), condition: 'i == 1' }] });
    await c.configurationDoneRequest();
    const stopped = await s;
    const f = await topFrame(c, stopped.body.threadId);
    assert.equal((await locals(c, f.id)).i.value, '1');
    await releaseTicker(c, stopped.body.threadId);
    assert.equal(await withTimeout(exitOf(proc), 20000, 'the program to end'), 0);
    assertClean(assert, c);
  } finally {
    proc.kill();
  }
});

test('attach answers bad or unreachable targets with clear errors', async () => {
  const c = await startStdio();
  await c.initializeRequest();
  const cases = [
    [{ listen: { host: '0.0.0.0', port: 0 } }, /arguments\.token is required to listen on 0\.0\.0\.0, which is not a loopback address/],
    [{ connect: { host: '192.0.2.1', port: 5678 } }, /arguments\.token is required to attach to 192\.0\.2\.1/],
    [{ connect: { port: 70000 } }, /arguments\.connect\.port: 70000 is not a TCP port/],
    [{ listen: { port: 0 }, connect: { port: 1 } }, /not both/],
    [{ listen: { port: 0 }, timeout: 0 }, /arguments\.timeout/],
  ];
  for (const [args, re] of cases) {
    const err = await c.attachRequest(args).catch((e) => e);
    assert.match(String(err.message), re);
  }
  await c.disconnectRequest();
  assertClean(assert, c);
  // {} means debugpy's default, 127.0.0.1:5678; the error says where it looked and what to run.
  const c2 = await startStdio();
  await c2.initializeRequest();
  const none = await c2.attachRequest({}).catch((e) => e);
  if (none instanceof Error) assert.match(String(none.message), /127\.0\.0\.1:5678.*python -m strata --listen 5678/);
  await c2.disconnectRequest();
  // Nobody dials in: the listen gives up after the timeout and says how to connect.
  const c3 = await startStdio();
  await c3.initializeRequest();
  const late = await c3.attachRequest({ listen: { port: 0 }, timeout: 1 }).catch((e) => e);
  assert.match(String(late.message), /no Python program connected to 127\.0\.0\.1:\d+ within 1 s; start one with python -m strata --connect 127\.0\.0\.1:\d+ script\.py/);
  await c3.disconnectRequest();
  // The client leaves while the adapter still waits: the attach is answered, not dropped.
  const c4 = await startStdio();
  await c4.initializeRequest();
  const waiting = c4.waitForEvent('output', 20000);
  const pending = c4.attachRequest({ listen: { port: 0 } }).catch((e) => e);
  await waiting;
  await c4.disconnectRequest();
  assert.match(String((await pending).message), /the session ended before a Python program connected/);
  assertClean(assert, c2);
  assertClean(assert, c3);
  assertClean(assert, c4);
});
