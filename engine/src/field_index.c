/* What an unknown field's error needs of its message, derived once per message and kept by the
 * schema (po_Schema_SetMessageExtra): Consul's field list as it prints it without Debug
 * ("available <FullName> fields:\n", the first ten names, the closing sentence) and, per field,
 * what the did-you-mean search (hint.c) compares: the classes of the characters of its name, by
 * which it rules candidates out, and its JSON name. An unknown field then costs a copy of the list and a search over ready data,
 * not a walk of upb's definitions (whose field names are found with a strrchr) and a rebuild of
 * the text each time: issue 25, where the did-you-mean compile was 2.6x Consul's PatchStruct.
 * Built on the first unknown field in a message, in one malloc'd block the schema frees; two
 * threads building it at once both succeed and the loser frees its copy. */
#include <stdlib.h>
#include <string.h>

#include "compiled.h"

static const char kMore[] = "First 10 fields for this message included, configure with `Debug = true` to print all.";

/* Field i's name: from the schema's table (its length kept) when there is one, else from upb. */
static const char *field_name(const po_FieldInfo *infos, const upb_MessageDef *m, int i, size_t *len) {
  if (infos) {
    *len = infos[i].name_len;
    return infos[i].name;
  }
  const char *n = upb_FieldDef_Name(upb_MessageDef_Field(m, i));
  *len = strlen(n);
  return n;
}

/* Consul's field list into `out` (NUL-terminated; NULL: only measured); its length. */
static size_t write_list(const po_FieldInfo *infos, const upb_MessageDef *m, bool debug, char *out) {
  int n = upb_MessageDef_FieldCount(m), print = !debug && n > 10 ? 10 : n;
  const char *full = upb_MessageDef_FullName(m);
  size_t fl = strlen(full), len = 19 + fl, nl;
  if (out) {
    memcpy(out, "available ", 10);
    memcpy(out + 10, full, fl);
    memcpy(out + 10 + fl, " fields:\n", 9);
  }
  for (int i = 0; i < print; i++) {
    const char *name = field_name(infos, m, i, &nl);
    if (out) {
      memcpy(out + len, name, nl);
      out[len + nl] = '\n';
    }
    len += nl + 1;
  }
  if (print < n) {
    if (out) memcpy(out + len, kMore, sizeof kMore - 1);
    len += sizeof kMore - 1;
  }
  if (out) out[len] = '\0';
  return len;
}

const po_FieldIndex *po_FieldIndex_Get(const po_Schema *s, const upb_MessageDef *m) {
  if (!s || !m) return NULL;
  const po_FieldIndex *x = po_Schema_MessageExtra(s, m);
  if (x) return x;
  int n = 0;
  const po_FieldInfo *infos = po_Schema_Fields(s, m, &n);
  if (!infos) return NULL;
  size_t ll = write_list(infos, m, false, NULL);
  po_FieldIndex *b = malloc(sizeof *b + (size_t)n * sizeof b->fields[0] + ll + 1);
  if (!b) return NULL; /* the callers then work from upb's definitions */
  b->infos = infos;
  b->count = n;
  for (int i = 0; i < n; i++) {
    uint64_t k = 0;
    for (uint32_t j = 0; j < infos[i].name_len; j++) k |= UINT64_C(1) << ((unsigned char)infos[i].name[j] & 63);
    b->fields[i].classes = k;
    b->fields[i].json = upb_FieldDef_JsonName(infos[i].def);
    b->fields[i].json_len = strlen(b->fields[i].json);
  }
  char *list = (char *)&b->fields[n];
  b->list_len = write_list(infos, m, false, list);
  b->list = list;
  const po_FieldIndex *won = po_Schema_SetMessageExtra(s, m, b);
  if (won != b) free(b);
  return won;
}

const char *po_FieldList(const po_Schema *schema, const upb_MessageDef *m, bool debug, po_Arena *a, size_t *len) {
  const po_FieldIndex *x = debug ? NULL : po_FieldIndex_Get(schema, m);
  if (x) {
    if (len) *len = x->list_len;
    return x->list;
  }
  int count = 0;
  const po_FieldInfo *infos = schema ? po_Schema_Fields(schema, m, &count) : NULL;
  size_t ll = write_list(infos, m, debug, NULL);
  char *out = po_Arena_Malloc(a, ll + 1);
  if (!out) return NULL;
  write_list(infos, m, debug, out);
  if (len) *len = ll;
  return out;
}
