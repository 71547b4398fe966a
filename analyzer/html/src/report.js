// The page of `gpumemtrace html`: reads the report the analyzer embedded as JSON (the JSON of the
// `viewer` report: docs/reports.md, "HTML") and shows it with uPlot (the timelines) and d3-flame-graph
// (the live set at a moment). Nothing is fetched: the analyzer inlines this bundle into every page.
import uPlot from 'uplot';
import flamegraph from 'd3-flame-graph';
import { select } from 'd3-selection';
import { formatSize, formatTime, frameText, compactStack } from './format.js';
import { stackTree, flameTree } from './trees.js';

const report = JSON.parse(document.getElementById('gpumemtrace-data').textContent);
// For tests and scripts: the charts and what is shown.
const view = { charts: [], selected: null, report };
window.gpumemtrace = view;

const app = document.getElementById('app');

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === 'html') node.innerHTML = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function accountName(device, memory) {
  if (memory === 'managed') return 'managed memory';
  if (memory === 'host-pinned') return 'pinned host memory';
  return device === null || device === undefined ? 'device memory' : `device ${device}`;
}

function sameAccount(a, b) {
  return a.memory === b.memory && (a.device ?? null) === (b.device ?? null);
}

// --- header -------------------------------------------------------------------------------------------

function header() {
  const t = report.trace || {};
  document.title = `gpumemtrace: ${t.command || t.path || 'report'}`;
  app.append(
    el('h1', {}, 'gpumemtrace report'),
    el('p', { class: 'trace' },
      el('code', {}, t.command || ''), ` (pid ${t.pid ?? '?'}), ${t.path || ''}: `,
      el('b', {}, t.complete ? 'complete' : 'INCOMPLETE'), `, ${(t.events ?? 0).toLocaleString('en')} events`));
  const accounts = [...(report.devices || [])];
  for (const [key, memory] of [['managed', 'managed'], ['host_pinned', 'host-pinned']])
    if (report[key] && report[key].allocations > 0) accounts.push({ ...report[key], memory, device: null });
  if (accounts.length === 0) return;
  const table = el('table', { class: 'accounts' },
    el('tr', {}, ...['memory', 'peak', 'peak at', 'at the end', 'allocations', 'frees', 'failed'].map((h) => el('th', {}, h))));
  for (const a of accounts)
    table.append(el('tr', {},
      el('td', {}, accountName(a.device, a.memory || 'device')), el('td', {}, formatSize(a.peak_bytes)),
      el('td', {}, formatTime(a.peak_time_ns)), el('td', {}, formatSize(a.final_bytes)),
      el('td', {}, String(a.allocations)), el('td', {}, String(a.frees)), el('td', {}, String(a.failed_allocations))));
  app.append(table);
}

// --- timelines ---------------------------------------------------------------------------------------

function phaseInstances() {
  const out = [];
  for (const phase of report.phases || [])
    for (const instance of phase.instances) out.push({ name: phase.phase, ...instance });
  return out;
}

// Draws the marks over a chart: phase bands, the peak, the out-of-memory failures and the moment shown.
function marksPlugin(series, ooms, phases) {
  return {
    hooks: {
      drawClear: [(u) => {
        const { ctx } = u;
        const top = u.bbox.top, height = u.bbox.height;
        ctx.save();
        phases.forEach((p, i) => {
          const x0 = u.valToPos(p.start_ns / 1e9, 'x', true), x1 = u.valToPos(p.end_ns / 1e9, 'x', true);
          ctx.fillStyle = i % 2 ? 'rgba(120,120,200,0.10)' : 'rgba(120,120,200,0.18)';
          ctx.fillRect(x0, top, Math.max(1, x1 - x0), height);
          if (x1 - x0 > 40 * devicePixelRatio) {
            ctx.fillStyle = '#557';
            ctx.font = `${11 * devicePixelRatio}px sans-serif`;
            ctx.fillText(p.name, x0 + 3, top + 12 * devicePixelRatio);
          }
        });
        ctx.restore();
      }],
      draw: [(u) => {
        const { ctx } = u;
        const top = u.bbox.top, height = u.bbox.height;
        ctx.save();
        const line = (t, color, dash) => {
          const x = u.valToPos(t / 1e9, 'x', true);
          ctx.strokeStyle = color;
          ctx.lineWidth = 2 * devicePixelRatio;
          ctx.setLineDash(dash);
          ctx.beginPath();
          ctx.moveTo(x, top);
          ctx.lineTo(x, top + height);
          ctx.stroke();
        };
        for (const oom of ooms) line(oom.time_ns, '#d22', []);
        if (series.peak_bytes > 0 && series.peak_time_ns !== undefined) {
          const x = u.valToPos(series.peak_time_ns / 1e9, 'x', true);
          const y = u.valToPos(series.peak_bytes, 'y', true);
          ctx.fillStyle = '#e80';
          ctx.beginPath();
          ctx.moveTo(x, y - 3 * devicePixelRatio);
          ctx.lineTo(x - 6 * devicePixelRatio, y - 13 * devicePixelRatio);
          ctx.lineTo(x + 6 * devicePixelRatio, y - 13 * devicePixelRatio);
          ctx.fill();
        }
        const selected = view.selected;
        if (selected && sameAccount(selected.account, series)) line(selected.moment.time_ns, '#07c', [5, 4]);
        ctx.restore();
      }],
    },
  };
}

