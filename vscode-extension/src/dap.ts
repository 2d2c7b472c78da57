// DAP over a byte stream without VS Code: the Content-Length framing, a client that drives a
// strata-dap child process (the GPU trace panel's own session), and the token line a
// `strata-dap --listen` wants before the first message.
import { ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Readable, Writable } from 'node:stream';

export type DapMessage = { seq: number; type: string; [key: string]: unknown };

export function frame(message: object): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]);
}

// Splits a stream into messages; bytes of a message cut across reads wait for the rest.
export class FrameReader {
  private buffer = Buffer.alloc(0);

  constructor(private readonly onMessage: (m: DapMessage) => void, private readonly onError: (e: Error) => void) {}

  push(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const header = this.buffer.subarray(0, end).toString('ascii');
      const match = /Content-Length:\s*(\d+)/i.exec(header);
      if (!match) {
        this.buffer = Buffer.alloc(0);
        return this.onError(new Error(`a DAP header without Content-Length: ${JSON.stringify(header)}`));
      }
      const length = Number(match[1]);
      if (this.buffer.length < end + 4 + length) return;
      const body = this.buffer.subarray(end + 4, end + 4 + length).toString('utf8');
      this.buffer = this.buffer.subarray(end + 4 + length);
      try {
        this.onMessage(JSON.parse(body) as DapMessage);
      } catch (e) {
        this.onError(new Error(`a DAP message that is not JSON: ${(e as Error).message}`));
      }
    }
  }
}

// `STRATA-TOKEN <token>` comes first on a connection to `strata-dap --listen` off loopback.
export function tokenLine(token: string): Buffer {
  if (/[\s]/.test(token)) throw new Error('a Strata token has no spaces or line breaks');
  return Buffer.from(`STRATA-TOKEN ${token}\n`, 'ascii');
}

export class DapError extends Error {
  constructor(message: string, readonly command: string, readonly id?: number) {
    super(message);
  }
}

type Pending = { resolve: (body: unknown) => void; reject: (e: Error) => void; command: string };

// Requests with promised answers and events as 'event' emissions, over any pair of streams.
export class DapConnection extends EventEmitter {
  private seq = 1;
  private readonly pending = new Map<number, Pending>();
  private closed: Error | undefined;

  constructor(private readonly output: Writable, input: Readable) {
    super();
    const reader = new FrameReader((m) => this.dispatch(m), (e) => this.close(e));
    input.on('data', (chunk: Buffer) => reader.push(chunk));
    input.on('end', () => this.close(new Error('the adapter closed the connection')));
  }

  request<T = unknown>(command: string, args?: unknown): Promise<T> {
    if (this.closed) return Promise.reject(new DapError(this.closed.message, command));
    const seq = this.seq++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(seq, { resolve: resolve as (b: unknown) => void, reject, command });
      this.output.write(frame({ seq, type: 'request', command, arguments: args ?? {} }));
    });
  }

  close(reason: Error): void {
    if (this.closed) return;
    this.closed = reason;
    for (const [, p] of this.pending) p.reject(new DapError(reason.message, p.command));
    this.pending.clear();
    this.emit('close', reason);
  }

  private dispatch(m: DapMessage): void {
    if (m.type === 'response') {
      const p = this.pending.get(m.request_seq as number);
      if (!p) return;
      this.pending.delete(m.request_seq as number);
      if (m.success) return p.resolve(m.body ?? {});
      const error = (m.body as { error?: { id?: number; format?: string } } | undefined)?.error;
      p.reject(new DapError(error?.format ?? (m.message as string) ?? `${p.command} failed`, p.command, error?.id));
    } else if (m.type === 'event') {
      this.emit('event', m.event as string, m.body ?? {});
    } else if (m.type === 'request') {
      // A reverse request (runInTerminal) has no place in a session without a program.
      this.output.write(frame({ seq: this.seq++, type: 'response', request_seq: m.seq, command: m.command,
                                success: false, message: 'not supported by this client' }));
    }
  }
}

// A strata-dap of our own, on a trace file: initialize, launch {"trace"}, configurationDone.
export class TraceSession extends EventEmitter {
  private constructor(private readonly child: ChildProcess, readonly connection: DapConnection, private stderr: string[]) {
    super();
  }

  // onEvent sees the events of the opening too (progressStart/Update/End of the import).
  static async open(adapter: string, env: NodeJS.ProcessEnv, trace: string,
                    onEvent?: (name: string, body: any) => void): Promise<TraceSession> {
    const child = spawn(adapter, ['--stdio'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const stderr: string[] = [];
    child.stderr!.on('data', (d: Buffer) => stderr.push(d.toString()));
    const connection = new DapConnection(child.stdin!, child.stdout!);
    const session = new TraceSession(child, connection, stderr);
    const started = new Promise<never>((_, reject) => {
      child.on('error', (e) => reject(new Error(`cannot start ${adapter}: ${e.message}`)));
      child.on('exit', (code, signal) =>
        reject(new Error(`${adapter} ended (${signal ?? `exit code ${code}`}) while opening the trace` +
                         (stderr.length ? `: ${stderr.join('').trim()}` : ''))));
    });
    child.on('exit', () => connection.close(new Error('strata-dap ended')));
    connection.on('event', (name: string, body: unknown) => {
      onEvent?.(name, body);
      session.emit('event', name, body);
    });
    const initialized = new Promise<void>((resolve) =>
      connection.on('event', (name: string) => name === 'initialized' && resolve()));
    const handshake = (async () => {
      await connection.request('initialize', {
        clientID: 'strata-vscode-trace', adapterID: 'strata', linesStartAt1: true, columnsStartAt1: true,
        pathFormat: 'path', supportsProgressReporting: true,
      });
      await connection.request('launch', { trace });
      await initialized;
      await connection.request('configurationDone');
    })();
    // A failed launch is the adapter's answer: it names the file and where it breaks.
    handshake.catch(() => session.dispose());
    await Promise.race([handshake, started]);
    return session;
  }

  customRequest<T = unknown>(command: string, args: unknown): Promise<T> {
    return this.connection.request<T>(command, args);
  }

  dispose(): void {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.connection.request('disconnect', {}).catch(() => undefined);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 2000);
    this.child.once('exit', () => clearTimeout(timer));
    this.child.stdin?.end();
  }
}
