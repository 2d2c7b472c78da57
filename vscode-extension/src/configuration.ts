// What F5 launches: a configuration filled in from the active editor when there is none (a
// Python file, a built program, a GPU trace, a C/C++/CUDA source whose program is built), and
// the checks a configuration gets before it reaches strata-dap. No VS Code API here: the
// extension hands in the editor's file and shows what comes back.
import fs from 'node:fs';
import path from 'node:path';

export type Config = { type?: string; request?: string; name?: string; [key: string]: unknown };
export type EditorFile = { path: string; languageId?: string };
export type Resolution = { config: Config } | { error: string } | { pickProgram: string; config: Config };

export const PYTHON_LANGUAGES = ['python'];
export const NATIVE_LANGUAGES = ['c', 'cpp', 'cuda-cpp'];
const TRACE_SUFFIXES = ['.json.gz', '.sqlite', '.strata', '.nsys-rep.sqlite'];

export function isElf(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const magic = Buffer.alloc(4);
    return fs.readSync(fd, magic, 0, 4, 0) === 4 && magic.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

// A GPU trace `launch {"trace"}` opens: Kineto JSON (torch.profiler's *.pt.trace.json[.gz]),
// Nsight Systems' SQLite export, a Strata store.
export function isTraceFile(file: string): boolean {
  const name = path.basename(file).toLowerCase();
  if (TRACE_SUFFIXES.some((s) => name.endsWith(s))) return true;
  return name.endsWith('.json') && name.includes('trace');
}

// The program a C/C++/CUDA source most likely builds: an ELF executable named like the source
// beside it or in the usual build folders.
export function findProgramFor(source: string, workspaceFolder?: string): string | undefined {
  const base = path.basename(source, path.extname(source));
  const dirs = [path.dirname(source), path.join(path.dirname(source), 'build')];
  if (workspaceFolder) {
    dirs.push(workspaceFolder, path.join(workspaceFolder, 'build'), path.join(workspaceFolder, 'out'));
    // CMake presets put each build one level down (build/release, build/debug).
    try {
      for (const d of fs.readdirSync(path.join(workspaceFolder, 'build'), { withFileTypes: true }))
        if (d.isDirectory()) dirs.push(path.join(workspaceFolder, 'build', d.name));
    } catch { /* no build folder */ }
  }
  for (const dir of dirs) {
    const candidate = path.join(dir, base);
    if (candidate !== source && isElf(candidate)) return candidate;
  }
  return undefined;
}

function nameOf(file: string): string {
  return path.basename(file);
}

// F5 with no launch.json (or an empty configuration): a launch made from the active editor.
export function configurationForFile(file: EditorFile | undefined, workspaceFolder?: string): Resolution {
  if (!file)
    return { error: 'Strata: open a Python file, a built program or a GPU trace to debug it with F5, or add a ' +
                    'launch configuration (Run > Add Configuration... > Strata).' };
  const lang = file.languageId ?? '';
  const cwd = workspaceFolder ?? path.dirname(file.path);
  if (PYTHON_LANGUAGES.includes(lang) || /\.pyw?$/.test(file.path))
    return { config: { type: 'strata', request: 'launch', name: `Strata: ${nameOf(file.path)}`, program: file.path, cwd } };
  if (isTraceFile(file.path))
    return { config: { type: 'strata', request: 'launch', name: `Strata: GPU trace ${nameOf(file.path)}`, trace: file.path } };
  if (isElf(file.path))
    return { config: { type: 'strata', request: 'launch', name: `Strata: ${nameOf(file.path)}`, program: file.path, cwd } };
  if (NATIVE_LANGUAGES.includes(lang) || /\.(c|cc|cpp|cxx|cu|h|hpp)$/.test(file.path)) {
    const program = findProgramFor(file.path, workspaceFolder);
    const config: Config = { type: 'strata', request: 'launch', name: `Strata: ${nameOf(program ?? file.path)}`, cwd };
    if (program) return { config: { ...config, program } };
    // Not built where we look: the user names the program once.
    return { pickProgram: file.path, config };
  }
  return { error: `Strata cannot debug ${nameOf(file.path)} as it is: F5 debugs a Python file, a built program ` +
                  '(an ELF executable), a C/C++/CUDA source whose program is built beside it or in build/, or a GPU ' +
                  'trace; for anything else add a launch configuration.' };
}

// resolveDebugConfiguration: fill in what is missing, refuse what cannot work, before any
// variable is substituted.
export function completeConfiguration(config: Config, file: EditorFile | undefined, workspaceFolder?: string): Resolution {
  if (!config.type && !config.request && !config.name) return configurationForFile(file, workspaceFolder);
  const c: Config = { ...config, type: config.type ?? 'strata', request: config.request ?? 'launch' };
  if (c.request === 'launch') {
    if (c.program === undefined && c.module === undefined && c.trace === undefined)
      return { error: `Strata: the launch configuration "${c.name ?? ''}" names no "program", "module" or "trace".` };
    if (c.trace !== undefined && (c.program !== undefined || c.module !== undefined))
      return { error: `Strata: the launch configuration "${c.name ?? ''}" gives "trace" and a program: a trace opens with no program.` };
  } else if (c.request === 'attach') {
    const modes = ['processId', 'processIds', 'processTree', 'connect', 'listen'].filter((k) => c[k] !== undefined);
    const ranks = c.processIds !== undefined || c.processTree !== undefined || c.nodes !== undefined;
    if (modes.length > 1)
      return { error: `Strata: the attach configuration "${c.name ?? ''}" gives ${modes.join(' and ')}: give one ` +
                      '(processId: a running process; processIds or processTree: the ranks of a job; connect: a ' +
                      'program started with python -m strata --listen; listen: a program that dials in).' };
    // Neither a pid nor a peer (and not the older host/port spelling): pick the process.
    if (modes.length === 0 && !ranks && c.host === undefined && c.port === undefined) c.processId = '${command:strata.pickProcess}';
  } else {
    return { error: `Strata: "request" is "${String(c.request)}"; it is "launch" or "attach".` };
  }
  return { config: c };
}

// The configurations a new launch.json starts with (package.json has the same as snippets).
export function initialConfigurations(): Config[] {
  return [
    { type: 'strata', request: 'launch', name: 'Strata: Python file', program: '${file}', cwd: '${workspaceFolder}' },
    { type: 'strata', request: 'launch', name: 'Strata: native program', program: '${workspaceFolder}/build/a.out',
      args: [], cwd: '${workspaceFolder}' },
    { type: 'strata', request: 'attach', name: 'Strata: attach to a process', processId: '${command:strata.pickProcess}' },
  ];
}
