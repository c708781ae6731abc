/*
 * Bad input through every call of murk's C API: null, freed and made-up
 * handles, stale entities, NaN and negative values, wrong lengths, null
 * and small buffers, misaligned pointers, unknown instance and stage
 * names, text that is not UTF-8, malformed profiles, maps, snapshots and
 * memory blobs. Each call must return its code, leave a message naming
 * the bad argument or field, change nothing, and never crash; a call that
 * succeeds must leave no message. Exits nonzero if any check fails.
 *
 * Run by `cargo test -p murk-ffi --test c_programs`, also under valgrind.
 */
#include "murk.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Text and its length, as murk takes names. */
#define S(text) (text), strlen(text)
#define TICK_US 33333u

static int checks = 0, failures = 0;

static void expect_at(int line, const char *call, int32_t got, int32_t want, const char *needle) {
  checks++;
  const char *message = murk_last_error();
  if (got != want) {
    fprintf(stderr, "bad_input.c:%d: %s returned %d, expected %d (message: %s)\n", line, call, got, want, message);
    failures++;
  } else if (want == MURK_OK && message[0] != '\0') {
    fprintf(stderr, "bad_input.c:%d: %s succeeded but left the message `%s`\n", line, call, message);
    failures++;
  } else if (want != MURK_OK && strstr(message, needle) == NULL) {
    fprintf(stderr, "bad_input.c:%d: %s: the message `%s` does not name `%s`\n", line, call, message, needle);
    failures++;
  }
}

