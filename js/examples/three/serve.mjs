// Serves the example on a loopback port: the example's folder (its page and
// node_modules, where `npm install` put murk-fog and three) at `/`, the
// repository's `assets/` (the demo scenario and its map) at `/assets/`,
// and, when given, another folder at `/files/` (the judge puts native
// snapshots there). `node serve.mjs [PORT]` serves it by hand.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const assets = path.resolve(here, '../../../assets');
const types = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };

/** Starts the server on `port` (0: a free one); resolves to it and its base URL. */
export async function serve({ port = 0, files = null } = {}) {
  const roots = [['/assets/', assets], ...(files ? [['/files/', path.resolve(files)]] : []), ['/', here]];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    const pathname = decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname);
    const [prefix, root] = roots.find(([p]) => pathname.startsWith(p));
    const file = path.join(root, path.normalize(pathname.slice(prefix.length - 1)));
    if (!file.startsWith(root) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': types[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${server.address().port}/` };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { base } = await serve({ port: Number(process.argv[2] || 8001) });
  console.log(`the three.js example on ${base} (?backend=gpu for WebGPU)`);
}
