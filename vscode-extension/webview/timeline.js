// The GPU timeline webview: tracks per device stream and CPU thread on a canvas, zoomed and panned by asking the host for the visible window (gpuTimeline), one launch in full (gpuKernel), the top kernels (gpuSummary) and exports (gpuExport); messages as in the host's protocol.
'use strict';

(() => {
  const vscode = acquireVsCodeApi();

  // Layout, in CSS pixels.
  const GUTTER = 170;          // track names
  const AXIS = 26;             // time axis on top
  const ROW = 22;              // one track
  const BAR = 16;              // an item's height inside its row
  const DEBOUNCE_MS = 40;      // between the last zoom/pan and the request for its window
  const MIN_WINDOW_NS = 100;   // no finer than this: a few samples of a CUPTI timestamp
  const WHEEL_ZOOM = 0.0015;   // a wheel event zooms by exp(deltaY * WHEEL_ZOOM)
  const KEY_ZOOM = 2, KEY_PAN = 0.1;
  const DETAIL_CACHE = 256;    // gpuKernel answers kept for tooltips

  const KIND_COLOUR = {
    kernel: '--strata-kernel', memcpy: '--strata-copy', memset: '--strata-memset', sync: '--strata-sync',
    runtime: '--strata-runtime', driver: '--strata-runtime', cpu_op: '--strata-op',
    marker: '--strata-marker', graph: '--strata-marker', overhead: '--strata-marker',
  };

  const $ = (id) => document.getElementById(id);
  const canvas = $('timeline'), wrap = $('timeline-wrap'), tooltip = $('tooltip'), statusLine = $('status');
  const ctx = canvas.getContext('2d', { alpha: false });

  const state = {
    span: null,               // {startNs, endNs} of all the data
    view: null,               // the visible window
    viewVersion: 0,           // bumped at every zoom, pan or resize
    shown: null,              // the window and version of the reply drawn now
    tracks: [], rows: new Map(), items: [], byTrack: new Map(),
    hover: null, selected: null, focusTrack: 0,
    drag: null,               // {mode: 'pan'|'select', x0, x, view0, moved}
    summary: null, sort: { key: 'totalNs', dir: -1 },
    details: new Map(),       // id -> gpuKernel body (most recent last)
    palette: null, patterns: new Map(),
    width: 0, height: 0, dpr: 1,
  };

  // ---- messages -------------------------------------------------------------------------------

  let nextRequest = 1;
  const pending = new Map();
  function request(command, args) {
    const id = nextRequest++;
    vscode.postMessage({ type: 'request', id, command, args });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }

  window.addEventListener('message', (event) => {
    const m = event.data;
    if (!m || typeof m !== 'object') return;
    if (m.type === 'response') {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.success) p.resolve(m.body ?? {});
      else p.reject(new Error(m.message || 'the request failed'));
    } else if (m.type === 'init') {
      if (m.title) { $('title').textContent = m.title; document.title = m.title; }
      start();
    } else if (m.type === 'refresh') {
      refresh();
    }
  });

  function setStatus(text, error = false) {
    statusLine.textContent = text;
    statusLine.classList.toggle('error', error);
  }

  // ---- the visible window ---------------------------------------------------------------------

  let started = false;
  function start() {
    if (started) return refresh();
    started = true;
    loadSummary();
    fetchWindow();
  }

  // New data (a stop drained records): the whole span may have grown; a view showing all of it
  // keeps showing all of it.
  async function refresh() {
    const showingAll = state.view && state.span &&
      state.view.startNs <= state.span.startNs && state.view.endNs >= state.span.endNs;
    const summary = await loadSummary();
    if (summary && summary.timeSpan && summary.timeSpan.endNs > summary.timeSpan.startNs) {
      state.span = { ...summary.timeSpan };
      if (showingAll || !state.view) state.view = { ...state.span };
    }
    viewChanged();
  }

  const plotWidth = () => Math.max(1, state.width - GUTTER);
  // About one item per device pixel of the plot: the adapter merges neighbours to fit.
  const maxItems = () => Math.max(64, Math.min(100000, Math.round(plotWidth() * state.dpr)));
  const xOf = (ns) => GUTTER + (ns - state.view.startNs) / (state.view.endNs - state.view.startNs) * plotWidth();
  const nsAt = (x) => state.view.startNs + (x - GUTTER) / plotWidth() * (state.view.endNs - state.view.startNs);

  function setView(startNs, endNs) {
    let w = Math.max(MIN_WINDOW_NS, endNs - startNs);
    if (state.span && state.span.endNs <= state.span.startNs) return;  // nothing to show yet
    if (state.span) {
      const spanW = state.span.endNs - state.span.startNs;
      // A little room either side of the data, never more than it spans.
      const lo = state.span.startNs - spanW * 0.05, hi = state.span.endNs + spanW * 0.05;
      w = Math.min(w, hi - lo);
      startNs = Math.min(Math.max(startNs, lo), hi - w);
    }
    state.view = { startNs, endNs: startNs + w };
    viewChanged();
  }

  function zoomAt(x, factor) {
    if (!state.view) return;
    const t = nsAt(x);
    setView(t - (t - state.view.startNs) * factor, t + (state.view.endNs - t) * factor);
  }

  function pan(fraction) {
    if (!state.view) return;
    const d = (state.view.endNs - state.view.startNs) * fraction;
    setView(state.view.startNs + d, state.view.endNs + d);
  }

  function showAll() {
    if (state.span) setView(state.span.startNs, state.span.endNs);
  }

  // Every change redraws at once with what is there and asks for the new window once the
  // changes stop for DEBOUNCE_MS.
  let fetchTimer = 0;
  function viewChanged() {
    state.viewVersion++;
    clearTimeout(fetchTimer);
    fetchTimer = setTimeout(fetchWindow, DEBOUNCE_MS);
    return draw();
  }

  // One gpuTimeline request in flight at a time: a change while it runs asks again when it
  // answers, and its answer, already stale, is dropped.
  let inFlight = false, again = false;
  async function fetchWindow() {
    if (inFlight) { again = true; return; }
    inFlight = true;
    again = false;
    const version = state.viewVersion;
    const args = { maxItems: maxItems() };
    if (state.view) {
      args.startNs = Math.max(0, Math.floor(state.view.startNs));
      args.endNs = Math.max(args.startNs + 1, Math.ceil(state.view.endNs));
    }
    const sent = performance.now();
    try {
      const body = await request('gpuTimeline', args);
      const answered = performance.now();
      if (version === state.viewVersion || !state.view) {
        apply(body, version);
        const drawMs = resize();
        record(stats.fetches, { requestMs: answered - sent, drawMs, totalMs: performance.now() - sent,
          items: body.items.length, maxItems: args.maxItems });
      } else {
        stats.dropped++;
      }
    } catch (e) {
      setStatus(e.message, true);
    } finally {
      inFlight = false;
      if (again) fetchWindow();
    }
  }

  function apply(body, version) {
    if (!state.span) state.span = { ...body.window };
    if (!state.view) state.view = { ...body.window };
    state.shown = { window: { ...body.window }, version, maxItems: body.maxItems, items: body.items.length };
    state.tracks = body.tracks;
    state.rows = new Map(body.tracks.map((t, i) => [t.id, i]));
    state.items = body.items;
    state.byTrack = new Map(body.tracks.map((t) => [t.id, []]));
    for (const item of body.items) state.byTrack.get(item.track)?.push(item);
    state.focusTrack = Math.min(state.focusTrack, Math.max(0, body.tracks.length - 1));
    if (state.selected) state.selected = body.items.find((i) => i.id === state.selected.id) ?? null;
    state.hover = null;
    hideTooltip();
    const empty = body.window.endNs <= body.window.startNs && body.items.length === 0;
    setStatus(empty ? 'No GPU data yet.'
      : `${body.items.length} items${body.merged ? ' (neighbours merged to fit)' : ''}` +
        (body.tracksOmitted ? `, ${body.tracksOmitted} tracks left out` : ''));
  }

  // ---- drawing --------------------------------------------------------------------------------

  function palette() {
    const css = getComputedStyle(document.body);
    const get = (name) => css.getPropertyValue(name).trim();
    const p = { bg: get('--strata-bg'), fg: get('--strata-fg'), muted: get('--strata-muted'), band: get('--strata-band'),
      grid: get('--strata-grid'), selection: get('--strata-selection'), focus: get('--strata-focus'),
      outline: get('--strata-outline'), kinds: {} };
    for (const [kind, name] of Object.entries(KIND_COLOUR)) p.kinds[kind] = get(name) || p.fg;
    p.font = `${css.getPropertyValue('--vscode-font-size').trim() || '12px'} ${css.fontFamily}`;
    return p;
  }

  // Merged items: their colour in diagonal stripes over a paler wash of it.
  function pattern(colour) {
    if (state.patterns.has(colour)) return state.patterns.get(colour);
    const tile = Object.assign(document.createElement('canvas'), { width: 6, height: 6 });
    const t = tile.getContext('2d');
    Object.assign(t, { fillStyle: colour, strokeStyle: colour, lineWidth: 2, globalAlpha: 0.45 });
    t.fillRect(0, 0, 6, 6);
    t.globalAlpha = 1;
    t.beginPath();
    for (const [a, b, c, d] of [[-1, 7, 7, -1], [5, 7, 7, 5], [-1, 1, 1, -1]]) { t.moveTo(a, b); t.lineTo(c, d); }
    t.stroke();
    const p = ctx.createPattern(tile, 'repeat');
    state.patterns.set(colour, p);
    return p;
  }

  function resize() {
    const dpr = window.devicePixelRatio || 1;
    const width = Math.max(GUTTER + 100, wrap.clientWidth);
    const height = AXIS + Math.max(3, state.tracks.length) * ROW + 6;
    if (width === state.width && height === state.height && dpr === state.dpr) return draw();
    const widthChanged = width !== state.width || dpr !== state.dpr;
    Object.assign(state, { width, height, dpr });
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    canvas.style.height = `${height}px`;
    // A new width asks for a new maxItems.
    if (widthChanged && state.view && started) return viewChanged();
    return draw();
  }

  const rowTop = (row) => AXIS + row * ROW;

  // Timings of the latest draws and window fetches (window.strataTimeline.stats, read by the bench).
  const stats = { draws: [], fetches: [], dropped: 0 };
  function record(list, entry) {
    list.push(entry);
    if (list.length > 500) list.shift();
  }

  // Returns the milliseconds it took.
  function draw() {
    const t0 = performance.now();
    if (!state.palette) state.palette = palette();
    const p = state.palette, w = state.width, h = state.height;
    if (!w) return 0;
    ctx.setTransform(state.dpr, 0, 0, state.dpr, 0, 0);
    ctx.fillStyle = p.bg;
    ctx.fillRect(0, 0, w, h);
    ctx.font = p.font;
    ctx.textBaseline = 'middle';
    for (let r = 0; r < state.tracks.length; ++r) {
      if (r % 2 === 1) { ctx.fillStyle = p.band; ctx.fillRect(0, rowTop(r), w, ROW); }
      const t = state.tracks[r];
      const prev = state.tracks[r - 1];
      if (prev && (prev.kind !== t.kind || prev.device !== t.device || prev.pid !== t.pid)) {
        ctx.fillStyle = p.grid;
        ctx.fillRect(0, rowTop(r), w, 1);
      }
      ctx.fillStyle = r === state.focusTrack && document.activeElement === canvas ? p.focus : p.fg;
      ctx.fillText(clip(t.name, GUTTER - 12), 6, rowTop(r) + ROW / 2);
    }
    if (state.view && state.view.endNs > state.view.startNs) {
      drawAxis(p, w);
      ctx.save();
      ctx.beginPath();
      ctx.rect(GUTTER, AXIS, w - GUTTER, h - AXIS);
      ctx.clip();
      drawItems(p, w);
      drawMarks(p);
      ctx.restore();
    }
    ctx.fillStyle = p.grid;
    ctx.fillRect(GUTTER - 1, 0, 1, h);
    const ms = performance.now() - t0;
    record(stats.draws, { ms, items: state.items.length });
    return ms;
  }

  function drawItems(p, w) {
    // One path per colour (and per colour for merged items): a few fills whatever the count.
    const solid = new Map(), merged = new Map(), labels = [];
    const right = w;
    for (const [track, items] of state.byTrack) {
      const row = state.rows.get(track);
      if (row === undefined) continue;
      const y = rowTop(row) + (ROW - BAR) / 2;
      let lastPx = -1, lastKind = '';
      for (const it of items) {
        const x0 = xOf(it.startNs);
        const x1 = xOf(it.endNs);
        if (x1 < GUTTER || x0 > right) continue;
        // Several items in one device pixel: the first covers it.
        const px = Math.floor(x0 * state.dpr);
        if (px === lastPx && it.kind === lastKind && x1 - x0 < 1) continue;
        lastPx = px; lastKind = it.kind;
        const colour = p.kinds[it.kind] || p.fg;
        const into = it.count > 1 ? merged : solid;
        let list = into.get(colour);
        if (!list) into.set(colour, list = []);
        list.push(x0, y, Math.max(1, x1 - x0));
        if (x1 - x0 > 48) labels.push(it, x0, x1, y);
      }
    }
    const fill = (map, style) => {
      for (const [colour, rects] of map) {
        ctx.fillStyle = style(colour);
        ctx.beginPath();
        for (let i = 0; i < rects.length; i += 3) ctx.rect(rects[i], rects[i + 1], rects[i + 2], BAR);
        ctx.fill();
        if (p.outline && p.outline !== 'transparent') {
          ctx.strokeStyle = p.outline;
          ctx.lineWidth = 1;
          ctx.stroke();
        }
      }
    };
    fill(solid, (c) => c);
    fill(merged, (c) => pattern(c));
    ctx.fillStyle = p.bg;
    for (let i = 0; i < labels.length; i += 4) {
      const [it, x0, x1, y] = labels.slice(i, i + 4);
      const from = Math.max(x0, GUTTER) + 4, room = Math.min(x1, right) - from - 4;
      if (room < 24) continue;
      const text = it.count > 1 ? `${it.count}× ${it.name}` : it.name;
      ctx.fillText(clip(text, room), from, y + BAR / 2);
    }
  }

  function drawMarks(p) {
    const outline = (it, colour, width) => {
      const row = state.rows.get(it.track);
      if (row === undefined) return;
      const x0 = xOf(it.startNs), x1 = xOf(it.endNs);
      ctx.strokeStyle = colour;
      ctx.lineWidth = width;
      ctx.strokeRect(x0 - 1, rowTop(row) + (ROW - BAR) / 2 - 1, Math.max(1, x1 - x0) + 2, BAR + 2);
    };
    if (state.hover && state.hover !== state.selected) outline(state.hover, p.fg, 1);
    if (state.selected) outline(state.selected, p.focus, 2);
    const d = state.drag;
    if (d && d.mode === 'select') {
      ctx.globalAlpha = 0.5;
      ctx.fillStyle = p.selection;
      ctx.fillRect(Math.min(d.x0, d.x), AXIS, Math.abs(d.x - d.x0), state.height - AXIS);
      ctx.globalAlpha = 1;
    }
  }

  // Ticks at 1, 2 or 5 × 10^k ns, about every 100 px, labelled from the data's start.
  function drawAxis(p, w) {
    const span = state.view.endNs - state.view.startNs;
    const raw = span / Math.max(1, plotWidth() / 100);
    const pow = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= raw);
    const origin = state.span ? state.span.startNs : 0;
    const first = Math.ceil((state.view.startNs - origin) / step) * step;
    ctx.fillStyle = p.muted;
    ctx.textAlign = 'center';
    for (let rel = first; origin + rel <= state.view.endNs; rel += step) {
      const x = Math.round(xOf(origin + rel));
      if (x < GUTTER) continue;
      ctx.fillStyle = p.grid;
      ctx.fillRect(x, AXIS - 6, 1, state.height - AXIS + 6);
      ctx.fillStyle = p.muted;
      if (x > GUTTER + 20 && x < w - 20) ctx.fillText(duration(rel, step), x, AXIS / 2 - 2);
    }
    ctx.textAlign = 'start';
    ctx.fillStyle = p.grid;
    ctx.fillRect(GUTTER, AXIS - 1, w - GUTTER, 1);
  }

  function duration(ns, step = ns) {
    const units = [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs'], [1, 'ns']];
    const [div, unit] = units.find(([d]) => Math.abs(step || ns) >= d) || units[3];
    const digits = Math.max(0, Math.min(3, Math.ceil(-Math.log10((step || div) / div))));
    return `${(ns / div).toFixed(digits)} ${unit}`;
  }

  let charWidth = 0;
  function clip(text, room) {
    if (!charWidth) charWidth = ctx.measureText('abcdefghijklmnopqrstuvwxyz').width / 26 || 7;
    const fits = Math.floor(room / charWidth);
    if (text.length <= fits) return text;
    return fits < 2 ? '' : `${text.slice(0, fits - 1)}…`;
  }

  // ---- finding what is under the pointer ------------------------------------------------------

  function itemAt(x, y) {
    if (!state.view || state.view.endNs <= state.view.startNs || x < GUTTER) return null;
    const row = Math.floor((y - AXIS) / ROW);
    if (row < 0 || row >= state.tracks.length) return null;
    const items = state.byTrack.get(state.tracks[row].id) || [];
    const t = nsAt(x), slack = 3 * (state.view.endNs - state.view.startNs) / plotWidth();
    // Items are by start: the last one starting at or before t (plus slack) and reaching it.
    let lo = 0, hi = items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (items[mid].startNs <= t + slack) lo = mid + 1; else hi = mid;
    }
    let best = null, bestDist = Infinity;
    for (let i = lo - 1; i >= 0 && i >= lo - 64; --i) {
      const it = items[i];
      const dist = t < it.startNs ? it.startNs - t : t > it.endNs ? t - it.endNs : 0;
      if (dist <= slack && dist < bestDist) { best = it; bestDist = dist; if (dist === 0) break; }
    }
    return best;
  }

  function eventPoint(e) {
    const r = canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }

  // ---- tooltip and details --------------------------------------------------------------------

  // An element with a class, text or children (text is never parsed as HTML).
  function el(tag, className, ...children) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    e.append(...children.map((c) => (c instanceof Node ? c : String(c))));
    return e;
  }

  function showTooltip(it, x, y) {
    const lines = it.count > 1
      ? [`${it.count} ${it.kind} records merged to fit (the longest named)`,
        `${duration(it.endNs - it.startNs)} from first start to last end, ${duration(it.busyNs ?? 0)} busy`]
      : [`${it.kind}, ${duration(it.endNs - it.startNs)}`];
    if (state.span) lines.push(`starts at ${duration(it.startNs - state.span.startNs)}`);
    const d = state.details.get(it.id);
    if (d && d.grid) lines.push(`grid ${d.grid.join('×')}, block ${d.block.join('×')}`);
    if (d && d.registersPerThread !== undefined) lines.push(`${d.registersPerThread} registers per thread`);
    if (it.kind === 'kernel' || it.count > 1) lines.push(it.count > 1 ? 'Click: the longest in full' : 'Click: in full, with its launching lines');
    tooltip.replaceChildren(el('strong', '', it.name), lines.join('\n'));
    tooltip.hidden = false;
    const left = Math.min(x + 12, wrap.getBoundingClientRect().width - tooltip.offsetWidth - 4);
    tooltip.style.left = `${Math.max(0, left)}px`;
    tooltip.style.top = `${y + 16 + wrap.scrollTop}px`;
  }

  function hideTooltip() { tooltip.hidden = true; }

  function remember(body) {
    state.details.delete(body.id);
    state.details.set(body.id, body);
    if (state.details.size > DETAIL_CACHE) state.details.delete(state.details.keys().next().value);
  }

  async function showDetails(it) {
    state.selected = it;
    draw();
    try {
      const d = await request('gpuKernel', { id: it.id });
      remember(d);
      if (state.selected === it) renderDetails(d, it);
    } catch (e) {
      setStatus(e.message, true);
    }
  }

  function renderDetails(d, it) {
    const dl = el('dl');
    const row = (k, v) => { if (v !== undefined && v !== null && v !== '') dl.append(el('dt', '', k), el('dd', '', v)); };
    if (it.count > 1) row('Merged', `the longest of ${it.count} records`);
    row('Mangled', d.mangledName);
    row('Duration', duration(d.durationNs));
    if (state.span) row('Starts at', duration(d.startNs - state.span.startNs));
    row('Device', d.device);
    row('Stream', d.stream);
    row('Process', d.tid !== undefined ? `${d.pid} (thread ${d.tid})` : d.pid);
    if (d.grid) row('Grid', d.grid.join(' × '));
    if (d.block) row('Block', d.block.join(' × '));
    row('Registers/thread', d.registersPerThread);
    if (d.staticSharedMemory !== undefined || d.dynamicSharedMemory !== undefined)
      row('Shared memory', `${d.staticSharedMemory ?? 0} B static, ${d.dynamicSharedMemory ?? 0} B dynamic`);
    if (d.occupancy) row('Occupancy (est.)', `${Math.round(d.occupancy.occupancy * 100)} %` +
      (d.occupancy.limitedBy.length ? `, limited by ${d.occupancy.limitedBy.join(', ')}` : ''));
    else row('Occupancy', d.occupancyUnavailable);
    const m = d.metrics;
    if (m) {
      const pct = (v, what) => v !== undefined && `${what} ${v.toFixed(1)} %`;
      row('Measured', [pct(m.smThroughputPct, 'SM'), pct(m.dramThroughputPct, 'DRAM'),
        pct(m.achievedOccupancyPct, 'occupancy'), `${m.passes} passes`].filter(Boolean).join(', '));
    } else row('Metrics', d.metricsError);
    if (d.copyKind) row('Copy', `${d.copyKind}${d.bytes !== undefined ? `, ${d.bytes} bytes` : ''}`);
    row('Sync', d.syncKind);
    if (d.launch) row('Launched by', `${d.launch.name} (thread ${d.launch.tid})`);
    if (d.op) row('Operator', d.op.name);
    const parts = [el('h2', '', d.kind === 'kernel' ? 'Kernel launch' : `${d.kind} record`), el('p', 'name', d.name), dl];
    const frames = d.stackFrames || [];
    if (frames.length) {
      // Python frames open their line; a native frame without a source shows its address.
      const list = el('ol', 'frames', ...frames.map((f) => {
        if (!(f.source && f.source.path)) return el('li', '', el('span', 'nosource', `${f.name} ${f.instructionPointerReference || ''}`.trim()));
        const b = el('button', '', `${f.name} — ${f.source.path.split('/').pop()}:${f.line}`);
        b.type = 'button';
        b.title = `${f.source.path}:${f.line}`;
        b.addEventListener('click', () => vscode.postMessage({ type: 'openSource', path: f.source.path, line: f.line }));
        return el('li', '', b);
      }));
      parts.push(el('h2', '', d.siteKnown ? 'Launched from' : 'Launched from (the frames around its launch call)'), list);
    } else if (d.kind === 'kernel') {
      parts.push(el('p', 'empty', 'No launching lines were recorded (collect with "gpu": "stacks").'));
    }
    $('details').replaceChildren(...parts);
  }

  // ---- summary table --------------------------------------------------------------------------

  async function loadSummary() {
    try {
      const s = await request('gpuSummary', { limit: 50 });
      state.summary = s;
      if (!state.span && s.timeSpan && s.timeSpan.endNs > s.timeSpan.startNs) state.span = { ...s.timeSpan };
      renderSummary();
      return s;
    } catch (e) {
      setStatus(e.message, true);
      return null;
    }
  }

  function renderSummary() {
    const s = state.summary;
    if (!s) return;
    const { key, dir } = state.sort;
    const rows = [...s.kernels].sort((a, b) =>
      (key === 'name' ? a.name.localeCompare(b.name) : a[key] - b[key]) * dir || a.name.localeCompare(b.name));
    document.querySelector('#kernels tbody').replaceChildren(...rows.map((k) => el('tr', '', el('td', 'kernel', k.name),
      el('td', 'num', k.count), ...['totalNs', 'avgNs', 'minNs', 'maxNs'].map((f) => el('td', 'num', duration(k[f]))))));
    for (const th of document.querySelectorAll('#kernels th')) {
      const k = th.querySelector('button').dataset.key;
      th.setAttribute('aria-sort', k === key ? (dir > 0 ? 'ascending' : 'descending') : 'none');
    }
    const others = [];
    if (s.kernelNames > s.kernels.length) others.push(`${s.kernelNames - s.kernels.length} more kernel names`);
    for (const c of s.copies) others.push(`${c.count} ${c.kind} (${c.bytes} bytes, ${duration(c.totalNs)})`);
    for (const y of s.syncs) others.push(`${y.count} ${y.kind} syncs (${duration(y.totalNs)})`);
    if (s.dropped) others.push(`${s.dropped} records lost by the collector`);
    $('others').textContent = others.join(' · ');
  }

  for (const b of document.querySelectorAll('#kernels th button')) {
    b.addEventListener('click', () => {
      const key = b.dataset.key;
      // Names read A to Z first, numbers largest first; a second click turns it round.
      state.sort = state.sort.key === key ? { key, dir: -state.sort.dir } : { key, dir: key === 'name' ? 1 : -1 };
      renderSummary();
    });
  }

  // ---- export ---------------------------------------------------------------------------------

  $('export').addEventListener('click', async () => {
    const button = $('export');
    button.disabled = true;
    setStatus('Exporting…');
    try {
      const x = await request('gpuExport', { format: $('export-format').value });
      setStatus(`Exported ${x.events} events to ${x.path}`);
      vscode.postMessage({ type: 'revealFile', path: x.path });
    } catch (e) {
      setStatus(e.message, true);
    } finally {
      button.disabled = false;
    }
  });

  // ---- pointer and keys -----------------------------------------------------------------------

  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    const { x } = eventPoint(e);
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) pan((e.deltaX || e.deltaY) / plotWidth());
    else zoomAt(Math.max(GUTTER, x), Math.exp(e.deltaY * WHEEL_ZOOM));
  }, { passive: false });

  canvas.addEventListener('pointerdown', (e) => {
    if (e.button !== 0 || !state.view) return;
    canvas.focus();
    const { x, y } = eventPoint(e);
    const select = e.shiftKey || y < AXIS;
    state.drag = { mode: select ? 'select' : 'pan', x0: x, x, y, view0: { ...state.view }, moved: false };
    canvas.setPointerCapture(e.pointerId);
    canvas.classList.add(select ? 'selecting' : 'dragging');
  });

  canvas.addEventListener('pointermove', (e) => {
    const { x, y } = eventPoint(e);
    const d = state.drag;
    if (d) {
      d.x = x;
      if (Math.abs(x - d.x0) > 3) d.moved = true;
      if (!d.moved) return;
      hideTooltip();
      if (d.mode === 'pan') {
        const shift = (d.x0 - x) / plotWidth() * (d.view0.endNs - d.view0.startNs);
        setView(d.view0.startNs + shift, d.view0.endNs + shift);
      } else {
        draw();
      }
      return;
    }
    const it = itemAt(x, y);
    if (it !== state.hover) { state.hover = it; draw(); }
    if (it) { showTooltip(it, x, y); prefetch(it); } else hideTooltip();
  });

  canvas.addEventListener('pointerleave', () => {
    if (state.drag) return;
    if (state.hover) { state.hover = null; draw(); }
    hideTooltip();
  });

  canvas.addEventListener('pointerup', (e) => {
    const d = state.drag;
    if (!d) return;
    state.drag = null;
    canvas.classList.remove('dragging', 'selecting');
    if (d.moved && d.mode === 'select') {
      const a = Math.max(GUTTER, Math.min(d.x0, d.x)), b = Math.max(d.x0, d.x);
      setView(nsAt(a), nsAt(b));
    } else if (!d.moved) {
      const it = itemAt(d.x0, d.y);
      if (it) showDetails(it);
      else draw();
    }
  });

  canvas.addEventListener('dblclick', (e) => {
    const { x, y } = eventPoint(e);
    const it = itemAt(x, y);
    if (it && it.count > 1) setView(it.startNs, it.endNs);
  });

  // A kernel hovered for a moment: its gpuKernel answer gives the tooltip its grid and block.
  let prefetchTimer = 0;
  const asked = new Set();
  function prefetch(it) {
    clearTimeout(prefetchTimer);
    if (it.count !== 1 || it.kind !== 'kernel' || state.details.has(it.id) || asked.has(it.id)) return;
    prefetchTimer = setTimeout(async () => {
      if (state.hover !== it) return;
      asked.add(it.id);
      try {
        remember(await request('gpuKernel', { id: it.id }));
        if (state.hover === it && !tooltip.hidden) {
          const x = xOf(it.startNs), row = state.rows.get(it.track);
          showTooltip(it, Math.max(GUTTER, x), rowTop(row ?? 0) + ROW / 2);
        }
      } catch { /* the tooltip keeps what the timeline gave */ } finally { asked.delete(it.id); }
    }, 300);
  }

  function visibleOnTrack(row) {
    const track = state.tracks[row];
    if (!track || !state.view) return [];
    return (state.byTrack.get(track.id) || []).filter((i) => i.endNs >= state.view.startNs && i.startNs <= state.view.endNs);
  }

  function step(direction) {
    const items = visibleOnTrack(state.focusTrack);
    if (!items.length) return;
    const at = state.selected ? items.findIndex((i) => i === state.selected) : -1;
    const next = at < 0 ? (direction > 0 ? 0 : items.length - 1) : Math.max(0, Math.min(items.length - 1, at + direction));
    state.selected = items[next];
    draw();
    const x = Math.max(GUTTER, xOf(state.selected.startNs));
    showTooltip(state.selected, x, rowTop(state.focusTrack) + ROW / 2);
    setStatus(`${state.selected.name}, ${duration(state.selected.endNs - state.selected.startNs)}`);
  }

  canvas.addEventListener('keydown', (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const centre = GUTTER + plotWidth() / 2;
    const keys = {
      '+': () => zoomAt(centre, 1 / KEY_ZOOM), '=': () => zoomAt(centre, 1 / KEY_ZOOM),
      '-': () => zoomAt(centre, KEY_ZOOM), _: () => zoomAt(centre, KEY_ZOOM),
      ArrowLeft: () => pan(-KEY_PAN), ArrowRight: () => pan(KEY_PAN),
      0: showAll, Home: showAll,
      ArrowUp: () => { state.focusTrack = Math.max(0, state.focusTrack - 1); state.selected = null; draw(); },
      ArrowDown: () => { state.focusTrack = Math.min(state.tracks.length - 1, state.focusTrack + 1); state.selected = null; draw(); },
      '[': () => step(-1), ']': () => step(1),
      Enter: () => { if (state.selected) showDetails(state.selected); },
      Escape: () => { state.selected = null; state.drag = null; hideTooltip(); draw(); },
    };
    const action = keys[e.key];
    if (!action) return;
    e.preventDefault();
    action();
  });
  canvas.addEventListener('focus', () => draw());
  canvas.addEventListener('blur', () => draw());

  $('zoom-in').addEventListener('click', () => zoomAt(GUTTER + plotWidth() / 2, 1 / KEY_ZOOM));
  $('zoom-out').addEventListener('click', () => zoomAt(GUTTER + plotWidth() / 2, KEY_ZOOM));
  $('zoom-fit').addEventListener('click', showAll);

  // ---- theme and size -------------------------------------------------------------------------

  // VS Code changes the body's class and <html>'s variables when the theme changes.
  const rethemed = () => { state.palette = null; state.patterns.clear(); charWidth = 0; draw(); };
  const observer = new MutationObserver(rethemed);
  observer.observe(document.body, { attributes: true, attributeFilter: ['class', 'style'] });
  observer.observe(document.documentElement, { attributes: true, attributeFilter: ['class', 'style'] });
  new ResizeObserver(() => resize()).observe(wrap);

  // What the page shows, for the tests and the bench (read only).
  window.strataTimeline = {
    layout: () => ({ gutter: GUTTER, axis: AXIS, row: ROW, bar: BAR, plotWidth: plotWidth(), width: state.width,
      dpr: state.dpr, tracks: state.tracks.map((t, i) => ({ id: t.id, name: t.name, top: rowTop(i) })) }),
    view: () => state.view && { ...state.view },
    shown: () => state.shown && { ...state.shown, current: state.shown.version === state.viewVersion },
    constants: { wheelZoom: WHEEL_ZOOM, keyZoom: KEY_ZOOM, keyPan: KEY_PAN, debounceMs: DEBOUNCE_MS },
    stats: () => ({ draws: stats.draws.slice(), fetches: stats.fetches.slice(), dropped: stats.dropped }),
    redraw: () => draw(),
  };

  resize();
  vscode.postMessage({ type: 'ready' });
})();
