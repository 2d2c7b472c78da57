// The strata CLI runs programs through the real adapter and prints what a user sees.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { CLI, target, PY_TARGETS, PYTHONS, NO_PYTHON } from './lib/harness.mjs';

test('strata run prints the output and exits with the program\'s code', () => {
  const r = spawnSync(CLI, ['run', '--', target('hello'), '5', 'a b'], { encoding: 'utf8', cwd: '/tmp' });
  assert.equal(r.status, 5);
  assert.match(r.stdout, /^hello from C\narg\[1\]=5\narg\[2\]=a b\ncwd=\/tmp\n/);
  assert.equal(r.stderr, 'to stderr\n');
});

test('strata run --json prints JSON lines', () => {
  const r = spawnSync(CLI, ['run', '--json', '--env', 'STRATA_TEST_VAR=cli', '--', target('hello'), '9'], { encoding: 'utf8' });
  assert.equal(r.status, 9);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines.at(-1), { type: 'exited', exitCode: 9 });
  const out = lines.filter((l) => l.type === 'output' && l.category === 'stdout').map((l) => l.text).join('');
  assert.match(out, /STRATA_TEST_VAR=cli\n/);
});

test('strata run of a Python script', { skip: NO_PYTHON }, () => {
  const r = spawnSync(CLI, ['run', '--python', PYTHONS.at(-1), '--', path.join(PY_TARGETS, 'hello.py'), '4'], { encoding: 'utf8' });
  assert.equal(r.status, 4);
  assert.match(r.stdout, /hello from Python True\nargs \['4'\]/);
});

test('strata run reports a launch error and exits 1', () => {
  const r = spawnSync(CLI, ['run', '--', '/no/such/prog'], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.equal(r.stderr, "strata: cannot launch: program '/no/such/prog' does not exist\n");
});
