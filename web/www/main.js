// The demo page: runs a scenario with murk (wasm), one tick per frame, on
// the CPU backend or on the browser's WebGPU device, and switches between
// them while it runs. A tick on the GPU runs only once every readback has
// landed (`page.ready()`), and the page yields to the browser until then:
// nothing ever waits for the device.
//
// Query parameters: `backend=cpu|gpu` to start on, `start=drop` to wait
// for a dropped scenario instead of running the demo; for tests, `ticks=N`
// to stop after N ticks and publish `window.murkResult`, `switch=A,B,…` to
// switch backend before those ticks. The page sets `data-ready` on its body
// once it takes drops.
import init, { Page, openGpu } from './pkg/murk_web.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const stopAfter = params.has('ticks') ? Number(params.get('ticks')) : null;
const switchAt = (params.get('switch') || '').split(',').filter(Boolean).map(Number);
const firstBackend = params.get('backend') === 'gpu' ? 'gpu' : 'cpu';

let gpu = null;           // the WebGpu device, opened on first use
let gpuError = null;      // why WebGPU cannot be used here, once known
let page = null;          // the running scenario
let scenario = null;      // { name, text, maps: { file: text } }
let paused = false;
let wanted = null;        // a backend to switch to at the next frame
let generation = 0;       // bumped when a new scenario starts
const costs = { cpu: { ms: 0, ticks: 0 }, gpu: { ms: 0, ticks: 0 } };
const switches = [];

const yieldToBrowser = () => new Promise((resolve) => setTimeout(resolve, 0));
const nextFrame = () => (stopAfter === null ? new Promise((resolve) => requestAnimationFrame(resolve)) : yieldToBrowser());

function showError(e) {
  const text = e instanceof Error ? e.message : String(e);
  $('error').textContent = text;
  console.error(text);
  return text;
}

async function gpuDevice() {
  if (gpu) return gpu;
  if (!navigator.gpu) throw new Error('this browser offers no WebGPU (navigator.gpu is missing); the CPU backend works without it');
  gpu = await openGpu($('gpu-canvas'));
  $('adapter').textContent = `${gpu.adapter}: ${gpu.limits}`;
  return gpu;
}

async function start(backend) {
  generation += 1;
  const names = Object.keys(scenario.maps);
  const texts = names.map((n) => scenario.maps[n]);
  page = backend === 'gpu'
    ? Page.onGpu(scenario.name, scenario.text, names, texts, await gpuDevice())
    : Page.onCpu(scenario.name, scenario.text, names, texts);
  $('scenario-name').textContent = scenario.name;
  costs.cpu = { ms: 0, ticks: 0 };
  costs.gpu = { ms: 0, ticks: 0 };
}

// Waits (yielding to the browser) until the next step runs without a wait
// for the device; fails if the browser took the device away meanwhile.
async function untilReady() {
  for (;;) {
    if (page.onGpuNow && gpu.lost) throw new Error(gpu.lost);
    if (page.ready()) return;
    await yieldToBrowser();
  }
}

// A switch in two steps, so that leaving the GPU never waits for it: the
// snapshot's reads are rehearsed, the page yields until they land, then
// the snapshot is taken and restored on the other backend.
async function switchTo(backend) {
  if ((backend === 'gpu') === page.onGpuNow) return;
  const device = backend === 'gpu' ? await gpuDevice() : null;
  await untilReady();
  page.prepareSwitch();
  await untilReady();
  if (device) page.switchToGpu(device); else page.switchToCpu();
  switches.push({ tick: page.ticksDone, to: page.backendName });
}

