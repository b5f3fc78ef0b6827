// The seeds' game: a circle among walls. Drag the circle into a wall and
// it is pushed out (segdist-collide's resolve: the push-out against every
// wall it overlaps); press and hold anywhere else, or use the arrow keys,
// and it walks there, stopping at walls and sliding along them
// (move_and_slide), never through one.
import { Figure, dot, line } from '../canvas.js';

const RADIUS = 0.6;
const SPEED = 7; // units per second

/** A small level, as walls [ax, ay, bx, by]: a room, a pillar, a thin
 * wall, a slanted wall, a nook and a cut corner. */
export const WALLS = (() => {
  const walls = [];
  const loop = (pts) => pts.forEach((p, i) => walls.push([...p, ...pts[(i + 1) % pts.length]]));
  loop([[-12, -7], [12, -7], [12, 7], [-12, 7]]);
  loop([[-6, -2], [-3, -2], [-3, 1], [-6, 1]]);
  walls.push([1, -7, 1, 2], [4, 5, 9, 1], [6, -7, 6, -3], [6, -3, 9, -3], [-12, 3, -8, 7]);
  return walls;
})();

export function gameFigure(sd, root) {
  const canvas = root.querySelector('canvas');
  const readout = root.querySelector('[data-role=readout]');
  const level = sd.level(WALLS);
  const state = { ball: [-9, -4], target: null, pointer: null, walking: null, contacts: [], free: true, keys: new Set() };
  const fig = new Figure(canvas, { cx: 0, cy: 0, scale: 29 });
  fig.state = state;
  fig.level = level;

  // Dragging the circle: it goes where the pointer is, pushed out of walls.
  fig.handle(
    () => state.ball,
    (w) => {
      state.pointer = w;
      const r = level.pushOut(w, RADIUS);
      state.contacts = level.contacts(w, RADIUS).contacts;
      state.ball = r.p;
      state.free = r.free;
    },
    RADIUS * 29 + 4,
  );
  const release = () => {
    state.pointer = null;
    state.contacts = [];
    state.walking = null;
    fig.draw();
  };
  canvas.addEventListener('pointerup', release);
  // Pressing elsewhere: walk towards the pointer while it is held.
  fig.onBackground = (w, e) => {
    state.walking = w;
    canvas.setPointerCapture(e.pointerId);
  };
  canvas.addEventListener('pointermove', (e) => {
    if (state.walking) state.walking = fig.toWorld(fig.local(e));
  });
  canvas.tabIndex = 0;
  canvas.addEventListener('keydown', (e) => {
    if (e.key.startsWith('Arrow')) {
      state.keys.add(e.key);
      e.preventDefault();
    }
  });
  canvas.addEventListener('keyup', (e) => state.keys.delete(e.key));
  canvas.addEventListener('blur', () => state.keys.clear());

  fig.render = (ctx) => {
    fig.grid(1);
    ctx.strokeStyle = '#263238';
    ctx.lineWidth = 3;
    ctx.lineCap = 'round';
    for (const w of WALLS) line(ctx, fig.toScreen([w[0], w[1]]), fig.toScreen([w[2], w[3]]));
    const r = RADIUS * fig.view.scale;
    if (state.pointer) {
      // Where the pointer is, the overlaps there and their normals.
      const P = fig.toScreen(state.pointer);
      dot(ctx, P, r, 'rgba(217,102,31,0.15)', '#d9661f');
      for (const c of state.contacts) {
        const Q = fig.toScreen(c.q);
        dot(ctx, Q, 3.5, '#d9661f');
        ctx.strokeStyle = '#d9661f';
        ctx.lineWidth = 1.5;
        line(ctx, Q, fig.toScreen([c.q[0] + c.normal[0], c.q[1] + c.normal[1]]));
      }
    }
    if (state.walking) dot(ctx, fig.toScreen(state.walking), 4, '#1d6fd6');
    dot(ctx, fig.toScreen(state.ball), r, state.free ? '#1d9a5b' : '#d33b2f', '#0b4d2c');
    if (readout) {
      const n = level.contacts(state.ball, RADIUS).count;
      readout.textContent = `centre (${state.ball[0].toFixed(3)}, ${state.ball[1].toFixed(3)}), touching ${n} wall${n === 1 ? '' : 's'}`;
    }
  };

  let last = performance.now();
  const frame = (now) => {
    const dt = Math.min((now - last) / 1000, 0.05);
    last = now;
    let motion = null;
    if (state.walking) {
      const d = [state.walking[0] - state.ball[0], state.walking[1] - state.ball[1]];
      const len = Math.hypot(...d);
      const step = Math.min(len, SPEED * dt);
      if (len > 1e-9) motion = [(d[0] / len) * step, (d[1] / len) * step];
    } else if (state.keys.size) {
      const k = (name) => (state.keys.has(name) ? 1 : 0);
      const d = [k('ArrowRight') - k('ArrowLeft'), k('ArrowUp') - k('ArrowDown')];
      const len = Math.hypot(...d);
      if (len) motion = [(d[0] / len) * SPEED * dt, (d[1] / len) * SPEED * dt];
    }
    if (motion) {
      state.ball = level.slide(state.ball, RADIUS, motion).p;
      state.free = true;
      fig.draw();
    }
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  fig.radius = RADIUS;
  fig.walls = WALLS;
  return fig;
}
