// A distributed training job (examples/distributed/train_ddp.py: 4 ranks, gloo, CPU, started by
// torch.multiprocessing.spawn) under Debian's torch 1.13 and its Python 3.11: the normal run's
// output, and with one rank made to hang, `strata stacks --tree` merging every rank's stacks:
// three ranks in all_reduce, the fourth in its data loading, read-only, the job left as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CLI, REPO, waitUntil, withTimeout, isRunning, freePort, startStdio, assertClean, hasCustomSchema } from './lib/harness.mjs';

const PYTHON = '/usr/bin/python3';
const TRAIN = path.join(REPO, 'examples/distributed/train_ddp.py');

function whyNot() {
  if (!fs.existsSync(PYTHON)) return `${PYTHON} is missing`;
  const r = spawnSync(PYTHON, ['-c', 'import torch.distributed as d; assert d.is_available()'], { encoding: 'utf8' });
  return r.status === 0 ? false : `torch.distributed does not import under ${PYTHON} (python3-torch, which scripts/setup.sh installs)`;
}
const skip = whyNot();

function markerLine(name) {
  const lines = fs.readFileSync(TRAIN, 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(`dist: ${name}`));
  if (i < 0) throw new Error(`marker dist: ${name} not found`);
  return i + 1;
}

function startJob(args) {
  const proc = spawn(PYTHON, [TRAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.out = '';
  proc.err = '';
  proc.stdout.on('data', (d) => { proc.out += d; });
  proc.stderr.on('data', (d) => { proc.err += d; });
  proc.done = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  return proc;
}

function killJob(proc) {
  // The ranks are the job's children: a process group would be neater, but spawn's children
  // are found the same way the tree finds them.
  const kids = spawnSync('pgrep', ['-P', String(proc.pid)], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  for (const k of kids) { try { process.kill(Number(k), 'SIGKILL'); } catch { /* gone */ } }
  try { process.kill(proc.pid, 'SIGKILL'); } catch { /* gone */ }
}

function treeJson(args) {
  const r = spawnSync(CLI, ['stacks', '--tree', '--json', ...args], { encoding: 'utf8', timeout: 60000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

// Every node whose label starts with `prefix`, anywhere in the tree.
function nodesNamed(node, prefix, out = []) {
  if ((node.label ?? '').startsWith(prefix)) out.push(node);
  for (const c of node.children ?? []) nodesNamed(c, prefix, out);
  return out;
}

// Once rank 3 hangs and the other ranks reach their all_reduce of step 3 and wait there: the
// tree of the launcher and its descendants, Python frames only.
async function treeOfHungJob(job) {
  await waitUntil(() => /rank 3 hangs in load_batch/.test(job.out), 120000, 'rank 3 to hang');
  let tree;
  await waitUntil(() => {
    tree = treeJson(['--children', '--python-only', String(job.pid)]);
    return nodesNamed(tree.tree, 'all_reduce ').some((n) => n.count === 3);
  }, 60000, 'three ranks in all_reduce');
  return tree;
}

test('a 4-rank job runs to its normal end: every rank applies the same averaged gradients', { skip }, async () => {
  const job = startJob(['--world', '4', '--steps', '8', '--port', String(await freePort())]);
  try {
    const end = await withTimeout(job.done, 120000, 'the job to finish');
    assert.equal(end.code, 0, job.err);
    const done = [...job.out.matchAll(/rank (\d) done: loss [\d.]+ weights (-?[\d.]+)/g)];
    assert.deepEqual(done.map((m) => m[1]).sort(), ['0', '1', '2', '3']);
    assert.equal(new Set(done.map((m) => m[2])).size, 1, `weights differ between ranks:\n${job.out}`);
    assert.match(job.out, /job done\n$/);
  } finally {
    killJob(job);
  }
});

test('one rank hangs before all_reduce: strata stacks --tree shows 3 ranks in all_reduce and rank 3 in load_batch', { skip }, async () => {
  const job = startJob(['--world', '4', '--steps', '20', '--hang-rank', '3', '--port', String(await freePort())]);
  try {
    const tree = await treeOfHungJob(job);
    const ranks = tree.processes.filter((p) => p.rank !== undefined).map((p) => p.rank).sort();
    assert.deepEqual(ranks, [0, 1, 2, 3], JSON.stringify(tree.processes));
    const [reduce] = nodesNamed(tree.tree, 'all_reduce ');
    assert.equal(reduce.owners, 'ranks 0-2');
    assert.match(reduce.file, /torch\/distributed\/distributed_c10d\.py$/);
    const [average] = nodesNamed(tree.tree, 'average_gradients ');
    assert.deepEqual([average.count, average.line, average.owners], [3, markerLine('all_reduce_line'), 'ranks 0-2']);
    const [load] = nodesNamed(tree.tree, 'load_batch ');
    assert.deepEqual([load.count, load.line, load.owners], [1, markerLine('hang_line'), 'rank 3']);
    assert.match(load.threads[0], /^rank 3 \/ \S+ \(\d+\)$/);
    // Both under run's loop, at the step's line; the launcher's own stack apart.
    const [run] = nodesNamed(tree.tree, 'run ');
    assert.deepEqual([run.count, run.line, run.owners], [4, markerLine('step_line'), 'ranks 0-3']);
    assert.ok(nodesNamed(tree.tree, 'ProcessContext.join ').length === 1, 'the launcher waits in join');

    // The ranks named one by one give the same tree; the text form reads as the JSON does.
    const rankPids = tree.processes.filter((p) => p.rank !== undefined).map((p) => String(p.pid));
    const again = treeJson(['--python-only', ...rankPids]);
    assert.equal(nodesNamed(again.tree, 'all_reduce ')[0].owners, 'ranks 0-2');
    const text = spawnSync(CLI, ['stacks', '--tree', '--python-only', ...rankPids], { encoding: 'utf8' }).stdout;
    assert.match(text, /^4 threads with Python frames in 4 processes \(ranks 0-3\)\n/);
    assert.match(text, /\n *\[3\] all_reduce \(\S+distributed_c10d\.py:\d+\) +<- ranks 0-2\n/);
    assert.match(text, new RegExp(`\\n *\\[1\\] load_batch \\(${TRAIN.replace(/[.]/g, '\\.')}:${markerLine('hang_line')}\\) +<- rank 3\\n`));

    // The same through the adapter: the parallelStacks request, in a session that launched
    // nothing; bad arguments are answered with why and the session goes on.
    const c = await startStdio();
    await c.initializeRequest();
    const byDap = (await c.send('parallelStacks', { processTree: job.pid, pythonOnly: true })).body;
    assert.ok(hasCustomSchema('ParallelStacksResponse'));
    assert.equal(nodesNamed(byDap.tree, 'all_reduce ')[0].owners, 'ranks 0-2');
    assert.equal(nodesNamed(byDap.tree, 'load_batch ')[0].owners, 'rank 3');
    const listed = (await c.send('parallelStacks', { processIds: rankPids.map(Number) })).body;
    assert.equal(listed.processes.length, 4);
    assert.ok(nodesNamed(listed.tree, 'all_reduce ').some((n) => n.count === 3), 'Python frames among native ones');
    await assert.rejects(c.send('parallelStacks', {}), /arguments.processIds or processTree: name the processes to read/);
    await assert.rejects(c.send('parallelStacks', { processIds: [0] }), /processIds\[0\]: 0 is not a process id/);
    await assert.rejects(c.send('parallelStacks', { processIds: [2147483000] }), /2147483000/);
    await c.disconnectRequest();
    assertClean(assert, c);

    // Read-only: every rank is still there, still waiting.
    for (const p of tree.processes) assert.ok(isRunning(p.pid), `process ${p.pid} ended`);
    assert.doesNotMatch(job.out, /done/);
  } finally {
    killJob(job);
  }
});

function whyNoMpi() {
  if (skip) return skip;
  const r = spawnSync('mpirun', ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? false : 'mpirun is missing (openmpi-bin, which scripts/setup.sh installs)';
}

test('mpirun -n 4 with one rank hanging: the tree of the launcher\'s pid shows the ranks by OMPI_COMM_WORLD_RANK', { skip: whyNoMpi() }, async () => {
  const env = { ...process.env, OMPI_ALLOW_RUN_AS_ROOT: '1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: '1', OMPI_MCA_plm_rsh_agent: '' };
  const job = spawn('mpirun', ['-n', '4', '--oversubscribe', '--bind-to', 'none', PYTHON, TRAIN, '--launched',
    '--steps', '20', '--hang-rank', '3', '--port', String(await freePort())], { stdio: ['ignore', 'pipe', 'pipe'], env });
  job.out = '';
  job.stdout.on('data', (d) => { job.out += d; });
  job.stderr.on('data', (d) => { job.out += d; });
  try {
    const tree = await treeOfHungJob(job);
    // mpirun itself is no Python process: listed with why, the tree is of its ranks.
    const launcher = tree.processes.find((p) => p.pid === job.pid);
    assert.match(launcher.error, /no CPython/);
    assert.deepEqual(tree.processes.filter((p) => p.rank !== undefined).map((p) => p.rank).sort(), [0, 1, 2, 3]);
    assert.equal(nodesNamed(tree.tree, 'all_reduce ')[0].owners, 'ranks 0-2');
    const [load] = nodesNamed(tree.tree, 'load_batch ');
    assert.deepEqual([load.line, load.owners], [markerLine('hang_line'), 'rank 3']);
  } finally {
    killJob(job);
  }
});
