// The GPU timeline webview's state and the visible window: messages to and from the host, zoom and pan, and the gpuTimeline request for what is in view.
// timeline.html loads the GPU timeline's scripts in this order as classic scripts: they share
// the page's global scope (a webview's page is theirs alone), so each uses what the ones before
// it declare, and timeline.js, last, wires the input and says it is ready.
'use strict';

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

// Timings of the latest draws and window fetches (window.strataTimeline.stats, read by the bench).
const stats = { draws: [], fetches: [], dropped: 0 };
function record(list, entry) {
  list.push(entry);
  if (list.length > 500) list.shift();
}

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
