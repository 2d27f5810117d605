/* The generator: a breadth-first walk of the embedded schema from the four resource roots along
 * the paths Consul's PatchStruct can take (singular message fields; never a list, a map, an Any
 * or into a well-known type; each message once per resource, at its shortest path), and for
 * every field with a rule on the way, its boundary values through every path form its type allows:
 *
 *   direct / deep    PREFIX/f v          (deep: below the root, so the add creates the parents)
 *   wrapper-value    PREFIX/f/value v    (a google.protobuf.*Value field)
 *   duration-seconds PREFIX/f/seconds s  (a Duration or Timestamp field; nanos likewise)
 *   duration-object  PREFIX/f {"seconds": s, "nanos": n}
 *   parent-object    PREFIX {"f": v}     (the holder set as an object value with the one field)
 *   object-full      PREFIX {..., "f": v} (the holder as an object that sets every field it can)
 *   object-unset     PREFIX {...} without one field (what a value leaves unset)
 *   message-empty    PREFIX {}
 *
 * Object values hold only what Consul can set in one: scalars, enums by name, wrappers by their
 * scalar (PatchStruct refuses a message, a list or a map inside an object value). */
#include <stdlib.h>
#include <string.h>

#include "gen.h"

typedef struct {
  const char *resource;
  const char *prefix; /* "" at the root */
  const upb_MessageDef *m;
  size_t self; /* its index in the queue (which moves as it grows) */
} Node;

typedef struct {
  po_DiffCases *out;
  const po_Schema *s;
  upb_Arena *ua;
  po_DiffRng *rng;
  Node *nodes; /* the walk's queue */
  size_t n, cap;
  /* every settable field with a rule the walk met, with its node's index: the random phase
   * draws from them uniformly */
  struct {
    size_t node;
    const upb_FieldDef *f;
  } *targets;
  size_t nt, tcap;
  po_DiffGenStats *stats;
} Gen;

static const struct {
  const char *resource, *message;
} kRoots[] = {{"cluster", "envoy.config.cluster.v3.Cluster"},
              {"cluster-load-assignment", "envoy.config.endpoint.v3.ClusterLoadAssignment"},
              {"route", "envoy.config.route.v3.RouteConfiguration"},
              {"listener", "envoy.config.listener.v3.Listener"}};

/* Each message once per resource, at the first (shortest) path from that root. */
static bool seen(const Gen *g, const char *resource, const upb_MessageDef *m) {
  for (size_t i = 0; i < g->n; i++) {
    if (g->nodes[i].m == m && g->nodes[i].resource == resource) return true;
  }
  return false;
}

static bool enqueue(Gen *g, const char *resource, const char *prefix, const upb_MessageDef *m) {
  if (g->n == g->cap) {
    size_t cap = g->cap ? 2 * g->cap : 256;
    Node *v = realloc(g->nodes, cap * sizeof *v);
    if (!v) return false;
    g->nodes = v, g->cap = cap;
  }
  g->nodes[g->n] = (Node){resource, prefix, m, g->n};
  g->n++;
  return true;
}

/* A path may go on below f (Consul: a singular message that is not an Any). */
static bool traversable(const upb_FieldDef *f) {
  if (!upb_FieldDef_IsSubMessage(f) || upb_FieldDef_IsRepeated(f)) return false;
  return !po_Diff_IsWellKnown(upb_FieldDef_MessageSubDef(f));
}

/* f can be a key of an object value: a scalar (not bytes), an enum, or a wrapper of one. */
static bool object_child(const upb_FieldDef *f) {
  if (upb_FieldDef_IsRepeated(f)) return false;
  upb_CType ct = upb_FieldDef_CType(po_Diff_Scalar(f));
  return ct != kUpb_CType_Message && ct != kUpb_CType_Bytes;
}

static bool is_time(const upb_FieldDef *f) {
  if (!upb_FieldDef_IsSubMessage(f) || upb_FieldDef_IsRepeated(f)) return false;
  const char *n = upb_MessageDef_FullName(upb_FieldDef_MessageSubDef(f));
  return !strcmp(n, "google.protobuf.Duration") || !strcmp(n, "google.protobuf.Timestamp");
}

/* ---- fuller objects ---- */

