// The debuggee outlives its debugger: strata-dap killed with SIGKILL (an IDE crash, the OOM
// killer) while the program is stopped at a breakpoint. The ptrace engine runs in a process of
// its own (strata-engine), sees its client gone, takes every breakpoint out and lets the program
// go: an attached one runs on to its end, a launched one follows the launch's "onDisconnect".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { exitOf, forEachPython, isRunning, startStdio, waitUntil, withTimeout } from './lib/harness.mjs';
import { DEMO, INIT, demoSrc, lineOf } from './lib/native.mjs';
import { EXT_SRC, extFor, markerLine, startLooping } from './lib/mixed.mjs';

const OUTPUT_LINE = lineOf(demoSrc, 'output_line');

// TracerPid from /proc/PID/status (0: nobody traces it).
function tracerOf(pid) {
  const m = /TracerPid:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]);
}

// The process whose thread traces `pid` (TracerPid names the thread: the engine thread).
function tracingProcess(pid) {
  const tracer = tracerOf(pid);
  if (tracer === 0) return 0;
  return Number(/Tgid:\s+(\d+)/.exec(fs.readFileSync(`/proc/${tracer}/status`, 'utf8'))[1]);
}

// The bytes of every executable mapping of `file` in the process against the file's own: the
// offsets that differ (a leftover int3 is one).
function textDifferences(pid, file) {
  const real = fs.realpathSync(file);
  const maps = fs.readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n');
  const mem = fs.openSync(`/proc/${pid}/mem`, 'r');
  const fd = fs.openSync(real, 'r');
  const diffs = [];
  let compared = 0;
  try {
    for (const line of maps) {
      const f = line.trim().split(/\s+/);
      if (f.length < 6 || f[5] !== real || !f[1].includes('x')) continue;
      const [lo, hi] = f[0].split('-').map((x) => parseInt(x, 16));
      const offset = parseInt(f[2], 16);
      const size = Math.min(hi - lo, fs.fstatSync(fd).size - offset);
      const live = Buffer.alloc(size), disk = Buffer.alloc(size);
      fs.readSync(mem, live, 0, size, lo);
      fs.readSync(fd, disk, 0, size, offset);
      for (let i = 0; i < size; ++i) if (live[i] !== disk[i]) diffs.push(`0x${(lo + i).toString(16)}: ${live[i].toString(16)} (file ${disk[i].toString(16)})`);
      compared += size;
    }
  } finally {
    fs.closeSync(mem);
    fs.closeSync(fd);
  }
  assert.ok(compared > 0, `no executable mapping of ${real} in process ${pid}`);
  return diffs;
}

// The strata-engine child of an adapter (its pid), from /proc.
function engineOf(adapterPid) {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === adapterPid && stat.includes('(strata-engine)')) return Number(entry);
    } catch { /* gone meanwhile */ }
  }
  return 0;
}

async function killAdapter(c) {
  const exited = exitOf(c.adapterProcess);
  c.adapterProcess.kill('SIGKILL');
  await withTimeout(exited, 10000, 'strata-dap to die');
}

// native_demo output FILE ROUNDS DELAY_MS [term], run plainly; resolves once it has written a line.
async function startOutput(rounds, delayMs, term = false) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-survive-'));
  const file = path.join(dir, 'out.txt');
  const prog = spawn(DEMO, ['output', file, String(rounds), String(delayMs), ...(term ? ['term'] : [])], { stdio: 'ignore' });
  await waitUntil(() => fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes('line 0 '), 10000, 'the program to start');
  return { prog, file, dir };
}

function expectedOutput(rounds) {
  let text = '';
  for (let i = 0; i < rounds; ++i) text += `line ${i} value ${i * i + i + 1}\n`;
  return text + 'done\n';
}

// initialize + attach by pid + a conditional breakpoint on the output line; resolves at the stop.
async function attachAndStop(pid, condition) {
  const c = await startStdio();
  await c.initializeRequest(INIT);
  const initialized = c.waitForEvent('initialized', 20000);
  await c.attachRequest({ processId: pid });
  await initialized;
  const bp = (await c.setBreakpointsRequest({ source: { path: demoSrc }, breakpoints: [{ line: OUTPUT_LINE, condition }] })).body.breakpoints[0];
  assert.equal(bp.verified, true, JSON.stringify(bp));
  const stopped = c.waitForEvent('stopped', 20000);
  await c.configurationDoneRequest();
  const s = await stopped;
  assert.equal(s.body.reason, 'breakpoint');
  return { c, threadId: s.body.threadId };
}

