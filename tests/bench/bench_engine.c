/* bench_engine: the engine's speed against ARCHITECTURE.md section 8, printed as a table.
 *
 *   schema     loading the embedded Envoy descriptor set into a upb pool (target <= 10 ms)
 *   patch      compile (resolve once) and apply (many times) of single patches on a realistic
 *              Cluster, per patch (target: apply <= 0.5 us)
 *   e2e        a ClustersConfigDump of 10,000 clusters: upb JSON decode + encode alone (the
 *              floor), then decode + patch every cluster inside its Any + encode (target
 *              <= 1.15x the floor)
 *
 * Usage: bench_engine [--only schema|patch|e2e] [--repeat N] [--clusters N] [--iterations N]
 *   --iterations N  run every measured loop exactly N times, once (no repeats, no warm-up):
 *                   for instruction counts under `valgrind --tool=callgrind`, where time means
 *                   nothing; the table then shows counts, not speeds.
 *   --peer BIN      the Consul-equivalent Go peer (tests/bench/consulpeer, built with `go build`):
 *                   run on the same Cluster (its binary encoding in a temporary file) in the same
 *                   run, and its PatchStruct times printed beside ours.
 *   --case S        only the per-patch cases whose name contains S (e.g. for callgrind).
 * No number is checked against its target here: machines are noisy, so this prints and the
 * reader judges (docs/benchmarks.md). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "compiled.h"
#include "upb/reflection.h"

/* proto/src/schema_internal.h: snapshot i's embedded set, reassembled from the shared pieces. */
unsigned char *po_Schema_SnapshotSet_(size_t i, size_t *size);

typedef struct {
  const char *only;
  int repeat;          /* samples per measurement */
  unsigned clusters;   /* in the config dump */
  long iterations;     /* 0: timed runs; else fixed counts for callgrind */
  const char *peer;    /* the Consul-equivalent Go peer's binary, or NULL */
  const char *only_case; /* run only the per-patch cases whose name contains this */
} Options;

static Options g_opt = {.only = NULL, .repeat = 9, .clusters = 10000, .iterations = 0};

static void die(const char *what, const po_Status *st) {
  fprintf(stderr, "bench_engine: %s: %s\n", what, st ? st->message : "failed");
  exit(1);
}

static bool selected(const char *section) { return !g_opt.only || !strcmp(g_opt.only, section); }

static void header(void) { printf("  %-44s %9s   %-9s\n", "", "best", "[median]"); }

static void row(const char *name, const po_Bench_Stats *s, const char *note) {
  char b[32], m[32];
  printf("  %-44s %s  [%s]  %s\n", name, po_Bench_FormatNs(po_Bench_Stats_Best(s), b, sizeof b),
         po_Bench_FormatNs(po_Bench_Stats_Median(s), m, sizeof m), note ? note : "");
}

/* ---- schema load ---------------------------------------------------------------------------- */

static double g_first_load_ns; /* po_Schema_Get in this fresh process, before anything else */

static void bench_schema(void) {
  printf("\nschema load (each embedded snapshot's descriptor set, loaded whole)\n");
  header();
  int n = g_opt.iterations ? (int)g_opt.iterations : g_opt.repeat;
  if (n > 64) n = 64;
  for (size_t k = 0; k < po_Schema_SnapshotCount(); k++) {
    size_t size = 0;
    unsigned char *set = po_Schema_SnapshotSet_(k, &size);
    if (!set) die("po_Schema_SnapshotSet_", NULL);
    po_Bench_Stats s = {0};
    size_t files = 0;
    for (int i = 0; i < n; i++) {
      po_Status st;
      po_Status_Clear(&st);
      uint64_t t0 = po_Bench_Now();
      po_Schema *schema = po_Schema_New(set, size, &st);
      uint64_t t1 = po_Bench_Now();
      if (!schema) die("po_Schema_New", &st);
      files = po_Schema_FileCount(schema);
      po_Schema_Free(schema);
      po_Bench_Stats_Add(&s, (double)(t1 - t0));
    }
    free(set);
    char name[96], note[96];
    snprintf(name, sizeof name, "po_Schema_New %s (warm, repeated)", po_Schema_SnapshotVersion(k));
    snprintf(note, sizeof note, "%zu files, %zu bytes; target <= 10 ms", files, size);
    row(name, &s, note);
  }
  po_Bench_Stats first = {0};
  po_Bench_Stats_Add(&first, g_first_load_ns);
  row("po_Schema_Get (first use in a fresh process)", &first, "one sample");
}

