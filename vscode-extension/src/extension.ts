// The Strata extension's entry point: the `strata` debug type (its adapter, configurations and
// tokens), the process picker, the GPU trace command and the GPU panels of debug sessions.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import * as vscode from 'vscode';
import { checkAdapter, locateAdapter } from './adapter';
import { completeConfiguration, initialConfigurations } from './configuration';
import { DapMessage, FrameReader, frame, TraceSession, tokenLine } from './dap';
import { GpuPanel, GpuSessions } from './gpuPanel';
import { listProcesses, pickItem } from './processes';
import { adapterServerToken, forgetTokens, SecretStore, TokenDeps, TokenError, withAgentToken } from './tokens';

const KEYS_STATE = 'strata.tokenKeys';
const checked = new Map<string, string>();  // adapter path + mtime -> version

function workspaceFolderPath(folder?: vscode.WorkspaceFolder): string | undefined {
  return (folder ?? vscode.workspace.workspaceFolders?.[0])?.uri.fsPath;
}

function tokenDeps(context: vscode.ExtensionContext, folder?: vscode.WorkspaceFolder): TokenDeps {
  // SecretStorage cannot list its keys: the ones we stored are remembered for "Forget Tokens".
  const secrets: SecretStore = {
    get: (k) => context.secrets.get(k),
    delete: (k) => context.secrets.delete(k),
    store: async (k, v) => {
      await context.secrets.store(k, v);
      const keys = new Set(context.globalState.get<string[]>(KEYS_STATE, []));
      keys.add(k);
      await context.globalState.update(KEYS_STATE, [...keys]);
    },
  };
  return {
    secrets,
    ask: (question) => vscode.window.showInputBox({ prompt: question, password: true, ignoreFocusOut: true,
                                                     placeHolder: 'token (kept in VS Code\'s secret storage)' }),
    baseDir: workspaceFolderPath(folder),
  };
}

// Resolves and checks the adapter, with a message that says what to do when it cannot.
async function adapterFor(context: vscode.ExtensionContext, folder?: vscode.WorkspaceFolder) {
  const setting = vscode.workspace.getConfiguration('strata', folder).get<string>('adapterPath');
  const choice = locateAdapter({ setting, extensionPath: context.extensionPath, envPath: process.env.PATH,
                                 workspaceFolder: workspaceFolderPath(folder) });
  if ('error' in choice) throw new Error(`Strata: ${choice.error}`);
  const key = `${choice.path}:${fs.statSync(choice.path).mtimeMs}`;
  if (!checked.has(key)) {
    const check = await checkAdapter(choice.path, choice.env);
    if ('error' in check) throw new Error(`Strata: ${check.error}`);
    checked.set(key, check.version);
  }
  return choice;
}

// A strata-dap --listen that wants its token line before the first DAP message.
class TokenSocketAdapter implements vscode.DebugAdapter {
  private readonly emitter = new vscode.EventEmitter<vscode.DebugProtocolMessage>();
  readonly onDidSendMessage = this.emitter.event;
  private readonly socket: net.Socket;
  private answered = false;
  private failed = false;

  constructor(host: string, port: number, token: string) {
    this.socket = net.connect({ host, port });
    this.socket.write(tokenLine(token));
    const reader = new FrameReader((m: DapMessage) => this.emitter.fire(m), (e) => this.fail(e.message));
    this.socket.on('data', (d: Buffer) => {
      this.answered = true;
      reader.push(d);
    });
    this.socket.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNRESET' && !this.answered) return;  // a refused token: said at 'close'
      this.fail(`strata-dap at ${host}:${port}: ${e.message}`);
    });
    this.socket.on('close', () => {
      // A listener closes, without a word, a connection whose token line it does not accept.
      if (!this.answered && !this.failed)
        void vscode.window.showErrorMessage(`Strata: strata-dap at ${host}:${port} closed the connection before answering: ` +
                                            'it did not accept the token sent (check adapterServer.tokenFile, or "Strata: Forget ' +
                                            'Stored Tokens" for a stored one).');
      this.emitter.fire({ seq: 0, type: 'event', event: 'terminated' } as vscode.DebugProtocolMessage);
    });
  }

  private fail(text: string): void {
    this.failed = true;
    this.emitter.fire({ seq: 0, type: 'event', event: 'output', body: { category: 'important', output: `${text}\n` } } as vscode.DebugProtocolMessage);
    this.socket.destroy();
  }

  handleMessage(message: vscode.DebugProtocolMessage): void {
    this.socket.write(frame(message as object));
  }

  dispose(): void {
    this.socket.destroy();
  }
}

async function pickProcess(): Promise<string | undefined> {
  const mine = process.getuid?.();
  const items = listProcesses().map((p) => ({ ...pickItem(p), other: mine !== undefined && p.uid !== mine && mine !== 0 }));
  const picked = await vscode.window.showQuickPick(
    items.map((i) => ({ ...i, description: i.other ? `${i.description} · another user's` : i.description })),
    { title: 'Strata: attach to a process', placeHolder: 'a Python script, a program, a pid or a rank',
      matchOnDescription: true, matchOnDetail: true });
  return picked?.pid;
}

