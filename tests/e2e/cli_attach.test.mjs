// `strata attach PID` on a CPython program started plainly (3.10 to 3.14): the snapshot printed
// and the program left running untouched; with --break, the first stop in its running loop,
// then detach and the program finishes with the output it has undebugged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { CLI, forEachAttachPython, waitUntil, withTimeout, exitOf, isRunning } from './lib/harness.mjs';
import { lineOf, pyTarget } from './lib/python.mjs';

const hotLoop = pyTarget('hot_loop.py');

async function startPlain(py, args) {
  const proc = spawn(py, [hotLoop, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.out = '';
  proc.stdout.on('data', (d) => { proc.out += d; });
  await waitUntil(() => proc.out.includes('ready\n'), 20000, 'the program to start');
  return proc;
}

function runCli(args) {
  return new Promise((resolve) => {
    const p = spawn(CLI, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    p.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

forEachAttachPython((py) => {
  const v = path.basename(py);

  test(`${v}: strata attach PID prints the snapshot and detaches; the program runs on`, async () => {
    const proc = await startPlain(py, ['300']);
    try {
      const r = await withTimeout(runCli(['attach', String(proc.pid)]), 60000, 'strata attach');
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^-- stopped \\(snapshot\\) in thread ${proc.pid} "python[^"]*"\n`));
      assert.match(r.stdout, new RegExp(`#\\d main at ${hotLoop.replace(/[.]/g, '\\.')}:\\d+\n`));
      // The locals of the innermost Python frame: main's mostly (the loop sleeps there), step's
      // when the snapshot catches the program in it.
      if (/#0 step at /.test(r.stdout)) assert.match(r.stdout, /locals( of step \(#\d+\))?:\n +i = \d+\n/);
      else assert.match(r.stdout, /locals( of main \(#\d+\))?:\n(.*\n)* +n = 300\n/);
      assert.ok(isRunning(proc.pid), 'the program still runs');
      assert.equal(await withTimeout(exitOf(proc), 30000, 'the program to end'), 0);
      assert.equal(proc.out, `ready\ntotal ${3 * 300 * 299 / 2}\n`);
    } finally {
      proc.kill('SIGKILL');
    }
  });

  test(`${v}: strata attach --break stops in the running loop, prints the stop and detaches`, async () => {
    const n = 800;
    const proc = await startPlain(py, [String(n)]);
    try {
      const line = lineOf(hotLoop, 'step');
      const r = await withTimeout(runCli(['attach', '--break', `${hotLoop}:${line}:i % 10 == 3`, String(proc.pid)]), 60000, 'strata attach');
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^-- stopped \\(breakpoint\\) in thread ${proc.pid} "MainThread"\n`), r.stdout);
      assert.match(r.stdout, new RegExp(`#0 step at ${hotLoop.replace(/[.]/g, '\\.')}:${line}\n`));
      assert.match(r.stdout, /locals:\n +i = \d*3\n/);
      assert.match(r.stderr, /The Strata agent is in process/);
      assert.equal(await withTimeout(exitOf(proc), 30000, 'the program to end'), 0);
      assert.equal(proc.out, `ready\ntotal ${3 * n * (n - 1) / 2}\n`);
    } finally {
      proc.kill('SIGKILL');
    }
  });
}, { tracing: true });
