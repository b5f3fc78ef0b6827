// Serves the page (this folder) on 127.0.0.1 only: plain files, the right
// MIME types (a .wasm must be application/wasm to be compiled while it
// downloads), nothing outside this folder. No dependencies.
//
//   node web/serve.mjs [PORT]      (scripts/page.sh builds, then runs this)
//
// The tests import `serve` and start it on a free port.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));
const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.geojson': 'application/geo+json',
  '.json': 'application/json',
  '.csv': 'text/csv; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};
// Only what the page is made of: not the tests, not node_modules.
const hidden = ['node_modules', 'tests'];

/** Starts the server on `port` (0: any free one); resolves to the server. */
export function serve(port = 8321) {
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const file = normalize(join(root, path.endsWith('/') ? path + 'index.html' : path));
    const inside = file.startsWith(root) && !hidden.some((h) => file.slice(root.length).split(sep)[0] === h);
    try {
      if (!inside) throw new Error('outside');
      const body = await readFile(file);
      res.writeHead(200, {
        'content-type': types[extname(file)] ?? 'application/octet-stream',
        'content-length': body.length,
        'cache-control': 'no-cache',
      });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found\n');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === normalize(process.argv[1])) {
  const port = Number(process.argv[2] ?? 8321);
  serve(port).then(
    (s) => console.error(`serving ${root} on http://127.0.0.1:${s.address().port}/`),
    (e) => {
      console.error(`cannot serve on 127.0.0.1:${port}: ${e.message}`);
      process.exit(2);
    },
  );
}
