// `strata run --break`: the CLI debugs a Python program, prints every stop (thread, reason,
// frames, locals) and lets the program finish with its own exit code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI, PYTHONS, forEachPython, NO_PYTHON } from './lib/harness.mjs';
import { lineOf, pyTarget } from './lib/python.mjs';

const loop = pyTarget('loop.py');

forEachPython((py) => {
  const v = path.basename(py);

  test(`${v}: strata run --break prints each stop and continues to the end`, () => {
    const line = lineOf(loop, 'helper_body');
    const r = spawnSync(CLI, ['run', '--break', `${loop}:${line}:x % 4 == 1`, '--', py, loop, 'exit3'],
      { encoding: 'utf8', timeout: 120000 });
    assert.equal(r.status, 3, r.stderr);
    const stops = r.stdout.split('\n').filter((l) => l.startsWith('-- stopped'));
    assert.equal(stops.length, 3, r.stdout);  // x = 1, 5, 9
    assert.match(stops[0], /^-- stopped \(breakpoint\) in thread \d+ "MainThread"$/);
    assert.match(r.stdout, new RegExp(`#0 helper at ${loop.replace(/[.]/g, '\\.')}:${line}\n`));
    assert.match(r.stdout, /#1 main at .*loop\.py:\d+\n/);
    assert.match(r.stdout, /locals:\n +x = 1\n/);
    assert.match(r.stdout, /locals:\n +x = 9\n/);
    assert.match(r.stdout, /total 100\n/);
  });

  test(`${v}: strata run --break --json prints one JSON line per stop`, () => {
    const line = lineOf(loop, 'helper_body');
    const r = spawnSync(CLI, ['run', '--json', '--python', py, '--break', `${loop}:${line}:x == 2`, '--', loop],
      { encoding: 'utf8', timeout: 120000 });
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const stops = lines.filter((l) => l.type === 'stopped');
    assert.equal(stops.length, 1);
    assert.equal(stops[0].reason, 'breakpoint');
    assert.equal(stops[0].thread, 'MainThread');
    assert.deepEqual(stops[0].frames[0], { name: 'helper', file: loop, line });
    assert.deepEqual(stops[0].locals, { x: '2' });
    assert.deepEqual(lines.at(-1), { type: 'exited', exitCode: 0 });
  });
});

test('strata run --break takes a relative file from --cwd, wherever --cwd stands', { skip: NO_PYTHON }, () => {
  const line = lineOf(loop, 'helper_body');
  const r = spawnSync(CLI, ['run', '--break', `loop.py:${line}:x == 8`, '--cwd', path.dirname(loop), '--', PYTHONS.at(-1), 'loop.py'],
    { encoding: 'utf8', timeout: 120000, cwd: '/' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`#0 helper at ${loop.replace(/[.]/g, '\\.')}:${line}\n`));
  assert.match(r.stdout, /locals:\n +x = 8\n/);
});

test('strata run --break with a malformed location is a usage error', () => {
  const r = spawnSync(CLI, ['run', '--break', 'loop.py', '--', 'x.py'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--break needs FILE:LINE/);
});

test('strata run --break in a library file: the locals shown are those of the program\'s own frame, named', { skip: NO_PYTHON }, () => {
  const py = PYTHONS.at(-1);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-libbreak-'));
  const script = path.join(dir, 'libbreak.py');
  fs.writeFileSync(script, 'import json\n\n\ndef main():\n    payload = {"a": 1}\n    print(json.dumps(payload))\n\n\nmain()\n');
  try {
    const lib = spawnSync(py, ['-c', 'import json; print(json.__file__)'], { encoding: 'utf8' }).stdout.trim();
    const line = fs.readFileSync(lib, 'utf8').split('\n').findIndex((l) => l.includes('return _default_encoder.encode(obj)')) + 1;
    assert.ok(line > 0, `json.dumps's return line in ${lib}`);
    const r = spawnSync(CLI, ['run', '--break', `${lib}:${line}`, '--', py, script], { encoding: 'utf8', timeout: 120000 });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`#0 dumps at ${lib.replace(/[.]/g, '\\.')}:${line}\n`));
    assert.match(r.stdout, /#1 main at .*libbreak\.py:6\n/);
    assert.match(r.stdout, /locals of main \(#1\):\n +payload = \{'a': 1\}\n/);
    const j = spawnSync(CLI, ['run', '--json', '--break', `${lib}:${line}`, '--', py, script], { encoding: 'utf8', timeout: 120000 });
    const stop = j.stdout.trim().split('\n').map((l) => JSON.parse(l)).find((l) => l.type === 'stopped');
    assert.deepEqual(stop.localsFrame, { name: 'main', index: 1 });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
