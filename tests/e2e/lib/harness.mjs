// Test harness: the real strata-dap driven by @vscode/debugadapter-testsupport's DebugClient,
// with every message the adapter sends checked against the official DAP JSON schema.
import { after, test } from 'node:test';
import { DebugClient } from '@vscode/debugadapter-testsupport';
import Ajv from 'ajv-draft-04';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(here, '../../..');
export const ADAPTER = process.env.STRATA_DAP ?? path.join(REPO, 'build/asan/adapter/strata-dap');
export const CLI = process.env.STRATA_CLI ?? path.join(path.dirname(ADAPTER), 'cli/strata');
export const TARGETS = process.env.STRATA_TARGETS ?? path.join(REPO, 'build/asan/tests/targets');
export const PY_TARGETS = path.join(REPO, 'tests/targets/python');
export const PYTHONS = (process.env.STRATA_PYTHONS ?? '').split(':').filter(Boolean);
// Where no CPython >= 3.12 was found, the Python cases are reported skipped with this reason.
export const NO_PYTHON = PYTHONS.length === 0
  ? 'no CPython 3.12 or newer was found when the build was configured (STRATA_PYTHONS is empty)'
  : false;

// Registers a file's Python cases once per interpreter, or one skipped case saying why none ran.
// CPython 3.10 and 3.11, where the agent traces from C instead of sys.monitoring: the suites
// that pass `{ tracing: true }` run on them too.
export const TRACING_PYTHONS = (process.env.STRATA_TRACING_PYTHONS ?? '').split(':').filter(Boolean);

export function forEachPython(register, { tracing = false } = {}) {
  if (PYTHONS.length === 0) return test('Python cases', { skip: NO_PYTHON }, () => {});
  for (const py of tracing ? [...PYTHONS, ...TRACING_PYTHONS] : PYTHONS) register(py);
}

// CPython 3.14+ found beside the agent's interpreters (Debian's, fetched by
// scripts/debian-cpython.sh): attach by pid brings the agent in through PEP 768 there.
export const REMOTE_EXEC_PYTHONS = (process.env.STRATA_REMOTE_EXEC_PYTHONS ?? '').split(':').filter(Boolean);

// The attach-by-pid cases: once per agent interpreter and once per 3.14+ (`{ tracing: true }`:
// on 3.10 and 3.11 too).
export function forEachAttachPython(register, { tracing = false } = {}) {
  forEachPython(register, { tracing });
  for (const py of REMOTE_EXEC_PYTHONS) register(py);
}

