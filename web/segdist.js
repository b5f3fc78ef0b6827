// segdist in the browser: loads pkg/segdist.wasm (crates/segdist-wasm) and
// wraps its plain exports (numbers and f64 arrays in the module's memory)
// in a small JavaScript API. Every number the page shows comes from here.

const REGIONS = ['start', 'interior', 'end', 'undefined'];

/** Loads the module; resolves to a {@link Segdist}. */
export async function load(url = new URL('./pkg/segdist.wasm', import.meta.url)) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot load ${url}: HTTP ${response.status} (build it with scripts/page.sh build)`);
  const { instance } = await WebAssembly.instantiateStreaming(response, {});
  return new Segdist(instance.exports, Number(response.headers.get('content-length')) || 0);
}

export class Segdist {
  constructor(exports, bytes) {
    this.x = exports;
    /** The .wasm's size in bytes, as served. */
    this.bytes = bytes;
    // One scratch buffer for the small calls: 32 f64 (inputs in the first
    // 16, outputs from the start or, when inputs are there, from the 17th).
    this.scratch = exports.sd_alloc(32 * 8);
  }

  // Views are made after each call: a call may grow memory, which detaches
  // every earlier view.
  f64(ptr, n) {
    return new Float64Array(this.x.memory.buffer, ptr, n);
  }

  text() {
    const bytes = new Uint8Array(this.x.memory.buffer, this.x.sd_text_ptr(), this.x.sd_text_len());
    return new TextDecoder().decode(bytes);
  }

  /** Copies `values` (numbers) into a fresh buffer: [ptr, bytes]. */
  put(values, Type = Float64Array) {
    const bytes = Math.max(values.length * Type.BYTES_PER_ELEMENT, 8);
    const ptr = this.x.sd_alloc(bytes);
    new Type(this.x.memory.buffer, ptr, values.length).set(values);
    return [ptr, bytes];
  }

  /**
   * The point of segment a–b (and of the infinite line through them)
   * closest to p, by segdist's accurate kernel and by the textbook formula.
   */
  project2(a, b, p) {
    this.x.sd_project2(a[0], a[1], b[0], b[1], p[0], p[1], this.scratch);
    const r = Array.from(this.f64(this.scratch, 16));
    return {
      segment: { q: [r[0], r[1]], t: r[2], d: r[3], d2: r[4], region: REGIONS[r[5]] },
      line: { q: [r[6], r[7]], t: r[8], d: r[9], d2: r[10] },
      textbook: { q: [r[11], r[12]], t: r[13], d: r[14], d2: r[15] },
    };
  }

  /** The 3D closest points on segment a–b and on its line. */
  project3(a, b, p) {
    this.f64(this.scratch, 9).set([...a, ...b, ...p]);
    const out = this.scratch + 16 * 8;
    this.x.sd_project3(this.scratch, out);
    const r = Array.from(this.f64(out, 13));
    return {
      segment: { q: r.slice(0, 3), t: r[3], d: r[4], d2: r[5], region: REGIONS[r[6]] },
      line: { q: r.slice(7, 10), t: r[10], d: r[11], d2: r[12] },
    };
  }

  /** How many doubles lie between x and y. */
  ulps(x, y) {
    return this.x.sd_ulps(x, y);
  }

  /** A game level from walls [[ax, ay, bx, by], ...]. */
  level(walls) {
    const [ptr, bytes] = this.put(walls.flat());
    const handle = this.x.sd_level_new(ptr, walls.length);
    this.x.sd_free(ptr, bytes);
    if (!handle) throw new Error(this.text());
    return new Level(this, handle);
  }

  /**
   * An index over lon/lat line features: `vertices` flat [lon, lat, ...],
   * `partEnds` and `featureEnds` as in segdist-wasm's `Snapper::new`.
   */
  snapper(vertices, partEnds, featureEnds) {
    const [v, vb] = this.put(vertices);
    const [p, pb] = this.put(partEnds, Uint32Array);
    const [f, fb] = this.put(featureEnds, Uint32Array);
    const handle = this.x.sd_snapper_new(v, vertices.length / 2, p, partEnds.length, f, featureEnds.length);
    this.x.sd_free(v, vb);
    this.x.sd_free(p, pb);
    this.x.sd_free(f, fb);
    if (!handle) throw new Error(this.text());
    return new Snapper(this, handle);
  }

  /** Numbers as `segdist snap` writes them: `columns` per row. */
  formatRows(values, columns) {
    const [ptr, bytes] = this.put(values);
    this.x.sd_format_rows(ptr, values.length, columns);
    this.x.sd_free(ptr, bytes);
    return this.text();
  }
}

/** Walls a circle is pushed out of and slides along. */
export class Level {
  constructor(sd, handle) {
    this.sd = sd;
    this.handle = handle;
  }

  /** The circle pushed out of every wall it overlaps: {p, free}. */
  pushOut(p, radius) {
    const free = this.sd.x.sd_level_push_out(this.handle, p[0], p[1], radius, this.sd.scratch);
    const r = this.sd.f64(this.sd.scratch, 2);
    return { p: [r[0], r[1]], free: free === 1 };
  }

  /** The walls the circle touches: [{q, normal, depth}] (at most 3 kept). */
  contacts(p, radius) {
    const n = this.sd.x.sd_level_contacts(this.handle, p[0], p[1], radius, this.sd.scratch, 3);
    const r = this.sd.f64(this.sd.scratch, 15);
    const out = [];
    for (let i = 0; i < Math.min(n, 3); i++) {
      out.push({ q: [r[5 * i], r[5 * i + 1]], normal: [r[5 * i + 2], r[5 * i + 3]], depth: r[5 * i + 4] });
    }
    return { count: n, contacts: out };
  }

  /** The circle moved by `motion`, sliding along walls: {p, hits}. */
  slide(p, radius, motion) {
    const hits = this.sd.x.sd_level_slide(this.handle, p[0], p[1], radius, motion[0], motion[1], this.sd.scratch);
    const r = this.sd.f64(this.sd.scratch, 2);
    return { p: [r[0], r[1]], hits };
  }

  free() {
    this.sd.x.sd_level_free(this.handle);
    this.handle = 0;
  }
}

/** Columns of {@link Snapper#snap}'s rows. */
export const SNAP_COLUMNS = 9;

/** Lon/lat lines to snap points to, on the WGS84 ellipsoid. */
export class Snapper {
  constructor(sd, handle) {
    this.sd = sd;
    this.handle = handle;
  }

  /**
   * The nearest line of every point (flat [lon, lat, ...]): a
   * Float64Array of 9 numbers per point (feature or -1, part, segment,
   * distance m, lon, lat, t, along m, fraction).
   */
  snap(points, maxDistance = Infinity) {
    const n = points.length / 2;
    const [p, pb] = this.sd.put(points);
    const outBytes = Math.max(n * SNAP_COLUMNS * 8, 8);
    const out = this.sd.x.sd_alloc(outBytes);
    const status = this.sd.x.sd_snap(this.handle, p, n, maxDistance, out);
    let rows = null;
    if (status === 0) rows = Float64Array.from(this.sd.f64(out, n * SNAP_COLUMNS));
    const error = status === 0 ? null : this.sd.text();
    this.sd.x.sd_free(p, pb);
    this.sd.x.sd_free(out, outBytes);
    if (error) throw new Error(error);
    return rows;
  }

  free() {
    this.sd.x.sd_snapper_free(this.handle);
    this.handle = 0;
  }
}
