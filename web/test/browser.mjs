// The page in a real browser: serves web/dist from a loopback server, loads
// it in headless Chromium (WebGPU through SwiftShader where there is no
// GPU), runs the scenario on the CPU backend (wasm), on the GPU backend
// (WebGPU), and once switching CPU -> GPU -> CPU while it runs, and
// compares every lockstep hash the page saw with native `murk run`'s
// summary.json for the same ticks. Saves a screenshot of the GPU run. With
// `--drop`, it also opens the page empty on the GPU, drops that scenario
// file on it (a script with no map) and compares its hashes with the
// `--drop-native` summaries.
//
// node browser.mjs --dist DIR --native SUMMARY [--native SUMMARY ...]
//                  [--ticks N] [--screenshot PNG] [--chromium PATH]
//                  [--drop SCENARIO --drop-native SUMMARY ...]
import { chromium } from 'playwright-core';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const dist = path.resolve(option('--dist', 'web/dist'));
const all = (name) => args.flatMap((a, i) => (a === name ? [args[i + 1]] : []));
const natives = all('--native');
const drop = option('--drop', null);
const dropNatives = all('--drop-native');
const ticks = Number(option('--ticks', '180'));
const screenshot = option('--screenshot', null);
const executablePath = option('--chromium', process.env.CHROMIUM || '/usr/bin/chromium');
// Bounds, so that a hung page fails the run instead of stalling CI.
const RUN_TIMEOUT_MS = 300_000;

if (natives.length === 0) throw new Error('give at least one --native summary.json of `murk run`');
if (drop && dropNatives.length === 0) throw new Error('--drop needs at least one --drop-native summary.json');
const summaries = (files) =>
  files.map((file) => {
    const summary = JSON.parse(fs.readFileSync(file, 'utf8'));
    return { file, backend: summary.backend, ticks: summary.per_tick.length, lockstep: new Map(summary.per_tick.map((r) => [r.tick, r.lockstep])) };
  });
const expected = summaries(natives);

const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json', '.map': 'text/plain' };
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  const file = path.join(dist, path.normalize(decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname)));
  if (!file.startsWith(dist) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': types[path.extname(file)] || 'application/octet-stream' });
  fs.createReadStream(file).pipe(res);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}/`;

const browser = await chromium.launch({
  executablePath,
  headless: true,
  timeout: 60_000,
  args: [
    '--no-sandbox',
    '--enable-unsafe-webgpu',
    // Without a GPU, WebGPU runs on SwiftShader; a WebGPU canvas needs
    // Chromium's Vulkan path for it (with the default GL path the first
    // frame drawn into a canvas destroys the device).
    '--enable-features=Vulkan',
    '--use-vulkan=swiftshader',
    '--use-angle=vulkan',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    ...(process.env.CHROMIUM_FLAGS ? process.env.CHROMIUM_FLAGS.split(' ') : []),
  ],
});

const runs = [
  { name: 'cpu', query: `backend=cpu&ticks=${ticks}`, ticks, natives: expected },
  { name: 'gpu', query: `backend=gpu&ticks=${ticks}`, ticks, natives: expected, screenshot: true },
  { name: 'cpu-gpu-cpu', query: `backend=cpu&ticks=${ticks}&switch=${Math.floor(ticks / 3)},${Math.floor((2 * ticks) / 3)}`, ticks, natives: expected },
];
if (drop) {
  const natives = summaries(dropNatives);
  const files = [[path.basename(drop), fs.readFileSync(drop, 'utf8')]];
  runs.push({ name: `dropped ${path.basename(drop)}`, query: `backend=gpu&start=drop&ticks=${natives[0].ticks}`, ticks: natives[0].ticks, natives, files });
}
let passed = 0;
let failed = 0;
const check = (ok, what) => {
  if (ok) passed += 1; else failed += 1;
  console.log(`${ok ? 'ok    ' : 'FAILED'} ${what}`);
};

try {
  for (const run of runs) {
    const page = await browser.newPage({ viewport: { width: 1120, height: 700 } });
    const logs = [];
    page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => logs.push(`pageerror: ${e.message}`));
    await page.goto(`${base}?${run.query}`);
    let result;
    try {
      if (run.files) {
        // Dropped as a user drops files: a drop event carrying them.
        await page.waitForSelector('body[data-ready]', { timeout: 60_000 });
        await page.evaluate((files) => {
          const data = new DataTransfer();
          for (const [name, text] of files) data.items.add(new File([text], name));
          document.getElementById('drop').dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
        }, run.files);
      }
      // A page error (a panic in wasm, an exception in the loop) ends the
      // run at once rather than at the timeout.
      const crashed = new Promise((resolve) => page.once('pageerror', (e) => resolve({ error: `page error: ${e.message}`, hashes: [] })));
      const done = page
        .waitForFunction(() => window.murkResult, null, { timeout: RUN_TIMEOUT_MS, polling: 250 })
        .then(() => page.evaluate(() => window.murkResult));
      result = await Promise.race([done, crashed]);
    } catch (e) {
      result = { error: `no result within ${RUN_TIMEOUT_MS / 1000} s: ${e.message}`, hashes: [] };
    }
    if (result.error) console.log(logs.join('\n'));
    check(!result.error, `[${run.name}] ran ${result.ticks} ticks on ${result.backend}${result.error ? `: ${result.error}` : ''}`);
    if (run.files) check(result.scenario === run.files[0][0], `[${run.name}] the page ran the dropped scenario (${result.scenario})`);
    const cost = (c) => (c.ticks ? `${(c.ms / c.ticks).toFixed(2)} ms a tick over ${c.ticks}` : 'not run');
    if (result.costs) console.log(`       CPU (wasm) ${cost(result.costs.cpu)}; GPU (WebGPU) ${cost(result.costs.gpu)}`);
    if (result.adapter) console.log(`       adapter ${result.adapter}: ${result.limits}`);
    if (result.switches && result.switches.length) console.log(`       switches: ${result.switches.map((s) => `before tick ${s.tick} to ${s.to}`).join(', ')}`);
    check(result.hashes.length === run.ticks - 2, `[${run.name}] ${result.hashes.length} hashes landed (each two ticks after its tick; ${run.ticks - 2} expected)`);
    for (const native of run.natives) {
      const differing = result.hashes.filter(([tick, hash]) => native.lockstep.get(tick) !== hash);
      const first = differing[0];
      check(
        result.hashes.length > 0 && differing.length === 0,
        `[${run.name}] every hash equals native ${native.backend}` +
          (first ? ` (${differing.length} differ; tick ${first[0]}: page ${first[1]}, native ${native.lockstep.get(first[0])})` : ''),
      );
    }
    if (run.screenshot && screenshot && !result.error) {
      fs.mkdirSync(path.dirname(screenshot), { recursive: true });
      await page.screenshot({ path: screenshot });
      console.log(`       screenshot: ${screenshot}`);
    }
    await page.close();
  }
} finally {
  await browser.close();
  server.close();
}
console.log(`browser: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
