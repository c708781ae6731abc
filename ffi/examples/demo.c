/*
 * The demo scene of `assets/demo.json`, built through murk's C API: the map
 * lak303d as a height capture, one instance, five sources walking their
 * waypoints, and a flare that lights up at tick 60 for 30 ticks. It runs
 * the 180 ticks and prints the lockstep hash after each one, which equals
 * `murk run assets/demo.json`'s (summary.json's `per_tick[].lockstep`): the
 * test `cargo test -p murk-ffi --test c_programs` compares them.
 *
 *   cc -std=c11 -ffp-contract=off -I ffi/include ffi/examples/demo.c \
 *      -L target/release -lmurk_ffi -Wl,-rpath,target/release -lm -o demo
 *   ./demo assets/maps/lak303d.map [--backend cpu|gpu|auto] [--threads N]
 *          [--snapshot-at TICK FILE]
 *
 * The motion is the scenario runner's (core/src/scenario/runner.rs,
 * `position_at`) in the same double arithmetic, step for step; compile
 * without floating-point contraction (`-ffp-contract=off`), since a fused
 * multiply-add rounds differently from Rust's separate ones.
 */
#include "murk.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TICK_US 33333u
#define TICKS 180u
#define INSTANCE "demo"

/* Fails the program with the call, its code and murk's message. */
#define CHECK(call)                                                                      \
  do {                                                                                   \
    int32_t rc_ = (call);                                                                \
    if (rc_ != MURK_OK) {                                                                \
      fprintf(stderr, "demo: %s failed with code %d: %s\n", #call, rc_, murk_last_error()); \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

/* A scripted source of the scenario: where it starts, how it moves, when it
 * is spawned, and its entity once it is. */
typedef struct {
  const char *id;
  float start[3];
  float radius;
  int has_falloff;
  float falloff;
  float eye_height;
  int has_cone;
  float cone_yaw;
  float cone_half_angle;
  int waypoint_count;
  float waypoints[6][3];
  float speed;
  int looped;
  uint32_t spawn_tick;
  uint32_t transient_ticks; /* 0: not transient */
  uint64_t entity;          /* 0: not spawned yet */
  int removed;
} Unit;

/* In the runner's order: scripted entities by id (a sorted map). */
static Unit units[] = {
    {.id = "flare", .start = {50, 130, 0}, .radius = 16, .has_falloff = 1, .falloff = 0.6f, .eye_height = 1.5f,
     .spawn_tick = 60, .transient_ticks = 30},
    {.id = "scout-north", .start = {100, 20, 0}, .radius = 22, .eye_height = 1.5f, .waypoint_count = 5,
     .waypoints = {{95, 45, 0}, {60, 48, 0}, {30, 50, 0}, {20, 80, 0}, {40, 108, 0}}, .speed = 22},
    {.id = "scout-south", .start = {90, 150, 0}, .radius = 20, .eye_height = 1.5f, .waypoint_count = 2,
     .waypoints = {{70, 170, 0}, {60, 140, 0}}, .speed = 14, .looped = 1},
    {.id = "sentry-east", .start = {150, 45, 0}, .radius = 30, .eye_height = 1.5f, .has_cone = 1, .cone_yaw = 90,
     .cone_half_angle = 50, .waypoint_count = 3, .waypoints = {{170, 80, 0}, {160, 108, 0}, {130, 150, 0}}, .speed = 18},
    {.id = "watchtower", .start = {110, 100, 0}, .radius = 34, .eye_height = 12},
};
#define UNIT_COUNT (sizeof units / sizeof units[0])

static double seg_len(const double a[3], const double b[3]) {
  double dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
  return sqrt(dx * dx + dy * dy + dz * dz);
}

static void set3(float out[3], const double p[3]) {
  for (int i = 0; i < 3; i++) out[i] = (float)p[i];
}

/* Position along the path at `tick`: the runner's `position_at`. */
static void position_at(const Unit *u, uint32_t tick, float out[3]) {
  memcpy(out, u->start, sizeof u->start);
  if (u->waypoint_count == 0 || u->speed <= 0.0f) return;
  double points[8][3];
  int n = 0;
  for (int i = 0; i < 3; i++) points[n][i] = (double)u->start[i];
  n++;
  for (int w = 0; w < u->waypoint_count; w++, n++)
    for (int i = 0; i < 3; i++) points[n][i] = (double)u->waypoints[w][i];
  if (u->looped) {
    memcpy(points[n], points[0], sizeof points[0]);
    n++;
  }
  double total = 0.0;
  for (int s = 0; s + 1 < n; s++) total += seg_len(points[s], points[s + 1]);
  uint32_t since = tick > u->spawn_tick ? tick - u->spawn_tick : 0;
  double elapsed = (double)since * (double)TICK_US / 1.0e6;
  double dist = (double)u->speed * elapsed;
  if (total <= 0.0) return;
  if (u->looped) {
    dist = fmod(dist, total);
  } else if (dist >= total) {
    set3(out, points[n - 1]);
    return;
  }
  for (int s = 0; s + 1 < n; s++) {
    double l = seg_len(points[s], points[s + 1]);
    if (dist <= l && l > 0.0) {
      double f = dist / l, p[3];
      for (int i = 0; i < 3; i++) p[i] = points[s][i] + (points[s + 1][i] - points[s][i]) * f;
      set3(out, p);
      return;
    }
    dist -= l;
  }
  set3(out, points[n - 1]);
}

/* Spawns a unit's entity at `pos` with its source (and countdown). */
static void spawn(uint64_t fog, Unit *u, const float pos[3]) {
  MurkSource s;
  CHECK(murk_source_default(&s));
  s.radius = u->radius;
  s.has_falloff = (uint32_t)u->has_falloff;
  s.falloff = u->falloff;
  s.eye_height = u->eye_height;
  s.has_cone = (uint32_t)u->has_cone;
  s.cone_yaw_degrees = u->cone_yaw;
  s.cone_half_angle_degrees = u->cone_half_angle;
  CHECK(murk_entity_spawn(fog, pos[0], pos[1], pos[2], &u->entity));
  CHECK(murk_entity_set_source(fog, u->entity, &s));
  if (u->transient_ticks > 0) CHECK(murk_entity_set_transient(fog, u->entity, u->transient_ticks));
}

/* The runner's placement step: spawn what is due, move what lives, and
 * forget a transient reveal that its last tick despawned. */
static void place(uint64_t fog, uint32_t tick) {
  for (size_t i = 0; i < UNIT_COUNT; i++) {
    Unit *u = &units[i];
    if (u->removed || tick < u->spawn_tick) continue;
    float pos[3];
    position_at(u, tick, pos);
    if (u->entity == 0) {
      spawn(fog, u, pos);
      continue;
    }
    uint32_t alive = 0;
    CHECK(murk_entity_alive(fog, u->entity, &alive));
    if (alive) {
      CHECK(murk_entity_move(fog, u->entity, pos[0], pos[1], pos[2]));
    } else {
      /* murk despawned it: moving it now is a stale handle, never a crash. */
      if (murk_entity_move(fog, u->entity, pos[0], pos[1], pos[2]) != MURK_ERR_STALE_ENTITY) {
        fprintf(stderr, "demo: moving the expired %s was not MURK_ERR_STALE_ENTITY\n", u->id);
        exit(1);
      }
      u->removed = 1;
    }
  }
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)size + 1);
  if (!text || fread(text, 1, (size_t)size, f) != (size_t)size) {
    fprintf(stderr, "demo: cannot read %s\n", path);
    exit(1);
  }
  fclose(f);
  *len = (size_t)size;
  return text;
}

static void save_snapshot(uint64_t fog, const char *path) {
  size_t len = 0;
  CHECK(murk_snapshot_save(fog, NULL, 0, &len)); /* the size first */
  uint8_t *bytes = malloc(len);
  size_t written = 0;
  CHECK(murk_snapshot_save(fog, bytes, len, &written));
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(bytes, 1, written, f) != written || fclose(f) != 0) {
    fprintf(stderr, "demo: cannot write %s\n", path);
    exit(1);
  }
  free(bytes);
}

