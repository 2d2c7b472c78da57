// `strata mcp`: the Model Context Protocol server, driven by the protocol's official TypeScript
// client over stdio (a scripted agent finds the bug of an example through tool calls alone, a
// native program is stepped, errors say what to do next) and checked over Streamable HTTP by the
// protocol's conformance suite, in the scenarios a server of tools answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, REPO, PYTHONS, NO_PYTHON, isRunning, waitUntil } from './lib/harness.mjs';
import { lineOf as cLine, demoSrc, DEMO } from './lib/native.mjs';

const buggy = path.join(REPO, 'examples/python/buggy_batches.py');

async function connect() {
  const client = new Client({ name: 'strata-e2e-agent', version: '1.0.0' });
  const transport = new StdioClientTransport({ command: CLI, args: ['mcp'], env: { ...process.env }, stderr: 'inherit' });
  await client.connect(transport);
  return client;
}

// A tool call's answer: the text a model reads and the data beside it.
async function call(client, name, args = {}) {
  const r = await client.callTool({ name, arguments: args });
  return { text: r.content.map((c) => c.text).join(''), data: r.structuredContent ?? {}, isError: Boolean(r.isError) };
}

test('tools/list: every tool with a description and an object schema', async () => {
  const client = await connect();
  try {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const expected of ['start_debugging', 'attach', 'set_breakpoint', 'clear_breakpoints', 'resume', 'pause',
      'wait_for_stop', 'threads', 'stack_trace', 'variables', 'evaluate', 'gpu_summary', 'gpu_kernel',
      'debug_console', 'parallel_stacks', 'list_sessions', 'end_session'])
      assert.ok(names.includes(expected), `${expected} in ${names}`);
    for (const t of tools) {
      assert.ok(t.description.length > 20, t.name);
      assert.equal(t.inputSchema.type, 'object', t.name);
    }
    assert.equal(client.getServerVersion().name, 'strata');
  } finally {
    await client.close();
  }
});

test('a scripted agent finds the bug of examples/python/buggy_batches.py through MCP calls alone', { skip: NO_PYTHON }, async () => {
  const client = await connect();
  const py = PYTHONS.at(-1);
  try {
    // Run it: the uncaught ZeroDivisionError stops the program where it is raised.
    let r = await call(client, 'start_debugging', { program: buggy, python: py, args: ['100'], stopOnEntry: false });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.data.reason, 'exception');
    assert.match(r.data.description, /ZeroDivisionError/);
    assert.equal(r.data.frames[0].name, 'mean_loss');
    // What is dividing by zero: the batch is empty.
    r = await call(client, 'variables');
    const batch = r.data.variables.find((v) => v.name === 'batch');
    assert.equal(batch.value, '[]');
    // Where the batches come from: main, with the samples and the batching.
    r = await call(client, 'stack_trace');
    const main = r.data.frames.find((f) => f.name === 'main').index;
    r = await call(client, 'evaluate', { expression: 'len(samples)', frame: main });
    const n = Number(r.data.result);
    r = await call(client, 'evaluate', { expression: '[len(b) for b in batches(samples, BATCH)]', frame: main });
    const sizes = JSON.parse(r.data.result);
    // The agent's finding: one batch more than ceil(n / 32), the last one empty.
    assert.deepEqual(sizes, [32, 32, 32, 4, 0]);
    assert.equal(sizes.length, Math.ceil(n / 32) + 1);
    r = await call(client, 'end_session');
    assert.equal(r.isError, false, r.text);
    // And that a size the batch divides does not show it: a second session, run to its end.
    r = await call(client, 'start_debugging', { program: buggy, python: py, args: ['96'], stopOnEntry: false, session: 'ok96' });
    assert.equal(r.data.state, 'exited', r.text);
    assert.equal(r.data.exitCode, 0);
    assert.match(r.data.output, /^3 batches, mean loss /);
    await call(client, 'end_session', { session: 'ok96' });
  } finally {
    await client.close();
  }
});