function draw() {
  const onGpu = page.onGpuNow;
  $('gpu-canvas').hidden = !onGpu;
  $('cpu-canvas').hidden = onGpu;
  if (onGpu) {
    page.drawGpu(gpu);
  } else {
    const picture = page.pictureCpu();
    const canvas = $('cpu-canvas');
    if (canvas.width !== picture.width || canvas.height !== picture.height) {
      canvas.width = picture.width;
      canvas.height = picture.height;
    }
    canvas.getContext('2d').putImageData(picture, 0, 0);
  }
  $('backend').textContent = page.backendName;
  $('tick').textContent = String(page.ticksDone);
  $('hash').textContent = page.latestHash ?? '(lands two ticks after the first)';
  for (const b of ['cpu', 'gpu']) {
    const c = costs[b];
    if (c.ticks) $(`cost-${b}`).textContent = `${(c.ms / c.ticks).toFixed(2)} ms a tick (${c.ticks} ticks)`;
  }
  for (const b of ['cpu', 'gpu']) $(`use-${b}`).classList.toggle('on', (b === 'gpu') === onGpu);
}

function publish(error) {
  window.murkResult = {
    scenario: scenario && scenario.name,
    backend: page && page.backendName,
    ticks: page ? page.ticksDone : 0,
    hashes: page ? JSON.parse(page.hashes()) : [],
    costs,
    switches,
    adapter: gpu ? gpu.adapter : null,
    limits: gpu ? gpu.limits : null,
    error: error || null,
  };
  document.title = error ? 'murk: failed' : 'murk: done';
}

async function loop() {
  const mine = generation;
  while (mine === generation) {
    if (paused) { await nextFrame(); continue; }
    if (wanted) {
      const backend = wanted;
      wanted = null;
      try { await switchTo(backend); } catch (e) { showError(e); }
    }
    if (switchAt.includes(page.ticksDone) && !switches.some((s) => s.tick === page.ticksDone)) {
      await switchTo(page.onGpuNow ? 'cpu' : 'gpu');
    }
    await untilReady();
    const t0 = performance.now();
    page.tick();
    const spent = performance.now() - t0;
    const c = costs[page.onGpuNow ? 'gpu' : 'cpu'];
    c.ms += spent;
    c.ticks += 1;
    draw();
    if (stopAfter !== null && page.ticksDone >= stopAfter) {
      publish(null);
      return;
    }
    await nextFrame();
  }
}

async function run(backend) {
  await start(backend);
  loop().catch((e) => publish(showError(e)));
}

async function readDropped(files) {
  const list = [...files];
  const file = list.find((f) => /\.(json|ron)$/i.test(f.name));
  if (!file) throw new Error('drop a scenario file ending in .json or .ron (with the .map file it names)');
  const maps = {};
  for (const f of list.filter((f) => /\.map$/i.test(f.name))) maps[f.name] = await f.text();
  return { name: file.name, text: await file.text(), maps };
}

async function main() {
  await init();
  const [text, map] = await Promise.all([fetch('demo.json'), fetch('maps/lak303d.map')].map((p) => p.then((r) => r.text())));
  scenario = { name: 'demo.json', text, maps: { 'lak303d.map': map } };
  if (!navigator.gpu) {
    gpuError = 'no WebGPU in this browser: the CPU backend only';
    $('adapter').textContent = gpuError;
    $('use-gpu').disabled = true;
  }
  $('use-cpu').onclick = () => { wanted = 'cpu'; };
  $('use-gpu').onclick = () => { wanted = 'gpu'; };
  $('pause').onclick = () => { paused = !paused; $('pause').textContent = paused ? 'run' : 'pause'; };
  const drop = $('drop');
  drop.ondragover = (e) => { e.preventDefault(); drop.classList.add('over'); };
  drop.ondragleave = () => drop.classList.remove('over');
  drop.ondrop = async (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    try {
      scenario = await readDropped(e.dataTransfer.files);
      $('error').textContent = '';
      await run(page ? (page.onGpuNow ? 'gpu' : 'cpu') : firstBackend);
    } catch (err) { showError(err); }
  };
  document.body.dataset.ready = '1';
  if (params.get('start') === 'drop') {
    $('scenario-name').textContent = 'waiting for a scenario file';
    return;
  }
  await run(firstBackend);
}

main().catch((e) => publish(showError(e)));