/* The holder as an object: every field that has a rule and can be an object's key, at a value
 * its rules probably accept, and each required oneof that none of those set, by its first member
 * that can be; `over` (when not NULL) set to `over_value` instead, `skip` left out. */
static const char *full_object(Gen *g, const upb_MessageDef *m, const upb_FieldDef *over, const char *over_value,
                               const upb_FieldDef *skip) {
  po_Arena *a = g->out->a;
  po_TextBuf t = {.a = a};
  po_TextBuf_Puts(&t, "{");
  bool first = true;
  const upb_OneofDef *done[64];
  size_t nd = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < upb_MessageDef_FieldCount(m); i++) {
      const upb_FieldDef *f = upb_MessageDef_Field(m, i);
      const upb_OneofDef *o = upb_FieldDef_RealContainingOneof(f);
      bool in_done = false;
      for (size_t k = 0; o && k < nd; k++) in_done |= done[k] == o;
      po_DiffRules r;
      bool ruled = po_DiffRules_Of(g->s, f, g->ua, &r);
      /* pass 0: fields with rules (and `over`); pass 1: a member for each required oneof left unset */
      bool want = pass == 0 ? (ruled || f == over) : (o && !in_done && po_Diff_OneofRequired(g->s, o, g->ua));
      if (!want || f == skip || !object_child(f) || (o && in_done)) continue;
      const char *v = f == over ? over_value : po_DiffValues_Valid(g->s, f, g->ua, a);
      if (!v) continue;
      if (o && nd < 64) done[nd++] = o;
      po_TextBuf_Puts(&t, first ? "\"" : ",\"");
      po_TextBuf_Puts(&t, upb_FieldDef_Name(f));
      po_TextBuf_Puts(&t, "\":");
      po_TextBuf_Puts(&t, v);
      first = false;
    }
  }
  po_TextBuf_Puts(&t, "}");
  return t.oom ? NULL : t.buf;
}

/* ---- forms of one field ---- */

static const char *field_path(po_Arena *a, const Node *n, const upb_FieldDef *f, const char *tail) {
  return po_Arena_Printf(a, "%s/%s%s", n->prefix, upb_FieldDef_Name(f), tail);
}

static bool scalar_forms(Gen *g, const Node *n, const upb_FieldDef *f, const po_DiffValue *v) {
  po_DiffCases *c = g->out;
  po_Arena *a = c->a;
  bool wrapper = po_Diff_Scalar(f) != f;
  const char *direct = *n->prefix ? "deep" : "direct";
  bool ok = po_DiffCases_Add(c, n->resource, field_path(a, n, f, ""), v->json, v->kind, direct);
  if (wrapper) ok &= po_DiffCases_Add(c, n->resource, field_path(a, n, f, "/value"), v->json, v->kind, "wrapper-value");
  if (*n->prefix) {
    const char *one = po_Arena_Printf(a, "{\"%s\":%s}", upb_FieldDef_Name(f), v->json);
    ok &= po_DiffCases_Add(c, n->resource, n->prefix, one, v->kind, "parent-object");
    const char *full = full_object(g, n->m, f, v->json, NULL);
    ok &= full && po_DiffCases_Add(c, n->resource, n->prefix, full, v->kind, "object-full");
  }
  return ok;
}

/* One Duration (or Timestamp) value through the forms that can set it; `split`: also its seconds
 * alone through /seconds and its nanos alone through /nanos (two other values). */
static bool dur_forms(Gen *g, const Node *n, const upb_FieldDef *f, const po_DiffDur *x, bool split) {
  po_DiffCases *c = g->out;
  po_Arena *a = c->a;
  const char *obj = po_Arena_Printf(a, "{\"seconds\":%lld,\"nanos\":%lld}", (long long)x->seconds, (long long)x->nanos);
  bool ok = po_DiffCases_Add(c, n->resource, field_path(a, n, f, ""), obj, x->kind, "duration-object");
  if (x->nanos == 0 || split) {
    ok &= po_DiffCases_Add(c, n->resource, field_path(a, n, f, "/seconds"), po_Arena_Printf(a, "%lld", (long long)x->seconds),
                           x->kind, "duration-seconds");
  }
  if (x->seconds == 0 || split) {
    ok &= po_DiffCases_Add(c, n->resource, field_path(a, n, f, "/nanos"), po_Arena_Printf(a, "%lld", (long long)x->nanos),
                           x->kind, "duration-nanos");
  }
  return ok;
}

