// Fake SecretStorage and input box (VS Code's own cannot run in a unit test); tokens.js itself runs as it does in VS Code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ext = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const tokens = require(path.join(ext, 'out/tokens.js'));

function fakes(answers = []) {
  const stored = new Map();
  const asked = [];
  return {
    stored, asked,
    deps: {
      secrets: { get: async (k) => stored.get(k), store: async (k, v) => void stored.set(k, v), delete: async (k) => void stored.delete(k) },
      ask: async (q) => { asked.push(q); return answers.shift(); },
    },
  };
}

test('a token file: its first line, read at session start; the configuration keeps no file name', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-vscode-tok-'));
  fs.writeFileSync(path.join(dir, 'agent-token'), 's3cret-42\nsecond line\n', { mode: 0o600 });
  const { deps, asked } = fakes();
  const config = { type: 'strata', request: 'attach', name: 'r', connect: { host: '10.1.2.3', port: 5678 }, tokenFile: 'agent-token' };
  const before = JSON.stringify(config);
  const out = await tokens.withAgentToken(config, { ...deps, baseDir: dir });
  assert.equal(out.token, 's3cret-42');
  assert.equal(out.tokenFile, undefined);
  assert.equal(JSON.stringify(config), before, 'the configuration as written is not changed');
  assert.equal(asked.length, 0);
  fs.writeFileSync(path.join(dir, 'empty'), '\n');
  await assert.rejects(tokens.withAgentToken({ ...config, tokenFile: 'empty' }, { ...deps, baseDir: dir }), /holds no token/);
  await assert.rejects(tokens.withAgentToken({ ...config, tokenFile: path.join(dir, 'nope') }, deps), /cannot read the token file .*nope: ENOENT/);
});

test('a remote agent with no token file: asked once, kept in secret storage, used from there after', async () => {
  const { deps, asked, stored } = fakes(['tok-1']);
  const config = { request: 'attach', connect: { host: 'gpu-node7', port: 6000 } };
  assert.equal((await tokens.withAgentToken(config, deps)).token, 'tok-1');
  assert.equal(asked.length, 1);
  assert.match(asked[0], /gpu-node7:6000/);
  assert.deepEqual([...stored.entries()], [['strata.token:agent:gpu-node7:6000', 'tok-1']]);
  assert.equal((await tokens.withAgentToken(config, deps)).token, 'tok-1');
  assert.equal(asked.length, 1, 'not asked again');
  // Another port is another agent.
  assert.equal(await tokens.withAgentToken({ request: 'attach', host: 'gpu-node7', port: 6001 }, deps), undefined,
               'dismissed: no session');
  assert.equal(asked.length, 2);
  // Forgetting removes only Strata's keys.
  stored.set('other.key', 'x');
  assert.equal(await tokens.forgetTokens(deps.secrets, [...stored.keys()]), 1);
  assert.deepEqual([...stored.keys()], ['other.key']);
});

test('loopback needs no token; a token written in the configuration is used as it is', async () => {
  const { deps, asked } = fakes(['never']);
  const local = { request: 'attach', connect: { host: '127.0.0.1', port: 5678 } };
  assert.deepEqual(await tokens.withAgentToken(local, deps), local);
  const listen = { request: 'attach', listen: { host: 'localhost', port: 0 } };
  assert.deepEqual(await tokens.withAgentToken(listen, deps), listen);
  const clear = { request: 'attach', connect: { host: '10.0.0.5', port: 5678 }, token: 'given' };
  assert.deepEqual(await tokens.withAgentToken(clear, deps), clear);
  const pid = { request: 'attach', processId: 1234 };
  assert.deepEqual(await tokens.withAgentToken(pid, deps), pid);
  assert.equal(asked.length, 0);
  assert.deepEqual(['127.0.0.1', '127.8.0.1', '::1', 'localhost', '10.0.0.1', 'example.org', '::ffff:127.0.0.1']
                     .map(tokens.isLoopback), [true, true, true, true, false, false, true]);
});

test('a remote strata-dap --listen: its own token, kept apart from agents\'', async () => {
  const { deps, asked, stored } = fakes(['adapter-tok', 'bad token']);
  assert.deepEqual(await tokens.adapterServerToken({ port: 4711 }, deps), { host: '127.0.0.1', port: 4711, token: undefined });
  assert.deepEqual(await tokens.adapterServerToken({ host: 'box', port: 4711 }, deps), { host: 'box', port: 4711, token: 'adapter-tok' });
  assert.equal(stored.get('strata.token:adapter:box:4711'), 'adapter-tok');
  await assert.rejects(tokens.adapterServerToken({ host: 'box2', port: 4711 }, deps), /no spaces/);
  assert.equal(stored.has('strata.token:adapter:box2:4711'), false, 'a bad answer is not kept');
  await assert.rejects(tokens.adapterServerToken({ host: 'box' }, deps), /adapterServer\.port/);
  assert.equal(asked.length, 2);
});
