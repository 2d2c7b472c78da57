// Capabilities come from one source: `initialize` says what every backend supports, launch adds
// the chosen backend's in a `capabilities` event, then `initialized`. Every capability a
// session advertised is exercised in that session, and none may answer "not supported".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startStdio, assertClean, NO_PYTHON, PYTHONS } from './lib/harness.mjs';
import { DEMO, INIT, demoSrc, lineOf as nativeLine } from './lib/native.mjs';
import { pyTarget, lineOf as pyLine } from './lib/python.mjs';

// What `initialize` may promise before the program is known: what both backends do.
const COMMON = ['supportsConditionalBreakpoints', 'supportsHitConditionalBreakpoints', 'supportsLogPoints',
  'supportsFunctionBreakpoints', 'supportsEvaluateForHovers', 'supportsSetVariable', 'supportsExceptionInfoRequest',
  'supportsDelayedStackTraceLoading', 'supportsClipboardContext'];
const ADAPTER = ['supportsConfigurationDoneRequest', 'supportsTerminateRequest', 'supportTerminateDebuggee',
  'supportsCancelRequest'];
// What the GPU backend beside every debugger brings: the GPU requests, and completions of the
// Debug Console's '!' commands (names in the program come only where the debugger completes them).
const SERVICES = ['supportsGpuTimeline', 'supportsCompletionsRequest'];

// Every '!' command of the Debug Console, as completions list them.
const COMMANDS = ['!help', '!gpu top [N]', '!gpu kernel NAME', '!gpu timeline [START END]', '!gpu start [trace|stacks]',
  '!gpu stop', '!gpu profile NAME [N]', '!gpu crash', '!sql SELECT ...'];

// What a client shows after typing '!' (a trigger character, so it asks at once) and '!g': the
// commands, each replacing what was typed (start at the line's first column, length of the text).
async function checkBangCompletions(c, frameId) {
  const bang = (await c.send('completions', { text: '!', column: 2, frameId })).body.targets;
  assert.deepEqual(bang.map((t) => t.label), COMMANDS);
  assert.deepEqual(bang.map((t) => [t.start, t.length]), COMMANDS.map(() => [1, 1]));
  assert.deepEqual(bang.map((t) => t.text), ['!help', '!gpu top ', '!gpu kernel ', '!gpu timeline ', '!gpu start ',
    '!gpu stop', '!gpu profile ', '!gpu crash', '!sql ']);
  const g = (await c.send('completions', { text: '!g', column: 3, frameId })).body.targets;
  assert.deepEqual(g.map((t) => t.label), COMMANDS.filter((l) => l.startsWith('!g')));
  assert.deepEqual(g.map((t) => [t.start, t.length]), g.map(() => [1, 2]));
}

const refused = (r) => !r.success && /does not support|not supported|unsupported/i.test(r.message ?? '');

// Sends a request and returns the raw response (success or not).
async function raw(c, command, args) {
  try { return await c.send(command, args); } catch (e) { return { success: false, message: e.message }; }
}

