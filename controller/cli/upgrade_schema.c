/* The two snapshots compared at one field, from their descriptors as po_Explain gives them:
 * name, number, type, deprecation, enum values. Envoy never reuses a field number in v3, so a
 * number that has another name in the new snapshot is a rename, and a name that is gone with its
 * number is a removal. Each message is explained once per snapshot (the cache), so a run costs
 * one explanation per message it meets, not one per field. */
#include <stdarg.h>
#include <string.h>

#include "upgrade.h"

typedef struct {
  const po_EnvoyApi *api;
  const char *name;
  const po_Explanation *e; /* NULL: no such message in that snapshot */
} Entry;

struct po_UpgCache {
  po_Arena *a;
  Entry *items;
  size_t count, cap;
};

po_UpgCache *po_UpgCache_New(po_Arena *a) {
  po_UpgCache *c = po_Arena_Malloc(a, sizeof *c);
  if (c) c->a = a;
  return c;
}

static bool grow(po_UpgCache *c) {
  if (c->count < c->cap) return true;
  size_t cap = c->cap ? c->cap * 2 : 64;
  Entry *bigger = po_Arena_Malloc(c->a, cap * sizeof *bigger);
  if (!bigger) return false;
  if (c->count) memcpy(bigger, c->items, c->count * sizeof *bigger);
  c->items = bigger;
  c->cap = cap;
  return true;
}

/* The names met are few (the messages a run's patches reach: tens), so a linear search; each
 * explanation is made once. */
const po_Explanation *po_UpgCache_Message(po_UpgCache *c, const po_EnvoyApi *api, const char *full_name) {
  for (size_t i = 0; i < c->count; i++) {
    if (c->items[i].api == api && !strcmp(c->items[i].name, full_name)) return c->items[i].e;
  }
  if (!grow(c)) return NULL;
  po_Explanation *e = po_Arena_Malloc(c->a, sizeof *e);
  char *name = po_Arena_Strndup(c->a, full_name, strlen(full_name));
  if (!e || !name) return NULL;
  po_Status st;
  po_Status_Clear(&st);
  bool ok = po_Explain(&(po_ExplainOptions){.api = api}, name, c->a, e, &st) && e->message;
  c->items[c->count++] = (Entry){api, name, ok ? e : NULL};
  return ok ? e : NULL;
}

const po_ExplainField *po_Upg_Field(const po_Explanation *e, const char *name) {
  for (size_t i = 0; e && i < e->field_count; i++) {
    if (!strcmp(e->fields[i].name, name) || !strcmp(e->fields[i].json_name, name)) return &e->fields[i];
  }
  return NULL;
}

static const po_ExplainField *by_number(const po_Explanation *e, int number) {
  for (size_t i = 0; e && i < e->field_count; i++) {
    if (e->fields[i].number == number) return &e->fields[i];
  }
  return NULL;
}

const char *po_Upg_FieldMessage(const po_ExplainField *f, po_Arena *a) {
  if (f->map) {
    /* "map<string, envoy.config.core.v3.Address>": the value type, when a message */
    const char *comma = f->detail ? strstr(f->detail, ", ") : NULL;
    if (!comma || !strchr(comma + 2, '.')) return NULL;
    return po_Arena_Strndup(a, comma + 2, strlen(comma + 2) - 1);
  }
  if (!f->message) return NULL;
  const char *t = f->type;
  if (!strncmp(t, "repeated ", 9)) t += 9;
  return t;
}

static const char *api_name(const po_UpgSide *s) { return po_EnvoyApi_Version(s->api); }

/* "envoy.config.cluster.v3.Cluster.dns_refresh_rate" */
static const char *full(po_UpgCtx *c, const char *message, const char *name) {
  return po_Arena_Printf(c->a, "%s.%s", message, name);
}

bool po_Upg_CompareField(po_UpgCtx *c, const char *message, const char *name, const char *path,
                         const po_ExplainField **next_from) {
  const po_Explanation *ef = po_UpgCache_Message(c->cache, c->from->api, message);
  const po_Explanation *et = ef ? po_UpgCache_Message(c->cache, c->to->api, message) : NULL;
  return po_Upg_CompareExplained(c, message, ef, et, name, path, next_from);
}

bool po_Upg_CompareExplained(po_UpgCtx *c, const char *message, const po_Explanation *ef, const po_Explanation *et,
                             const char *name, const char *path, const po_ExplainField **next_from) {
  *next_from = NULL;
  const po_ExplainField *f = po_Upg_Field(ef, name);
  if (!f) return false; /* not a field before the upgrade either: validate's finding, not ours */
  *next_from = f;
  if (!et) {
    po_Upg_Add(c, PO_UPG_REMOVED, false, path, "%s: the message %s is not in %s (it is in %s): Envoy refuses it",
               name, message, api_name(c->to), api_name(c->from));
    return false;
  }
  const po_ExplainField *t = po_Upg_Field(et, f->name);
  if (!t) {
    const po_ExplainField *n = by_number(et, f->number);
    if (n) {
      po_Upg_Add(c, PO_UPG_RENAMED, false, path, "%s (field %d of %s) is named %s in %s: write %s", f->name, f->number,
                 message, n->name, api_name(c->to), n->name);
    } else {
      po_Upg_Add(c, PO_UPG_REMOVED, false, path, "%s is not a field of %s in %s (field %d in %s): Envoy refuses it",
                 f->name, message, api_name(c->to), f->number, api_name(c->from));
    }
    return false;
  }
  if (t->number != f->number || strcmp(t->type, f->type) != 0) {
    po_Upg_Add(c, PO_UPG_RETYPED, false, path, "%s is %s (field %d) in %s, %s (field %d) in %s: a value of the old type is refused",
               full(c, message, f->name), t->type, t->number, api_name(c->to), f->type, f->number, api_name(c->from));
    return false;
  }
  if (t->deprecated && !f->deprecated) {
    po_Upg_Add(c, PO_UPG_DEPRECATED, true, path, "%s is deprecated in %s (not in %s): Envoy still reads it, and will drop it",
               full(c, message, f->name), api_name(c->to), api_name(c->from));
  }
  return !c->oom;
}

/* "enum envoy.config.cluster.v3.Cluster.LbPolicy: ROUND_ROBIN, LEAST_REQUEST" holds `v`. */
static bool enum_has(const char *detail, const char *v) {
  const char *p = detail ? strchr(detail, ':') : NULL;
  size_t n = strlen(v);
  while (p && *p) {
    p += strspn(p, ":, ");
    size_t len = strcspn(p, ",");
    if (len == n && !strncmp(p, v, n)) return true;
    p += len;
  }
  return false;
}

bool po_Upg_CompareEnum(po_UpgCtx *c, const po_ExplainField *f, const char *value, const char *path) {
  const po_Explanation *et = po_UpgCache_Message(c->cache, c->to->api, f->parent);
  return po_Upg_CompareEnumIn(c, f, po_Upg_Field(et, f->name), value, path);
}

bool po_Upg_CompareEnumIn(po_UpgCtx *c, const po_ExplainField *f, const po_ExplainField *t, const char *value,
                          const char *path) {
  if (!f->detail || strncmp(f->detail, "enum ", 5) != 0 || !enum_has(f->detail, value)) return true;
  if (!t || enum_has(t->detail, value)) return true;
  return po_Upg_Add(c, PO_UPG_ENUM, false, path, "%s: the value %s is not in %s's %s", full(c, f->parent, f->name),
                    value, api_name(c->to), t->detail);
}