static bool time_forms(Gen *g, const Node *n, const upb_FieldDef *f, const po_DiffRules *r) {
  po_DiffDurs d = {0};
  if (!po_DiffDurs_Of(r, g->out->a, g->rng, 2, &d)) return false;
  bool ok = po_DiffCases_Add(g->out, n->resource, field_path(g->out->a, n, f, ""), "{}", d.v[0].kind, "message-empty");
  for (size_t i = 0; i < d.n; i++) ok &= dur_forms(g, n, f, &d.v[i], false);
  return ok;
}

static bool add_target(Gen *g, const Node *n, const upb_FieldDef *f) {
  if (g->nt == g->tcap) {
    size_t cap = g->tcap ? 2 * g->tcap : 128;
    void *v = realloc(g->targets, cap * sizeof *g->targets);
    if (!v) return false;
    g->targets = v, g->tcap = cap;
  }
  g->targets[g->nt].node = n->self;
  g->targets[g->nt++].f = f;
  return true;
}

/* Every case of one field with rules: values around its boundaries through its forms. */
static bool field_cases(Gen *g, const Node *n, const upb_FieldDef *f, size_t extra) {
  po_DiffRules r;
  if (!po_DiffRules_Of(g->s, f, g->ua, &r)) return true;
  g->stats->ruled++;
  if (!r.type) return true; /* only `message` rules: judged as unset */
  if (is_time(f) && (!strcmp(r.type, "duration") || !strcmp(r.type, "timestamp"))) {
    g->stats->settable++;
    return add_target(g, n, f) && time_forms(g, n, f, &r);
  }
  if (!object_child(f)) return true; /* a list, a map, an Any, bytes: Consul sets none of them */
  g->stats->settable++;
  if (!add_target(g, n, f)) return false;
  po_DiffValues v = {0};
  if (!po_DiffValues_Scalar(&r, po_Diff_Scalar(f), g->out->a, g->rng, extra, &v)) return false;
  bool ok = true;
  for (size_t i = 0; i < v.n; i++) ok &= scalar_forms(g, n, f, &v.v[i]);
  return ok;
}

/* The rule kinds a message's fields and oneofs carry, "+"-joined: what its whole-value cases aim at. */
static const char *kinds_of(Gen *g, const upb_MessageDef *m) {
  po_Arena *a = g->out->a;
  po_TextBuf t = {.a = a};
  for (int i = 0; i < upb_MessageDef_FieldCount(m); i++) {
    po_DiffRules r;
    if (!po_DiffRules_Of(g->s, upb_MessageDef_Field(m, i), g->ua, &r)) continue;
    const char *k = po_DiffRules_MessageRequired(&r) ? "message.required" : r.type;
    if (!k) continue;
    if (t.buf && strstr(t.buf, k)) continue;
    if (t.len) po_TextBuf_Puts(&t, "+");
    po_TextBuf_Puts(&t, k);
  }
  for (int i = 0; i < upb_MessageDef_OneofCount(m); i++) {
    if (po_Diff_OneofRequired(g->s, upb_MessageDef_Oneof(m, i), g->ua)) {
      if (t.len) po_TextBuf_Puts(&t, "+");
      po_TextBuf_Puts(&t, "oneof.required");
      break;
    }
  }
  return t.len ? t.buf : NULL;
}

/* The holder's whole-value cases: {}, the fuller object, and that object without each of its fields. */
static bool message_cases(Gen *g, const Node *n) {
  const char *kinds = kinds_of(g, n->m);
  if (!kinds || !*n->prefix) return true;
  po_DiffCases *c = g->out;
  const char *full = full_object(g, n->m, NULL, NULL, NULL);
  bool ok = full && po_DiffCases_Add(c, n->resource, n->prefix, "{}", kinds, "message-empty") &&
            po_DiffCases_Add(c, n->resource, n->prefix, full, kinds, "object-full");
  for (int i = 0; ok && i < upb_MessageDef_FieldCount(n->m); i++) {
    const upb_FieldDef *f = upb_MessageDef_Field(n->m, i);
    const char *key = po_Arena_Printf(c->a, "\"%s\":", upb_FieldDef_Name(f));
    if (!strstr(full, key)) continue;
    const char *less = full_object(g, n->m, NULL, NULL, f);
    po_DiffRules r;
    const char *kind = po_DiffRules_Of(g->s, f, g->ua, &r) && r.type ? po_Arena_Printf(c->a, "%s.unset", r.type) : "oneof.required";
    ok &= less && po_DiffCases_Add(c, n->resource, n->prefix, less, kind, "object-unset");
  }
  return ok;
}