async function openTrace(context: vscode.ExtensionContext, file?: vscode.Uri): Promise<void> {
  if (!file) {
    const picked = await vscode.window.showOpenDialog({
      title: 'Strata: open a GPU trace', canSelectMany: false,
      filters: { 'GPU traces (torch.profiler, Nsight Systems SQLite, Strata store)': ['json', 'gz', 'sqlite', 'strata'],
                 'All files': ['*'] },
    });
    file = picked?.[0];
  }
  if (!file) return;
  const trace = file.fsPath;
  try {
    const adapter = await adapterFor(context, vscode.workspace.getWorkspaceFolder(file));
    const session = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Opening ${path.basename(trace)}` },
      async (progress) => {
        // The adapter's own progress events (the import) show in the notification.
        let done = 0;
        return TraceSession.open(adapter.path, { ...process.env, ...adapter.env }, trace, (name, body) => {
          if (name !== 'progressUpdate' && name !== 'progressStart') return;
          const percentage = typeof body?.percentage === 'number' ? body.percentage : done;
          progress.report({ message: body?.message, increment: Math.max(0, percentage - done) });
          done = Math.max(done, percentage);
        });
      });
    const panel = new GpuPanel(context.extensionUri, path.basename(trace), session, () => session.dispose(), false);
    context.subscriptions.push({ dispose: () => panel.dispose() });
  } catch (e) {
    void vscode.window.showErrorMessage((e as Error).message.startsWith('Strata:') ? (e as Error).message
                                                                                      : `Strata: ${(e as Error).message}`);
  }
}

export function activate(context: vscode.ExtensionContext): void {
  const sessions = new GpuSessions(context.extensionUri);
  context.subscriptions.push(sessions);

  context.subscriptions.push(vscode.debug.registerDebugConfigurationProvider('strata', {
    provideDebugConfigurations: () => initialConfigurations() as vscode.DebugConfiguration[],
    resolveDebugConfiguration: async (folder, config): Promise<vscode.DebugConfiguration | undefined> => {
      const editor = vscode.window.activeTextEditor?.document;
      const file = editor && editor.uri.scheme === 'file' ? { path: editor.uri.fsPath, languageId: editor.languageId } : undefined;
      const r = completeConfiguration(config, file, workspaceFolderPath(folder));
      if ('error' in r) {
        void vscode.window.showErrorMessage(r.error);
        return undefined;
      }
      if ('pickProgram' in r) {
        const picked = await vscode.window.showOpenDialog({
          title: `Strata: the program built from ${path.basename(r.pickProgram)}`, canSelectMany: false,
          defaultUri: folder?.uri });
        if (!picked?.[0]) return undefined;
        return { ...r.config, program: picked[0].fsPath, name: `Strata: ${path.basename(picked[0].fsPath)}` } as vscode.DebugConfiguration;
      }
      return r.config as vscode.DebugConfiguration;
    },
    resolveDebugConfigurationWithSubstitutedVariables: async (folder, config) => {
      // The process picker was dismissed: no session.
      if (config.request === 'attach' && (config.processId === undefined || config.processId === '')
          && config.processIds === undefined && config.processTree === undefined && config.nodes === undefined
          && !config.connect && !config.listen && config.host === undefined && config.port === undefined) return undefined;
      try {
        return (await withAgentToken(config, tokenDeps(context, folder))) as vscode.DebugConfiguration | undefined;
      } catch (e) {
        if (!(e instanceof TokenError)) throw e;
        void vscode.window.showErrorMessage(`Strata: ${e.message}`);
        return undefined;
      }
    },
  }));
  // The dynamic entries of the Run and Debug view's dropdown.
  context.subscriptions.push(vscode.debug.registerDebugConfigurationProvider('strata', {
    provideDebugConfigurations: () => initialConfigurations() as vscode.DebugConfiguration[],
  }, vscode.DebugConfigurationProviderTriggerKind.Dynamic));

  context.subscriptions.push(vscode.debug.registerDebugAdapterDescriptorFactory('strata', {
    createDebugAdapterDescriptor: async (session) => {
      const server = session.configuration.adapterServer as { host?: string; port?: number; tokenFile?: string } | undefined;
      if (server) {
        const where = await adapterServerToken(server, tokenDeps(context, session.workspaceFolder));
        if (!where) throw new Error('Strata: no token given for the remote strata-dap; the session does not start.');
        if (!where.token) return new vscode.DebugAdapterServer(where.port, where.host);
        return new vscode.DebugAdapterInlineImplementation(new TokenSocketAdapter(where.host, where.port, where.token));
      }
      const adapter = await adapterFor(context, session.workspaceFolder);
      const args = ['--stdio'];
      const log = vscode.workspace.getConfiguration('strata', session.workspaceFolder).get<string>('logFile');
      if (log) args.push('--log', log);
      return new vscode.DebugAdapterExecutable(adapter.path, args, { env: adapter.env });
    },
  }));

  context.subscriptions.push(
    vscode.commands.registerCommand('strata.pickProcess', pickProcess),
    vscode.commands.registerCommand('strata.openGpuTrace', (uri?: vscode.Uri) => openTrace(context, uri)),
    vscode.commands.registerCommand('strata.showGpuTimeline', () => {
      const s = vscode.debug.activeDebugSession;
      if (!s || s.type !== 'strata')
        return void vscode.window.showInformationMessage('Strata: no Strata debug session is active (for a trace file: Strata: Open GPU Trace).');
      sessions.show(s, false);
    }),
    vscode.commands.registerCommand('strata.forgetTokens', async () => {
      const n = await forgetTokens(context.secrets, context.globalState.get<string[]>(KEYS_STATE, []));
      await context.globalState.update(KEYS_STATE, []);
      void vscode.window.showInformationMessage(`Strata: forgot ${n} stored token${n === 1 ? '' : 's'}.`);
    }),
    vscode.commands.registerCommand('strata.checkAdapter', async () => {
      try {
        const a = await adapterFor(context);
        const v = await checkAdapter(a.path, a.env);
        void vscode.window.showInformationMessage(`Strata: ${a.path} (${a.source}): ${'version' in v ? v.version : v.error}`);
      } catch (e) {
        void vscode.window.showErrorMessage((e as Error).message);
      }
    }),
  );
}

export function deactivate(): void {}
