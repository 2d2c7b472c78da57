// Which strata-dap the extension starts (the strata.adapterPath setting, the one the vsix
// carries, or one on PATH), the environment that makes it use the agent and collector it came
// with, and the check that it runs at all, worded so that the user knows what to do.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// scripts/package-vscode.sh lays out dist/<platform>/ like an installed prefix:
// bin/strata-dap, lib/strata/python/strata/ (the agent), lib/strata/libstrata_cupti.so, lib/*.so.
export function bundledLayout(extensionPath: string, platform = `${process.platform}-${process.arch}`) {
  const root = path.join(extensionPath, 'dist', platform);
  return {
    root,
    adapter: path.join(root, 'bin', 'strata-dap'),
    agent: path.join(root, 'lib', 'strata', 'python'),
    collector: path.join(root, 'lib', 'strata', 'libstrata_cupti.so'),
  };
}

export type AdapterChoice =
  | { path: string; source: 'setting' | 'bundled' | 'PATH'; env: Record<string, string> }
  | { error: string };

function executable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

export function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? path.join(os.homedir(), p.slice(1)) : p;
}

export function locateAdapter(opts: { setting?: string; extensionPath: string; envPath?: string;
                                      workspaceFolder?: string }): AdapterChoice {
  const setting = (opts.setting ?? '').trim();
  if (setting) {
    let p = expandHome(setting.replace(/\$\{workspaceFolder\}/g, opts.workspaceFolder ?? ''));
    if (!path.isAbsolute(p) && opts.workspaceFolder) p = path.join(opts.workspaceFolder, p);
    if (!fs.existsSync(p))
      return { error: `strata.adapterPath names ${p}, which does not exist. Point it at a built strata-dap ` +
                      '(build/release/adapter/strata-dap after `cmake --build --preset release`) or clear it to use ' +
                      'the one this extension carries.' };
    if (!executable(p)) return { error: `strata.adapterPath names ${p}, which is not an executable file (chmod +x?).` };
    return { path: p, source: 'setting', env: {} };
  }
  const bundled = bundledLayout(opts.extensionPath);
  if (executable(bundled.adapter)) {
    // The agent beside the bundled adapter, ahead of any build tree compiled into it.
    const env: Record<string, string> = {};
    if (fs.existsSync(path.join(bundled.agent, 'strata', '__main__.py'))) env.STRATA_AGENT_PYTHONPATH = bundled.agent;
    if (fs.existsSync(bundled.collector)) env.STRATA_GPU_COLLECTOR = bundled.collector;
    return { path: bundled.adapter, source: 'bundled', env };
  }
  for (const dir of (opts.envPath ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, 'strata-dap');
    if (executable(p)) return { path: p, source: 'PATH', env: {} };
  }
  return { error: `no strata-dap found: this extension carries none for ${process.platform}-${process.arch} ` +
                  `(looked for ${bundled.adapter}) and none is on PATH. Set strata.adapterPath to a strata-dap ` +
                  '(build it with `cmake --preset release && cmake --build --preset release`), or install the ' +
                  'linux-x64 vsix (scripts/package-vscode.sh).' };
}

// `strata-dap --version`: a binary that cannot start here (a missing shared library, an older
// C library) fails now with its own words, not as a debug session that never answers.
export function checkAdapter(adapter: string, env: Record<string, string> = {}, timeoutMs = 10000):
    Promise<{ version: string } | { error: string }> {
  return new Promise((resolve) => {
    execFile(adapter, ['--version'], { timeout: timeoutMs, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      if (!err) return resolve({ version: stdout.trim() });
      const why = (stderr || err.message).trim().split('\n').slice(0, 3).join(' ');
      resolve({ error: `the Strata debug adapter ${adapter} does not run: ${why}. Check it in a terminal with ` +
                       `\`${adapter} --version\`; set strata.adapterPath to a strata-dap that runs on this machine.` });
    });
  });
}