function momentsOf(series) {
  const accounts = (report.moments && report.moments.accounts) || [];
  return accounts.find((a) => sameAccount(a, series));
}

// The moment that stands for time t: the one whose slices hold t, else the nearest.
function momentAt(account, timeNs) {
  const moments = account.moments;
  if (moments.length === 0) return null;
  let best = moments[0];
  for (const m of moments) {
    if (m.start_ns <= timeNs && timeNs < m.end_ns) return m;
    if (Math.abs(m.time_ns - timeNs) < Math.abs(best.time_ns - timeNs)) best = m;
  }
  return best;
}

function timelines() {
  const timeline = report.timeline;
  if (!timeline || !timeline.series || timeline.series.length === 0) return;
  const section = el('section', { id: 'timelines' }, el('h2', {}, 'Live memory over time'),
    el('p', { class: 'help' }, 'The most that was live in each slice of time. Drag to zoom, double-click to zoom out, ' +
      'click to see what was live then. Marks: ▼ the peak (a click on it shows the peak), red lines out-of-memory failures, bands the phases.'));
  app.append(section);
  const phases = phaseInstances();
  const width = Math.max(400, app.clientWidth - 20);
  for (const series of timeline.series) {
    const accounts = [...(report.devices || [])];
    const figures = series.memory === 'device' ? accounts.find((a) => a.device === series.device) : report[series.memory === 'managed' ? 'managed' : 'host_pinned'];
    const s = { ...series, peak_time_ns: figures ? figures.peak_time_ns : undefined };
    const ooms = (report.ooms || []).filter((o) => series.memory === 'device' && o.device === series.device);
    const xs = [], ys = [];
    series.max_bytes.forEach((v, i) => { xs.push((timeline.start_ns + i * timeline.window_ns) / 1e9); ys.push(v); });
    xs.push((timeline.start_ns + series.max_bytes.length * timeline.window_ns) / 1e9);
    ys.push(series.max_bytes.length ? series.max_bytes[series.max_bytes.length - 1] : 0);
    // Where an allocator said what it reserved (heaps of annotate.h or the NVTX memory extension): its
    // allocated bytes over time against its reserved bytes.
    const extra = [], data = [xs, ys];
    const heaps = series.memory === 'device'
      ? ((report.fragmentation || []).find((d) => d.device === series.device) || {}).heaps || [] : [];
    heaps.slice(0, 4).forEach((h, i) => {
      const color = ['#a3c', '#c70', '#39c', '#777'][i];
      const at = (x) => {
        const index = Math.floor((x * 1e9 - h.series_start_ns) / h.series_window_ns);
        return index >= 0 && index < h.allocated_series_bytes.length ? index : -1;
      };
      data.push(xs.map((x) => (at(x) >= 0 ? h.allocated_series_bytes[at(x)] : null)));
      extra.push({ label: `heap ${h.name} allocated`, stroke: color, width: 1, paths: uPlot.paths.stepped({ align: 1 }) });
      if (!h.destroyed) {
        data.push(xs.map((x) => (at(x) >= 0 ? h.reserved_bytes : null)));
        extra.push({ label: `heap ${h.name} reserved`, stroke: color, width: 1, dash: [6, 4] });
      }
    });
    const holder = el('div', { class: 'timeline', 'data-device': String(series.device), 'data-memory': series.memory });
    section.append(el('h3', {}, `${accountName(series.device, series.memory)}: peak ${formatSize(series.peak_bytes)}`), holder);
    const chart = new uPlot({
      width,
      height: 240,
      cursor: { drag: { x: true, y: false }, points: { show: false } },
      scales: { x: { time: false } },
      legend: { show: extra.length > 0, live: false },
      axes: [
        { values: (u, ticks) => ticks.map((t) => formatTime(t * 1e9)) },
        // Ticks at multiples of powers of two: 8 MiB, 16 MiB, 24 MiB rather than 9.54 MiB.
        { size: 80, incrs: Array.from({ length: 60 }, (_, i) => 2 ** i), values: (u, ticks) => ticks.map((t) => formatSize(t)) },
      ],
      series: [{}, { label: 'live', stroke: '#2a6', fill: 'rgba(40,170,100,0.15)', width: 1.5,
        paths: uPlot.paths.stepped({ align: 1 }) }, ...extra],
      plugins: [marksPlugin(s, ooms, phases)],
    }, data, holder);
    chart.series_ = s;
    view.charts.push(chart);
    let down = null;
    chart.over.addEventListener('mousedown', (e) => { down = e.clientX; });
    chart.over.addEventListener('mouseup', (e) => {
      if (down === null || Math.abs(e.clientX - down) > 3) return;  // a drag zooms, a click picks
      const rect = chart.over.getBoundingClientRect();
      const x = e.clientX - rect.left;
      // A click on the peak's mark shows the peak: it may lie less than a pixel past the start of a slice.
      const peakX = s.peak_time_ns === undefined ? null : chart.valToPos(s.peak_time_ns / 1e9, 'x');
      const t = peakX !== null && Math.abs(x - peakX) <= 3 ? s.peak_time_ns : chart.posToVal(x, 'x') * 1e9;
      const account = momentsOf(series);
      const moment = account && momentAt(account, t);
      if (moment) showMoment(account, moment, t);
    });
  }
}

