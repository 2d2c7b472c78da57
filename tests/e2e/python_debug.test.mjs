// Python debugging through strata-dap and the in-target agent, on every interpreter in
// STRATA_PYTHONS: breakpoints of every kind, stepping, stacks, variables, evaluation,
// exceptions, pause, threads, disconnect and attach.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { assertClean, startStdio, waitUntil, exitOf, withTimeout, forEachPython } from './lib/harness.mjs';
import { lineOf, pyTarget, launchAndStop, topFrame, locals, continueTo, AGENT_PYTHONPATH } from './lib/python.mjs';

const demo = pyTarget('session_demo.py');

forEachPython((py) => {
  const v = path.basename(py);

  test(`${v}: line breakpoint, stack paging, scopes, variables, evaluate, setVariable`, async () => {
    const line = lineOf(demo, 'compute_call');
    const { c, stopped } = await launchAndStop(py, demo, { breakpoints: { [demo]: [{ line }] } });
    assert.equal(stopped.body.reason, 'breakpoint');
    assert.equal(stopped.body.hitBreakpointIds.length, 1);
    const setAgain = c.received.find((m) => m.command === 'setBreakpoints' && m.type === 'response');
    assert.equal(stopped.body.hitBreakpointIds[0], setAgain.body.breakpoints[0].id);
    const tid = stopped.body.threadId;
    const caps = c.eventsNamed('capabilities');
    assert.equal(caps.length, 1);
    // What only the Python backend does comes with it; what every backend does came before.
    assert.equal(caps[0].body.capabilities.supportsSetExpression, true);
    assert.equal(caps[0].body.capabilities.supportsLogPoints, undefined);
    assert.deepEqual(caps[0].body.capabilities.exceptionBreakpointFilters.map((f) => f.filter), ['raised', 'uncaught', 'userUnhandled', 'cuda']);

    const all = await c.stackTraceRequest({ threadId: tid });
    assert.deepEqual(all.body.stackFrames.map((f) => f.name), ['compute', 'main', '<module>']);
    assert.equal(all.body.stackFrames[0].line, line);
    assert.equal(all.body.stackFrames[0].source.path, demo);
    const page = await c.stackTraceRequest({ threadId: tid, startFrame: 1, levels: 1 });
    assert.equal(page.body.totalFrames, 3);
    assert.deepEqual(page.body.stackFrames.map((f) => f.name), ['main']);

    const frameId = all.body.stackFrames[0].id;
    const vars = await locals(c, frameId);
    assert.equal(vars.n.value, '1000');
    assert.equal(vars.label.value, "'items'");
    assert.equal(vars.big.indexedVariables, 1000);
    const slice = await c.variablesRequest({ variablesReference: vars.big.variablesReference, filter: 'indexed', start: 500, count: 3 });
    assert.deepEqual(slice.body.variables.map((x) => [x.name, x.value]), [['[500]', '500'], ['[501]', '501'], ['[502]', '502']]);

    const ev = await c.evaluateRequest({ expression: 'n * 2 + len(label)', frameId, context: 'repl' });
    assert.equal(ev.body.result, '2005');
    const hover = await c.evaluateRequest({ expression: 'label', frameId, context: 'hover' });
    assert.equal(hover.body.result, "'items'");
    const bad = await c.evaluateRequest({ expression: 'nope + 1', frameId, context: 'repl' }).catch((e) => e);
    assert.match(String(bad.message), /NameError/);

    const scopes = await c.scopesRequest({ frameId });
    const locRef = scopes.body.scopes.find((s) => s.name === 'Locals').variablesReference;
    const set = await c.send('setVariable', { variablesReference: locRef, name: 'label', value: '"abc"' });
    assert.equal(set.body.value, "'abc'");
    // The program sees the new value: compute returns total + len(label) = 1001 + 3.
    const ret = lineOf(demo, 'compute_return');
    await c.setBreakpointsRequest({ source: { path: demo }, breakpoints: [{ line: ret }] });
    const s2 = await continueTo(c, tid);
    assert.equal(s2.body.reason, 'breakpoint');
    const f2 = await topFrame(c, tid);
    assert.equal(f2.line, ret);
    const r = await c.evaluateRequest({ expression: 'total + len(label)', frameId: f2.id, context: 'watch' });
    assert.equal(r.body.result, '1004');
    // Ids from before the resume are void now.
    const stale = await c.scopesRequest({ frameId }).catch((e) => e);
    assert.match(String(stale.message), /unknown frameId/);

    const term = c.waitForEvent('terminated', 30000);
    await c.setBreakpointsRequest({ source: { path: demo }, breakpoints: [] });
    await c.continueRequest({ threadId: tid });
    await term;
    assert.match(c.output('stdout'), /result 1019\n/);
    await c.disconnectRequest();
    // A clean exit: under ASan a leak would make it fail.
    assert.equal(await withTimeout(exitOf(c.adapterProcess), 10000, 'adapter exit'), 0);
    assertClean(assert, c);
  });

  test(`${v}: step over, in and out`, async () => {
    const line = lineOf(demo, 'compute_call');
    const { c, stopped } = await launchAndStop(py, demo, { breakpoints: { [demo]: [{ line }] } });
    const tid = stopped.body.threadId;
    let s = c.waitForEvent('stopped');
    await c.stepInRequest({ threadId: tid });
    assert.equal((await s).body.reason, 'step');
    let f = await topFrame(c, tid);
    assert.equal(f.name, 'add');
    assert.equal(f.line, lineOf(demo, 'add_body'));
    s = c.waitForEvent('stopped');
    await c.nextRequest({ threadId: tid });
    await s;
    f = await topFrame(c, tid);
    assert.equal(f.line, lineOf(demo, 'add_return'));
    s = c.waitForEvent('stopped');
    await c.stepOutRequest({ threadId: tid });
    await s;
    f = await topFrame(c, tid);
    assert.equal(f.name, 'compute');
    assert.equal(f.line, line);
    await c.disconnectRequest({ terminateDebuggee: true });
    assertClean(assert, c);
  });

  test(`${v}: conditional, hit-count and log point breakpoints; threads with names`, async () => {
    const loop = lineOf(demo, 'loop');
    const { c, stopped } = await launchAndStop(py, demo, {
      breakpoints: { [demo]: [{ line: loop, condition: 'i == 4' }, { line: lineOf(demo, 'add_body'), hitCondition: '2' },
                              { line: lineOf(demo, 'print'), logMessage: 'final result={result}' }] },
    });
    const tid = stopped.body.threadId;
    // add() runs first from compute, then from depth: the hit condition stops on the second call.
    let f = await topFrame(c, tid);
    assert.equal(f.line, lineOf(demo, 'add_body'));
    let vars = await locals(c, f.id);
    assert.equal(vars.a.value, '0');
    const threads = await c.threadsRequest();
    const names = threads.body.threads.map((t) => t.name);
    assert.ok(names.includes('MainThread'), names.join(','));
    assert.ok(names.includes('worker-1'), names.join(','));
    const s2 = await continueTo(c, tid);
    f = await topFrame(c, s2.body.threadId);
    assert.equal(f.line, loop);
    vars = await locals(c, f.id);
    assert.equal(vars.i.value, '4');
    const term = c.waitForEvent('terminated', 30000);
    await c.continueRequest({ threadId: tid });
    await term;
    assert.match(c.output('console'), /final result=1021\n/);
    assert.match(c.output('stdout'), /result 1021\n/);
    await c.disconnectRequest();
    assertClean(assert, c);
  });

  test(`${v}: function breakpoint, completions, setExpression`, async () => {
    const { c, stopped } = await launchAndStop(py, demo, { functions: [{ name: 'compute' }] });
    assert.equal(stopped.body.reason, 'function breakpoint');
    const tid = stopped.body.threadId;
    let f = await topFrame(c, tid);
    assert.equal(f.name, 'compute');
    const comp = await c.send('completions', { frameId: f.id, text: 'compu', column: 6 });
    assert.ok(comp.body.targets.some((t) => t.label === 'compute'), JSON.stringify(comp.body.targets));
    const set = await c.send('setExpression', { frameId: f.id, expression: 'n', value: '7' });
    assert.equal(set.body.value, '7');
    const ev = await c.evaluateRequest({ expression: 'n * 6', frameId: f.id, context: 'clipboard' });
    assert.equal(ev.body.result, '42');
    await c.disconnectRequest({ terminateDebuggee: true });
    assertClean(assert, c);
  });

  test(`${v}: integratedTerminal launch runs the program in the client's terminal and debugs it`, async () => {
    const c = await startStdio();
    let terminalOutput = '';
    c.reverseHandler = (r) => {
      const env = { ...process.env };
      for (const [k, val] of Object.entries(r.arguments.env ?? {})) { if (val === null) delete env[k]; else env[k] = val; }
      const p = spawn(r.arguments.args[0], r.arguments.args.slice(1), { cwd: r.arguments.cwd, env });
      p.stdout.on('data', (d) => { terminalOutput += d; });
      return { processId: p.pid };
    };
    await c.initializeRequest({ adapterID: 'strata', pathFormat: 'path', supportsRunInTerminalRequest: true });
    await c.launchRequest({ program: demo, python: py, console: 'integratedTerminal' });
    const line = lineOf(demo, 'loop');
    await c.setBreakpointsRequest({ source: { path: demo }, breakpoints: [{ line, condition: 'i == 5' }] });
    const s = c.waitForEvent('stopped', 30000);
    await c.configurationDoneRequest();
    const stopped = await s;
    const f = await topFrame(c, stopped.body.threadId);
    assert.equal((await locals(c, f.id)).i.value, '5');
    const term = c.waitForEvent('terminated', 30000);
    await c.continueRequest({ threadId: stopped.body.threadId });
    await term;
    await waitUntil(() => /result 1021\n/.test(terminalOutput), 10000, 'the terminal output');
    await c.disconnectRequest();
    assertClean(assert, c);
  });

  test(`${v}: configuration sent right after launch, before the program connects, still applies`, async () => {
    const c = await startStdio();
    await c.initializeRequest();
    // What VS Code does: launch, then breakpoints and configurationDone without waiting.
    const launched = c.launchRequest({ program: demo, python: py });
    const bps = c.setBreakpointsRequest({ source: { path: demo }, breakpoints: [{ line: lineOf(demo, 'loop'), condition: 'i == 2' }] });
    const s = c.waitForEvent('stopped', 30000);
    const done = c.configurationDoneRequest();
    await Promise.all([launched, bps, done]);
    assert.equal((await bps).body.breakpoints[0].verified, true);
    const stopped = await s;
    const f = await topFrame(c, stopped.body.threadId);
    assert.equal((await locals(c, f.id)).i.value, '2');
    await c.disconnectRequest({ terminateDebuggee: true });
    assertClean(assert, c);
  });

  test(`${v}: module launch with stopOnEntry, cwd, env and args`, async () => {
    const pkg = pyTarget('pkg_demo/__main__.py');
    const { c, stopped } = await launchAndStop(py, undefined, {
      launch: { program: undefined, module: 'pkg_demo', cwd: path.dirname(path.dirname(pkg)), args: ['a b', 'c'], stopOnEntry: true,
                env: { STRATA_TEST_VAR: 'from-launch' } },
      breakpoints: { [pkg]: [{ line: lineOf(pkg, 'module_main') }] },
    });
    assert.equal(stopped.body.reason, 'entry');
    const s = await continueTo(c, stopped.body.threadId);
    assert.equal(s.body.reason, 'breakpoint');
    const f = await topFrame(c, s.body.threadId);
    assert.equal(f.name, 'report');
    const env = await c.evaluateRequest({ expression: "__import__('os').environ['STRATA_TEST_VAR']", frameId: f.id, context: 'watch' });
    assert.equal(env.body.result, "'from-launch'");
    const term = c.waitForEvent('terminated', 30000);
    await c.continueRequest({ threadId: s.body.threadId });
    await term;
    assert.match(c.output('stdout'), /module __main__ \['a b', 'c'\]\n/);
    await c.disconnectRequest();
    assertClean(assert, c);
  });

  test(`${v}: code without a file shows through the source request`, async () => {
    const program = pyTarget('exec_source.py');
    const { c, stopped } = await launchAndStop(py, program, { exceptions: { filters: ['uncaught'] } });
    assert.equal(stopped.body.reason, 'exception');
    const f = await topFrame(c, stopped.body.threadId);
    assert.equal(f.name, 'boom');
    assert.equal(f.line, 2);
    assert.equal(f.source.name, '<generated>');
    assert.ok(f.source.sourceReference > 0);
    const src = await c.sourceRequest({ source: f.source, sourceReference: f.source.sourceReference });
    assert.equal(src.body.content, "def boom(v):\n    raise KeyError(v)\n\n\nboom('from exec')\n");
    const bad = await c.sourceRequest({ sourceReference: 987654 }).catch((e) => e);
    assert.match(String(bad.message), /unknown sourceReference 987654/);
    await c.disconnectRequest({ terminateDebuggee: true });
    assertClean(assert, c);
  });

  test(`${v}: a breakpoint in a file written later is resolved with a breakpoint event`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-later-'));
    const later = path.join(dir, 'made_later.py');
    const c = await startStdio();
    await c.initializeRequest();
    await c.launchRequest({ program: pyTarget('generated.py'), python: py, args: [dir] });
    const set = await c.setBreakpointsRequest({ source: { path: later }, breakpoints: [{ line: 3 }] });
    const id = set.body.breakpoints[0].id;
    assert.ok(id > 0);
    const changed = c.waitForEvent('breakpoint', 30000);
    const s = c.waitForEvent('stopped', 30000);
    await c.configurationDoneRequest();
    const ev = await changed;
    assert.equal(ev.body.reason, 'changed');
    assert.equal(ev.body.breakpoint.id, id);
    assert.equal(ev.body.breakpoint.verified, true);
    const stopped = await s;
    assert.deepEqual(stopped.body.hitBreakpointIds, [id]);
    const f = await topFrame(c, stopped.body.threadId);
    assert.equal(f.source.path, later);
    assert.equal((await locals(c, f.id)).value.value, '5');
    await c.disconnectRequest({ terminateDebuggee: true });
    assertClean(assert, c);
  });

  test(`${v}: uncaught exception stops at the raise site with exceptionInfo`, async () => {
    const program = pyTarget('uncaught.py');
    const { c, stopped } = await launchAndStop(py, program, { exceptions: { filters: ['uncaught'] } });
    assert.equal(stopped.body.reason, 'exception');
    const tid = stopped.body.threadId;
    const f = await topFrame(c, tid);
    assert.equal(f.name, 'check');
    assert.equal(f.line, lineOf(program, 'raise'));
    const vars = await locals(c, f.id);
    assert.equal(vars.x.value, '7');
    const info = await c.send('exceptionInfo', { threadId: tid });
    assert.equal(info.body.exceptionId, 'ValueError');
    assert.match(info.body.description, /bad value 7/);
    assert.match(info.body.details.stackTrace, /raise ValueError/);
    await c.disconnectRequest({ terminateDebuggee: true });
    assertClean(assert, c);
  });

  test(`${v}: pause stops a busy loop`, async () => {
    const program = pyTarget('busy.py');
    const { c } = await launchAndStop(py, program, { expectStop: false });
    // Paused before the loop, the program has no `n` yet: wait until it says it loops.
    await waitUntil(() => /looping\n/.test(c.output('stdout')), 20000, 'the program to reach its loop');
    const threads = await c.threadsRequest();
    const tid = threads.body.threads[0].id;
    const s = c.waitForEvent('stopped', 20000);
    await c.pauseRequest({ threadId: tid });
    const stopped = await s;
    assert.equal(stopped.body.reason, 'pause');
    const f = await topFrame(c, stopped.body.threadId);
    assert.equal(f.source.path, program);
    const n = await c.evaluateRequest({ expression: 'n > 0', frameId: f.id, context: 'watch' });
    assert.equal(n.body.result, 'True');
    await c.disconnectRequest({ terminateDebuggee: true });
    assertClean(assert, c);
  });

  test(`${v}: disconnect without terminating leaves the program running to its end`, async () => {
    const program = pyTarget('runon.py');
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'strata-runon-')), 'result.txt');
    const { c, stopped } = await launchAndStop(py, program, {
      breakpoints: { [program]: [{ line: lineOf(program, 'work'), condition: 'i == 3' }] }, launch: { args: [out] },
    });
    const f = await topFrame(c, stopped.body.threadId);
    assert.equal((await locals(c, f.id)).i.value, '3');
    await c.disconnectRequest({ terminateDebuggee: false });
    await waitUntil(() => fs.existsSync(out) && fs.readFileSync(out, 'utf8').length > 0, 20000, 'the program to finish');
    assert.equal(await withTimeout(exitOf(c.adapterProcess), 10000, 'adapter exit'), 0);
    // The sum of 0..29 and no tool left holding DEBUGGER_ID.
    assert.equal(fs.readFileSync(out, 'utf8'), '435 None');
    assertClean(assert, c);
  });

  test(`${v}: attach to python -m strata --listen`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-attach-'));
    const portFile = path.join(dir, 'port');
    const program = pyTarget('loop.py');
    const proc = spawn(py, ['-m', 'strata', '--listen', '127.0.0.1:0', '--port-file', portFile, '--wait-for-client', program],
      { env: { ...process.env, PYTHONPATH: AGENT_PYTHONPATH }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    proc.stdout.on('data', (d) => { stdout += d; });
    try {
      await waitUntil(() => fs.existsSync(portFile) && fs.readFileSync(portFile, 'utf8').endsWith('\n'), 20000, 'the port file');
      const port = Number(fs.readFileSync(portFile, 'utf8'));
      const c = await startStdio();
      await c.initializeRequest();
      await c.attachRequest({ connect: { host: '127.0.0.1', port } });
      const line = lineOf(program, 'helper_body');
      await c.setBreakpointsRequest({ source: { path: program }, breakpoints: [{ line, condition: 'x == 5' }] });
      const s = c.waitForEvent('stopped', 30000);
      await c.configurationDoneRequest();
      const stopped = await s;
      const f = await topFrame(c, stopped.body.threadId);
      assert.equal(f.line, line);
      assert.equal((await locals(c, f.id)).x.value, '5');
      await c.disconnectRequest();
      assert.equal(await withTimeout(exitOf(proc), 20000, 'the program to end'), 0);
      assert.equal(await withTimeout(exitOf(c.adapterProcess), 10000, 'adapter exit'), 0);
      assert.match(stdout, /total 100\n/);
      assertClean(assert, c);
    } finally {
      proc.kill();
    }
  });
}, { tracing: true });