// One probe per capability a session can advertise: the request that capability promises,
// made at a stop. A capability without a probe fails the test, so none goes unchecked.
function probes(c, stop, frameId, varRef, variable, memRef, dataRef, source, lines) {
  const tid = stop.body.threadId;
  return {
    supportsConfigurationDoneRequest: async () => ({ success: true }),  // sent before the stop
    supportsConditionalBreakpoints: () => raw(c, 'setBreakpoints', { source: { path: source }, breakpoints: [{ line: lines.bp, condition: '1 == 2' }] }),
    supportsHitConditionalBreakpoints: () => raw(c, 'setBreakpoints', { source: { path: source }, breakpoints: [{ line: lines.bp, hitCondition: '1000' }] }),
    supportsLogPoints: () => raw(c, 'setBreakpoints', { source: { path: source }, breakpoints: [{ line: lines.bp, logMessage: 'here' }] }),
    supportsFunctionBreakpoints: () => raw(c, 'setFunctionBreakpoints', { breakpoints: [{ name: lines.func }] }),
    supportsEvaluateForHovers: () => raw(c, 'evaluate', { expression: variable, frameId, context: 'hover' }),
    supportsClipboardContext: () => raw(c, 'evaluate', { expression: variable, frameId, context: 'clipboard' }),
    supportsSetVariable: () => raw(c, 'setVariable', { variablesReference: varRef, name: variable, value: lines.value }),
    supportsSetExpression: () => raw(c, 'setExpression', { expression: variable, value: lines.value, frameId }),
    supportsCompletionsRequest: () => raw(c, 'completions', { text: variable.slice(0, 1), column: 2, frameId }),
    supportsGpuTimeline: async () => {
      // No GPU data in this session: an answer saying so, not a refusal.
      const r = await raw(c, 'gpuSummary', {});
      assert.match(r.message ?? '', /no GPU data in this session yet/);
      return r;
    },
    supportsExceptionInfoRequest: () => raw(c, 'exceptionInfo', { threadId: tid }),
    supportsDelayedStackTraceLoading: () => raw(c, 'stackTrace', { threadId: tid, startFrame: 1, levels: 1 }),
    supportsSteppingGranularity: () => raw(c, 'stackTrace', { threadId: tid }),  // stepped below
    supportsSingleThreadExecutionRequests: () => raw(c, 'stackTrace', { threadId: tid }),  // continued below
    supportsDataBreakpoints: () => raw(c, 'dataBreakpointInfo', { name: variable, frameId }),
    supportsInstructionBreakpoints: () => raw(c, 'setInstructionBreakpoints', { breakpoints: [] }),
    supportsReadMemoryRequest: () => raw(c, 'readMemory', { memoryReference: memRef, count: 8 }),
    supportsWriteMemoryRequest: async () => {
      const bytes = await raw(c, 'readMemory', { memoryReference: dataRef, count: 4 });
      return raw(c, 'writeMemory', { memoryReference: dataRef, data: bytes.body.data });
    },
    supportsDisassembleRequest: () => raw(c, 'disassemble', { memoryReference: memRef, instructionCount: 4 }),
    supportsModulesRequest: () => raw(c, 'modules', {}),
    supportsStepInTargetsRequest: () => raw(c, 'stepInTargets', { frameId }),
    supportsLoadedSourcesRequest: () => raw(c, 'loadedSources', {}),
    supportsCancelRequest: () => raw(c, 'cancel', { requestId: 999999 }),
    supportsExceptionFilterOptions: async () => ({ success: true }),  // with the filters below
    supportsTerminateRequest: async () => ({ success: true }),  // at the end
    supportTerminateDebuggee: async () => ({ success: true }),  // at the end
  };
}

async function checkSession(c, initBody, stop, setup) {
  const added = c.eventsNamed('capabilities').map((e) => e.body.capabilities);
  assert.equal(added.length, 1, 'one capabilities event after launch');
  // Completions were promised at initialize, with their trigger characters: not said again.
  assert.equal(added[0].completionTriggerCharacters, undefined);
  const advertised = { ...initBody, ...added[0] };
  const order = c.received.map((m) => (m.type === 'event' ? `event:${m.event}` : `${m.type}:${m.command}`));
  const iCaps = order.indexOf('event:capabilities');
  assert.ok(iCaps > order.indexOf('response:launch'), 'capabilities after the launch response');
  assert.equal(order.indexOf('event:initialized'), iCaps + 1, 'initialized right after the capabilities event');
  const table = probes(c, stop, ...setup);
  const supports = Object.keys(advertised).filter((k) => k.startsWith('support') && advertised[k] === true);
  for (const k of supports) {
    assert.ok(table[k], `${k} is advertised but this test has no probe for it`);
    const r = await table[k]();
    assert.ok(!refused(r), `${k} advertised, but: ${r.message}`);
  }
  // Every filter the backend announced is accepted, with options where it says so.
  const filters = advertised.exceptionBreakpointFilters ?? [];
  assert.ok(filters.length > 0);
  const r = await c.setExceptionBreakpointsRequest({ filters: filters.map((f) => f.filter) });
  assert.deepEqual(r.body.breakpoints.map((b) => b.verified), filters.map(() => true));
  return advertised;
}

test('initialize promises only what every backend does; exception filters come with the backend', async () => {
  const c = await startStdio();
  const r = await c.initializeRequest(INIT);
  for (const k of [...COMMON, ...ADAPTER, ...SERVICES]) assert.equal(r.body[k], true, k);
  const supports = Object.keys(r.body).filter((k) => r.body[k] === true);
  assert.deepEqual(supports.sort(), [...COMMON, ...ADAPTER, ...SERVICES].sort());
  assert.equal(r.body.exceptionBreakpointFilters, undefined);
  // Without '!' among them VS Code's Debug Console asks for completions only once a letter follows.
  assert.deepEqual(r.body.completionTriggerCharacters, ['!', '.']);
  // Nothing follows the response until a launch or attach says what the program is.
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.deepEqual(c.received.filter((m) => m.type === 'event'), []);
  await c.disconnectRequest();
  assertClean(assert, c);
});

