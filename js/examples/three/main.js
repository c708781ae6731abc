// The three.js example's loop: the demo on murk-fog (CPU in wasm, or GPU on
// WebGPU), ticked without ever waiting for the device, drawn with three.js,
// each tick's lockstep hash shown as it lands.
//
// Query parameters: `backend=cpu|gpu`, `ticks=N` (default: the scenario's),
// `draw=K` (draw every K ticks; default 1), `restore=URL` (restore that
// snapshot first, a native `murk run --snapshot-at` run snapshot or a fog
// snapshot, and continue from its tick), `warmup=1` (run the demo once on
// a scratch CPU fog first, untimed). When the run ends the page
// publishes `window.murkResult` (what the judge reads).
import init, { Fog, snapshotTicks, versions } from 'murk-fog';
import { buildDemo } from './demo.js';
import { View } from './view.js';

const params = new URLSearchParams(location.search);
const hud = document.getElementById('hud');
const say = (text) => (hud.textContent = text);
// Yields to the browser: a WebGPU readback lands only while the page does.
const yieldToBrowser = () => new Promise((resolve) => setTimeout(resolve, 0));

async function untilReady(fog) {
  while (!fog.ready()) await yieldToBrowser();
}

async function run() {
  await init();
  const backend = params.get('backend') || 'cpu';
  const scenario = await (await fetch('assets/demo.json')).json();
  const mapText = await (await fetch(`assets/${scenario.map.file}`)).text();
  const ticks = Number(params.get('ticks') || scenario.ticks);
  const drawEvery = Math.max(1, Number(params.get('draw') || 1));
  const restoreUrl = params.get('restore');
  if (params.get('warmup') === '1') {
    // The whole demo once on a scratch fog first, so that the timed run
    // measures the browser's optimised code rather than its first
    // compilation of each function (what a game sees after its first
    // seconds).
    const scratch = Fog.cpu();
    const warm = buildDemo(scratch, scenario, mapText);
    for (let tick = 0; tick < scenario.ticks; tick++) {
      warm.place(tick);
      scratch.tick(scenario.tick_us);
    }
    scratch.free();
  }
  const fog = backend === 'gpu' ? await Fog.gpu() : Fog.cpu();
  const result = { backend: fog.backend, adapter: fog.adapter, versions: versions(), hashes: [], tickMs: 0, ticksTimed: 0, tickTimes: [] };

  // With a snapshot: the entities as they stood when it was taken, the fog
  // state from it, then the hash of the restored state before any tick.
  let start = 0;
  let snapshot = null;
  if (restoreUrl) {
    snapshot = new Uint8Array(await (await fetch(restoreUrl)).arrayBuffer());
    start = snapshotTicks(snapshot);
  }
  const demo = buildDemo(fog, scenario, mapText, { resumeAt: start });
  if (snapshot) {
    fog.restore(snapshot);
    // On the GPU the device hashes: the first hash lands two ticks on.
    result.restored = { tick: start - 1, hash: fog.onGpu ? null : fog.hashNow() };
  }
  const instance = scenario.instances[0];
  const canvas = document.getElementById('view');
  const view = await View.create(canvas, fog, instance, mapText, scenario.map.tree_height);
  result.renderer = view.backend;

  const draw = (tick) => {
    if (fog.onGpu) {
      // three samples murk's mask texture on murk's device: nothing comes
      // back. `ready()` submits the tick murk recorded, so that the frame
      // shows it.
      fog.ready();
    } else {
      view.setMask(fog.finalMask(instance.name));
    }
    view.setUnits(demo.units(tick));
    view.draw();
  };

  let latest = '';
  for (let tick = start; tick < ticks; tick++) {
    await untilReady(fog);
    demo.place(tick);
    const t0 = performance.now();
    const report = fog.tick(scenario.tick_us);
    result.tickMs += performance.now() - t0;
    result.ticksTimed += 1;
    result.tickTimes.push(performance.now() - t0);
    if (report.hash) {
      result.hashes.push([report.hash.tick, report.hash.hash]);
      latest = `tick ${report.hash.tick}: ${report.hash.hash}`;
    }
    if ((tick + 1) % drawEvery === 0 || tick + 1 === ticks) draw(tick + 1);
    say(`murk-fog ${result.versions.package} on ${fog.backend}, drawn by three.js on ${view.backend}\n` +
      `tick ${tick + 1}/${ticks}, ${(result.tickMs / result.ticksTimed).toFixed(2)} ms a tick\nlockstep hash ${latest}`);
    // A CPU run yields too now and then, so that the page stays alive.
    if (!fog.onGpu && tick % 10 === 9) await yieldToBrowser();
  }

  // The final mask as a typed array on either backend (on the GPU read
  // back a round trip later: prepared, then taken once landed), digested
  // so that the judge can compare the backends' masks.
  await untilReady(fog);
  fog.prepareMask(instance.name);
  await untilReady(fog);
  const final = fog.finalMask(instance.name);
  let digest = 0x811c9dc5;
  for (const v of final.texels) digest = Math.imul(digest ^ v, 0x01000193) >>> 0;
  result.mask = { width: final.width, height: final.height, digest: digest.toString(16) };

  // The flare expired at its 30th tick: its handle must be stale now.
  const flare = demo.entities.find((e) => e.transient_ticks);
  if (flare && flare.handle !== null) {
    try {
      fog.move(flare.handle, 0, 0, 0);
      result.staleHandle = 'moving the expired flare did not fail';
    } catch (e) {
      result.staleHandle = String(e.message || e);
    }
  }
  result.ticks = ticks;
  window.murkResult = result;
}

run().catch((e) => {
  say(`error: ${e.message || e}`);
  console.error(e);
  window.murkResult = { error: String(e.message || e), hashes: [] };
});
