// Times the GPU timeline webview against a large store: zooms from the whole span down to
// microseconds (request -> reply -> draw, in the page) and redraws of what each holds (up to
// about 5,000 items, ms per frame), beside the same gpuTimeline windows asked of strata-dap
// over DAP alone; prints a Markdown table. The store is made once by strata_bench_gpu ingest (bench/gpu) and kept.
//   node bench/vscode/timeline_bench.mjs [--records 10000000] [--dir /tmp/strata-vscode-bench] [--frames 100] [--rounds 3]
// STRATA_DAP / STRATA_BENCH_GPU name the binaries (default: the release build's).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Adapter, REPO, exists } from '../../tests/vscode/webview/lib/dap.mjs';
import { launchBrowser, missing, openWebview, serve } from '../../tests/vscode/webview/lib/page.mjs';

const opt = { records: 10_000_000, dir: path.join(os.tmpdir(), 'strata-vscode-bench'), frames: 100, rounds: 3 };
for (let i = 2; i + 1 < process.argv.length; i += 2) {
  const key = process.argv[i].replace(/^--/, '');
  if (!(key in opt)) throw new Error(`unknown option ${process.argv[i]}`);
  opt[key] = key === 'dir' ? process.argv[i + 1] : Number(process.argv[i + 1]);
}
const DAP = process.env.STRATA_DAP ?? path.join(REPO, 'build/release/adapter/strata-dap');
const BENCH_GPU = process.env.STRATA_BENCH_GPU ?? path.join(REPO, 'build/release/backends/cuda/store/bench/strata_bench_gpu');
for (const [what, file] of [['strata-dap', DAP], ['strata_bench_gpu', BENCH_GPU]]) {
  if (!exists(file)) { console.error(`no ${what} at ${file}: build the release preset's targets (bench/vscode/README.md)`); process.exit(2); }
}
const why = await missing();
if (why) { console.error(why); process.exit(2); }

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN; };
const ms = (x) => x.toFixed(1);
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

fs.mkdirSync(opt.dir, { recursive: true });
const store = path.join(opt.dir, `store-${opt.records}.strata`);
if (!fs.existsSync(store)) {
  console.error(`making ${store} (${opt.records} records)...`);
  process.stderr.write(execFileSync(BENCH_GPU, ['ingest', '--store', store, '--records', String(opt.records)]));
}
console.log(`load average at start: ${load()}`);

const adapter = await new Adapter(DAP).openTrace(store);
const [browser, server] = await Promise.all([launchBrowser(), serve()]);
// A wide panel on a 2x display: about 5,000 device pixels of plot, so about 5,000 items.
const layoutWidth = 196 + 2500;
const host = await openWebview(browser, server.url, adapter, { viewport: { width: layoutWidth, height: 1000 }, dpr: 2 });
const page = host.page;
const current = () => page.waitForFunction(() => window.strataTimeline?.shown()?.current, null, { timeout: 120000, polling: 5 });
await current();
const first = await page.evaluate(() => ({ shown: window.strataTimeline.shown(), layout: window.strataTimeline.layout() }));

// Redraws of what the page holds now, `opt.frames` of them: ms per frame.
const redraws = () => page.evaluate((n) => {
  const out = [];
  for (let i = 0; i < n; ++i) out.push(window.strataTimeline.redraw());
  return out;
}, opt.frames);

// Zooms at the middle, a tenth of the window each, down to about 2 µs; each waits for its
// answer to be drawn, then times redraws of it and asks strata-dap for the same window over
// DAP alone. The first round warms the store's pages and is not counted.
const { wheelZoom } = await page.evaluate(() => window.strataTimeline.constants);
const box = await page.locator('#timeline').boundingBox();
const mid = { x: box.x + first.layout.gutter + first.layout.plotWidth / 2, y: box.y + first.layout.axis + 5 };
const levels = [];
for (let round = 0; round <= opt.rounds; ++round) {
  await page.focus('#timeline');
  await page.keyboard.press('0');
  await current();
  for (let level = 0; ; ++level) {
    const view = await page.evaluate(() => window.strataTimeline.view());
    if (level > 0 && view.endNs - view.startNs < 20_000) break;
    if (level > 0) {
      await page.mouse.move(mid.x, mid.y);
      // Chromium hands the page deltaY / devicePixelRatio.
      await page.mouse.wheel(0, Math.log(0.1) / wheelZoom * first.layout.dpr);
      await current();
    }
    const f = (await page.evaluate(() => window.strataTimeline.stats())).fetches.at(-1);
    const ask = host.posted.filter((m) => m.type === 'request' && m.command === 'gpuTimeline').pop();
    const frames = await redraws();
    const t0 = performance.now();
    await adapter.send('gpuTimeline', ask.args);
    const dap = performance.now() - t0;
    if (round === 0) continue;
    const l = (levels[level] ??= { windowNs: ask.args.endNs - ask.args.startNs, page: [], adapter: [], frames: [], dap: [] });
    l.page.push(f);
    l.adapter.push(host.adapterMs.get(ask.id));
    l.frames.push(...frames);
    l.dap.push(dap);
  }
}

const span = (ns) => (ns >= 1e9 ? `${(ns / 1e9).toFixed(2)} s` : ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(1)} µs`);
console.log(`\nstore: ${opt.records} records (${(fs.statSync(store).size / 1048576).toFixed(0)} MiB); page: ${layoutWidth}x1000 CSS px at 2x, ` +
  `maxItems ${first.shown.maxItems}; Chromium ${browser.version()} headless, software rendering; medians of ${opt.rounds} rounds ` +
  `(redraws: of ${opt.frames} frames each round)\n`);
console.log('| window | items | redraw (ms/frame) | zoom: request → reply (ms) | of which strata-dap (ms) | zoom: draw (ms) | zoom: total (ms) | gpuTimeline over DAP alone (ms) |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const l of levels) {
  const m = (f) => ms(median(l.page.map(f)));
  console.log(`| ${l === levels[0] ? 'whole span, ' : ''}${span(l.windowNs)} | ${Math.round(median(l.page.map((f) => f.items)))} | ` +
    `${ms(median(l.frames))} | ${m((f) => f.requestMs)} | ${ms(median(l.adapter))} | ${m((f) => f.drawMs)} | ${m((f) => f.totalMs)} | ${ms(median(l.dap))} |`);
}
console.log(`\nload average at end: ${load()}`);
await host.close();
await browser.close();
await server.close();
await adapter.close();
