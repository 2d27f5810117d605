/* envoy_rules_native_diff ORACLE CORPUS: the same oracle judges native patch values, EnvoyFilter
 * and EnvoyPatchPolicy objects written by hand, through the webhook (po_Admission_Review) and
 * validate -f (po_Cli_CheckObject). A case of the generator (diff.h; the forms whose value is
 * proto3 JSON: direct, deep and the object forms) becomes a resource R: a valid base ({"name":
 * "c"}; a ClusterLoadAssignment's cluster_name) with the value nested along the path, and
 *   - an EnvoyFilter ADD of R (CLUSTER, LISTENER): the value is the whole resource, so every
 *     violation of R counts;
 *   - an EnvoyPatchPolicy JSON Patch `add` of the value at the path, in R's type: the messages
 *     on the path are the generated resource's, so only the violations the add answers for count
 *     (po_Diff_Affects).
 * The oracle reads R as proto3 JSON. A value neither it nor our decoder can read is not Envoy's
 * rules' to judge and is counted apart. Fails on a hole, a false denial, or the webhook
 * and validate -f disagreeing.
 *
 *   PO_ORACLE_SEED=N            the seed (default: from the clock; printed)
 *   PO_ORACLE_NATIVE_CASES=N    cases drawn from the generator's (default 2000), after the corpus
 *   PO_ORACLE_REPORT=FILE       every disagreement
 *   PO_ORACLE_NEW_CORPUS=FILE   the disagreeing cases as corpus lines */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diff.h"
#include "gitops.h"
#include "set_aside.h"

enum { kEF = 0, kEPP, kObjs };
enum { kAllowed = 0, kDenied, kHole, kFalseDenial, kDecode, kSetAside, kOracleError, kMesh, kClassCount };
static const char *const kClassNames[] = {"agree: admitted", "agree: refused", "hole", "false denial",
                                          "unreadable by both (not a rule)", "set aside (set_aside.c)",
                                          "oracle error", "refused by the mesh, not a rule"};

/* An EnvoyPatchPolicy add of a oneof member beside the one Envoy Gateway generates (`/address/pipe`
 * beside every listener's socket_address) is refused for Envoy Gateway's sake, not Envoy's rules:
 * the resource would hold two members (eg_generated.c; tests/cli's eg refusal cases pin that
 * refusal). Told by the finding's own words, so any other refusal still counts. */
static bool mesh_refusal(const char *why) {
  return why && strstr(why, "whose member Envoy Gateway generates");
}

typedef struct {
  const po_DiffCase *c;
  bool used;                 /* this object kind applies to the case */
  bool hook_ok, file_ok;
  const char *why;
  int cls;
  const char *envoy;
} Obj;

static const char *base_of(const char *resource) {
  return !strcmp(resource, "cluster-load-assignment") ? "cluster_name" : "name";
}

/* R: the base with the value nested along the path (the path's first segment replaces the base's
 * own key when they are the same field). */
static const char *resource_json(const po_DiffCase *c, po_Arena *a) {
  po_TextBuf t = {.a = a};
  const char *p = c->path;
  while (*p == '/') p++;
  const char *end = strchr(p, '/');
  size_t first = end ? (size_t)(end - p) : strlen(p);
  const char *base = base_of(c->resource);
  po_TextBuf_Puts(&t, "{");
  if (strlen(base) != first || strncmp(p, base, first) != 0) {
    po_TextBuf_Puts(&t, po_Arena_Printf(a, "\"%s\":\"c\",", base));
  }
  size_t depth = 0;
  while (*p) {
    end = strchr(p, '/');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    po_TextBuf_Puts(&t, depth ? "{\"" : "\"");
    po_TextBuf_Put(&t, p, len);
    po_TextBuf_Puts(&t, "\":");
    depth++;
    p += len;
    while (*p == '/') p++;
  }
  po_TextBuf_Puts(&t, c->value);
  for (size_t i = 0; i < depth; i++) po_TextBuf_Puts(&t, "}");
  return t.oom ? NULL : t.buf;
}