// The official schema, kept in the repository (tests/e2e/schema/README.md says where from).
function findSchema() {
  const p = process.env.STRATA_DAP_SCHEMA || path.join(here, '../schema/debugAdapterProtocol.json');
  if (!fs.existsSync(p)) throw new Error(`DAP schema not found at ${p}`);
  return p;
}
const schema = JSON.parse(fs.readFileSync(findSchema(), 'utf8'));
// Strata's custom messages (the GPU requests, gpuActivity), beside it: checked the same way.
export const CUSTOM_SCHEMA = path.join(here, '../schema/strataCustom.json');
const custom = JSON.parse(fs.readFileSync(CUSTOM_SCHEMA, 'utf8'));
const ajv = new Ajv({ strict: false, allErrors: true });
// The schemas' integer formats, checked rather than ignored.
const intFormat = (lo, hi) => ({ type: 'number', validate: (x) => Number.isInteger(x) && x >= lo && x <= hi });
ajv.addFormat('int32', intFormat(-(2 ** 31), 2 ** 31 - 1));
ajv.addFormat('uint32', intFormat(0, 2 ** 32 - 1));
ajv.addFormat('uint64', intFormat(0, Number.MAX_SAFE_INTEGER));
ajv.addFormat('int64', intFormat(-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
// Integer nanoseconds (custom schema): absolute CLOCK_REALTIME times pass 2^53, where a
// JavaScript number can no longer tell neighbours apart; still an integer in [0, 2^64).
ajv.addFormat('nanoseconds', intFormat(0, 2 ** 64 - 1));
// A format the checks above do not know would be ignored silently: refuse such a schema.
const formatsOf = (s) => new Set([...JSON.stringify(s).matchAll(/"format":"([^"]+)"/g)].map((m) => m[1]));
for (const f of formatsOf(schema)) {
  if (!['int32', 'uint32', 'uint64', 'int64'].includes(f)) throw new Error(`DAP schema format '${f}' is not checked`);
}
for (const f of formatsOf(custom)) {
  if (!['int32', 'uint32', 'uint64', 'int64', 'nanoseconds'].includes(f)) throw new Error(`custom schema format '${f}' is not checked`);
}
ajv.addSchema(schema, 'dap');
ajv.addSchema(custom, 'strata');
const defs = schema.definitions;
const customDefs = custom.definitions;
const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);

// Which schema definition a message from the adapter must satisfy: a custom one first.
function definitionFor(m) {
  const named = (name, fallback) => (customDefs[name] ? `strata#/definitions/${name}`
    : `dap#/definitions/${defs[name] ? name : fallback}`);
  if (m.type === 'response') {
    if (!m.success) return 'dap#/definitions/ErrorResponse';
    return named(cap(m.command) + 'Response', 'Response');
  }
  if (m.type === 'event') return named(cap(m.event) + 'Event', 'Event');
  if (m.type === 'request') return named(cap(m.command) + 'Request', 'Request');
  return 'dap#/definitions/ProtocolMessage';
}

export function schemaErrors(message) {
  const ref = definitionFor(message);
  const validate = ajv.getSchema(ref);
  const name = ref.split('/').pop();
  if (validate(message)) return [];
  return validate.errors.map((e) => `${name}${e.instancePath} ${e.message}`);
}

// Whether the schema names a message of this kind ("GpuSummaryResponse"): a test checks each
// custom message it receives has a schema of its own, not the generic Response.
export function hasCustomSchema(name) { return Boolean(customDefs[name]); }

// Adapters still running when a file's tests end (a failed assertion skips the disconnect)
// are stopped, so one failure never hangs the run.
const live = new Set();
after(() => { for (const c of live) c.stopAdapter(); });

export class StrataClient extends DebugClient {
  // spawn: Node's spawn options for the adapter (uid, gid, env); prefix: a command the
  // adapter runs under (['setpriv', ...]).
  // adapter: another strata-dap (an installed one).
  constructor({ spawn: spawnOptions = {}, prefix = [], adapter = ADAPTER } = {}) {
    super(adapter, '--stdio', 'strata', spawnOptions, true);
    this.adapterPath = adapter;
    this.prefix = prefix;
    live.add(this);
    this.defaultTimeout = 20000;
    this.received = [];          // every message from the adapter, in order
    this.violations = [];        // schema or ordering violations
    this.reverseHandler = null;  // (request) => body or Promise<body>
    this.on('error', () => {});
  }

  // A request the adapter never answers fails its case, named, instead of holding the whole
  // suite until ctest's timeout (the test client's requests have no timeout of their own).
  send(command, args, timeout = 120000) {
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no response to '${command}' after ${timeout} ms`)), timeout);
      // A request a test leaves unanswered on purpose must not keep the runner alive after it.
      timer.unref();
    });
    return Promise.race([super.send(command, args), late]).finally(() => clearTimeout(timer));
  }

  dispatch(body) {
    const m = JSON.parse(body);
    this.received.push(m);
    for (const e of schemaErrors(m)) this.violations.push(`${JSON.stringify(m).slice(0, 200)}: ${e}`);
    const initResponse = this.received.findIndex((x) => x.type === 'response' && x.command === 'initialize');
    if (m.type === 'event' && initResponse === -1) this.violations.push(`event '${m.event}' before the initialize response`);
    if (m.type === 'request') return this.answerReverse(m);
    super.dispatch(body);
  }

  async answerReverse(request) {
    let response;
    try {
      if (!this.reverseHandler) throw new Error(`unexpected reverse request ${request.command}`);
      const result = await this.reverseHandler(request);
      if (result === undefined) return; // the test chooses never to answer
      response = { type: 'response', seq: 0, request_seq: request.seq, command: request.command, success: true, body: result };
    } catch (e) {
      response = { type: 'response', seq: 0, request_seq: request.seq, command: request.command, success: false, message: String(e.message) };
    }
    this.writeRaw(JSON.stringify(response));
  }

  // Writes bytes to the adapter exactly as given (a frame is added when `frame` is true).
  writeRaw(text, frame = true) {
    const data = frame ? `Content-Length: ${Buffer.byteLength(text, 'utf8')}\r\n\r\n${text}` : text;
    (this._socket ?? this._adapterProcess.stdin).write(data);
  }

  eventsNamed(name) { return this.received.filter((m) => m.type === 'event' && m.event === name); }

  output(category) {
    return this.eventsNamed('output').filter((e) => e.body.category === category).map((e) => e.body.output).join('');
  }

  get adapterProcess() { return this._adapterProcess; }

  start(port) {
    if (typeof port === 'number' || this.prefix.length === 0) return super.start(port);
    const [command, ...args] = this.prefix;
    this._adapterProcess = spawn(command, [...args, this.adapterPath, '--stdio'], this._spawnOptions);
    this._adapterProcess.stderr.on('data', (d) => process.stderr.write(d));
    this.connect(this._adapterProcess.stdout, this._adapterProcess.stdin);
    return Promise.resolve();
  }
}

export async function startStdio(options) {
  const c = new StrataClient(options);
  await c.start();
  return c;
}

// Starts `strata-dap --listen 127.0.0.1:0` and returns {server, port}.
export async function startServer(extraArgs = []) {
  const server = spawn(ADAPTER, ['--listen', '127.0.0.1:0', ...extraArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    let text = '';
    server.stdout.on('data', (d) => {
      text += d;
      const m = /listening on .*:(\d+)/.exec(text);
      if (m) resolve(Number(m[1]));
    });
    server.on('exit', (code) => reject(new Error(`adapter exited with ${code} before listening`)));
  });
  return { server, port };
}

export async function startTcp(port) {
  const c = new StrataClient();
  await c.start(port);
  return c;
}

export function exitOf(proc) {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve(proc.exitCode ?? proc.signalCode);
  return new Promise((resolve) => proc.once('exit', (code, signal) => resolve(code ?? signal)));
}

export function withTimeout(promise, ms, what) {
  let t;
  return Promise.race([promise, new Promise((_, reject) => { t = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms); })])
    .finally(() => clearTimeout(t));
}

export function isRunning(pid) {
  try { process.kill(pid, 0); } catch { return false; }
  // A zombie is not running: look at /proc.
  try { return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { return false; }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function waitUntil(pred, ms, what) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await pred()) return;
    await sleep(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

// Runs initialize + launch + configurationDone and waits for `terminated`.
export async function runToEnd(client, launchArgs) {
  await client.initializeRequest();
  const terminated = client.waitForEvent('terminated', 60000);
  await client.launchRequest(launchArgs);
  await client.configurationDoneRequest();
  await terminated;
  const exited = client.eventsNamed('exited');
  return exited.length ? exited[0].body.exitCode : undefined;
}

export function target(name) { return path.join(TARGETS, name); }

export function assertClean(assert, client) {
  assert.deepEqual(client.violations, [], 'every message conforms to the DAP schema');
}

export function sh(cmd, args, opts = {}) { return execFileSync(cmd, args, { encoding: 'utf8', ...opts }); }

export function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}
