/* envoy_rules_diff [--api VERSION] ORACLE CORPUS: the differential test of issue 22, with one
 * embedded snapshot (--api; the default when absent) and the oracle built from the same
 * go-control-plane envoy version (issue 24). The cases are generated from that snapshot's schema.
 * Every case (the corpus first, then the generator's) is judged by us through every entry point
 * that admits a patch with that snapshot (verdict.c), applied to an empty resource with Consul's PatchStruct, and judged by Envoy's own
 * validators (the oracle). Compared on the fields the patch answers for (po_Diff_Affects: the
 * field it sets, what its value holds, and the wrapper or Duration on its path; an empty resource
 * breaks rules of its own, such as a Cluster's name, and a parent the patch creates breaks rules
 * of fields beside the path, which only the live resource decides and `preview` judges).
 *
 * Fails on any hole (we admit what Envoy refuses), false denial (we refuse what Envoy accepts),
 * disagreement between our entry points, or case the oracle could not read.
 *
 *   PO_ORACLE_SEED=N          the seed (default: from the clock; printed either way)
 *   PO_ORACLE_CASES=N         generated cases at least (default 10000)
 *   PO_ORACLE_REPORT=FILE     every disagreement, grouped by class and rule kind
 *   PO_ORACLE_NEW_CORPUS=FILE the disagreements as corpus lines, to add to the corpus file
 *   PO_ORACLE_INPUT=FILE      what the oracle was given, a case a line (to ask it by hand) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diff.h"
#include "set_aside.h"

enum { kAllowed = 0, kDenied, kHole, kFalseDenial, kConsul, kSetAside, kOracleError, kClassCount };
static const char *const kClassNames[] = {"agree: admitted", "agree: refused", "hole", "false denial",
                                          "refused by PatchStruct (Consul's; no resource to judge)", "set aside",
                                          "oracle error"};

typedef struct {
  const po_DiffCase *c;
  po_DiffVerdict v;
  const char *message;    /* the resource's message */
  const char *bytes;      /* the patched resource, or NULL (PatchStruct refused) */
  const char *apply_why;
  bool paths_disagree;
  int cls;
  const char *envoy;      /* the violations the patch answers for, "path: reason; ..." */
  const char *envoy_kind; /* the first one's kind */
  const char *set_aside;  /* why, for kSetAside */
} Result;

/* ---- tallies ---- */

typedef struct {
  const char *key;
  size_t n[kClassCount];
  size_t paths;
} Row;

typedef struct {
  Row *rows;
  size_t n, cap;
} Table;

static Row *row(Table *t, const char *key) {
  for (size_t i = 0; i < t->n; i++) {
    if (!strcmp(t->rows[i].key, key)) return &t->rows[i];
  }
  if (t->n == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 64;
    t->rows = realloc(t->rows, t->cap * sizeof *t->rows);
    if (!t->rows) abort();
  }
  t->rows[t->n] = (Row){.key = key};
  return &t->rows[t->n++];
}

static void tally(Table *t, const char *key, const Result *r) {
  Row *x = row(t, key);
  x->n[r->cls]++;
  x->paths += r->paths_disagree;
}

/* Each of the "+"-joined kinds a case aims at. */
static void tally_kinds(Table *t, const Result *r, po_Arena *a) {
  const char *k = r->c->kind;
  while (*k) {
    const char *end = strchr(k, '+');
    size_t len = end ? (size_t)(end - k) : strlen(k);
    tally(t, po_Arena_Strndup(a, k, len), r);
    k += len + (end != NULL);
  }
}

static int by_key(const void *x, const void *y) { return strcmp(((const Row *)x)->key, ((const Row *)y)->key); }

static void print_table(FILE *f, const char *title, Table *t) {
  if (t->n) qsort(t->rows, t->n, sizeof *t->rows, by_key);
  fprintf(f, "\n%s\n  %-44s %7s %7s %7s %7s %7s %7s %6s\n", title, "", "cases", "allowed", "refused", "holes",
          "falseden", "consul", "paths");
  for (size_t i = 0; i < t->n; i++) {
    const Row *x = &t->rows[i];
    size_t total = 0;
    for (int c = 0; c < kClassCount; c++) total += x->n[c];
    fprintf(f, "  %-44s %7zu %7zu %7zu %7zu %7zu %7zu %6zu\n", x->key, total, x->n[kAllowed], x->n[kDenied],
            x->n[kHole], x->n[kFalseDenial], x->n[kConsul], x->paths);
  }
}