static const char *envoy_filter(const po_DiffCase *c, const char *r, po_Arena *a) {
  const char *apply = !strcmp(c->resource, "cluster") ? "CLUSTER" : "LISTENER";
  const char *ctx = !strcmp(c->resource, "cluster") ? "SIDECAR_OUTBOUND" : "SIDECAR_INBOUND";
  return po_Arena_Printf(a,
                         "{\"apiVersion\":\"networking.istio.io/v1alpha3\",\"kind\":\"EnvoyFilter\",\"metadata\":"
                         "{\"name\":\"ef\",\"namespace\":\"team-a\"},\"spec\":{\"configPatches\":[{\"applyTo\":\"%s\","
                         "\"match\":{\"context\":\"%s\"},\"patch\":{\"operation\":\"ADD\",\"value\":%s}}]}}",
                         apply, ctx, r);
}

static const char *envoy_patch_policy(const po_DiffCase *c, po_Arena *a) {
  const char *msg = po_ResourceType_Message(po_ResourceType_Parse(c->resource));
  return po_Arena_Printf(a,
                         "{\"apiVersion\":\"gateway.envoyproxy.io/v1alpha1\",\"kind\":\"EnvoyPatchPolicy\",\"metadata\":"
                         "{\"name\":\"epp\",\"namespace\":\"team-a\"},\"spec\":{\"type\":\"JSONPatch\",\"targetRef\":"
                         "{\"group\":\"gateway.networking.k8s.io\",\"kind\":\"Gateway\",\"name\":\"eg\"},\"jsonPatches\":"
                         "[{\"type\":\"type.googleapis.com/%s\",\"name\":\"x\",\"operation\":{\"op\":\"add\",\"path\":%s,"
                         "\"value\":%s}}]}}",
                         msg, po_Diff_JsonString(a, c->path, strlen(c->path)), c->value);
}

static bool judge_ours(Obj *o, int which, const char *object, po_Arena *a) {
  static const char *const kGroup[] = {"networking.istio.io", "gateway.envoyproxy.io"};
  static const char *const kKind[] = {"EnvoyFilter", "EnvoyPatchPolicy"};
  return object && po_DiffVerdict_Webhook(kGroup[which], kKind[which], object, a, &o->hook_ok, &o->why) &&
         po_DiffVerdict_File(kPo_ObjKind_MeshNative, kKind[which], object, a, &o->file_ok);
}

static void classify(Obj *o, int which, const char *message, const po_DiffJudgement *j, po_Arena *a) {
  if (po_Diff_SetAside(o->c, false)) {
    o->cls = kSetAside;
    return;
  }
  /* a value neither side can read as proto3 JSON is no rule's to judge; one that only we cannot
   * read is compared like any refusal */
  if (j->error) {
    o->cls = o->hook_ok ? kOracleError : kDecode;
    o->envoy = j->error;
    return;
  }
  po_TextBuf t = {.a = a};
  for (size_t i = 0; i < j->n; i++) {
    if (which == kEPP && !po_Diff_Affects(o->c->path, j->v[i].path)) continue;
    if (t.len) po_TextBuf_Puts(&t, "; ");
    po_TextBuf_Puts(&t, po_Diff_ViolationKind(message, &j->v[i], a));
    po_TextBuf_Puts(&t, " ");
    po_TextBuf_Puts(&t, j->v[i].path);
    po_TextBuf_Puts(&t, ": ");
    po_TextBuf_Puts(&t, j->v[i].reason);
  }
  o->envoy = t.buf;
  bool envoy_ok = !o->envoy;
  if (which == kEPP && !o->hook_ok && envoy_ok && mesh_refusal(o->why)) {
    o->cls = kMesh;
    return;
  }
  o->cls = o->hook_ok == envoy_ok ? (envoy_ok ? kAllowed : kDenied) : o->hook_ok ? kHole : kFalseDenial;
}

