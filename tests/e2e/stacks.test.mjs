// `strata stacks PID` attaches to a running multithreaded program, prints every thread's stack,
// detaches, and the program runs on to its normal end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CLI, REPO, target } from './lib/harness.mjs';

const SOURCE = path.join(REPO, 'tests/targets/stacks_target.c');
const WAIT_LINE = fs.readFileSync(SOURCE, 'utf8').split('\n').findIndex((l) => l.includes('// @stack:worker_wait')) + 1;

// Starts the target and resolves once it printed "ready" (its workers are running and named).
function startTarget() {
  const child = spawn(target('stacks_target'), [], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  const ready = new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('ready\n')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`target exited early with ${code}`)));
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, out: () => out })));
  return { child, ready, exited };
}

test('strata stacks prints every thread and leaves the program running', async () => {
  assert.ok(WAIT_LINE > 0);
  const t = startTarget();
  await t.ready;

  const text = spawnSync(CLI, ['stacks', String(t.child.pid)], { encoding: 'utf8' });
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`^process ${t.child.pid}: 4 threads\\n`));
  assert.match(text.stdout, /thread \d+ "worker-1"/);
  assert.match(text.stdout, new RegExp(`#\\d+ spin_worker \\(.*stacks_target\\.c:${WAIT_LINE}\\)`));
  assert.match(text.stdout, /#\d+ main \(.*stacks_target\.c:\d+\)/);

  const json = spawnSync(CLI, ['stacks', '--json', String(t.child.pid)], { encoding: 'utf8' });
  assert.equal(json.status, 0, json.stderr);
  const report = JSON.parse(json.stdout);
  assert.equal(report.pid, t.child.pid);
  assert.equal(report.threads.length, 4);
  const workers = report.threads.filter((th) => th.name.startsWith('worker-'));
  assert.equal(workers.length, 3);
  for (const w of workers) {
    const frame = w.frames.find((f) => f.function === 'spin_worker');
    assert.ok(frame, `spin_worker on ${w.name}'s stack`);
    assert.match(frame.file, /stacks_target\.c$/);
    assert.equal(frame.line, WAIT_LINE);
    assert.ok(w.frames[0].module.length > 0);
  }

  // The program was left untouched: it still answers and ends normally.
  t.child.stdin.write('quit\n');
  const end = await t.exited;
  assert.equal(end.signal, null);
  assert.equal(end.code, 0);
  assert.equal(end.out(), 'ready\nfinished\n');
});

test('strata stacks explains a refused attach', () => {
  const gone = spawnSync(CLI, ['stacks', '999999999'], { encoding: 'utf8' });
  assert.equal(gone.status, 1);
  assert.match(gone.stderr, /^strata: .*999999999.*no such process/);
  const usage = spawnSync(CLI, ['stacks'], { encoding: 'utf8' });
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /stacks needs a process id/);
});
