// noDebug launches of native programs and Python scripts over stdio and TCP: exact output,
// exit codes, arguments, cwd, environment, and clear errors for bad launches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startStdio, startServer, startTcp, runToEnd, assertClean, target, PY_TARGETS, PYTHONS, NO_PYTHON, forEachPython } from './lib/harness.mjs';
import { AGENT_PYTHONPATH } from './lib/python.mjs';

function plainFile() {
  const f = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'strata-plain-')), 'plain.txt');
  fs.writeFileSync(f, 'not a program\n', { mode: 0o644 });
  fs.chmodSync(f, 0o644);
  return f;
}

const helloStdout = (args, cwd, v) =>
  'hello from C\n' + args.map((a, i) => `arg[${i + 1}]=${a}\n`).join('') + `cwd=${cwd}\nSTRATA_TEST_VAR=${v}\n` +
  'utf8=é✓ invalid=\uFFFD\uFFFD end\n';

for (const transport of ['stdio', 'tcp']) {
  test(`native program over ${transport}: output, exit code, args, cwd, env`, async () => {
    let srv = null;
    let c;
    if (transport === 'tcp') {
      srv = await startServer();
      c = await startTcp(srv.port);
    } else {
      c = await startStdio();
    }
    try {
      const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-cwd-'));
      const code = await runToEnd(c, { noDebug: true, program: target('hello'), args: ['7', 'two words', 'ü'], cwd, env: { STRATA_TEST_VAR: 'yes' } });
      assert.equal(code, 7);
      assert.equal(c.output('stdout'), helloStdout(['7', 'two words', 'ü'], fs.realpathSync(cwd), 'yes'));
      assert.equal(c.output('stderr'), 'to stderr\n');
      const proc = c.eventsNamed('process')[0];
      assert.equal(proc.body.name, target('hello'));
      assert.equal(proc.body.startMethod, 'launch');
      assert.ok(proc.body.systemProcessId > 0);
      // exited comes after every output event, then terminated.
      const kinds = c.received.filter((m) => m.type === 'event').map((m) => m.event);
      assert.ok(kinds.lastIndexOf('output') < kinds.indexOf('exited'));
      assert.equal(kinds.at(-1), 'terminated');
      await c.disconnectRequest();
      assertClean(assert, c);
    } finally {
      srv?.server.kill();
    }
  });
}

test('environment variables can be removed with null', async () => {
  process.env.STRATA_TEST_VAR = 'from-adapter';
  const c = await startStdio();
  delete process.env.STRATA_TEST_VAR;
  await runToEnd(c, { noDebug: true, program: target('hello'), env: { STRATA_TEST_VAR: null } });
  assert.match(c.output('stdout'), /STRATA_TEST_VAR=\(unset\)/);
  await c.disconnectRequest();
  assertClean(assert, c);
});

// What an IDE sets for the strata-dap it starts (the VS Code extension names its carried agent
// and collector): the adapter reads them; the program's environment is the user's.
const ADAPTER_ONLY = { STRATA_AGENT_PYTHONPATH: AGENT_PYTHONPATH, STRATA_GPU_COLLECTOR: '/nonexistent/libstrata_cupti.so' };
const envNames = (c) => c.output('stdout').split('\n').filter((l) => l.startsWith('env ')).map((l) => l.slice(4));

test('where strata-dap finds its agent and collector stays out of a debugged Python program, unless the launch sets it',
  { skip: NO_PYTHON }, async () => {
    const program = path.join(PY_TARGETS, 'environ_keys.py');
    const c = await startStdio({ spawn: { env: { ...process.env, ...ADAPTER_ONLY, STRATA_TEST_VAR: 'adapter' } } });
    // Debugged (the agent found through STRATA_AGENT_PYTHONPATH goes in through PYTHONPATH).
    assert.equal(await runToEnd(c, { program, python: PYTHONS[0] }), 0);
    const names = envNames(c);
    assert.ok(names.includes('STRATA_TEST_VAR') && names.includes('PYTHONPATH'), names.join());
    for (const k of Object.keys(ADAPTER_ONLY)) assert.ok(!names.includes(k), `${k} leaked into the program`);
    await c.disconnectRequest();
    assertClean(assert, c);
    // Named in the launch's env, the user's choice wins.
    const d = await startStdio({ spawn: { env: { ...process.env, ...ADAPTER_ONLY } } });
    assert.equal(await runToEnd(d, { program, python: PYTHONS[0], env: { STRATA_GPU_COLLECTOR: '/mine.so' } }), 0);
    assert.ok(envNames(d).includes('STRATA_GPU_COLLECTOR'));
    assert.ok(!envNames(d).includes('STRATA_AGENT_PYTHONPATH'));
    await d.disconnectRequest();
    assertClean(assert, d);
  });

test('where strata-dap finds its agent and collector stays out of a native program', async () => {
  const c = await startStdio({ spawn: { env: { ...process.env, ...ADAPTER_ONLY, STRATA_TEST_VAR: 'adapter' } } });
  assert.equal(await runToEnd(c, { noDebug: true, program: '/usr/bin/env' }), 0);
  const names = c.output('stdout').split('\n').map((l) => l.split('=')[0]);
  assert.ok(names.includes('STRATA_TEST_VAR'), names.join());
  for (const k of Object.keys(ADAPTER_ONLY)) assert.ok(!names.includes(k), `${k} leaked into the program`);
  await c.disconnectRequest();
  assertClean(assert, c);
});

