/* A PropertyOverride compiled once per generation (compiled.h). */
#include "compiled.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/base/json.h"
#include "po/meshes/consul_check.h"
#include "po/meshes/mesh.h"
#include "status.h"

json_object *po_Json_Parse(const char *text, size_t len) {
  json_tokener *t = text ? json_tokener_new() : NULL;
  json_object *o = t && len <= INT32_MAX ? json_tokener_parse_ex(t, text, (int)len) : NULL;
  if (t && json_tokener_get_error(t) != json_tokener_success) {
    json_object_put(o);
    o = NULL;
  }
  if (t) json_tokener_free(t); /* json-c's dereferences a NULL tokener (one that could not be made) */
  return o;
}

/* ---- entries ---- */

bool po_CompiledEntry_KeyOf(const json_object *obj, po_CompileWhich which, int64_t *generation, po_JsonHash *hash) {
  if (which == kPo_CompileWhich_Current) {
    json_object *spec = po_Json_Get(obj, "spec");
    *generation = json_object_get_int64(po_Json_Get(po_Json_Get(obj, "metadata"), "generation"));
    *hash = po_Json_Hash(spec);
    return true;
  }
  json_object *rec = po_Json_Get(po_Json_Get(obj, "status"), "lastValid"), *spec = po_Json_Get(rec, "spec"), *g = po_Json_Get(rec, "generation");
  if (!spec || !json_object_is_type(spec, json_type_object) || !g || !json_object_is_type(g, json_type_int)) return false;
  *generation = json_object_get_int64(g);
  *hash = po_Json_Hash(spec);
  return true;
}

static json_object *copy(const json_object *o) {
  json_object *c = NULL;
  return o && json_object_deep_copy((json_object *)o, &c, NULL) == 0 ? c : NULL;
}

/* The record as a PropertyOverride of its own: the object's name and namespace, the record's
 * generation and spec. Deep copies only: `obj` may be shared between threads, and json-c's
 * reference counts are not atomic. */
static json_object *record_object(const json_object *obj, int64_t generation, bool *oom) {
  json_object *meta = po_Json_Get(obj, "metadata"), *spec = copy(po_Json_Get(po_Json_Get(po_Json_Get(obj, "status"), "lastValid"), "spec"));
  json_object *syn = json_object_new_object(), *m = json_object_new_object();
  json_object *name = copy(po_Json_Get(meta, "name")), *ns = copy(po_Json_Get(meta, "namespace"));
  json_object *gen = json_object_new_int64(generation);
  if (!spec || !syn || !m || !gen || (po_Json_Get(meta, "name") && !name) || (po_Json_Get(meta, "namespace") && !ns)) {
    json_object_put(spec), json_object_put(syn), json_object_put(m), json_object_put(name), json_object_put(ns);
    json_object_put(gen);
    *oom = true;
    return NULL;
  }
  /* Each member checked: a record short of its spec or generation would be compiled as the one
   * last valid. po_Json_Put releases what it cannot add; what the chain did not reach is released
   * below. */
  bool ok = po_Json_Put(syn, "metadata", m); /* m is syn's now, or released */
  if (ok && name) ok = po_Json_Put(m, "name", name), name = NULL;
  if (ok && ns) ok = po_Json_Put(m, "namespace", ns), ns = NULL;
  if (ok) ok = po_Json_Put(m, "generation", gen), gen = NULL;
  if (ok) ok = po_Json_Put(syn, "spec", spec), spec = NULL;
  if (!ok) {
    json_object_put(name), json_object_put(ns), json_object_put(gen), json_object_put(spec), json_object_put(syn);
    *oom = true;
    return NULL;
  }
  return syn;
}

/* The Deprecated condition's message (compiled.h): the fields the compile warned deprecated in
 * the snapshot it judged by, in patch order, bounded to fit the condition. false only when out of
 * memory. */
static bool deprecated(po_CompiledEntry *e, po_Arena *a) {
  char list[sizeof ((po_Condition *)0)->message - 512];
  size_t n = 0, shown = 0, len = 0;
  list[0] = '\0';
  for (size_t i = 0; i < po_Diagnostics_Count(e->c.diags); i++) {
    const po_Diagnostic *x = po_Diagnostics_At(e->c.diags, i);
    if (x->kind != kPo_DiagKind_Deprecated) continue;
    n++;
    /* whole lines while they fit, then only counted: the message stays within the condition's */
    int k = snprintf(list + len, sizeof list - len, "\npatches[%d]: %s", x->patch_index, x->message);
    if (k < 0 || (size_t)k >= sizeof list - len) {
      list[len] = '\0';
      continue;
    }
    len += (size_t)k;
    shown++;
  }
  if (!n) return true;
  const char *more = shown < n ? po_Arena_Printf(a, "\n... and %zu more", n - shown) : "";
  if (!more) return false;
  e->deprecated = po_Arena_Printf(a, "%zu field%s set here %s deprecated (%s); the patches still apply, but a later "
                                     "release may remove %s:%s%s",
                                  n, n == 1 ? "" : "s", n == 1 ? "is" : "are", e->c.judged_by ? e->c.judged_by : "",
                                  n == 1 ? "it" : "them", list, more);
  return e->deprecated != NULL;
}

