// The demo scene (`assets/demo.json`) built through murk-fog's library API,
// not a scenario runner: one instance, the map as the height capture, and
// the scripted sources placed before each tick the way native `murk run`
// places them, so that every tick's lockstep hash equals native's.
//
// What must match native exactly:
// - the spawn order (entity handles feed the stealth and sight hashes):
//   the capture first, then each tick's new entities in id order;
// - the positions: `positionAt` is the scenario runner's `position_at` in
//   the same f64 arithmetic (JavaScript numbers are f64; Rust's `powi(2)`
//   is `x * x`; `%` is the same truncated remainder), its inputs read as
//   f32 first (Rust parses the file into f32) and its result rounded to f32
//   at the end (Rust's `as f32` is `Math.fround`).

const f32 = Math.fround;

/** A scripted entity's position at `tick`, as the scenario runner computes it. */
export function positionAt(entity, tick, tickUs) {
  const start = entity.position.map(f32);
  const m = entity.motion;
  const speed = m ? f32(m.speed) : 0;
  if (!m || !m.waypoints || m.waypoints.length === 0 || speed <= 0) return start;
  const points = [start, ...m.waypoints.map((p) => p.map(f32))];
  if (m.looped) points.push(points[0]);
  const segment = (a, b) => Math.sqrt((b[0] - a[0]) * (b[0] - a[0]) + (b[1] - a[1]) * (b[1] - a[1]) + (b[2] - a[2]) * (b[2] - a[2]));
  let total = 0;
  for (let i = 1; i < points.length; i++) total += segment(points[i - 1], points[i]);
  const startTick = entity.spawn_tick ?? 0;
  const elapsed = (Math.max(tick - startTick, 0) * tickUs) / 1.0e6;
  let dist = speed * elapsed;
  const last = points[points.length - 1];
  if (total <= 0) return start;
  if (m.looped) {
    dist %= total;
  } else if (dist >= total) {
    return last.map(f32);
  }
  for (let i = 1; i < points.length; i++) {
    const [a, b] = [points[i - 1], points[i]];
    const l = segment(a, b);
    if (dist <= l && l > 0) {
      const f = dist / l;
      return [0, 1, 2].map((k) => f32(a[k] + (b[k] - a[k]) * f));
    }
    dist -= l;
  }
  return last.map(f32);
}

/**
 * The demo on `fog` (a murk-fog `Fog`): its instance and map capture now,
 * its sources placed by `place(tick)` before each tick. With `resumeAt`,
 * the entities stand as they did after tick `resumeAt - 1` (for a restored
 * snapshot): a transient source that expired by then is gone.
 */
export function buildDemo(fog, scenario, mapText, { resumeAt = 0 } = {}) {
  for (const instance of scenario.instances) fog.createInstance(instance);
  const { file: _file, ...settings } = scenario.map;
  const capture = fog.loadMap(mapText, settings);
  // The runner keeps its entities in a map ordered by id.
  const entities = [...scenario.sources]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((s) => ({ ...s, handle: null, gone: false }));
  const tickUs = scenario.tick_us;
  const spawn = (e, tick) => {
    const [x, y, z] = positionAt(e, tick, tickUs);
    e.handle = fog.addSource(x, y, z, e.source, e.transient_ticks);
  };
  if (resumeAt > 0) {
    // In the order the run spawned them: by spawn tick, then by id.
    const alive = entities.filter((e) => (e.spawn_tick ?? 0) < resumeAt);
    alive.sort((a, b) => (a.spawn_tick ?? 0) - (b.spawn_tick ?? 0));
    for (const e of alive) {
      if (e.transient_ticks && (e.spawn_tick ?? 0) + e.transient_ticks <= resumeAt) e.gone = true;
      else spawn(e, resumeAt - 1);
    }
  }
  return {
    capture,
    entities,
    tickUs,
    /** Spawns and moves the scripted entities before tick `tick`. */
    place(tick) {
      for (const e of entities) {
        if (e.gone || tick < (e.spawn_tick ?? 0)) continue;
        if (e.handle === null) spawn(e, tick);
        else if (e.motion) {
          const [x, y, z] = positionAt(e, tick, tickUs);
          fog.move(e.handle, x, y, z);
        }
      }
    },
    /** Where the live entities stand now, for drawing. */
    units(tick) {
      return entities.filter((e) => e.handle !== null && !e.gone && !(e.transient_ticks && tick >= (e.spawn_tick ?? 0) + e.transient_ticks)).map((e) => ({
        id: e.id,
        position: positionAt(e, Math.max(tick - 1, 0), tickUs),
        radius: e.source.radius,
      }));
    },
  };
}
