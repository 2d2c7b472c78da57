// The processes an attach by pid can pick, read from /proc: what each runs (for Python, the
// script or module and its arguments) and its rank in a distributed job, where its
// environment is readable.
import fs from 'node:fs';
import path from 'node:path';

export type ProcessInfo = {
  pid: number;
  argv: string[];
  python: boolean;
  // What it runs: `train.py --epochs 3`, `-m torch.distributed.run ...`, or the program and its arguments.
  runs: string;
  rank?: string;
  uid: number;
};

const RANK_VARIABLES = ['RANK', 'OMPI_COMM_WORLD_RANK', 'SLURM_PROCID', 'PMI_RANK'];
// Interpreter options that take a value (python -X dev -W error script.py).
const PYTHON_OPTIONS_WITH_VALUE = new Set(['-X', '-W', '--check-hash-based-pycs']);

export function isPythonExecutable(argv0: string, exe?: string): boolean {
  const names = [path.basename(argv0), exe ? path.basename(exe) : ''];
  return names.some((n) => /^python(\d+(\.\d+)?)?[dmt]*$/.test(n));
}

// After the interpreter's own options: the script and its arguments, `-m module ...` or `-c ...`.
export function pythonRuns(argv: string[]): string {
  let i = 1;
  while (i < argv.length) {
    const a = argv[i];
    if (a === '-m' || a === '-c') return argv.slice(i).join(' ');
    if (a === '--' ) { ++i; break; }
    if (!a.startsWith('-') || a === '-') break;
    if (PYTHON_OPTIONS_WITH_VALUE.has(a)) i += 2;
    else ++i;
  }
  return argv.slice(i).join(' ') || '(interactive)';
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'latin1');
  } catch {
    return undefined;  // gone, or another user's (environ)
  }
}

export function rankOf(environ: string | undefined): string | undefined {
  if (!environ) return undefined;
  const vars = new Map<string, string>();
  for (const entry of environ.split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) vars.set(entry.slice(0, eq), entry.slice(eq + 1));
  }
  for (const name of RANK_VARIABLES) {
    const v = vars.get(name);
    if (v !== undefined && /^\d+$/.test(v)) return v;
  }
  return undefined;
}

export function readProcess(pid: number, procRoot = '/proc'): ProcessInfo | undefined {
  const dir = path.join(procRoot, String(pid));
  const cmdline = readText(path.join(dir, 'cmdline'));
  // Kernel threads have no command line; a process that ended while we read is left out.
  if (!cmdline) return undefined;
  const argv = cmdline.replace(/\0$/, '').split('\0');
  let exe: string | undefined;
  let uid = -1;
  try {
    exe = fs.readlinkSync(path.join(dir, 'exe'));
  } catch { /* another user's */ }
  try {
    uid = fs.statSync(dir).uid;
  } catch {
    return undefined;
  }
  const python = isPythonExecutable(argv[0], exe);
  const runs = python ? pythonRuns(argv) : argv.join(' ');
  return { pid, argv, python, runs, rank: rankOf(readText(path.join(dir, 'environ'))), uid };
}

// Python programs first, then the rest; the newest first within each.
export function listProcesses(procRoot = '/proc', exclude: number[] = [process.pid]): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  for (const name of fs.readdirSync(procRoot)) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (exclude.includes(pid)) continue;
    const info = readProcess(pid, procRoot);
    if (info) out.push(info);
  }
  return out.sort((a, b) => (a.python === b.python ? b.pid - a.pid : a.python ? -1 : 1));
}

// One line of the picker: label, description, detail (VS Code's QuickPickItem fields).
export function pickItem(p: ProcessInfo): { label: string; description: string; detail: string; pid: string } {
  const program = p.python ? path.basename(p.argv[0]) : path.basename(p.argv[0] ?? '');
  const label = p.python ? `${program} ${p.runs}` : p.runs;
  const parts = [`pid ${p.pid}`];
  if (p.rank !== undefined) parts.push(`rank ${p.rank}`);
  if (p.python) parts.push('Python');
  return { label: label.length > 120 ? `${label.slice(0, 117)}...` : label, description: parts.join(' · '),
           detail: p.argv.join(' '), pid: String(p.pid) };
}