/* ---- compile and apply per patch ------------------------------------------------------------ */

typedef struct {
  const char *name;
  const char *op;
  const char *path;
  const char *value; /* JSON; NULL for none */
  bool fails;        /* compile is expected to fail (the error path is what is timed) */
} Case;

static const Case kCases[] = {
    {"wrapper set", "add", "/outlier_detection/max_ejection_percent", "50", false},
    {"map-valued add (message of wrappers)", "add", "/outlier_detection",
     "{\"consecutive_5xx\":7,\"max_ejection_percent\":30,\"enforcing_consecutive_5xx\":90,"
     "\"success_rate_minimum_hosts\":3}", false},
    {"deep path creating parents", "add", "/upstream_connection_options/tcp_keepalive/keepalive_time",
     "300", false},
    {"repeated strings", "add", "/lrs_report_endpoint_metrics",
     "[\"cpu_utilization\",\"mem_utilization\",\"application_utilization\"]", false},
    {"enum by name", "add", "/lb_policy", "\"RING_HASH\"", false},
    {"remove", "remove", "/outlier_detection", NULL, false},
    {"unknown field (error, with hint)", "add", "/outlier_detection/max_ejection_percnt", "50", true},
};
enum { kCaseCount = sizeof kCases / sizeof kCases[0] };

typedef struct {
  const po_Schema *schema;
  const upb_MessageDef *cluster;
  char *binary; /* the realistic cluster, binary encoded, for fresh copies */
  size_t binary_len;
  size_t json_len;
} Fixture;

static po_Patch make_patch(const Case *c, po_Arena *a) {
  po_Status st;
  po_Status_Clear(&st);
  po_Patch p = {.op = c->op, .path = c->path};
  if (c->value) {
    p.value = po_Value_ParseJson(c->value, strlen(c->value), a, &st);
    if (!p.value) die(c->name, &st);
  }
  return p;
}

/* Compile. `rules`: the Constructor's checks (Envoy's rules, deprecations), each time into a
 * fresh arena (what the Constructor does once per patch); without: PatchStruct's checks (hints
 * on), into an arena shared by 1,000 compiles, as one PatchStruct call allocates no arena of
 * its own (the arena's creation is the Constructor's, once per override). */
static double time_compile(const Fixture *fx, const Case *c, long n, bool rules) {
  po_Arena *va = po_Arena_New();
  po_Patch p = make_patch(c, va);
  po_PatchOptions opts = {.hints = true, .envoy_rules = rules, .deprecations = rules};
  po_Status st;
  uint64_t t0 = po_Bench_Now();
  po_Arena *shared = rules ? NULL : po_Arena_New();
  for (long i = 0; i < n; i++) {
    po_Arena *a = rules ? po_Arena_New() : shared;
    po_Diagnostics *d = rules ? po_Diagnostics_New(a) : NULL;
    po_CompiledPatch cp;
    const char *hint = NULL;
    po_Status_Clear(&st);
    bool ok = po_CompiledPatch_Compile(fx->schema, fx->cluster, &p, &opts, a, &cp, &hint, d, 0, &st);
    if (ok == c->fails) die(c->name, &st);
    if (rules) {
      po_Arena_Free(a);
    } else if (i % 1000 == 999) {
      po_Arena_Free(shared);
      shared = po_Arena_New();
    }
  }
  if (shared) po_Arena_Free(shared);
  uint64_t t1 = po_Bench_Now();
  po_Arena_Free(va);
  return (double)(t1 - t0) / (double)n;
}