function redrawCharts() {
  for (const chart of view.charts) chart.redraw(false, false);
}

// --- the live set at a moment --------------------------------------------------------------------------

let sortKey = 'bytes', sortDescending = true;

function momentStacks() {
  return (report.moments && report.moments.stacks) || {};
}

// clickedNs: the time the click on the timeline stood for, if a click chose the moment.
function showMoment(account, moment, clickedNs = null) {
  view.selected = { account, moment, clickedNs };
  redrawCharts();
  const panel = document.getElementById('liveset');
  panel.setAttribute('data-live-bytes', String(moment.live_bytes));
  panel.setAttribute('data-time-ns', String(moment.time_ns));
  panel.querySelector('.what').textContent =
    `${accountName(account.device, account.memory)} at ${formatTime(moment.time_ns)}: ${formatSize(moment.live_bytes)} live ` +
    `in ${moment.allocations} allocations (the most live between ${formatTime(moment.start_ns)} and ${formatTime(moment.end_ns)})`;
  const stacks = momentStacks();
  const sites = moment.sites.map((s) => ({ ...s, frames: stacks[s.stack] || [] }));
  if (moment.other_stacks > 0)
    sites.push({ bytes: moment.other_bytes, allocations: moment.other_allocations, other: moment.other_stacks, frames: [] });
  drawFlame(panel.querySelector('.flame'), flameTree(sites, moment.live_bytes));
  drawTable(panel.querySelector('.sites'), sites, moment.live_bytes);
}

function drawFlame(holder, tree) {
  holder.replaceChildren();
  const chart = flamegraph()
    .width(Math.max(400, holder.clientWidth || app.clientWidth - 20))
    .cellHeight(18)
    .inverted(true)
    .transitionDuration(0)
    .minFrameSize(2)
    .sort(true)
    .label((d) => `${d.data.name}: ${formatSize(d.value)}`);
  select(holder).datum(tree).call(chart);
}

