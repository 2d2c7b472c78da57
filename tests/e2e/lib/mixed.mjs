// The mixed-mode example (examples/mixed: a Python driver and its C++ extension) as the suites
// that debug it need it: paths, marker lines, the extension built per interpreter, a plain run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { ADAPTER, REPO, waitUntil } from './harness.mjs';

export const DRIVER = path.join(REPO, 'examples/mixed/driver.py');
export const EXT_SRC = path.join(REPO, 'examples/mixed/mixed_ext.cpp');
// The extension as the build made it, one .so per interpreter.
export const EXT_DIR = process.env.STRATA_MIXED_EXT_DIR ?? path.resolve(path.dirname(ADAPTER), '../examples/mixed');

// The line of `mixed: NAME` in an example file.
export function markerLine(file, name) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(`mixed: ${name}`));
  if (i < 0) throw new Error(`marker mixed: ${name} not found in ${file}`);
  return i + 1;
}

// The extension built for `python` (its path), or null.
export function extFor(python) {
  const tag = path.basename(python).replace('python', '').replace('.', '');
  if (!fs.existsSync(EXT_DIR)) return null;
  const f = fs.readdirSync(EXT_DIR).find((n) => n.startsWith('mixed_ext.cpython-' + tag));
  return f ? path.join(EXT_DIR, f) : null;
}

// driver.py --until FILE started plainly (to attach to), looping in the extension; it writes
// `result` once FILE exists.
export async function startLooping(py) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-mixed-'));
  const until = path.join(dir, 'stop'), result = path.join(dir, 'result.txt');
  const prog = spawn(py, [DRIVER, '--until', until, '--result', result], {
    env: { ...process.env, PYTHONPATH: EXT_DIR }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  prog.stdout.on('data', (d) => { out += d; });
  await waitUntil(() => out.includes('looping\n'), 30000, 'the program to start its loop');
  return { prog, until, result, dir };
}