static po_CompiledPatch compile_once(const Fixture *fx, const Case *c, po_Arena *a) {
  po_Patch p = make_patch(c, a);
  po_PatchOptions opts = {.debug = false};
  po_CompiledPatch cp;
  po_Status st;
  po_Status_Clear(&st);
  if (!po_CompiledPatch_Compile(fx->schema, fx->cluster, &p, &opts, a, &cp, NULL, NULL, 0, &st)) {
    die(c->name, &st);
  }
  return cp;
}

/* Apply `n` times to the same realistic cluster (steady state: parents exist after the first). */
static double time_apply_same(const Fixture *fx, const po_CompiledPatch *cp, long n) {
  upb_Arena *arena = upb_Arena_New();
  po_Status st;
  upb_Message *m = po_Binary_Decode(fx->schema, fx->cluster, fx->binary, fx->binary_len, arena, &st);
  if (!m) die("decode", &st);
  uint64_t t0 = po_Bench_Now();
  for (long i = 0; i < n; i++) {
    if (!po_CompiledPatch_Apply(cp, m, arena)) die("apply", NULL);
  }
  uint64_t t1 = po_Bench_Now();
  upb_Arena_Free(arena);
  return (double)(t1 - t0) / (double)n;
}

/* Per-operation timings are summarised by their median, which a preemption on this shared
 * machine does not move, less the median cost of reading the clock twice. */
static int cmp_u64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : a > b;
}