/* ---- judging ---- */

static void describe_envoy(Result *r, const po_DiffJudgement *j, po_Arena *a) {
  po_TextBuf t = {.a = a};
  for (size_t i = 0; i < j->n; i++) {
    if (!po_Diff_Affects(r->c->path, j->v[i].path)) continue;
    if (!r->envoy_kind) r->envoy_kind = po_Diff_ViolationKind(r->message, &j->v[i], a);
    if (t.len) po_TextBuf_Puts(&t, "; ");
    po_TextBuf_Puts(&t, j->v[i].path);
    po_TextBuf_Puts(&t, ": ");
    po_TextBuf_Puts(&t, j->v[i].reason);
  }
  r->envoy = t.buf;
}

static void classify(Result *r, const po_DiffJudgement *j, po_Arena *a) {
  bool ours_ok = r->v.ok[kPo_DiffPath_Args];
  for (int p = 1; p < kPo_DiffPath_Count; p++) {
    bool mesh_path = p == kPo_DiffPath_HookMesh || p == kPo_DiffPath_FileMesh;
    r->paths_disagree |= r->v.used[p] && !(mesh_path && r->v.mesh_refused) && r->v.ok[p] != ours_ok;
  }
  /* Consul's verdict is PatchStruct's: only a patch it refuses has no resource to judge. Any other
   * refusal, whatever its kind, is compared (a rule reported under another kind is no excuse). */
  if (!r->bytes) {
    r->cls = kConsul;
  } else if (j->error) {
    r->cls = kOracleError;
    r->envoy = j->error;
  } else {
    describe_envoy(r, j, a);
    bool envoy_ok = r->envoy == NULL;
    r->cls = ours_ok == envoy_ok ? (ours_ok ? kAllowed : kDenied) : ours_ok ? kHole : kFalseDenial;
    r->set_aside = po_Diff_SetAside(r->c, !envoy_ok);
    if (r->set_aside) r->cls = kSetAside;
  }
}

static void print_case(FILE *f, const Result *r) {
  fprintf(f, "  %s %s %s  [%s, %s]%s\n", r->c->resource, r->c->path, r->c->value, r->c->form, r->c->kind,
          r->c->corpus ? " (corpus)" : "");
  fprintf(f, "      ours: %s", r->v.ok[kPo_DiffPath_Args] ? "admitted" : "refused");
  if (r->v.why) fprintf(f, " (%.300s)", r->v.why);
  if (r->paths_disagree) {
    fprintf(f, "; our entry points disagree:");
    for (int p = 0; p < kPo_DiffPath_Count; p++) {
      if (r->v.used[p]) fprintf(f, " %s %s;", po_DiffPath_Name(p), r->v.ok[p] ? "admits" : "refuses");
    }
  }
  fprintf(f, "\n      envoy: %s\n", r->cls == kConsul ? (r->apply_why ? r->apply_why : "-")
                                    : r->envoy       ? r->envoy
                                                     : "accepts");
  if (r->set_aside) fprintf(f, "      set aside: %s\n", r->set_aside);
}

/* Every disagreement, grouped by class and by the kind of Envoy's violation (or the case's aim). */
static void print_disagreements(FILE *f, Result *res, size_t n, size_t limit) {
  static const int kShown[] = {kHole, kFalseDenial, kOracleError, kConsul, kSetAside};
  for (size_t k = 0; k < 5; k++) {
    Table kinds = {0};
    for (size_t i = 0; i < n; i++) {
      if (res[i].cls == kShown[k]) row(&kinds, res[i].envoy_kind ? res[i].envoy_kind : res[i].c->kind)->n[0]++;
    }
    if (kinds.n) qsort(kinds.rows, kinds.n, sizeof *kinds.rows, by_key);
    for (size_t g = 0; g < kinds.n; g++) {
      fprintf(f, "\n== %s: %s (%zu)\n", kClassNames[kShown[k]], kinds.rows[g].key, kinds.rows[g].n[0]);
      size_t shown = 0;
      for (size_t i = 0; i < n && shown < limit; i++) {
        const char *key = res[i].envoy_kind ? res[i].envoy_kind : res[i].c->kind;
        if (res[i].cls == kShown[k] && !strcmp(key, kinds.rows[g].key)) print_case(f, &res[i]), shown++;
      }
    }
    free(kinds.rows);
  }
  size_t shown = 0;
  for (size_t i = 0; i < n; i++) {
    if (!res[i].paths_disagree) continue;
    if (!shown) fprintf(f, "\n== our entry points disagree\n");
    if (shown++ < limit) print_case(f, &res[i]);
  }
}

