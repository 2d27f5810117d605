/* Benchmark (not a test): the admission decision on reviews full of bad patches, the request
 * the issue "one AdmissionReview can kill a replica" was about. For each case: the review's
 * size, the time of po_Admission_Review plus the response's serialisation (best and median of
 * N wall-clock samples, and the best CPU time, user + system, which other load disturbs less), the peak extra memory of one decision (ru_maxrss in a fresh child process, after the
 * schema and the input are in place), and the denial's length.
 *   bench_denial [--repeat N] [--once]
 * --once runs each case once in this process, without children or repeats: for instruction
 * counts, e.g. `valgrind --tool=callgrind build/tests/bench/bench_denial --once`. */
#include <json-c/json.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"
#include "po/meshes/consul_check.h"
#include "po/targets/override.h"
#include "po/webhook/admission.h"

/* A growable string (the review bodies are a few MB). */
typedef struct {
  char *p;
  size_t len, cap;
} Str;

static void add(Str *s, const char *t) {
  size_t n = strlen(t);
  if (s->len + n + 1 > s->cap) {
    s->cap = (s->len + n + 1) * 2;
    s->p = realloc(s->p, s->cap);
    if (!s->p) abort();
  }
  memcpy(s->p + s->len, t, n + 1);
  s->len += n;
}

/* A patch naming no field: Consul's error with the field list, and our did-you-mean hint. */
static void bad_patch(Str *s, bool consul, int i) {
  char t[320];
  snprintf(t, sizeof t,
           consul ? "%s{\"ResourceFilter\":{\"ResourceType\":\"cluster\",\"TrafficDirection\":\"outbound\"},\"Op\":\"add\","
                    "\"Path\":\"/outlier_detection/max_ejection_percnt\",\"Value\":%d}"
                  : "%s{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},\"op\":\"add\","
                    "\"path\":\"/outlier_detection/max_ejection_percnt\",\"value\":%d}",
           i ? "," : "", i);
  add(s, t);
}

static void review_head(Str *s, const char *group, const char *kind) {
  char t[512];
  snprintf(t, sizeof t,
           "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"bench\","
           "\"kind\":{\"group\":\"%s\",\"version\":\"v1alpha1\",\"kind\":\"%s\"},\"operation\":\"CREATE\",\"object\":",
           group, kind);
  add(s, t);
}

static char *override_review(int patches, size_t *len) {
  Str s = {0};
  review_head(&s, "propertyoverride.io", "PropertyOverride");
  add(&s, "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\",\"metadata\":{\"name\":\"bench\","
          "\"namespace\":\"default\"},\"spec\":{\"targetRef\":{\"name\":\"api\"},\"patches\":[");
  for (int i = 0; i < patches; i++) bad_patch(&s, false, i);
  add(&s, "]}}}}");
  *len = s.len;
  return s.p;
}

/* A review of a PropertyOverride with one patch of /outlier_detection, up to its value. */
static void one_patch_review_head(Str *s) {
  review_head(s, "propertyoverride.io", "PropertyOverride");
  add(s, "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\",\"metadata\":{\"name\":\"bench\","
          "\"namespace\":\"default\"},\"spec\":{\"targetRef\":{\"name\":\"api\"},\"patches\":[{\"resourceFilter\":"
          "{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},\"op\":\"add\",\"path\":\"/outlier_detection\","
          "\"value\":");
}

/* One patch whose value is an object of `keys` unknown fields: what made the old value decoder
 * quadratic (a scan of the map per key), whatever the patch limits. */
static char *key_bomb_review(int keys, size_t *len) {
  Str s = {0};
  one_patch_review_head(&s);
  add(&s, "{");
  for (int i = 0; i < keys; i++) {
    char t[64];
    snprintf(t, sizeof t, "%s\"unknown_%d\":%d", i ? "," : "", i, i);
    add(&s, t);
  }
  add(&s, "}}]}}}}");
  *len = s.len;
  return s.p;
}

/* The costliest shape per byte for json-c (about half a kilobyte per empty object): just under
 * the review's bound on objects and arrays. */
static char *empty_objects_review(int n, size_t *len) {
  Str s = {0};
  one_patch_review_head(&s);
  add(&s, "[");
  for (int i = 0; i < n; i++) add(&s, i ? ",{}" : "{}");
  add(&s, "]}]}}}}");
  *len = s.len;
  return s.p;
}

static char *consul_review(int entries, int patches, size_t *len) {
  Str s = {0};
  review_head(&s, "consul.hashicorp.com", "ServiceDefaults");
  add(&s, "{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\",\"metadata\":{\"name\":\"api\","
          "\"namespace\":\"default\"},\"spec\":{\"envoyExtensions\":[");
  for (int e = 0; e < entries; e++) {
    add(&s, e ? ",{\"name\":\"builtin/property-override\",\"arguments\":{\"Patches\":["
              : "{\"name\":\"builtin/property-override\",\"arguments\":{\"Patches\":[");
    for (int i = 0; i < patches; i++) bad_patch(&s, true, i);
    add(&s, "]}}");
  }
  add(&s, "]}}}}");
  *len = s.len;
  return s.p;
}

