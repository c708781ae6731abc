// The judge of the npm package: runs the three.js example (which imports
// murk-fog as npm installed it from the packed tarball) in headless
// Chromium, on the CPU backend (wasm) and the GPU backend (WebGPU; on
// SwiftShader where there is no GPU), and checks that
// - the run finished without an error and every tick's lockstep hash
//   landed and equals the same tick's hash in native `murk run`'s
//   summary.json (`--native`; the backends are byte-identical, so one CPU
//   summary judges both);
// - with `--snapshot FILE`, a native snapshot (`murk run --snapshot-at T`)
//   restores in the browser with native's hash of tick T, and the run goes
//   on to the end with native's hashes, on each backend;
// - a handle of an expired transient source is stale: moving it is an
//   error naming the handle;
// - on the GPU three.js drew on murk's device from murk's mask texture
//   (WebGPURenderer, no readback), and every run's final mask, read back
//   as a Uint16Array at the end, has the same digest on both backends;
// - the screenshot (PNG) shows fog on the terrain: many distinct colours,
//   the fog sheet's blue-grey and the lit terrain's green, computed here
//   from the PNG's pixels.
// It prints the page's time per tick on each backend (on the CPU after an
// untimed warm-up run of the demo).
//
// node judge.mjs --native SUMMARY [--backend cpu|gpu ...] [--snapshot FILE]
//                [--screenshots DIR] [--ticks N] [--chromium PATH]
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { serve } from '../examples/three/serve.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const all = (name) => args.flatMap((a, i) => (a === name ? [args[i + 1]] : []));
const nativeFile = option('--native', null);
if (!nativeFile) throw new Error('give --native SUMMARY: the summary.json of native `murk run assets/demo.json`');
const backends = all('--backend').length ? all('--backend') : ['cpu', 'gpu'];
const snapshot = option('--snapshot', null);
// `murk run --snapshot-at T` writes `snapshot-T.murk`, taken after tick T.
const snapshotTick = snapshot ? Number(path.basename(snapshot).match(/(\d+)/)?.[1]) : null;
const screenshots = option('--screenshots', null);
const ticks = option('--ticks', null);
const executablePath = option('--chromium', process.env.CHROMIUM || '/usr/bin/chromium');
const RUN_TIMEOUT_MS = 300_000;
if (!fs.existsSync(path.join(here, '../examples/three/node_modules/murk-fog/package.json'))) {
  throw new Error('murk-fog is not installed in js/examples/three: run `npm install` there after js/build.sh packed it');
}

const summary = JSON.parse(fs.readFileSync(nativeFile, 'utf8'));
const native = new Map(summary.per_tick.map((r) => [r.tick, r.lockstep]));
const lastTick = ticks ? Number(ticks) : summary.per_tick.length;

/** The RGBA pixels of an 8-bit RGB or RGBA PNG (what Chromium writes). */
function decodePng(bytes) {
  let at = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const data = [];
  while (at < bytes.length) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString('ascii', at + 4, at + 8);
    const body = bytes.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      if (body[8] !== 8 || (body[9] !== 2 && body[9] !== 6) || body[12] !== 0) throw new Error('the screenshot is not an 8-bit RGB(A) PNG');
      channels = body[9] === 6 ? 4 : 3;
    } else if (type === 'IDAT') data.push(body);
    at += 12 + length;
  }
  const raw = zlib.inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const out = Buffer.alloc(width * height * 4);
  const prev = Buffer.alloc(stride);
  const line = Buffer.alloc(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? line[i - channels] : 0;
      const b = prev[i];
      const c = i >= channels ? prev[i - channels] : 0;
      const p = a + b - c;
      const pa = Math.abs(p - a);
      const pb = Math.abs(p - b);
      const pc = Math.abs(p - c);
      const paeth = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      line[i] = (src[i] + [0, a, b, (a + b) >> 1, paeth][filter]) & 255;
    }
    for (let x = 0; x < width; x++) {
      for (let k = 0; k < 3; k++) out[(y * width + x) * 4 + k] = line[x * channels + k];
      out[(y * width + x) * 4 + 3] = channels === 4 ? line[x * channels + 3] : 255;
    }
    line.copy(prev);
  }
  return { width, height, rgba: out };
}

