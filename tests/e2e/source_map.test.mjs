// launch/attach {"sourceMap"}: the files a program names (its DWARF, a core's, a Python process
// in a container) found under other paths on the client's side. The client sets breakpoints in
// its copy and sees its copy in every stack frame and breakpoint; the debugger works with the
// program's own paths. Here the "client's copy" is a folder of copies of the sources; the
// program was built from, and runs, the repository's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startStdio, assertClean, target, NO_PYTHON, PYTHONS, PY_TARGETS } from './lib/harness.mjs';
import { DEMO, INIT, NATIVE_SRC, demoSrc, frames, lineOf } from './lib/native.mjs';
import { lineOf as pyLineOf } from './lib/python.mjs';

// A folder standing for the client's checkout: copies of the named files of `from`.
function copies(from, names) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-srcmap-'));
  for (const n of names) fs.copyFileSync(path.join(from, n), path.join(dir, n));
  return dir;
}

async function launchWith(config, file, lines) {
  const c = await startStdio();
  await c.initializeRequest(INIT);
  const initialized = c.waitForEvent('initialized', 30000);
  await c.launchRequest(config);
  await initialized;
  const set = await c.setBreakpointsRequest({ source: { path: file }, breakpoints: lines.map((line) => ({ line })) });
  const stopped = c.waitForEvent('stopped', 30000);
  await c.configurationDoneRequest();
  return { c, set, stopped: await stopped };
}

test('native: breakpoints set in the mapped copy bind and hit; frames and breakpoints name the copy (lldb-dap\'s pair form)', async () => {
  const mine = copies(NATIVE_SRC, ['native_demo.cpp']);
  const copy = path.join(mine, 'native_demo.cpp');
  const line = lineOf(demoSrc, 'square_body');
  const { c, set, stopped } = await launchWith({ program: DEMO, args: ['loop'], sourceMap: [[NATIVE_SRC, mine]] }, copy, [line]);
  try {
    assert.equal(set.body.breakpoints[0].verified, true, JSON.stringify(set.body.breakpoints));
    assert.equal(set.body.breakpoints[0].source?.path ?? copy, copy);
    assert.equal(stopped.body.reason, 'breakpoint');
    const st = await frames(c, stopped.body.threadId);
    assert.deepEqual([st.stackFrames[0].name, st.stackFrames[0].source.path, st.stackFrames[0].line], ['square', copy, line]);
    // Every frame of the program's own code names the copy; nothing names the build's path.
    for (const f of st.stackFrames.filter((f) => f.source?.path?.endsWith('native_demo.cpp'))) assert.equal(f.source.path, copy);
    // The breakpoint events (a change of state) name it too.
    for (const e of c.eventsNamed('breakpoint')) if (e.body.breakpoint.source?.path) assert.equal(e.body.breakpoint.source.path, copy);
    await c.disconnectRequest({ terminateDebuggee: true });
    assertClean(assert, c);
  } finally {
    c.stopAdapter();
    fs.rmSync(mine, { recursive: true, force: true });
  }
});

test('native: the object form (cppdbg\'s sourceFileMap) maps the same; a path outside every prefix is left as it is', async () => {
  const mine = copies(NATIVE_SRC, ['native_demo.cpp']);
  const copy = path.join(mine, 'native_demo.cpp');
  const line = lineOf(demoSrc, 'square_body');
  // A prefix that ends inside a component ("/na" of "/native_demo.cpp") maps nothing.
  const { c, set, stopped } = await launchWith({ program: DEMO, args: ['loop'], sourceMap: { [`${NATIVE_SRC}/`]: mine, [path.join(NATIVE_SRC, 'na')]: '/nowhere' } },
    copy, [line]);
  try {
    assert.equal(set.body.breakpoints[0].verified, true, JSON.stringify(set.body.breakpoints));
    const st = await frames(c, stopped.body.threadId);
    assert.equal(st.stackFrames[0].source.path, copy);
    await c.disconnectRequest({ terminateDebuggee: true });
  } finally {
    c.stopAdapter();
    fs.rmSync(mine, { recursive: true, force: true });
  }
});

