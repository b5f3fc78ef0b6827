// Exact against textbook, zoomed in: points on a line across a 12 m road
// segment at UTM-sized coordinates (x ≈ 500 km, y ≈ 6,700 km), a few
// nanometres to a few centimetres either side of it. The true distance is
// a V; segdist draws the V; the textbook formula, whose closest point is
// rounded to the ~1 nm spacing of doubles out there before it subtracts,
// wanders around it.
import { short, sized } from '../canvas.js';

const A = [500000.1, 6700000.3];
const B = [500010.7, 6700004.9];
const SAMPLES = 241;

export function wanderFigure(sd, root) {
  const canvas = root.querySelector('canvas');
  const slider = root.querySelector('input[type=range]');
  const label = root.querySelector('[data-role=width]');
  const stats = root.querySelector('[data-role=stats]');
  const state = { exponent: Number(slider.value), samples: [] };
  const size = sized(canvas, () => draw());
  const ctx = size.ctx;

  // The crossing: 40 % along, straight across.
  const len = Math.hypot(B[0] - A[0], B[1] - A[1]);
  const n = [-(B[1] - A[1]) / len, (B[0] - A[0]) / len];
  const m = [A[0] + 0.4 * (B[0] - A[0]), A[1] + 0.4 * (B[1] - A[1])];


  function compute() {
    const w = 10 ** state.exponent;
    state.samples = [];
    for (let k = 0; k < SAMPLES; k++) {
      const s = w * (2 * k / (SAMPLES - 1) - 1);
      const p = [m[0] + s * n[0], m[1] + s * n[1]];
      const r = sd.project2(A, B, p);
      state.samples.push({ s, p, exact: r.segment.d, textbook: r.textbook.d, ulps: sd.ulps(r.segment.d, r.textbook.d) });
    }
  }

  function draw() {
    if (!size.width) return;
    ctx.clearRect(0, 0, size.width, size.height);
    const w = 10 ** state.exponent;
    const pad = { l: 56, r: 12, t: 12, b: 28 };
    const top = Math.max(w, ...state.samples.map((q) => q.textbook)) * 1.08;
    const X = (k) => pad.l + (k / (SAMPLES - 1)) * (size.width - pad.l - pad.r);
    const Y = (d) => size.height - pad.b - (d / top) * (size.height - pad.t - pad.b);
    ctx.strokeStyle = '#ccd';
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(pad.l, pad.t);
    ctx.lineTo(pad.l, size.height - pad.b);
    ctx.lineTo(size.width - pad.r, size.height - pad.b);
    ctx.stroke();
    ctx.fillStyle = '#556';
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillText(`${metres(top)}`, 4, pad.t + 8);
    ctx.fillText('0', pad.l - 14, size.height - pad.b + 3);
    ctx.fillText(`−${metres(w)}`, pad.l, size.height - 8);
    ctx.fillText('across the segment →', size.width / 2 - 50, size.height - 8);
    const right = `+${metres(w)}`;
    ctx.fillText(right, size.width - pad.r - ctx.measureText(right).width, size.height - 8);
    // The textbook's answers: dots, red where more than an ulp off.
    state.samples.forEach((q, k) => {
      ctx.fillStyle = q.ulps > 1 ? '#d33b2f' : '#e6a19a';
      ctx.fillRect(X(k) - 1.5, Y(q.textbook) - 1.5, 3, 3);
    });
    // segdist's: a line.
    ctx.strokeStyle = '#1d6fd6';
    ctx.lineWidth = 2;
    ctx.beginPath();
    state.samples.forEach((q, k) => (k ? ctx.lineTo(X(k), Y(q.exact)) : ctx.moveTo(X(k), Y(q.exact))));
    ctx.stroke();
  }

  function update() {
    state.exponent = Number(slider.value);
    compute();
    label.textContent = metres(10 ** state.exponent);
    const off = state.samples.filter((q) => q.ulps > 1);
    const worst = state.samples.reduce((a, q) => (q.ulps > a.ulps ? q : a), state.samples[0]);
    stats.innerHTML =
      `${off.length} of ${SAMPLES} textbook distances are more than 1 ulp from segdist's; ` +
      `the worst is off by <b>${short(Math.abs(worst.textbook - worst.exact))} m</b> ` +
      `(<b data-role="worst-ulps">${short(worst.ulps)}</b> ulps) at ${short(worst.exact)} m from the road.`;
    draw();
  }

  slider.addEventListener('input', update);
  update();
  return { state, inputs: { a: A, b: B } };
}

function metres(x) {
  if (x >= 1) return `${short(x)} m`;
  if (x >= 1e-3) return `${short(x * 1e3)} mm`;
  if (x >= 1e-6) return `${short(x * 1e6)} µm`;
  return `${short(x * 1e9)} nm`;
}
