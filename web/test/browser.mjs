// The page in a real browser: serves web/dist from a loopback server, loads
// it in headless Chromium (WebGPU through SwiftShader where there is no
// GPU), runs the scenario on the CPU backend (wasm), on the GPU backend
// (WebGPU), and once switching CPU -> GPU -> CPU while it runs, and
// compares every lockstep hash the page saw with native `murk run`'s
// summary.json for the same ticks. Saves a screenshot of the GPU run. It
// runs the demo with `backend=auto` and checks what `auto` chose and why.
// For each `--drop SCENARIO`, it opens the page empty on the GPU, drops the
// scenario with the files it names (map, profile files) as a user would,
// and compares its hashes, sight sets, events and blips with native `murk run`'s
// summaries `NATIVES/NAME-cpu/summary.json` and `NATIVES/NAME-gpu/...`;
// each dropped scenario with two instances or more also runs on the CPU
// while the view moves between its instances, an unknown one included.
//
// node browser.mjs --dist DIR --native SUMMARY [--native SUMMARY ...]
//                  [--ticks N] [--screenshot PNG] [--chromium PATH]
//                  [--drop SCENARIO ... --natives DIR] [--expect-auto cpu|gpu]
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
const drops = all('--drop');
const nativesDir = option('--natives', null);
const expectAuto = option('--expect-auto', null);
const ticks = Number(option('--ticks', '180'));
const screenshot = option('--screenshot', null);
const executablePath = option('--chromium', process.env.CHROMIUM || '/usr/bin/chromium');
// Bounds, so that a hung page fails the run instead of stalling CI.
const RUN_TIMEOUT_MS = 300_000;

if (natives.length === 0) throw new Error('give at least one --native summary.json of `murk run`');
if (drops.length && !nativesDir) throw new Error('--drop needs --natives DIR (with NAME-cpu/summary.json and NAME-gpu/summary.json)');
// A tick's multiplayer answers in one canonical text, from a `per_tick`
// record of summary.json or from the page's `answers` (the same fields,
// empty ones left out).
const ANSWER_FIELDS = ['events', 'observer_events', 'sight', 'sight_events', 'blips'];
// Keys sorted at every level: summary.json and the page order an event's
// fields differently.
const canonical = (v) =>
  Array.isArray(v) ? v.map(canonical) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])])) : v;
