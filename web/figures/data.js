// Your own data: lines (GeoJSON or CSV) and points (CSV or GeoJSON) are
// read in the page, snapped on the WGS84 ellipsoid by segdist's lon/lat
// index, drawn, and offered as CSV and GeoJSON written exactly as
// `segdist snap` writes them. Nothing leaves the browser.
import { InputError, readLines, readPoints } from '../readers.js';
import { SNAP_COLUMNS } from '../segdist.js';
import { short, sized } from '../canvas.js';

const CREDIT = '© OpenStreetMap contributors, data available under the Open Database License (ODbL)';

/** A CSV field, quoted only when it must be (as the CLI writes it). */
function field(s) {
  return /[,"\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/**
 * Whether a dropped file holds lines: GeoJSON with line or polygon
 * geometries, or CSV with an id column where consecutive rows share an id
 * (a run of rows per line); anything else is taken as points.
 */
export function looksLikeLines(name, text) {
  const head = text.slice(0, 20000);
  if (!name.toLowerCase().endsWith('.csv')) return /"(Multi)?(LineString|Polygon)"/.test(head);
  const rows = head.split(/\r?\n/).slice(0, 200).map((l) => l.split(/[,;\t|]/));
  const id = rows[0].findIndex((h) => h.trim() === 'id');
  return id >= 0 && rows.slice(2).some((r, i) => r.length > id && r[id] === rows[i + 1][id]);
}

export function dataFigure(sd, root) {
  const canvas = root.querySelector('canvas');
  const status = root.querySelector('[data-role=status]');
  const credit = root.querySelector('[data-role=credit]');
  const inputs = {
    lines: root.querySelector('input[name=lines]'),
    points: root.querySelector('input[name=points]'),
    idProperty: root.querySelector('input[name=id-property]'),
    maxDistance: root.querySelector('input[name=max-distance]'),
  };
  const links = { csv: root.querySelector('a[data-role=csv]'), geojson: root.querySelector('a[data-role=geojson]') };
  const state = { files: { lines: null, points: null }, result: null, error: null, view: null };
  const size = sized(canvas, () => draw());
  const ctx = size.ctx;


  function say(text, error = false) {
    status.textContent = text;
    status.classList.toggle('error', error);
  }

  /** Reads, indexes, snaps; returns the result or throws an InputError. */
  function snap({ lines, points }) {
    const idProperty = inputs.idProperty.value.trim() || null;
    const raw = inputs.maxDistance.value.trim();
    const maxDistance = raw === '' ? Infinity : Number(raw);
    if (!(maxDistance >= 0)) throw new InputError(`the largest distance must be a number >= 0, not ${JSON.stringify(raw)}`);
    const t0 = performance.now();
    const L = readLines(lines.name, lines.text, { idProperty });
    const P = readPoints(points.name, points.text, { idProperty });
    const t1 = performance.now();
    let index;
    try {
      index = sd.snapper(L.vertices, L.partEnds, L.featureEnds);
    } catch (e) {
      throw new InputError(`${lines.name}: ${e.message}`);
    }
    let rows;
    try {
      rows = index.snap(P.coords, maxDistance);
    } catch (e) {
      throw new InputError(`${points.name}: ${e.message}`);
    } finally {
      index.free();
    }
    const t2 = performance.now();
    return { lines: L, points: P, rows, times: { read: t1 - t0, snap: t2 - t1 } };
  }

  /** The CLI's CSV and GeoJSON for a result. */
  function outputs(r) {
    const n = r.points.ids.length;
    const nums = [];
    for (let i = 0; i < n; i++) for (let c = 3; c < SNAP_COLUMNS; c++) nums.push(r.rows[i * SNAP_COLUMNS + c]);
    const text = sd.formatRows(nums, SNAP_COLUMNS - 3).split('\n');
    let csv = 'point_id,line_id,part,segment,distance_m,lon,lat,t,along_m,fraction\n';
    const features = [];
    for (let i = 0; i < n; i++) {
      const row = r.rows.subarray(i * SNAP_COLUMNS, (i + 1) * SNAP_COLUMNS);
      const id = r.points.ids[i];
      if (row[0] < 0) {
        csv += `${field(id)},,,,,,,,,\n`;
        features.push(`{"type":"Feature","geometry":null,"properties":{"point_id":${JSON.stringify(id)},"line_id":null}}`);
        continue;
      }
      const lineId = r.lines.ids[row[0]];
      csv += `${field(id)},${field(lineId)},${row[1]},${row[2]},${text[i]}\n`;
      const [distance, lon, lat, t, along, fraction] = text[i].split(',');
      features.push(
        `{"type":"Feature","geometry":{"type":"Point","coordinates":[${lon},${lat}]},"properties":{"point_id":${JSON.stringify(id)},"rank":1,"line_id":${JSON.stringify(lineId)},"part":${row[1]},"segment":${row[2]},"distance_m":${distance},"t":${t},"along_m":${along},"fraction":${fraction}}}`,
      );
    }
    const geojson = `{"type":"FeatureCollection","features":[\n${features.join(',\n')}\n]}\n`;
    return { csv, geojson };
  }

  function run() {
    if (!state.files.lines || !state.files.points) {
      say(`Choose ${state.files.lines ? 'a points file' : 'a lines file'} too.`);
      return;
    }
    try {
      state.result = snap(state.files);
      state.error = null;
    } catch (e) {
      state.result = null;
      state.error = e.message;
      say(e instanceof InputError ? e.message : `unexpected: ${e.message}`, true);
      for (const a of Object.values(links)) a.hidden = true;
      draw();
      return;
    }
    const r = state.result;
    const out = outputs(r);
    state.outputs = out;
    for (const [kind, type] of [
      ['csv', 'text/csv'],
      ['geojson', 'application/geo+json'],
    ]) {
      const a = links[kind];
      if (a.href) URL.revokeObjectURL(a.href);
      a.href = URL.createObjectURL(new Blob([out[kind]], { type }));
      a.download = `snapped.${kind}`;
      a.hidden = false;
    }
    const d = [];
    for (let i = 0; i < r.points.ids.length; i++) if (r.rows[i * SNAP_COLUMNS] >= 0) d.push(r.rows[i * SNAP_COLUMNS + 3]);
    d.sort((x, y) => x - y);
    const median = d.length ? d[Math.floor(d.length / 2)] : NaN;
    say(
      `${r.points.ids.length.toLocaleString('en')} points snapped to ${r.lines.ids.length.toLocaleString('en')} lines ` +
        `(${(r.lines.vertices.length / 2 - r.lines.partEnds.length).toLocaleString('en')} segments) on the WGS84 ellipsoid ` +
        `in ${r.times.snap.toFixed(0)} ms (index and queries; reading ${r.times.read.toFixed(0)} ms). ` +
        `Distance: median ${short(median)} m, largest ${short(d.length ? d[d.length - 1] : NaN)} m` +
        (d.length < r.points.ids.length ? `; ${r.points.ids.length - d.length} with nothing within the largest distance.` : '.'),
    );
    state.view = null;
    draw();
  }

  function fit(r) {
    let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
    const grow = (x, y) => ([x0, y0, x1, y1] = [Math.min(x0, x), Math.min(y0, y), Math.max(x1, x), Math.max(y1, y)]);
    for (let i = 0; i < r.lines.vertices.length; i += 2) grow(r.lines.vertices[i], r.lines.vertices[i + 1]);
    for (let i = 0; i < r.points.coords.length; i += 2) grow(r.points.coords[i], r.points.coords[i + 1]);
    const k = Math.cos((((y0 + y1) / 2) * Math.PI) / 180);
    const scale = Math.min((size.width - 20) / Math.max((x1 - x0) * k, 1e-12), (size.height - 20) / Math.max(y1 - y0, 1e-12));
    return { cx: (x0 + x1) / 2, cy: (y0 + y1) / 2, k, scale };
  }

  function draw() {
    if (!size.width) return;
    ctx.fillStyle = '#f7f7f4';
    ctx.fillRect(0, 0, size.width, size.height);
    const r = state.result;
    if (!r) return;
    const v = (state.view ??= fit(r));
    const S = (x, y) => [size.width / 2 + (x - v.cx) * v.k * v.scale, size.height / 2 - (y - v.cy) * v.scale];
    ctx.strokeStyle = '#9aa0a6';
    ctx.lineWidth = 1.2;
    for (const part of r.lines.parts()) {
      ctx.beginPath();
      part.forEach(([x, y], i) => (i ? ctx.lineTo(...S(x, y)) : ctx.moveTo(...S(x, y))));
      ctx.stroke();
    }
    // Points and their connectors, coloured by distance (blue near, red far).
    for (let i = 0; i < r.points.ids.length; i++) {
      const P = S(r.points.coords[2 * i], r.points.coords[2 * i + 1]);
      const row = r.rows.subarray(i * SNAP_COLUMNS, (i + 1) * SNAP_COLUMNS);
      if (row[0] < 0) {
        ctx.fillStyle = '#888';
        ctx.fillRect(P[0] - 1.5, P[1] - 1.5, 3, 3);
        continue;
      }
      const hue = 220 - Math.min(row[3] / 50, 1) * 220;
      ctx.strokeStyle = ctx.fillStyle = `hsl(${hue} 75% 45%)`;
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(...P);
      ctx.lineTo(...S(row[4], row[5]));
      ctx.stroke();
      ctx.fillRect(P[0] - 1.5, P[1] - 1.5, 3, 3);
    }
  }

  // Wheel zooms about the pointer; dragging pans.
  canvas.addEventListener('wheel', (e) => {
    if (!state.view) return;
    e.preventDefault();
    const v = state.view;
    const f = Math.exp(-e.deltaY * 0.0015);
    const [mx, my] = [e.offsetX - size.width / 2, e.offsetY - size.height / 2];
    v.cx += (mx / (v.k * v.scale)) * (1 - 1 / f);
    v.cy -= (my / v.scale) * (1 - 1 / f);
    v.scale *= f;
    draw();
  });
  let pan = null;
  canvas.addEventListener('pointerdown', (e) => (pan = [e.clientX, e.clientY]));
  canvas.addEventListener('pointerup', () => (pan = null));
  canvas.addEventListener('pointermove', (e) => {
    if (!pan || !state.view) return;
    state.view.cx -= (e.clientX - pan[0]) / (state.view.k * state.view.scale);
    state.view.cy += (e.clientY - pan[1]) / state.view.scale;
    pan = [e.clientX, e.clientY];
    draw();
  });

  async function readFile(kind, file) {
    state.files[kind] = { name: file.name, text: await file.text() };
    credit.hidden = true;
  }
  for (const kind of ['lines', 'points']) {
    inputs[kind].addEventListener('change', async () => {
      if (inputs[kind].files[0]) await readFile(kind, inputs[kind].files[0]);
      run();
    });
  }
  // Drop one file or both at once: each is taken as lines or points by
  // what it holds (looksLikeLines).
  root.addEventListener('dragover', (e) => e.preventDefault());
  root.addEventListener('drop', async (e) => {
    e.preventDefault();
    for (const file of e.dataTransfer.files) {
      const text = await file.text();
      state.files[looksLikeLines(file.name, text) ? 'lines' : 'points'] = { name: file.name, text };
    }
    credit.hidden = true;
    run();
  });
  inputs.idProperty.addEventListener('change', run);
  inputs.maxDistance.addEventListener('change', run);

  async function example() {
    say('Loading the Helsinki example…');
    state.result = null;
    const get = async (name) => {
      const res = await fetch(new URL(`../pkg/${name}`, import.meta.url));
      if (!res.ok) throw new Error(`cannot load ${name}: HTTP ${res.status}`);
      return { name, text: await res.text() };
    };
    [state.files.lines, state.files.points] = await Promise.all([get('roads.geojson'), get('points.geojson')]);
    inputs.idProperty.value = 'osm_id';
    credit.hidden = false;
    credit.textContent = `Helsinki roads and points: ${CREDIT}.`;
    run();
  }
  root.querySelector('[data-action=example]').addEventListener('click', example);
  return { state, example, run, ready: example() };
}