static double median_u64(uint64_t *v, long n) {
  qsort(v, (size_t)n, sizeof *v, cmp_u64);
  return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

static double g_timer_overhead = -1;

static double timer_overhead(void) {
  if (g_timer_overhead >= 0) return g_timer_overhead;
  enum { kPairs = 100001 };
  uint64_t *v = malloc(kPairs * sizeof *v);
  if (!v) die("out of memory", NULL);
  for (int i = 0; i < kPairs; i++) {
    uint64_t t0 = po_Bench_Now();
    v[i] = po_Bench_Now() - t0;
  }
  g_timer_overhead = median_u64(v, kPairs);
  free(v);
  return g_timer_overhead;
}

/* Apply once to each of `n` fresh copies of the realistic cluster, decoded just before (not
 * timed), as a resource is on first contact in the pipeline (decode, patch, encode): parents
 * are created, fields removed. Copies come in groups of kGroup, decoded together and then
 * patched together under one pair of clock reads (this machine's clock ticks by 10 ns, coarser
 * than one apply); the result is the median group's time per copy, less the clock's own cost.
 * The Go peer measures its PatchStruct the same way. When `compile`, each patch is also
 * compiled (PatchStruct's checks) right before its apply, as one PatchStruct call does both. */
enum { kGroup = 16 };

static double time_fresh(const Fixture *fx, const Case *c, const po_CompiledPatch *compiled, long n, bool compile) {
  double overhead = timer_overhead();
  long groups = n / kGroup > 0 ? n / kGroup : 1;
  uint64_t *v = malloc((size_t)groups * sizeof *v);
  if (!v) die("out of memory", NULL);
  po_Arena *va = po_Arena_New();
  po_Patch p = make_patch(c, va);
  po_PatchOptions opts = {.hints = true};
  po_Arena *a = NULL;
  for (long g = 0; g < groups; g++) {
    if (g % 64 == 0) { /* bounded memory: a new arena every 1,024 copies */
      if (a) po_Arena_Free(a);
      a = po_Arena_New();
    }
    upb_Arena *arena = po_Arena_Upb(a);
    upb_Message *copies[kGroup];
    po_Status st;
    po_Status_Clear(&st);
    for (int i = 0; i < kGroup; i++) {
      copies[i] = po_Binary_Decode(fx->schema, fx->cluster, fx->binary, fx->binary_len, arena, &st);
      if (!copies[i]) die("decode", &st);
    }
    bool ok = true;
    uint64_t t0 = po_Bench_Now();
    for (int i = 0; i < kGroup; i++) {
      po_CompiledPatch cp;
      const po_CompiledPatch *use = compiled;
      if (compile) {
        /* With the hint asked for: an unknown field's did-you-mean is part of what a user gets
         * (issue 25: without it this case was timed without the search it is named for). */
        const char *hint = NULL;
        ok = po_CompiledPatch_Compile(fx->schema, fx->cluster, &p, &opts, a, &cp, &hint, NULL, 0, &st);
        if (!ok && c->fails && !hint) die(c->name, &st);
        use = ok ? &cp : NULL;
      }
      if (use && !po_CompiledPatch_Apply(use, copies[i], arena)) die("apply", NULL);
    }
    v[g] = po_Bench_Now() - t0;
    if (compile && ok == c->fails) die(c->name, &st);
  }
  po_Arena_Free(a);
  po_Arena_Free(va);
  double per = (median_u64(v, groups) - overhead) / kGroup;
  free(v);
  return per > 0 ? per : 0;
}

/* Not inlined, so that callgrind can count each measurement alone:
 * `--toggle-collect=time_compile_apply_fresh` (see docs/benchmarks.md). */
#define NOINLINE __attribute__((noinline))

static NOINLINE double time_apply_fresh(const Fixture *fx, const Case *c, const po_CompiledPatch *cp, long n) {
  return time_fresh(fx, c, cp, n, false);
}

static NOINLINE double time_compile_apply_fresh(const Fixture *fx, const Case *c, long n) {
  return time_fresh(fx, c, NULL, n, true);
}

/* Consul's PatchStruct per patch on a fresh copy of the same Cluster, medians in ns, as
 * ARCHITECTURE.md section 8 records them (Consul's own Go code on these machines); the reference when
 * no peer is given. Same order as kCases; 0: not measured. */
static const double kConsulDesignNs[kCaseCount] = {379, 1593, 1314, 0, 272, 217, 2098};

/* The peer's numbers (--peer): one line per case, "<case index> <ns per PatchStruct>". */
static double g_peer_ns[kCaseCount];
static bool g_have_peer;

static void run_peer(const char *peer, const Fixture *fx, long n) {
  char path[] = "/tmp/bench_engine_cluster_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) die("mkstemp", NULL);
  FILE *f = fdopen(fd, "wb");
  fwrite(fx->binary, 1, fx->binary_len, f);
  fclose(f);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "'%s' --cluster '%s' --n %ld --repeat %d", peer, path, n, g_opt.iterations ? 1 : g_opt.repeat);
  FILE *p = popen(cmd, "r");
  if (!p) die("running the peer", NULL);
  char line[512];
  while (fgets(line, sizeof line, p)) {
    int idx;
    double ns;
    if (sscanf(line, "%d %lf", &idx, &ns) == 2 && idx >= 0 && idx < kCaseCount) {
      g_peer_ns[idx] = ns;
      g_have_peer = true;
    }
  }
  int rc = pclose(p);
  unlink(path);
  if (rc != 0) die("the peer failed", NULL);
}

