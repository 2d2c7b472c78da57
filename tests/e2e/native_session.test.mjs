// Native sessions end to end: libraries loaded later (pending breakpoints, module events), data
// breakpoints (info and setting; their stops are in native_watchpoints.test.mjs),
// pause/stopOnEntry/terminate, attach by pid and detach, detach-and-continue, and
// `strata run --break` on a native program.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { CLI, assertClean, startStdio, withTimeout, exitOf, isRunning, waitUntil, sleep } from './lib/harness.mjs';
import { DEMO, PLUGIN, INIT, demoSrc, pluginSrc, lineOf, launchNative, frames, scopeVars, continueTo } from './lib/native.mjs';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'strata-native-'));

test('a library dlopened later: pending breakpoint becomes verified (breakpoint event), module events', async () => {
  const c = await startStdio();
  await c.initializeRequest(INIT);
  await c.launchRequest({ program: DEMO, args: ['plugin', PLUGIN] });
  const r = await c.setBreakpointsRequest({ source: { path: pluginSrc }, breakpoints: [{ line: lineOf(pluginSrc, 'plugin_body') }] });
  const bp = r.body.breakpoints[0];
  assert.equal(bp.verified, false);
  assert.equal(bp.reason, 'pending');
  assert.match(bp.message, /pending/);
  const changed = c.waitForEvent('breakpoint', 30000);
  const stopped = c.waitForEvent('stopped', 30000);
  await c.configurationDoneRequest();
  const ev = await changed;
  assert.equal(ev.body.reason, 'changed');
  assert.equal(ev.body.breakpoint.id, bp.id);
  assert.equal(ev.body.breakpoint.verified, true);
  assert.equal(ev.body.breakpoint.line, lineOf(pluginSrc, 'plugin_body'));
  const s = await stopped;
  assert.deepEqual(s.body.hitBreakpointIds, [bp.id]);
  const top = (await frames(c, s.body.threadId)).stackFrames[0];
  assert.equal(top.name, 'plugin_compute');
  assert.equal(top.source.path, pluginSrc);
  assert.equal((await scopeVars(c, top.id)).byName.x.value, '20');
  // Module events: the executable first, the plugin when it loaded, with their symbol status.
  const mods = c.eventsNamed('module').map((e) => e.body);
  const exe = mods.find((m) => m.module.path === DEMO);
  assert.ok(exe && exe.reason === 'new');
  const plugin = mods.find((m) => m.module.name === 'libnative_plugin.so');
  assert.equal(plugin.reason, 'new');
  assert.equal(plugin.module.symbolStatus, 'Symbols loaded.');
  const list = await c.send('modules', {});
  assert.ok(list.body.modules.some((m) => /libc\.so/.test(m.name)));
  assert.ok(list.body.modules.some((m) => m.path === DEMO && m.symbolStatus === 'Symbols loaded.'));
  assert.equal(list.body.totalModules, list.body.modules.length);
  assert.equal(top.moduleId, plugin.module.id);
  assert.equal(c.eventsNamed('capabilities')[0].body.capabilities.supportsLoadedSourcesRequest, true);
  const sources = (await c.send('loadedSources', {})).body.sources.map((x) => x.path);
  assert.ok(sources.includes(demoSrc), JSON.stringify(sources.slice(0, 20)));
  assert.ok(sources.includes(pluginSrc));
  assert.ok(sources.every((p) => p.startsWith('/')));
  const term = c.waitForEvent('terminated', 30000);
  await c.continueRequest({ threadId: s.body.threadId });
  await term;
  assert.match(c.output('stdout'), /loading plugin\nplugin says 42\n/);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('data breakpoints: info for a global and a local, set on the debug registers, bad ids refused', async () => {
  const line = lineOf(demoSrc, 'watch_write');
  const { c, stopped } = await launchNative(['watch'], { breakpoints: { [demoSrc]: [{ line }] } });
  const tid = stopped.body.threadId;
  const top = (await frames(c, tid)).stackFrames[0];
  const info = await c.send('dataBreakpointInfo', { name: 'watched_counter', frameId: top.id });
  assert.match(info.body.dataId, /^0x[0-9a-f]+\/4\/watched_counter$/);
  assert.match(info.body.description, /watched_counter \(4 bytes at 0x/);
  assert.deepEqual(info.body.accessTypes, ['write', 'readWrite']);
  const locals = await scopeVars(c, top.id);
  const local = await c.send('dataBreakpointInfo', { variablesReference: locals.ref, name: 'i' });
  assert.match(local.body.dataId, /\/4\/i$/);
  const missing = await c.send('dataBreakpointInfo', { name: 'no_such_variable', frameId: top.id });
  assert.equal(missing.body.dataId, null);
  assert.match(missing.body.description, /no_such_variable/);
  const set = await c.send('setDataBreakpoints', { breakpoints: [
    { dataId: info.body.dataId, accessType: 'write' },
    { dataId: 'garbage' },
    { dataId: info.body.dataId, accessType: 'read' },
  ] });
  assert.deepEqual(set.body.breakpoints.map((b) => b.verified), [true, false, false]);
  assert.match(set.body.breakpoints[1].message, /not a data breakpoint id/);
  assert.match(set.body.breakpoints[2].message, /readWrite/);
  await c.setBreakpointsRequest({ source: { path: demoSrc }, breakpoints: [] });
  await c.send('setDataBreakpoints', { breakpoints: [] });
  const term = c.waitForEvent('terminated', 30000);
  await c.continueRequest({ threadId: tid });
  await term;
  assert.match(c.output('stdout'), /counter 5\n/);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('stopOnEntry, pause while running, continue, terminate request', async () => {
  const c = await startStdio();
  await c.initializeRequest(INIT);
  await c.launchRequest({ program: DEMO, args: ['output', '-', '400', '20'], stopOnEntry: true, console: 'integratedTerminal' });
  // The program's output comes through the adapter, and the user is told why.
  assert.match(c.output('console'), /console 'integratedTerminal' is available only with "noDebug": true/);
  const entry = c.waitForEvent('stopped', 30000);
  await c.configurationDoneRequest();
  const e = await entry;
  assert.equal(e.body.reason, 'entry');
  await c.continueRequest({ threadId: e.body.threadId });
  await waitUntil(() => /line 3 /.test(c.output('stdout')), 20000, 'some output');
  const paused = c.waitForEvent('stopped', 30000);
  await c.pauseRequest({ threadId: e.body.threadId });
  const p = await paused;
  assert.equal(p.body.reason, 'pause');
  assert.equal(p.body.allThreadsStopped, true);
  const st = await frames(c, p.body.threadId, 0, 50);
  assert.ok(st.stackFrames.some((f) => f.name === 'main'));
  await c.continueRequest({ threadId: p.body.threadId });
  const term = c.waitForEvent('terminated', 30000);
  await c.terminateRequest();
  await term;
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 128 + 15);
  assert.doesNotMatch(c.output('stdout'), /done/);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('detach after a breakpoint: the program runs to the end with the output it has without a debugger', async () => {
  const dir = tmp();
  const plain = path.join(dir, 'plain.txt'), debugged = path.join(dir, 'debugged.txt');
  execFileSync(DEMO, ['output', plain, '40', '0']);
  const line = lineOf(demoSrc, 'output_line');
  const { c, stopped } = await launchNative(['output', debugged, '40', '10'], { breakpoints: { [demoSrc]: [{ line, hitCondition: '5' }] } });
  assert.equal(stopped.body.reason, 'breakpoint');
  const top = (await frames(c, stopped.body.threadId)).stackFrames[0];
  assert.equal((await scopeVars(c, top.id)).byName.i.value, '4');
  const pid = c.eventsNamed('process')[0].body.systemProcessId;
  await c.disconnectRequest({ terminateDebuggee: false });
  assert.equal(await withTimeout(exitOf(c.adapterProcess), 10000, 'adapter exit'), 0);
  await waitUntil(() => fs.existsSync(debugged) && fs.readFileSync(debugged, 'utf8').endsWith('done\n'), 30000, 'the program to finish');
  assert.equal(fs.readFileSync(debugged, 'utf8'), fs.readFileSync(plain, 'utf8'));
  await waitUntil(() => !isRunning(pid), 10000, 'the program to exit');
  fs.rmSync(dir, { recursive: true, force: true });
  assertClean(assert, c);
});

test('attach by pid, break, inspect, detach: the process keeps running and finishes intact', async () => {
  const dir = tmp();
  const plain = path.join(dir, 'plain.txt'), attached = path.join(dir, 'attached.txt');
  execFileSync(DEMO, ['output', plain, '60', '0']);
  const proc = spawn(DEMO, ['output', attached, '60', '50'], { stdio: 'ignore' });
  try {
    await waitUntil(() => fs.existsSync(attached) && /line 2 /.test(fs.readFileSync(attached, 'utf8')), 20000, 'the program to start');
    const c = await startStdio();
    await c.initializeRequest(INIT);
    await c.attachRequest({ processId: String(proc.pid) });
    const r = await c.setBreakpointsRequest({ source: { path: demoSrc }, breakpoints: [{ line: lineOf(demoSrc, 'output_line') }] });
    assert.equal(r.body.breakpoints[0].verified, true);
    const stopped = c.waitForEvent('stopped', 30000);
    await c.configurationDoneRequest();
    const s = await stopped;
    assert.equal(s.body.reason, 'breakpoint');
    assert.equal(c.eventsNamed('process')[0].body.startMethod, 'attach');
    assert.equal(c.eventsNamed('process')[0].body.systemProcessId, proc.pid);
    const top = (await frames(c, s.body.threadId)).stackFrames[0];
    const i = Number((await scopeVars(c, top.id)).byName.i.value);
    assert.ok(i >= 2 && i < 60, `i = ${i}`);
    // A second debugger is told who holds the process: the first adapter's engine process (not
    // its engine thread), and the adapter it serves.
    const c2 = await startStdio();
    await c2.initializeRequest(INIT);
    const busy = await c2.attachRequest({ processId: proc.pid }).catch((e) => e);
    assert.match(String(busy.message),
      new RegExp(`^cannot attach: process ${proc.pid}: .*already traced by process \\d+ \\(strata-engine, the engine of process ${c.adapterProcess.pid} \\(strata-dap\\)\\); `));
    await c2.disconnectRequest();
    await c.disconnectRequest();  // attach: detaches by default
    assert.equal(await withTimeout(exitOf(c.adapterProcess), 10000, 'adapter exit'), 0);
    assert.ok(isRunning(proc.pid), 'the process still runs after detach');
    assert.equal(await withTimeout(exitOf(proc), 30000, 'program exit'), 0);
    assert.equal(fs.readFileSync(attached, 'utf8'), fs.readFileSync(plain, 'utf8'));
    assertClean(assert, c);
    assertClean(assert, c2);
  } finally {
    if (isRunning(proc.pid)) proc.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('closing the pipes without disconnect detaches an attached process, as disconnect would', async () => {
  const proc = spawn(DEMO, ['output', '/dev/null', '100', '50'], { stdio: 'ignore' });
  try {
    await sleep(200);
    const c = await startStdio();
    await c.initializeRequest(INIT);
    await c.attachRequest({ processId: proc.pid });
    const stopped = c.waitForEvent('stopped', 30000);
    await c.setBreakpointsRequest({ source: { path: demoSrc }, breakpoints: [{ line: lineOf(demoSrc, 'output_line') }] });
    await c.configurationDoneRequest();
    await stopped;
    c.adapterProcess.stdin.end();
    assert.equal(await withTimeout(exitOf(c.adapterProcess), 10000, 'adapter exit'), 0);
    assert.equal(await withTimeout(exitOf(proc), 30000, 'program exit'), 0);
  } finally {
    if (isRunning(proc.pid)) proc.kill('SIGKILL');
  }
});

test('strata run --break on a native program prints each stop and continues to the end', () => {
  const line = lineOf(demoSrc, 'loop_body');
  const r = spawnSync(CLI, ['run', '--break', `${demoSrc}:${line}:i % 4 == 1`, '--', DEMO, 'loop'], { encoding: 'utf8', timeout: 120000 });
  assert.equal(r.status, 0, r.stderr);
  const stops = r.stdout.split('\n').filter((l) => l.startsWith('-- stopped'));
  assert.equal(stops.length, 3, r.stdout);  // i = 1, 5, 9
  assert.match(stops[0], /^-- stopped \(breakpoint\) in thread \d+ "native_demo"$/);
  assert.match(r.stdout, new RegExp(`#0 loop at ${demoSrc.replace(/[.]/g, '\\.')}:${line}\n`));
  assert.match(r.stdout, /#1 main at .*native_demo\.cpp:\d+\n/);
  assert.match(r.stdout, /locals:\n +sum = 30\n +i = 5\n/);  // 0 + 1 + 4 + 9 + 16
  assert.match(r.stdout, /sum 285\n/);
});
