/* po_Message: an Envoy message and the arena it lives in, for callers that see no upb. */
#include <string.h>

#include "internal.h"

static const upb_MessageDef *lookup(const po_EnvoyApi *api, const char *full_name, const po_Schema **s, po_Arena *a,
                                    po_Status *st) {
  *s = po_EnvoyApi_Schema_(api, a, st);
  if (!*s) return NULL;
  const upb_MessageDef *m = po_Schema_FindMessage(*s, full_name);
  if (!m) {
    po_Status_Set(st, kPo_Status_NotFound, "unknown message type '%s': not in the Envoy v3 schema (%s)",
                  full_name ? full_name : "", po_EnvoyApi_Name(api));
  }
  return m;
}

static po_Message *wrap(const po_Schema *s, const upb_MessageDef *def, upb_Message *msg, po_Arena *a, po_Status *st) {
  po_Message *m = po_Arena_Malloc(a, sizeof *m);
  if (!m) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory"), NULL;
  *m = (po_Message){.def = def, .msg = msg, .arena = a, .schema = s};
  return m;
}

po_Message *po_Message_ParseJson(const po_EnvoyApi *api, const char *full_name, const char *json, size_t len,
                                 po_Arena *a, po_Status *st) {
  const po_Schema *s;
  const upb_MessageDef *def = lookup(api, full_name, &s, a, st);
  if (!def) return NULL;
  upb_Message *msg = po_Json_Decode(s, def, json, len, po_Arena_Upb(a), st);
  return msg ? wrap(s, def, msg, a, st) : NULL;
}

po_Message *po_Message_New(const po_EnvoyApi *api, const char *full_name, po_Arena *a, po_Status *st) {
  const po_Schema *s;
  const upb_MessageDef *def = lookup(api, full_name, &s, a, st);
  if (!def) return NULL;
  upb_Message *msg = upb_Message_New(def, po_Arena_Upb(a));
  if (!msg) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory"), NULL;
  return wrap(s, def, msg, a, st);
}

char *po_Message_ToJson(const po_Message *m, po_Arena *a, size_t *len, po_Status *st) {
  return po_Json_Encode(m->schema, m->def, m->msg, po_Arena_Upb(a), len, st);
}

const po_EnvoyApi *po_Message_Api(const po_Message *m) { return po_EnvoyApi_OfSchema_(m->schema); }

const char *po_Message_FullName(const po_Message *m) { return upb_MessageDef_FullName(m->def); }

po_Message *po_Message_InlineLoadAssignment(po_Message *m, po_Arena *a, const char **cluster_name) {
  if (!m || strcmp(upb_MessageDef_FullName(m->def), "envoy.config.cluster.v3.Cluster") != 0) return NULL;
  const upb_FieldDef *f = upb_MessageDef_FindFieldByName(m->def, "load_assignment");
  if (!f || !upb_FieldDef_IsSubMessage(f) || !upb_Message_Has(m->msg, f)) return NULL;
  upb_Message *sub = upb_Message_Mutable(m->msg, f, po_Arena_Upb(m->arena)).msg;
  po_Message *pm = sub ? po_Arena_Malloc(a, sizeof *pm) : NULL;
  if (!pm) return NULL;
  *pm = (po_Message){upb_FieldDef_MessageSubDef(f), sub, m->arena, m->schema};
  const upb_FieldDef *cn = upb_MessageDef_FindFieldByName(pm->def, "cluster_name");
  upb_StringView v = cn ? upb_Message_Get(sub, cn).str_val : (upb_StringView){"", 0};
  *cluster_name = po_Arena_Strndup(a, v.data ? v.data : "", v.size);
  return *cluster_name ? pm : NULL;
}
