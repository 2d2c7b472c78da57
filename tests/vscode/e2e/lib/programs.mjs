// Programs the VS Code cases start outside VS Code, as a user would in a terminal: a Python
// loop to attach to (by the process picker or through a remote strata-dap), and
// `strata-dap --listen` with a token file.
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';

// `argv` started in `cwd`, its stdout and stderr kept; `ready` resolves once stdout matches `readyRe`.
export function startProgram(argv, { cwd, env = process.env, readyRe } = {}) {
  const proc = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const p = { proc, pid: proc.pid, stdout: '', stderr: '', exit: null };
  proc.stdout.on('data', (d) => { p.stdout += d; });
  proc.stderr.on('data', (d) => { p.stderr += d; });
  p.exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve((p.exit = code ?? signal))));
  p.alive = () => p.exit === null;
  p.waitFor = async (re, timeout = 30_000) => {
    const deadline = Date.now() + timeout;
    while (!re.test(p.stdout)) {
      if (!p.alive()) throw new Error(`${argv.join(' ')} exited (${p.exit}) before printing ${re}:\n${p.stdout}${p.stderr}`);
      if (Date.now() > deadline) throw new Error(`${argv.join(' ')} did not print ${re} within ${timeout} ms:\n${p.stdout}${p.stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return p.stdout;
  };
  // A program still traced by a debugger is reaped by its parent only once the debugger lets
  // go of it: the wait is bounded, so a failed case never hangs the suite.
  p.stop = async (timeout = 10_000) => {
    if (!p.alive()) return;
    proc.kill('SIGKILL');
    let t;
    await Promise.race([p.exited, new Promise((r) => { t = setTimeout(r, timeout); })]);
    clearTimeout(t);
  };
  return p;
}

// until_told.py in `dir`: started with `python` (null: the native build of until_told.c in
// `dir`), tagged `tag`; `finish()` creates its stop file and resolves with its exit code once
// it has ended.
export async function startLoop(python, dir, tag) {
  const until = path.join(dir, `stop-${tag}`);
  fs.rmSync(until, { force: true });
  const program = python ? [python, 'until_told.py'] : [path.join(dir, 'until_told')];
  const p = startProgram([...program, '--until', path.basename(until), '--tag', tag], { cwd: dir });
  await p.waitFor(new RegExp(`^${tag}: ready$`, 'm'));
  p.finish = async (timeout = 30_000) => {
    fs.writeFileSync(until, '');
    let t;
    const code = await Promise.race([p.exited, new Promise((r) => { t = setTimeout(() => r('timeout'), timeout); })]);
    clearTimeout(t);
    if (code === 'timeout') throw new Error(`until_told ${tag} did not end within ${timeout} ms of its stop file:\n${p.stdout}${p.stderr}`);
    return code;
  };
  return p;
}

// `strata-dap --listen 127.0.0.1:0 --token-file FILE` (a missing file gets a new token); resolves
// with the port it printed.
export async function startListener(adapter, tokenFile, env = process.env) {
  const p = startProgram([adapter, '--listen', '127.0.0.1:0', '--token-file', tokenFile], { env });
  const out = await p.waitFor(/^listening on 127\.0\.0\.1:(\d+)$/m);
  p.port = Number(out.match(/^listening on 127\.0\.0\.1:(\d+)$/m)[1]);
  return p;
}
