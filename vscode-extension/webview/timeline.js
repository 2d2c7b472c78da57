// The GPU timeline webview's input and start: what is under the pointer, mouse and keys, theme and size changes, and the read-only view the tests and the bench use.
// timeline.html loads the GPU timeline's scripts in this order as classic scripts: they share
// the page's global scope (a webview's page is theirs alone), so each uses what the ones before
// it declare, and timeline.js, last, wires the input and says it is ready.
'use strict';

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
