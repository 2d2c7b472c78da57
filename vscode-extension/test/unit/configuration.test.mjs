// The configuration provider's logic (out/configuration.js, no VS Code API in it) on real files,
// and package.json's debugger contribution against the adapter's own argument structs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ext = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const repo = path.dirname(ext);
const cfg = require(path.join(ext, 'out/configuration.js'));
const manifest = JSON.parse(fs.readFileSync(path.join(ext, 'package.json'), 'utf8'));

function workspace() {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-vscode-cfg-'));
  fs.writeFileSync(path.join(ws, 'train.py'), 'print(1)\n');
  fs.writeFileSync(path.join(ws, 'notes.txt'), 'x\n');
  fs.writeFileSync(path.join(ws, 'trace.pt.trace.json.gz'), '');
  fs.mkdirSync(path.join(ws, 'src'));
  fs.writeFileSync(path.join(ws, 'src', 'primes.c'), 'int main(){}\n');
  fs.writeFileSync(path.join(ws, 'src', 'lonely.cu'), 'int main(){}\n');
  return ws;
}

test('F5 on a Python file launches it, with the workspace as cwd', () => {
  const ws = workspace();
  const r = cfg.completeConfiguration({}, { path: path.join(ws, 'train.py'), languageId: 'python' }, ws);
  assert.deepEqual(r.config, { type: 'strata', request: 'launch', name: 'Strata: train.py', program: path.join(ws, 'train.py'), cwd: ws });
});

test('F5 on a built program (an ELF file, whatever its name) launches it', () => {
  const ws = workspace();
  const prog = path.join(ws, 'tool.bin');
  fs.copyFileSync('/bin/true', prog);
  const r = cfg.completeConfiguration({}, { path: prog, languageId: 'plaintext' }, ws);
  assert.equal(r.config.program, prog);
  assert.equal(r.config.request, 'launch');
  // The same bytes minus the ELF magic are not a program.
  fs.writeFileSync(prog, 'not an elf');
  assert.match(cfg.completeConfiguration({}, { path: prog }, ws).error, /cannot debug tool\.bin/);
});

test('F5 on a C or CUDA source launches the program built from it, or asks for it', () => {
  const ws = workspace();
  fs.mkdirSync(path.join(ws, 'build', 'release'), { recursive: true });
  fs.copyFileSync('/bin/true', path.join(ws, 'build', 'release', 'primes'));
  const c = cfg.completeConfiguration({}, { path: path.join(ws, 'src', 'primes.c'), languageId: 'c' }, ws);
  assert.equal(c.config.program, path.join(ws, 'build', 'release', 'primes'));
  const cu = cfg.completeConfiguration({}, { path: path.join(ws, 'src', 'lonely.cu'), languageId: 'cuda-cpp' }, ws);
  assert.equal(cu.pickProgram, path.join(ws, 'src', 'lonely.cu'));
  assert.equal(cu.config.program, undefined);
});

test('F5 on a GPU trace opens it with no program', () => {
  const ws = workspace();
  const file = path.join(ws, 'trace.pt.trace.json.gz');
  const r = cfg.completeConfiguration({}, { path: file }, ws);
  assert.deepEqual(r.config, { type: 'strata', request: 'launch', name: 'Strata: GPU trace trace.pt.trace.json.gz', trace: file });
  assert.equal(cfg.isTraceFile('/x/run.strata'), true);
  assert.equal(cfg.isTraceFile('/x/report.sqlite'), true);
  assert.equal(cfg.isTraceFile('/x/package.json'), false);
});

test('F5 with nothing to debug says what F5 can debug', () => {
  const ws = workspace();
  assert.match(cfg.completeConfiguration({}, undefined, ws).error, /open a Python file, a built program or a GPU trace/);
  assert.match(cfg.completeConfiguration({}, { path: path.join(ws, 'notes.txt'), languageId: 'plaintext' }, ws).error,
               /Strata cannot debug notes\.txt/);
});