test('a native program: breakpoint, resume, variables, evaluate, step out, end', async () => {
  const client = await connect();
  try {
    const square = cLine(demoSrc, 'square_body');
    let r = await call(client, 'start_debugging', { program: DEMO, args: ['steps'], breakpoints: [{ file: demoSrc, line: square }] });
    assert.equal(r.data.reason, 'entry', r.text);
    r = await call(client, 'resume');
    assert.equal(r.data.reason, 'breakpoint', r.text);
    assert.equal(r.data.frames[0].line, square);
    // combine(2, 3) calls square(2) and square(3), in the order the compiler chose.
    r = await call(client, 'variables');
    const v = Number(r.data.variables.find((x) => x.name === 'v').value);
    assert.ok(v === 2 || v === 3, r.text);
    r = await call(client, 'evaluate', { expression: 'v + 40' });
    assert.equal(r.data.result, String(v + 40));
    r = await call(client, 'resume', { action: 'step_out' });
    assert.equal(r.data.frames[0].name.replace(/\(.*$/, ''), 'combine', r.text);
    r = await call(client, 'list_sessions');
    const pid = r.data.sessions[0].pid;
    assert.ok(isRunning(pid));
    r = await call(client, 'end_session');
    assert.match(r.text, /was ended/);
    await waitUntil(() => !isRunning(pid), 10000, 'the program to end with its session');
  } finally {
    await client.close();
  }
});

test('errors a model can act on: no session, a bad argument, an unknown tool', async () => {
  const client = await connect();
  try {
    let r = await call(client, 'resume');
    assert.equal(r.isError, true);
    assert.equal(r.text, 'no session: start one with start_debugging or attach');
    r = await call(client, 'start_debugging', {});
    assert.equal(r.isError, true);
    assert.match(r.text, /start_debugging needs `program`/);
    r = await call(client, 'start_debugging', { program: '/nonexistent/prog' });
    assert.equal(r.isError, true);
    assert.match(r.text, /nonexistent/);
    await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /unknown tool 'no_such_tool'/);
    r = await call(client, 'list_sessions');
    assert.deepEqual(r.data.sessions, []);
  } finally {
    await client.close();
  }
});

// The conformance suite needs Node 22 or newer: the Node 24 that scripts/setup.sh keeps for
// code-server, or the node running this test when it is new enough.
function node22() {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  const cache = process.env.STRATA_CACHE ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'strata');
  const found = fs.existsSync(cache) && fs.readdirSync(cache).filter((d) => /^node-2[2-9]\./.test(d)).sort().at(-1);
  return found ? path.join(cache, found, 'bin/node') : null;
}
const NODE22 = node22();
const CONFORMANCE = path.join(path.dirname(new URL(import.meta.url).pathname), 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

function conformance(url, scenario) {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-conformance-'));
  try {
    const r = spawnSync(NODE22, [CONFORMANCE, 'server', '--url', url, '--scenario', scenario], { cwd, encoding: 'utf8', timeout: 120000 });
    const m = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(r.stdout);
    assert.ok(m, `no result from the conformance suite for ${scenario}: ${r.stdout}\n${r.stderr}`);
    return { passed: Number(m[1]), total: Number(m[2]), failed: Number(m[3]), out: r.stdout };
  } finally {
    fs.rmSync(cwd, { recursive: true, force: true });
  }
}

test('the MCP conformance suite over Streamable HTTP: the scenarios of a tools server pass',
  { skip: !NODE22 && 'Node 22 or newer is needed by @modelcontextprotocol/conformance (scripts/setup.sh installs Node 24 with code-server)' },
  async () => {
    const server = spawn(CLI, ['mcp', '--http', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      const url = await new Promise((resolve, reject) => {
        let text = '';
        server.stderr.on('data', (d) => {
          text += d;
          const m = /listening on (http:\/\/\S+)/.exec(text);
          if (m) resolve(m[1]);
        });
        server.on('exit', (code) => reject(new Error(`strata mcp --http exited with ${code}: ${text}`)));
      });
      // The scenarios that apply to a server of tools; the others test sample tools, prompts and
      // resources a conformance "everything" server defines.
      for (const scenario of ['server-initialize', 'ping', 'tools-list', 'logging-set-level', 'dns-rebinding-protection']) {
        const r = conformance(url, scenario);
        assert.equal(r.failed, 0, r.out);
        assert.ok(r.passed >= 1, r.out);
      }
      // The suite can fail here: a scenario that calls a sample tool this server does not have.
      const missing = conformance(url, 'tools-call-simple-text');
      assert.ok(missing.failed >= 1, missing.out);
      // Only loopback is served.
      const remote = spawnSync(CLI, ['mcp', '--http', '0.0.0.0:0'], { encoding: 'utf8', timeout: 10000 });
      assert.equal(remote.status, 2);
      assert.match(remote.stderr, /--http serves loopback only/);
    } finally {
      server.kill('SIGTERM');
    }
  });
