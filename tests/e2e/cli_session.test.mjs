// `strata session`: a Python and a native program debugged through separate short `strata`
// commands, as a terminal user or an agent does (start, break, continue, locals, eval, step,
// end), with two sessions side by side and the errors that say what to do next.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI, PYTHONS, NO_PYTHON, isRunning, waitUntil } from './lib/harness.mjs';
import { lineOf as pyLine, pyTarget } from './lib/python.mjs';
import { lineOf as cLine, demoSrc, DEMO } from './lib/native.mjs';

const loop = pyTarget('loop.py');

// Each test keeps its sessions in a folder of its own (the sessions folder is per user).
function sessionsHome() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-run-'));
  fs.chmodSync(dir, 0o700);
  return dir;
}

function strata(home, args, opts = {}) {
  return spawnSync(CLI, args, { encoding: 'utf8', timeout: 120000, env: { ...process.env, XDG_RUNTIME_DIR: home }, ...opts });
}

// A command with --json: its answer, and the exit status.
function ask(home, args) {
  const r = strata(home, [...args, '--json']);
  assert.ok(r.stdout.trim(), `no answer to ${args.join(' ')}: ${r.stderr}`);
  return { status: r.status, answer: JSON.parse(r.stdout.trim().split('\n').at(-1)), stderr: r.stderr };
}

test('a Python and a native program, each in its own session, driven one command at a time', { skip: NO_PYTHON }, async () => {
  const home = sessionsHome();
  const py = PYTHONS.at(-1);
  try {
    // Python: stopped before its first line, then a conditional breakpoint and a continue.
    let r = ask(home, ['session', 'start', '--name', 'py', '--json', '--', py, loop]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.answer.ok, true);
    assert.equal(r.answer.state, 'stopped');
    assert.equal(r.answer.session, 'py');
    const body = pyLine(loop, 'helper_body');
    r = ask(home, ['break', `${loop}:${body}:x == 3`]);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.answer.breakpoints.map((b) => [b.line, b.verified]), [[body, true]]);
    r = ask(home, ['continue']);
    assert.equal(r.answer.reason, 'breakpoint');
    assert.deepEqual(r.answer.frames[0], { name: 'helper', file: loop, line: body });
    assert.deepEqual(r.answer.locals, { x: '3' });

    // A C++ program beside it: now every command has to say which session.
    const square = cLine(demoSrc, 'square_body');
    r = ask(home, ['session', 'start', '--name', 'c', '--json', '--break', `${demoSrc}:${square}`, '--', DEMO, 'steps']);
    assert.equal(r.status, 0, r.stderr);
    const several = strata(home, ['locals']);
    assert.equal(several.status, 1);
    assert.match(several.stderr, /several sessions \(c, py\): name one with --session NAME/);
    r = ask(home, ['continue', '--session', 'c']);
    assert.equal(r.answer.reason, 'breakpoint', JSON.stringify(r.answer));
    assert.equal(r.answer.frames[0].name.replace(/\(.*$/, ''), 'square');
    assert.equal(r.answer.frames[0].line, square);
    // combine(2, 3) calls square(2) and square(3), in the order the compiler chose.
    const v = Number(ask(home, ['locals', '--session', 'c']).answer.variables.find((x) => x.name === 'v').value);
    assert.ok(v === 2 || v === 3);
    r = ask(home, ['eval', '--session', 'c', 'v * 10']);
    assert.equal(r.answer.result, String(v * 10));
    r = ask(home, ['stack', '--session', 'c', '--levels', '3']);
    assert.deepEqual(r.answer.frames.map((f) => f.name.replace(/\(.*$/, '')), ['square', 'combine', 'steps']);

    // `strata gpu` with no file: the session's Debug Console (no GPU data in this one).
    r = ask(home, ['gpu', 'top', '--session', 'py']);
    assert.match(r.answer.text, /^No GPU data in this session yet/);

    // Back to Python: locals, eval, a step, the stack, then the program to its end.
    r = ask(home, ['locals', '--session', 'py']);
    assert.deepEqual(r.answer.variables.map((v) => [v.name, v.value]), [['x', '3']]);
    r = ask(home, ['eval', '--session', 'py', 'x * 7']);
    assert.equal(r.answer.result, '21');
    r = ask(home, ['next', '--session', 'py']);
    assert.equal(r.answer.frames[0].line, pyLine(loop, 'helper_return'));
    assert.equal(r.answer.locals.y, '6');
    r = ask(home, ['stack', '--session', 'py']);
    assert.deepEqual(r.answer.frames.slice(0, 2).map((f) => f.name), ['helper', 'main']);
    r = ask(home, ['clear', '--session', 'py']);
    assert.deepEqual(r.answer.breakpoints, []);
    r = ask(home, ['continue', '--session', 'py']);
    assert.equal(r.answer.state, 'exited');
    assert.equal(r.answer.exitCode, 0);
    assert.match(r.answer.output, /total 100\n/);

    // The list, then the ends: the native program is ended with its session.
    const list = ask(home, ['session', 'list']);
    assert.deepEqual(list.answer.sessions.map((s) => [s.session, s.state]), [['c', 'stopped'], ['py', 'exited']]);
    const cPid = list.answer.sessions[0].pid;
    assert.ok(cPid > 0 && isRunning(cPid));
    r = ask(home, ['session', 'end', '--session', 'py']);
    assert.equal(r.answer.ok, true);
    r = ask(home, ['session', 'end', '--session', 'c']);
    assert.match(r.answer.text, /was ended/);
    await waitUntil(() => !isRunning(cPid), 10000, 'the native program to end');
    const none = strata(home, ['session', 'list']);
    assert.match(none.stdout, /^no sessions/);
  } finally {
    strata(home, ['session', 'end', '--all']);
    fs.rmSync(home, { recursive: true, force: true });
  }
});

test('a short command with no session says how to start one; a wait that times out says the program runs', { skip: NO_PYTHON }, () => {
  const home = sessionsHome();
  try {
    const r = strata(home, ['continue']);
    assert.equal(r.status, 1);
    assert.equal(r.stderr, 'strata: no session: start one with `strata session start -- PROGRAM`\n');
    const named = strata(home, ['stack', '--session', 'nope']);
    assert.match(named.stderr, /no session named nope: start one with `strata session start --name nope -- PROGRAM`/);
    // A program that runs on: the start answers at its timeout, `pause` stops it.
    const spin = path.join(home, 'spin.py');
    fs.writeFileSync(spin, 'import time\nwhile True:\n    time.sleep(0.01)\n');
    let a = ask(home, ['session', 'start', '--run', '--timeout', '0.5', '--json', '--', PYTHONS.at(-1), spin]);
    assert.equal(a.answer.state, 'running');
    assert.match(a.answer.text, /still running after 500 ms/);
    a = ask(home, ['pause']);
    assert.equal(a.answer.reason, 'pause');
    a = ask(home, ['threads']);
    assert.ok(a.answer.threads.some((t) => t.stoppedHere && t.name === 'MainThread'), JSON.stringify(a.answer));
    const usage = strata(home, ['break', 'spin.py']);
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /--break needs a line number|needs FILE:LINE/);
  } finally {
    strata(home, ['session', 'end', '--all']);
    fs.rmSync(home, { recursive: true, force: true });
  }
});

test('the sessions folder must be the user\'s own', () => {
  const home = sessionsHome();
  try {
    fs.mkdirSync(path.join(home, 'strata'), { mode: 0o755 });
    fs.chmodSync(path.join(home, 'strata'), 0o755);
    const r = strata(home, ['session', 'list']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /is not a folder only you can use .*mode 755/);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
});