static void bench_patch(const Fixture *fx) {
  long compiles = g_opt.iterations ? g_opt.iterations : 2000;
  long applies = g_opt.iterations ? g_opt.iterations : 200000;
  long fresh = g_opt.iterations ? g_opt.iterations : 20000;
  int reps = g_opt.iterations ? 1 : g_opt.repeat;
  if (g_opt.peer) run_peer(g_opt.peer, fx, fresh);
  printf("\nper patch on a realistic Cluster (%zu bytes of JSON, %zu binary)\n", fx->json_len, fx->binary_len);
  printf("  %-38s %-22s %-22s %-22s %-22s\n", "case", "compile (Constructor)", "compile (PatchStruct)",
         "apply, same message", "apply, fresh copy");
  printf("  %-38s %-22s %-22s %-22s %-22s\n", "", "best [median]", "best [median]", "best [median]", "best [median]");
  double worst_apply = 0;
  double ours_ca[kCaseCount] = {0}, ours_apply[kCaseCount] = {0};
  for (int c = 0; c < kCaseCount; c++) {
    const Case *k = &kCases[c];
    if (g_opt.only_case && !strstr(k->name, g_opt.only_case)) continue;
    po_Bench_Stats sc = {0}, sp = {0}, ss = {0}, sf = {0}, sca = {0};
    po_Arena *a = po_Arena_New();
    po_CompiledPatch cp;
    if (!k->fails) cp = compile_once(fx, k, a);
    for (int r = 0; r < reps; r++) {
      po_Bench_Stats_Add(&sc, time_compile(fx, k, compiles, true));
      po_Bench_Stats_Add(&sp, time_compile(fx, k, compiles, false));
      po_Bench_Stats_Add(&sca, time_compile_apply_fresh(fx, k, fresh));
      if (!k->fails) {
        po_Bench_Stats_Add(&ss, time_apply_same(fx, &cp, applies));
        po_Bench_Stats_Add(&sf, time_apply_fresh(fx, k, &cp, fresh));
      }
    }
    char b[4][32], m[4][32], col[4][64];
    const po_Bench_Stats *st[4] = {&sc, &sp, &ss, &sf};
    for (int i = 0; i < 4; i++) {
      if (k->fails && i >= 2) {
        snprintf(col[i], sizeof col[i], "%s", i == 2 ? "(compile-time error)" : "");
        continue;
      }
      snprintf(col[i], sizeof col[i], "%s [%s]", po_Bench_FormatNs(po_Bench_Stats_Best(st[i]), b[i], sizeof b[i]),
               po_Bench_FormatNs(po_Bench_Stats_Median(st[i]), m[i], sizeof m[i]));
    }
    if (!k->fails) {
      double w = po_Bench_Stats_Best(&sf) > po_Bench_Stats_Best(&ss) ? po_Bench_Stats_Best(&sf)
                                                                      : po_Bench_Stats_Best(&ss);
      if (w > worst_apply) worst_apply = w;
      ours_apply[c] = po_Bench_Stats_Median(&sf);
    }
    ours_ca[c] = po_Bench_Stats_Median(&sca);
    printf("  %-38s %-22s %-22s %-22s %-22s\n", k->name, col[0], col[1], col[2], col[3]);
    po_Arena_Free(a);
  }
  if (g_opt.iterations) return;
  printf("  slowest apply: %.0f ns = %.2fx the 0.5 us target\n", worst_apply, worst_apply / 500.0);
  printf("\nagainst Consul's PatchStruct, per patch on a fresh copy (medians; %s)\n",
         g_have_peer ? "the Go peer tests/bench/consulpeer, same cluster, same run"
                     : "Consul's numbers from ARCHITECTURE.md section 8; --peer for a side-by-side run");
  printf("  %-38s %12s %12s %12s %10s %10s\n", "case", "Consul", "ours c+a", "ours apply", "x c+a", "x apply");
  for (int c = 0; c < kCaseCount; c++) {
    double consul = g_have_peer ? g_peer_ns[c] : kConsulDesignNs[c];
    if (consul <= 0 || ours_ca[c] <= 0) continue;
    char xa[32] = "-";
    if (ours_apply[c] > 0) snprintf(xa, sizeof xa, "%.1fx", consul / ours_apply[c]);
    printf("  %-38s %9.0f ns %9.0f ns %9.0f ns %9.1fx %10s   (targets >= 5x, >= 10x)\n", kCases[c].name, consul,
           ours_ca[c], ours_apply[c], consul / ours_ca[c], xa);
  }
}

/* ---- end to end: a 10,000-cluster config dump ---------------------------------------------- */

