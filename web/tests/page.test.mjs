// The page in a real browser (Debian's Chromium, driven by playwright-core),
// served on 127.0.0.1, checked against the native `segdist` CLI: every
// number the page shows after a drag must be the CLI's for the same
// inputs, bit for bit, and the Helsinki snap must download the CLI's files:
// the same rows, lines, parts and segments, and metres within 1e-8 m (see
// TOLERANCE for why not to the last bit).
//
// Run: scripts/page.sh test (builds the module and the CLI first).
// Screenshots: target/page-screenshots/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from '../serve.mjs';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const cli = join(repo, 'target/release/segdist');
const shots = join(repo, 'target/page-screenshots');
const tmp = mkdtempSync(join(tmpdir(), 'segdist-page-test-'));
let server;
let browser;
let page;
const problems = [];

before(async () => {
  statSync(cli); // built by scripts/page.sh test
  mkdirSync(shots, { recursive: true });
  server = await serve(0);
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  page = await browser.newPage({ viewport: { width: 1100, height: 900 }, acceptDownloads: true });
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForFunction(() => window.segdistPage?.ready || window.segdistPage?.error, null, { timeout: 30000 });
});

after(async () => {
  await browser?.close();
  server?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** Runs the CLI; returns its standard output. */
function segdist(args, input) {
  return execFileSync(cli, args, { input, encoding: 'utf8', maxBuffer: 1 << 28 });
}

/** `segdist pairs [flags]` of rows [ax, ay, (az,) bx, by, (bz,) px, py, (pz)]: one object per row. */
function pairs(rows, flags = [], dims = 2) {
  const names = dims === 2 ? ['ax', 'ay', 'bx', 'by', 'px', 'py'] : ['ax', 'ay', 'az', 'bx', 'by', 'bz', 'px', 'py', 'pz'];
  // JavaScript's String(x) is the shortest text that reads back to x, and
  // Rust reads it back to the same double.
  const csv = [names.join(','), ...rows.map((r) => r.map(String).join(','))].join('\n') + '\n';
  const [head, ...lines] = segdist(['pairs', '-q', ...flags], csv).trim().split('\n');
  const cols = head.split(',');
  return lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [cols[i], v])));
}

/** Bit-for-bit equality of a page number and a CLI field. */
function same(pageValue, cliText, what) {
  const x = Number(pageValue);
  const y = Number(cliText);
  assert.ok(Object.is(x, y), `${what}: page ${pageValue}, CLI ${cliText}`);
}

/** The values (data-v) of the 2D table, per row, by column class. */
async function table2d() {
  return page.$$eval('#segment tbody tr', (rows) =>
    rows.map((tr) => Object.fromEntries([...tr.querySelectorAll('td[data-v]')].map((td) => [td.classList[1], td.dataset.v]))),
  );
}

/** Drags on a figure's canvas from world point `from` to `to` in steps. */
async function drag(figure, from, to, { hold = 0, during = null } = {}) {
  const canvas = page.locator(`#${figure} canvas`);
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  // The canvas has a 1 px border: content coordinates start inside it.
  const border = await canvas.evaluate((c) => [c.clientLeft, c.clientTop]);
  const at = (w) => page.evaluate(([f, w]) => window.segdistPage[f].toScreen(w), [figure, w]);
  const [a, b] = [await at(from), await at(to)];
  const X = (s) => box.x + border[0] + s[0];
  const Y = (s) => box.y + border[1] + s[1];
  await page.mouse.move(X(a), Y(a));
  await page.mouse.down();
  await page.mouse.move(X(b), Y(b), { steps: 12 });
  if (hold) await page.waitForTimeout(hold);
  if (during) await during();
  await page.mouse.up();
}

test('the page loads with no console errors, and shows the module size', async () => {
  assert.equal(await page.evaluate(() => window.segdistPage.error ?? null), null);
  assert.deepEqual(problems, []);
  const size = await page.textContent('[data-role=wasm-size]');
  assert.match(size, /^\d+ KB of it$/);
  await page.screenshot({ path: join(shots, 'page.png'), fullPage: true });
});

