// The seed's 3D example: the line (-3,-2,-1)-(1,2,3), its eight points and
// their closest points on the segment, in a turning perspective view (drag
// to turn it yourself), with segdist's numbers in a table.
import { REGION_COLOURS, cell, dot, line, sized } from '../canvas.js';

const A = [-3, -2, -1];
const B = [1, 2, 3];
const POINTS = [
  [7, -2, -1],
  [-4, -7, -8],
  [7, 8, 5],
  [1, 5, -5],
  [-6, 5, 7],
  [1, 6, 8],
  [-7, -10, -4],
  [5, 5, 3],
];

export function spaceFigure(sd, root) {
  const canvas = root.querySelector('canvas');
  const state = { yaw: 0.6, pitch: 0.35, spinning: true, results: POINTS.map((p) => sd.project3(A, B, p)) };
  const size = sized(canvas); // drawn every frame
  const ctx = size.ctx;


  // Camera on a sphere around the origin, y up (as the seed's OpenGL view).
  const project = (p) => {
    const [cy, sy, cp, sp] = [Math.cos(state.yaw), Math.sin(state.yaw), Math.cos(state.pitch), Math.sin(state.pitch)];
    const x1 = cy * p[0] + sy * p[2];
    const z1 = -sy * p[0] + cy * p[2];
    const y2 = cp * p[1] - sp * z1;
    const z2 = sp * p[1] + cp * z1;
    const dist = 34;
    const f = (Math.min(size.width, size.height) * 1.3) / (dist - z2);
    return [size.width / 2 + x1 * f, size.height / 2 - y2 * f, z2];
  };

  let drag = null;
  canvas.addEventListener('pointerdown', (e) => {
    drag = [e.clientX, e.clientY];
    state.spinning = false;
    canvas.setPointerCapture(e.pointerId);
  });
  canvas.addEventListener('pointermove', (e) => {
    if (!drag) return;
    state.yaw += (e.clientX - drag[0]) * 0.01;
    state.pitch = Math.max(-1.4, Math.min(1.4, state.pitch + (e.clientY - drag[1]) * 0.01));
    drag = [e.clientX, e.clientY];
  });
  canvas.addEventListener('pointerup', () => (drag = null));

  function draw() {
    ctx.clearRect(0, 0, size.width, size.height);
    // Axes: x red, y green, z blue, as in the seed's DrawOrigin.
    const O = project([0, 0, 0]);
    for (const [axis, colour] of [
      [[4, 0, 0], '#d33'],
      [[0, 4, 0], '#2a2'],
      [[0, 0, 4], '#33d'],
    ]) {
      ctx.strokeStyle = colour;
      ctx.lineWidth = 1.5;
      line(ctx, O, project(axis));
    }
    // Painter's order: far things first.
    const items = [];
    POINTS.forEach((p, i) => {
      const r = state.results[i];
      const P = project(p);
      const Q = project(r.segment.q);
      items.push({ z: (P[2] + Q[2]) / 2, draw: () => drawPoint(P, Q, r.segment.region, i) });
    });
    const SA = project(A);
    const SB = project(B);
    items.push({
      z: (SA[2] + SB[2]) / 2,
      draw: () => {
        ctx.strokeStyle = '#b13fb1';
        ctx.lineWidth = 4;
        line(ctx, SA, SB);
      },
    });
    items.sort((u, v) => u.z - v.z).forEach((it) => it.draw());
  }

  function drawPoint(P, Q, region, i) {
    ctx.strokeStyle = '#777';
    ctx.lineWidth = 1;
    line(ctx, P, Q);
    dot(ctx, Q, 4.5, REGION_COLOURS[region]);
    dot(ctx, P, 5, '#13a8b8');
    ctx.fillStyle = '#333';
    ctx.font = '12px system-ui, sans-serif';
    ctx.fillText(String(i + 1), P[0] + 7, P[1] - 6);
  }

  const table = root.querySelector('tbody');
  table.innerHTML = POINTS.map((p, i) => {
    const s = state.results[i].segment;
    return `<tr><td>${i + 1}</td><td>(${p.join(', ')})</td>
      <td><span class="region" style="background:${REGION_COLOURS[s.region]}">${s.region}</span></td>
      ${cell(s.t, 't')}${cell(s.q[0], 'qx')}${cell(s.q[1], 'qy')}${cell(s.q[2], 'qz')}${cell(s.d, 'd')}${cell(s.d2, 'd2')}</tr>`;
  }).join('');

  let last = performance.now();
  const frame = (now) => {
    // The seed turns its camera 45° a second.
    if (state.spinning) state.yaw += ((now - last) / 1000) * (Math.PI / 4);
    last = now;
    draw();
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  return { state, inputs: { a: A, b: B, points: POINTS } };
}
