// runInTerminal: with console integratedTerminal the adapter asks the client to run the
// program; the exit code still reaches the client; cancel ends a launch left waiting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { startStdio, assertClean, target, exitOf } from './lib/harness.mjs';

test('integratedTerminal launches through runInTerminal and reports the exit code', async () => {
  const c = await startStdio();
  let terminalOutput = '';
  let request;
  let terminalClosed;
  c.reverseHandler = (r) => {
    request = r;
    // Play the terminal: run the command as given, in its cwd, with its env.
    const env = { ...process.env };
    for (const [k, v] of Object.entries(r.arguments.env ?? {})) { if (v === null) delete env[k]; else env[k] = v; }
    const p = spawn(r.arguments.args[0], r.arguments.args.slice(1), { cwd: r.arguments.cwd, env });
    p.stdout.on('data', (d) => { terminalOutput += d; });
    terminalClosed = new Promise((resolve) => p.on('close', resolve));
    return { processId: p.pid };
  };
  await c.initializeRequest({ adapterID: 'strata', pathFormat: 'path', supportsRunInTerminalRequest: true });
  const terminated = c.waitForEvent('terminated');
  await c.launchRequest({ noDebug: true, program: target('hello'), args: ['6'], console: 'integratedTerminal', cwd: '/tmp' });
  await c.configurationDoneRequest();
  await terminated;
  await terminalClosed;
  assert.equal(request.arguments.kind, 'integrated');
  assert.equal(request.arguments.cwd, '/tmp');
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 6);
  assert.match(terminalOutput, /hello from C\narg\[1\]=6\ncwd=\/tmp\n/);
  assert.ok(c.eventsNamed('process')[0].body.systemProcessId > 0);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('a client without runInTerminal gets the output in the console instead', async () => {
  const c = await startStdio();
  await c.initializeRequest();
  const terminated = c.waitForEvent('terminated');
  await c.launchRequest({ noDebug: true, program: target('hello'), args: ['2'], console: 'integratedTerminal' });
  await terminated;
  assert.match(c.output('console'), /cannot run programs in a terminal/);
  assert.match(c.output('stdout'), /hello from C/);
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 2);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('cancel answers a launch still waiting for the terminal with "cancelled"', async () => {
  const c = await startStdio();
  let asked;
  const reverse = new Promise((r) => { asked = r; });
  c.reverseHandler = (r) => { asked(r); return undefined; };  // never answer
  await c.initializeRequest({ adapterID: 'strata', pathFormat: 'path', supportsRunInTerminalRequest: true });
  const launch = c.launchRequest({ noDebug: true, program: target('hello'), console: 'externalTerminal' });
  const launchFails = assert.rejects(launch, /cancelled/);
  const req = await reverse;
  assert.equal(req.arguments.kind, 'external');
  const launchSeq = Math.max(...c.pendingRequests.keys());
  await c.customRequest('cancel', { requestId: launchSeq });
  await launchFails;
  const answered = c.received.filter((m) => m.type === 'response').map((m) => m.command);
  assert.deepEqual(answered.slice(-2), ['launch', 'cancel'], 'the cancelled request is answered first');
  // A terminal that runs the command only now starts nothing: the launch is gone.
  const late = spawnSync(req.arguments.args[0], req.arguments.args.slice(1), { encoding: 'utf8', timeout: 10000 });
  assert.equal(late.status, 127);
  assert.match(late.stderr, /cannot reach the debug adapter/);
  assert.doesNotMatch(late.stdout, /hello from C/);
  await c.disconnectRequest();
  assert.equal(await exitOf(c.adapterProcess), 0);
  assertClean(assert, c);
});