test('launch and attach configurations are checked before they reach strata-dap', () => {
  assert.match(cfg.completeConfiguration({ type: 'strata', request: 'launch', name: 'x' }).error, /names no "program", "module" or "trace"/);
  assert.match(cfg.completeConfiguration({ type: 'strata', request: 'launch', name: 'x', trace: 't.json', program: 'p' }).error,
               /gives "trace" and a program/);
  assert.match(cfg.completeConfiguration({ type: 'strata', request: 'bogus', name: 'x' }).error, /"launch" or "attach"/);
  // An attach with neither a pid nor a peer picks the process.
  assert.equal(cfg.completeConfiguration({ type: 'strata', request: 'attach', name: 'a' }).config.processId,
               '${command:strata.pickProcess}');
  const remote = { type: 'strata', request: 'attach', name: 'a', connect: { host: 'gpu7', port: 5678 } };
  assert.deepEqual(cfg.completeConfiguration(remote).config, remote);
  assert.match(cfg.completeConfiguration({ ...remote, processId: 42 }).error, /gives processId and connect/);
  // The ranks of a job: no process picker, and not with a single pid.
  const job = { type: 'strata', request: 'attach', name: 'job', processTree: 4242 };
  assert.deepEqual(cfg.completeConfiguration(job).config, job);
  assert.deepEqual(cfg.completeConfiguration({ ...job, processTree: undefined, processIds: [1, 2] }).config.processIds, [1, 2]);
  assert.match(cfg.completeConfiguration({ ...job, processId: 42 }).error, /gives processId and processTree/);
});

// The adapter's argument structs: every field a launch or attach takes must be described.
function structFields(file, struct) {
  const text = fs.readFileSync(path.join(repo, file), 'utf8');
  const body = new RegExp(`struct ${struct} \\{([\\s\\S]*?)\\n\\};`).exec(text)[1];
  const fields = [];
  for (const line of body.split('\n')) {
    const code = line.replace(/\/\/.*$/, '').trim();
    if (!code) continue;
    const m = /^(?:std::optional<[^;]*>|std::vector<[^;]*>|std::map<[^;]*>|json::value)\s+([^;=]+)/.exec(code);
    if (m) fields.push(...m[1].split(',').map((s) => s.trim()));
  }
  return fields.filter((f) => !f.startsWith('__'));
}

test('every launch and attach argument strata-dap takes is in the contribution, typed, described', () => {
  const dbg = manifest.contributes.debuggers.find((d) => d.type === 'strata');
  const launch = structFields('protocol/include/strata/protocol/types.hpp', 'LaunchRequestArguments');
  const attach = structFields('protocol/include/strata/protocol/debug_types.hpp', 'AttachRequestArguments');
  assert.ok(launch.includes('gpuStore') && attach.includes('processId'), `parsed ${launch} / ${attach}`);
  for (const [request, fields] of [['launch', launch], ['attach', attach]]) {
    const props = dbg.configurationAttributes[request].properties;
    for (const f of fields) {
      assert.ok(props[f], `${request}.${f} is not in package.json's configurationAttributes`);
      assert.ok(props[f].description, `${request}.${f} has no description`);
      assert.ok(props[f].type || props[f].anyOf, `${request}.${f} has no type`);
    }
  }
  for (const lang of ['python', 'c', 'cpp', 'cuda-cpp']) {
    assert.ok(manifest.contributes.breakpoints.some((b) => b.language === lang), `breakpoints in ${lang}`);
    assert.ok(dbg.languages.includes(lang));
  }
  assert.deepEqual(dbg.initialConfigurations, cfg.initialConfigurations());
  const snippets = dbg.configurationSnippets.map((s) => s.label);
  for (const s of ['Python file', 'Python module', 'native program', 'attach to a process', 'attach to a remote agent',
                   'listen for an agent', 'open a GPU trace'])
    assert.ok(snippets.includes(`Strata: ${s}`), `snippet ${s}`);
  // No snippet writes a token in clear.
  assert.ok(!JSON.stringify(dbg.configurationSnippets).includes('"token"'));
});
