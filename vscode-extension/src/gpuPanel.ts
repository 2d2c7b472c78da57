// The GPU timeline panel's host side (VSC_PROTOCOL: the webview in webview/ asks, the host
// forwards to a strata debug session's custom requests or to a strata-dap of its own on a trace
// file), and when a panel shows itself beside the editor: a session with GPU data.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { fillTemplate, FORWARDED, missingWebviewFiles, WEBVIEW_PAGE } from './webviewFiles';

// Where the panel's requests go: a debug session, or a TraceSession (dap.ts).
export interface GpuBackend {
  customRequest(command: string, args: unknown): PromiseLike<unknown>;
}

function themeName(kind: vscode.ColorThemeKind): 'light' | 'dark' | 'high-contrast' {
  switch (kind) {
    case vscode.ColorThemeKind.Light: return 'light';
    case vscode.ColorThemeKind.Dark: return 'dark';
    default: return 'high-contrast';
  }
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

type WebviewMessage =
  | { type: 'ready' }
  | { type: 'request'; id: number; command: string; args?: unknown }
  | { type: 'openSource'; path: string; line?: number }
  | { type: 'revealFile'; path: string };

export class GpuPanel {
  static readonly viewType = 'strata.gpuTimeline';
  private readonly panel: vscode.WebviewPanel;
  private readonly disposables: vscode.Disposable[] = [];
  private ended: string | undefined;

  constructor(private readonly extensionUri: vscode.Uri, private readonly title: string,
              private readonly backend: GpuBackend, onDispose: () => void, preserveFocus = true) {
    const root = vscode.Uri.joinPath(extensionUri, 'webview');
    this.panel = vscode.window.createWebviewPanel(GpuPanel.viewType, `GPU: ${title}`,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [root] });
    this.panel.webview.html = this.html();
    this.panel.webview.onDidReceiveMessage((m: WebviewMessage) => this.onMessage(m), undefined, this.disposables);
    this.panel.onDidDispose(() => {
      this.disposables.forEach((d) => d.dispose());
      onDispose();
    }, undefined, this.disposables);
  }

  reveal(): void {
    this.panel.reveal(vscode.ViewColumn.Beside, true);
  }

  refresh(): void {
    void this.panel.webview.postMessage({ type: 'refresh' });
  }

  // The session is over: later requests answer why instead of reaching a closed adapter.
  sessionEnded(why: string): void {
    this.ended = why;
  }

  dispose(): void {
    this.panel.dispose();
  }

  private html(): string {
    const extensionPath = this.extensionUri.fsPath;
    const missing = missingWebviewFiles(extensionPath);
    if (missing.length) {
      const text = `The GPU timeline's files are missing from this extension (${missing.map((f) => `webview/${f}`).join(', ')} ` +
                   `in ${extensionPath}). Package the extension from a tree that has vscode-extension/webview/ ` +
                   '(scripts/package-vscode.sh); the Debug Console\'s !gpu commands work meanwhile.';
      void vscode.window.showErrorMessage(`Strata: ${text}`);
      return `<!DOCTYPE html><html><body><p>${escapeHtml(text)}</p></body></html>`;
    }
    const webview = this.panel.webview;
    const template = fs.readFileSync(path.join(extensionPath, 'webview', WEBVIEW_PAGE), 'utf8');
    return fillTemplate(template, {
      cspSource: webview.cspSource,
      nonce: crypto.randomBytes(16).toString('base64'),
      root: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'webview')).toString(),
    });
  }

  private post(message: unknown): void {
    void this.panel.webview.postMessage(message);
  }

  private async onMessage(m: WebviewMessage): Promise<void> {
    switch (m.type) {
      case 'ready':
        return this.post({ type: 'init', title: this.title, theme: themeName(vscode.window.activeColorTheme.kind) });
      case 'request': {
        const answer = (r: object) => this.post({ type: 'response', id: m.id, ...r });
        if (!FORWARDED.has(m.command)) return answer({ success: false, message: `'${m.command}' is not a GPU request` });
        if (this.ended) return answer({ success: false, message: this.ended });
        try {
          const body = await this.backend.customRequest(m.command, m.args ?? {});
          return answer({ success: true, body: body ?? {} });
        } catch (e) {
          return answer({ success: false, message: (e as Error).message });
        }
      }
      case 'openSource': {
        if (typeof m.path !== 'string' || !path.isAbsolute(m.path)) return;
        const line = Math.max(0, (Number(m.line) || 1) - 1);
        const position = new vscode.Position(line, 0);
        try {
          await vscode.window.showTextDocument(vscode.Uri.file(m.path), {
            viewColumn: vscode.ViewColumn.One, selection: new vscode.Range(position, position), preview: true,
          });
        } catch (e) {
          void vscode.window.showWarningMessage(`Strata: cannot open ${m.path}: ${(e as Error).message}`);
        }
        return;
      }
      case 'revealFile': {
        if (typeof m.path !== 'string') return;
        const choice = await vscode.window.showInformationMessage(`Strata: saved ${m.path}`, 'Reveal in File Manager');
        if (choice) await vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(m.path));
        return;
      }
    }
  }
}