static void usage(void) {
  fprintf(stderr, "usage: demo MAP [--backend cpu|gpu|auto] [--threads N] [--snapshot-at TICK FILE]\n");
  exit(2);
}

int main(int argc, char **argv) {
  if (argc < 2) usage();
  const char *map_path = argv[1], *snapshot_path = NULL;
  uint32_t backend = MURK_BACKEND_CPU, threads = 0;
  long snapshot_at = -1;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
      const char *b = argv[++i];
      backend = !strcmp(b, "gpu") ? MURK_BACKEND_GPU : !strcmp(b, "auto") ? MURK_BACKEND_AUTO : MURK_BACKEND_CPU;
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = (uint32_t)strtoul(argv[++i], NULL, 10);
    } else if (!strcmp(argv[i], "--snapshot-at") && i + 2 < argc) {
      snapshot_at = strtol(argv[++i], NULL, 10);
      snapshot_path = argv[++i];
    } else {
      usage();
    }
  }
  if (murk_api_version() != MURK_API_VERSION) {
    fprintf(stderr, "demo: the library speaks C API %u, this program was built for %u\n", murk_api_version(), MURK_API_VERSION);
    return 1;
  }

  uint64_t fog = 0;
  CHECK(murk_fog_create(backend, threads, &fog));
  char name[256];
  size_t name_len = 0;
  CHECK(murk_fog_backend_name(fog, name, sizeof name, &name_len));
  fprintf(stderr, "demo: murk %s on %s\n", murk_version(), name);

  const char *profile =
      "{\"explored_value\": 0.45, \"blur_radius\": 1, \"blur_sigma\": 0.8, \"fade_in_rate\": 4.0,"
      " \"relax_rate\": 1.0, \"update_rate\": 0.1, \"ray_method\": \"dda\"}";
  MurkArea area = {.center = {97, 97, 5}, .extents = {194, 194, 10}, .yaw_degrees = 0};
  CHECK(murk_instance_create(fog, INSTANCE, strlen(INSTANCE), &area, 388, 1, MURK_ALL_TEAMS, profile, strlen(profile),
                             MURK_FORMAT_JSON));

  size_t map_len = 0;
  char *map = read_file(map_path, &map_len);
  uint64_t capture = 0;
  CHECK(murk_capture_add_movingai(fog, map, map_len, 0.0f, 0.0f, 1.0f, 0.0f, 4.0f, &capture));
  free(map);

  for (uint32_t tick = 0; tick < TICKS; tick++) {
    place(fog, tick);
    CHECK(murk_tick(fog, TICK_US));
    uint64_t hash = 0;
    CHECK(murk_lockstep_hash(fog, &hash));
    printf("tick %u %016" PRIx64 "\n", tick, hash);
    if ((long)tick == snapshot_at) save_snapshot(fog, snapshot_path);
  }
  CHECK(murk_fog_free(fog));
  return 0;
}
