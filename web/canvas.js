// The page's figures share this: a canvas sized for the screen's pixel
// ratio, a view from world coordinates (y up) to CSS pixels, handles the
// reader drags on the figure itself, and number formatting for the tables.

/** A figure on a canvas: world ↔ screen, handles, redraw on change. */
export class Figure {
  /**
   * @param canvas the <canvas>
   * @param view {cx, cy, scale}: the world point at the centre, CSS px per unit
   */
  constructor(canvas, view) {
    this.canvas = canvas;
    this.view = { ...view };
    this.handles = [];
    this.dragging = null;
    this.onBackground = null; // (world point, event) on a press that hits no handle
    this.onChange = null;
    this.size = sized(canvas, () => this.draw());
    this.ctx = this.size.ctx;
    canvas.addEventListener('pointerdown', (e) => this.down(e));
    canvas.addEventListener('pointermove', (e) => this.move(e));
    canvas.addEventListener('pointerup', (e) => this.up(e));
    canvas.addEventListener('pointercancel', (e) => this.up(e));
  }

  /** The canvas's size in CSS pixels. */
  get width() {
    return this.size.width;
  }

  get height() {
    return this.size.height;
  }

  /** World [x, y] to CSS pixels within the canvas's content box. */
  toScreen(p) {
    return [this.width / 2 + (p[0] - this.view.cx) * this.view.scale, this.height / 2 - (p[1] - this.view.cy) * this.view.scale];
  }

  toWorld(s) {
    return [this.view.cx + (s[0] - this.width / 2) / this.view.scale, this.view.cy - (s[1] - this.height / 2) / this.view.scale];
  }

  /** A pointer event's position in CSS pixels within the content box. */
  local(e) {
    const r = this.canvas.getBoundingClientRect();
    return [e.clientX - r.left - this.canvas.clientLeft, e.clientY - r.top - this.canvas.clientTop];
  }

  /** Adds a handle: get() → world point, set(world point), radius in px. */
  handle(get, set, radius = 12) {
    const h = { get, set, radius };
    this.handles.push(h);
    return h;
  }

  down(e) {
    const s = this.local(e);
    let best = null;
    let bestD = Infinity;
    for (const h of this.handles) {
      const q = this.toScreen(h.get());
      const d = Math.hypot(q[0] - s[0], q[1] - s[1]);
      if (d <= h.radius && d < bestD) [best, bestD] = [h, d];
    }
    if (best) {
      this.dragging = best;
      this.canvas.setPointerCapture(e.pointerId);
      this.canvas.classList.add('dragging');
      e.preventDefault();
    } else if (this.onBackground) {
      this.onBackground(this.toWorld(s), e);
    }
  }

  move(e) {
    if (!this.dragging) return;
    this.dragging.set(this.toWorld(this.local(e)));
    this.changed();
  }

  up(e) {
    if (!this.dragging) return;
    this.dragging = null;
    this.canvas.classList.remove('dragging');
    if (this.canvas.hasPointerCapture(e.pointerId)) this.canvas.releasePointerCapture(e.pointerId);
  }

  changed() {
    this.draw();
    if (this.onChange) this.onChange();
  }

  /** Clears and calls render(ctx); figures override render. */
  draw() {
    if (!this.width) return;
    this.ctx.clearRect(0, 0, this.width, this.height);
    if (this.render) this.render(this.ctx);
  }

  /** Light grid lines every `step` world units, axes darker. */
  grid(step = 1) {
    const ctx = this.ctx;
    const [x0, y1] = this.toWorld([0, 0]);
    const [x1, y0] = this.toWorld([this.width, this.height]);
    ctx.lineWidth = 1;
    for (let x = Math.ceil(x0 / step) * step; x <= x1; x += step) {
      ctx.strokeStyle = Math.abs(x) < step / 2 ? '#b9bfc9' : '#eceef2';
      const [sx] = this.toScreen([x, 0]);
      line(ctx, [sx, 0], [sx, this.height]);
    }
    for (let y = Math.ceil(y0 / step) * step; y <= y1; y += step) {
      ctx.strokeStyle = Math.abs(y) < step / 2 ? '#b9bfc9' : '#eceef2';
      const [, sy] = this.toScreen([0, y]);
      line(ctx, [0, sy], [this.width, sy]);
    }
  }
}

/**
 * Keeps `canvas`'s pixels matched to its CSS size and the screen's pixel
 * ratio, with the context drawing in CSS pixels; calls `changed()` after
 * every change (the first soon after this returns). Returns {ctx, width,
 * height}, kept current.
 */
export function sized(canvas, changed = () => {}) {
  const size = { ctx: canvas.getContext('2d'), width: 0, height: 0 };
  const measure = () => {
    const dpr = window.devicePixelRatio || 1;
    size.width = canvas.clientWidth;
    size.height = canvas.clientHeight;
    canvas.width = Math.round(size.width * dpr);
    canvas.height = Math.round(size.height * dpr);
    size.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  };
  measure();
  // The observer also reports once when it starts, after the caller has
  // finished setting up: the first `changed()` comes then.
  new ResizeObserver(() => {
    measure();
    changed();
  }).observe(canvas);
  return size;
}

/** A straight stroke between two screen points. */
export function line(ctx, a, b) {
  ctx.beginPath();
  ctx.moveTo(a[0], a[1]);
  ctx.lineTo(b[0], b[1]);
  ctx.stroke();
}

/** A filled (or stroked) dot at a screen point. */
export function dot(ctx, p, r, fill, stroke = null) {
  ctx.beginPath();
  ctx.arc(p[0], p[1], r, 0, 2 * Math.PI);
  if (fill) {
    ctx.fillStyle = fill;
    ctx.fill();
  }
  if (stroke) {
    ctx.strokeStyle = stroke;
    ctx.stroke();
  }
}

/** The colours of the three regions, shared by figures and tables. */
export const REGION_COLOURS = { start: '#2f6fd6', interior: '#1d9a5b', end: '#d9661f', undefined: '#888' };

/** A number for reading: 6 significant digits, or millimetres for large
 * coordinates (the full value in data-v). */
export function short(x) {
  if (Number.isNaN(x)) return '—';
  if (x === 0) return Object.is(x, -0) ? '−0' : '0';
  const a = Math.abs(x);
  // Large coordinates (UTM metres) keep their millimetres.
  const s =
    a >= 1e4 && a < 1e9
      ? String(Number(x.toFixed(3)))
      : a >= 1e-4 && a < 1e4
        ? String(Number(x.toPrecision(6)))
        : x.toExponential(3);
  return s.replace('-', '−');
}

/** A table cell holding a number: short text, full value in data-v and title. */
export function cell(x, cls = '') {
  const full = String(x);
  return `<td class="num ${cls}" data-v="${full}" title="${full}">${short(x)}</td>`;
}
