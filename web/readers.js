// Reading the files dropped on the page, by the rules `segdist snap` reads
// them with, so that the page and the CLI snap the same features under the
// same ids:
// - lines: GeoJSON LineString, MultiLineString, Polygon and MultiPolygon
//   (rings as lines), or CSV rows id,x,y where consecutive rows with the same
//   id form one line;
// - points: GeoJSON Point and MultiPoint, or CSV rows [id,]x,y (the row
//   number, from 0, when there is no id column);
// - ids: the chosen property, else the feature's "id", else its position;
// - CSV coordinate columns found by name (x/y, lon/lat, lng/lat, long/lat,
//   longitude/latitude, easting/northing, any case), delimiter detected.
// Errors name the file and the feature, or the line and column.

/** An error in an input file, with its place. */
export class InputError extends Error {}

const XY_NAMES = [
  ['x', 'y'],
  ['lon', 'lat'],
  ['lng', 'lat'],
  ['long', 'lat'],
  ['longitude', 'latitude'],
  ['easting', 'northing'],
];

/** The format of a file from its name: 'geojson' or 'csv'. */
export function formatOf(name) {
  const ext = name.toLowerCase().split('.').pop();
  if (['geojson', 'json'].includes(ext)) return 'geojson';
  if (['csv', 'tsv', 'txt'].includes(ext)) return 'csv';
  throw new InputError(`${name}: cannot tell the format from the extension (.geojson, .json or .csv)`);
}

function idText(v) {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** A feature's id by the CLI's rule. */
function featureId(f, i, property) {
  if (property) {
    const v = f.properties?.[property];
    if (v !== undefined) return idText(v);
  } else if (f.id !== undefined && f.id !== null) {
    return String(f.id);
  }
  return String(i);
}

function features(name, text) {
  let gj;
  try {
    gj = JSON.parse(text);
  } catch (e) {
    throw new InputError(`${name}: not GeoJSON: ${e.message}`);
  }
  if (gj?.type === 'FeatureCollection') {
    if (!Array.isArray(gj.features)) throw new InputError(`${name}: a FeatureCollection without "features"`);
    return gj.features;
  }
  if (gj?.type === 'Feature') return [gj];
  if (gj && typeof gj.type === 'string') return [{ type: 'Feature', geometry: gj }];
  throw new InputError(`${name}: not GeoJSON: no "type"`);
}

/** A position checked: [x, y]. */
function position(pos, place) {
  if (!Array.isArray(pos) || pos.length < 2) {
    throw new InputError(`${place()}: a position needs x and y`);
  }
  for (const c of pos.slice(0, 2)) {
    if (typeof c !== 'number' || !Number.isFinite(c)) throw new InputError(`${place()}: coordinate ${c} is not a finite number`);
  }
  return [pos[0], pos[1]];
}

/** Line features, flattened for the index. */
export class Lines {
  constructor() {
    this.ids = [];
    this.vertices = [];
    this.partEnds = [];
    this.featureEnds = [];
  }

  push(id, parts, place) {
    parts.forEach((part, k) => {
      if (!Array.isArray(part) || part.length < 2) {
        throw new InputError(`${place()}: part ${k} has ${part?.length ?? 0} vertex(es), a line needs at least 2`);
      }
      part.forEach((pos, v) => this.vertices.push(...position(pos, () => `${place()}: part ${k}, vertex ${v}`)));
      this.partEnds.push(this.vertices.length / 2);
    });
    this.featureEnds.push(this.partEnds.length);
    this.ids.push(id);
  }

  /** The parts of every feature as arrays of [x, y] (for drawing). */
  *parts() {
    let start = 0;
    for (const end of this.partEnds) {
      const part = [];
      for (let v = start; v < end; v++) part.push([this.vertices[2 * v], this.vertices[2 * v + 1]]);
      yield part;
      start = end;
    }
  }
}

/** Reads lines from a file's text. */
export function readLines(name, text, { idProperty = null } = {}) {
  const lines = new Lines();
  if (formatOf(name) === 'geojson') {
    features(name, text).forEach((f, i) => {
      const place = () => `${name}: feature ${i}`;
      const g = f?.geometry;
      if (!g) throw new InputError(`${place()}: no geometry`);
      let parts;
      switch (g.type) {
        case 'LineString':
          parts = [g.coordinates];
          break;
        case 'MultiLineString':
        case 'Polygon':
          parts = g.coordinates;
          break;
        case 'MultiPolygon':
          parts = (g.coordinates ?? []).flat(1);
          break;
        default:
          throw new InputError(`${place()}: a ${g.type} where lines are expected`);
      }
      if (!Array.isArray(parts)) throw new InputError(`${place()}: no coordinates`);
      lines.push(featureId(f, i, idProperty), parts, place);
    });
  } else {
    const { header, rows, cols } = csvTable(name, text, true);
    let current = null;
    let run = [];
    let first = 0;
    const flush = () => {
      if (current !== null) lines.push(current, [run], () => `${name}: line ${first} (line ${JSON.stringify(current)})`);
      run = [];
    };
    for (const { fields, line } of rows) {
      const id = fields[cols.id] ?? '';
      const p = csvPoint(name, header, cols, fields, line);
      if (id !== current) {
        flush();
        current = id;
        first = line;
      }
      run.push(p);
    }
    flush();
  }
  return lines;
}

/** Reads points from a file's text: {ids, coords (flat)}. */
export function readPoints(name, text, { idProperty = null } = {}) {
  const ids = [];
  const coords = [];
  if (formatOf(name) === 'geojson') {
    features(name, text).forEach((f, i) => {
      const place = () => `${name}: feature ${i}`;
      const g = f?.geometry;
      if (!g) throw new InputError(`${place()}: no geometry`);
      const id = featureId(f, i, idProperty);
      let positions;
      if (g.type === 'Point') positions = [g.coordinates];
      else if (g.type === 'MultiPoint') positions = g.coordinates ?? [];
      else throw new InputError(`${place()}: a ${g.type} where points are expected`);
      for (const pos of positions) {
        coords.push(...position(pos, place));
        ids.push(id);
      }
    });
  } else {
    const { header, rows, cols } = csvTable(name, text, false);
    rows.forEach(({ fields, line }, row) => {
      coords.push(...csvPoint(name, header, cols, fields, line));
      ids.push(cols.id === null ? String(row) : (fields[cols.id] ?? ''));
    });
  }
  return { ids, coords };
}

/** The most frequent of , ; tab | on the first line. */
function sniff(firstLine) {
  let best = ',';
  let most = 0;
  for (const d of [',', ';', '\t', '|']) {
    const n = firstLine.split(d).length - 1;
    if (n > most) [best, most] = [d, n];
  }
  return best;
}

/** Splits CSV text into records (RFC 4180 quotes), each with its line number. */
function csvRecords(name, text, delim) {
  const records = [];
  let fields = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else {
        if (c === '\n') line++;
        field += c;
      }
    } else if (c === '"' && field === '') quoted = true;
    else if (c === delim) {
      fields.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      fields.push(field);
      if (!(fields.length === 1 && fields[0] === '')) records.push({ fields, line: start });
      fields = [];
      field = '';
      line++;
      start = line;
    } else field += c;
  }
  if (quoted) throw new InputError(`${name}: line ${start}: a quote is not closed`);
  if (field !== '' || fields.length) {
    fields.push(field);
    records.push({ fields, line: start });
  }
  return records;
}

