// Helpers for debugging Python through the adapter: marker lines, a launch that stops at
// breakpoints, and the agent's folder for programs started under `python -m strata`.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ADAPTER, PY_TARGETS, startStdio } from './harness.mjs';

// The line of `# @bp:NAME` in a debuggee (1-based), so tests never hard-code line numbers.
export function lineOf(file, name) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(`# @bp:${name}`) && !l.includes(`# @bp:${name}_`));
  if (i < 0) throw new Error(`marker @bp:${name} not found in ${file}`);
  return i + 1;
}

export const pyTarget = (name) => path.join(PY_TARGETS, name);

// Starts stuck.py (threads parked in known Python calls, the main thread waiting) under `py`;
// `ready` resolves once it printed "ready", `exited` with how it ended.
export function startStuck(py, args = []) {
  const child = spawn(py, [pyTarget('stuck.py'), ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  const ready = new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('ready\n')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`stuck.py exited early with ${code}`)));
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, ready, exited };
}

// The agent package's folder in the build tree (what strata-dap puts on PYTHONPATH).
export const AGENT_PYTHONPATH = process.env.STRATA_AGENT_PYTHONPATH ??
  path.resolve(path.dirname(ADAPTER), '../backends/python/python');

// initialize + launch with debugging + breakpoints + configurationDone. Returns the client
// and the first `stopped` event (null when none is expected).
export async function launchAndStop(python, program, { breakpoints = {}, launch = {}, exceptions, functions, expectStop = true } = {}) {
  const c = await startStdio();
  await c.initializeRequest({ adapterID: 'strata', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path', supportsVariablePaging: true });
  // Configuration once the adapter says it is ready (after launch, as DAP allows).
  const initialized = c.waitForEvent('initialized', 30000);
  await c.launchRequest({ program, python, ...launch });
  await initialized;
  for (const [file, bps] of Object.entries(breakpoints)) {
    const r = await c.setBreakpointsRequest({ source: { path: file }, breakpoints: bps });
    for (const b of r.body.breakpoints) if (!b.verified) throw new Error(`breakpoint not verified: ${JSON.stringify(b)}`);
  }
  if (exceptions) await c.setExceptionBreakpointsRequest(exceptions);
  if (functions) await c.send('setFunctionBreakpoints', { breakpoints: functions });
  const stopped = expectStop ? c.waitForEvent('stopped', 30000) : null;
  await c.configurationDoneRequest();
  return { c, stopped: stopped ? await stopped : null };
}

export async function topFrame(c, threadId) {
  const st = await c.stackTraceRequest({ threadId, startFrame: 0, levels: 1 });
  return st.body.stackFrames[0];
}

// name -> value of a frame's Locals.
export async function locals(c, frameId) {
  const scopes = await c.scopesRequest({ frameId });
  const loc = scopes.body.scopes.find((s) => s.name === 'Locals');
  const vars = await c.variablesRequest({ variablesReference: loc.variablesReference });
  return Object.fromEntries(vars.body.variables.map((v) => [v.name, v]));
}

export async function continueTo(c, threadId) {
  const stopped = c.waitForEvent('stopped', 30000);
  await c.continueRequest({ threadId });
  return stopped;
}
