// Helpers for debugging native programs through the adapter: marker lines in the C/C++
// debuggees, a launch that stops at breakpoints, and the usual inspection round trips.
import fs from 'node:fs';
import path from 'node:path';
import { REPO, TARGETS, startStdio } from './harness.mjs';

export const NATIVE_SRC = path.join(REPO, 'tests/targets/native/dap');
export const demoSrc = path.join(NATIVE_SRC, 'native_demo.cpp');
export const pluginSrc = path.join(NATIVE_SRC, 'native_plugin.c');
export const optSrc = path.join(NATIVE_SRC, 'native_opt.c');
export const DEMO = path.join(TARGETS, 'native_demo');
export const PLUGIN = path.join(TARGETS, 'libnative_plugin.so');
export const OPT = path.join(TARGETS, 'native_opt');

// The line of `// @bp:NAME` (1-based), so tests never hard-code line numbers.
export function lineOf(file, name) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const i = lines.findIndex((l) => new RegExp(`// @bp:${name}\\b`).test(l));
  if (i < 0) throw new Error(`marker @bp:${name} not found in ${file}`);
  return i + 1;
}

export const INIT = { adapterID: 'strata', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path',
  supportsVariablePaging: true, supportsVariableType: true, supportsMemoryReferences: true };

// initialize + launch + breakpoints + configurationDone; returns the client and the first stop.
export async function launchNative(args, { program = DEMO, breakpoints = {}, functions, instructions, exceptions,
  launch = {}, expectStop = true } = {}) {
  const c = await startStdio();
  await c.initializeRequest(INIT);
  // Configuration once the adapter says it is ready (after launch, as DAP allows).
  const initialized = c.waitForEvent('initialized', 30000);
  await c.launchRequest({ program, args, ...launch });
  await initialized;
  for (const [file, bps] of Object.entries(breakpoints)) {
    const r = await c.setBreakpointsRequest({ source: { path: file }, breakpoints: bps });
    for (const b of r.body.breakpoints) if (!b.verified) throw new Error(`breakpoint not verified: ${JSON.stringify(b)}`);
  }
  if (functions) await c.send('setFunctionBreakpoints', { breakpoints: functions });
  if (instructions) await c.send('setInstructionBreakpoints', { breakpoints: instructions });
  if (exceptions) await c.setExceptionBreakpointsRequest(exceptions);
  const stopped = expectStop ? c.waitForEvent('stopped', 30000) : null;
  await c.configurationDoneRequest();
  return { c, stopped: stopped ? await stopped : null };
}

export async function frames(c, threadId, startFrame = 0, levels = 20) {
  return (await c.stackTraceRequest({ threadId, startFrame, levels })).body;
}

export async function scopeVars(c, frameId, scopeName = 'Locals') {
  const scopes = await c.scopesRequest({ frameId });
  const s = scopes.body.scopes.find((x) => x.name === scopeName);
  const vars = await c.variablesRequest({ variablesReference: s.variablesReference });
  return { ref: s.variablesReference, list: vars.body.variables, byName: Object.fromEntries(vars.body.variables.map((v) => [v.name, v])) };
}

export async function continueTo(c, threadId) {
  const stopped = c.waitForEvent('stopped', 30000);
  await c.continueRequest({ threadId });
  return stopped;
}

export async function stepAndWait(c, command, args) {
  const stopped = c.waitForEvent('stopped', 30000);
  await c.send(command, args);
  return stopped;
}

export async function finish(c, { terminate = false } = {}) {
  if (terminate) await c.disconnectRequest({ terminateDebuggee: true });
  else await c.disconnectRequest();
}