/**
 * Distinct colours (5 bits a channel), the luminance spread, and the shares
 * of the fog sheet's pixels (blue-grey: blue above red and green) and of
 * the lit terrain's (green above blue).
 */
function pictureStats({ width, height, rgba }) {
  const colours = new Set();
  let sum = 0;
  let sum2 = 0;
  let fog = 0;
  let terrain = 0;
  const n = width * height;
  for (let i = 0; i < n; i++) {
    const [r, g, b] = [rgba[i * 4], rgba[i * 4 + 1], rgba[i * 4 + 2]];
    colours.add(((r >> 3) << 10) | ((g >> 3) << 5) | (b >> 3));
    const y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    sum += y;
    sum2 += y * y;
    if (b > r + 12 && b > g + 8) fog += 1;
    if (g > b + 10) terrain += 1;
  }
  const mean = sum / n;
  return { colours: colours.size, stddev: Math.sqrt(sum2 / n - mean * mean), fog: fog / n, terrain: terrain / n };
}

const { server, base } = await serve({ files: snapshot ? path.dirname(path.resolve(snapshot)) : null });
const browser = await chromium.launch({
  executablePath,
  headless: true,
  timeout: 60_000,
  args: [
    '--no-sandbox',
    '--enable-unsafe-webgpu',
    // Where there is no GPU: WebGPU on SwiftShader's Vulkan, and WebGL
    // (three.js's WebGL 2 backend draws the CPU runs) on ANGLE's
    // SwiftShader. ANGLE on Vulkan, which the page's test uses, gives no
    // WebGL context on a machine whose Vulkan is Mesa's lavapipe; with
    // ANGLE on SwiftShader the GPU runs' WebGPU canvas works too.
    '--enable-features=Vulkan',
    '--use-vulkan=swiftshader',
    '--use-angle=swiftshader',
    '--enable-unsafe-swiftshader',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    ...(process.env.CHROMIUM_FLAGS ? process.env.CHROMIUM_FLAGS.split(' ') : []),
  ],
});

const runs = [];
for (const backend of backends) {
  // The CPU's tick is timed after an untimed warm-up run of the demo (the
  // browser's first compilation of each function is not a tick's cost).
  const warmup = backend === 'cpu' ? '&warmup=1' : '';
  runs.push({ name: backend, query: `backend=${backend}&draw=30${warmup}${ticks ? `&ticks=${ticks}` : ''}`, backend, screenshot: true, warm: !!warmup });
  if (snapshot) {
    const file = path.basename(snapshot);
    runs.push({ name: `${backend}, from a native snapshot`, query: `backend=${backend}&draw=45&restore=files/${encodeURIComponent(file)}${ticks ? `&ticks=${ticks}` : ''}`, backend, restored: true });
  }
}

let passed = 0;
let failed = 0;
const masks = [];
const check = (ok, what) => {
  if (ok) passed += 1;
  else failed += 1;
  console.log(`${ok ? 'ok    ' : 'FAILED'} ${what}`);
};