/* A call, the code it must return, and text its message must hold. */
#define EXPECT(call, want, needle) expect_at(__LINE__, #call, (call), (want), (needle))
#define OK(call) EXPECT(call, MURK_OK, "")
/* A plain condition. */
#define TRUE(cond, ...)                                       \
  do {                                                        \
    checks++;                                                 \
    if (!(cond)) {                                            \
      fprintf(stderr, "bad_input.c:%d: expected %s: ", __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                           \
      fprintf(stderr, "\n");                                  \
      failures++;                                             \
    }                                                         \
  } while (0)

static const MurkArea AREA = {.center = {32, 32, 5}, .extents = {64, 64, 10}, .yaw_degrees = 0};
static const char *MAP = "type octile\nheight 2\nwidth 2\nmap\n.@\nT.\n";
static const char *NOT_UTF8 = "\xff\xfe";

static uint64_t hash_of(uint64_t fog) {
  uint64_t h = 0;
  OK(murk_lockstep_hash(fog, &h));
  return h;
}

/* An entity at (x, y) that is a vision source of `radius`. */
static uint64_t source_at(uint64_t fog, float x, float y, float radius) {
  uint64_t e = 0;
  MurkSource s;
  OK(murk_source_default(&s));
  s.radius = radius;
  OK(murk_entity_spawn(fog, x, y, 0, &e));
  OK(murk_entity_set_source(fog, e, &s));
  return e;
}

/* The thread's last error: read without changing it, copied whole or cut. */
static void last_error(uint64_t fog) {
  EXPECT(murk_fog_free(0), MURK_ERR_INVALID_HANDLE, "fog handle 0x0 is not live");
  const char *message = murk_last_error();
  size_t full = 0;
  char small[8], big[512];
  memset(small, 'x', sizeof small);
  TRUE(murk_last_error_message(small, sizeof small, &full) == MURK_ERR_BUFFER_TOO_SMALL, "a cut copy");
  TRUE(full == strlen(message) && strlen(small) == 7 && strncmp(small, message, 7) == 0, "`%s` of %zu bytes", small, full);
  TRUE(murk_last_error_message(NULL, 0, &full) == MURK_ERR_BUFFER_TOO_SMALL && full == strlen(message), "%zu", full);
  TRUE(murk_last_error_message(NULL, 0, NULL) == MURK_ERR_BUFFER_TOO_SMALL, "nothing to write to");
  TRUE(murk_last_error_message(big, sizeof big, NULL) == MURK_OK && strcmp(big, message) == 0, "`%s`", big);
  TRUE(strcmp(murk_last_error(), big) == 0, "reading the message leaves it: `%s`", murk_last_error());
  OK(murk_tick(fog, TICK_US));
  TRUE(murk_last_error()[0] == '\0', "a success clears it");
}

/* Every call with a handle that is not live, its other arguments good. */
static void dead_handle(uint64_t fog, const uint8_t *blob, size_t blob_len) {
  uint64_t out = 1;
  uint32_t alive = 0;
  size_t len = 0;
  char text[64];
  uint8_t bytes[64];
  float cells[4] = {NAN, NAN, NAN, NAN};
  MurkDims dims;
  MurkSource source;
  MurkBlocker blocker;
  MurkStealth stealth;
  MurkAntiVision anti = {.radius = 1, .falloff = 0, .targets = MURK_ALL_TEAMS};
  MurkImageInfo info;
  MurkStealthEvent events[4];
  MurkSightEvent sight[4];
  OK(murk_source_default(&source));
  OK(murk_blocker_default(&blocker));
  OK(murk_stealth_default(&stealth));
  const char *dead = "is not live";
  const int E = MURK_ERR_INVALID_HANDLE;
  EXPECT(murk_fog_free(fog), E, dead);
  EXPECT(murk_fog_backend_name(fog, text, sizeof text, &len), E, dead);
  EXPECT(murk_tick(fog, TICK_US), E, dead);
  EXPECT(murk_lockstep_hash(fog, &out), E, dead);
  EXPECT(murk_set_hash_every_tick(fog, 1), E, dead);
  EXPECT(murk_landed_hash(fog, &out, &out), E, dead);
  EXPECT(murk_state_hash(fog, S("main"), &out), E, dead);
  EXPECT(murk_instance_create(fog, S("main"), &AREA, 64, 0, MURK_ALL_TEAMS, NULL, 0, MURK_FORMAT_JSON), E, dead);
  EXPECT(murk_instance_set_profile(fog, S("main"), S("{}"), MURK_FORMAT_JSON), E, dead);
  EXPECT(murk_instance_destroy(fog, S("main")), E, dead);
  EXPECT(murk_instance_dims(fog, S("main"), &dims), E, dead);
  EXPECT(murk_entity_spawn(fog, 1, 2, 3, &out), E, dead);
  TRUE(out == 0, "a failed spawn writes 0, not %llu", (unsigned long long)out);
  EXPECT(murk_entity_move(fog, 1, 1, 2, 3), E, dead);
  EXPECT(murk_entity_despawn(fog, 1), E, dead);
  EXPECT(murk_entity_alive(fog, 1, &alive), E, dead);
  EXPECT(murk_entity_remove(fog, 1, MURK_COMPONENT_SOURCE), E, dead);
  EXPECT(murk_entity_set_tracked(fog, 1, 1), E, dead);
  EXPECT(murk_entity_set_transient(fog, 1, 3), E, dead);
  EXPECT(murk_entity_set_source(fog, 1, &source), E, dead);
  EXPECT(murk_entity_set_anti_vision(fog, 1, &anti), E, dead);
  EXPECT(murk_entity_set_blocker(fog, 1, &blocker), E, dead);
  EXPECT(murk_entity_set_stealth(fog, 1, &stealth), E, dead);
  EXPECT(murk_capture_add_movingai(fog, S(MAP), 0, 0, 1, 0, 4, &out), E, dead);
  EXPECT(murk_capture_add_raster(fog, 0, 0, 1, 2, 2, cells, 4, &out), E, dead);
  EXPECT(murk_capture_set_cells(fog, 1, cells, 4), E, dead);
  EXPECT(murk_capture_mark_dirty(fog, 0, 0, 1, 1), E, dead);
  EXPECT(murk_capture_mark_all_dirty(fog), E, dead);
  EXPECT(murk_read_stage(fog, S("main"), S("final"), bytes, sizeof bytes, &len, &info), E, dead);
  EXPECT(murk_stealth_events(fog, events, 4, &len), E, dead);
  EXPECT(murk_observer_stealth_events(fog, S("main"), events, 4, &len), E, dead);
  EXPECT(murk_sight_events(fog, S("main"), sight, 4, &len), E, dead);
  EXPECT(murk_visible_to(fog, S("main"), &out, 1, &len), E, dead);
  EXPECT(murk_snapshot_save(fog, bytes, sizeof bytes, &len), E, dead);
  EXPECT(murk_snapshot_load(fog, bytes, sizeof bytes), E, dead);
  EXPECT(murk_memory_export(fog, S("main"), bytes, sizeof bytes, &len), E, dead);
  EXPECT(murk_memory_import(fog, S("main"), blob, blob_len, 0), E, dead);
}

static void fog_handles(const uint8_t *blob, size_t blob_len) {
  uint64_t fog = 0, gone = 0, again = 0;
  EXPECT(murk_fog_create(7, 1, &fog), MURK_ERR_INVALID_ARGUMENT, "invalid argument `backend` = 7");
  TRUE(fog == 0, "no handle on failure");
  EXPECT(murk_fog_create(MURK_BACKEND_CPU, 1, NULL), MURK_ERR_NULL_POINTER, "`out_fog` is a null pointer");
  EXPECT(murk_fog_create(MURK_BACKEND_CPU, MURK_MAX_THREADS + 1, &fog), MURK_ERR_INVALID_ARGUMENT, "`threads` = 1025");
  OK(murk_fog_create(MURK_BACKEND_CPU, 1, &gone));
  OK(murk_fog_free(gone));
  dead_handle(gone, blob, blob_len);
  dead_handle(0, blob, blob_len);
  dead_handle(0x123456789abcdefull, blob, blob_len);
  /* The slot is reused with another generation: the old handle stays dead. */
  OK(murk_fog_create(MURK_BACKEND_CPU, 1, &again));
  TRUE(again != gone, "a new handle, not the freed one");
  EXPECT(murk_tick(gone, TICK_US), MURK_ERR_INVALID_HANDLE, "is not live");
  OK(murk_tick(again, TICK_US));
  OK(murk_fog_free(again));
  EXPECT(murk_fog_free(again), MURK_ERR_INVALID_HANDLE, "is not live");
}

static void instances(uint64_t fog) {
  MurkArea nan_area = AREA;
  nan_area.extents[0] = NAN;
  const int J = MURK_FORMAT_JSON;
  EXPECT(murk_instance_create(fog, NULL, 4, &AREA, 64, 0, MURK_ALL_TEAMS, NULL, 0, J), MURK_ERR_NULL_POINTER, "`name`");
  EXPECT(murk_instance_create(fog, S(NOT_UTF8), &AREA, 64, 0, MURK_ALL_TEAMS, NULL, 0, J), MURK_ERR_INVALID_ARGUMENT,
         "is not UTF-8");
  EXPECT(murk_instance_create(fog, S("main"), NULL, 64, 0, MURK_ALL_TEAMS, NULL, 0, J), MURK_ERR_NULL_POINTER, "`area`");
  EXPECT(murk_instance_create(fog, S("main"), &nan_area, 64, 0, MURK_ALL_TEAMS, NULL, 0, J), MURK_ERR_INVALID_VALUE,
         "area.extents.x = NaN");
  EXPECT(murk_instance_create(fog, S("main"), &AREA, 0, 0, MURK_ALL_TEAMS, NULL, 0, J), MURK_ERR_INVALID_VALUE,
         "resolution = 0");
  EXPECT(murk_instance_create(fog, S("main"), &AREA, 64, 9, MURK_ALL_TEAMS, NULL, 0, J), MURK_ERR_INVALID_VALUE, "lod = 9");
  EXPECT(murk_instance_create(fog, S("main"), &AREA, 64, 0, MURK_ALL_TEAMS, S("{"), J), MURK_ERR_PARSE,
         "cannot parse profile");
  EXPECT(murk_instance_create(fog, S("main"), &AREA, 64, 0, MURK_ALL_TEAMS, S("{\"explored_value\": 1.5}"), J),
         MURK_ERR_INVALID_VALUE, "profile.explored_value = 1.5");
  EXPECT(murk_instance_create(fog, S("main"), &AREA, 64, 0, MURK_ALL_TEAMS, S("{\"blur_radiuss\": 1}"), J), MURK_ERR_PARSE,
         "blur_radiuss");
  EXPECT(murk_instance_create(fog, S("main"), &AREA, 64, 0, MURK_ALL_TEAMS, S("explored_value = = 1"), MURK_FORMAT_TOML),
         MURK_ERR_PARSE, "cannot parse profile");
  EXPECT(murk_instance_create(fog, S("main"), &AREA, 64, 0, MURK_ALL_TEAMS, S("{}"), 9), MURK_ERR_INVALID_ARGUMENT,
         "profile_format");
  EXPECT(murk_instance_create(fog, S("main"), &AREA, 64, 0, MURK_ALL_TEAMS, NULL, 3, J), MURK_ERR_NULL_POINTER,
         "`profile_text`");
  OK(murk_instance_create(fog, S("main"), &AREA, 64, 0, MURK_ALL_TEAMS, S("explored_value = 0.4"), MURK_FORMAT_TOML));
  EXPECT(murk_instance_create(fog, S("main"), &AREA, 64, 0, MURK_ALL_TEAMS, NULL, 0, J), MURK_ERR_DUPLICATE_INSTANCE,
         "duplicate instance `main`");
  EXPECT(murk_instance_set_profile(fog, S("main"), S("{\"update_rate\": -1}"), J), MURK_ERR_INVALID_VALUE,
         "profile.update_rate");
  OK(murk_instance_set_profile(fog, S("main"), S("(explored_value: 0.45)"), MURK_FORMAT_RON));

  /* Unknown instances, by every call that names one. */
  uint64_t out = 0;
  size_t len = 0;
  uint8_t bytes[16];
  MurkDims dims;
  MurkImageInfo info;
  MurkStealthEvent events[2];
  MurkSightEvent sight[2];
  const char *unknown = "unknown instance `nope`";
  const int U = MURK_ERR_UNKNOWN_INSTANCE;
  EXPECT(murk_instance_set_profile(fog, S("nope"), NULL, 0, J), U, unknown);
  EXPECT(murk_instance_destroy(fog, S("nope")), U, unknown);
  EXPECT(murk_instance_dims(fog, S("nope"), &dims), U, unknown);
  EXPECT(murk_state_hash(fog, S("nope"), &out), U, unknown);
  EXPECT(murk_read_stage(fog, S("nope"), S("final"), bytes, sizeof bytes, &len, &info), U, unknown);
  EXPECT(murk_observer_stealth_events(fog, S("nope"), events, 2, &len), U, unknown);
  EXPECT(murk_sight_events(fog, S("nope"), sight, 2, &len), U, unknown);
  EXPECT(murk_visible_to(fog, S("nope"), &out, 1, &len), U, unknown);
  EXPECT(murk_memory_export(fog, S("nope"), bytes, sizeof bytes, &len), U, unknown);
  EXPECT(murk_instance_dims(fog, S("main"), NULL), MURK_ERR_NULL_POINTER, "`out_dims`");
  EXPECT(murk_state_hash(fog, S("main"), NULL), MURK_ERR_NULL_POINTER, "`out_hash`");
  EXPECT(murk_state_hash(fog, NULL, 0, &out), MURK_ERR_NULL_POINTER, "`instance`");
}

static void entities(uint64_t fog) {
  uint64_t e = 0, d = 0, d2 = 0;
  uint32_t alive = 7;
  EXPECT(murk_entity_spawn(fog, NAN, 0, 0, &e), MURK_ERR_INVALID_VALUE, "position.x = NaN: must be a finite number");
  EXPECT(murk_entity_spawn(fog, 0, 0, INFINITY, &e), MURK_ERR_INVALID_VALUE, "position.z = inf");
  EXPECT(murk_entity_spawn(fog, 0, 0, 0, NULL), MURK_ERR_NULL_POINTER, "`out_entity`");
  OK(murk_entity_spawn(fog, 10, 10, 0, &e));
  EXPECT(murk_entity_move(fog, 0, 1, 1, 0), MURK_ERR_STALE_ENTITY, "entity 0x0 is not live");
  EXPECT(murk_entity_move(fog, 0xfeedull << 32, 1, 1, 0), MURK_ERR_STALE_ENTITY, "is not live");
  EXPECT(murk_entity_move(fog, e, 1, NAN, 0), MURK_ERR_INVALID_VALUE, ".position.y = NaN");
  OK(murk_entity_spawn(fog, 5, 5, 0, &d));
  OK(murk_entity_despawn(fog, d));
  EXPECT(murk_entity_move(fog, d, 1, 1, 0), MURK_ERR_STALE_ENTITY, "is not live");
  EXPECT(murk_entity_despawn(fog, d), MURK_ERR_STALE_ENTITY, "is not live");
  OK(murk_entity_alive(fog, d, &alive));
  TRUE(alive == 0, "a despawned entity is not alive");
  /* Its id is reused with another generation: the old handle stays stale. */
  OK(murk_entity_spawn(fog, 5, 5, 0, &d2));
  TRUE(d2 != d, "a new handle");
  EXPECT(murk_entity_set_tracked(fog, d, 1), MURK_ERR_STALE_ENTITY, "is not live");
  OK(murk_entity_alive(fog, d2, &alive));
  TRUE(alive == 1, "the new one is");
  EXPECT(murk_entity_alive(fog, d2, NULL), MURK_ERR_NULL_POINTER, "`out_alive`");
  EXPECT(murk_entity_remove(fog, e, 99), MURK_ERR_INVALID_ARGUMENT, "`component` = 99");
  OK(murk_entity_remove(fog, e, MURK_COMPONENT_BLOCKER)); /* absent: nothing to do */
  EXPECT(murk_entity_set_tracked(fog, e, -1), MURK_ERR_INVALID_VALUE, ".tracked.footprint = -1: must not be negative");
  EXPECT(murk_entity_set_tracked(fog, e, NAN), MURK_ERR_INVALID_VALUE, ".tracked.footprint = NaN");
  EXPECT(murk_entity_set_transient(fog, e, 0), MURK_ERR_INVALID_VALUE, ".transient_ticks = 0");
  OK(murk_entity_despawn(fog, e));
  OK(murk_entity_despawn(fog, d2));
}

static void sources(uint64_t fog) {
  uint64_t e = 0;
  OK(murk_entity_spawn(fog, 20, 20, 0, &e));
  MurkSource s;
  EXPECT(murk_source_default(NULL), MURK_ERR_NULL_POINTER, "`out_source`");
  EXPECT(murk_entity_set_source(fog, e, NULL), MURK_ERR_NULL_POINTER, "`source`");
  OK(murk_source_default(&s));
  s.radius = -1;
  EXPECT(murk_entity_set_source(fog, e, &s), MURK_ERR_INVALID_VALUE, ".source.radius = -1: must not be negative");
  s.radius = NAN;
  EXPECT(murk_entity_set_source(fog, e, &s), MURK_ERR_INVALID_VALUE, ".source.radius = NaN: must be a finite number");
  s.radius = 5;
  s.team = 64;
  EXPECT(murk_entity_set_source(fog, e, &s), MURK_ERR_INVALID_VALUE, ".source.team = 64: must be within 0..=63");
  s.team = 0;
  s.has_falloff = 1;
  s.falloff = 2;
  EXPECT(murk_entity_set_source(fog, e, &s), MURK_ERR_INVALID_VALUE, ".source.falloff = 2");
  s.has_falloff = 0;
  s.has_cone = 1;
  s.cone_half_angle_degrees = 200;
  EXPECT(murk_entity_set_source(fog, e, &s), MURK_ERR_INVALID_VALUE, ".source.cone.half_angle_degrees = 200");
  s.has_cone = 0;
  s.eye_offset[0] = NAN;
  EXPECT(murk_entity_set_source(fog, e, &s), MURK_ERR_INVALID_VALUE, ".source.eye_offset.x = NaN");
  s.eye_offset[0] = 0;

  /* Good for the source alone, too long for the instance: the tick refuses
   * it, naming the instance and the entity, and changes nothing. */
  uint64_t before = hash_of(fog);
  s.radius = 1e7f;
  OK(murk_entity_set_source(fog, e, &s));
  EXPECT(murk_tick(fog, TICK_US), MURK_ERR_INVALID_VALUE, "texels at this instance's resolution");
  TRUE(strstr(murk_last_error(), "instance `main`") != NULL, "`%s` names the instance", murk_last_error());
  TRUE(hash_of(fog) == before, "a refused tick changes nothing");
  OK(murk_entity_remove(fog, e, MURK_COMPONENT_SOURCE));
  OK(murk_tick(fog, TICK_US));

  MurkAntiVision anti = {.radius = -3, .falloff = 0, .targets = MURK_ALL_TEAMS};
  EXPECT(murk_entity_set_anti_vision(fog, e, NULL), MURK_ERR_NULL_POINTER, "`area`");
  EXPECT(murk_entity_set_anti_vision(fog, e, &anti), MURK_ERR_INVALID_VALUE, ".anti_vision.source.radius = -3");
  anti.radius = 3;
  anti.falloff = NAN;
  EXPECT(murk_entity_set_anti_vision(fog, e, &anti), MURK_ERR_INVALID_VALUE, ".anti_vision.source.falloff = NaN");
  OK(murk_entity_despawn(fog, e));
}

static void blockers(uint64_t fog) {
  uint64_t e = 0;
  OK(murk_entity_spawn(fog, 30, 30, 0, &e));
  MurkBlocker b;
  MurkVec2 two[2] = {{0, 0}, {1, 0}}, three[3] = {{0, 0}, {2, 0}, {0, 2}};
  EXPECT(murk_blocker_default(NULL), MURK_ERR_NULL_POINTER, "`out_blocker`");
  EXPECT(murk_entity_set_blocker(fog, e, NULL), MURK_ERR_NULL_POINTER, "`blocker`");
  OK(murk_blocker_default(&b));
  b.shape = 9;
  EXPECT(murk_entity_set_blocker(fog, e, &b), MURK_ERR_INVALID_ARGUMENT, "`blocker.shape` = 9");
  b.shape = MURK_SHAPE_CIRCLE;
  b.radius = NAN;
  EXPECT(murk_entity_set_blocker(fog, e, &b), MURK_ERR_INVALID_VALUE, ".blocker.shape.circle.radius = NaN");
  b.shape = MURK_SHAPE_RECT;
  EXPECT(murk_entity_set_blocker(fog, e, &b), MURK_ERR_INVALID_VALUE, ".blocker.shape.rect.size = 0: must be positive");
  b.shape = MURK_SHAPE_POLYGON;
  b.point_count = 3;
  EXPECT(murk_entity_set_blocker(fog, e, &b), MURK_ERR_NULL_POINTER, "`blocker.points`");
  b.points = two;
  b.point_count = 2;
  EXPECT(murk_entity_set_blocker(fog, e, &b), MURK_ERR_INVALID_VALUE, "needs at least 3 points");
  b.points = three;
  b.point_count = 3;
  b.has_height = 1;
  b.height = -2;
  EXPECT(murk_entity_set_blocker(fog, e, &b), MURK_ERR_INVALID_VALUE, ".blocker.height = -2: must not be negative");
  b.height = 2;
  OK(murk_entity_set_blocker(fog, e, &b));
  OK(murk_entity_despawn(fog, e));
}

static void stealth_actors(uint64_t fog) {
  uint64_t e = 0;
  OK(murk_entity_spawn(fog, 30, 30, 0, &e));
  MurkStealth st;
  EXPECT(murk_stealth_default(NULL), MURK_ERR_NULL_POINTER, "`out_stealth`");
  EXPECT(murk_entity_set_stealth(fog, e, NULL), MURK_ERR_NULL_POINTER, "`stealth`");
  OK(murk_stealth_default(&st));
  st.hide_mode = 5;
  EXPECT(murk_entity_set_stealth(fog, e, &st), MURK_ERR_INVALID_ARGUMENT, "`stealth.hide_mode` = 5");
  st.hide_mode = MURK_HIDE;
  st.policy = 9;
  EXPECT(murk_entity_set_stealth(fog, e, &st), MURK_ERR_INVALID_ARGUMENT, "`stealth.policy` = 9");
  st.policy = MURK_POLICY_FOG_DRIVEN;
  st.fade_seconds = -1;
  EXPECT(murk_entity_set_stealth(fog, e, &st), MURK_ERR_INVALID_VALUE, ".stealth.fade_seconds = -1");
  st.fade_seconds = 0;
  st.cutoff_override = 2;
  EXPECT(murk_entity_set_stealth(fog, e, &st), MURK_ERR_INVALID_VALUE, ".stealth.cutoff_override = 2");
  st.cutoff_override = -1;
  st.instance = "main";
  st.instance_len = 4;
  st.per_observer = 1;
  EXPECT(murk_entity_set_stealth(fog, e, &st), MURK_ERR_INVALID_VALUE, "cannot be set with per_observer");
  st.per_observer = 0;
  st.instance = NOT_UTF8;
  st.instance_len = 2;
  EXPECT(murk_entity_set_stealth(fog, e, &st), MURK_ERR_INVALID_ARGUMENT, "`stealth.instance`");
  st.instance = NULL;
  EXPECT(murk_entity_set_stealth(fog, e, &st), MURK_ERR_NULL_POINTER, "`stealth.instance`");
  st.instance_len = 0;
  OK(murk_entity_set_stealth(fog, e, &st));
  OK(murk_entity_despawn(fog, e));
}

static void captures(uint64_t fog) {
  uint64_t e = 0, plain = 0;
  float cells[4] = {NAN, INFINITY, 3, NAN};
  float storage[5] = {0};
  const float *misaligned = (const float *)(const void *)((const char *)storage + 1);
  EXPECT(murk_capture_add_movingai(fog, NULL, 5, 0, 0, 1, 0, 4, &e), MURK_ERR_NULL_POINTER, "`text`");
  EXPECT(murk_capture_add_movingai(fog, S("type tile\n"), 0, 0, 1, 0, 4, &e), MURK_ERR_PARSE, "cannot parse map");
  EXPECT(murk_capture_add_movingai(fog, S("type octile\nheight 1\nwidth 1\nmap\nX\n"), 0, 0, 1, 0, 4, &e), MURK_ERR_PARSE,
         "unknown terrain `X`");
  EXPECT(murk_capture_add_movingai(fog, S(MAP), 0, 0, 0, 0, 4, &e), MURK_ERR_INVALID_VALUE, "map.cell_size = 0: must be positive");
  EXPECT(murk_capture_add_movingai(fog, S(MAP), NAN, 0, 1, 0, 4, &e), MURK_ERR_INVALID_VALUE, "map.origin.x = NaN");
  EXPECT(murk_capture_add_movingai(fog, S(MAP), 0, 0, 1, 0, INFINITY, &e), MURK_ERR_INVALID_VALUE, "map.tree_height = inf");
  EXPECT(murk_capture_add_movingai(fog, S(MAP), 0, 0, 1, 0, 4, NULL), MURK_ERR_NULL_POINTER, "`out_entity`");
  EXPECT(murk_capture_add_raster(fog, 0, 0, 1, 2, 2, cells, 3, &e), MURK_ERR_INVALID_ARGUMENT, "`cells_len` = 3");
  EXPECT(murk_capture_add_raster(fog, 0, 0, 1, 0, 2, cells, 0, &e), MURK_ERR_INVALID_ARGUMENT, "`cells_len` = 0");
  EXPECT(murk_capture_add_raster(fog, 0, 0, 1, 2, 2, NULL, 4, &e), MURK_ERR_NULL_POINTER, "`cells`");
  EXPECT(murk_capture_add_raster(fog, 0, 0, 1, 2, 2, misaligned, 4, &e), MURK_ERR_INVALID_ARGUMENT, "must be aligned");
  EXPECT(murk_capture_add_raster(fog, 0, 0, -1, 2, 2, cells, 4, &e), MURK_ERR_INVALID_VALUE, "capture.cell_size = -1");
  OK(murk_capture_add_raster(fog, 0, 0, 1, 2, 2, cells, 4, &e));
  EXPECT(murk_capture_set_cells(fog, e, cells, 5), MURK_ERR_INVALID_ARGUMENT, "`cells_len` = 5");
  OK(murk_entity_spawn(fog, 1, 1, 0, &plain));
  EXPECT(murk_capture_set_cells(fog, plain, cells, 4), MURK_ERR_INVALID_ARGUMENT, "holds no height capture");
  OK(murk_capture_set_cells(fog, e, cells, 4));
  EXPECT(murk_capture_mark_dirty(fog, NAN, 0, 1, 1), MURK_ERR_INVALID_VALUE, "capture rectangle min.x = NaN");
  EXPECT(murk_capture_mark_dirty(fog, 5, 0, 1, 1), MURK_ERR_INVALID_VALUE, "must not be below min.x");
  EXPECT(murk_capture_mark_dirty(fog, 500, 500, 600, 600), MURK_ERR_INVALID_VALUE, "meets no instance's grid");
  OK(murk_capture_mark_dirty(fog, 0, 0, 2, 2));
  OK(murk_capture_mark_all_dirty(fog));
  OK(murk_entity_despawn(fog, plain));
}

static void stages_and_hashes(uint64_t fog) {
  size_t len = 0, again = 0;
  MurkImageInfo info;
  uint64_t storage[2] = {0, 0};
  uint64_t *misaligned = (uint64_t *)(void *)((char *)storage + 1);
  EXPECT(murk_read_stage(fog, S("main"), S("nope"), NULL, 0, &len, &info), MURK_ERR_INVALID_ARGUMENT,
         "`stage` = nope: must be one of coverage");
  EXPECT(murk_read_stage(fog, S("main"), NULL, 5, NULL, 0, &len, &info), MURK_ERR_NULL_POINTER, "`stage`");
  EXPECT(murk_read_stage(fog, S("main"), S("final"), NULL, 0, NULL, &info), MURK_ERR_NULL_POINTER, "`out_len`");
  EXPECT(murk_read_stage(fog, S("main"), S("final"), NULL, 16, &len, &info), MURK_ERR_NULL_POINTER, "`buf`");
  OK(murk_read_stage(fog, S("main"), S("final"), NULL, 0, &len, &info));
  TRUE(len == 64 * 64 * 2 && info.width == 64 && info.texel_type == MURK_TEXEL_U16, "%zu bytes", len);
  uint8_t *buf = malloc(len);
  memset(buf, 0xab, len);
  EXPECT(murk_read_stage(fog, S("main"), S("final"), buf, len - 1, &again, &info), MURK_ERR_BUFFER_TOO_SMALL,
         "`buf` holds 8191 but 8192 are needed");
  int untouched = 1;
  for (size_t i = 0; i < len; i++) untouched &= buf[i] == 0xab;
  TRUE(again == len && untouched, "the size, and nothing written: %zu", again);
  OK(murk_read_stage(fog, S("main"), S("final"), buf, len, &again, NULL));
  free(buf);
  EXPECT(murk_lockstep_hash(fog, NULL), MURK_ERR_NULL_POINTER, "`out_hash`");
  EXPECT(murk_landed_hash(fog, NULL, storage), MURK_ERR_NULL_POINTER, "`out_ticks`");
  EXPECT(murk_landed_hash(fog, storage, NULL), MURK_ERR_NULL_POINTER, "`out_hash`");
  EXPECT(murk_lockstep_hash(fog, misaligned), MURK_ERR_INVALID_ARGUMENT, "`out_hash`");
  TRUE(strstr(murk_last_error(), "must be aligned to 8 bytes") != NULL, "%s", murk_last_error());
  char name[64];
  EXPECT(murk_fog_backend_name(fog, name, 3, &len), MURK_ERR_BUFFER_TOO_SMALL, "`buf` holds 3");
  size_t asked = 0;
  OK(murk_fog_backend_name(fog, NULL, 0, &asked));
  TRUE(len == asked && asked > 3, "the length without its NUL, whether too small (%zu) or asked (%zu)", len, asked);
  EXPECT(murk_fog_backend_name(fog, name, asked, &len), MURK_ERR_BUFFER_TOO_SMALL, "are needed"); /* no room for the NUL */
  EXPECT(murk_fog_backend_name(fog, name, sizeof name, NULL), MURK_ERR_NULL_POINTER, "`out_len`");
  OK(murk_fog_backend_name(fog, name, sizeof name, &len));
  TRUE(len == strlen(name) && strncmp(name, "cpu", 3) == 0, "`%s`", name);
}

static void events_and_sets(uint64_t fog) {
  uint64_t source = source_at(fog, 40, 40, 10), a = 0, b = 0, set[2];
  size_t len = 0;
  MurkStealthEvent events[2];
  OK(murk_entity_spawn(fog, 41, 40, 0, &a));
  OK(murk_entity_spawn(fog, 40, 41, 0, &b));
  OK(murk_entity_set_tracked(fog, a, 0));
  OK(murk_entity_set_tracked(fog, b, 0));
  for (int t = 0; t < 4; t++) OK(murk_tick(fog, TICK_US));
  EXPECT(murk_visible_to(fog, S("main"), set, 1, &len), MURK_ERR_BUFFER_TOO_SMALL, "`buf` holds 1 but 2 are needed");
  TRUE(len == 2, "two in sight: %zu", len);
  EXPECT(murk_visible_to(fog, S("main"), NULL, 2, &len), MURK_ERR_NULL_POINTER, "`buf`");
  EXPECT(murk_visible_to(fog, NULL, 4, set, 2, &len), MURK_ERR_NULL_POINTER, "`observer`");
  EXPECT(murk_visible_to(fog, S(NOT_UTF8), set, 2, &len), MURK_ERR_INVALID_ARGUMENT, "is not UTF-8");
  EXPECT(murk_stealth_events(fog, events, 2, NULL), MURK_ERR_NULL_POINTER, "`out_len`");
  EXPECT(murk_sight_events(fog, S("main"), NULL, 0, NULL), MURK_ERR_NULL_POINTER, "`out_len`");
  OK(murk_visible_to(fog, S("main"), set, 2, &len));
  TRUE(len == 2 && set[0] < set[1], "in entity order");
  OK(murk_entity_despawn(fog, a));
  OK(murk_entity_despawn(fog, b));
  OK(murk_entity_despawn(fog, source));
}

static void snapshots(uint64_t fog) {
  size_t len = 0, got = 0;
  OK(murk_snapshot_save(fog, NULL, 0, &len));
  uint8_t *snap = malloc(len);
  EXPECT(murk_snapshot_save(fog, snap, len - 1, &got), MURK_ERR_BUFFER_TOO_SMALL, "are needed");
  TRUE(got == len, "the size again: %zu", got);
  EXPECT(murk_snapshot_save(fog, snap, len, NULL), MURK_ERR_NULL_POINTER, "`out_len`");
  OK(murk_snapshot_save(fog, snap, len, &got));
  uint64_t before = hash_of(fog);
  EXPECT(murk_snapshot_load(fog, NULL, 10), MURK_ERR_NULL_POINTER, "`bytes`");
  EXPECT(murk_snapshot_load(fog, (const uint8_t *)"hello", 5), MURK_ERR_PARSE, "cannot parse snapshot: truncated");
  EXPECT(murk_snapshot_load(fog, snap, 0), MURK_ERR_PARSE, "cannot parse snapshot");
  EXPECT(murk_snapshot_load(fog, snap, len - 3), MURK_ERR_PARSE, "truncated");
  snap[len / 2] ^= 0x5a;
  EXPECT(murk_snapshot_load(fog, snap, len), MURK_ERR_PARSE, "cannot parse snapshot");
  snap[len / 2] ^= 0x5a;
  TRUE(hash_of(fog) == before, "a refused snapshot changes nothing");
  OK(murk_snapshot_load(fog, snap, len));
  TRUE(hash_of(fog) == before, "its own snapshot loads to the same state");
  free(snap);
}

static void memory(uint64_t fog, const uint8_t *blob, size_t blob_len) {
  EXPECT(murk_memory_import(fog, S("main"), NULL, 5, 0), MURK_ERR_NULL_POINTER, "`bytes`");
  EXPECT(murk_memory_import(fog, S("main"), (const uint8_t *)"not a blob", 10, 0), MURK_ERR_PARSE, "cannot parse");
  EXPECT(murk_memory_import(fog, S("nope"), blob, blob_len, 0), MURK_ERR_UNKNOWN_INSTANCE, "unknown instance `nope`");
  OK(murk_instance_create(fog, S("ally"), &AREA, 64, 0, MURK_ALL_TEAMS, NULL, 0, MURK_FORMAT_JSON));
  EXPECT(murk_memory_import(fog, S("ally"), blob, blob_len, 0), MURK_ERR_INVALID_VALUE, "import it as a map");
  OK(murk_memory_import(fog, S("ally"), blob, blob_len, 1));
  OK(murk_memory_import(fog, S("main"), blob, blob_len, 0));
  size_t len = 0;
  uint8_t small[4];
  EXPECT(murk_memory_export(fog, S("main"), small, sizeof small, &len), MURK_ERR_BUFFER_TOO_SMALL, "are needed");
  TRUE(len > sizeof small, "%zu", len);
  OK(murk_instance_destroy(fog, S("ally")));
  EXPECT(murk_instance_destroy(fog, S("ally")), MURK_ERR_UNKNOWN_INSTANCE, "unknown instance `ally`");
}

/* A memory blob of an instance "main" (made in a fog of its own). */
static uint8_t *main_blob(size_t *len) {
  uint64_t fog = 0;
  OK(murk_fog_create(MURK_BACKEND_CPU, 1, &fog));
  OK(murk_instance_create(fog, S("main"), &AREA, 64, 0, MURK_ALL_TEAMS, NULL, 0, MURK_FORMAT_JSON));
  source_at(fog, 20, 20, 8);
  for (int t = 0; t < 3; t++) OK(murk_tick(fog, TICK_US));
  OK(murk_memory_export(fog, S("main"), NULL, 0, len));
  uint8_t *blob = malloc(*len);
  OK(murk_memory_export(fog, S("main"), blob, *len, len));
  OK(murk_fog_free(fog));
  return blob;
}

int main(void) {
  size_t blob_len = 0;
  uint8_t *blob = main_blob(&blob_len);
  fog_handles(blob, blob_len);
  uint64_t fog = 0;
  OK(murk_fog_create(MURK_BACKEND_CPU, 1, &fog));
  last_error(fog);
  instances(fog);
  entities(fog);
  sources(fog);
  blockers(fog);
  stealth_actors(fog);
  captures(fog);
  stages_and_hashes(fog);
  events_and_sets(fog);
  snapshots(fog);
  memory(fog, blob, blob_len);
  OK(murk_fog_free(fog));
  free(blob);
  if (failures > 0) {
    fprintf(stderr, "bad_input: %d of %d checks failed\n", failures, checks);
    return 1;
  }
  printf("bad_input: every check passed (%d)\n", checks);
  return 0;
}
