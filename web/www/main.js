// The demo page: runs a scenario with murk (wasm), one tick per frame, on
// the CPU backend or on the browser's WebGPU device, and switches between
// them while it runs. A tick on the GPU runs only once every readback has
// landed (`page.ready()`), and the page yields to the browser until then:
// nothing ever waits for the device.
//
// A dropped scenario comes with the files it names (its map, its
// instances' profile files), dropped beside it; the view buttons look
// through each instance's (team's) eyes while it runs.
//
// Query parameters: `backend=cpu|gpu|auto` to start on (`auto` takes the
// GPU unless the browser offers only a software adapter, and says why),
// `start=drop` to wait for a dropped scenario instead of running the demo;
// for tests, `ticks=N` to stop after N ticks and publish
// `window.murkResult`, `switch=A,B,…` to switch backend before those ticks,
// `views=T:NAME,…` to switch the view to instance NAME before tick T. The
// page sets `data-ready` on its body once it takes drops.
import init, { Page, openGpu } from './pkg/murk_web.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const stopAfter = params.has('ticks') ? Number(params.get('ticks')) : null;
const switchAt = (params.get('switch') || '').split(',').filter(Boolean).map(Number);
const firstBackend = ['gpu', 'auto'].includes(params.get('backend')) ? params.get('backend') : 'cpu';
const viewAt = (params.get('views') || '').split(',').filter(Boolean).map((v) => {
  const [tick, ...name] = v.split(':');
  return { tick: Number(tick), name: name.join(':') };
});

let gpu = null;           // the WebGpu device, opened on first use
let gpuError = null;      // why WebGPU cannot be used here, once known
let page = null;          // the running scenario
let scenario = null;      // { name, text, files: { file: text } }
let choice = null;        // what `auto` chose and why
let paused = false;
let wanted = null;        // a backend to switch to at the next frame
let generation = 0;       // bumped when a new scenario starts
const costs = { cpu: { ms: 0, ticks: 0 }, gpu: { ms: 0, ticks: 0 } };
const switches = [];
const views = [];         // { tick, view, digest, left }: each view shown, from its first frame (`left`: the view before it, same state)
const viewErrors = [];    // the errors of views asked for that do not exist

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

// `auto`: the GPU when the browser's adapter is a real one, else the CPU
// backend (wasm), which outruns a software adapter; the page says which
// and why.
async function choose(backend) {
  if (backend !== 'auto') return backend;
  let chosen;
  if (!navigator.gpu) {
    chosen = { backend: 'cpu', why: 'this browser offers no WebGPU' };
  } else {
    try {
      const device = await gpuDevice();
      chosen = device.software
        ? { backend: 'cpu', why: `${device.software}; the CPU backend outruns it` }
        : { backend: 'gpu', why: `${device.adapter} is a hardware adapter` };
    } catch (e) {
      chosen = { backend: 'cpu', why: `WebGPU did not open: ${e instanceof Error ? e.message : e}` };
    }
  }
  choice = `auto chose ${chosen.backend === 'gpu' ? 'the GPU (WebGPU)' : 'the CPU (wasm)'}: ${chosen.why}`;
  $('choice').textContent = choice;
  return chosen.backend;
}

async function start(backend) {
  generation += 1;
  const names = Object.keys(scenario.files);
  const texts = names.map((n) => scenario.files[n]);
  page = (await choose(backend)) === 'gpu'
    ? Page.onGpu(scenario.name, scenario.text, names, texts, await gpuDevice())
    : Page.onCpu(scenario.name, scenario.text, names, texts);
  $('scenario-name').textContent = scenario.name;
  costs.cpu = { ms: 0, ticks: 0 };
  costs.gpu = { ms: 0, ticks: 0 };
  views.length = 0;
  const buttons = $('views');
  buttons.replaceChildren(...page.instances.map((name) => {
    const b = document.createElement('button');
    b.textContent = name;
    b.dataset.view = name;
    b.onclick = () => showView(name);
    return b;
  }));
}

// Looks through instance `name`'s eyes from the next frame; an unknown one
// is shown as an error and the view stays.
function showView(name) {
  try {
    page.setView(name);
  } catch (e) {
    viewErrors.push(showError(e));
  }
}

// A digest of the pixels drawn on the CPU (FNV-1a), so a test can tell
// one view's picture from another's.
function digest(picture) {
  let h = 0x811c9dc5;
  for (const byte of picture.data) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
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
  const view = page.view;
  let picture = null;
  if (onGpu) {
    page.drawGpu(gpu);
  } else {
    picture = page.pictureCpu();
    const canvas = $('cpu-canvas');
    if (canvas.width !== picture.width || canvas.height !== picture.height) {
      canvas.width = picture.width;
      canvas.height = picture.height;
    }
    canvas.getContext('2d').putImageData(picture, 0, 0);
  }
  if (!views.length || views[views.length - 1].view !== view) {
    // On the CPU, the picture of the view left is taken of the same state
    // too, so that a test tells the two teams' pictures apart.
    let left = null;
    const previous = views.length ? views[views.length - 1].view : null;
    if (picture && previous !== null) {
      page.setView(previous);
      left = digest(page.pictureCpu());
      page.setView(view);
    }
    views.push({ tick: page.ticksDone, view, digest: picture ? digest(picture) : null, left });
  }
  for (const b of $('views').children) b.classList.toggle('on', b.dataset.view === view);
  $('backend').textContent = page.backendName;
  $('tick').textContent = String(page.ticksDone);
  $('hash').textContent = page.latestHash ?? '(lands two ticks after the first)';
  $('seen').textContent = page.viewSeen || '–';
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
    answers: page ? JSON.parse(page.answers()) : [],
    instances: page ? page.instances : [],
    views,
    viewErrors,
    choice,
    costs,
    switches,
    adapter: gpu ? gpu.adapter : null,
    software: gpu ? gpu.software ?? null : null,
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
    for (const v of viewAt.filter((v) => v.tick === page.ticksDone)) showView(v.name);
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

// The scenario is the dropped .json or .ron file not named `*.profile.*`;
// every other file dropped with it is given beside it (the map and the
// profile files it names).
async function readDropped(dropped) {
  const list = [...dropped];
  const file = list.find((f) => /\.(json|ron)$/i.test(f.name) && !/\.profile\./i.test(f.name));
  if (!file) throw new Error('drop a scenario file ending in .json or .ron, with the map and profile files it names');
  const files = {};
  for (const f of list.filter((f) => f !== file)) files[f.name] = await f.text();
  return { name: file.name, text: await file.text(), files };
}

async function main() {
  await init();
  const [text, map] = await Promise.all([fetch('demo.json'), fetch('maps/lak303d.map')].map((p) => p.then((r) => r.text())));
  scenario = { name: 'demo.json', text, files: { 'lak303d.map': map } };
  if (!navigator.gpu) {
    gpuError = 'no WebGPU in this browser: the CPU backend only';
    $('adapter').textContent = gpuError;
    $('use-gpu').disabled = true;
  }
  $('use-cpu').onclick = () => { wanted = 'cpu'; };
  $('use-gpu').onclick = () => { wanted = 'gpu'; };
  $('use-auto').onclick = async () => {
    try { wanted = await choose('auto'); } catch (e) { showError(e); }
  };
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