try {
  for (const run of runs) {
    const page = await browser.newPage({ viewport: { width: 960, height: 640 } });
    const logs = [];
    page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => logs.push(`pageerror: ${e.message}`));
    await page.goto(`${base}?${run.query}`);
    let result;
    try {
      const crashed = new Promise((resolve) => page.once('pageerror', (e) => resolve({ error: `page error: ${e.message}`, hashes: [] })));
      const done = page.waitForFunction(() => window.murkResult, null, { timeout: RUN_TIMEOUT_MS, polling: 250 }).then(() => page.evaluate(() => window.murkResult));
      result = await Promise.race([done, crashed]);
    } catch (e) {
      result = { error: `no result within ${RUN_TIMEOUT_MS / 1000} s: ${e.message}`, hashes: [] };
    }
    if (result.error) console.log(logs.join('\n'));
    check(!result.error, `[${run.name}] ran to tick ${result.ticks} on ${result.backend}${result.adapter ? ` (${result.adapter})` : ''}${result.error ? `: ${result.error}` : ''}`);
    if (result.versions) console.log(`       murk-fog ${result.versions.package}, snapshot format ${result.versions.snapshotFormat}, hash format ${result.versions.hashFormat}`);
    if (result.ticksTimed) {
      const warmth = run.warm ? ', after a warm-up run' : '';
      console.log(`       ${(result.tickMs / result.ticksTimed).toFixed(3)} ms a tick over ${result.ticksTimed} ticks (fog.tick() alone${warmth})`);
    }
    const first = result.restored ? result.restored.tick + 1 : 0;
    const expected = lastTick - first - 2;
    check(result.hashes.length === expected, `[${run.name}] ${result.hashes.length} hashes landed (each two ticks after its tick; ${expected} expected)`);
    const differing = result.hashes.filter(([tick, hash]) => native.get(tick) !== hash);
    check(
      result.hashes.length > 0 && differing.length === 0,
      `[${run.name}] every hash equals native murk run's` +
        (differing.length ? ` (${differing.length} differ; tick ${differing[0][0]}: page ${differing[0][1]}, native ${native.get(differing[0][0])})` : ''),
    );
    if (run.restored) {
      const r = result.restored;
      if (r && r.hash === null) {
        // The GPU hashes on the device, per tick: the continued hashes judge it.
        check(r.tick === snapshotTick, `[${run.name}] restored the state after tick ${r.tick} (the snapshot's: ${snapshotTick})`);
      } else {
        check(r && native.get(r.tick) === r.hash, `[${run.name}] the restored state hashes as native's tick ${r?.tick}: ${r?.hash} (native ${native.get(r?.tick)})`);
      }
    } else {
      check(
        typeof result.staleHandle === 'string' && /handle = \d+: is stale/.test(result.staleHandle),
        `[${run.name}] the expired flare's handle is stale: ${result.staleHandle}`,
      );
    }
    if (result.mask) masks.push({ run: run.name, ticks: result.ticks, ...result.mask });
    if (run.backend === 'gpu' && !result.error) {
      check(result.renderer === 'WebGPU', `[${run.name}] three.js drew on murk's WebGPU device from its mask texture (renderer: ${result.renderer})`);
    }
    if (run.screenshot && !result.error) {
      const file = path.join(screenshots || fs.mkdtempSync('/tmp/murk-judge-'), `three-${run.backend}.png`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      await page.screenshot({ path: file });
      const stats = pictureStats(decodePng(fs.readFileSync(file)));
      check(
        stats.colours >= 200 && stats.stddev >= 20 && stats.fog >= 0.05 && stats.terrain >= 0.02,
        `[${run.name}] the screenshot shows fog on the terrain: ${stats.colours} colours, luminance spread ${stats.stddev.toFixed(1)}, ` +
          `${(100 * stats.fog).toFixed(1)} % fog sheet, ${(100 * stats.terrain).toFixed(1)} % lit terrain (${file})`,
      );
    }
    await page.close();
  }
  // The backends are byte-identical: each run's final mask (read back as a
  // Uint16Array on either backend) has the same digest.
  const digests = new Set(masks.map((m) => `${m.width}x${m.height} ${m.digest}`));
  check(masks.length === runs.length && digests.size === 1, `every run's final mask is the same: ${masks.map((m) => `${m.run} ${m.digest}`).join(', ')}`);
} finally {
  await browser.close();
  server.close();
}
console.log(`judge: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
