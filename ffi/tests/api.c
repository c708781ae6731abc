/*
 * murk's C API used the way a game uses it, with what comes back checked:
 * instances from TOML and JSON profiles, sources, tracked entities and
 * stealth actors (events, ghosts, sight sets), a raster height capture
 * edited at run time, stages read into buffers, snapshots saved and loaded
 * into another fog handle, explored memory exported and imported, the
 * questions beside the tick (sight lines, the explored count, a ground
 * radar's blips, a cloaked actor and its detector), and two threads ticking their
 * own fog handles at once. Exits nonzero on the
 * first broken expectation of a kind, after printing every one.
 *
 * Run by `cargo test -p murk-ffi --test c_programs`.
 */
#include "murk.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Text and its length, as murk takes names. */
#define S(text) (text), strlen(text)
#define TICK_US 33333u

static int failures = 0;

/* A call that must succeed: stops the program otherwise. */
#define CHECK(call)                                                                        \
  do {                                                                                     \
    int32_t rc_ = (call);                                                                  \
    if (rc_ != MURK_OK) {                                                                  \
      fprintf(stderr, "api.c:%d: %s failed with code %d: %s\n", __LINE__, #call, rc_, murk_last_error()); \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

/* An expectation: counted and reported, the program goes on. */
#define EXPECT(cond, ...)                                \
  do {                                                   \
    if (!(cond)) {                                       \
      fprintf(stderr, "api.c:%d: expected %s: ", __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                      \
      fprintf(stderr, "\n");                             \
      failures++;                                        \
    }                                                    \
  } while (0)

static const MurkArea AREA = {.center = {32, 32, 5}, .extents = {64, 64, 10}, .yaw_degrees = 0};

static uint64_t new_fog(uint32_t threads) {
  uint64_t fog = 0;
  CHECK(murk_fog_create(MURK_BACKEND_CPU, threads, &fog));
  const char *toml = "explored_value = 0.4\nfade_in_rate = 20.0\n";
  CHECK(murk_instance_create(fog, S("main"), &AREA, 64, 0, MURK_ALL_TEAMS, S(toml), MURK_FORMAT_TOML));
  return fog;
}

static uint64_t spawn_source(uint64_t fog, float x, float y, float radius) {
  uint64_t e = 0;
  MurkSource s;
  CHECK(murk_source_default(&s));
  s.radius = radius;
  CHECK(murk_entity_spawn(fog, x, y, 0, &e));
  CHECK(murk_entity_set_source(fog, e, &s));
  return e;
}

static uint64_t spawn_tracked(uint64_t fog, float x, float y) {
  uint64_t e = 0;
  CHECK(murk_entity_spawn(fog, x, y, 0, &e));
  CHECK(murk_entity_set_tracked(fog, e, 0.5f));
  return e;
}

static uint64_t spawn_actor(uint64_t fog, float x, float y, uint32_t hide_mode, uint32_t per_observer) {
  uint64_t e = 0;
  MurkStealth st;
  CHECK(murk_stealth_default(&st));
  st.hide_mode = hide_mode;
  st.per_observer = per_observer;
  CHECK(murk_entity_spawn(fog, x, y, 0, &e));
  CHECK(murk_entity_set_stealth(fog, e, &st));
  return e;
}

/* A wall: a rectangle of `width` by `depth` centred on (x, y). */
static uint64_t spawn_wall(uint64_t fog, float x, float y, float width, float depth) {
  uint64_t e = 0;
  MurkBlocker b;
  CHECK(murk_blocker_default(&b));
  b.shape = MURK_SHAPE_RECT;
  b.size[0] = width;
  b.size[1] = depth;
  CHECK(murk_entity_spawn(fog, x, y, 0, &e));
  CHECK(murk_entity_set_blocker(fog, e, &b));
  return e;
}

static uint64_t hash_of(uint64_t fog) {
  uint64_t h = 0;
  CHECK(murk_lockstep_hash(fog, &h));
  return h;
}

/* Reads a stage whole (asking its size first); the caller frees it. */
static uint8_t *read_stage(uint64_t fog, const char *instance, const char *stage, MurkImageInfo *info, size_t *len) {
  CHECK(murk_read_stage(fog, S(instance), S(stage), NULL, 0, len, info));
  uint8_t *bytes = malloc(*len);
  size_t again = 0;
  CHECK(murk_read_stage(fog, S(instance), S(stage), bytes, *len, &again, info));
  EXPECT(again == *len, "the same size twice: %zu then %zu", *len, again);
  return bytes;
}

static uint16_t texel16(const uint8_t *bytes, const MurkImageInfo *info, uint32_t x, uint32_t y) {
  uint16_t v;
  memcpy(&v, bytes + ((size_t)y * info->width + x) * 2, 2);
  return v;
}

static void versions(void) {
  EXPECT(murk_api_version() == MURK_API_VERSION, "%u", murk_api_version());
  EXPECT(murk_snapshot_format_version() > 0 && murk_hash_format_version() > 0, "%u %u", murk_snapshot_format_version(),
         murk_hash_format_version());
  EXPECT(strlen(murk_version()) > 0, "`%s`", murk_version());
}

/* Sources reveal, tracked entities enter and leave the sight set, stealth
 * actors are revealed, hidden and leave ghosts, the final mask shows it. */
static void gameplay(void) {
  uint64_t fog = new_fog(0);
  MurkDims dims;
  CHECK(murk_instance_dims(fog, S("main"), &dims));
  EXPECT(dims.width == 64 && dims.height == 64 && dims.out_width == 64 && dims.out_height == 64, "%ux%u", dims.width,
         dims.height);
  spawn_source(fog, 16, 32, 12);
  uint64_t near = spawn_tracked(fog, 20, 32), far = spawn_tracked(fog, 56, 8);
  uint64_t actor = spawn_actor(fog, 18, 34, MURK_HIDE_FREEZE_WITH_GHOST, 0);
  uint64_t watched = spawn_actor(fog, 14, 30, MURK_HIDE, 1);
  EXPECT(murk_last_error()[0] == '\0', "no error after a success: `%s`", murk_last_error());

  int entered = 0, revealed = 0, observer_revealed = 0;
  for (int t = 0; t < 30; t++) {
    CHECK(murk_tick(fog, TICK_US));
    MurkSightEvent sight[8];
    size_t n = 0;
    CHECK(murk_sight_events(fog, S("main"), sight, 8, &n));
    for (size_t i = 0; i < n; i++) {
      EXPECT(sight[i].kind == MURK_SIGHT_ENTERED && sight[i].entity == near, "only the near entity enters: kind %u",
             sight[i].kind);
      entered += sight[i].kind == MURK_SIGHT_ENTERED;
    }
    MurkStealthEvent ev[8];
    CHECK(murk_stealth_events(fog, ev, 8, &n));
    for (size_t i = 0; i < n; i++) {
      EXPECT(ev[i].actor == actor && ev[i].kind == MURK_EVENT_REVEALED, "kind %u", ev[i].kind);
      revealed += ev[i].kind == MURK_EVENT_REVEALED;
    }
    CHECK(murk_observer_stealth_events(fog, S("main"), ev, 8, &n));
    for (size_t i = 0; i < n; i++) {
      EXPECT(ev[i].actor == watched && ev[i].kind == MURK_EVENT_REVEALED, "kind %u", ev[i].kind);
      observer_revealed += ev[i].kind == MURK_EVENT_REVEALED;
    }
  }
  EXPECT(entered == 1 && revealed == 1 && observer_revealed == 1, "entered %d, revealed %d, per observer %d", entered,
         revealed, observer_revealed);
  uint64_t set[4];
  size_t n = 0;
  CHECK(murk_visible_to(fog, S("main"), NULL, 0, &n));
  EXPECT(n == 1, "one entity in sight, not %zu", n);
  CHECK(murk_visible_to(fog, S("main"), set, 4, &n));
  EXPECT(n == 1 && set[0] == near, "the near one (%zu)", n);
  (void)far;

  MurkImageInfo info;
  size_t len = 0;
  uint8_t *final = read_stage(fog, "main", "final", &info, &len);
  EXPECT(info.texel_type == MURK_TEXEL_U16 && info.texel_bytes == 2 && info.width == 64 && info.height == 64,
         "type %u, %ux%u", info.texel_type, info.width, info.height);
  EXPECT(len == 64 * 64 * 2, "%zu bytes", len);
  EXPECT(texel16(final, &info, 16, 32) > 60000, "visible where the source stands: %u", texel16(final, &info, 16, 32));
  EXPECT(texel16(final, &info, 60, 60) == 0, "unseen in the far corner: %u", texel16(final, &info, 60, 60));
  free(final);

  /* The actor and the tracked entity walk out of sight. */
  CHECK(murk_entity_move(fog, actor, 50, 50, 0));
  CHECK(murk_entity_move(fog, near, 50, 52, 0));
  int hidden = 0, left = 0;
  uint64_t ghost = 0;
  for (int t = 0; t < 10; t++) {
    CHECK(murk_tick(fog, TICK_US));
    MurkStealthEvent ev[8];
    CHECK(murk_stealth_events(fog, ev, 8, &n));
    for (size_t i = 0; i < n; i++) {
      hidden += ev[i].kind == MURK_EVENT_HIDDEN;
      if (ev[i].kind == MURK_EVENT_GHOST_SPAWNED) ghost = ev[i].ghost;
    }
    MurkSightEvent sight[8];
    CHECK(murk_sight_events(fog, S("main"), sight, 8, &n));
    for (size_t i = 0; i < n; i++) left += sight[i].kind == MURK_SIGHT_LEFT && sight[i].entity == near;
  }
  uint32_t alive = 0;
  if (ghost != 0) CHECK(murk_entity_alive(fog, ghost, &alive));
  EXPECT(hidden == 1 && ghost != 0 && alive == 1, "hidden %d, ghost %" PRIx64 " alive %u", hidden, ghost, alive);
  EXPECT(left == 1, "the tracked entity left once, not %d times", left);
  CHECK(murk_visible_to(fog, S("main"), set, 4, &n));
  EXPECT(n == 0, "nothing in sight, not %zu", n);
  CHECK(murk_fog_free(fog));
}

/* The questions beside the tick: a sight line across open ground and one
 * behind a wall, the explored count, a ground radar's blip of a unit sight
 * does not reach (and none of an aircraft), a cloaked actor shown only
 * once a source detects it, and the new fields' bad values named. */
static void questions(void) {
  uint64_t fog = new_fog(2), e = 0;
  const char *radar = "{\"layer\": 1, \"see_through\": true, \"domains\": 1}";
  CHECK(murk_instance_create(fog, S("radar"), &AREA, 32, 0, MURK_ALL_TEAMS, S(radar), MURK_FORMAT_JSON));
  uint64_t eye = spawn_source(fog, 16, 32, 14);
  spawn_wall(fog, 40, 32, 2, 20);
  MurkSource dish;
  CHECK(murk_source_default(&dish));
  dish.radius = 60;
  dish.layer = 1;
  CHECK(murk_entity_spawn(fog, 16, 32, 0, &e));
  CHECK(murk_entity_set_source(fog, e, &dish));
  spawn_tracked(fog, 52, 50);
  uint64_t plane = 0; /* an aircraft the ground radar does not take */
  CHECK(murk_entity_spawn(fog, 52, 14, 0, &plane));
  CHECK(murk_entity_set_tracked_in(fog, plane, 0.5f, 2));
  MurkStealth st;
  CHECK(murk_stealth_default(&st));
  st.cloaked = 1;
  uint64_t cloaked = 0;
  CHECK(murk_entity_spawn(fog, 20, 32, 0, &cloaked));
  CHECK(murk_entity_set_stealth(fog, cloaked, &st));
  int revealed = 0;
  size_t n = 0;
  MurkStealthEvent ev[8];
  for (int t = 0; t < 5; t++) {
    CHECK(murk_tick(fog, TICK_US));
    CHECK(murk_stealth_events(fog, ev, 8, &n));
    for (size_t i = 0; i < n; i++) revealed += ev[i].actor == cloaked && ev[i].kind == MURK_EVENT_REVEALED;
  }
  EXPECT(revealed == 0, "a cloaked actor in plain sight stays hidden with no detector (%d)", revealed);

  MurkSightAnswer answer;
  const float from[3] = {16, 32, 0}, open[3] = {24, 36, 0}, behind[3] = {50, 32, 0};
  CHECK(murk_line_of_sight(fog, S("main"), from, open, 1.5f, &answer));
  EXPECT(answer.visible == 1 && answer.light == 65535, "open ground: light %u, visible %u", answer.light, answer.visible);
  CHECK(murk_line_of_sight(fog, S("main"), from, behind, 1.5f, &answer));
  EXPECT(answer.visible == 0 && answer.light == 0, "behind the wall: light %u, visible %u", answer.light, answer.visible);
  const float outside[3] = {500, 32, 0};
  EXPECT(murk_line_of_sight(fog, S("main"), from, outside, 1.5f, &answer) != MURK_OK &&
             strstr(murk_last_error(), "lines[0].to") != NULL,
         "an end outside the grid is named: %s", murk_last_error());

  uint64_t texels = 0, of = 0;
  CHECK(murk_explored(fog, S("main"), &texels, &of));
  EXPECT(of == 64 * 64 && texels > 300 && texels < of, "explored %" PRIu64 " of %" PRIu64, texels, of);

  MurkBlip blips[4];
  CHECK(murk_blips(fog, S("radar"), NULL, 0, &n));
  EXPECT(n == 1, "one blip (the ground radar takes no aircraft), not %zu", n);
  CHECK(murk_blips(fog, S("radar"), blips, 4, &n));
  EXPECT(n == 1 && blips[0].position[0] == 52 && blips[0].position[1] == 50, "the blip at (%g, %g)", blips[0].position[0],
         blips[0].position[1]);
  EXPECT(murk_blips(fog, S("main"), blips, 4, &n) != MURK_OK, "a sight instance has no blips");

  /* A detector beside the eye: the cloaked actor shows. */
  MurkSource detector;
  CHECK(murk_source_default(&detector));
  detector.radius = 14;
  detector.detects = MURK_DETECTS_IN_RANGE;
  CHECK(murk_entity_set_source(fog, eye, &detector));
  for (int t = 0; t < 5; t++) {
    CHECK(murk_tick(fog, TICK_US));
    CHECK(murk_stealth_events(fog, ev, 8, &n));
    for (size_t i = 0; i < n; i++) revealed += ev[i].actor == cloaked && ev[i].kind == MURK_EVENT_REVEALED;
  }
  EXPECT(revealed == 1, "the detector shows the cloaked actor once (%d)", revealed);

  MurkSource bad = detector;
  bad.layer = 300;
  EXPECT(murk_entity_set_source(fog, eye, &bad) != MURK_OK && strstr(murk_last_error(), "source.layer") != NULL, "%s",
         murk_last_error());
  bad = detector;
  bad.detects = 7;
  EXPECT(murk_entity_set_source(fog, eye, &bad) != MURK_OK && strstr(murk_last_error(), "source.detects") != NULL, "%s",
         murk_last_error());
  MurkAntiVision jammer = {.radius = 4, .falloff = 0, .targets = MURK_ALL_TEAMS, .layer = 256};
  EXPECT(murk_entity_set_anti_vision(fog, e, &jammer) != MURK_OK && strstr(murk_last_error(), "anti_vision.layer") != NULL,
         "%s", murk_last_error());
  CHECK(murk_fog_free(fog));
}

/* A raster capture: a wall written into its cells and marked dirty
 * shadows what lay behind it. */
static void capture(void) {
  uint64_t fog = new_fog(0);
  float *cells = malloc(64 * 64 * sizeof(float));
  for (int i = 0; i < 64 * 64; i++) cells[i] = NAN;
  uint64_t raster = 0;
  CHECK(murk_capture_add_raster(fog, 0, 0, 1, 64, 64, cells, 64 * 64, &raster));
  spawn_source(fog, 10, 32, 40);
  for (int t = 0; t < 3; t++) CHECK(murk_tick(fog, TICK_US));
  MurkImageInfo info;
  size_t len;
  uint8_t *vis = read_stage(fog, "main", "visibility", &info, &len);
  EXPECT(texel16(vis, &info, 40, 32) > 0, "seen before the wall: %u", texel16(vis, &info, 40, 32));
  free(vis);
  for (int y = 0; y < 64; y++) cells[y * 64 + 30] = INFINITY;
  CHECK(murk_capture_set_cells(fog, raster, cells, 64 * 64));
  CHECK(murk_capture_mark_dirty(fog, 29.5f, 0, 31, 64));
  for (int t = 0; t < 3; t++) CHECK(murk_tick(fog, TICK_US));
  vis = read_stage(fog, "main", "visibility", &info, &len);
  EXPECT(texel16(vis, &info, 40, 32) == 0, "shadowed behind the wall: %u", texel16(vis, &info, 40, 32));
  EXPECT(texel16(vis, &info, 20, 32) > 0, "seen before it: %u", texel16(vis, &info, 20, 32));
  free(vis);
  free(cells);
  CHECK(murk_fog_free(fog));
}

/* The scene a snapshot is taken of and loaded into: the same entities in
 * the same order, so that their handles match. */
static void scene(uint64_t fog, uint64_t *mover) {
  *mover = spawn_source(fog, 12, 12, 10);
  spawn_tracked(fog, 14, 12);
  spawn_actor(fog, 10, 14, MURK_HIDE, 0);
  spawn_wall(fog, 20, 14, 2, 8);
}

/* A snapshot loaded into another fog handle continues with the same
 * hashes; explored memory exported from one instance imports into
 * another fog's. */
static void snapshot_and_memory(void) {
  uint64_t a = new_fog(0), mover_a = 0;
  scene(a, &mover_a);
  for (uint32_t t = 0; t < 12; t++) {
    CHECK(murk_entity_move(a, mover_a, 12 + (float)t, 12, 0));
    CHECK(murk_tick(a, TICK_US));
  }
  size_t len = 0;
  CHECK(murk_snapshot_save(a, NULL, 0, &len));
  uint8_t *snapshot = malloc(len);
  size_t copied = 0;
  CHECK(murk_snapshot_save(a, snapshot, len, &copied));
  EXPECT(copied == len && len > 36, "%zu bytes, asked %zu", copied, len);

  uint64_t b = new_fog(1), mover_b = 0;
  scene(b, &mover_b);
  EXPECT(mover_a == mover_b, "the same handles in the same order");
  CHECK(murk_entity_move(b, mover_b, 23, 12, 0));
  EXPECT(hash_of(a) != hash_of(b), "a new fog differs before the load");
  CHECK(murk_snapshot_load(b, snapshot, len));
  EXPECT(hash_of(a) == hash_of(b), "loaded: %016" PRIx64 " and %016" PRIx64, hash_of(a), hash_of(b));
  for (uint32_t t = 12; t < 24; t++) {
    CHECK(murk_entity_move(a, mover_a, 12 + (float)t, 12, 0));
    CHECK(murk_entity_move(b, mover_b, 12 + (float)t, 12, 0));
    CHECK(murk_tick(a, TICK_US));
    CHECK(murk_tick(b, TICK_US));
    EXPECT(hash_of(a) == hash_of(b), "tick %u: %016" PRIx64 " and %016" PRIx64, t, hash_of(a), hash_of(b));
  }
  /* A snapshot brings its instances: loaded into a fog handle with another
   * instance, it replaces it. */
  uint64_t d = 0;
  MurkDims dims;
  CHECK(murk_fog_create(MURK_BACKEND_CPU, 1, &d));
  CHECK(murk_instance_create(d, S("elsewhere"), &AREA, 32, 0, MURK_ALL_TEAMS, NULL, 0, MURK_FORMAT_JSON));
  CHECK(murk_snapshot_load(d, snapshot, len));
  EXPECT(murk_instance_dims(d, S("elsewhere"), &dims) == MURK_ERR_UNKNOWN_INSTANCE, "the old instance is gone");
  CHECK(murk_instance_dims(d, S("main"), &dims));
  EXPECT(dims.width == 64, "the snapshot's instance: %u", dims.width);
  CHECK(murk_fog_free(d));
  free(snapshot);

  size_t blob_len = 0;
  CHECK(murk_memory_export(a, S("main"), NULL, 0, &blob_len));
  uint8_t *blob = malloc(blob_len);
  CHECK(murk_memory_export(a, S("main"), blob, blob_len, &blob_len));
  uint64_t c = new_fog(0);
  CHECK(murk_instance_create(c, S("ally"), &AREA, 64, 0, MURK_ALL_TEAMS, NULL, 0, MURK_FORMAT_JSON));
  CHECK(murk_memory_import(c, S("main"), blob, blob_len, 0));
  CHECK(murk_memory_import(c, S("ally"), blob, blob_len, 1));
  MurkImageInfo info;
  size_t la, lc, lm;
  uint8_t *memory_a = read_stage(a, "main", "memory", &info, &la);
  uint8_t *memory_c = read_stage(c, "main", "memory", &info, &lc);
  uint8_t *mapped = read_stage(c, "ally", "mapped", &info, &lm);
  EXPECT(la == lc && memcmp(memory_a, memory_c, la) == 0, "the imported memory is the exported one");
  int any = 0;
  for (size_t i = 0; i < lm; i++) any |= mapped[i] != 0;
  EXPECT(any, "the ally's map knows what was explored");
  free(memory_a);
  free(memory_c);
  free(mapped);
  free(blob);
  CHECK(murk_fog_free(a));
  CHECK(murk_fog_free(b));
  CHECK(murk_fog_free(c));
}

/* Hashes every tick, delivered two ticks later without a wait: each one
 * is what `murk_lockstep_hash` answered after that tick. */
static void landed_hashes(void) {
  uint64_t fog = new_fog(0), mover = 0, asked[32] = {0};
  scene(fog, &mover);
  CHECK(murk_set_hash_every_tick(fog, 1));
  int landed = 0;
  for (uint32_t t = 0; t < 30; t++) {
    CHECK(murk_entity_move(fog, mover, 12 + (float)t, 14, 0));
    CHECK(murk_tick(fog, TICK_US));
    asked[t + 1] = hash_of(fog); /* the state of tick count t + 1 */
    uint64_t ticks = 0, hash = 0;
    CHECK(murk_landed_hash(fog, &ticks, &hash));
    if (ticks == 0) continue;
    landed++;
    EXPECT(ticks + 2 == t + 1 && hash == asked[ticks], "tick %u delivers count %" PRIu64 ": %016" PRIx64 ", asked %016" PRIx64,
           t, ticks, hash, asked[ticks < 32 ? ticks : 0]);
  }
  EXPECT(landed == 28, "a hash every tick after the first two: %d", landed);
  CHECK(murk_fog_free(fog));
}

/* Two threads tick their own fog handles at once, on 1 and 2 worker
 * threads: the same hashes. */
typedef struct {
  uint32_t threads;
  uint64_t hashes[20];
} Run;

static void *run_thread(void *arg) {
  Run *run = arg;
  uint64_t fog = new_fog(run->threads), mover = 0;
  scene(fog, &mover);
  for (uint32_t t = 0; t < 20; t++) {
    CHECK(murk_entity_move(fog, mover, 12 + (float)t, 12 + 0.5f * (float)t, 0));
    CHECK(murk_tick(fog, TICK_US));
    run->hashes[t] = hash_of(fog);
  }
  CHECK(murk_fog_free(fog));
  return NULL;
}

static void threads(void) {
  Run runs[2] = {{.threads = 1}, {.threads = 2}};
  pthread_t ids[2];
  for (int i = 0; i < 2; i++) EXPECT(pthread_create(&ids[i], NULL, run_thread, &runs[i]) == 0, "thread %d starts", i);
  for (int i = 0; i < 2; i++) pthread_join(ids[i], NULL);
  EXPECT(memcmp(runs[0].hashes, runs[1].hashes, sizeof runs[0].hashes) == 0, "the same hashes on both threads");
}

int main(void) {
  versions();
  gameplay();
  questions();
  capture();
  snapshot_and_memory();
  landed_hashes();
  threads();
  if (failures > 0) {
    fprintf(stderr, "api: %d expectation(s) failed\n", failures);
    return 1;
  }
  printf("api: every expectation held\n");
  return 0;
}