/* The cases this test takes: the corpus, then a seeded draw of the generator's in the forms whose
 * value is proto3 JSON (no /value, /seconds, /nanos, no Duration as seconds and nanos). */
static size_t pick(const po_DiffCases *all, size_t corpus, size_t want, po_DiffRng *rng, const po_DiffCase **out) {
  static const char *const kForms[] = {"direct", "deep", "parent-object", "object-full", "object-unset", "message-empty"};
  size_t n = 0;
  for (size_t i = 0; i < corpus; i++) out[n++] = &all->items[i];
  for (size_t tries = 0; n < corpus + want && tries < 50 * want + 100 && all->len > corpus; tries++) {
    const po_DiffCase *c = &all->items[corpus + po_DiffRng_Below(rng, all->len - corpus)];
    bool form = false;
    for (size_t k = 0; k < 6; k++) form |= !strcmp(c->form, kForms[k]);
    bool dup = false;
    for (size_t k = corpus; k < n && !dup; k++) dup = out[k] == c;
    if (form && !dup) out[n++] = c;
  }
  return n;
}

static void print_obj(FILE *f, int which, const char *what, const Obj *o) {
  fprintf(f, "  %s %s: %s %s %s  [%s, %s]%s\n      ours: %s%s%.300s%s\n      envoy: %s\n",
          which == kEF ? "EnvoyFilter" : "EnvoyPatchPolicy", what, o->c->resource,
          o->c->path, o->c->value, o->c->form, o->c->kind, o->c->corpus ? " (corpus)" : "",
          o->hook_ok ? "admitted" : "refused", o->why ? " (" : "", o->why ? o->why : "", o->why ? ")" : "",
          o->envoy ? o->envoy : "accepts");
}

static int report(Obj (*objs)[kObjs], size_t n) {
  static const char *const kNames[] = {"EnvoyFilter (ADD, the whole resource)", "EnvoyPatchPolicy (JSON Patch add)"};
  size_t cls[kObjs][kClassCount] = {{0}}, split[kObjs] = {0}, bad = 0;
  const char *file = getenv("PO_ORACLE_REPORT"), *corpus = getenv("PO_ORACLE_NEW_CORPUS");
  FILE *f = file && *file ? fopen(file, "w") : NULL, *cf = corpus && *corpus ? fopen(corpus, "w") : NULL;
  for (size_t i = 0; i < n; i++) {
    bool case_wrong = false;
    for (int w = 0; w < kObjs; w++) {
      const Obj *o = &objs[i][w];
      if (!o->used) continue;
      cls[w][o->cls]++;
      split[w] += o->hook_ok != o->file_ok;
      bool wrong = o->cls == kHole || o->cls == kFalseDenial || o->cls == kOracleError || o->hook_ok != o->file_ok;
      if (wrong && bad++ < 20) print_obj(stdout, w, kClassNames[o->cls], o);
      if ((wrong || o->cls == kDecode) && f) print_obj(f, w, kClassNames[o->cls], o);
      case_wrong |= wrong;
    }
    if (case_wrong && cf && !objs[i][kEPP].c->corpus) po_DiffCorpus_Write(cf, objs[i][kEPP].c);
  }
  if (f) fclose(f);
  if (cf) fclose(cf);
  int rc = 0;
  for (int w = 0; w < kObjs; w++) {
    printf("%s:", kNames[w]);
    for (int c = 0; c < kClassCount; c++) printf(" %zu %s;", cls[w][c], kClassNames[c]);
    printf(" %zu where the webhook and validate -f disagree\n", split[w]);
    rc |= cls[w][kHole] || cls[w][kFalseDenial] || cls[w][kOracleError] || split[w];
  }
  return rc;
}

