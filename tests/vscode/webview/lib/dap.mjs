// A small DAP client for the webview tests and bench: the real strata-dap over stdio, a trace
// opened with `launch {"trace": PATH}`, and the custom requests forwarded as they come.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
export const ADAPTER = process.env.STRATA_DAP ?? path.join(REPO, 'build/asan/adapter/strata-dap');
export const TARGETS = process.env.STRATA_TARGETS ?? path.join(REPO, 'build/asan/tests/targets');

export class Adapter {
  constructor(executable = ADAPTER) {
    this.proc = spawn(executable, ['--stdio'], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.seq = 1;
    this.waiting = new Map();
    this.events = [];
    this.buffer = Buffer.alloc(0);
    this.exited = new Promise((resolve) => this.proc.on('exit', (code, signal) => resolve({ code, signal })));
    this.exited.then(({ code, signal }) => {
      for (const w of this.waiting.values()) w.reject(new Error(`strata-dap exited (${code ?? signal})`));
      this.waiting.clear();
    });
    this.proc.stdout.on('data', (d) => this.read(d));
  }

  read(data) {
    this.buffer = Buffer.concat([this.buffer, data]);
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const m = /Content-Length: (\d+)/i.exec(this.buffer.subarray(0, end).toString());
      if (!m) throw new Error(`a frame without Content-Length: ${this.buffer.subarray(0, end)}`);
      const length = Number(m[1]);
      if (this.buffer.length < end + 4 + length) return;
      const msg = JSON.parse(this.buffer.subarray(end + 4, end + 4 + length).toString('utf8'));
      this.buffer = this.buffer.subarray(end + 4 + length);
      if (msg.type === 'response') {
        const w = this.waiting.get(msg.request_seq);
        this.waiting.delete(msg.request_seq);
        if (w) w.resolve(msg);
      } else if (msg.type === 'event') {
        this.events.push(msg);
        for (const w of [...this.waiting.values()].filter((x) => x.event === msg.event)) w.resolve(msg);
      }
    }
  }

  // The whole response, success or not.
  raw(command, args) {
    const seq = this.seq++;
    const text = JSON.stringify({ seq, type: 'request', command, arguments: args });
    this.proc.stdin.write(`Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
    return new Promise((resolve, reject) => this.waiting.set(seq, { resolve, reject }));
  }

  async send(command, args) {
    const r = await this.raw(command, args);
    if (!r.success) throw new Error(`${command}: ${r.message}`);
    return r.body;
  }

  event(name) {
    const seen = this.events.find((e) => e.event === name);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => this.waiting.set(`event:${name}:${this.seq++}`, { event: name, resolve, reject }));
  }

  // initialize, launch {"trace"}, configurationDone: the adapter then answers the GPU requests.
  async openTrace(trace, launch = {}) {
    await this.send('initialize', { adapterID: 'strata', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
    const initialized = this.event('initialized');
    await this.send('launch', { trace, ...launch });
    await initialized;
    await this.send('configurationDone', {});
    return this;
  }

  async close() {
    await this.raw('disconnect', {}).catch(() => {});
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 30000);
    const r = await this.exited;
    clearTimeout(timer);
    return r;
  }
}

export const exists = (p) => { try { fs.accessSync(p, fs.constants.X_OK); return true; } catch { return false; } };
