// The GPU timeline webview's panes: the tooltip, one launch in full (gpuKernel) with its launching lines, the top kernels (gpuSummary) and export (gpuExport).
// timeline.html loads the GPU timeline's scripts in this order as classic scripts: they share
// the page's global scope (a webview's page is theirs alone), so each uses what the ones before
// it declare, and timeline.js, last, wires the input and says it is ready.
'use strict';

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
  // Whose Python lines the frames show: a thread with none (autograd's) is tied to the one that waited.
  if (d.attribution === 'caller') row('Python lines of', `thread ${d.waitingThread}, which waited in ${d.waitedIn === 'backward' ? 'backward()' : d.waitedIn}`);
  if (d.capture) row('Graph node', `${d.capture.node} (${d.capture.origin}); the lines that captured it come first`);
  if (d.op) row('Operator', d.op.name);
  // A backward op's kernel (an imported trace): the forward op autograd paired it with.
  if (d.backwardOf) row('Backward of', `${d.backwardOf.forwardOp.name} (thread ${d.backwardOf.forwardOp.tid}; ` +
    `${d.backwardOf.backwardOp.name}, sequence number ${d.backwardOf.sequenceNumber}); its forward's lines come last`);
  const parts = [el('h2', '', d.kind === 'kernel' ? 'Kernel launch' : `${d.kind} record`), el('p', 'name', d.name), dl];
  const frames = d.stackFrames || [];
  if (frames.length) {
    // Python frames open their line; a native frame without a source shows its address; frames
    // that are not the program's own (CUDA, libraries, the interpreter) are muted; a label
    // separates the lines of another thread or of a graph's capture.
    const list = el('ol', 'frames', ...frames.map((f) => {
      if (f.presentationHint === 'label') return el('li', 'label', f.name);
      const cls = f.presentationHint === 'subtle' ? 'subtle' : '';
      if (!(f.source && f.source.path)) return el('li', cls, el('span', 'nosource', `${f.name} ${f.instructionPointerReference || ''}`.trim()));
      const b = el('button', '', `${f.name} — ${f.source.path.split('/').pop()}:${f.line}`);
      b.type = 'button';
      b.title = `${f.source.path}:${f.line}`;
      b.addEventListener('click', () => vscode.postMessage({ type: 'openSource', path: f.source.path, line: f.line }));
      return el('li', cls, b);
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
