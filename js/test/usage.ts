// A small program against murk-fog's TypeScript types, compiled with
// `tsc --noEmit --strict` (never run): the package's types must describe
// the library API precisely enough that each use below type-checks and
// each misuse marked `@ts-expect-error` does not (types of `any` would let
// the misuses through, and tsc would then report the unused directives).
import init, { Fog, snapshotTicks, versions } from 'murk-fog';
import type { Explored, InstanceDesc, Mask, MaskParams, MurkGpuTexture, Parts, StealthState, TickReport, Versions } from 'murk-fog';

const yieldToBrowser = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

export async function lockstepLoop(): Promise<string[]> {
  await init();
  const v: Versions = versions();
  const formats: [number, number] = [v.snapshotFormat, v.hashFormat];
  const fog: Fog = Fog.cpu();
  const desc: InstanceDesc = {
    name: 'red',
    area: { center: [64, 64, 5], extents: [128, 128, 10] },
    resolution: 128,
    observed_teams: [0],
    profile: { explored_value: 0.45, ray_method: 'dda' },
  };
  fog.createInstance(desc);
  const scout: Parts = { source: { radius: 16, cone: { yaw_degrees: 90, half_angle_degrees: 45 } }, tracked: { footprint: 1 } };
  const unit: bigint = fog.spawn(20, 30, 0, scout);
  const spy: bigint = fog.addActor(60, 60, 0, { hide_mode: 'freeze_with_ghost' });
  const wall: bigint = fog.addBlocker(40, 40, 0, { shape: { rect: { size: [4, 20], yaw_degrees: 30 } }, height: 3 });
  const flare: bigint = fog.addSource(90, 90, 0, { radius: 10, falloff: 0.5 }, 30);
  fog.loadMap('type octile\nheight 1\nwidth 1\nmap\n.\n', { cell_size: 2, tree_height: 4 });
  const hashes: string[] = [];
  for (let tick = 0; tick < 10; tick++) {
    while (!fog.ready()) await yieldToBrowser();
    fog.move(unit, 20 + tick, 30, 0);
    const report: TickReport = fog.tick(33_333);
    if (report.hash) hashes.push(`${report.hash.tick}:${report.hash.hash}`);
    for (const e of report.sightEvents) console.log(e.observer, e.event, e.entity + 1n);
    for (const e of report.events) console.log(e.event, e.actor);
  }
  const mask: Mask = fog.finalMask('red');
  const texels: Uint16Array = mask.texels;
  const params: MaskParams = fog.maskParams('red');
  const block: Float32Array = params.block;
  const seen: BigUint64Array = fog.visibleTo('red');
  const sees: boolean = fog.sees('red', unit);
  const state: StealthState | undefined = fog.stealth(spy);
  const blips: Float32Array = fog.blips('red');
  const lines: bigint = fog.submitLines('red', new Float32Array([20, 30, 0, 60, 60, 0, 1.5]));
  while (!fog.ready()) await yieldToBrowser();
  const answers: Uint16Array | undefined = fog.pollLines(lines);
  const explored: Explored | undefined = fog.explored('red');
  const snapshot: Uint8Array = fog.snapshot();
  const ticks: number = snapshotTicks(snapshot);
  fog.restore(snapshot);
  fog.importMemory('red', fog.exportMemory('red'), true);
  fog.remove(wall);
  fog.remove(flare);
  console.log(formats, texels.length, block.length, seen.length, sees, state?.fade, blips.length, answers?.[0], explored?.fraction, ticks, fog.hashNow());

  // @ts-expect-error a handle is a bigint, not a number
  fog.move(1, 0, 0, 0);
  // @ts-expect-error a source needs its radius
  fog.addSource(0, 0, 0, {});
  // @ts-expect-error no such ray method
  fog.applyProfile('red', { ray_method: 'raycast' });
  // @ts-expect-error an instance needs an area
  fog.createInstance({ name: 'blue', resolution: 64 });
  return hashes;
}

export async function onTheGpu(): Promise<MurkGpuTexture> {
  const fog: Fog = await Fog.gpu();
  fog.createInstance({ name: 'red', area: { center: [0, 0, 0], extents: [64, 64, 8] }, resolution: 64 });
  while (!fog.ready()) await yieldToBrowser();
  fog.tick(33_333);
  fog.prepareMask('red');
  while (!fog.ready()) await yieldToBrowser();
  const mask: Mask = fog.finalMask('red');
  console.log(fog.adapter, fog.software, fog.lost, fog.device, mask.width);
  return fog.maskTexture('red');
}