/* ---- the run ---- */

static bool judge_all(const char *oracle, Result *res, size_t n, po_Arena *a) {
  const char **lines = calloc(n + 1, sizeof *lines);
  size_t *index = calloc(n + 1, sizeof *index), m = 0;
  if (!lines || !index) return false;
  for (size_t i = 0; i < n; i++) {
    if (!res[i].bytes) continue;
    index[i] = m;
    lines[m++] = po_Arena_Printf(a, "{\"type\":\"%s\",\"binary\":\"%s\"}", res[i].message, res[i].bytes);
  }
  const char *keep = getenv("PO_ORACLE_INPUT");
  FILE *kf = keep && *keep ? fopen(keep, "w") : NULL;
  for (size_t i = 0; kf && i < m; i++) fprintf(kf, "%s\n", lines[i]);
  if (kf) fclose(kf);
  po_DiffJudgement *j = po_Arena_Malloc(a, (m + 1) * sizeof *j);
  bool ok = j && po_DiffOracle_Run(oracle, lines, m, a, j);
  static const po_DiffJudgement kNone = {0};
  for (size_t i = 0; ok && i < n; i++) classify(&res[i], res[i].bytes ? &j[index[i]] : &kNone, a);
  free(lines);
  free(index);
  return ok;
}

static bool ours_all(const po_DiffCases *cases, Result *res, po_Arena *a) {
  for (size_t i = 0; i < cases->len; i++) {
    Result *r = &res[i];
    r->c = &cases->items[i];
    if (!po_DiffVerdict_Of(r->c, a, &r->v)) return false;
    r->bytes = po_Diff_Apply(r->c, a, &r->message, &r->apply_why);
  }
  return true;
}

static void write_new_corpus(const char *file, const Result *res, size_t n) {
  FILE *f = file ? fopen(file, "w") : NULL;
  if (!f) return;
  for (size_t i = 0; i < n; i++) {
    bool bad = res[i].cls == kHole || res[i].cls == kFalseDenial || res[i].paths_disagree;
    if (bad && !res[i].c->corpus) po_DiffCorpus_Write(f, res[i].c);
  }
  fclose(f);
}

/* The mesh target's own refusals, by the start of their text (the patch's path and value left out
 * where the text names them after a colon). */
static void print_mesh_reasons(const Result *res, size_t n, po_Arena *a) {
  Table reasons = {0};
  for (size_t i = 0; i < n; i++) {
    const char *why = res[i].v.mesh_refused ? res[i].v.mesh_why : NULL;
    if (!why) continue;
    const char *colon = strstr(why, ": ");
    if (colon && !strncmp(why, "not expressible", 15)) colon = strstr(colon + 2, ": ") ? strstr(colon + 2, ": ") : colon;
    size_t len = colon && colon - why < 160 ? (size_t)(colon - why) : strlen(why) < 160 ? strlen(why) : 160;
    row(&reasons, po_Arena_Strndup(a, why, len))->n[0]++;
  }
  if (reasons.n) printf("\nrefused by the mesh target's own rules (not Envoy's; not compared), by reason:\n");
  for (size_t i = 0; i < reasons.n; i++) printf("  %6zu  %s\n", reasons.rows[i].n[0], reasons.rows[i].key);
  free(reasons.rows);
}

