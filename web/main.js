// The page's entry: loads segdist's WebAssembly module, then starts each
// figure. `window.segdistPage` holds the figures' state for the browser
// tests (web/tests/) and for the curious, in the console.
import { load } from './segdist.js';
import { segmentFigure } from './figures/segment.js';
import { spaceFigure } from './figures/space.js';
import { wanderFigure } from './figures/wander.js';
import { gameFigure } from './figures/game.js';
import { dataFigure } from './figures/data.js';

const page = { ready: false };
window.segdistPage = page;

try {
  const sd = await load();
  page.sd = sd;
  document.querySelector('[data-role=wasm-size]').textContent = sd.bytes
    ? `${Math.round(sd.bytes / 1024)} KB of it`
    : 'a small module';
  page.segment = segmentFigure(sd, document.getElementById('segment'));
  page.space = spaceFigure(sd, document.getElementById('space'));
  page.wander = wanderFigure(sd, document.getElementById('wander'));
  page.game = gameFigure(sd, document.getElementById('game'));
  page.data = dataFigure(sd, document.getElementById('data'));
  await page.data.ready;
  page.ready = true;
} catch (e) {
  const p = document.querySelector('[data-role=load-error]');
  p.textContent = `The page could not start: ${e.message}`;
  p.hidden = false;
  page.error = e.message;
  throw e;
}