function drawTable(table, sites, total) {
  const columns = [
    ['bytes', 'Bytes', (s) => formatSize(s.bytes)],
    ['share', 'Share', (s) => `${total ? ((100 * s.bytes) / total).toFixed(1) : '0.0'}%`],
    ['allocations', 'Allocations', (s) => String(s.allocations)],
    ['where', 'Where (innermost first)', (s) => (s.other ? `${s.other} smaller stacks` : compactStack(s.frames))],
  ];
  const value = (s, key) => (key === 'where' ? (s.other ? '' : compactStack(s.frames)) : key === 'share' ? s.bytes : s[key]);
  const sorted = [...sites].sort((a, b) => {
    const x = value(a, sortKey), y = value(b, sortKey);
    const order = x < y ? -1 : x > y ? 1 : 0;
    return sortDescending ? -order : order;
  });
  table.replaceChildren();
  const head = el('tr');
  for (const [key, title] of columns) {
    const mark = key === sortKey ? (sortDescending ? ' ▼' : ' ▲') : '';
    head.append(el('th', { 'data-key': key, onclick: () => {
      if (sortKey === key) sortDescending = !sortDescending;
      else { sortKey = key; sortDescending = key !== 'where'; }
      drawTable(table, sites, total);
    } }, title + mark));
  }
  table.append(head);
  for (const s of sorted) {
    const row = el('tr', { 'data-bytes': String(s.bytes) });
    for (const [key, , text] of columns) {
      const cell = el('td', { class: key }, text(s));
      if (key === 'where' && !s.other) cell.title = s.frames.map(frameText).join('\n');
      row.append(cell);
    }
    table.append(row);
  }
}

function liveSetPanel() {
  if (!report.moments || report.moments.accounts.length === 0) return;
  const m = report.moments;
  app.append(el('section', { id: 'liveset' },
    el('h2', {}, 'What was live'),
    el('p', { class: 'what' }, ''),
    el('p', { class: 'help' }, `As an icicle (callers on top, widths in bytes) and as a table (click a heading to sort). ` +
      `The page keeps at most ${m.max_moments} moments per device and the ${m.sites_per_moment} largest stacks of each.`),
    el('div', { class: 'flame' }),
    el('table', { class: 'sites' })));
  // Start at the highest moment of the first account: its peak.
  const account = m.accounts.find((a) => a.moments.length > 0);
  if (!account) return;
  const highest = account.moments.reduce((a, b) => (b.live_bytes > a.live_bytes ? b : a));
  showMoment(account, highest);
}

// --- forecast ------------------------------------------------------------------------------------------

function stepText(step) {
  return Number(step).toLocaleString('en');
}

// The forecast of each device (docs/reports.md, "Forecast"), with the stacks that keep memory per step.
function forecast() {
  const f = report.forecast;
  if (!f || !f.devices || f.devices.length === 0) return;
  const section = el('section', { id: 'forecast' }, el('h2', {}, 'Forecast'),
    el('p', { class: 'help' }, f.phase ? `A step is an instance of phase ${f.phase}.` : 'A step is a slice of the timeline.'));
  for (const d of f.devices) {
    let text;
    if (d.verdict === 'too-few-steps') text = `no forecast yet: ${d.steps} steps ended, it needs ${f.min_steps}`;
    else if (d.verdict === 'stable')
      text = `memory is stable after step ${stepText(d.stable_after_step)}: no step of the ${stepText(d.steps)} seen held more than ${formatSize(d.stable_peak_bytes)}`;
    else if (d.verdict === 'growing')
      text = `its peak grows ${formatSize(Math.round(d.bytes_per_step))} per step; its memory is not known, so no step is named`;
    else {
      const range = d.oom_step_latest === null ? `step ${stepText(d.oom_step_earliest)} at the earliest, no latest`
        : d.oom_step_earliest === d.oom_step_latest ? 'exactly' : `steps ${stepText(d.oom_step_earliest)} to ${stepText(d.oom_step_latest)}`;
      text = d.oom_in_ns === null
        ? `it ran out of memory after step ${stepText(d.last_step)}, and the line of its peaks puts the failure at ` +
          `step ${stepText(d.oom_step)} (${range}): its peak grew ${formatSize(Math.round(d.bytes_per_step))} per step`
        : `at this rate it runs out of memory at step ${stepText(d.oom_step)} (${range}; in ${formatTime(d.oom_in_ns)}): ` +
          `its peak grows ${formatSize(Math.round(d.bytes_per_step))} per step, of ${formatSize(d.usable_bytes)} it can use`;
    }
    const card = el('div', { class: `forecast verdict-${d.verdict}` }, el('h3', {}, `${accountName(d.device, 'device')}: `, text));
    if (d.stacks.length)
      card.append(el('ul', {}, ...d.stacks.map((s) =>
        el('li', {}, `keeps ${formatSize(Math.round(s.bytes_per_step))} per step: `, el('code', {}, compactStack(s.stack))))));
    section.append(card);
  }
  app.append(section);
}