test('dragging a point and an end changes the numbers, and they are the CLI\'s, bit for bit', async () => {
  const before = await table2d();
  const start = await page.evaluate(() => window.segdistPage.segment.state.points[4]);
  await drag('segment', start, [-2.37, 4.81]);
  await drag('segment', [1, 2], [6.3, 1.7]); // b
  const afterDrag = await table2d();
  assert.notEqual(afterDrag[4].px, before[4].px, 'the dragged point moved');
  assert.notEqual(afterDrag[4].d, before[4].d, 'its distance changed');
  assert.notEqual(afterDrag[0].t, before[0].t, 'moving b changed point 1\'s t');
  await compare2d();
  await page.locator('#segment').screenshot({ path: join(shots, 'segment-dragged.png') });
  // The same figure at UTM coordinates: the textbook's distance is now off
  // by ulps for some points, segdist's is still the CLI's to the last bit.
  await page.check('#segment [data-action=utm]');
  await compare2d();
  const ulps = await page.$$eval('#segment tbody td.ulps', (c) => c.map((e) => Number(e.dataset.v)));
  assert.ok(ulps.some((u) => u > 1), `textbook ulps at UTM coordinates: ${ulps}`);
  await page.locator('#segment').screenshot({ path: join(shots, 'segment-utm.png') });
  await page.uncheck('#segment [data-action=utm]');
});

/** The 2D table against `segdist pairs` (segment, --line, --fast) for the figure's inputs. */
async function compare2d() {
  const shown = await table2d();
  const { a, b, points } = await page.evaluate(() => window.segdistPage.segment.state.inputs());
  const rows = points.map((p) => [...a, ...b, ...p]);
  const [seg, lin, fast] = [pairs(rows), pairs(rows, ['--line']), pairs(rows, ['--fast'])];
  const regions = await page.$$eval('#segment tbody .region', (s) => s.map((e) => e.textContent));
  shown.forEach((r, i) => {
    same(r.px, String(points[i][0]), `row ${i + 1} p.x`);
    for (const [col, cliCol] of [['t', 't'], ['qx', 'qx'], ['qy', 'qy'], ['d', 'd'], ['d2', 'd2']]) same(r[col], seg[i][cliCol], `row ${i + 1} ${col}`);
    assert.equal(regions[i], seg[i].region, `row ${i + 1} region`);
    same(r.lt, lin[i].t, `row ${i + 1} line t`);
    same(r.ld, lin[i].d, `row ${i + 1} line d`);
    same(r.fd, fast[i].d, `row ${i + 1} textbook d`);
  });
}

test('a press on empty ground adds a point; a double-click removes it', async () => {
  const n = await page.evaluate(() => window.segdistPage.segment.state.points.length);
  const canvas = page.locator('#segment canvas');
  const box = await canvas.boundingBox();
  await page.mouse.click(box.x + 60, box.y + 60);
  assert.equal(await page.evaluate(() => window.segdistPage.segment.state.points.length), n + 1);
  assert.equal((await table2d()).length, n + 1);
  await page.mouse.dblclick(box.x + 60, box.y + 60);
  // The double-click's first press lands on the new point (a drag, not an
  // add), and the double-click removes it.
  assert.equal(await page.evaluate(() => window.segdistPage.segment.state.points.length), n);
});

test('the 3D table is the CLI\'s for the seed\'s eight points', async () => {
  const { a, b, points } = await page.evaluate(() => window.segdistPage.space.inputs);
  const cliRows = pairs(points.map((p) => [...a, ...b, ...p]), [], 3);
  const shown = await page.$$eval('#space tbody tr', (rows) =>
    rows.map((tr) => Object.fromEntries([...tr.querySelectorAll('td[data-v]')].map((td) => [td.classList[1], td.dataset.v]))),
  );
  assert.equal(shown.length, 8);
  shown.forEach((r, i) => {
    for (const c of ['t', 'qx', 'qy', 'qz', 'd', 'd2']) same(r[c], cliRows[i][c], `3D row ${i + 1} ${c}`);
  });
  await page.locator('#space').screenshot({ path: join(shots, 'space.png') });
});

test('zoomed in at UTM coordinates: segdist is the CLI\'s accurate answer, the textbook wanders', async () => {
  for (const zoom of ['-8', '-5']) {
    await page.locator('#wander input[type=range]').fill(zoom);
    const { samples } = await page.evaluate(() => window.segdistPage.wander.state);
    const { a, b } = await page.evaluate(() => window.segdistPage.wander.inputs);
    const rows = samples.map((s) => [...a, ...b, ...s.p]);
    const [seg, fast] = [pairs(rows), pairs(rows, ['--fast'])];
    samples.forEach((s, i) => {
      same(s.exact, seg[i].d, `sample ${i} segdist d`);
      same(s.textbook, fast[i].d, `sample ${i} textbook d`);
    });
    if (zoom === '-8') {
      const off = samples.filter((s) => s.ulps > 1).length;
      assert.ok(off > samples.length / 2, `the textbook is more than 1 ulp off on ${off} of ${samples.length}`);
      await page.locator('#wander').screenshot({ path: join(shots, 'wander.png') });
    }
  }
});