/* The override of the end-to-end run: five patches, each a different kind of target. */
static const char kOverride[] =
    "{\"Patches\":["
    "{\"ResourceFilter\":{\"ResourceType\":\"cluster\",\"TrafficDirection\":\"outbound\"},"
    "\"Op\":\"add\",\"Path\":\"/outlier_detection/max_ejection_percent\",\"Value\":50},"
    "{\"ResourceFilter\":{\"ResourceType\":\"cluster\",\"TrafficDirection\":\"outbound\"},"
    "\"Op\":\"add\",\"Path\":\"/connect_timeout\",\"Value\":{\"seconds\":3}},"
    "{\"ResourceFilter\":{\"ResourceType\":\"cluster\",\"TrafficDirection\":\"outbound\"},"
    "\"Op\":\"add\",\"Path\":\"/upstream_connection_options/tcp_keepalive/keepalive_time\",\"Value\":300},"
    "{\"ResourceFilter\":{\"ResourceType\":\"cluster\",\"TrafficDirection\":\"outbound\"},"
    "\"Op\":\"add\",\"Path\":\"/lb_policy\",\"Value\":\"RING_HASH\"},"
    "{\"ResourceFilter\":{\"ResourceType\":\"cluster\",\"TrafficDirection\":\"outbound\"},"
    "\"Op\":\"remove\",\"Path\":\"/least_request_lb_config\"}]}";

typedef struct {
  const upb_MessageDef *dump;
  const upb_FieldDef *active;     /* ClustersConfigDump.dynamic_active_clusters */
  const upb_FieldDef *cluster;    /* DynamicCluster.cluster (an Any) */
  const upb_FieldDef *any_value;  /* google.protobuf.Any.value */
} DumpDefs;

static DumpDefs dump_defs(const po_Schema *schema) {
  DumpDefs d = {0};
  d.dump = po_Schema_FindMessage(schema, "envoy.admin.v3.ClustersConfigDump");
  if (!d.dump) die("envoy.admin.v3.ClustersConfigDump is not in the schema", NULL);
  d.active = upb_MessageDef_FindFieldByName(d.dump, "dynamic_active_clusters");
  const upb_MessageDef *dc = upb_FieldDef_MessageSubDef(d.active);
  d.cluster = upb_MessageDef_FindFieldByName(dc, "cluster");
  d.any_value = upb_MessageDef_FindFieldByName(upb_FieldDef_MessageSubDef(d.cluster), "value");
  if (!d.cluster || !d.any_value) die("unexpected ClustersConfigDump layout", NULL);
  return d;
}

/* (a) the floor: what upb alone costs to read and write the dump. */
static double run_floor(const po_Schema *schema, const DumpDefs *dd, const char *json, size_t len,
                        size_t *out_len) {
  uint64_t t0 = po_Bench_Now();
  upb_Arena *arena = upb_Arena_New();
  po_Status st;
  upb_Message *m = po_Json_Decode(schema, dd->dump, json, len, arena, &st);
  if (!m) die("decode of the dump", &st);
  char *out = po_Json_Encode(schema, dd->dump, m, arena, out_len, &st);
  if (!out) die("encode of the dump", &st);
  upb_Arena_Free(arena);
  return (double)(po_Bench_Now() - t0);
}

/* (b) the same plus, for every cluster: its Any's bytes decoded, the override applied (filter
 * matching included), re-encoded and stored back. *split gets the time spent on the patching
 * step alone (decode + apply + encode of the Anys). */