// --- out-of-memory failures ----------------------------------------------------------------------------

function ooms() {
  const failures = report.ooms || [];
  if (failures.length === 0) return;
  const section = el('section', { id: 'ooms' }, el('h2', {}, `Out-of-memory failures (${failures.length})`));
  for (const f of failures) {
    const evidence = el('table', { class: 'evidence' });
    const rows = [['requested', f.requested_bytes], ['free on the device', f.free_bytes], ['device total', f.total_bytes],
      ['live in this process', f.live_bytes], ['held by this process', f.held_bytes],
      ['held by other processes', f.others_bytes], ['pool reserved', f.pool_reserved_bytes], ['pool used', f.pool_used_bytes]];
    for (const [name, bytes] of rows)
      if (bytes !== undefined) evidence.append(el('tr', {}, el('th', {}, name), el('td', {}, bytes === null ? 'not known' : formatSize(bytes))));
    const card = el('div', { class: 'oom' },
      el('h3', {}, `${f.api} of ${formatSize(f.requested_bytes)} on ${accountName(f.device, 'device')} at ${formatTime(f.time_ns)}: `,
        el('span', { class: `verdict verdict-${f.verdict}` }, f.verdict)),
      el('p', { class: 'finding' }, f.finding), el('p', { class: 'remedy' }, el('b', {}, 'What to do: '), f.remedy),
      evidence,
      el('details', {}, el('summary', {}, 'where it was asked for'), el('ol', {}, ...f.stack.map((fr) => el('li', {}, frameText(fr))))));
    if (f.live_set && f.live_set.length)
      card.append(el('h4', {}, 'live then, by stack'), stackTree(f.live_set, el));
    section.append(card);
  }
  app.append(section);
}

// --- leaks, growth, phases ------------------------------------------------------------------------------

function siteTrees() {
  const leaks = report.leaks && report.leaks.length ? report.leaks : null;
  const liveAtStop = !leaks && report.live_at_stop && report.live_at_stop.length ? report.live_at_stop : null;
  if (leaks || liveAtStop) {
    const sites = leaks || liveAtStop;
    const total = sites.reduce((sum, s) => sum + s.bytes, 0);
    app.append(el('section', { id: 'leaks' },
      el('h2', {}, leaks ? `Leaks: ${formatSize(total)} never freed` : `Live when the trace stops (not necessarily leaks): ${formatSize(total)}`),
      el('p', { class: 'help' }, 'By allocating frame first; open a line for its callers.'), stackTree(sites, el)));
  }
  const growth = report.growth || [];
  if (growth.length) {
    app.append(el('section', { id: 'growth' },
      el('h2', {}, 'Growth: stacks whose live memory kept rising'),
      el('p', { class: 'help' }, 'Bytes: the rise of what the stack held at least, from the first tenth of the trace to the last.'),
      stackTree(growth, el)));
  }
}

function phasesTable() {
  const phases = report.phases || [];
  if (phases.length === 0) return;
  const table = el('table', { class: 'phases' }, el('tr', {},
    ...['phase', '#', 'start', 'end', 'peak', 'allocated', 'left live', 'growth'].map((h) => el('th', {}, h))));
  let rows = 0;
  for (const p of phases)
    for (const i of p.instances) {
      if (++rows > 500) break;
      table.append(el('tr', {}, el('td', {}, p.phase), el('td', {}, String(i.number)), el('td', {}, formatTime(i.start_ns)),
        el('td', {}, i.ended ? formatTime(i.end_ns) : 'never ended'), el('td', {}, formatSize(i.peak_bytes)),
        el('td', {}, formatSize(i.allocated_bytes)), el('td', {}, formatSize(i.left_live_bytes)),
        el('td', {}, i.growth_bytes === null ? '' : (i.growth_bytes < 0 ? '−' : '+') + formatSize(Math.abs(i.growth_bytes)))));
    }
  app.append(el('section', { id: 'phases' }, el('h2', {}, 'Phases'), table));
}