function csvTable(name, text, needId) {
  const records = csvRecords(name, text, sniff(text.split('\n', 1)[0]));
  if (!records.length) throw new InputError(`${name}: empty, no header line`);
  const header = records[0].fields.map((h) => h.trim());
  const pos = (c) => header.findIndex((h) => h.toLowerCase() === c);
  const id = header.indexOf('id');
  if (needId && id < 0) throw new InputError(`${name}: line 1: no column "id" (lines need an id column)`);
  const pair = XY_NAMES.find(([x, y]) => pos(x) >= 0 && pos(y) >= 0);
  if (!pair) {
    throw new InputError(`${name}: line 1: no coordinate columns: none of ${XY_NAMES.map((p) => p.join('/')).join(', ')}`);
  }
  const rows = records.slice(1);
  for (const r of rows) {
    if (r.fields.length !== header.length) {
      throw new InputError(`${name}: line ${r.line}: ${r.fields.length} fields where the header has ${header.length}`);
    }
  }
  return { header, rows, cols: { id: id < 0 ? null : id, x: pos(pair[0]), y: pos(pair[1]) } };
}

/** A CSV row's point: numbers as Rust reads them (no hex, no empty). */
function csvPoint(name, header, cols, fields, line) {
  return [cols.x, cols.y].map((i) => {
    const raw = fields[i].trim();
    const v = /^[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|inf|infinity|nan)$/i.test(raw) ? Number(raw.replace(/^\+/, '').replace(/^(-?)inf(inity)?$/i, '$1Infinity')) : NaN;
    const place = `${name}: line ${line}, column ${i + 1} (${header[i]})`;
    if (Number.isNaN(v) && !/^[+-]?nan$/i.test(raw)) throw new InputError(`${place}: cannot read ${JSON.stringify(fields[i])} as a number`);
    if (!Number.isFinite(v)) throw new InputError(`${place}: ${JSON.stringify(raw)} is not a finite number`);
    return v;
  });
}
