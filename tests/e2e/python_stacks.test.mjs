// `strata stacks PID` on CPython processes (3.10-3.14): Python frames read from memory, spliced
// among the native ones, checked against the lines the program is known to be parked at.
// One interpreter per run: STRATA_STACKS_PYTHON (ctest registers one entry per CPython found),
// or each of STRATA_STACKS_PYTHONS (colon-separated) when run by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CLI, PY_TARGETS } from './lib/harness.mjs';
import { startStuck } from './lib/python.mjs';

const SCRIPT = path.join(PY_TARGETS, 'stuck.py');
const LINES = Object.fromEntries(
  fs.readFileSync(SCRIPT, 'utf8').split('\n').flatMap((l, i) => {
    const m = l.match(/# @bp:(\w+)/);
    return m ? [[m[1], i + 1]] : [];
  }));
const TABLES = (process.env.STRATA_LAYOUT_TABLES ?? '').split(':').filter(Boolean);
const pythons = process.env.STRATA_STACKS_PYTHON !== undefined
  ? [process.env.STRATA_STACKS_PYTHON].filter(Boolean)
  : (process.env.STRATA_STACKS_PYTHONS ?? '').split(':').filter(Boolean);

function minorOf(py) {
  const r = spawnSync(py, ['-c', 'import sys; print(sys.version_info[1])'], { encoding: 'utf8' });
  return Number(r.stdout.trim());
}

const start = startStuck;

function stacks(args) {
  const r = spawnSync(CLI, ['stacks', ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  return r;
}

function stateOf(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2)[0];
}

const py = (frames) => frames.filter((f) => f.kind === 'python');
const threadWith = (report, fn) => report.threads.find((t) => t.frames.some((f) => f.kind === 'python' && f.function.endsWith(fn)));
const frameOf = (thread, fn) => thread.frames.find((f) => f.kind === 'python' && f.function.endsWith(fn));

if (process.env.STRATA_STACKS_MISSING) {
  test(`stacks of CPython ${process.env.STRATA_STACKS_MISSING}`, {
    skip: `no CPython ${process.env.STRATA_STACKS_MISSING} was found when the build was configured (pyenv versions, python3.N in /usr/bin, or Debian's 3.14 that scripts/debian-cpython.sh fetches)`,
  }, () => {});
} else if (pythons.length === 0) {
  test('Python stacks', { skip: 'no CPython 3.10 or newer was found when the build was configured' }, () => {});
}

for (const python of pythons) {
  const minor = minorOf(python);

  test(`${python}: every thread's Python frames at their lines, merged with the native ones`, async (t) => {
    const run = start(python);
    t.after(() => run.child.kill('SIGKILL'));
    await run.ready;
    const pid = run.child.pid;
    const r = stacks(['--json', '--locals', '--max-frames', '5000', String(pid)]);
    assert.equal(r.status, 0, r.stderr + r.stdout);
    const report = JSON.parse(r.stdout);
    assert.equal(report.pid, pid);
    assert.match(report.python.version, new RegExp(`^3\\.${minor}\\b`));
    assert.equal(report.threads.length, 7);

    // The main thread sits in libc's sleep, called through ctypes with the GIL held.
    const main = report.threads.find((th) => th.id === pid);
    assert.equal(main.holdsGil, true);
    assert.equal(report.threads.filter((th) => th.holdsGil).length, 1);
    assert.equal(main.merged, true, main.note);
    const stuck = frameOf(main, 'stuck_in_c');
    assert.equal(stuck.line, LINES.stuck);
    assert.match(stuck.file, /stuck\.py$/);
    assert.deepEqual(stuck.locals.find((l) => l.name === 'message'), { name: 'message', type: 'str', value: "'holding'" });
    const sleepAt = main.frames.findIndex((f) => f.kind === 'native' && /(^|!)sleep\b/.test(f.function));
    assert.ok(sleepAt >= 0 && sleepAt < main.frames.indexOf(stuck), 'libc sleep is inside stuck_in_c');
    assert.equal(frameOf(main, "main").line, LINES.stuck_call);

    const sleeper = threadWith(report, 'sleeper');
    assert.equal(frameOf(sleeper, 'sleeper').line, LINES.sleeper);
    assert.equal(sleeper.waitingOn, 'syscall');
    assert.equal(sleeper.holdsGil, false);

    const waiter = threadWith(report, 'lock_waiter');
    assert.equal(frameOf(waiter, 'lock_waiter').line, LINES.lock_wait);
    assert.equal(waiter.waitingOn, 'lock');

    const gen = threadWith(report, 'numbers');
    const genFrames = py(gen.frames);
    const inGen = genFrames.findIndex((f) => f.function.endsWith('numbers'));
    assert.equal(genFrames[inGen].line, LINES.generator);
    assert.equal(genFrames[inGen + 1].function, 'generator_user');
    assert.equal(genFrames[inGen + 1].line, LINES.generator_caller);
    assert.equal(genFrames[inGen].locals.find((l) => l.name === 'count').value, '7');

    const coro = threadWith(report, 'coroutine');
    assert.equal(frameOf(coro, 'coroutine').line, LINES.coroutine);
    assert.equal(frameOf(coro, 'coroutine').locals.find((l) => l.name === 'ratio').value, '2.5');
    assert.equal(frameOf(coro, 'coroutine_user').line, LINES.coroutine_caller);
    assert.equal(coro.merged, true, coro.note);

    const rec = threadWith(report, 'recurse');
    const recFrames = py(rec.frames).filter((f) => f.function === 'recurse');
    assert.equal(recFrames.length, 1001);
    assert.equal(recFrames[0].line, LINES.recursion_bottom);
    assert.ok(recFrames.slice(1).every((f) => f.line === LINES.recursion));
    assert.equal(recFrames[0].locals.find((l) => l.name === 'depth').value, '0');
    assert.equal(recFrames[1000].locals.find((l) => l.name === 'depth').value, '1000');
    assert.equal(rec.merged, true, rec.note);

    // sorted() is C calling back into Python: the key function, then C frames, then the caller.
    const sorter = threadWith(report, 'key_of');
    const key = sorter.frames.indexOf(frameOf(sorter, 'key_of'));
    assert.equal(sorter.frames[key].line, LINES.sort_key);
    const lambda = sorter.frames.findIndex((f) => f.kind === 'python' && f.function.endsWith('<lambda>'));
    const caller = sorter.frames.indexOf(frameOf(sorter, 'sorter'));
    assert.ok(key < lambda && lambda < caller);
    assert.equal(sorter.frames[caller].line, LINES.sort_call);
    assert.ok(sorter.frames.slice(lambda + 1, caller).some((f) => f.kind !== 'python'), 'the C sort between them');
    assert.equal(sorter.merged, true, sorter.note);

    // The text form says the same, and the program is still there, still stuck.
    const text = stacks([String(pid)]);
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`^process ${pid}: CPython 3\\.${minor}`));
    assert.match(text.stdout, new RegExp(`thread ${pid} "[^"]*": holds the GIL; in syscall`));
    assert.match(text.stdout, new RegExp(`#\\d+ \\[py\\] stuck_in_c \\(.*stuck\\.py:${LINES.stuck}\\)`));
    assert.match(text.stdout, /\.\.\. \d+ interpreter frames? in /);
    assert.match(text.stdout, /waiting on a lock/);
    assert.ok(['S', 'R'].includes(stateOf(pid)));

    // Python frames alone, and native frames alone.
    const only = JSON.parse(stacks(['--json', '--python-only', String(pid)]).stdout);
    assert.ok(only.threads.every((th) => th.frames.every((f) => f.kind === 'python')));
    assert.equal(frameOf(only.threads.find((th) => th.id === pid), 'stuck_in_c').line, LINES.stuck);
    const native = JSON.parse(stacks(['--json', '--native', String(pid)]).stdout);
    assert.equal(native.python, undefined);
    assert.ok(native.threads.every((th) => th.frames.every((f) => f.kind === 'native')));
  });

  test(`${python}: a layout of another CPython is rejected with a clear error`, async (t) => {
    const other = TABLES.map((v) => Number(v.split('.')[1])).find((m) => m !== minor);
    if (other === undefined) return t.skip('the build has no layout table of another minor version');
    const run = start(python);
    t.after(() => run.child.kill('SIGKILL'));
    await run.ready;
    const r = stacks(['--python-layout', `3.${other}`, String(run.child.pid)]);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, new RegExp(`^strata: the process's memory does not fit the table from the headers of CPython 3\\.${other}\\.\\d+ \\(process runs CPython 3\\.${minor}`));
    assert.equal(run.child.exitCode, null);
  });

  test(`${python}: a process stopped with SIGSTOP is read and left stopped`, async (t) => {
    const run = start(python, ['--no-stuck']);
    t.after(() => run.child.kill('SIGKILL'));
    await run.ready;
    const pid = run.child.pid;
    process.kill(pid, 'SIGSTOP');
    for (let i = 0; i < 100 && stateOf(pid) !== 'T'; ++i) await new Promise((r) => setTimeout(r, 10));
    assert.equal(stateOf(pid), 'T');
    const r = stacks(['--json', String(pid)]);
    assert.equal(r.status, 0, r.stderr + r.stdout);
    const report = JSON.parse(r.stdout);
    assert.equal(report.stopped, true);
    assert.equal(frameOf(threadWith(report, 'sleeper'), 'sleeper').line, LINES.sleeper);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(stateOf(pid), 'T', 'still stopped after strata detached');
    process.kill(pid, 'SIGCONT');
    run.child.stdin.end('\n');
    const end = await run.exited;
    assert.equal(end.code, 0);
  });

  test(`${python}: --children reads the worker processes too`, async (t) => {
    const run = start(python, ['--children', '2', '--no-stuck']);
    let kids = [];
    t.after(() => {
      run.child.kill('SIGKILL');
      for (const k of kids) try { process.kill(k, 'SIGKILL'); } catch { /* gone */ }
    });
    await run.ready;
    const r = stacks(['--json', '--children', String(run.child.pid)]);
    assert.equal(r.status, 0, r.stderr + r.stdout);
    const report = JSON.parse(r.stdout);
    assert.equal(report.pid, run.child.pid);
    assert.equal(report.children.length, 2);
    kids = report.children.map((c) => c.pid);
    for (const c of report.children) {
      const th = threadWith(c, 'worker_main');
      assert.equal(frameOf(th, 'worker_main').line, LINES.worker_sleep);
    }
    const text = stacks(['--children', String(run.child.pid)]);
    assert.equal((text.stdout.match(/^process \d+: CPython/gm) ?? []).length, 3);
  });
}
