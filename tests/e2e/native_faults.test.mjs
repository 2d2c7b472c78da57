// SIGBUS, SIGILL and SIGFPE raised for real (a page past the end of a shrunk file, ud2, a division
// by zero): the stop, its exceptionInfo and stack, and with the filter off the signal reaching
// the program. SIGSEGVs said by what failed: a write through a null pointer, a write to a
// constant, a call to an unmapped address or to no address at all, a non-canonical read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { assertClean, TARGETS, waitUntil } from './lib/harness.mjs';
import { DEMO, NATIVE_SRC, demoSrc, lineOf, launchNative, frames, scopeVars } from './lib/native.mjs';

const FAULTS = path.join(TARGETS, 'native_faults');
const faultsSrc = path.join(NATIVE_SRC, 'native_faults.c');
const ALL_BUT = (signal) => ['SIGSEGV', 'SIGBUS', 'SIGFPE', 'SIGILL', 'SIGABRT'].filter((s) => s !== signal);

// Continues a program stopped on a fault; it dies of the signal.
async function runOut(c, threadId) {
  const terminated = c.waitForEvent('terminated', 30000);
  await c.continueRequest({ threadId });
  await terminated;
}

test('SIGBUS: stops in the faulting function and line, exceptionInfo names the code and address; the program dies of it', async () => {
  const { c, stopped } = await launchNative(['bus'], { program: FAULTS });
  assert.equal(stopped.body.reason, 'exception');
  await waitUntil(() => /touching 0x[0-9a-f]+\n/.test(c.output('stdout')), 10000, 'the address the program touches');
  const address = /touching (0x[0-9a-f]+)/.exec(c.output('stdout'))[1];
  assert.equal(stopped.body.description, `SIGBUS: nonexistent physical address at ${address}`);
  const tid = stopped.body.threadId;
  const info = await c.send('exceptionInfo', { threadId: tid });
  assert.equal(info.body.exceptionId, 'SIGBUS');
  assert.equal(info.body.breakMode, 'always');
  // The one-line diagnosis: the signal, where, and the frame of the program's that led there.
  assert.equal(info.body.description, `SIGBUS: nonexistent physical address at ${address} in bus_fault at native_faults.c:${lineOf(faultsSrc, 'bus_line')}, called from main at native_faults.c:${lineOf(faultsSrc, 'bus_call')}`);
  assert.equal(info.body.details.fullTypeName, 'SIGBUS (signal 7, si_code 2)');  // BUS_ADRERR
  assert.match(info.body.details.message, new RegExp(`\\(fault address ${address}, pc 0x[0-9a-f]+\\)$`));
  const st = await frames(c, tid);
  assert.deepEqual(st.stackFrames.slice(0, 2).map((f) => [f.name, f.line]),
    [['bus_fault', lineOf(faultsSrc, 'bus_line')], ['main', lineOf(faultsSrc, 'bus_call')]]);
  assert.equal(st.stackFrames[0].source.path, faultsSrc);
  // The pointer is a value like any other, though what it points at cannot be read.
  const locals = await scopeVars(c, st.stackFrames[0].id);
  assert.match(locals.byName.past.value, new RegExp(`^${address}\\b`));
  await runOut(c, tid);
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 135);
  assert.match(c.output('console'), /terminated by signal 7 \(SIGBUS\)/);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('SIGILL: stops on the ud2 itself, exceptionInfo names the code; the program dies of it', async () => {
  const { c, stopped } = await launchNative(['ill'], { program: FAULTS });
  assert.equal(stopped.body.reason, 'exception');
  const tid = stopped.body.threadId;
  const st = await frames(c, tid);
  const top = st.stackFrames[0];
  assert.deepEqual(st.stackFrames.slice(0, 2).map((f) => [f.name, f.line]),
    [['ill_fault', lineOf(faultsSrc, 'ill_line')], ['main', lineOf(faultsSrc, 'ill_call')]]);
  // The kernel reports ud2 as an illegal operand at the instruction itself.
  assert.equal(stopped.body.description, `SIGILL: illegal operand at ${top.instructionPointerReference}`);
  const info = await c.send('exceptionInfo', { threadId: tid });
  assert.equal(info.body.exceptionId, 'SIGILL');
  assert.equal(info.body.details.fullTypeName, 'SIGILL (signal 4, si_code 2)');  // ILL_ILLOPN
  assert.match(info.body.details.message,
    new RegExp(`\\(fault address ${top.instructionPointerReference}, pc ${top.instructionPointerReference}\\)$`));
  const dis = await c.send('disassemble', { memoryReference: top.instructionPointerReference, instructionCount: 1 });
  assert.match(dis.body.instructions[0].instruction, /^ud2\b/);
  assert.equal((await scopeVars(c, top.id)).byName.code.value, '7');
  await runOut(c, tid);
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 132);
  assert.match(c.output('console'), /terminated by signal 4 \(SIGILL\)/);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('SIGFPE: an integer division by zero stops on its line with the code; the program dies of it', async () => {
  const { c, stopped } = await launchNative(['fpe'], { program: FAULTS });
  assert.equal(stopped.body.reason, 'exception');
  const tid = stopped.body.threadId;
  const st = await frames(c, tid);
  const top = st.stackFrames[0];
  assert.deepEqual(st.stackFrames.slice(0, 2).map((f) => [f.name, f.line]),
    [['fpe_fault', lineOf(faultsSrc, 'fpe_line')], ['main', lineOf(faultsSrc, 'fpe_call')]]);
  assert.equal(stopped.body.description, `SIGFPE: integer divide by zero at ${top.instructionPointerReference}`);
  const info = await c.send('exceptionInfo', { threadId: tid });
  assert.equal(info.body.exceptionId, 'SIGFPE');
  assert.equal(info.body.details.fullTypeName, 'SIGFPE (signal 8, si_code 1)');  // FPE_INTDIV
  const locals = await scopeVars(c, top.id);
  assert.equal(locals.byName.dividend.value, '12');
  assert.equal(locals.byName.divisor.value, '0');
  await runOut(c, tid);
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 136);
  assert.match(c.output('console'), /terminated by signal 8 \(SIGFPE\)/);
  await c.disconnectRequest();
  assertClean(assert, c);
});

for (const [mode, signal, number] of [['bus', 'SIGBUS', 7], ['ill', 'SIGILL', 4], ['fpe', 'SIGFPE', 8]]) {
  test(`without the ${signal} filter the signal goes to the program, which dies of it`, async () => {
    const { c } = await launchNative([mode], { program: FAULTS, exceptions: { filters: ALL_BUT(signal) }, expectStop: false });
    await waitUntil(() => c.eventsNamed('terminated').length > 0, 30000, 'the end of the program');
    assert.equal(c.eventsNamed('stopped').length, 0);
    assert.equal(c.eventsNamed('exited')[0].body.exitCode, 128 + number);
    assert.match(c.output('console'), new RegExp(`terminated by signal ${number} \\(${signal}\\)`));
    await c.disconnectRequest();
    assertClean(assert, c);
  });
}

// The kernel says only "address not mapped" or "invalid permissions" (and nothing at all for a
// general protection fault); the faulting instruction says whether it was a read, a write or a
// jump, and the address a non-canonical pointer held.
for (const [mode, said] of [
  ['write', 'write to unmapped address 0x8'],
  ['readonly', 'write to 0x[0-9a-f]+ denied by its mapping\'s permissions'],
  ['call', 'execution at unmapped address 0xdead0000'],
  ['callgp', 'execution at non-canonical address 0xdead00000000 \\(general protection fault\\)'],
  ['canonical', 'read of non-canonical address 0xdead000000000010 \\(general protection fault\\)'],
]) {
  test(`SIGSEGV (${mode}): the stop says what access failed, and exceptionInfo where`, async () => {
    const { c, stopped } = await launchNative([mode], { program: FAULTS });
    assert.equal(stopped.body.reason, 'exception');
    assert.match(stopped.body.description, new RegExp(`^SIGSEGV: ${said}$`));
    const info = await c.send('exceptionInfo', { threadId: stopped.body.threadId });
    // A call to nowhere stops at the address itself: the diagnosis names the caller.
    const where = mode === 'call'
      ? `, called from segv_fault at native_faults.c:${lineOf(faultsSrc, 'call_line')}`
      : ` in segv_fault at native_faults.c:${lineOf(faultsSrc, `${mode}_line`)}, called from main at native_faults.c:${lineOf(faultsSrc, 'segv_call')}`;
    assert.match(info.body.description, new RegExp(`^SIGSEGV: ${said}${where.replace(/[.()]/g, '\\$&')}$`));
    await runOut(c, stopped.body.threadId);
    assert.equal(c.eventsNamed('exited')[0].body.exitCode, 139);
    await c.disconnectRequest();
    assertClean(assert, c);
  });
}

// std::terminate of an uncaught C++ exception ends in abort(): the stop is the SIGABRT, said
// with the program's frame that threw; libstdc++'s own message still reaches stderr, and the
// program dies of the signal.
test('an uncaught C++ exception stops at its SIGABRT, named from the frame that threw; the program dies of it', async () => {
  const { c, stopped } = await launchNative(['throw'], { program: DEMO });
  assert.equal(stopped.body.reason, 'exception');
  assert.match(stopped.body.description, /^SIGABRT: aborted/);
  const info = await c.send('exceptionInfo', { threadId: stopped.body.threadId });
  assert.match(info.body.description, new RegExp(`^SIGABRT: aborted .*, called from load_shard at native_demo\\.cpp:${lineOf(demoSrc, 'throw_line')}$`));
  const st = await frames(c, stopped.body.threadId, 0, 30);
  const thrower = st.stackFrames.findIndex((f) => f.name === 'load_shard');
  assert.ok(thrower > 0, st.stackFrames.map((f) => f.name).join(' < '));
  assert.equal(st.stackFrames[thrower + 1].name, 'main');
  assert.equal(st.stackFrames[thrower + 1].line, lineOf(demoSrc, 'throw_call'));
  await runOut(c, stopped.body.threadId);
  assert.equal(c.eventsNamed('exited')[0].body.exitCode, 134);
  assert.match(c.output('stderr'), /terminate called after throwing an instance of 'std::runtime_error'\n\s+what\(\):\s+bad shard 12/);
  await c.disconnectRequest();
  assertClean(assert, c);
});