forEachPython((python) => {
  test(`Python script under ${path.basename(python)}: output and exit code`, async () => {
    const c = await startStdio();
    const code = await runToEnd(c, { noDebug: true, program: path.join(PY_TARGETS, 'hello.py'), python, args: ['3', 'x y'], env: { STRATA_TEST_VAR: 'py' } });
    assert.equal(code, 3);
    assert.equal(c.output('stdout'), "hello from Python True\nargs ['3', 'x y']\nSTRATA_TEST_VAR py\n");
    assert.equal(c.output('stderr'), 'to stderr\n');
    await c.disconnectRequest();
    assertClean(assert, c);
  });
});

test('a .py program without "python" runs under the newest Python >= 3.12 found', async () => {
  const c = await startStdio();
  const code = await runToEnd(c, { noDebug: true, program: path.join(PY_TARGETS, 'hello.py') });
  assert.equal(code, 0);
  assert.match(c.output('stdout'), /^hello from Python True\n/);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('a Python module runs with "module"', { skip: NO_PYTHON }, async () => {
  const c = await startStdio();
  const code = await runToEnd(c, { noDebug: true, module: 'json.tool', args: ['--compact'], python: PYTHONS[0] });
  // json.tool with no input on stdin (/dev/null) reports an error and exits non-zero.
  assert.notEqual(code, 0);
  assert.match(c.output('stderr'), /Expecting value/);
  await c.disconnectRequest();
  assertClean(assert, c);
});

for (const [what, args, message] of [
  ['a program that does not exist', { program: '/no/such/program' }, /cannot launch: program '\/no\/such\/program' does not exist/],
  ['a directory', { program: '/tmp' }, /cannot launch: program '\/tmp' is a directory/],
  ['a file that is not executable', { program: plainFile() }, /cannot launch: program '.*\/plain\.txt' is not executable \(mode rw-r--r--\); make it executable with chmod \+x/],
  ['a cwd that does not exist', { program: '/bin/true', cwd: '/no/such/dir' }, /cannot launch: cwd '\/no\/such\/dir' does not exist/],
  ['a cwd that is a file', { program: '/bin/true', cwd: plainFile() }, /cannot launch: cwd '.*\/plain\.txt' is not a directory/],
  ['no program', {}, /arguments\.program: required field is missing/],
  ['a Python that does not exist', { program: path.join(PY_TARGETS, 'hello.py'), python: '/no/python3.12' }, /Python interpreter '\/no\/python3\.12' does not exist/],
  ['a bad console', { program: '/bin/true', console: 'tty' }, /arguments\.console: expected 'internalConsole', 'integratedTerminal' or 'externalTerminal', got 'tty'/],
]) {
  test(`launching ${what} fails with a message naming it`, async () => {
    const c = await startStdio();
    await c.initializeRequest();
    await assert.rejects(c.launchRequest({ noDebug: true, ...args }), message);
    const r = c.received.find((m) => m.command === 'launch');
    assert.equal(r.body.error.showUser, true);
    // The session is still usable.
    assert.deepEqual((await c.threadsRequest()).body.threads, []);
    await c.disconnectRequest();
    assertClean(assert, c);
  });
}

test('a .py launch with no Python 3.10 or newer: the error says where Strata looked and what to do', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-nopython-'));
  const bin = path.join(dir, 'bin'), home = path.join(dir, 'home'), root = path.join(dir, 'pyenv');
  for (const d of [bin, home, root]) fs.mkdirSync(d);
  // Older Pythons do not count, wherever they are.
  fs.symlinkSync('/bin/true', path.join(bin, 'python3.9'));
  fs.mkdirSync(path.join(root, 'versions/3.9.18/bin'), { recursive: true });
  fs.symlinkSync('/bin/true', path.join(root, 'versions/3.9.18/bin/python3.9'));
  const program = path.join(PY_TARGETS, 'hello.py');
  const advice = 'install one (pyenv install 3.12) or name one with "python": "/path/to/python3.12" in the launch configuration';
  const c = await startStdio();
  try {
    await c.initializeRequest();
    const viaHome = await c.launchRequest({ program, env: { PATH: bin, HOME: home, PYENV_ROOT: null } }).catch((e) => e);
    assert.equal(viaHome.message, 'cannot launch: no Python 3.10 or newer was found: looked for python3.10 and newer ' +
      `on PATH (${bin}) and in pyenv (${home}/.pyenv/versions); ${advice}`);
    const viaRoot = await c.launchRequest({ module: 'json.tool', env: { PATH: `${bin}:/nonexistent`, PYENV_ROOT: root } }).catch((e) => e);
    assert.equal(viaRoot.message, 'cannot launch: no Python 3.10 or newer was found: looked for python3.10 and newer ' +
      `on PATH (${bin}:/nonexistent) and in pyenv (${root}/versions); ${advice}`);
    const neither = await c.launchRequest({ program, env: { PATH: '', HOME: null, PYENV_ROOT: null } }).catch((e) => e);
    assert.match(neither.message, /on PATH \(empty\) and in pyenv \(neither PYENV_ROOT nor HOME is set\)/);
    // The session is still usable: a 3.12 in pyenv's versions is found and runs the program.
    if (PYTHONS.length) {
      const exe = path.join(root, 'versions/3.12.1/bin/python3.12');
      fs.mkdirSync(path.dirname(exe), { recursive: true });
      fs.symlinkSync(PYTHONS[0], exe);
      const terminated = c.waitForEvent('terminated', 60000);
      await c.launchRequest({ noDebug: true, program, args: ['3'], env: { PATH: bin, PYENV_ROOT: root } });
      await c.configurationDoneRequest();
      await terminated;
      assert.equal(c.eventsNamed('exited')[0].body.exitCode, 3);
      assert.match(c.output('stdout'), /^hello from Python True\n/);
    }
    await c.disconnectRequest();
    assertClean(assert, c);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