// Blips are f32 positions: the page writes each as the shortest f32 text,
// summary.json as the shortest f64 text of the same value; both are read
// back to that f32 here.
const f32 = (v) => (Array.isArray(v) ? v.map(f32) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, f32(x)])) : typeof v === 'number' ? Math.fround(v) : v);
const answerText = (record) => JSON.stringify(ANSWER_FIELDS.map((f) => canonical(f === 'blips' ? f32(record[f] ?? null) : record[f] ?? null)));
const summaries = (files) =>
  files.map((file) => {
    const summary = JSON.parse(fs.readFileSync(file, 'utf8'));
    return {
      file,
      backend: summary.backend,
      ticks: summary.per_tick.length,
      lockstep: new Map(summary.per_tick.map((r) => [r.tick, r.lockstep])),
      answers: new Map(summary.per_tick.map((r) => [r.tick, answerText(r)])),
      sets: summary.per_tick.filter((r) => r.sight && Object.keys(r.sight).length).length,
    };
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
runs.push({ name: 'auto', query: 'backend=auto&ticks=12', ticks: 12, natives: expected, auto: true });
let viewed = false;
for (const drop of drops) {
  const name = path.basename(drop).replace(/\.(json|ron)$/, '');
  const natives = summaries(['cpu', 'gpu'].map((b) => path.join(nativesDir, `${name}-${b}`, 'summary.json')));
  // The scenario first, then the files it names, by file name as a user
  // drops them beside it.
  const scenario = JSON.parse(fs.readFileSync(drop, 'utf8'));
  const named = [...(scenario.map ? [scenario.map.file] : []), ...scenario.instances.flatMap((i) => (i.profile_file ? [i.profile_file] : []))];
  const files = [drop, ...named.map((f) => path.resolve(path.dirname(drop), f))].map((f) => [path.basename(f), fs.readFileSync(f, 'utf8')]);
  const ticks = natives[0].ticks;
  runs.push({ name: `dropped ${path.basename(drop)}`, query: `backend=gpu&start=drop&ticks=${ticks}`, ticks, natives, files, answers: true });
  const instances = scenario.instances.map((i) => i.name);
  if (instances.length >= 2) {
    viewed = true;
    const [a, b] = instances;
    const at = [Math.floor(ticks / 4), Math.floor(ticks / 2), Math.floor((3 * ticks) / 4)];
    const views = `${at[0]}:${b},${at[1]}:no-such-team,${at[2]}:${a}`;
    runs.push({ name: `views of ${path.basename(drop)}`, query: `backend=cpu&start=drop&ticks=${ticks}&views=${views}`, ticks, natives, files, answers: true, views: { instances, a, b } });
  }
}
if (drops.length && !viewed) throw new Error('no dropped scenario has two instances to switch the view between');
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
    if (run.files) check(result.scenario === run.files[0][0], `[${run.name}] the page ran the dropped scenario (${result.scenario}, with ${run.files.length - 1} files beside it)`);
    const cost = (c) => (c.ticks ? `${(c.ms / c.ticks).toFixed(2)} ms a tick over ${c.ticks}` : 'not run');
    if (result.costs) console.log(`       CPU (wasm) ${cost(result.costs.cpu)}; GPU (WebGPU) ${cost(result.costs.gpu)}`);
    if (result.adapter) console.log(`       adapter ${result.adapter}: ${result.limits}`);
    if (result.switches && result.switches.length) console.log(`       switches: ${result.switches.map((s) => `before tick ${s.tick} to ${s.to}`).join(', ')}`);
    check(result.hashes.length === run.ticks - 2, `[${run.name}] ${result.hashes.length} hashes landed (each two ticks after its tick; ${run.ticks - 2} expected)`);
    if (run.answers) {
      for (const native of run.natives) {
        const differing = result.answers.filter(([tick, answers]) => native.answers.get(tick) !== answerText(answers));
        const first = differing[0];
        check(
          result.answers.length === run.ticks && differing.length === 0,
          `[${run.name}] every tick's sight sets, events and blips equal native ${native.backend} (${native.sets} ticks with a set)` +
            (first ? ` (${differing.length} differ; tick ${first[0]}: page ${answerText(first[1])}, native ${native.answers.get(first[0])})` : ''),
        );
      }
    }
    if (run.views) {
      const { instances, a, b } = run.views;
      const shown = (result.views || []).map((v) => v.view);
      console.log(`       views: ${(result.views || []).map((v) => `${v.view} from tick ${v.tick} (${v.digest})`).join(', ')}`);
      check(JSON.stringify(result.instances) === JSON.stringify(instances), `[${run.name}] the page offers every instance's view (${result.instances})`);
      check(JSON.stringify(shown) === JSON.stringify([a, b, a]), `[${run.name}] the view went ${a} -> ${b} -> ${a} (${shown.join(' -> ')})`);
      // Each switch's first frame against the view it left, of the same state.
      const switched = (result.views || []).slice(1);
      check(
        switched.length === 2 && switched.every((v) => v.digest && v.left && v.digest !== v.left),
        `[${run.name}] each view draws its own team's picture of the same state (${switched.map((v) => `${v.left} -> ${v.digest}`).join(', ')})`,
      );
      const errors = result.viewErrors || [];
      check(
        errors.length === 1 && errors[0].includes('no-such-team') && errors[0].includes(instances.join(', ')),
        `[${run.name}] an unknown team is a named error and the view stays: ${errors[0]}`,
      );
    }
    if (run.auto) {
      console.log(`       ${result.choice}`);
      // A software adapter must leave auto on the CPU; `--expect-auto`
      // says what this machine must choose (CI has no GPU: `cpu`).
      const want = expectAuto ?? (result.software ? 'cpu' : null);
      check(
        typeof result.choice === 'string' && result.choice.startsWith('auto chose') && (!want || result.backend.startsWith(want)),
        `[${run.name}] auto ran ${result.backend} on ${result.adapter} (software: ${result.software ?? 'no'}; required: ${want ?? 'either'})`,
      );
    }
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