async function localI(c, threadId) {
  const frame = (await c.stackTraceRequest({ threadId, startFrame: 0, levels: 1 })).body.stackFrames[0];
  const scopes = (await c.scopesRequest({ frameId: frame.id })).body.scopes;
  const vars = (await c.variablesRequest({ variablesReference: scopes.find((s) => s.name === 'Locals').variablesReference })).body.variables;
  return vars.find((v) => v.name === 'i').value;
}

test('strata-dap killed at a breakpoint in an attached C program: it runs on to its end, no int3 left, a second attach works', async () => {
  const rounds = 400;
  const { prog, file, dir } = await startOutput(rounds, 10);
  try {
    const first = await attachAndStop(prog.pid, 'i == 40');
    assert.equal(await localI(first.c, first.threadId), '40');
    const engine = engineOf(first.c.adapterProcess.pid);
    assert.ok(engine > 0, 'strata-dap runs its engine as a process of its own');
    assert.equal(tracingProcess(prog.pid), engine, 'the engine, not strata-dap, traces the program');
    await killAdapter(first.c);
    // The engine sees its client gone and lets the program go.
    await waitUntil(() => tracerOf(prog.pid) === 0, 5000, 'the program to be untraced');
    await waitUntil(() => !isRunning(engine), 5000, 'strata-engine to exit');
    assert.deepEqual(textDifferences(prog.pid, DEMO), [], 'the text pages are the file\'s');
    const lines = () => fs.readFileSync(file, 'utf8').split('\n').length;
    const before = lines();
    await waitUntil(() => lines() > before + 3, 5000, 'the program to run on');

    // Picked up again at once: no stale tracer, no stopped thread.
    const second = await attachAndStop(prog.pid, 'i == 300');
    assert.equal(await localI(second.c, second.threadId), '300');
    await second.c.disconnectRequest({ terminateDebuggee: false });
    assert.equal(await withTimeout(exitOf(prog), 20000, 'the program to finish'), 0);
    assert.equal(fs.readFileSync(file, 'utf8'), expectedOutput(rounds), 'every line, none twice');
  } finally {
    prog.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('strata-dap killed while an attached program runs through its conditional breakpoint: the program keeps every line', async () => {
  const rounds = 300;
  const { prog, file, dir } = await startOutput(rounds, 5);
  try {
    const c = await startStdio();
    await c.initializeRequest(INIT);
    const initialized = c.waitForEvent('initialized', 20000);
    await c.attachRequest({ processId: prog.pid });
    await initialized;
    await c.setBreakpointsRequest({ source: { path: demoSrc }, breakpoints: [{ line: OUTPUT_LINE, condition: 'i < 0' }] });
    await c.configurationDoneRequest();
    const lines = () => fs.readFileSync(file, 'utf8').split('\n').length;
    const before = lines();
    await waitUntil(() => lines() > before + 10, 10000, 'hits that never stop');
    await killAdapter(c);
    await waitUntil(() => tracerOf(prog.pid) === 0, 5000, 'the program to be untraced');
    assert.deepEqual(textDifferences(prog.pid, DEMO), []);
    assert.equal(await withTimeout(exitOf(prog), 20000, 'the program to finish'), 0);
    assert.equal(fs.readFileSync(file, 'utf8'), expectedOutput(rounds));
    assert.deepEqual(c.eventsNamed('stopped'), []);
  } finally {
    prog.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// A launched program's pid comes with the `process` event; it is strata-engine's child.
async function launchAndStop(file, rounds, launchExtra) {
  const c = await startStdio();
  await c.initializeRequest(INIT);
  const initialized = c.waitForEvent('initialized', 20000);
  const processEvent = c.waitForEvent('process', 20000);
  await c.launchRequest({ program: DEMO, args: ['output', file, String(rounds), '10', 'term'], ...launchExtra });
  await initialized;
  await c.setBreakpointsRequest({ source: { path: demoSrc }, breakpoints: [{ line: OUTPUT_LINE, condition: 'i == 5' }] });
  const stopped = c.waitForEvent('stopped', 20000);
  await c.configurationDoneRequest();
  const s = await stopped;
  const pid = (await processEvent).body.systemProcessId;
  assert.equal(await localI(c, s.body.threadId), '5');
  return { c, pid };
}

test('strata-dap killed at a breakpoint in a launched program, onDisconnect "terminate" (the default): SIGTERM, never SIGTRAP', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-survive-'));
  const file = path.join(dir, 'out.txt');
  try {
    const { c, pid } = await launchAndStop(file, 100000, {});
    await killAdapter(c);
    await waitUntil(() => !isRunning(pid), 10000, 'the program to end');
    // Its SIGTERM handler ran: the breakpoint was out and the signal was a plain SIGTERM.
    const text = fs.readFileSync(file, 'utf8');
    assert.match(text, /^line 0 value 1\n/);
    assert.match(text, /got SIGTERM\n$/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('strata-dap killed at a breakpoint in a launched program, onDisconnect "detach": it runs on to its end', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-survive-'));
  const file = path.join(dir, 'out.txt');
  try {
    const rounds = 60;
    const { c, pid } = await launchAndStop(file, rounds, { onDisconnect: 'detach' });
    await killAdapter(c);
    await waitUntil(() => tracerOf(pid) === 0, 5000, 'the program to be untraced');
    assert.deepEqual(textDifferences(pid, DEMO), []);
    await waitUntil(() => !isRunning(pid), 20000, 'the program to finish');
    assert.equal(fs.readFileSync(file, 'utf8'), expectedOutput(rounds));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('onDisconnect other than "terminate" or "detach" is refused with the values it takes', async () => {
  const c = await startStdio();
  await c.initializeRequest(INIT);
  const err = await c.launchRequest({ program: DEMO, args: ['loop'], onDisconnect: 'linger' }).catch((e) => e);
  assert.ok(err instanceof Error);
  assert.match(err.message, /arguments\.onDisconnect is 'linger': expected "terminate" or "detach"/);
  await c.disconnectRequest();
});

// Mixed mode: the job attached by pid with "native": true, stopped in its C++ extension.
forEachPython((py) => {
  const ext = extFor(py);
  const v = path.basename(py);
  test(`${v}: strata-dap killed at a C++ breakpoint of a mixed attach: the Python job runs on to its end`, { skip: !ext && `mixed_ext not built for ${v}` }, async () => {
    const { prog, until, result, dir } = await startLooping(py);
    try {
      const c = await startStdio();
      await c.initializeRequest(INIT);
      const initialized = c.waitForEvent('initialized', 30000);
      await c.attachRequest({ processId: prog.pid, native: true });
      await initialized;
      await c.setBreakpointsRequest({ source: { path: EXT_SRC }, breakpoints: [{ line: markerLine(EXT_SRC, 'checksum_line') }] });
      await c.configurationDoneRequest();
      await waitUntil(() => c.eventsNamed('stopped').some((e) => e.body.reason === 'breakpoint'), 60000, 'the C++ breakpoint');
      const s = c.eventsNamed('stopped').find((e) => e.body.reason === 'breakpoint');
      const top = (await c.stackTraceRequest({ threadId: s.body.threadId, startFrame: 0, levels: 1 })).body.stackFrames[0];
      assert.deepEqual([top.source?.path, top.line], [EXT_SRC, markerLine(EXT_SRC, 'checksum_line')]);
      const engine = engineOf(c.adapterProcess.pid);
      assert.ok(engine > 0 && tracingProcess(prog.pid) === engine, 'strata-engine traces the job');
      await killAdapter(c);
      await waitUntil(() => tracerOf(prog.pid) === 0, 5000, 'the program to be untraced');
      assert.deepEqual(textDifferences(prog.pid, ext), [], 'the extension\'s text pages are the file\'s');
      fs.writeFileSync(until, '');
      assert.equal(await withTimeout(exitOf(prog), 60000, 'the program to finish'), 0);
      assert.equal(fs.readFileSync(result, 'utf8'), 'total 220 done\n');
    } finally {
      prog.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