test('a native session: every capability advertised for it works', async () => {
  const c = await startStdio();
  const init = await c.initializeRequest(INIT);
  const initialized = c.waitForEvent('initialized', 30000);
  await c.launchRequest({ program: DEMO, args: ['steps'] });
  await initialized;
  const line = nativeLine(demoSrc, 'combine_call');
  await c.setBreakpointsRequest({ source: { path: demoSrc }, breakpoints: [{ line }] });
  const stopped = c.waitForEvent('stopped', 30000);
  await c.configurationDoneRequest();
  const stop = await stopped;
  const frame = (await c.stackTraceRequest({ threadId: stop.body.threadId })).body.stackFrames[0];
  const scopes = (await c.scopesRequest({ frameId: frame.id })).body.scopes;
  const locals = scopes.find((s) => s.name === 'Locals').variablesReference;
  const a = (await c.variablesRequest({ variablesReference: locals })).body.variables.find((v) => v.name === 'a');
  assert.match(a.memoryReference, /^0x[0-9a-f]+$/);  // the parameter's stack slot
  const advertised = await checkSession(c, init.body, stop, [frame.id, locals, 'a', frame.instructionPointerReference,
    a.memoryReference, demoSrc, { bp: line, func: 'square', value: '2' }]);
  for (const k of ['supportsDataBreakpoints', 'supportsReadMemoryRequest', 'supportsDisassembleRequest', 'supportsModulesRequest']) {
    assert.equal(advertised[k], true, k);
  }
  // Not advertised for native code, because it is not done: the client must not offer them.
  for (const k of ['supportsSetExpression', 'supportsSingleThreadExecutionRequests']) {
    assert.equal(advertised[k], undefined, k);
  }
  // Completions: the console's commands; no names of the program (the native debugger has none).
  assert.deepEqual((await c.send('completions', { text: 'a', column: 2, frameId: frame.id })).body.targets, []);
  const bang = (await c.send('completions', { text: '!gpu t', column: 7, frameId: frame.id })).body.targets;
  assert.deepEqual(bang.map((t) => t.label), ['!gpu top [N]', '!gpu timeline [START END]']);
  await checkBangCompletions(c, frame.id);
  assert.deepEqual(advertised.exceptionBreakpointFilters.map((f) => f.filter), ['SIGSEGV', 'SIGBUS', 'SIGFPE', 'SIGILL', 'SIGABRT', 'cuda']);
  const stepped = c.waitForEvent('stopped', 30000);
  await c.nextRequest({ threadId: stop.body.threadId, granularity: 'instruction' });
  assert.equal((await stepped).body.reason, 'step');
  await c.send('terminate', {});
  await c.disconnectRequest({ terminateDebuggee: true });
  assertClean(assert, c);
});

test('a Python session: every capability advertised for it works', { skip: NO_PYTHON }, async () => {
  const program = pyTarget('loop.py');
  const c = await startStdio();
  const init = await c.initializeRequest(INIT);
  const initialized = c.waitForEvent('initialized', 30000);
  await c.launchRequest({ program, python: PYTHONS[0] });
  await initialized;
  const line = pyLine(program, 'helper_body');
  await c.setBreakpointsRequest({ source: { path: program }, breakpoints: [{ line }] });
  const stopped = c.waitForEvent('stopped', 30000);
  await c.configurationDoneRequest();
  const stop = await stopped;
  const frame = (await c.stackTraceRequest({ threadId: stop.body.threadId })).body.stackFrames[0];
  const scopes = (await c.scopesRequest({ frameId: frame.id })).body.scopes;
  const locals = scopes.find((s) => s.name === 'Locals').variablesReference;
  const advertised = await checkSession(c, init.body, stop,
    [frame.id, locals, 'x', undefined, undefined, program, { bp: line, func: 'helper', value: '0' }]);
  assert.equal(advertised.supportsReadMemoryRequest, undefined);
  assert.deepEqual(advertised.exceptionBreakpointFilters.map((f) => f.filter), ['raised', 'uncaught', 'userUnhandled', 'cuda']);
  // '!' is answered by the adapter at a Python stop too; '.' (the other trigger) by Python.
  await checkBangCompletions(c, frame.id);
  const dot = (await c.send('completions', { text: 'x.', column: 3, frameId: frame.id })).body.targets.map((t) => t.label);
  assert.ok(dot.includes('bit_length'), dot.join());
  // singleThread continues that thread alone.
  const r = await c.continueRequest({ threadId: stop.body.threadId, singleThread: true });
  assert.equal(r.body.allThreadsContinued, false);
  await c.disconnectRequest({ terminateDebuggee: true });
  assertClean(assert, c);
});