test('the game: dragged into walls, the circle is pushed out; walking, it never passes a wall', async () => {
  const clear = () =>
    page.evaluate(() => {
      const { game, sd } = window.segdistPage;
      // An independent check: segdist's distance to every wall, not the
      // collision layer's answer.
      return game.walls.every((w) => sd.project2([w[0], w[1]], [w[2], w[3]], game.state.ball).segment.d >= game.radius);
    });
  // Into the pillar's corner, then onto the thin wall.
  await drag('game', [-9, -4], [-4.2, -1.6], { hold: 50 });
  let ball = await page.evaluate(() => window.segdistPage.game.state.ball);
  assert.ok(await clear(), `pushed out of the pillar: ${ball}`);
  const start = await page.evaluate(() => window.segdistPage.game.state.ball);
  await drag('game', start, [1.3, -3], {
    hold: 50,
    during: async () => {
      // Held on the wall: the pointer's circle overlaps it, the ball does not.
      const held = await page.evaluate(() => window.segdistPage.game.state);
      assert.equal(held.contacts.length, 1, 'the held position touches the thin wall');
      await page.locator('#game').screenshot({ path: join(shots, 'game-pushed.png') });
    },
  });
  ball = await page.evaluate(() => window.segdistPage.game.state.ball);
  assert.ok(await clear(), `pushed out of the thin wall: ${ball}`);
  // Walk from the left of the thin wall (x = 1, y up to 2) towards a point
  // right of it, low down: the circle must stop and slide, never cross.
  await page.evaluate(() => (window.segdistPage.game.state.ball = [-2, -5]));
  const canvas = page.locator('#game canvas');
  const box = await canvas.boundingBox();
  const target = await page.evaluate(() => window.segdistPage.game.toScreen([4, -5]));
  let crossed = false;
  await page.mouse.move(box.x + 1 + target[0], box.y + 1 + target[1]);
  await page.mouse.down();
  for (let i = 0; i < 12; i++) {
    await page.waitForTimeout(100);
    const [x] = await page.evaluate(() => window.segdistPage.game.state.ball);
    crossed ||= x > 1;
    assert.ok(await clear(), 'clear of every wall while walking');
  }
  await page.mouse.up();
  ball = await page.evaluate(() => window.segdistPage.game.state.ball);
  assert.ok(!crossed && ball[0] < 1 - 0.6 + 1e-9 && ball[0] > 0, `stopped at the thin wall: ${ball}`);
  await page.locator('#game').screenshot({ path: join(shots, 'game-walked.png') });
});

// How far the page's geographic numbers may be from the CLI's. The choice
// of line, part and segment must be the same; the numbers are computed by
// the same code, but it calls sin, cos and atan2, whose last bit differs
// between WebAssembly's math library (Rust's port of musl's) and the
// system's (glibc), and a geodesic turns an ulp of an angle (1e-16 of the
// Earth's radius) into nanometres. segdist-geo is accurate to 1e-8 m.
const TOLERANCE = { distance_m: 1e-8, lon: 1e-12, lat: 1e-12, t: 1e-6, along_m: 1e-8, fraction: 1e-8 };

/** Compares the page's snap CSV with the CLI's; returns the largest differences. */
function compareSnapCsv(pageCsv, cliCsv) {
  const [P, C] = [pageCsv, cliCsv].map((t) => t.trimEnd().split('\n').map((l) => l.split(',')));
  assert.deepEqual(P[0], C[0], 'the same columns');
  assert.equal(P.length, C.length, 'the same rows');
  const largest = Object.fromEntries(Object.keys(TOLERANCE).map((k) => [k, 0]));
  let identical = 0;
  for (let i = 1; i < P.length; i++) {
    assert.deepEqual(P[i].slice(0, 4), C[i].slice(0, 4), `row ${i}: the same point, line, part and segment`);
    identical += P[i].join() === C[i].join();
    P[0].slice(4).forEach((col, k) => {
      const [x, y] = [P[i][k + 4], C[i][k + 4]];
      if (x === '' || y === '') return assert.equal(x, y, `row ${i} ${col}: both empty or neither`);
      const d = Math.abs(Number(x) - Number(y));
      assert.ok(d <= TOLERANCE[col], `row ${i} ${col}: page ${x}, CLI ${y}`);
      largest[col] = Math.max(largest[col], d);
    });
  }
  return { largest, identical, rows: P.length - 1 };
}

/** Clicks a download link; returns the file's text. */
async function download(role) {
  const [d] = await Promise.all([page.waitForEvent('download'), page.click(`#data a[data-role=${role}]`)]);
  const path = join(tmp, role);
  await d.saveAs(path);
  return readFileSync(path, 'utf8');
}