static int report(const Result *res, size_t n, po_Arena *a) {
  Table forms = {0}, kinds = {0}, envoy = {0}, resources = {0};
  size_t cls[kClassCount] = {0}, paths = 0, mesh = 0;
  for (size_t i = 0; i < n; i++) {
    tally(&forms, res[i].c->form, &res[i]);
    tally(&resources, res[i].c->resource, &res[i]);
    tally_kinds(&kinds, &res[i], a);
    if (res[i].envoy_kind) tally(&envoy, res[i].envoy_kind, &res[i]);
    cls[res[i].cls]++;
    paths += res[i].paths_disagree;
    mesh += res[i].v.mesh_refused;
  }
  print_table(stdout, "by path form", &forms);
  print_table(stdout, "by resource", &resources);
  print_table(stdout, "by the rule kind a case aims at", &kinds);
  print_table(stdout, "by the kind of Envoy's violation (cases Envoy refuses)", &envoy);
  const char *file = getenv("PO_ORACLE_REPORT");
  FILE *f = file && *file ? fopen(file, "w") : NULL;
  if (f) {
    fprintf(f, "envoy_rules_diff: %zu holes, %zu false denials, %zu entry-point disagreements, %zu oracle errors\n",
            cls[kHole], cls[kFalseDenial], paths, cls[kOracleError]);
    print_table(f, "by the kind of Envoy's violation", &envoy);
    print_disagreements(f, (Result *)res, n, (size_t)-1);
    fclose(f);
  }
  print_disagreements(stdout, (Result *)res, n, 5);
  print_mesh_reasons(res, n, a);
  write_new_corpus(getenv("PO_ORACLE_NEW_CORPUS"), res, n);
  printf("\nresult: %zu cases: %zu admitted and %zu refused by both, %zu holes, %zu false denials, %zu refused by "
         "PatchStruct, %zu set aside, %zu oracle errors; %zu where our entry points disagree; %zu refused by the mesh "
         "target's own rules (not compared)\n",
         n, cls[kAllowed], cls[kDenied], cls[kHole], cls[kFalseDenial], cls[kConsul], cls[kSetAside], cls[kOracleError], paths,
         mesh);
  free(forms.rows), free(kinds.rows), free(envoy.rows), free(resources.rows);
  return cls[kHole] || cls[kFalseDenial] || cls[kOracleError] || paths ? 1 : 0;
}

int main(int argc, char **argv) {
  const char *api = NULL;
  if (argc == 5 && !strcmp(argv[1], "--api")) api = argv[2], argv += 2, argc -= 2;
  if (argc != 3) {
    fprintf(stderr, "usage: envoy_rules_diff [--api VERSION] ORACLE CORPUS\n");
    return 2;
  }
  if (!po_DiffSnapshot_Use(api)) return 2;
  const char *seed_env = getenv("PO_ORACLE_SEED"), *cases_env = getenv("PO_ORACLE_CASES");
  uint64_t seed = seed_env && *seed_env ? strtoull(seed_env, NULL, 10) : (uint64_t)time(NULL);
  size_t target = cases_env && *cases_env ? strtoull(cases_env, NULL, 10) : 10000;
  printf("envoy_rules_diff: snapshot %s, seed %llu (PO_ORACLE_SEED=%llu reruns these cases)\n",
         po_DiffSnapshot_Version(), (unsigned long long)seed, (unsigned long long)seed);
  po_Arena *a = po_Arena_New();
  po_DiffCases cases = {.a = a};
  po_DiffRng rng = {seed};
  if (!a || !po_DiffCorpus_Load(argv[2], &cases)) return 2;
  size_t corpus = cases.len;
  po_DiffGenStats gs;
  if (!po_DiffGen_All(&cases, corpus + target, &rng, &gs)) return fprintf(stderr, "envoy_rules_diff: out of memory\n"), 2;
  printf("%zu cases: %zu from the corpus (%s), %zu generated (%zu on and around every boundary, %zu drawn at random)\n"
         "the walk: %zu messages reached by Consul paths from the four roots, %zu fields with rules, %zu of them settable "
         "by a patch (the rest, lists, maps, Anys, bytes and messages, judged as a value leaves them unset)\n",
         cases.len, corpus, argv[2], cases.len - corpus, gs.systematic - corpus, cases.len - gs.systematic, gs.messages,
         gs.ruled, gs.settable);
  po_Mesh mesh;
  bool meshed = po_DiffVerdict_Mesh(&mesh);
  printf("our verdicts: the Constructor given snapshot %s; the ServiceDefaults and the PropertyOverride as for %s; "
         "%s%s\n",
         po_DiffSnapshot_Version(), po_DiffSnapshot_Judged(kPo_Mesh_Consul, a),
         meshed ? "the PropertyOverride of a target of " : "no Istio or Envoy Gateway release is judged with it",
         meshed ? po_DiffSnapshot_Judged(mesh, a) : "");
  fflush(stdout);
  Result *res = calloc(cases.len + 1, sizeof *res);
  if (!res || !ours_all(&cases, res, a) || !judge_all(argv[1], res, cases.len, a)) return 2;
  /* the versions' differences on what the walk reached, explained by set_aside.c or a failure */
  int rc = po_DiffVersion_Check(argv[1], gs.names, gs.names_len, a) ? 1 : 0;
  rc |= report(res, cases.len, a);
  free(res);
  po_Arena_Free(a);
  return rc;
}
