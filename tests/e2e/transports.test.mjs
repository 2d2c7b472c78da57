// Transports and adapter options: --connect (the adapter dials the client), --log, the
// listener token, --version and --help.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { ADAPTER, StrataClient, startServer, startTcp, runToEnd, assertClean, target, exitOf, withTimeout } from './lib/harness.mjs';

test('--connect: the adapter dials a client that listens', async () => {
  const server = net.createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const accepted = new Promise((r) => server.once('connection', r));
  const adapter = spawn(ADAPTER, ['--connect', `127.0.0.1:${server.address().port}`], { stdio: 'inherit' });
  const socket = await accepted;
  socket.setNoDelay(true);
  const c = new StrataClient();
  c._socket = socket;
  c.connect(socket, socket);
  const code = await runToEnd(c, { noDebug: true, program: target('hello'), args: ['12'] });
  assert.equal(code, 12);
  await c.disconnectRequest();
  assert.equal(await withTimeout(exitOf(adapter), 5000, 'adapter exit'), 0);
  server.close();
  assertClean(assert, c);
});

test('--log writes every message in and out, timestamped', async () => {
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'strata-log-')), 'dap.log');
  const { server, port } = await startServer(['--log', log]);
  try {
    const c = await startTcp(port);
    await runToEnd(c, { noDebug: true, program: target('hello') });
    await c.disconnectRequest();
  } finally {
    server.kill();
    await exitOf(server);
  }
  const lines = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);
  const stamp = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z \[1\] /;
  assert.ok(lines.every((l) => stamp.test(l)), 'every line is timestamped with its session');
  assert.ok(lines.some((l) => /\] <- .*"command":"initialize"/.test(l)));
  assert.ok(lines.some((l) => /\] -> .*"event":"exited"/.test(l)));
  assert.ok(lines.some((l) => /\] -> .*"command":"disconnect"/.test(l)));
});

test('a listener with a token refuses peers without it before reading any request', async () => {
  const { server, port } = await startServer(['--token', 's3cret']);
  try {
    const intruder = await startTcp(port);
    // Refused peers may see a reset: the adapter closes on data it will never read.
    intruder._socket.on('error', () => {});
    intruder.writeRaw(JSON.stringify({ seq: 1, type: 'request', command: 'initialize', arguments: {} }));
    await withTimeout(new Promise((r) => intruder._socket.once('close', r)), 8000, 'refused');
    assert.equal(intruder.received.length, 0);

    const wrong = await startTcp(port);
    wrong._socket.on('error', () => {});
    wrong.writeRaw('STRATA-TOKEN nope\r\n', false);
    await withTimeout(new Promise((r) => wrong._socket.once('close', r)), 8000, 'refused');

    const friend = await startTcp(port);
    friend.writeRaw('STRATA-TOKEN s3cret\r\n', false);
    const code = await runToEnd(friend, { noDebug: true, program: target('hello'), args: ['1'] });
    assert.equal(code, 1);
    await friend.disconnectRequest();
    assertClean(assert, friend);
  } finally {
    server.kill();
  }
});

test('a non-loopback listener generates a token file (0600) when none is given', async () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-home-'));
  const server = spawn(ADAPTER, ['--listen', '0.0.0.0:0'], { env: { ...process.env, XDG_CONFIG_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    let err = '';
    server.stderr.on('data', (d) => { err += d; });
    await new Promise((resolve) => server.stdout.on('data', resolve));
    const dir = path.join(home, 'strata');
    const files = fs.readdirSync(dir);
    assert.equal(files.length, 1);
    assert.match(files[0], /^token-\d+$/);
    const st = fs.statSync(path.join(dir, files[0]));
    assert.equal(st.mode & 0o777, 0o600);
    assert.match(fs.readFileSync(path.join(dir, files[0]), 'utf8'), /^[0-9a-f]{64}\n$/);
    assert.match(err, /is not a loopback address; peers must send the token stored in/);
  } finally {
    server.kill();
  }
});

test('--version, --help and a bad option', () => {
  assert.match(spawnSync(ADAPTER, ['--version'], { encoding: 'utf8' }).stdout, /^strata-dap \d+\.\d+\.\d+\n$/);
  const help = spawnSync(ADAPTER, ['--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /--listen HOST:PORT/);
  const bad = spawnSync(ADAPTER, ['--frob'], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.equal(bad.stderr, "strata-dap: unknown option '--frob' (see --help)\n");
  const badPort = spawnSync(ADAPTER, ['--listen', '127.0.0.1:99999'], { encoding: 'utf8' });
  assert.equal(badPort.status, 2);
  assert.match(badPort.stderr, /invalid port in '127.0.0.1:99999'/);
});
