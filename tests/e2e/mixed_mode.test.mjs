// Mixed mode end to end: one session on a Python program and its C++ extension
// (examples/mixed), breakpoints in both layers, merged stacks, the crash stop, disconnect.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { CLI, assertClean, forEachPython, startStdio, waitUntil, isRunning, withTimeout } from './lib/harness.mjs';
import { AGENT_PYTHONPATH } from './lib/python.mjs';
import { DRIVER, EXT_DIR, EXT_SRC, extFor, markerLine, startLooping } from './lib/mixed.mjs';

async function launchMixed(python, args, { breakpoints = {}, expectStop = true, exceptions } = {}) {
  const c = await startStdio();
  await c.initializeRequest({ adapterID: 'strata', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
  const initialized = c.waitForEvent('initialized', 30000);
  await c.launchRequest({ program: DRIVER, python, args, native: true, env: { PYTHONPATH: EXT_DIR } });
  await initialized;
  const reports = {};
  for (const [file, bps] of Object.entries(breakpoints)) {
    const r = await c.setBreakpointsRequest({ source: { path: file }, breakpoints: bps });
    reports[file] = r.body.breakpoints;
  }
  if (exceptions) await c.setExceptionBreakpointsRequest(exceptions);
  const stopped = expectStop ? c.waitForEvent('stopped', 60000) : null;
  await c.configurationDoneRequest();
  return { c, reports, stopped: stopped ? await stopped : null };
}

async function stack(c, threadId) {
  return (await c.stackTraceRequest({ threadId, startFrame: 0, levels: 200 })).body.stackFrames;
}

async function frameLocals(c, frameId) {
  const scopes = await c.scopesRequest({ frameId });
  const loc = scopes.body.scopes.find((s) => s.name === 'Locals');
  const vars = await c.variablesRequest({ variablesReference: loc.variablesReference });
  return Object.fromEntries(vars.body.variables.map((v) => [v.name, v]));
}

// The merged stack must read as the call chain does: C++ innermost, then the Python frames
// that called it, none of the interpreter's or the agent's own frames.
function assertChain(frames, expected) {
  let at = -1;
  for (const [name, file, line] of expected) {
    const i = frames.findIndex((f, k) => k > at && f.name.includes(name) && (!file || f.source?.path === file));
    assert.ok(i > at, `frame ${name} after frame ${at} in ${JSON.stringify(frames.map((f) => f.name))}`);
    if (line) assert.equal(frames[i].line, line, `line of ${name}`);
    at = i;
  }
  for (const f of frames) {
    assert.ok(!/^_PyEval_EvalFrame|^PyObject_Vectorcall|^_PyObject_MakeTpCall/.test(f.name), `interpreter frame shown: ${f.name}`);
    assert.ok(!(f.source?.path ?? '').startsWith(AGENT_PYTHONPATH), `agent frame shown: ${f.source?.path}`);
  }
}

forEachPython((py) => {
  const skip = extFor(py) ? false : `examples/mixed was not built for ${py} (no pybind11 headers?)`;
  const v = path.basename(py);

  test(`${v}: a Python breakpoint and a C++ breakpoint in one session, merged stack at the native stop`, { skip }, async () => {
    const pyLine = markerLine(DRIVER, 'py_scale_line');
    const cLine = markerLine(EXT_SRC, 'scale_line');
    const { c, reports, stopped } = await launchMixed(py, [], {
      breakpoints: { [DRIVER]: [{ line: pyLine }], [EXT_SRC]: [{ line: cLine }] },
    });
    assert.equal(reports[DRIVER][0].verified, true);
    // The extension is not loaded yet: the C++ breakpoint waits for it.
    assert.ok(reports[EXT_SRC][0].verified || /pending|not loaded|load/i.test(reports[EXT_SRC][0].message ?? ''),
      JSON.stringify(reports[EXT_SRC][0]));
    // 1. The Python stop: the agent's frames and values.
    assert.equal(stopped.body.reason, 'breakpoint');
    const tid = stopped.body.threadId;
    let frames = await stack(c, tid);
    assert.equal(frames[0].name, 'main');
    assert.equal(frames[0].line, pyLine);
    const pyVars = await frameLocals(c, frames[0].id);
    assert.match(pyVars.values.value, /^\[0\.0, 1\.0, 2\.0/);
    // 2. The native stop in the extension, reached by continuing.
    const nativeStop = c.waitForEvent('stopped', 60000);
    await c.continueRequest({ threadId: tid });
    const ns = await nativeStop;
    assert.equal(ns.body.reason, 'breakpoint');
    assert.equal(ns.body.threadId, tid, 'one OS thread is one DAP thread in both layers');
    frames = await stack(c, ns.body.threadId);
    assert.match(frames[0].name, /^scale/);
    assert.equal(frames[0].line, cLine);
    assert.equal(frames[0].source.path, EXT_SRC);
    assertChain(frames, [['scale', EXT_SRC, cLine], ['main', DRIVER, pyLine], ['<module>', DRIVER, null]]);
    const cVars = await frameLocals(c, frames[0].id);
    assert.equal(cVars.v.value, '0');
    assert.equal(cVars.factor.value, '2');
    // A Python frame at a native stop: its values read from memory, evaluation refused with why.
    const main = frames.find((f) => f.name === 'main');
    const mainVars = await frameLocals(c, main.id);
    assert.match(mainVars.values.value, /list \(6 items/);
    const ev = await c.evaluateRequest({ expression: 'len(values)', frameId: main.id, context: 'watch' }).catch((e) => e);
    assert.match(String(ev.message), /read from memory at a native stop/);
    // The threads: the program's only, not the agent's.
    const threads = (await c.threadsRequest()).body.threads;
    assert.ok(threads.some((t) => t.id === tid));
    assert.ok(!threads.some((t) => t.name.startsWith('strata.')), JSON.stringify(threads));
    // 3. Without the C++ breakpoint the program runs to its end with its normal output.
    await c.setBreakpointsRequest({ source: { path: EXT_SRC }, breakpoints: [] });
    await c.continueRequest({ threadId: tid });
    await waitUntil(() => c.eventsNamed('terminated').length > 0, 60000, 'the end of the program');
    assert.equal(c.eventsNamed('exited')[0].body.exitCode, 0);
    assert.match(c.output('stdout'), /total 220\ndone\n/);
    await c.disconnectRequest();
    assertClean(assert, c);
  });

  test(`${v}: a Python callback called from C++: the stack at the Python stop shows the C++ frames between`, { skip }, async () => {
    const cbLine = markerLine(DRIVER, 'py_callback_line');
    const { c, stopped } = await launchMixed(py, [], { breakpoints: { [DRIVER]: [{ line: cbLine, condition: 'value == 4.0' }] } });
    assert.equal(stopped.body.reason, 'breakpoint');
    const frames = await stack(c, stopped.body.threadId);
    assert.equal(frames[0].name, 'combine');
    assert.equal(frames[0].line, cbLine);
    assertChain(frames, [['combine', DRIVER, cbLine], ['fold', EXT_SRC, markerLine(EXT_SRC, 'callback_line')],
      ['main', DRIVER, markerLine(DRIVER, 'py_fold_line')], ['<module>', DRIVER, null]]);
    // The Python frames are the agent's, with everything it shows; the C++ ones are shown only.
    const vars = await frameLocals(c, frames[0].id);
    assert.equal(vars.value.value, '4.0');
    assert.equal(vars.acc.value, '4.0');
    const fold = frames.find((f) => f.name.startsWith('fold'));
    assert.deepEqual((await c.scopesRequest({ frameId: fold.id })).body.scopes, []);
    const term = c.waitForEvent('terminated', 60000);
    await c.continueRequest({ threadId: stopped.body.threadId });
    await term;
    assert.match(c.output('stdout'), /total 220\ndone\n/);
    await c.disconnectRequest();
    assertClean(assert, c);
  });

  // One step request and the stop it ends in.
  async function stepAndStop(c, kind, threadId) {
    const next = c.waitForEvent('stopped', 60000);
    await c.send(kind, { threadId });
    const s = await next;
    const frames = await stack(c, s.body.threadId);
    return { reason: s.body.reason, threadId: s.body.threadId, frames, top: frames[0] };
  }

  test(`${v}: stepIn from a Python line into the C++ function it calls, next there, stepOut back to the Python caller; a continue from C++ runs on`, { skip }, async () => {
    const scaleCall = markerLine(DRIVER, 'py_scale_line');
    const foldCall = markerLine(DRIVER, 'py_fold_line');
    const { c, stopped } = await launchMixed(py, [], { breakpoints: { [DRIVER]: [{ line: scaleCall }] } });
    assert.equal(stopped.body.reason, 'breakpoint');
    const tid = stopped.body.threadId;
    // Into C++: the first line of scale, the Python caller below it.
    let at = await stepAndStop(c, 'stepIn', tid);
    assert.equal(at.reason, 'step');
    assert.equal(at.threadId, tid);
    assert.match(at.top.name, /^scale/);
    assert.deepEqual([at.top.source?.path, at.top.line], [EXT_SRC, markerLine(EXT_SRC, 'scale_first_line')]);
    assertChain(at.frames, [['scale', EXT_SRC, null], ['main', DRIVER, scaleCall], ['<module>', DRIVER, null]]);
    // A C++ line step stays in C++.
    at = await stepAndStop(c, 'next', tid);
    assert.deepEqual([at.top.name.replace(/\(.*/, ''), at.top.line], ['scale', markerLine(EXT_SRC, 'scale_first_line') + 1]);
    // Out of scale, through pybind11 and the interpreter, to the Python line after the call.
    at = await stepAndStop(c, 'stepOut', tid);
    assert.equal(at.reason, 'step');
    assert.deepEqual([at.top.name, at.top.source?.path, at.top.line], ['main', DRIVER, foldCall]);
    const vars = await frameLocals(c, at.top.id);
    assert.match(vars.scaled.value, /^\[0\.0, 2\.0, 4\.0/, 'the Python frame is the agent\'s again, its values in full');
    // Into fold; a continue there ends the step: the program runs to its end.
    at = await stepAndStop(c, 'stepIn', tid);
    assert.deepEqual([at.top.name.replace(/\(.*/, ''), at.top.line], ['fold', markerLine(EXT_SRC, 'fold_first_line')]);
    const term = c.waitForEvent('terminated', 60000);
    await c.continueRequest({ threadId: tid });
    await term;
    assert.equal(c.eventsNamed('stopped').length, 5, 'no stop after the continue');
    assert.match(c.output('stdout'), /total 220\ndone\n/);
    await c.disconnectRequest();
    assertClean(assert, c);
  });

  test(`${v}: from C++, next steps over a Python callback and stepIn stops in it`, { skip }, async () => {
    const foldCall = markerLine(DRIVER, 'py_fold_line');
    const callbackLine = markerLine(EXT_SRC, 'callback_line');
    const { c, stopped } = await launchMixed(py, [], { breakpoints: { [DRIVER]: [{ line: foldCall }] } });
    const tid = stopped.body.threadId;
    let at = await stepAndStop(c, 'stepIn', tid);
    assert.deepEqual([at.top.name.replace(/\(.*/, ''), at.top.line], ['fold', markerLine(EXT_SRC, 'fold_first_line')]);
    const nextTo = async (line) => {
      for (let i = 0; i < 6 && at.top.line !== line; i++) at = await stepAndStop(c, 'next', tid);
      assert.deepEqual([at.top.name.replace(/\(.*/, ''), at.top.line], ['fold', line]);
    };
    await nextTo(callbackLine);
    assert.equal((await frameLocals(c, at.top.id)).v.value, '0');
    // next over `acc = combine(acc, v)`: the callback runs, the step ends in fold.
    at = await stepAndStop(c, 'next', tid);
    assert.match(at.top.name, /^fold/, `next stayed in C++: ${JSON.stringify(at.frames.map((f) => f.name))}`);
    await nextTo(callbackLine);
    assert.equal((await frameLocals(c, at.top.id)).v.value, '2');
    // stepIn on it: through std::function and pybind11 into the Python callback.
    at = await stepAndStop(c, 'stepIn', tid);
    assert.equal(at.reason, 'step');
    assert.deepEqual([at.top.name, at.top.source?.path, at.top.line], ['combine', DRIVER, markerLine(DRIVER, 'py_callback_line')]);
    assertChain(at.frames, [['combine', DRIVER, null], ['fold', EXT_SRC, callbackLine], ['main', DRIVER, foldCall]]);
    const vars = await frameLocals(c, at.top.id);
    assert.deepEqual([vars.acc.value, vars.value.value], ['0.0', '2.0']);
    const term = c.waitForEvent('terminated', 60000);
    await c.continueRequest({ threadId: tid });
    await term;
    assert.match(c.output('stdout'), /total 220\ndone\n/);
    await c.disconnectRequest();
    assertClean(assert, c);
  });

  test(`${v}: from a C++ breakpoint, stepIn on a callback line stops in the Python callback, stepOut of it back in C++, stepOut of C++ at the Python caller`, { skip }, async () => {
    const foldCall = markerLine(DRIVER, 'py_fold_line');
    const callbackLine = markerLine(EXT_SRC, 'callback_line');
    const { c, stopped } = await launchMixed(py, [], { breakpoints: { [EXT_SRC]: [{ line: callbackLine }] } });
    assert.equal(stopped.body.reason, 'breakpoint');
    const tid = stopped.body.threadId;
    let at = { top: (await stack(c, tid))[0] };
    assert.deepEqual([at.top.name.replace(/\(.*/, ''), at.top.line], ['fold', callbackLine]);
    await c.setBreakpointsRequest({ source: { path: EXT_SRC }, breakpoints: [] });
    // No Python step led here: stepIn still goes through std::function and pybind11 into Python.
    at = await stepAndStop(c, 'stepIn', tid);
    assert.equal(at.reason, 'step');
    assert.deepEqual([at.top.name, at.top.source?.path, at.top.line], ['combine', DRIVER, markerLine(DRIVER, 'py_callback_line')]);
    assertChain(at.frames, [['combine', DRIVER, null], ['fold', EXT_SRC, callbackLine], ['main', DRIVER, foldCall]]);
    let vars = await frameLocals(c, at.top.id);
    assert.deepEqual([vars.acc.value, vars.value.value], ['0.0', '0.0']);
    // Out of the callback: back in the C++ code that called it, at the call's line.
    at = await stepAndStop(c, 'stepOut', tid);
    assert.equal(at.reason, 'step');
    assert.deepEqual([at.top.name.replace(/\(.*/, ''), at.top.source?.path, at.top.line], ['fold', EXT_SRC, callbackLine]);
    assertChain(at.frames, [['fold', EXT_SRC, callbackLine], ['main', DRIVER, foldCall]]);
    // Out of fold: through pybind11 and the interpreter to the Python caller. The Python step out
    // of combine is still the thread's: it ends where it would have in Python alone, in main at
    // the return point of the call (its result not assigned yet); next goes on from there.
    at = await stepAndStop(c, 'stepOut', tid);
    assert.equal(at.reason, 'step');
    assert.deepEqual([at.top.name, at.top.source?.path, at.top.line], ['main', DRIVER, foldCall]);
    vars = await frameLocals(c, at.top.id);
    assert.match(vars.scaled.value, /^\[0\.0, 2\.0, 4\.0/, 'the Python frame is the agent\'s, its values in full');
    assert.equal(vars.total, undefined);
    at = await stepAndStop(c, 'next', tid);
    assert.deepEqual([at.top.name, at.top.line], ['main', foldCall + 1]);
    assert.equal((await frameLocals(c, at.top.id)).total.value, '220.0');
    const term = c.waitForEvent('terminated', 60000);
    await c.continueRequest({ threadId: tid });
    await term;
    assert.match(c.output('stdout'), /total 220\ndone\n/);
    await c.disconnectRequest();
    assertClean(assert, c);
  });

  test(`${v}: from a C++ breakpoint, stepIn on a line that calls the C++ standard library steps over it in own code; next off the function's end stops at the Python caller`, { skip }, async () => {
    const first = markerLine(EXT_SRC, 'scale_first_line');
    const scaleLine = markerLine(EXT_SRC, 'scale_line');
    const { c, stopped } = await launchMixed(py, [], { breakpoints: { [EXT_SRC]: [{ line: first }] } });
    assert.equal(stopped.body.reason, 'breakpoint');
    const tid = stopped.body.threadId;
    let at = { top: (await stack(c, tid))[0] };
    for (let i = 0; i < 6 && at.top.line !== scaleLine + 1; i++) at = await stepAndStop(c, 'next', tid);
    assert.deepEqual([at.top.name.replace(/\(.*/, ''), at.top.line], ['scale', scaleLine + 1], 'at out.push_back(scaled)');
    // stepIn on `out.push_back(scaled)`: vector's code is not the program's own; the step goes on
    // in scale, to the loop's next line.
    at = await stepAndStop(c, 'stepIn', tid);
    assert.equal(at.reason, 'step');
    assert.match(at.top.name, /^scale/, `stayed in scale: ${JSON.stringify(at.frames.slice(0, 4).map((f) => f.name))}`);
    assert.ok([scaleLine - 1, scaleLine].includes(at.top.line), `the loop's next line, not ${at.top.line}`);
    // next to the end of scale and off it: the Python caller's next line.
    for (let i = 0; i < 40 && /^scale/.test(at.top.name); i++) at = await stepAndStop(c, 'next', tid);
    assert.deepEqual([at.top.name, at.top.source?.path, at.top.line], ['main', DRIVER, markerLine(DRIVER, 'py_fold_line')]);
    assert.match((await frameLocals(c, at.top.id)).scaled.value, /^\[0\.0, 2\.0, 4\.0/);
    const term = c.waitForEvent('terminated', 60000);
    await c.continueRequest({ threadId: tid });
    await term;
    assert.match(c.output('stdout'), /total 220\ndone\n/);
    await c.disconnectRequest();
    assertClean(assert, c);
  });

  test(`${v}: conditions, hit counts and log points in both layers`, { skip }, async () => {
    const { c, stopped } = await launchMixed(py, [], {
      breakpoints: {
        [EXT_SRC]: [{ line: markerLine(EXT_SRC, 'scale_line'), logMessage: 'scaled v={v}' },
                    { line: markerLine(EXT_SRC, 'callback_line'), condition: 'v == 6' }],
        [DRIVER]: [{ line: markerLine(DRIVER, 'py_callback_line'), hitCondition: '3' }],
      },
    });
    // The third call of the Python callback (value 4.0), then the C++ condition (v == 6).
    assert.equal(stopped.body.reason, 'breakpoint');
    let frames = await stack(c, stopped.body.threadId);
    assert.equal(frames[0].name, 'combine');
    assert.equal((await frameLocals(c, frames[0].id)).value.value, '4.0');
    const second = c.waitForEvent('stopped', 60000);
    await c.continueRequest({ threadId: stopped.body.threadId });
    const s2 = await second;
    frames = await stack(c, s2.body.threadId);
    assert.match(frames[0].name, /^fold/);
    const cVars = await frameLocals(c, frames[0].id);
    assert.equal(cVars.v.value, '6');
    assert.equal(cVars.acc.value, '20');
    const term = c.waitForEvent('terminated', 60000);
    await c.continueRequest({ threadId: s2.body.threadId });
    await term;
    const logged = c.output('console').split('\n').filter((l) => l.startsWith('scaled v='));
    assert.deepEqual(logged, ['scaled v=0', 'scaled v=1', 'scaled v=2', 'scaled v=3', 'scaled v=4', 'scaled v=5']);
    assert.match(c.output('stdout'), /total 220\ndone\n/);
    await c.disconnectRequest();
    assertClean(assert, c);
  });

  test(`${v}: an interpreter named through a wrapper script (a pyenv shim) is started as its ELF file`, { skip }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-mixed-'));
    const wrapper = path.join(dir, 'python');
    fs.writeFileSync(wrapper, `#!/bin/sh\nexec ${py} "$@"\n`, { mode: 0o755 });
    const { c, stopped } = await launchMixed(wrapper, [], { breakpoints: { [EXT_SRC]: [{ line: markerLine(EXT_SRC, 'scale_line') }] } });
    assert.equal(stopped.body.reason, 'breakpoint');
    const frames = await stack(c, stopped.body.threadId);
    assertChain(frames, [['scale', EXT_SRC, null], ['main', DRIVER, markerLine(DRIVER, 'py_scale_line')]]);
    await c.disconnectRequest({ terminateDebuggee: true });
    fs.rmSync(dir, { recursive: true, force: true });
    assertClean(assert, c);
  });

  test(`${v}: a crash in the extension stops with the C++ locals and the Python line that called it`, { skip }, async () => {
    const { c, stopped } = await launchMixed(py, ['--crash']);
    assert.equal(stopped.body.reason, 'exception');
    const info = await c.send('exceptionInfo', { threadId: stopped.body.threadId });
    assert.equal(info.body.exceptionId, 'SIGSEGV');
    const frames = await stack(c, stopped.body.threadId);
    assert.match(frames[0].name, /^histogram/);
    assert.equal(frames[0].line, markerLine(EXT_SRC, 'oob_line'));
    assertChain(frames, [['histogram', EXT_SRC, null], ['main', DRIVER, markerLine(DRIVER, 'py_crash_line')], ['<module>', DRIVER, null]]);
    const locals = await frameLocals(c, frames[0].id);
    assert.equal(locals.bin.value, '1000000000000');
    assert.equal(locals.bins.value, '4');
    await c.disconnectRequest({ terminateDebuggee: true });
    assertClean(assert, c);
  });

  test(`${v}: attach by pid with "native": true to a running program: a C++ breakpoint set before the native debugger is in is hit, merged stack, disconnect leaves it running`, { skip }, async () => {
    const { prog, until, result, dir } = await startLooping(py);
    try {
      const c = await startStdio();
      await c.initializeRequest({ adapterID: 'strata', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
      const initialized = c.waitForEvent('initialized', 30000);
      await c.attachRequest({ processId: prog.pid, native: true });
      await initialized;
      const cLine = markerLine(EXT_SRC, 'checksum_line');
      const bp = (await c.setBreakpointsRequest({ source: { path: EXT_SRC }, breakpoints: [{ line: cLine }] })).body.breakpoints[0];
      assert.equal(bp.verified, false);
      assert.match(bp.message, /attaches once the Python agent is in/);
      // An address only the native debugger can give is not held: said so, not left pending.
      const ib = (await c.send('setInstructionBreakpoints', { breakpoints: [{ instructionReference: '0x1000' }] })).body.breakpoints[0];
      assert.deepEqual([ib.verified, ib.reason], [false, 'failed']);
      assert.match(ib.message, /^not set: the native debugger is not in the process yet/);
      await c.configurationDoneRequest();
      // The read-only snapshot first (as in any attach by pid), then the program runs with the
      // agent in, the native debugger attaches and the held breakpoint is hit.
      const hit = (e) => e.body.reason === 'breakpoint';
      await waitUntil(() => c.eventsNamed('stopped').some(hit), 60000, 'the C++ breakpoint');
      assert.equal(c.eventsNamed('stopped')[0].body.description, 'Snapshot (read-only)');
      const s = c.eventsNamed('stopped').find(hit);
      assert.deepEqual(s.body.hitBreakpointIds, [bp.id], 'the id the client got for the held breakpoint');
      const said = c.eventsNamed('output').map((e) => e.body.output).join('');
      assert.match(said, /The Strata agent is in process/);
      assert.match(said, /The native debugger is in process \d+ too/);
      const frames = await stack(c, s.body.threadId);
      assertChain(frames, [['checksum', EXT_SRC, cLine], ['main', DRIVER, markerLine(DRIVER, 'py_until_line')], ['<module>', DRIVER, null]]);
      assert.match((await frameLocals(c, frames[0].id)).x.value, /^\d+$/);
      await c.disconnectRequest({ terminateDebuggee: false });
      fs.writeFileSync(until, '');
      await waitUntil(() => fs.existsSync(result) && fs.readFileSync(result, 'utf8').length > 0, 60000, 'the program to finish');
      assert.equal(fs.readFileSync(result, 'utf8'), 'total 220 done\n');
      assertClean(assert, c);
    } finally {
      prog.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test(`${v}: strata attach --native --break in the C++ extension: the stop with the Python frames that called it, then detach`, { skip }, async () => {
    const { prog, until, result, dir } = await startLooping(py);
    try {
      const cLine = markerLine(EXT_SRC, 'checksum_line');
      const r = await withTimeout(new Promise((resolve) => {
        const p = spawn(CLI, ['attach', '--native', '--break', `${EXT_SRC}:${cLine}`, String(prog.pid)], { stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '', stderr = '';
        p.stdout.on('data', (d) => { stdout += d; });
        p.stderr.on('data', (d) => { stderr += d; });
        p.on('exit', (status) => resolve({ status, stdout, stderr }));
      }), 90000, 'strata attach --native');
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^-- stopped \\(breakpoint\\) in thread ${prog.pid}`), r.stdout);
      assert.match(r.stdout, new RegExp(`#0 checksum.* at ${EXT_SRC.replace(/[.]/g, '\\.')}:${cLine}\n`), r.stdout);
      // Below the C++ frames shown, the Python line that called them.
      assert.match(r.stdout, new RegExp(`\n   \\.\\.\\.\n   #\\d+ main at ${DRIVER.replace(/[.]/g, '\\.')}:${markerLine(DRIVER, 'py_until_line')}\n   #\\d+ <module> at `), r.stdout);
      assert.match(r.stderr, /The native debugger is in process/);
      fs.writeFileSync(until, '');
      await waitUntil(() => fs.existsSync(result) && fs.readFileSync(result, 'utf8').length > 0, 60000, 'the program to finish');
      assert.equal(fs.readFileSync(result, 'utf8'), 'total 220 done\n');
    } finally {
      prog.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test(`${v}: disconnect at a native stop leaves the program running to its normal end`, { skip }, async () => {
    const result = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'strata-mixed-')), 'result.txt');
    const { c, stopped } = await launchMixed(py, ['--loop', '2000', '--result', result], {
      breakpoints: { [EXT_SRC]: [{ line: markerLine(EXT_SRC, 'checksum_line') }] },
    });
    assert.equal(stopped.body.reason, 'breakpoint');
    const frames = await stack(c, stopped.body.threadId);
    assertChain(frames, [['checksum', EXT_SRC, null], ['main', DRIVER, markerLine(DRIVER, 'py_loop_line')]]);
    const pid = c.eventsNamed('process')[0].body.systemProcessId;
    await c.disconnectRequest({ terminateDebuggee: false });
    await waitUntil(() => fs.existsSync(result) && fs.readFileSync(result, 'utf8').length > 0, 60000, 'the detached program to finish');
    assert.equal(fs.readFileSync(result, 'utf8'), 'total 220 done\n');
    await waitUntil(() => !isRunning(pid), 30000, 'the detached program to exit');
    assertClean(assert, c);
  });
});

test('attach with "native": true needs a processId', async () => {
  const c = await startStdio();
  await c.initializeRequest({ adapterID: 'strata', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
  const err = await c.attachRequest({ native: true, connect: { port: 5678 } }).catch((e) => e);
  assert.match(String(err.message), /"native": true \(mixed mode\) attaches to a running Python program by arguments.processId/);
  await c.disconnectRequest();
  assertClean(assert, c);
});
