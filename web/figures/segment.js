// The seeds' visual unit test, live: a segment a–b, points you drag, and
// for each point the closest point on the segment (coloured by region) and
// on the infinite line, with t, d and d² from segdist's accurate kernel and
// the textbook formula's answer beside it, off by so many ulps.
import { Figure, REGION_COLOURS, cell, dot, line, short } from '../canvas.js';

// The seed's example seen from above: its line (-3,-2,-1)-(1,2,3) and its
// eight points with z dropped.
const START = {
  a: [-3, -2],
  b: [1, 2],
  points: [
    [7, -2],
    [-4, -7],
    [7, 8],
    [1, 5],
    [-6, 5],
    [1, 6],
    [-7, -10],
    [5, 5],
  ],
};

export function segmentFigure(sd, root) {
  const canvas = root.querySelector('canvas');
  const table = root.querySelector('tbody');
  const state = { a: [...START.a], b: [...START.b], points: START.points.map((p) => [...p]), results: [], offset: [0, 0] };
  // The inputs as computed: the figure's coordinates plus the offset (UTM
  // coordinates when the box is ticked).
  const shift = (p) => [p[0] + state.offset[0], p[1] + state.offset[1]];
  state.inputs = () => ({ a: shift(state.a), b: shift(state.b), points: state.points.map(shift) });
  const fig = new Figure(canvas, { cx: 0, cy: -1, scale: 22 });
  fig.state = state;

  const addHandles = () => {
    fig.handles = [];
    // Points first, then a and b last: on a tie the later handle wins, so
    // an endpoint under a point can still be caught.
    state.points.forEach((p, i) => fig.handle(() => state.points[i], (w) => (state.points[i] = w)));
    fig.handle(() => state.a, (w) => (state.a = w), 14);
    fig.handle(() => state.b, (w) => (state.b = w), 14);
  };
  addHandles();

  // A press on empty ground adds a point there; a double-click on a point
  // removes it.
  fig.onBackground = (w) => {
    state.points.push(w);
    addHandles();
    fig.changed();
  };
  canvas.addEventListener('dblclick', (e) => {
    const s = fig.local(e);
    const i = state.points.findIndex((p) => {
      const q = fig.toScreen(p);
      return Math.hypot(q[0] - s[0], q[1] - s[1]) < 12;
    });
    if (i >= 0 && state.points.length > 1) {
      state.points.splice(i, 1);
      addHandles();
      fig.changed();
    }
  });
  root.querySelector('[data-action=reset]').addEventListener('click', () => {
    Object.assign(state, { a: [...START.a], b: [...START.b], points: START.points.map((p) => [...p]) });
    addHandles();
    fig.changed();
  });

  root.querySelector('[data-action=utm]').addEventListener('change', (e) => {
    state.offset = e.target.checked ? [500000, 6700000] : [0, 0];
    fig.changed();
  });
  // A point of the results back in the figure's coordinates, for drawing.
  const unshift = (q) => [q[0] - state.offset[0], q[1] - state.offset[1]];

  fig.render = (ctx) => {
    const inputs = state.inputs();
    state.results = inputs.points.map((p) => sd.project2(inputs.a, inputs.b, p));
    fig.grid(1);
    const A = fig.toScreen(state.a);
    const B = fig.toScreen(state.b);
    // The infinite line, far past both ends.
    const dir = [B[0] - A[0], B[1] - A[1]];
    const len = Math.hypot(...dir) || 1;
    const far = (2 * (fig.width + fig.height)) / len;
    ctx.setLineDash([6, 6]);
    ctx.strokeStyle = '#9aa3b2';
    ctx.lineWidth = 1.5;
    line(ctx, [A[0] - dir[0] * far, A[1] - dir[1] * far], [B[0] + dir[0] * far, B[1] + dir[1] * far]);
    ctx.setLineDash([]);
    state.points.forEach((p, i) => {
      const r = state.results[i];
      const P = fig.toScreen(p);
      const Q = fig.toScreen(unshift(r.segment.q));
      const L = fig.toScreen(unshift(r.line.q));
      const colour = REGION_COLOURS[r.segment.region];
      if (r.segment.region !== 'interior') {
        // Where the line's foot would be: the clamp moved it to a vertex.
        ctx.setLineDash([2, 4]);
        ctx.strokeStyle = '#9aa3b2';
        line(ctx, P, L);
        ctx.setLineDash([]);
        dot(ctx, L, 3.5, '#fff', '#9aa3b2');
      }
      ctx.strokeStyle = colour;
      ctx.lineWidth = 2;
      line(ctx, P, Q);
      dot(ctx, Q, 4.5, colour);
      dot(ctx, P, 7, '#fff', '#333');
      ctx.fillStyle = '#333';
      ctx.font = '12px system-ui, sans-serif';
      ctx.fillText(String(i + 1), P[0] + 9, P[1] - 7);
    });
    ctx.strokeStyle = '#222';
    ctx.lineWidth = 4;
    line(ctx, A, B);
    for (const [S, label] of [
      [A, 'a'],
      [B, 'b'],
    ]) {
      dot(ctx, S, 8, '#222');
      ctx.fillStyle = '#fff';
      ctx.font = 'bold 11px system-ui, sans-serif';
      ctx.fillText(label, S[0] - 3.5, S[1] + 4);
    }
    renderTable();
  };

  function renderTable() {
    if (!table) return;
    table.innerHTML = state
      .inputs()
      .points.map((p, i) => {
        const r = state.results[i];
        const s = r.segment;
        const ulps = sd.ulps(s.d, r.textbook.d);
        return `<tr data-point="${i}">
          <td>${i + 1}</td>${cell(p[0], 'px')}${cell(p[1], 'py')}
          <td><span class="region" style="background:${REGION_COLOURS[s.region]}">${s.region}</span></td>
          ${cell(s.t, 't')}${cell(s.q[0], 'qx')}${cell(s.q[1], 'qy')}${cell(s.d, 'd')}${cell(s.d2, 'd2')}
          ${cell(r.line.t, 'lt')}${cell(r.line.d, 'ld')}
          ${cell(r.textbook.d, 'fd')}<td class="num ulps" data-v="${ulps}">${ulps === 0 ? '0' : short(ulps)}</td>
        </tr>`;
      })
      .join('');
    const caption = root.querySelector('[data-role=ab]');
    const { a, b } = state.inputs();
    if (caption) caption.textContent = `a = (${short(a[0])}, ${short(a[1])}), b = (${short(b[0])}, ${short(b[1])})`;
  }

  fig.draw();
  return fig;
}
