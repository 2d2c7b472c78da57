// code-server for the VS Code end-to-end test: installed once through scripts/code-server.sh,
// started headless on a free port with a user-data and extensions folder of its own, the vsix
// installed into it, and headless Chromium (Debian's) driven by playwright-core.
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(here, '../../../..');
export const SCRIPT = path.join(REPO, 'scripts/code-server.sh');
export const CHROMIUM = process.env.STRATA_CHROMIUM ?? '/usr/bin/chromium';
// Where code-server keeps its state and the test its workspace; screenshots go to ARTIFACTS.
export const WORK = process.env.STRATA_VSCODE_E2E_DIR ?? path.join(REPO, 'build/vscode-e2e');
export const ARTIFACTS = path.join(REPO, 'build/vscode-artifacts/e2e');
// The build the vsix is packaged from; its strata-dap and test targets serve some cases.
export const BUILD = process.env.STRATA_BUILD_DIR ?? path.join(REPO, 'build/asan');

// Installs code-server if missing (minutes, once): null when it is there, else why not (exit 77
// of the script is "cannot be installed here"); any other failure throws, it is a defect.
export function ensureCodeServer() {
  const r = spawnSync(SCRIPT, ['install'], { encoding: 'utf8', stdio: ['ignore', 'inherit', 'pipe'] });
  if (r.status === 0) return null;
  if (r.status === 77) return r.stderr.trim().split('\n').pop();
  throw new Error(`scripts/code-server.sh install failed (exit ${r.status ?? r.signal}):\n${r.stderr}`);
}

// Why Chromium cannot run here, or null.
export function chromiumMissing() {
  if (!fs.existsSync(CHROMIUM)) return `${CHROMIUM} is missing (Debian's chromium; scripts/setup.sh installs it)`;
  try {
    fs.accessSync(path.join(REPO, 'tests/vscode/node_modules/playwright-core/package.json'));
  } catch {
    return 'tests/vscode/node_modules is missing (npm ci in tests/vscode; scripts/setup.sh does it)';
  }
  return null;
}

function codeServer(args, options = {}) {
  return spawn(SCRIPT, ['start', '--config', path.join(WORK, 'config.yaml'), ...args], options);
}

// `code-server --install-extension`: its output, or throws with it.
export function installExtension(vsix, { userData, extensions }) {
  const r = spawnSync(SCRIPT, ['start', '--config', path.join(WORK, 'config.yaml'), '--user-data-dir', userData,
    '--extensions-dir', extensions, '--install-extension', vsix, '--force'], { encoding: 'utf8' });
  const out = `${r.stdout}${r.stderr}`;
  if (r.status !== 0 || !/successfully installed/.test(out)) throw new Error(`--install-extension ${vsix} failed:\n${out}`);
  return out;
}

// code-server listening on a port the kernel picked; resolves once it says where.
export async function startCodeServer({ userData, extensions, log, env = process.env }) {
  fs.writeFileSync(path.join(WORK, 'config.yaml'), 'auth: none\ncert: false\n');
  const out = fs.openSync(log, 'w');
  const proc = codeServer(['--auth', 'none', '--bind-addr', '127.0.0.1:0', '--user-data-dir', userData,
    '--extensions-dir', extensions, '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
    '--disable-getting-started-override', '--log', 'info'], { stdio: ['ignore', out, out], detached: true, env });
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve(code ?? signal)));
  const deadline = Date.now() + 120_000;
  for (;;) {
    const text = fs.readFileSync(log, 'utf8');
    const m = text.match(/HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)\//);
    const version = text.match(/info\s+code-server (\S+)/)?.[1];
    if (m) return { url: m[1], version, proc, exited, stop: () => stop(proc, exited) };
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r(undefined), 200))]);
    if (code !== undefined) throw new Error(`code-server exited (${code}) before listening:\n${fs.readFileSync(log, 'utf8')}`);
    if (Date.now() > deadline) throw new Error(`code-server did not listen within 120 s:\n${fs.readFileSync(log, 'utf8')}`);
  }
}

// Its process group: code-server, its extension host, and the adapters that host started.
async function stop(proc, exited) {
  try { process.kill(-proc.pid, 'SIGTERM'); } catch { return; }
  const t = setTimeout(() => { try { process.kill(-proc.pid, 'SIGKILL'); } catch { /* gone */ } }, 10_000);
  await exited;
  clearTimeout(t);
}

// The vsix to test: STRATA_VSIX, else one packaged now from this build by the extension's own
// script (scripts/package-vscode.sh --build-dir), so it carries what was just built. Returns
// {vsix} or {skip: reason}; a packaging failure other than a missing prerequisite throws.
export function vsixToTest() {
  if (process.env.STRATA_VSIX) {
    return fs.existsSync(process.env.STRATA_VSIX) ? { vsix: process.env.STRATA_VSIX }
      : { skip: `STRATA_VSIX names ${process.env.STRATA_VSIX}, which does not exist` };
  }
  const pkg = path.join(REPO, 'scripts/package-vscode.sh');
  if (!fs.existsSync(pkg)) return { skip: 'no vsix: scripts/package-vscode.sh (the extension\'s packaging) is not in this tree' };
  if (!fs.existsSync(path.join(REPO, 'vscode-extension/node_modules/typescript'))) {
    return { skip: 'no vsix: vscode-extension/node_modules is missing (scripts/setup.sh runs npm ci there)' };
  }
  if (!fs.existsSync(path.join(BUILD, 'adapter/strata-dap'))) return { skip: `no vsix: ${BUILD} has no strata-dap (build it first)` };
  const vsix = path.join(WORK, 'strata-linux-x64.vsix');
  const r = spawnSync(pkg, ['--build-dir', BUILD, '--stage', path.join(WORK, 'stage'), '--out', vsix],
    { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`scripts/package-vscode.sh failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
  return { vsix };
}

// The extension host's log line for an extension's activation (what triggered it), or undefined.
export function activationLog(userData, id) {
  const logs = path.join(userData, 'logs');
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const line = e.isDirectory() ? walk(p)
        : e.name.endsWith('.log') && fs.readFileSync(p, 'utf8').split('\n').find((l) => l.includes(`_doActivateExtension ${id},`));
      if (line) return line.replace(/^.*ExtensionService#_doActivateExtension /, '');
    }
    return undefined;
  };
  return fs.existsSync(logs) ? walk(logs) : undefined;
}