static double run_patched(const po_Schema *schema, const DumpDefs *dd, const po_Override *o,
                          const char *json, size_t len, size_t *out_len, double *split,
                          unsigned *patched_count) {
  uint64_t t0 = po_Bench_Now();
  upb_Arena *arena = upb_Arena_New();
  po_Status st;
  upb_Message *m = po_Json_Decode(schema, dd->dump, json, len, arena, &st);
  if (!m) die("decode of the dump", &st);
  uint64_t t1 = po_Bench_Now();
  const upb_MessageDef *cluster_def = po_Schema_FindMessage(schema, "envoy.config.cluster.v3.Cluster");
  const upb_Array *arr = upb_Message_Get(m, dd->active).array_val;
  size_t n = arr ? upb_Array_Size(arr) : 0;
  po_ServiceName svc = {.name = "", .namespace_ = "default", .partition = "default"};
  po_Payload pl = {.resource_type = kPo_ResourceType_Cluster, .direction = kPo_TrafficDirection_Outbound, .service = &svc};
  unsigned patched = 0;
  for (size_t i = 0; i < n; i++) {
    upb_Message *dc = (upb_Message *)upb_Array_Get(arr, i).msg_val;
    upb_Message *any = (upb_Message *)upb_Message_Get(dc, dd->cluster).msg_val;
    upb_StringView bytes = upb_Message_Get(any, dd->any_value).str_val;
    /* Each cluster is decoded into a scratch arena; only its new bytes go into the dump's. */
    po_Arena scratch = {.upb = upb_Arena_New()};
    upb_Message *c = po_Binary_Decode(schema, cluster_def, bytes.data, bytes.size, scratch.upb, &st);
    if (!c) die("decode of a cluster", &st);
    po_Message pm = {.def = cluster_def, .msg = c, .arena = &scratch, .schema = schema};
    bool any_patched = false;
    if (!po_Override_Apply(o, &pm, &pl, &any_patched, &st)) die("apply", &st);
    if (any_patched) {
      size_t blen = 0;
      char *b = po_Binary_Encode(cluster_def, c, arena, &blen, &st);
      if (!b) die("encode of a cluster", &st);
      upb_MessageValue v = {.str_val = {.data = b, .size = blen}};
      if (!upb_Message_Set(any, dd->any_value, v, arena)) die("store", NULL);
      patched++;
    }
    upb_Arena_Free(scratch.upb);
  }
  uint64_t t2 = po_Bench_Now();
  char *out = po_Json_Encode(schema, dd->dump, m, arena, out_len, &st);
  if (!out) die("encode of the dump", &st);
  /* One look at the result, outside any timed comparison: the patches are in it. */
  if (patched_count) {
    *patched_count = patched;
    const char *first = strstr(out, "\"max_ejection_percent\":50");
    if (!first || strstr(out, "\"least_request_lb_config\"")) die("the patched dump lacks the patches", NULL);
  }
  upb_Arena_Free(arena);
  *split = (double)(t2 - t1);
  return (double)(po_Bench_Now() - t0);
}

static void bench_e2e(const po_Schema *schema) {
  size_t len = 0;
  uint64_t g0 = po_Bench_Now();
  char *json = po_Bench_ConfigDumpJson(g_opt.clusters, &len);
  if (!json) die("generating the config dump", NULL);
  double gen_ms = (double)(po_Bench_Now() - g0) / 1e6;
  DumpDefs dd = dump_defs(schema);

  po_Arena *a = po_Arena_New();
  po_Status st;
  po_Status_Clear(&st);
  po_Value *args = po_Value_ParseJson(kOverride, sizeof kOverride - 1, a, &st);
  if (!args) die("override arguments", &st);
  po_Diagnostics *d = po_Diagnostics_New(a);
  po_Override *o = po_Constructor(NULL, args, NULL, a, d);
  if (!o) die(po_Diagnostics_ConsulText(d, true, a), NULL);

  int reps = g_opt.iterations ? 1 : (g_opt.repeat < 5 ? g_opt.repeat : 5);
  printf("\nend to end: ClustersConfigDump, %u clusters, %.1f MB of JSON (generated in %.0f ms)\n",
         g_opt.clusters, (double)len / 1e6, gen_ms);
  header();
  po_Bench_Stats sa = {0}, sb = {0}, sp = {0};
  size_t out_a = 0, out_b = 0;
  unsigned patched = 0;
  /* Interleaved, so that drift on the machine affects both alike. */
  for (int r = 0; r < reps; r++) {
    po_Bench_Stats_Add(&sa, run_floor(schema, &dd, json, len, &out_a));
    double split = 0;
    po_Bench_Stats_Add(&sb, run_patched(schema, &dd, o, json, len, &out_b, &split, &patched));
    po_Bench_Stats_Add(&sp, split);
  }
  row("(a) upb JSON decode + encode (the floor)", &sa, NULL);
  row("(b) decode + patch every cluster + encode", &sb, NULL);
  row("    of which: Any decode + 5 patches + encode", &sp, NULL);
  po_Bench_Stats per = {0};
  for (int i = 0; i < sp.count; i++) po_Bench_Stats_Add(&per, sp.samples[i] / g_opt.clusters);
  row("    per cluster", &per, NULL);
  double ba = po_Bench_Stats_Best(&sb) / po_Bench_Stats_Best(&sa);
  double bm = po_Bench_Stats_Median(&sb) / po_Bench_Stats_Median(&sa);
  printf("  ratio b/a: %.3fx best, %.3fx median (target <= 1.15x); %u of %u clusters patched\n", ba, bm,
         patched, g_opt.clusters);
  printf("  throughput: (a) %.1f MB/s, (b) %.1f MB/s of input JSON (output %.1f MB and %.1f MB)\n",
         (double)len / 1e6 / (po_Bench_Stats_Best(&sa) / 1e9), (double)len / 1e6 / (po_Bench_Stats_Best(&sb) / 1e9),
         (double)out_a / 1e6, (double)out_b / 1e6);
  po_Arena_Free(a);
  free(json);
}

