// The process picker's list, read from the real /proc of processes this test starts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ext = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const procs = require(path.join(ext, 'out/processes.js'));

function start(cmd, args, env) {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: 'ignore' });
  return child;
}
// Until exec, the child still shows node's command line.
async function listed(pid, program) {
  for (let i = 0; i < 100; ++i) {
    const p = procs.listProcesses().find((x) => x.pid === pid);
    if (p && p.argv[0] === program) return p;
    await new Promise((r) => setTimeout(r, 20));
  }
  return undefined;
}

test('a Python program shows its script, arguments and rank', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-vscode-ps-'));
  const script = path.join(dir, 'train.py');
  fs.writeFileSync(script, 'import time\ntime.sleep(30)\n');
  // Debian's interpreter itself (a pyenv shim on PATH would be a shell script first).
  const python = '/usr/bin/python3';
  if (!fs.existsSync(python)) return t.skip(`${python} is not installed`);
  const child = start(python, ['-X', 'dev', '-u', script, '--epochs', '3'], { RANK: '3', OMPI_COMM_WORLD_RANK: '9' });
  t.after(() => child.kill());
  const p = await listed(child.pid, python);
  assert.ok(p, 'the process is listed');
  assert.equal(p.python, true);
  assert.equal(p.runs, `${script} --epochs 3`);
  assert.equal(p.rank, '3', 'RANK first');
  const item = procs.pickItem(p);
  assert.equal(item.label, `python3 ${script} --epochs 3`);
  assert.equal(item.description, `pid ${child.pid} · rank 3 · Python`);
  assert.equal(item.pid, String(child.pid));
  const all = procs.listProcesses();
  assert.ok(all.findIndex((x) => !x.python) > all.findIndex((x) => x.pid === child.pid), 'Python programs come first');
  assert.ok(!all.some((x) => x.pid === process.pid), 'not the picker itself');
});

test('a native program shows its command line; SLURM_PROCID is a rank too', async (t) => {
  const child = start('sleep', ['30'], { SLURM_PROCID: '12', RANK: '', OMPI_COMM_WORLD_RANK: '' });
  t.after(() => child.kill());
  const p = await listed(child.pid, 'sleep');
  assert.equal(p.python, false);
  assert.equal(p.runs, 'sleep 30');
  assert.equal(p.rank, '12');
  assert.equal(procs.pickItem(p).description, `pid ${child.pid} · rank 12`);
});

test('what a Python command line runs', () => {
  assert.equal(procs.pythonRuns(['python3.12', '-m', 'torch.distributed.run', '--nproc', '2', 'train.py']),
               '-m torch.distributed.run --nproc 2 train.py');
  assert.equal(procs.pythonRuns(['/usr/bin/python3', '-W', 'error', '-u', 'a.py', '-x']), 'a.py -x');
  assert.equal(procs.pythonRuns(['python3', '-c', 'print(1)']), '-c print(1)');
  assert.equal(procs.pythonRuns(['python3']), '(interactive)');
  assert.equal(procs.isPythonExecutable('/usr/bin/python3.13'), true);
  assert.equal(procs.isPythonExecutable('python3.13t'), true);
  assert.equal(procs.isPythonExecutable('/usr/bin/pythonista'), false);
  assert.equal(procs.rankOf('A=1\0PMI_RANK=4\0'), '4');
  assert.equal(procs.rankOf(undefined), undefined);
});
