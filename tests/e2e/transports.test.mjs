// Transports and adapter options: --connect (the adapter dials the client), --log, the
// listener token (given, from a file, generated and kept), --version and --help.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { ADAPTER, StrataClient, startServer, startTcp, runToEnd, assertClean, target, exitOf, withTimeout, waitUntil } from './lib/harness.mjs';

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

// A listener's peer that must show `token` first: refused without it, served with it.
async function refusedThenServed(port, token) {
  const intruder = await startTcp(port);
  intruder._socket.on('error', () => {});
  intruder.writeRaw(JSON.stringify({ seq: 1, type: 'request', command: 'initialize', arguments: {} }));
  await withTimeout(new Promise((r) => intruder._socket.once('close', r)), 8000, 'refused');
  assert.equal(intruder.received.length, 0);
  const friend = await startTcp(port);
  friend.writeRaw(`STRATA-TOKEN ${token}\r\n`, false);
  assert.equal(await runToEnd(friend, { noDebug: true, program: target('hello'), args: ['4'] }), 4);
  await friend.disconnectRequest();
  assertClean(assert, friend);
}

const tmpDir = (name) => fs.mkdtempSync(path.join(os.tmpdir(), `strata-${name}-`));

test('--token-file: a listener requires the token on the file\'s first line', async () => {
  const file = path.join(tmpDir('token'), 'token');
  fs.writeFileSync(file, '  t0ken-from-file \nnot part of it\n', { mode: 0o600 });
  const { server, port } = await startServer(['--token-file', file]);
  try {
    await refusedThenServed(port, 't0ken-from-file');
  } finally {
    server.kill();
  }
});

test('--token-file naming no file yet: a listener writes a new token there (0600, folders 0700) and requires it', async () => {
  const dir = tmpDir('token');
  const file = path.join(dir, 'new/deeper/token');
  const { server, port } = await startServer(['--token-file', file]);
  try {
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(fs.statSync(path.dirname(file)).mode & 0o777, 0o700);
    const text = fs.readFileSync(file, 'utf8');
    assert.match(text, /^[0-9a-f]{64}\n$/);
    await refusedThenServed(port, text.trim());
  } finally {
    server.kill();
  }
});

const listenWith = (args, options = {}) =>
  spawnSync(ADAPTER, ['--listen', '127.0.0.1:0', ...args], { encoding: 'utf8', timeout: 20000, ...options });
function expectFailure(r, stderr) {
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr, `strata-dap: ${stderr}\n`);
  assert.equal(r.stdout, '', 'nothing listens');
}

test('a token file that cannot serve stops strata-dap at start with the reason', () => {
  const dir = tmpDir('token');
  const run = listenWith;
  const empty = path.join(dir, 'empty');
  fs.writeFileSync(empty, '');
  expectFailure(run(['--token-file', empty]), `token file ${empty} has no token on its first line`);
  const blank = path.join(dir, 'blank');
  fs.writeFileSync(blank, ' \n\nsecond line\n');
  expectFailure(run(['--token-file', blank]), `token file ${blank} has no token on its first line`);
  expectFailure(run(['--token-file', dir]), `cannot read token file ${dir}: Is a directory`);
  const long = path.join(dir, 'long');
  fs.writeFileSync(long, 'x'.repeat(300) + '\n');
  expectFailure(run(['--token-file', long]), `the token in ${long} is longer than 256 characters`);
  expectFailure(run(['--token', 'x'.repeat(300)]), '--token: a token is one line of at most 256 characters');
});

// Root reads any file, so root runs the adapter as nobody against its own 0600 file.
const asOther = process.getuid() === 0 ? { uid: 65534, gid: 65534 } : {};
const otherCanRunAdapter = spawnSync(ADAPTER, ['--version'], asOther).status === 0;

test('an unreadable token file stops strata-dap at start with the reason',
  { skip: !otherCanRunAdapter && 'nobody cannot run the adapter here, and root reads every file' }, () => {
    const dir = tmpDir('token');
    fs.chmodSync(dir, 0o755);
    const secret = path.join(dir, 'secret');
    fs.writeFileSync(secret, 'tok\n', { mode: 0o600 });
    if (process.getuid() !== 0) fs.chmodSync(secret, 0);
    expectFailure(listenWith(['--token-file', secret], asOther), `cannot read token file ${secret}: Permission denied`);
  });

test('a non-loopback listener without a token generates one in ~/.config/strata/token-PORT (0600) and keeps it', async () => {
  const home = tmpDir('home');
  const env = { ...process.env, HOME: home };
  delete env.XDG_CONFIG_HOME;
  const listen = async (address) => {
    const server = spawn(ADAPTER, ['--listen', address], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    server.stderr.on('data', (d) => { err += d; });
    const port = await withTimeout(new Promise((resolve, reject) => {
      server.stdout.on('data', (d) => { out += d; const m = /listening on 0\.0\.0\.0:(\d+)\n/.exec(out); if (m) resolve(Number(m[1])); });
      server.on('exit', (code) => reject(new Error(`adapter exited with ${code}: ${err}`)));
    }), 10000, 'listening');
    return { server, port, err: () => err };
  };
  const first = await listen('0.0.0.0:0');
  const file = path.join(home, '.config/strata', `token-${first.port}`);
  let token;
  try {
    assert.deepEqual(fs.readdirSync(path.dirname(file)), [`token-${first.port}`], 'named after the port it listens on');
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(fs.statSync(path.dirname(file)).mode & 0o777, 0o700);
    token = fs.readFileSync(file, 'utf8').trim();
    assert.match(token, /^[0-9a-f]{64}$/);
    // Its notice comes on stderr, a pipe of its own: maybe after the "listening" line.
    await waitUntil(() => first.err().endsWith('\n'), 10000, 'the token notice on stderr');
    assert.equal(first.err(), `strata-dap: 0.0.0.0 is not a loopback address; peers must send the token stored in ${file}\n`);
    await refusedThenServed(first.port, token);
  } finally {
    first.server.kill();
    await exitOf(first.server);
  }
  // The next listener on that port keeps the token its peers already have.
  const second = await listen(`0.0.0.0:${first.port}`);
  try {
    await refusedThenServed(second.port, token);
    assert.equal(fs.readFileSync(file, 'utf8').trim(), token);
  } finally {
    second.server.kill();
  }
});

test('--connect with --token-file sends the token line before any DAP message', async () => {
  const file = path.join(tmpDir('token'), 'token');
  fs.writeFileSync(file, 'dial-token\n', { mode: 0o600 });
  const server = net.createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const accepted = new Promise((r) => server.once('connection', r));
  const adapter = spawn(ADAPTER, ['--connect', `127.0.0.1:${server.address().port}`, '--token-file', file], { stdio: 'inherit' });
  const socket = await accepted;
  const first = await withTimeout(new Promise((resolve) => {
    let text = '';
    socket.on('data', (d) => { text += d; if (text.includes('\n')) resolve(text); });
  }), 8000, 'the token line');
  assert.equal(first, 'STRATA-TOKEN dial-token\r\n');
  socket.destroy();
  await withTimeout(exitOf(adapter), 10000, 'adapter exit');
  server.close();
  const missing = spawnSync(ADAPTER, ['--connect', '127.0.0.1:1', '--token-file', path.join(path.dirname(file), 'none')], { encoding: 'utf8' });
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /^strata-dap: cannot read token file .*none: No such file or directory\n$/);
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