static bool run(const char *oracle, const po_DiffCase **cases, size_t n, po_Arena *a, Obj (*objs)[kObjs]) {
  const char **lines = calloc(n + 1, sizeof *lines), **messages = calloc(n + 1, sizeof *messages);
  if (!lines || !messages) return false;
  bool ok = true;
  for (size_t i = 0; ok && i < n; i++) {
    const po_DiffCase *c = cases[i];
    const char *r = resource_json(c, a);
    messages[i] = po_ResourceType_Message(po_ResourceType_Parse(c->resource));
    lines[i] = po_Arena_Printf(a, "{\"type\":\"%s\",\"value\":%s}", messages[i], r);
    objs[i][kEF] = (Obj){.c = c, .used = !strcmp(c->resource, "cluster") || !strcmp(c->resource, "listener")};
    objs[i][kEPP] = (Obj){.c = c, .used = true};
    ok = (!objs[i][kEF].used || judge_ours(&objs[i][kEF], kEF, envoy_filter(c, r, a), a)) &&
         judge_ours(&objs[i][kEPP], kEPP, envoy_patch_policy(c, a), a);
  }
  po_DiffJudgement *j = po_Arena_Malloc(a, (n + 1) * sizeof *j);
  ok = ok && j && po_DiffOracle_Run(oracle, lines, n, a, j);
  for (size_t i = 0; ok && i < n; i++) {
    for (int w = 0; w < kObjs; w++) {
      if (objs[i][w].used) classify(&objs[i][w], w, messages[i], &j[i], a);
    }
  }
  free(lines);
  free(messages);
  return ok;
}

int main(int argc, char **argv) {
  const char *api = NULL;
  if (argc == 5 && !strcmp(argv[1], "--api")) api = argv[2], argv += 2, argc -= 2;
  if (argc != 3) return fprintf(stderr, "usage: envoy_rules_native_diff [--api VERSION] ORACLE CORPUS\n"), 2;
  if (!po_DiffSnapshot_Use(api)) return 2;
  const char *seed_env = getenv("PO_ORACLE_SEED"), *n_env = getenv("PO_ORACLE_NATIVE_CASES");
  uint64_t seed = seed_env && *seed_env ? strtoull(seed_env, NULL, 10) : (uint64_t)time(NULL);
  size_t want = n_env && *n_env ? strtoull(n_env, NULL, 10) : 2000;
  printf("envoy_rules_native_diff: snapshot %s, seed %llu (PO_ORACLE_SEED=%llu reruns these cases)\n",
         po_DiffSnapshot_Version(), (unsigned long long)seed, (unsigned long long)seed);
  po_Arena *a = po_Arena_New();
  po_DiffCases all = {.a = a};
  po_DiffRng rng = {seed};
  if (!a || !po_DiffCorpus_Load(argv[2], &all)) return 2;
  size_t corpus = all.len;
  po_DiffGenStats gs;
  /* the boundary cases, then random ones: enough to draw `want` from in the JSON forms */
  if (!po_DiffGen_All(&all, corpus + 5 * want, &rng, &gs)) return fprintf(stderr, "envoy_rules_native_diff: out of memory\n"), 2;
  const po_DiffCase **cases = calloc(corpus + want + 1, sizeof *cases);
  size_t n = cases ? pick(&all, corpus, want, &rng, cases) : 0;
  Obj(*objs)[kObjs] = calloc(n + 1, sizeof *objs);
  printf("%zu cases: %zu from the corpus (%s), %zu drawn from the generator's %zu\n"
         "EnvoyFilters judged as for %s, EnvoyPatchPolicies as for %s\n",
         n, corpus, argv[2], n - corpus, all.len - corpus, po_DiffSnapshot_Judged(kPo_Mesh_Istio, a),
         po_DiffSnapshot_Judged(kPo_Mesh_EnvoyGateway, a));
  if (!objs || !run(argv[1], cases, n, a, objs)) return 2;
  int rc = report(objs, n);
  free(objs);
  free(cases);
  po_Arena_Free(a);
  return rc;
}