test('the Helsinki example snaps in the page to the CLI\'s answers', async () => {
  const snap = ['snap', '-q', '--keep', 'none', '--points', join(repo, 'examples/helsinki/points.geojson'), '--lines', join(repo, 'examples/helsinki/roads.geojson'), '--id-property', 'osm_id'];
  const csv = await download('csv');
  assert.equal(csv.split('\n').length, 2311 + 2);
  const cmp = compareSnapCsv(csv, segdist(snap));
  console.log(`Helsinki: ${cmp.rows} rows, all on the CLI's line, part and segment; ${cmp.identical} identical to the last bit; largest differences ${JSON.stringify(cmp.largest)}`);
  // The GeoJSON: the same features, by the same rules.
  const [pg, cg] = [await download('geojson'), segdist([...snap, '--output-format', 'geojson'])].map((t) => JSON.parse(t).features);
  assert.equal(pg.length, cg.length);
  pg.forEach((f, i) => {
    const [p, c] = [f.properties, cg[i].properties];
    for (const k of ['point_id', 'rank', 'line_id', 'part', 'segment']) assert.equal(p[k], c[k], `feature ${i} ${k}`);
    for (const k of ['distance_m', 'along_m', 'fraction', 't']) assert.ok(Math.abs(p[k] - c[k]) <= TOLERANCE[k], `feature ${i} ${k}`);
    f.geometry.coordinates.forEach((x, k) => assert.ok(Math.abs(x - cg[i].geometry.coordinates[k]) <= 1e-12, `feature ${i} point`));
  });
  assert.match(await page.textContent('#data [data-role=credit]'), /OpenStreetMap contributors/);
  // The time to snap it, as the page reports it: the median of 5 runs.
  const times = [];
  for (let i = 0; i < 5; i++) {
    await page.click('#data [data-action=example]');
    await page.waitForFunction(() => window.segdistPage.data.state.result);
    times.push(await page.evaluate(() => window.segdistPage.data.state.result.times.snap));
  }
  times.sort((x, y) => x - y);
  const wasm = statSync(join(repo, 'web/pkg/segdist.wasm')).size;
  console.log(`segdist.wasm: ${wasm} bytes; Helsinki snap in the page (index + 2,311 queries): median ${times[2].toFixed(1)} ms of 5 (${times.map((t) => t.toFixed(1)).join(', ')})`);
  assert.ok(times[2] < 1000, 'well under a second');
  await page.locator('#data').screenshot({ path: join(shots, 'data.png') });
});

test('dropped files are snapped too, with a max distance, and bad files are named with their line', async () => {
  const lines = 'id,lon,lat\nr1,24.94,60.17\nr1,24.95,60.17\nr2,24.94,60.18\nr2,24.95,60.18\n';
  const points = 'name,lat,lon\n0,60.171,24.945\n1,60.1795,24.9451\n2,60.175,24.945\n';
  const drop = (files) =>
    page.evaluate((files) => {
      const dt = new DataTransfer();
      for (const [name, text] of files) dt.items.add(new File([text], name));
      document.getElementById('data').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, files);
  await page.fill('#data input[name=id-property]', '');
  await page.fill('#data input[name=max-distance]', '300');
  await drop([['roads.csv', lines], ['fixes.csv', points]]);
  await page.waitForFunction(() => window.segdistPage.data.state.files.points?.name === 'fixes.csv' && window.segdistPage.data.state.result);
  const csv = await download('csv');
  writeFileSync(join(tmp, 'roads.csv'), lines);
  writeFileSync(join(tmp, 'fixes.csv'), points);
  const cliCsv = segdist(['snap', '-q', '--keep', 'none', '--points', join(tmp, 'fixes.csv'), '--lines', join(tmp, 'roads.csv'), '--max-distance', '300']);
  compareSnapCsv(csv, cliCsv);
  assert.match(csv, /\n2,,,,,,,,,\n$/, 'the point 550 m from both roads has an empty match');
  // A bad number: the file, the line and the column are named.
  await drop([['fixes.csv', 'lon,lat\n24.94,60.17\n24.95,x60\n']]);
  await page.waitForFunction(() => window.segdistPage.data.state.error);
  const status = await page.textContent('#data [data-role=status]');
  assert.equal(status, 'fixes.csv: line 3, column 2 (lat): cannot read "x60" as a number');
  assert.ok(await page.$eval('#data a[data-role=csv]', (a) => a.hidden), 'no download for a failed run');
  await page.fill('#data input[name=max-distance]', '');
  assert.deepEqual(problems, []);
});
