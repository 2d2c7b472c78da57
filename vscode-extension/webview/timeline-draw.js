// The GPU timeline webview's drawing: tracks, items (merged ones hatched), the time axis and the hover, selection and range marks, on a canvas.
// timeline.html loads the GPU timeline's scripts in this order as classic scripts: they share
// the page's global scope (a webview's page is theirs alone), so each uses what the ones before
// it declare, and timeline.js, last, wires the input and says it is ready.
'use strict';

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