test('Python: a breakpoint in the mapped copy stops the program, whose frames name the copy', { skip: NO_PYTHON }, async () => {
  const mine = copies(PY_TARGETS, ['crashes.py']);
  const copy = path.join(mine, 'crashes.py');
  const program = path.join(PY_TARGETS, 'crashes.py');
  const line = pyLineOf(program, 'crash');
  const { c, set, stopped } = await launchWith({ program, python: PYTHONS[0], args: ['segv'], sourceMap: [[PY_TARGETS, mine]] }, copy, [line]);
  try {
    assert.equal(set.body.breakpoints[0].verified, true, JSON.stringify(set.body.breakpoints));
    assert.equal(stopped.body.reason, 'breakpoint');
    const st = await frames(c, stopped.body.threadId);
    assert.deepEqual([st.stackFrames[0].name, st.stackFrames[0].source.path, st.stackFrames[0].line], ['load_weights', copy, line]);
    assert.ok(st.stackFrames.some((f) => f.name === 'main' && f.source?.path === copy), JSON.stringify(st.stackFrames.map((f) => f.source?.path)));
    await c.disconnectRequest({ terminateDebuggee: true });
  } finally {
    c.stopAdapter();
    fs.rmSync(mine, { recursive: true, force: true });
  }
});

test('a core file session (a container\'s build paths): frames name the mapped copy', async () => {
  const cores = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-srcmap-cores-'));
  const mine = copies(NATIVE_SRC, ['native_faults.c']);
  const copy = path.join(mine, 'native_faults.c');
  const src = path.join(NATIVE_SRC, 'native_faults.c');
  let live;
  let c;
  try {
    // The core, written at the crash stop of a run (launch {coreOnCrash}).
    live = await launchWith({ program: target('native_faults'), args: ['fpe'], coreOnCrash: cores }, copy, []);
    const file = /Core of process \d+ written to (\S+) \(/.exec(live.c.output('console'))?.[1];
    assert.ok(file, live.c.output('console'));
    await live.c.disconnectRequest({ terminateDebuggee: true });
    c = await startStdio();
    await c.initializeRequest(INIT);
    const initialized = c.waitForEvent('initialized', 30000);
    await c.launchRequest({ coreFile: file, program: target('native_faults'), sourceMap: [[NATIVE_SRC, mine]] });
    await initialized;
    const stopped = c.waitForEvent('stopped', 30000);
    await c.configurationDoneRequest();
    const st = await frames(c, (await stopped).body.threadId);
    assert.deepEqual(st.stackFrames.slice(0, 2).map((f) => [f.name, f.source?.path, f.line]),
      [['fpe_fault', copy, lineOf(src, 'fpe_line')], ['main', copy, lineOf(src, 'fpe_call')]]);
    await c.disconnectRequest({});
  } finally {
    live?.c.stopAdapter();
    c?.stopAdapter();
    fs.rmSync(cores, { recursive: true, force: true });
    fs.rmSync(mine, { recursive: true, force: true });
  }
});

test('a sourceMap that is no list of path pairs is refused with what is wrong, on launch and attach', async () => {
  const c = await startStdio();
  try {
    await c.initializeRequest(INIT);
    await assert.rejects(c.launchRequest({ program: DEMO, sourceMap: [['/build']] }),
      /cannot launch: arguments\.sourceMap: entry 0 is not a pair/);
    await assert.rejects(c.launchRequest({ program: DEMO, sourceMap: 'src=/here' }),
      /cannot launch: arguments\.sourceMap: not an array or an object/);
    await assert.rejects(c.attachRequest({ processId: process.pid, sourceMap: { '/build': 7 } }),
      /invalid 'attach' request: arguments\.sourceMap: the entry "\/build" is not a pair of non-empty paths/);
  } finally {
    c.stopAdapter();
  }
});