/* One decision as the server makes it: decide, serialise. Returns the denial's length. */
static size_t decide(const char *body, size_t len, size_t *response_len) {
  po_Arena *a = po_Arena_New();
  po_CtlStatus st;
  json_object *out = po_Admission_Review(body, len, NULL, a, &st);
  if (!out) {
    fprintf(stderr, "bench_denial: review refused (%ld): %s\n", st.http_status, st.message);
    exit(1);
  }
  const char *text = json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN);
  *response_len = strlen(text);
  json_object *resp = json_object_object_get(out, "response"), *answer = json_object_object_get(resp, "status");
  size_t denial = answer ? (size_t)json_object_get_string_len(json_object_object_get(answer, "message")) : 0;
  if (json_object_get_boolean(json_object_object_get(resp, "allowed"))) {
    fprintf(stderr, "bench_denial: a review full of bad patches was allowed\n");
    exit(1);
  }
  json_object_put(out);
  po_Arena_Free(a);
  return denial;
}

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
         (double)ru.ru_stime.tv_usec / 1e6;
}

/* A field of /proc/self/status in kB ("VmRSS", "VmHWM"); -1 when missing. */
static long status_kb(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long v = -1;
  size_t n = strlen(field);
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, field, n) && line[n] == ':') v = strtol(line + n + 1, NULL, 10);
  }
  fclose(f);
  return v;
}

/* In a fresh process (--peak): the peak resident memory one decision adds, in MB. The input is
 * built and the schema loaded first; freed memory is given back and the high-water mark reset
 * (clear_refs 5), so the peak is this decision's alone. */
static int peak_main(char *body, size_t len) {
  size_t rl;
  char *warm = override_review(1, &rl);
  decide(warm, rl, &rl);
  free(warm);
  malloc_trim(0);
  FILE *f = fopen("/proc/self/clear_refs", "w");
  bool reset = f && fputs("5", f) >= 0;
  if (f) reset = fclose(f) == 0 && reset;
  long before = status_kb("VmRSS");
  decide(body, len, &rl);
  long hwm = status_kb("VmHWM");
  if (!reset || before < 0 || hwm < 0) return 1;
  printf("%.1f\n", (double)(hwm - before) / 1024.0);
  return 0;
}

static double peak_extra_mb(int index) {
  char cmd[64];
  snprintf(cmd, sizeof cmd, "/proc/%d/exe --peak %d", (int)getpid(), index);
  FILE *p = popen(cmd, "r");
  double mb = -1;
  if (p && fscanf(p, "%lf", &mb) != 1) mb = -1;
  if (p && pclose(p) != 0) mb = -1;
  return mb;
}

int main(int argc, char **argv) {
  int repeat = 7, peak = -1;
  bool once = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--peak") && i + 1 < argc) peak = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--once")) once = true;
    else {
      fprintf(stderr, "usage: bench_denial [--repeat N] [--once]\n");
      return 2;
    }
  }
  if (repeat < 1 || repeat > 64) repeat = 7;
  struct {
    const char *what;
    char *body;
    size_t len;
  } cases[] = {
      {"PropertyOverride, 100 bad patches (the limit)", NULL, 0},
      {"PropertyOverride, 10,000 bad patches (over the limit)", NULL, 0},
      {"ServiceDefaults, 1 entry x 10,000 bad patches", NULL, 0},
      {"ServiceDefaults, 100 entries x 100 bad patches (both limits)", NULL, 0},
      {"ServiceDefaults, 200 entries x 100 bad patches (over the limit)", NULL, 0},
      {"PropertyOverride, 1 patch, a value of 100,000 unknown keys", NULL, 0},
      {"PropertyOverride, a list of 99,000 empty objects (under the bound)", NULL, 0},
  };
  cases[0].body = override_review(100, &cases[0].len);
  cases[1].body = override_review(10000, &cases[1].len);
  cases[2].body = consul_review(1, 10000, &cases[2].len);
  cases[3].body = consul_review(kPo_MaxExtensionsPerConsulObject, 100, &cases[3].len);
  cases[4].body = consul_review(200, 100, &cases[4].len);
  cases[5].body = key_bomb_review(100000, &cases[5].len);
  cases[6].body = empty_objects_review(99000, &cases[6].len);
  size_t n = sizeof cases / sizeof *cases;
  if (peak >= 0) return (size_t)peak < n ? peak_main(cases[peak].body, cases[peak].len) : 2;
  if (once) {
    for (size_t i = 0; i < n; i++) {
      size_t rl;
      decide(cases[i].body, cases[i].len, &rl);
    }
    return 0;
  }
  printf("%-62s %9s %10s %10s %10s %9s %9s\n", "review", "size", "best", "median", "cpu best", "peak+", "denial");
  for (size_t i = 0; i < n; i++) {
    po_Bench_Stats st = {0}, cpu = {0};
    size_t denial = 0, rl = 0;
    for (int r = 0; r < repeat; r++) {
      uint64_t t0 = po_Bench_Now();
      double c0 = cpu_seconds();
      denial = decide(cases[i].body, cases[i].len, &rl);
      po_Bench_Stats_Add(&st, (double)(po_Bench_Now() - t0));
      po_Bench_Stats_Add(&cpu, (cpu_seconds() - c0) * 1e9);
    }
    double mb = peak_extra_mb((int)i);
    char b1[32], b2[32], b3[32];
    printf("%-62s %7.2f MB %10s %10s %10s %6.1f MB %7zu B\n", cases[i].what, (double)cases[i].len / 1e6,
           po_Bench_FormatNs(po_Bench_Stats_Best(&st), b1, sizeof b1), po_Bench_FormatNs(po_Bench_Stats_Median(&st), b2, sizeof b2),
           po_Bench_FormatNs(po_Bench_Stats_Best(&cpu), b3, sizeof b3), mb, denial);
  }
  for (size_t i = 0; i < n; i++) free(cases[i].body);
  return 0;
}