/* ---- main ------------------------------------------------------------------------------------ */

static void usage(void) {
  fprintf(stderr,
          "usage: bench_engine [--only schema|patch|e2e] [--repeat N] [--clusters N] [--iterations N] [--peer BIN]\n"
          "                    [--case SUBSTRING]\n");
  exit(2);
}

int main(int argc, char **argv) {
  /* First thing in a fresh process: the schema load every program pays once. */
  po_Status st;
  po_Status_Clear(&st);
  uint64_t t0 = po_Bench_Now();
  const po_Schema *schema = po_Schema_Get(&st);
  g_first_load_ns = (double)(po_Bench_Now() - t0);
  if (!schema) die("po_Schema_Get", &st);

  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(arg, "--only") && val) g_opt.only = argv[++i];
    else if (!strcmp(arg, "--repeat") && val) g_opt.repeat = atoi(argv[++i]);
    else if (!strcmp(arg, "--clusters") && val) g_opt.clusters = (unsigned)strtoul(argv[++i], NULL, 10);
    else if (!strcmp(arg, "--iterations") && val) g_opt.iterations = strtol(argv[++i], NULL, 10);
    else if (!strcmp(arg, "--peer") && val) g_opt.peer = argv[++i];
    else if (!strcmp(arg, "--case") && val) g_opt.only_case = argv[++i];
    else usage();
  }
  if (g_opt.repeat < 1 || g_opt.repeat > 64 || g_opt.clusters < 1 || g_opt.iterations < 0) usage();
  if (g_opt.only && strcmp(g_opt.only, "schema") && strcmp(g_opt.only, "patch") && strcmp(g_opt.only, "e2e")) {
    usage();
  }

  time_t now = time(NULL);
  char date[64];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  printf("propertyoverride engine benchmarks, %s; ", date);
  if (g_opt.iterations) printf("fixed %ld iterations (for callgrind; times are not meaningful)\n", g_opt.iterations);
  else printf("best of %d runs, median in [brackets]\n", g_opt.repeat);

  if (selected("schema")) bench_schema();
  if (selected("patch")) {
    Fixture fx = {.schema = schema};
    fx.cluster = po_Schema_FindMessage(schema, "envoy.config.cluster.v3.Cluster");
    char json[4096];
    size_t n = po_Bench_ClusterJson(json, sizeof json, 42);
    upb_Arena *arena = upb_Arena_New();
    upb_Message *m = po_Json_Decode(schema, fx.cluster, json, n, arena, &st);
    if (!m) die("the realistic cluster", &st);
    fx.binary = po_Binary_Encode(fx.cluster, m, arena, &fx.binary_len, &st);
    if (!fx.binary) die("the realistic cluster", &st);
    fx.json_len = n;
    bench_patch(&fx);
    upb_Arena_Free(arena);
  }
  if (selected("e2e")) bench_e2e(schema);
  return 0;
}