/* What is written of an accepted entry: another mesh's (Istio) objects are built from the IR when
 * written; Consul's are the arguments, kept as compact text (made here from c.consul_arguments,
 * which the compile made in a scratch arena: see po_TargetOptions.arguments_arena). false only
 * when out of memory. */
static bool arguments(po_CompiledEntry *e, po_Arena *a) {
  if (!e->c.consul_arguments) {
    e->patch_count = e->c.args->patch_count;
    return true;
  }
  json_object *args = po_Value_ToJsonC(e->c.consul_arguments);
  size_t len = 0;
  const char *text = args ? json_object_to_json_string_length(args, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len) : NULL;
  e->arguments = text ? po_Arena_Strndup(a, text, len) : NULL;
  e->arguments_len = len;
  e->patch_count = args ? po_ConsulEntry_PatchCount(args) : 0;
  e->arguments_hash = po_Json_Hash(args);
  json_object_put(args);
  return e->arguments != NULL;
}

po_CompiledEntry *po_CompiledEntry_Make(const json_object *obj, po_CompileWhich which, const char *uid, int64_t generation,
                                        po_JsonHash hash, const po_TargetOptions *opts, po_ArenaFit *fit, bool *oom) {
  *oom = false;
  json_object *syn = NULL;
  if (which == kPo_CompileWhich_Record && !(syn = record_object(obj, generation, oom))) return NULL;
  const json_object *src = syn ? syn : obj;
  po_CompiledEntry *e = calloc(1, sizeof *e);
  po_Arena *a = po_Arena_NewFitted(fit), *scratch = po_Arena_New();
  po_TargetOptions o = opts ? *opts : (po_TargetOptions){0};
  o.arguments_arena = scratch; /* the Consul arguments: read once, below, then freed */
  o.spec_arena = scratch;      /* the spec's value tree: what the compiled form references is copied out */
  char *u = strdup(uid ? uid : "");
  po_CompileOutcome got = e && a && scratch && u ? po_CompiledOverride_FromObject(src, &o, a, &e->c) : kPo_CompileOutcome_NoMemory;
  if (got == kPo_CompileOutcome_NoMemory) goto oom;
  if (got == kPo_CompileOutcome_Refused) {
    /* Kept for the whole generation, so a verdict is confirmed before it is: an allocation that
     * failed deep in the engine can read as an error in the spec, and a spec taken for invalid
     * would keep its previous generation, or nothing, live. A second compile that accepts it
     * wins; two refusals are the spec's. Only invalid specs pay, once per generation. */
    po_Arena *again = po_Arena_New();
    po_CompiledOverride c2;
    if (again && po_CompiledOverride_FromObject(src, &o, again, &c2) == kPo_CompileOutcome_Accepted) {
      po_Arena_Free(a);
      a = again;
      e->c = c2;
    } else {
      po_Arena_Free(again);
    }
  }
  atomic_init(&e->refs, 1);
  e->arena = a;
  e->uid = u;
  e->generation = generation;
  e->hash = hash;
  e->record = which == kPo_CompileWhich_Record;
  char key[600];
  po_Reconcile_OverrideKey(src, key, sizeof key);
  if (!(e->target_key = po_Arena_Printf(a, "%s", key))) goto oom;
  if (e->c.accepted && !arguments(e, a)) goto oom;
  e->c.consul_arguments = NULL; /* in scratch, freed below: the text is `arguments` */
  e->c.options.arguments_arena = NULL;
  e->c.options.spec_arena = NULL;
  if (e->c.accepted && !deprecated(e, a)) goto oom;
  if (!e->c.accepted) {
    /* The Accepted=False message, made once: bounded to fit the condition with its prefix. */
    size_t errors = po_Diagnostics_ErrorCount(e->c.diags);
    const char *d = po_CompiledOverride_Describe(&e->c, false, false, sizeof ((po_Condition *)0)->message - 128, a);
    const char *by = e->c.judged_by ? e->c.judged_by : "";
    e->errors = po_Arena_Printf(a, "%zu error%s: %s%s%s", errors, errors == 1 ? "" : "s", d ? d : "", *by ? "\n" : "", by);
    if (!e->errors) goto oom;
  }
  po_ArenaFit_Learn(fit, a);
  po_Arena_Free(scratch);
  json_object_put(syn);
  return e;
oom:
  json_object_put(syn);
  free(u);
  po_Arena_Free(a);
  po_Arena_Free(scratch);
  free(e);
  *oom = true;
  return NULL;
}

const po_CompiledEntry *po_CompiledEntry_Ref(const po_CompiledEntry *e) {
  if (e) atomic_fetch_add(&((po_CompiledEntry *)e)->refs, 1);
  return e;
}

void po_CompiledEntry_Release(const po_CompiledEntry *ce) {
  po_CompiledEntry *e = (po_CompiledEntry *)ce;
  if (!e || atomic_fetch_sub(&e->refs, 1) != 1) return;
  free(e->uid);
  po_Arena_Free(e->arena);
  free(e);
}
