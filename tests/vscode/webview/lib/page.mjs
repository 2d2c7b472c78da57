// The GPU timeline webview in headless Chromium (Debian's, through playwright-core): its
// template filled and served from a local HTTP server under its own content security policy,
// and a host in place of the extension's (acquireVsCodeApi) that records what the page posts
// and forwards each request to a real strata-dap (lib/dap.mjs).
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { REPO } from './dap.mjs';

export const WEBVIEW = path.join(REPO, 'vscode-extension/webview');
export const CHROMIUM = process.env.STRATA_CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = process.env.STRATA_VSCODE_ARTIFACTS ?? path.join(REPO, 'build/vscode-artifacts');

// Why the browser tests cannot run here, or null.
export async function missing() {
  if (!fs.existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM} (apt-get install chromium, or set STRATA_CHROMIUM)`;
  try {
    await import('playwright-core');
  } catch {
    return 'tests/vscode/node_modules has no playwright-core (run npm ci in tests/vscode, or scripts/setup.sh)';
  }
  return null;
}

// Serves timeline.html with its placeholders filled as the extension host fills them, and the
// files beside it; every page load gets a new nonce.
export async function serve() {
  const server = http.createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url, 'http://x').pathname).replace(/^\/+/, '') || 'timeline.html';
    // The browser's own ask (a webview has none): nothing, and no error in the console.
    if (name === 'favicon.ico') { res.writeHead(204).end(); return; }
    const file = path.join(WEBVIEW, name);
    if (!file.startsWith(WEBVIEW + path.sep) || !fs.existsSync(file)) { res.writeHead(404).end(); return; }
    const origin = `http://127.0.0.1:${server.address().port}`;
    let body = fs.readFileSync(file);
    if (name === 'timeline.html') {
      const fill = { cspSource: origin, nonce: crypto.randomBytes(16).toString('base64'), root: origin };
      body = body.toString('utf8').replace(/\{\{(\w+)\}\}/g, (m, k) => fill[k] ?? m);
    }
    const type = { html: 'text/html', js: 'text/javascript', css: 'text/css' }[name.split('.').pop()] ?? 'application/octet-stream';
    res.writeHead(200, { 'Content-Type': `${type}; charset=utf-8` }).end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/timeline.html`, close: () => new Promise((r) => server.close(r)) };
}

export async function launchBrowser() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
}

// A page of the webview whose host answers from `adapter`. `posted` holds every message the
// page sent, in order; `hold(command)` keeps that command's replies until `release()`.
export async function openWebview(browser, url, adapter, { viewport = { width: 1200, height: 900 }, dpr = 1, title = 'trace',
  bodyClass = 'vscode-dark', theme = 'dark' } = {}) {
  const context = await browser.newContext({ viewport, deviceScaleFactor: dpr });
  const page = await context.newPage();
  const host = { page, posted: [], replies: new Map(), adapterMs: new Map(), errors: [], held: null, heldReplies: [], waiters: [] };
  page.on('pageerror', (e) => host.errors.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') host.errors.push(`console: ${m.text()}`); });
  // As one string, parsed in the page: playwright's own argument encoding of a 5,000-item
  // answer would cost more than everything else on the way.
  const reply = (msg) => page.evaluate((text) => window.postMessage(JSON.parse(text), '*'), JSON.stringify(msg)).catch(() => {});
  await page.exposeBinding('__strataPost', async (_source, msg) => {
    host.posted.push(msg);
    for (const w of host.waiters.slice()) {
      if (w.match(msg)) { host.waiters.splice(host.waiters.indexOf(w), 1); w.resolve(msg); }
    }
    if (msg.type === 'ready') await reply({ type: 'init', title, theme });
    if (msg.type !== 'request') return;
    const t0 = performance.now();
    const r = await adapter.raw(msg.command, msg.args);
    host.adapterMs.set(msg.id, performance.now() - t0);
    const answer = r.success ? { type: 'response', id: msg.id, success: true, body: r.body ?? {} }
      : { type: 'response', id: msg.id, success: false, message: r.message };
    host.replies.set(msg.id, answer);
    if (host.held === msg.command) host.heldReplies.push(answer);
    else await reply(answer);
  });
  // What VS Code gives a webview: acquireVsCodeApi, once, and the theme's body class.
  await page.addInitScript((cls) => {
    let saved;
    window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__strataPost(m), getState: () => saved, setState: (s) => { saved = s; } });
    document.addEventListener('DOMContentLoaded', () => document.body.classList.add(cls));
  }, bodyClass);
  // The first message matching `match` posted from index `since` of `posted` on (by default,
  // from now on).
  host.next = (match, { since = host.posted.length, timeout = 20000 } = {}) => {
    const seen = host.posted.slice(since).find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no posted message matching ${match} within ${timeout} ms`)), timeout);
      host.waiters.push({ match, resolve: (m) => { clearTimeout(timer); resolve(m); } });
    });
  };
  host.hold = (command) => { host.held = command; };
  host.release = async () => {
    host.held = null;
    for (const a of host.heldReplies.splice(0)) await reply(a);
  };
  host.send = reply;
  host.close = () => context.close();
  await page.goto(url);
  return host;
}

// Decodes a PNG screenshot (8-bit RGB or RGBA, not interlaced, as Chromium writes them) into
// {width, height, pixel(x, y) -> [r, g, b]}.
export async function decodePng(buffer) {
  const zlib = await import('node:zlib');
  let i = 8, width = 0, height = 0, channels = 0;
  const idat = [];
  while (i < buffer.length) {
    const len = buffer.readUInt32BE(i), type = buffer.toString('latin1', i + 4, i + 8);
    const data = buffer.subarray(i + 8, i + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0); height = data.readUInt32BE(4);
      const [depth, colour, , , interlace] = data.subarray(8);
      if (depth !== 8 || interlace !== 0 || ![2, 6].includes(colour)) throw new Error(`PNG kind ${depth}/${colour}/${interlace} not read`);
      channels = colour === 6 ? 4 : 3;
    } else if (type === 'IDAT') idat.push(data);
    i += 12 + len;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels, out = Buffer.alloc(stride * height);
  for (let y = 0; y < height; ++y) {
    const filter = raw[y * (stride + 1)], line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; ++x) {
      const a = x >= channels ? out[y * stride + x - channels] : 0, b = y > 0 ? out[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? out[(y - 1) * stride + x - channels] : 0;
      const pa = Math.abs(b - c), pb = Math.abs(a - c), pc = Math.abs(a + b - 2 * c);
      const pred = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][filter];
      out[y * stride + x] = (line[x] + pred) & 0xff;
    }
  }
  return { width, height, pixel: (x, y) => [...out.subarray(y * stride + x * channels, y * stride + x * channels + 3)] };
}

export const hex = (rgb) => `#${rgb.map((v) => v.toString(16).padStart(2, '0')).join('')}`;
