// What the ranks suites share (ranks.test.mjs: launched jobs; ranks_attach.test.mjs: jobs already
// running, and ranks on another node): the training example, its markers, and small readers of
// a session's stops, threads, frames and locals.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from './harness.mjs';

export const PYTHON = '/usr/bin/python3';
export const TRAIN = path.join(REPO, 'examples/distributed/train_ddp.py');
export const MPI_ENV = { OMPI_ALLOW_RUN_AS_ROOT: '1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: '1', OMPI_MCA_plm_rsh_agent: '' };

export function whyNot() {
  if (!fs.existsSync(PYTHON)) return `${PYTHON} is missing`;
  const r = spawnSync(PYTHON, ['-c', 'import torch.distributed as d; assert d.is_available()'], { encoding: 'utf8' });
  return r.status === 0 ? false : `torch.distributed does not import under ${PYTHON} (python3-torch, which scripts/setup.sh installs)`;
}
export const skip = whyNot();
export function whyNoMpi() {
  if (skip) return skip;
  return spawnSync('mpirun', ['--version']).status === 0 ? false : 'mpirun is missing (openmpi-bin, which scripts/setup.sh installs)';
}

export function markerLine(name) {
  const lines = fs.readFileSync(TRAIN, 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(`dist: ${name}`));
  if (i < 0) throw new Error(`marker dist: ${name} not found`);
  return i + 1;
}

export const INIT = { adapterID: 'strata', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' };

export async function launchJob(c, launch, lines, file = TRAIN) {
  await c.initializeRequest(INIT);
  await c.launchRequest({ ranks: true, ...launch });
  const set = await c.setBreakpointsRequest({ source: { path: file }, breakpoints: lines.map((line) => ({ line })) });
  await c.configurationDoneRequest();
  return set.body.breakpoints;
}

export function spawnLaunch(port, extra = [], more = {}) {
  return { program: TRAIN, python: PYTHON, args: ['--steps', '3', '--port', String(port), ...extra], ...more };
}

export function mpiLaunch(port, extra = [], more = {}) {
  return {
    program: 'mpirun',
    args: ['-n', '4', '--oversubscribe', '--bind-to', 'none', PYTHON, TRAIN, '--launched', '--steps', '3', '--port', String(port), ...extra],
    env: MPI_ENV,
    ...more,
  };
}

export const stops = (c) => c.eventsNamed('stopped').map((e) => e.body);

export async function threadsByName(c) {
  const { body } = await c.threadsRequest();
  return body.threads;
}

export async function topFrame(c, threadId) {
  const st = await c.stackTraceRequest({ threadId, startFrame: 0, levels: 20 });
  return st.body.stackFrames;
}

export async function localsOf(c, frameId) {
  const scopes = await c.scopesRequest({ frameId });
  const locals = scopes.body.scopes.find((s) => s.name === 'Locals');
  const vars = await c.variablesRequest({ variablesReference: locals.variablesReference });
  return Object.fromEntries(vars.body.variables.map((v) => [v.name, v.value]));
}

export async function finish(c, what) {
  const terminated = c.waitForEvent('terminated', 120000);
  await c.setBreakpointsRequest({ source: { path: TRAIN }, breakpoints: [] });
  await what();
  await terminated;
  const out = c.output('stdout') + c.output('stderr');
  const done = [...out.matchAll(/rank (\d) done: loss [\d.]+ weights (-?[\d.]+)/g)];
  assert.equal(done.length, 4, out);
  assert.equal(new Set(done.map((m) => m[2])).size, 1, 'every rank ends with the same weights');
  return out;
}