type SessionPanel = { panel?: GpuPanel; dismissed: boolean; lastRefresh: number; checking: boolean };

// Panels of debug sessions: shown beside the editor when a session has GPU data (a
// gpuActivity event with records, or a stop in a session launched with "gpu" that has some),
// refreshed on stops and, at most once a second, on new activity.
export class GpuSessions implements vscode.Disposable {
  private readonly sessions = new Map<string, SessionPanel>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly extensionUri: vscode.Uri) {
    this.disposables.push(
      vscode.debug.onDidReceiveDebugSessionCustomEvent((e) => {
        if (e.session.type === 'strata' && e.event === 'gpuActivity') this.onActivity(e.session, e.body);
      }),
      vscode.debug.registerDebugAdapterTrackerFactory('strata', {
        createDebugAdapterTracker: (session) => ({
          onDidSendMessage: (m: { type?: string; event?: string }) => {
            if (m.type === 'event' && m.event === 'stopped') this.onStop(session);
          },
        }),
      }),
      vscode.debug.onDidTerminateDebugSession((session) => {
        const s = this.sessions.get(session.id);
        s?.panel?.sessionEnded(`the debug session "${session.name}" has ended; open its GPU store with ` +
                               '"Strata: Open GPU Trace" to look at it again');
        this.sessions.delete(session.id);
      }),
    );
  }

  private state(session: vscode.DebugSession): SessionPanel {
    let s = this.sessions.get(session.id);
    if (!s) this.sessions.set(session.id, (s = { dismissed: false, lastRefresh: 0, checking: false }));
    return s;
  }

  // The command: show (again) the panel of the active session.
  show(session: vscode.DebugSession, preserveFocus = true): void {
    const s = this.state(session);
    s.dismissed = false;
    if (s.panel) return s.panel.reveal();
    s.panel = new GpuPanel(this.extensionUri, session.name, session, () => {
      s.panel = undefined;
      s.dismissed = true;  // closed by the user: not brought back until asked
    }, preserveFocus);
  }

  private onActivity(session: vscode.DebugSession, body: { counts?: { records?: number } }): void {
    const s = this.state(session);
    if (s.panel) {
      const now = Date.now();
      if (now - s.lastRefresh >= 1000) {
        s.lastRefresh = now;
        s.panel.refresh();
      }
    } else if (!s.dismissed && (body?.counts?.records ?? 0) > 0) {
      this.show(session);
    }
  }

  private onStop(session: vscode.DebugSession): void {
    const s = this.state(session);
    if (s.panel) return s.panel.refresh();
    if (s.dismissed || s.checking || !session.configuration.gpu) return;
    s.checking = true;
    // The stop drained what the program launched so far: a panel only if there is something.
    Promise.resolve(session.customRequest('gpuSummary', { limit: 1 })).then(
      (body: { records?: number }) => {
        s.checking = false;
        if ((body?.records ?? 0) > 0 && !s.panel && !s.dismissed) this.show(session);
      },
      () => { s.checking = false; });
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
    for (const s of this.sessions.values()) s.panel?.dispose();
  }
}