static bool walk(Gen *g) {
  for (size_t i = 0; i < 4; i++) {
    const upb_MessageDef *m = po_Schema_FindMessage(g->s, kRoots[i].message);
    if (!m || !enqueue(g, kRoots[i].resource, "", m)) return false;
  }
  for (size_t q = 0; q < g->n; q++) {
    Node n = g->nodes[q];
    for (int i = 0; i < upb_MessageDef_FieldCount(n.m); i++) {
      const upb_FieldDef *f = upb_MessageDef_Field(n.m, i);
      if (!field_cases(g, &n, f, 2)) return false;
      const upb_MessageDef *sub = traversable(f) ? upb_FieldDef_MessageSubDef(f) : NULL;
      if (sub && !seen(g, n.resource, sub)) {
        const char *prefix = po_Arena_Printf(g->out->a, "%s/%s", n.prefix, upb_FieldDef_Name(f));
        if (!prefix || !enqueue(g, n.resource, prefix, sub)) return false;
      }
    }
    if (!message_cases(g, &n)) return false;
  }
  return true;
}

/* Seeded extras: a field drawn uniformly among the settable ones with rules, a value drawn near
 * one of its boundaries, through each form that can set it. */
static bool random_cases(Gen *g, size_t target) {
  for (size_t tries = 0; g->nt && g->out->len < target && tries < 100 * target; tries++) {
    size_t t = po_DiffRng_Below(g->rng, g->nt);
    const Node *n = &g->nodes[g->targets[t].node];
    const upb_FieldDef *f = g->targets[t].f;
    po_DiffRules r;
    if (!po_DiffRules_Of(g->s, f, g->ua, &r) || !r.type) continue;
    if (is_time(f)) {
      /* the values drawn at random come after the fixed ones */
      po_DiffDurs fixed = {0}, d = {0};
      if (!po_DiffDurs_Of(&r, g->out->a, g->rng, 0, &fixed) || !po_DiffDurs_Of(&r, g->out->a, g->rng, 1, &d)) return false;
      if (d.n > fixed.n && !dur_forms(g, n, f, &d.v[d.n - 1], true)) return false;
      continue;
    }
    po_DiffValues v = {0};
    if (!po_DiffValues_Scalar(&r, po_Diff_Scalar(f), g->out->a, g->rng, 4, &v)) return false;
    if (v.n && !scalar_forms(g, n, f, &v.v[v.n - 1 - po_DiffRng_Below(g->rng, v.n < 4 ? v.n : 4)])) return false;
  }
  return true;
}

bool po_DiffGen_All(po_DiffCases *out, size_t target, po_DiffRng *rng, po_DiffGenStats *stats) {
  *stats = (po_DiffGenStats){0};
  Gen g = {.out = out, .s = po_DiffSnapshot_Schema(), .rng = rng, .stats = stats};
  if (!g.s) return false;
  g.ua = upb_Arena_New();
  bool ok = g.ua && walk(&g);
  stats->messages = g.n;
  stats->names = ok ? po_Arena_Malloc(out->a, (g.n + 1) * sizeof *stats->names) : NULL;
  for (size_t i = 0; stats->names && i < g.n; i++) {
    const char *name = upb_MessageDef_FullName(g.nodes[i].m);
    bool dup = false;
    for (size_t k = 0; k < stats->names_len && !dup; k++) dup = !strcmp(stats->names[k], name);
    if (!dup) stats->names[stats->names_len++] = name;
  }
  stats->systematic = out->len;
  ok = ok && random_cases(&g, target);
  upb_Arena_Free(g.ua);
  free(g.nodes);
  free(g.targets);
  return ok;
}