// --- what if: PyTorch's allocator under other settings (the whatif report) ------------------------------

function whatifTable() {
  const w = report.whatif;
  if (!w || w.devices.length === 0) return;
  const section = el('section', { id: 'whatif' }, el('h2', {}, "What if: PyTorch's allocator under other settings"),
    el('p', { class: 'help' }, `Each device's requests replayed by a model of PyTorch's caching allocator (PYTORCH_CUDA_ALLOC_CONF="${w.alloc_conf}").`));
  for (const d of w.devices) {
    const r = d.replay_of_recorded;
    const table = el('table', { class: 'whatif' }, el('tr', {},
      ...['scenario', 'peak reserved', 'peak fragmentation', 'largest free', 'cudaMalloc', 'out of memory', 'fits in'].map((h) => el('th', {}, h))));
    for (const s of d.scenarios) {
      const oom = s.first_out_of_memory;
      table.append(el('tr', {}, el('td', {}, s.name), el('td', {}, formatSize(s.peak_reserved_bytes)),
        el('td', {}, formatSize(s.peak_fragmentation_bytes)), el('td', {}, formatSize(s.largest_free_block_at_worst_bytes)),
        el('td', {}, String(s.cuda_malloc_calls)),
        el('td', {}, oom ? `at request ${oom.request} (${formatSize(oom.size_bytes)})${oom.phase ? ` in ${oom.phase}` : ''}` : 'no'),
        el('td', {}, s.fits_in_bytes === null ? '-' : formatSize(s.fits_in_bytes))));
    }
    const recorded = r.recorded_peak_reserved_bytes === null ? 'not known' : formatSize(r.recorded_peak_reserved_bytes);
    const compared = r.segments_not_compared === null
      ? `${r.matched_segment_events} of ${r.recorded_segment_events} segment events as recorded, peak reserved ${recorded} recorded`
      : `peak reserved ${recorded} by the program's heaps`;
    const verdict = d.recommended ? `Recommended: ${d.recommended}.` : `No scenario fits on the device: ${d.none_fits_because}.`;
    section.append(el('h3', {}, accountName(d.device, 'device')),
      el('p', { class: 'help' }, `Input: ${d.input_text}: ${compared} and ${formatSize(r.replayed_peak_reserved_bytes)} replayed.`),
      table, el('p', {}, verdict));
  }
  app.append(section);
}

function fragmentation() {
  const devices = (report.fragmentation || []).filter((d) => (d.pools && d.pools.length) || (d.heaps && d.heaps.length));
  if (devices.length === 0) return;
  const section = el('section', { id: 'fragmentation' }, el('h2', {}, 'Fragmentation'));
  for (const d of devices) {
    const table = el('table', {}, el('tr', {}, ...['', 'reserved', 'used / allocated', 'unused', 'largest free block'].map((h) => el('th', {}, h))));
    for (const p of d.pools || [])
      table.append(el('tr', {}, el('td', {}, `pool ${p.pool}`), el('td', {}, formatSize(p.reserved_bytes)),
        el('td', {}, formatSize(p.used_bytes)), el('td', {}, formatSize(p.reserved_bytes - p.used_bytes)), el('td', {}, 'not known')));
    for (const h of d.heaps || [])
      table.append(el('tr', {}, el('td', {}, `heap ${h.name || h.base || ''}`), el('td', {}, formatSize(h.reserved_bytes)),
        el('td', {}, formatSize(h.allocated_bytes)), el('td', {}, formatSize(h.external_bytes ?? 0)),
        el('td', {}, formatSize(h.largest_free_block_bytes))));
    section.append(el('h3', {}, accountName(d.device, 'device')), table);
  }
  app.append(section);
}

header();
forecast();
timelines();
liveSetPanel();
ooms();
siteTrees();
phasesTable();
whatifTable();
fragmentation();
view.ready = true;
